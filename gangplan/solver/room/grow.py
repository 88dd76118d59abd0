"""The other two answers of ``make-room``: how many nodes of a shape already in the snapshot would
admit the targets with nothing moved (and into which domain), and how many copies of a gang fit
now.

**Nodes to add.** A shape is a node of the snapshot the new ones copy (allocatable, taints,
labels; ``--like NODE``, or one node per class of identical nodes, the largest classes first). A
target held to a topology domain (its group's ``topology_key``) needs the new nodes in one
domain: each existing domain of that key is tried (the new nodes copy the topology labels of a
node there), and a new domain. For each, ``k`` new nodes, ``k = 1, 2, ...``: the greedy engine runs
on the grown snapshot (every pending pod queued as it is, so other pending work may take the new
nodes first, as it would); the first ``k`` whose run admits every target is the answer for that
shape and domain. It is **proven** the fewest when the exact engine, on the snapshot grown by
``k - 1`` nodes with only the targets pending, proves that not every target can be admitted.

**Copies that fit.** The target gang copied ``n`` times (renamed), every other pending pod held
back: the greedy engine's count of admitted copies and the exact engine's maximum (proven or
not).
"""

from __future__ import annotations

from collections import defaultdict

from gangplan.models.cluster import Cluster
from gangplan.models.objects import Node, Pod
from gangplan.models.result import Status
from gangplan.models.room import NodesToAdd
from gangplan.models.well_known import GPU, HOSTNAME, RACK, REGION, ZONE
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.room.mark import _with_pods, marked
from gangplan.solver.room.verify import admitted_roots

MAX_NEW_NODES = 64
"""Nodes of one shape tried at most per domain."""
MAX_SHAPES = 3
"""Node classes tried when ``--like`` names none."""
MAX_DOMAINS = 6
"""Existing domains tried per shape (those with the most free GPUs), beside a new one."""


def _class_key(n: Node, topo: set[str]) -> tuple:
    labels = tuple(sorted((k, v) for k, v in n.labels.items() if k not in topo))
    return (tuple(sorted(n.allocatable.items())), n.taints, labels)


def topology_keys(cluster: Cluster, roots: list[str]) -> set[str]:
    keys = {HOSTNAME, ZONE, REGION, RACK, *cluster.topology_levels()}
    tree = cluster.groups
    for r in roots:
        if r in tree:
            for k in (r, *tree.node(r).leaves):
                if tree.node(k).obj.topology_key:
                    keys.add(tree.node(k).obj.topology_key)
    return keys


def shapes(cluster: Cluster, roots: list[str], like: str | None) -> list[Node]:
    """The nodes new ones would copy (see the module docstring)."""
    if like is not None:
        return [n for n in cluster.nodes if n.name == like]
    topo = topology_keys(cluster, roots)
    classes: dict[tuple, list[Node]] = defaultdict(list)
    for n in cluster.nodes:
        if not n.unschedulable:
            classes[_class_key(n, topo)].append(n)
    ranked = sorted(
        classes.values(), key=lambda ns: (-int(ns[0].allocatable.get(GPU, 0)), -len(ns), ns[0].name)
    )
    return [ns[0] for ns in ranked[:MAX_SHAPES]]


def _domain_key(cluster: Cluster, roots: list[str]) -> str | None:
    tree = cluster.groups
    for r in roots:
        if r in tree:
            for k in (r, *tree.node(r).leaves):
                key = tree.node(k).obj.topology_key
                if key:
                    return key
    return None


def _free_gpus(cluster: Cluster) -> dict[str, int]:
    used: dict[str, int] = defaultdict(int)
    for p in cluster.bound_pods:
        used[p.node_name] += int(p.requests.get(GPU, 0))
    return {n.name: int(n.allocatable.get(GPU, 0)) - used[n.name] for n in cluster.nodes}


def _domains(cluster: Cluster, key: str | None, topo: set[str]) -> list[tuple[dict[str, str], str]]:
    """(topology labels the new nodes carry, a name for the domain): existing domains with the
    most free GPUs first, then a new one."""
    if key is None:
        return [({}, "")]
    free = _free_gpus(cluster)
    per: dict[str, list[Node]] = defaultdict(list)
    for n in cluster.nodes:
        if key in n.labels:
            per[n.labels[key]].append(n)
    ranked = sorted(per.items(), key=lambda kv: (-sum(free[n.name] for n in kv[1]), kv[0]))
    out = []
    for value, nodes in ranked[:MAX_DOMAINS]:
        labels = {k: v for k, v in nodes[0].labels.items() if k in topo and k != HOSTNAME}
        out.append((labels, f"{key}={value}"))
    out.append(({key: "gangplan-new-domain"}, f"{key}=gangplan-new-domain"))
    return out


def grown(cluster: Cluster, shape: Node, labels: dict[str, str], k: int) -> Cluster:
    """``cluster`` with ``k`` copies of ``shape`` carrying ``labels`` (topology)."""
    topo_free = {kk: vv for kk, vv in shape.labels.items() if kk not in labels}
    new = []
    for i in range(k):
        name = f"{shape.name}-add-{i}"
        new.append(
            shape.model_copy(
                update={
                    "name": name,
                    "labels": {**topo_free, **labels, HOSTNAME: name},
                    "unschedulable": False,
                }
            )
        )
    return cluster.model_copy(update={"nodes": cluster.nodes + tuple(new)})


def nodes_to_add(
    cluster: Cluster,
    roots: list[str],
    *,
    like: str | None = None,
    time_limit: float = 10.0,
    workers: int = 2,
    seed: int = 0,
) -> list[NodesToAdd]:
    """The fewest nodes per shape (see the module docstring), cheapest first."""
    if not roots:
        return []
    key = _domain_key(cluster, roots)
    topo = topology_keys(cluster, roots)
    only_targets = marked(cluster, roots, [])
    out = []
    for shape in shapes(cluster, roots, like):
        best = None
        for labels, name in _domains(cluster, key, topo):
            for k in range(1, MAX_NEW_NODES + 1):
                if best is not None and k >= best[0]:
                    break
                r = solve_greedy(grown(cluster, shape, labels, k), seed=seed, preemption=False)
                if set(admitted_roots(cluster, [r], roots)) == set(roots):
                    best = (k, labels, name)
                    break
        if best is None:
            continue
        k, labels, name = best
        proven = k == 1 and _alone_fails(only_targets, roots, time_limit, workers, seed)
        if k > 1:
            fewer = solve_exact(
                grown(only_targets, shape, labels, k - 1),
                preemption=False,
                time_limit=time_limit,
                workers=workers,
                seed=seed,
            )
            proven = fewer.status == Status.OPTIMAL and set(
                admitted_roots(only_targets, [fewer], roots)
            ) != set(roots)
        domain = {key: labels[key]} if key and key in labels else {}
        out.append(NodesToAdd(shape=shape.name, count=k, domain=domain, proven=proven))
    out.sort(key=lambda n: (n.count, n.shape))
    return out


def _alone_fails(only_targets: Cluster, roots: list[str], time_limit, workers, seed) -> bool:
    r = solve_exact(
        only_targets, preemption=False, time_limit=time_limit, workers=workers, seed=seed
    )
    return r.status == Status.OPTIMAL and set(admitted_roots(only_targets, [r], roots)) != set(
        roots
    )


def copies_that_fit(
    cluster: Cluster,
    root: str,
    *,
    most: int = 64,
    time_limit: float = 10.0,
    workers: int = 2,
    seed: int = 0,
) -> tuple[int, int, bool]:
    """(greedy's admitted copies, the exact engine's, proven) of group ``root`` on ``cluster``
    as it runs now (see the module docstring); ``most`` copies are offered."""
    tree = cluster.groups
    pods = [p for p in cluster.pending_pods if tree.entity_of(p).key == root]
    base = marked(cluster, [], [])  # every pending pod held back
    copies: list[Pod] = []
    groups = dict(base.pod_groups)
    names = []
    if root in tree and tree.node(root).is_leaf:
        pg = tree.node(root).obj
        for i in range(most):
            name = f"{pg.name}-copy-{i}"
            groups[f"{pg.namespace}/{name}"] = pg.model_copy(update={"name": name})
            names.append(f"{pg.namespace}/{name}")
            for p in pods:
                copies.append(
                    p.model_copy(
                        update={"name": f"{p.name}-copy-{i}", "pod_group": name, "uid": ""}
                    )
                )
    else:
        for i in range(most):
            for p in pods:
                copies.append(p.model_copy(update={"name": f"{p.name}-copy-{i}", "uid": ""}))
                names.append(f"{p.namespace}/{p.name}-copy-{i}")
    trial = _with_pods(base.model_copy(update={"pod_groups": groups}), list(base.pods) + copies)
    g = solve_greedy(trial, seed=seed, preemption=False)
    e = solve_exact(
        trial, time_limit=time_limit, workers=workers, seed=seed, hint=g, preemption=False
    )
    greedy_n = len(admitted_roots(trial, [g], names))
    exact_n = len(admitted_roots(trial, [e], names))
    return greedy_n, exact_n, e.status == Status.OPTIMAL
