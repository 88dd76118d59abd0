"""MostAllocated: ``pkg/scheduler/framework/plugins/noderesources/most_allocated.go``
(kubernetes/kubernetes @9d3a8c1d). Per resource ``min(requested, capacity) * 100 / capacity``
(requested may exceed capacity because of the non-zero defaults), then the weighted integer
average."""

from __future__ import annotations

import numpy as np

from gangplan.solver.greedy.framework import MAX_NODE_SCORE
from gangplan.solver.greedy.plugins.noderesources.resource_allocation import weighted_average


def most_requested_score(requested: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    safe = np.maximum(capacity, 1)
    score = (np.minimum(requested, capacity) * MAX_NODE_SCORE) // safe
    return np.where(capacity == 0, 0, score)


def most_allocated_scores(
    requested: np.ndarray, alloc: np.ndarray, weights: list[int]
) -> np.ndarray:
    return weighted_average(most_requested_score(requested, alloc), alloc, weights)
