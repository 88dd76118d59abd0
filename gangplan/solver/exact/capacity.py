"""Capacity: per node and resource, new requests fit the free allocatable; pod slots likewise.

Mirrors validate's ``capacity`` rule (and NodeResourcesFit's Filter, ``noderesources/fit.go``
v1.35) on the final state: every resource, extended ones included, plus the ``pods`` slot count.
Nodes the bound state already over-commits are ineligible (see :mod:`instance`).

Each resource is divided by the gcd of all pending requests of that resource (and the free
amount floored by it): the constraint is unchanged on integers, and memory coefficients shrink from
bytes to something the LP handles well. A constraint is only written when the variables' upper
bounds could actually exceed the free amount.

With preemption (:mod:`.preemption`) the bound usage is a linear expression: each evictable unit
on the node gives back its requests and pod slots when ``evict[u]`` is 1, i.e.
``new requests - sum_u usage[u, n] * evict[u] <= free`` (free after every bound pod); the unit
usages join the gcd so the scaling stays exact.
"""

from __future__ import annotations

import math

import numpy as np
from ortools.sat.python import cp_model

from gangplan.solver.exact.eligibility import ClassView, Conditions
from gangplan.solver.exact.family import BuildContext, Family
from gangplan.solver.exact.names import CAPACITY
from gangplan.solver.exact.variables import ExactModel


def capacity_mask(view: ClassView, cond: Conditions) -> np.ndarray:
    """Nodes where at least one pod of the class fits the free capacity (evictable room included)."""
    return view.fit > 0


def resource_scales(em: ExactModel) -> np.ndarray:
    """Per resource, the gcd of every pending class's non-zero request (1 when none)."""
    scales = np.ones(len(em.inst.resources), dtype=np.int64)
    for r in range(len(em.inst.resources)):
        g = 0
        for req in em.req:
            if req[r] > 0:
                g = math.gcd(g, int(req[r]))
        for u in em.inst.units:
            for vec in u.usage.values():
                if vec[r] > 0:
                    g = math.gcd(g, int(vec[r]))
        scales[r] = g or 1
    return scales


def add_capacity_constraints(ctx: BuildContext) -> None:
    """Sum over everything landing on a node of request x count <= free, per resource and pods."""
    if not ctx.enforces(CAPACITY):
        return
    em = ctx.em
    inst, model = em.inst, em.model
    scales = resource_scales(em)
    for n, entries in enumerate(em.node_vars):
        if not entries:
            continue
        variables = [var for var, _, _ in entries]
        ubs = np.array([ub for _, _, ub in entries], dtype=np.int64)
        reqs = np.stack([req for _, req, _ in entries]) // scales
        free = inst.free[n] // scales
        gives = [(em.evict[i], u.usage[n] // scales, u.slots[n]) for i, u in enumerate(inst.units) if n in u.usage]
        if gives and ((inst.free[n] < 0).any() or inst.free_pods[n] < 0):
            _overcommitted(em, n, variables, ubs, reqs, free, gives)
            continue
        for r in np.nonzero(reqs.any(axis=0))[0].tolist():
            coefs = reqs[:, r]
            if int(coefs @ ubs) > free[r]:
                back = [(var, -int(use[r])) for var, use, _ in gives if use[r]]
                if not back:
                    model.add(cp_model.LinearExpr.weighted_sum(variables, coefs.tolist()) <= int(free[r]))
                    continue
                model.add(cp_model.LinearExpr.weighted_sum(variables + [v for v, _ in back],
                                                           coefs.tolist() + [k for _, k in back]) <= int(free[r]))
        if int(ubs.sum()) > inst.free_pods[n]:
            if not gives:
                model.add(cp_model.LinearExpr.sum(variables) <= int(inst.free_pods[n]))
                continue
            model.add(cp_model.LinearExpr.weighted_sum(variables + [v for v, _, _ in gives],
                                                       [1] * len(variables) + [-k for _, _, k in gives]) <= int(inst.free_pods[n]))


def _overcommitted(em: ExactModel, n: int, variables, ubs, reqs, free, gives) -> None:
    """A node the bound state over-commits, reachable only by evicting (preemption): with
    ``land`` = 1 when any pod lands there, every resource a landing pod requests and the pod slots
    must fit once the evictions are done: ``new - given back <= free * land`` (free < 0 forces
    evictions only when something lands; with nothing landing the left side is <= 0 anyway). A
    resource no candidate pod requests is not checked, as NodeResourcesFit checks only the
    incoming pod's requests (the validator's capacity rule says the same)."""
    model, inst = em.model, em.inst
    members = [(var, k) for var, k in zip(variables, ubs.tolist(), strict=True)]
    land = em.new_aux(0, 1, lambda cnt, n=n: int(any(per.get(n, 0) for per in cnt.per_class)))
    model.add(cp_model.LinearExpr.sum(variables) <= int(sum(k for _, k in members)) * land)
    for r in range(len(free)):
        if not reqs[:, r].any():
            continue
        coefs = reqs[:, r].tolist()
        back = [(var, -int(use[r])) for var, use, _ in gives if use[r]]
        if free[r] >= 0 and int(reqs[:, r] @ ubs) <= free[r]:
            continue
        terms = variables + [v for v, _ in back] + [land]
        weights = coefs + [k for _, k in back] + [-int(min(free[r], 0))]
        model.add(cp_model.LinearExpr.weighted_sum(terms, weights) <= int(max(free[r], 0)))
    slots = int(inst.free_pods[n])
    if slots < 0 or int(ubs.sum()) > slots:
        terms = variables + [v for v, _, _ in gives] + [land]
        weights = [1] * len(variables) + [-k for _, _, k in gives] + [-min(slots, 0)]
        model.add(cp_model.LinearExpr.weighted_sum(terms, weights) <= max(slots, 0))


FAMILY = Family(CAPACITY, mask=capacity_mask, build=add_capacity_constraints)
