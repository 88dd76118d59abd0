"""The ``optimal`` exact policy of a timed replay (issue 22, item 4b): the per-epoch optimum
drives its own run.

The clock is timed mode's (:mod:`gangplan.replay.timed`: arrivals at ``submit / arrival_scale``,
completion at start + duration, completions applied before arrivals) but no scheduling queue:
at each epoch every pending job is a candidate, whatever its backoff, and the jobs started are
those of the exact engine's optimum on the state of that instant (running pods fixed: a started
job never moves; no preemption). An epoch is an event instant at which something changed (an
arrival or a departure) while jobs are pending; with ``epoch=S``, the instants ``k S`` after such
a change (batch rounds: a job arriving between two rounds waits for the next).

Per epoch (:func:`gangplan.replay.shadow.solve_epoch`, the one epoch solve it shares with the
``shadow`` policy):

1. the candidates: pending jobs passing the placer's necessary test
   (:meth:`~gangplan.replay.engine.Placer._may_fit`: enough device slots and cpu in all); a job
   failing it cannot start in any placement of this state;
2. the hint: the default profile's greedy tries the candidates in PrioritySort order (priority,
   then arrival) from this state, each placement assumed before the next, then all forgotten;
3. if greedy starts every candidate, that is an optimum (every decision tier at its upper
   bound: all candidates admitted, all their pods placed), proven by counting, and it is used;
   otherwise CP-SAT (:func:`gangplan.solver.exact.solve_exact`, at most ``time_limit`` seconds,
   the hint as its start, so never worse than greedy) decides, and its admitted jobs start on
   the nodes it chose: on a GPU-sharing trace on the devices its Result names (each pod's
   claim, :func:`gangplan.replay.shadow.solve_epoch`), else devices by the placer's selection
   (whole GPUs: which free ones is immaterial). A solve stopped at its limit drives the run with its
   best solution and is recorded as FEASIBLE with its gap, never as an optimum.

The epoch records (``epochs.csv``) hold greedy's and the optimum's GPUs and jobs from the same
state (``regret_*``: what the optimum starts beyond greedy at that instant, on the optimal run's
own state) and, with ``movable``, the bound with running pods movable
(:func:`gangplan.replay.shadow.movable_bound`).

The optimum is per epoch (myopic): it maximises the jobs started now, highest priority first,
then GPUs placed, not delay or JCT over the horizon. GPU-sharing traces are solved with DRA
consumable capacity (:mod:`gangplan.replay.shadow`, "GPU sharing"): running pods keep the
devices and shares they hold.
"""

from __future__ import annotations

import heapq
import math

from gangplan.models.cluster import Cluster
from gangplan.replay.engine import Placer
from gangplan.replay.frag import FragMeter
from gangplan.replay.policies import TypicalPod
from gangplan.replay.shadow import (
    EpochRecord,
    Shadow,
    epoch_objects,
    gpus_of,
    sharing,
    solve_epoch,
    write_epoch,
)
from gangplan.replay.timed import JobRecord, TimedRun
from gangplan.replay.traces import ReplayJob

OPTIMAL = "optimal"
COMPLETE, ARRIVE, TICK = 0, 1, 2


def _greedy_hint(placer: Placer, jobs: list[ReplayJob], order: list[int]) -> dict[int, list[str]]:
    """What the greedy would start from this state, trying ``order`` in turn (then undone)."""
    out: dict[int, list[str]] = {}
    for k in order:
        if placer.place(jobs[k], f"hint-{k}"):
            out[k] = placer.nodes_of(f"hint-{k}")
    for k in out:
        placer.release(f"hint-{k}")
    return out


def run_optimal(
    base: Cluster,
    jobs: list[ReplayJob],
    seed: int,
    *,
    typical: list[TypicalPod],
    arrival_scale: float = 1.0,
    progress=None,
    shadow: Shadow,
) -> TimedRun:
    """Replay ``jobs`` on ``base`` started by the per-epoch optimum; ``shadow`` holds the solve
    settings (time limit, ``epoch``, ``movable``, export) and receives the epoch records."""
    placer = Placer(base, "default", seed=seed, typical=typical)
    records = [JobRecord(j, j.submit / arrival_scale) for j in jobs]
    run = TimedRun(OPTIMAL, seed, placer.capacity_gpus, records, shadow=shadow)
    meter = FragMeter(placer.devices, typical)
    events: list[tuple[float, int, int]] = [(r.arrival, ARRIVE, k) for k, r in enumerate(records)]
    heapq.heapify(events)
    pending: set[int] = set()
    running: dict[int, list[str]] = {}
    tick_set = False
    dirty = False
    last = (None, None)
    while events:
        now = events[0][0]
        tick = False
        while events and events[0][0] == now:
            _, kind, k = heapq.heappop(events)
            if kind == COMPLETE:
                placer.release(f"j{k}")
                running.pop(k)
                dirty = True
                if progress is not None:
                    progress(1)
            elif kind == ARRIVE:
                pending.add(k)
                dirty = True
            else:
                tick, tick_set = True, False
        if shadow.epoch is not None and dirty and pending and not tick and not tick_set:
            heapq.heappush(events, ((math.floor(now / shadow.epoch) + 1) * shadow.epoch, TICK, -1))
            tick_set = True
        if dirty and pending and (shadow.epoch is None or tick):
            dirty = False
            _epoch(placer, jobs, records, run, shadow, now, running, pending, events)
        state = (placer.allocated_gpus, len(pending))
        if state != last:
            run.changes.append((now, *state))
            run.frag.append((now, *meter.sample()[:2]))
            last = state
    return run


def _epoch(
    placer: Placer,
    jobs: list[ReplayJob],
    records: list[JobRecord],
    run: TimedRun,
    shadow: Shadow,
    now: float,
    running: dict[int, list[str]],
    pending: set[int],
    events: list,
) -> None:
    order = sorted(pending, key=lambda k: (-jobs[k].priority, records[k].arrival, k))
    cand = [k for k in order if placer._may_fit(jobs[k])]
    if not cand:
        return
    for k in cand:
        records[k].attempts += 1
    hint = _greedy_hint(placer, jobs, cand)
    index = len(shadow.records)
    nodes = placer.cluster.nodes
    held = (
        {k: placer.devices_of_job(f"j{k}") for k in running if jobs[k].gpu}
        if sharing(jobs)
        else None
    )
    chosen_devices: dict[int, list[tuple[int, ...]]] = {}
    if len(hint) == len(cand):
        chosen = hint
        gpus = gpus_of(jobs, {k: len(v) for k, v in hint.items()})
        rec = EpochRecord(
            index=index,
            time=now,
            pending_jobs=len(cand),
            greedy_gpus=gpus,
            exact_gpus=gpus,
            greedy_jobs=len(hint),
            exact_jobs=len(hint),
            status="OPTIMAL",
            gap=0.0,
            wall_s=0.0,
        )
        path = shadow.export_path(index)
        if path is not None:
            write_epoch(
                epoch_objects(nodes, jobs, running, cand, held, placer=placer),
                path,
                now,
                index,
                len(running),
                len(cand),
            )
    else:
        es = solve_epoch(
            now,
            index,
            nodes,
            jobs,
            running,
            cand,
            hint,
            time_limit=shadow.time_limit,
            seed=shadow.seed,
            export=shadow.export_path(index),
            devices=held,
            placer=placer,
        )
        chosen, rec, chosen_devices = es.placements, es.record, es.devices
        if len(chosen) < len(hint):  # never: the hint is the solver's start (kept as a guard)
            raise AssertionError(
                f"epoch {index}: the exact engine started {len(chosen)} jobs, greedy {len(hint)}"
            )
    rec.pending_jobs = len(pending)
    shadow.record(rec, nodes, jobs, dict(running), sorted(pending), chosen, placer=placer)
    for k in sorted(chosen):
        placer.force(jobs[k], f"j{k}", chosen[k], chosen_devices.get(k))
        running[k] = placer.nodes_of(f"j{k}")
        pending.discard(k)
        r = records[k]
        r.start, r.end = now, now + r.job.duration
        heapq.heappush(events, (r.end, COMPLETE, k))


__all__ = ["OPTIMAL", "run_optimal"]
