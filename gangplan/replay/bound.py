"""A packing bound for fill mode (issue 22, item 4): an upper bound on the GPU milli any placement
could allocate to a multiset of arrived jobs, hence a lower bound on the unallocated GPU % that
every policy's number is measured against.

The bound is a linear-programming relaxation over node classes (nodes grouped by cpu, memory,
GPU count and model), solved with OR-tools' GLOP. Variables ``x[k, c] >= 0``: how many pods of
kind ``k`` (cpu, memory, GPU devices, milli, allowed models) go to class ``c``; a kind may use a
class only where one of its pods fits one node of it (cpu, memory, enough devices, an allowed
model). Constraints, each valid for every integral placement:

* at most the arrived number of pods of each kind;
* per class, total cpu, memory and GPU milli within the class's total;
* per class, devices: a whole-GPU pod takes ``count`` devices and a share of more than 500 milli
  one device no other such share can use, so ``sum(count x whole) + sum(x shares > 500)`` is at
  most the class's devices.

Maximise the GPU milli placed. Aggregating nodes drops per-node packing (a relaxation), so the
bound may be loose: it is reported as a bound, never as an optimum. Gangs count as one pod per
worker (the relaxation does not keep a gang whole); ``required_topology_key`` is ignored.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from gangplan.models.cluster import Cluster
from gangplan.models.objects import CPU, MEMORY
from gangplan.models.well_known import GPU, GPU_PRODUCT
from gangplan.replay.gpushare import MILLI
from gangplan.replay.traces import MIB, ReplayJob


@dataclass(frozen=True)
class PackingBound:
    arrived_milli: int
    capacity_milli: int
    allocatable_milli: float
    """Upper bound on the GPU milli any placement allocates (at most ``arrived_milli``)."""
    status: str

    @property
    def unallocated_percent(self) -> float:
        """Lower bound on the unallocated GPU % (of the cluster's GPU milli)."""
        return round(100.0 * (self.capacity_milli - self.allocatable_milli) / self.capacity_milli, 4) if self.capacity_milli else 0.0


def packing_bound(base: Cluster, jobs: list[ReplayJob]) -> PackingBound:
    from ortools.linear_solver import pywraplp

    classes = Counter((int(n.allocatable.get(CPU, 0)), int(n.allocatable.get(MEMORY, 0)), int(n.allocatable.get(GPU, 0)), n.labels.get(GPU_PRODUCT, "")) for n in base.nodes)
    kinds = Counter((j.cpu_milli, j.memory_mib * MIB, j.gpu, j.gpu_milli if j.gpu else 0, j.gpu_models if j.gpu else ()) for j in jobs for _ in range(j.workers))
    capacity = sum(g * n for (_, _, g, _), n in classes.items()) * MILLI
    arrived = sum(g * m * n for (_, _, g, m, _), n in kinds.items())
    solver = pywraplp.Solver.CreateSolver("GLOP")
    x: dict[tuple, object] = {}
    for k in kinds:
        cpu, mem, g, m, models = k
        for c in classes:
            ccpu, cmem, cg, model = c
            if cpu <= ccpu and mem <= cmem and g <= cg and (not g or not models or model in models):
                x[k, c] = solver.NumVar(0.0, solver.infinity(), "")
    for k, n in kinds.items():
        solver.Add(sum(v for (kk, _), v in x.items() if kk == k) <= n)
    for c, n in classes.items():
        ccpu, cmem, cg, _ = c
        here = [(k, v) for (k, cc), v in x.items() if cc == c]
        solver.Add(sum(k[0] * v for k, v in here) <= n * ccpu)
        solver.Add(sum(k[1] * v for k, v in here) <= n * cmem)
        solver.Add(sum(k[2] * k[3] * v for k, v in here) <= n * cg * MILLI)
        solver.Add(sum((k[2] if k[3] >= MILLI else 1) * v for k, v in here if k[2] and (k[3] >= MILLI or k[3] > MILLI // 2)) <= n * cg)
    solver.Maximize(sum(k[2] * k[3] * v for (k, _), v in x.items()))
    st = solver.Solve()
    if st != pywraplp.Solver.OPTIMAL:
        return PackingBound(arrived, capacity, float(min(arrived, capacity)), "trivial (LP not solved)")
    value = min(solver.Objective().Value(), float(arrived), float(capacity))
    return PackingBound(arrived, capacity, value, "lp-relaxation")


def arrived_prefix(jobs: list[ReplayJob], capacity_milli: int, percent: int) -> list[ReplayJob]:
    """The jobs of a fill order whose arrival keeps arrived GPU milli at a rounded ``percent``
    or less (the samples the analysis reads at that percent, and the ones before)."""
    out, total = [], 0
    for j in jobs:
        total += j.gpu_milli_total
        if round(total * 100 / capacity_milli) > percent:
            break
        out.append(j)
    return out


__all__ = ["PackingBound", "arrived_prefix", "packing_bound"]
