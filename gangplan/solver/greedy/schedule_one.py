"""One pod's scheduling cycle: PreFilter, Filter, PreScore, Score, NormalizeScore, select host.

Mirrors ``schedulePod`` / ``findNodesThatFitPod`` / ``findNodesThatPassFilters`` /
``prioritizeNodes`` / ``selectHost`` of ``pkg/scheduler/schedule_one.go`` (kubernetes/kubernetes
@003b4460) and ``RunScorePlugins`` of ``framework/runtime/framework.go`` (@002774c3):

1. PreFilter every filter plugin (Skip drops that plugin's Filter for this pod; a
   PreFilterResult node set limits the scan to those nodes, the others are reported as "node(s)
   didn't satisfy plugin(s) [...]").
2. A pod with ``status.nominatedNodeName`` tries that node alone first; if it passes, it is chosen
   without scoring.
3. Filter nodes in node-tree order from ``nextStartNodeIndex``, stopping once
   ``numFeasibleNodesToFind`` nodes passed (``percentageOfNodesToScore``: all nodes below 100,
   else ``max(100, N * p / 100)`` with the adaptive ``p = max(5, 50 - N / 125)`` when unset); the
   start index then advances by the nodes processed. Upstream filters 16 nodes in parallel, so
   which nodes past the stop point were processed varies; here the scan is sequential. A node
   holding pending pods nominated to it with priority >= this pod's must pass Filter both with
   and without them (``RunFilterPluginsWithNominatedPods``).
4. No feasible node: a FitError. One feasible node: chosen without scoring.
5. PreScore (Skip drops the plugin's Score), Score, NormalizeScore, range check [0, 100], times
   the weight, summed. The highest total wins; ties go to the lowest snapshot position
   (``tie_break="first"``) or a seeded uniform choice (``"random"``): upstream's heap order over
   parallel filter output is effectively arbitrary.

Inside a TAS placement (:attr:`PodScheduler.placement`, set by the placement algorithm) the pod
sees only the placement's nodes, as with ``ListNodesInPlacement`` / ``GetNodeInPlacement`` in the
placement-aware ``pkg/scheduler/schedule_one.go`` (@4a37f009): the scan, the PreFilterResult subset
and the nominated node are restricted to it (a nominated node outside it is skipped, not an
error), the FitError counts "0/N nodes" over the placement, and ``nextStartNodeIndex`` wraps at
its size. ``numFeasibleNodesToFind`` is computed from the placement's node count; that version
reads a precomputed ``sched.numNodesToFind`` whose source was not read, which only matters for
placements of more than 100 nodes with sampling on.

Opportunistic batching (KEP-5598) is not reproduced: it reuses the previous identical pod's sorted
node list when that pod's node filled up, which picks the same node a full cycle would except for
sampled windows (N >= 100) and normalisation changes.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from gangplan.models.objects import Pod
from gangplan.models.trace import ScoredNode
from gangplan.solver.greedy.framework import (
    MAX_NODE_SCORE,
    Code,
    CycleState,
    Diagnosis,
    Status,
    absent_nodes_reason,
    fit_error_message,
    fit_error_text,
)
from gangplan.solver.greedy.plugins.base import NORMALIZE_SCORE
from gangplan.solver.greedy.profile import Profile
from gangplan.solver.greedy.snapshot import NodeTable

_umax = np.maximum.reduce

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
MAX_TIE_SET = 100
"""The trace lists at most this many tied nodes (lowest snapshot positions); ``tieCount`` has all."""


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """``numFeasibleNodesToFind``: how many feasible nodes the filter scan looks for.

    >>> num_feasible_nodes_to_find(0, 5000), num_feasible_nodes_to_find(0, 50), num_feasible_nodes_to_find(30, 1000)
    (500, 50, 300)
    """
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass
class PodResult:
    """What one pod's cycle decided, and the evidence the trace shows."""

    pod: Pod
    node: int | None = None
    status: Status = field(default_factory=Status)
    feasible: int = 0
    evaluated: int = 0
    fit_error: str | None = None
    rejections: dict[str, Counter] = field(default_factory=dict)
    top: list[ScoredNode] = field(default_factory=list)
    tie_set: list[int] = field(default_factory=list)
    tie_count: int = 0
    statuses_fn: Callable[[], dict[int, Status]] | None = field(default=None, repr=False)
    """Builds :attr:`node_statuses` (a Filter failure computes them only when asked: FitError text
    and rejection tables come from vectorised reason counts)."""
    _statuses: dict[int, Status] | None = field(default=None, repr=False)
    resolvable: np.ndarray | None = field(default=None, repr=False)
    """A Filter failure: the failing nodes whose status is Unschedulable (not
    UnschedulableAndUnresolvable), in index order, from the same vectorised reasons as the
    FitError; default preemption's ``nodesWherePreemptionMightHelp`` without a status per node."""

    @property
    def node_statuses(self) -> dict[int, Status]:
        """Node -> failing Filter status (a Filter failure only). Computed on first access from
        the node state of the cycle: read it before the node table changes (default preemption
        does, right after the pod's cycle)."""
        if self._statuses is None:
            self._statuses = self.statuses_fn() if self.statuses_fn is not None else {}
            self.statuses_fn = None
        return self._statuses


class PodScheduler:
    """Runs the per-pod cycle against a :class:`NodeTable` (which the caller mutates)."""

    def __init__(
        self,
        snap: NodeTable,
        profile: Profile,
        *,
        tie_break: str = "first",
        seed: int = 0,
        top_k: int = 5,
    ) -> None:
        if tie_break not in ("first", "random"):
            raise ValueError(f"tie_break must be 'first' or 'random', got {tie_break!r}")
        self.snap = snap
        self.profile = profile
        self.tie_break = tie_break
        self.rng = random.Random(seed)
        self.seed = seed
        self.top_k = top_k
        self.placement: np.ndarray | None = None
        """Node positions of the placement being evaluated (TAS; ``ListNodesInPlacement``),
        or None for every node. The placement algorithm (``PlacementAlgorithm.schedule_placements``) sets it
        around the pod-group algorithm."""
        self._scan_cache: tuple[np.ndarray, np.ndarray] | None = None
        self.placement_name: str | None = None
        """``key=value`` of :attr:`placement` (for traces and explanations)."""
        self.tie_shift = 0
        """With ``first`` ties: take the tied node ``tie_shift`` places after the lowest (cyclically),
        the tie alternative a v1.36 tie retry tries (:mod:`.scheduling_queue`, rule R); 0 otherwise."""
        self.tied = False
        """Set when a choice had more than one best candidate (a pod's node or a group's placement)
        since the caller last cleared it."""

    # ---- the cycle ---------------------------------------------------------------------------
    def schedule(self, pod: Pod) -> PodResult:
        try:
            return self._schedule(pod)
        finally:
            self.snap.clear_nomination(pod)

    def _schedule(self, pod: Pod) -> PodResult:
        res = PodResult(pod=pod)
        cs = CycleState()
        pre = self.pre_filter(cs, pod)
        if pre is not None:
            return self._fail_pre_filter(res, pre)
        if self._try_nominated(cs, pod, res):
            return res
        feasible, failed_by = self._find_feasible(cs, pod, res)
        if len(feasible) == 0:
            return self._fail_filter(res, cs, pod, failed_by)
        if len(feasible) == 1:
            res.node = int(feasible[0])
            res.tie_set, res.tie_count = [res.node], 1
            return res
        totals, parts = self.prioritize(cs, pod, feasible)
        if isinstance(totals, Status):
            res.status = totals
            return res
        self._select_host(res, feasible, totals, parts)
        return res

    def pre_filter(self, cs: CycleState, pod: Pod) -> Status | None:
        """PreFilter of every filter plugin into ``cs``: the first failing status, or None."""
        for pl in self.profile.filters:
            st = pl.pre_filter(cs, pod, self.snap)
            if st.code == Code.SKIP:
                cs.skip_filter.add(pl.name)
            elif not st.ok:
                return st.with_plugin(pl.name)
        return None

    def _try_nominated(self, cs: CycleState, pod: Pod, res: PodResult) -> bool:
        i = self.snap.nominated_node(pod)
        if i is None or (self.placement is not None and not (self.placement == i).any()):
            return False  # upstream looks the node up with GetNodeInPlacement
        idx = np.array([i], dtype=np.int64)
        ok, _ = self.run_filters(cs, pod, idx)
        if not ok[0]:
            return False
        res.node, res.feasible, res.evaluated, res.tie_set, res.tie_count = i, 1, 1, [i], 1
        return True

    def run_filters(
        self, cs: CycleState, pod: Pod, idx: np.ndarray
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Pass mask over ``idx`` and, per plugin, the nodes it rejected first (plugin order).

        A node that holds nominated pods of priority >= ``pod``'s must pass with them as well
        (:meth:`_with_nominated`); its failing status is kept in ``cs.nominated_statuses``."""
        alive = np.ones(len(idx), dtype=bool)
        failed_by: dict[str, list[np.ndarray]] = {}
        for pl in self.profile.filters:
            if pl.name in cs.skip_filter:
                continue
            pos = np.nonzero(alive)[0]
            if len(pos) == 0:
                break
            passed = pl.filter_mask(cs, pod, self.snap, idx[pos])
            if not passed.all():
                failed_by[pl.name] = [idx[pos[~passed]]]
                alive[pos[~passed]] = False
        for k in self._nominated_positions(pod, idx, alive):
            st = self._with_nominated(pod, int(idx[k]))
            if not st.ok:
                alive[k] = False
                cs.nominated_statuses[int(idx[k])] = st
                failed_by.setdefault(st.plugin, []).append(idx[k : k + 1])
        return alive, {name: np.concatenate(parts) for name, parts in failed_by.items()}

    def _nominated_positions(self, pod: Pod, idx: np.ndarray, alive: np.ndarray) -> list[int]:
        if not self.snap.nominated:
            return []
        nodes = {
            i
            for i, pods in self.snap.nominated.items()
            if any(k != pod.key and p.priority >= pod.priority for k, p in pods.items())
        }
        return [k for k in np.nonzero(alive)[0].tolist() if int(idx[k]) in nodes]

    def _with_nominated(self, pod: Pod, i: int) -> Status:
        """``RunFilterPluginsWithNominatedPods``' first pass: the node's nominated pods of priority
        >= ``pod``'s are added (to the node and to every plugin's PreFilter state, here by
        assuming them and re-running PreFilter), and all filters must still pass."""
        added = [
            p
            for k, p in self.snap.nominated[i].items()
            if k != pod.key and p.priority >= pod.priority
        ]
        for p in added:
            self.snap.assume(p, i)
        try:
            cs = CycleState()
            pre = self.pre_filter(cs, pod)
            if pre is not None:
                return pre
            for pl in self.profile.filters:
                if pl.name not in cs.skip_filter:
                    st = pl.filter_one(cs, pod, self.snap, i)
                    if not st.ok:
                        return st
            return Status()
        finally:
            for p in added:
                self.snap.forget(p)

    def _find_feasible(
        self, cs: CycleState, pod: Pod, res: PodResult
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        snap = self.snap
        scan = snap.scan_order
        if self.placement is not None:
            scan = self._placement_scan()
        if (
            cs.node_subset is not None
        ):  # PreFilterResult: only these nodes (Go map order; ours: scan order)
            scan = scan[
                np.isin(
                    scan, np.fromiter(cs.node_subset, dtype=np.int64, count=len(cs.node_subset))
                )
            ]
        n = len(scan)
        if n == 0:
            return np.zeros(0, dtype=np.int64), {}
        to_find = num_feasible_nodes_to_find(self.profile.percentage_of_nodes_to_score, n)
        if not self.profile.has_scoring:
            to_find = 1
        start = snap.next_start_node_index % n
        order = np.concatenate([scan[start:], scan[:start]])
        ok, failed_by = self.run_filters(cs, pod, order)
        processed = n
        if to_find < n:
            hits = np.nonzero(ok)[0]
            if len(hits) >= to_find:
                processed = int(hits[to_find - 1]) + 1
        if processed < n:
            failed_by = {k: v[np.isin(v, order[:processed])] for k, v in failed_by.items()}
        feasible = order[:processed][ok[:processed]]
        snap.next_start_node_index = (
            snap.next_start_node_index + processed
        ) % self._num_all_nodes()
        res.evaluated = processed
        res.feasible = len(feasible)
        return feasible, failed_by

    def _placement_scan(self) -> np.ndarray:
        """The scan order restricted to :attr:`placement`, cached while the placement object
        stays the same (every pod of a group is tried in one placement in a row)."""
        cached = self._scan_cache
        if cached is None or cached[0] is not self.placement:
            scan = self.snap.scan_order
            cached = (self.placement, scan[np.isin(scan, self.placement)])
            self._scan_cache = cached
        return cached[1]

    # ---- failures ----------------------------------------------------------------------------
    def node_statuses(
        self, cs: CycleState, pod: Pod, failed_by: dict[str, np.ndarray]
    ) -> dict[int, Status]:
        by_name = {pl.name: pl for pl in self.profile.filters}
        out: dict[int, Status] = {}
        for name, nodes in failed_by.items():
            for i in nodes.tolist():
                out[i] = cs.nominated_statuses.get(i) or by_name[name].filter_one(
                    cs, pod, self.snap, i
                )
        return out

    def _fail_filter(self, res: PodResult, cs: CycleState, pod: Pod, failed_by) -> PodResult:
        """FitError, rejection table and code from the reasons of the failing nodes, counted per
        plugin (``filter_reasons``) instead of one status per node; the per-node statuses are
        built only when read (:attr:`PodResult.node_statuses`)."""
        res.statuses_fn = lambda: self.node_statuses(cs, pod, failed_by)
        rejections, failing, unresolvable, res.resolvable = self.reason_counts(cs, pod, failed_by)
        res.rejections = rejections
        hist: Counter = Counter()
        for c in rejections.values():
            hist.update(c)
        num_all = self._num_all_nodes()
        if cs.node_subset is not None:
            reason = absent_nodes_reason(cs.subset_plugins)
            absent = num_all - failing
            if absent > 0:
                hist[reason] += absent
            missing = self.snap.n - len(cs.node_subset)
            for name in sorted(set(cs.subset_plugins)):
                if missing:
                    res.rejections.setdefault(name, Counter())[reason] += missing
        res.fit_error = fit_error_text(num_all, hist)
        code = (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            if failing and unresolvable == failing
            else Code.UNSCHEDULABLE
        )
        res.status = Status(code, (res.fit_error,))
        return res

    def reason_counts(
        self, cs: CycleState, pod: Pod, failed_by: dict[str, np.ndarray]
    ) -> tuple[dict[str, Counter], int, int, np.ndarray]:
        """Per plugin the count of each reason over the nodes it rejected (the nodes that failed
        only with their nominated pods count under their own status), the number of failing
        nodes, how many of them are UnschedulableAndUnresolvable, and the others (sorted)."""
        by_name = {pl.name: pl for pl in self.profile.filters}
        out: dict[str, Counter] = {}
        failing = unresolvable = 0
        resolvable: list[np.ndarray] = []
        for name, nodes in failed_by.items():
            if cs.nominated_statuses:
                nominated = np.fromiter(
                    (int(i) in cs.nominated_statuses for i in nodes), dtype=bool, count=len(nodes)
                )
                for i in nodes[nominated].tolist():
                    st = cs.nominated_statuses[i]
                    c = out.setdefault(st.plugin, Counter())
                    for r in st.reasons:
                        c[r] += 1
                    failing += 1
                    unresolvable += st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
                    if st.code == Code.UNSCHEDULABLE:
                        resolvable.append(np.array([i], dtype=np.int64))
                nodes = nodes[~nominated]
            if len(nodes) == 0:
                continue
            masks, unres = by_name[name].filter_reasons(cs, pod, self.snap, nodes)
            c = out.setdefault(name, Counter())
            for r, m in masks:
                k = int(np.count_nonzero(m))
                if k:
                    c[r] += k
            failing += len(nodes)
            unresolvable += int(np.count_nonzero(unres))
            resolvable.append(np.asarray(nodes, dtype=np.int64)[~np.asarray(unres, dtype=bool)])
        nodes_ok = (
            np.sort(np.concatenate(resolvable)) if resolvable else np.zeros(0, dtype=np.int64)
        )
        return {k: v for k, v in out.items() if v}, failing, unresolvable, nodes_ok

    def _num_all_nodes(self) -> int:
        """The "0/N nodes" of a FitError: the nodes of the placement under evaluation
        (``ListNodesInPlacement``), or every node."""
        return self.snap.n if self.placement is None else len(self.placement)

    def _fail_pre_filter(self, res: PodResult, st: Status) -> PodResult:
        diag = Diagnosis(pre_filter_msg=st.message())
        res.fit_error = fit_error_message(self._num_all_nodes(), diag)
        res.rejections = {st.plugin: Counter({st.message(): self._num_all_nodes()})}
        res.status = Status(st.code, (res.fit_error,), st.plugin)
        return res

    # ---- scoring -----------------------------------------------------------------------------
    def prioritize(
        self, cs: CycleState, pod: Pod, feasible: np.ndarray
    ) -> tuple[np.ndarray | Status, dict[str, np.ndarray]]:
        """Weighted totals over ``feasible`` and the weighted score of each plugin."""
        if not self.profile.has_scoring:
            return np.ones(len(feasible), dtype=np.int64), {}
        active = []
        for pl, w in self.profile.scorers:
            st = pl.pre_score(cs, pod, self.snap, feasible)
            if st.code == Code.SKIP:
                continue
            if not st.ok:
                return st.with_plugin(pl.name), {}
            active.append((pl, w))
        raws = []
        for pl, _ in active:
            raw = pl.score(cs, pod, self.snap, feasible)
            if NORMALIZE_SCORE in pl.points:
                raw = pl.normalize(cs, pod, self.snap, feasible, raw)
            if not isinstance(raw, np.ndarray) or raw.dtype != np.int64:
                raw = np.asarray(raw, dtype=np.int64)
            raws.append(raw)
        # Upstream checks every plugin's scores after NormalizeScore: one pass over all of them
        # (negatives wrap past 100 as uint64), the first plugin out of range named on failure.
        if (
            len(feasible)
            and raws
            and _umax((np.concatenate(raws) if len(raws) > 1 else raws[0]).view(np.uint64))
            > MAX_NODE_SCORE
        ):
            for (pl, _), raw in zip(active, raws, strict=True):
                if _umax(raw.view(np.uint64)) > MAX_NODE_SCORE:
                    msg = f"plugin {pl.name!r} returns an invalid score {int(raw.max() if raw.max() > MAX_NODE_SCORE else raw.min())}, it should in the range of [0, {MAX_NODE_SCORE}] after normalizing"
                    return Status(Code.ERROR, (msg,), pl.name), {}
        totals = np.zeros(len(feasible), dtype=np.int64)
        parts: dict[str, np.ndarray] = {}
        for (pl, w), raw in zip(active, raws, strict=True):
            weighted = raw * w
            parts[pl.name] = weighted
            totals += weighted
        return totals, parts

    def _select_host(
        self, res: PodResult, feasible: np.ndarray, totals: np.ndarray, parts: dict[str, np.ndarray]
    ) -> None:
        best = int(totals.max())
        ties = feasible[totals == best]
        res.tie_count = len(ties)
        if len(ties) > 1:
            self.tied = True
        if self.tie_break == "first" and self.tie_shift and len(ties) > 1:
            res.node = int(np.sort(ties)[self.tie_shift % len(ties)])
        elif self.tie_break == "first" or len(ties) == 1:
            res.node = int(ties.min())
        else:
            k = self.rng.randrange(len(ties))
            res.node = int(np.partition(ties, k)[k])  # the k-th lowest position: order-independent
        head = (
            np.partition(ties, MAX_TIE_SET - 1)[:MAX_TIE_SET] if len(ties) > MAX_TIE_SET else ties
        )
        res.tie_set = np.sort(head).tolist()
        if self.top_k > 0:
            k = min(self.top_k, len(feasible))
            order = np.lexsort((feasible, -totals))[:k]
            res.top = [
                ScoredNode(
                    self.snap.names[int(feasible[j])],
                    int(totals[j]),
                    {name: int(v[j]) for name, v in parts.items()},
                )
                for j in order
            ]

    def explain(self, pod: Pod, nodes: list[int]) -> dict[int, dict]:
        """Feasibility, reason and scores of ``nodes`` for ``pod`` against the current state, with
        scores normalised over every feasible node (the set a full, unsampled scan would score)."""
        cs = CycleState()
        pre = self.pre_filter(cs, pod)
        if pre is not None:
            return {
                i: {"feasible": False, "reason": pre.message(), "scores": {}, "total": 0}
                for i in nodes
            }
        all_idx = np.arange(self.snap.n, dtype=np.int64)
        ok, failed_by = self.run_filters(cs, pod, all_idx)
        statuses = self.node_statuses(cs, pod, failed_by)
        if self.placement is not None:
            outside = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                (f"node is outside the placement under evaluation ({self.placement_name})",),
            )
            for i in np.setdiff1d(all_idx, self.placement).tolist():
                ok[i] = False
                statuses[i] = outside
        if cs.node_subset is not None:
            absent = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (absent_nodes_reason(cs.subset_plugins),)
            )
            for i in range(self.snap.n):
                if i not in cs.node_subset:
                    ok[i] = False
                    statuses[i] = absent
        feasible = all_idx[ok]
        totals, parts = (
            self.prioritize(cs, pod, feasible)
            if len(feasible)
            else (np.zeros(0, dtype=np.int64), {})
        )
        if isinstance(totals, Status):
            totals, parts = np.zeros(len(feasible), dtype=np.int64), {}
        where = {int(i): j for j, i in enumerate(feasible)}
        out: dict[int, dict] = {}
        for i in nodes:
            if i in where:
                j = where[i]
                out[i] = {
                    "feasible": True,
                    "reason": None,
                    "scores": {k: int(v[j]) for k, v in parts.items()},
                    "total": int(totals[j]),
                }
            else:
                st = statuses.get(i)
                out[i] = {
                    "feasible": False,
                    "reason": st.message() if st else None,
                    "scores": {},
                    "total": 0,
                }
        return out


def pod_failure(r: PodResult) -> str:
    """A failed pod cycle's reason: its FitError text, else its status."""
    return r.fit_error or r.status.message() or r.status.code.label


def leaf_reason(
    key: str, minimum: int, before: int, scheduled: int, queued: int, failures: list[PodResult]
) -> str:
    """Why a leaf PodGroup's cycle did not reach minCount (the pod-group cycle and the counted
    placement outcomes of :mod:`.placement_fast` give the same text)."""
    head = (
        f"PodGroup {key}: minCount {minimum} not reached ({scheduled} of {minimum} pods schedulable"
    )
    head += f", {before} already bound)" if before else ")"
    if queued + before < minimum:
        return f"PodGroup {key}: only {queued + before} pods for minCount {minimum}"
    if failures:
        first = failures[0]
        return f"{head}; {first.pod.key}: {pod_failure(first)}"
    return head
