"""One policy's scheduler on a mutable node table: the greedy engine's per-pod cycle
(:class:`~gangplan.solver.greedy.schedule_one.PodScheduler`, the profile's own Filter / Score
plugins) run against one :class:`~gangplan.solver.greedy.snapshot.NodeTable` that the replay
mutates (assume on placement, forget on completion), so no cycle rebuilds anything.

A gang is placed all-or-nothing like the pod-group cycle: its workers go through the per-pod
cycle one after the other, each assumed before the next; if one fails, the ones placed are
forgotten and the gang fails. A required topology key restricts the gang to one domain of that
node label, domains tried from the fewest free GPUs that can hold the gang (bin packing, like
PlacementBinPacking); preferred topology keys are not modelled in this slice.
"""

from __future__ import annotations

import random

import numpy as np

from gangplan.models.cluster import Cluster
from gangplan.models.objects import CPU, Pod
from gangplan.models.well_known import GPU
from gangplan.replay.policies import (
    FGD,
    RANDOM,
    FGDScore,
    RandomScore,
    TypicalPod,
    policy_profile,
    registered,
)
from gangplan.replay.traces import ReplayJob, worker_pod
from gangplan.solver.greedy.profile import build_profile
from gangplan.solver.greedy.schedule_one import PodScheduler
from gangplan.solver.greedy.snapshot import NodeTable


class Placer:
    def __init__(self, base: Cluster, policy: str, *, seed: int, typical: list[TypicalPod]) -> None:
        self.cluster = Cluster(nodes=base.nodes, pods=base.pods, topologies=base.topologies, priority_classes=base.priority_classes, profile=policy_profile(policy))
        with registered():
            self.profile = build_profile(self.cluster)
        for pl, _ in self.profile.scorers:
            if pl.name == FGD:
                assert isinstance(pl, FGDScore)
                pl.typical = typical
            if pl.name == RANDOM:
                assert isinstance(pl, RandomScore)
                pl.rng = random.Random(f"random-score-{seed}")
        self.snap = NodeTable(self.cluster)
        self.sched = PodScheduler(self.snap, self.profile, tie_break="random", seed=seed, top_k=0)
        self.gpu_col = self.snap.res_index.get(GPU)
        self.cpu_col = self.snap.res_index.get(CPU)
        self.capacity_gpus = int(self.snap.alloc[:, self.gpu_col].sum()) if self.gpu_col is not None else 0
        self.pods: dict[str, list[Pod]] = {}

    @property
    def allocated_gpus(self) -> int:
        return int(self.snap.requested[:, self.gpu_col].sum()) if self.gpu_col is not None else 0

    def _may_fit(self, job: ReplayJob, nodes: np.ndarray | None = None) -> bool:
        """A necessary condition (free GPUs / cpu per node for ``gang`` workers): False means the
        gang cannot fit, so the per-pod cycles need not run."""
        free = self.snap.free if nodes is None else self.snap.free[nodes]
        slots = np.full(len(free), job.gang, dtype=np.int64)
        if job.gpu:
            if self.gpu_col is None:
                return False
            slots = np.minimum(slots, free[:, self.gpu_col] // job.gpu)
        if job.cpu_milli and self.cpu_col is not None:
            slots = np.minimum(slots, np.maximum(free[:, self.cpu_col], 0) // job.cpu_milli)
        return int(slots.clip(min=0).sum()) >= job.gang

    def place(self, job: ReplayJob, instance: str) -> bool:
        """Place ``job`` (all-or-nothing); True if it runs. ``instance`` names its pods uniquely."""
        pods = [worker_pod(job, k, namespace=instance) for k in range(job.gang)]
        if not self._may_fit(job):
            return False
        if not job.required_topology_key:
            return self._place_in(pods, None, instance)
        codes, values, _ = self.snap.label_codes(job.required_topology_key)
        g = self.snap.free[:, self.gpu_col] if self.gpu_col is not None else np.zeros(self.snap.n, dtype=np.int64)
        domains = []
        for d in range(len(values)):
            nodes = np.flatnonzero(codes == d)
            if self._may_fit(job, nodes):
                domains.append((int(g[nodes].sum()), values[d], nodes))
        for _, _, nodes in sorted(domains, key=lambda x: (x[0], x[1])):
            if self._place_in(pods, nodes, instance):
                return True
        return False

    def _place_in(self, pods: list[Pod], nodes: np.ndarray | None, instance: str) -> bool:
        self.sched.placement = nodes
        placed: list[Pod] = []
        try:
            for p in pods:
                r = self.sched.schedule(p)
                if r.node is None:
                    for q in placed:
                        self.snap.forget(q)
                    return False
                self.snap.assume(p, r.node)
                placed.append(p)
        finally:
            self.sched.placement = None
        self.pods[instance] = placed
        return True

    def release(self, instance: str) -> None:
        self.snap.forget_all(self.pods.pop(instance))


__all__ = ["Placer"]
