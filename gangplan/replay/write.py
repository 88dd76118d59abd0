"""``gangplan replay --out DIR``: the files a replay writes (:func:`write_outputs`).

Outputs (byte-for-byte the same for the same inputs and seeds):

* ``summary.json``: :class:`gangplan.models.replay.ReplaySummary`;
* ``timeseries.csv``: fill mode ``policy,seed,arrived_percent,unallocated_percent,frag_gpus,
  fragmentation_rate_percent,stranded_gpus`` for arrived 1..130 (the last three: the state after
  the last job arrived at or below that percent, :mod:`gangplan.replay.frag`); timed mode ``policy,seed,time,allocated_gpus,utilisation,pending_jobs`` every
  ``interval`` seconds (the state at that instant);
* ``jobs.csv``: one row per job and run: fill ``policy,seed,order,job,gpus,gpu_milli,placed`` (gpus: devices, gpu_milli: their milli); timed
  ``policy,seed,job,workers,gpus,submit,start,end,delay,jct,attempts,evictions`` (evictions: times a
  preemptor evicted the job; start / delay are of its last start, jct from its first arrival);
* ``epochs.csv`` (policies ``shadow`` and ``optimal`` only): one row per epoch, ``policy,seed,epoch,time,pending_jobs,
  greedy_gpus,exact_gpus,regret_gpus,greedy_jobs,exact_jobs,regret_jobs,status,gap,wall_s,
  exact_gpus_untried,movable_jobs,movable_jobs_bound,movable_gpus,movable_status`` (the last
  four with ``movable_bound`` only; the GPU columns are GPU-equivalents, a GPU-sharing pod counting
  ``gpu_milli / 1000``: :mod:`gangplan.replay.shadow`); the
  timed ``timeseries.csv`` has a last column ``regret_gpus``: the sum over the epochs since the
  previous row (blank for the other policies);
* ``runs/<policy>-<seed>.json``: each finished run, written as it finishes, for ``--resume``
  (:mod:`gangplan.replay.resume`); ``--parquet``: ``timeseries.parquet``, ``jobs.parquet`` (and
  ``epochs.parquet``), the same tables (:mod:`gangplan.replay.parquet`);
* ``report.html``: the plots (:mod:`gangplan.replay.report`), base64 PNGs in one page.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

from gangplan.io.errors import SnapshotError
from gangplan.replay.fill import FillRun
from gangplan.replay.output import ReplayOutput
from gangplan.replay.records import gpu_sum
from gangplan.replay.timed import TimedRun


def _csv(rows: list[list[object]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerows(rows)
    return buf.getvalue()


def _opt(x: int | None) -> str:
    return "" if x is None else str(x)


def _num(x: float | None) -> str:
    if x is None:
        return ""
    return str(int(x)) if float(x).is_integer() else repr(round(float(x), 6))


def write_outputs(
    out: ReplayOutput,
    directory: str | os.PathLike,
    *,
    interval: float = 60.0,
    report: bool = True,
    parquet: bool = False,
) -> list[Path]:
    """Write the outputs (module docstring) to ``directory``; ``report``: also ``report.html``
    (:mod:`gangplan.replay.report`); ``parquet``: also ``timeseries.parquet``, ``jobs.parquet``
    (and ``epochs.parquet``), the same tables (:mod:`gangplan.replay.parquet`, needs pyarrow)."""
    if parquet:
        from gangplan.replay.parquet import require_pyarrow

        require_pyarrow()
    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SnapshotError(str(d), f"cannot create: {e.strerror or e}") from None
    files = {"summary.json": json.dumps(out.summary.dump(), indent=2) + "\n"}
    extra: dict[str, str] = {}
    if out.summary.mode == "fill":
        ts, jobs = _fill_tables(out)
    else:
        ts, jobs = _timed_tables(out, interval)
        shadows = [tr for tr in out.timed if tr.shadow is not None]
        if shadows:
            extra["epochs.csv"] = _csv(_epochs_table(shadows))
    files["timeseries.csv"] = _csv(ts)
    files.update(extra)
    if report:
        from gangplan.replay.report import report_html

        files["report.html"] = report_html(out)
    files["jobs.csv"] = _csv(jobs)
    written = []
    for name, text in files.items():
        p = d / name
        try:
            p.write_text(text, encoding="utf-8")
        except OSError as e:
            raise SnapshotError(str(p), f"cannot write: {e.strerror or e}") from None
        written.append(p)
    if parquet:
        from gangplan.replay.parquet import write_parquet

        written += write_parquet(d, files)
    return written


def _fill_tables(out: ReplayOutput) -> tuple[list[list[object]], list[list[object]]]:
    """Fill mode's ``timeseries.csv`` and ``jobs.csv`` rows, headers first."""
    ts: list[list[object]] = [
        [
            "policy",
            "seed",
            "arrived_percent",
            "unallocated_percent",
            "frag_gpus",
            "fragmentation_rate_percent",
            "stranded_gpus",
        ]
    ]
    jobs: list[list[object]] = [["policy", "seed", "order", "job", "gpus", "gpu_milli", "placed"]]
    for fr in out.fill:
        ts += _fill_samples(fr)
        jobs += [
            [fr.policy, fr.seed, i, j.name, j.gpus, j.gpu_milli_total, int(p)]
            for i, (j, p) in enumerate(zip(fr.jobs, fr.placed, strict=True))
        ]
    return ts, jobs


def _timed_tables(
    out: ReplayOutput, interval: float
) -> tuple[list[list[object]], list[list[object]]]:
    """Timed mode's ``timeseries.csv`` (a row every ``interval`` seconds) and ``jobs.csv`` rows."""
    ts: list[list[object]] = [
        [
            "policy",
            "seed",
            "time",
            "allocated_gpus",
            "utilisation",
            "pending_jobs",
            "regret_gpus",
            "frag_gpus",
            "stranded_gpus",
        ]
    ]
    jobs: list[list[object]] = [
        [
            "policy",
            "seed",
            "job",
            "workers",
            "gpus",
            "submit",
            "start",
            "end",
            "delay",
            "jct",
            "attempts",
            "evictions",
        ]
    ]
    for tr in out.timed:
        ts += _samples(tr, interval)
        for r in tr.records:
            delay = None if r.start is None else r.start - r.arrival
            jct = None if r.end is None else r.end - r.arrival
            jobs.append(
                [
                    tr.policy,
                    tr.seed,
                    r.job.name,
                    r.job.workers,
                    r.job.gpus,
                    _num(r.arrival),
                    _num(r.start),
                    _num(r.end),
                    _num(delay),
                    _num(jct),
                    r.attempts,
                    r.evictions,
                ]
            )
    return ts, jobs


def _epochs_table(shadows: list[TimedRun]) -> list[list[object]]:
    """``epochs.csv`` rows: one per epoch of the runs with exact epochs (``shadow``, ``optimal``)."""
    ep: list[list[object]] = [
        [
            "policy",
            "seed",
            "epoch",
            "time",
            "pending_jobs",
            "greedy_gpus",
            "exact_gpus",
            "regret_gpus",
            "greedy_jobs",
            "exact_jobs",
            "regret_jobs",
            "status",
            "gap",
            "wall_s",
            "exact_gpus_untried",
            "movable_jobs",
            "movable_jobs_bound",
            "movable_gpus",
            "movable_status",
        ]
    ]
    for tr in shadows:
        ep += [
            [
                tr.policy,
                tr.seed,
                e.index,
                _num(e.time),
                e.pending_jobs,
                e.greedy_gpus,
                e.exact_gpus,
                e.regret_gpus,
                e.greedy_jobs,
                e.exact_jobs,
                e.regret_jobs,
                e.status,
                _num(e.gap),
                _num(e.wall_s),
                e.exact_gpus_untried,
                _opt(e.movable_jobs),
                _opt(e.movable_jobs_bound),
                _opt(e.movable_gpus),
                e.movable_status or "",
            ]
            for e in tr.shadow.records
        ]
    return ep


def _fill_samples(fr: FillRun) -> list[list[object]]:
    """Fill timeseries rows: unallocated % (the simulator's analysis, :func:`~gangplan.replay.fill.discrete`)
    and the state after the last job arrived at or below k %: fragment GPUs, fragmentation rate
    (% of idle) and stranded GPUs (:mod:`gangplan.replay.frag`)."""
    keys = list(fr.unallocated_percent)
    if not fr.frag:
        return [
            [fr.policy, fr.seed, k, _num(v), "", "", ""] for k, v in fr.unallocated_percent.items()
        ]
    from gangplan.replay.frag import at_arrived

    cap = fr.capacity_milli
    arrived = [0, *fr.arrived]
    allocated = [fr.initial_allocated, *fr.allocated]
    top = len(keys)
    frag = at_arrived(arrived, fr.frag, cap, top)
    stranded = at_arrived(arrived, [float(x) for x in fr.stranded], cap, top)
    used = at_arrived(arrived, [float(x) for x in allocated], cap, top)
    rows: list[list[object]] = []
    for i, k in enumerate(keys):
        free = cap - used[i]
        rows.append(
            [
                fr.policy,
                fr.seed,
                k,
                _num(fr.unallocated_percent[k]),
                _num(frag[i] / 1000),
                _num(100 * frag[i] / free if free else 0.0),
                _num(stranded[i] / 1000),
            ]
        )
    return rows


def _samples(tr: TimedRun, interval: float) -> list[list[object]]:
    ch = tr.changes
    if not ch:
        return []
    rows: list[list[object]] = []
    t, end, k = ch[0][0], ch[-1][0], 0
    cap = tr.capacity_gpus
    epochs = tr.shadow.records if tr.shadow is not None else None
    e = 0
    while t <= end:
        while k + 1 < len(ch) and ch[k + 1][0] <= t:
            k += 1
        _, alloc, pend = ch[k]
        regret = ""
        if epochs is not None:
            # the regret of the epochs in (t - interval, t] (the first sample: at or before t)
            got = []
            while e < len(epochs) and epochs[e].time <= t:
                got.append(epochs[e].regret_gpus)
                e += 1
            regret = gpu_sum(got)
        frag = (
            (_num(tr.frag[k][1] / 1000), _num(tr.frag[k][2] / 1000))
            if k < len(tr.frag)
            else ("", "")
        )
        rows.append(
            [
                tr.policy,
                tr.seed,
                _num(t),
                _num(alloc),
                _num(alloc / cap if cap else 0.0),
                pend,
                regret,
                *frag,
            ]
        )
        t += interval
    return rows


__all__ = ["write_outputs"]
