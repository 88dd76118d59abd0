"""LeastAllocated: ``pkg/scheduler/framework/plugins/noderesources/least_allocated.go``
(kubernetes/kubernetes @05c351a9). Per resource ``(capacity - requested) * 100 / capacity``
(0 when over capacity or capacity is 0), then the weighted integer average."""

from __future__ import annotations

import numpy as np

from gangplan.solver.greedy.framework import MAX_NODE_SCORE
from gangplan.solver.greedy.plugins.noderesources.resource_allocation import weighted_average


def least_requested_score(requested: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """``leastRequestedScore`` elementwise (all operands non-negative, so ``//`` is Go's ``/``)."""
    safe = np.maximum(capacity, 1)
    score = ((capacity - requested) * MAX_NODE_SCORE) // safe
    return np.where((capacity == 0) | (requested > capacity), 0, score)


def least_allocated_scores(
    requested: np.ndarray, alloc: np.ndarray, weights: list[int]
) -> np.ndarray:
    return weighted_average(least_requested_score(requested, alloc), alloc, weights)
