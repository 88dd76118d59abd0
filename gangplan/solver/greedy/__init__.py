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
from typing import Any

from gangplan.models.cluster import Cluster
from gangplan.models.result import Result, Status
from gangplan.solver.greedy.podgroup import StopBefore, WorkloadCycle
from gangplan.solver.greedy.profile import build_profile
from gangplan.solver.greedy.queue import entities
from gangplan.solver.greedy.schedule_one import PodResult, PodScheduler
from gangplan.solver.greedy.snapshot import NodeTable
from gangplan.solver.outcome import build_result

ENGINE = "greedy"

__all__ = ["ENGINE", "placement_evidence", "placement_scores_at_step", "pod_scores_at_step", "run_cycle", "solve_greedy"]


def run_cycle(cluster: Cluster, *, tie_break: str = "first", seed: int = 0, top_k: int = 5, fixed: Mapping[str, str] | None = None, stop_before: str | None = None, stop_node: str | None = None, preemption: bool | None = None) -> WorkloadCycle:
    """Run every queue entity once; the returned cycle holds placements, reasons and trace data.

    With ``stop_before`` the run stops just before that pod's cycle and raises
    :class:`~gangplan.solver.greedy.podgroup.StopBefore` (the cycle is attached as ``.cycle``).
    With ``stop_node`` as well, it stops only in a topology placement holding that node (a pod of
    a topology-constrained group is tried once per placement).
    """
    preemption, _ = cluster.profile.resolve_preemption(preemption)
    snap = NodeTable(cluster)
    sched = PodScheduler(snap, build_profile(cluster), tie_break=tie_break, seed=seed, top_k=top_k)
    stop_at = snap.index.get(stop_node) if stop_node else None
    cycle = WorkloadCycle(cluster, snap, sched, fixed=dict(fixed or {}), stop_before=stop_before, stop_node=stop_at, preemption=preemption)
    try:
        cycle.run(entities(cluster))
    except StopBefore as stop:
        stop.cycle = cycle  # type: ignore[attr-defined]
        raise
    return cycle


def solve_greedy(cluster: Cluster, *, tie_break: str = "first", seed: int = 0, top_k: int = 5, fixed: dict[str, str] | None = None, snapshot: str | None = None, preemption: bool | None = None) -> Result:
    """Schedule every pending pod the way kube-scheduler's workload cycle would, once each.

    ``tie_break``: "first" (lowest snapshot position among equal totals) or "random" (seeded).
    ``fixed``: pod key -> node to force (when that node passes Filter), for what-if replays.
    ``preemption``: run PostFilter (workload-aware preemption for groups, default preemption for
    single pods, :mod:`.preemption`); evicted pods go to ``Result.victims`` and the preemptors'
    pods are reported on their nominated nodes. ``None`` (the default) follows the profile, as
    kube-scheduler does: on unless a KubeSchedulerConfiguration disables DefaultPreemption.
    ``params`` records ``preemption`` and where it came from (``preemptionFrom``).
    """
    start = time.perf_counter()
    _check_fixed(cluster, fixed)
    preemption, source = cluster.profile.resolve_preemption(preemption)
    cycle = run_cycle(cluster, tie_break=tie_break, seed=seed, top_k=top_k, fixed=fixed, preemption=preemption)
    names = cycle.snap.names
    placements = {k: names[i] for k, i in cycle.placements.items()}
    for p in cluster.pending_pods:
        if p.terminating and p.key not in cluster.gated:
            cycle.pod_reasons.setdefault(p.key, "pod is being deleted (skipped, as upstream skips terminating pods)")
    params: dict[str, Any] = {"tieBreak": tie_break, "seed": seed, "topK": top_k}
    if fixed:
        params["fixed"] = dict(sorted(fixed.items()))
    trace = build_trace(cycle)
    params["preemption"], params["preemptionFrom"] = preemption, source
    if preemption:
        trace["preemption"] = {k: v for k, v in sorted(cycle.preemption_trace.items())}
    return build_result(
        cluster,
        engine=ENGINE,
        status=Status.HEURISTIC,
        placements=placements,
        pod_reasons=cycle.pod_reasons,
        group_reasons=cycle.group_reasons,
        wall_seconds=time.perf_counter() - start,
        params=params,
        trace=trace,
        snapshot=snapshot,
        victims=cycle.victims,
        nominated=cycle.nominated,
    )


def _check_fixed(cluster: Cluster, fixed: Mapping[str, str] | None) -> None:
    for pod_key, node in (fixed or {}).items():
        if pod_key not in cluster.pod_by_key or cluster.pod_by_key[pod_key].bound:
            raise ValueError(f"fixed: {pod_key} is not a pending pod of the snapshot")
        if node not in cluster.node_index:
            raise ValueError(f"fixed: node {node} is not in the snapshot")


def pod_scores_at_step(cluster: Cluster, pod_key: str, nodes: list[str], *, tie_break: str = "first", seed: int = 0, top_k: int = 5, fixed: dict[str, str] | None = None, snapshot: str | None = None, preemption: bool | None = None) -> dict[str, dict]:
    """Replay the run up to just before ``pod_key`` is scheduled and evaluate ``nodes`` for it.

    Returns node -> ``{"feasible", "reason", "scores": {plugin: weighted score}, "total"}``.
    Scores are normalised over every node feasible at that step. Raises ``KeyError`` for an
    unknown node and ``ValueError`` when the run never attempts the pod (gated, or its group
    was rejected before its turn).
    """
    del snapshot
    _check_fixed(cluster, fixed)
    unknown = [n for n in nodes if n not in cluster.node_index]
    if unknown:
        raise KeyError(f"unknown node(s): {', '.join(unknown)}")
    for stop_node in ([nodes[0]] if nodes else []) + [None]:
        try:
            run_cycle(cluster, tie_break=tie_break, seed=seed, top_k=top_k, fixed=fixed, stop_before=pod_key, stop_node=stop_node, preemption=preemption)
        except StopBefore as stop:
            cycle: WorkloadCycle = stop.cycle  # type: ignore[attr-defined]
            cycle.sched.placement, cycle.sched.placement_name = stop.placement, stop.placement_name
            idx = [cycle.snap.index[n] for n in nodes]
            got = cycle.sched.explain(stop.pod, idx)
            return {n: got[i] for n, i in zip(nodes, idx, strict=True)}
    raise ValueError(f"pod {pod_key} is never attempted by the greedy run")


def placement_scores_at_step(cluster: Cluster, group_key: str, placements: list[str] | None = None, *, tie_break: str = "first", seed: int = 0, fixed: dict[str, str] | None = None, snapshot: str | None = None, preemption: bool | None = None) -> dict[str, Any]:
    """The placement decision greedy made for a topology-constrained group (KEP-5732).

    Returns ``{"key", "chosen", "scored", "tieCount", "generated", "placements": {name: {"status",
    "reason", "assigned", "scores": {plugin: weighted score}, "total"}}}``, with only the named
    ``placements`` (label values) when given. A placement that was not evaluated is reported with
    status ``"NotEvaluated"`` (it was not generated, or the nominated placement won first).
    Raises ``ValueError`` when the run never made a placement decision for the group.
    """
    del snapshot
    _check_fixed(cluster, fixed)
    cycle = run_cycle(cluster, tie_break=tie_break, seed=seed, top_k=0, fixed=fixed, preemption=preemption)
    info = cycle.group_trace.get(group_key, {}).get("placements")
    if info is None:
        raise ValueError(f"the greedy run made no placement decision for {group_key} (no topology constraint, or never attempted)")
    by_name = {e["name"]: {k: v for k, v in e.items() if k != "name"} for e in info["evaluated"]}
    names = placements if placements is not None else list(by_name)
    missing = {"status": "NotEvaluated", "reason": None, "assigned": 0, "scores": {}, "total": None}
    return {
        "key": info["key"],
        "chosen": info["chosen"],
        "scored": info["scored"],
        "tieCount": info["tieCount"],
        "generated": info["generated"],
        "placements": {n: by_name.get(n, dict(missing)) for n in names},
    }


def placement_evidence(cluster: Cluster, group_key: str, greedy_node: str, optimal_node: str | None, *, tie_break: str = "first", seed: int = 0, fixed: dict[str, str] | None = None) -> dict[str, Any] | None:
    """Why greedy put a topology-constrained group where it did, for a diff's decisive step.

    Walks from ``group_key`` up its CompositePodGroup parents to the first group with a topology
    key under which ``greedy_node`` and ``optimal_node`` are in different domains, and returns
    ``{"group", "key", "greedy", "optimal"}`` (the two label values) plus the
    :func:`placement_scores_at_step` fields for those two placements, and ``"misledBy"``: the
    placement plugin whose weighted score favoured greedy's domain the most (None when the two
    were not both scored, e.g. the optimum's domain was infeasible for greedy at that moment, or
    greedy's domain was the only feasible one). None when no such group exists.
    """
    nodes = {n.name: n for n in cluster.nodes}
    for key in cluster.groups.ancestors(group_key):
        tkey = cluster.groups.node(key).topology_key
        if tkey and optimal_node in nodes:
            mine, theirs = nodes[greedy_node].labels.get(tkey), nodes[optimal_node].labels.get(tkey)
            if mine != theirs:
                return _evidence(cluster, key, tkey, mine, theirs, tie_break=tie_break, seed=seed, fixed=fixed)
    return None


def _evidence(cluster: Cluster, group: str, tkey: str, mine: str | None, theirs: str | None, **opts: Any) -> dict[str, Any]:
    names = [v for v in (mine, theirs) if v is not None]
    got = placement_scores_at_step(cluster, group, names, **opts)
    a, b = got["placements"].get(mine or "", {}), got["placements"].get(theirs or "", {})
    misled = None
    if a.get("total") is not None and b.get("total") is not None:
        diffs = {k: v - b["scores"].get(k, 0) for k, v in a["scores"].items()}
        best = max(diffs.items(), key=lambda kv: (kv[1], kv[0]), default=None)
        misled = best[0] if best and best[1] > 0 else None
    return {"group": group, "key": tkey, "greedy": mine, "optimal": theirs, **got, "misledBy": misled}


def build_trace(cycle: WorkloadCycle) -> dict[str, Any]:
    """The JSON trace: pod scheduling order, queue entities in order, per-pod evidence, per-group
    PlacementFeasible progression (see the README's trace section)."""
    names = cycle.snap.names
    pods = {key: _pod_trace(cycle.results[key], names, cycle.placements.get(key)) for key in cycle.order}
    groups = {k: dict(v) for k, v in sorted(cycle.group_trace.items())}
    return {"order": list(cycle.order), "entities": list(cycle.entity_order), "pods": pods, "groups": groups}


def _pod_trace(r: PodResult, names: list[str], kept: int | None) -> dict[str, Any]:
    return {
        "feasibleNodes": int(r.feasible),
        "evaluatedNodes": int(r.evaluated),
        "rejections": {pl: dict(sorted(c.items())) for pl, c in sorted(r.rejections.items())},
        "top": r.top,
        "chosen": names[r.node] if r.node is not None else None,
        "kept": kept is not None,
        "tieSet": [names[i] for i in r.tie_set],
        "tieCount": int(r.tie_count),
        "fitError": r.fit_error,
    }
