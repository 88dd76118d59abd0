"""The lexicographic objective, as named tiers (each a linear expression to maximise).

Tiers, highest first, the first ones exactly the shared tiers named, ordered and computed in
:mod:`gangplan.models.objective`, so that the two engines compare on equal terms:

``admitted[p=P]``  root entities admitted at priority P (groups: ``act`` of the root; single pods:
                   their count), one tier per priority present among pending pods, highest first.
``gpus``           (objective="gpus" only) nvidia.com/gpu requested by the placed pods.
``placed``         pending pods placed, extra pods past minCount included.
``pdbViolations``  (``preemption=True`` with evictable units only, :mod:`.preemption`) minimised
``victims[p=P]``   disruption: PDB-violating victim pods, then victim pods per priority P
                   (highest first); each tier is ``upper - cost`` here, the Result reports the cost.
``topology``       (groups annotated ``gangplan.io/preferred-topology`` only) pending pods of the
                   groups packed into one domain of their preferred level; see :mod:`.locality`.
``spread``         (annotated groups, or every multi-pod group with objective="compact") network
                   distance: level-weighted domains spanned beyond the first, as domains saved.
``admitted[p=P]`` of the targets, then ``roomCost``: objective="make-room" (:mod:`.room`)
                   replaces every tier above.
``tiebreak``       a cheap proxy for the greedy's NodeResourcesFit scoring: every placed pod earns
                   its node's weight, the node's requested fraction before the run (0..100,
                   averaged over the profile's scoring resources with their weights) for
                   MostAllocated / an increasing RequestedToCapacityRatio shape, or 100 minus it
                   for LeastAllocated. Among equal optima, pods then land where the greedy's
                   strategy would rather put them. It is linear in the counts: no extra variable.
"""

from __future__ import annotations

import numpy as np
from ortools.sat.python import cp_model

from gangplan.models.objective import PLACED, admitted_priorities, admitted_tier
from gangplan.models.well_known import GPU
from gangplan.solver.exact.family import Outputs
from gangplan.solver.exact.gang import Admission
from gangplan.solver.exact.locality import COMPACT, Locality
from gangplan.solver.exact.preemption import disruption_tiers
from gangplan.solver.exact.quota import KueueChoice
from gangplan.solver.exact.room import MAKE_ROOM, RoomTiers
from gangplan.solver.exact.variables import Counts, ExactModel, Tier

GPUS, TIEBREAK = "gpus", "tiebreak"
OBJECTIVES = ("default", "gpus", COMPACT, MAKE_ROOM)


def build_tiers(em: ExactModel, outputs: Outputs, objective: str) -> list[Tier]:
    """The tiers, highest first, from the variables and the families' outputs (the groups'
    :class:`.gang.Admission`, the :class:`.locality.Locality` terms)."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, not {objective!r}")
    if objective == MAKE_ROOM:  # the targets admitted, then the plan's cost (:mod:`.room`)
        return [*outputs.get(RoomTiers).tiers, _tiebreak_tier(em)]
    admitted = outputs.get(Admission).roots
    inst, cluster = em.inst, em.inst.cluster
    kueue = outputs.find(KueueChoice)
    tiers = [_admitted_tier(em, admitted, pr, kueue) for pr in admitted_priorities(cluster)]
    if objective == "gpus":
        tiers.append(
            _weighted_tier(em, GPUS, [int(c.rep.requests.get(GPU, 0)) for c in inst.classes])
        )
    tiers.append(_weighted_tier(em, PLACED, [1] * len(inst.classes)))
    tiers += disruption_tiers(em)  # preemption only: pdbViolations, victims[p=P]
    locality = outputs.find(Locality)
    if locality is not None:
        tiers += locality.tiers()
    tiers.append(_tiebreak_tier(em))
    return tiers


def _admitted_tier(
    em: ExactModel,
    admitted: dict[str, cp_model.IntVar],
    prio: int,
    kueue: KueueChoice | None = None,
) -> Tier:
    """Roots and single pods admitted at ``prio``; with Kueue, one holding a pod of a Workload
    counts only when the Workload runs whole (``KueueChoice.full``: the rule of
    :func:`gangplan.models.objective.admitted_entities`)."""
    inst = em.inst
    roots = [r for r in inst.roots if r in admitted and _root_priority(em, r) == prio]
    singles = [c.index for c in inst.classes if c.entity is None and c.priority == prio]
    by_root: dict[str, list[int]] = {}
    wanted = set(roots)
    for c in inst.classes:
        if c.entity in wanted:
            by_root.setdefault(c.entity, []).append(c.index)
    leaves_of = {r: by_root.get(r, []) for r in roots}
    of_class = kueue.workload_of_class if kueue is not None else {}
    full_of = kueue.full if kueue is not None else {}

    def whole(cnt: Counts, ws: tuple[str, ...]) -> bool:
        return all(cnt.total(c) == inst.classes[c].size for c, w in of_class.items() if w in ws)

    terms: list = []
    for r in roots:
        ws = tuple(sorted({of_class[c] for c in leaves_of[r] if c in of_class}))
        if not ws:
            if not isinstance(admitted[r], int):
                terms.append(admitted[r])
            continue
        z = em.new_aux(
            0,
            1,
            lambda cnt, r=r, ws=ws: int(any(cnt.total(c) for c in leaves_of[r]) and whole(cnt, ws)),
        )
        em.model.add(z <= admitted[r])
        for w in ws:
            em.model.add(z <= full_of[w])
        terms.append(z)
    for c in singles:
        w = of_class.get(c)
        terms.append(em.placed[c] if w is None else inst.classes[c].size * full_of[w])

    def value(cnt: Counts) -> int:
        groups = 0
        for r in roots:
            ws = tuple(sorted({of_class[c] for c in leaves_of[r] if c in of_class}))
            if any(cnt.total(c) for c in leaves_of[r]) and (not ws or whole(cnt, ws)):
                groups += 1
        pods = sum(cnt.total(c) for c in singles if c not in of_class or whole(cnt, (of_class[c],)))
        return groups + pods

    upper = len(roots) + sum(inst.classes[c].size for c in singles)
    return Tier(admitted_tier(prio), cp_model.LinearExpr.sum(terms), value, upper)


def _root_priority(em: ExactModel, root: str) -> int:
    return em.inst.cluster.groups.node(root).priority


def _weighted_tier(em: ExactModel, name: str, weights: list[int]) -> Tier:
    inst = em.inst
    pairs = [(em.placed[c.index], w) for c, w in zip(inst.classes, weights, strict=True) if w]
    expr = (
        cp_model.LinearExpr.weighted_sum([v for v, _ in pairs], [w for _, w in pairs])
        if pairs
        else cp_model.LinearExpr.sum([])
    )

    def value(cnt: Counts) -> int:
        return sum(w * cnt.total(c) for c, w in enumerate(weights))

    return Tier(
        name, expr, value, sum(w * c.size for c, w in zip(inst.classes, weights, strict=True))
    )


def node_weights(em: ExactModel) -> np.ndarray:
    """Per node the tie-break weight (see the module docstring)."""
    inst, profile = em.inst, em.inst.cluster.profile
    used = inst.nodes_alloc - inst.free
    score = np.zeros(inst.n_nodes)
    total = np.zeros(inst.n_nodes)
    for r, w in profile.fit_resources.items():
        if r not in inst.resources:
            continue
        i = inst.resources.index(r)
        alloc = inst.nodes_alloc[:, i]
        has = alloc > 0
        score[has] += w * np.minimum(used[has, i] / alloc[has], 1.0)
        total[has] += w
    util = np.where(total > 0, np.round(100 * score / np.maximum(total, 1e-9)), 0).astype(np.int64)
    if _prefers_full(em):
        return util
    return 100 - util


def _prefers_full(em: ExactModel) -> bool:
    profile = em.inst.cluster.profile
    if profile.fit_strategy == "MostAllocated":
        return True
    if profile.fit_strategy == "RequestedToCapacityRatio":
        pts = sorted(profile.requested_to_capacity_shape, key=lambda p: p.utilization)
        return not pts or pts[-1].score >= pts[0].score
    return False


def _tiebreak_tier(em: ExactModel) -> Tier:
    w = node_weights(em)
    variables, coefs = [], []
    for n, entries in enumerate(em.node_vars):
        if w[n]:
            for var, _, _ in entries:
                variables.append(var)
                coefs.append(int(w[n]))

    def value(cnt: Counts) -> int:
        return int(sum(w[n] * k for per in cnt.per_class for n, k in per.items()))

    upper = int(w.max(initial=0)) * sum(c.size for c in em.inst.classes)
    return Tier(TIEBREAK, cp_model.LinearExpr.weighted_sum(variables, coefs), value, upper)
