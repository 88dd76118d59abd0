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
   none; each pod onto a node that fits it, first among the pools where the LP put pods of its
   kind, chosen by :func:`pack_plan`'s ``best_fit`` (below);
3. packs again, up to :data:`ROUNDS` times, with the entities that did not fit first (the latest
   failures before older ones), keeping the best packing; when the bound is still not reached,
   and one round of domain cuts leaves the LP's floor where it is (so the bound is a placement's
   as far as the cuts can tell, :func:`_more_rounds`), on to :data:`MAX_ROUNDS` packings within
   :data:`MAX_START_UNITS`;
4. tops it up with the entities left out, in queue order, first fit
   (:func:`.start.hint.complete_first_fit`).

Room is every resource of the node and its pod slots, and a pod only goes where its class is
eligible with a fit on the bound state, so the result is a placement the engine then checks: it
keeps it only when the validator and the model accept it (:func:`domain_start`) and when it beats
the start it has. A start, never a proof: when its top tier reaches the LP's bound the tier is
proven by the bound (:mod:`.solve`), without a search.

**Which node** (``best_fit``), with the sizes ``g`` of :mod:`.domain_bound` (a divisibility
chain, room counted in them): a pod of size ``s`` on a node with room ``h`` takes
``floor(h / q) - floor((h - s) / q)`` slots of each larger size ``q`` from it. The node taking the
fewest slots of the largest size, then of the next, ..., then with the least room left, then in
the domain of the widest key (the block) with the fewest nodes still free for a pod of the largest
size, then the first. Why: pods of sizes dividing each other fit a set of nodes iff, for every
size ``q``, the pods of size >= ``q`` need at most the nodes' ``sum floor(h / q)`` slots of it
(the capacity rows of :mod:`.domain_bound`; place the largest first, each anywhere it fits: a
pod of size ``s`` lowers the row of every size ``q <= s`` by exactly ``s / q``, and the rows of
larger sizes no longer matter), so what a pod placed among others costs them is the slots of
larger sizes it breaks. Plain least room left puts a 1-GPU pod on a 2-GPU hole before a 3-GPU
one and breaks a 2-GPU slot the 3-GPU hole keeps; and among equal nodes (4-GPU single pods on
free nodes) the lowest index filled the first blocks' free nodes, which the large block-held
gangs needed.

Measured (issue 37, 10 units): 10,000-node GB200, least room left: 862 of the bound 864 (the
engine's start had 847; 30 packings never reached 864); with the slots: 864 in the 13th packing,
3.4 units, so the tier is proven at the start (the whole run OPTIMAL, 9.8 units, 14.7 s at load
~2.5); DGX 840 of 842 either way (proven by :mod:`.domain_mip`).

Work: counted like the packer's (:class:`.budget.Meter`), one visit per :data:`VECTOR_VISITS`
candidate nodes scanned, charged to the run's budget.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from gangplan.solver.exact.budget import Budget, Meter
from gangplan.solver.exact.domain_bound import BOUND_TOLERANCE
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
"""Packings (or fewer, when :data:`START_UNITS` are spent) before :func:`_more_rounds` decides
whether to go on (10,000-node GB200: 864 in the
13th; DGX: 840 in the second, the third leaves the same entities out and ends the rounds)."""
START_UNITS = 2.0
"""At most this much work (units) for the first :data:`ROUNDS` packings."""
MAX_ROUNDS = 32
MAX_START_UNITS = 4.5
START_RESERVE = 1.0
"""Past :data:`ROUNDS` (:func:`_more_rounds`): at most :data:`MAX_ROUNDS` packings and this much
work for all of them, leaving at least :data:`START_RESERVE` units of the run's work."""


SMALL_SCAN = 24
"""Scans of at most this many candidate nodes run over Python lists instead of numpy (the same
node chosen; only faster: two dozen numpy calls on a few elements cost more than the loop)."""


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
    # Free resources per resource row ([resources, nodes]): a scan reads a few rows at the
    # candidate nodes, a contiguous take each.
    free = np.ascontiguousarray(free.T, dtype=np.int64)
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
    chain = sorted(set(rel.sizes))
    span = {
        k: float(np.mean([len(v) for (kk, _), v in nodes_of.items() if kk == k])) for k in rel.keys
    }
    wide = max(rel.keys, key=lambda k: span[k]) if rel.keys else None
    wide_of = ids[wide] if wide is not None else np.full(n_nodes, -1, dtype=np.int64)

    # Per node the pods of the largest size its room holds: free[r] // unit[r], smallest over
    # the dimensions ``dims`` (``big`` without any), kept up to date as pods are put (``put``).
    room_all = np.full(n_nodes, big, dtype=np.int64)
    for r in dims:
        room_all = np.minimum(room_all, free[r] // unit[r])
    top_size = chain[-1]

    whole_free = np.zeros(max(1, int(wide_of.max(initial=-1)) + 1), dtype=np.int64)
    inside = np.nonzero(wide_of >= 0)[0]
    np.add.at(whole_free, wide_of[inside], (room_all[inside] >= top_size).astype(np.int64))

    # The same state as Python lists, kept in step with the arrays (``put``): most scans are of
    # a handful of nodes (a pool, a rack), where a loop over the nodes beats two dozen numpy calls
    # (:data:`SMALL_SCAN`); whole-cluster scans stay with numpy.
    free_py, pods_py, room_py = free.T.tolist(), pods.tolist(), room_all.tolist()
    whole_py, wide_py, pool_py = whole_free.tolist(), wide_of.tolist(), pool_at.tolist()
    pool_lists: dict[int, list[int]] = {}  # (converted as the pools are scanned)
    unit_py = unit.tolist()
    rows: dict[int, tuple] = {}

    def rows_of(c: int) -> tuple:
        """Class ``c``'s (resource row, request) pairs of what it requests, and the nodes where it
        is eligible with a fit on the bound state; made once per class."""
        if c not in rows:
            req = em.req[c]
            pairs = [(int(r), int(req[r])) for r in np.nonzero(req > 0)[0]]
            rows[c] = (pairs, em.elig[c].eligible & (np.asarray(em.elig[c].fit) > 0))
        return rows[c]

    def pool_list(p: int) -> list[int]:
        if p not in pool_lists:
            pool_lists[p] = pool_arrays[p].tolist()
        return pool_lists[p]

    def holds(c: int, nodes: np.ndarray | None) -> np.ndarray:
        """Pods of class ``c`` each of ``nodes`` (None: every node) takes now (its requests, the
        pod slots), where the class is eligible with a fit on the bound state."""
        pairs, gate = rows_of(c)
        if nodes is None:
            k = pods
            for r, q in pairs:
                k = np.minimum(k, free[r] // q)
            return np.where(gate, np.maximum(k, 0), 0)
        k = pods[nodes]
        for r, q in pairs:
            k = np.minimum(k, free[r].take(nodes) // q)
        return np.where(gate[nodes], np.maximum(k, 0), 0)

    def holds_py(c: int, n: int) -> int:
        """:func:`holds` of one node, from the lists."""
        pairs, gate = rows_of(c)
        if not gate[n]:
            return 0
        k, row = pods_py[n], free_py[n]
        for r, q in pairs:
            k = min(k, row[r] // q)
        return max(k, 0)

    def best_fit(c: int, nodes) -> int | None:
        """The node of ``nodes`` taking a pod of ``c`` with the least room left, or None."""
        meter.tick(-(-len(nodes) // VECTOR_VISITS))
        if len(nodes) <= SMALL_SCAN:
            return _best_fit_py(c, nodes.tolist() if isinstance(nodes, np.ndarray) else nodes)
        fits = nodes[holds(c, nodes) > 0]  # (the order of ``nodes`` kept: ties go to the first)
        if not len(fits):
            return None
        room = room_all[fits]
        s = size_of[c]
        wd = wide_of[fits]
        crowd = np.where(wd >= 0, whole_free[np.maximum(wd, 0)], big)
        keys = [crowd, room]  # np.lexsort: the last key is the first compared
        for q in chain:
            if q > s:  # sizes of q the pod takes from the node
                keys.append(room // q - np.maximum(room - s, 0) // q)
        return int(fits[int(np.lexsort(keys)[0])])

    def _best_fit_py(c: int, nodes: list[int]) -> int | None:
        """:func:`best_fit` over a few nodes, from the lists: the first node with the smallest
        (slots taken of each larger size, largest first; room; crowd), as ``np.lexsort`` ranks."""
        s = size_of[c]
        larger = [q for q in reversed(chain) if q > s]
        best, best_key = None, None
        for n in nodes:
            if holds_py(c, n) <= 0:
                continue
            room = room_py[n]
            w = wide_py[n]
            key = (
                *[room // q - max(room - s, 0) // q for q in larger],
                room,
                whole_py[w] if w >= 0 else big,
            )
            if best_key is None or key < best_key:
                best, best_key = n, key
        return best

    def put(c: int, n: int, kind: tuple, k: int) -> None:
        pairs, _ = rows_of(c)
        was = room_py[n] >= top_size
        row = free_py[n]
        for r, q in pairs:  # (the other dimensions are not requested: unchanged)
            row[r] -= k * q
            free[r, n] = row[r]
        if dims:
            room_all[n] = room_py[n] = min(big, *(row[r] // unit_py[r] for r in dims))
        w = wide_py[n]
        if w >= 0:
            step = int(room_py[n] >= top_size) - int(was)
            whole_free[w] += step
            whole_py[w] += step
        pods[n] -= k
        pods_py[n] -= k
        left = quota.setdefault(kind, {})
        left[pool_py[n]] = left.get(pool_py[n], 0.0) - k

    def place(c: int, need: int, nodes: np.ndarray, kind: tuple) -> bool:
        """``need`` pods of ``c`` in ``nodes`` (all or none), each first in the pools where the LP
        put pods of ``kind``."""
        chosen: list[int] = []
        left = quota.setdefault(kind, {})
        for _ in range(need):
            planned = [p for p, v in left.items() if v > QUOTA_LEFT]
            n = None
            if planned:
                if sum(len(pool_arrays[p]) for p in planned) <= SMALL_SCAN:
                    n = best_fit(c, [m for p in planned for m in pool_list(p)])
                else:
                    n = best_fit(c, np.concatenate([pool_arrays[p] for p in planned]))
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
        if nodes is not None:
            room = (
                sum(holds_py(c, n) for n in nodes.tolist())
                if len(nodes) <= SMALL_SCAN
                else int(holds(c, nodes).sum())
            )
            if room >= need and place(c, need, nodes, (type_of[c], key, d)):
                return True
        meter.tick(-(-n_nodes // VECTOR_VISITS))
        per_node = holds(c, None)
        dom = ids[key]
        cap = np.bincount(dom[dom >= 0], weights=per_node[dom >= 0])
        for d2 in sorted((int(x) for x in np.nonzero(cap >= need)[0]), key=lambda x: (cap[x], x)):
            if place(c, need, nodes_of[(key, d2)], (type_of[c], key, d2)):
                return True
        return False

    def rank(i: int):
        c, _, key, need = plan[i]
        return (-first.get(i, 0), span.get(key, float(n_nodes)), -size_of[c], -need, i)

    for i in sorted(range(len(plan)), key=rank):
        if meter.done():
            break
        if not anywhere(*plan[i]) and failed is not None:
            failed.add(i)
    return Counts(per_class, base.evicted)


def _more_rounds(bound: DomainBound, meter: Meter, budget: Budget | None) -> bool:
    """After :data:`ROUNDS` packings short of the bound: whether to go on, and how far (step 3
    of the module doc). Only when one round of domain cuts (:func:`.domain_mip.screened_cut`,
    computed once per bound and reused by the check that follows the start) leaves the LP's
    floor where it is, so the bound may well be reached; then up to :data:`MAX_START_UNITS` in
    all, keeping :data:`START_RESERVE` of the run's work for what follows."""
    from gangplan.solver.exact.domain_mip import screened_cut

    cut = screened_cut(bound, budget)
    if cut is not None and math.floor(cut + BOUND_TOLERANCE) < bound.bound:
        return False
    spare = MAX_START_UNITS if budget is None else budget.left() - START_RESERVE
    meter.cap = min(MAX_START_UNITS, meter.units + max(0.0, spare))
    return not meter.done()


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
    extended = False
    for r in range(MAX_ROUNDS):
        failed: set[int] = set()
        trial = pack_plan(built, bound, meter, first, failed)
        if trial is None:
            return None
        if packed is None or better(built.tiers, trial, packed):
            packed = trial
        if not failed or failed == before:
            break  # (the same ones left out again: going on would repeat this packing)
        if (r + 1 == ROUNDS or meter.done()) and not extended:
            extended = True
            if not _more_rounds(bound, meter, budget):
                break
        if meter.done():
            break
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
