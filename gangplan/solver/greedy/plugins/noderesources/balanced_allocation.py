"""NodeResourcesBalancedAllocation: ``pkg/scheduler/framework/plugins/noderesources/
balanced_allocation.go``, per version (:func:`gangplan.models.version.balanced_allocation_with_change`).

Both versions use the actual requests (``useRequested = true``, no non-zero defaults). The balance
of a request vector ``x`` is ``S(x)``: per resource the fraction ``min(1, x / allocatable)``
(resources with allocatable 0 skipped), ``std = |f1 - f2| / 2`` for two fractions, the population
standard deviation for more, 0 for fewer; ``S = int64((1 - std) * 100)`` (50..100).

* v1.35 (release-1.35 @02d7708a): the score is ``S(node requested + pod)``.
* v1.36 and later (kubernetes#135573, CHANGELOG-1.36 "score will now take into consideration both
  balance with and without the requested pod"): ``50 + (50 + S(with pod) - S(without pod)) / 2``
  in int64, each S truncated first; 75 when the pod leaves the balance unchanged, 50 when it turns
  a balanced node into the most unbalanced one, 100 for the reverse. The test table of the new
  ``balanced_allocation_test.go`` is ported in ``tests/test_kube_version.py``.

PreScore skips best-effort pods (no requests at all). No NormalizeScore.
"""

from __future__ import annotations

import math

import numpy as np

from gangplan.models.version import balanced_allocation_with_change
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


def balance_change_score(with_pod: int, without_pod: int) -> int:
    """v1.36+: the two balances combined, Go int64 arithmetic (the inner term is never negative,
    so floor division is Go's truncation)."""
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + with_pod - without_pod) // 2


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
        with_change = balanced_allocation_with_change(self.cluster.kube_version)

        def compute(nodes):
            requested, alloc = requested_and_allocatable(snap, pod, self._resources(), True, nodes)
            with_pod = balanced_allocation_scores(requested, alloc)
            if not with_change:
                return with_pod
            pod_req = np.array(pod_request_list(pod, self._resources(), True), dtype=np.int64)[
                :, None
            ]
            without = np.where(alloc > 0, requested - pod_req, 0)
            return balance_change_score(with_pod, balanced_allocation_scores(without, alloc))

        return snap.node_array((NAME, snap.signature(pod), with_change), compute)[feasible]
