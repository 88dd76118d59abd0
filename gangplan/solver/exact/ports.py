"""Host ports: no two pods on a node want a conflicting host port.

validate's ``host-port`` rule (NodePorts, ``nodeports/node_ports.go`` v1.35). Conflicts with bound
pods are static (the mask; blockers in evictable units only condition the node). Among pending
pods: a class with host ports conflicts with itself, so its count per node is at most 1 (its
``Layout.per_node`` limit, the variable's bound), and two conflicting classes share a node at most
once: ``x[c, n] + x[c', n] <= 1``.
"""

from __future__ import annotations

import numpy as np

from gangplan.predicates import ports_conflict
from gangplan.solver.exact.eligibility import ClassView, Conditions, block
from gangplan.solver.exact.family import BuildContext, Family, Layout
from gangplan.solver.exact.instance import Instance
from gangplan.solver.exact.names import HOST_PORT


def ports_mask(view: ClassView, cond: Conditions) -> np.ndarray | None:
    """Nodes where no bound pod holds a conflicting host port."""
    inst, cls = view.inst, view.cls
    if not cls.rep.host_ports:
        return None
    mask = np.ones(inst.n_nodes, dtype=bool)
    for i in view.cache.port_nodes:
        hit = [
            q
            for q in inst.bound_on_node[i]
            if any(ports_conflict(a, b) for a in cls.rep.host_ports for b in q.host_ports)
        ]
        if hit:
            block(inst, mask, cond, np.array([i]), hit)
    return mask


def ports_layout(inst: Instance, objective: str) -> Layout:
    """Classes with host ports: per-node counts, at most one pod per node."""
    return Layout(per_node={c.index: 1 for c in inst.classes if c.rep.host_ports})


def add_port_constraints(ctx: BuildContext) -> None:
    if not ctx.enforces(HOST_PORT):
        return
    em = ctx.em
    with_ports = [c for c in em.inst.classes if c.rep.host_ports and em.x[c.index]]
    for i, a in enumerate(with_ports):
        for b in with_ports[i + 1 :]:
            if not any(ports_conflict(p, q) for p in a.rep.host_ports for q in b.rep.host_ports):
                continue
            xa, xb = em.x[a.index], em.x[b.index]
            for n in sorted(set(xa) & set(xb)):
                em.model.add(xa[n] + xb[n] <= 1)


FAMILY = Family(HOST_PORT, mask=ports_mask, layout=ports_layout, build=add_port_constraints)
