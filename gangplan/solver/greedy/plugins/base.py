"""The plugin interface, reduced to the extension points a pod x node simulation needs.

Mirrors the PreFilter / Filter / PreScore / Score / NormalizeScore interfaces of
``pkg/scheduler/framework/interface.go`` (kubernetes/kubernetes v1.36), but each point works on an
array of node positions at once so numpy can do the per-node arithmetic: ``filter_mask`` answers
"which of these nodes pass" and ``filter_one`` gives the full status (reasons) of one node;
``score`` returns raw scores for the feasible nodes and ``normalize`` maps them to 0..100.
"""

from __future__ import annotations

import numpy as np

from gangplan.models.cluster import Cluster
from gangplan.models.objects import Pod, SchedulerProfile
from gangplan.solver.greedy.framework import SUCCESS, Code, CycleState, Status
from gangplan.solver.greedy.snapshot import NodeTable


class Plugin:
    """One upstream plugin. Subclasses set ``name`` and override the points they implement."""

    name = ""
    filters = False
    scores = False
    normalizes = False
    bounded = False
    """True when Score cannot leave [0, 100] by construction (the range check is skipped)."""

    def __init__(self, cluster: Cluster, profile: SchedulerProfile) -> None:
        self.cluster = cluster
        self.profile = profile

    # ---- Filter ------------------------------------------------------------------------------
    def pre_filter(self, cs: CycleState, pod: Pod, snap: NodeTable) -> Status:
        return SUCCESS

    def filter_one(self, cs: CycleState, pod: Pod, snap: NodeTable, i: int) -> Status:
        return SUCCESS

    def filter_mask(self, cs: CycleState, pod: Pod, snap: NodeTable, idx: np.ndarray) -> np.ndarray:
        """Pass mask over the node positions ``idx``. Default: ``filter_one`` per node."""
        return np.fromiter((self.filter_one(cs, pod, snap, int(i)).ok for i in idx), dtype=bool, count=len(idx))

    def filter_reasons(self, cs: CycleState, pod: Pod, snap: NodeTable, idx: np.ndarray) -> tuple[list[tuple[str, np.ndarray]], np.ndarray]:
        """The failing statuses of the nodes ``idx``, which this plugin rejects, vectorised for
        FitError histograms: per reason the mask over ``idx`` of the nodes whose status carries
        it, and the mask of UnschedulableAndUnresolvable statuses. Must agree with
        :meth:`filter_one` node by node (``tests/test_filter_reasons.py``). Default: ``filter_one``
        per node."""
        masks: dict[str, np.ndarray] = {}
        unresolvable = np.zeros(len(idx), dtype=bool)
        for k, i in enumerate(idx.tolist()):
            st = self.filter_one(cs, pod, snap, int(i))
            for r in st.reasons:
                masks.setdefault(r, np.zeros(len(idx), dtype=bool))[k] = True
            unresolvable[k] = st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        return list(masks.items()), unresolvable

    # ---- Score -------------------------------------------------------------------------------
    def pre_score(self, cs: CycleState, pod: Pod, snap: NodeTable, feasible: np.ndarray) -> Status:
        return SUCCESS

    def score(self, cs: CycleState, pod: Pod, snap: NodeTable, feasible: np.ndarray) -> np.ndarray:
        return np.zeros(len(feasible), dtype=np.int64)

    def normalize(self, cs: CycleState, pod: Pod, snap: NodeTable, feasible: np.ndarray, scores: np.ndarray) -> np.ndarray:
        return scores

    def status(self, st: Status) -> Status:
        return st.with_plugin(self.name)


def constant_reason(reason: str, idx: np.ndarray, *, unresolvable: bool) -> tuple[list[tuple[str, np.ndarray]], np.ndarray]:
    """``filter_reasons`` of a plugin whose every rejection carries one reason and one code."""
    return [(reason, np.ones(len(idx), dtype=bool))], np.full(len(idx), unresolvable, dtype=bool)


class StaticFilterCache:
    """Per-signature pass masks over all nodes, for filters that depend only on the pod spec and
    the node object (never on what is running), so they are computed once per kind of pod."""

    def __init__(self) -> None:
        self._masks: dict[object, np.ndarray] = {}

    def get(self, key: object, build) -> np.ndarray:
        mask = self._masks.get(key)
        if mask is None:
            mask = build()
            self._masks[key] = mask
        return mask
