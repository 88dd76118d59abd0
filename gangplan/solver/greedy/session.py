"""One cluster loaded once into the greedy engine, changed pod by pod: the engine's incremental
entry point (``framework.Handle`` with its scheduler cache, as a simulator drives it).

A :class:`GreedySession` builds the node table, the profile (from a plugin registry passed in,
as ``NewFramework(registry, profile)``) and the per-pod scheduler once. Then:

* :meth:`~GreedySession.run`: the batch run, every queue entity of the cluster in queue order
  with requeues (what :func:`~gangplan.solver.greedy.solve_greedy` reports);
* :meth:`~GreedySession.schedule_pod`: one pod's scheduling cycle on the current state
  (nothing assumed);
* :meth:`~GreedySession.assume` / :meth:`~GreedySession.forget`: a pod taken onto a node or
  off it (``AssumePod`` / ``ForgetPod``), with the profile's Reserve / Unreserve plugins;
* :meth:`~GreedySession.place_group`: the pod-group cycle for one gang (KEP-4671): its pods'
  cycles one after the other, each assumed before the next, all or nothing; a gang with
  ``schedulingConstraints.topology`` goes through the placement algorithm of KEP-5732
  (``podGroupSchedulingPlacementAlgorithm`` / ``findBestPlacement`` of
  ``pkg/scheduler/schedule_one_podgroup.go``, kubernetes/kubernetes v1.36): the profile's
  PlacementGenerate plugins generate the placements, each is evaluated (the pods' cycles
  restricted to its nodes, then reverted), one feasible placement is taken unscored, several are
  scored by the PlacementScore plugins and the highest total wins (ties by the session's tie
  break), and the chosen placement's proposals are assumed again as they were evaluated
  (``assumeSubtreeWithRevert``: the same nodes and reservations). A profile without a
  PlacementGenerate plugin ignores the constraint, as kube-scheduler does.

:meth:`place_group` records no trace (the batch run's :class:`~.podgroup.WorkloadCycle` does):
it is the cycle a simulator runs thousands of times. It places a gang where the batch run places
it on the same state (``tests/test_replay_placement_fidelity.py`` compares the two on random
rack states). Reserve runs before the pod enters the node table: a plugin's Reserve reads the
node as the pod's Filter and Score saw it, as upstream's Reserve reads the cycle's snapshot,
which the assumed pod is not in.

``may_fit`` (optional, the caller's necessary test on a node set: False means the gang cannot
fit there) skips placements that cannot hold the gang without evaluating them. Upstream
evaluates them: their failing cycles move ``nextStartNodeIndex``, which matters only with node
sampling, placements of more than 100 nodes, and may draw random tie-breaks for the pods that fit
before one fails.

Evaluations are reused (``reuse_key``) while the placement's nodes are unchanged: the node
table's free and non-zero requests and pod counts, and each Reserve plugin's
:meth:`~gangplan.solver.greedy.plugins.base.Plugin.node_state`. Exact when the pods' cycles scan
the whole placement (``numFeasibleNodesToFind`` reaches its size) and break ties by ``first``;
under ``random`` ties the reused outcome is the draw made on the same state earlier, so every
attempt's outcome keeps upstream's distribution.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass

import numpy as np

from gangplan.gcpause import gc_paused
from gangplan.models.cluster import Cluster
from gangplan.models.groups import EntityKind, GroupNode
from gangplan.models.objects import Pod, PodGroup
from gangplan.models.version import KubeVersion
from gangplan.solver.greedy.framework import Placement, PodGroupInfo
from gangplan.solver.greedy.placement import (
    best_placement,
    run_placement_generate,
    run_placement_score,
)
from gangplan.solver.greedy.plugins import Plugin, Registry
from gangplan.solver.greedy.podgroup import WorkloadCycle
from gangplan.solver.greedy.profile import Profile, build_profile
from gangplan.solver.greedy.queue import entities
from gangplan.solver.greedy.schedule_one import PodResult, PodScheduler, num_feasible_nodes_to_find
from gangplan.solver.greedy.snapshot import NodeTable
from gangplan.solver.greedy.state import RunObserver, RunState

MAX_REUSED = 50_000
"""At most this many remembered placement evaluations per session (then they are forgotten)."""

Proposal = tuple[Pod, int, tuple[object, ...]]
"""(pod, node position, what each Reserve plugin set aside for it, in profile order)."""


@dataclass(slots=True)
class GroupOutcome:
    """What :meth:`GreedySession.place_group` did."""

    placed: list[Proposal] | None
    """The gang's pods as assumed (in pod order), or None: the gang did not fit, nothing stays."""
    static_failure: bool
    """No pod cycle ran (``may_fit`` ruled out the cluster or every placement, or no node has
    the constraint's label): a state with no more free room fails the same way."""
    placement: str | None = None
    """The chosen placement's label (``key=value``) of a topology-constrained gang."""


class GreedySession:
    """The greedy engine over one cluster, kept between calls (module docstring).

    ``registry``: the plugins the profile is built from (default: the in-tree registry).
    ``tie_break`` / ``seed``: equal node totals and equal placement totals (``first`` or a
    seeded ``random``). ``top_k``: scored nodes kept per pod result. ``kube_version``: the
    kube-scheduler version reproduced (default: the cluster's)."""

    reuse_evaluations = True
    """Reuse a placement's evaluation while its nodes are unchanged (tests turn it off to check
    that it changes nothing)."""

    def __init__(
        self,
        cluster: Cluster,
        *,
        registry: Registry | None = None,
        tie_break: str = "first",
        seed: int = 0,
        top_k: int = 5,
        kube_version: KubeVersion | str | None = None,
    ) -> None:
        self.cluster = cluster.at_version(kube_version)
        with gc_paused():
            self.profile: Profile = build_profile(self.cluster, registry)
            self.nodes = NodeTable(self.cluster)
            """The node table: positions, free resources and the pods assumed on each node."""
            self.scheduler = PodScheduler(
                self.nodes, self.profile, tie_break=tie_break, seed=seed, top_k=top_k
            )
        self._reserved: dict[str, tuple[object, ...]] = {}
        self._evaluations: dict[
            tuple, tuple[bytes, list[tuple[int, tuple[object, ...]]] | None, bool]
        ] = {}
        self._index: dict[str, int] | None = None
        self.reused = 0
        """How many placement evaluations were reused."""

    # ---- reading -----------------------------------------------------------------------------
    def plugin(self, name: str) -> Plugin | None:
        """The profile's instance of plugin ``name`` (to configure it), None when not enabled."""
        p = self.profile
        for pl in (
            *p.filters,
            *(x for x, _ in p.scorers),
            *p.placement_generators,
            *(x for x, _ in p.placement_scorers),
            *p.reservers,
        ):
            if pl.name == name:
                return pl
        return None

    def node_position(self, name: str) -> int:
        """The node table position of node ``name``."""
        if self._index is None:
            self._index = {n: i for i, n in enumerate(self.nodes.names)}
        return self._index[name]

    def reservation(self, pod_key: str) -> tuple[object, ...]:
        """What each Reserve plugin set aside for an assumed pod (empty when none)."""
        return self._reserved.get(pod_key, ())

    # ---- the batch run -----------------------------------------------------------------------
    def run(
        self,
        *,
        fixed: Mapping[str, str] | None = None,
        preemption: bool = False,
        observer: RunObserver | None = None,
        requeue: bool = True,
    ) -> WorkloadCycle:
        """Every queue entity of the cluster once in queue order, then again when an event of the
        run may help it; the returned cycle's state holds placements, reasons and the trace."""
        with gc_paused():  # the run's objects hold no cycles (gangplan.gcpause)
            cycle = WorkloadCycle(
                RunState.start(
                    self.cluster,
                    self.nodes,
                    self.scheduler,
                    fixed=dict(fixed or {}),
                    preemption=preemption,
                    observer=observer,
                )
            )
            cycle.run(entities(self.cluster), requeue=requeue)
        return cycle

    # ---- one pod -----------------------------------------------------------------------------
    def schedule_pod(self, pod: Pod, within: Placement | None = None) -> PodResult:
        """One scheduling cycle of ``pod`` on the current state (inside ``within`` when given);
        nothing is assumed."""
        s = self.scheduler
        s.placement, s.placement_name = (
            (None, None) if within is None else (within.nodes, within.label)
        )
        try:
            return s.schedule(pod)
        finally:
            s.placement, s.placement_name = None, None

    def assume(
        self, pod: Pod, node: int, reserved: tuple[object, ...] | None = None
    ) -> tuple[object, ...]:
        """Take ``pod`` onto node position ``node``: the Reserve plugins first (``reserved``: what
        they set aside for it before, taken again as it is), then the node table. Returns the
        reservations."""
        reservers = self.profile.reservers
        if not reservers:
            self.nodes.assume(pod, node)
            return ()
        got: list[object] = []
        try:
            for k, pl in enumerate(reservers):
                got.append(
                    pl.reserve(pod, self.nodes, node, None if reserved is None else reserved[k])
                )
        except BaseException:
            for pl in reservers[: len(got)]:
                pl.unreserve(pod, self.nodes)
            raise
        out = tuple(got)
        self.nodes.assume(pod, node)
        self._reserved[pod.key] = out
        return out

    def forget(self, pod: Pod) -> None:
        """Take an assumed pod off its node (Unreserve, then the node table)."""
        for pl in self.profile.reservers:
            pl.unreserve(pod, self.nodes)
        self._reserved.pop(pod.key, None)
        self.nodes.forget(pod)

    # ---- one gang ----------------------------------------------------------------------------
    def place_group(
        self,
        group: PodGroup | None,
        pods: list[Pod],
        *,
        may_fit: Callable[[np.ndarray | None], bool] | None = None,
        reuse_key: Hashable | None = None,
    ) -> GroupOutcome:
        """The pod-group cycle of ``group`` with ``pods`` (none assumed yet), all or nothing
        (module docstring); ``group`` None: a gang without a topology constraint, whose object
        the cycle does not read. ``may_fit(nodes)``: the caller's necessary test (``None``: the
        whole cluster). ``reuse_key``: equal keys mean equal gangs (same pods' requests and
        constraints), whose placement evaluations may be reused; None reuses nothing."""
        if may_fit is not None and not may_fit(None):
            return GroupOutcome(None, True)
        if group is None or not group.topology_key or not self.profile.placement_generators:
            return GroupOutcome(self._cycles(pods, None, None)[0], False)
        snap = self.nodes
        info = self._group_info(group, pods)
        placements, status = run_placement_generate(
            self.profile.placement_generators, snap, info, Placement("", snap.all_nodes)
        )
        if placements is None:  # no plugin constrains it: the parent placement, as the cycle does
            return GroupOutcome(self._cycles(pods, None, None)[0], False)
        if not status.ok:  # no node has the label (or an Error): no state helps
            return GroupOutcome(None, True)
        candidates = [p for p in placements if may_fit is None or may_fit(p.nodes)]
        feasible: list[tuple[Placement, list[Proposal]]] = []
        for pl in candidates:
            got = self._evaluate_or_reuse(reuse_key, pods, pl)
            if got is not None:
                feasible.append((pl, got))
        if not feasible:
            return GroupOutcome(None, not candidates)
        at = 0
        if len(feasible) > 1:
            scores = run_placement_score(
                self.profile.placement_scorers,
                snap,
                info,
                [pl for pl, _ in feasible],
                [[(p, i) for p, i, _ in got] for _, got in feasible],
            )
            at, _ = best_placement(
                [sum(s.values()) for s in scores], self.scheduler.tie_break, self.scheduler.rng
            )
        chosen = feasible[at][1]
        for p, i, res in chosen:  # assumeSubtreeWithRevert: the evaluated proposals again
            self.assume(p, i, res)
        return GroupOutcome(chosen, False, feasible[at][0].label)

    def _group_info(self, group: PodGroup, pods: list[Pod]) -> PodGroupInfo:
        node = GroupNode(
            key=group.key,
            kind=EntityKind.POD_GROUP,
            obj=group,
            parent=None,
            children=(),
            root=group.key,
            depth=1,
            leaves=(group.key,),
            members=tuple(pods),
        )
        return PodGroupInfo(node, node.members, self.nodes.node_of)

    def _state_of(self, nodes: np.ndarray) -> bytes:
        """Everything a pod's cycle reads of ``nodes`` that placements change."""
        snap = self.nodes
        parts = [
            snap.free[nodes].tobytes(),
            snap.nonzero[nodes].tobytes(),
            snap.pod_count[nodes].tobytes(),
        ]
        parts += [pl.node_state(snap, nodes) for pl in self.profile.reservers]
        return b"|".join(parts)

    def _evaluate_or_reuse(
        self, reuse_key: Hashable | None, pods: list[Pod], placement: Placement
    ) -> list[Proposal] | None:
        """:meth:`_evaluate`, or the outcome of the last evaluation of the same gang in the same
        placement when none of its nodes changed since (module docstring). Not reused: sampled
        placements, and outcomes whose scan start did not move to ``start % size``."""
        snap = self.nodes
        size = len(placement.nodes)
        if (
            reuse_key is None
            or not self.reuse_evaluations
            or not self.profile.has_scoring
            or num_feasible_nodes_to_find(self.profile.percentage_of_nodes_to_score, size) < size
        ):
            return self._evaluate(pods, placement)[0]
        key = (reuse_key, placement.label)
        state = self._state_of(placement.nodes)
        hit = self._evaluations.get(key)
        if hit is not None and hit[0] == state:
            self.reused += 1
            _, proposals, scanned = hit
            if scanned:
                snap.next_start_node_index %= size
            return (
                None
                if proposals is None
                else [(pods[w], i, res) for w, (i, res) in enumerate(proposals)]
            )
        start = snap.next_start_node_index
        got, scanned = self._evaluate(pods, placement)
        if snap.next_start_node_index == (start % size if scanned else start):
            if len(self._evaluations) >= MAX_REUSED:
                self._evaluations.clear()
            self._evaluations[key] = (
                state,
                None if got is None else [(i, res) for _, i, res in got],
                scanned,
            )
        return got

    def _evaluate(
        self, pods: list[Pod], placement: Placement
    ) -> tuple[list[Proposal] | None, bool]:
        """``evaluatePlacement``: :meth:`_cycles` inside ``placement``, then everything reverted."""
        got, scanned = self._cycles(pods, placement.nodes, placement.label)
        for p, _, _ in got or ():
            self.forget(p)
        return got, scanned

    def _cycles(
        self, pods: list[Pod], nodes: np.ndarray | None, name: str | None
    ) -> tuple[list[Proposal] | None, bool]:
        """The pods' cycles (inside ``nodes`` unless None), each assumed before the next: the
        proposals, left assumed, or None with every pod taken back when one does not fit; and
        whether the first cycle scanned nodes (it moved the scan start)."""
        s = self.scheduler
        s.placement, s.placement_name = nodes, name
        got: list[Proposal] = []
        scanned = False
        try:
            for p in pods:
                r = s.schedule(p)
                scanned = scanned or r.evaluated > 0
                if r.node is None:
                    for q, _, _ in got:
                        self.forget(q)
                    return None, scanned
                got.append((p, r.node, self.assume(p, r.node)))
            return got, scanned
        finally:
            s.placement, s.placement_name = None, None


__all__ = ["GreedySession", "GroupOutcome", "Proposal"]
