"""The topology domain tree: zones, blocks, racks, NVLink cliques, hosts, built once per Cluster.

Levels come from the snapshot's Kueue ``Topology`` (``spec.levels[].nodeLabel``, coarse to fine),
or, when it has none, from the well-known node labels present on at least one node, in this order:

1. ``topology.kubernetes.io/region``
2. ``topology.kubernetes.io/zone``
3. ``cloud.google.com/gce-topology-block``
4. ``cloud.google.com/gce-topology-subblock``
5. ``topology.kubernetes.io/rack``
6. ``cloud.google.com/gce-topology-host``
7. ``nvidia.com/gpu.clique``
8. ``kubernetes.io/hostname``

As in Kueue TAS (``pkg/cache/scheduler/tas_flavor_snapshot.go``, v0.14), a domain's id is derived
from its label values root to leaf, so two racks named ``r1`` in different blocks are different
domains; parents are created by walking up. A node missing a level's label belongs to no domain of
that level (nor of any finer level, since its path is broken there).

The tree is a :class:`networkx.DiGraph` rooted at ``ROOT``; node attributes ``level`` (index, -1
for the root), ``key`` and ``value``. Engines use the dense index arrays (``node_domain``) instead
of walking the graph.

>>> from gangplan.models.objects import Node
>>> from gangplan.models.cluster import Cluster
>>> nodes = tuple(Node(name=f"n{i}", labels={"topology.kubernetes.io/zone": "z" + str(i // 2), "kubernetes.io/hostname": f"n{i}"}) for i in range(4))
>>> t = TopologyTree.from_cluster(Cluster(nodes=nodes))
>>> t.levels
('topology.kubernetes.io/zone', 'kubernetes.io/hostname')
>>> t.domain_of("n3", "topology.kubernetes.io/zone"), t.hops("n0", "n1"), t.hops("n0", "n3")
('z1', 2, 4)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from gangplan.models.cluster import Cluster
from gangplan.models.well_known import (
    GCE_BLOCK,
    GCE_HOST,
    GCE_SUBBLOCK,
    GPU_CLIQUE,
    HOSTNAME,
    RACK,
    REGION,
    ZONE,
)

ROOT = "<cluster>"
WELL_KNOWN_LEVELS: tuple[str, ...] = (
    REGION,
    ZONE,
    GCE_BLOCK,
    GCE_SUBBLOCK,
    RACK,
    GCE_HOST,
    GPU_CLIQUE,
    HOSTNAME,
)
SEP = "/"


@dataclass(frozen=True)
class TopologyTree:
    levels: tuple[str, ...]
    source: str
    graph: nx.DiGraph
    node_names: tuple[str, ...]
    domains: tuple[tuple[str, ...], ...]
    """Per level, domain ids in first-seen node order (deterministic)."""
    node_domain: np.ndarray
    """int32 array (levels x nodes): the domain index of each node per level, -1 when it has none."""
    _domain_index: tuple[dict[str, int], ...] = field(repr=False)
    _node_pos: dict[str, int] = field(repr=False)

    # ---- construction ----------------------------------------------------------------------
    @classmethod
    def from_cluster(cls, cluster: Cluster) -> TopologyTree:
        if cluster.topologies:
            levels, source = cluster.topologies[0].levels, f"Topology/{cluster.topologies[0].name}"
        else:
            levels = tuple(
                k for k in WELL_KNOWN_LEVELS if any(k in n.labels for n in cluster.nodes)
            )
            source = "well-known node labels"
        return cls.build(
            [n.name for n in cluster.nodes], [n.labels for n in cluster.nodes], levels, source
        )

    @classmethod
    def build(
        cls,
        names: list[str],
        labels: list[dict[str, str]],
        levels: tuple[str, ...],
        source: str = "",
    ) -> TopologyTree:
        g = nx.DiGraph()
        g.add_node(ROOT, level=-1, key=None, value=None)
        idx: list[dict[str, int]] = [{} for _ in levels]
        node_domain = np.full((len(levels), len(names)), -1, dtype=np.int32)
        for j, lab in enumerate(labels):
            parent = ROOT
            path: list[str] = []
            for i, key in enumerate(levels):
                if key not in lab:
                    break
                path.append(lab[key])
                dom = SEP.join(path)
                if dom not in idx[i]:
                    idx[i][dom] = len(idx[i])
                    g.add_node((i, dom), level=i, key=key, value=lab[key])
                    g.add_edge(parent, (i, dom))
                node_domain[i, j] = idx[i][dom]
                parent = (i, dom)
            g.add_node(("node", names[j]), level=len(levels), key=None, value=names[j])
            g.add_edge(parent, ("node", names[j]))
        domains = tuple(tuple(d) for d in idx)
        return cls(
            tuple(levels),
            source,
            g,
            tuple(names),
            domains,
            node_domain,
            tuple(idx),
            {n: j for j, n in enumerate(names)},
        )

    # ---- queries ---------------------------------------------------------------------------
    def level_index(self, key: str) -> int:
        return self.levels.index(key)

    def domain_of(self, node: str, key: str) -> str | None:
        """The node's domain id at level ``key`` (label values root to leaf joined by ``/``)."""
        i = self.level_index(key)
        d = self.node_domain[i, self._node_pos[node]]
        return None if d < 0 else self.domains[i][d]

    def nodes_in(self, key: str, domain: str) -> list[str]:
        i = self.level_index(key)
        d = self._domain_index[i][domain]
        return [self.node_names[j] for j in np.flatnonzero(self.node_domain[i] == d)]

    def lowest_common_ancestor(self, a: str, b: str):
        """The deepest tree vertex above both nodes: ``ROOT`` or ``(level, domain id)``."""
        return nx.lowest_common_ancestor(self.graph, ("node", a), ("node", b))

    def hops(self, a: str, b: str) -> int:
        """Tree distance between the deepest domains of two nodes (0 for the same node; 2 for two
        hosts of one rack, 4 for hosts in two racks of one block)."""
        if a == b:
            return 0
        da = next(iter(self.graph.predecessors(("node", a))))
        db = next(iter(self.graph.predecessors(("node", b))))
        return nx.shortest_path_length(self.graph.to_undirected(as_view=True), da, db)

    def domain_counts(self) -> list[tuple[str, int, int]]:
        """(level key, number of domains, nodes without a domain) per level."""
        return [
            (k, len(self.domains[i]), int((self.node_domain[i] < 0).sum()))
            for i, k in enumerate(self.levels)
        ]
