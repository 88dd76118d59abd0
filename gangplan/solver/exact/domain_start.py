"""A warm start from the domain LP of :mod:`.domain_bound` (issue 37): its solution rounded and
packed, node by node.

On the 10,000-node shapes the class-level start (:mod:`.start.classpack`) has too many pools to
run, and the packed start leaves the top admission tier short of the domain LP's bound. The LP
(:func:`.domain_bound.bound_of`) says, per kind of top-priority entity (topology key, type, pods
it needs) and domain of its key, how many entities it admits there, and where their pods go (per
pool of nodes). This start:

1. per kind, takes the LP's total rounded down, and hands that many entities of the kind (queue
   order) to domains: each domain its LP count rounded down, the rest one each to the domains
   with the largest fractional parts (:func:`rounded_plan`; the LP spreads entities over domains
   fractionally, its totals per kind are nearly all whole);
2. packs them (:func:`pack_plan`): entities of the smallest domains first (rack-held before
   block-held before single pods), largest pods first among those, each in its planned domain
   when that holds it, else in the domain of its key that holds it most tightly, all its pods or
   none; each pod onto the node that fits it with the least room left, first among the pools
   where the LP put pods of its kind (best fit: for sizes dividing each other inside one domain
   it never fails while the room suffices);
3. packs again, up to :data:`ROUNDS` times, with the entities that did not fit first (the latest
   failures before older ones), keeping the best packing;
4. tops it up with the entities left out, in queue order, first fit
   (:func:`.start.hint.complete_first_fit`).

Room is every resource of the node and its pod slots, and a pod only goes where its class is
eligible with a fit on the bound state, so the result is a placement the engine then checks: it
keeps it only when the validator and the model accept it (:func:`domain_start`) and when it beats
the start it has. A start, never a proof: when its top tier reaches the LP's bound the tier is
proven by the bound (:mod:`.solve`), without a search.

Measured (issue 37, 10 units, load ~4-5): 10,000-node GB200 862 of the bound 864 (the engine's
start had 847), DGX 840 of 842 (835). With the LP's entity counts made integral (HiGHS with
integral counts, 55 s, far over any budget) the same packing reached 864 on GB200 in four rounds:
what is left is the rounding of the LP, not the packing.

Work: counted like the packer's (:class:`.budget.Meter`), one visit per :data:`VECTOR_VISITS`
candidate nodes scanned, charged to the run's budget.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from gangplan.solver.exact.budget import Budget, Meter
from gangplan.solver.exact.start.check import model_accepts
from gangplan.solver.exact.start.hint import (
    better,
    complete_first_fit,
    default_incumbent,
    free_after,
    placements_from_counts,
    repaired,
)
from gangplan.solver.exact.variables import Counts

if TYPE_CHECKING:
    from gangplan.solver.exact.build import BuiltModel
    from gangplan.solver.exact.domain_bound import DomainBound

ROUNDING_TOLERANCE = 1e-6
"""An LP count of 2.9999999 is 3 entities (floating point)."""
QUOTA_LEFT = 0.5
"""A pool is still where the LP puts a kind's pods while more than this many of them are left."""
VECTOR_VISITS = 2
"""Candidate nodes scanned (numpy) per visit of :class:`.budget.Meter`. Measured (load ~3.5):
one packing of the 10,000-node GB200 counts 0.2-0.27 units and took 0.15-0.16 s, of DGX 0.09
units and 0.13 s."""
ROUNDS = 8
"""At most this many packings (10,000-node GB200: 862 in the fifth; DGX: 840 in the second, the
third leaves the same entities out and ends the rounds)."""
START_UNITS = 2.0
"""At most this much work (units) for the packings."""


Item = tuple[int, "int | None", "str | None", int]
"""(class, planned domain or None, topology key or None, pods it needs)."""


def rounded_plan(bound: DomainBound) -> list[Item]:
    """The entities the LP admits, each with the domain it is planned in (see step 1 of the
    module doc); kinds in a fixed order, a kind's entities in queue order."""
    rel = bound.relaxation
    out: list[Item] = []
    for ent, per_domain in sorted(
        bound.plan.items(), key=lambda kv: (kv[0].type, kv[0].key or "", kv[0].need)
    ):
        queue = [c for c, k in rel.members.get(ent, []) for _ in range(k)]
        total = min(len(queue), math.floor(sum(per_domain.values()) + ROUNDING_TOLERANCE))
        doms = sorted(per_domain, key=lambda x: -1 if x is None else x)
        counts = {d: math.floor(per_domain[d] + ROUNDING_TOLERANCE) for d in doms}
        extra = max(0, total - sum(counts.values()))
        for d in sorted(doms, key=lambda x: (-(per_domain[x] - counts[x]), -1 if x is None else x))[
            :extra
        ]:
            counts[d] += 1
        queue_at = iter(queue)
        for d in doms:
            for _ in range(counts[d]):
                c = next(queue_at, None)
                if c is not None:
                    out.append((c, d, ent.key, ent.need))
    return out


def pack_plan(
    built: BuiltModel,
    bound: DomainBound,
    meter: Meter,
    first: dict[int, int] | None = None,
    failed: set[int] | None = None,
) -> Counts | None:
    """The plan of :func:`rounded_plan` packed (step 2 of the module doc), nothing else placed;
    ``first``: plan item -> how early it goes (higher first); the items that fit nowhere are
    added to ``failed``. None when nothing is planned or something is forced."""
    em, inst = built.em, built.inst
    base = default_incumbent(em)
    rel = bound.relaxation
    plan = rounded_plan(bound) if rel is not None else []
    if base is None or not plan:
        return None
    first = first or {}
    free, pods = free_after(em, base.per_class, base.evicted)
    free = free.astype(np.int64, copy=True)
    pods = pods.astype(np.int64, copy=True)
    per_class = [dict(d) for d in base.per_class]
    size_of = {c: rel.sizes[ent.type] for ent, ms in rel.members.items() for c, _ in ms}
    type_of = {c: ent.type for ent, ms in rel.members.items() for c, _ in ms}
    n_nodes = inst.n_nodes
    pool_at = np.full(n_nodes, -1, dtype=np.int64)
    for p, m in enumerate(rel.pool_nodes):
        pool_at[m] = p
    pool_arrays = [np.asarray(m, dtype=np.int64) for m in rel.pool_nodes]
    quota = {
        k: dict(v) for k, v in bound.pods.items()
    }  # the LP's pods per kind and pool, not yet placed
    usable = pool_at >= 0
    everything = np.nonzero(usable)[0]
    ids = {k: np.where(usable, inst.domains(k)[0], -1) for k in rel.keys}
    nodes_of: dict[tuple[str, int], np.ndarray] = {}
    for k, arr in ids.items():
        order = np.argsort(arr, kind="stable")
        sorted_ids = arr[order]
        for d in np.unique(sorted_ids[sorted_ids >= 0]).tolist():
            lo, hi = np.searchsorted(sorted_ids, [d, d + 1])
            nodes_of[(k, d)] = np.sort(order[lo:hi])
    smallest = min((item[0] for item in plan), key=lambda c: size_of[c])
    unit = np.asarray(em.req[smallest], dtype=np.int64) // max(1, size_of[smallest])
    dims = np.nonzero(unit > 0)[0].tolist()
    big = np.iinfo(np.int64).max // 4

    def holds(c: int, nodes: np.ndarray) -> np.ndarray:
        """Pods of class ``c`` each of ``nodes`` takes now (its requests, the pod slots), where the
        class is eligible with a fit on the bound state."""
        req = em.req[c]
        k = pods[nodes]
        for r in np.nonzero(req > 0)[0].tolist():
            k = np.minimum(k, free[nodes, r] // req[r])
        gate = em.elig[c].eligible[nodes] & (np.asarray(em.elig[c].fit)[nodes] > 0)
        return np.where(gate, np.maximum(k, 0), 0)

    def best_fit(c: int, nodes: np.ndarray) -> int | None:
        """The node of ``nodes`` taking a pod of ``c`` with the least room left, or None."""
        meter.tick(-(-len(nodes) // VECTOR_VISITS))
        ok = holds(c, nodes) > 0
        if not ok.any():
            return None
        room = np.full(len(nodes), big, dtype=np.int64)
        for r in dims:
            room = np.minimum(room, free[nodes, r] // unit[r])
        return int(nodes[int(np.argmin(np.where(ok, room, big)))])

    def put(c: int, n: int, kind: tuple, k: int) -> None:
        free[n] -= k * np.asarray(em.req[c], dtype=np.int64)
        pods[n] -= k
        left = quota.setdefault(kind, {})
        left[int(pool_at[n])] = left.get(int(pool_at[n]), 0.0) - k

    def place(c: int, need: int, nodes: np.ndarray, kind: tuple) -> bool:
        """``need`` pods of ``c`` in ``nodes`` (all or none), each first in the pools where the LP
        put pods of ``kind``."""
        chosen: list[int] = []
        left = quota.setdefault(kind, {})
        for _ in range(need):
            planned = [pool_arrays[p] for p, v in left.items() if v > QUOTA_LEFT]
            n = best_fit(c, np.concatenate(planned)) if planned else None
            if n is None:
                n = best_fit(c, nodes)
            if n is None:
                break
            put(c, n, kind, 1)
            chosen.append(n)
        if len(chosen) < need:
            for n in chosen:
                put(c, n, kind, -1)
            return False
        for n in chosen:
            per_class[c][n] = per_class[c].get(n, 0) + 1
        return True

    def anywhere(c: int, d: int | None, key: str | None, need: int) -> bool:
        """In the planned domain ``d`` when it holds the entity, else in the domain of ``key``
        holding it most tightly."""
        if key is None:
            return place(c, need, everything, (type_of[c], None, None))
        nodes = nodes_of.get((key, d))
        if (
            nodes is not None
            and int(holds(c, nodes).sum()) >= need
            and place(c, need, nodes, (type_of[c], key, d))
        ):
            return True
        meter.tick(-(-n_nodes // VECTOR_VISITS))
        per_node = holds(c, np.arange(n_nodes))
        dom = ids[key]
        cap = np.bincount(dom[dom >= 0], weights=per_node[dom >= 0])
        for d2 in sorted((int(x) for x in np.nonzero(cap >= need)[0]), key=lambda x: (cap[x], x)):
            if place(c, need, nodes_of[(key, d2)], (type_of[c], key, d2)):
                return True
        return False

    span = {
        k: float(np.mean([len(v) for (kk, _), v in nodes_of.items() if kk == k])) for k in rel.keys
    }

    def rank(i: int):
        c, _, key, need = plan[i]
        return (-first.get(i, 0), span.get(key, float(n_nodes)), -size_of[c], -need, i)

    for i in sorted(range(len(plan)), key=rank):
        if meter.done():
            break
        if not anywhere(*plan[i]) and failed is not None:
            failed.add(i)
    return Counts(per_class, base.evicted)


def domain_start(
    built: BuiltModel, bound: DomainBound, best: Counts | None, *, budget: Budget | None = None
) -> Counts | None:
    """The packed plan (module doc) topped up first fit, when it beats ``best`` on the decision
    tiers and both the validator (nothing blamed) and the model (:func:`.start.check.model_accepts`)
    accept it; else None. Its work is charged to ``budget``."""
    if bound.relaxation is None or not bound.plan:
        return None
    em = built.em
    meter = Meter(budget, START_UNITS)
    packed = None
    first: dict[int, int] = {}
    before: set[int] = set()
    for r in range(ROUNDS):
        failed: set[int] = set()
        trial = pack_plan(built, bound, meter, first, failed)
        if trial is None:
            return None
        if packed is None or better(built.tiers, trial, packed):
            packed = trial
        if not failed or failed == before or meter.done():
            break  # (the same ones left out again: going on would repeat this packing)
        before = failed
        for (
            i
        ) in failed:  # what did not fit goes first next time, the latest failures before older ones
            first[i] = r + 1
    meter.tick(
        len(em.inst.classes) * em.inst.n_nodes // VECTOR_VISITS // 16
    )  # the first fit's scans, roughly
    full = complete_first_fit(em, packed)
    if best is not None and not better(built.tiers, full, best):
        return None
    checked, dropped, _ = repaired(em, placements_from_counts(em, full), repairs=1)
    if (
        checked is None
        or dropped
        or not model_accepts(built, checked, time_limit=5.0, budget=budget)
    ):
        return None
    return checked


__all__ = ["domain_start", "pack_plan", "rounded_plan"]
