"""Fill mode: the FGD paper's experiment (ATC'23 "Beware of Fragmentation", the simulator's
workload-inflation run, ``pkg/simulator/simulator.go``).

Following the simulator: the job list is tuned to ``ratio`` x the cluster's GPUs
(``TunePodsByNodeTotalResource``: clones of random jobs appended while the total stays within
the target, or random jobs removed while above it), then sorted by name and shuffled with the
seed (``SortClusterPods`` with ``shufflePod``), and every job gets one attempt in that order;
a job that does not fit is dropped; nothing leaves.

Departures from it: Python's ``random.Random(seed)`` is not Go's ``math/rand``, so seed 42 here is
not seed 42 there (only the distribution over seeds compares); GPUs are whole (a GPU-sharing pod
holds one GPU, and arrived / unallocated count whole GPUs); each job is placed by gangplan's
per-pod cycle with the policy's profile (ties broken at random with the seed, as selectHost).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from gangplan.models.cluster import Cluster
from gangplan.replay.engine import Placer
from gangplan.replay.policies import TypicalPod
from gangplan.replay.traces import ReplayJob

MAX_ARRIVED_PERCENT = 130


@dataclass
class FillRun:
    policy: str
    seed: int
    capacity_gpus: int
    jobs: list[ReplayJob]
    placed: list[bool]
    arrived: list[int]
    """Cumulative requested GPUs after each job."""
    allocated: list[int]
    """Allocated GPUs after each job."""
    unallocated_percent: dict[str, float] = field(default_factory=dict)


def tune(jobs: list[ReplayJob], capacity_gpus: int, ratio: float, rng: random.Random) -> list[ReplayJob]:
    """``TunePodsByNodeTotalResource`` on whole GPUs."""
    target = ratio * capacity_gpus
    out = list(jobs)
    total = sum(j.gpus for j in out)
    if total > target:
        while total > target and out:
            j = out.pop(rng.randrange(len(out)))
            total -= j.gpus
        return out
    i = 0
    while jobs:
        j = jobs[rng.randrange(len(jobs))]
        if total + j.gpus > target:
            break
        out.append(replace(j, name=f"{j.name}-tuned-{i}"))
        total += j.gpus
        i += 1
    return out


def order(jobs: list[ReplayJob], rng: random.Random) -> list[ReplayJob]:
    out = sorted(jobs, key=lambda j: j.name)
    rng.shuffle(out)
    return out


def discrete(arrived: list[int], allocated: list[int], capacity: int, top: int = MAX_ARRIVED_PERCENT) -> dict[str, float]:
    """Unallocated GPU % at each integer arrived % k = 1..top: the state after the last job whose
    arrival keeps arrived GPUs <= k % of the cluster (the state before any job, when none does).
    Keys are strings, for JSON."""
    out: dict[str, float] = {}
    if capacity <= 0:
        return out
    i, n, alloc = 0, len(arrived), 0
    for k in range(1, top + 1):
        while i < n and arrived[i] * 100 <= k * capacity:
            alloc = allocated[i]
            i += 1
        out[str(k)] = round(100.0 * (capacity - alloc) / capacity, 6)
    return out


def run_fill(base: Cluster, jobs: list[ReplayJob], policy: str, seed: int, *, typical: list[TypicalPod], ratio: float = 1.3, progress=None) -> FillRun:
    placer = Placer(base, policy, seed=seed, typical=typical)
    cap = placer.capacity_gpus
    rng = random.Random(seed)
    todo = order(tune(jobs, cap, ratio, rng), rng)
    placed, arrived, allocated = [], [], []
    total = 0
    alloc = placer.allocated_gpus
    for k, j in enumerate(todo):
        ok = placer.place(j, f"j{k}")
        total += j.gpus
        if ok:
            alloc += j.gpus
        placed.append(ok)
        arrived.append(total)
        allocated.append(alloc)
        if progress is not None:
            progress(1)
    run = FillRun(policy, seed, cap, todo, placed, arrived, allocated)
    run.unallocated_percent = discrete(arrived, allocated, cap)
    return run


__all__ = ["FillRun", "discrete", "order", "run_fill", "tune"]
