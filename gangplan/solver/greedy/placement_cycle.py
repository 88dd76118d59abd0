"""The KEP-5732 placement algorithm of the workload cycle: a collaborator of
:class:`~gangplan.solver.greedy.podgroup.WorkloadCycle` on the same
:class:`~gangplan.solver.greedy.state.RunState`.

Mirrors ``podGroupSchedulingPlacementAlgorithm``, ``compositePodGroupSchedulingPlacementAlgorithm``,
``evaluatePlacement``, ``nominatedPlacement`` and ``findBestPlacement`` of
``pkg/scheduler/schedule_one_podgroup.go`` (kubernetes/kubernetes @f07ca119, the v1.37-era code):

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
   node state and scan start, and checked against its count. In a retry whose failure leaves
   no record (``RunState.discard_failure``: the run undoes a retry that places nothing, and
   preemption cannot rerun the group) a failed decision keeps the count of the reported
   placement instead, and a group without placements whose pod fits no node is counted too
   (:meth:`PlacementAlgorithm._failure_by_count`): their pod cycles would only be undone.
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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from gangplan.models.objects import Pod
from gangplan.models.trace import EvaluatedPlacement, PlacementDecision
from gangplan.solver.greedy import placement_fast
from gangplan.solver.greedy.framework import Code, Placement, PlacementError, PodGroupInfo, Status
from gangplan.solver.greedy.placement import (
    best_placement,
    run_placement_generate,
    run_placement_score,
)
from gangplan.solver.greedy.placement_fast import Counted, CountingMismatch, CountingPlan
from gangplan.solver.greedy.state import Segment

if TYPE_CHECKING:
    from gangplan.solver.greedy.state import RunState

SCHEDULER_ERROR = "SchedulerError"


@dataclass
class GroupRun:
    """What one group (leaf or composite) of the hierarchy ended with."""

    status: Code
    new: int
    reason: str | None = None


def record_group(
    state: RunState,
    key: str,
    run: GroupRun,
    progression: list[str] | None = None,
    placements: PlacementDecision | None = None,
) -> None:
    """A group's PlacementFeasible outcome (and placement decision) into its trace record, and
    its reason when it failed."""
    fields: dict = {"status": run.status.label, "reason": run.reason}
    if progression is not None:
        fields["progression"] = progression
    if placements is not None:
        fields["placements"] = placements
    state.trace.update_group(key, **fields)
    if run.reason and run.status != Code.SUCCESS:
        state.trace.set("group_reasons", key, run.reason)


def propagate_failure(state: RunState, key: str, reason: str) -> None:
    """A failing parent overrides its successful children: none of their pods bind."""
    tr = state.trace
    for g in state.cluster.groups.leaves(key):
        t = tr.groups.get(g)
        if t is not None and t.status == Code.SUCCESS.label:
            tr.update_group(g, status=Code.UNSCHEDULABLE.label, reason=f"parent failed: {reason}")
            tr.set("group_reasons", g, f"parent failed: {reason}")


@dataclass
class PlacementRun:
    """One placement's evaluation: the group's outcome, the proposals it made (already reverted)
    and everything it recorded (taken out of the trace), kept aside until a placement is chosen."""

    placement: Placement
    run: GroupRun
    assigned: list[tuple[Pod, int]]
    recorded: Segment | None
    scores: dict[str, int] = field(default_factory=dict)
    total: int | None = None
    counted: Counted | None = None
    """Set when the outcome was counted (:mod:`.placement_fast`) instead of evaluated: nothing
    was recorded and ``assigned`` has no nodes (-1) until :meth:`PlacementAlgorithm._materialize`
    evaluates it in full."""

    def to_trace(self) -> EvaluatedPlacement:
        return EvaluatedPlacement(
            self.placement.name,
            len(self.placement.nodes),
            self.run.status.label,
            self.run.reason,
            len(self.assigned),
            dict(self.scores),
            self.total,
        )


@dataclass
class _Decision:
    """The placement decision being made for one group (becomes its ``PlacementDecision``)."""

    key: str
    parent: str | None
    generated: int = 0
    nominated: str | None = None
    scored: bool = False
    tie_count: int = 0
    chosen: str | None = None
    deferred: tuple[list[int], Callable[[int], EvaluatedPlacement]] | None = None
    """Positions (in evaluation order) of the failed counted placements that have no record,
    and the function that builds the trace entry of the ``j``-th of them."""

    def trace(self, records: list[PlacementRun]) -> PlacementDecision:
        out = PlacementDecision(
            key=self.key,
            parent=self.parent,
            generated=self.generated,
            evaluated=[r.to_trace() for r in records],
            nominated=self.nominated,
            scored=self.scored,
            tie_count=self.tie_count,
            chosen=self.chosen,
        )
        if self.deferred is not None:
            out.defer(*self.deferred)
        return out


class PlacementAlgorithm:
    """Placement evaluation on a run's state. ``schedule_in_placement(key)`` runs the pod-group
    algorithm of ``key`` in the scheduler's current placement; ``leaf_inputs(key)`` gives a leaf
    group's queued pods, minCount and scheduled pods (both from the pod-group cycle)."""

    def __init__(
        self,
        state: RunState,
        schedule_in_placement: Callable[[str], GroupRun],
        leaf_inputs: Callable[[str], tuple[list[Pod], int, int]],
    ) -> None:
        self.state = state
        self.schedule_in_placement = schedule_in_placement
        self.leaf_inputs = leaf_inputs

    def schedule_placements(self, key: str) -> GroupRun:
        """``podGroupSchedulingPlacementAlgorithm``: generate, evaluate each and revert, choose.
        A group no PlacementGenerate plugin constrains runs in the parent placement as it is."""
        st = self.state
        sched = st.sched
        parent, parent_name = sched.placement, sched.placement_name
        info = PodGroupInfo(
            st.cluster.groups.node(key), st.cluster.groups.members(key), st.snap.node_of
        )
        parent_placement = Placement(
            parent_name or "", st.snap.all_nodes if parent is None else parent
        )
        generated = run_placement_generate(
            sched.profile.placement_generators, st.snap, info, parent_placement
        )
        if generated[0] is None:
            if st.discard_failure == key:
                counted = self._failure_by_count(key, parent_placement)
                if counted is not None:
                    return counted
            return self.schedule_in_placement(key)
        base = st.trace.mark()
        start = st.snap.next_start_node_index
        try:
            try:
                return self._schedule_placements(key, info, generated, counting=True)
            except CountingMismatch:
                if placement_fast.VERIFY:
                    raise
                st.snap.next_start_node_index = start
                st.trace.restore(base)
                sched.placement, sched.placement_name = parent, parent_name
                return self._schedule_placements(key, info, generated, counting=False)
        finally:
            sched.placement, sched.placement_name = parent, parent_name

    def _failure_by_count(self, key: str, whole: Placement) -> GroupRun | None:
        """A retry of root ``key`` whose failure leaves no record (``RunState.discard_failure``),
        in its parent placement ``whole`` (no PlacementGenerate plugin constrains it): when the
        count says no node has room for its pod, every pod it attempts fails after scanning all
        of the placement's nodes, so the group's outcome, reason, progression, scan start and
        rejecting plugins are the count's, without its pod cycles (whose records the retry
        undoes). None when counting does not apply or a pod could fit. VERIFY runs the cycles
        as well and compares."""
        st = self.state
        plan = CountingPlan.build(st, key, [whole], self.leaf_inputs, cache=False)
        if plan is None:
            return None
        batch = plan.evaluate_all()
        if batch.full[0] or batch.success[0] or batch.placed[0]:
            return None
        snap = st.snap
        x = snap.next_start_node_index
        advance, size = int(batch.advance[0]), int(plan.sizes[0])
        x_after = (x + advance) % size if advance else x  # scan_starts of one placement
        got = batch.counted(0, x, x_after)
        run = GroupRun(Code.UNSCHEDULABLE, 0, got.reason)
        progression = _failed_progression(
            len(plan.pods), plan.before, plan.minimum, st.sched.profile.feasible
        )
        if placement_fast.VERIFY:
            outer, st.rejectors = st.rejectors, set()
            try:
                full = self.schedule_in_placement(key)
            finally:
                rejected, st.rejectors = st.rejectors, outer
                if outer is not None:
                    outer |= rejected
            kept = st.trace.groups.get(key)
            want = (
                full.status,
                full.new,
                full.reason,
                snap.next_start_node_index,
                rejected,
                kept.progression if kept else None,
            )
            if want != (run.status, run.new, run.reason, x_after, got.rejectors, progression):
                raise CountingMismatch(
                    f"{key}: evaluated {want}, counted {(run.status, run.new, run.reason, x_after, got.rejectors, progression)}"
                )
            return full
        snap.next_start_node_index = x_after
        if st.rejectors is not None:
            st.rejectors |= got.rejectors
        record_group(st, key, run, progression)
        return run

    def _schedule_placements(
        self,
        key: str,
        pg: PodGroupInfo,
        generated: tuple[list[Placement] | None, Status],
        *,
        counting: bool,
    ) -> GroupRun:
        st = self.state
        placements, status = generated
        d = _Decision(pg.group.topology_key, st.sched.placement_name)
        if status.code == Code.ERROR:
            return self._outcome(
                key, GroupRun(Code.ERROR, 0, f"{SCHEDULER_ERROR}: {status.message()}"), d, []
            )
        if not status.ok:
            return self._outcome(
                key,
                GroupRun(
                    Code.UNSCHEDULABLE, 0, f"0/0 placements are available: {status.message()}"
                ),
                d,
                [],
            )
        assert placements is not None
        d.generated = len(placements)
        records: list[PlacementRun] = []
        nominated = self._nominated_placement(key, placements)
        d.nominated = nominated.name if nominated is not None else None
        first = [nominated] if nominated is not None else []
        plan = (
            CountingPlan.build(st, key, placements, self.leaf_inputs)
            if counting and nominated is None
            else None
        )
        if plan is not None:
            return self._counted_decision(key, pg, placements, plan, d)
        for pl in first + [p for p in placements if p is not nominated]:
            rec = self._evaluate(key, pl)
            records.append(rec)
            if rec.run.status == Code.ERROR:
                self._apply(rec)
                return self._outcome(key, rec.run, d, records)
            if pl is nominated and rec.run.status == Code.SUCCESS and rec.run.new > 0:
                return self._choose(key, rec, records, d)
        return self._select(key, pg, placements, records, d)

    def _counted_decision(
        self,
        key: str,
        pg: PodGroupInfo,
        placements: list[Placement],
        plan: CountingPlan,
        d: _Decision,
    ) -> GroupRun:
        """Steps 3-6 with every placement counted at once (:meth:`CountingPlan.evaluate_all`):
        the same records, scan starts and choice as counting them one by one, but a failed
        counted placement after the first gets no record object while the decision runs; its
        trace entry (and FitError text) is built only if read (:meth:`PlacementDecision.entries`).
        A placement that must be evaluated in full still is, at its turn."""
        snap = self.state.snap
        batch = plan.evaluate_all()
        full, success, attempts, scan, sizes = (
            batch.full,
            batch.success,
            batch.attempts,
            batch.scan,
            batch.sizes,
        )
        records: list[PlacementRun] = []
        positions: list[int] = []
        deferred_k: list[int] = []

        def entry(j: int) -> EvaluatedPlacement:
            k = deferred_k[j]
            pl = placements[k]
            return EvaluatedPlacement(
                pl.name, len(pl.nodes), Code.UNSCHEDULABLE.label, batch.reason(k), 0, {}, None
            )

        d.deferred = (positions, entry)
        x = snap.next_start_node_index
        verify = placement_fast.VERIFY
        if not any(full) and not verify:
            # No placement needs a full evaluation (the common case): the scan starts in one
            # pass, records only for the first placement and the feasible ones.
            starts = scan_starts(x, batch.advance, plan.sizes)  # starts[k + 1]: after placement k
            at = starts.tolist()
            ok = np.flatnonzero(success).tolist()
            for k in [0, *(k for k in ok if k)]:
                got = batch.counted(k, at[k], at[k + 1])
                records.append(
                    PlacementRun(
                        placements[k],
                        GroupRun(got.status, got.new, got.reason),
                        plan.proposals(got.new),
                        None,
                        counted=got,
                    )
                )
            failed = np.ones(len(placements), dtype=bool)
            failed[ok] = False
            failed[0] = False
            deferred_k.extend(np.flatnonzero(failed).tolist())
            positions.extend(deferred_k)  # no full evaluation: a placement's position is its index
            snap.next_start_node_index = at[-1]
            batch.freeze()
            return self._select(key, pg, placements, records, d)
        closed = scan_starts(x, batch.advance, plan.sizes) if verify and not any(full) else None
        for k in range(len(placements)):
            if (
                closed is not None and closed[k] != x
            ):  # the one-pass scan starts of the common case (tests)
                raise CountingMismatch(
                    f"{key}: scan start before placement #{k} is {x}, counted {int(closed[k])}"
                )
            if full[k]:
                snap.next_start_node_index = x
                rec = self._evaluate(key, placements[k])
                x = snap.next_start_node_index
                records.append(rec)
                if rec.run.status == Code.ERROR:
                    batch.freeze()
                    self._apply(rec)
                    return self._outcome(key, rec.run, d, records)
                continue
            a, n_scan = attempts[k], scan[k]
            x_after = (x + a * n_scan) % sizes[k] if n_scan and a else x
            if k and not success[k] and not verify:
                positions.append(len(records) + len(positions))
                deferred_k.append(k)
            else:
                got = batch.counted(k, x, x_after)
                rec = PlacementRun(
                    placements[k],
                    GroupRun(got.status, got.new, got.reason),
                    plan.proposals(got.new),
                    None,
                    counted=got,
                )
                if verify:  # every counted placement against its full evaluation (tests)
                    self._full(key, rec)
                records.append(rec)
            x = x_after
        snap.next_start_node_index = x
        batch.freeze()
        return self._select(key, pg, placements, records, d)

    def _full(self, key: str, rec: PlacementRun) -> PlacementRun:
        """Evaluate a counted placement in full from the node state and scan start it was counted
        at, and check the count; the scan start is left as the full evaluation leaves it."""
        c = rec.counted
        assert c is not None
        st = self.state
        snap = st.snap
        snap.next_start_node_index = c.x_before
        outer, st.rejectors = st.rejectors, set()
        try:
            full = self._evaluate(key, rec.placement)
        finally:
            rejected, st.rejectors = st.rejectors, outer
            if outer is not None:
                outer |= rejected
        got = (
            full.run.status,
            full.run.new,
            full.run.reason,
            len(full.assigned),
            snap.next_start_node_index,
            rejected,
        )
        want = (c.status, c.new, c.reason, len(rec.assigned), c.x_after, c.rejectors)
        if got != want:
            raise CountingMismatch(
                f"{key} in {rec.placement.label}: evaluated {got}, counted {want}"
            )
        full.scores, full.total = rec.scores, rec.total
        return full

    def _materialize(
        self, key: str, rec: PlacementRun, records: list[PlacementRun]
    ) -> PlacementRun:
        """The kept placement's full record (pod cycles, node choices, group traces) in place of
        its count; the scan start stays where the whole decision left it."""
        if rec.counted is None:
            return rec
        snap = self.state.snap
        now = snap.next_start_node_index
        full = self._full(key, rec)
        snap.next_start_node_index = now
        records[next(k for k, r in enumerate(records) if r is rec)] = full
        return full

    def _select(
        self,
        key: str,
        pg: PodGroupInfo,
        placements: list[Placement],
        records: list[PlacementRun],
        d: _Decision,
    ) -> GroupRun:
        feasible = [r for r in records if r.run.status == Code.SUCCESS]
        if not feasible:
            return self._no_placement(key, placements, records, d)
        if len(feasible) == 1:
            return self._choose(key, feasible[0], records, d)
        try:
            self._score(pg, feasible)
        except PlacementError as err:
            return self._outcome(
                key, GroupRun(Code.ERROR, 0, f"{SCHEDULER_ERROR}: {err}"), d, records
            )
        d.scored = True
        sched = self.state.sched
        at, d.tie_count = best_placement(
            [r.total for r in feasible], sched.tie_break, sched.rng, sched.tie_shift
        )
        if d.tie_count > 1:
            sched.tied = True
        return self._choose(key, feasible[at], records, d)

    def _score(self, pg: PodGroupInfo, feasible: list[PlacementRun]) -> None:
        """The profile's PlacementScore plugins, weighted and summed (``findBestPlacement``)."""
        st = self.state
        scores = run_placement_score(
            st.sched.profile.placement_scorers,
            st.snap,
            pg,
            [r.placement for r in feasible],
            [r.assigned for r in feasible],
        )
        for r, s in zip(feasible, scores, strict=True):
            r.scores = s
            r.total = sum(s.values())

    def _choose(
        self, key: str, rec: PlacementRun, records: list[PlacementRun], d: _Decision
    ) -> GroupRun:
        """Re-assume the chosen placement's pods and keep its trace (upstream
        ``assumeSubtreeWithRevert``)."""
        rec = self._materialize(key, rec, records)
        self._apply(rec)
        for pod, i in rec.assigned:
            self.state.assumed.assume(pod, i)
        d.chosen = rec.placement.name
        return self._outcome(key, rec.run, d, records)

    def _no_placement(
        self, key: str, placements: list[Placement], records: list[PlacementRun], d: _Decision
    ) -> GroupRun:
        st = self.state
        reported = records[0]
        if reported.counted is not None and st.discard_failure == key and not placement_fast.VERIFY:
            # A retry of this root that fails leaves no record (``WorkloadCycle.run`` undoes it) and
            # binds nothing: the reported placement's pod cycles, which only its records would
            # show, are not run; their outcome is the count (status, reason, scan start) and
            # they reject with the count's plugins. VERIFY evaluates it as any other decision
            # does and checks those plugins against its cycles.
            if st.rejectors is not None:
                st.rejectors |= reported.counted.rejectors
        else:
            reported = self._materialize(key, reported, records)
            self._apply(reported)
        which = "reported" if st.cluster.groups.is_leaf(key) else "first"
        reason = f"0/{len(placements)} placements are available, {which} placement status: pod group is unschedulable ({reported.placement.label}: {reported.run.reason})"
        return self._outcome(key, GroupRun(Code.UNSCHEDULABLE, 0, reason), d, records)

    def _outcome(
        self, key: str, run: GroupRun, d: _Decision, records: list[PlacementRun]
    ) -> GroupRun:
        st = self.state
        record_group(st, key, run, placements=d.trace(records))
        if run.status != Code.SUCCESS and not st.cluster.groups.is_leaf(key):
            propagate_failure(st, key, run.reason or run.status.label)
        return run

    def _evaluate(self, key: str, placement: Placement) -> PlacementRun:
        """``evaluatePlacement``: run the group inside ``placement``, record, revert everything."""
        st = self.state
        checkpoint, mark = st.assumed.checkpoint(), st.trace.mark()
        st.sched.placement, st.sched.placement_name = placement.nodes, placement.label
        run = self.schedule_in_placement(key)
        assigned = st.assumed.since(checkpoint)
        st.assumed.rollback(checkpoint)
        return PlacementRun(placement, run, assigned, st.trace.take(mark))

    def _apply(self, rec: PlacementRun) -> None:
        """Make ``rec``'s pod cycles and group traces the run's own."""
        if rec.recorded is not None:
            self.state.trace.apply(rec.recorded)

    def _nominated_placement(self, key: str, placements: list[Placement]) -> Placement | None:
        """``nominatedPlacement``: for a standalone PodGroup, the placement holding most of its
        queued pods' nominated nodes (the first on ties), else None."""
        st = self.state
        group = st.cluster.groups.node(key)
        if not group.is_leaf or group.parent is not None:
            return None
        counts: dict[int, int] = {}
        for p in group.members:
            i = st.snap.nominated_node(p)
            if p.key in st.queued and i is not None:
                counts[i] = counts.get(i, 0) + 1
        if not counts:
            return None
        best, best_count = None, 0
        for pl in placements:
            c = sum(counts.get(int(i), 0) for i in pl.nodes) if counts else 0
            if c > best_count:
                best, best_count = pl, c
        return best


def scan_starts(x: int, advance: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The scan start before each placement and after the last (``len + 1`` values) when
    placement ``k``'s cycles advance it by ``advance[k]`` nodes modulo its size ``sizes[k]``, and
    leave it as it is (no modulo) when they scan nothing: ``y -> (y + a_k) % n_k if a_k else y``
    from ``x``, computed per run of equal sizes with one cumulative sum each (a rack level has
    a few runs: racks are equal but where a group of servers ends)."""
    out = np.empty(len(sizes) + 1, dtype=np.int64)
    out[0] = y = x
    cuts = [0, *(np.flatnonzero(np.diff(sizes)) + 1).tolist(), len(sizes)]
    for lo, hi in zip(cuts, cuts[1:], strict=False):
        if lo == hi:
            continue
        c = np.cumsum(advance[lo:hi])
        m = int(sizes[lo])
        vals = np.where(c == 0, y, (y + c) % m) if m else np.full(hi - lo, y, dtype=np.int64)
        out[lo + 1 : hi + 1] = vals
        y = int(vals[-1])
    return out


def _failed_progression(
    queued: int, before: int, minimum: int, feasible: Callable[[int, int, int], Code]
) -> list[str]:
    """The status after each pod of ``until_feasible`` (:mod:`.podgroup`) when every attempted
    pod fails: the loop stops once minCount is out of reach."""
    progression: list[str] = []
    if feasible(queued, before, minimum) == Code.UNSCHEDULABLE:
        return progression
    for remaining in range(queued - 1, -1, -1):
        status = feasible(remaining, before, minimum)
        progression.append(status.label)
        if status == Code.UNSCHEDULABLE:
            break
    return progression
