"""NodePorts: ``pkg/scheduler/framework/plugins/nodeports/node_ports.go`` (kubernetes/kubernetes
v1.36). PreFilter skips pods without host ports; Filter rejects a node where a wanted host port
is already used (same protocol and port, overlapping host IP) as Unschedulable."""

from __future__ import annotations

from gangplan.predicates import conflicting_port
from gangplan.solver.greedy.framework import SKIP, SUCCESS, unschedulable
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.plugins.base import Plugin, constant_reason

NAME = names.NODE_PORTS
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


class NodePorts(Plugin):
    name = NAME

    def pre_filter(self, cs, pod, snap):
        return SUCCESS if pod.host_ports else SKIP

    def filter_one(self, cs, pod, snap, i):
        if conflicting_port(pod.host_ports, snap.ports_on[i]) is not None:
            return self.status(unschedulable(ERR_REASON))
        return SUCCESS

    def filter_reasons(self, cs, pod, snap, idx):
        return constant_reason(ERR_REASON, idx, unresolvable=False)
