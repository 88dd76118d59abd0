"""TaintToleration: ``pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go``
(kubernetes/kubernetes v1.35+; the reason text as its test file has it at @04c0d74f). Filter: an untolerated
NoSchedule/NoExecute taint rejects the node as UnschedulableAndUnresolvable with the reason
"node(s) had untolerated taint(s)". (Releases before the TaintTolerationComparisonOperators
change, e.g. @0f7becbc, said "node(s) had untolerated taint {key: value}"; workload scheduling
only exists in the newer releases, so the newer text is the faithful one.)
Score: the number of PreferNoSchedule taints not tolerated by the pod's empty-effect or
PreferNoSchedule tolerations; NormalizeScore is ``DefaultNormalizeScore(100, reverse=true)``."""

from __future__ import annotations

import numpy as np

from gangplan.predicates import count_intolerable_prefer_no_schedule, first_untolerated_taint
from gangplan.solver.greedy.framework import SUCCESS, default_normalize_score, unschedulable
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.plugins.base import Plugin, StaticFilterCache, constant_reason

NAME = names.TAINT_TOLERATION


ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
LEGACY_REASON_FORMAT = "node(s) had untolerated taint {{{key}: {value}}}"
"""The pre-v1.35 reason, kept for reference."""


class TaintToleration(Plugin):
    name = NAME

    def __init__(self, cluster, profile) -> None:
        super().__init__(cluster, profile)
        self._masks = StaticFilterCache()
        self._counts = StaticFilterCache()

    def filter_one(self, cs, pod, snap, i):
        taint = first_untolerated_taint(snap.nodes[i].taints, pod.tolerations)
        if taint is None:
            return SUCCESS
        return self.status(unschedulable(ERR_REASON_UNTOLERATED, unresolvable=True))

    def filter_reasons(self, cs, pod, snap, idx):
        return constant_reason(ERR_REASON_UNTOLERATED, idx, unresolvable=True)

    def filter_mask(self, cs, pod, snap, idx):
        def build() -> np.ndarray:
            return np.array(
                [first_untolerated_taint(n.taints, pod.tolerations) is None for n in snap.nodes],
                dtype=bool,
            )

        return self._masks.get(pod.tolerations, build)[idx]

    def score(self, cs, pod, snap, feasible):
        def build() -> np.ndarray:
            return np.array(
                [
                    count_intolerable_prefer_no_schedule(n.taints, pod.tolerations)
                    for n in snap.nodes
                ],
                dtype=np.int64,
            )

        return self._counts.get(pod.tolerations, build)[feasible]

    def normalize(self, cs, pod, snap, feasible, scores):
        if self._counts.get(
            ("none", pod.tolerations), lambda: not self.score(cs, pod, snap, snap.all_nodes).any()
        ):
            return np.full(len(scores), 100, dtype=np.int64)  # no PreferNoSchedule taint anywhere
        return default_normalize_score(scores, reverse=True)
