"""``gangplan replay``: read the inputs (:mod:`gangplan.replay.inputs`), run every policy under
every seed, summarise the runs (:mod:`gangplan.replay.records`); :func:`write_outputs` writes DIR
(:mod:`gangplan.replay.write`, whose docstring lists the files).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gangplan.io.errors import SnapshotError
from gangplan.models import defaults as D
from gangplan.models.cluster import Cluster
from gangplan.models.options import ReplayOptions
from gangplan.models.replay import ReplayRun, ReplaySummary
from gangplan.replay.bound import arrived_prefix, packing_bound
from gangplan.replay.fill import FillRun, capacity_milli, fill_order, run_fill
from gangplan.replay.inputs import (
    EXACT_POLICIES,
    SHADOW,
    check_arguments,
    input_caveats,
    load_inputs,
    parse_percents,
    parse_policies,
    parse_seeds,
    resolve_policies,
    trace_shapes,
)
from gangplan.replay.optimal import OPTIMAL, run_optimal
from gangplan.replay.output import ReplayOutput
from gangplan.replay.policies import Policy, typical_pods
from gangplan.replay.records import fill_record, policy_summary, timed_record
from gangplan.replay.resume import RunStore, fingerprint
from gangplan.replay.shadow import Shadow
from gangplan.replay.timed import TimedRun, run_timed
from gangplan.replay.traces import Trace
from gangplan.replay.write import write_outputs

BOUND_PERCENTS = D.BOUND_PERCENTS
"""Arrived percents at which fill mode computes the packing bound."""


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
    o = _options(options, kw)
    mode, ratio = o.mode, o.ratio
    policies, seeds = list(o.policies), list(o.seeds)
    method = check_arguments(
        mode, policies, o.arrival_scale, o.exact_time_limit, o.epoch, o.bound, o.bound_work_limit
    )
    policies, resolved = resolve_policies(policies)
    trace, cluster, nodes_label = load_inputs(trace_path, nodes, vc=o.vc, gpu_class=o.gpu_class)
    typical = typical_pods(trace_shapes(trace.jobs))
    caveats = input_caveats(mode, cluster, trace.jobs, resolved)
    fills: list[FillRun] = []
    timeds: list[TimedRun] = []
    runs: list[ReplayRun] = []
    store = _checkpoint(o, trace_path, nodes, resolved)
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
                runs.append(fill_record(fr))
                if store is not None:
                    store.save(mode, fr)
                continue
            tr = _timed_policy(
                policy, seed, o, cluster, trace, str(trace_path), resolved, typical, tick
            )
            timeds.append(tr)
            runs.append(timed_record(tr))
            if store is not None:
                store.save(mode, tr)
    for tr in timeds:
        caveats += [f"policy {tr.policy} seed {tr.seed}: {n}" for n in tr.notes]
    capacity = (fills[0].capacity_gpus if fills else timeds[0].capacity_gpus) if runs else 0
    summary = _summary(
        o,
        method,
        str(trace_path),
        trace,
        cluster,
        nodes_label,
        capacity,
        policies,
        seeds,
        caveats,
        runs,
    )
    return ReplayOutput(summary, fills, timeds)


def _options(options: ReplayOptions | None, kw: dict[str, Any]) -> ReplayOptions:
    """``replay()``'s options: ``options``, or a ReplayOptions of its keyword options."""
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
    return options


def _timed_policy(
    policy: str,
    seed: int,
    o: ReplayOptions,
    cluster: Cluster,
    trace: Trace,
    trace_path: str,
    resolved: dict[str, Policy],
    typical,
    tick: Callable[[int], None],
) -> TimedRun:
    """One timed run of ``policy`` under ``seed``: the greedy run (with the per-epoch exact
    solves of ``shadow``), or the per-epoch optimum's own run (``optimal``)."""
    exact_time_limit, epoch, export_epoch, movable_bound = (
        o.exact_time_limit,
        o.epoch,
        o.export_epoch,
        o.movable_bound,
    )
    arrival_scale = o.arrival_scale
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
    return tr


def _summary(
    o: ReplayOptions,
    method: str,
    trace_path: str,
    trace: Trace,
    cluster: Cluster,
    nodes_label: str,
    capacity: int,
    policies: list[str],
    seeds: list[int],
    caveats: list[str],
    runs: list[ReplayRun],
) -> ReplaySummary:
    """The summary of the runs, with fill mode's packing bound (:func:`fill_bound`)."""
    mode, arrival_scale, ratio = o.mode, o.arrival_scale, o.ratio
    bound_percents, bound_work_limit = o.bound_percents, o.bound_work_limit
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
    return ReplaySummary(
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
        policies={p: policy_summary([r for r in runs if r.policy == p]) for p in policies},
        runs=runs,
    )


def _checkpoint(
    o: ReplayOptions, trace_path, nodes, resolved: dict[str, Policy]
) -> RunStore | None:
    """The run store of ``o.checkpoint`` (:func:`_run_store`), its fingerprint over the inputs and
    the flags that change a run."""
    mode, vc, arrival_scale, ratio, exact_time_limit, epoch, export_epoch = (
        o.mode,
        o.vc,
        o.arrival_scale,
        o.ratio,
        o.exact_time_limit,
        o.epoch,
        o.export_epoch,
    )
    movable_bound, resume, gpu_class, checkpoint = (
        o.movable_bound,
        o.resume,
        o.gpu_class,
        o.checkpoint,
    )
    return _run_store(
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
        runs.append(fill_record(fr))
        return True
    tr = store.load_timed(policy, seed, jobs)
    if tr is None:
        return False
    timeds.append(tr)
    runs.append(timed_record(tr))
    return True


__all__ = [
    "BOUND_PERCENTS",
    "EXACT_POLICIES",
    "SHADOW",
    "ReplayOutput",
    "fill_bound",
    "load_inputs",
    "parse_percents",
    "parse_policies",
    "parse_seeds",
    "replay",
    "trace_shapes",
    "write_outputs",
]
