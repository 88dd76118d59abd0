"""The snapshot's bound pods as arrays, read once per cluster (:class:`BoundPods`).

Every model build starts from the bound state (:func:`.instance.build_instance`): per node its
pods and their summed requests, and with preemption the victim units and what each frees
(:mod:`.victims`). A diff of a 10,000-node snapshot builds two or three models of one cluster,
and each build walked its 100,000 bound pods (key, node, requests: a formatted key per pod per
pass) two or three times. The pass is the same every time, so it is made once per cluster
(:class:`~gangplan.models.memo.ClusterMemo`); each build then takes the pods it keeps out of it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gangplan.models.cluster import Cluster
from gangplan.models.memo import ClusterMemo
from gangplan.models.objects import PODS, Pod


@dataclass(frozen=True, eq=False)
class BoundPods:
    """``cluster.bound_pods`` in snapshot order, one entry per pod: its key, its node's index
    (-1 when the node is not in the snapshot), its PodGroup key, and its requests over the
    resources the exact engine counts (:func:`resources_of`). Read only."""

    pods: tuple[Pod, ...]
    keys: list[str]
    node: list[int]
    group: list[str | None]
    resources: tuple[str, ...]
    requests: np.ndarray
    """[pods, resources] int64."""
    row: dict[int, int]
    """``id(pod)`` -> its entry, for the pods of ``pods`` (the tuple holds them, so their ids
    stay theirs as long as this layout lives): units of these pods find their rows without a
    formatted key per pod."""
    on_known: list[int]
    """The entries whose node is in the snapshot."""

    def rows_of(self, pods) -> list[int]:
        """The entries of ``pods`` (pods of :attr:`pods`)."""
        return [self.row[id(p)] for p in pods]


def resources_of(cluster: Cluster) -> tuple[str, ...]:
    """The resources the exact engine counts: every one of the cluster's but the pod count."""
    return tuple(r for r in cluster.resource_names if r != PODS)


def _read(cluster: Cluster) -> BoundPods:
    pods = tuple(cluster.bound_pods)
    resources = resources_of(cluster)
    ridx = {r: i for i, r in enumerate(resources)}
    index = cluster.node_index
    rows: list[list[int]] = []
    keys, node, group = [], [], []
    for p in pods:
        keys.append(p.key)
        node.append(index.get(p.node_name, -1))  # type: ignore[arg-type]
        group.append(p.group_key)
        row = [0] * len(resources)
        for r, q in p.requests.items():
            if r in ridx:
                row[ridx[r]] += q
        rows.append(row)
    return BoundPods(
        pods=pods,
        keys=keys,
        node=node,
        group=group,
        resources=resources,
        requests=np.array(rows, dtype=np.int64).reshape(len(pods), len(resources)),
        row={id(p): j for j, p in enumerate(pods)},
        on_known=[j for j, n in enumerate(node) if n >= 0],
    )


bound_pods: ClusterMemo[BoundPods] = ClusterMemo(_read)
"""``bound_pods(cluster)``: the cluster's :class:`BoundPods`, read once per cluster object."""


__all__ = ["BoundPods", "bound_pods", "resources_of"]
