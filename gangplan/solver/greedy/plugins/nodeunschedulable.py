"""NodeUnschedulable: ``pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go``
(kubernetes/kubernetes v1.36). Filter only: a ``spec.unschedulable`` node is rejected unless the
pod tolerates the ``node.kubernetes.io/unschedulable:NoSchedule`` taint."""

from __future__ import annotations

import numpy as np

from gangplan.predicates import blocked_by_unschedulable
from gangplan.solver.greedy.framework import SUCCESS, unschedulable
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.plugins.base import Plugin, StaticFilterCache, constant_reason

NAME = names.NODE_UNSCHEDULABLE
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"


class NodeUnschedulable(Plugin):
    name = NAME

    def __init__(self, cluster, profile) -> None:
        super().__init__(cluster, profile)
        self._cache = StaticFilterCache()

    def filter_one(self, cs, pod, snap, i):
        if blocked_by_unschedulable(snap.nodes[i], pod.tolerations):
            return self.status(unschedulable(ERR_REASON_UNSCHEDULABLE, unresolvable=True))
        return SUCCESS

    def filter_reasons(self, cs, pod, snap, idx):
        return constant_reason(ERR_REASON_UNSCHEDULABLE, idx, unresolvable=True)

    def filter_mask(self, cs, pod, snap, idx):
        def build() -> np.ndarray:
            return np.array(
                [not blocked_by_unschedulable(n, pod.tolerations) for n in snap.nodes], dtype=bool
            )

        return self._cache.get(pod.tolerations, build)[idx]
