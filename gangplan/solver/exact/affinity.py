"""Required inter-pod affinity and anti-affinity, any topologyKey, between pending pods.

The rules are the validator's (``pod-affinity`` / ``pod-anti-affinity``), which mirror
InterPodAffinity's Filter (``plugins/interpodaffinity/filtering.go``, kubernetes/kubernetes v1.36).

**Anti-affinity** is order-free: no other pod matching a term of the pod sits in the same domain
of the term's key, and the pod sits in no domain where another pod's term matches it. Bound pods
make this static (eligibility); between pending classes it is a mutual exclusion per domain, with
a presence literal ``u[c, key, d]`` (count <= ub * u) and ``count[c', d] <= ub' * (1 - u)``. A
class its own term matches has at most one pod per domain.

**Affinity** follows the one definition in :mod:`gangplan.predicates.affinity_order`: a
placement is feasible iff some order of the pending pods (bound pods first) passes
kube-scheduler's check at each pod's turn. Its normal form is what the model encodes: first pods
``U`` (the first-pod rule) go before everything else, in an order where a first pod precedes every
first pod its terms count; then every other pod once each term has an earlier matching pod in its
domain. Per affinity class ``c`` (its terms ``T``, the classes ``M`` matching all of ``T``):

* a first pod of ``c`` is possible only when ``c`` matches ``T`` itself and no bound pod matching
  ``T`` sits on a node carrying a key of ``T``; two first pods of one class count each other, so
  a class has at most one;
* a term is met outright in a domain holding a bound pod matching ``T``;
* classes are grouped by the support graph (``o -> c`` when ``o`` is an affinity class in ``M``)
  into strongly connected components. Support from outside the component (classes without
  affinity, or upstream components) only needs to *exist* in the domain (those pods can all be
  placed first): a literal ``ext <= count`` per (classes, key, domain). Inside a component
  support must be acyclic, encoded by the cheapest exact form that fits:

  - *trivial* (one class, not matching itself): every domain holding it needs ``ext``
    (``presence <= ext``), the count formulation as before;
  - *nested* (every class matching every class's terms, every node they may use carrying every
    key, and the keys nesting, e.g. zone > rack > hostname or a single key: a self-affine gang
    of one or several pod shapes, also with several terms): in each domain of each key, the
    earliest pod of the component must be the component's one first pod, or have outside
    support at its finest key (``own``), or belong to a class whose finest key is coarser (it
    relies on the coarser domain, checked there); the others are then supported by it:
    ``presence[S, key, d] <= sum first[atoms in d] + sum own[in d] + has[coarser classes, d]``
    and ``sum first <= 1``;
  - *levelled* (anything else: keys that do not nest, or classes that support each other only
    one way): pods of a class in one *cell* (same domain of each of its keys) are
    interchangeable, so each cell gets a level ``l`` in ``0..cells``; a cell's term is met by ``ext``, or by being a first
    pod's cell (level 0), or by a witness cell of a class in ``M`` with pods in the domain at a
    lower level: ``l[k] >= A + 1`` where ``A[M, key, d] >= l[j]`` for a chosen present witness
    ``j``. First pods of different classes that count each other get an order ``o[c]``.

**Victims** do not change affinity in the model: a bound pod the model evicts (or a victim
removed up front) still supports and still counts against the first-pod rule, i.e. the model
picks the order of :mod:`~gangplan.predicates.affinity_order` where victims leave after every
pending pod is placed. That order is always one the definition allows (upstream preemption does
not spare other pods' supporters: ``SelectVictimsOnNode`` in
``pkg/scheduler/framework/preemption/preemption.go`` only re-runs the preemptor's filters), so
supporting units are evictable; it is conservative only where evicting a counted pod *first*
would switch a first-pod rule on.

Aggregated (count) variables stay: only classes with terms, and classes those terms select, are
private (per node) at all, and the levelled form is used only where support can go round a cycle
across domains. Hint values of every auxiliary variable come from the same definition: the hint's
placement is decoded, :func:`~gangplan.predicates.affinity_order.affinity_order` gives its first
pods, and the levels come from the support closure from them.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

import networkx as nx
import numpy as np
from ortools.sat.python import cp_model

from gangplan.predicates import matches_all_terms, term_matches
from gangplan.predicates.affinity_order import affinity_order
from gangplan.solver.exact.eligibility import ClassView, Conditions, block, has_labels
from gangplan.solver.exact.family import BuildContext, Family, Layout, selector_layout
from gangplan.solver.exact.instance import NO_DOMAIN, Instance, PodClass
from gangplan.solver.exact.names import POD_AFFINITY, POD_ANTI_AFFINITY
from gangplan.solver.exact.variables import Counts, ExactModel


# ---- static parts ---------------------------------------------------------------------------------
def anti_affinity_mask(view: ClassView, cond: Conditions) -> np.ndarray | None:
    """The class's own anti-affinity against bound pods, and bound pods' anti-affinity against it;
    blockers in evictable units only condition the nodes (``cond``, see :func:`.eligibility.block`)."""
    inst, cache, p = view.inst, view.cache, view.cls.rep
    ns = inst.cluster.namespaces
    mask = None
    for t in p.affinity.pod_anti_affinity_required:
        ids, _ = inst.domains(t.topology_key)
        blockers: dict[int, list] = {}
        for i, pods in enumerate(inst.bound_on_node):
            if ids[i] != NO_DOMAIN:
                hit = [q for q in pods if term_matches(t, p.namespace, q, ns)]
                if hit:
                    blockers.setdefault(int(ids[i]), []).extend(hit)
        m = np.ones(inst.n_nodes, dtype=bool)
        for d, qs in sorted(blockers.items()):
            block(inst, m, cond, np.flatnonzero(ids == d), qs)
        mask = m if mask is None else mask & m
    for q, t, node in cache.anti_holders:
        ids, _ = inst.domains(t.topology_key)
        if ids[node] != NO_DOMAIN and term_matches(t, q.namespace, p, ns):
            m = np.ones(inst.n_nodes, dtype=bool)
            block(inst, m, cond, np.flatnonzero(ids == ids[node]), [q])
            mask = m if mask is None else mask & m
    return mask


def affinity_mask(view: ClassView, cond: Conditions) -> np.ndarray | None:
    """Nodes carrying every required affinity term's key (elsewhere no term can be met)."""
    return has_labels(
        view.inst, [t.topology_key for t in view.cls.rep.affinity.pod_affinity_required]
    )


def anti_affinity_layout(inst: Instance, objective: str) -> Layout:
    """Per-node counts for classes with required anti-affinity and the classes a term matches."""
    ns = inst.cluster.namespaces
    return selector_layout(
        inst,
        lambda p: bool(p.affinity.pod_anti_affinity_required),
        lambda p, q: any(
            term_matches(t, p.namespace, q, ns) for t in p.affinity.pod_anti_affinity_required
        ),
    )


def affinity_layout(inst: Instance, objective: str) -> Layout:
    """Per-node counts for classes with required affinity and the classes matching all its terms."""
    ns = inst.cluster.namespaces
    return selector_layout(
        inst,
        lambda p: bool(p.affinity.pod_affinity_required),
        lambda p, q: matches_all_terms(p.affinity.pod_affinity_required, p.namespace, q, ns),
    )


# ---- anti-affinity ------------------------------------------------------------------------------
def add_anti_affinity_constraints(ctx: BuildContext) -> None:
    if not ctx.enforces(POD_ANTI_AFFINITY):
        return
    em = ctx.em
    for c in em.inst.classes:
        if em.x[c.index] and c.rep.affinity.pod_anti_affinity_required:
            _anti(em, c)


def add_affinity_constraints(ctx: BuildContext) -> None:
    if ctx.enforces(POD_AFFINITY):
        _Affinity(ctx.em).build()


def _anti(em: ExactModel, c: PodClass) -> None:
    ns = em.inst.cluster.namespaces
    p = c.rep
    for t in p.affinity.pod_anti_affinity_required:
        matching = [
            o.index
            for o in em.inst.classes
            if em.x[o.index] and term_matches(t, p.namespace, o.rep, ns)
        ]
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


# ---- affinity -----------------------------------------------------------------------------------
@dataclass
class _Cell:
    """Pods of one class on nodes in the same domain of each of its keys (levelled form)."""

    cls: int
    nodes: list[int]
    dom: dict[str, int]
    keyed: dict[int, bool]
    """For first-pod ordering: does the cell's node carry a key of that class's terms?"""
    y: cp_model.IntVar | None = None
    level: cp_model.IntVar | None = None
    first: cp_model.IntVar | None = None


@dataclass
class _Witnesses:
    """``A[M, key, d]`` and the cells that may witness it: (cell, its nodes in the domain, w)."""

    a: cp_model.IntVar
    cells: list[tuple[_Cell, list[int], cp_model.IntVar]] = field(default_factory=list)


class _Affinity:
    def __init__(self, em: ExactModel) -> None:
        self.em = em
        inst = em.inst
        ns = inst.cluster.namespaces
        classes = inst.classes
        self.holders = [
            c.index for c in classes if em.x[c.index] and c.rep.affinity.pod_affinity_required
        ]
        live = [c.index for c in classes if em.x[c.index]]
        self.terms = {c: classes[c].rep.affinity.pod_affinity_required for c in self.holders}
        self.keys = {
            c: tuple(dict.fromkeys(t.topology_key for t in self.terms[c])) for c in self.holders
        }
        self.match: dict[int, list[int]] = {}
        self.bound_doms: dict[int, dict[str, set[int]]] = {}
        self.counted_bound: dict[int, bool] = {}
        bound_cache: dict[tuple, list[int]] = {}
        # Victims (evictable units the model evicts, or victims removed up front) still support:
        # the model keeps them until every pending pod is placed, one of the orders the shared
        # definition allows (affinity_order, step 3); they also keep the first-pod rule off.
        # Listed only when some class has a required pod affinity term (100,000 bound pods: 0.5 s).
        bound_pods = (
            (
                [(q, n) for n, pods in enumerate(inst.bound_on_node) for q in pods]
                + list(inst.victim_pods)
            )
            if self.holders
            else []
        )
        relevant_bound: dict[str, tuple] = {}
        for c in self.holders:
            rep = classes[c].rep
            self.match[c] = [
                o
                for o in live
                if matches_all_terms(self.terms[c], rep.namespace, classes[o].rep, ns)
            ]
            gkey = (rep.namespace, tuple(t.model_dump_json() for t in self.terms[c]))
            if gkey not in bound_cache:
                hits = [
                    (q, n)
                    for q, n in bound_pods
                    if matches_all_terms(self.terms[c], rep.namespace, q, ns)
                ]
                bound_cache[gkey] = [n for _, n in hits]
                for q, n in hits:
                    relevant_bound[q.key] = (q, inst.cluster.nodes[n])
            nodes = bound_cache[gkey]
            self.bound_doms[c] = {
                k: {int(inst.domains(k)[0][n]) for n in nodes} - {NO_DOMAIN} for k in self.keys[c]
            }
            self.counted_bound[c] = any(self.bound_doms[c][k] for k in self.keys[c])
        self.relevant_bound = list(relevant_bound.values())
        self.capable = {c: c in self.match[c] and not self.counted_bound[c] for c in self.holders}
        self.relevant = sorted(set(self.holders) | {o for c in self.holders for o in self.match[c]})
        self._ext: dict[tuple, cp_model.IntVar | int] = {}
        self._ext_fn: dict[int, Callable[[Counts], int]] = {}
        self._has_vars: dict[tuple[int, str, int], cp_model.IntVar] = {}
        self._cnt: Counts | None = None
        self._vals: dict[int, int] = {}
        self._hinters: list[
            Callable[[Counts, dict[int, tuple[int, int]], list[int], dict[int, int]], None]
        ] = []

    # ---- helpers ------------------------------------------------------------------------------
    def _var(self, lo: int, hi: int) -> cp_model.IntVar:
        """A variable whose hint value the joint computation (:meth:`_compute`) provides."""
        m = self.em.model
        var = m.new_bool_var("") if (lo, hi) == (0, 1) else m.new_int_var(lo, hi, "")
        self.em.aux.append((var, lambda cnt, i=var.index: self._value(cnt, i)))
        return var

    def _value(self, cnt: Counts, index: int) -> int:
        if self._cnt is not cnt:
            self._vals = self._compute(cnt)
            self._cnt = cnt
        return self._vals.get(index, 0)

    def _xs(self, c: int, nodes) -> list[cp_model.IntVar]:
        xs = self.em.x[c]
        return [xs[n] for n in nodes if n in xs]

    def _has(self, c: int, key: str, d: int) -> cp_model.IntVar:
        """1 only when class ``c`` has a pod in domain ``d`` of ``key`` (``presence`` is the
        other direction: 0 only when it has none)."""
        k = (c, key, d)
        if k not in self._has_vars:
            nodes = self.em.domain_vars(c, key)[d]
            members = frozenset(n for n, _ in nodes)
            h = self.em.new_aux(0, 1, lambda cnt: int(cnt.in_nodes(c, members) > 0))
            self.em.model.add(cp_model.LinearExpr.sum([v for _, v in nodes]) >= h)
            self._has_vars[k] = h
        return self._has_vars[k]

    def _domain_nodes(self, key: str, d: int) -> frozenset[int]:
        ids, _ = self.em.inst.domains(key)
        return frozenset(np.flatnonzero(ids == d).tolist())

    def ext(self, classes: list[int], key: str, d: int) -> cp_model.IntVar | int:
        """1 only when a pod of ``classes`` sits in domain ``d`` of ``key`` (outside support)."""
        k = (tuple(sorted(classes)), key, d)
        if k not in self._ext:
            xs = self.em.count_in(list(k[0]), key, d)
            if not xs:
                self._ext[k] = 0
            else:
                members = self._domain_nodes(key, d)
                fn = lambda cnt, cs=k[0], m=members: int(any(cnt.in_nodes(o, m) > 0 for o in cs))  # noqa: E731
                e = self.em.new_aux(0, 1, fn)
                self.em.model.add(cp_model.LinearExpr.sum(xs) >= e)
                self._ext[k] = e
                self._ext_fn[e.index] = fn
        return self._ext[k]

    # ---- build --------------------------------------------------------------------------------
    def build(self) -> None:
        if not self.holders:
            return
        graph = nx.DiGraph()
        graph.add_nodes_from(self.holders)
        holder_set = set(self.holders)
        for c in self.holders:
            for o in self.match[c]:
                if o in holder_set:
                    graph.add_edge(o, c)
        for comp in sorted(
            (sorted(s) for s in nx.strongly_connected_components(graph)), key=lambda s: s[0]
        ):
            if len(comp) == 1 and comp[0] not in self.match[comp[0]]:
                self._trivial(comp[0])
            elif (chain := self._chain(comp)) is not None:
                self._tree(comp, chain)
            else:
                self._levelled(comp)

    def _chain(self, comp: list[int]) -> list[str] | None:
        """The component's keys coarse to fine when the nested form applies, else None.

        It applies when every class matches every class's terms (any pod of the component
        supports any other in a shared domain), every node a class of it may use carries every
        key (so any two first pods count each other), and the keys nest: each finer key's
        domains lie inside one domain of the next coarser key, on every node.
        """
        if not all(o in self.match[c] for c in comp for o in comp):
            return None
        inst = self.em.inst
        keys = sorted(
            {k for c in comp for k in self.keys[c]}, key=lambda k: (len(inst.domains(k)[1]), k)
        )
        for c in comp:
            nodes = np.fromiter(self.em.x[c], dtype=np.int64)
            if any((inst.domains(k)[0][nodes] == NO_DOMAIN).any() for k in keys):
                return None
        for coarse, fine in zip(keys, keys[1:], strict=False):
            a, b = inst.domains(fine)[0], inst.domains(coarse)[0]
            has = a != NO_DOMAIN
            if (b[has] == NO_DOMAIN).any() or len(
                set(zip(a[has].tolist(), b[has].tolist(), strict=True))
            ) != len(set(a[has].tolist())):
                return None
        return keys

    def _trivial(self, c: int) -> None:
        """Support only from outside the class: presence in a domain needs it there."""
        for k in self.keys[c]:
            for d in sorted(self.em.domain_vars(c, k)):
                if d in self.bound_doms[c][k]:
                    continue
                u = self.em.presence(c, k, d)
                self.em.model.add(u <= self.ext(self.match[c], k, d))

    def _tree(self, comp: list[int], chain: list[str]) -> None:
        """Nested form (module doc): per domain of each key of the chain holding pods of the
        component, its earliest pod of the component must be able to go there first: the first
        pod, a pod with outside support at its finest key (``own``), or a pod of a class whose
        finest key is coarser (it relies on the coarser domain, checked at that level). The
        component's classes share the per-domain literals (any of them is as good a support)."""
        em, model, inst = self.em, self.em.model, self.em.inst
        inside = set(comp)
        level = {k: i for i, k in enumerate(chain)}
        finest = {c: max(level[k] for k in self.keys[c]) for c in comp}
        ids = [inst.domains(k)[0] for k in chain]
        atom_key = chain[-1]
        capable = [c for c in comp if self.capable[c]]
        firsts: dict[int, cp_model.IntVar] = {}
        for a in sorted({a for c in capable for a in em.domain_vars(c, atom_key)}):
            f = self._var(0, 1)
            if len(comp) > 1:  # alone, a class's pods need its first pod where they are anyway
                model.add(cp_model.LinearExpr.sum(em.count_in(capable, atom_key, a)) >= f)
            firsts[a] = f
        owns: dict[tuple[int, int], tuple[cp_model.IntVar, bool, cp_model.IntVar | int]] = {}
        for c in comp:
            fk = chain[finest[c]]
            outside = [o for o in self.match[c] if o not in inside]
            for d, nodes in sorted(em.domain_vars(c, fk).items()):
                static = d in self.bound_doms[c][fk]
                e = 1 if static else self.ext(outside, fk, d)
                if isinstance(e, int) and e == 0:
                    continue
                sv = self._var(0, 1)
                model.add(cp_model.LinearExpr.sum([v for _, v in nodes]) >= sv)
                if not static:
                    model.add(sv <= e)
                owns[(c, d)] = (sv, static, e)
        # Which domain of level i holds a node: by any node of the finer domain (they nest).
        parent_at: dict[tuple[int, int], dict[int, int]] = {}

        def inside_of(j: int, d: int, i: int) -> int:
            if (j, i) not in parent_at:
                has = ids[j] != NO_DOMAIN
                parent_at[(j, i)] = dict(
                    zip(ids[j][has].tolist(), ids[i][has].tolist(), strict=True)
                )
            return parent_at[(j, i)][d]

        presences: list[tuple[cp_model.IntVar, list[int], frozenset[int]]] = []
        for i, key in enumerate(chain):
            below: dict[int, list[cp_model.IntVar]] = {}
            for a, f in firsts.items():
                below.setdefault(inside_of(len(chain) - 1, a, i), []).append(f)
            for (c, dd), (sv, _, _) in owns.items():
                if finest[c] >= i:
                    below.setdefault(inside_of(finest[c], dd, i), []).append(sv)
            for d in sorted({d for c in comp for d in em.domain_vars(c, key)}):
                need = [c for c in comp if finest[c] >= i and d in em.domain_vars(c, key)]
                if not need:
                    continue
                coarser = [c for c in comp if finest[c] < i and d in em.domain_vars(c, key)]
                support = list(below.get(d, ()))
                if len(coarser) == 1:
                    support.append(self._has(coarser[0], key, d))
                elif coarser:
                    h = self._var(0, 1)
                    model.add(cp_model.LinearExpr.sum(em.count_in(coarser, key, d)) >= h)
                    presences.append((h, coarser, self._domain_nodes(key, d)))
                    support.append(h)
                if len(need) == 1:
                    here = em.presence(need[0], key, d)
                else:
                    here = self._var(0, 1)
                    xs = [(n, v) for c in need for n, v in em.domain_vars(c, key)[d]]
                    ub = sum(em.x_ub[c][n] for c in need for n, _ in em.domain_vars(c, key)[d])
                    model.add(cp_model.LinearExpr.sum([v for _, v in xs]) <= ub * here)
                    presences.append((here, need, self._domain_nodes(key, d)))
                model.add(here <= cp_model.LinearExpr.sum(support))
        if firsts:
            model.add(cp_model.LinearExpr.sum(list(firsts.values())) <= 1)
        atoms = {a: self._domain_nodes(atom_key, a) for a in firsts}
        members = {(c, d): self._domain_nodes(chain[finest[c]], d) for (c, d) in owns}

        def hint(
            cnt: Counts, first_of: dict[int, tuple[int, int]], _order, vals: dict[int, int]
        ) -> None:
            for a, f in firsts.items():
                vals[f.index] = int(
                    any(c in first_of and first_of[c][1] in atoms[a] for c in capable)
                )
            for (c, d), (sv, static, e) in owns.items():
                here = cnt.in_nodes(c, members[(c, d)]) > 0
                vals[sv.index] = int(here and (static or self._ext_value(e, cnt)))
            for var, classes, nodes in presences:
                vals[var.index] = int(any(cnt.in_nodes(c, nodes) > 0 for c in classes))

        self._hinters.append(hint)

    def _ext_value(self, e, cnt: Counts) -> bool:
        return bool(e) if isinstance(e, int) else bool(self._ext_fn[e.index](cnt))

    def _levelled(self, comp: list[int]) -> None:
        em, model = self.em, self.em.model
        inst = em.inst
        inside = set(comp)
        cells: list[_Cell] = []
        by_class: dict[int, list[_Cell]] = {}
        for c in comp:
            watchers = [
                c1
                for c1 in comp
                if c1 != c and self.capable[c1] and self.capable[c] and c in self.match[c1]
            ]
            keyed_masks = {c1: self._any_key_mask(self.keys[c1]) for c1 in watchers}
            groups: dict[tuple, list[int]] = {}
            for n in sorted(em.x[c]):
                sig = tuple(int(inst.domains(k)[0][n]) for k in self.keys[c]) + tuple(
                    bool(keyed_masks[c1][n]) for c1 in watchers
                )
                groups.setdefault(sig, []).append(n)
            by_class[c] = []
            for sig, nodes in groups.items():
                cell = _Cell(
                    cls=c,
                    nodes=nodes,
                    dom=dict(zip(self.keys[c], sig, strict=False)),
                    keyed={c1: bool(keyed_masks[c1][nodes[0]]) for c1 in watchers},
                )
                cells.append(cell)
                by_class[c].append(cell)
        top = len(cells)
        for cell in cells:
            xs = self._xs(cell.cls, cell.nodes)
            ub = sum(em.x_ub[cell.cls][n] for n in cell.nodes)
            cell.y = self._var(0, 1)
            model.add(cp_model.LinearExpr.sum(xs) <= ub * cell.y)
            cell.level = self._var(0, top)
            if self.capable[cell.cls]:
                cell.first = self._var(0, 1)  # it supports others only through presence literals
                model.add(cell.level == 0).only_enforce_if(cell.first)
        any_first: dict[int, cp_model.IntVar] = {}
        for c in comp:
            fs = [cell.first for cell in by_class[c] if cell.first is not None]
            if fs:
                model.add(cp_model.LinearExpr.sum(fs) <= 1)
                any_first[c] = self._var(0, 1)
                model.add(any_first[c] == cp_model.LinearExpr.sum(fs))
        # First pods of different classes: c1 before c2 when c1's terms count c2's first pod.
        order: dict[int, cp_model.IntVar] = {}
        edges = []
        for c1 in comp:
            for c2 in comp:
                if (
                    c1 == c2
                    or c1 not in any_first
                    or c2 not in any_first
                    or c2 not in self.match[c1]
                ):
                    continue
                keyed = [
                    cell.first
                    for cell in by_class[c2]
                    if cell.first is not None and cell.keyed.get(c1)
                ]
                if not keyed:
                    continue
                if len(keyed) == len([cell for cell in by_class[c2] if cell.first is not None]):
                    lit = any_first[c2]
                else:
                    lit = self._var(0, 1)
                    model.add(lit == cp_model.LinearExpr.sum(keyed))
                edges.append((c1, c2, lit))
        if edges:
            for c in sorted({c for e in edges for c in e[:2]}):
                order[c] = self._var(0, len(comp) - 1)
            for c1, c2, lit in edges:
                model.add(order[c1] + 1 <= order[c2]).only_enforce_if([any_first[c1], lit])
                if lit is any_first[c2] and any(
                    e[0] == c2 and e[1] == c1 and e[2] is any_first[c1] for e in edges
                ):
                    if c1 < c2:
                        model.add(any_first[c1] + any_first[c2] <= 1)
        witnesses: dict[tuple, _Witnesses] = {}
        cells_by_domain: dict[tuple[int, str], dict[int, list[tuple[_Cell, list[int]]]]] = {}

        def in_domains(c: int, key: str) -> dict[int, list[tuple[_Cell, list[int]]]]:
            """Class ``c``'s cells by domain of ``key``, each with its nodes in that domain."""
            if (c, key) not in cells_by_domain:
                ids = inst.domains(key)[0]
                out: dict[int, list[tuple[_Cell, list[int]]]] = {}
                for cell in by_class[c]:
                    split: dict[int, list[int]] = {}
                    for n in cell.nodes:
                        if ids[n] != NO_DOMAIN:
                            split.setdefault(int(ids[n]), []).append(n)
                    for d, here in split.items():
                        out.setdefault(d, []).append((cell, here))
                cells_by_domain[(c, key)] = out
            return cells_by_domain[(c, key)]

        def witness(ms: tuple[int, ...], key: str, d: int) -> _Witnesses:
            k = (ms, key, d)
            if k not in witnesses:
                w = _Witnesses(a=self._var(0, top))
                for c in ms:
                    for cell, here in in_domains(c, key).get(d, ()):
                        lit = self._var(0, 1)
                        model.add(cell.level <= w.a).only_enforce_if(lit)
                        model.add(cp_model.LinearExpr.sum(self._xs(c, here)) >= lit)
                        w.cells.append((cell, here, lit))
                witnesses[k] = w
            return witnesses[k]

        needs: list[
            tuple[_Cell, str, cp_model.IntVar | int, _Witnesses | None, cp_model.IntVar | None]
        ] = []
        for cell in cells:
            c = cell.cls
            ms = tuple(o for o in self.match[c] if o in inside)
            outside = [o for o in self.match[c] if o not in inside]
            for key in self.keys[c]:
                d = cell.dom[key]
                if d in self.bound_doms[c][key]:
                    continue
                e = self.ext(outside, key, d)
                w = witness(ms, key, d) if ms else None
                if w is not None and not any(j is not cell for j, _, _ in w.cells):
                    w = None
                rhs = [
                    v for v in (cell.first, e) if not (v is None or (isinstance(v, int) and v == 0))
                ]
                lv = None
                if w is not None:
                    lv = self._var(0, 1)
                    rhs.append(lv)
                    model.add(cell.level >= w.a + 1).only_enforce_if(lv)
                    model.add(cp_model.LinearExpr.sum([lit for _, _, lit in w.cells]) >= lv)
                model.add(cell.y <= (cp_model.LinearExpr.sum(rhs) if rhs else 0))
                needs.append((cell, key, e, w, lv))
        needs_of: dict[int, list[int]] = {}
        for i, (cell, *_rest) in enumerate(needs):
            needs_of.setdefault(id(cell), []).append(i)
        witness_of: dict[int, list[tuple[_Witnesses, list[int]]]] = {}
        users: dict[int, list[int]] = {}
        for w in witnesses.values():
            for j, here, _ in w.cells:
                witness_of.setdefault(id(j), []).append((w, here))
        for i, (_cell, _key, _e, w, _lv) in enumerate(needs):
            if w is not None:
                users.setdefault(id(w), []).append(i)

        def hint(
            cnt: Counts,
            first_of: dict[int, tuple[int, int]],
            first_rank: list[int],
            vals: dict[int, int],
        ) -> None:
            """Levels are the support closure from the first pods (Knuth's generalisation of
            Dijkstra: a cell's level is one more than the largest, over its terms, of the lowest
            level among the present cells that witness the term)."""
            present = {id(cell): cnt.in_nodes(cell.cls, set(cell.nodes)) > 0 for cell in cells}
            first_cell = {
                id(cell)
                for cell in cells
                if cell.first is not None
                and cell.cls in first_of
                and first_of[cell.cls][1] in set(cell.nodes)
            }
            ext_ok = [self._ext_value(e, cnt) for _cell, _key, e, _w, _lv in needs]
            waiting = {
                id(cell): [i for i in needs_of.get(id(cell), ()) if not ext_ok[i]] for cell in cells
            }
            heap: list[tuple[int, int, _Cell]] = []
            for order_no, cell in enumerate(cells):
                if present[id(cell)] and (id(cell) in first_cell or not waiting[id(cell)]):
                    heapq.heappush(heap, (0, order_no, cell))
            position = {id(cell): k for k, cell in enumerate(cells)}
            level: dict[int, int] = {}
            lowest: dict[
                int, tuple[int, int]
            ] = {}  # witness structure -> (its lowest level, entry)
            met: dict[int, int] = {}
            highest: dict[int, int] = {}
            while heap:
                lv_now, _, cell = heapq.heappop(heap)
                if id(cell) in level:
                    continue
                level[id(cell)] = lv_now
                for w, here in witness_of.get(id(cell), ()):
                    if id(w) in lowest or cnt.in_nodes(cell.cls, set(here)) == 0:
                        continue
                    lowest[id(w)] = (
                        lv_now,
                        next(k for k, (j, h, _) in enumerate(w.cells) if j is cell and h is here),
                    )
                    for i in users.get(id(w), ()):
                        user = needs[i][0]
                        if id(user) in level or ext_ok[i] or i in met:
                            continue
                        met[i] = lv_now
                        highest[id(user)] = max(highest.get(id(user), 0), lv_now)
                        if present[id(user)] and all(k in met for k in waiting[id(user)]):
                            heapq.heappush(heap, (highest[id(user)] + 1, position[id(user)], user))
            for cell in cells:
                vals[cell.y.index] = int(present[id(cell)])
                vals[cell.level.index] = min(level.get(id(cell), 0), top)
                if cell.first is not None:
                    vals[cell.first.index] = int(id(cell) in first_cell)
            for c, var in any_first.items():
                vals[var.index] = int(any(id(cell) in first_cell for cell in by_class[c]))
            for c1, c2, lit in edges:
                if lit is not any_first[c2]:
                    vals[lit.index] = int(
                        any(id(cell) in first_cell and cell.keyed.get(c1) for cell in by_class[c2])
                    )
            ranked = [c for c in first_rank if c in order]
            for c, var in order.items():
                vals[var.index] = ranked.index(c) if c in ranked else 0
            for w in witnesses.values():
                best = lowest.get(id(w))
                vals[w.a.index] = best[0] if best else 0
                for k, (_j, _here, lit) in enumerate(w.cells):
                    vals[lit.index] = int(best is not None and k == best[1])
            for i, (cell, _key, _e, _w, lv) in enumerate(needs):
                if lv is not None:
                    vals[lv.index] = int(
                        present[id(cell)] and id(cell) not in first_cell and not ext_ok[i]
                    )

        self._hinters.append(hint)

    def _any_key_mask(self, keys: tuple[str, ...]) -> np.ndarray:
        inst = self.em.inst
        mask = np.zeros(inst.n_nodes, dtype=bool)
        for k in keys:
            mask |= inst.domains(k)[0] != NO_DOMAIN
        return mask

    # ---- hint values --------------------------------------------------------------------------
    def _compute(self, cnt: Counts) -> dict[int, int]:
        """Every auxiliary value for a placement: its first pods from the shared definition, then
        each form's literals and levels."""
        inst = self.em.inst
        nodes = inst.cluster.nodes
        new = []
        where: dict[str, tuple[int, int]] = {}
        for c in self.relevant:
            pods = iter(inst.classes[c].pods)
            for n in sorted(cnt.per_class[c]):
                for _ in range(cnt.per_class[c][n]):
                    p = next(pods)
                    new.append((p, nodes[n]))
                    where[p.key] = (c, n)
        plan = affinity_order(self.relevant_bound, new, inst.cluster.namespaces)
        first_of: dict[int, tuple[int, int]] = {}
        rank: list[int] = []
        for key in plan.first_pods:
            c, n = where[key]
            first_of.setdefault(c, (c, n))
            rank.append(c)
        vals: dict[int, int] = {}
        for hinter in self._hinters:
            hinter(cnt, first_of, rank, vals)
        return vals


ANTI_AFFINITY_FAMILY = Family(
    POD_ANTI_AFFINITY,
    mask=anti_affinity_mask,
    layout=anti_affinity_layout,
    build=add_anti_affinity_constraints,
)
AFFINITY_FAMILY = Family(
    POD_AFFINITY, mask=affinity_mask, layout=affinity_layout, build=add_affinity_constraints
)
