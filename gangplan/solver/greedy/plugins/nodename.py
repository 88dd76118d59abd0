"""NodeName: ``pkg/scheduler/framework/plugins/nodename/node_name.go`` (kubernetes/kubernetes
v1.36). Filter only: a pod with ``spec.nodeName`` fits only that node. Pending pods in a snapshot
have no nodeName (a pod with one is bound), so in practice every node passes."""

from __future__ import annotations

import numpy as np

from gangplan.solver.greedy.framework import SUCCESS, unschedulable
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.plugins.base import Plugin, constant_reason

NAME = names.NODE_NAME
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(Plugin):
    name = NAME

    def filter_one(self, cs, pod, snap, i):
        if pod.node_name and pod.node_name != snap.names[i]:
            return self.status(unschedulable(ERR_REASON, unresolvable=True))
        return SUCCESS

    def filter_reasons(self, cs, pod, snap, idx):
        return constant_reason(ERR_REASON, idx, unresolvable=True)

    def filter_mask(self, cs, pod, snap, idx):
        if not pod.node_name:
            return np.ones(len(idx), dtype=bool)
        return super().filter_mask(cs, pod, snap, idx)
