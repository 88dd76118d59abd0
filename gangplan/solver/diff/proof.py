"""What the exact engine proved, tier by tier (:func:`optimal_proof`), and what an open tier
means for the verdict: one reading of the exact Result's phases, used by the classification, the
diff JSON (``optimalProof``), the table and the suite.

A tier is *proven* when its phase ended OPTIMAL and every tier solved before it is proven (each
phase holds the tiers above it at the values found, so a proof below an open tier is only a proof
relative to that value). Tiers that are not solved on their own (``brokenGroups`` and the total
``victims``, which follow from the victims per priority; a ``pdbViolations`` tier without a PDB in
reach) are proven when everything above them is. The tie-break tier only orders equal optima: it
is listed, never compared and never opens a proof.
"""

from __future__ import annotations

import math

from gangplan.models.documents import OptimalProof, TierProof
from gangplan.models.objective import (
    ADMITTED_PREFIX,
    PDB_VIOLATIONS,
    PLACED,
    VICTIMS_PREFIX,
    is_cost,
)
from gangplan.models.result import Result, Status

TIEBREAK_TIER = "tiebreak"


def optimal_proof(greedy: Result, optimal: Result) -> OptimalProof:
    """The per-tier proof of ``optimal`` (an exact Result) against ``greedy``'s objective."""
    trace = optimal.exact_trace
    phases = {ph.tier: ph for ph in (trace.phases or [])} if trace is not None else {}
    solved = optimal.status in (Status.OPTIMAL, Status.FEASIBLE) and bool(phases)
    ok = solved
    tiers: list[TierProof] = []
    for tier, value in optimal.objective.items():
        ph = phases.get(tier)
        if tier == TIEBREAK_TIER:
            proven = ok and ph is not None and ph.status == "OPTIMAL"
        else:
            proven = ok and (ph is None or ph.status == "OPTIMAL")
            ok = proven
        bound = optimal.bound.get(tier)
        if bound is not None and not math.isfinite(bound):
            bound = None
        if proven and bound is None:
            bound = float(value)
        compared = tier != TIEBREAK_TIER and tier in greedy.objective
        tiers.append(
            TierProof(
                tier=tier,
                optimal=float(value),
                bound=bound,
                proven=proven,
                compared=compared,
                greedy=float(greedy.objective[tier]) if compared else None,
            )
        )
    open_tiers = [t for t in tiers if t.compared and not t.proven]
    first = open_tiers[0] if open_tiers else None
    gain = _might_gain(first) if first is not None else None
    if optimal.status == Status.UNKNOWN or not solved:
        stopped = "no-solution"
    elif optimal.status == Status.OPTIMAL:
        stopped = "proof"
    else:
        stopped = stopped_by(optimal)
    restricted = restricted_model(optimal)
    if restricted:  # the bounds hold for the model, which leaves part of the snapshot out
        for t in tiers:
            if t.compared:
                t.proven = False
        open_tiers = [t for t in tiers if t.compared]
        first = open_tiers[0] if open_tiers else None
        gain = None
        stopped = "restricted-model"
    proof = OptimalProof(
        proven=not open_tiers and solved,
        open_tiers=[t.tier for t in open_tiers],
        first_open=first.tier if first is not None else None,
        might_gain=gain,
        stopped_by=stopped,
        tiers=tiers,
    )
    if not proof.proven:
        proof.advice = advice(proof, optimal)
    return proof


def admission_proven(proof: OptimalProof | None) -> bool:
    """Every compared ``admitted[p=P]`` tier is proven: what the optimum admits is a fact, not a
    best guess (the suite's ``expect-optimal`` needs it)."""
    return proof is not None and all(
        t.proven for t in proof.tiers if t.compared and t.tier.startswith(ADMITTED_PREFIX)
    )


def stopped_by(optimal: Result) -> str:
    """``work-limit`` or ``wall-clock``: what stopped an exact run that did not prove every
    decision tier (the run's ``params.stoppedBy``; runs that did not record it had only a wall
    clock)."""
    value = optimal.options.stopped_by
    return value if value in ("work-limit", "wall-clock") else "wall-clock"


def _might_gain(t: TierProof) -> float | None:
    """How much better than greedy a placement might be at ``t``, from the proven bound."""
    if t.bound is None or t.greedy is None:
        return None
    gain = (t.greedy - t.bound) if is_cost(t.tier) else (t.bound - t.greedy)
    return max(0.0, float(gain))


def open_tier_words(tier: str, gain: float | None) -> str:
    """``up to 51 more groups at priority 100 might be admitted`` and the like, for the first
    open tier."""
    k = "an unknown number of" if gain is None else f"{gain:g}"
    if tier.startswith(ADMITTED_PREFIX):
        prio = tier[len(ADMITTED_PREFIX) : -1]
        return f"up to {k} more groups or single pods at priority {prio} might be admitted"
    if tier == PLACED:
        return f"up to {k} more pods might be placed"
    if tier == PDB_VIOLATIONS:
        return f"up to {k} fewer PodDisruptionBudget violations might do"
    if tier.startswith(VICTIMS_PREFIX):
        prio = tier[len(VICTIMS_PREFIX) : -1]
        return f"up to {k} fewer victims at priority {prio} might do"
    return f"tier {tier} might be better by up to {k}"


def restricted_model(optimal: Result) -> list[str]:
    """What the model of an exact Result leaves out of the snapshot (devices it does not offer,
    claims it keeps on one node: ``params.restrictedModel``): its optimum may be below the true
    one, so no tier it reports is a proof about the snapshot."""
    return list(optimal.params.get("restrictedModel") or [])


def advice(proof: OptimalProof, optimal: Result) -> str:
    """The open tier in words a person acts on, with the flag that would give the solver more.
    When the best placement found already beats greedy there, how far it might still be from the
    optimum is said too (``mightGain`` stays relative to greedy)."""
    first = next((t for t in proof.tiers if t.tier == proof.first_open), None)
    if proof.stopped_by == "restricted-model":
        return (
            "not proven: the exact model leaves part of the snapshot out, so its optimum may be "
            "below the true one: " + restricted_model(optimal)[0].removeprefix("exact engine: ")
        )
    if proof.stopped_by == "no-solution":
        head = "not proven: the exact engine found no placement within its budget"
    elif (
        first is not None
        and first.greedy is not None
        and first.bound is not None
        and first.optimal != first.greedy
    ):
        found = abs(first.optimal - first.greedy)
        rest = abs(first.bound - first.optimal)
        head = (
            f"not proven: {open_tier_words(proof.first_open or '', proof.might_gain)} than greedy's; the best "
            f"placement found gets {found:g} of them, up to {rest:g} more are open"
        )
    else:
        head = f"not proven: {open_tier_words(proof.first_open or '', proof.might_gain)}"
    limit = optimal.options.time_limit
    more = 60.0 if not limit else max(60.0, 6 * float(limit))
    return f"{head}; rerun with --time-limit {more:g}"
