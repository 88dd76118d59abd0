"""The topology domain tree: levels, domain ids root to leaf, missing labels, distances."""

from __future__ import annotations

import numpy as np

from gangplan.models.cluster import Cluster
from gangplan.models.objects import Node, TopologyLevels
from gangplan.topology import ROOT, TopologyTree

BLOCK, RACK, HOST = (
    "cloud.google.com/gce-topology-block",
    "topology.kubernetes.io/rack",
    "kubernetes.io/hostname",
)


def _node(name: str, **labels: str) -> Node:
    return Node(
        name=name, labels={k.replace("__", "/").replace("_", "."): v for k, v in labels.items()}
    )


def _cluster(with_topology: bool = True) -> Cluster:
    nodes = []
    for b in ("b1", "b2"):
        for r in ("r1", "r2"):  # the same rack names in both blocks
            for h in range(2):
                name = f"{b}-{r}-{h}"
                nodes.append(Node(name=name, labels={BLOCK: b, RACK: r, HOST: name}))
    nodes.append(Node(name="loose", labels={HOST: "loose"}))  # no block, no rack
    topo = (TopologyLevels(name="gke", levels=(BLOCK, RACK, HOST)),) if with_topology else ()
    return Cluster(nodes=tuple(nodes), topologies=topo)


def test_levels_come_from_the_kueue_topology_in_its_order() -> None:
    t = TopologyTree.from_cluster(_cluster())
    assert t.levels == (BLOCK, RACK, HOST)
    assert t.source == "Topology/gke"


def test_levels_are_inferred_from_well_known_labels_without_a_topology() -> None:
    t = TopologyTree.from_cluster(_cluster(with_topology=False))
    assert t.levels == (BLOCK, RACK, HOST)
    assert t.source == "well-known node labels"


def test_domain_ids_derive_from_values_root_to_leaf_so_equal_rack_names_differ() -> None:
    t = TopologyTree.from_cluster(_cluster())
    assert t.domain_of("b1-r1-0", RACK) == "b1/r1"
    assert t.domain_of("b2-r1-0", RACK) == "b2/r1"
    assert t.domain_counts() == [(BLOCK, 2, 1), (RACK, 4, 1), (HOST, 8, 1)]
    assert sorted(t.nodes_in(RACK, "b2/r1")) == ["b2-r1-0", "b2-r1-1"]


def test_a_node_missing_a_level_label_belongs_to_no_domain_of_it() -> None:
    t = TopologyTree.from_cluster(_cluster())
    assert t.domain_of("loose", BLOCK) is None
    assert t.domain_of("loose", HOST) is None  # its path is broken at the block level
    assert t.node_domain[:, -1].tolist() == [-1, -1, -1]


def test_hops_and_lowest_common_ancestor_follow_the_tree() -> None:
    t = TopologyTree.from_cluster(_cluster())
    assert t.hops("b1-r1-0", "b1-r1-0") == 0
    assert t.hops("b1-r1-0", "b1-r1-1") == 2
    assert t.hops("b1-r1-0", "b1-r2-0") == 4
    assert t.hops("b1-r1-0", "b2-r1-0") == 6
    assert t.lowest_common_ancestor("b1-r1-0", "b1-r2-1") == (0, "b1")
    assert t.lowest_common_ancestor("b1-r1-0", "b2-r2-1") == ROOT


def test_rebuilding_gives_the_same_tree() -> None:
    a, b = TopologyTree.from_cluster(_cluster()), TopologyTree.from_cluster(_cluster())
    assert a.domains == b.domains
    assert np.array_equal(a.node_domain, b.node_domain)
    assert sorted(map(repr, a.graph.edges)) == sorted(map(repr, b.graph.edges))
