"""Host ports: no two pods on a node want a conflicting host port.

validate's ``host-port`` rule (NodePorts, ``nodeports/node_ports.go`` v1.35). Conflicts with bound
pods are static (eligibility). Among pending pods: a class with host ports conflicts with itself,
so its count per node is at most 1 (the variable's bound, set in :mod:`variables`), and two
conflicting classes share a node at most once: ``x[c, n] + x[c', n] <= 1``.
"""

from __future__ import annotations

from gangplan.predicates import ports_conflict
from gangplan.solver.exact.variables import ExactModel

FAMILY = "host-port"


def add_port_constraints(em: ExactModel) -> None:
    if FAMILY in em.skip:
        return
    with_ports = [c for c in em.inst.classes if c.rep.host_ports and em.x[c.index]]
    for i, a in enumerate(with_ports):
        for b in with_ports[i + 1:]:
            if not any(ports_conflict(p, q) for p in a.rep.host_ports for q in b.rep.host_ports):
                continue
            xa, xb = em.x[a.index], em.x[b.index]
            for n in sorted(set(xa) & set(xb)):
                em.model.add(xa[n] + xb[n] <= 1)
