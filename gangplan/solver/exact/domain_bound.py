"""An upper bound on the top admission tier from a relaxation pooled per topology domain (issue 37).

On the 10,000-node shapes the top tier's phase finds good placements but CP-SAT's bound on the
per-node shape-slot model stays above them. This module builds a *relaxation* of the full model for
the highest-priority admission tier only, with one row per pool of nodes instead of one variable
per node, and bounds it by linear programming (and, when given work, by a branch-and-bound whose
proven bound is read). Whatever it returns is an upper bound of the tier in every feasible solution
of the exact model; the engine may then call the tier proven when its solution reaches it
(:mod:`.solve`, ``domain_bound`` in the Result's ``params``).

Why it is a relaxation (each step only drops or weakens constraints of the exact model):

1. Only pending classes of the top priority ``P`` are kept. Every other pending pod only takes room,
   and ``admitted[p=P]`` counts entities of priority ``P`` only. Not applicable (None) with
   preemption (evictions would make room), with forced placements, or when a top-priority entity is
   not one of: a single pod; a PodGroup that is its own root with exactly one class of pods, none
   bound yet, and at most its own topology rule.
2. Resources become one dimension: every kept class gets a size ``g_c`` (a divisibility chain,
   each size divides the next) and ``u = min_c floor(req_c / g_c)`` per resource, so
   ``req_c >= g_c * u``. A node ``n`` then takes pods of total size at most
   ``h_n = min_{r: u_r > 0} floor(free_{n,r} / u_r)`` (the pods' requests fit its free room), and,
   dividing by any size ``q`` of the chain and rounding down (a Chvatal-Gomory cut of the node's
   capacity row: the counts are integers), ``sum_c floor(g_c / q) k_c <= floor(h_n / q)``. Pod
   slots, affinity, spread, ports and every other family are dropped.
3. Nodes are pooled by (which kept types may use them, the domain of every topology key a kept
   group is confined to): a pool's rows are the sums of its nodes' rows (valid, weaker), and a
   type's pods in a pool are at most the sum of its per-node fits.
4. An admitted entity needs ``need`` pods (a gang its minCount, a single pod or a basic group 1),
   of its type, in one domain of its key when it has one (all in that domain's pools); entities
   are counted per (key, type, need) and domain, and only in domains whose pools hold ``need`` pods
   of the type on their own.

Maximising the number of admitted entities of that relaxation with every variable continuous
(its LP, by HiGHS) bounds the tier: :func:`domain_bound` returns ``floor(LP + 1e-6)``. Where it is
used: :func:`tightened` (called by the engine after the warm start, large models only) lowers the
tier's ``Tier.upper`` to it; :mod:`.solve` adds ``tier <= upper`` to the model and reports a phase
that reaches it OPTIMAL, its bound at most this one; the Result's ``params.domainBound`` records
the bound, the LP value and the trivial bound it replaced. The LP's solution (entities per
domain, pods per pool) seeds the warm start of :mod:`.domain_start`. :func:`pooled_model` writes
the relaxation once, for this LP and for :mod:`.domain_mip`, which strengthens it (domain cuts,
whole entity counts) when the start stays below this bound.

Measured (issue 37, 10 units, load ~2.3): 10,000-node GB200, LP 864.0 (CP-SAT's own bound after
the 10 units: 868; after 60: 864), 1,386 pools, 0.9-1.3 s; DGX, LP 842.4 -> 842 (CP-SAT's: 881),
2,749 pools, 1.8 s. A branch-and-bound on the same model with integral entity counts (HiGHS,
2-10 units of nodes, GB200) took 50-67 s and did not lower the bound, so the module has none.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace

import numpy as np

from gangplan.models.objective import admitted_tier
from gangplan.solver.exact.budget import Budget
from gangplan.solver.exact.eligibility import group_topologies

MAX_POOLS = 20_000
"""More pools and no bound is tried (the LP would cost more than it may save)."""


@dataclass(frozen=True)
class _Entity:
    key: str | None
    type: int
    need: int


@dataclass
class Relaxation:
    """The pooled relaxation of the top admission tier (see the module docstring)."""

    tier: str
    sizes: list[int]
    """Per type its size ``g``."""
    pool_caps: list[dict[int, int]]
    """Per pool: size ``q`` -> sum over its nodes of floor(h / q)."""
    pool_fit: list[dict[int, int]]
    """Per pool: type -> pods of the type its nodes take, each node alone (sum of fits)."""
    pool_domains: list[tuple[int, ...]]
    """Per pool its domain id at every key (``keys`` order; -1 without the label)."""
    keys: list[str]
    entities: dict[_Entity, int] = field(default_factory=dict)
    """(key, type, need) -> how many entities of the tier have it."""
    members: dict[_Entity, list[tuple[int, int]]] = field(default_factory=dict)
    """(key, type, need) -> its entities' classes in queue order: (class index, entities of it):
    a gang's class is one entity, a single-pod class ``size`` of them (:mod:`.domain_start`)."""
    pool_nodes: list[list[int]] = field(default_factory=list)
    """Per pool its node indices."""

    @property
    def upper(self) -> int:
        return sum(self.entities.values())


def relaxation(built) -> Relaxation | None:
    """The relaxation of ``built``'s top admission tier, or None when it does not apply."""
    em, inst = built.em, built.inst
    if inst.units or any(c.fixed_node is not None for c in inst.classes) or not built.tiers:
        return None
    top = max((c.priority for c in inst.classes), default=None)
    if top is None or built.tiers[0].name != admitted_tier(top):
        return None
    kept = [c for c in inst.classes if c.priority == top and em.elig[c.index].eligible.any()]
    if not kept:
        return None
    need_of: dict[int, tuple[str | None, int]] = {}
    for c in kept:
        if c.entity is None:
            need_of[c.index] = (None, 1)
            continue
        leaf = inst.leaves.get(c.group) if c.group else None
        if (
            leaf is None
            or c.entity != c.group
            or leaf.classes != [c.index]
            or leaf.bound
            or c.group in inst.composites
        ):
            return None
        tops = group_topologies(inst, c)
        if len(tops) > 1 or (tops and tops[0][1] != [c.group]):
            return None
        need = max(1, min(leaf.min_count, c.size)) if leaf.gang else 1
        need_of[c.index] = (tops[0][0] if tops else None, need)
    chain = _sizes(em, [c.index for c in kept])
    if chain is None:
        return None
    u, size = chain
    free = inst.free
    h = np.full(inst.n_nodes, np.iinfo(np.int64).max // 4, dtype=np.int64)
    for r in np.nonzero(u > 0)[0].tolist():
        h = np.minimum(h, np.maximum(free[:, r], 0) // u[r])
    types: dict[tuple[int, bytes], int] = {}
    rep: list[int] = []
    type_of: dict[int, int] = {}
    for c in kept:
        e = em.elig[c.index]
        sig = (size[c.index], (e.eligible & (e.fit > 0)).tobytes() + np.minimum(e.fit, h).tobytes())
        t = types.setdefault(sig, len(types))
        if t == len(rep):
            rep.append(c.index)
        type_of[c.index] = t
    sizes = [size[c] for c in rep]
    fits = np.array(
        [np.where(em.elig[c].eligible, np.minimum(em.elig[c].fit, h // size[c]), 0) for c in rep]
    )
    usable = fits.sum(axis=0) > 0
    keys = sorted({k for k, _ in need_of.values() if k})
    ids = [inst.domains(k)[0] for k in keys]
    pool_of: dict[tuple, int] = {}
    members: list[list[int]] = []
    doms_of: list[tuple[int, ...]] = []
    sig_rows = fits > 0
    for n in np.nonzero(usable)[0].tolist():
        doms = tuple(int(x[n]) for x in ids)
        k = (sig_rows[:, n].tobytes(), doms)
        if k not in pool_of:
            pool_of[k] = len(members)
            members.append([])
            doms_of.append(doms)
        members[pool_of[k]].append(n)
    if len(members) > MAX_POOLS:
        return None
    chain_sizes = sorted(set(sizes))
    caps, pfit = [], []
    for m in members:
        caps.append({q: int((h[m] // q).sum()) for q in chain_sizes})
        pfit.append({t: int(fits[t, m].sum()) for t in range(len(rep)) if fits[t, m].any()})
    rel = Relaxation(
        tier=admitted_tier(top),
        sizes=sizes,
        pool_caps=caps,
        pool_fit=pfit,
        pool_domains=doms_of,
        keys=keys,
        pool_nodes=members,
    )
    for c in kept:
        key, need = need_of[c.index]
        count = c.size if c.entity is None else 1
        ent = _Entity(key, type_of[c.index], need)
        rel.entities[ent] = rel.entities.get(ent, 0) + count
        rel.members.setdefault(ent, []).append((c.index, count))
    return rel


def _sizes(em, classes: list[int]) -> tuple[np.ndarray, dict[int, int]] | None:
    """``u`` and per class ``g`` with ``req_c >= g_c * u`` (u = min_c floor(req_c / g_c)), the
    ``g`` a divisibility chain; None when no such chain with a nonzero ``u`` exists."""
    reqs = {c: np.asarray(em.req[c], dtype=np.int64) for c in classes}
    pos = [q for q in reqs.values() if (q > 0).any()]
    if len(pos) != len(reqs):
        return None
    small = min(pos, key=lambda q: int(q[q > 0].min()))
    r0 = int(np.argmax(small > 0))
    size = {}
    for c, q in reqs.items():
        g = max(1, int(q[r0] // small[r0]))
        size[c] = g
    levels = sorted(set(size.values()))
    if any(b % a for a, b in zip(levels, levels[1:], strict=False)):
        return None
    u = np.min([q // size[c] for c, q in reqs.items()], axis=0)
    if not (u > 0).any():
        return None
    return u, size


@dataclass
class DomainBound:
    """The top admission tier's bound from :func:`relaxation`'s LP."""

    tier: str
    bound: int
    """``floor(lp)``: no feasible solution of the exact model admits more at this tier."""
    lp: float
    trivial: int
    """The tier's trivial upper bound (every entity of the priority admitted)."""
    plan: dict[_Entity, dict[int | None, float]] = field(default_factory=dict, repr=False)
    """The LP's solution: per (key, type, need) the entities it admits per domain of the key
    (None without one), fractional (what :mod:`.domain_start` rounds down and packs)."""
    relaxation: Relaxation | None = field(default=None, repr=False)
    pods: dict[tuple[int, str | None, int | None], dict[int, float]] = field(
        default_factory=dict, repr=False
    )
    """The LP's pods per (type, key, domain) in each pool (pool index -> pods, fractional)."""

    def record(self) -> dict[str, object]:
        """What the Result's ``params.domainBound`` says when the bound was used."""
        return {
            "tier": self.tier,
            "bound": self.bound,
            "lp": round(self.lp, 4),
            "trivial": self.trivial,
            "from": "LP of the top-priority pods pooled per topology domain (gangplan.solver.exact.domain_bound)",
        }


def domain_bound(built, *, budget: Budget | None = None) -> DomainBound | None:
    """An upper bound on ``built``'s top admission tier: the LP of :func:`relaxation` (None when
    it does not apply or the LP is not solved). Its simplex iterations are charged to ``budget``
    (:data:`.budget.SIMPLEX_ITERATIONS_PER_UNIT`)."""
    rel = relaxation(built)
    if rel is None:
        return None
    return bound_of(rel, budget=budget)


def pooled_lp(rel, *, glop: bool):
    """A HiGHS LP of the pooled relaxation (:func:`pooled_model`) maximizing the admissions it
    counts, GLOP when HiGHS is missing and ``glop``: (solver, model, objective), or None."""
    from ortools.linear_solver import pywraplp

    from gangplan.solver.exact.start.classpack import _quiet_stdout

    with _quiet_stdout():
        lp = pywraplp.Solver.CreateSolver("HIGHS")
        if lp is None and glop:
            lp = pywraplp.Solver.CreateSolver("GLOP")
    if lp is None:
        return None
    lp.SuppressOutput()
    pooled = pooled_model(rel, _LpRows(lp))
    obj = lp.Objective()
    for w in pooled.counted:
        obj.SetCoefficient(w, 1.0)
    obj.SetMaximization()
    return lp, pooled, obj


def bound_of(rel: Relaxation, *, budget: Budget | None = None) -> DomainBound | None:
    """The LP of ``rel`` by HiGHS (through OR-tools' ``pywraplp``; GLOP without it). The result
    also carries the LP's solution (``plan``, ``pods``) for :mod:`.domain_start`."""
    from ortools.linear_solver import pywraplp

    from gangplan.solver.exact.start.classpack import _quiet_stdout

    made = pooled_lp(rel, glop=True)
    if made is None:
        return None
    lp, pooled, obj = made
    with _quiet_stdout():
        status = lp.Solve()
    if budget is not None:
        budget.charge(lp_units(lp.NumVariables()))
    if status != pywraplp.Solver.OPTIMAL:
        return None
    value = obj.Value()
    plan = {e: {d: w.solution_value() for d, w in ws} for e, ws in pooled.admits.items()}
    pods: dict[tuple[int, str | None, int | None], dict[int, float]] = defaultdict(dict)
    for k, p, x in pooled.pool_flows:
        if x.solution_value() > 1e-9:
            pods[k][p] = x.solution_value()
    return DomainBound(
        rel.tier,
        min(rel.upper, math.floor(value + BOUND_TOLERANCE)),
        value,
        rel.upper,
        plan,
        rel,
        dict(pods),
    )


@dataclass
class Pooled:
    """The rows and columns of :func:`pooled_model`: what a caller reads or adds to."""

    counted: list = field(default_factory=list)
    """The entity counts (one per kind and domain): the objective is their sum."""
    admits: dict[_Entity, list[tuple[int | None, object]]] = field(default_factory=dict)
    """Per kind its counts, with their domain."""
    pool_flows: list[tuple[tuple[int, str | None, int | None], int, object]] = field(
        default_factory=list
    )
    """(type, key, domain), pool, pods of them in the pool."""
    columns: int = 0


class _LpRows:
    """:func:`pooled_model`'s writer for a ``pywraplp`` solver."""

    def __init__(self, lp) -> None:
        self.lp = lp

    def var(self, ub: float, integral: bool = False):
        return self.lp.IntVar(0.0, ub, "") if integral else self.lp.NumVar(0.0, ub, "")

    def row(self, lo: float | None, hi: float, terms) -> None:
        row = self.lp.Constraint(-self.lp.infinity() if lo is None else lo, hi)
        for a, x in terms:
            row.SetCoefficient(x, row.GetCoefficient(x) + a)


def pooled_model(rel: Relaxation, rows, integral: frozenset[str] = frozenset()) -> Pooled:
    """The relaxation of the module doc written through ``rows`` (``var(ub, integral)``,
    ``row(lo or None, hi, [(coefficient, var)])``): pods of each (type, key, domain) per pool,
    at most the type's fit and within the pool's capacity rows; entities per kind and domain,
    at most the kind's count in all; the pods of a (type, key, domain) equal what its admitted
    entities need. Every column is continuous except the entity counts of kinds whose key is in
    ``integral`` (whole numbers: :mod:`.domain_mip`)."""
    out = Pooled()
    key_index = {k: i for i, k in enumerate(rel.keys)}
    # pods of (type, key or None, domain or None) in each pool
    flows: dict[tuple[int, str | None, int | None], list] = defaultdict(list)
    room: dict[tuple[int, str | None, int | None], float] = defaultdict(float)
    per_pool: list[list[tuple[int, object]]] = [[] for _ in rel.pool_caps]
    wanted = sorted({(e.type, e.key) for e in rel.entities}, key=lambda x: (x[0], x[1] or ""))
    for p, fit in enumerate(rel.pool_fit):
        doms = rel.pool_domains[p]
        for t, k in sorted(fit.items()):
            by_type = []
            for tt, key in wanted:
                d = None if key is None else doms[key_index[key]]
                if tt != t or (d is not None and d < 0):
                    continue
                x = rows.var(float(k))
                out.columns += 1
                flows[(t, key, d)].append(x)
                room[(t, key, d)] += float(k)
                out.pool_flows.append(((t, key, d), p, x))
                per_pool[p].append((t, x))
                by_type.append(x)
            if len(by_type) > 1:  # the type's pods in the pool, whichever entity they belong to
                rows.row(None, float(k), [(1.0, x) for x in by_type])
    for p, caps in enumerate(rel.pool_caps):
        for q, cap in caps.items():
            terms = [(float(rel.sizes[t] // q), x) for t, x in per_pool[p] if rel.sizes[t] >= q]
            if terms:
                rows.row(None, float(cap), terms)
    doms_of: dict[tuple[int, str | None], list[int | None]] = defaultdict(list)
    for t, k, d in flows:
        doms_of[(t, k)].append(d)
    demand: dict[tuple, list[tuple[float, object]]] = defaultdict(list)
    for e, m in sorted(
        rel.entities.items(), key=lambda kv: (kv[0].type, kv[0].key or "", kv[0].need)
    ):
        ws = []
        for d in doms_of.get((e.type, e.key), []):
            r = room[(e.type, e.key, d)]
            if r + 1e-9 < e.need:
                continue
            w = rows.var(float(min(m, math.floor(r / e.need + 1e-9))), e.key in integral)
            out.columns += 1
            demand[(e.type, e.key, d)].append((-float(e.need), w))
            ws.append(w)
            out.admits.setdefault(e, []).append((d, w))
        if len(ws) > 1:
            rows.row(None, float(m), [(1.0, w) for w in ws])
        out.counted += ws
    for k, xs in flows.items():  # pods in the pools == pods the admitted entities need
        rows.row(0.0, 0.0, [(1.0, x) for x in xs] + demand.get(k, []))
    return out


LP_COLUMNS_PER_UNIT = 30_000
"""What the LP is charged (pywraplp does not report HiGHS's simplex iterations): one unit per this
many columns. Measured (load ~2): 10,000-node GB200, ~26,000 columns, 0.9-1.3 s with the model
build; DGX, ~67,000 columns, 1.8 s."""


def lp_units(columns: int) -> float:
    return max(columns, 1) / LP_COLUMNS_PER_UNIT


BOUND_TOLERANCE = 1e-6
"""The LP optimum is rounded down after adding this (floating point): a bound 863.9999999 is 864."""


MIN_VARIABLES = 20_000
"""Models with fewer CP-SAT variables get no domain bound (:func:`tightened`): their phases prove
the tier from their own LP (every proven case of the benchmarks below 10,000 nodes) and their
search stays as it was (the diff goldens are small models)."""


def tightened(built, incumbent, budget: Budget | None = None) -> DomainBound | None:
    """Lower the top admission tier's upper bound (``Tier.upper``, which :mod:`.solve` adds as a
    constraint and a phase reaching it is proven by) to :func:`domain_bound` when it is lower,
    for large models (more than :data:`MIN_VARIABLES` variables) whose start leaves the tier
    short of its trivial bound. Returns the bound used (the engine records it in the Result's
    ``params.domainBound``), else None. Valid because the bound is a relaxation's (module doc)."""
    if not built.tiers or incumbent is None or len(built.model.proto.variables) <= MIN_VARIABLES:
        return None
    tier = built.tiers[0]
    if tier.value(incumbent) >= tier.upper:
        return None
    found = domain_bound(built, budget=budget)
    if (
        found is None
        or found.tier != tier.name
        or found.bound >= tier.upper
        or found.bound < tier.value(incumbent)
    ):
        return None  # (below the start's value would be a bug of the relaxation: never used then)
    built.tiers[0] = replace(tier, upper=found.bound)
    return found


__all__ = [
    "DomainBound",
    "Pooled",
    "Relaxation",
    "bound_of",
    "domain_bound",
    "pooled_model",
    "relaxation",
    "tightened",
]
