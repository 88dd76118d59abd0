"""``gangplan replay``: read the inputs, run every policy under every seed, write DIR.

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
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gangplan.io.errors import SnapshotError
from gangplan.models import defaults as D
from gangplan.models.cluster import Cluster
from gangplan.models.options import ReplayOptions
from gangplan.models.replay import PolicySummary, Quantiles, ReplayRun, ReplaySummary
from gangplan.replay.bound import arrived_prefix, packing_bound
from gangplan.replay.fill import FillRun, capacity_milli, fill_order, run_fill
from gangplan.replay.optimal import OPTIMAL, run_optimal
from gangplan.replay.output import ReplayOutput
from gangplan.replay.policies import POLICIES, Policy, is_policy_file, resolve_policy, typical_pods
from gangplan.replay.resume import RunStore, fingerprint
from gangplan.replay.shadow import Shadow
from gangplan.replay.timed import TimedRun, run_timed
from gangplan.replay.traces import (
    Trace,
    philly_nodes,
    read_nodes,
    read_trace,
    unlimited_philly_nodes,
)

SHARING_NOTE = (
    "GPU sharing: {n} of {total} trace jobs ask for a share of a GPU (gpu_milli < 1000); GPUs are devices of 1000 milli "
    "each (DRA consumable capacity semantics, gangplan.replay.gpushare), and arrived / allocated / unallocated count GPU milli "
    "(requestedGpus / allocatedGpus: milli // 1000)."
)


def trace_shapes(jobs) -> list[tuple[int, int, int, tuple[str, ...]]]:
    """(non-zero cpu milli, GPUs, GPU milli, models) of every pod of the trace, for
    :func:`gangplan.replay.policies.typical_pods` (each worker of a gang counts)."""
    return [
        (j.cpu_milli or 100, j.gpu, j.gpu_milli if j.gpu else 0, j.gpu_models if j.gpu else ())
        for j in jobs
        for _ in range(j.workers)
    ]


def parse_seeds(text: str) -> list[int]:
    """``42..51``, ``42`` or ``1,5,9``.

    >>> parse_seeds("42..44"), parse_seeds("7"), parse_seeds("3,1")
    ([42, 43, 44], [7], [3, 1])
    """
    t = text.strip()
    try:
        if ".." in t:
            a, b = t.split("..", 1)
            lo, hi = int(a), int(b)
            if hi < lo:
                raise ValueError
            return list(range(lo, hi + 1))
        return [int(x) for x in t.split(",") if x.strip()]
    except ValueError:
        raise SnapshotError(
            "<arguments>", f"expected A..B, N or N,M,..., got {text!r}", field="--seeds"
        ) from None


SHADOW = "shadow"
"""The exact ``shadow`` policy (timed mode): the default profile's greedy run, with a per-epoch
exact solve on its own state (:mod:`gangplan.replay.shadow`)."""
EXACT_POLICIES = (SHADOW, OPTIMAL)
"""The timed-mode policies with per-epoch exact solves; ``optimal``: the per-epoch optimum drives
its own run (:mod:`gangplan.replay.optimal`)."""


def parse_policies(text: str) -> list[str]:
    out = [p.strip() for p in text.split(",") if p.strip()]
    bad = [
        p for p in out if p not in POLICIES and p not in EXACT_POLICIES and not is_policy_file(p)
    ]
    if bad or not out:
        raise SnapshotError(
            "<arguments>",
            f"unknown policy {bad[0] if bad else text!r} (known: {', '.join(POLICIES)}, {', '.join(EXACT_POLICIES)}, "
            "or a KubeSchedulerConfiguration file)",
            field="--policy",
        )
    return out


def resolve_policies(texts: list[str]) -> tuple[list[str], dict[str, Policy]]:
    """The run names in order and the greedy policies by name: built-in names, and files
    (:func:`gangplan.replay.policies.policy_from_file`, named by their stem)."""
    names: list[str] = []
    resolved: dict[str, Policy] = {}
    for t in texts:
        if t in EXACT_POLICIES:
            names.append(t)
            continue
        pol = resolve_policy(t, taken=(*EXACT_POLICIES, *names))
        if pol.name in resolved:
            raise SnapshotError("<arguments>", f"policy {pol.name!r} given twice", field="--policy")
        names.append(pol.name)
        resolved[pol.name] = pol
    return names, resolved


def _quantiles(values: list[float]) -> Quantiles | None:
    if not values:
        return None
    v = sorted(values)

    def rank(q: float) -> float:
        return v[max(0, math.ceil(q * len(v)) - 1)]

    return Quantiles(
        mean=round(sum(v) / len(v), 6), p50=rank(0.5), p99=rank(0.99), p999=rank(0.999), max=v[-1]
    )


BOUND_PERCENTS = D.BOUND_PERCENTS
"""Arrived percents at which fill mode computes the packing bound."""


BOUND_METHODS = ("lp", "patterns", "none")
"""``--bound``: the aggregated LP (milliseconds, weak), the pattern bound (column generation,
about a minute per arrived percent and seed on the paper's cluster), or none."""


def fill_bound(
    cluster: Cluster,
    jobs,
    seeds: list[int],
    ratio: float,
    *,
    method: str = "lp",
    percents: tuple[int, ...] = BOUND_PERCENTS,
    work_limit: float = 60.0,
) -> tuple[dict[str, float], dict[str, float] | None]:
    """The packing bound (:func:`gangplan.replay.bound.packing_bound`, ``method`` lp or
    patterns) of the jobs arrived up to each of ``percents`` in each seed's fill order (the same
    for every policy), as the mean unallocated GPU % over the seeds: no placement of that
    arrived multiset leaves less. Second: for patterns, the largest gap (points of capacity)
    over the seeds per percent, 0 where every generation converged (a bound stopped at
    ``work_limit`` is still a bound). The pattern pool is shared by every call (one cluster)."""
    cap = capacity_milli(cluster)
    per: dict[int, list[float]] = {k: [] for k in percents}
    gaps: dict[int, float] = {k: 0.0 for k in percents}
    pool: dict = {}
    options = {"work_limit": work_limit, "pool": pool} if method == "patterns" else {}
    for seed in seeds:
        order, _ = fill_order(cluster, jobs, seed, ratio)
        for k in percents:
            b = packing_bound(cluster, arrived_prefix(order, cap, k), method=method, **options)
            per[k].append(b.unallocated_percent)
            gaps[k] = max(gaps[k], b.gap_percent or 0.0)
    means = {str(k): round(sum(v) / len(v), 4) for k, v in per.items() if v}
    return means, ({str(k): round(g, 4) for k, g in gaps.items()} if method == "patterns" else None)


def parse_percents(text: str) -> tuple[int, ...]:
    """``--bound-percents``: comma-separated integers in 1..130."""
    try:
        out = tuple(sorted({int(x) for x in text.split(",") if x.strip()}))
    except ValueError:
        out = ()
    if not out or out[0] < 1 or out[-1] > 130:
        raise SnapshotError(
            "<arguments>",
            f"expected comma-separated integers in 1..130, got {text!r}",
            field="--bound-percents",
        )
    return out


def load_inputs(
    trace_path: str | os.PathLike,
    nodes: str | os.PathLike | None,
    *,
    vc: str | None = None,
    gpu_class: str | None = None,
) -> tuple[Trace, Cluster, str]:
    trace = read_trace(trace_path, vc=vc)
    if nodes is not None and str(nodes) != "unlimited":
        return trace, read_nodes(nodes, gpu_class=gpu_class), str(nodes)
    if gpu_class is not None:
        raise SnapshotError(
            "<arguments>",
            "--gpu-class names the DeviceClass of a --nodes snapshot's GPUs; there is no snapshot",
            field="--gpu-class",
        )
    if trace.vc_nodes is not None and nodes is None:
        return (
            trace,
            Cluster(nodes=tuple(philly_nodes(trace.vc_nodes))),
            f"philly VC {vc} ({trace.vc_nodes} nodes x 8 GPUs)",
        )
    if str(nodes) == "unlimited":
        n = unlimited_philly_nodes(trace.jobs)
        return (
            trace,
            Cluster(nodes=tuple(philly_nodes(n))),
            f"unlimited ({n} nodes x 8 GPUs, one per worker)",
        )
    raise SnapshotError(
        "<arguments>",
        "NODES is needed (an openb node CSV, a snapshot, or 'unlimited'), or --vc NAME with the Philly trace",
        field="--nodes",
    )


def replay(
    trace_path: str | os.PathLike,
    nodes: str | os.PathLike | None,
    *,
    options: ReplayOptions | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    **kw: Any,
) -> ReplayOutput:
    """Run the replay with ``options`` (:class:`gangplan.models.options.ReplayOptions`, or its
    fields as keyword arguments: ``mode=``, ``policies=``, ``seeds=``, ...); ``progress(label,
    done, total)`` is called as jobs finish.

    Policy ``shadow`` (timed mode only): the default profile's greedy run plus, at each epoch (an
    event instant with pending jobs, or the first in each ``epoch`` seconds), an exact solve of
    at most ``exact_time_limit`` seconds on its state; ``export_epoch`` = (N, DIR) writes epoch
    N's state to ``DIR/epoch-N.yaml``. Policy ``optimal`` (timed mode only): the per-epoch
    optimum (running pods fixed) starts the jobs of its own run, with the same epochs, limit and
    export (:mod:`gangplan.replay.optimal`). ``movable_bound``: at each epoch of those policies,
    also the bound with running pods movable (:func:`gangplan.replay.shadow.movable_bound`), one
    more solve per epoch. Fill mode with ``bound`` (True or ``"lp"``: the aggregated LP;
    ``"patterns"``: the pattern bound, at most ``bound_work_limit`` CP-SAT deterministic seconds
    each; False or ``"none"``: no bound): the packing bound at arrived ``bound_percents``
    (10, 20, .., 130 %; :func:`fill_bound`).

    ``checkpoint`` = DIR: each finished (policy, seed) run is written to ``DIR/runs`` as it
    finishes; with ``resume`` the runs found there (of the same inputs and flags, else
    SnapshotError) are read back instead of run again (:mod:`gangplan.replay.resume`).

    ``gpu_class``: the DeviceClass whose ResourceSlice devices are a ``--nodes`` snapshot's GPUs
    (default: the one named like a GPU; :mod:`gangplan.replay.dragpus`)."""
    if options is not None and kw:
        raise TypeError(
            f"replay() takes options= or keyword options, not both (got {', '.join(sorted(kw))})"
        )
    if options is None:
        kw = {
            k: (tuple(v) if k in ("policies", "seeds", "bound_percents") and v is not None else v)
            for k, v in kw.items()
        }
        kw = {
            k: v for k, v in kw.items() if not (k in ("policies", "seeds") and not v)
        }  # empty / None: the default
        if "checkpoint" in kw and kw["checkpoint"] is not None:
            kw["checkpoint"] = str(kw["checkpoint"])
        options = ReplayOptions(**kw)
    o = options
    mode, vc, arrival_scale, ratio, exact_time_limit, epoch, export_epoch = (
        o.mode,
        o.vc,
        o.arrival_scale,
        o.ratio,
        o.exact_time_limit,
        o.epoch,
        o.export_epoch,
    )
    bound, movable_bound, bound_percents, bound_work_limit, resume, gpu_class = (
        o.bound,
        o.movable_bound,
        o.bound_percents,
        o.bound_work_limit,
        o.resume,
        o.gpu_class,
    )
    checkpoint = o.checkpoint
    policies, seeds = list(o.policies), list(o.seeds)
    method = _check_arguments(
        mode, policies, arrival_scale, exact_time_limit, epoch, bound, bound_work_limit
    )
    policies, resolved = resolve_policies(policies)
    trace, cluster, nodes_label = load_inputs(trace_path, nodes, vc=vc, gpu_class=gpu_class)
    typical = typical_pods(trace_shapes(trace.jobs))
    caveats = _caveats(mode, cluster, trace.jobs, resolved)
    fills: list[FillRun] = []
    timeds: list[TimedRun] = []
    runs: list[ReplayRun] = []
    store = _run_store(
        checkpoint,
        resume,
        trace_path,
        nodes,
        vc=vc,
        mode=mode,
        arrival_scale=arrival_scale,
        ratio=ratio,
        exact_time_limit=exact_time_limit,
        epoch=epoch,
        export_epoch=export_epoch,
        **({"movable_bound": True} if movable_bound else {}),
        **({"gpu_class": gpu_class} if gpu_class is not None else {}),
        **(
            {"policy_files": {n: _file_hash(p.source) for n, p in resolved.items() if p.source}}
            if any(p.source for p in resolved.values())
            else {}
        ),
    )
    for policy in policies:
        for seed in seeds:
            label = f"{policy} seed {seed}"
            if store is not None and _resumed(
                store, mode, policy, seed, cluster, trace.jobs, ratio, fills, timeds, runs
            ):
                if progress is not None:
                    progress(label, len(trace.jobs), len(trace.jobs))
                continue
            done = [0]

            def tick(n: int, label=label, done=done) -> None:
                done[0] += n
                if progress is not None:
                    progress(label, done[0], len(trace.jobs))

            if mode == "fill":
                fr = run_fill(
                    cluster,
                    trace.jobs,
                    resolved[policy],
                    seed,
                    typical=typical,
                    ratio=ratio,
                    progress=tick,
                )
                fills.append(fr)
                runs.append(_fill_run(fr))
                if store is not None:
                    store.save(mode, fr)
                continue
            shadow = None
            if policy in EXACT_POLICIES:
                shadow = Shadow(
                    time_limit=exact_time_limit,
                    epoch=epoch,
                    seed=seed,
                    export=export_epoch,
                    movable=movable_bound,
                )
                shadow.check(trace.jobs, str(trace_path), policy)
            if policy == OPTIMAL:
                assert shadow is not None
                tr = run_optimal(
                    cluster,
                    trace.jobs,
                    seed,
                    typical=typical,
                    arrival_scale=arrival_scale,
                    progress=tick,
                    shadow=shadow,
                )
            else:
                tr = run_timed(
                    cluster,
                    trace.jobs,
                    resolved.get(policy, "default"),
                    seed,
                    typical=typical,
                    arrival_scale=arrival_scale,
                    progress=tick,
                    shadow=shadow,
                )
            tr.policy = policy
            tr.shadow = shadow
            timeds.append(tr)
            runs.append(_timed_run(tr))
            if store is not None:
                store.save(mode, tr)
    for tr in timeds:
        caveats += [f"policy {tr.policy} seed {tr.seed}: {n}" for n in tr.notes]
    capacity = (fills[0].capacity_gpus if fills else timeds[0].capacity_gpus) if runs else 0
    bound_means = bound_gaps = None
    if mode == "fill" and method != "none" and cluster.nodes:
        bound_means, bound_gaps = fill_bound(
            cluster,
            trace.jobs,
            seeds,
            ratio,
            method=method,
            percents=bound_percents,
            work_limit=bound_work_limit,
        )
    summary = ReplaySummary(
        mode=mode,  # type: ignore[arg-type]
        trace=str(trace_path),
        trace_kind=trace.kind,  # type: ignore[arg-type]
        nodes=nodes_label,
        node_count=len(cluster.nodes),
        capacity_gpus=capacity,
        trace_jobs=len(trace.jobs),
        seeds=seeds,
        inflation_ratio=ratio if mode == "fill" else None,
        packing_bound_unallocated_percent=bound_means,
        packing_bound_method=method if bound_means is not None else None,
        packing_bound_gap_percent=bound_gaps,
        arrival_scale=arrival_scale if mode == "timed" else None,
        caveats=caveats,
        policies={p: _policy_summary([r for r in runs if r.policy == p]) for p in policies},
        runs=runs,
    )
    return ReplayOutput(summary, fills, timeds)


def _check_arguments(
    mode: str,
    policies: list[str],
    arrival_scale: float,
    exact_time_limit: float,
    epoch: float | None,
    bound: bool | str,
    bound_work_limit: float,
) -> str:
    """Bad arguments as the CLI names them (exit 2); the packing bound's method."""
    if mode not in ("fill", "timed"):
        raise SnapshotError("<arguments>", f"expected fill or timed, got {mode!r}", field="--mode")
    if arrival_scale <= 0:
        raise SnapshotError(
            "<arguments>",
            f"expected a positive number, got {arrival_scale}",
            field="--arrival-scale",
        )
    for p in EXACT_POLICIES:
        if p in policies and mode != "timed":
            raise SnapshotError(
                "<arguments>", f"the {p} policy needs --mode timed", field="--policy"
            )
    if exact_time_limit <= 0:
        raise SnapshotError(
            "<arguments>",
            f"expected a positive number, got {exact_time_limit}",
            field="--exact-time-limit",
        )
    if epoch is not None and epoch <= 0:
        raise SnapshotError(
            "<arguments>", f"expected a positive number, got {epoch}", field="--epoch"
        )
    method = "lp" if bound is True else "none" if bound is False else bound
    if method not in BOUND_METHODS:
        raise SnapshotError(
            "<arguments>",
            f"expected one of {', '.join(BOUND_METHODS)}, got {bound!r}",
            field="--bound",
        )
    if bound_work_limit <= 0:
        raise SnapshotError(
            "<arguments>",
            f"expected a positive number, got {bound_work_limit}",
            field="--bound-work-limit",
        )
    return method


def _caveats(mode: str, cluster: Cluster, jobs: list, resolved: dict) -> list[str]:
    """What the summary says about the inputs before any run: the loader's warnings, policy
    files, GPU sharing, preferred topology keys, timed mode's rules."""
    caveats = list(cluster.warnings)
    for pol in resolved.values():
        if pol.source:
            caveats.append(
                f"policy {pol.name}: the KubeSchedulerConfiguration {pol.source}, with the replay's GPU-share filter; ties random, GPUs {pol.selection} fit"
            )
            caveats += [f"policy {pol.name}: {w}" for w in pol.warnings]
    frac = sum(j.fractional for j in jobs)
    if frac:
        caveats.append(SHARING_NOTE.format(n=frac, total=len(jobs)))
    if any(j.preferred_topology_key for j in jobs):
        caveats.append(
            "preferred_topology_key is read but not used: kube-scheduler's PodGroup has only a required topology (schedulingConstraints.topology[].key, KEP-5732), so no greedy policy prefers a domain (required_topology_key is placed by the workload cycle's placement algorithm)"
        )
    if mode == "timed":
        caveats.append(
            "timed mode: a failed job is retried after an event that may help (a departure, or for a v1.37 gang of more than one pod "
            "any placement; then after its backoff) or, seeing none, by the 5-minute unschedulable flush (a 30 s loop); preemption as the profile says "
            "(DefaultPreemption, the greedy engine's PostFilter, only when a running job has a lower priority): victims terminate at once, each "
            "evicted job restarts from the queue with its full duration, and the preemptor is retried at that instant"
        )
    return caveats


def _file_hash(path: str) -> str:
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _run_store(
    checkpoint, resume: bool, trace_path, nodes, *, vc, mode: str, **flags
) -> RunStore | None:
    """The per-run checkpoint of ``replay(checkpoint=DIR)`` (:mod:`gangplan.replay.resume`)."""
    if checkpoint is None:
        if resume:
            raise SnapshotError(
                "<arguments>", "--resume needs --out DIR (the replay to resume)", field="--resume"
            )
        return None
    if flags.get("export_epoch") is not None:
        flags["export_epoch"] = list(flags["export_epoch"])
    return RunStore(
        checkpoint,
        fingerprint(trace_path, nodes, vc=vc, flags={"mode": mode, **flags}),
        resume=resume,
    )


def _resumed(
    store: RunStore,
    mode: str,
    policy: str,
    seed: int,
    cluster: Cluster,
    jobs,
    ratio: float,
    fills: list[FillRun],
    timeds: list[TimedRun],
    runs: list[ReplayRun],
) -> bool:
    """Read (policy, seed)'s finished run from the store into the lists; False if it has none."""
    if mode == "fill":
        fr = store.load_fill(policy, seed, cluster, jobs, ratio)
        if fr is None:
            return False
        fills.append(fr)
        runs.append(_fill_run(fr))
        return True
    tr = store.load_timed(policy, seed, jobs)
    if tr is None:
        return False
    timeds.append(tr)
    runs.append(_timed_run(tr))
    return True


def _fill_run(fr: FillRun) -> ReplayRun:
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


def _timed_run(tr: TimedRun) -> ReplayRun:
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


def _gpu_sum(values) -> int | float:
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
        "regret_gpus_total": _gpu_sum(r.regret_gpus for r in recs),
        "regret_gpus_max": max((r.regret_gpus for r in recs), default=0),
        "regret_jobs_total": sum(r.regret_jobs for r in recs),
        "regret_queue_gpus_total": _gpu_sum(r.exact_gpus_untried for r in recs),
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


def _policy_summary(runs: list[ReplayRun]) -> PolicySummary:
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
        jobs: list[list[object]] = [
            ["policy", "seed", "order", "job", "gpus", "gpu_milli", "placed"]
        ]
        for fr in out.fill:
            ts += _fill_samples(fr)
            jobs += [
                [fr.policy, fr.seed, i, j.name, j.gpus, j.gpu_milli_total, int(p)]
                for i, (j, p) in enumerate(zip(fr.jobs, fr.placed, strict=True))
            ]
    else:
        ts = [
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
        jobs = [
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
        shadows = [tr for tr in out.timed if tr.shadow is not None]
        if shadows:
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
            extra["epochs.csv"] = _csv(ep)
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
            regret = _gpu_sum(got)
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


__all__ = [
    "ReplayOutput",
    "load_inputs",
    "parse_policies",
    "parse_seeds",
    "replay",
    "write_outputs",
]
