"""The make-room objective (``solve_exact(..., room=RoomSpec(...))``, issue 40): the cheapest
change that admits the target groups, by moving running pods their controllers re-create and,
with ``evict``, stopping lower-priority work.

The cluster arrives marked (:mod:`gangplan.models.room`): every movable running pod is pending
again with ``gangplan.io/moved-from: <node>``, the targets carry ``gangplan.io/make-room-target``,
other pending pods are gated. So every other family reads the question as an ordinary placement:
a moved pod lands only where it fits with all its own rules (capacity, node rules, affinity,
spread, topology, ports), and a target as any pending group. This family adds what makes it a
question of moves, all inert under any other objective:

* ``left[c, n] >= orig[c, n] - x[c, n]``: pods of movable class ``c`` that leave node ``n``
  (``orig``: how many of the class run there now). Pods of a class are interchangeable, so the
  pods that stay are the ones already there, and make-room's decoding pairs them that way.
* A movable pod must run again (``placed[c] == size``) unless ``evict`` allows it to stop: its
  priority below every target's (then ``size - placed[c]`` of them are evicted).
* A group whose ``disruptionMode`` is ``all`` (its root's) moves whole or not at all:
  ``moved[g]`` forces every pod back onto its node when 0, and counts every pod when 1.
* Plans cordon the nodes the targets take while the moved pods are re-created, so a moved pod
  never lands on such a node: ``x[c, n] <= orig[c, n] + ub * (1 - target_on[n])``.
* PodDisruptionBudgets hold: pods matching one that leave (moved or evicted, the preemption
  family's victims included) stay within ``status.disruptionsAllowed``.

Tiers (maximised, highest first): ``admitted[p=P]`` of the targets per priority, then
``roomCost`` (reported as a cost, minimised): the weighted sum of groups disrupted, pods moved,
pods evicted and GPUs interrupted (:class:`gangplan.models.room.RoomWeights`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from gangplan.models.objective import admitted_tier, pdb_counts
from gangplan.models.room import MOVED_FROM, TARGET, RoomSpec
from gangplan.models.well_known import GPU
from gangplan.solver.exact.family import BuildContext, Family, Layout
from gangplan.solver.exact.gang import Admission
from gangplan.solver.exact.instance import Instance
from gangplan.solver.exact.variables import Counts, Tier

MAKE_ROOM = "make-room"
ROOM = "room"
ROOM_COST = "roomCost"


def movable_classes(inst: Instance) -> list[int]:
    return [c.index for c in inst.classes if MOVED_FROM in c.rep.annotations]


def target_classes(inst: Instance) -> list[int]:
    return [c.index for c in inst.classes if c.rep.annotations.get(TARGET) == "true"]


def _layout(inst: Instance, objective: str) -> Layout:
    if objective != MAKE_ROOM:
        return Layout()
    classes = movable_classes(inst) + target_classes(inst)
    return Layout(per_node={c: inst.classes[c].size for c in classes})


@dataclass
class RoomTiers:
    """The make-room tiers, and how a placement's cost splits (for the Result)."""

    tiers: list[Tier]
    parts: Callable[[Counts], dict[str, int]]


Lefts = list[tuple[int, "cp_model.LinearExprT", Callable[[Counts], int]]]
"""Per movable class: (origin node, pods of the class that leave it, their value from counts)."""


class _Room:
    """The make-room part of one model, built in steps (see the module docstring)."""

    def __init__(self, ctx: BuildContext, spec: RoomSpec) -> None:
        self.ctx, self.spec, self.w = ctx, spec, spec.weights
        self.em = em = ctx.em
        self.inst = inst = em.inst
        self.model, self.tree = em.model, inst.cluster.groups
        self.movable, self.targets = movable_classes(inst), target_classes(inst)
        node_of = inst.cluster.node_index
        self.orig: dict[int, Counter] = {
            c: Counter(node_of[p.annotations[MOVED_FROM]] for p in inst.classes[c].pods)
            for c in self.movable
        }
        self.by_root: dict[str, list[int]] = {}
        for c in self.movable:
            root = inst.classes[c].entity
            if root is not None:
                self.by_root.setdefault(root, []).append(c)
        self.target_on: dict[int, cp_model.IntVar] = {}
        self.left: dict[int, Lefts] = {}
        self.whole: dict[str, cp_model.IntVar] = {}
        self.disrupted: list[tuple[cp_model.IntVar, Callable[[Counts], int]]] = []
        units = inst.units
        self.unit_gpus = [sum(int(p.requests.get(GPU, 0)) for p in u.pods) for u in units]

    # ---- constraints -------------------------------------------------------------------------
    def cordon(self) -> None:
        """``target_on[n]``, and no moved pod lands on a node a target takes."""
        em, model, orig = self.em, self.model, self.orig
        landing = {n for c in self.movable for n in em.x[c]}
        for n in sorted(landing):
            xs = [(em.x[t][n], em.x_ub[t][n], t) for t in self.targets if n in em.x[t]]
            if not xs:
                continue
            ts = tuple(t for _, _, t in xs)
            b = em.new_aux(
                0, 1, lambda cnt, n=n, ts=ts: int(any(cnt.per_class[t].get(n, 0) for t in ts))
            )
            for var, ub, _ in xs:
                model.add(var <= ub * b)
            self.target_on[n] = b
            for c in self.movable:
                var = em.x[c].get(n)
                if var is not None:
                    ub = em.x_ub[c][n]
                    model.add(var <= orig[c][n] + ub - ub * b)

    def leaving(self) -> None:
        """``left[c, n]``, and every moved pod placed unless it may be evicted."""
        em, inst = self.em, self.inst
        prios = {inst.classes[t].priority for t in self.targets}
        lowest = min(prios) if prios else None
        for c in self.movable:
            out: Lefts = []
            for n, k in sorted(self.orig[c].items()):
                var = em.x[c].get(n)

                def value(cnt: Counts, c=c, n=n, k=k) -> int:
                    return max(0, k - cnt.per_class[c].get(n, 0))

                if var is None:
                    out.append((n, k, value))
                    continue
                lv = em.new_aux(0, k, value)
                self.model.add(lv >= k - var)
                out.append((n, lv, value))
            self.left[c] = out
            evictable = self.spec.evict and lowest is not None and inst.classes[c].priority < lowest
            if not evictable:
                self.model.add(em.placed[c] == inst.classes[c].size)

    def _moved_value(self, cs: tuple[int, ...]) -> Callable[[Counts], int]:
        orig = self.orig

        def value(cnt: Counts) -> int:
            return int(
                any(
                    cnt.per_class[c].get(n, 0) != orig[c][n]
                    for c in cs
                    for n in set(orig[c]) | set(cnt.per_class[c])
                )
            )

        return value

    def groups(self) -> None:
        """``disruptionMode: all`` groups move whole (``moved[g]``); a root losing a pod is
        disrupted."""
        em, model = self.em, self.model
        for root, cs in sorted(self.by_root.items()):
            if self.tree.node(root).disruption_mode == "all":
                moved = self._moved_value(tuple(cs))
                g = em.new_aux(0, 1, moved)
                for c in cs:
                    for n in set(self.orig[c]) | set(em.x[c]):
                        k, var = self.orig[c][n], em.x[c].get(n)
                        if var is None:
                            if k:  # a pod that cannot stay: the group moves
                                model.add(g == 1)
                            continue
                        model.add(var - k <= em.x_ub[c][n] * g)
                        model.add(k - var <= k * g)
                self.whole[root] = g
                self.disrupted.append((g, moved))
                continue

            def any_left(cnt: Counts, cs=tuple(cs)) -> int:
                return int(any(v(cnt) for c in cs for _, _, v in self.left[c]))

            d = em.new_aux(0, 1, any_left)
            for c in cs:
                for _, lv, _ in self.left[c]:
                    model.add(lv <= self.inst.classes[c].size * d)
            self.disrupted.append((d, any_left))

    def pods_out(self, c: int) -> cp_model.LinearExprT:
        """Pods of class ``c`` moved or evicted (all of them once their all-mode group moves)."""
        root = self.inst.classes[c].entity
        if root in self.whole:
            return self.inst.classes[c].size * self.whole[root]
        return cp_model.LinearExpr.sum([lv for _, lv, _ in self.left[c]])

    def pods_out_value(self, cnt: Counts, c: int) -> int:
        root = self.inst.classes[c].entity
        if root in self.whole:
            moved = self._moved_value(tuple(self.by_root[root]))(cnt)
            return self.inst.classes[c].size * moved
        return sum(v(cnt) for _, _, v in self.left[c])

    def budgets(self) -> None:
        """PodDisruptionBudgets: leaving pods within ``status.disruptionsAllowed``."""
        inst, em = self.inst, self.em
        for pdb in inst.cluster.pdbs:
            terms = [self.pods_out(c) for c in self.movable if pdb_counts(pdb, inst.classes[c].rep)]
            terms += [
                len([p for p in u.pods if pdb_counts(pdb, p)]) * em.evict[i]
                for i, u in enumerate(inst.units)
                if any(pdb_counts(pdb, p) for p in u.pods)
            ]
            if terms:
                self.model.add(cp_model.LinearExpr.sum(terms) <= max(0, pdb.disruptions_allowed))

    def victim_groups(self) -> None:
        """The roots of evicted victim units (preemption) count as disrupted too."""
        tree, em = self.tree, self.em
        unit_groups = [
            sorted({tree.root_of(p.group_key) for p in u.pods if p.group_key in tree})
            for u in self.inst.units
        ]
        for r in sorted({r for rs in unit_groups for r in rs} - set(self.by_root)):
            idx = tuple(i for i, rs in enumerate(unit_groups) if r in rs)

            def hit(cnt: Counts, idx=idx) -> int:
                return int(any(i in cnt.evicted for i in idx))

            b = em.new_aux(0, 1, hit)
            for i in idx:
                self.model.add(b >= em.evict[i])
            self.disrupted.append((b, hit))

    # ---- the cost ----------------------------------------------------------------------------
    def parts(self, cnt: Counts) -> dict[str, int]:
        """A placement's cost, per part (:meth:`gangplan.models.room.RoomWeights.cost`)."""
        inst = self.inst
        moved = evicted = gpus = 0
        for c in self.movable:
            ev = inst.classes[c].size - cnt.total(c)
            out = self.pods_out_value(cnt, c)
            evicted += ev
            moved += max(0, out - ev)
            gpus += out * int(inst.classes[c].rep.requests.get(GPU, 0))
        for i in cnt.evicted:
            evicted += len(inst.units[i].pods)
            gpus += self.unit_gpus[i]
        groups = sum(f(cnt) for _, f in self.disrupted)
        return {"groups": groups, "moves": moved, "evictions": evicted, "gpus": gpus}

    def cost(self) -> tuple[cp_model.LinearExprT, int]:
        """The weighted cost as a linear expression, and an upper bound of it."""
        inst, em, w = self.inst, self.em, self.w
        terms: list[cp_model.LinearExprT] = []
        upper = 0
        for c in self.movable:
            size, g = inst.classes[c].size, int(inst.classes[c].rep.requests.get(GPU, 0))
            out, ev = self.pods_out(c), size - em.placed[c]
            # moved = out - evicted (an evicted pod leaves its node too)
            terms.append(w.moves * (out - ev) + w.evictions * ev + w.gpus * g * out)
            upper += size * max(w.moves, w.evictions) + w.gpus * g * size
        for i, u in enumerate(inst.units):
            terms.append((w.evictions * len(u.pods) + w.gpus * self.unit_gpus[i]) * em.evict[i])
            upper += w.evictions * len(u.pods) + w.gpus * self.unit_gpus[i]
        for var, _ in self.disrupted:
            terms.append(w.groups * var)
            upper += w.groups
        return cp_model.LinearExpr.sum(terms), upper

    def floor(self, cost: cp_model.LinearExprT) -> None:
        """``cost >= floor * admitted`` (:func:`_cost_floor`)."""
        found = _cost_floor(self.em, self.movable, self.targets, self.orig, self.w)
        if found is None:
            return
        root, value = found
        admitted = self.ctx.outputs.get(Admission).roots.get(root)
        if admitted is not None and not isinstance(admitted, int):
            self.model.add(cost >= value * admitted)


def _build(ctx: BuildContext) -> RoomTiers | None:
    if ctx.objective != MAKE_ROOM:
        return None
    room = _Room(ctx, ctx.outputs.find(RoomSpec) or RoomSpec())
    room.cordon()
    room.leaving()
    _hosting_cuts(room.em, room.movable, room.targets, room.orig, room.left, room.target_on)
    room.groups()
    room.budgets()
    room.victim_groups()
    cost, upper = room.cost()
    room.floor(cost)
    w = room.w
    tiers = _target_tiers(ctx, room.targets)
    tiers.append(
        Tier(
            ROOM_COST,
            upper - cost,
            lambda cnt: upper - w.cost(**room.parts(cnt)),
            upper,
            cost=True,
        )
    )
    return RoomTiers(tiers=tiers, parts=room.parts)


def _fewest_to_free(em, here: list[tuple[int, int]], deficit: np.ndarray) -> int | None:
    """The fewest movable pods (``here``: (class, count) on the node) whose removal frees
    ``deficit`` of every resource: per resource the largest pods first (no fewer pods free as
    much), the most over the resources; None when removing them all is not enough."""
    need = 0
    for r in np.nonzero(deficit > 0)[0].tolist():
        freed, count = 0, 0
        for c, k in sorted(here, key=lambda ck: -int(em.req[ck[0]][r])):
            q = int(em.req[c][r])
            if freed >= deficit[r] or q <= 0:
                break
            take = min(k, -(-(int(deficit[r]) - freed) // q))
            freed, count = freed + take * q, count + take
        if freed < deficit[r]:
            return None
        need = max(need, count)
    return need


def _used(em, here: list[tuple[int, int]], like: np.ndarray) -> np.ndarray:
    out = np.zeros_like(like)
    for c, k in here:
        out = out + k * em.req[c]
    return out


def _hosting_cuts(em, movable, targets, orig, left, target_on) -> None:
    """A valid inequality that makes the LP relaxation see the moves a target costs: a node that
    hosts a target pod loses at least ``need[n]`` of its movable pods, the fewest whose removal
    frees the smallest target request there (:func:`_fewest_to_free`). Without it the relaxation
    spreads a target pod fractionally over the free room of many nodes and bounds the cost at 0.
    Nodes with evictable units are left out (evictions free room too)."""
    inst = em.inst
    evictable = set()
    for u in inst.units:
        evictable.update(u.usage)
    lefts: dict[int, list] = {}
    for c in movable:
        for m, lv, _ in left[c]:
            lefts.setdefault(m, []).append(lv)
    for n, b in target_on.items():
        if n in evictable or n not in lefts:
            continue
        here = [(c, orig[c][n]) for c in movable if orig[c][n]]
        g = np.min(np.stack([em.req[t] for t in targets if n in em.x[t]]), axis=0)
        need = _fewest_to_free(em, here, _used(em, here, g) - (inst.free[n] - g))
        if need:
            em.model.add(cp_model.LinearExpr.sum(lefts[n]) >= need * b)


def _hosting_cost(em, n: int, movable, orig, g: np.ndarray, j: int, w) -> int | None:
    """A lower bound on what making room for ``j`` target pods of request ``g`` on node ``n``
    costs: the fewest movable pods whose removal frees the deficit (:func:`_fewest_to_free`), at
    the cheaper of a move and an eviction, plus the GPUs of the GPU deficit. None when even
    removing every movable pod leaves too little room."""
    inst = em.inst
    here = [(c, orig[c][n]) for c in movable if orig[c][n]]
    deficit = _used(em, here, g) - (inst.free[n] - j * g)
    count = _fewest_to_free(em, here, deficit)
    if count is None:
        return None
    gi = inst.resources.index(GPU) if GPU in inst.resources else None
    gpus = max(0, int(deficit[gi])) if gi is not None else 0
    return min(w.moves, w.evictions) * count + w.gpus * gpus


MAX_SUBSET_PODS = 12
"""Movable pods on a node up to which :func:`_single_hosting_cost` enumerates their subsets."""


def _subset_cost(em, pods, chosen, by_root, deficit, w) -> int | None:
    """What moving ``chosen`` (classes of pods of one node, ``pods`` all of them) costs, a pod of
    a ``disruptionMode: all`` group bringing its whole group; None when it frees too little."""
    inst, tree = em.inst, em.inst.cluster.groups
    roots = {inst.classes[c].entity for c in chosen if inst.classes[c].entity is not None}
    whole = {r for r in roots if tree.node(r).disruption_mode == "all"}
    freed = np.zeros_like(deficit)
    for c in pods:
        if inst.classes[c].entity in whole:
            freed = freed + em.req[c]
    moved = [c for c in chosen if inst.classes[c].entity not in whole]
    for c in moved:
        freed = freed + em.req[c]
    if (freed < deficit).any():
        return None
    gi = inst.resources.index(GPU) if GPU in inst.resources else None
    gpu = (lambda c: int(em.req[c][gi])) if gi is not None else (lambda c: 0)
    everyone = [(c, inst.classes[c].size) for r in whole for c in by_root[r]]
    count = len(moved) + sum(k for _, k in everyone)
    gpus = sum(gpu(c) for c in moved) + sum(k * gpu(c) for c, k in everyone)
    return w.groups * len(roots) + min(w.moves, w.evictions) * count + w.gpus * gpus


def _single_hosting_cost(em, n: int, movable, orig, g: np.ndarray, w) -> int | None:
    """The least cost of making room for one target pod of request ``g`` on node ``n``, groups
    counted: the cheapest subset of its movable pods whose removal frees the deficit
    (:func:`_subset_cost`), every group touched counted once. Enumerated when the node holds at
    most :data:`MAX_SUBSET_PODS` movable pods, else None (the caller falls back to
    :func:`_hosting_cost`)."""
    inst = em.inst
    pods = [c for c in movable for _ in range(orig[c][n])]
    if len(pods) > MAX_SUBSET_PODS:
        return None
    deficit = sum((em.req[c] for c in pods), np.zeros_like(g)) - (inst.free[n] - g)
    if not (deficit > 0).any():
        return 0
    by_root: dict[str, list[int]] = {}
    for c in movable:
        if inst.classes[c].entity is not None:
            by_root.setdefault(inst.classes[c].entity, []).append(c)
    costs = (
        _subset_cost(
            em, pods, [pods[i] for i in range(len(pods)) if mask >> i & 1], by_root, deficit, w
        )
        for mask in range(1, 1 << len(pods))
    )
    return min((c for c in costs if c is not None), default=None)


def _node_costs(em, t: int, n: int, k: int, movable, orig, w) -> list[int]:
    """``[0, cost of hosting 1 pod, 2 pods, ...]`` of target class ``t`` on node ``n`` (lower
    bounds), up to ``k`` pods or as many as can fit."""
    if k == 1:  # one pod: the exact least cost of the node, groups counted, when small
        single = _single_hosting_cost(em, n, movable, orig, em.req[t], w)
        if single is not None:
            return [0, single]
    costs = [0]
    for j in range(1, min(em.x_ub[t][n], k) + 1):
        c = _hosting_cost(em, n, movable, orig, em.req[t], j, w)
        if c is None:
            break
        costs.append(c)
    return costs


def _knapsack(per_node: list[list[int]], k: int) -> float:
    """The cheapest way to host ``k`` pods given each node's costs of hosting 0, 1, ... pods."""
    dp = [0.0] + [float("inf")] * k  # dp[i]: cheapest hosting of i pods on the nodes seen so far
    for costs in per_node:
        new = list(dp)
        for i in range(1, k + 1):
            for j in range(1, min(len(costs) - 1, i) + 1):
                new[i] = min(new[i], dp[i - j] + costs[j])
        dp = new
    return dp[k]


def _cost_floor(em, movable, targets, orig, w) -> tuple[str, int] | None:
    """(target root, a lower bound on the cost of any plan admitting it): the cheapest way to
    host its minCount pods, node by node (:func:`_node_costs`), within one domain of its
    topology key (or anywhere), by a small knapsack over the nodes (:func:`_knapsack`). Only for
    one target PodGroup of one kind of pod with nothing else evictable: the cases where the
    search otherwise has to prove the floor by enumeration (the relaxation spreads the target
    thinly over free room)."""
    inst = em.inst
    if len(targets) != 1 or inst.units:
        return None
    t = targets[0]
    cls = inst.classes[t]
    tree = inst.cluster.groups
    if cls.group is None or cls.entity != cls.group or not tree.node(cls.group).gang:
        return None
    root, k = cls.group, tree.node(cls.group).need
    key = tree.node(root).obj.topology_key
    ids = inst.domains(key)[0] if key else None
    by_domain: dict[int, list[int]] = {}
    for n in sorted(em.x[t]):
        d = int(ids[n]) if ids is not None else 0
        if d >= 0:
            by_domain.setdefault(d, []).append(n)
    floors = [
        _knapsack([_node_costs(em, t, n, k, movable, orig, w) for n in nodes], k)
        for nodes in by_domain.values()
    ]
    best = min(floors, default=float("inf"))
    return None if best == float("inf") else (root, int(best))


def _target_tiers(ctx: BuildContext, targets: list[int]) -> list[Tier]:
    """``admitted[p=P]`` over the target roots (and target single pods), highest P first."""
    em, inst = ctx.em, ctx.em.inst
    admitted = ctx.outputs.get(Admission).roots
    tiers = []
    for prio in sorted({inst.classes[t].priority for t in targets}, reverse=True):
        cls = [t for t in targets if inst.classes[t].priority == prio]
        roots = sorted({inst.classes[t].entity for t in cls if inst.classes[t].entity})
        singles = [t for t in cls if inst.classes[t].entity is None]
        terms = [admitted[r] for r in roots if not isinstance(admitted.get(r, 0), int)]
        terms += [em.placed[t] for t in singles]
        leaves = {r: [t for t in cls if inst.classes[t].entity == r] for r in roots}

        def value(cnt: Counts, roots=tuple(roots), leaves=leaves, singles=tuple(singles)) -> int:
            return sum(1 for r in roots if any(cnt.total(c) for c in leaves[r])) + sum(
                cnt.total(t) for t in singles
            )

        upper = len(roots) + sum(inst.classes[t].size for t in singles)
        tiers.append(Tier(admitted_tier(prio), cp_model.LinearExpr.sum(terms), value, upper))
    return tiers


FAMILY = Family(name=ROOM, layout=_layout, build=_build, rule=False)
