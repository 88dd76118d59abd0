"""The in-tree registry: ``pkg/scheduler/framework/plugins/registry.go`` (``NewInTreeRegistry``),
a plugin name (a :mod:`.names` constant) to its type, one line each; :class:`Registry`, the type a
profile is built from (``NewFramework(registry, profile)``: a run passes the registry it wants,
e.g. the in-tree one merged with its own plugins, :meth:`Registry.merged`, as an out-of-tree
scheduler passes ``app.WithPlugin``); and :func:`register` for plugins added to the in-tree
registry from outside the package (docs/how-to/extend.md)."""

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


class Registry(dict[str, type[Plugin]]):
    """Plugin name -> plugin type (``runtime.Registry``)."""

    def merged(self, *plugins: type[Plugin]) -> Registry:
        """A new registry: this one and ``plugins`` (``Registry.Merge``: a name already taken
        by another type is an error)."""
        out = Registry(self)
        for cls in plugins:
            if not cls.name:
                raise ValueError(f"{cls.__name__} has no name")
            if out.get(cls.name, cls) is not cls:
                raise ValueError(
                    f"a plugin named {cls.name!r} is already registered ({out[cls.name].__name__})"
                )
            out[cls.name] = cls
        return out

    def points(self) -> dict[str, frozenset[str]]:
        """Name -> the extension points the plugin implements (the loader's view: which
        configured plugins a run with this registry can run, ``gangplan.models.plugins``)."""
        return {n: cls.points for n, cls in self.items()}


REGISTRY: Registry = Registry(
    {
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
)


def register(plugin: type[Plugin]) -> type[Plugin]:
    """Add a plugin type under its ``name`` (usable as a class decorator); the name must be new.
    The profile picks it up wherever the KubeSchedulerConfiguration enables it."""
    if not plugin.name:
        raise ValueError(f"{plugin.__name__} has no name")
    if REGISTRY.get(plugin.name, plugin) is not plugin:
        raise ValueError(
            f"a plugin named {plugin.name!r} is already registered ({REGISTRY[plugin.name].__name__})"
        )
    REGISTRY[plugin.name] = plugin
    declare(plugin.name, plugin.points)  # the loader's view (gangplan.models.plugins)
    return plugin


def unregister(name: str) -> None:
    """Remove a plugin :func:`register` added (tests)."""
    REGISTRY.pop(name, None)
    forget(name)
