"""Evidence from greedy runs for a diff's decisive step: the scores of chosen nodes just before
a pod's cycle (a replay of the run with an observer, :func:`pod_scores_at_step`) and the
placement decisions of topology-constrained groups read from a Result's trace
(:func:`placement_evidence`, no replay)."""

from __future__ import annotations

from typing import Any, Literal

from gangplan.models.cluster import Cluster
from gangplan.models.documents import PlacementEvidence
from gangplan.models.objects import Pod
from gangplan.models.result import Result
from gangplan.models.trace import PlacementDecision
from gangplan.models.version import KubeVersion, workload_aware_preemption
from gangplan.solver.greedy.engine import check_fixed, run_cycle
from gangplan.solver.greedy.schedule_one import PodResult
from gangplan.solver.greedy.state import RunState


class _ScoresBefore:
    """A replay's observer: the evidence for ``nodes`` just before one of ``pod_key``'s cycles.

    ``step="first"``: its first cycle in a placement holding ``prefer`` (its first cycle when
    none does); the run stops there. ``step="recorded"``: the cycle whose result the run's trace
    keeps (the one that made the choice the Result shows: in the chosen placement, or after
    workload-aware preemption removed the victims); the run goes on until that cycle is final
    (:meth:`settled`)."""

    def __init__(
        self,
        pod_key: str,
        nodes: list[int],
        prefer: int | None,
        step: str,
        chosen: int | None = None,
    ) -> None:
        self.pod_key, self.nodes, self.prefer, self.step, self.chosen = (
            pod_key,
            nodes,
            prefer,
            step,
            chosen,
        )
        self.first: dict[int, dict] | None = None
        self.found: dict[int, dict] | None = None
        self.pending: dict[int, dict] | None = None
        self.cycles: list[tuple[PodResult, dict[int, dict]]] = []
        """Each cycle of the pod and the evidence taken just before it (``step="recorded"``)."""

    def watches(self, pod: Pod) -> bool:
        """Whether the pod's group must be evaluated cycle by cycle (never counted,
        :mod:`.placement_fast`). ``step="first"`` may stop at a cycle of any placement, so it
        must. ``step="recorded"`` with ``chosen`` reads only the kept cycle, and a kept cycle is
        always one that really ran (a counted placement leaves no pod cycle in the trace: the one
        kept is evaluated in full, from the node state and scan start its cycles had), so the
        group may be counted as in the run the Result reports: on a 10,000-node snapshot the
        replay of a rack gang then skips hundreds of placement evaluations. Without ``chosen``
        every cycle of the pod is evaluated (the long way the shortcut is tested against)."""
        if self.step == "recorded" and self.chosen is not None:
            return False
        return pod.key == self.pod_key

    def before_cycle(self, state: RunState, pod: Pod) -> bool:
        if pod.key != self.pod_key:
            return False
        if self.step == "recorded":
            placement = state.sched.placement
            # A cycle inside a placement without the kept cycle's node cannot be that cycle (the
            # pod only chooses among the placement's nodes): not evaluated (a rack gang's pod runs
            # once per rack, and one evaluation scans every node).
            if self.chosen is None or placement is None or bool((placement == self.chosen).any()):
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

    def settled(self, state: RunState) -> bool:
        """``step="recorded"``: the run can stop once the pod is placed after an entity's attempt
        and one of its evaluated cycles is the one the trace keeps. From v1.36 a pod placed when
        its entity's attempt ends is bound by the pod-group cycle: no later cycle of it is run or
        recorded (an eviction removes it, it is not scheduled again), so the kept cycle is final.
        v1.35 holds a gang's pods at Permit across other pods' cycles: the run goes to the end
        there. Stopping early is what makes the evidence of an early step cheap on a large run
        (a 10,000-node run: the whole replay 6.5-17 s, the first step's about 1.5 s)."""
        if self.step != "recorded" or self.pod_key not in state.placements:
            return False
        if not workload_aware_preemption(state.cluster.kube_version):
            return False
        kept = state.trace.results.get(self.pod_key) if self.pod_key in state.trace.order else None
        return kept is not None and any(r is kept for r, _ in self.cycles)

    def evidence(self, state: RunState) -> dict[int, dict] | None:
        if self.step == "recorded":
            kept = (
                state.trace.results.get(self.pod_key) if self.pod_key in state.trace.order else None
            )
            return next((got for r, got in self.cycles if r is kept), None)
        return self.found if self.found is not None else self.first


def pod_scores_at_step(
    cluster: Cluster,
    pod_key: str,
    nodes: list[str],
    *,
    step: Literal["first", "recorded"] = "first",
    tie_break: str = "first",
    seed: int = 0,
    top_k: int = 5,
    fixed: dict[str, str] | None = None,
    snapshot: str | None = None,
    preemption: bool | None = None,
    kube_version: KubeVersion | str | None = None,
    chosen: str | None = None,
) -> dict[str, dict]:
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
    Result to replay that run. ``chosen`` (with ``"recorded"``, optional): the node the kept cycle
    chose, as that run's trace says (``trace.pods[pod_key].chosen``); the pod's cycles inside a
    placement without it are then not evaluated (the answer is the same, found faster).
    """
    del snapshot
    check_fixed(cluster, fixed)
    unknown = [n for n in nodes if n not in cluster.node_index]
    if unknown:
        raise KeyError(f"unknown node(s): {', '.join(unknown)}")
    idx = [cluster.node_index[n] for n in nodes]
    if chosen is not None and chosen not in cluster.node_index:
        raise KeyError(f"unknown node: {chosen}")
    probe = _ScoresBefore(
        pod_key,
        idx,
        idx[0] if idx else None,
        step,
        cluster.node_index[chosen] if chosen is not None else None,
    )
    st = run_cycle(
        cluster,
        tie_break=tie_break,
        seed=seed,
        top_k=top_k,
        fixed=fixed,
        preemption=preemption,
        observer=probe,
        kube_version=kube_version,
    ).state
    got = probe.evidence(st)
    if got is None:
        raise ValueError(f"pod {pod_key} is never attempted by the greedy run")
    return {n: got[i] for n, i in zip(nodes, idx, strict=True)}


NOT_EVALUATED = {
    "status": "NotEvaluated",
    "reason": None,
    "assigned": 0,
    "scores": {},
    "total": None,
}


def placement_decision(
    decision: PlacementDecision, placements: list[str] | None = None
) -> dict[str, Any]:
    """A recorded placement decision as ``{"key", "chosen", "scored", "tieCount", "generated",
    "placements": {name: {"nodes", "status", "reason", "assigned", "scores", "total"}}}``, with only
    the named ``placements`` (label values) when given; one that was not evaluated has status
    ``"NotEvaluated"`` (it was not generated, or the nominated placement won first)."""
    by_name = {
        e.name: {
            "nodes": e.nodes,
            "status": e.status,
            "reason": e.reason,
            "assigned": e.assigned,
            "scores": dict(e.scores),
            "total": e.total,
        }
        for e in decision.entries()
    }
    names = placements if placements is not None else list(by_name)
    return {
        "key": decision.key,
        "chosen": decision.chosen,
        "scored": decision.scored,
        "tieCount": decision.tie_count,
        "generated": decision.generated,
        "placements": {n: by_name.get(n, dict(NOT_EVALUATED)) for n in names},
    }


def placement_scores_at_step(
    cluster: Cluster,
    group_key: str,
    placements: list[str] | None = None,
    *,
    tie_break: str = "first",
    seed: int = 0,
    fixed: dict[str, str] | None = None,
    snapshot: str | None = None,
    preemption: bool | None = None,
    kube_version: KubeVersion | str | None = None,
) -> dict[str, Any]:
    """The placement decision greedy made for a topology-constrained group (KEP-5732), from a run
    with these options (:func:`placement_decision`; a diff reads its greedy Result instead).
    Raises ``ValueError`` when the run never made a placement decision for the group."""
    del snapshot
    check_fixed(cluster, fixed)
    st = run_cycle(
        cluster,
        tie_break=tie_break,
        seed=seed,
        top_k=0,
        fixed=fixed,
        preemption=preemption,
        kube_version=kube_version,
    ).state
    return placement_decision(_decision_of(st.trace.groups.get(group_key), group_key), placements)


def _decision_of(record, group_key: str) -> PlacementDecision:
    if record is None or record.placements is None:
        raise ValueError(
            f"the greedy run made no placement decision for {group_key} (no topology constraint, or never attempted)"
        )
    return record.placements


def placement_evidence(
    cluster: Cluster, greedy: Result, group_key: str, greedy_node: str, optimal_node: str | None
) -> PlacementEvidence | None:
    """Why greedy put a topology-constrained group where it did, for a diff's decisive step, read
    from the greedy Result's trace (no replay: the run recorded every placement it evaluated).

    Walks from ``group_key`` up its CompositePodGroup parents to the first group with a topology
    key under which ``greedy_node`` and ``optimal_node`` are in different domains, and returns
    its :class:`~gangplan.models.documents.PlacementEvidence`: ``group``, ``key``, ``greedy``,
    ``optimal`` (the two label values) plus the :func:`placement_decision` fields for those two
    placements, and ``misledBy``: the
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
                return PlacementEvidence.model_validate(
                    {
                        "group": key,
                        "key": tkey,
                        "greedy": mine,
                        "optimal": theirs,
                        **got,
                        "misledBy": _misled_by(got, mine, theirs),
                    }
                )
    return None


def _misled_by(got: dict[str, Any], mine: str | None, theirs: str | None) -> str | None:
    a, b = got["placements"].get(mine or "", {}), got["placements"].get(theirs or "", {})
    if a.get("total") is None or b.get("total") is None:
        return None
    diffs = {k: v - b["scores"].get(k, 0) for k, v in a["scores"].items()}
    best = max(diffs.items(), key=lambda kv: (kv[1], kv[0]), default=None)
    return best[0] if best and best[1] > 0 else None
