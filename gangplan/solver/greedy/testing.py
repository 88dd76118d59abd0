"""Small builders for plugin and engine tests, in the spirit of upstream's
``pkg/scheduler/testing/wrappers.go`` (``st.MakeNode()``, ``st.MakePod()``).

Quantities are scheduler integers: cpu in millicores, memory in bytes. A pod built here has the
requests given; its non-zero scoring requests default to one container's (100m / 200Mi for the
missing ones). Pass ``nonzero={}`` for upstream's container-less ``st.MakePod().Obj()``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from gangplan.models.cluster import Cluster
from gangplan.models.objects import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    Affinity,
    Node,
    Pod,
    PodGroup,
    SchedulerProfile,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from gangplan.solver.greedy.framework import Code, CycleState, Status
from gangplan.solver.greedy.plugins import REGISTRY, Registry
from gangplan.solver.greedy.plugins.base import NORMALIZE_SCORE
from gangplan.solver.greedy.snapshot import NodeTable


def make_node(
    name: str,
    *,
    cpu: int = 0,
    memory: int = 0,
    pods: int = 110,
    extra: dict[str, int] | None = None,
    labels: dict[str, str] | None = None,
    taints: Iterable[Taint] = (),
    unschedulable: bool = False,
    images: dict[str, int] | None = None,
) -> Node:
    alloc = {"pods": pods}
    if cpu:
        alloc["cpu"] = cpu
    if memory:
        alloc["memory"] = memory
    alloc.update(extra or {})
    return Node(
        name=name,
        labels=dict(labels or {}),
        taints=tuple(taints),
        unschedulable=unschedulable,
        allocatable=alloc,
        images=dict(images or {}),
    )


def make_pod(
    name: str,
    *,
    namespace: str = "default",
    requests: dict[str, int] | None = None,
    nonzero: dict[str, int] | None = None,
    node: str | None = None,
    labels: dict[str, str] | None = None,
    tolerations: Iterable[Toleration] = (),
    affinity: Affinity | None = None,
    node_selector: dict[str, str] | None = None,
    spread: Iterable[TopologySpreadConstraint] = (),
    priority: int = 0,
    group: str | None = None,
    created: str = "",
    images: Iterable[str] = (),
) -> Pod:
    req = dict(requests or {})
    if nonzero is None:
        nonzero = {
            "cpu": req.get("cpu", DEFAULT_MILLI_CPU_REQUEST),
            "memory": req.get("memory", DEFAULT_MEMORY_REQUEST),
        }
    return Pod(
        namespace=namespace,
        name=name,
        labels=dict(labels or {}),
        creation_timestamp=created,
        node_name=node,
        phase="Running" if node else "Pending",
        requests=req,
        nonzero_requests=dict(nonzero),
        node_selector=dict(node_selector or {}),
        affinity=affinity or Affinity(),
        tolerations=tuple(tolerations),
        topology_spread=tuple(spread),
        priority=priority,
        pod_group=group,
        images=tuple(images),
    )


def make_cluster(
    nodes: Iterable[Node],
    pods: Iterable[Pod] = (),
    *,
    groups: Iterable[PodGroup] = (),
    profile: SchedulerProfile | None = None,
) -> Cluster:
    return Cluster(
        nodes=tuple(nodes),
        pods=tuple(pods),
        pod_groups={g.key: g for g in groups},
        profile=profile or SchedulerProfile(),
    )


def score_with(
    plugin: str,
    cluster: Cluster,
    pod: Pod,
    feasible: Iterable[str] | None = None,
    *,
    registry: Registry | None = None,
) -> dict[str, int] | None:
    """Run one plugin's PreScore / Score / NormalizeScore over the candidate nodes (``feasible``,
    default every node), as upstream's plugin tests do. None when PreScore returns Skip.
    ``registry``: where the plugin is found (default: the in-tree registry)."""
    snap = NodeTable(cluster)
    pl = (REGISTRY if registry is None else registry)[plugin](cluster, cluster.profile)
    cs = CycleState()
    names = list(feasible) if feasible is not None else snap.names
    nodes = np.array([snap.index[n] for n in names], dtype=np.int64)
    if pl.pre_score(cs, pod, snap, nodes).code == Code.SKIP:
        return None
    raw = pl.score(cs, pod, snap, nodes)
    if NORMALIZE_SCORE in pl.points:
        raw = pl.normalize(cs, pod, snap, nodes, raw)
    return {n: int(raw[k]) for k, n in enumerate(names)}


def filter_with(
    plugin: str, cluster: Cluster, pod: Pod, *, registry: Registry | None = None
) -> dict[str, Status]:
    """Run one plugin's PreFilter and Filter on every node (a PreFilter Skip passes every node)."""
    snap = NodeTable(cluster)
    pl = (REGISTRY if registry is None else registry)[plugin](cluster, cluster.profile)
    cs = CycleState()
    pre = pl.pre_filter(cs, pod, snap)
    out = {}
    for i in range(snap.n):
        st = Status() if pre.code == Code.SKIP else pl.filter_one(cs, pod, snap, i)
        mask_ok = (
            True if pre.code == Code.SKIP else bool(pl.filter_mask(cs, pod, snap, np.array([i]))[0])
        )
        assert mask_ok == st.ok, f"{plugin}: filter_mask and filter_one disagree on {snap.names[i]}"
        out[snap.names[i]] = st
    return out
