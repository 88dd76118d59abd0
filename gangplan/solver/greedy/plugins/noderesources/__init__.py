"""NodeResourcesFit and NodeResourcesBalancedAllocation (``pkg/scheduler/framework/plugins/noderesources``)."""

from gangplan.solver.greedy.plugins.noderesources.balanced_allocation import BalancedAllocation
from gangplan.solver.greedy.plugins.noderesources.fit import Fit

__all__ = ["BalancedAllocation", "Fit"]
