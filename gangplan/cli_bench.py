"""``gangplan bench``, ``report`` and ``generate``: the benchmark database, its report and the
generated clusters it runs on (the work is :mod:`gangplan.bench`); registered on the app by
:mod:`gangplan.cli`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from gangplan.bench.generators.topology_shapes import (
    DEFAULT_GANGS,
    DEFAULT_NODES,
    DEFAULT_UTILISATION,
    SHAPES,
)
from gangplan.cli_common import err, out, out_file
from gangplan.cli_options import EXIT_FAILURES, json_flag, out_option, seed_option
from gangplan.cli_options import bad_input as _bad_input
from gangplan.io.errors import SnapshotError


def bench(
    suite: Annotated[
        Path, typer.Argument(help="A suite file (kind: BenchSuite) or a directory of snapshots.")
    ],
    out_db: Annotated[
        Path,
        out_option("SQLite database the results go into, as each snapshot finishes."),
    ] = Path("results.db"),
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            help="Snapshots run at once (local processes, or LocalCluster workers with --dask local).",
            min=1,
        ),
    ] = 1,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Continue a database: skip the snapshots it already holds (failed ones too, unless --retry-failed).",
        ),
    ] = False,
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed",
            help="Run the snapshots recorded as error, timeout or crashed again (implies --resume).",
        ),
    ] = False,
    time_limit: Annotated[
        float | None,
        typer.Option(
            "--time-limit",
            help="Seconds per exact solve phase (default: the suite's timeLimit, else 10).",
            min=0.01,
            show_default=False,
        ),
    ] = None,
    task_timeout: Annotated[
        float | None,
        typer.Option(
            "--task-timeout",
            help="Wall seconds per snapshot before it is killed and recorded as timeout (default: the suite's taskTimeout, else 5 x time limit + 30).",
            min=0.1,
            show_default=False,
        ),
    ] = None,
    explain: Annotated[
        bool | None,
        typer.Option(
            "--explain/--no-explain",
            help="Also find the decisive greedy step of suboptimal snapshots (default: the suite's explain, else no).",
            show_default=False,
        ),
    ] = None,
    dask: Annotated[
        str | None,
        typer.Option(
            "--dask",
            help="Run on Dask: a scheduler address (tcp://host:8786) or 'local' for a LocalCluster of --jobs workers (default: local processes).",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[
        bool,
        json_flag(
            "Print every snapshot of the database as JSON rows (`gangplan schema bench-row`) instead of the table."
        ),
    ] = False,
) -> None:
    """Run greedy, exact and the diff on every snapshot of SUITE into a results database.

    The table counts everything in the database (earlier runs included) and names every failed
    snapshot with its cause. Exit codes: 0 every snapshot finished, 1 a snapshot in the database
    failed (error, timeout or crashed), 2 bad input.
    """
    from gangplan.bench.runner import run_bench
    from gangplan.bench.store import bench_rows, outcome_counts
    from gangplan.bench.suites import load_suite
    from gangplan.render import render_bench

    try:
        loaded = load_suite(suite)
        for line in loaded.warnings:
            err.print(f"warning: {line}", markup=False)
        summary = run_bench(
            loaded,
            out_db,
            jobs=jobs,
            resume=resume,
            retry_failed=retry_failed,
            time_limit=time_limit,
            task_timeout=task_timeout,
            explain=explain,
            executor="dask" if dask else "local",
            dask_address=dask,
            progress=not as_json and sys.stderr.isatty(),
        )
    except SnapshotError as e:
        raise _bad_input(e) from None
    classes, statuses, failed = outcome_counts(out_db)
    if as_json:
        sys.stdout.write(json.dumps(bench_rows(out_db), indent=2) + "\n")
    else:
        render_bench(out, summary, out_db, classes, statuses, failed)
    if failed:
        raise typer.Exit(EXIT_FAILURES)


def report(
    db: Annotated[Path, typer.Argument(help="A results database written by `gangplan bench`.")],
    out_dir: Annotated[
        Path,
        out_option("Directory for index.html, the CSV tables and the plots."),
    ] = Path("report"),
    compare: Annotated[
        Path | None,
        typer.Option("--compare", help="A second results database to show side by side."),
    ] = None,
) -> None:
    """Tables (CSV) and an HTML report with plots from a results database."""
    from gangplan.bench.report import build_report

    try:
        index = build_report(db, out_dir, compare=compare)
    except SnapshotError as e:
        raise _bad_input(e) from None
    out.print(f"wrote {index}")


def generate(
    shape: Annotated[
        str,
        typer.Argument(
            help="Cluster shape: " + "; ".join(f"{k} ({v})" for k, v in SHAPES.items()) + "."
        ),
    ],
    out_path: Annotated[
        Path,
        out_option(
            "Snapshot file to write (multi-document YAML). Here -o is the file, as in bench, report and import; in solve, diff and whatif it is the output format."
        ),
    ],
    nodes: Annotated[
        int, typer.Option(help="Number of nodes (gb200-nvl72: rounded up to whole 18-node racks).")
    ] = DEFAULT_NODES,
    utilisation: Annotated[
        float,
        typer.Option(
            help="Fraction of GPUs (cpu for scheduler-perf-tas) already used by bound pods."
        ),
    ] = DEFAULT_UTILISATION,
    seed: Annotated[int, seed_option("Seed for the load and gang draws.")] = 0,
    gangs: Annotated[
        int,
        typer.Option(
            help="Pending topology-constrained gangs (the default oversubscribes the free GPUs, so gangs compete)."
        ),
    ] = DEFAULT_GANGS,
    gang_size: Annotated[
        list[int] | None,
        typer.Option(
            "--gang-size",
            help="Pods per gang to draw from (repeatable; shape default when omitted).",
        ),
    ] = None,
    topology_key: Annotated[
        str | None,
        typer.Option(
            "--topology-key",
            help="Label key every gang must stay inside (shape default when omitted).",
        ),
    ] = None,
    unconstrained: Annotated[
        bool, typer.Option("--unconstrained", help="Generate gangs without a topology constraint.")
    ] = False,
    dra: Annotated[
        bool,
        typer.Option(
            "--dra",
            help="GPUs as NVIDIA's DRA driver publishes them (ResourceSlices, DeviceClasses, nvidia.com/gpu served by KEP-5004); gb200-nvl72 also gets a ComputeDomain channel per node and a channel claim on every gang pod (docs/explanation/dra.md).",
        ),
    ] = False,
) -> None:
    """Generate a cluster with existing load and pending rack/NVLink-constrained gangs."""
    from gangplan.bench.generators.builders import to_cluster
    from gangplan.bench.generators.topology_shapes import generate_shape
    from gangplan.io.writer import write_snapshot

    out_path = out_file(out_path)
    options = _shape_options(shape, gang_size, topology_key, unconstrained)
    if nodes < 1:
        raise _bad_input("--nodes must be at least 1")
    try:
        objects = generate_shape(
            shape, nodes=nodes, utilisation=utilisation, seed=seed, gangs=gangs, **options
        )
    except ValueError as e:
        raise _bad_input(str(e)) from e
    if dra:
        from gangplan.bench.generators.dra_gpu import to_dra

        if shape == "scheduler-perf-tas":
            raise _bad_input("--dra needs a GPU shape (gb200-nvl72, dgx-h100-superpod)")
        objects = to_dra(
            objects,
            model="GB200" if shape == "gb200-nvl72" else "H100",
            channels=shape == "gb200-nvl72",
        )
    header = (
        f"gangplan generate {shape} --nodes {nodes} --utilisation {utilisation} --seed {seed} --gangs {gangs}"
        + (" --dra" if dra else "")
    )
    try:
        write_snapshot(objects, out_path, header=header)
    except SnapshotError as e:
        raise _bad_input(e) from None
    cluster = to_cluster(objects, source=str(out_path))
    out.print(
        f"wrote {out_path}: {len(cluster.nodes)} nodes, {len(cluster.bound_pods)} bound pods, {len(cluster.pod_groups)} gangs, {len(cluster.pending_pods)} pending pods",
        soft_wrap=True,
    )


def _shape_options(
    shape: str, gang_size: list[int] | None, topology_key: str | None, unconstrained: bool
) -> dict:
    """``generate``'s shape flags as the shape generator's keyword arguments; bad ones exit 2."""
    if shape not in SHAPES:
        raise _bad_input(f"unknown shape {shape!r}; use one of {', '.join(SHAPES)}")
    options: dict = {}
    if gang_size:
        if any(k < 1 for k in gang_size):
            raise _bad_input("--gang-size must be at least 1")
        if shape == "scheduler-perf-tas":
            if len(set(gang_size)) > 1:
                raise _bad_input(
                    "scheduler-perf-tas gangs all have one size: give --gang-size once"
                )
            options["pods_per_gang"] = gang_size[0]
        else:
            options["gang_sizes"] = tuple(gang_size)
    if unconstrained:
        options["topology_key"] = None
    elif topology_key:
        options["topology_key"] = topology_key
    return options
