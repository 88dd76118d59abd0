"""Capacity: per node and resource, new requests fit the free allocatable; pod slots likewise.

Mirrors validate's ``capacity`` rule (and NodeResourcesFit's Filter, ``noderesources/fit.go``
v1.35) on the final state: every resource, extended ones included, plus the ``pods`` slot count.
Nodes the bound state already over-commits are ineligible (see :mod:`instance`).

Each resource is divided by the gcd of all pending requests of that resource (and the free
amount floored by it): the constraint is unchanged on integers, and memory coefficients shrink from
bytes to something the LP handles well. A constraint is only written when the variables' upper
bounds could actually exceed the free amount.
"""

from __future__ import annotations

import math

import numpy as np
from ortools.sat.python import cp_model

from gangplan.solver.exact.variables import ExactModel

FAMILY = "capacity"


def resource_scales(em: ExactModel) -> np.ndarray:
    """Per resource, the gcd of every pending class's non-zero request (1 when none)."""
    scales = np.ones(len(em.inst.resources), dtype=np.int64)
    for r in range(len(em.inst.resources)):
        g = 0
        for req in em.req:
            if req[r] > 0:
                g = math.gcd(g, int(req[r]))
        scales[r] = g or 1
    return scales


def add_capacity_constraints(em: ExactModel) -> None:
    """Sum over everything landing on a node of request x count <= free, per resource and pods."""
    if FAMILY in em.skip:
        return
    inst, model = em.inst, em.model
    scales = resource_scales(em)
    for n, entries in enumerate(em.node_vars):
        if not entries:
            continue
        variables = [var for var, _, _ in entries]
        ubs = np.array([ub for _, _, ub in entries], dtype=np.int64)
        reqs = np.stack([req for _, req, _ in entries]) // scales
        free = inst.free[n] // scales
        for r in np.nonzero(reqs.any(axis=0))[0].tolist():
            coefs = reqs[:, r]
            if int(coefs @ ubs) > free[r]:
                model.add(cp_model.LinearExpr.weighted_sum(variables, coefs.tolist()) <= int(free[r]))
        if int(ubs.sum()) > inst.free_pods[n]:
            model.add(cp_model.LinearExpr.sum(variables) <= int(inst.free_pods[n]))
