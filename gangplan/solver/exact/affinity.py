"""Required inter-pod affinity and anti-affinity, any topologyKey, between pending pods.

Final-state semantics of validate's ``pod-affinity`` and ``pod-anti-affinity`` rules, which
mirror InterPodAffinity's Filter (``plugins/interpodaffinity/filtering.go`` v1.35):

* anti-affinity: no other pod matching a term of the pod sits in the same domain of the term's
  key; and the pod sits in no domain where another pod's term matches it. Bound pods make this
  static (eligibility); between pending classes it is a mutual exclusion per domain, with a
  presence literal ``u[c, key, d]`` (count <= ub * u) and ``count[c', d] <= ub' * (1 - u)``. A class
  its own term matches has at most one pod per domain.
* affinity: for every term, some *other* pod matching all the terms sits in the same domain of the
  term's key, unless the first-pod rule applies. Domains where a bound pod already provides the
  match need nothing. Elsewhere: ``support[d] >= u`` (or ``>= 2u - first`` when the class matches
  its own terms: its own pods count, minus itself). The first-pod rule is the validator's
  order-free one: allowed only when no bound matching pod sits on a node carrying a term's key;
  with one term, a single pod may stand alone in one domain (``first[d]``, at most one per class,
  and not in two classes matching each other), while matching pods elsewhere may have come later;
  with several terms, the strict form (one matching pod cluster-wide).
"""

from __future__ import annotations

import numpy as np
from ortools.sat.python import cp_model

from gangplan.predicates import matches_all_terms, term_matches
from gangplan.solver.exact.instance import NO_DOMAIN, PodClass
from gangplan.solver.exact.variables import ExactModel

ANTI, AFFINITY = "pod-anti-affinity", "pod-affinity"


def add_affinity_constraints(em: ExactModel) -> None:
    firsts: dict[int, tuple[list[cp_model.IntVar], frozenset[int]]] = {}
    for c in em.inst.classes:
        if not em.x[c.index]:
            continue
        if c.rep.affinity.pod_anti_affinity_required and ANTI not in em.skip:
            _anti(em, c)
        if c.rep.affinity.pod_affinity_required and AFFINITY not in em.skip:
            used = _affinity(em, c)
            if used is not None:
                firsts[c.index] = used
    _link_first_pods(em, firsts)


def _link_first_pods(em: ExactModel, firsts: dict[int, tuple[list[cp_model.IntVar], frozenset[int]]]) -> None:
    """Two classes whose first pods would match each other's term cannot both have one."""
    for a, (fa, match_a) in sorted(firsts.items()):
        for b, (fb, match_b) in sorted(firsts.items()):
            if a < b and (b in match_a or a in match_b):
                em.model.add(cp_model.LinearExpr.sum(fa + fb) <= 1)


def _anti(em: ExactModel, c: PodClass) -> None:
    ns = em.inst.cluster.namespaces
    p = c.rep
    for t in p.affinity.pod_anti_affinity_required:
        matching = [o.index for o in em.inst.classes if em.x[o.index] and term_matches(t, p.namespace, o.rep, ns)]
        if not matching:
            continue
        for d, nodes in sorted(em.domain_vars(c.index, t.topology_key).items()):
            if c.index in matching and sum(em.x_ub[c.index][n] for n, _ in nodes) > 1:
                em.model.add(cp_model.LinearExpr.sum([v for _, v in nodes]) <= 1)
            others = [o for o in matching if o != c.index]
            for o in others:
                theirs = em.domain_vars(o, t.topology_key).get(d, [])
                if not theirs:
                    continue
                u = em.presence(c.index, t.topology_key, d)
                ub = sum(em.x_ub[o][n] for n, _ in theirs)
                em.model.add(cp_model.LinearExpr.sum([v for _, v in theirs]) <= ub * (1 - u))


def _affinity(em: ExactModel, c: PodClass) -> tuple[list[cp_model.IntVar], frozenset[int]] | None:
    """Returns the class's first-pod literals (and the classes its term matches), if it has any."""
    inst = em.inst
    ns = inst.cluster.namespaces
    p = c.rep
    terms = p.affinity.pod_affinity_required
    matching = [o.index for o in inst.classes if em.x[o.index] and matches_all_terms(terms, p.namespace, o.rep, ns)]
    bound = [q for pods in inst.bound_on_node for q in pods if matches_all_terms(terms, p.namespace, q, ns)]
    # Upstream's affinityCounts only counts matching pods on nodes that carry a term's key.
    counted = [q for q in bound if any(inst.domains(t.topology_key)[0][inst.bound_node_of[q.key]] != NO_DOMAIN for t in terms)]
    self_match = c.index in matching
    if not counted and not matching:
        em.model.add(em.placed[c.index] == 0)
        return None
    if self_match and not counted and len(terms) == 1:
        return _affinity_with_first_pod(em, c, terms[0], matching, bound), frozenset(matching)
    first_pod = None
    if self_match and not counted:
        # Several terms: keep the strict form (one matching pod cluster-wide) rather than waive
        # different terms for different pods, which the validator would not accept.
        first_pod = em.new_aux(0, 1, lambda cnt: int(sum(cnt.total(o) for o in matching) <= 1))
        em.model.add(cp_model.LinearExpr.sum([em.placed[o] for o in matching]) <= 1).only_enforce_if(first_pod)
    for t in terms:
        ids, _ = inst.domains(t.topology_key)
        supported = {int(ids[inst.bound_node_of[q.key]]) for q in bound} - {NO_DOMAIN}
        for d in sorted(em.domain_vars(c.index, t.topology_key)):
            if d in supported:
                continue
            u = em.presence(c.index, t.topology_key, d)
            support = cp_model.LinearExpr.sum(em.count_in(matching, t.topology_key, d))
            if not self_match:
                em.model.add(support >= u)
            elif first_pod is not None:
                em.model.add(support >= 2 * u - first_pod)
            else:
                em.model.add(support >= 2 * u)
    return None


def _affinity_with_first_pod(em: ExactModel, c: PodClass, t, matching: list[int], bound: list) -> list[cp_model.IntVar]:
    """One self-matching term, nothing bound counted: the validator's order-free first-pod rule.

    In every domain holding the class, at least one *other* matching pod must be there, except in
    one domain cluster-wide where a single pod may stand alone as the first pod (``first[d]``).
    Matching pods elsewhere may have been placed after it (upstream checks affinity only when a
    pod is placed). Two classes whose first pods would match each other's term cannot both use
    it (:func:`_link_first_pods`).
    """
    inst = em.inst
    ids, _ = inst.domains(t.topology_key)
    supported = {int(ids[inst.bound_node_of[q.key]]) for q in bound} - {NO_DOMAIN}
    firsts = []
    for d in sorted(em.domain_vars(c.index, t.topology_key)):
        if d in supported:
            continue
        u = em.presence(c.index, t.topology_key, d)
        support = cp_model.LinearExpr.sum(em.count_in(matching, t.topology_key, d))
        members = set(np.flatnonzero(ids == d).tolist())
        first = em.new_aux(
            0, 1, lambda cnt, m=members: int(cnt.in_nodes(c.index, m) > 0 and sum(cnt.in_nodes(o, m) for o in matching) == 1)
        )
        em.model.add(support >= 2 * u - first)
        firsts.append(first)
    if firsts:
        em.model.add(cp_model.LinearExpr.sum(firsts) <= 1)
    return firsts
