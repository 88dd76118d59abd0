"""NodeResourcesFit: ``pkg/scheduler/framework/plugins/noderesources/fit.go`` (kubernetes/
kubernetes v1.36, the version with ``InsufficientResource.Unresolvable``).

Filter: "Too many pods" when the node already holds ``allocatable.pods`` pods; then, for every
resource the pod requests (> 0), "Insufficient <name>" when it exceeds allocatable minus
requested. Every failing resource is a reason of its own. The status is Unschedulable, or
UnschedulableAndUnresolvable when some request exceeds the node's whole allocatable (no
preemption can help). Score: the profile's ``scoringStrategy`` (LeastAllocated, MostAllocated,
RequestedToCapacityRatio) over its resources and weights; no NormalizeScore.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from gangplan.models.objects import CPU, EPHEMERAL, MEMORY
from gangplan.solver.greedy.framework import SUCCESS, Status, unschedulable
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.plugins.base import Plugin
from gangplan.solver.greedy.plugins.noderesources.least_allocated import least_allocated_scores
from gangplan.solver.greedy.plugins.noderesources.most_allocated import most_allocated_scores
from gangplan.solver.greedy.plugins.noderesources.requested_to_capacity_ratio import (
    requested_to_capacity_ratio_scores,
)
from gangplan.solver.greedy.plugins.noderesources.resource_allocation import (
    requested_and_allocatable,
)

NAME = names.NODE_RESOURCES_FIT
TOO_MANY_PODS = "Too many pods"


@lru_cache(maxsize=64)
def _reason_order(resources: tuple[str, ...]) -> list[int]:
    """cpu, memory, ephemeral-storage, then extended resources by name (Go map order is random;
    each reason is counted on its own, so the order never reaches a FitError)."""
    head = [resources.index(r) for r in (CPU, MEMORY, EPHEMERAL) if r in resources]
    tail = sorted(
        (i for i, r in enumerate(resources) if r not in (CPU, MEMORY, EPHEMERAL)),
        key=lambda i: resources[i],
    )
    return head + tail


def fit_failures(
    snap, req: np.ndarray, idx: np.ndarray, added: np.ndarray | int = 0
) -> tuple[list[tuple[str, np.ndarray]], np.ndarray]:
    """Filter's reasons over the nodes ``idx`` (``filter_reasons``): per reason the mask of the
    nodes that report it, and the mask of unresolvable ones (a request above the whole
    allocatable), with ``added`` more copies of the pod (request ``req``) already on each node:
    the state a group of identical pods leaves once it used a node's room (the counting
    evaluation of :mod:`gangplan.solver.greedy.placement_fast`)."""
    every = idx is snap.all_nodes  # read the columns in place instead of gathering them
    pod_count, allowed = (
        (snap.pod_count, snap.allowed_pods)
        if every
        else (snap.pod_count[idx], snap.allowed_pods[idx])
    )
    reasons = [(TOO_MANY_PODS, pod_count + added + 1 > allowed)]
    unresolvable = np.zeros(len(idx), dtype=bool)
    for j in _reason_order(tuple(snap.resources)):
        q = int(req[j])
        if q > 0:
            free, alloc = (
                (snap.free[:, j], snap.alloc[:, j])
                if every
                else (snap.free[idx, j], snap.alloc[idx, j])
            )
            short = q > free - added * q
            reasons.append((f"Insufficient {snap.resources[j]}", short))
            unresolvable |= short & (q > alloc)
    return reasons, unresolvable


class Fit(Plugin):
    name = NAME

    def filter_mask(self, cs, pod, snap, idx):
        req = snap.request_vector(pod)
        wanted = np.nonzero(req > 0)[0]

        def fits(nodes: np.ndarray) -> np.ndarray:
            ok = snap.pod_count[nodes] < snap.allowed_pods[nodes]
            for j in wanted:
                ok &= snap.free[nodes, j] >= req[j]
            return ok

        return snap.node_array((NAME, "filter", snap.signature(pod)), fits)[idx]

    def filter_one(self, cs, pod, snap, i) -> Status:
        req = snap.request_vector(pod)
        reasons: list[str] = []
        unresolvable = False
        if snap.pod_count[i] + 1 > snap.allowed_pods[i]:
            reasons.append(TOO_MANY_PODS)
        for j in _reason_order(tuple(snap.resources)):
            q = int(req[j])
            if q > 0 and q > snap.alloc[i, j] - snap.requested[i, j]:
                reasons.append(f"Insufficient {snap.resources[j]}")
                unresolvable |= q > snap.alloc[i, j]
        if not reasons:
            return SUCCESS
        return self.status(unschedulable(*reasons, unresolvable=unresolvable))

    def filter_reasons(self, cs, pod, snap, idx):
        return fit_failures(snap, snap.request_vector(pod), idx)

    def score(self, cs, pod, snap, feasible):
        return snap.node_array(
            (NAME, "score", snap.signature(pod)), lambda nodes: self._scores(pod, snap, nodes)
        )[feasible]

    def _scores(self, pod, snap, nodes: np.ndarray) -> np.ndarray:
        resources = list(self.profile.fit_resources)
        weights = [self.profile.fit_resources[r] for r in resources]
        requested, alloc = requested_and_allocatable(snap, pod, resources, False, nodes)
        strategy = self.profile.fit_strategy
        if strategy == "MostAllocated":
            return most_allocated_scores(requested, alloc, weights)
        if strategy == "RequestedToCapacityRatio":
            return requested_to_capacity_ratio_scores(
                requested, alloc, weights, self.profile.requested_to_capacity_shape
            )
        return least_allocated_scores(requested, alloc, weights)
