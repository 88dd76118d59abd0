"""Required inter-pod affinity and anti-affinity, any topologyKey, between pending pods.

Final-state semantics of validate's ``pod-affinity`` and ``pod-anti-affinity`` rules, which
mirror InterPodAffinity's Filter (``plugins/interpodaffinity/filtering.go`` v1.35):

* anti-affinity: no other pod matching a term of the pod sits in the same domain of the term's
  key; and the pod sits in no domain where another pod's term matches it. Bound pods make this
  static (eligibility); between pending classes it is a mutual exclusion per domain, with a
  presence literal ``u[c, key, d]`` (count <= ub * u) and ``count[c', d] <= ub' * (1 - u)``. A class
  its own term matches has at most one pod per domain.
* affinity: for every term, some *other* pod matching all the terms sits in the same domain of the
  term's key, unless the first-pod rule applies: no other pod in the whole final state matches all
  the terms and the pod matches them itself. Domains where a bound pod already provides the match
  need nothing. Elsewhere: ``support[d] >= u`` (or ``>= 2u - F`` when the class matches its own
  terms: its own pods count, minus itself), where ``F`` is the first-pod literal, allowed only
  when nothing bound matches, and forcing at most one matching pod cluster-wide.
"""

from __future__ import annotations

from ortools.sat.python import cp_model

from gangplan.predicates import matches_all_terms, term_matches
from gangplan.solver.exact.instance import NO_DOMAIN, PodClass
from gangplan.solver.exact.variables import ExactModel

ANTI, AFFINITY = "pod-anti-affinity", "pod-affinity"


def add_affinity_constraints(em: ExactModel) -> None:
    for c in em.inst.classes:
        if not em.x[c.index]:
            continue
        if c.rep.affinity.pod_anti_affinity_required and ANTI not in em.skip:
            _anti(em, c)
        if c.rep.affinity.pod_affinity_required and AFFINITY not in em.skip:
            _affinity(em, c)


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


def _affinity(em: ExactModel, c: PodClass) -> None:
    inst = em.inst
    ns = inst.cluster.namespaces
    p = c.rep
    terms = p.affinity.pod_affinity_required
    matching = [o.index for o in inst.classes if em.x[o.index] and matches_all_terms(terms, p.namespace, o.rep, ns)]
    bound = [q for pods in inst.bound_on_node for q in pods if matches_all_terms(terms, p.namespace, q, ns)]
    self_match = c.index in matching
    if not bound and not matching:
        em.model.add(em.placed[c.index] == 0)
        return
    first_pod = None
    if self_match and not bound:
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
