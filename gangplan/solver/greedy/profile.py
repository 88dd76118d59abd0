"""A scheduling profile built from ``cluster.profile``: the plugins of each extension point, in
order, with their weights.

Mirrors ``NewFramework`` of ``pkg/scheduler/framework/runtime/framework.go`` and
``pkg/scheduler/apis/config/v1/default_plugins.go`` (kubernetes/kubernetes v1.36 / master): a
plugin named in a point's set serves that point if it implements it (:attr:`Plugin.points`,
read off its methods); a name no registered plugin carries, or one that does not implement the
point, is left out (upstream refuses to start; gangplan reads configurations written for
kube-schedulers with volume and DRA plugins it does not model). One instance per plugin serves
every point it is enabled at.

* Filter: ``cfg.filter_plugins`` in order (default NodeUnschedulable, NodeName, TaintToleration,
  NodeAffinity, NodePorts, NodeResourcesFit, PodTopologySpread, InterPodAffinity).
* Score: ``cfg.score_weights`` with weight > 0, the default order (TaintToleration 3,
  NodeAffinity 2, PodTopologySpread 2, InterPodAffinity 2, NodeResourcesFit 1,
  NodeResourcesBalancedAllocation 1, ImageLocality 1) first, others by name.
* PlacementGenerate: ``cfg.placement_generate_plugins`` in order (default
  TopologyPlacementGenerator); several are merged (:func:`.placement.run_placement_generate`).
* PlacementScore: ``cfg.placement_weights`` with weight > 0 (default PlacementBinPacking 1,
  PodGroupPodsCount 1), the default order first, others by name; NodeResourcesFit /
  TopologyPlacement are read as PlacementBinPacking / TopologyPlacementGenerator.
* PlacementFeasible: GangScheduling, always (upstream uses no other plugin there).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gangplan.models.cluster import Cluster
from gangplan.models.objects import (
    DEFAULT_PLACEMENT_WEIGHTS,
    DEFAULT_SCORE_WEIGHTS,
    PLACEMENT_PLUGIN_ALIASES,
)
from gangplan.models.plugins import placement_weights
from gangplan.solver.greedy.framework import Code
from gangplan.solver.greedy.placement import feasible_rule
from gangplan.solver.greedy.plugins import REGISTRY, Plugin, Registry, names
from gangplan.solver.greedy.plugins.base import (
    FILTER,
    PLACEMENT_FEASIBLE,
    PLACEMENT_GENERATE,
    PLACEMENT_SCORE,
    RESERVE,
    SCORE,
)

SCORE_ORDER = tuple(DEFAULT_SCORE_WEIGHTS)
PLACEMENT_SCORE_ORDER = tuple(DEFAULT_PLACEMENT_WEIGHTS)
PLACEMENT_FEASIBLE_PLUGINS = (names.GANG_SCHEDULING,)


@dataclass
class Profile:
    scheduler_name: str
    percentage_of_nodes_to_score: int
    filters: list[Plugin]
    scorers: list[tuple[Plugin, int]]
    placement_generators: list[Plugin]
    placement_scorers: list[tuple[Plugin, int]]
    placement_feasible: list[Plugin]
    reservers: list[Plugin] = field(default_factory=list)
    """Plugins of any of the profile's points that implement Reserve (upstream's multiPoint
    enables every point a plugin implements), in the order they were first enabled."""
    feasible: Callable[[int, int, int], Code] = field(init=False)
    """PlacementFeasible as ``(remaining, scheduled, minimum) -> Code`` (:func:`.placement.feasible_rule`)."""

    def __post_init__(self) -> None:
        self.feasible = feasible_rule(self.placement_feasible)

    @property
    def has_scoring(self) -> bool:
        return bool(self.scorers)


def _ordered(weights: dict[str, int], default_order: tuple[str, ...]) -> list[str]:
    return [n for n in default_order if n in weights] + sorted(
        n for n in weights if n not in default_order
    )


def _filters(cluster: Cluster) -> tuple[str, ...]:
    """The profile's Filter plugins; DynamicResources (in upstream's default set) joins them after
    NodeResourcesFit when the snapshot has DRA objects (without any it would Skip every pod)."""
    names_ = tuple(cluster.profile.filter_plugins)
    if cluster.dra and names.DYNAMIC_RESOURCES not in names_:
        at = (
            names_.index(names.NODE_RESOURCES_FIT) + 1
            if names.NODE_RESOURCES_FIT in names_
            else len(names_)
        )
        names_ = names_[:at] + (names.DYNAMIC_RESOURCES,) + names_[at:]
    return names_


def build_profile(cluster: Cluster, registry: Registry | None = None) -> Profile:
    """The profile of ``cluster.profile`` with the plugins of ``registry`` (default: the in-tree
    :data:`~gangplan.solver.greedy.plugins.REGISTRY`), as ``NewFramework(registry, profile)``."""
    registry = REGISTRY if registry is None else registry
    cfg = cluster.profile
    instances: dict[str, Plugin] = {}

    def at(point: str, names_: list[str] | tuple[str, ...]) -> list[Plugin]:
        out = []
        for n in names_:
            cls = registry.get(n)
            if cls is None or point not in cls.points:
                continue
            if n not in instances:
                instances[n] = cls(cluster, cfg)
            out.append(instances[n])
        return out

    score_w = {n: w for n, w in cfg.score_weights.items() if w > 0}
    scorers = [(pl, score_w[pl.name]) for pl in at(SCORE, _ordered(score_w, SCORE_ORDER))]
    place_w = {n: w for n, w in placement_weights(cfg.placement_weights).items() if w > 0}
    placement_scorers = [
        (pl, place_w[pl.name])
        for pl in at(PLACEMENT_SCORE, _ordered(place_w, PLACEMENT_SCORE_ORDER))
    ]
    generators = at(
        PLACEMENT_GENERATE,
        [PLACEMENT_PLUGIN_ALIASES.get(n, n) for n in cfg.placement_generate_plugins],
    )
    return Profile(
        cfg.scheduler_name,
        cfg.percentage_of_nodes_to_score,
        filters=at(FILTER, _filters(cluster)),
        scorers=scorers,
        placement_generators=generators,
        placement_scorers=placement_scorers,
        placement_feasible=at(PLACEMENT_FEASIBLE, PLACEMENT_FEASIBLE_PLUGINS),
        reservers=[pl for pl in instances.values() if RESERVE in pl.points],
    )
