"""The per-resource (requested, allocatable) arrays the resource scorers read.

Mirrors ``resourceAllocationScorer.score`` and ``calculateResourceAllocatableRequest`` of
``pkg/scheduler/framework/plugins/noderesources/resource_allocation.go`` (kubernetes/kubernetes
v1.36): cpu and memory use the node's ``NonZeroRequested`` plus the pod's non-zero request unless
``use_requested`` (BalancedAllocation), ephemeral storage and extended resources use the actual
``Requested``; an extended resource the pod does not request, or the node does not offer, gets
allocatable 0, which every scorer skips for that node.
"""

from __future__ import annotations

import numpy as np

from gangplan.models.objects import CPU, EPHEMERAL, MEMORY, Pod
from gangplan.solver.greedy.snapshot import NodeTable

NATIVE = (CPU, MEMORY, EPHEMERAL)


def pod_request_list(pod: Pod, resources: list[str], use_requested: bool) -> list[int]:
    """``calculatePodResourceRequestList``: actual requests, or non-zero cpu/memory for Fit."""
    out = []
    for r in resources:
        if not use_requested and r in (CPU, MEMORY):
            out.append(pod.nonzero_requests.get(r, 0))
        else:
            out.append(pod.requests.get(r, 0))
    return out


def requested_and_allocatable(
    snap: NodeTable, pod: Pod, resources: list[str], use_requested: bool, nodes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(requested, allocatable), each shaped (len(resources), len(nodes)), pod included."""
    reqs = pod_request_list(pod, resources, use_requested)
    requested = np.zeros((len(resources), len(nodes)), dtype=np.int64)
    alloc = np.zeros_like(requested)
    for k, (r, pod_req) in enumerate(zip(resources, reqs, strict=True)):
        j = snap.res_index.get(r)
        if j is None or (r not in NATIVE and pod_req == 0):
            continue  # (0, 0): the scorers skip it
        if r in (CPU, MEMORY) and not use_requested:
            used = snap.nonzero[:, 0 if r == CPU else 1].take(nodes)
        else:
            used = snap.requested[:, j].take(nodes)
        alloc[k] = snap.alloc[:, j].take(nodes)
        requested[k] = used + pod_req
        requested[k][alloc[k] == 0] = 0
    return requested, alloc


def weighted_average(per_resource: np.ndarray, alloc: np.ndarray, weights: list[int]) -> np.ndarray:
    """``Σ score_r * w_r // Σ w_r`` over the resources a node offers (allocatable > 0)."""
    w = np.array(weights, dtype=np.int64)[:, None]
    offered = alloc > 0
    total = np.where(offered, per_resource * w, 0).sum(axis=0)
    weight_sum = np.where(offered, w, 0).sum(axis=0)
    return np.where(weight_sum > 0, total // np.maximum(weight_sum, 1), 0)
