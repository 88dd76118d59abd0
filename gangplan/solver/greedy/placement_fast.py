"""Counting evaluation of KEP-5732 placements: the outcome of a placement for a gang of identical,
node-local pods without running its pod cycles.

Upstream evaluates every placement by running the pod-group algorithm in it and reverting
(``evaluatePlacement``). Only the evaluation of the placement that is kept (the chosen one, or the
reported one when none is feasible) leaves pod cycles, node choices and group traces in the
result; of every other placement the result shows its status, reason, number of proposed pods and
placement scores. For a group whose queued pods are identical and whose active filters read
nothing but the node itself (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity and
NodeResourcesFit: no inter-pod terms, spread constraints, host ports or nominated pods anywhere
in play), those are fixed by counting:

* node ``i`` passes Filter for ``c_i = min(allocatable pods - pods, min_r floor(free_r / req_r))``
  more copies of the pod (0 where a static filter or the PreFilterResult rejects it), and every
  copy placed on a node lowers that node's count by exactly one, whichever node the scores pick.
  So the pods of placement ``P`` succeed, in member order, while fewer than ``C_P = sum c_i`` have
  been placed, and fail from then on: the PlacementFeasible loop runs on these outcomes;
* when a pod fails, every node of ``P`` holds exactly ``c_i`` more copies, so its FitError is the
  one of that state (:func:`~gangplan.solver.greedy.plugins.noderesources.fit.fit_failures`
  with ``added = c``), counted per node by the first rejecting filter in profile order, and the
  plugins its cycle reports as rejecting (``UnschedulablePlugins``) are those with a count;
* PlacementBinPacking and PodGroupPodsCount read the totals of the proposals, not their nodes;
* ``nextStartNodeIndex``: when every cycle scans the whole placement (it holds at most
  ``numFeasibleNodesToFind`` nodes, or fewer feasible ones), each attempted pod advances it by the
  nodes scanned, modulo the placement's size; a placement where sampling could stop a scan early
  is evaluated in full.

The kept placement is evaluated in full afterwards, from the same node state and start index, and
must agree with its count (status, reason, proposals, start index, rejecting plugins); a
disagreement re-runs the whole decision without counting. With :data:`VERIFY` every counted
placement is also evaluated in full and compared (the tests turn it on).

What the counts cost (issue 27: 4,278 nodes in 535 racks, a decision per rack gang and per retry
of one after each bind): ``c_i`` and NodeResourcesFit's reasons at ``c_i`` are per-node functions
of node state, kept by the node table per pod signature (:meth:`NodeTable.node_array
<gangplan.solver.greedy.snapshot.NodeTable.node_array>`: a decision after a bind recomputes the
nodes that changed only); the reported placement's FitError reads its own nodes; the failure
table of every other placement is built only when a trace reads one of their entries, from
NodeResourcesFit's reasons copied at the decision's base state (one small integer per node).

Random tie-breaking (``tie_break="random"``) draws from the generator in every scored cycle (and a
v1.36 tie retry shifts ``first`` ties, ``PodScheduler.tie_shift``), so
counting is off with it, as it is for what-if replays of the group (``fixed`` pods, or a pod the
run's observer watches: a replay that may stop at any of the pod's cycles; the decisive step's
replay of the kept cycle does not watch, since the kept placement is evaluated in full anyway).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from gangplan.models.objects import Pod
from gangplan.solver.greedy.framework import Code, CycleState, absent_nodes_reason, fit_error_text
from gangplan.solver.greedy.plugins.gangscheduling import GangScheduling
from gangplan.solver.greedy.plugins.nodeaffinity import NodeAffinity
from gangplan.solver.greedy.plugins.nodename import NodeName
from gangplan.solver.greedy.plugins.noderesources.fit import Fit, fit_failures
from gangplan.solver.greedy.plugins.noderesources.placement_bin_packing import PlacementBinPacking
from gangplan.solver.greedy.plugins.nodeunschedulable import NodeUnschedulable
from gangplan.solver.greedy.plugins.podgrouppodscount import PodGroupPodsCount
from gangplan.solver.greedy.plugins.tainttoleration import TaintToleration
from gangplan.solver.greedy.schedule_one import PodResult, leaf_reason, num_feasible_nodes_to_find

if TYPE_CHECKING:
    from gangplan.solver.greedy.framework import Placement
    from gangplan.solver.greedy.state import RunState

VERIFY = False
"""Evaluate every counted placement in full as well and raise on any difference (tests)."""

STATIC_FILTERS = (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity)
"""Filters that read only the node object and the pod spec."""

COUNTABLE_PLACEMENT_SCORERS = (PlacementBinPacking, PodGroupPodsCount)
"""PlacementScore plugins that read the totals of the proposals, never their nodes (a counted
placement's proposals have none). Any other plugin in the profile turns counting off."""


class CountingMismatch(Exception):
    """A full evaluation disagreed with its count (a bug): the decision is re-run in full."""


@dataclass
class Counted:
    """The counted outcome of one placement (what the trace shows of a placement not kept)."""

    status: Code
    new: int
    reason: str | None
    x_before: int
    x_after: int
    rejectors: frozenset[str] = frozenset()
    """The plugins its failing pod's cycle reports (:meth:`CountingPlan.rejectors`)."""


class CountingPlan:
    """Per placement decision of one leaf group: node capacities for its pod, from the decision's
    base state (every evaluation is reverted, so they hold for all its placements), summed per
    placement."""

    def __init__(
        self,
        state: RunState,
        key: str,
        placements: list[Placement],
        pods: list[Pod],
        minimum: int,
        before: int,
        cs: CycleState,
        active: list,
        cache: bool = True,
    ) -> None:
        self.state = state
        self.key = key
        self.pods = pods
        self.minimum = minimum
        self.before = before
        self.cs = cs
        self.active = active
        snap = state.snap
        self.req = snap.request_vector(pods[0])
        self.static: dict[str, np.ndarray] = {}
        for pl in active:
            if not isinstance(pl, Fit):
                self.static[pl.name] = pl.filter_mask(cs, pods[0], snap, snap.all_nodes)
        self.in_subset = np.ones(snap.n, dtype=bool)
        if cs.node_subset is not None:
            self.in_subset[:] = False
            self.in_subset[
                np.fromiter(cs.node_subset, dtype=np.int64, count=len(cs.node_subset))
            ] = True
        self.passes = self._passes_static()
        self.capacity = np.where(
            self.passes,
            snap.node_array(("counting-capacity", snap.signature(pods[0])), self._room),
            0,
        )
        self.concat, self.sizes, self.starts = _geometry(snap, placements, cache)
        along = self.capacity[self.concat]  # the placements' nodes end to end
        self.room = (
            np.add.reduceat(along, self.starts)
            if len(along)
            else np.zeros(len(self.sizes), dtype=np.int64)
        )
        self.with_room = (
            np.add.reduceat((along > 0).view(np.int8).astype(np.int64), self.starts)
            if len(along)
            else self.room.copy()
        )
        self.scanned = (
            self._per_placement(self.in_subset) if cs.node_subset is not None else self.sizes
        )
        self._bits: tuple[list[str], np.ndarray] | None = None
        self._rows: dict[int, tuple[list[str], list[str], np.ndarray, bool]] = {}
        self._proposals: dict[int, list[tuple[Pod, int]]] = {}

    def proposals(self, new: int) -> list[tuple[Pod, int]]:
        """The proposals of a counted placement that places ``new`` pods: the first ``new`` pods,
        on no node (-1). One list per count, shared by the decision's records (nothing changes a
        record's proposals): a decision of a 10,000-node snapshot counts hundreds of feasible
        placements placing the same number of pods, and PlacementBinPacking sums each distinct
        list once."""
        got = self._proposals.get(new)
        if got is None:
            got = self._proposals[new] = [(p, -1) for p in self.pods[:new]]
        return got

    def _to_find(self, pct: int, n_scan: np.ndarray) -> np.ndarray:
        """:func:`num_feasible_nodes_to_find` per placement (0 where it scans nothing); for the
        placements' own sizes (no PreFilterResult) kept with their geometry."""
        if n_scan is not self.sizes:
            return _to_find_vector(pct, n_scan)
        snap = self.state.snap
        key = ("counting-to-find", id(n_scan), pct)
        hit = snap.placement_cache.get(key)
        if hit is None or hit[0] is not n_scan:
            hit = snap.placement_cache[key] = (n_scan, _to_find_vector(pct, n_scan))
        return hit[1]

    def _passes_static(self) -> np.ndarray:
        """The nodes every static filter passes and the PreFilterResult keeps."""
        if not self.static and self.cs.node_subset is None:
            return np.ones(self.state.snap.n, dtype=bool)
        ok = self.in_subset.copy()
        for m in self.static.values():
            ok &= m
        return ok

    def _room(self, nodes: np.ndarray) -> np.ndarray:
        """Per node, how many more copies of the pod NodeResourcesFit passes (node state only, so
        the node table keeps it per pod signature and recomputes only the nodes that changed)."""
        snap = self.state.snap
        cap = snap.allowed_pods[nodes] - snap.pod_count[nodes]
        for j in np.nonzero(self.req > 0)[0]:
            cap = np.minimum(cap, snap.free[nodes, j] // self.req[j])
        return np.maximum(cap, 0)

    def _per_placement(self, per_node: np.ndarray) -> np.ndarray:
        return np.add.reduceat(per_node[self.concat].astype(np.int64, copy=False), self.starts)

    # ---- building --------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        state: RunState,
        key: str,
        placements: list[Placement],
        leaf_inputs: Callable[[str], tuple[list[Pod], int, int]],
        *,
        cache: bool = True,
    ) -> CountingPlan | None:
        """The plan for group ``key``'s placement decision, or None when counting does not apply
        (``leaf_inputs``: the pod-group cycle's queued pods, minCount and scheduled pods).
        ``cache=False``: the placements are not the generator's cached objects (their geometry
        is not kept)."""
        sched, snap = state.sched, state.snap
        if (
            not placements
            or sched.tie_break != "first"
            or sched.tie_shift
            or not sched.profile.has_scoring
            or snap.nominated
        ):
            return None
        if not all(
            isinstance(pl, COUNTABLE_PLACEMENT_SCORERS) for pl, _ in sched.profile.placement_scorers
        ):
            return None
        if [type(pl) for pl in sched.profile.placement_feasible] != [GangScheduling]:
            return None  # count_outcome is GangScheduling's loop
        if not state.cluster.groups.is_leaf(key):
            return None
        pods, minimum, before = leaf_inputs(key)
        if not pods:
            return None
        fixed, observer = state.fixed, state.observer
        for p in pods:
            if (
                snap.nominated_node(p) is not None
                or p.key in fixed
                or (observer is not None and observer.watches(p))
                or p.node_name
            ):
                return None
        if len(pods) > 1:  # one pod is identical to itself
            first = _filter_key(pods[0], snap)
            if any(_filter_key(p, snap) != first for p in pods[1:]):
                return None
        cs = CycleState()
        if sched.pre_filter(cs, pods[0]) is not None:
            return None
        active = [pl for pl in sched.profile.filters if pl.name not in cs.skip_filter]
        if not any(isinstance(pl, Fit) for pl in active) or not all(
            isinstance(pl, (Fit, *STATIC_FILTERS)) for pl in active
        ):
            return None
        return cls(state, key, placements, pods, minimum, before, cs, active, cache)

    # ---- every placement at once --------------------------------------------------------------
    def evaluate_all(self) -> CountedBatch:
        """The counted outcomes of every placement of the decision, in generation order, as
        arrays (:class:`CountedBatch`), without a Python object or a FitError text per placement.
        The scan start is not advanced here: the decision does it placement by placement, as each
        placement's cycles would."""
        n_scan, room = self.scanned, self.room
        pct = self.state.sched.profile.percentage_of_nodes_to_score
        to_find = self._to_find(pct, n_scan)
        full = (n_scan > 0) & (to_find < n_scan) & (self.with_room >= to_find)
        queued, before, minimum = len(self.pods), self.before, self.minimum
        if queued + before < minimum:
            zero = np.zeros(len(room), dtype=np.int64)
            return CountedBatch(
                self, full, np.zeros(len(room), dtype=bool), zero, zero + before, zero
            )
        stop = np.maximum(room + 1, queued + before + room - minimum + 1)
        attempts = np.where(stop <= queued, stop, queued)
        placed = np.minimum(attempts, room)
        scheduled = before + placed
        success = (stop > queued) & (scheduled >= minimum)
        return CountedBatch(self, full, success, placed, scheduled, attempts)

    def reason(self, k: int, scheduled: int, placed: int, attempts: int) -> str:
        """The leaf reason of a failed counted placement ``k`` (its first failing pod's FitError)."""
        failures = (
            [PodResult(pod=self.pods[placed], fit_error=self._fit_error(k))]
            if attempts > placed
            else []
        )
        return leaf_reason(self.key, self.minimum, self.before, scheduled, len(self.pods), failures)

    def _fit_error(self, k: int) -> str:
        """The FitError of a pod once every node of placement ``k`` took its ``c_i`` copies, from
        the failure rows of that placement's nodes alone (the current node state)."""
        names, _, counts, alive = self._placement_rows(k)
        return _fit_error_text(
            self.key,
            [int(self.sizes[k])],
            [int(self.scanned[k])],
            self._absent(),
            (names, counts.reshape(len(names), 1), [alive]),
            0,
        )

    def _placement_rows(self, k: int) -> tuple[list[str], list[str], np.ndarray, bool]:
        """Placement ``k``'s failure rows summed over its nodes (reasons, their plugins, counts)
        and whether a node would still pass."""
        got = self._rows.get(k)
        if got is None:
            got = self._rows[k] = self._count_rows(k)
        return got

    def _count_rows(self, k: int) -> tuple[list[str], list[str], np.ndarray, bool]:
        """:meth:`failure_rows` of placement ``k``'s nodes, counted as it goes (no per-reason
        masks kept): the same reasons, plugins and counts in the same order."""
        at = int(self.starts[k])
        idx = self.concat[at : at + int(self.sizes[k])]
        fit_names, bits = self._fit_bits()
        snap, pod = self.state.snap, self.pods[0]
        alive = (
            self.in_subset[idx]
            if self.cs.node_subset is not None
            else np.ones(len(idx), dtype=bool)
        )
        names: list[str] = []
        plugins: list[str] = []
        counts: list[int] = []
        for pl in self.active:
            if isinstance(pl, Fit):
                b = np.where(alive, bits[idx], 0)
                for j, r in enumerate(fit_names):
                    names.append(r)
                    plugins.append(pl.name)
                    counts.append(int(np.count_nonzero(b & (1 << j))))
                alive &= b == 0
            else:
                sub = np.flatnonzero(alive & ~self.static[pl.name][idx])
                if len(sub):
                    masks, _ = pl.filter_reasons(self.cs, pod, snap, idx[sub])
                    for r, m in masks:
                        names.append(r)
                        plugins.append(pl.name)
                        counts.append(int(np.count_nonzero(m)))
                    alive[sub] = False
        return names, plugins, np.array(counts, dtype=np.int64), bool(alive.any())

    def rejectors(self, k: int, placed: int, attempts: int) -> set[str]:
        """The plugins the cycles of counted placement ``k`` report as rejecting (their
        ``UnschedulablePlugins``): those of its first failing pod's FitError, whose counts are
        the ones of :meth:`_fit_error`, and the PreFilterResult's plugins when it left nodes
        out (``PodScheduler._fail_filter``); none when no pod failed."""
        if attempts <= placed:
            return set()
        _, plugins, counts, _ = self._placement_rows(k)
        out = {pl for pl, c in zip(plugins, counts.tolist(), strict=True) if c}
        cs, snap = self.cs, self.state.snap
        if cs.node_subset is not None and snap.n - len(cs.node_subset):
            out.update(cs.subset_plugins)
        return out

    def _absent(self) -> str | None:
        return (
            absent_nodes_reason(self.cs.subset_plugins) if self.cs.node_subset is not None else None
        )

    def _fit_bits(self) -> tuple[list[str], np.ndarray]:
        """NodeResourcesFit's reasons on every node (the current node state) once each node holds
        its ``c_i`` copies, as one integer per node (bit ``j``: reason ``j``). The node table keeps
        them per pod signature with ``c_i`` its room and recomputes only the nodes that changed;
        the nodes a static filter or the PreFilterResult rejects (``c_i = 0``) are redone here."""
        if self._bits is None:
            snap = self.state.snap
            sig = snap.signature(self.pods[0])
            names = snap.placement_cache.get(("counting-fit-reasons", sig))
            if names is None:
                names = snap.placement_cache[("counting-fit-reasons", sig)] = [
                    r for r, _ in fit_failures(snap, self.req, snap.all_nodes[:0])[0]
                ]

            def compute(nodes: np.ndarray) -> np.ndarray:
                return _pack(fit_failures(snap, self.req, nodes, self._room(nodes))[0])

            bits = snap.node_array(("counting-fit-bits", sig), compute)
            redo = (
                np.flatnonzero(self.in_subset & ~self.passes)
                if self.static or self.cs.node_subset is not None
                else ()
            )
            if len(redo):
                bits = bits.copy()
                bits[redo] = _pack(fit_failures(snap, self.req, redo, 0)[0])
            self._bits = (names, bits)
        return self._bits

    def reason_texts(self) -> Callable[[int], str]:
        """:meth:`_fit_error` of every placement as a function: the part of the failure table
        that reads node state (:meth:`_fit_bits`) is copied now; the rest (the static filters'
        reasons, the counts per placement) is computed on its first call. It holds the plan's
        shared arrays, not its per-node state."""
        names, bits = self._fit_bits()
        small = np.uint8 if len(names) <= 8 else np.uint16 if len(names) <= 16 else np.int64
        table = _LazyTable(
            self, names, bits.astype(small)
        )  # a copy: the node table's array changes later
        return partial(
            _lazy_fit_error_text,
            self.key,
            self.sizes.tolist(),
            self.scanned.tolist(),
            self._absent(),
            table,
        )

    def failure_rows(
        self, idx: np.ndarray, fit: list[tuple[str, np.ndarray]]
    ) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
        """:func:`_failure_rows` of this plan's pod over the nodes ``idx``."""
        return _failure_rows(
            self.state.snap,
            self.pods[0],
            self.cs,
            self.active,
            self.static,
            self.in_subset,
            idx,
            fit,
        )


def _failure_rows(
    snap,
    pod: Pod,
    cs: CycleState,
    active: list,
    static: dict[str, np.ndarray],
    in_subset: np.ndarray,
    idx: np.ndarray,
    fit: list[tuple[str, np.ndarray]],
) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    """Over the nodes ``idx``, per reason (and the plugin reporting it) the mask of the nodes it
    is counted on once every node holds its ``c_i`` copies (each node counted by the first filter
    of ``active`` that rejects it, in profile order; a NodeResourcesFit node under each of its
    reasons), and the mask of the nodes that would still pass (none, by construction). ``fit``: NodeResourcesFit's reason masks
    over ``idx`` (:meth:`CountingPlan._fit_bits`); the static filters read node objects only."""
    every = idx is snap.all_nodes
    alive = in_subset.copy() if every else in_subset[idx]
    names: list[str] = []
    plugins: list[str] = []
    rows: list[np.ndarray] = []
    for pl in active:
        if isinstance(pl, Fit):
            fails = np.zeros(len(idx), dtype=bool)
            for r, m in fit:
                names.append(r)
                plugins.append(pl.name)
                rows.append(m & alive)
                fails |= m
            fails &= alive
        else:
            fails = alive & ~(static[pl.name] if every else static[pl.name][idx])
            sub = np.nonzero(fails)[0]
            if len(sub):
                masks, _ = pl.filter_reasons(cs, pod, snap, idx[sub])
                for r, m in masks:
                    full = np.zeros(len(idx), dtype=bool)
                    full[sub[m]] = True
                    names.append(r)
                    plugins.append(pl.name)
                    rows.append(full)
        alive &= ~fails
    return names, plugins, np.array(rows, dtype=np.int64).reshape(len(rows), len(idx)), alive


class _LazyTable:
    """The failure table of every placement of a decision (per reason and placement its count,
    per placement whether a node would still pass), built on first read from NodeResourcesFit's
    reasons packed at the decision's base state (:meth:`CountingPlan.reason_texts`); until then
    it holds the static parts of the plan (filters, their masks, the placement geometry)."""

    def __init__(self, plan: CountingPlan, names: list[str], bits: np.ndarray) -> None:
        snap = plan.state.snap
        self._parts: tuple | None = (
            snap,
            plan.pods[0],
            plan.cs,
            plan.active,
            plan.static,
            plan.in_subset,
            plan.concat,
            plan.starts,
            names,
            bits,
        )
        self._table: tuple[list[str], np.ndarray, np.ndarray] | None = None

    def get(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        if self._table is None:
            assert self._parts is not None
            snap, pod, cs, active, static, in_subset, concat, starts, fit_names, bits = self._parts
            names, _, rows, alive = _failure_rows(
                snap, pod, cs, active, static, in_subset, snap.all_nodes, _unpack(fit_names, bits)
            )
            counts = (
                np.add.reduceat(rows[:, concat], starts, axis=1)
                if len(rows)
                else np.zeros((0, len(starts)), dtype=np.int64)
            )
            self._table = (
                names,
                counts,
                np.add.reduceat(alive[concat].astype(np.int64), starts) > 0,
            )
            self._parts = None
        return self._table


def _pack(masks: list[tuple[str, np.ndarray]]) -> np.ndarray:
    """Reason masks as one integer per node (bit ``j``: the ``j``-th reason)."""
    out = np.zeros(len(masks[0][1]) if masks else 0, dtype=np.int64)
    for j, (_, m) in enumerate(masks):
        out |= m.astype(np.int64) << j
    return out


def _unpack(names: list[str], bits: np.ndarray) -> list[tuple[str, np.ndarray]]:
    return [(r, (bits & (1 << j)) != 0) for j, r in enumerate(names)]


def _lazy_fit_error_text(
    key: str, sizes: list[int], scanned: list[int], absent: str | None, table: _LazyTable, k: int
) -> str:
    return _fit_error_text(key, sizes, scanned, absent, table.get(), k)


def _geometry(
    snap, placements: list[Placement], cache: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The placements' nodes end to end, their sizes and start offsets; kept in the node table's
    placement cache, since a group's placements are the cached objects of
    :func:`~gangplan.solver.greedy.plugins.topologyaware.placements_of` decision after decision."""
    first, last = placements[0], placements[-1]
    key = ("counting-geometry", id(first), id(last), len(placements))
    hit = snap.placement_cache.get(key) if cache else None
    if hit is not None and hit[0] is first and hit[1] is last:
        return hit[2]
    concat = np.concatenate([p.nodes for p in placements])
    sizes = np.array([len(p.nodes) for p in placements], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    if cache:
        snap.placement_cache[key] = (first, last, (concat, sizes, starts))
    return concat, sizes, starts


def _fit_error_text(
    key: str,
    sizes: list[int],
    scanned: list[int],
    absent: str | None,
    table: tuple[list[str], np.ndarray, np.ndarray],
    k: int,
) -> str:
    names, counts, alive = table
    if alive[k]:
        raise CountingMismatch(
            f"{key}: a node of placement #{k} still fits after its counted copies"
        )
    hist = Counter()
    for r, n in zip(names, counts[:, k].tolist(), strict=True):
        hist[r] += n
    n_pl, n_scan = sizes[k], scanned[k]
    if absent is not None and n_pl > n_scan:
        hist[absent] += n_pl - n_scan
    return fit_error_text(n_pl, hist)


class CountedBatch:
    """The counted outcomes of one decision's placements (:meth:`CountingPlan.evaluate_all`):
    per placement whether it must be evaluated in full (``full``: sampling could stop a scan
    early), whether its pods reach minCount (``success``), and the pods it places, schedules and
    attempts. Failed placements keep no object: their reason (a FitError text) is built only when
    a trace or the decision reads it (:meth:`entry`), from the failure table of the decision's base
    state, which :meth:`freeze` computes while that state holds."""

    def __init__(
        self,
        plan: CountingPlan,
        full: np.ndarray,
        success: np.ndarray,
        placed: np.ndarray,
        scheduled: np.ndarray,
        attempts: np.ndarray,
    ) -> None:
        self.plan = plan
        self.full = full.tolist()
        self.success = success.tolist()
        self.placed = placed.tolist()
        self.scheduled = scheduled.tolist()
        self.attempts = attempts.tolist()
        self.advance = np.where(plan.scanned > 0, attempts * plan.scanned, 0)
        """Per placement the nodes its cycles scan in all (each attempted pod scans its scanned nodes)."""
        self.sizes = plan.sizes.tolist()
        self.scan = plan.scanned.tolist()
        self._frozen: tuple | None = None

    def counted(self, k: int, x_before: int, x_after: int) -> Counted:
        """Placement ``k``'s counted outcome, its cycles run from scan start ``x_before``."""
        assert self.plan is not None, "a record is counted before the batch is frozen"
        rejectors = frozenset(self.plan.rejectors(k, self.placed[k], self.attempts[k]))
        if self.success[k]:
            return Counted(Code.SUCCESS, self.placed[k], None, x_before, x_after, rejectors)
        return Counted(Code.UNSCHEDULABLE, 0, self.reason(k), x_before, x_after, rejectors)

    def reason(self, k: int) -> str:
        if self.plan is not None:
            return self.plan.reason(k, self.scheduled[k], self.placed[k], self.attempts[k])
        assert self._frozen is not None
        key, minimum, before, pods, fit_error = self._frozen
        placed, attempts = self.placed[k], self.attempts[k]
        failures = (
            [PodResult(pod=pods[placed], fit_error=fit_error(k))] if attempts > placed else []
        )
        return leaf_reason(key, minimum, before, self.scheduled[k], len(pods), failures)

    def freeze(self) -> None:
        """Compute the failure table now, while the node state is the decision's base state
        (every evaluation is reverted), so that reasons read later are those of that state;
        then keep only what the reasons need (not the plan's per-node arrays)."""
        plan = self.plan
        if plan is None:
            return
        texts = plan.reason_texts() if not all(self.success) else None
        self._frozen = (plan.key, plan.minimum, plan.before, plan.pods, texts)
        self.plan = None


def _to_find_vector(pct: int, n_scan: np.ndarray) -> np.ndarray:
    """:func:`num_feasible_nodes_to_find` per placement, once per distinct size."""
    if len(n_scan) < 64:
        return np.array(
            [num_feasible_nodes_to_find(pct, int(v)) if v else 0 for v in n_scan.tolist()],
            dtype=np.int64,
        )
    sizes, inverse = np.unique(n_scan, return_inverse=True)
    return np.array(
        [num_feasible_nodes_to_find(pct, int(v)) if v else 0 for v in sizes.tolist()],
        dtype=np.int64,
    )[inverse]


def count_outcome(queued: int, before: int, minimum: int, room: int) -> tuple[Code, int, int, int]:
    """The PlacementFeasible loop (:func:`gangplan.solver.greedy.podgroup.until_feasible`) for
    ``queued`` identical pods of which the first ``room`` succeed: (status, scheduled, newly
    placed, pods attempted). ``tests/test_placement_counting.py`` checks it against the loop."""
    if queued + before < minimum:
        return Code.UNSCHEDULABLE, before, 0, 0
    stop = max(
        room + 1, queued + before + room - minimum + 1
    )  # the first attempt after which minimum is out of reach
    attempts = stop if stop <= queued else queued
    placed = min(attempts, room)
    scheduled = before + placed
    if stop <= queued or scheduled < minimum:
        return Code.UNSCHEDULABLE, scheduled, placed, attempts
    return Code.SUCCESS, scheduled, placed, attempts


def _filter_key(pod: Pod, snap) -> tuple:
    """What Filter reads of a pod (two pods with equal keys pass and fail the same nodes); kept
    per pod object in the node table's placement cache (a gang retried after each bind event
    asks again for the same pods, and the ``repr`` of its affinity is the costly part)."""
    cache_key = ("filter-key", id(pod))
    hit = snap.placement_cache.get(cache_key)
    if hit is not None and hit[0] is pod:
        return hit[1]
    key = (
        snap.signature(pod),
        pod.namespace,
        tuple(sorted(pod.labels.items())),
        tuple(sorted(pod.node_selector.items())),
        repr(pod.affinity),
        pod.tolerations,
        pod.host_ports,
        repr(pod.topology_spread),
        pod.node_name,
    )
    snap.placement_cache[cache_key] = (pod, key)
    return key
