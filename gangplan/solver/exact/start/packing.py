"""A second warm start for the exact engine: per priority, the cheapest entities first, packed.

The queue-order first-fit start (:func:`.hint.complete_first_fit`) reproduces what a scheduler
does; on an overloaded cluster it is far from the optimum, and CP-SAT then spends the whole budget
finding better solutions although its LP bound is already tight (busy 1,000 nodes x 2,048 GPU pods:
the first tier's bound 76 is known after 0.4 s; from the first-fit start with 68 admissions the
solver needs ~6 s to find 76, the second tier ~90 s). The first tiers count admitted entities per
priority, so a start that admits many cheap entities is much closer:

* **selection**, priority by priority (highest first): the entities the start leaves out (only
  those made of pooled classes, as for the first-fit start) in order of their *dominant share*,
  the largest fraction of any resource's free total the whole entity asks for; each one is kept
  when it can be placed.
* **placement**: an entity goes in best fit, the nodes with the least room for its pods first,
  and a domain-confined group (its own required topology key) into the candidate domain with the
  least room that still holds it. When it does not fit beside what is placed, the whole
  selection so far plus it is packed again from scratch, hardest first (domain-confined groups,
  then larger pods, then larger entities): first-fit decreasing, which repairs most of the
  fragmentation that arrival order leaves. Symmetric entities (same classes' requests, sizes,
  eligible nodes and key) that failed once are not tried again at that state. Among candidate
  domains the one whose placement destroys the least room for the larger pod shapes wins.
* **restarts**: the plain order, then up to ``RESTARTS`` orders with seeded cost noise, within a
  share of the work limit (:func:`..budget.pack_seconds`, counted in node visits by a
  :class:`..budget.Meter`, so where the packing stops is the same on any machine); the
  lexicographically best (decision tiers) is the start. On busy 1,000 x 2,048 (seed 0) the plain order gives 76/53 admissions (first-fit:
  68/35); one of the first five perturbed orders reaches 76/54, the optimum of both tiers.

Everything here is a heuristic whose output the caller validates (and the model checks) before
it is trusted; it never decides optimality. Deterministic: ties keep snapshot order.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from gangplan.models.trace import ExactTiming, HintUse
from gangplan.solver.exact.aggregation import take_nodes
from gangplan.solver.exact.budget import Budget, Meter
from gangplan.solver.exact.start.hint import (
    better,
    default_incumbent,
    entities_in_queue_order,
    free_after,
    placements_from_counts,
    repaired,
)
from gangplan.solver.exact.variables import Counts, ExactModel, Tier

if TYPE_CHECKING:
    from gangplan.solver.exact.build import BuiltModel

MAX_DOMAINS = 8
"""Candidate domains scored per placement of a domain-confined group (the ones with least room)."""
MAX_SHAPES = 4
"""Request vectors the fragmentation score looks at."""
PACK_SECONDS = 1.0
"""Work cap on the packing, in units (the repacks stop there; an incremental pass always finishes)."""
RESTARTS = 8
NOISE = 0.1
"""Perturbed orders tried after the plain one, and the relative cost noise that makes them."""


@dataclass
class _Entity:
    classes: list[int]
    need: list[int]
    ids: np.ndarray | None
    """Per node the domain id of the entity's topology key (None: unconfined)."""
    demand: np.ndarray
    cost: float
    pod: float
    priority: int
    signature: tuple
    cand: np.ndarray = None
    """Nodes eligible for any of its classes, in index order."""
    by_domain: dict[int, np.ndarray] = None
    """Domain id -> the candidate nodes in it (confined entities)."""


def improved_start(
    built: BuiltModel,
    start: Counts | None,
    info: HintUse,
    timing: ExactTiming,
    *,
    seconds: float = PACK_SECONDS,
    budget: Budget | None = None,
) -> Counts | None:
    """The better (lexicographically, decision tiers) of ``start`` and a packed start: from
    nothing when nothing is forced, else on top of ``start`` (which keeps the forced pods). A
    packed start is only taken once the validator accepts it (entities it blames dropped, as for
    any start); ``info`` gets ``start`` when the packed start won, ``timing`` the packing's
    seconds (``packing``) and how many orders it tried (``packingRuns``). ``seconds``: its work
    limit in units, charged to ``budget``."""

    t0 = time.perf_counter()
    em, tiers = built.em, built.tiers
    empty = default_incumbent(em)
    if empty is not None:  # nothing forced: the packing chooses every entity itself
        bases = [("packed from nothing", empty)]
    else:  # forced pods (a diff's decisive-step probes): pack around the start that keeps them
        bases = [("packed on the start", start)] if start is not None else []
    best, how = start, None
    timing.packing_runs = 0
    for name, base in bases:
        more, timing.packing_runs = packed_start(
            em,
            tiers,
            base,
            entities_in_queue_order(em, base.per_class),
            seconds=seconds,
            budget=budget,
        )
        if best is not None and not better(tiers, more, best):
            continue
        checked, _, _ = repaired(em, placements_from_counts(em, more), evicted=more.evicted)
        if (
            checked is not None
            and _keeps_fixed(em, checked, more)
            and (best is None or better(tiers, checked, best))
        ):
            best, how = checked, name
    timing.packing = round(time.perf_counter() - t0, 4)
    if how:
        info.start = how
    return best


def _keeps_fixed(em: ExactModel, checked: Counts, more: Counts) -> bool:
    return all(
        checked.total(c.index) == more.total(c.index)
        for c in em.inst.classes
        if c.fixed_node is not None
    )


def packed_start(
    em: ExactModel,
    tiers: list[Tier],
    counts: Counts,
    entities: list[tuple[list[int], str | None]],
    *,
    seconds: float = PACK_SECONDS,
    restarts: int = RESTARTS,
    first: int | None = None,
    stop: Callable[[Counts], bool] | None = None,
    budget: Budget | None = None,
) -> tuple[Counts, int]:
    """``counts`` plus the entities (``(classes, topology key)`` as the first-fit start lists
    them) selected and packed as the module doc says; the best of the plain order and up to
    ``restarts`` perturbed ones (each entity's cost times ``1 + u``, ``u`` uniform in
    ``0..NOISE`` from ``numpy.random.default_rng(restart)``) while ``seconds`` units of work last
    (node visits counted by a :class:`..budget.Meter` and charged to ``budget``: the same orders
    on any machine). Returns the counts and how many orders were packed.

    ``first`` (not None) continues an earlier call: no plain order, restarts ``first .. first +
    restarts - 1`` only (the best of them, ``counts`` itself when none ran). ``stop``: the restarts
    end as soon as the best so far satisfies it (e.g. it reaches a bound: no order can do better)."""

    meter = Meter(budget, seconds)
    packer = _Packer(em, counts, entities, meter)
    plain = [e.cost for e in packer.entities]
    best = packer.run() if first is None else counts
    runs = 1 if first is None else 0
    start = first or 0
    for restart in range(start, start + restarts):
        if meter.done() or (stop is not None and stop(best)):
            break
        noise = np.random.default_rng(restart).uniform(0.0, NOISE, size=len(plain))
        for e, cost, u in zip(packer.entities, plain, noise.tolist(), strict=True):
            e.cost = cost * (1.0 + u)
        trial = packer.run()
        runs += 1
        if better(tiers, trial, best):
            best = trial
    return best, runs


def nodes_by_domain(nodes: np.ndarray, doms: np.ndarray) -> dict[int, np.ndarray]:
    """``{d: nodes[doms == d]}`` for every domain id ``d >= 0`` of ``doms``, ascending (``doms``:
    the domain of each of ``nodes``): one stable sort instead of one scan of ``nodes`` per domain
    (556 domains of 10,000 nodes on the largest shapes)."""
    keep = doms >= 0
    nodes, doms = nodes[keep], doms[keep]
    order = np.argsort(doms, kind="stable")
    ranked = doms[order]
    cuts = (np.flatnonzero(ranked[1:] != ranked[:-1]) + 1).tolist()
    starts, ends = [0, *cuts], [*cuts, len(ranked)]
    return {int(ranked[a]): nodes[order[a:b]] for a, b in zip(starts, ends, strict=True) if b > a}


class _Packer:
    def __init__(self, em: ExactModel, counts: Counts, entities, meter: Meter) -> None:
        self.em = em
        self.meter = meter
        inst = em.inst
        self.base = [dict(d) for d in counts.per_class]
        self.evicted = counts.evicted
        self.free0, self.pods0 = free_after(em, self.base, counts.evicted)
        total = np.maximum(np.maximum(self.free0, 0).sum(axis=0), 1)
        self.total = np.maximum(self.free0, 0).sum(axis=0)
        self.entities: list[_Entity] = []
        vectors = {em.req[c].tobytes(): em.req[c] for classes, _ in entities for c in classes}
        self.shapes = sorted(vectors.values(), key=lambda q: -float((q / total).max()))[:MAX_SHAPES]
        """The largest request vectors pending (by dominant share): what fragmentation is measured on."""
        big = np.iinfo(np.int64).max // 4
        self.shape_req = np.array(
            [np.where(q > 0, q, big) for q in self.shapes], dtype=np.int64
        ).reshape(len(self.shapes), len(em.inst.resources))
        splits: dict[tuple[str, bytes], dict[int, np.ndarray]] = {}
        for classes, key in entities:
            need = [1 if inst.classes[c].entity is None else inst.classes[c].size for c in classes]
            demand = sum(em.req[c] * k for c, k in zip(classes, need, strict=True))
            ids = inst.domains(key)[0] if key else None
            sig = (
                key,
                tuple(
                    (em.req[c].tobytes(), k, em.elig[c].eligible.tobytes())
                    for c, k in zip(classes, need, strict=True)
                ),
            )
            self.entities.append(
                _Entity(
                    classes=classes,
                    need=need,
                    ids=ids,
                    demand=demand,
                    cost=float((demand / total).max()),
                    pod=max(float((em.req[c] / total).max()) for c in classes),
                    priority=inst.classes[classes[0]].priority,
                    signature=sig,
                )
            )
            e = self.entities[-1]
            union = np.zeros(inst.n_nodes, dtype=bool)
            for c in classes:
                union |= em.elig[c].eligible
            e.cand = np.nonzero(union)[0]
            if ids is not None:
                split = (key, union.tobytes())  # entities alike share their split (read only)
                if split not in splits:
                    splits[split] = nodes_by_domain(e.cand, ids[e.cand])
                e.by_domain = splits[split]

    def run(self) -> Counts:
        chosen: list[_Entity] = []
        state = ([dict(d) for d in self.base], self.free0.copy(), self.pods0.copy())
        for prio in sorted({e.priority for e in self.entities}, reverse=True):
            left = self._pass(
                sorted((e for e in self.entities if e.priority == prio), key=lambda e: e.cost),
                chosen,
                state,
            )
            tried: set[tuple] = set()
            while left and not self.meter.done():
                e = next(
                    (e for e in left if e.signature not in tried and self._could_fit(e, chosen)),
                    None,
                )
                if e is None:
                    break
                tried.add(e.signature)
                trial = self._repack(chosen + [e])
                if trial is None:
                    continue
                chosen.append(e)
                state = trial
                left.remove(e)
                left = self._pass(left, chosen, state)
                tried.clear()  # a different state: what failed may fit now
        return Counts(state[0], self.evicted)

    def _could_fit(self, e: _Entity, chosen: list[_Entity]) -> bool:
        """A necessary condition for a repack to take ``e`` too: the totals fit the free totals."""
        return bool((sum((x.demand for x in chosen), e.demand) <= self.total).all())

    def _pass(self, entities: list[_Entity], chosen: list[_Entity], state) -> list[_Entity]:
        """Place each entity where it fits beside the state; returns the ones that did not fit
        (symmetric entities are not tried again once one failed: room only shrinks)."""
        failed: set[tuple] = set()
        rest = []
        for e in entities:
            if e.signature not in failed and self._place(e, *state):
                chosen.append(e)
            else:
                failed.add(e.signature)
                rest.append(e)
        return rest

    def _repack(self, entities: list[_Entity]):
        state = ([dict(d) for d in self.base], self.free0.copy(), self.pods0.copy())
        for e in sorted(entities, key=lambda e: (e.ids is None, -e.pod, -e.cost)):
            if not self._place(e, *state):
                return None
        return state

    def _room(self, c: int, free: np.ndarray, pods: np.ndarray) -> np.ndarray:
        req = self.em.req[c]
        room = pods.copy()
        for r in np.nonzero(req > 0)[0]:
            room = np.minimum(room, free[:, r] // req[r])
        return np.where(self.em.elig[c].eligible, np.maximum(room, 0), 0)

    def _place(self, e: _Entity, per_class, free, pods) -> bool:
        """Best-fit placement of the whole entity into ``per_class`` / ``free`` / ``pods``: in
        the candidate domain whose placement destroys the least room for the larger pod shapes
        (then the least room of its own), nodes with the least room for its pods first."""
        room = self._room(e.classes[0], free, pods)
        self.meter.tick(len(room))
        if e.ids is None:
            domains = [None]
        else:
            inside = (e.ids >= 0) & (room > 0)
            held = np.bincount(e.ids[inside], weights=room[inside], minlength=0)
            order = np.argsort(held, kind="stable")
            domains = [int(d) for d in order.tolist() if held[d] >= e.need[0]][:MAX_DOMAINS]
        best = None
        for d in domains:
            placed = self._fit(e, free, pods, e.cand if d is None else e.by_domain[d])
            if placed is None:
                continue
            if d is None:
                best = (None, placed)
                break
            damage = self._damage(placed, free, pods)
            if best is None or damage < best[0]:
                best = (damage, placed)
        if best is None:
            return False
        for c, nodes in best[1].items():
            for n, k in nodes.items():
                per_class[c][n] = per_class[c].get(n, 0) + k
                free[n] -= self.em.req[c] * k
                pods[n] -= k
        return True

    def _damage(self, placed: dict[int, dict[int, int]], free, pods) -> tuple[int, ...]:
        """Room lost on the touched nodes for each larger pod shape, largest first."""
        nodes = sorted({n for per in placed.values() for n in per})
        f, p = free[nodes].copy(), pods[nodes].copy()
        at = {n: i for i, n in enumerate(nodes)}
        for c, per in placed.items():
            for n, k in per.items():
                f[at[n]] -= self.em.req[c] * k
                p[at[n]] -= k
        before = self._shape_room(free[nodes], pods[nodes])
        after = self._shape_room(f, p)
        return tuple((before - after).tolist())

    def _shape_room(self, f: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Per larger shape, the pods of it the nodes (rows of ``f`` / ``p``) still hold in total."""
        per = np.floor_divide(np.maximum(f, 0)[:, None, :], self.shape_req[None, :, :]).min(axis=2)
        return np.maximum(np.minimum(per, p[:, None]), 0).sum(axis=0)

    def _fit(self, e: _Entity, free, pods, nodes: np.ndarray) -> dict[int, dict[int, int]] | None:
        """Where the entity's pods go (class -> node -> pods) among ``nodes`` (its candidate
        nodes, in index order), tightest first, or None; ``free`` / ``pods`` are not changed."""
        em = self.em
        self.meter.tick(len(nodes) * len(e.classes))
        f, p = free[nodes], pods[nodes]
        if len(e.classes) > 1:
            f, p = f.copy(), p.copy()
        placed: dict[int, dict[int, int]] = {}
        for c, need in zip(e.classes, e.need, strict=True):
            req = em.req[c]
            room = p
            for r in np.nonzero(req > 0)[0]:
                room = np.minimum(room, f[:, r] // req[r])
            room = np.maximum(room, 0)
            if len(e.classes) > 1:
                room = np.where(em.elig[c].eligible[nodes], room, 0)
            if int(room.sum()) < need:
                return None
            local = np.nonzero(room)[0]
            local = local[np.argsort(room[local], kind="stable")]
            if c in em.anti:
                taken = take_nodes(
                    em,
                    c,
                    nodes[local].tolist(),
                    dict(zip(nodes[local].tolist(), room[local].tolist(), strict=True)),
                    need,
                )
                if sum(k for _, k in taken) < need:
                    return None
                at = {n: i for i, n in zip(local.tolist(), nodes[local].tolist(), strict=True)}
                pairs = [(at[n], k) for n, k in taken]
            else:
                take = np.minimum(
                    room[local], np.maximum(need - (np.cumsum(room[local]) - room[local]), 0)
                )
                hit = np.nonzero(take)[0]
                pairs = list(zip(local[hit].tolist(), take[hit].tolist(), strict=True))
            mine = placed.setdefault(c, {})
            for i, k in pairs:
                mine[int(nodes[i])] = k
                if len(e.classes) > 1:
                    f[i] -= req * k
                    p[i] -= k
        return placed
