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
  kube version: v1.36 requeues a group's pods by backoff alone
  (:func:`gangplan.models.version.group_pods_backoff_only`: no hints, and the head of backoffQ is
  popped at once when activeQ is empty, so upstream retries the gang as fast as it can); here it
  is retried at the first instant anything changed after its failure (a departure, or a
  placement at the same or a later instant), at once, with no backoff wait: a retry on an
  unchanged cluster would repeat the same attempt. v1.37 requeues a failed pod group on any
  event without hints (``AddAttemptedPodGroupIfNeeded``,
  :func:`gangplan.models.version.groups_requeue_without_hints`), so a placement at the same or a
  later instant moves it too, after its backoff;
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
* preemption as below: victims terminate at once and the preemptor is retried at that instant.

**Preemption** (issue 22 item 3, "preemption as the profile says"): when the placer's profile
has DefaultPreemption at PostFilter (:attr:`SchedulerProfile.preemption`; a
KubeSchedulerConfiguration ``--policy`` file may disable it) and a job's attempt fails while
some running job has a strictly lower ``priority``, the greedy engine's own PostFilter decides
(:func:`preempt`: the one implementation, :mod:`gangplan.solver.greedy.preemption`, default
preemption for a single pod, workload-aware preemption (KEP-5710) for a gang, by the cluster's
kube version): the state (:func:`preemption_state`: the nodes, every running job's pods bound
with their priority, the failed job the only pending one, a gang as its PodGroup; the Cluster
the loader makes of :func:`gangplan.replay.shadow.epoch_objects`, built from models) is run
through :func:`~gangplan.solver.greedy.solve_greedy`. When its Result names victims:

* every running job with a victim pod is evicted whole (its pods released), and goes back to
  activeQ as a new arrival at that instant with its full duration again (its work is lost; its
  JCT still counts from its first arrival, its queueing delay is to its last start;
  :attr:`JobRecord.evictions` counts them);
* upstream's ``Evaluator.Preempt`` (kubernetes/kubernetes
  ``pkg/scheduler/framework/preemption/preemption.go`` @00e6d951, the DefaultPreemption
  PostFilter of ``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go``)
  deletes the victims through the API (``prepareCandidate`` / ``prepareCandidateAsync``:
  ``PreemptPod``, a graceful deletion) and returns the nominated node; the preemptor's cycle still
  ends unschedulable, it waits with ``nominatedNodeName`` set (its room reserved against pods of
  no higher priority, ``RunFilterPluginsWithNominatedPods``) and the victims' ``Pod/Delete``
  moves it. Here victims terminate instantly: their deletion is a departure (the pool moves as on
  any departure) and the preemptor goes straight to activeQ at that instant (its queue timestamp
  the failure time): upstream's graceful termination (30 s by default) outlasts its backoff (at
  most 10 s), so that ``Pod/Delete`` finds the backoff expired. It is tried again at once through
  the normal path, so it must really fit (the placer's own cycle; the nominated node is not
  forced: for a single pod only the victims' node gained room). A job of higher priority in
  activeQ still goes first, as upstream; one of equal priority with an earlier timestamp too
  (upstream's nomination would hold the room against it: a departure). A job preempts at most
  once per instant (a second failure at that instant goes to the pool);
* nothing is paid when no running job has a lower priority (a count of running jobs per
  priority), nor on a trace of one priority (Philly: preemption never runs there);
* the engine sees the replay's GPUs as whole ``nvidia.com/gpu`` (as the ``shadow`` policy): a
  trace with GPU-sharing jobs runs without preemption (:attr:`TimedRun.notes` says so); the
  engine's profile is the policy's without the paper's score plugins and the replay's GPU-share
  filter (they need the replay's device table), so a gang's victims under a paper policy are
  those the remaining upstream scorers (none: the first feasible nodes) lead to. A victim that is
  not a replay job (a bound pod of a ``--nodes`` snapshot) is never evicted: such a preemption is
  not applied, and noted.
* under ``shadow`` (:mod:`gangplan.replay.shadow`), an epoch at which greedy started a job by
  preempting shows a negative regret: the exact engine keeps the running pods fixed and does not
  preempt.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from gangplan.models.cluster import Cluster
from gangplan.models.version import group_pods_backoff_only, groups_requeue_without_hints
from gangplan.replay.engine import Placer
from gangplan.replay.frag import FragMeter
from gangplan.replay.policies import PAPER_PLUGINS, Policy, TypicalPod
from gangplan.replay.shadow import NAMESPACE, Shadow, epoch_cluster
from gangplan.replay.traces import ReplayJob
from gangplan.solver.greedy import (
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
    return min(
        INITIAL_BACKOFF * 2.0 ** min(attempts - 1, 64), cap
    )  # upstream doubles until the cap


@dataclass
class JobRecord:
    job: ReplayJob
    arrival: float
    start: float | None = None
    end: float | None = None
    attempts: int = 0
    evictions: int = 0
    """Times a preemptor evicted this job (each time it went back to the queue)."""


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
    preemptions: int = 0
    """Preemptions applied: failed attempts whose PostFilter evicted running jobs."""
    notes: list[str] = field(default_factory=list)
    """Caveats of this run (preemption off for a GPU-sharing trace, a preemption not applied)."""


def run_timed(
    base: Cluster,
    jobs: list[ReplayJob],
    policy: str | Policy,
    seed: int,
    *,
    typical: list[TypicalPod],
    arrival_scale: float = 1.0,
    progress=None,
    shadow: Shadow | None = None,
    on_preempt=None,
) -> TimedRun:
    """Replay ``jobs`` on ``base`` under ``policy``; ``shadow`` records the per-epoch exact
    solves (:mod:`gangplan.replay.shadow`) on this run's own state; ``on_preempt(now, job,
    preemption)`` is called after every PostFilter run (:class:`Preemption`: tests validate it)."""
    return _Clock(
        base,
        jobs,
        policy,
        seed,
        typical=typical,
        arrival_scale=arrival_scale,
        progress=progress,
        shadow=shadow,
        on_preempt=on_preempt,
    ).run()


class _Clock:
    """One timed run: the event heap, kube-scheduler's three queues (activeQ, backoffQ as READY
    events, the unschedulable pool) and the placer (module docstring)."""

    def __init__(
        self,
        base: Cluster,
        jobs: list[ReplayJob],
        policy: str | Policy,
        seed: int,
        *,
        typical: list[TypicalPod],
        arrival_scale: float,
        progress,
        shadow: Shadow | None,
        on_preempt,
    ) -> None:
        self.placer = placer = Placer(base, policy, seed=seed, typical=typical)
        self.jobs, self.seed, self.progress, self.shadow, self.on_preempt = (
            jobs,
            seed,
            progress,
            shadow,
            on_preempt,
        )
        self.group_rules = groups_requeue_without_hints(placer.cluster.kube_version)
        self.backoff_only = group_pods_backoff_only(placer.cluster.kube_version)
        self.records = [JobRecord(j, j.submit / arrival_scale) for j in jobs]
        self.events: list[tuple[float, int, int]] = [
            (r.arrival, ARRIVE, k) for k, r in enumerate(self.records)
        ]
        heapq.heapify(self.events)
        self.active: list[tuple[int, float, int]] = []  # (-priority, queue time, job index)
        self.pool: dict[
            int, tuple[float, int]
        ] = {}  # job index -> (time of its last failure, placements seen then)
        self.waiting_ready: set[int] = set()
        self.pending: set[int] = set()
        self.running: set[int] = set()
        self.out = TimedRun(placer.policy.name, seed, placer.capacity_gpus, self.records)
        self.meter = FragMeter(placer.devices, typical)
        self.placements = 0
        self.flushes = 0  # FLUSH entries in events: the run ends when only those remain
        self.flushed = 0
        self.static_fail: set[int] = (
            set()
        )  # jobs whose last attempt failed the placer's necessary test
        self.flush_now: set[int] = set()  # jobs the flush moved straight to activeQ at this instant
        # preemption (module docstring): on when the profile preempts and the trace has two priorities
        self.can_preempt = placer.cluster.profile.preemption and len({j.priority for j in jobs}) > 1
        if self.can_preempt and any(j.fractional for j in jobs):
            self.can_preempt = False
            self.out.notes.append(
                "preemption off: the engine's PostFilter sees whole GPUs, and this trace has GPU-sharing jobs (gpu_milli < 1000)"
            )
        self.running_priority: Counter[int] = (
            Counter()
        )  # running jobs per priority (the cheap pre-check)
        self.stale: Counter[int] = Counter()  # COMPLETE events of evicted runs, skipped when popped
        self.preempted_now: set[int] = (
            set()
        )  # jobs that preempted at this instant (at most once each)
        self.departed = False

    # ---- the queues ----------------------------------------------------------------------------
    def lower_running(self, priority: int) -> bool:
        return any(p < priority for p, n in self.running_priority.items() if n)

    def evict(self, v: int, now: float) -> None:
        """A victim's job leaves (instant termination) and arrives again at ``now``."""
        r = self.records[v]
        self.placer.release(f"j{v}")
        self.running.discard(v)
        self.running_priority[r.job.priority] -= 1
        self.stale[v] += 1
        r.start = r.end = None
        r.evictions += 1
        self.pending.add(v)
        self.static_fail.discard(v)
        heapq.heappush(self.active, (-r.job.priority, now, v))

    def fail(self, k: int, now: float) -> None:
        """To the pool (``AddUnschedulableIfNotPresent``), with its flush tick."""
        self.pool[k] = (now, self.placements)
        heapq.heappush(self.events, (flush_time(now), FLUSH, k))
        self.flushes += 1

    def move(self, k: int, now: float) -> None:
        """Out of the pool: to backoffQ until the backoff expires, else straight to activeQ."""
        failed_at = self.pool[k][0]
        r = self.records[k]
        ready = (
            now
            if self.backoff_only and r.job.gang > 1
            else failed_at + backoff(r.attempts, r.job.gang, self.group_rules)
        )
        self.waiting_ready.add(k)
        if ready <= now:
            self.waiting_ready.discard(k)
            heapq.heappush(self.active, (-r.job.priority, self.pool.pop(k)[0], k))
        else:
            heapq.heappush(self.events, (ready, READY, k))

    def move_pool(self, now: float) -> None:
        """A departure: every pooled job not already backing off moves."""
        for k in [k for k in self.pool if k not in self.waiting_ready]:
            self.move(k, now)

    # ---- one instant ---------------------------------------------------------------------------
    def run(self) -> TimedRun:
        last = (None, None)
        placer, out = self.placer, self.out
        while len(self.events) > self.flushes:
            now = self.events[0][0]
            only_flush = self.pop_events(now)
            if self.departed:
                self.move_pool(now)
            pre = None
            if (
                self.shadow is not None
                and not only_flush
                and self.shadow.due(now, len(self.pending))
            ):
                pre = ({k: placer.nodes_of(f"j{k}") for k in self.running}, sorted(self.pending))
            placed_now, tried_now = self.attempts(now)
            if pre is not None:
                self.shadow.solve(
                    now,
                    placer.cluster.nodes,
                    self.jobs,
                    pre[0],
                    pre[1],
                    {k: placer.nodes_of(f"j{k}") for k in placed_now},
                    tried=tried_now,
                    placer=placer,
                )
            state = (placer.allocated_gpus, len(self.pending))
            if state != last:
                out.changes.append((now, *state))
                out.frag.append((now, *self.meter.sample()[:2]))
                last = state
        out.flushed = self.flushed
        return out

    def pop_events(self, now: float) -> bool:
        """Apply every event at ``now`` (completions, arrivals, expired backoffs, flush ticks);
        True when they were flush ticks only."""
        self.departed = False
        only_flush = True
        self.flush_now.clear()
        events, records = self.events, self.records
        while events and events[0][0] == now:
            _, kind, k = heapq.heappop(events)
            r = records[k]
            if kind == FLUSH:
                self.flushes -= 1
                # still in the pool since the failure this tick was set for (no event moved it)
                if (
                    k in self.pool
                    and k not in self.waiting_ready
                    and flush_time(self.pool[k][0]) == now
                ):
                    self.flushed += 1
                    self.move(k, now)
                    if k not in self.pool:
                        self.flush_now.add(k)
                continue
            if kind == COMPLETE and self.stale[k]:  # the end of a run a preemptor evicted
                self.stale[k] -= 1
                continue
            only_flush = False
            if kind == COMPLETE:
                self.placer.release(f"j{k}")
                self.running.discard(k)
                self.running_priority[r.job.priority] -= 1
                self.departed = True
                if self.progress is not None:
                    self.progress(1)
            elif kind == ARRIVE:
                self.pending.add(k)
                heapq.heappush(self.active, (-r.job.priority, now, k))
            else:
                self.waiting_ready.discard(k)
                heapq.heappush(self.active, (-r.job.priority, self.pool.pop(k)[0], k))
        return only_flush

    def attempts(self, now: float) -> tuple[list[int], set[int]]:
        """Try activeQ in PrioritySort order until it is empty (v1.37 gangs moved by this
        instant's placements join it); the jobs placed and the jobs tried."""
        placed_now: list[int] = []
        tried_now: set[int] = set()
        self.preempted_now.clear()
        while self.active:
            while self.active:
                _, _, k = heapq.heappop(self.active)
                tried_now.add(k)
                if self.attempt(k, now):
                    placed_now.append(k)
            if (self.group_rules or self.backoff_only) and placed_now:
                # v1.37: a failed pod group goes back on any event, a pod bound after its attempt
                # included; one whose backoff already expired is tried again at this instant
                for k in [
                    k
                    for k, (_, seen) in self.pool.items()
                    if seen < self.placements
                    and k not in self.waiting_ready
                    and self.records[k].job.gang > 1
                ]:
                    self.move(k, now)
        return placed_now, tried_now

    def attempt(self, k: int, now: float) -> bool:
        """One scheduling attempt of job ``k``; True when it starts."""
        r = self.records[k]
        r.attempts += 1
        lower = self.can_preempt and self.lower_running(r.job.priority)
        if k in self.flush_now and not self.departed and k in self.static_fail and not lower:
            self.fail(k, now)  # the same necessary test on no more room (module docstring)
            return False
        if self.placer.place(r.job, f"j{k}"):
            r.start, r.end = now, now + r.job.duration
            self.pending.discard(k)
            self.running.add(k)
            self.running_priority[r.job.priority] += 1
            self.placements += 1
            heapq.heappush(self.events, (r.end, COMPLETE, k))
            return True
        if self.placer.static_failure:
            self.static_fail.add(k)
        else:
            self.static_fail.discard(k)
        if not (lower and k not in self.preempted_now and self.preempt(k, now)):
            self.fail(k, now)
        return False

    def preempt(self, k: int, now: float) -> bool:
        """PostFilter for job ``k`` (module docstring); True when it evicted jobs (``k`` is then
        back in activeQ, nominated: retried at once)."""
        r = self.records[k]
        pr = preempt(self.placer, self.jobs, self.running, k, now, seed=self.seed)
        if self.on_preempt is not None:
            self.on_preempt(now, k, pr)
        if pr.foreign:
            self.out.notes.append(
                f"t={now:g} s: {r.job.name}'s preemption not applied: its victims include pods that are not replay jobs ({', '.join(pr.foreign[:3])})"
            )
            return False
        if not pr.victims:
            return False
        self.preempted_now.add(k)
        self.out.preemptions += 1
        for v in pr.victims:
            self.evict(v, now)
        self.departed = True  # the victims' Pod/Delete: the pool moves
        self.move_pool(now)
        self.static_fail.discard(k)
        heapq.heappush(self.active, (-r.job.priority, now, k))
        return True


@dataclass
class Preemption:
    """One PostFilter run (:func:`preempt`): ``victims`` = the running jobs its Result evicts
    (indices), ``foreign`` = victim pods that are not replay jobs; ``cluster`` / ``result``: what
    the engine ran and returned (for the validator)."""

    victims: list[int]
    foreign: list[str]
    cluster: Cluster
    result: Any
    wall_s: float


def engine_profile(placer: Placer):
    """The placer's profile for the greedy engine on :func:`epoch_objects`' state: without the
    replay's GPU-share filter and the paper's score plugins (both read the replay's device
    table; the engine sees whole ``nvidia.com/gpu``, which NodeResourcesFit checks)."""
    replay_only = {cls.name for cls in PAPER_PLUGINS}
    prof = placer.cluster.profile
    return prof.model_copy(
        update={
            "filter_plugins": tuple(n for n in prof.filter_plugins if n not in replay_only),
            "score_weights": {n: w for n, w in prof.score_weights.items() if n not in replay_only},
        }
    )


def preemption_state(
    placer: Placer, jobs: list[ReplayJob], running: set[int], k: int, source: str
) -> Cluster:
    """The state a preemption run sees (module docstring): the placer's nodes, the resident pods
    of a ``--nodes`` snapshot, every running job's pods bound where the placer put them, job
    ``k`` the only pending one (a gang as its PodGroup); :func:`~gangplan.replay.shadow.epoch_cluster`
    builds it from models (this runs on whole-GPU traces only)."""
    base = placer.cluster
    return epoch_cluster(
        base.nodes,
        jobs,
        {j: placer.nodes_of(f"j{j}") for j in running},
        [k],
        source=source,
        placer=placer,
        kube_version=base.kube_version,
        profile=engine_profile(placer),
    ).model_copy(
        update={
            "topologies": base.topologies,
            "priority_classes": {**base.priority_classes, **placer.resident().priority_classes},
        }
    )


def preempt(
    placer: Placer, jobs: list[ReplayJob], running: set[int], k: int, now: float, *, seed: int = 0
) -> Preemption:
    """The greedy engine's PostFilter for job ``k`` on the replay's state at ``now``: every
    running job bound where the placer put it, ``k`` the only pending job (module docstring)."""
    import time

    from gangplan.solver.greedy import solve_greedy

    t = time.perf_counter()
    cluster = preemption_state(
        placer, jobs, running, k, f"<preemption of {jobs[k].name} at t={now:g} s>"
    )
    res = solve_greedy(
        cluster, tie_break=placer.policy.tie_break, seed=seed, top_k=0, preemption=True
    )
    victims: set[int] = set()
    foreign: list[str] = []
    prefix = f"{NAMESPACE}/j"
    for key in res.victims:
        if key.startswith(prefix) and "-" in key[len(prefix) :]:
            victims.add(int(key[len(prefix) :].split("-", 1)[0]))
        else:
            foreign.append(key)
    return Preemption(sorted(victims), foreign, cluster, res, time.perf_counter() - t)


__all__ = [
    "JobRecord",
    "Preemption",
    "TimedRun",
    "backoff",
    "engine_profile",
    "flush_time",
    "preempt",
    "preemption_state",
    "run_timed",
]
