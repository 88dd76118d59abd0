"""``gangplan replay``: its flags and what it prints (the replay itself is :mod:`gangplan.replay`);
registered on the app by :mod:`gangplan.cli`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from gangplan.cli_common import err, out
from gangplan.cli_common import spinner as _spinner
from gangplan.cli_options import bad_input as _bad_input
from gangplan.cli_options import out_option
from gangplan.io.errors import SnapshotError
from gangplan.models import defaults as D

# ---- the flags of replay ----------------------------------------------------------------------
TraceArg = Annotated[
    Path,
    typer.Argument(
        help="The jobs: an openb pod CSV, the Philly job CSV, or gangplan's jobs.csv (X.csv falls back to X.csv.xz)."
    ),
]
NodesOpt = Annotated[
    str | None,
    typer.Option(
        "--nodes",
        help="The cluster: an openb node CSV, a snapshot (its nodes and bound pods), or 'unlimited' (one 8-GPU node per worker).",
    ),
]
ModeOpt = Annotated[
    str,
    typer.Option(
        "--mode",
        help="fill (the FGD paper's experiment: one attempt each, nothing leaves) or timed (a discrete-event clock).",
    ),
]
PolicyOpt = Annotated[
    str,
    typer.Option(
        "--policy",
        help="Comma-separated: default, mostallocated, bestfit, fgd, random, packing, dotprod, clustering; shadow (timed: the default greedy plus a per-epoch exact solve on its state, running pods fixed: the regret); optimal (timed: the per-epoch exact optimum starts the jobs of its own run); or a KubeSchedulerConfiguration file (named by its stem).",
    ),
]
SeedsOpt = Annotated[str, typer.Option("--seeds", help="A..B, N or N,M,...")]
OutDirOpt = Annotated[
    Path | None,
    out_option("Write summary.json, timeseries.csv and jobs.csv here.", short=False),
]
ArrivalScaleOpt = Annotated[
    float,
    typer.Option(
        "--arrival-scale",
        help="Timed mode: divide submit times by k (k > 1 compresses inter-arrival times).",
    ),
]
VcOpt = Annotated[
    str | None,
    typer.Option(
        "--vc",
        help="Philly: keep this VC's jobs and size the cluster from philly_vc.csv beside the trace (nodes x 8 GPUs).",
    ),
]
IntervalOpt = Annotated[
    float, typer.Option("--interval", help="Timed mode: seconds between timeseries.csv rows.")
]
EpochOpt = Annotated[
    float | None,
    typer.Option(
        "--epoch",
        help="Shadow: solve at the first event instant with pending jobs in each S seconds; optimal: solve at the instants k*S after a change (default: every event instant with pending jobs).",
    ),
]
ExactTimeLimitOpt = Annotated[
    float,
    typer.Option(
        "--exact-time-limit",
        help="Shadow / optimal: seconds per epoch's exact solve (one at the limit is a bound with its gap).",
    ),
]
ExportEpochOpt = Annotated[
    int | None,
    typer.Option(
        "--export-epoch",
        help="Shadow / optimal: write epoch N's state (running pods bound, pending jobs) to DIR/epoch-N.yaml, a snapshot for gangplan diff; needs --out.",
    ),
]
BoundOpt = Annotated[
    str,
    typer.Option(
        "--bound",
        help="Fill mode's packing bound: lp (the aggregated LP, milliseconds, weak), patterns (column generation over node patterns, about a minute per arrived percent and seed on 1,213 nodes; try --bound-percents 100) or none.",
    ),
]
BoundPercentsOpt = Annotated[
    str,
    typer.Option(
        "--bound-percents",
        help="Fill: the arrived percents (1..130, comma-separated) at which the packing bound is computed.",
    ),
]
BoundWorkLimitOpt = Annotated[
    float,
    typer.Option(
        "--bound-work-limit",
        help="Fill with --bound patterns: CP-SAT deterministic seconds per bound's column generation (stopped there it is still a bound, with its gap).",
    ),
]
MovableBoundOpt = Annotated[
    bool,
    typer.Option(
        "--movable-bound",
        help="Shadow / optimal: at each epoch also the bound with running pods movable (every running job still runs, anywhere): epochs.csv movable_* columns; one more solve per epoch.",
    ),
]
ParquetOpt = Annotated[
    bool,
    typer.Option(
        "--parquet",
        help="Also write timeseries.parquet and jobs.parquet (and epochs.parquet) beside the CSVs; needs pyarrow: pip install 'gangplan[parquet]'.",
    ),
]
ResumeOpt = Annotated[
    bool,
    typer.Option(
        "--resume",
        help="Continue the killed replay in --out DIR: its finished runs (DIR/runs, each saved as it finishes) are read back, the rest run; exit 2 if they came from other inputs or flags.",
    ),
]
GpuClassOpt = Annotated[
    str | None,
    typer.Option(
        "--gpu-class",
        help="A --nodes snapshot with DRA GPUs: the DeviceClass whose ResourceSlice devices are the replay's GPUs (default: the one DeviceClass named like a GPU that selects devices).",
    ),
]


def replay(
    trace: TraceArg,
    nodes: NodesOpt = None,
    mode: ModeOpt = D.REPLAY_MODE,
    policy: PolicyOpt = ",".join(D.REPLAY_POLICIES),
    seeds: SeedsOpt = ",".join(map(str, D.REPLAY_SEEDS)),
    out_dir: OutDirOpt = None,
    arrival_scale: ArrivalScaleOpt = D.ARRIVAL_SCALE,
    vc: VcOpt = None,
    interval: IntervalOpt = D.TIMESERIES_INTERVAL,
    epoch: EpochOpt = None,
    exact_time_limit: ExactTimeLimitOpt = D.EPOCH_TIME_LIMIT,
    export_epoch: ExportEpochOpt = None,
    bound: BoundOpt = D.BOUND_METHOD,
    bound_percents: BoundPercentsOpt = ",".join(map(str, D.BOUND_PERCENTS)),
    bound_work_limit: BoundWorkLimitOpt = D.BOUND_WORK_LIMIT,
    movable: MovableBoundOpt = False,
    parquet: ParquetOpt = False,
    resume: ResumeOpt = False,
    gpu_class: GpuClassOpt = None,
) -> None:
    """Replay a trace over time with the greedy engine's plugins: unallocated GPUs vs arrived (fill), queueing delay, JCT and idle GPU-hours (timed)."""
    from gangplan.models.options import ReplayOptions
    from gangplan.replay import parse_policies, parse_seeds, write_outputs
    from gangplan.replay import replay as run_replay

    try:
        pols, seed_list = parse_policies(policy), parse_seeds(seeds)
        from gangplan.replay.run import parse_percents

        percents = parse_percents(bound_percents)
        if export_epoch is not None and (out_dir is None or export_epoch < 0):
            raise SnapshotError(
                "<arguments>", "--export-epoch N needs N >= 0 and --out DIR", field="--export-epoch"
            )
        export = (export_epoch, str(out_dir)) if export_epoch is not None else None
        if parquet:
            from gangplan.replay.parquet import require_pyarrow

            if out_dir is None:
                raise SnapshotError("<arguments>", "--parquet needs --out DIR", field="--parquet")
            require_pyarrow()
        options = ReplayOptions(
            mode=mode,
            policies=tuple(pols),
            seeds=tuple(seed_list),
            vc=vc,
            arrival_scale=arrival_scale,
            exact_time_limit=exact_time_limit,
            epoch=epoch,
            export_epoch=export,
            movable_bound=movable,
            bound=bound,
            bound_percents=tuple(percents),
            bound_work_limit=bound_work_limit,
            checkpoint=None if out_dir is None else str(out_dir),
            resume=resume,
            gpu_class=gpu_class,
        )
        with _spinner(True) as sp:
            result = _replay_interruptible(
                lambda: run_replay(
                    trace,
                    nodes,
                    options=options,
                    progress=lambda label, done, total: sp.update(
                        f"replay {label}: {done}/{total} jobs"
                    ),
                ),
                out_dir,
            )
        if out_dir is not None:
            _replay_interruptible(
                lambda: write_outputs(result, out_dir, interval=interval, parquet=parquet), out_dir
            )
    except SnapshotError as e:
        raise _bad_input(e) from None
    _print_summary(result.summary, seeds=seeds, out_dir=out_dir, parquet=parquet)


def _print_summary(s, *, seeds: str, out_dir: Path | None, parquet: bool) -> None:
    """What ``replay`` prints once the runs are done: caveats on stderr, the bound, a line per
    policy, preemptions and epochs per run, and the files written."""
    for c in s.caveats:
        err.print(Text.assemble(("caveat: ", "bold yellow"), c))
    what = f"{s.trace_jobs} jobs"
    if (
        s.mode == "fill" and s.runs
    ):  # each fill run tries a seeded share of the trace (issue 41: say how many)
        per_run = sorted({r.jobs for r in s.runs})
        what = (
            f"the trace's {s.trace_jobs} jobs ({per_run[0] if len(per_run) == 1 else f'{per_run[0]}-{per_run[-1]}'} per run"
            + (
                f", filled until {s.inflation_ratio * 100:g} % of the GPUs had arrived)"
                if s.inflation_ratio
                else ")"
            )
        )
    out.print(
        f"{s.mode} replay of {what} on {s.node_count} nodes ({s.capacity_gpus} GPUs), seeds {seeds}"
    )
    if s.packing_bound_unallocated_percent:
        last = max(s.packing_bound_unallocated_percent, key=int)
        gap = (
            f" (gap {s.packing_bound_gap_percent[last]:.2f})"
            if s.packing_bound_gap_percent and s.packing_bound_gap_percent.get(last)
            else ""
        )
        out.print(
            f"  packing bound ({s.packing_bound_method}): no placement leaves under {s.packing_bound_unallocated_percent[last]:.2f} % unallocated at {last} % arrived{gap}"
        )
    for name, p in s.policies.items():
        if p.unallocated_percent_mean is not None:
            at = p.unallocated_percent_mean.get("100")
            sd = (p.unallocated_percent_std or {}).get("100")
            out.print(f"  {name}: unallocated GPU % at 100 % arrived {at:.2f} (sd {sd:.2f})")
        else:
            out.print(
                f"  {name}: mean queueing delay {p.queueing_delay_mean or 0:.1f} s, mean JCT {p.jct_mean or 0:.1f} s, makespan {p.makespan_mean or 0:.0f} s, idle GPU-hours {p.idle_gpu_hours_mean or 0:.1f}"
            )
    _print_runs(s)
    if out_dir is not None:
        extra = ", epochs.csv" if any(r.epochs is not None for r in s.runs) else ""
        pq = (
            (", timeseries.parquet, jobs.parquet" + (", epochs.parquet" if extra else ""))
            if parquet
            else ""
        )
        out.print(f"wrote {out_dir}/summary.json, timeseries.csv, jobs.csv{extra}, report.html{pq}")


def _print_runs(s) -> None:
    """Per run: its preemptions, and the regret of its exact epochs."""
    for r in s.runs:
        if r.preemptions:
            out.print(
                f"  {r.policy} seed {r.seed}: {r.preemptions} preemptions evicted {r.evicted_jobs} jobs (each restarted with its full duration)"
            )
    for r in s.runs:
        if r.epochs is not None:
            gap = f", largest gap {r.gap_max:.3f}" if r.gap_max is not None else ""
            out.print(
                f"  {r.policy} seed {r.seed}: {r.epochs} epochs solved, regret {r.regret_gpus_total} GPUs / {r.regret_jobs_total} jobs over {r.epochs_with_regret} epochs, {r.epochs_at_limit} at the time limit{gap}"
            )
            if r.movable_regret_jobs_total is not None:
                out.print(
                    f"  {r.policy} seed {r.seed}: with running pods movable at most {r.movable_regret_jobs_total} more job starts over the epochs ({r.movable_epochs_at_limit} bounds at the limit)"
                )
            if r.exported_epoch:
                out.print(f"  wrote {r.exported_epoch}")


def _replay_interruptible(run, out_dir: Path | None):
    """``run()``; Ctrl-C exits 130 naming the runs saved in ``DIR/runs`` (no traceback)."""
    try:
        return run()
    except KeyboardInterrupt:
        from gangplan.replay.resume import RUNS

        saved = (
            sorted(p.stem for p in (out_dir / RUNS).glob("*.json"))
            if out_dir is not None and (out_dir / RUNS).is_dir()
            else []
        )
        if out_dir is None:
            msg = "replay interrupted; nothing saved (give --out DIR to keep finished runs)"
        elif saved:
            msg = f"replay interrupted; {len(saved)} finished run(s) saved in {out_dir / RUNS} ({', '.join(saved)}); rerun with --resume to continue"
        else:
            msg = f"replay interrupted before any run finished; nothing saved in {out_dir / RUNS}"
        err.print(Text.assemble(("interrupted: ", "bold yellow"), msg))
        raise typer.Exit(130) from None
