"""Timed mode: a discrete-event clock over the trace.

Jobs arrive at ``submit / arrival_scale`` and run for ``duration`` once placed (completion at
start + duration, never the trace's deletion time). Gangs are all-or-nothing
(:class:`~gangplan.replay.engine.Placer`).

The queue follows kube-scheduler's (``gangplan.solver.greedy.scheduling_queue``, whose constants
and version rule it reuses; upstream ``pkg/scheduler/backend/queue/scheduling_queue.go`` and
``backoff_queue.go``, kubernetes/kubernetes release-1.36 and the v1.37 entity queue,
kubernetes#138567):

* at each instant the ready jobs are tried in PrioritySort order (higher priority, then the
  earlier queue timestamp; the timestamp is reset to the failure time on every failed attempt,
  ``AddUnschedulableIfNotPresent``);
* a failed job waits in the unschedulable pool. A single pod (a job of one worker) moves out on a
  departure only (``Pod/Delete``: NodeResourcesFit's queueing hint; a pod bound elsewhere,
  ``AssignedPodAdd``, never makes room). A gang of more than one worker follows the cluster's
  kube version (:func:`gangplan.models.version.groups_requeue_without_hints`): v1.36 requeues
  its member pods by their hints (departures only, as above); v1.37 requeues a failed pod group
  on any event without hints (``AddAttemptedPodGroupIfNeeded``), so a placement at the same or a
  later instant moves it too;
* moved out, a job backs off ``1 s * 2^(attempts - 1)``, capped at 10 s (v1.37 gangs of more
  than one pod: ``10 s * sqrt(size)``, ``calculateBackoffDuration``), counted from its last
  failure; when the backoff has already expired it goes straight to activeQ (``moveToActiveQ``);
* **the 5-minute flush**: ``flushUnschedulablePodsLeftover`` runs every 30 s (``Run``:
  ``wait.Until(..., 30*time.Second, ...)``; here at the instants 30 s, 60 s, .. of the replay
  clock, which starts at 0) and moves every job whose last failure (its queue ``Timestamp``) is
  more than ``DefaultPodMaxInUnschedulablePodsDuration`` = 5 min old (``currentTime.Sub(
  lastScheduleTime) > podMaxInUnschedulablePodsDuration``, strictly) out of the pool with the
  ``UnschedulableTimeout`` wildcard event, which every job takes (``queueAfterBackoff``): to
  backoffQ if still backing off, else activeQ, the same move as an event. So a job failed at f
  and seeing no event is retried at the first multiple of 30 s after f + 300 s. The flush
  retry is an attempt like any other: it counts, and a failure resets the job's queue
  timestamp (its PrioritySort place among equal priorities) and its 5 minutes. kubernetes/
  kubernetes ``pkg/scheduler/backend/queue/scheduling_queue.go`` @003b4460 (the
  QueuedPodInfo queue of the 1.3x releases before the entity queue: ``flushUnschedulablePodsLeftover``,
  ``DefaultPodMaxInUnschedulablePodsDuration time.Duration = 5 * time.Minute``); the v1.37
  entity queue (kubernetes#138567, as read in a fork's copy of the same file) keeps the rule as
  ``flushUnschedulableEntitiesLeftover`` over pods and pod groups alike
  (``entity.GetTimestamp()``, the same 5 minutes and 30 s loop). A flush instant with no other
  event is not a ``shadow`` epoch (the state is the previous instant's), and the run ends when
  only flush ticks remain (nothing can change any more: each retry would repeat the last
  failed cycle on the same cluster). A flush retry of a job whose last attempt failed the
  placer's necessary test (:meth:`~gangplan.replay.engine.Placer._may_fit`: too few device
  slots or too little cpu in all, no per-pod cycle run, no random draw), at an instant with no
  departure, is counted and failed without running it: since that failure only placements
  happened (a departure would have moved the job), so no node has more room and the monotone
  test fails again. The same outcome, cheaply: an over-subscribed VC retries hundreds of
  waiting jobs every 5 minutes for weeks (a 2-node Philly VC over 22 days: a million retries).

Departures from upstream, each by the rule ``scheduling_queue`` applies to snapshot runs:

* attempts take no time: every ready job of an instant is tried at that instant, completions
  are applied before arrivals, and a job's backoff timer starts at the instant it failed;
* no preemption.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

from gangplan.models.cluster import Cluster
from gangplan.models.version import groups_requeue_without_hints
from gangplan.replay.engine import Placer
from gangplan.replay.frag import FragMeter
from gangplan.replay.policies import Policy, TypicalPod
from gangplan.replay.shadow import Shadow
from gangplan.replay.traces import ReplayJob
from gangplan.solver.greedy.scheduling_queue import (
    FLUSH_INTERVAL,
    INITIAL_BACKOFF,
    MAX_BACKOFF,
    MAX_IN_UNSCHEDULABLE,
)

COMPLETE, ARRIVE, READY, FLUSH = 0, 1, 2, 3


def flush_time(failed_at: float) -> float:
    """The ``flushUnschedulablePodsLeftover`` tick that moves a job failed at ``failed_at`` and
    seeing no event: the first multiple of 30 s more than 5 minutes later.

    >>> flush_time(0.0), flush_time(10.0), flush_time(30.0)
    (330.0, 330.0, 360.0)
    """
    return (math.floor((failed_at + MAX_IN_UNSCHEDULABLE) / FLUSH_INTERVAL) + 1) * FLUSH_INTERVAL


def backoff(attempts: int, size: int = 1, group_rules: bool = False) -> float:
    """``1 s * 2^(attempts - 1)``, at most 10 s (``group_rules``, v1.37, and a gang of more
    than one pod: at most ``10 s * sqrt(size)``).

    >>> [backoff(n) for n in (1, 2, 3, 4, 5)]
    [1.0, 2.0, 4.0, 8.0, 10.0]
    >>> backoff(6, size=4, group_rules=True), backoff(6, size=4)
    (20.0, 10.0)
    """
    cap = MAX_BACKOFF * math.sqrt(size) if group_rules and size > 1 else MAX_BACKOFF
    return min(INITIAL_BACKOFF * 2.0 ** min(attempts - 1, 64), cap)  # upstream doubles until the cap


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
    shadow: Shadow | None = None
    """The per-epoch exact solves (policy ``shadow``)."""
    flushed: int = 0
    """Jobs the 5-minute flush moved out of the unschedulable pool (each move counted)."""
    frag: list[tuple[float, float, int]] = field(default_factory=list)
    """(time, fragment GPU milli, stranded GPU milli) of the state after each entry of
    :attr:`changes` (:class:`gangplan.replay.frag.FragMeter`, the FGD simulator's definitions
    against the trace's typical pods)."""


def run_timed(
    base: Cluster, jobs: list[ReplayJob], policy: str | Policy, seed: int, *, typical: list[TypicalPod], arrival_scale: float = 1.0, progress=None, shadow: Shadow | None = None,
) -> TimedRun:
    """Replay ``jobs`` on ``base`` under ``policy``; ``shadow`` records the per-epoch exact
    solves (:mod:`gangplan.replay.shadow`) on this run's own state."""
    placer = Placer(base, policy, seed=seed, typical=typical)
    cap = placer.capacity_gpus
    group_rules = groups_requeue_without_hints(placer.cluster.kube_version)
    records = [JobRecord(j, j.submit / arrival_scale) for j in jobs]
    events: list[tuple[float, int, int]] = [(r.arrival, ARRIVE, k) for k, r in enumerate(records)]
    heapq.heapify(events)
    active: list[tuple[int, float, int]] = []  # (-priority, queue time, job index)
    pool: dict[int, tuple[float, int]] = {}  # job index -> (time of its last failure, placements seen then)
    waiting_ready: set[int] = set()
    pending_set: set[int] = set()
    running: set[int] = set()
    run = TimedRun(placer.policy.name, seed, cap, records)
    meter = FragMeter(placer.devices, typical)
    last = (None, None)
    placements = 0
    flushes = [0]  # FLUSH entries in events: the run ends when only those remain
    flushed = [0]
    static_fail: set[int] = set()  # jobs whose last attempt failed the placer's necessary test
    flush_now: set[int] = set()  # jobs the flush moved straight to activeQ at this instant

    def fail(k: int, now: float) -> None:
        """To the pool (``AddUnschedulableIfNotPresent``), with its flush tick."""
        pool[k] = (now, placements)
        heapq.heappush(events, (flush_time(now), FLUSH, k))
        flushes[0] += 1

    def move(k: int, now: float) -> None:
        """Out of the pool: to backoffQ until the backoff expires, else straight to activeQ."""
        failed_at = pool[k][0]
        r = records[k]
        ready = failed_at + backoff(r.attempts, r.job.gang, group_rules)
        waiting_ready.add(k)
        if ready <= now:
            waiting_ready.discard(k)
            heapq.heappush(active, (-r.job.priority, pool.pop(k)[0], k))
        else:
            heapq.heappush(events, (ready, READY, k))

    while len(events) > flushes[0]:
        now = events[0][0]
        departed = False
        only_flush = True
        flush_now.clear()
        while events and events[0][0] == now:
            _, kind, k = heapq.heappop(events)
            r = records[k]
            if kind == FLUSH:
                flushes[0] -= 1
                # still in the pool since the failure this tick was set for (no event moved it)
                if k in pool and k not in waiting_ready and flush_time(pool[k][0]) == now:
                    flushed[0] += 1
                    move(k, now)
                    if k not in pool:
                        flush_now.add(k)
                continue
            only_flush = False
            if kind == COMPLETE:
                placer.release(f"j{k}")
                running.discard(k)
                departed = True
                if progress is not None:
                    progress(1)
            elif kind == ARRIVE:
                pending_set.add(k)
                heapq.heappush(active, (-r.job.priority, now, k))
            else:
                waiting_ready.discard(k)
                heapq.heappush(active, (-r.job.priority, pool.pop(k)[0], k))
        if departed:
            for k in [k for k in pool if k not in waiting_ready]:
                move(k, now)
        pre = None
        if shadow is not None and not only_flush and shadow.due(now, len(pending_set)):
            pre = ({k: _nodes_of(placer, k) for k in running}, sorted(pending_set))
        placed_now: list[int] = []
        tried_now: set[int] = set()
        while active:
            while active:
                _, _, k = heapq.heappop(active)
                tried_now.add(k)
                r = records[k]
                r.attempts += 1
                if k in flush_now and not departed and k in static_fail:
                    fail(k, now)  # the same necessary test on no more room (module docstring)
                    continue
                if placer.place(r.job, f"j{k}"):
                    r.start, r.end = now, now + r.job.duration
                    pending_set.discard(k)
                    running.add(k)
                    placed_now.append(k)
                    placements += 1
                    heapq.heappush(events, (r.end, COMPLETE, k))
                else:
                    if placer.static_failure:
                        static_fail.add(k)
                    else:
                        static_fail.discard(k)
                    fail(k, now)
            if group_rules and placed_now:
                # v1.37: a failed pod group goes back on any event, a pod bound after its attempt
                # included; one whose backoff already expired is tried again at this instant
                for k in [k for k, (_, seen) in pool.items() if seen < placements and k not in waiting_ready and records[k].job.gang > 1]:
                    move(k, now)
        if pre is not None:
            shadow.solve(now, placer.cluster.nodes, jobs, pre[0], pre[1], {k: _nodes_of(placer, k) for k in placed_now}, tried=tried_now)
        state = (placer.allocated_gpus, len(pending_set))
        if state != last:
            run.changes.append((now, *state))
            run.frag.append((now, *meter.sample()[:2]))
            last = state
    run.flushed = flushed[0]
    return run


def _nodes_of(placer: Placer, k: int) -> list[str]:
    names = placer.snap.names
    return [names[placer.devices.held[p.key][0]] for p in placer.pods[f"j{k}"]]


__all__ = ["JobRecord", "TimedRun", "backoff", "flush_time", "run_timed"]
