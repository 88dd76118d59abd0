"""PlacementBinPacking: ``pkg/scheduler/framework/plugins/noderesources/placement_bin_packing.go``
(kubernetes/kubernetes @128a49b7, ``ScorePlacement``; in v1.36 the same scorer was registered as
NodeResourcesFit's PlacementScore, which is why ``placementScore`` accepts either name).

PlacementScore only: the resource-allocation scorer over the whole placement. Per resource the
requests of the proposed assignments plus what the placement's nodes already hold
(``NonZeroRequested`` for cpu/memory), over the placement's total allocatable. An extended
resource counts only if the group's proposed pods request it in total. The strategy is
MostAllocated with the resource weights of the profile's NodeResourcesFit (public docs
``topology-aware-scheduling.md`` @015c39bd: "always uses MostAllocated ... inherits the resource
weights"). No normalisation. Only the proposals' requests are read, never their nodes, so counted
placement outcomes (node -1) score the same as evaluated ones.
"""

from __future__ import annotations

import numpy as np

from gangplan.models.objects import CPU, EPHEMERAL, MEMORY, Pod
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.plugins.base import Plugin
from gangplan.solver.greedy.plugins.noderesources.most_allocated import most_requested_score
from gangplan.solver.greedy.plugins.noderesources.resource_allocation import (
    pod_request_list,
    weighted_average,
)
from gangplan.solver.greedy.snapshot import NodeTable

NAME = names.PLACEMENT_BIN_PACKING


class PlacementBinPacking(Plugin):
    name = NAME

    def score_placements(self, snap, info, placements, proposals):
        return bin_packing_scores(
            snap, dict(self.profile.fit_resources), [p.nodes for p in placements], proposals
        )


def bin_packing_score(
    snap: NodeTable,
    fit_resources: dict[str, int],
    nodes: np.ndarray,
    assigned: list[tuple[Pod, int]],
) -> int:
    """The raw score of one placement (see the module docstring).

    ``assigned`` are (pod, node) proposals; they must not be assumed in ``snap`` any more."""
    return bin_packing_scores(snap, fit_resources, [nodes], [assigned])[0]


def bin_packing_scores(
    snap: NodeTable,
    fit_resources: dict[str, int],
    node_sets: list[np.ndarray],
    proposals: list[list[tuple[Pod, int]]],
) -> list[int]:
    """:func:`bin_packing_score` of several placements at once: per resource the proposals'
    requests plus the placement's usage (``NonZeroRequested`` for cpu / memory) over its total
    allocatable; an extended resource counts only if the placement's proposals request it."""
    resources = list(fit_resources)
    weights = [fit_resources[r] for r in resources]
    wanted = _proposed_requests(proposals, resources)
    concat = np.concatenate(node_sets) if node_sets else np.zeros(0, dtype=np.int64)
    starts = np.cumsum([0] + [len(s) for s in node_sets[:-1]])
    requested = np.zeros((len(resources), len(node_sets)), dtype=np.int64)
    alloc = np.zeros_like(requested)
    for k, r in enumerate(resources):
        j = snap.res_index.get(r)
        if j is None:
            continue
        counted = (
            np.ones(len(node_sets), dtype=bool)
            if r in (CPU, MEMORY, EPHEMERAL)
            else wanted[:, k] != 0
        )
        if r in (CPU, MEMORY):
            used = np.add.reduceat(snap.nonzero[concat, 0 if r == CPU else 1], starts)
        else:
            used = np.add.reduceat(snap.requested[concat, j], starts)
        alloc[k] = np.where(counted, np.add.reduceat(snap.alloc[concat, j], starts), 0)
        requested[k] = np.where(alloc[k] > 0, wanted[:, k] + used, 0)
    return weighted_average(most_requested_score(requested, alloc), alloc, weights).tolist()


def _proposed_requests(proposals: list[list[tuple[Pod, int]]], resources: list[str]) -> np.ndarray:
    """Per proposal the summed requests of its pods (one row each). A decision scores every
    feasible placement of a gang at once (on a 10,000-node snapshot hundreds of placements of up
    to 18 pods each), so the request list of each distinct pod object is made once, a proposal
    list shared by several placements (counted ones: ``CountingPlan.proposals``) is summed once,
    and the rows are added in one ``np.add.at`` instead of one vector addition per proposed pod."""
    wanted = np.zeros((len(proposals), len(resources)), dtype=np.int64)
    index: dict[int, int] = {}
    table: list[list[int]] = []
    picks: list[int] = []
    owners: list[int] = []
    first: dict[int, int] = {}
    same: list[tuple[int, int]] = []
    for m, assigned in enumerate(proposals):
        k0 = first.setdefault(id(assigned), m)
        if k0 != m:
            same.append((m, k0))
            continue
        for pod, _node in assigned:
            k = index.get(id(pod))
            if k is None:
                k = index[id(pod)] = len(table)
                table.append(pod_request_list(pod, resources, use_requested=False))
            picks.append(k)
            owners.append(m)
    if picks:
        rows = np.array(table, dtype=np.int64).reshape(len(table), len(resources))
        np.add.at(wanted, owners, rows[picks])
    if same:
        to, src = zip(*same, strict=True)
        wanted[list(to)] = wanted[list(src)]
    return wanted
