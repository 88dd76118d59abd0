"""A third warm start for the exact engine: the packing solved over classes of nodes.

On busy clusters the decision tiers' LP bound is tight at once and the time goes into finding the
last admission (busy 1,000 x 2,048, seed 1: bound 39 on the second tier; CP-SAT's LNS on two
workers reaches 38 and 39 only sometimes, the packed start of :mod:`.packing` has 37; the optimum
uses nearly all free GPUs). Here the same packing is written without per-node variables, for
*one-dimensional divisible* requests (:func:`level_start`): every pending request is ``g`` times one
unit vector and the ``g`` divide each other (GPU pods of 1, 2, 4, 8 GPUs whose CPU and memory go per
GPU). A node then holds ``h = min_r floor(free_r / u_r)`` units, and pods fit a set of nodes iff for
every size ``g``: sum over the pods of size >= g of size / g <= sum over the nodes of floor(h / g).
(Placing larger pods, multiples of ``g``, anywhere leaves the same floor(. / g) room, so largest
first into any node with room always succeeds.) Nodes are pooled per eligibility and domain of every
key an entity is confined to; a pool's capacity is those sums. The model counts pods per (type,
pool), confined and not, and admitted entities per shape (identical requests, size, eligibility,
priority, key; per domain when confined), and maximises the decision tiers: the top tier (at least
where the packed start has it), then the rest band-weighted, by HiGHS through OR-tools' ``pywraplp``
(a small pure integer program with a tight LP: LP-guided branching finds 39 in ~1 s where CP-SAT
stays at 38 after 9 s on the same model; CP-SAT is the fallback without HiGHS). The solution is
decoded largest pods first, best fit, and used only when it beats the packed start and the validator
and :func:`.check.model_accepts` accept it: a start, never a proof, so the search stays exact.
Busy 1,000 x 2,048, seed 1, 10 s: decision tiers OPTIMAL (65 / 39 / 7 / 551) after 2.6 s of
phases, where they stayed FEASIBLE (37-38 of 39) before.

The engine's start is *lean* (issue 27, :func:`class_start`): the top tier is left to the floor
row and the decision phases (HiGHS spent 0.4-2.0 s proving it and then found no solution for the
rest in every seed); the lower admission tiers are solved band-weighted only when the level
model's LP shows the packed start can be beaten there, after more packing orders had a go at the
LP's cap; CP-SAT polishes what HiGHS leaves from HiGHS's solution. :func:`level_start` without
``lean`` solves every tier as before.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from ortools.sat.python import cp_model

from gangplan.models.objective import PLACED, admitted_tier
from gangplan.solver.exact.budget import (
    HIGHS_NODES_PER_UNIT,
    MIN_SOLVE_SECONDS,
    Budget,
    configure_solver,
    tier_budget,
)
from gangplan.solver.exact.start.check import model_accepts
from gangplan.solver.exact.start.hint import (
    better,
    default_incumbent,
    entities_in_queue_order,
    free_after,
    placements_from_counts,
    repaired,
)
from gangplan.solver.exact.start.packing import packed_start
from gangplan.solver.exact.variables import Counts

if TYPE_CHECKING:
    from gangplan.solver.exact.build import BuiltModel

MAX_POOLS = 400
"""More pools (busy 5,000 x 2,048: ~840, a ~30,000-variable level model) and there is no class
start: HiGHS then needs more than the class start's time for the second tier, and the shape-slot
model does well there on its own (busy 1,000 x 2,048: ~170 pools, ~6,500 variables)."""


NEAR_MULTIPLE = 1e-3
"""Requests within this relative distance of ``g`` times the unit count as multiples (the unit then
rounded up to cover them): 10,000-node GB200 (issue 37) asks 1 / 2 / 4 GPUs with memory per GPU
that differs by 1 MiB in 770 GiB between sizes, which left the whole shape without a class start."""


def _unit_sizes(em, classes: list[int]) -> tuple[np.ndarray, dict[int, int]] | None:
    """A unit request vector ``u`` and per class ``g`` with ``req <= g * u`` (``==`` when the
    requests are exact multiples of the smallest; within :data:`NEAR_MULTIPLE` of one, ``u`` is
    the largest per-unit request, rounded up, so that the level model only under-counts the
    room: each of its solutions fits), the ``g`` divisible (each divides the next larger); None
    when the requests are not such multiples."""
    reqs = {c: em.req[c] for c in classes}
    if any(not (q > 0).any() or (q < 0).any() for q in reqs.values()):
        return None
    small = min(reqs.values(), key=lambda q: int(q[q > 0].min()))  # the unit: the smallest request
    sizes: dict[int, int] = {}
    for c, q in reqs.items():
        if ((q > 0) != (small > 0)).any():
            return None
        ratio = q[small > 0] / small[small > 0]
        g = int(round(float(ratio[0])))
        if g < 1 or not np.all(np.abs(ratio - g) <= NEAR_MULTIPLE * g):
            return None
        sizes[c] = g
    if any(not np.all(q == small * sizes[c]) for c, q in reqs.items()):
        small = np.max(
            [-(-q // sizes[c]) for c, q in reqs.items()], axis=0
        )  # ceil(q / g), the largest
        if any(not np.all(q <= small * sizes[c]) for c, q in reqs.items()):
            return None
    levels = sorted(set(sizes.values()))
    if any(b % a for a, b in zip(levels, levels[1:], strict=False)):
        return None
    return small, sizes


def level_start(
    built: BuiltModel,
    base: Counts,
    entities: list[tuple[list[int], str | None]],
    hint: Counts | None,
    *,
    seconds: float,
    workers: int = 2,
    seed: int = 0,
    lean: bool = False,
    more: Callable[[str, int, float], Counts | None] | None = None,
    budget: Budget | None = None,
) -> Counts | None:
    """The class start for one-dimensional divisible requests (every pending request is ``g`` times
    one unit vector, the ``g`` each dividing the next: GPU pods whose CPU and memory go per GPU).
    A node then holds ``h = min_r floor(free_r / u_r)`` units, and pods of divisible sizes fit a
    set of nodes iff for every size ``g``: sum over pods of size >= g of size / g <=
    sum over nodes of floor(h / g) (placing the larger pods anywhere leaves the same floor(. / g)
    room, so largest first into any node with room always succeeds). Nodes are pooled per
    (domain of every confining key, eligibility): a pool's capacity is those sums, so the model
    has no per-node variable: pods per (type, pool), entities admitted per shape (per domain when
    confined). Decoded largest first, best fit, then checked by the caller. ``lean``: the
    engine's time-limited start (:func:`_mip_groups`, :func:`_mip_tiers`): the contested lower
    admission tiers only, and None at once when their LP bound shows ``hint`` cannot be beaten.
    ``more(tier name, cap, seconds)``: asked first, with ``REPACK_SHARE`` of what is left, for a
    start reaching that LP cap on the lean group's first tier some cheaper way (more packing
    orders, :func:`class_start`); what it returns is the answer then, without a MIP.

    ``seconds``: units of deterministic work (charged to ``budget``): HiGHS's share is a node
    limit, CP-SAT's its deterministic time, so what this start returns is the same on any
    machine."""

    deadline = budget.sub(seconds) if budget is not None else Budget(seconds)
    em, inst = built.em, built.inst
    if not entities or any(len(cl) != 1 or cl[0] in em.anti for cl, _ in entities):
        return None
    unit = _unit_sizes(em, [cl[0] for cl, _ in entities])
    if unit is None:
        return None
    u, size = unit
    free, pods = free_after(em, base.per_class, base.evicted)
    h = np.full(inst.n_nodes, np.iinfo(np.int64).max // 4, dtype=np.int64)
    for r in np.nonzero(u > 0)[0].tolist():
        h = np.minimum(h, np.maximum(free[:, r], 0) // u[r])
    keys = sorted({k for _, k in entities if k})
    ids = {k: inst.domains(k)[0] for k in keys}
    types: dict[bytes, int] = {}
    type_rep: list[int] = []
    shapes: dict[tuple, list[int]] = {}
    for i, (cl, key) in enumerate(entities):
        c = cl[0]
        cls = inst.classes[c]
        t = types.setdefault(em.req[c].tobytes() + em.elig[c].eligible.tobytes(), len(types))
        if t == len(type_rep):
            type_rep.append(c)
        shapes.setdefault((key, t, 1 if cls.entity is None else cls.size, cls.priority), []).append(
            i
        )
    shape_list = list(shapes.items())
    tsize = [size[c] for c in type_rep]
    elig = np.array([em.elig[c].eligible for c in type_rep])
    usable = (h > 0) & elig.any(axis=0)
    if (pods[usable] < h[usable]).any():
        return None  # pod slots could bind: not one-dimensional
    pool_of: dict[tuple, list[int]] = {}
    for n in np.nonzero(usable)[0].tolist():
        pool_of.setdefault((elig[:, n].tobytes(), tuple(int(ids[k][n]) for k in keys)), []).append(
            n
        )
    pools = list(pool_of.items())
    if len(pools) > MAX_POOLS:
        return None
    model = cp_model.CpModel()
    y: dict[tuple, cp_model.IntVar] = {}  # (key or None, type, pool) -> pods
    for p, ((_, doms), members) in enumerate(pools):
        here = np.nonzero(elig[:, members[0]])[0].tolist()
        cap = {g: int((h[members] // g).sum()) for g in sorted({tsize[t] for t in here})}
        use: dict[int, list] = defaultdict(list)
        for t in here:
            if cap[tsize[t]] == 0:
                continue
            for ki, key in enumerate([None, *keys]):
                if key is not None and doms[ki - 1] < 0:
                    continue
                var = model.new_int_var(0, cap[tsize[t]], "")
                y[(key, t, p)] = var
                for g in cap:
                    if g <= tsize[t]:
                        use[g].append((tsize[t] // g) * var)
        for g, terms in use.items():
            model.add(sum(terms) <= cap[g])
    link: dict[tuple, list] = defaultdict(list)
    for (key, t, p), var in y.items():
        d = None if key is None else pools[p][0][1][keys.index(key)]
        link[(key, t, d)].append(var)
    room: dict[tuple, int] = defaultdict(
        int
    )  # (key, type, domain) -> pods of the type it holds alone
    for (key, t, p), var in y.items():
        if key is not None:
            room[(key, t, pools[p][0][1][keys.index(key)])] += var.proto.domain[1]
    demand: dict[tuple, list] = defaultdict(list)
    count: list = []
    for (key, t, need, _), members in shape_list:
        if key is None:
            a = model.new_int_var(0, len(members), "")
            demand[(None, t, None)].append(need * a)
            count.append([(None, a)])
            continue
        ws = []
        for k2, t2, d in link:
            if k2 == key and t2 == t and room[(key, t, d)] >= need:
                w = model.new_int_var(0, len(members), "")
                demand[(key, t, d)].append(need * w)
                ws.append((d, w))
        if ws:
            model.add(sum(w for _, w in ws) <= len(members))
        count.append(ws)
    for lk, vars_ in link.items():
        model.add(sum(vars_) == sum(demand.get(lk, [])))
    for lk, terms_ in demand.items():
        if lk not in link:  # a type no pool holds: none of its entities is admitted
            model.add(sum(terms_) == 0)
    prios = sorted({pr for (_, _, _, pr) in shapes}, reverse=True)
    terms = [
        [(w, 1) for s, ((_, _, _, pr), _) in enumerate(shape_list) if pr == p for _, w in count[s]]
        for p in prios
    ]
    uppers = [sum(len(m) for (_, _, _, pr), m in shape_list if pr == p) for p in prios]
    terms.append(
        [(w, need) for s, ((_, _, need, _), _) in enumerate(shape_list) for _, w in count[s]]
    )
    uppers.append(sum(need * len(m) for (_, _, need, _), m in shape_list))
    tiers = [sum(k * v for v, k in tt) for tt in terms]
    current: dict[int, int] = {}
    if hint is not None:
        current = _level_hint(model, hint, base, entities, shape_list, pools, keys, ids, y, count)
    start = [sum(k * current.get(v.index, 0) for v, k in tt) for tt in terms]
    cheaper: list[Counts] = []

    def on_cap(i: int, cap: int) -> bool:
        if more is None:
            return False
        name = admitted_tier(prios[i]) if i < len(prios) else PLACED
        got = more(name, cap, REPACK_SHARE * deadline.left())
        if got is not None:
            cheaper.append(got)
        return got is not None

    values, done = _mip_tiers(model, terms, uppers, start, deadline, seconds, lean, on_cap)
    if cheaper:
        return cheaper[0]
    if done < 0:
        return None  # the LP bound shows the start cannot be beaten on the tiers HiGHS would solve
    if values is None:
        values = _cpsat_tiers(
            model, tiers, terms, uppers, current, deadline, seconds, workers, seed
        )
    elif done < len(tiers):
        values = _cpsat_polish(model, terms, uppers, values, done, deadline, workers, seed)
    if values is None:
        return None
    try:
        return _level_decode(
            base, entities, shape_list, tsize, pools, keys, h, y, count, lambda v: values[v.index]
        )
    except (RuntimeError, IndexError, StopIteration):
        return None  # a MIP solution off by its tolerances: no class start


@contextlib.contextmanager
def _quiet_stdout():
    """File descriptor 1 to /dev/null meanwhile: HiGHS prints its banner there (not through
    Python), and the CLI's stdout carries the Result JSON."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _mip_tiers(
    model: cp_model.CpModel,
    terms,
    uppers,
    start: list[int],
    deadline: Budget,
    seconds: float,
    lean: bool = False,
    on_cap=None,
) -> tuple[list[int] | None, int]:
    """The level model's tiers maximised one after the other by HiGHS (through OR-tools'
    ``pywraplp``), each later one with the earlier ones held at their values; the last solution
    (rounded), or None when HiGHS is missing or found nothing. A MIP solver fits here: the model is
    a small pure integer program whose LP bound is tight, and LP-guided branching finds the last
    admission that CP-SAT's search misses (busy 1,000 x 2,048, seed 1: 39 in ~1.3 s where CP-SAT
    stays at 38 after 9 s on the same model). Also returns how many tiers (from the top) HiGHS
    maximised; :func:`_cpsat_polish` gets the rest (what HiGHS leaves of ``seconds``). ``start``:
    the hint's value of each tier (the top one is held at least there). ``lean`` (the engine's
    start, see :func:`_mip_groups`): the groups of a lean start, and before a group's MIP its LP
    relaxation (its cap on the group's first tier goes to ``on_cap`` first, which returns True
    when it has a start reaching it: then no MIP either): when the LP bound divided by the group's first
    tier's weight does not exceed the start's value of that tier, no solution beats the start
    there (the lower tiers are >= 0), and ``(None, -1)`` says so without a MIP: the class start is
    for the contested higher tiers, the decision phases and their top-up do the lower ones (busy
    1,000 x 2,048, seed 0: the packed start has 54 at the second tier, LP 4605.9 / 85 < 55, and
    HiGHS spent the whole 2.6 s without a solution; seed 2: skipped after 0.1 s)."""
    from ortools.linear_solver import pywraplp

    with _quiet_stdout():
        mip = pywraplp.Solver.CreateSolver("HIGHS")
    if mip is None:
        return None, 0
    mip.SuppressOutput()
    inf = mip.infinity()
    proto = model.proto
    xs = []
    for v in proto.variables:
        dom = list(v.domain)
        xs.append(mip.IntVar(float(dom[0]), float(dom[len(dom) - 1]), ""))
    for c in proto.constraints:
        lin = c.linear
        dom = list(lin.domain)
        if len(dom) != 2 or len(c.enforcement_literal):
            return None, 0
        lo, hi = dom[0], dom[1]
        row = mip.Constraint(-inf if lo < -(2**60) else float(lo), inf if hi > 2**60 else float(hi))
        acc: dict[int, int] = defaultdict(int)
        for v, k in zip(lin.vars, lin.coeffs, strict=True):
            acc[v] += k
        for v, k in acc.items():
            row.SetCoefficient(xs[v], float(k))
    floor = start[0] if start else 0
    row = mip.Constraint(float(floor), inf)  # the top tier at least where the hint has it
    acc0: dict[int, int] = defaultdict(int)
    for v, k in terms[0]:
        acc0[v.index] += k
    for v, k in acc0.items():
        row.SetCoefficient(xs[v], float(k))
    groups = _mip_groups(len(terms), floor, lean)
    values, done = None, 0
    for gi, group in enumerate(groups):
        left = deadline.left()
        if left <= 0.05 or deadline.out_of_wall():
            break
        weights, w = {}, 1
        for i in reversed(group):
            weights[i] = w
            w *= uppers[i] + 1
        obj = mip.Objective()
        obj.Clear()
        coef: dict[int, int] = defaultdict(int)
        for i in group:
            for v, k in terms[i]:
                coef[v.index] += k * weights[i]
        for v, k in coef.items():
            obj.SetCoefficient(xs[v], float(k))
        obj.SetMaximization()
        if lean and floor > 0:
            lp = _lp_bound(mip, xs, deadline)
            cap = math.floor((lp + 1e-6) / weights[group[0]]) if math.isfinite(lp) else None
            if cap is not None and cap <= start[group[0]]:
                return None, -1  # the group's first tier cannot beat the start (the rest are >= 0)
            if cap is not None and on_cap is not None and on_cap(group[0], cap):
                return None, -1  # a cheaper start reaches the cap
            left = deadline.left()
        share = tier_budget(left, len(groups) - gi - 1, seconds)
        # The deterministic limit is HiGHS's node count; the wall clock only as the safety net.
        per_node = node_units(len(xs))
        mip.SetSolverSpecificParametersAsString(f"mip_max_nodes={max(1, int(share / per_node))}")
        mip.SetTimeLimit(max(1, int(1000 * max(MIN_SOLVE_SECONDS, deadline.wall_left()))))
        with _quiet_stdout():
            status = mip.Solve()
        deadline.charge(mip.nodes() * per_node)
        if status == pywraplp.Solver.NOT_SOLVED and deadline.out_of_wall():
            break
        if status not in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE):
            break
        values = [round(x.solution_value()) for x in xs]
        done = group[-1] + 1
        for i in group:
            value = sum(k * values[v.index] for v, k in terms[i])
            row = mip.Constraint(float(value), inf)
            acc: dict[int, int] = defaultdict(int)
            for v, k in terms[i]:
                acc[v.index] += k
            for v, k in acc.items():
                row.SetCoefficient(xs[v], float(k))
    return values, done


def node_units(variables: int) -> float:
    """What one HiGHS branch-and-bound node of a level model with ``variables`` columns is charged:
    1 / HIGHS_NODES_PER_UNIT per 2,000 columns (a node re-solves the LP, whose cost grows with
    the model)."""
    return max(1.0, variables / 2000) / HIGHS_NODES_PER_UNIT


LP_UNITS = 0.05
"""What the level model's LP relaxation is charged (it is solved to the end: small, deterministic)."""


def _lp_bound(mip, xs, budget: Budget) -> float:
    """The LP relaxation's optimum of ``mip``'s objective (integrality dropped meanwhile), or
    infinity when HiGHS does not prove it before the wall-clock cap (recorded)."""
    from ortools.linear_solver import pywraplp

    for x in xs:
        x.SetInteger(False)
    budget.charge(LP_UNITS)
    mip.SetTimeLimit(max(1, int(1000 * max(MIN_SOLVE_SECONDS, budget.wall_left()))))
    try:
        with _quiet_stdout():
            status = mip.Solve()
        if status != pywraplp.Solver.OPTIMAL:
            budget.out_of_wall()
            return float("inf")
        return mip.Objective().Value()
    finally:
        for x in xs:
            x.SetInteger(True)


REPACK_SHARE = 0.25
"""Share of the lean class start's time left after its LP that more packing orders get first."""
MORE_RESTARTS = 24
"""At most this many more packing orders."""


def _mip_groups(n: int, floor: int, lean: bool) -> list[list[int]]:
    """The tiers HiGHS maximises, one group after the other (``n`` tiers: admitted per priority,
    then placed). In full: the top tier alone, then the rest band-weighted. ``lean`` (the
    engine's time-limited start): with a start on the top tier (``floor`` > 0, which the floor row
    holds), the lower priorities' admissions band-weighted and nothing else; without, the top
    tier first. The rest is :func:`_cpsat_polish`'s. Proving the top tier is the decision phases'
    job (CP-SAT's LP bound there is tight at once), and HiGHS often finds no solution at all in a
    group once the earlier ones are held at their values (it gets no incumbent): busy 1,000 x
    2,048, seeds 0-2, load ~3, 3.5 s class start: the top tier took 0.4-2.0 s and the
    band-weighted rest then found nothing in any seed; seed 1 with the top tier left to the floor
    row: 65 / 39 / 7 (the optimum) in 1.8-2.1 s."""
    if n <= 1:
        return [[0]]
    if not lean:
        return [[0], list(range(1, n))]
    admitted = [list(range(1, n - 1))] if n > 2 else [[1]]
    return admitted if floor > 0 else [[0], *(admitted if n > 2 else [])]


def _cpsat_polish(
    model: cp_model.CpModel,
    terms,
    uppers,
    values: list[int],
    done: int,
    deadline: Budget,
    workers: int,
    seed: int,
) -> list[int]:
    """The tiers below the ``done`` ones HiGHS maximised, improved by CP-SAT from HiGHS's solution
    (a complete hint: CP-SAT starts from a feasible solution, which HiGHS does not: its later
    group found no solution at all within 1-3 s in each busy 1,000 x 2,048 seed once the earlier
    tiers were held), the higher tiers held at HiGHS's values, the rest band-weighted; what it
    finds when better there, else ``values``. ``terms`` / ``uppers`` as :func:`_mip_tiers` has them."""
    left = deadline.left()
    if left <= 0.05:
        return values

    def value(vals: list[int], tt) -> int:
        return sum(k * vals[v.index] for v, k in tt)

    for tt in terms[:done]:
        model.add(sum(k * v for v, k in tt) >= value(values, tt))
    model.clear_hints()
    for i, x in enumerate(values):
        model.add_hint(model.get_int_var_from_proto_index(i), x)
    weights, w = [], 1
    for up in reversed(uppers[done:]):
        weights.insert(0, w)
        w *= up + 1
    model.maximize(
        sum(wt * k * v for wt, tt in zip(weights, terms[done:], strict=True) for v, k in tt)
    )
    solver = cp_model.CpSolver()
    configure_solver(solver.parameters, deadline, left, workers=workers, seed=seed)
    status = solver.solve(model)
    deadline.after(solver, status in (cp_model.OPTIMAL, cp_model.INFEASIBLE))
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return values
    found = list(solver.response_proto.solution)
    if [value(found, tt) for tt in terms[done:]] > [value(values, tt) for tt in terms[done:]]:
        return found
    return values


def _cpsat_tiers(
    model, tiers, terms, uppers, current, deadline: Budget, seconds: float, workers: int, seed: int
) -> list[int] | None:
    """The same with CP-SAT (when HiGHS is missing)."""
    values = None
    for i, (tier, up) in enumerate(zip(tiers, uppers, strict=True)):
        left = deadline.left()
        if left <= 0.05:
            break
        model.maximize(tier)
        model.add(tier <= up)
        trial = cp_model.CpSolver()
        configure_solver(
            trial.parameters,
            deadline,
            tier_budget(left, len(tiers) - i - 1, seconds),
            workers=workers,
            seed=seed,
        )
        st = trial.solve(model)
        deadline.after(trial, st in (cp_model.OPTIMAL, cp_model.INFEASIBLE))
        if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            break
        values = list(trial.response_proto.solution)
        value = int(round(trial.objective_value))
        model.add(tier >= value)
        if value > sum(k * current.get(v.index, 0) for v, k in terms[i]):
            model.clear_hints()  # better than the hint on this tier: its solution is the hint now
            current = dict(enumerate(values))
            for v, x in current.items():
                model.add_hint(model.get_int_var_from_proto_index(v), x)
    return values


def _level_hint(
    model, hint: Counts, base: Counts, entities, shape_list, pools, keys, ids, y, count
) -> dict[int, int]:
    """Hint the level model with ``hint``'s entities (those in pools); returns variable -> value."""
    pool_at = {n: p for p, (_, m) in enumerate(pools) for n in m}
    ys: dict = defaultdict(int)
    out: dict[int, int] = {}
    for s, ((key, t, need, _), members) in enumerate(shape_list):
        per_dom: dict = defaultdict(int)
        for i in members:
            c = entities[i][0][0]
            placed = {
                n: k - base.per_class[c].get(n, 0)
                for n, k in hint.per_class[c].items()
                if k - base.per_class[c].get(n, 0)
            }
            if sum(placed.values()) < need or any(n not in pool_at for n in placed):
                continue
            per_dom[None if key is None else int(ids[key][next(iter(placed))])] += 1
            for n, k in placed.items():
                ys[(key, t, pool_at[n])] += k
        for d, w in count[s]:
            model.add_hint(w, per_dom.get(d, 0))
            out[w.index] = per_dom.get(d, 0)
    for k, var in y.items():
        model.add_hint(var, ys.get(k, 0))
        out[var.index] = ys.get(k, 0)
    return out


def _level_decode(
    base: Counts, entities, shape_list, tsize, pools, keys, h, y, count, value
) -> Counts:
    per_class = [dict(d) for d in base.per_class]
    room = {n: int(h[n]) for _, m in pools for n in m}
    pool_rows: dict = defaultdict(list)  # (key, type, domain) -> [[pool, pods]]
    for (key, t, p), var in y.items():
        k = value(var)
        if k:
            d = None if key is None else pools[p][0][1][keys.index(key)]
            pool_rows[(key, t, d)].append([p, k])
    # Each entity's pods to pools, then per pool largest first into the node with least room.
    wanted: dict[int, list[tuple[int, int, int]]] = defaultdict(
        list
    )  # pool -> [(size, class, pods)]
    for s, ((key, t, need, _), members) in enumerate(shape_list):
        queue = iter(members)
        for d, w in count[s]:
            rows = pool_rows[(key, t, d)]
            for _ in range(value(w)):
                c = entities[next(queue)][0][0]
                want = need
                while want:
                    p, k = rows[0]
                    take = min(want, k)
                    wanted[p].append((tsize[t], c, take))
                    want -= take
                    rows[0][1] -= take
                    if rows[0][1] == 0:
                        rows.pop(0)
    for p, items in wanted.items():
        nodes = pools[p][1]
        for g, c, k in sorted(items, key=lambda x: -x[0]):
            for _ in range(k):
                n = min(
                    (n for n in nodes if room[n] >= g), key=lambda n: (room[n], n), default=None
                )
                if n is None:
                    raise RuntimeError("class start: level model and decoding disagree")
                room[n] -= g
                per_class[c][n] = per_class[c].get(n, 0) + 1
    return Counts(per_class, base.evicted)


def class_start(
    built: BuiltModel,
    best: Counts | None,
    *,
    seconds: float,
    workers: int = 2,
    seed: int = 0,
    first_restart: int = 0,
    budget: Budget | None = None,
) -> Counts | None:
    """The class-level start from nothing (callers use it only when nothing is forced), hinted
    with ``best``, when it beats ``best`` on the decision tiers and both the validator (nothing
    blamed) and the model (:func:`.check.model_accepts`) accept it; else None. A lean start
    (:func:`level_start`): the decision phases prove and finish the tiers it leaves. Before its
    MIP, more packing orders (restarts from ``first_restart`` on, where the packed start
    stopped) until one reaches the level model's LP cap on the contested tier: busy 1,000 x
    2,048, seed 0, the packed start's fourth order has the optimum 54 that HiGHS does not find
    in 3.5 s."""

    em = built.em
    base = default_incumbent(em)
    if base is None or seconds <= 0:
        return None
    entities = entities_in_queue_order(em, base.per_class)

    def more(name: str, cap: int, secs: float) -> Counts | None:
        tier = next((t for t in built.tiers if t.name == name), None)
        if tier is None or best is None or secs <= 0:
            return None

        def reaches(c: Counts) -> bool:
            return tier.value(c) >= cap and better(built.tiers, c, best)

        got, _ = packed_start(
            em,
            built.tiers,
            base,
            entities,
            seconds=secs,
            restarts=MORE_RESTARTS,
            first=first_restart,
            budget=budget,
            stop=reaches,
        )
        return got if reaches(got) else None

    found = level_start(
        built,
        base,
        entities,
        best,
        seconds=seconds,
        workers=workers,
        seed=seed,
        lean=True,
        more=more,
        budget=budget,
    )
    if found is None or (best is not None and not better(built.tiers, found, best)):
        return None
    checked, dropped, _ = repaired(em, placements_from_counts(em, found), repairs=1)
    if (
        checked is None
        or dropped
        or not model_accepts(built, checked, time_limit=5.0, budget=budget)
    ):
        return None
    return checked
