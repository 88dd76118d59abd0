"""Group topology constraints: a group's pods all sit inside one domain of its topology key.

validate's ``topology`` rule (KEP-5732 ``schedulingConstraints.topology``, as
``pkg/scheduler/framework/plugins/topologyaware/topology_placement.go`` @008b3652 places it): every pod of the PodGroup (or of every PodGroup under the CompositePodGroup), bound and new,
on nodes carrying the key, all with the same value. Bound members already pin the domain; that
case and "the key is missing" are static (see :func:`eligibility._topology_mask`). Otherwise one
Boolean ``y[g, d]`` per candidate domain, at most one of them true, gates the classes' counts
(docs/explanation/exact-engine.md). A pooled class's count per candidate domain is the family's output
(:class:`Confinement`), which decoding reads to hand out the shape's slots domain by domain.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from gangplan.solver.exact.eligibility import (
    ClassView,
    Conditions,
    group_topologies,
    leaves_under,
    topology_poolable,
)
from gangplan.solver.exact.family import BuildContext, Family, Layout
from gangplan.solver.exact.instance import NO_DOMAIN, Instance
from gangplan.solver.exact.names import TOPOLOGY
from gangplan.solver.exact.variables import ExactModel


@dataclass(frozen=True)
class Confinement:
    """Pooled confined class -> domain -> (count variable, or None when the count is
    ``size * y``; the domain literal ``y``; the class size)."""

    by_class: dict[int, dict[int, tuple[cp_model.IntVar | None, cp_model.IntVar, int]]]


def topology_mask(view: ClassView, cond: Conditions) -> np.ndarray | None:
    """Group topology constraints: nodes with the key, inside the domain bound members already use."""
    inst, mask = view.inst, None
    for key, leaves in group_topologies(inst, view.cls):
        ids, _ = inst.domains(key)
        m = ids != NO_DOMAIN
        doms = set()
        for leaf in leaves:
            for q in inst.cluster.groups.node(leaf).members:
                if q.key in inst.bound_node_of:
                    doms.add(int(ids[inst.bound_node_of[q.key]]))
        if NO_DOMAIN in doms or len(doms) > 1:
            m = np.zeros(inst.n_nodes, dtype=bool)
        elif doms:
            m = ids == next(iter(doms))
        mask = m if mask is None else mask & m
    return mask


def topology_layout(inst: Instance, objective: str) -> Layout:
    """Per-node counts for classes under a topology rule they cannot be pooled for (a composite's,
    or more than one)."""
    return Layout(
        per_node={
            c.index: c.size
            for c in inst.classes
            if group_topologies(inst, c) and not topology_poolable(inst, c)
        }
    )


def _constrained_groups(em: ExactModel) -> list[tuple[str, str, list[int]]]:
    inst = em.inst
    out = []
    for key, leaf in inst.leaves.items():
        if leaf.topology_key and leaf.classes:
            out.append((key, leaf.topology_key, list(leaf.classes)))
    for key, node in inst.composites.items():
        if node.topology_key:
            classes = [c for lf in leaves_under(inst, key) for c in inst.leaves[lf].classes]
            if classes:
                out.append((key, node.topology_key, classes))
    return out


def add_topology_constraints(ctx: BuildContext) -> Confinement:
    """At most one domain per constrained group; a class's count in any other domain is 0."""
    confined = Confinement(by_class={})
    if not ctx.enforces(TOPOLOGY):
        return confined
    em = ctx.em
    pools: dict[tuple[int, int], list] = {}
    for _key, tkey, classes in _constrained_groups(em):
        ids, names = em.inst.domains(tkey)
        domains = em.eligible_domains(classes, tkey)
        if len(domains) <= 1:
            continue
        id_list = em.inst.domain_list(tkey)
        hosts = _hosting_domains(em, _rooms(em, ids, len(names), classes), classes)
        members = tuple(classes)
        ys = {d: _domain_literal(em, id_list, d, members) for d in domains if hosts[d]}
        for c in classes:
            if em.private[c]:
                _private_class(em, c, tkey, ys)
            elif c in em.split:
                _split_class(em, c, ids, ys)
            else:
                _pooled_class(em, c, tkey, ys, pools, confined, id_list)
        if ys:
            em.model.add_at_most_one(list(ys.values()))
    _pool_constraints(em, pools)
    return confined


def _rooms(
    em: ExactModel, ids: np.ndarray, n_domains: int, classes: list[int]
) -> dict[int, np.ndarray]:
    """Per class of the group, per domain id: the pods of the class its nodes can take on the
    bound state (each node's fit, at most the class size), summed in one bincount."""
    valid = ids >= 0
    out = {}
    for c in classes:
        per_node = np.minimum(em.elig[c].fit, em.inst.classes[c].size)
        out[c] = np.bincount(ids[valid], weights=per_node[valid], minlength=n_domains).astype(
            np.int64
        )
    return out


def _domain_literal(em: ExactModel, ids: list[int], d: int, classes: tuple[int, ...]):
    """``y[g, d]``: the group's classes have pods in domain ``d`` of ``ids`` (its value from a
    placement: the domains the classes use, tallied once per placement,
    :meth:`.variables.Counts.domains_used`)."""
    return em.new_aux(
        0, 1, lambda cnt, ids=ids, d=d, cl=classes: int(d in cnt.domains_used(cl, ids))
    )


def _hosting_domains(
    em: ExactModel, rooms: dict[int, np.ndarray], classes: list[int]
) -> np.ndarray:
    """Static domain filter (as workload-aware preemption filters domains first), for every domain
    of the key at once: on the bound state alone, can the domain take the pods the group needs
    (minCount, or every pod of a class when admission places them all)?"""
    c0 = em.inst.classes[classes[0]]
    leaf = em.inst.leaves.get(c0.group) if c0.group else None
    if leaf is not None and leaf.classes == classes and _forced_full(em, classes[0]):
        return np.logical_and.reduce([rooms[c] >= em.inst.classes[c].size for c in classes])
    need = leaf.min_count - leaf.bound if leaf is not None and leaf.classes == classes else 1
    return np.sum([rooms[c] for c in classes], axis=0) >= max(1, need)


def _private_class(em: ExactModel, c: int, tkey: str, ys: dict) -> None:
    for d, nodes in em.domain_vars(c, tkey).items():
        total = cp_model.LinearExpr.sum([v for _, v in nodes])
        if d not in ys:
            em.model.add(total == 0)
            continue
        ub = sum(em.x_ub[c][n] for n, _ in nodes)
        em.model.add(total <= ub * ys[d])


def _split_class(em: ExactModel, c: int, ids, ys: dict) -> None:
    """A pooled class counted per finer domain (:mod:`.locality`): each counted domain lies in one
    domain of the key, so the counts inside a candidate domain are gated by its literal and the
    counts anywhere else are 0."""
    inside: dict[int, list] = {}
    for nodes, var, _ in em.split[c]:
        d = int(ids[nodes[0]])
        if d in ys:
            inside.setdefault(d, []).append(var)
        else:
            em.model.add(var == 0)
    size = em.inst.classes[c].size
    full = _forced_full(em, c)
    for d, vs in sorted(inside.items()):
        if full:  # as in the pooled case: the domain's demand is exactly size * y (a tight LP)
            em.model.add(cp_model.LinearExpr.sum(vs) == size * ys[d])
        else:
            em.model.add(cp_model.LinearExpr.sum(vs) <= size * ys[d])
    if full:
        em.model.add(em.placed[c] == size * cp_model.LinearExpr.sum([ys[d] for d in inside]))


def _forced_full(em: ExactModel, c: int) -> bool:
    """Admission places every pod of the group (minCount covers all of them): count = size * y."""
    leaf = em.inst.leaves[em.inst.classes[c].group]
    total = sum(em.inst.classes[k].size for k in leaf.classes)
    return leaf.gang and leaf.min_count - leaf.bound >= total


def _pooled_class(
    em: ExactModel,
    c: int,
    tkey: str,
    ys: dict,
    pools: dict,
    confined: Confinement,
    id_list: list[int],
) -> None:
    """Shape-slot demand per domain (:mod:`.variables`); ``id_list``: the ``tkey`` domain ids as
    a list (the count's value from a placement is its pods per domain,
    :meth:`.variables.Counts.in_domain`)."""
    size = em.inst.classes[c].size
    s = em.shape_of[c]
    mine = [d for d in em.eligible_domains([c], tkey) if d in ys]
    own = confined.by_class[c] = {}
    if _forced_full(em, c):
        for d in mine:
            own[d] = (None, ys[d], size)
            pools.setdefault((s, d), []).append(size * ys[d])
        em.model.add(em.placed[c] == size * cp_model.LinearExpr.sum([ys[d] for d in mine]))
        return
    counts = []
    for d in mine:
        cd = em.new_aux(0, size, lambda cnt, d=d: cnt.in_domain(c, id_list, d))
        em.model.add(cd <= size * ys[d])
        own[d] = (cd, ys[d], size)
        pools.setdefault((s, d), []).append(cd)
        counts.append(cd)
    em.model.add(cp_model.LinearExpr.sum(counts) == em.placed[c])


def _pool_constraints(em: ExactModel, pools: dict) -> None:
    """Per shape and domain: the confined demand fits the shape's slots inside the domain. With
    one key per shape the domains partition the nodes, so these cuts plus the cluster-wide pool
    are exactly Hall's condition: the slots can be handed out (decoding does it domain by domain)."""
    by_domain: dict[int, dict[int, list]] = {}
    for (s, d), demand in sorted(pools.items(), key=lambda kv: kv[0]):
        if s not in by_domain:  # the shape's slots grouped by domain, in slot order
            ids, _ = em.inst.domains(em.shapes[s].confined_key)
            groups: dict[int, list] = {}
            for n, v in em.v[s].items():
                groups.setdefault(int(ids[n]), []).append(v)
            by_domain[s] = groups
        slots = by_domain[s].get(d, [])
        em.model.add(cp_model.LinearExpr.sum(demand) <= cp_model.LinearExpr.sum(slots))


FAMILY = Family(
    TOPOLOGY, mask=topology_mask, layout=topology_layout, build=add_topology_constraints
)
