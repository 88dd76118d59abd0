"""Opt-in eviction (``solve_exact(..., preemption=True)``): which bound pods may leave, and what it costs.

Victim units mirror upstream's ``WorkloadPortion`` (the units of
``getCrossNodesVictims`` in ``pkg/scheduler/framework/preemption/podgrouppreemption.go``,
kubernetes/kubernetes 00f22436be9627b0d57b18d24da0017217f4e5a0), re-derived here from the Cluster
(no engine imports the other): a bound pod with no ``disruptionMode: all`` ancestor group is its
own unit; the pods under the highest ``all`` ancestor (every bound pod of every leaf PodGroup below
it) form one unit. A unit's priority is its root group's, else the pod's own (``getPodPriority``).

Model (docs/explanation/exact-engine.md, "Eviction"): one Boolean ``evict[u]`` per evictable unit. Capacity on a
node subtracts the evicted pods' requests and pod slots (see :mod:`.capacity`), and a unit may only
be evicted when an entity of strictly higher priority whose preemptionPolicy is
PreemptLowerPriority (the group's policy, else ``Never`` if any of its pods says so) is admitted:
``evict[u] <= sum of those entities' admission``, which is the validator's ``victim`` rule; and,
locally, only when such a preemptor's pod lands on a node of the unit (``evict[u] <= sum of the
higher-priority preemptors' counts on the unit's nodes``): upstream only evicts what the
preemptor needs (the reprieve step), and what it needs is room on the nodes it takes. Leftover room
may then go to lower-priority pods too, as upstream's later cycles would use it.

Every such unit is evictable, whatever pod-to-pod rule it takes part in; each rule of the model
sees an evicted unit gone, as the validator does:

* capacity: its requests and pod slots come back (:mod:`.capacity`);
* host ports and anti-affinity: a node (domain) whose bound blockers for a class are all in
  evictable units stays eligible, with ``count(class, node) <= ub * evict[u]`` per blocking unit
  (:mod:`.eligibility`, such classes are private);
* DoNotSchedule spread: evicted matching pods leave the domain counts (:mod:`.spread`);
* gangs and composites with pending pods: a leaf's bound count is ``bound - evicted pods`` of the
  group (:mod:`.gang`); a hierarchy is never its own preemptor (same priority, and excluded);
* required pod affinity: a victim may have supported a pod placed before it left (the shared
  definition, :mod:`gangplan.predicates.affinity_order`), and the model keeps evicted supporters
  counted (:mod:`.affinity`), the order where victims leave last.

Upstream evicts the same way: ``SelectVictimsOnNode`` (``pkg/scheduler/framework/preemption/
preemption.go``) removes every lower-priority pod and re-runs only the *preemptor's* filters,
and the pod-group path (``podgrouppreemption.go``) selects units the same way; neither looks at
other pods' affinity, gang membership or spread, so no unit is spared for those reasons. Units on
nodes the model does not know are never evicted.

Objective (the ``disruption`` tiers, right after ``placed``; upstream's importance criteria of
``pickOneNodeForPreemption`` / ``MoreImportantVictim``, lexicographic): PDB violations first (per
PDB, ``max(0, evicted matching pods - status.disruptionsAllowed)``, pods already in the PDB's
``disruptedPods`` do not count), then victim pods per priority, highest priority first (so one
higher-priority victim costs more than any number of lower ones), which also minimises the count.
Tiers are maximised by :mod:`.solve`, so each is written as ``upper - cost``; the Result reports
the cost itself (``pdbViolations``, ``victims[p=P]``, and the total ``victims``), minimised.
"""

from __future__ import annotations

import math

from ortools.sat.python import cp_model

from gangplan.models.groups import EntityKey
from gangplan.models.objective import (
    BROKEN_GROUPS,
    PDB_VIOLATIONS,
    VICTIM_PODS,
    pdb_counts,
    victims_tier,
)
from gangplan.solver.exact.family import BuildContext, Family
from gangplan.solver.exact.gang import Admission
from gangplan.solver.exact.names import PREEMPTION
from gangplan.solver.exact.variables import ExactModel, Tier
from gangplan.solver.exact.victims import preemptors


# ---- model --------------------------------------------------------------------------------------
def add_eviction(ctx: BuildContext) -> None:
    """Each ``evict[u]`` (created with the variables, before capacity uses them) is allowed only
    while a higher-priority preemptor is admitted."""
    em = ctx.em
    inst = em.inst
    if not inst.units:
        return
    admitted = ctx.outputs.get(Admission).roots
    pre = preemptors(inst.cluster, inst.classes)
    singles: dict[EntityKey, list] = {}
    for c in inst.classes:
        if c.entity is None:
            for p in c.pods:
                singles.setdefault(EntityKey.pod(p.key), []).append(c.index)
    prio_of = _slot_priorities(em)
    pre_entities = {e for _, e in pre}
    preempting = {
        c.index for c in inst.classes if inst.cluster.groups.entity_of(c.pods[0]) in pre_entities
    }
    tree = inst.cluster.groups
    for var, u in zip(em.evict, inst.units, strict=True):
        lits = []
        own = {tree.root_of(p.group_key) for p in u.pods if p.group_key in tree}
        for pr, ent in pre:
            if pr <= u.priority or ent.key in own:  # never its own hierarchy's preemptor
                continue
            if ent in singles:
                lits += [em.placed[c] for c in singles[ent]]
            elif not isinstance(admitted.get(ent.key, 0), int):
                lits.append(admitted[ent.key])
        local = [
            v
            for n in sorted(u.usage)
            for v, _, _ in em.node_vars[n]
            if prio_of[v.index][0] > u.priority and prio_of[v.index][1] & preempting
        ]
        if lits and local:
            em.model.add(var <= cp_model.LinearExpr.sum(sorted(set(lits), key=lambda v: v.index)))
            em.model.add(var <= cp_model.LinearExpr.sum(local))
        else:
            em.model.add(var == 0)
    _conditional_nodes(em)


def _conditional_nodes(em: ExactModel) -> None:
    """A class may use a node its bound blockers (host port, anti-affinity) make ineligible only
    when every blocking unit is evicted: ``x[c, n] <= ub * evict[u]`` (:mod:`.eligibility`)."""
    for c, e in enumerate(em.elig):
        for n, units in e.needs_evict.items():
            var = em.x[c].get(n)
            if var is None:
                continue
            for u in sorted(units):
                em.model.add(var <= em.x_ub[c][n] * em.evict[u])


def _slot_priorities(em: ExactModel) -> dict[int, tuple[int, set[int]]]:
    """Variable index of every per-node count -> (priority of the pods it counts, their classes).
    With preemption, shapes never mix priorities (see :mod:`.variables`)."""
    out: dict[int, tuple[int, set[int]]] = {}
    for c, xs in enumerate(em.x):
        for var in xs.values():
            out[var.index] = (em.inst.classes[c].priority, {c})
    for s, slots in enumerate(em.v):
        members = set(em.shapes[s].classes)
        prio = em.inst.classes[em.shapes[s].classes[0]].priority
        for var in slots.values():
            out[var.index] = (prio, members)
    return out


def disruption_tiers(em: ExactModel) -> list[Tier]:
    """``pdbViolations`` then ``victims[p=P]`` per unit priority, highest first (upper - cost)."""
    inst = em.inst
    if not inst.units:
        return []
    tiers = []
    viols, viol_upper = [], 0
    for pdb in inst.cluster.pdbs:
        per_unit = [sum(1 for p in u.pods if pdb_counts(pdb, p)) for u in inst.units]
        worst = sum(per_unit) - pdb.disruptions_allowed
        if worst <= 0:
            continue
        allowed = pdb.disruptions_allowed
        fn = _pdb_violations(per_unit, allowed)
        v = em.new_aux(0, worst, fn)
        pairs = [(em.evict[i], k) for i, k in enumerate(per_unit) if k]
        em.model.add(
            v
            >= cp_model.LinearExpr.weighted_sum([x for x, _ in pairs], [k for _, k in pairs])
            - allowed
        )
        viols.append((v, fn))
        viol_upper += worst
    if viols:
        fns = [fn for _, fn in viols]
        tiers.append(
            Tier(
                PDB_VIOLATIONS,
                viol_upper - cp_model.LinearExpr.sum([v for v, _ in viols]),
                lambda cnt, fns=fns, up=viol_upper: up - sum(f(cnt) for f in fns),
                viol_upper,
                cost=True,
            )
        )
    for prio in sorted({u.priority for u in inst.units}, reverse=True):
        idx = [i for i, u in enumerate(inst.units) if u.priority == prio]
        sizes = {i: len(inst.units[i].pods) for i in idx}
        upper = sum(sizes.values())
        expr = upper - cp_model.LinearExpr.weighted_sum(
            [em.evict[i] for i in idx], [sizes[i] for i in idx]
        )
        tiers.append(
            Tier(
                victims_tier(prio),
                expr,
                lambda cnt, s=sizes, up=upper: (
                    up - sum(k for i, k in s.items() if i in cnt.evicted)
                ),
                upper,
                cost=True,
            )
        )
    tiers += _broken_groups_tier(em)
    sizes = {i: len(u.pods) for i, u in enumerate(inst.units)}
    upper = sum(sizes.values())
    tiers.append(
        Tier(
            VICTIM_PODS,
            upper - cp_model.LinearExpr.weighted_sum(list(em.evict), list(sizes.values())),
            lambda cnt, s=sizes, up=upper: up - sum(k for i, k in s.items() if i in cnt.evicted),
            upper,
            cost=True,
        )
    )
    return tiers


def _broken_groups_tier(em: ExactModel) -> list[Tier]:
    """``brokenGroups``: gangs (and ``all`` groups) losing a pod; ``broken[g] >= evict[u]`` for every
    unit holding a pod of ``g`` (the solver minimises, so ``broken[g]`` is the OR)."""
    inst = em.inst
    tree = inst.cluster.groups
    touching: dict[str, list[int]] = {}
    for i, u in enumerate(inst.units):
        for g in tree.broken_groups(u.pods):
            touching.setdefault(g, []).append(i)
    if not touching:
        return []
    broken = []
    for _, units in sorted(touching.items()):
        b = em.new_aux(0, 1, lambda cnt, us=tuple(units): int(any(i in cnt.evicted for i in us)))
        for i in units:
            em.model.add(b >= em.evict[i])
        broken.append((b, tuple(units)))
    upper = len(broken)
    return [
        Tier(
            BROKEN_GROUPS,
            upper - cp_model.LinearExpr.sum([b for b, _ in broken]),
            lambda cnt, bs=tuple(us for _, us in broken), up=upper: (
                up - sum(1 for us in bs if any(i in cnt.evicted for i in us))
            ),
            upper,
            cost=True,
        )
    ]


def _pdb_violations(per_unit: list[int], allowed: int):
    def value(cnt) -> int:
        return max(0, sum(per_unit[i] for i in cnt.evicted) - allowed)

    return value


def evicted_units(em: ExactModel, solution: list[int]) -> frozenset[int]:
    return frozenset(i for i, var in enumerate(em.evict) if solution[var.index])


def victims_of(em: ExactModel, evicted: frozenset[int]) -> list[str]:
    return sorted(p.key for i in evicted for p in em.inst.units[i].pods)


def units_of_victims(em: ExactModel, victims) -> frozenset[int] | None:
    """The evictable units exactly covering ``victims``; None when they cannot be expressed."""
    victims = set(victims)
    chosen = {i for i, u in enumerate(em.inst.units) if any(p.key in victims for p in u.pods)}
    covered = {p.key for i in chosen for p in em.inst.units[i].pods}
    return frozenset(chosen) if covered == victims else None


def nominated_pods(em: ExactModel, placements: dict[str, str], evicted: frozenset[int]) -> set[str]:
    """Placed pods on a node a victim left (the greedy reports its preemptors the same way)."""
    nodes = em.inst.cluster.nodes
    freed = {nodes[n].name for i in evicted for n in em.inst.units[i].usage}
    return {k for k, n in placements.items() if n in freed}


def disruption_report(tiers: list[Tier], phases) -> tuple[dict[str, float], dict[str, float]]:
    """(objective, bound) of the disruption tiers as minimised costs (upper - tier value)."""
    uppers = {t.name: t.upper for t in tiers if t.cost}
    obj, bound = {}, {}
    for ph in phases:
        if ph.tier in uppers:
            obj[ph.tier] = float(uppers[ph.tier] - ph.value)
            if math.isfinite(ph.bound):
                bound[ph.tier] = float(uppers[ph.tier] - ph.bound)
    return obj, bound


__all__ = ["add_eviction", "disruption_tiers"]


FAMILY = Family(PREEMPTION, build=add_eviction, rule=False)
