"""The greedy engine: a faithful Python reproduction of kube-scheduler's workload (PodGroup)
scheduling cycle (KEP-4671), per-pod Filter / Score included.

Layout, following ``pkg/scheduler``: :mod:`.framework` (status codes, cycle state, FitError),
:mod:`.plugins` (one module per upstream plugin), :mod:`.profile` (default plugins and weights),
:mod:`.snapshot` (the node state as numpy arrays), :mod:`.schedule_one` (one pod's cycle),
:mod:`.queue` (entity and member order), :mod:`.podgroup` (the pod-group cycle),
:mod:`.placement_cycle` and :mod:`.placement` (KEP-5732 topology placements: generation,
evaluation, PlacementBinPacking / PodGroupPodsCount scoring), :mod:`.placement_fast` (placements
of identical node-local gangs counted instead of evaluated, with the same outcome).

``Result.trace`` (JSON, deterministic)::

    {"order": [pod keys in the order their cycles ran],
     "entities": [queue entities in order: root group keys, "pod:<key>" for single pods],
     "pods": {pod: {"feasibleNodes", "evaluatedNodes",
                    "rejections": {plugin: {reason: nodes}},
                    "top": [{"node", "total", "scores": {plugin: weighted score}}],  # top_k best
                    "chosen": node | null, "kept": placement survived its group,
                    "tieSet": [nodes with the best total, lowest positions, at most 100],
                    "tieCount": int, "fitError": FitError text | null}},
     "groups": {group: {"progression": [PlacementFeasible after each pod (child for a CPG)],
                        "status": "Success" | "Unschedulable" | "Error", "reason": str | null,
                        # only for groups with schedulingConstraints.topology (KEP-5732):
                        "placements": {"key": label key, "parent": "key=value" | null,
                                       "generated": int, "nominated": value | null,
                                       "evaluated": [{"name": label value, "nodes": int,
                                                      "status", "reason", "assigned": int,
                                                      "scores": {"PlacementBinPacking",
                                                                 "PodGroupPodsCount"}: weighted,
                                                      "total": int | null}],
                                       "scored": bool, "tieCount": int,
                                       "chosen": value | null}}}}

With ``solve_greedy(..., preemption=True)`` the trace also has ``"preemption": {entity: ...}``
(see :mod:`.preemption`) and ``params`` has ``"preemption": true``; without it neither key exists.

For a topology-constrained group each pod is tried once per placement; ``order`` and ``pods`` keep
only the cycles of the chosen placement (of the reported, first-evaluated one when none was
feasible), and ``progression`` is that placement's.

A pod chosen as the only feasible node (or its nominated node) has an empty ``top``: upstream
does not score it either.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Literal

from gangplan.models.cluster import Cluster
from gangplan.models.objects import Pod
from gangplan.models.result import Result, Status
from gangplan.models.trace import GreedyTrace, PlacementDecision, PodCycle
from gangplan.models.version import KubeVersion
from gangplan.solver.greedy.podgroup import WorkloadCycle
from gangplan.solver.greedy.profile import build_profile
from gangplan.solver.greedy.queue import entities
from gangplan.solver.greedy.schedule_one import PodResult, PodScheduler
from gangplan.solver.greedy.snapshot import NodeTable
from gangplan.solver.greedy.state import RunObserver, RunState
from gangplan.solver.outcome import build_result

ENGINE = "greedy"

__all__ = ["ENGINE", "placement_decision", "placement_evidence", "placement_scores_at_step", "pod_scores_at_step", "replay_options", "run_cycle", "solve_greedy"]


def run_cycle(cluster: Cluster, *, tie_break: str = "first", seed: int = 0, top_k: int = 5, fixed: Mapping[str, str] | None = None, preemption: bool | None = None, observer: RunObserver | None = None, kube_version: KubeVersion | str | None = None, requeue: bool = True) -> WorkloadCycle:
    """Run every queue entity once; the returned cycle's state holds placements, reasons and the
    trace. ``observer`` (a replay) is called before every pod cycle and may stop the run there
    (:class:`~gangplan.solver.greedy.state.RunObserver`). ``kube_version``: reproduce that
    version's kube-scheduler (default: the cluster's, :attr:`Cluster.kube_version`).
    ``requeue=False`` makes one pass over the queue without retries (for benchmarks)."""
    cluster = cluster.at_version(kube_version)
    preemption, _ = cluster.profile.resolve_preemption(preemption)
    snap = NodeTable(cluster)
    sched = PodScheduler(snap, build_profile(cluster), tie_break=tie_break, seed=seed, top_k=top_k)
    cycle = WorkloadCycle(RunState.start(cluster, snap, sched, fixed=dict(fixed or {}), preemption=preemption, observer=observer))
    cycle.run(entities(cluster), requeue=requeue)
    return cycle


def solve_greedy(cluster: Cluster, *, tie_break: str = "first", seed: int = 0, top_k: int = 5, fixed: dict[str, str] | None = None, snapshot: str | None = None, preemption: bool | None = None, kube_version: KubeVersion | str | None = None) -> Result:
    """Schedule every pending pod the way kube-scheduler's workload cycle would: each queue
    entity once in queue order, then again when an event of the run may help it
    (:mod:`.scheduling_queue`).

    ``tie_break``: "first" (lowest snapshot position among equal totals) or "random" (seeded).
    ``fixed``: pod key -> node to force (when that node passes Filter), for what-if replays.
    ``preemption``: run PostFilter (workload-aware preemption for groups, default preemption for
    single pods, :mod:`.preemption`); evicted pods go to ``Result.victims`` and the preemptors'
    pods are reported on their nominated nodes. ``None`` (the default) follows the profile, as
    kube-scheduler does: on unless a KubeSchedulerConfiguration disables DefaultPreemption.
    ``params`` records ``preemption`` and where it came from (``preemptionFrom``).
    ``kube_version``: the kube-scheduler version to reproduce, ``"1.35"``, ``"1.36"`` or
    ``"1.37"`` (default: :attr:`Cluster.kube_version`, the newest unless the loader was told);
    ``params.kubeVersion`` records it.
    """
    start = time.perf_counter()
    cluster = cluster.at_version(kube_version)
    _check_fixed(cluster, fixed)
    preemption, source = cluster.profile.resolve_preemption(preemption)
    st = run_cycle(cluster, tie_break=tie_break, seed=seed, top_k=top_k, fixed=fixed, preemption=preemption).state
    names = st.snap.names
    placements = {k: names[i] for k, i in st.placements.items()}
    pod_reasons = dict(st.trace.pod_reasons)  # pods never attempted: Cluster.not_queued (build_result)
    params: dict[str, Any] = {"tieBreak": tie_break, "seed": seed, "topK": top_k, "kubeVersion": cluster.kube_version.value}
    if fixed:
        params["fixed"] = dict(sorted(fixed.items()))
    params["preemption"], params["preemptionFrom"] = preemption, source
    return build_result(
        cluster,
        engine=ENGINE,
        status=Status.HEURISTIC,
        placements=placements,
        pod_reasons=pod_reasons,
        group_reasons=st.trace.group_reasons,
        wall_seconds=time.perf_counter() - start,
        params=params,
        trace=build_trace(st),
        snapshot=snapshot,
        victims=st.victims,
        nominated=st.nominated,
    )


def replay_options(result: Result) -> dict[str, Any]:
    """The options a greedy Result was produced with (its ``params``), as keyword arguments for
    :func:`pod_scores_at_step` / :func:`placement_scores_at_step`: a replay runs exactly the run
    the Result reports, preemption included."""
    o = result.options
    out: dict[str, Any] = {"tie_break": o.tie_break or "first", "seed": o.seed or 0, "top_k": 5 if o.top_k is None else o.top_k}
    if o.fixed:
        out["fixed"] = dict(o.fixed)
    if o.preemption is not None:
        out["preemption"] = o.preemption
    if o.kube_version:
        out["kube_version"] = o.kube_version
    return out


def _check_fixed(cluster: Cluster, fixed: Mapping[str, str] | None) -> None:
    for pod_key, node in (fixed or {}).items():
        if pod_key not in cluster.pod_by_key or cluster.pod_by_key[pod_key].bound:
            raise ValueError(f"fixed: {pod_key} is not a pending pod of the snapshot")
        if node not in cluster.node_index:
            raise ValueError(f"fixed: node {node} is not in the snapshot")


class _ScoresBefore:
    """A replay's observer: the evidence for ``nodes`` just before one of ``pod_key``'s cycles.

    ``step="first"``: its first cycle in a placement holding ``prefer`` (its first cycle when
    none does); the run stops there. ``step="recorded"``: the cycle whose result the run's trace
    keeps (the one that made the choice the Result shows: in the chosen placement, or after
    workload-aware preemption removed the victims); the run goes to the end."""

    def __init__(self, pod_key: str, nodes: list[int], prefer: int | None, step: str) -> None:
        self.pod_key, self.nodes, self.prefer, self.step = pod_key, nodes, prefer, step
        self.first: dict[int, dict] | None = None
        self.found: dict[int, dict] | None = None
        self.pending: dict[int, dict] | None = None
        self.cycles: list[tuple[PodResult, dict[int, dict]]] = []
        """Each cycle of the pod and the evidence taken just before it (``step="recorded"``)."""

    def watches(self, pod: Pod) -> bool:
        return pod.key == self.pod_key

    def before_cycle(self, state: RunState, pod: Pod) -> bool:
        if pod.key != self.pod_key:
            return False
        if self.step == "recorded":
            self.pending = state.sched.explain(pod, self.nodes)
            return False
        placement = state.sched.placement
        wanted = self.prefer is None or placement is None or bool((placement == self.prefer).any())
        if wanted or self.first is None:
            got = state.sched.explain(pod, self.nodes)
            if self.first is None:
                self.first = got
            if wanted:
                self.found = got
        return wanted

    def after_cycle(self, state: RunState, pod: Pod, result: PodResult) -> None:
        if pod.key == self.pod_key and self.pending is not None:
            self.cycles.append((result, self.pending))
            self.pending = None

    def evidence(self, state: RunState) -> dict[int, dict] | None:
        if self.step == "recorded":
            kept = state.trace.results.get(self.pod_key) if self.pod_key in state.trace.order else None
            return next((got for r, got in self.cycles if r is kept), None)
        return self.found if self.found is not None else self.first


def pod_scores_at_step(cluster: Cluster, pod_key: str, nodes: list[str], *, step: Literal["first", "recorded"] = "first", tie_break: str = "first", seed: int = 0, top_k: int = 5, fixed: dict[str, str] | None = None, snapshot: str | None = None, preemption: bool | None = None, kube_version: KubeVersion | str | None = None) -> dict[str, dict]:
    """Replay the run and evaluate ``nodes`` for ``pod_key`` just before one of its cycles.

    Returns node -> ``{"feasible", "reason", "scores": {plugin: weighted score}, "total"}``.
    Scores are normalised over every node feasible at that step. ``step="first"``: the pod's
    first cycle; for a pod of a topology-constrained group (tried once per placement) its first
    cycle in a placement holding ``nodes[0]``, else its first cycle. ``step="recorded"``: the
    cycle the trace keeps for the pod, whose choice the Result shows (the chosen placement's; for
    a group placed by workload-aware preemption, the cycle that ran with the victims removed):
    what a diff's decisive step shows. Raises ``KeyError`` for an unknown node and
    ``ValueError`` when the run never attempts the pod (gated, or its group was rejected before
    its turn) or, with ``"recorded"``, keeps no cycle of it. Pass :func:`replay_options` of a
    Result to replay that run.
    """
    del snapshot
    _check_fixed(cluster, fixed)
    unknown = [n for n in nodes if n not in cluster.node_index]
    if unknown:
        raise KeyError(f"unknown node(s): {', '.join(unknown)}")
    idx = [cluster.node_index[n] for n in nodes]
    probe = _ScoresBefore(pod_key, idx, idx[0] if idx else None, step)
    st = run_cycle(cluster, tie_break=tie_break, seed=seed, top_k=top_k, fixed=fixed, preemption=preemption, observer=probe, kube_version=kube_version).state
    got = probe.evidence(st)
    if got is None:
        raise ValueError(f"pod {pod_key} is never attempted by the greedy run")
    return {n: got[i] for n, i in zip(nodes, idx, strict=True)}


NOT_EVALUATED = {"status": "NotEvaluated", "reason": None, "assigned": 0, "scores": {}, "total": None}


def placement_decision(decision: PlacementDecision, placements: list[str] | None = None) -> dict[str, Any]:
    """A recorded placement decision as ``{"key", "chosen", "scored", "tieCount", "generated",
    "placements": {name: {"nodes", "status", "reason", "assigned", "scores", "total"}}}``, with only
    the named ``placements`` (label values) when given; one that was not evaluated has status
    ``"NotEvaluated"`` (it was not generated, or the nominated placement won first)."""
    by_name = {e.name: {"nodes": e.nodes, "status": e.status, "reason": e.reason, "assigned": e.assigned, "scores": dict(e.scores), "total": e.total}
               for e in decision.entries()}
    names = placements if placements is not None else list(by_name)
    return {
        "key": decision.key,
        "chosen": decision.chosen,
        "scored": decision.scored,
        "tieCount": decision.tie_count,
        "generated": decision.generated,
        "placements": {n: by_name.get(n, dict(NOT_EVALUATED)) for n in names},
    }


def placement_scores_at_step(cluster: Cluster, group_key: str, placements: list[str] | None = None, *, tie_break: str = "first", seed: int = 0, fixed: dict[str, str] | None = None, snapshot: str | None = None, preemption: bool | None = None, kube_version: KubeVersion | str | None = None) -> dict[str, Any]:
    """The placement decision greedy made for a topology-constrained group (KEP-5732), from a run
    with these options (:func:`placement_decision`; a diff reads its greedy Result instead).
    Raises ``ValueError`` when the run never made a placement decision for the group."""
    del snapshot
    _check_fixed(cluster, fixed)
    st = run_cycle(cluster, tie_break=tie_break, seed=seed, top_k=0, fixed=fixed, preemption=preemption, kube_version=kube_version).state
    return placement_decision(_decision_of(st.trace.groups.get(group_key), group_key), placements)


def _decision_of(record, group_key: str) -> PlacementDecision:
    if record is None or record.placements is None:
        raise ValueError(f"the greedy run made no placement decision for {group_key} (no topology constraint, or never attempted)")
    return record.placements


def placement_evidence(cluster: Cluster, greedy: Result, group_key: str, greedy_node: str, optimal_node: str | None) -> dict[str, Any] | None:
    """Why greedy put a topology-constrained group where it did, for a diff's decisive step, read
    from the greedy Result's trace (no replay: the run recorded every placement it evaluated).

    Walks from ``group_key`` up its CompositePodGroup parents to the first group with a topology
    key under which ``greedy_node`` and ``optimal_node`` are in different domains, and returns
    ``{"group", "key", "greedy", "optimal"}`` (the two label values) plus the
    :func:`placement_decision` fields for those two placements, and ``"misledBy"``: the
    placement plugin whose weighted score favoured greedy's domain the most (None when the two
    were not both scored, e.g. the optimum's domain was infeasible for greedy at that moment, or
    greedy's domain was the only feasible one). None when no such group exists.
    """
    nodes = {n.name: n for n in cluster.nodes}
    trace = greedy.greedy_trace
    for key in cluster.groups.ancestors(group_key):
        tkey = cluster.groups.node(key).topology_key
        if tkey and optimal_node in nodes:
            mine, theirs = nodes[greedy_node].labels.get(tkey), nodes[optimal_node].labels.get(tkey)
            if mine != theirs:
                names = [v for v in (mine, theirs) if v is not None]
                got = placement_decision(_decision_of(trace.groups.get(key), key), names)
                return {"group": key, "key": tkey, "greedy": mine, "optimal": theirs, **got, "misledBy": _misled_by(got, mine, theirs)}
    return None


def _misled_by(got: dict[str, Any], mine: str | None, theirs: str | None) -> str | None:
    a, b = got["placements"].get(mine or "", {}), got["placements"].get(theirs or "", {})
    if a.get("total") is None or b.get("total") is None:
        return None
    diffs = {k: v - b["scores"].get(k, 0) for k, v in a["scores"].items()}
    best = max(diffs.items(), key=lambda kv: (kv[1], kv[0]), default=None)
    return best[0] if best and best[1] > 0 else None


def build_trace(state: RunState) -> GreedyTrace:
    """The trace: pod scheduling order, queue entities in order, per-pod evidence, per-group
    PlacementFeasible progression (docs/explanation/greedy-fidelity.md)."""
    tr, names = state.trace, state.snap.names
    pods = {key: _pod_cycle(tr.results[key], names, state.placements.get(key)) for key in tr.order}
    groups = dict(sorted(tr.groups.items()))
    preemption = dict(sorted(tr.preemption.items())) if state.preemption else None
    return GreedyTrace(order=list(tr.order), entities=list(tr.entities), pods=pods, groups=groups, preemption=preemption, requeues=list(tr.requeues) or None)


def _pod_cycle(r: PodResult, names: list[str], kept: int | None) -> PodCycle:
    return PodCycle(
        feasible_nodes=int(r.feasible),
        evaluated_nodes=int(r.evaluated),
        rejections={pl: dict(sorted(c.items())) for pl, c in sorted(r.rejections.items())},
        top=r.top,
        chosen=names[r.node] if r.node is not None else None,
        kept=kept is not None,
        tie_set=[names[i] for i in r.tie_set],
        tie_count=int(r.tie_count),
        fit_error=r.fit_error,
    )
