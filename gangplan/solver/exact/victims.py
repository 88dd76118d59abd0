"""Victim units as problem data: which bound pods the exact model may evict, and what each frees.

Victim units mirror upstream's ``WorkloadPortion`` (the units of
``getCrossNodesVictims`` in ``pkg/scheduler/framework/preemption/podgrouppreemption.go``,
kubernetes/kubernetes 00f22436be9627b0d57b18d24da0017217f4e5a0), re-derived here from the Cluster
(no engine imports the other): see :mod:`.preemption` for the rules and the model part. This
module only reads the Cluster, so :mod:`.instance` builds the units without importing the model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gangplan.models.cluster import Cluster
from gangplan.models.groups import EntityKey, VictimUnit
from gangplan.models.memo import ClusterMemo
from gangplan.models.objects import NEVER
from gangplan.solver.exact.bound import bound_pods


@dataclass(frozen=True, eq=False)
class EvictUnit(VictimUnit):
    """One evictable unit (the rules' :class:`~gangplan.models.groups.VictimUnit`: evicted as a
    whole or kept), with what it frees on each node."""

    usage: dict[int, np.ndarray]
    """Node index -> summed requests of the unit's pods there (Instance.resources order)."""
    slots: dict[int, int]
    """Node index -> the unit's pods there."""


def victim_units(cluster: Cluster, bound_node_of: dict[str, int]) -> list[VictimUnit]:
    """Every unit over the bound pods in ``bound_node_of`` (the bound pods on known nodes, less
    any victims removed up front), in pod order (:meth:`GroupTree.victim_units`)."""
    every = _every_unit(cluster)
    if bound_node_of.keys() == every.keys:
        return list(every.units)
    return _units_over(cluster, bound_node_of.keys())


def _units_over(cluster: Cluster, keys) -> list[VictimUnit]:
    bp = bound_pods(cluster)
    return cluster.groups.victim_units(
        p for p, key in zip(bp.pods, bp.keys, strict=True) if key in keys
    )


@dataclass(frozen=True)
class _EveryUnit:
    """The units over every bound pod on a known node: what each build without victims removed
    up front asks for (the units are read only)."""

    keys: frozenset[str]
    units: tuple[VictimUnit, ...]


def _every(cluster: Cluster) -> _EveryUnit:
    bp = bound_pods(cluster)
    keys = frozenset(bp.keys[j] for j in bp.on_known)
    return _EveryUnit(keys, tuple(_units_over(cluster, keys)))


_every_unit: ClusterMemo[_EveryUnit] = ClusterMemo(_every)


def preemptors(cluster: Cluster, classes) -> list[tuple[int, EntityKey]]:
    """(priority, entity) of every entity the model may place that may preempt."""
    tree = cluster.groups
    out: dict[EntityKey, int] = {}
    for c in classes:
        for p in c.pods:
            out[tree.entity_of(p)] = c.priority
    return sorted(
        ((pr, e) for e, pr in out.items() if tree.preemption_policy(e) != NEVER),
        key=lambda t: (-t[0], t[1]),
    )


def evictable_units(
    cluster: Cluster, classes, bound_node_of: dict[str, int], resources: tuple[str, ...]
) -> list[EvictUnit]:
    """The units the model may evict (see the module docstring), in pod order."""
    pre = preemptors(cluster, classes)
    if not pre:
        return []
    top = pre[0][0]
    bp = bound_pods(cluster)
    assert bp.resources == tuple(resources)  # (the rows below are in this order)
    out = []
    for unit in victim_units(cluster, bound_node_of):
        pods, prio = unit.pods, unit.priority
        if prio >= top:
            continue
        usage: dict[int, np.ndarray] = {}
        slots: dict[int, int] = {}
        for j in bp.rows_of(pods):
            n = bound_node_of[bp.keys[j]]
            if n in usage:
                usage[n] = usage[n] + bp.requests[j]
            else:
                usage[n] = bp.requests[j].copy()
            slots[n] = slots.get(n, 0) + 1
        out.append(
            EvictUnit(
                key=unit.key, kind=unit.kind, pods=pods, priority=prio, usage=usage, slots=slots
            )
        )
    return out


def eviction_room(
    units: list[EvictUnit], n_nodes: int, n_res: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per node, the resources and pod slots every evictable unit together could free."""
    room = np.zeros((n_nodes, n_res), dtype=np.int64)
    slots = np.zeros(n_nodes, dtype=np.int64)
    for u in units:
        for n, vec in u.usage.items():
            room[n] += vec
            slots[n] += u.slots[n]
    return room, slots
