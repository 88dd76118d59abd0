"""KEP-5732 topology-aware workload scheduling: placement generation and placement scoring.

Mirrors, in kubernetes/kubernetes (spec/kep-algorithms.md §3.3):

* ``pkg/scheduler/framework/plugins/topologyaware/topology_placement.go`` (@008b3652,
  ``GeneratePlacements``): a group without ``schedulingConstraints.topology`` gets its parent
  placement unchanged. Otherwise the parent's nodes are grouped by the value of the topology
  label; nodes without the label are dropped. When pods of the group are already scheduled
  (bound, or assumed earlier in this run) their domain is required: only that value's placement
  is generated. Scheduled pods in more than one domain, or on a node without the label, are an
  error ("cannot determine domain for already scheduled pods: ...").
* ``pkg/scheduler/framework/plugins/noderesources/placement_bin_packing.go`` (@128a49b7,
  ``ScorePlacement``): the resource-allocation scorer over the whole placement: per resource the
  requests of the proposed assignments plus what the placement's nodes already hold
  (``NonZeroRequested`` for cpu/memory), over the placement's total allocatable. An extended
  resource counts only if the group's proposed pods request it in total. The strategy is
  MostAllocated with the resource weights of the profile's NodeResourcesFit (public docs
  ``topology-aware-scheduling.md`` @015c39bd: "always uses MostAllocated ... inherits the
  resource weights"). No normalisation.
* ``pkg/scheduler/framework/plugins/podgrouppodscount/podgroup_pods_count.go`` (id 55719643956):
  raw score = the group's scheduled pods (summed over every PodGroup under a CompositePodGroup)
  plus the proposed assignments; ``NormalizePlacementScore`` = ``raw * 100 // max raw``.

Go iterates a map to order placements, so upstream's order is random. Here placements are listed
in the order their label value first appears among the parent's nodes in snapshot order; with
``tie_break="first"`` equal totals go to the earliest placement in that order, with ``"random"``
to a seeded uniform choice (upstream: ``Randomizer = rand.Int()``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gangplan.models.objects import CPU, EPHEMERAL, MEMORY, Pod
from gangplan.solver.greedy.framework import MAX_NODE_SCORE
from gangplan.solver.greedy.plugins.noderesources.most_allocated import most_requested_score
from gangplan.solver.greedy.plugins.noderesources.resource_allocation import (
    pod_request_list,
    weighted_average,
)
from gangplan.solver.greedy.snapshot import NodeTable

BIN_PACKING = "PlacementBinPacking"
PODS_COUNT = "PodGroupPodsCount"
BIN_PACKING_WEIGHT_KEYS = ("NodeResourcesFit", BIN_PACKING)
"""``placementScore`` configures PlacementBinPacking under NodeResourcesFit (the plugin that
registers it); either name is accepted in ``SchedulerProfile.placement_weights``."""


@dataclass(frozen=True)
class Placement:
    """A candidate node set for a group: ``name`` is the label value ("" for the parent)."""

    name: str
    nodes: np.ndarray
    """Node positions, ascending."""
    key: str | None = None

    @property
    def label(self) -> str:
        """``key=value`` as Result domains are written, or ``<all nodes>`` for no constraint."""
        return f"{self.key}={self.name}" if self.key else "<parent placement>"


class PlacementError(Exception):
    """``GeneratePlacements`` returned an error status (scheduled pods in several domains)."""


def generate_placements(snap: NodeTable, topology_key: str, parent: np.ndarray, scheduled_nodes: list[tuple[str, int]]) -> list[Placement]:
    """One placement per value of ``topology_key`` among the ``parent`` nodes (snapshot
    positions), restricted to the domain of ``scheduled_nodes`` ((pod key, node position) of the
    group's already scheduled pods) when there are any. Raises :class:`PlacementError`."""
    codes, values, _ = snap.label_codes(topology_key)
    required = _required_domain(snap, topology_key, codes, values, scheduled_nodes)
    every = _placements_of(snap, topology_key, parent)
    if required is None:
        return list(every)
    return [p for p in every if p.name == values[required]]


def _placements_of(snap: NodeTable, topology_key: str, parent: np.ndarray) -> list[Placement]:
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
    out = [Placement(values[int(code)], parts[int(code)], topology_key) for code in seen[np.argsort(first)]]
    cache[(topology_key, id(parent))] = (parent, out)
    return out


def _required_domain(snap: NodeTable, key: str, codes: np.ndarray, values: list[str], scheduled: list[tuple[str, int]]) -> int | None:
    domain: int | None = None
    for pod_key, i in scheduled:
        c = int(codes[i])
        if c < 0:
            raise PlacementError(f"cannot determine domain for already scheduled pods: no topology domain found for pod {pod_key}")
        if domain is not None and c != domain:
            raise PlacementError(f"cannot determine domain for already scheduled pods: more than 1 domain found for pod group: {values[domain]}, {values[c]}")
        domain = c
    return domain


def bin_packing_score(snap: NodeTable, fit_resources: dict[str, int], nodes: np.ndarray, assigned: list[tuple[Pod, int]]) -> int:
    """PlacementBinPacking's raw score of one placement (see the module docstring).

    ``assigned`` are (pod, node) proposals; they must not be assumed in ``snap`` any more."""
    return bin_packing_scores(snap, fit_resources, [nodes], [assigned])[0]


def bin_packing_scores(snap: NodeTable, fit_resources: dict[str, int], node_sets: list[np.ndarray], proposals: list[list[tuple[Pod, int]]]) -> list[int]:
    """:func:`bin_packing_score` of several placements at once: per resource the proposals'
    requests plus the placement's usage (``NonZeroRequested`` for cpu / memory) over its total
    allocatable; an extended resource counts only if the placement's proposals request it. Only
    the proposals' requests are read, never their nodes."""
    resources = list(fit_resources)
    weights = [fit_resources[r] for r in resources]
    vectors: dict[int, np.ndarray] = {}
    wanted = np.zeros((len(node_sets), len(resources)), dtype=np.int64)
    for m, assigned in enumerate(proposals):
        for pod, _node in assigned:
            v = vectors.get(id(pod))
            if v is None:
                v = vectors[id(pod)] = np.array(pod_request_list(pod, resources, use_requested=False), dtype=np.int64)
            wanted[m] += v
    concat = np.concatenate(node_sets) if node_sets else np.zeros(0, dtype=np.int64)
    starts = np.cumsum([0] + [len(s) for s in node_sets[:-1]])
    requested = np.zeros((len(resources), len(node_sets)), dtype=np.int64)
    alloc = np.zeros_like(requested)
    for k, r in enumerate(resources):
        j = snap.res_index.get(r)
        if j is None:
            continue
        counted = np.ones(len(node_sets), dtype=bool) if r in (CPU, MEMORY, EPHEMERAL) else wanted[:, k] != 0
        if r in (CPU, MEMORY):
            used = np.add.reduceat(snap.nonzero[concat, 0 if r == CPU else 1], starts)
        else:
            used = np.add.reduceat(snap.requested[concat, j], starts)
        alloc[k] = np.where(counted, np.add.reduceat(snap.alloc[concat, j], starts), 0)
        requested[k] = np.where(alloc[k] > 0, wanted[:, k] + used, 0)
    return weighted_average(most_requested_score(requested, alloc), alloc, weights).tolist()


def pods_count_scores(raw: list[int]) -> list[int]:
    """PodGroupPodsCount's NormalizePlacementScore: ``raw * 100 // max(raw)``.

    >>> pods_count_scores([3, 4, 2])
    [75, 100, 50]
    """
    top = max(raw, default=0)
    if top == 0:
        raise PlacementError("no pods from pod group are assigned to any of the candidate placements")
    return [v * MAX_NODE_SCORE // top for v in raw]


def placement_weights(weights: dict[str, int]) -> tuple[int, int]:
    """(PlacementBinPacking weight, PodGroupPodsCount weight) from the profile."""
    bp = next((weights[k] for k in BIN_PACKING_WEIGHT_KEYS if k in weights), 0)
    return bp, weights.get(PODS_COUNT, 0)
