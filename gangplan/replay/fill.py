"""Fill mode: the FGD paper's experiment (ATC'23 "Beware of Fragmentation"), as the simulator
runs it (hkust-adsl/kubernetes-scheduler-simulator @8f3d641, ``pkg/simulator/core.go``,
``pkg/simulator/simulator.go``, ``pkg/simulator/analysis.go``,
``experiments/analysis/merge_alloc_discrete.py``).

Followed:

* **Order** (``SortClusterPods`` with ``shufflePod: true``): the trace's jobs sorted by name,
  then shuffled with the seed; the clones of the tuning are appended after them in the order
  they were drawn (``TunePodsByNodeTotalResource`` runs after the shuffle).
* **Tuning** to ``ratio`` (1.3) x the cluster's GPU milli: when the jobs ask for less, clones
  of jobs drawn uniformly from the name-sorted list are appended (``-tuned-i``) until the next
  draw would pass the target, where the test adds the drawn pod's *per-GPU* milli (a quirk of
  ``tuneUpPods``: an 8-GPU pod is tested with 1000 but adds 8000); when they ask for more,
  random jobs are removed until the total is within the target (``tuneDownPods``).
* **One attempt each**, a job that does not fit is dropped, nothing leaves.
* **Arrived** GPU milli counts every job tried (placed or not: ``arrPodGpuMilli`` grows before
  the pod is created); **used** GPU milli is allocated milli (``ClusterGpuFragReport``: per used
  node ``GPUs x 1000 - milli left``). After every job one sample (arrived, used), plus one before
  the first.
* **Unallocated GPU % at arrived k %** (:func:`discrete`, ``merge_alloc_discrete.py``): every
  sample's arrived ratio ``round(arrived / capacity * 100)`` and allocation ratio
  ``round(used / capacity * 100, 2)``; at k the mean allocation ratio of the samples whose
  arrived ratio is k (if none, of those within k +- 1; if none either, which the simulator's
  table leaves empty, the last sample at or below k %), rounded to 2 places; unallocated is 100
  minus that (Fig. 9(a) plots ``100 - alloc`` at arrived 100).

Departures: Python's ``random.Random(seed)`` is not Go's ``math/rand``, so seed 42 here is not
seed 42 there (only the distribution over seeds compares); one stream serves the shuffle and the
tuning as one Go stream does (its first draw skipped, as ``core.go`` logs ``rand.Int()``), but the
scorers' random draws (Random's node, its device, ties) use their own seeded streams. Ties are
the simulator's (the first node of a seeded random order, :data:`gangplan.replay.policies.TIE_BREAK`)
for the paper policies, uniform (kube-scheduler's ``selectHost``) for ``default`` and
``mostallocated``. Each job is placed by gangplan's per-pod cycle with
the policy's profile (:mod:`gangplan.replay.engine`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from gangplan.models.cluster import Cluster
from gangplan.models.well_known import GPU
from gangplan.replay.engine import Placer
from gangplan.replay.frag import FragMeter
from gangplan.replay.policies import Policy, TypicalPod
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
    """Cumulative requested GPU milli after each job."""
    allocated: list[int]
    """Allocated GPU milli after each job."""
    unallocated_percent: dict[str, float] = field(default_factory=dict)
    frag: list[float] = field(default_factory=list)
    """FGD's fragment GPU milli after each job (:mod:`gangplan.replay.frag`), the sample before
    the first job first."""
    stranded: list[int] = field(default_factory=list)
    """Stranded GPU milli after each job (:mod:`gangplan.replay.frag`), likewise."""
    initial_allocated: int = 0
    """GPU milli allocated before the first job (a snapshot's bound pods)."""

    @property
    def capacity_milli(self) -> int:
        return self.capacity_gpus * 1000


def tune(
    jobs: list[ReplayJob], capacity_milli: int, ratio: float, rng: random.Random
) -> list[ReplayJob]:
    """``TunePodsByNodeTotalResource`` on GPU milli; ``jobs`` in their scheduling order."""
    target = ratio * capacity_milli
    out = list(jobs)
    total = sum(j.gpu_milli_total for j in out)
    if ratio <= 0 or total == target:
        return out
    if total > target:
        while total > target and out:
            j = out.pop(rng.randrange(len(out)))
            total -= j.gpu_milli_total
        return out
    workload = sorted(jobs, key=lambda j: j.name)
    i = 0
    while workload:
        j = workload[rng.randrange(len(workload))]
        if total + (j.gpu_milli if j.gpu else 0) > target:
            break
        out.append(replace(j, name=f"{j.name}-tuned-{i}"))
        total += j.gpu_milli_total
        i += 1
    return out


def order(jobs: list[ReplayJob], rng: random.Random) -> list[ReplayJob]:
    out = sorted(jobs, key=lambda j: j.name)
    rng.shuffle(out)
    return out


def discrete(
    arrived: list[int], allocated: list[int], capacity_milli: int, top: int = MAX_ARRIVED_PERCENT
) -> dict[str, float]:
    """Unallocated GPU % at each integer arrived % k = 1..top, by the simulator's analysis
    (see the module docstring); ``arrived`` / ``allocated`` are the samples in GPU milli
    (include the sample before the first job). A k with no sample within +-1 (a trace of big
    jobs on a small cluster), which the simulator's table leaves empty, reads the last sample
    that arrived at or below k %. Keys are strings, for JSON."""
    out: dict[str, float] = {}
    if capacity_milli <= 0:
        return out
    groups: dict[int, list[float]] = {}
    last: list[tuple[float, float]] = []  # (arrived %, allocated %) of every sample, in order
    for a, u in zip(arrived, allocated, strict=True):
        pct = round(u * 100 / capacity_milli, 2)
        groups.setdefault(int(round(a * 100 / capacity_milli, 0)), []).append(pct)
        last.append((a * 100 / capacity_milli, pct))
    j, state = 0, 0.0
    for k in range(1, top + 1):
        while j < len(last) and last[j][0] <= k:
            state = last[j][1]
            j += 1
        vals = groups.get(k)
        if not vals:
            vals = [v for kk in (k - 1, k, k + 1) for v in groups.get(kk, ())]
        alloc = round(sum(vals) / len(vals), 2) if vals else state
        out[str(k)] = round(100.0 - alloc, 6)
    return out


def node_order(base: Cluster, rng: random.Random) -> list[int]:
    """The simulator's node order (``syncClusterResourceList``): nodes sorted by name, node k
    renamed with the prefix ``perm[k]`` of a random permutation; ties go to the smallest name,
    so the order is by ``perm``."""
    by_name = sorted(range(len(base.nodes)), key=lambda k: base.nodes[k].name)
    perm = list(range(len(by_name)))
    rng.shuffle(perm)
    return [k for _, k in sorted(zip(perm, by_name, strict=True))]


def capacity_milli(base: Cluster) -> int:
    return sum(int(n.allocatable.get(GPU, 0)) for n in base.nodes) * 1000


def fill_order(
    base: Cluster, jobs: list[ReplayJob], seed: int, ratio: float = 1.3
) -> tuple[list[ReplayJob], list[int]]:
    """The jobs in the order a fill tries them (shuffled, then tuned) and the node order, from one
    stream seeded with ``seed`` (the same for every policy)."""
    rng = random.Random(seed)
    rng.random()
    todo = tune(order(jobs, rng), capacity_milli(base), ratio, rng)
    return todo, node_order(base, rng)


def run_fill(
    base: Cluster,
    jobs: list[ReplayJob],
    policy: str | Policy,
    seed: int,
    *,
    typical: list[TypicalPod],
    ratio: float = 1.3,
    progress=None,
) -> FillRun:
    todo, nodes = fill_order(base, jobs, seed, ratio)
    placer = Placer(base, policy, seed=seed, typical=typical, node_order=nodes)
    cap = placer.capacity_milli
    placed, arrived, allocated = [], [], []
    total = 0
    samples_a, samples_u = [0], [placer.allocated_milli]
    meter = FragMeter(placer.devices, typical)
    f0, s0, _ = meter.sample()
    frag, stranded = [f0], [s0]
    for k, j in enumerate(todo):
        total += j.gpu_milli_total
        ok = placer.place(j, f"j{k}")
        alloc = placer.allocated_milli
        placed.append(ok)
        arrived.append(total)
        allocated.append(alloc)
        samples_a.append(total)
        samples_u.append(alloc)
        f, st, _ = meter.sample()
        frag.append(f)
        stranded.append(st)
        if progress is not None:
            progress(1)
    run = FillRun(
        placer.policy.name,
        seed,
        placer.capacity_gpus,
        todo,
        placed,
        arrived,
        allocated,
        frag=frag,
        stranded=stranded,
        initial_allocated=samples_u[0],
    )
    run.unallocated_percent = discrete(samples_a, samples_u, cap)
    return run


__all__ = [
    "FillRun",
    "capacity_milli",
    "discrete",
    "fill_order",
    "node_order",
    "order",
    "run_fill",
    "tune",
]
