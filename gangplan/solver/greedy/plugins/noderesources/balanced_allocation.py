"""NodeResourcesBalancedAllocation: ``pkg/scheduler/framework/plugins/noderesources/
balanced_allocation.go`` (kubernetes/kubernetes @02d7708a, v1.36).

Uses the actual requests (``useRequested = true``) of the node plus the pod. Per resource the
fraction ``min(1, requested / allocatable)`` (resources with allocatable 0 skipped);
``std = |f1 - f2| / 2`` for two fractions, the population standard deviation for more, 0 for
fewer; score ``int64((1 - std) * 100)``. PreScore skips best-effort pods (no requests at all).
No NormalizeScore.
"""

from __future__ import annotations

import math

import numpy as np

from gangplan.solver.greedy.framework import MAX_NODE_SCORE, SKIP, SUCCESS
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.plugins.base import Plugin
from gangplan.solver.greedy.plugins.noderesources.resource_allocation import (
    pod_request_list,
    requested_and_allocatable,
)

NAME = names.NODE_RESOURCES_BALANCED_ALLOCATION


def balanced_resource_score(requested: list[int], allocatable: list[int]) -> int:
    """``balancedResourceScorer`` for one node, float64 arithmetic in upstream's order."""
    fractions = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        f = min(req / alloc, 1.0)
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def balanced_allocation_scores(requested: np.ndarray, alloc: np.ndarray) -> np.ndarray:
    """All nodes at once; the common case (every resource offered, two resources) is vectorised,
    other nodes go through :func:`balanced_resource_score`."""
    k, n = requested.shape
    out = np.empty(n, dtype=np.int64)
    offered = (alloc > 0).all(axis=0)
    if k == 2:
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.minimum(requested / np.where(alloc > 0, alloc, 1), 1.0)
        std = np.abs((f[0] - f[1]) / 2)
        out[:] = np.trunc((1 - std) * MAX_NODE_SCORE).astype(np.int64)
        rest = np.nonzero(~offered)[0]
    else:
        rest = np.arange(n)
    for i in rest:
        out[i] = balanced_resource_score(requested[:, i].tolist(), alloc[:, i].tolist())
    return out


class BalancedAllocation(Plugin):
    name = NAME

    def _resources(self) -> list[str]:
        return list(self.profile.balanced_resources)

    def pre_score(self, cs, pod, snap, feasible):
        if all(q == 0 for q in pod_request_list(pod, self._resources(), use_requested=True)):
            return SKIP
        return SUCCESS

    def score(self, cs, pod, snap, feasible):
        def compute(nodes):
            requested, alloc = requested_and_allocatable(snap, pod, self._resources(), True, nodes)
            return balanced_allocation_scores(requested, alloc)

        return snap.node_array((NAME, snap.signature(pod)), compute)[feasible]
