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
    nodes = np.sort(parent)
    nodes = nodes[codes[nodes] >= 0]
    if required is not None:
        nodes = nodes[codes[nodes] == required]
    out: list[Placement] = []
    seen: dict[int, int] = {}
    for i in nodes.tolist():
        seen.setdefault(int(codes[i]), len(seen))
    for code in seen:
        out.append(Placement(values[code], nodes[codes[nodes] == code], topology_key))
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
    resources = list(fit_resources)
    weights = [fit_resources[r] for r in resources]
    wanted = np.zeros(len(resources), dtype=np.int64)
    for pod, _node in assigned:
        wanted += np.array(pod_request_list(pod, resources, use_requested=False), dtype=np.int64)
    requested = np.zeros((len(resources), 1), dtype=np.int64)
    alloc = np.zeros_like(requested)
    for k, r in enumerate(resources):
        j = snap.res_index.get(r)
        if j is None or (r not in (CPU, MEMORY, EPHEMERAL) and wanted[k] == 0):
            continue
        if r in (CPU, MEMORY):
            used = snap.nonzero[nodes, 0 if r == CPU else 1].sum()
        else:
            used = snap.requested[nodes, j].sum()
        alloc[k, 0] = snap.alloc[nodes, j].sum()
        requested[k, 0] = wanted[k] + used if alloc[k, 0] > 0 else 0
    return int(weighted_average(most_requested_score(requested, alloc), alloc, weights)[0])


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
