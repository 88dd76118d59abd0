"""Each finished run as the summary's record (:class:`gangplan.models.replay.ReplayRun`: counts,
quantiles of queueing delay and JCT, idle and fragmented GPU-hours, the shadow epochs' regret) and
the per-policy means over the seeds (:class:`~gangplan.models.replay.PolicySummary`)."""

from __future__ import annotations

import math

from gangplan.models.replay import PolicySummary, Quantiles, ReplayRun
from gangplan.replay.fill import FillRun
from gangplan.replay.timed import TimedRun


def _quantiles(values: list[float]) -> Quantiles | None:
    if not values:
        return None
    v = sorted(values)

    def rank(q: float) -> float:
        return v[max(0, math.ceil(q * len(v)) - 1)]

    return Quantiles(
        mean=round(sum(v) / len(v), 6), p50=rank(0.5), p99=rank(0.99), p999=rank(0.999), max=v[-1]
    )


def fill_record(fr: FillRun) -> ReplayRun:
    placed = sum(fr.placed)
    return ReplayRun(
        policy=fr.policy,
        seed=fr.seed,
        jobs=len(fr.jobs),
        placed=placed,
        failed=len(fr.jobs) - placed,
        requested_gpus=(fr.arrived[-1] if fr.arrived else 0) // 1000,
        allocated_gpus=(fr.allocated[-1] if fr.allocated else 0) // 1000,
        requested_gpu_milli=fr.arrived[-1] if fr.arrived else 0,
        allocated_gpu_milli=fr.allocated[-1] if fr.allocated else 0,
        unallocated_percent=fr.unallocated_percent,
        **_frag_fields(fr),
    )


def _frag_fields(fr: FillRun) -> dict:
    """The end state's fragmentation and stranded GPUs (:mod:`gangplan.replay.frag`)."""
    if not fr.frag:
        return {}
    cap = fr.capacity_milli
    idle = cap - (fr.allocated[-1] if fr.allocated else 0)
    f = fr.frag[-1]
    return {
        "frag_gpu_milli": round(f, 6),
        "fragmentation_rate_percent": round(100 * f / idle, 6) if idle else 0.0,
        "fragmentation_percent": round(100 * f / cap, 6) if cap else 0.0,
        "stranded_gpu_milli": fr.stranded[-1],
    }


def timed_record(tr: TimedRun) -> ReplayRun:
    started = [r for r in tr.records if r.start is not None]
    done = [r for r in started if r.end is not None]
    t0 = min((r.arrival for r in tr.records), default=0.0)
    t1 = max((r.end for r in done), default=t0)
    makespan = t1 - t0
    busy = idle_pending = 0.0
    cap = tr.capacity_gpus
    ch = tr.changes
    frag_ms = stranded_ms = 0.0
    fr = tr.frag if len(tr.frag) == len(ch) else [(t, 0.0, 0) for t, _, _ in ch]
    for (t, alloc, pend), nxt, (_, f, st) in zip(ch, ch[1:] + [(t1, 0, 0)], fr, strict=True):
        span = max(0.0, min(nxt[0], t1) - t)
        busy += alloc * span
        frag_ms += f * span
        stranded_ms += st * span
        if pend:
            idle_pending += (cap - alloc) * span
    return ReplayRun(
        policy=tr.policy,
        seed=tr.seed,
        jobs=len(tr.records),
        placed=len(started),
        failed=len(tr.records) - len(started),
        requested_gpus=sum(r.job.gpu_milli_total for r in tr.records) // 1000,
        allocated_gpus=int(max((a for _, a, _ in ch), default=0)),
        requested_gpu_milli=sum(r.job.gpu_milli_total for r in tr.records),
        allocated_gpu_milli=round(max((a for _, a, _ in ch), default=0) * 1000),
        unschedulable_flushes=tr.flushed,
        preemptions=tr.preemptions,
        evicted_jobs=sum(1 for r in tr.records if r.evictions),
        queueing_delay=_quantiles([r.start - r.arrival for r in started]),
        jct=_quantiles([r.end - r.arrival for r in done]),
        makespan=makespan,
        gpu_utilisation_mean=round(busy / (cap * makespan), 6) if cap and makespan else None,
        idle_gpu_hours=round((cap * makespan - busy) / 3600, 6),
        idle_gpu_hours_while_pending=round(idle_pending / 3600, 6),
        allocated_gpu_seconds=sum(r.job.gpu_milli_total * r.job.duration for r in done) / 1000,
        frag_gpu_hours=round(frag_ms / 3_600_000, 6) if len(tr.frag) == len(ch) else None,
        stranded_gpu_hours=round(stranded_ms / 3_600_000, 6) if len(tr.frag) == len(ch) else None,
        unfinished=len(tr.records) - len(done),
        **_shadow_fields(tr),
    )


def gpu_sum(values) -> int | float:
    """A sum of GPU-equivalents (ints, or 1/1000 floats on GPU-sharing traces) without float noise."""
    from gangplan.replay.shadow import as_gpus

    vals = list(values)
    if all(isinstance(v, int) for v in vals):
        return sum(vals)
    return as_gpus(round(sum(vals) * 1000))


def _shadow_fields(tr: TimedRun) -> dict:
    sh = tr.shadow
    if sh is None:
        return {}
    recs = sh.records
    return {
        "epochs": len(recs),
        "regret_gpus_total": gpu_sum(r.regret_gpus for r in recs),
        "regret_gpus_max": max((r.regret_gpus for r in recs), default=0),
        "regret_jobs_total": sum(r.regret_jobs for r in recs),
        "regret_queue_gpus_total": gpu_sum(r.exact_gpus_untried for r in recs),
        "epochs_with_regret": sum(1 for r in recs if r.regret_gpus > 0 or r.regret_jobs > 0),
        "epochs_at_limit": sum(1 for r in recs if r.status != "OPTIMAL"),
        **(
            {
                "movable_regret_jobs_total": sum(
                    r.movable_jobs_bound - r.exact_jobs
                    for r in recs
                    if r.movable_jobs_bound is not None
                ),
                "movable_epochs_at_limit": sum(
                    1
                    for r in recs
                    if r.movable_status is not None and r.movable_status != "OPTIMAL"
                ),
            }
            if sh.movable
            else {}
        ),
        "gap_max": max(
            (r.gap for r in recs if r.gap is not None and r.status != "OPTIMAL"), default=None
        ),
        "exported_epoch": sh.exported,
    }


def _mean_std(values: list[float]) -> tuple[float, float]:
    m = sum(values) / len(values)
    return round(m, 6), round(math.sqrt(sum((v - m) ** 2 for v in values) / len(values)), 6)


def policy_summary(runs: list[ReplayRun]) -> PolicySummary:
    out = PolicySummary(runs=len(runs))
    curves = [r.unallocated_percent for r in runs if r.unallocated_percent is not None]
    if curves:
        keys = list(curves[0])
        stats = {k: _mean_std([c[k] for c in curves]) for k in keys}
        out.unallocated_percent_mean = {k: v[0] for k, v in stats.items()}
        out.unallocated_percent_std = {k: v[1] for k, v in stats.items()}
    timed = [r for r in runs if r.makespan is not None]
    if timed:
        delays = [r.queueing_delay.mean for r in timed if r.queueing_delay]
        jcts = [r.jct.mean for r in timed if r.jct]
        out.queueing_delay_mean = _mean_std(delays)[0] if delays else None
        out.jct_mean = _mean_std(jcts)[0] if jcts else None
        out.makespan_mean = _mean_std([r.makespan for r in timed])[0]  # type: ignore[misc]
        out.idle_gpu_hours_mean = _mean_std([r.idle_gpu_hours for r in timed])[0]  # type: ignore[misc]
    return out


__all__ = ["fill_record", "gpu_sum", "policy_summary", "timed_record"]
