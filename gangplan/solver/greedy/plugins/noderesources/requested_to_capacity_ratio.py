"""RequestedToCapacityRatio: ``pkg/scheduler/framework/plugins/noderesources/
requested_to_capacity_ratio.go`` (kubernetes/kubernetes @abd60651) and
``plugins/helper/shape_score.go`` (``BuildBrokenLinearFunction``).

Shape scores (0..10) are scaled by ``MaxNodeScore / MaxCustomPriorityScore`` = 10. Utilisation is
``requested * 100 / capacity``; over capacity (or capacity 0) scores as utilisation 100. Only
resources with a positive score enter the weighted average, which is rounded (``math.Round``,
half away from zero).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gangplan.models.objects import UtilizationShapePoint
from gangplan.solver.greedy.framework import MAX_NODE_SCORE, go_div_array

MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100


def broken_linear(shape: Sequence[tuple[int, int]], p: np.ndarray) -> np.ndarray:
    """``BuildBrokenLinearFunction`` elementwise: Go integer arithmetic between the points."""
    out = np.full_like(p, shape[-1][1])
    done = np.zeros(p.shape, dtype=bool)
    for i, (u, s) in enumerate(shape):
        hit = ~done & (p <= u)
        if i == 0:
            val = np.full_like(p, s)
        else:
            u0, s0 = shape[i - 1]
            val = s0 + go_div_array((s - s0) * (p - u0), u - u0)
        out = np.where(hit, val, out)
        done |= hit
    return out


def requested_to_capacity_ratio_scores(
    requested: np.ndarray,
    alloc: np.ndarray,
    weights: list[int],
    points: Sequence[UtilizationShapePoint],
) -> np.ndarray:
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    shape = [(pt.utilization, pt.score * scale) for pt in points]
    over = (alloc == 0) | (requested > alloc)
    util = np.where(over, MAX_UTILIZATION, (requested * MAX_UTILIZATION) // np.maximum(alloc, 1))
    per = broken_linear(shape, util)
    w = np.array(weights, dtype=np.int64)[:, None]
    counted = (alloc > 0) & (per > 0)
    total = np.where(counted, per * w, 0).sum(axis=0)
    wsum = np.where(counted, w, 0).sum(axis=0)
    avg = np.floor(total / np.maximum(wsum, 1) + 0.5).astype(np.int64)
    return np.where(wsum > 0, avg, 0)
