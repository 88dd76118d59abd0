"""PodTopologySpread with ``whenUnsatisfiable: DoNotSchedule``, as the validator checks it.

validate's ``topology-spread`` rule (after ``plugins/podtopologyspread/filtering.go`` v1.35), which
only reports violations every placement order must have: for every placed pod and constraint,
the *certain* count in the pod's domain (bound matching pods plus new matching pods that are its
spread peers: same namespace, constraints, node selector, required node affinity, tolerations;
the last of them placed saw all the others) minus the minimum over the eligible domains of the
*final* count (every matching pod) is at most maxSkew. Eligible nodes carry every hard
constraint's key and, per the node affinity / taints policies, pass the pod's node selector and
tolerate its taints; only pods on such nodes count. With fewer eligible domains than minDomains
the minimum is 0.

Model: ``final[d] = bound[d] + sum of matching classes' counts on eligible nodes of d``, where with
preemption ``bound[d]`` loses the matching pods of evicted units (``- sum k * evict[u]``); an integer
``lo <= final[e]`` for every eligible domain (so lo <= min; requiring ``certain[d] - lo <= maxSkew``
is then sufficient, and lo = min makes it exact); the skew constraint is enforced only in domains
where the constrained class has pods (presence literal). ``lo`` and the final counts are shared by
every class with the same constraint, namespace and eligible node set.
"""

from __future__ import annotations

import numpy as np
from ortools.sat.python import cp_model

from gangplan.models.objects import Pod, TopologySpreadConstraint
from gangplan.predicates import selector_matches
from gangplan.solver.exact.eligibility import ClassView, Conditions, EligibilityCache, has_labels
from gangplan.solver.exact.family import BuildContext, Family, Layout, selector_layout
from gangplan.solver.exact.instance import NO_DOMAIN, Instance, PodClass, canonical
from gangplan.solver.exact.names import TOPOLOGY_SPREAD
from gangplan.solver.exact.variables import ExactModel


def _hard(p: Pod) -> list[TopologySpreadConstraint]:
    return [sc for sc in p.topology_spread if sc.when_unsatisfiable == "DoNotSchedule"]


def spread_mask(view: ClassView, cond: Conditions) -> np.ndarray | None:
    """Nodes carrying every DoNotSchedule constraint's key."""
    return has_labels(view.inst, [sc.topology_key for sc in _hard(view.cls.rep)])


def spread_layout(inst: Instance, objective: str) -> Layout:
    """Per-node counts for classes with a DoNotSchedule spread and the classes their selectors
    count (same namespace)."""
    return selector_layout(
        inst,
        lambda p: bool(_hard(p)),
        lambda p, q: any(
            q.namespace == p.namespace and selector_matches(sc.label_selector, q.labels)
            for sc in _hard(p)
        ),
    )


def add_spread_constraints(ctx: BuildContext) -> None:
    if not ctx.enforces(TOPOLOGY_SPREAD):
        return
    em = ctx.em
    shared: dict[str, tuple] = {}
    for c in em.inst.classes:
        if not em.x[c.index]:
            continue
        for sc in c.rep.topology_spread:
            if sc.when_unsatisfiable == "DoNotSchedule":
                _constraint(em, ctx.cache, c, sc, shared)


def spread_peers(p: Pod, q: Pod) -> bool:
    """Pods whose Filter sees the same constraints over the same nodes (validate's criterion)."""
    return (
        q.namespace == p.namespace
        and q.topology_spread == p.topology_spread
        and q.node_selector == p.node_selector
        and q.affinity.node_required == p.affinity.node_required
        and q.tolerations == p.tolerations
    )


def _eligible_nodes(
    em: ExactModel, cache: EligibilityCache, c: PodClass, sc: TopologySpreadConstraint
) -> np.ndarray:
    p = c.rep
    _, taint_ok, selector_ok = cache.node_masks(c)  # the same predicates validate calls
    mask = np.ones(em.inst.n_nodes, dtype=bool)
    for hard in p.topology_spread:  # nodes must carry every hard constraint's key
        if hard.when_unsatisfiable == "DoNotSchedule":
            mask &= em.inst.domains(hard.topology_key)[0] != NO_DOMAIN
    if sc.node_affinity_policy == "Honor":
        mask &= selector_ok
    if sc.node_taints_policy == "Honor":
        mask &= taint_ok
    return mask


def _domain_counts(em: ExactModel, c: PodClass, sc: TopologySpreadConstraint, mask: np.ndarray):
    """Per eligible domain: (bound matching pods, pending count variables, node set)."""
    inst, p = em.inst, c.rep
    ids, _ = inst.domains(sc.topology_key)

    def matches(q) -> bool:
        return (
            q.namespace == p.namespace
            and not q.terminating
            and selector_matches(sc.label_selector, q.labels)
        )

    matching = [o.index for o in inst.classes if em.x[o.index] and matches(o.rep)]
    out: dict[int, tuple[int, list, set[int], list[tuple[int, int]]]] = {}
    for d in sorted(set(ids[mask].tolist())):
        members = set(np.nonzero(mask & (ids == d))[0].tolist())
        hits = [q for n in members for q in inst.bound_on_node[n] if matches(q)]
        gone: dict[int, int] = {}
        for q in hits:
            if q.key in inst.unit_of:
                gone[inst.unit_of[q.key]] = gone.get(inst.unit_of[q.key], 0) + 1
        out[d] = (
            len(hits),
            em.count_in(matching, sc.topology_key, d, mask),
            members,
            sorted(gone.items()),
        )
    return out, matching


def _bound_expr(em: ExactModel, bound: int, gone: list[tuple[int, int]]):
    """Bound matching pods of a domain minus those of evicted units (preemption)."""
    if not gone:
        return bound
    return bound - cp_model.LinearExpr.weighted_sum(
        [em.evict[u] for u, _ in gone], [k for _, k in gone]
    )


def _bound_value(bound: int, gone: list[tuple[int, int]], cnt) -> int:
    return bound - sum(k for u, k in gone if u in cnt.evicted)


def _constraint(
    em: ExactModel, cache: EligibilityCache, c: PodClass, sc: TopologySpreadConstraint, shared: dict
) -> None:
    mask = _eligible_nodes(em, cache, c, sc)
    key = canonical(sc) + c.rep.namespace + mask.tobytes().hex()
    if key not in shared:
        counts, matching = _domain_counts(em, c, sc, mask)
        if not counts:
            shared[key] = (None, counts)
        else:
            shared[key] = (_lower(em, sc, counts, matching), counts)
    lo, counts = shared[key]
    if not counts:
        return
    peers = [
        o.index
        for o in em.inst.classes
        if em.x[o.index]
        and spread_peers(c.rep, o.rep)
        and selector_matches(sc.label_selector, o.rep.labels)
        and not o.rep.terminating
    ]
    for d in sorted(em.domain_vars(c.index, sc.topology_key)):
        if d not in counts:
            continue
        bound, _, _, gone = counts[d]
        certain = em.count_in(peers, sc.topology_key, d, mask)
        u = em.presence(c.index, sc.topology_key, d)
        em.model.add(
            cp_model.LinearExpr.sum(certain) + _bound_expr(em, bound, gone) - lo <= sc.max_skew
        ).only_enforce_if(u)


def _lower(em: ExactModel, sc: TopologySpreadConstraint, counts: dict, matching: list[int]):
    """``lo``: 0 below minDomains, else a variable under every eligible domain's count."""
    if sc.min_domains is not None and len(counts) < sc.min_domains:
        return 0

    def value(cnt) -> int:
        return min(
            _bound_value(b, g, cnt) + sum(cnt.in_nodes(o, m) for o in matching)
            for b, _, m, g in counts.values()
        )

    hi = min(b for b, _, _, _ in counts.values()) + sum(em.inst.classes[o].size for o in matching)
    lo = em.new_aux(0, hi, value)
    for bound, variables, _, gone in counts.values():
        em.model.add(lo <= cp_model.LinearExpr.sum(variables) + _bound_expr(em, bound, gone))
    return lo


FAMILY = Family(
    TOPOLOGY_SPREAD, mask=spread_mask, layout=spread_layout, build=add_spread_constraints
)
