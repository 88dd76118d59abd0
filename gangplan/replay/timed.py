"""Timed mode: a discrete-event clock over the trace.

Jobs arrive at ``submit / arrival_scale`` and run for ``duration`` once placed (completion at
start + duration, never the trace's deletion time). Gangs are all-or-nothing
(:class:`~gangplan.replay.engine.Placer`).

The queue follows kube-scheduler's (``gangplan.solver.greedy.scheduling_queue``, whose constants
it reuses): at each instant the ready jobs are tried in PrioritySort order (higher priority, then
the earlier queue timestamp, reset on every failed attempt); a failed job waits in the
unschedulable pool; a departure (``Pod/Delete``, the only event that can make room for a
resource-fit failure: a bound pod never does) moves every pooled job to backoff, ``1 s *
2^(attempts - 1)`` capped at 10 s counted from its last failure, after which it is tried again.
Simplified: the 5-minute flush of the pool is not modelled, by the same rule
``scheduling_queue`` applies to snapshot runs: a job is only retried after the cluster changed
since its last attempt (a retry on an unchanged cluster repeats the same cycle; with random ties
it could draw differently, which is not modelled); no preemption; within one instant,
completions are applied before arrivals, and every ready job is tried once.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from gangplan.models.cluster import Cluster
from gangplan.replay.engine import Placer
from gangplan.replay.policies import TypicalPod
from gangplan.replay.traces import ReplayJob
from gangplan.solver.greedy.scheduling_queue import INITIAL_BACKOFF, MAX_BACKOFF

COMPLETE, ARRIVE, READY = 0, 1, 2


def backoff(attempts: int) -> float:
    """``1 s * 2^(attempts - 1)``, at most 10 s.

    >>> [backoff(n) for n in (1, 2, 3, 4, 5)]
    [1.0, 2.0, 4.0, 8.0, 10.0]
    """
    return min(INITIAL_BACKOFF * 2 ** (attempts - 1), MAX_BACKOFF)


@dataclass
class JobRecord:
    job: ReplayJob
    arrival: float
    start: float | None = None
    end: float | None = None
    attempts: int = 0


@dataclass
class TimedRun:
    policy: str
    seed: int
    capacity_gpus: int
    records: list[JobRecord]
    changes: list[tuple[float, int, int]] = field(default_factory=list)
    """(time, allocated GPUs, pending jobs) after each instant that changed either."""
    unplaceable: int = 0
    """Jobs larger than the whole cluster (never tried; reported, not counted as waiting)."""


def run_timed(base: Cluster, jobs: list[ReplayJob], policy: str, seed: int, *, typical: list[TypicalPod], arrival_scale: float = 1.0, progress=None) -> TimedRun:
    placer = Placer(base, policy, seed=seed, typical=typical)
    cap = placer.capacity_gpus
    records = [JobRecord(j, j.submit / arrival_scale) for j in jobs]
    events: list[tuple[float, int, int]] = [(r.arrival, ARRIVE, k) for k, r in enumerate(records)]
    heapq.heapify(events)
    active: list[tuple[int, float, int]] = []  # (-priority, queue time, job index)
    pool: dict[int, float] = {}  # job index -> time of its last failure
    waiting_ready: set[int] = set()
    run = TimedRun(policy, seed, cap, records)
    pending = 0
    last = (None, None)
    while events:
        now = events[0][0]
        departed = False
        while events and events[0][0] == now:
            _, kind, k = heapq.heappop(events)
            r = records[k]
            if kind == COMPLETE:
                placer.release(f"j{k}")
                departed = True
                if progress is not None:
                    progress(1)
            elif kind == ARRIVE:
                pending += 1
                heapq.heappush(active, (-r.job.priority, now, k))
            else:
                waiting_ready.discard(k)
                heapq.heappush(active, (-r.job.priority, pool.pop(k), k))
        if departed:
            for k, failed_at in pool.items():
                if k not in waiting_ready:
                    waiting_ready.add(k)
                    heapq.heappush(events, (max(now, failed_at + backoff(records[k].attempts)), READY, k))
        while active:
            _, _, k = heapq.heappop(active)
            r = records[k]
            r.attempts += 1
            if placer.place(r.job, f"j{k}"):
                r.start, r.end = now, now + r.job.duration
                pending -= 1
                heapq.heappush(events, (r.end, COMPLETE, k))
            else:
                pool[k] = now
        state = (placer.allocated_gpus, pending)
        if state != last:
            run.changes.append((now, *state))
            last = state
    return run


__all__ = ["JobRecord", "TimedRun", "backoff", "run_timed"]
