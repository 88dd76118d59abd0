"""The plugin interface: the extension points a pod x node simulation of the pod-by-pod cycle
and of the pod-group cycle needs.

Mirrors the PreFilter / Filter / PreScore / Score / NormalizeScore interfaces and the pod-group
ones, PlacementGenerate / PlacementScore (with NormalizePlacementScore) / PlacementFeasible, of
``staging/src/k8s.io/kube-scheduler/framework/interface.go`` (kubernetes/kubernetes v1.36 and
master). The pod points work on an array of node positions at once so numpy can do the per-node
arithmetic: ``filter_mask`` answers "which of these nodes pass" and ``filter_one`` gives the full
status (reasons) of one node; ``score`` returns raw scores for the feasible nodes and
``normalize`` maps them to 0..100. The placement points likewise take every placement of one
decision at once.

Which points a plugin extends is read off the methods its class defines, as Go reads it off the
interfaces a type satisfies (``NewFramework`` / ``updatePluginList``): :attr:`Plugin.points`,
computed when the class is created. There is nothing to declare and nothing that can drift.
"""

from __future__ import annotations

import numpy as np

from gangplan.models.cluster import Cluster
from gangplan.models.objects import Pod, SchedulerProfile
from gangplan.models.plugins import (  # the point names live with the snapshot layer (the loader reads them)
    FILTER,
    NORMALIZE_PLACEMENT_SCORE,
    NORMALIZE_SCORE,
    PLACEMENT_FEASIBLE,
    PLACEMENT_GENERATE,
    PLACEMENT_SCORE,
    PRE_FILTER,
    PRE_SCORE,
    RESERVE,
    SCORE,
)
from gangplan.solver.greedy.framework import (
    SUCCESS,
    Code,
    CycleState,
    Placement,
    PlacementProgress,
    PodGroupInfo,
    Status,
)
from gangplan.solver.greedy.snapshot import NodeTable

EXTENSION_POINTS: dict[str, tuple[str, ...]] = {
    PRE_FILTER: ("pre_filter",),
    FILTER: ("filter_one", "filter_mask"),
    PRE_SCORE: ("pre_score",),
    SCORE: ("score",),
    NORMALIZE_SCORE: ("normalize",),
    PLACEMENT_GENERATE: ("generate_placements",),
    PLACEMENT_SCORE: ("score_placements",),
    NORMALIZE_PLACEMENT_SCORE: ("normalize_placement_scores",),
    PLACEMENT_FEASIBLE: ("placement_feasible",),
    RESERVE: ("reserve", "unreserve"),
}
"""Extension point -> the methods that implement it; a plugin extends a point when its class
(or a parent other than :class:`Plugin`) defines one of them."""


def extension_points(cls: type) -> frozenset[str]:
    """The points ``cls`` implements: those with a method defined below :class:`Plugin`."""
    return frozenset(
        point
        for point, methods in EXTENSION_POINTS.items()
        if any(getattr(cls, m, None) is not getattr(Plugin, m) for m in methods)
    )


class Plugin:
    """One upstream plugin. Subclasses set ``name`` (a :mod:`.names` constant) and define the
    methods of the points they implement; the defaults below are what the framework does for a
    plugin that does not (pass, zero, identity), so runners may call any of them."""

    name = ""
    points: frozenset[str] = frozenset()
    """The extension points this class implements (set for every subclass)."""

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.points = extension_points(cls)

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
        return np.fromiter(
            (self.filter_one(cs, pod, snap, int(i)).ok for i in idx), dtype=bool, count=len(idx)
        )

    def filter_reasons(
        self, cs: CycleState, pod: Pod, snap: NodeTable, idx: np.ndarray
    ) -> tuple[list[tuple[str, np.ndarray]], np.ndarray]:
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

    def normalize(
        self, cs: CycleState, pod: Pod, snap: NodeTable, feasible: np.ndarray, scores: np.ndarray
    ) -> np.ndarray:
        return scores

    # ---- PlacementGenerate -------------------------------------------------------------------
    def generate_placements(
        self, snap: NodeTable, info: PodGroupInfo, parent: Placement
    ) -> tuple[list[Placement], Status]:
        """``GeneratePlacements``: the candidate placements of the group inside ``parent``.

        Return ``[parent]`` (the very object) when the plugin does not constrain this group;
        an empty list with Success means "no placement" (the framework makes it Unschedulable),
        a non-success status fails the decision (Error) or makes it Unschedulable."""
        return [parent], SUCCESS

    # ---- PlacementScore ----------------------------------------------------------------------
    def score_placements(
        self,
        snap: NodeTable,
        info: PodGroupInfo,
        placements: list[Placement],
        proposals: list[list[tuple[Pod, int]]],
    ) -> list[int]:
        """``ScorePlacement`` of every feasible placement of one decision: raw scores.

        ``proposals[k]`` are placement ``k``'s (pod, node) assignments, already reverted in
        ``snap``. Raise :class:`~gangplan.solver.greedy.framework.PlacementError` for an Error
        status. A node of -1 means the outcome was counted, not evaluated
        (:mod:`gangplan.solver.greedy.placement_fast`); plugins that read proposal nodes must be
        left out of counting (``placement_fast.COUNTABLE_PLACEMENT_SCORERS``)."""
        return [0] * len(placements)

    def normalize_placement_scores(
        self, snap: NodeTable, info: PodGroupInfo, scores: list[int]
    ) -> list[int]:
        """``NormalizePlacementScore`` (``PlacementScoreExtensions``). Default: unchanged."""
        return scores

    # ---- PlacementFeasible -------------------------------------------------------------------
    def placement_feasible(self, minimum: int, progress: PlacementProgress) -> Code:
        """``PlacementFeasible`` after each pod (child group) of a placement's evaluation:
        Unschedulable stops the evaluation, Wait continues, Success means the group may be kept.
        Only the code is modelled (upstream's status messages reach no trace)."""
        return Code.SUCCESS

    # ---- Reserve -------------------------------------------------------------------------------
    def reserve(self, pod: Pod, snap: NodeTable, i: int, chosen: object = None) -> object:
        """``Reserve``: what the plugin sets aside for ``pod`` on node ``i`` once it is assumed
        there (returned; e.g. the devices a DRA-like plugin allocates). ``chosen``: a reservation
        this plugin returned before for the same pod and node (an evaluated proposal assumed
        again, ``assumeSubtreeWithRevert``), to be taken as it is. Raise when it cannot be had.
        Called by :class:`~gangplan.solver.greedy.session.GreedySession` (the batch run's
        in-tree plugins implement none)."""
        return None

    def unreserve(self, pod: Pod, snap: NodeTable) -> None:
        """``Unreserve``: give back what :meth:`reserve` set aside for ``pod``."""

    def node_state(self, snap: NodeTable, nodes: np.ndarray) -> bytes:
        """Whatever of ``nodes`` this plugin's reservations change and its Filter / Score read,
        as bytes: a session reuses a placement's evaluation only while this is unchanged. Only
        read for plugins that implement Reserve."""
        return b""

    def status(self, st: Status) -> Status:
        return st.with_plugin(self.name)


def constant_reason(
    reason: str, idx: np.ndarray, *, unresolvable: bool
) -> tuple[list[tuple[str, np.ndarray]], np.ndarray]:
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
