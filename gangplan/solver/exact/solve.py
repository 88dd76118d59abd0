"""Solve the built model (:mod:`.build`) tier by tier.

Why phases: one weighted objective needs weights that make a higher
tier dominate every lower one; with admission counts, pod counts and node weights the numbers get
huge, the LP gets weak, and the measured single-solve run did not even secure the first tier in
60 s at 5,000 x 2,048. Solving tier by tier keeps each objective small: maximise tier i with every
previous tier held at ``>=`` the value found (``>=`` rather than ``==``, so a phase that timed out
stays feasible and a later phase may still improve it), and start each phase from the previous
solution as a complete hint (bulk copy into ``solution_hint``), so a phase can never return worse
than what is already known. The incumbent's value of the new tier is also a valid lower bound (it
is a feasible solution of the phase's model), so ``tier >= incumbent value`` is added too.

A tier whose incumbent value already reaches its trivial upper bound (every entity of that
priority admitted, every pod placed) is proven without a solve; the bound is also added as a
constraint, so the solver stops as soon as it reaches it.

The status (OPTIMAL / FEASIBLE) and the gap refer to the *decision* tiers (admitted per priority,
gpus, placed, topology, spread): the tie-break tier only orders equal optima. The decision phases
may use the whole limit; the tie-break runs on what they leave, at most ``TIEBREAK_SHARE`` of the
limit (:func:`tiebreak_reserve`), and is reported without a solve when they leave (almost)
nothing. Its value and bound go to ``Result.objective`` / ``Result.bound``, its status and gap to
``SolveOutcome.tiebreak()`` (the trace's ``tiebreak``), never into the Result's status or gap: an
unproven, skipped or failed tie-break leaves proven decision tiers OPTIMAL.

What was measured and tried on the way to these choices (the busy 1,000 x 2,048 shape: what
takes the time, and the solver settings that did not help) is in docs/explanation/exact-engine.md,
"Solving tier by tier: what was measured". What helps: a phase gets what is left minus a reserve
per later tier (``LATER_TIER_SHARE``) instead of an even split, each decision phase's solution is
topped up with the entities it left out (:func:`topped_up`), and the packed warm start
(:mod:`.start.packing`).

Solver settings: ``num_workers`` as asked (1 by default, :data:`gangplan.models.defaults.WORKERS`),
the seed as ``random_seed``, and with two or more workers CP-SAT's deterministic parallel mode.

Determinism (issue 37): the model is built in a fixed order (classes, nodes, domains all sorted),
decoding is deterministic, every limit is deterministic work (:class:`.budget.Budget`), and CP-SAT
runs single-threaded (the default ``workers=1``) or in its deterministic parallel mode
(``interleave_search``, :data:`.budget.DETERMINISTIC_PARALLEL`), so a solve returns the same
solution on every run and under any load, unless the wall-clock cap stopped it (recorded). The
racing portfolio CP-SAT runs otherwise is not deterministic (OR-tools issue 2159).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from gangplan.models.trace import PhaseTiming, SolvePhase, TiebreakReport
from gangplan.solver.exact.budget import Budget, configure_solver, tier_budget
from gangplan.solver.exact.build import BuiltModel
from gangplan.solver.exact.objective import TIEBREAK
from gangplan.solver.exact.start.check import model_accepts
from gangplan.solver.exact.start.hint import (
    better,
    counts_from_solution,
    entities_in_queue_order,
    set_hint,
)
from gangplan.solver.exact.start.packing import packed_start
from gangplan.solver.exact.variables import Counts, Tier

MIN_PHASE_SECONDS = 0.05
MERGED_SHARE = 0.25
MAX_BAND_PRODUCT = 10**12
"""Decision tiers are merged into one band-weighted phase while the weights stay below this (far
from 2^53, since CP-SAT reports objectives as floats); above it they get phases of their own."""
TIEBREAK_SHARE = 0.2
"""The tie-break phase gets at most this share of the time limit (at least MIN_TIEBREAK_SECONDS,
at most MAX_TIEBREAK_SHARE of the limit): it only orders equal optima, so it must not eat the
budget the decision tiers may need. The decision phases may use the whole limit; the tie-break
runs on what they leave, up to the reserve, and is reported unproven without a solve when they
leave less than SKIP_TIEBREAK_SECONDS (they were not proven then anyway, or barely)."""
MIN_TIEBREAK_SECONDS = 0.5
SKIP_TIEBREAK_SECONDS = 0.1
MAX_TIEBREAK_SHARE = 0.5


def tiebreak_reserve(time_limit: float) -> float:
    """Seconds kept for the tie-break phase out of ``time_limit`` (see TIEBREAK_SHARE)."""
    return min(
        max(MIN_TIEBREAK_SECONDS, TIEBREAK_SHARE * time_limit), MAX_TIEBREAK_SHARE * time_limit
    )


@dataclass
class PhaseReport:
    tier: str
    status: str
    value: int
    bound: float
    seconds: float
    phase: int = 0
    """Index of the solve that decided the tier (merged tiers share one solve and its seconds)."""
    timing: PhaseTiming = field(default_factory=PhaseTiming)
    """Where the phase's seconds went: ``hint`` (complete hint from the incumbent), ``solver``
    (CP-SAT's wall time, presolve included), ``decode`` (counts from the response), ``topUp``;
    ``budget`` is the time it was given. Shared by the reports of one merged solve."""

    def to_trace(self) -> SolvePhase:
        """The phase as the trace records it (seconds rounded, a bound only when finite)."""
        return SolvePhase(
            tier=self.tier,
            phase=self.phase,
            status=self.status,
            value=self.value,
            bound=self.bound if math.isfinite(self.bound) else None,
            seconds=round(self.seconds, 4),
            timing=self.timing.rounded(),
        )


@dataclass
class SolveOutcome:
    status: str  # OPTIMAL / FEASIBLE / INFEASIBLE / UNKNOWN
    counts: Counts | None
    phases: list[PhaseReport] = field(default_factory=list)
    superseded: list[PhaseReport] = field(default_factory=list)
    """Merged solves that did not prove every tier they held: their tiers were solved again one at
    a time (the reports in ``phases``); kept so that the time they took is accounted for."""
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall time of the ``decision`` phases (superseded merged solves included) and of the
    ``tiebreak`` phase, and the tie-break's ``tiebreakBudget``."""

    def tiebreak(self) -> TiebreakReport | None:
        """The tie-break phase's status, value, bound and relative gap (None without one): its
        own report, apart from the decision tiers' status, which it never changes."""
        ph = next((p for p in self.phases if p.tier == TIEBREAK), None)
        if ph is None:
            return None
        bound = ph.bound if math.isfinite(ph.bound) else None
        gap = None if bound is None else round(abs(bound - ph.value) / max(1.0, abs(bound)), 6)
        # solved: False when no time was left after the decision tiers (value of their solution)
        return TiebreakReport(
            status=ph.status,
            value=ph.value,
            bound=bound,
            gap=gap,
            seconds=round(ph.seconds, 4),
            budget=round(self.seconds.get("tiebreakBudget", 0.0), 4),
            solved=False if self.seconds.get("tiebreakSkipped") else None,
        )


SOLVER_PARAMS: dict[str, object] = {"max_presolve_iterations": 1}
"""CP-SAT parameters every phase uses (callers may extend or override the dict). One presolve
iteration: on the 5,000-node x 2,048-pod GPU cell, presolve (single-threaded, mostly probing)
took 3.8 of 4.6 s with the default 3 iterations and 2.0 of 2.8 s with one, same proof."""

LARGE_MODEL_VARIABLES = 20_000
LARGE_MODEL_PARAMS: dict[str, object] = {"cp_model_probing_level": 0, "cp_model_presolve": False}
"""Added for models with more than LARGE_MODEL_VARIABLES variables: no probing in presolve (issue
15). Every phase presolves again, and probing was most of it: on the busy 5,000 x 2,048 cell
(35,905 variables) the top tier's presolve took 1.5 s with probing (which then proved the bound 84
by itself) and 0.7 s without (the search proves 84 by 1.0 s); the three seeds' decision gaps at
10 s went from 4.5 / 18.8 / 11.7 % to 0 (OPTIMAL in 6.3 s) / 1.6 / 1.4 % (load ~1.5-2.5). Then
(issue 27) no presolve at all: every phase presolved the same model again (0.7 s each at 5,000
nodes), and the starts already reach most tiers' bounds, so a phase is mostly a proof from the
root LP; busy 5,000 x 2,048 at 10 s, the decision phases took 4.4 / 2.4 / 3.5 s (all OPTIMAL)
instead of 7.1 / 5.0 / 7.5 s (seed 0 FEASIBLE, 1.3 %; seed 2 FEASIBLE, 0.4 %), load 1.1-2.0. At
1,000 nodes (6,000-7,600 variables) no presolve was worse (seed 0 and 1 FEASIBLE), so small
models keep presolve and probing, and their search (and which of equal optima it returns) is
unchanged.
Parameters never change what is proven, only how fast."""


def solver_for(
    seconds: float, workers: int, seed: int, budget: Budget | None = None
) -> cp_model.CpSolver:
    """A CP-SAT solver for a solve of ``seconds`` units of deterministic work (at most what
    ``budget`` has left; its wall-clock cap as the time limit)."""
    solver = cp_model.CpSolver()
    p = solver.parameters
    configure_solver(
        p,
        budget if budget is not None else Budget(seconds),
        max(MIN_PHASE_SECONDS, seconds),
        workers=workers,
        seed=seed,
    )
    p.log_search_progress = False
    if workers >= 2:
        p.extra_subsolvers.append("max_lp_sym")
    for name, value in SOLVER_PARAMS.items():
        setattr(p, name, value)
    return solver


def group_tiers(tiers: list[Tier]) -> list[list[Tier]]:
    """Consecutive decision tiers merged while their band weights stay small; tie-break alone."""
    groups: list[list[Tier]] = []
    span = 0
    for tier in tiers:
        width = tier.upper + 1
        if (
            groups
            and tier.name != TIEBREAK
            and groups[-1][-1].name != TIEBREAK
            and span * width <= MAX_BAND_PRODUCT
        ):
            groups[-1].append(tier)
            span *= width
        else:
            groups.append([tier])
            span = width
    return groups


def band_weights(group: list[Tier]) -> list[int]:
    """Weights that make each tier dominate all lower ones: w_i = prod_{j>i} (upper_j + 1)."""
    weights, w = [], 1
    for tier in reversed(group):
        weights.insert(0, w)
        w *= tier.upper + 1
    return weights


def solve_phases(
    em: BuiltModel,
    *,
    budget: Budget,
    workers: int,
    seed: int,
    incumbent: Counts | None,
    tiebreak_phase: bool = True,
) -> SolveOutcome:
    """Maximise each phase in turn, the previous ones held at >= their value (see module doc).

    Merged decision tiers first get ``MERGED_SHARE`` of their budget as one band-weighted solve
    (not on large contested models, :func:`_skip_merged`); when that does not prove them all, they are solved one tier at a time from its solution (the
    per-tier phases proved the top tier in 1.8 s on the busy 1,000 x 2,048 cell where the merged
    solve was still 2 admissions short after 30 s; on easy cells the merged solve saves presolves).

    ``tiebreak_phase`` False: the tie-break tier is reported on the decision tiers' solution,
    unsolved (a caller that reads the decision tiers only: the decisive step's probes).
    """
    began = time.perf_counter()
    time_limit = budget.left()  # units: every share below is of what the phases have
    out = SolveOutcome(status="OPTIMAL", counts=incumbent)
    for tier in em.tiers:
        em.model.add(tier.expr <= tier.upper)  # valid, and lets a phase stop once it reaches it
    decision = [t for t in em.tiers if t.name != TIEBREAK]
    tiebreak = [t for t in em.tiers if t.name == TIEBREAK]
    reserve = tiebreak_reserve(time_limit) if tiebreak else 0.0
    plan = group_tiers(decision)
    phase = 0

    def run(group: list[Tier], units: float) -> bool:
        nonlocal phase
        done = len(out.phases)
        ok = _solve_group(em, group, out, units, workers, seed, budget)
        if ok and group[-1].name != TIEBREAK and budget.left() > TOP_UP_SECONDS:
            t0 = time.perf_counter()
            out.counts = topped_up(em, out.counts, budget)
            for report in out.phases[done:]:
                report.timing.top_up = time.perf_counter() - t0
        for report in out.phases[done:]:
            report.phase = phase
        phase += 1
        return ok

    def decided() -> None:
        out.seconds["decision"] = time.perf_counter() - began

    for i, group in enumerate(plan):
        left = len(plan) - i
        share = budget.left() / left
        if len(group) > 1 and not _skip_merged(em, group, out.counts):
            done = len(out.phases)
            if not run(group, share * MERGED_SHARE):
                decided()
                return out
            if all(p.status == "OPTIMAL" for p in out.phases[done:]):
                continue
            out.superseded += out.phases[done:]
            del out.phases[done:]
        for j, tier in enumerate(group):
            rest = budget.left()
            later = left - 1 + len(group) - j - 1
            if not run([tier], tier_budget(rest, later, time_limit)):
                decided()
                return out
    decided()
    if tiebreak:
        t0 = time.perf_counter()
        out.seconds["tiebreakBudget"] = units = min(reserve, budget.left())
        if (units < SKIP_TIEBREAK_SECONDS or not tiebreak_phase) and out.counts is not None:
            # The decision tiers needed the time (they may use the reserve; the tie-break only
            # orders equal optima): report its value on their solution, unproven, without a solve.
            t = tiebreak[0]
            out.phases.append(
                PhaseReport(
                    t.name,
                    "FEASIBLE",
                    t.value(out.counts),
                    float(t.upper),
                    0.0,
                    phase=phase,
                    timing=PhaseTiming(budget=units),
                )
            )
            out.seconds["tiebreakSkipped"] = 1.0
        elif not run(tiebreak, units):
            # Only a bug could make the tie-break phase infeasible (its start is a solution of
            # it): the decision tiers keep their own status and the solution they found.
            out.status = "OPTIMAL" if out.counts is not None else out.status
        out.seconds["tiebreak"] = time.perf_counter() - t0
        if out.counts is None:
            return out
    if any(p.status != "OPTIMAL" and p.tier != TIEBREAK for p in out.phases):
        out.status = "FEASIBLE"
    return out


MERGE_MAX_VARIABLES = 5_000
"""Models with more variables skip the merged solve of a group whose first tier the start leaves
short of its trivial upper bound (:func:`_skip_merged`)."""


def _skip_merged(em: BuiltModel, group: list[Tier], counts: Counts | None) -> bool:
    """Go straight to the one-tier-at-a-time phases: the model is large (more than
    ``MERGE_MAX_VARIABLES`` variables) and the start does not reach the first tier's trivial
    upper bound (entities of that priority are left out: the tiers are contested, and a merged
    solve does not prove them). On busy 1,000 and 5,000 x 2,048 the merged solve never proved
    its tiers and cost 1.0-1.5 s of the 10 s before the per-tier phases (load 2-3.4). Small models
    and uncontested groups keep the merged solve, which saves presolves on easy cells."""
    if counts is None or len(em.model.proto.variables) <= MERGE_MAX_VARIABLES:
        return False
    return group[0].value(counts) < group[0].upper


TOP_UP_SECONDS = 0.2
"""Work cap (units) of the top-up packing after a decision phase (:func:`topped_up`)."""


def topped_up(em: BuiltModel, counts: Counts | None, budget: Budget | None = None) -> Counts | None:
    """``counts`` plus the entities it leaves out, packed into the room it leaves
    (:func:`.start.packing.packed_start` on top of it), when that is lexicographically better on the
    decision tiers and the model itself accepts it (:func:`model_accepts`), else ``counts``.

    A phase maximises its own tier only (the lower ones are not held yet), so its solution often
    drops lower-priority entities that still fit: on busy 1,000 x 2,048 (seed 1) the second
    tier's solve left the third tier at 3 admissions and CP-SAT then searched from there (once
    20 s without finding better than 0), where packing the left-out entities into the free room
    gives 7 in 0.07 s. Only a better start for the next phase: the phases still prove each tier."""
    if counts is None:
        return counts
    left = entities_in_queue_order(em.em, counts.per_class)
    if not left:
        return counts
    more, _ = packed_start(
        em.em, em.tiers, counts, left, seconds=TOP_UP_SECONDS, restarts=2, budget=budget
    )
    if better(em.tiers, more, counts) and model_accepts(em, more, time_limit=5.0, budget=budget):
        return more
    return counts


def _solve_group(
    em: BuiltModel,
    group: list[Tier],
    out: SolveOutcome,
    units: float,
    workers: int,
    seed: int,
    budget: Budget,
) -> bool:
    """One phase of ``units`` of work: maximise the band-weighted sum of ``group``; False when
    the run must stop."""
    model, start = em.model, time.perf_counter()
    weights = band_weights(group)
    expr = cp_model.LinearExpr.weighted_sum([t.expr for t in group], weights)
    upper = sum(w * t.upper for w, t in zip(weights, group, strict=True))
    timing = PhaseTiming(budget=units)
    previous, known = out.counts, None
    if out.counts is not None:
        known = sum(w * t.value(out.counts) for w, t in zip(weights, group, strict=True))
        model.add(expr >= known)
        if known >= upper:
            out.phases += [
                PhaseReport(t.name, "OPTIMAL", t.value(out.counts), float(t.upper), 0.0)
                for t in group
            ]
            return True
        t0 = time.perf_counter()
        set_hint(em, out.counts)
        timing.hint = time.perf_counter() - t0
    model.maximize(expr)
    solver = solver_for(units, workers, seed, budget)
    if len(model.proto.variables) > LARGE_MODEL_VARIABLES:
        for name, value in LARGE_MODEL_PARAMS.items():
            setattr(solver.parameters, name, value)
    status = solver.solve(model)
    timing.solver = solver.wall_time
    timing.work = budget.after(solver, status in (cp_model.OPTIMAL, cp_model.INFEASIBLE))
    t0 = time.perf_counter()
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        out.counts = counts_from_solution(em, list(solver.response_proto.solution))
    elif status == cp_model.INFEASIBLE or out.counts is None:
        name = "INFEASIBLE" if status == cp_model.INFEASIBLE else "UNKNOWN"
        out.phases += [
            PhaseReport(t.name, name, 0, float("nan"), time.perf_counter() - start, timing=timing)
            for t in group
        ]
        out.status = name
        return False
    timing.decode = time.perf_counter() - t0
    seconds = time.perf_counter() - start
    values = [t.value(out.counts) for t in group]
    total = sum(w * v for w, v in zip(weights, values, strict=True))
    if previous is not None and total == known and better(em.tiers, previous, out.counts):
        # The phase did not improve its tiers, and its solution is worse on the lower ones than the
        # start it was given (a phase maximises its own tiers only): keep the start, which
        # satisfies every constraint so far (it reaches ``known`` == ``total`` on this phase).
        out.counts = previous
    if status == cp_model.OPTIMAL:
        bound = total
    elif status == cp_model.FEASIBLE:
        bound = max(total, int(solver.best_objective_bound))
    else:  # UNKNOWN: stopped before finding anything, its bound (0) proves nothing
        bound = upper
    reports = _tier_reports(group, weights, values, bound, seconds)
    for r in reports:
        r.timing = timing
    out.phases += reports
    model.add(expr >= total)
    return True


def _tier_reports(group, weights, values, bound: int, seconds: float) -> list[PhaseReport]:
    """Per-tier bounds from the phase bound: tier i is bounded by what is left of the bound once
    every higher tier is at its value, as long as every higher tier is proven (value == bound)."""
    out, rest, proven = [], bound, True
    for t, w, v in zip(group, weights, values, strict=True):
        tier_bound = min(t.upper, rest // w) if proven else t.upper
        ok = proven and tier_bound <= v
        out.append(
            PhaseReport(
                t.name, "OPTIMAL" if ok else "FEASIBLE", v, float(max(tier_bound, v)), seconds
            )
        )
        proven = ok
        rest -= w * v
    return out


def feasible(
    em: BuiltModel,
    *,
    workers: int = 1,
    seed: int = 0,
    time_limit: float = 30.0,
    budget: Budget | None = None,
    model: cp_model.CpModel | None = None,
) -> bool | None:
    """Is the model (without objective) feasible? None when the limit (``time_limit`` units of
    deterministic work, at most what ``budget`` has left) hit first. ``model``: a copy of
    ``em.model`` with constraints of the caller's to solve instead (its objective is cleared)."""
    model = em.model if model is None else model
    model.clear_objective()
    budget = budget if budget is not None else Budget(time_limit)
    solver = solver_for(time_limit, workers, seed, budget)
    status = solver.solve(model)
    budget.after(solver, status in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE))
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return True
    if status == cp_model.INFEASIBLE:
        return False
    return None
