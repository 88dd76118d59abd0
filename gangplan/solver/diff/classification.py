"""The classification of a diff (:data:`IDENTICAL` ... :data:`MODEL_MISMATCH`, see
:mod:`gangplan.solver.diff`) and which groups and pods differ between two Results."""

from __future__ import annotations

from gangplan.models.cluster import Cluster
from gangplan.models.documents import OptimalProof
from gangplan.models.objective import compare
from gangplan.models.result import Result
from gangplan.solver.diff.proof import optimal_proof
from gangplan.solver.greedy import Samples
from gangplan.solver.validate import validate

IDENTICAL = "identical"


TIE_BREAK = "tie-break"


EQUIVALENT = "equivalent"


GREEDY_SUBOPTIMAL = "greedy-suboptimal"


GREEDY_SUBOPTIMAL_SOMETIMES = "greedy-suboptimal-sometimes"
"""With ``--samples K``: some of the K seeded greedy runs reach the optimum and some do not."""


MODEL_MISMATCH = "model-mismatch"


UNPROVEN = "unproven"
"""The best placement the exact engine found is no better than greedy's on the compared tiers,
but a compared tier is not proven: a better placement may exist (``optimalProof`` says where and
by how much at most). Never reported as ``identical`` / ``tie-break`` / ``equivalent``."""


def shared_tiers(obj: dict[str, float], other: dict[str, float]) -> dict[str, float]:
    return {k: v for k, v in obj.items() if k in other}


def classify(
    cluster: Cluster,
    greedy: Result,
    optimal: Result,
    *,
    greedy_feasible_in_model: bool | None = None,
    violations: tuple[list, list] | None = None,
    proof: OptimalProof | None = None,
) -> tuple[str, list[str]]:
    """The classification and the problems behind a ``model-mismatch``. ``violations``: the
    validator's findings for ``greedy`` and ``optimal`` when the caller has them (each Result is
    validated once); else they are computed here. ``proof``: :func:`.proof.optimal_proof` of the
    two, when the caller has it.

    ``greedy-suboptimal`` needs no proof (a better placement was found). ``identical``,
    ``tie-break`` and ``equivalent`` say that greedy does as well as any placement: only when
    every compared tier is proven; otherwise ``unproven``. Greedy better than the exact answer
    on a proven tier is a ``model-mismatch``; where the exact model leaves part of the snapshot out
    (``restricted-model``: devices it does not offer) greedy may do better, and nothing is proven:
    ``unproven`` unless the exact answer is better."""
    gv, ov = (
        violations
        if violations is not None
        else (validate(cluster, greedy), validate(cluster, optimal))
    )
    proof = proof if proof is not None else optimal_proof(greedy, optimal)
    problems = [f"greedy: {v}" for v in gv]
    problems += [f"exact: {v}" for v in ov]
    restricted = proof.stopped_by == "restricted-model"
    if greedy_feasible_in_model is False and not restricted:
        problems.append("the greedy placement is infeasible in the exact model")
    c = compare(optimal.objective, greedy.objective)
    if c < 0 and not restricted:
        beaten = _first_difference(optimal.objective, greedy.objective)
        tier = next((t for t in proof.tiers if t.tier == beaten), None)
        if tier is not None and tier.proven:
            problems.append(
                f"greedy beats a proven optimum (tier {beaten}: greedy {greedy.objective[beaten]:g}, "
                f"proven optimum {optimal.objective[beaten]:g})"
            )
    if problems:
        return MODEL_MISMATCH, problems
    if c > 0:
        return GREEDY_SUBOPTIMAL, problems
    if not proof.proven:
        return UNPROVEN, problems
    if greedy.placements() == optimal.placements() and greedy.victims == optimal.victims:
        return IDENTICAL, problems
    cycles = greedy.greedy_trace.pods
    gp, op = greedy.placements(), optimal.placements()
    differing = [k for k in set(gp) | set(op) if gp.get(k) != op.get(k)]
    if differing and all(
        k in gp and k in op and k in cycles and op[k] in cycles[k].tie_set for k in differing
    ):
        return TIE_BREAK, problems
    return EQUIVALENT, problems


def _first_difference(a: dict[str, float], b: dict[str, float]) -> str | None:
    """The highest tier both objectives carry on which they differ."""
    return next((k for k in a if k in b and a[k] != b[k]), None)


def group_differs(a, b) -> bool:
    if a is None or b is None:
        return (a is None) != (b is None)
    return (a.admitted, a.placed, a.domain) != (b.admitted, b.placed, b.domain)


def entity_differs(
    cluster: Cluster, pod: str, greedy: Result, other: Result
) -> tuple[str | None, bool]:
    """(group or None, whether that group - or the single pod - ends differently in the two results)."""
    p = cluster.pod_by_key.get(pod)
    group = p.group_key if p is not None else None
    if group:
        return group, group_differs(greedy.groups.get(group), other.groups.get(group))
    a, b = greedy.pods.get(pod), other.pods.get(pod)
    return None, (a.node if a else None) != (b.node if b else None)


def differing_groups(cluster: Cluster, greedy: Result, other: Result) -> list[str]:
    """Groups (and single pods) whose outcome differs, in greedy's scheduling order."""
    seen, out = set(), []
    order = list(greedy.greedy_trace.order) + sorted(other.pods)
    for pod in order:
        p = cluster.pod_by_key.get(pod)
        if p is None:
            continue
        key = p.group_key or pod
        if key in seen:
            continue
        seen.add(key)
        if entity_differs(cluster, pod, greedy, other)[1]:
            out.append(key)
    return out


def sometimes(classification: str, drawn: Samples) -> str:
    """The classification over the sampled runs: ``greedy-suboptimal-sometimes`` when greedy
    reaches the optimum in some runs (the main one included) and misses it in others."""
    if classification == MODEL_MISMATCH or drawn.reaches_target is None:
        return classification
    hits = drawn.reaches_target + (0 if classification == GREEDY_SUBOPTIMAL else 1)
    misses = (drawn.runs - drawn.reaches_target) + (1 if classification == GREEDY_SUBOPTIMAL else 0)
    if hits and misses:
        return GREEDY_SUBOPTIMAL_SOMETIMES
    return classification
