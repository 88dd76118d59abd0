"""The decision variables: counts per (class, node) where pods interact, shared slots elsewhere.

Formulation (the shape-slot model; docs/explanation/exact-engine.md, "Scale by aggregation"):

* A class is *private* when its pods take part in a rule that looks at individual nodes or
  domains: a constraint family's ``Layout.per_node`` names it (its own inter-pod affinity /
  anti-affinity, host ports, a DoNotSchedule spread, a group topology constraint, a forced node,
  a locality tier measures its group but cannot use per-domain counts, another pending pod's
  term selects it; see each family's ``layout``), or (preemption) some node is eligible only once
  evictable units holding a conflicting host port or a blocking anti-affinity pod are evicted
  (``Eligibility.needs_evict``: a per-node condition pooled classes could not share). A private
  class gets ``x[c, n]``: how many of its pods go on node ``n`` (the "b1" count), at most the
  smallest per-node limit its families set (1 with host ports).
* Symmetric anti-affine gangs (one term selecting the gang's own pods only, see
  :mod:`.aggregation`) are pooled although the anti-affinity family would count them per node:
  identical ones share a shape with a per-domain cap.
* Every other class is *pooled*: classes with the same request vector and the same eligible node
  set (a *shape*) draw from one pool of slots ``v[s, n]``. Demand and supply are linked by
  ``sum_n v[s, n] == sum_{c in s} placed[c]``. This is exact: pooled classes have no per-node rule
  besides capacity, and pods of one shape are interchangeable there, so any split of the slots
  among the classes is valid (decoding fills slots in node order).
* A pooled class of a group the locality tiers measure (:mod:`.locality`, ``Layout.per_domain``)
  also counts its pods per domain of the finest measured level (``split``): per domain, the classes' counts add up to
  the shape's slots there, so any split of those slots among the classes is valid again, and the
  tiers see per-domain counts without a per-node variable.
* ``placed[c]``: how many pods of the class are placed.
* With preemption (:mod:`.preemption`), a shape also keys on the priority: which priority lands on
  a node decides whether an eviction there is justified.

Variables exist only for eligible pairs (see :mod:`eligibility`), bounded by how many pods fit on
the node's free capacity. Names are empty: bulk variables build faster without them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model

from gangplan.solver.exact.eligibility import (
    Eligibility,
    group_topologies,
    request_vector,
    topology_poolable,
)
from gangplan.solver.exact.instance import Instance, PodClass


@dataclass
class Counts:
    """A placement as counts: per class, node index -> pods of the class on it."""

    per_class: list[dict[int, int]]
    evicted: frozenset[int] = frozenset()
    """Indices of the evicted victim units (``Instance.units``; preemption only)."""

    def total(self, c: int) -> int:
        return sum(self.per_class[c].values())

    def in_nodes(self, c: int, nodes: set[int] | np.ndarray) -> int:
        return sum(k for n, k in self.per_class[c].items() if n in nodes)

    def per_domain(self, c: int, ids: list[int]) -> dict[int, int]:
        """Class ``c``'s pods per domain: ``ids`` is a node -> domain id list (of
        :meth:`.instance.Instance.domains`); ``per_domain(c, ids)[d]`` is ``in_nodes(c, nodes
        of d)``."""
        out: dict[int, int] = {}
        for n, k in self.per_class[c].items():
            d = ids[n]
            out[d] = out.get(d, 0) + k
        return out

    def in_domain(self, c: int, ids: list[int], d: int) -> int:
        """Pods of class ``c`` on the nodes of domain ``d`` of ``ids`` (see :meth:`per_domain`)."""
        return self.per_domain(c, ids).get(d, 0)

    def domains_used(self, classes: tuple[int, ...], ids: list[int]) -> frozenset[int]:
        """The domains of ``ids`` where some class of ``classes`` has pods: ``d`` is in it iff
        ``any(in_domain(c, ids, d) for c in classes)``."""
        return frozenset(d for c in classes for d, k in self.per_domain(c, ids).items() if k)

    def tallied(self) -> Counts:
        """This placement, read-only, with the per-domain sums above computed once per class
        and domain vector (:class:`TalliedCounts`): for evaluating every variable's value at
        once (:func:`.start.hint.hint_values`)."""
        return TalliedCounts(self.per_class, self.evicted)


@dataclass
class TalliedCounts(Counts):
    """A placement that does not change while it is read, its per-domain sums kept: a complete
    hint evaluates one value per auxiliary variable, and on the 10,000-node shapes 134,000 of them
    are a group's literal for one domain (:mod:`.topology`), each a sum over the group's pods in
    that domain. Kept, a group's domains are tallied once per hint instead of once per domain."""

    _sums: dict[tuple[int, int], tuple[list[int], dict[int, int]]] = field(
        default_factory=dict, repr=False, compare=False
    )
    _used: dict[tuple[int, int], tuple[tuple[int, ...], list[int], frozenset[int]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def per_domain(self, c: int, ids: list[int]) -> dict[int, int]:
        hit = self._sums.get((c, id(ids)))
        if hit is not None and hit[0] is ids:
            return hit[1]
        out = Counts.per_domain(self, c, ids)
        self._sums[(c, id(ids))] = (ids, out)  # (the vector kept with its sums: ids stay unique)
        return out

    def domains_used(self, classes: tuple[int, ...], ids: list[int]) -> frozenset[int]:
        hit = self._used.get((id(classes), id(ids)))
        if hit is not None and hit[0] is classes and hit[1] is ids:
            return hit[2]
        out = Counts.domains_used(self, classes, ids)
        self._used[(id(classes), id(ids))] = (classes, ids, out)
        return out

    def tallied(self) -> Counts:
        return self


@dataclass
class Shape:
    classes: list[int]
    req: np.ndarray
    fit: np.ndarray
    confined_key: str | None = None
    """Topology key every class of the shape is confined to (one domain per group), or None."""
    split_key: str | None = None
    """Level whose domains the classes count their pods in (locality groups, see :mod:`.locality`)."""
    anti_key: str | None = None
    """Topology key of the classes' own anti-affinity term: symmetric anti-affine gangs, at most
    one pod of each per domain of it (:mod:`.aggregation`)."""


@dataclass
class Tier:
    name: str
    expr: cp_model.LinearExprT
    value: Callable[[Counts], int]
    upper: int
    """A trivial upper bound (when the incumbent reaches it the phase is proven without a solve)."""
    cost: bool = False
    """The tier is ``upper - cost`` and the Result reports the cost, minimised (disruption)."""


@dataclass
class ExactModel:
    """The CP-SAT model's variables, and how they map onto classes and nodes.

    Only variables live here (with the static data that decides which exist); what a constraint
    family builds for later families is its typed output (:mod:`.family`), the objective tiers
    are :class:`.build.BuiltModel`'s."""

    inst: Instance
    model: cp_model.CpModel
    elig: list[Eligibility]
    private: list[bool]
    req: list[np.ndarray]
    x: list[dict[int, cp_model.IntVar]] = field(default_factory=list)
    x_ub: list[dict[int, int]] = field(default_factory=list)
    shapes: list[Shape] = field(default_factory=list)
    shape_of: dict[int, int] = field(default_factory=dict)
    v: list[dict[int, cp_model.IntVar]] = field(default_factory=list)
    placed: list[cp_model.IntVar] = field(default_factory=list)
    split: dict[int, list[tuple[list[int], cp_model.IntVar, int]]] = field(default_factory=dict)
    """Pooled class of a group counted per domain (``Layout.per_domain``, :mod:`.locality`) -> per
    domain of its shape's ``split_key`` (or per node without the label): (nodes, count, upper bound)."""
    evict: list[cp_model.IntVar] = field(default_factory=list)
    """``evict[u]`` per evictable unit of ``inst.units`` (preemption only, :mod:`.preemption`)."""
    node_vars: list[list[tuple[cp_model.IntVar, np.ndarray, int]]] = field(default_factory=list)
    """Per node: (variable, per-pod request vector, upper bound) of everything that can land on it."""
    aux: list[tuple[cp_model.IntVar, Callable[[Counts], int]]] = field(default_factory=list)
    """Every auxiliary variable with the function computing its value from a placement (hints)."""
    anti: dict[int, str] = field(default_factory=dict)
    """Pooled symmetric anti-affine class -> its term's key (:mod:`.aggregation`)."""
    _presence: dict[tuple[int, str, int], cp_model.IntVar] = field(default_factory=dict)
    _domain_vars: dict[tuple[int, str], dict[int, list[tuple[int, cp_model.IntVar]]]] = field(
        default_factory=dict
    )
    _eligible_domains: dict[tuple[tuple[int, ...], str], tuple[int, ...]] = field(
        default_factory=dict
    )

    # ---- helpers shared by the families -----------------------------------------------------
    def new_aux(self, lo: int, hi: int, value: Callable[[Counts], int]) -> cp_model.IntVar:
        """An auxiliary variable and how to compute it from a placement (for complete hints)."""
        var = (
            self.model.new_bool_var("")
            if (lo, hi) == (0, 1)
            else self.model.new_int_var(lo, hi, "")
        )
        self.aux.append((var, value))
        return var

    def domain_vars(self, c: int, key: str) -> dict[int, list[tuple[int, cp_model.IntVar]]]:
        """For a private class: domain id of ``key`` -> [(node, x var)] on nodes with the label."""
        if (c, key) in self._domain_vars:
            return self._domain_vars[(c, key)]
        ids, _ = self.inst.domains(key)
        out: dict[int, list[tuple[int, cp_model.IntVar]]] = {}
        for n, var in self.x[c].items():
            d = int(ids[n])
            if d >= 0:
                out.setdefault(d, []).append((n, var))
        self._domain_vars[(c, key)] = out
        return out

    def eligible_domains(self, classes: Sequence[int], key: str) -> tuple[int, ...]:
        """The domain ids of ``key`` (ascending) holding a node where some class of ``classes``
        is eligible; kept per (classes, key): the first-fit start asks for every entity's on
        every call."""
        k = (tuple(classes), key)
        out = self._eligible_domains.get(k)
        if out is None:
            ids = self.inst.domains(key)[0]
            found = np.unique(np.concatenate([ids[self.elig[c].eligible] for c in k[0]]))
            out = self._eligible_domains[k] = tuple(found[found >= 0].tolist())
        return out

    def presence(self, c: int, key: str, d: int) -> cp_model.IntVar:
        """``u[c, key, d]``: may class ``c`` have pods in domain ``d``? (count <= ub * u)."""
        k = (c, key, d)
        if k not in self._presence:
            nodes = self.domain_vars(c, key).get(d, [])
            members = {n for n, _ in nodes}
            u = self.new_aux(0, 1, lambda cnt, c=c, m=members: int(cnt.in_nodes(c, m) > 0))
            ub = sum(self.x_ub[c][n] for n, _ in nodes)
            self.model.add(cp_model.LinearExpr.sum([var for _, var in nodes]) <= ub * u)
            self._presence[k] = u
        return self._presence[k]

    def count_in(
        self, classes: list[int], key: str, d: int, node_filter: np.ndarray | None = None
    ) -> list[cp_model.IntVar]:
        """The x variables of ``classes`` on nodes of domain ``d`` (optionally only filtered nodes)."""
        out = []
        for c in classes:
            for n, var in self.domain_vars(c, key).get(d, []):
                if node_filter is None or node_filter[n]:
                    out.append(var)
        return out


def confinement_key(inst: Instance, c: PodClass, split: Mapping[str, str]) -> str | None:
    """The key of the one-domain rule a pooled class follows, or None when it cannot be pooled.

    Pooling works for a class whose only topology rule is its own PodGroup's, with no member of
    the group bound yet (bound members pin the domain statically, see eligibility); composite
    topology rules span several groups and stay private.
    """
    if not topology_poolable(inst, c) or inst.leaves[c.group].bound or c.group in split:
        return None  # a split class is gated per counted domain instead (see topology)
    return group_topologies(inst, c)[0][0]


def build_variables(
    inst: Instance,
    elig: list[Eligibility],
    private: list[bool],
    caps: list[int],
    split: Mapping[str, str],
    anti: Mapping[int, str] | None = None,
) -> ExactModel:
    """x / v / placed / evict variables and the demand-supply links.

    ``private``: classes with per-node counts; ``caps``: per class the most pods one node may
    take; ``split``: leaf PodGroup -> the level its pooled classes count pods per domain of;
    ``anti``: pooled symmetric anti-affine class -> its term's key (:mod:`.aggregation`)."""
    req = [request_vector(inst, c) for c in inst.classes]
    em = ExactModel(
        inst=inst,
        model=cp_model.CpModel(),
        elig=elig,
        private=private,
        req=req,
        anti=dict(anti or {}),
    )
    em.node_vars = [[] for _ in range(inst.n_nodes)]
    model = em.model
    for c in inst.classes:
        em.placed.append(
            model.new_int_var(
                0, c.size if elig[c.index].eligible.any() or c.fixed_node is not None else 0, ""
            )
        )
    _private_counts(em, caps)
    _pooled_slots(em, split)
    for c in inst.classes:
        if c.fixed_node is not None:
            model.add(em.placed[c.index] == c.size)
    em.evict = [model.new_bool_var("") for _ in inst.units]
    return em


def _private_counts(em: ExactModel, caps: list[int]) -> None:
    model = em.model
    for c in em.inst.classes:
        xs: dict[int, cp_model.IntVar] = {}
        ubs: dict[int, int] = {}
        if em.private[c.index]:
            e = em.elig[c.index]
            cap = caps[c.index]
            for n in np.nonzero(e.eligible)[0].tolist():
                ub = int(min(e.fit[n], cap))
                var = model.new_int_var(0, ub, "")
                xs[n] = var
                ubs[n] = ub
                em.node_vars[n].append((var, em.req[c.index], ub))
            model.add(cp_model.LinearExpr.sum(list(xs.values())) == em.placed[c.index])
        em.x.append(xs)
        em.x_ub.append(ubs)


def _pooled_slots(em: ExactModel, split_of: Mapping[str, str]) -> None:
    model = em.model
    by_key: dict[tuple, list[int]] = {}
    for c in em.inst.classes:
        if not em.private[c.index]:
            tkey = confinement_key(em.inst, c, split_of) or ""
            split = split_of.get(c.group, "") if c.group is not None else ""
            key = (
                em.req[c.index].tobytes(),
                em.elig[c.index].eligible.tobytes(),
                tkey,
                split,
                em.anti.get(c.index, ""),
                c.size if c.index in em.anti else 0,
            )
            if em.inst.units:  # preemption: a shape's slots must tell which priority lands where
                key += (c.priority,)
            by_key.setdefault(key, []).append(c.index)
    for (_, _, tkey, split, anti_key, *_), classes in by_key.items():
        s = len(em.shapes)
        first = classes[0]
        shape = Shape(
            classes=classes,
            req=em.req[first],
            fit=em.elig[first].fit,
            confined_key=tkey or None,
            split_key=split or None,
            anti_key=anti_key or None,
        )
        em.shapes.append(shape)
        demand = sum(em.inst.classes[c].size for c in classes)
        slots: dict[int, cp_model.IntVar] = {}
        for n in np.nonzero(shape.fit > 0)[0].tolist():
            ub = int(min(shape.fit[n], demand))
            var = model.new_int_var(0, ub, "")
            slots[n] = var
            em.node_vars[n].append((var, shape.req, ub))
        em.v.append(slots)
        for c in classes:
            em.shape_of[c] = s
        model.add(
            cp_model.LinearExpr.sum(list(slots.values()))
            == cp_model.LinearExpr.sum([em.placed[c] for c in classes])
        )
        if shape.split_key:
            _split_counts(em, s)
        if shape.anti_key:
            add_domain_caps(em, s)


def _split_counts(em: ExactModel, s: int) -> None:
    """Per-domain counts of a split shape's classes (see the module doc): per domain of the
    ``split_key`` (a node without the label is a domain of its own), the classes' counts equal the
    slots there, and each class's counts add up to its placed pods."""
    model, shape, slots = em.model, em.shapes[s], em.v[s]
    ids, _ = em.inst.level_ids(shape.split_key)
    atoms: dict[tuple[str, int], list[int]] = {}
    for n in sorted(slots):
        atoms.setdefault(("domain", int(ids[n])) if ids[n] >= 0 else ("node", n), []).append(n)
    per_class: dict[int, list[cp_model.IntVar]] = {c: [] for c in shape.classes}
    for nodes in atoms.values():
        room = sum(
            int(min(shape.fit[n], sum(em.inst.classes[c].size for c in shape.classes)))
            for n in nodes
        )
        counts = []
        for c in shape.classes:
            ub = min(em.inst.classes[c].size, room)
            var = em.new_aux(0, ub, lambda cnt, c=c, m=frozenset(nodes): cnt.in_nodes(c, m))
            em.split.setdefault(c, []).append((nodes, var, ub))
            per_class[c].append(var)
            counts.append(var)
        model.add(
            cp_model.LinearExpr.sum(counts) == cp_model.LinearExpr.sum([slots[n] for n in nodes])
        )
    for c, vs in per_class.items():
        model.add(cp_model.LinearExpr.sum(vs) == em.placed[c])


def add_domain_caps(em: ExactModel, s: int) -> None:
    """``size * (slots in D) <= sum placed`` per domain D of the shape's anti-affinity key: the
    cut that makes a pooled symmetric anti-affine shape exact (:mod:`.aggregation`)."""
    shape, slots = em.shapes[s], em.v[s]
    size = em.inst.classes[shape.classes[0]].size
    admitted = cp_model.LinearExpr.sum([em.placed[c] for c in shape.classes])
    ids, _ = em.inst.domains(shape.anti_key)
    per_domain: dict[int, list] = {}
    for n, var in slots.items():
        if ids[n] >= 0:
            per_domain.setdefault(int(ids[n]), []).append((n, var))
    demand = size * len(shape.classes)
    for _d, members in sorted(per_domain.items()):
        if sum(min(int(shape.fit[n]), demand) for n, _ in members) <= 1:
            continue  # the slots' bounds allow one pod there at most: nothing to cap
        em.model.add(size * cp_model.LinearExpr.sum([v for _, v in members]) <= admitted)
