"""pandas views of a Cluster, a Result and a Diff (``Cluster.to_frame``, ``Result.to_frame``,
``Diff.to_frame``), and the link from a Result to the Cluster it was computed on.

Units: ``cpu`` in cores (a float), every other resource in its integer unit (bytes for memory
and ephemeral-storage, devices for GPUs, ``pods`` in pod slots).
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from gangplan.models.cluster import Cluster
    from gangplan.models.result import Result
    from gangplan.solver.diff import Diff

_CLUSTER_OF: dict[int, Cluster] = {}


def attach(result: Result, cluster: Cluster) -> Result:
    """Remember that ``result`` was computed on ``cluster`` (``gangplan.solve`` and
    ``gangplan.diff`` do), so ``result.to_frame()`` needs no argument. Kept beside the Result,
    not in it: its fields, JSON and equality stay as the engine wrote them."""
    key = id(result)
    if key not in _CLUSTER_OF:
        weakref.finalize(result, _CLUSTER_OF.pop, key, None)
    _CLUSTER_OF[key] = cluster
    return result


def cluster_of(result: Result, cluster: Cluster | None = None) -> Cluster:
    """``cluster`` when given, else the one :func:`attach` remembered; a ValueError otherwise."""
    if cluster is not None:
        return cluster
    found = _CLUSTER_OF.get(id(result))
    if found is None:
        raise ValueError("this Result does not know its snapshot (it was not made by gangplan.solve or gangplan.diff, "
                         "e.g. it was read from JSON): pass the Cluster it was computed on, result.to_frame(cluster)")
    return found


def topology_levels(cluster: Cluster) -> tuple[str, ...]:
    """The node label keys the frames show a domain for: the levels of the snapshot's Kueue
    Topology, else the topology keys of its groups' constraints (broadest first: fewest domains)."""
    levels = cluster.topology_levels()
    if levels:
        return tuple(levels)
    keys = {n.topology_key for n in cluster.groups.nodes.values() if n.topology_key}
    domains = {k: len({node.labels[k] for node in cluster.nodes if k in node.labels}) for k in keys}
    return tuple(sorted((k for k in keys if domains[k]), key=lambda k: (domains[k], k)))


def _amount(resource: str, value: int) -> float | int:
    return value / 1000 if resource == "cpu" else value


def result_frame(result: Result, cluster: Cluster | None = None) -> pd.DataFrame:
    """One row per pending pod of the snapshot: ``namespace``, ``pod``, ``group`` (its PodGroup
    key, None for a single pod), ``engine``, ``node`` (None when not placed), ``admitted`` (the
    group's outcome; a single pod: placed), ``nominated``, ``priority``, ``reason`` (why not
    placed), then the node's domain at each topology level (:func:`topology_levels`)."""
    import pandas as pd

    cluster = cluster_of(result, cluster)
    levels = topology_levels(cluster)
    nodes = {n.name: n for n in cluster.nodes}
    rows = []
    for p in cluster.pending_pods:
        o = result.pods.get(p.key)
        node = o.node if o is not None else None
        g = result.groups.get(p.group_key) if p.group_key else None
        row = {
            "namespace": p.namespace,
            "pod": p.name,
            "group": p.group_key,
            "engine": result.engine,
            "node": node,
            "admitted": bool(g.admitted) if g is not None else node is not None,
            "nominated": bool(o and o.nominated),
            "priority": p.priority,
            "reason": o.reason if o is not None else None,
        }
        labels = nodes[node].labels if node in nodes else {}
        for level in levels:
            row[level] = labels.get(level)
        rows.append(row)
    columns = ["namespace", "pod", "group", "engine", "node", "admitted", "nominated", "priority", "reason", *levels]
    return pd.DataFrame(rows, columns=columns)


def diff_frame(d: Diff) -> pd.DataFrame:
    """One row per PodGroup with pending pods: ``group``, ``priority``, ``min_count``, then greedy
    against the optimum (``*_admitted``, ``*_placed``, ``*_domain``, ``*_reason``) and ``differs``."""
    import pandas as pd

    columns = ["group", "priority", "min_count", "greedy_admitted", "optimal_admitted", "greedy_placed", "optimal_placed",
               "greedy_domain", "optimal_domain", "greedy_reason", "optimal_reason", "differs"]
    rows = [{c: getattr(g, c) for c in columns} for g in d.groups]
    return pd.DataFrame(rows, columns=columns)


def cluster_frame(cluster: Cluster, result: Result | None = None) -> pd.DataFrame:
    """One row per node: ``node``, its domain at each topology level, ``unschedulable``,
    ``bound_pods``, then per resource ``<r>_allocatable``, ``<r>_used`` (the bound pods'
    requests) and ``<r>_free``. With ``result``: the state after it (its placements added, its
    victims removed) and ``placed_pods`` / ``victims`` columns."""
    import pandas as pd

    levels = topology_levels(cluster)
    resources = cluster.resource_names
    victims = set(result.victims) if result is not None else set()
    used: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    bound: dict[str, int] = defaultdict(int)
    evicted: dict[str, int] = defaultdict(int)
    placed: dict[str, int] = defaultdict(int)
    for p in cluster.bound_pods:
        if p.key in victims:
            evicted[p.node_name] += 1
            continue
        bound[p.node_name] += 1
        for r, q in p.requests.items():
            used[p.node_name][r] += q
        used[p.node_name]["pods"] += 0 if "pods" in p.requests else 1
    if result is not None:
        for key, node in result.placements().items():
            p = cluster.pod_by_key[key]
            placed[node] += 1
            for r, q in p.requests.items():
                used[node][r] += q
            used[node]["pods"] += 0 if "pods" in p.requests else 1
    rows = []
    for n in cluster.nodes:
        row: dict = {"node": n.name}
        for level in levels:
            row[level] = n.labels.get(level)
        row["unschedulable"] = n.unschedulable
        row["bound_pods"] = bound[n.name]
        if result is not None:
            row["placed_pods"] = placed[n.name]
            row["victims"] = evicted[n.name]
        for r in resources:
            alloc, u = n.allocatable.get(r, 0), used[n.name][r]
            row[f"{r}_allocatable"] = _amount(r, alloc)
            row[f"{r}_used"] = _amount(r, u)
            row[f"{r}_free"] = _amount(r, alloc - u)
        rows.append(row)
    return pd.DataFrame(rows)


__all__ = ["attach", "cluster_frame", "cluster_of", "diff_frame", "result_frame", "topology_levels"]
