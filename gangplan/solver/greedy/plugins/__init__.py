"""The plugins of the default profile, one module each, named like upstream's packages.

The registry mirrors ``pkg/scheduler/framework/plugins/registry.go``: a plugin name maps to its
type, one line each.
"""

from gangplan.solver.greedy.plugins.base import Plugin
from gangplan.solver.greedy.plugins.imagelocality import ImageLocality
from gangplan.solver.greedy.plugins.interpodaffinity import InterPodAffinity
from gangplan.solver.greedy.plugins.node_affinity import NodeAffinity
from gangplan.solver.greedy.plugins.node_name import NodeName
from gangplan.solver.greedy.plugins.node_ports import NodePorts
from gangplan.solver.greedy.plugins.node_unschedulable import NodeUnschedulable
from gangplan.solver.greedy.plugins.noderesources import BalancedAllocation, Fit
from gangplan.solver.greedy.plugins.podtopologyspread import PodTopologySpread
from gangplan.solver.greedy.plugins.tainttoleration import TaintToleration

REGISTRY: dict[str, type[Plugin]] = {
    NodeUnschedulable.name: NodeUnschedulable,
    NodeName.name: NodeName,
    TaintToleration.name: TaintToleration,
    NodeAffinity.name: NodeAffinity,
    NodePorts.name: NodePorts,
    Fit.name: Fit,
    PodTopologySpread.name: PodTopologySpread,
    InterPodAffinity.name: InterPodAffinity,
    BalancedAllocation.name: BalancedAllocation,
    ImageLocality.name: ImageLocality,
}

__all__ = ["REGISTRY", "Plugin"]
