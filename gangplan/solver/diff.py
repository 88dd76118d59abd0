"""Greedy against optimal on one snapshot: classification and the decisive greedy step.

Classification (``Diff.classification``):

``identical``           same placements and victims
``tie-break``           same objective, different nodes, and wherever they differ the optimum's node
                        was in the greedy's tie set for that pod (an arbitrary upstream choice)
``equivalent``          same objective, different nodes for reasons other than ties
``greedy-suboptimal``   the optimum is lexicographically better on the shared objective tiers
``model-mismatch``      a result fails validation, the greedy placement is infeasible in the exact
                        model, or greedy beats a proven optimum: the engines disagree about the
                        rules, which is a bug

The decisive step is found, not guessed: the greedy's pod choices c1..cn (in scheduling order,
tentative choices of groups that were later reverted included) are fixed in the exact model one
prefix at a time. ``P(k)`` = "an optimal placement exists that agrees with c1..ck"; P(0) holds,
and once P fails it keeps failing, so a binary search finds the first k with P(k) false. Choice
ck is the earliest greedy choice that no optimal placement shares.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from gangplan.models.cluster import Cluster
from gangplan.models.result import Result, Status
from gangplan.solver.outcome import compare
from gangplan.solver.validate import validate

IDENTICAL = "identical"
TIE_BREAK = "tie-break"
EQUIVALENT = "equivalent"
GREEDY_SUBOPTIMAL = "greedy-suboptimal"
MODEL_MISMATCH = "model-mismatch"


@dataclass
class GroupDiff:
    group: str
    min_count: int
    greedy_admitted: bool
    optimal_admitted: bool
    greedy_placed: int
    optimal_placed: int
    greedy_domain: str | None = None
    optimal_domain: str | None = None
    greedy_reason: str | None = None


@dataclass
class DecisiveStep:
    step: int
    """1-based index of the choice in the greedy's scheduling order."""
    pod: str
    group: str | None
    greedy_node: str
    optimal_node: str | None
    greedy_scores: dict[str, Any] = field(default_factory=dict)
    optimal_scores: dict[str, Any] = field(default_factory=dict)
    failed_pod: str | None = None
    failed_reason: str | None = None
    probes: int = 0
    placement: dict[str, Any] | None = None
    """For a topology-constrained group: the two domains, their placement scores and the
    placement plugin that favoured greedy's domain (``misledBy``)."""


@dataclass
class Diff:
    snapshot: str
    classification: str
    groups: list[GroupDiff]
    greedy_objective: dict[str, float]
    optimal_objective: dict[str, float]
    optimal_status: str
    gap: float | None
    problems: list[str]
    decisive: DecisiveStep | None
    greedy: Result
    optimal: Result
    seconds: float

    @property
    def exit_code(self) -> int:
        return {MODEL_MISMATCH: 4, GREEDY_SUBOPTIMAL: 3}.get(self.classification, 0)

    def to_dict(self, *, with_results: bool = True) -> dict[str, Any]:
        d = {
            "snapshot": self.snapshot,
            "classification": self.classification,
            "groups": [asdict(g) for g in self.groups],
            "greedyObjective": self.greedy_objective,
            "optimalObjective": self.optimal_objective,
            "optimalStatus": self.optimal_status,
            "gap": self.gap,
            "problems": self.problems,
            "decisive": asdict(self.decisive) if self.decisive else None,
            "seconds": round(self.seconds, 3),
            "warnings": list(self.greedy.warnings),
        }
        if with_results:
            d["greedy"] = self.greedy.model_dump(mode="json", by_alias=True)
            d["optimal"] = self.optimal.model_dump(mode="json", by_alias=True)
        return d


def _shared(obj: dict[str, float], other: dict[str, float]) -> dict[str, float]:
    return {k: v for k, v in obj.items() if k in other}


def greedy_choices(greedy: Result) -> list[tuple[str, str]]:
    """(pod, node) for every successful greedy pod choice, in scheduling order (reverted ones too)."""
    pods = greedy.trace.get("pods", {})
    out = []
    for key in greedy.trace.get("order", []):
        chosen = pods.get(key, {}).get("chosen")
        if chosen:
            out.append((key, chosen))
    return out


def classify(cluster: Cluster, greedy: Result, optimal: Result, *, greedy_feasible_in_model: bool | None = None) -> tuple[str, list[str]]:
    problems = [f"greedy: {v}" for v in validate(cluster, greedy)]
    problems += [f"exact: {v}" for v in validate(cluster, optimal)]
    if greedy_feasible_in_model is False:
        problems.append("the greedy placement is infeasible in the exact model")
    c = compare(optimal.objective, greedy.objective)
    if c < 0 and optimal.status == Status.OPTIMAL:
        problems.append("greedy beats a proven optimum")
    if problems:
        return MODEL_MISMATCH, problems
    if c > 0:
        return GREEDY_SUBOPTIMAL, problems
    if greedy.placements() == optimal.placements() and greedy.victims == optimal.victims:
        return IDENTICAL, problems
    ties = greedy.trace.get("pods", {})
    gp, op = greedy.placements(), optimal.placements()
    differing = [k for k in set(gp) | set(op) if gp.get(k) != op.get(k)]
    if differing and all(k in gp and k in op and op[k] in (ties.get(k, {}).get("tieSet") or []) for k in differing):
        return TIE_BREAK, problems
    return EQUIVALENT, problems


def find_decisive_step(cluster: Cluster, greedy: Result, optimal: Result, *, time_limit: float, workers: int, seed: int, tie_break: str = "first", preemption: bool | None = None) -> DecisiveStep | None:
    """Binary search over prefixes of the greedy's choices (see the module docstring)."""
    from gangplan.solver.exact import solve_exact
    from gangplan.solver.greedy import placement_evidence, pod_scores_at_step

    choices = greedy_choices(greedy)
    if not choices:
        return None
    target = optimal.objective
    probes = 0

    def agrees(k: int) -> tuple[bool, Result]:
        nonlocal probes
        probes += 1
        fixed = dict(choices[:k])
        r = solve_exact(cluster, time_limit=time_limit, workers=workers, seed=seed, fixed=fixed, hint=optimal if k == 0 else None, preemption=preemption)
        if r.status not in (Status.OPTIMAL, Status.FEASIBLE):
            return False, r
        # FEASIBLE but equal to the optimum also proves agreement; below it is undecided -> treat as no.
        return compare(_shared(r.objective, target), _shared(target, r.objective)) >= 0, r

    lo, hi = 0, len(choices)  # P(lo) true (k=0 is the optimum itself); find first k with P(k) false
    ok_hi, _ = agrees(hi)
    if ok_hi:
        return None
    best_agreeing = optimal
    while hi - lo > 1:
        mid = (lo + hi) // 2
        ok, r = agrees(mid)
        if ok:
            lo, best_agreeing = mid, r
        else:
            hi = mid
    pod, node = choices[hi - 1]
    opt_node = best_agreeing.pods.get(pod).node if pod in best_agreeing.pods else None
    nodes = [n for n in (node, opt_node) if n]
    scores = pod_scores_at_step(cluster, pod, nodes, tie_break=tie_break, seed=seed)
    group = cluster.pod_by_key[pod].group_key
    placement = placement_evidence(cluster, group, node, opt_node, tie_break=tie_break, seed=seed) if group else None
    failed_pod, failed_reason = None, None
    order = greedy.trace.get("order", [])
    start = order.index(pod) + 1 if pod in order else 0
    trace_pods = greedy.trace.get("pods", {})
    for key in order[start:]:
        t = trace_pods.get(key, {})
        if not t.get("chosen"):
            failed_pod, failed_reason = key, t.get("fitError") or greedy.pods[key].reason
            break
    return DecisiveStep(
        step=hi,
        pod=pod,
        group=group,
        greedy_node=node,
        optimal_node=opt_node,
        greedy_scores=scores.get(node, {}),
        optimal_scores=scores.get(opt_node, {}) if opt_node else {},
        failed_pod=failed_pod,
        failed_reason=failed_reason,
        probes=probes,
        placement=placement,
    )


def diff_snapshot(cluster: Cluster, *, snapshot: str = "", time_limit: float = 10.0, probe_time_limit: float = 5.0, workers: int = 2, seed: int = 0, tie_break: str = "first", explain: bool = True, preemption: bool | None = None) -> Diff:
    """Run both engines on ``cluster`` and compare them (``preemption``: both may evict)."""
    from gangplan.solver.exact import check_feasible, solve_exact
    from gangplan.solver.greedy import solve_greedy

    t0 = time.perf_counter()
    greedy = solve_greedy(cluster, tie_break=tie_break, seed=seed, snapshot=snapshot, preemption=preemption)
    optimal = solve_exact(cluster, time_limit=time_limit, workers=workers, seed=seed, hint=greedy, snapshot=snapshot, preemption=preemption)
    feasible = check_feasible(cluster, greedy.placements(), greedy.victims)
    feasible_ok = feasible is True or (isinstance(feasible, list) and not feasible)
    classification, problems = classify(cluster, greedy, optimal, greedy_feasible_in_model=feasible_ok)
    if isinstance(feasible, list) and feasible:
        problems += [f"exact model rejects the greedy placement: {p}" for p in feasible]
    groups = []
    for key in sorted(set(greedy.groups) | set(optimal.groups)):
        g, o = greedy.groups.get(key), optimal.groups.get(key)
        ref = g or o
        groups.append(
            GroupDiff(
                group=key,
                min_count=ref.min_count,
                greedy_admitted=bool(g and g.admitted),
                optimal_admitted=bool(o and o.admitted),
                greedy_placed=g.placed if g else 0,
                optimal_placed=o.placed if o else 0,
                greedy_domain=g.domain if g else None,
                optimal_domain=o.domain if o else None,
                greedy_reason=g.reason if g else None,
            )
        )
    decisive = None
    if explain and classification == GREEDY_SUBOPTIMAL:
        decisive = find_decisive_step(cluster, greedy, optimal, time_limit=probe_time_limit, workers=workers, seed=seed, tie_break=tie_break, preemption=preemption)
    return Diff(
        snapshot=snapshot,
        classification=classification,
        groups=groups,
        greedy_objective=greedy.objective,
        optimal_objective=optimal.objective,
        optimal_status=optimal.status.value,
        gap=optimal.gap,
        problems=problems,
        decisive=decisive,
        greedy=greedy,
        optimal=optimal,
        seconds=time.perf_counter() - t0,
    )
