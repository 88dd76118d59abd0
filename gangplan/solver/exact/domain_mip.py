"""The top admission tier proven by a stronger domain relaxation (issue 37): domain cuts, then
whole entity counts.

The LP of :mod:`.domain_bound` may stay above every placement: on the 10,000-node DGX shape its
value is 842.4, so its bound is 842, while the start admits 840. The LP spreads entities over
domains in fractions (0.75 of a 12-pod rack gang and 0.33 of a 6-pod one fill a rack that holds
one of them). When the start is below that bound, :func:`proven_at_start` (the engine's hook):

1. adds one round of Chvatal-Gomory cuts on the domains' capacity rows to the LP
   (:func:`cut_bound`, valid for whole entity counts, proof there). Its value rounded down is a
   bound of the tier (DGX: 841.125, so 841), and proves the start when it reaches it. When the
   cuts do not move the LP's floor (GB200: 864.0), the fractions are not where the start falls
   short, and nothing more is tried;
2. else asks the same relaxation, with the entity counts of the widest topology key's kinds made
   whole numbers, one question (:func:`integral_check`): does it admit at least ``value + 1``
   entities of the tier, where ``value`` is what the start admits? When the answer is no, no
   placement admits more than ``value`` and the start is optimal at the tier.

Why a "no" is a proof. Every feasible solution of the exact model gives a point of
:func:`.domain_bound.pooled_model` (the module doc of :mod:`.domain_bound`, steps 1-4) in which
the number of entities of each kind admitted in each domain is a whole number: an entity is
admitted in one domain or not at all. Requiring whole counts for some kinds therefore only drops
points no placement maps to, so the model with them is still a relaxation, and "no point with at
least ``value + 1`` entities" means no placement admits that many. The pods per pool stay
continuous and the other kinds' counts too (fewer integrality requirements: a weaker relaxation,
still valid).

How: HiGHS's branch-and-cut (through OR-tools' ``model_builder``, which passes HiGHS options)
on that model with the row ``sum of counts >= value + 1``, single-threaded, without presolve or
primal heuristics, at most one node (:data:`HIGHS_OPTIONS`): on DGX its first round of root cuts
makes the LP infeasible, and HiGHS reports INFEASIBLE. Anything else (a solution, the node limit, the time cap) proves nothing and
changes nothing. HiGHS decides with floating-point tolerances (1e-6 on rows and integrality),
like every LP-based bound of the engine; the LP optimum it cuts off is 2.4 entities above the
claim on the measured case, far outside them.

Only the widest key's kinds (the most nodes per domain, the blocks) get whole counts: on the
10,000-node DGX shape (load ~4) that model was proven infeasible in 2.8 s of HiGHS (plus 3.7 s to
pass it), with every keyed kind whole 7.7 s (plus 7.8 s), with only the racks' kinds whole
not within 32 s.

Budget (deterministic): the check is charged :func:`mip_units` of the model's size whatever it
does (at most what the run has left, :data:`MIN_LEFT`); HiGHS's own time limit is the
wall-clock safety net (:data:`WALL_PER_UNIT` per unit charged, at most what the run's cap has
left), and when it, not HiGHS, ends an unproven check the run is marked as stopped by the wall
clock (the answer may then differ on a faster machine).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from gangplan.solver.exact.budget import Budget
from gangplan.solver.exact.domain_bound import (
    BOUND_TOLERANCE,
    DomainBound,
    Relaxation,
    pooled_model,
)

HIGHS_OPTIONS: dict[str, object] = {
    "threads": 1,
    "presolve": "off",
    "mip_max_nodes": 1,
    "mip_heuristic_effort": 0.0,
    "mip_heuristic_run_feasibility_jump": False,
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
    "mip_heuristic_run_root_reduced_cost": False,
    "mip_heuristic_run_zi_round": False,
    "mip_heuristic_run_shifting": False,
    "output_flag": False,
}
"""One node, one thread, no primal heuristics (the question is infeasibility), no presolve (with
the dense row of the counts it took 22 s of the 10,000-node DGX model; the root without it
0.9 s)."""

MIP_COLUMNS_PER_UNIT = 15_000
"""What the check is charged: one unit per this many columns. Measured (10,000-node DGX, 55,510
columns, 14,381 whole): about 6.5 s of wall at load ~4 (passing the model 3.7 s, HiGHS 2.8 s)."""
WALL_PER_UNIT = 3.0
"""HiGHS's time limit: this many seconds per unit charged (the safety net, like the run's)."""
MIN_UNITS = 0.5
MIN_LEFT = 0.1
"""The check runs when the run has at least this much work left, and is charged at most what is
left: it takes the place of the top tier's search phase, which it makes unnecessary when it
proves the tier (the phase is then skipped) and which did not close the gap on the shapes it is
for (10,000-node DGX: 840 of 842 after the phase's 1.9 units)."""


def mip_units(columns: int) -> float:
    return max(MIN_UNITS, columns / MIP_COLUMNS_PER_UNIT)


@dataclass
class IntegralCheck:
    """The answer of :func:`integral_check`."""

    value: int
    """The start's value at the tier: the check asked for ``value + 1``."""
    proven: bool
    """True: no placement admits more than ``value`` (module doc)."""
    key: str
    """The topology key whose kinds' counts were whole numbers."""
    columns: int
    units: float
    seconds: float
    status: str
    """HiGHS's answer (``INFEASIBLE`` is the proof)."""
    wall_hit: bool = False
    cut: float | None = None
    """The LP after one round of cuts (:func:`cut_bound`), when it ran."""

    def record(self) -> dict[str, object]:
        """What the Result's ``params.domainBound.integral`` says (no timing: same bytes)."""
        out: dict[str, object] = {"asked": self.value + 1, "proven": self.proven}
        if self.cut is not None:
            out["cutLp"] = round(self.cut, 4)
        out["by"] = (
            "domain cuts"
            if self.status == "CUTS"
            else f"whole counts of {self.key}"
            if self.key
            else "domain cuts (whole counts not run: no work left)"
        )
        if self.key:
            out["units"] = round(self.units, 4)
        if self.wall_hit:
            out["stoppedBy"] = "wall-clock"
        return out


def widest_key(rel: Relaxation) -> str | None:
    """The key of ``rel`` with the most nodes per domain (ties: the first in ``rel.keys``)."""
    best, span = None, -1.0
    for i, k in enumerate(rel.keys):
        nodes: dict[int, int] = {}
        for p, doms in enumerate(rel.pool_domains):
            if doms[i] >= 0:
                nodes[doms[i]] = nodes.get(doms[i], 0) + len(rel.pool_nodes[p])
        if not nodes:
            continue
        mean = sum(nodes.values()) / len(nodes)
        if mean > span:
            best, span = k, mean
    return best


def integral_check(
    rel: Relaxation, value: int, budget: Budget | None = None
) -> IntegralCheck | None:
    """Is ``value`` the most the tier of ``rel`` admits, by the relaxation with whole counts for
    the widest key's kinds (module doc)? None when it does not apply (no keyed kind, nothing left
    of ``budget``, no HiGHS)."""
    from ortools.linear_solver.python import model_builder as mb

    key = widest_key(rel)
    if key is None or not any(e.key == key for e in rel.entities):
        return None
    t0 = time.perf_counter()
    model = mb.Model()
    pooled = pooled_model(rel, _ModelRows(model, mb), frozenset({key}))
    units = mip_units(pooled.columns)
    if budget is not None:
        if budget.left() < MIN_LEFT:
            return None
        charged = min(units, budget.left())
    total = mb.LinearExpr.sum(pooled.counted)
    model.add(total >= value + 1)
    model.maximize(total)  # (the cuts aim at the LP optimum: without it the root did not end)
    solver = mb.Solver("highs")
    if not solver.solver_is_supported():
        return None
    cap = WALL_PER_UNIT * units  # (of the check's own size, whatever it is charged)
    if budget is not None:
        cap = min(cap, max(1.0, budget.wall_left()))
    solver.set_solver_specific_parameters(
        "\n".join(f"{k}={_option(v)}" for k, v in {**HIGHS_OPTIONS, "time_limit": cap}.items())
    )
    status = solver.solve(model)
    seconds = time.perf_counter() - t0
    if budget is not None:
        budget.charge(charged)
    proven = status == mb.SolveStatus.INFEASIBLE
    wall_hit = not proven and solver.wall_time >= cap * 0.99
    if wall_hit and budget is not None:
        budget.note_wall()
    return IntegralCheck(
        value=value,
        proven=proven,
        key=key,
        columns=pooled.columns,
        units=charged if budget is not None else units,
        seconds=seconds,
        status=status.name,
        wall_hit=wall_hit,
    )


def cut_bound(
    rel: Relaxation, budget: Budget | None = None, plan: dict | None = None
) -> float | None:
    """The LP of :func:`.domain_bound.pooled_model` after one round of Chvatal-Gomory cuts on the
    domains' capacity rows (None when HiGHS does not solve it); its two solves are charged to
    ``budget`` like the domain LP (:func:`.domain_bound.lp_units`).

    Why the cuts are valid. For a domain ``D`` (of any key) and a size ``q`` of the chain, sum the
    pools' capacity rows over the pools of ``D``: the pods of sizes >= ``q`` there take at most
    ``C = sum of the pools' floor(h / q)``. The pods of the entities counted in a domain ``d``
    whose pools all lie in ``D`` are among them (``d`` is ``D`` itself, or a rack of the block
    ``D``), ``need * floor(size / q)`` per entity, so ``sum a_i w_i <= C`` with whole
    ``a_i = need * floor(size / q)`` (dropping every other pod only weakens it); likewise per
    type, ``sum need_i w_i <= the pools' fit of the type``. In every placement the counts ``w_i``
    are whole numbers, so for any ``lam > 0``, ``sum floor(a_i / lam) w_i <= floor(C / lam)``.
    Each row gets the cut with the ``lam`` (one of its coefficients) that the LP's solution
    violates most. ``plan`` (:attr:`.domain_bound.DomainBound.plan`): the LP's solution already
    known, so the cuts are found without solving it again (one solve instead of two); None when
    no cut is violated (the LP stays where it was).

    What it is for: a screen for :func:`integral_check`. On the 10,000-node DGX shape the round
    lowers the LP from 842.42 to 841.125 (its fractions are in the domain counts, where whole
    counts may prove more); on GB200 it stays at 864.0 (the start was short because of the
    packing, not the counts: the domain LP start reaches 864 now), where the whole-count check
    would run into its time cap. The domain LP start reads the same screen
    (:func:`screened_cut`) to decide whether more packings are worth their work."""
    from ortools.linear_solver import pywraplp

    from gangplan.solver.exact.domain_bound import lp_units, pooled_lp
    from gangplan.solver.exact.start.classpack import _quiet_stdout

    made = pooled_lp(rel, glop=False)
    if made is None:
        return None
    lp, pooled, obj = made
    values = None
    if plan is not None:  # the domain LP's solution: the first round's cuts without solving again
        values = {
            id(w): plan.get(e, {}).get(d, 0.0) for e, ws in pooled.admits.items() for d, w in ws
        }
    for rnd in range(2):
        if values is None:
            with _quiet_stdout():
                status = lp.Solve()
            if budget is not None:
                budget.charge(lp_units(lp.NumVariables()))
            if status != pywraplp.Solver.OPTIMAL:
                return None
            if rnd == 1:
                break
        cuts = _cg_cuts(rel, pooled, values)
        values = None
        if not cuts:
            return None if plan is not None and rnd == 0 else obj.Value()
        for terms, rhs in cuts:
            row = lp.Constraint(-lp.infinity(), rhs)
            for a, w in terms:
                row.SetCoefficient(w, a)
    return obj.Value()


def screened_cut(domain: DomainBound, budget: Budget | None = None) -> float | None:
    """:func:`cut_bound` of ``domain``'s relaxation from its LP solution, computed once per
    ``domain`` (kept on it): the domain LP start (:mod:`.domain_start`) reads it to decide whether
    more packings may reach the bound, :func:`proven_at_start` after it."""
    if not hasattr(domain, "_screened_cut"):
        domain._screened_cut = (  # type: ignore[attr-defined]
            None if domain.relaxation is None else cut_bound(domain.relaxation, budget, domain.plan)
        )
    return domain._screened_cut  # type: ignore[attr-defined]


CUT_VIOLATION = 1e-4


def _cg_cuts(
    rel: Relaxation, pooled, values: dict[int, float] | None = None
) -> list[tuple[list[tuple[float, object]], float]]:
    """The most violated Chvatal-Gomory cut of each domain row (see :func:`cut_bound`)."""
    pools_of: dict[tuple[int, int], list[int]] = {}
    for p, doms in enumerate(rel.pool_domains):
        for i, d in enumerate(doms):
            if d >= 0:
                pools_of.setdefault((i, d), []).append(p)
    key_index = {k: i for i, k in enumerate(rel.keys)}
    inside: dict[tuple[int, int], list[tuple[object, object, float]]] = {}
    for e, ws in pooled.admits.items():
        if e.key is None:
            continue
        for d, w in ws:
            pools = pools_of.get((key_index[e.key], d), [])
            if not pools:
                continue
            for i in range(len(rel.keys)):
                outer = {rel.pool_domains[p][i] for p in pools}
                if len(outer) == 1 and min(outer) >= 0:  # every pool of d lies in one domain
                    v = values[id(w)] if values is not None else w.solution_value()
                    inside.setdefault((i, min(outer)), []).append((e, w, v))
    cuts = []
    for (i, d), items in sorted(inside.items(), key=lambda kv: kv[0]):
        pools = pools_of[(i, d)]
        rows = []
        for q in sorted({q for p in pools for q in rel.pool_caps[p]}):
            cap = sum(rel.pool_caps[p].get(q, 0) for p in pools)
            rows.append(([(e.need * (rel.sizes[e.type] // q), w, v) for e, w, v in items], cap))
        for t in sorted({t for p in pools for t in rel.pool_fit[p]}):
            cap = sum(rel.pool_fit[p].get(t, 0) for p in pools)
            rows.append(([(e.need if e.type == t else 0, w, v) for e, w, v in items], cap))
        for terms, cap in rows:
            terms = [(a, w, v) for a, w, v in terms if a > 0]
            active = sorted({a for a, _, v in terms if v > 1e-9})
            best = None
            for lam in active:
                rhs = math.floor(cap / lam + 1e-9)
                viol = sum(math.floor(a / lam) * v for a, _, v in terms) - rhs
                if viol > CUT_VIOLATION and (best is None or viol > best[0]):
                    best = (viol, lam, rhs)
            if best is not None:
                _, lam, rhs = best
                cuts.append(
                    (
                        [(float(a // lam), w) for a, w, _ in terms if a // lam > 0],
                        float(rhs),
                    )
                )
    return cuts


def _option(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


class _ModelRows:
    """:func:`.domain_bound.pooled_model`'s writer for an OR-tools ``model_builder`` model."""

    def __init__(self, model, mb) -> None:
        self.model, self.mb = model, mb

    def var(self, ub: float, integral: bool = False):
        return self.model.new_var(0.0, math.floor(ub) if integral else ub, integral, None)

    def row(self, lo: float | None, hi: float, terms) -> None:
        expr = self.mb.LinearExpr.weighted_sum([x for _, x in terms], [a for a, _ in terms])
        self.model.add(expr <= hi if lo is None else expr == hi)  # (lo is only ever == hi)


def proven_at_start(
    built, domain: DomainBound, value: int, budget: Budget | None
) -> IntegralCheck | None:
    """The engine's hook (module doc): when the start admits ``value`` < the domain bound at the
    top tier, the tier's upper bound (``Tier.upper``, which :mod:`.solve` holds and proves a phase
    by) becomes ``value`` when the cuts or the whole counts prove it, else the cut LP's floor when
    that is lower. Returns the check (recorded in ``params.domainBound.integral``), else None (the
    cuts did not move the bound)."""
    from dataclasses import replace

    if domain.relaxation is None or not built.tiers or value >= domain.bound:
        return None
    tier = built.tiers[0]
    if tier.name != domain.tier:
        return None
    cut = screened_cut(domain, budget)
    if cut is None or math.floor(cut + BOUND_TOLERANCE) >= domain.bound:
        return None  # the cuts do not move the LP: whole counts are not where the gap is
    floor = max(value, math.floor(cut + BOUND_TOLERANCE))
    if floor <= value:  # the cuts alone prove the start
        found = IntegralCheck(value, True, "", 0, 0.0, 0.0, "CUTS")
    else:
        found = integral_check(domain.relaxation, value, budget)
        if found is None:
            found = IntegralCheck(value, False, "", 0, 0.0, 0.0, "NOT RUN")
    found.cut = cut
    upper = value if found.proven else floor
    if upper < tier.upper:
        built.tiers[0] = replace(tier, upper=upper)
    return found


__all__ = [
    "IntegralCheck",
    "cut_bound",
    "integral_check",
    "proven_at_start",
    "screened_cut",
    "widest_key",
]
