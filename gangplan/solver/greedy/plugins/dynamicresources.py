"""DynamicResources: ``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``
(kubernetes/kubernetes v1.35). PreFilter skips pods without claims (and without extended
resources a DeviceClass maps, KEP-5004) and rejects a pod whose claim or template is missing;
Filter allocates the pod's unallocated claims on the node with the structured allocator
(:mod:`gangplan.dra.allocator`), seeing the devices of every claim allocated in the snapshot and
the pending allocations of pods assumed earlier in the run (the gang's own pods included), as
Reserve's in-flight allocations are seen upstream. The rules are :mod:`gangplan.dra.rules`.
"""

from __future__ import annotations

from gangplan.dra import rules
from gangplan.solver.greedy.framework import SKIP, SUCCESS, unschedulable
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.plugins.base import Plugin

NAME = names.DYNAMIC_RESOURCES


class DynamicResources(Plugin):
    name = NAME

    def __init__(self, cluster, profile) -> None:
        super().__init__(cluster, profile)
        self.dra = cluster.dra
        self._users: dict[str, list[str]] = {}
        if self.dra:
            for pod_key, keys in self.dra.pod_claims.items():
                for k in keys:
                    self._users.setdefault(k, []).append(pod_key)
        self._replays: dict[tuple, tuple] = {}

    def pre_filter(self, cs, pod, snap):
        if not rules.uses_dra(self.dra, pod):
            return SKIP
        if pod.key in self.dra.pod_missing:
            return self.status(unschedulable(self.dra.pod_missing[pod.key], unresolvable=True))
        return SUCCESS

    def _claim_nodes(self, snap, pod) -> dict[str, str]:
        """Shared claims of ``pod`` another assumed pending pod allocated: claim -> its node."""
        out: dict[str, str] = {}
        for key in self.dra.pod_claims.get(pod.key, ()):
            for other in self._users.get(key, ()):
                if other != pod.key and other in snap.node_of and snap.cluster.pod_by_key[other].node_name is None:
                    out[key] = snap.names[snap.node_of[other]]
                    break
        return out

    def _node_state(self, snap, i: int):
        pending = tuple(p for p in snap.pods_on[i] if p.node_name is None and rules.uses_dra(self.dra, p))
        key = (i, tuple(p.key for p in pending))
        got = self._replays.get(key)
        if got is None:
            got = rules.replay(self.dra, pending, snap.nodes[i], {})
            if len(self._replays) > 100_000:
                self._replays.clear()
            self._replays[key] = got
        return got

    def filter_one(self, cs, pod, snap, i):
        in_use, _ = self._node_state(snap, i)
        got, why = rules.try_node(self.dra, pod, snap.nodes[i], in_use, self._claim_nodes(snap, pod))
        if got is None:
            return self.status(unschedulable(why, unresolvable=True))
        return SUCCESS
