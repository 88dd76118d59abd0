"""Aggregation of symmetric anti-affine gangs: pooled slots instead of per-node counts.

A pod class with required anti-affinity is normally *private* (per-node counts ``x[c, n]``, see
:mod:`.variables`), one class per gang, because its pods exclude each other per domain. The common
shape of that rule, "the pods of one gang each on their own node (or zone)", is symmetric: gangs
that differ only in the labels their own term selects (``job: <name>``) are interchangeable, and
one gang's pods never interact with another's. Such gangs share one pooled shape (request vector,
eligible nodes, term key, gang size) whose slots ``v[s, n]`` count all of their pods, with one
extra cut per domain ``D`` of the term's key (hostname: per node)::

    size * sum_{n in D} v[s, n] <= sum_{c in s} placed[c]      (pods in D <= admitted gangs)

**Exact.** Every admitted gang places all of its ``size`` pods (``placed[c]`` is 0 or ``size``),
so the right side is ``size`` times the admitted gangs ``a``. Any solution of the unaggregated
model satisfies the cut (each admitted gang has at most one pod per domain). Conversely, given
slots that meet it, lay the slots out domain by domain (nodes without the key last) and hand pod
``i`` to admitted gang ``i mod a``: a domain's at most ``a`` consecutive slots go to distinct
gangs, and each gang gets exactly ``size`` pods (the slots add up to ``size * a``). That is the
decoding (:func:`decode`); it is the bipartite degree condition (Gale-Ryser) with all gangs of
one degree, where the per-domain cap is the whole condition.

**Which classes** (:func:`symmetric_anti_affine`): the only class of a root gang PodGroup
(``minCount`` = every pod, no bound member, no required topology of its own, not a locality
group, no forced node), whose pods carry exactly one required anti-affinity term, which selects
the class's own pods and no other pending class, and no pod affinity, DoNotSchedule spread or host
port; no other pending pod's term selects it. Bound pods its term selects (and bound pods whose
anti-affinity selects it) stay static node masks (:mod:`.eligibility`), as for private classes.
Any other class keeps the per-node form: one another family (ports, spread, affinity, locality)
counts per node, one that needs evictions before it may use a node, and every class when a
family is skipped (``check_feasible``'s probes, see :func:`.build.build_model`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from gangplan.predicates import selector_matches, term_matches

if TYPE_CHECKING:
    from gangplan.solver.exact.instance import Instance
    from gangplan.solver.exact.variables import ExactModel

ENABLED = True
"""Pool symmetric anti-affine gangs (the property test compares against ``False``)."""


def symmetric_anti_affine(inst: Instance, counted_groups: Collection[str] = ()) -> dict[int, str]:
    """Class index -> the topology key of its anti-affinity term, for every class that can be
    pooled as the module doc says (:func:`.build.build_model` also keeps per node any class
    another family wants per node, or that needs evictions; ``counted_groups``: the groups the
    locality tiers count per domain, left out too)."""
    if not ENABLED:
        return {}
    from gangplan.solver.exact.eligibility import group_topologies

    ns = inst.cluster.namespaces
    classes = inst.classes
    candidates: dict[int, str] = {}
    for c in classes:
        p = c.rep
        terms = p.affinity.pod_anti_affinity_required
        if (
            len(terms) != 1
            or c.fixed_node is not None
            or c.group is None
            or c.group not in inst.leaves
        ):
            continue
        leaf = inst.leaves[c.group]
        if (
            leaf.parent is not None
            or not leaf.gang
            or leaf.classes != [c.index]
            or leaf.bound
            or leaf.evictable
            or leaf.min_count != c.size
            or group_topologies(inst, c)
            or c.group in counted_groups
        ):
            continue
        if (
            p.host_ports
            or p.affinity.pod_affinity_required
            or any(s.when_unsatisfiable == "DoNotSchedule" for s in p.topology_spread)
        ):
            continue
        t = terms[0]
        if not term_matches(t, p.namespace, p, ns):
            continue
        if any(o.index != c.index and term_matches(t, p.namespace, o.rep, ns) for o in classes):
            continue
        candidates[c.index] = t.topology_key
    if not candidates:
        return {}
    for h in classes:  # nobody else's term may select a candidate
        q = h.rep
        anti = q.affinity.pod_anti_affinity_required
        aff = q.affinity.pod_affinity_required
        spread = [s for s in q.topology_spread if s.when_unsatisfiable == "DoNotSchedule"]
        if not (anti or aff or spread):
            continue
        for c in [c for c in candidates if c != h.index]:
            r = classes[c].rep
            if (
                any(term_matches(t, q.namespace, r, ns) for t in anti)
                or any(term_matches(t, q.namespace, r, ns) for t in aff)
                or any(
                    r.namespace == q.namespace and selector_matches(s.label_selector, r.labels)
                    for s in spread
                )
            ):
                del candidates[c]
    return candidates


def decode(
    em: ExactModel,
    s: int,
    left: dict[int, int],
    solution: list[int],
    per_class: list[dict[int, int]],
) -> None:
    """Hand an anti-affine shape's slots to its admitted gangs round robin (module doc)."""
    shape = em.shapes[s]
    admitted = [c for c in shape.classes if solution[em.placed[c].index]]
    if not admitted:
        return
    ids, _ = em.inst.domains(shape.anti_key)
    order = sorted(left, key=lambda n: (ids[n] < 0, int(ids[n]), n))
    i = 0
    for n in order:
        for _ in range(left[n]):
            c = admitted[i % len(admitted)]
            per_class[c][n] = per_class[c].get(n, 0) + 1
            i += 1
    size = em.inst.classes[shape.classes[0]].size
    if i != size * len(admitted):
        raise RuntimeError(
            f"decoding: anti-affine shape {s} has {i} slots for {len(admitted)} gangs of {size}"
        )
    left.clear()


def take_nodes(em: ExactModel, c: int, nodes: list[int], room, need: int) -> list[tuple[int, int]]:
    """(node, pods) for ``need`` pods of class ``c`` over ``nodes`` in the given order, each node
    taking what ``room`` allows, but for a pooled anti-affine class one pod per domain of its key
    (warm starts: :func:`.hint.complete_first_fit`, :mod:`.packing`); fewer when they do not fit."""
    key = em.anti.get(c)
    ids = em.inst.domains(key)[0] if key else None
    out, used = [], set()
    for n in nodes:
        if need <= 0:
            break
        k = int(min(room[n], need))
        if ids is not None:
            d = int(ids[n])
            if d >= 0:
                if d in used:
                    continue
                used.add(d)
                k = min(k, 1)
        if k > 0:
            out.append((n, k))
            need -= k
    return out
