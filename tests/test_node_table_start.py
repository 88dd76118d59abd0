"""The greedy node table's starting state (``NodeTableStart``) is what one ``assume`` per bound pod
leaves, is made once per snapshot, and every table copies what it may change."""

from __future__ import annotations

import random

import numpy as np

from gangplan.models.objects import (
    Affinity,
    HostPort,
    LabelSelector,
    PodAffinityTerm,
    WeightedPodAffinityTerm,
)
from gangplan.solver.greedy.snapshot import NodeTable
from gangplan.solver.greedy.testing import make_cluster, make_node, make_pod

ARRAYS = ("requested", "free", "nonzero", "pod_count", "alloc", "allowed_pods", "scan_order")
LISTS = ("pods_on", "ports_on", "changes", "bound_on_nodes", "names", "resources", "index")
TABLES = ("node_of", "anti_affinity_pods", "affinity_pods")


def _cluster(seed: int = 1):
    """Bound pods with pod (anti-)affinity terms and host ports, some on a node the snapshot does
    not have, and keys used twice."""
    rng = random.Random(seed)
    nodes = [
        make_node(f"n{i}", cpu=64000, labels={"topology.kubernetes.io/zone": f"z{i % 3}"})
        for i in range(12)
    ]
    term = PodAffinityTerm(
        label_selector=LabelSelector(match_labels={"app": "a"}),
        topology_key="kubernetes.io/hostname",
    )
    kinds = [
        None,
        Affinity(pod_anti_affinity_required=(term,)),
        Affinity(pod_affinity_preferred=(WeightedPodAffinityTerm(weight=5, term=term),)),
        Affinity(pod_affinity_required=(term,)),
    ]
    pods = []
    for k in range(300):
        node = rng.choice([f"n{rng.randrange(12)}", f"n{rng.randrange(12)}", "gone", None])
        p = make_pod(
            f"p{k % 280}",
            requests={"cpu": rng.randrange(0, 900), "memory": rng.randrange(0, 1 << 30)},
            node=node,
            labels={"app": "a"},
            affinity=rng.choice(kinds),
        )
        if rng.random() < 0.2:
            p = p.model_copy(update={"host_ports": (HostPort(port=8000 + rng.randrange(3)),)})
        pods.append(p)
    return make_cluster(nodes, pods)


def _one_by_one(cluster) -> NodeTable:
    empty = cluster.model_copy(
        update={"pods": tuple(p for p in cluster.pods if p.node_name is None)}
    )
    table = NodeTable(empty)
    for p in cluster.bound_pods:
        if p.node_name in table.index:
            table.assume(p, table.index[p.node_name])
    return table


def _same(a: NodeTable, b: NodeTable) -> None:
    for name in ARRAYS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for name in LISTS:
        assert getattr(a, name) == getattr(b, name), name
    for name in TABLES:
        assert list(getattr(a, name).items()) == list(getattr(b, name).items()), name


def test_the_start_is_what_one_assume_per_bound_pod_leaves() -> None:
    cluster = _cluster()
    first = NodeTable(cluster)
    assert first.affinity_pods and first.anti_affinity_pods and any(first.ports_on)
    _same(first, _one_by_one(cluster))
    _same(NodeTable(cluster), first)  # the second table copies the kept start


def test_tables_of_one_snapshot_share_no_mutable_state() -> None:
    cluster = _cluster(2)
    a, b = NodeTable(cluster), NodeTable(cluster)
    pod = make_pod("solo", requests={"cpu": 500})
    i = int(np.argmax([len(on) for on in a.pods_on]))
    a.assume(pod, i)
    gone = next(p for p in cluster.bound_pods if p.key in a.node_of)
    a.forget(gone)
    _same(b, NodeTable(cluster))
    assert pod.key not in b.node_of and gone.key in b.node_of


def test_a_copy_of_the_snapshot_makes_its_own_start() -> None:
    cluster = _cluster(3)
    NodeTable(cluster)
    later = cluster.at_version("1.35")
    assert later is not cluster
    _same(NodeTable(later), _one_by_one(later))
