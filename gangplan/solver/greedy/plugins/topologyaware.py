"""TopologyPlacementGenerator: ``pkg/scheduler/framework/plugins/topologyaware/topology_placement.go``
(kubernetes/kubernetes @008b3652, ``GeneratePlacements``).

PlacementGenerate only. A group without ``schedulingConstraints.topology`` gets its parent
placement unchanged (it is not constrained). Otherwise the parent's nodes are grouped by the value
of the topology label; nodes without the label are dropped. When pods of the group are already
scheduled (bound, or assumed earlier in this run) their domain is required: only that value's
placement is generated. Scheduled pods in more than one domain, or on a node without the label,
are an Error ("cannot determine domain for already scheduled pods: ...").

Go iterates a map to order placements, so upstream's order is random. Here placements are listed
in the order their label value first appears among the parent's nodes in snapshot order. No node
of the parent with the label (or none in the required domain): no placement, Unschedulable, which
the placement algorithm reports as "0/0 placements are available" (upstream would dereference
nil).
"""

from __future__ import annotations

import numpy as np

from gangplan.solver.greedy.framework import (
    SUCCESS,
    Code,
    Placement,
    PlacementError,
    PodGroupInfo,
    Status,
    unschedulable,
)
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.plugins.base import Plugin
from gangplan.solver.greedy.snapshot import NodeTable

NAME = names.TOPOLOGY_PLACEMENT_GENERATOR


class TopologyPlacementGenerator(Plugin):
    name = NAME

    def generate_placements(
        self, snap: NodeTable, info: PodGroupInfo, parent: Placement
    ) -> tuple[list[Placement], Status]:
        key = info.group.topology_key
        if not key:
            return [parent], SUCCESS
        try:
            got = generate_placements(snap, key, parent.nodes, info.scheduled)
        except PlacementError as err:
            return [], self.status(Status(Code.ERROR, (str(err),)))
        if not got:
            return [], self.status(
                unschedulable(f"no node of the parent placement has the label {key!r}")
            )
        return got, SUCCESS


def generate_placements(
    snap: NodeTable, topology_key: str, parent: np.ndarray, scheduled_nodes: list[tuple[str, int]]
) -> list[Placement]:
    """One placement per value of ``topology_key`` among the ``parent`` nodes (snapshot
    positions), restricted to the domain of ``scheduled_nodes`` ((pod key, node position) of the
    group's already scheduled pods) when there are any. Raises :class:`PlacementError`."""
    codes, values, _ = snap.label_codes(topology_key)
    required = required_domain(codes, values, scheduled_nodes)
    every = placements_of(snap, topology_key, parent)
    if required is None:
        return list(every)
    return [p for p in every if p.name == values[required]]


def placements_of(snap: NodeTable, topology_key: str, parent: np.ndarray) -> list[Placement]:
    """Every placement of ``topology_key`` inside ``parent``, computed once per parent array
    (node labels never change; a parent is the root's node list or a cached placement's)."""
    cache = snap.placement_cache
    hit = cache.get((topology_key, id(parent)))
    if hit is not None and hit[0] is parent:
        return hit[1]
    codes, values, _ = snap.label_codes(topology_key)
    nodes = np.sort(parent)
    nodes = nodes[codes[nodes] >= 0]
    grouped = nodes[np.argsort(codes[nodes], kind="stable")]  # ascending positions within a value
    cuts = np.flatnonzero(np.diff(codes[grouped])) + 1
    parts = {int(codes[part[0]]): part for part in np.split(grouped, cuts) if len(part)}
    seen, first = np.unique(codes[nodes], return_index=True)  # where each value first appears
    out = [
        Placement(values[int(code)], parts[int(code)], topology_key)
        for code in seen[np.argsort(first)]
    ]
    cache[(topology_key, id(parent))] = (parent, out)
    return out


def required_domain(
    codes: np.ndarray, values: list[str], scheduled: list[tuple[str, int]]
) -> int | None:
    """The label code every scheduled pod's node shares, None without scheduled pods;
    :class:`PlacementError` when they do not share one (``getScheduledPodsTopologyDomain``)."""
    domain: int | None = None
    for pod_key, i in scheduled:
        c = int(codes[i])
        if c < 0:
            raise PlacementError(
                f"cannot determine domain for already scheduled pods: no topology domain found for pod {pod_key}"
            )
        if domain is not None and c != domain:
            raise PlacementError(
                f"cannot determine domain for already scheduled pods: more than 1 domain found for pod group: {values[domain]}, {values[c]}"
            )
        domain = c
    return domain
