"""NodeResourcesFit, NodeResourcesBalancedAllocation and PlacementBinPacking
(``pkg/scheduler/framework/plugins/noderesources``)."""

from gangplan.solver.greedy.plugins.noderesources.balanced_allocation import BalancedAllocation
from gangplan.solver.greedy.plugins.noderesources.fit import Fit
from gangplan.solver.greedy.plugins.noderesources.placement_bin_packing import PlacementBinPacking

__all__ = ["BalancedAllocation", "Fit", "PlacementBinPacking"]
