"""The greedy engine's entry points: one run of kube-scheduler's workload scheduling cycle over a
snapshot (:func:`run_cycle`) and its Result (:func:`solve_greedy`); the trace layout is documented
in :mod:`gangplan.solver.greedy`."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from gangplan.gcpause import gc_paused
from gangplan.models.cluster import Cluster
from gangplan.models.result import Result, Status
from gangplan.models.trace import GreedyTrace, PodCycle
from gangplan.models.version import KubeVersion
from gangplan.solver.greedy.podgroup import WorkloadCycle
from gangplan.solver.greedy.schedule_one import PodResult
from gangplan.solver.greedy.session import GreedySession
from gangplan.solver.greedy.state import RunObserver, RunState
from gangplan.solver.kueue import admission_of, kube_view
from gangplan.solver.kueue.outcome import with_admission
from gangplan.solver.outcome import build_result

ENGINE = "greedy"


def run_cycle(
    cluster: Cluster,
    *,
    tie_break: str = "first",
    seed: int = 0,
    top_k: int = 5,
    fixed: Mapping[str, str] | None = None,
    preemption: bool | None = None,
    observer: RunObserver | None = None,
    kube_version: KubeVersion | str | None = None,
    requeue: bool = True,
) -> WorkloadCycle:
    """Run every queue entity once (:meth:`GreedySession.run`); the returned cycle's state holds placements, reasons and the
    trace. ``observer`` (a replay) is called before every pod cycle and may stop the run there
    (:class:`~gangplan.solver.greedy.state.RunObserver`). ``kube_version``: reproduce that
    version's kube-scheduler (default: the cluster's, :attr:`Cluster.kube_version`).
    ``requeue=False`` makes one pass over the queue without retries (for benchmarks)."""
    cluster = kube_view(cluster.at_version(kube_version))
    preemption, _ = cluster.profile.resolve_preemption(preemption)
    session = GreedySession(cluster, tie_break=tie_break, seed=seed, top_k=top_k)
    return session.run(fixed=fixed, preemption=preemption, observer=observer, requeue=requeue)


def solve_greedy(
    cluster: Cluster,
    *,
    tie_break: str = "first",
    seed: int = 0,
    top_k: int = 5,
    fixed: dict[str, str] | None = None,
    snapshot: str | None = None,
    preemption: bool | None = None,
    kube_version: KubeVersion | str | None = None,
) -> Result:
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
    admission = admission_of(cluster)
    if admission is not None:  # Kueue first: it decides which jobs' pods kube-scheduler sees
        cluster = admission.cluster
    check_fixed(cluster, fixed)
    preemption, source = cluster.profile.resolve_preemption(preemption)
    with gc_paused():  # the run's and the Result's objects hold no cycles (gangplan.gcpause)
        result = _solve(
            cluster,
            start,
            tie_break=tie_break,
            seed=seed,
            top_k=top_k,
            fixed=fixed,
            snapshot=snapshot,
            preemption=preemption,
            source=source,
        )
    return with_admission(result, admission) if admission is not None else result


def _solve(
    cluster: Cluster,
    start: float,
    *,
    tie_break: str,
    seed: int,
    top_k: int,
    fixed: dict[str, str] | None,
    snapshot: str | None,
    preemption: bool,
    source: str,
) -> Result:
    st = run_cycle(
        cluster, tie_break=tie_break, seed=seed, top_k=top_k, fixed=fixed, preemption=preemption
    ).state
    names = st.snap.names
    placements = {k: names[i] for k, i in st.placements.items()}
    pod_reasons = dict(
        st.trace.pod_reasons
    )  # pods never attempted: Cluster.not_queued (build_result)
    group_reasons = dict(st.trace.group_reasons)
    by_key = cluster.pod_by_key
    for k, (i, by) in st.evicted_placed.items():  # rule V: placed, then a later preemptor's victim
        pod_reasons[k] = evicted_reason(names[i], by)
        g = by_key[k].group_key
        if g is not None and g not in group_reasons:
            group_reasons[g] = f"its pods were placed, then evicted by the preemption of {by}"
    params: dict[str, Any] = {
        "tieBreak": tie_break,
        "seed": seed,
        "topK": top_k,
        "kubeVersion": cluster.kube_version.value,
    }
    if fixed:
        params["fixed"] = dict(sorted(fixed.items()))
    params["preemption"], params["preemptionFrom"] = preemption, source
    return build_result(
        cluster,
        engine=ENGINE,
        status=Status.HEURISTIC,
        placements=placements,
        pod_reasons=pod_reasons,
        group_reasons=group_reasons,
        wall_seconds=time.perf_counter() - start,
        params=params,
        trace=build_trace(st),
        snapshot=snapshot,
        victims=st.victims,
        nominated=st.nominated,
    )


def evicted_reason(node: str, by: str) -> str:
    """The reason of a pending pod the run placed and a later preemption evicted (rule V of issue
    39): it is in ``Result.victims`` and placed nowhere."""
    return f"placed on node {node}, then evicted: a victim of the preemption by {by}"


def replay_options(result: Result) -> dict[str, Any]:
    """The options a greedy Result was produced with (its ``params``), as keyword arguments for
    :func:`pod_scores_at_step` / :func:`placement_scores_at_step`: a replay runs exactly the run
    the Result reports, preemption included."""
    o = result.options
    out: dict[str, Any] = {
        "tie_break": o.tie_break or "first",
        "seed": o.seed or 0,
        "top_k": 5 if o.top_k is None else o.top_k,
    }
    if o.fixed:
        out["fixed"] = dict(o.fixed)
    if o.preemption is not None:
        out["preemption"] = o.preemption
    if o.kube_version:
        out["kube_version"] = o.kube_version
    return out


def check_fixed(cluster: Cluster, fixed: Mapping[str, str] | None) -> None:
    for pod_key, node in (fixed or {}).items():
        if pod_key not in cluster.pod_by_key or cluster.pod_by_key[pod_key].bound:
            raise ValueError(f"fixed: {pod_key} is not a pending pod of the snapshot")
        if node not in cluster.node_index:
            raise ValueError(f"fixed: node {node} is not in the snapshot")


def build_trace(state: RunState) -> GreedyTrace:
    """The trace: pod scheduling order, queue entities in order, per-pod evidence, per-group
    PlacementFeasible progression (docs/explanation/greedy-fidelity.md)."""
    tr, names = state.trace, state.snap.names
    pods = {key: _pod_cycle(tr.results[key], names, state.placements.get(key)) for key in tr.order}
    groups = dict(sorted(tr.groups.items()))
    preemption = dict(sorted(tr.preemption.items())) if state.preemption else None
    return GreedyTrace(
        order=list(tr.order),
        entities=list(tr.entities),
        pods=pods,
        groups=groups,
        preemption=preemption,
        requeues=list(tr.requeues) or None,
        permit_holds=list(tr.permit_holds) or None,
    )


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
