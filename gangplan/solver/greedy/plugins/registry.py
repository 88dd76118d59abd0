"""The in-tree registry: ``pkg/scheduler/framework/plugins/registry.go`` (``NewInTreeRegistry``),
a plugin name (a :mod:`.names` constant) to its type, one line each, and :func:`register` for
plugins from outside the package (docs/how-to/extend.md)."""

from __future__ import annotations

from gangplan.models.plugins import declare, forget
from gangplan.solver.greedy.plugins.base import Plugin
from gangplan.solver.greedy.plugins.dynamicresources import DynamicResources
from gangplan.solver.greedy.plugins.gangscheduling import GangScheduling
from gangplan.solver.greedy.plugins.imagelocality import ImageLocality
from gangplan.solver.greedy.plugins.interpodaffinity import InterPodAffinity
from gangplan.solver.greedy.plugins.nodeaffinity import NodeAffinity
from gangplan.solver.greedy.plugins.nodename import NodeName
from gangplan.solver.greedy.plugins.nodeports import NodePorts
from gangplan.solver.greedy.plugins.noderesources import (
    BalancedAllocation,
    Fit,
    PlacementBinPacking,
)
from gangplan.solver.greedy.plugins.nodeunschedulable import NodeUnschedulable
from gangplan.solver.greedy.plugins.podgrouppodscount import PodGroupPodsCount
from gangplan.solver.greedy.plugins.podtopologyspread import PodTopologySpread
from gangplan.solver.greedy.plugins.tainttoleration import TaintToleration
from gangplan.solver.greedy.plugins.topologyaware import TopologyPlacementGenerator

REGISTRY: dict[str, type[Plugin]] = {
    NodeUnschedulable.name: NodeUnschedulable,
    NodeName.name: NodeName,
    TaintToleration.name: TaintToleration,
    NodeAffinity.name: NodeAffinity,
    NodePorts.name: NodePorts,
    Fit.name: Fit,
    PodTopologySpread.name: PodTopologySpread,
    InterPodAffinity.name: InterPodAffinity,
    DynamicResources.name: DynamicResources,
    BalancedAllocation.name: BalancedAllocation,
    ImageLocality.name: ImageLocality,
    GangScheduling.name: GangScheduling,
    TopologyPlacementGenerator.name: TopologyPlacementGenerator,
    PlacementBinPacking.name: PlacementBinPacking,
    PodGroupPodsCount.name: PodGroupPodsCount,
}


def register(plugin: type[Plugin]) -> type[Plugin]:
    """Add a plugin type under its ``name`` (usable as a class decorator); the name must be new.
    The profile picks it up wherever the KubeSchedulerConfiguration enables it."""
    if not plugin.name:
        raise ValueError(f"{plugin.__name__} has no name")
    if REGISTRY.get(plugin.name, plugin) is not plugin:
        raise ValueError(f"a plugin named {plugin.name!r} is already registered ({REGISTRY[plugin.name].__name__})")
    REGISTRY[plugin.name] = plugin
    declare(plugin.name, plugin.points)  # the loader's view (gangplan.models.plugins)
    return plugin


def unregister(name: str) -> None:
    """Remove a plugin :func:`register` added (tests)."""
    REGISTRY.pop(name, None)
    forget(name)

