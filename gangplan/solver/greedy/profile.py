"""A scheduling profile built from ``cluster.profile``: the filter plugins in order, the score
plugins with their weights.

Mirrors ``pkg/scheduler/apis/config/v1/default_plugins.go`` (kubernetes/kubernetes v1.36): the
default MultiPoint order is NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts,
NodeResourcesFit, PodTopologySpread, InterPodAffinity (volume and DRA plugins have nothing to do
in a snapshot without volumes or claims); score weights TaintToleration 3, NodeAffinity 2,
PodTopologySpread 2, InterPodAffinity 2, NodeResourcesFit 1, NodeResourcesBalancedAllocation 1,
ImageLocality 1. Score plugins run in that default order, weight 0 disables one.
"""

from __future__ import annotations

from dataclasses import dataclass

from gangplan.models.cluster import Cluster
from gangplan.models.objects import DEFAULT_SCORE_WEIGHTS
from gangplan.solver.greedy.plugins import REGISTRY, Plugin

SCORE_ORDER = tuple(DEFAULT_SCORE_WEIGHTS)


@dataclass
class Profile:
    scheduler_name: str
    percentage_of_nodes_to_score: int
    filters: list[Plugin]
    scorers: list[tuple[Plugin, int]]

    @property
    def has_scoring(self) -> bool:
        return bool(self.scorers)


def build_profile(cluster: Cluster) -> Profile:
    cfg = cluster.profile
    instances: dict[str, Plugin] = {}

    def get(name: str) -> Plugin:
        if name not in instances:
            instances[name] = REGISTRY[name](cluster, cfg)
        return instances[name]

    filters = [get(n) for n in cfg.filter_plugins if n in REGISTRY and REGISTRY[n].filters]
    order = list(SCORE_ORDER) + sorted(n for n in cfg.score_weights if n not in SCORE_ORDER)
    scorers = [(get(n), cfg.score_weights[n]) for n in order if n in REGISTRY and cfg.score_weights.get(n, 0) > 0 and REGISTRY[n].scores]
    return Profile(cfg.scheduler_name, cfg.percentage_of_nodes_to_score, filters, scorers)
