"""The KEP-5732 placement algorithm of the workload cycle, as a mixin of
:class:`~gangplan.solver.greedy.podgroup.WorkloadCycle`.

Mirrors ``podGroupSchedulingPlacementAlgorithm``, ``compositePodGroupSchedulingPlacementAlgorithm``,
``evaluatePlacement``, ``nominatedPlacement`` and ``findBestPlacement`` of
``pkg/scheduler/schedule_one_podgroup.go`` (kubernetes/kubernetes, version id 55585698688; spec
§3.3 and §4.2):

1. Generate placements inside the parent placement with the profile's PlacementGenerate plugins
   (:func:`.placement.run_placement_generate`; several are merged). None of them constraining
   the group: no decision, the group runs in the parent placement. An error (scheduled pods in
   several domains) fails the group with an Error status.
2. A standalone PodGroup whose queued pods are nominated evaluates the placement holding most
   nominations first; Success with a new pod there is taken at once (the NNN fast path).
3. Evaluate every placement: run the group's algorithm with the scheduler restricted to the
   placement's nodes, record its proposals, pod cycles and traces, revert. For a gang of identical
   node-local pods the outcome is counted instead (:mod:`.placement_fast`), and only the placement
   that is kept (step 5 or 6, or the reported one of step 4) is evaluated in full, from the same
   node state and scan start, and checked against its count.
4. None feasible: Unschedulable, "0/N placements are available, reported (PodGroup) / first
   (CompositePodGroup) placement status: pod group is unschedulable" followed, beyond upstream's
   text (whose error is always errPodGroupUnschedulable), by that placement's own reason. Zero
   placements (no parent node has the label) would dereference nil upstream; here it is
   Unschedulable "0/0 placements are available".
5. One feasible: chosen without scoring. Several: the profile's PlacementScore plugins (default
   PlacementBinPacking + PodGroupPodsCount), weighted (:func:`.placement.run_placement_score`);
   the highest total wins; equal totals go to the earliest placement in generation order with
   ``tie_break="first"``, to a seeded uniform choice with ``"random"`` (upstream:
   ``Randomizer = rand.Int()``).
6. Re-assume the chosen placement's pods (``assumeSubtreeWithRevert``) and keep its pod cycles and
   group traces as the run's own.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gangplan.models.objects import Pod
from gangplan.solver.greedy import placement_fast
from gangplan.solver.greedy.framework import Code, Placement, PlacementError, PodGroupInfo, Status
from gangplan.solver.greedy.placement import run_placement_generate, run_placement_score
from gangplan.solver.greedy.placement_fast import Counted, CountingMismatch, CountingPlan

if TYPE_CHECKING:
    from gangplan.models.cluster import Cluster
    from gangplan.solver.greedy.schedule_one import PodResult, PodScheduler
    from gangplan.solver.greedy.snapshot import NodeTable

SCHEDULER_ERROR = "SchedulerError"


@dataclass
class GroupRun:
    """What one group (leaf or composite) of the hierarchy ended with."""

    status: Code
    new: int
    reason: str | None = None


@dataclass
class PlacementRun:
    """One placement's evaluation: the group's outcome, the proposals it made (already reverted),
    the pod cycles it ran and the group traces it left, kept aside until a placement is chosen."""

    placement: Placement
    run: GroupRun
    assigned: list[tuple[Pod, int]]
    order: list[str]
    results: dict[str, PodResult]
    traces: tuple[dict, dict] | None
    scores: dict[str, int] = field(default_factory=dict)
    total: int | None = None
    counted: Counted | None = None
    """Set when the outcome was counted (:mod:`.placement_fast`) instead of evaluated: ``order``,
    ``results`` and ``traces`` are empty and ``assigned`` has no nodes (-1) until
    :meth:`PlacementAlgorithm._materialize` evaluates it in full."""

    def to_trace(self) -> dict:
        return {
            "name": self.placement.name,
            "nodes": len(self.placement.nodes),
            "status": self.run.status.label,
            "reason": self.run.reason,
            "assigned": len(self.assigned),
            "scores": dict(self.scores),
            "total": self.total,
        }


class PlacementAlgorithm:
    """Placement evaluation for :class:`WorkloadCycle` (which provides the attributes below and
    ``schedule_in_placement`` / ``assume`` / ``revert`` / ``_set_trace`` / ``_propagate_failure``)."""

    cluster: Cluster
    snap: NodeTable
    sched: PodScheduler
    queued: set[str]
    assumed: list[Pod]
    order: list[str]
    results: dict[str, PodResult]
    group_trace: dict[str, dict]
    group_reasons: dict[str, str]

    def schedule_placements(self, key: str) -> GroupRun:
        """``podGroupSchedulingPlacementAlgorithm``: generate, evaluate each and revert, choose.
        A group no PlacementGenerate plugin constrains runs in the parent placement as it is."""
        parent, parent_name = self.sched.placement, self.sched.placement_name
        info = PodGroupInfo(self.cluster.groups.node(key), self.cluster.groups.members(key), self.snap.node_of)
        parent_placement = Placement(parent_name or "", self.snap.all_nodes if parent is None else parent)
        generated = run_placement_generate(self.sched.profile.placement_generators, self.snap, info, parent_placement)
        if generated[0] is None:
            return self.schedule_in_placement(key)
        base = self._trace_state(key)
        start = self.snap.next_start_node_index
        try:
            try:
                return self._schedule_placements(key, info, generated, base, counting=True)
            except CountingMismatch:
                if placement_fast.VERIFY:
                    raise
                self.snap.next_start_node_index = start
                self._restore_trace_state(base)
                self.sched.placement, self.sched.placement_name = parent, parent_name
                return self._schedule_placements(key, info, generated, base, counting=False)
        finally:
            self.sched.placement, self.sched.placement_name = parent, parent_name

    def _schedule_placements(self, key: str, pg: PodGroupInfo, generated: tuple[list[Placement] | None, Status], base: tuple[dict, dict], *, counting: bool) -> GroupRun:
        placements, st = generated
        info: dict = {"key": pg.group.topology_key, "parent": self.sched.placement_name, "generated": 0, "evaluated": [], "nominated": None, "scored": False, "tieCount": 0, "chosen": None}
        if st.code == Code.ERROR:
            return self._placement_outcome(key, GroupRun(Code.ERROR, 0, f"{SCHEDULER_ERROR}: {st.message()}"), info)
        if not st.ok:
            run = GroupRun(Code.UNSCHEDULABLE, 0, f"0/0 placements are available: {st.message()}")
            return self._placement_outcome(key, run, info)
        assert placements is not None
        info["generated"] = len(placements)
        records: list[PlacementRun] = []
        nominated = self._nominated_placement(key, placements)
        info["nominated"] = nominated.name if nominated is not None else None
        first = [nominated] if nominated is not None else []
        plan = CountingPlan.build(self, key, placements) if counting and nominated is None else None
        for pl in first + [p for p in placements if p is not nominated]:
            rec = self._count(key, plan, pl, base) if plan is not None else None
            if rec is None:
                rec = self._evaluate(key, pl, base)
            records.append(rec)
            if rec.run.status == Code.ERROR:
                self._apply(rec)
                info["evaluated"] = [r.to_trace() for r in records]
                return self._placement_outcome(key, rec.run, info)
            if pl is nominated and rec.run.status == Code.SUCCESS and rec.run.new > 0:
                return self._choose(key, rec, records, info, base)
        return self._select(key, pg, placements, records, info, base)

    def _count(self, key: str, plan: CountingPlan, placement: Placement, base: tuple[dict, dict]) -> PlacementRun | None:
        """A counted record for ``placement`` (the scan start advanced as its cycles would), or
        None when it must be evaluated in full. With ``placement_fast.VERIFY`` it is checked
        against a full evaluation at once."""
        got = plan.evaluate(placement)
        if got is None:
            return None
        rec = PlacementRun(placement, GroupRun(got.status, got.new, got.reason), [(p, -1) for p in plan.pods[: got.new]], [], {}, None, counted=got)
        self.snap.next_start_node_index = got.x_after
        if placement_fast.VERIFY:
            self._full(key, rec, base)
            self.snap.next_start_node_index = got.x_after
        return rec

    def _full(self, key: str, rec: PlacementRun, base: tuple[dict, dict]) -> PlacementRun:
        """Evaluate a counted placement in full from the node state and scan start it was counted
        at, and check the count; the scan start is left as the full evaluation leaves it."""
        c = rec.counted
        assert c is not None
        self.snap.next_start_node_index = c.x_before
        full = self._evaluate(key, rec.placement, base)
        got = (full.run.status, full.run.new, full.run.reason, len(full.assigned), self.snap.next_start_node_index)
        want = (c.status, c.new, c.reason, len(rec.assigned), c.x_after)
        if got != want:
            raise CountingMismatch(f"{key} in {rec.placement.label}: evaluated {got}, counted {want}")
        full.scores, full.total = rec.scores, rec.total
        return full

    def _materialize(self, key: str, rec: PlacementRun, records: list[PlacementRun], base: tuple[dict, dict]) -> PlacementRun:
        """The kept placement's full record (pod cycles, node choices, group traces) in place of
        its count; the scan start stays where the whole decision left it."""
        if rec.counted is None:
            return rec
        now = self.snap.next_start_node_index
        full = self._full(key, rec, base)
        self.snap.next_start_node_index = now
        records[next(k for k, r in enumerate(records) if r is rec)] = full
        return full

    def _select(self, key: str, pg: PodGroupInfo, placements: list[Placement], records: list[PlacementRun], info: dict, base: tuple[dict, dict]) -> GroupRun:
        feasible = [r for r in records if r.run.status == Code.SUCCESS]
        if not feasible:
            return self._no_placement(key, placements, records, info, base)
        if len(feasible) == 1:
            return self._choose(key, feasible[0], records, info, base)
        try:
            self._score(pg, feasible)
        except PlacementError as err:
            info["evaluated"] = [r.to_trace() for r in records]
            return self._placement_outcome(key, GroupRun(Code.ERROR, 0, f"{SCHEDULER_ERROR}: {err}"), info)
        info["scored"] = True
        best = max(r.total for r in feasible)
        ties = [r for r in feasible if r.total == best]
        info["tieCount"] = len(ties)
        pick = ties[0] if self.sched.tie_break == "first" or len(ties) == 1 else ties[self.sched.rng.randrange(len(ties))]
        return self._choose(key, pick, records, info, base)

    def _score(self, pg: PodGroupInfo, feasible: list[PlacementRun]) -> None:
        """The profile's PlacementScore plugins, weighted and summed (spec §3.3 step 7)."""
        scores = run_placement_score(self.sched.profile.placement_scorers, self.snap, pg, [r.placement for r in feasible], [r.assigned for r in feasible])
        for r, s in zip(feasible, scores, strict=True):
            r.scores = s
            r.total = sum(s.values())

    def _choose(self, key: str, rec: PlacementRun, records: list[PlacementRun], info: dict, base: tuple[dict, dict]) -> GroupRun:
        """Re-assume the chosen placement's pods and keep its trace (upstream
        ``assumeSubtreeWithRevert``)."""
        rec = self._materialize(key, rec, records, base)
        self._apply(rec)
        for pod, i in rec.assigned:
            self.assume(pod, i)
        info["chosen"] = rec.placement.name
        info["evaluated"] = [r.to_trace() for r in records]
        return self._placement_outcome(key, rec.run, info)

    def _no_placement(self, key: str, placements: list[Placement], records: list[PlacementRun], info: dict, base: tuple[dict, dict]) -> GroupRun:
        reported = self._materialize(key, records[0], records, base)
        info["evaluated"] = [r.to_trace() for r in records]
        self._apply(reported)
        which = "reported" if self.cluster.groups.is_leaf(key) else "first"
        reason = f"0/{len(placements)} placements are available, {which} placement status: pod group is unschedulable ({reported.placement.label}: {reported.run.reason})"
        return self._placement_outcome(key, GroupRun(Code.UNSCHEDULABLE, 0, reason), info)

    def _placement_outcome(self, key: str, run: GroupRun, info: dict) -> GroupRun:
        self._set_trace(key, run)
        self.group_trace[key]["placements"] = info
        if run.status != Code.SUCCESS and not self.cluster.groups.is_leaf(key):
            self._propagate_failure(key, run.reason or run.status.label)
        return run

    def _evaluate(self, key: str, placement: Placement, base: tuple[dict, dict]) -> PlacementRun:
        """``evaluatePlacement``: run the group inside ``placement``, record, revert everything."""
        checkpoint, mark = len(self.assumed), len(self.order)
        self.sched.placement, self.sched.placement_name = placement.nodes, placement.label
        run = self.schedule_in_placement(key)
        assigned = [(p, self.snap.node_of[p.key]) for p in self.assumed[checkpoint:]]
        self.revert(checkpoint)
        order = self.order[mark:]
        del self.order[mark:]
        results = {k: self.results.pop(k) for k in order if k in self.results}
        rec = PlacementRun(placement, run, assigned, order, results, self._trace_state(key))
        self._restore_trace_state(base)
        return rec

    def _apply(self, rec: PlacementRun) -> None:
        """Make ``rec``'s pod cycles and group traces the run's own."""
        self.order.extend(rec.order)
        self.results.update(rec.results)
        self._restore_trace_state(rec.traces)

    def _trace_state(self, key: str) -> tuple[dict, dict]:
        keys = self.cluster.groups.subtree(key)
        traces = {k: copy.deepcopy(self.group_trace.get(k)) for k in keys}
        reasons = {k: self.group_reasons.get(k) for k in keys}
        return traces, reasons

    def _restore_trace_state(self, state: tuple[dict, dict]) -> None:
        traces, reasons = state
        for k, t in traces.items():
            if t is None:
                self.group_trace.pop(k, None)
            else:
                self.group_trace[k] = copy.deepcopy(t)
        for k, r in reasons.items():
            if r is None:
                self.group_reasons.pop(k, None)
            else:
                self.group_reasons[k] = r

    def _nominated_placement(self, key: str, placements: list[Placement]) -> Placement | None:
        """``nominatedPlacement``: for a standalone PodGroup, the placement holding most of its
        queued pods' nominated nodes (the first on ties), else None."""
        group = self.cluster.groups.node(key)
        if not group.is_leaf or group.parent is not None:
            return None
        counts: dict[int, int] = {}
        for p in group.members:
            i = self.snap.index.get(p.nominated_node_name or "")
            if p.key in self.queued and i is not None:
                counts[i] = counts.get(i, 0) + 1
        best, best_count = None, 0
        for pl in placements:
            c = sum(counts.get(int(i), 0) for i in pl.nodes) if counts else 0
            if c > best_count:
                best, best_count = pl, c
        return best
