"""The ``gangplan`` command line: the app, every command and its flags (the one module that
imports typer). What the commands do beyond wiring lives in the library and in the typer-free
``gangplan.cli_*`` modules (:mod:`~gangplan.cli_common`: consoles, loading, files;
:mod:`~gangplan.cli_solve`; :mod:`~gangplan.cli_diff`); every engine runs through
:mod:`gangplan.api`, with the options the flags give (:mod:`gangplan.models.options`).

Exit codes: 0 success; 1 validation found violations (``bench``: a snapshot failed); 2 bad input (file, object and field named);
3 ``diff``: greedy is suboptimal; 4 ``diff``: model mismatch (a bug); 5 ``diff``: unproven (the best placement found
is no better than greedy's, but the exact engine did not prove it optimal); 70 internal error.
"""

from __future__ import annotations

import errno
import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text
from typer.core import TyperGroup

from gangplan.bench.generators.topology_shapes import (
    DEFAULT_GANGS,
    DEFAULT_NODES,
    DEFAULT_UTILISATION,
    SHAPES,
)
from gangplan.cli_common import (
    BadInput,
    Output,
    console,
    engine_options,
    err,
    load,
    out,
    out_file,
    read_result,
    source,
    write_with,
)
from gangplan.cli_common import spinner as _spinner
from gangplan.cli_solve import resolve_pod, run_engine, why_document
from gangplan.io.errors import SnapshotError
from gangplan.models import defaults as D
from gangplan.models.options import ENGINES, OBJECTIVES, TIE_BREAKS, DiffOptions, SolveOptions
from gangplan.models.version import DEVELOPMENT, NEWEST, KubeVersion

EXIT_VIOLATIONS = 1
"""``validate``: a rule is violated; ``diff --suite``: an expectation is not met."""
EXIT_FAILURES = 1
"""``bench``: a snapshot in the database failed (error, timeout or crashed)."""
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 70


def _bad_input(e: SnapshotError | str) -> typer.Exit:
    """Print ``error: <message>`` on stderr and return the Exit(2) to raise."""
    err.print(Text.assemble(("error: ", "bold red"), str(e)))
    return typer.Exit(EXIT_BAD_INPUT)


HELP_MAX_WIDTH = 120
"""``--help`` is click's plain layout (flags first, the help text wrapped beside them, at least 46
columns of it at 80 columns; issue 41: typer's rich panels gave it 18 there and printed a type
after every flag, ``--strict <bool>``), as wide as the terminal up to this many columns."""
_HELP = dict(rich_markup_mode=None, context_settings={"max_content_width": HELP_MAX_WIDTH})


class _App(TyperGroup):
    """The command group: bad input a command raises (a SnapshotError, a BadInput) is printed as
    ``error: <message>`` and exits 2, whichever module found it."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (SnapshotError, BadInput) as e:
            raise _bad_input(e) from None


app = typer.Typer(
    name="gangplan",
    help="Place Kubernetes pod groups (gangs): what kube-scheduler would do, the optimum, and why they differ.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=_App,
    **_HELP,
)
schema_app = typer.Typer(
    help="Print JSON Schemas of gangplan's public documents.", no_args_is_help=True, **_HELP
)
import_app = typer.Typer(
    help="Convert third-party cluster data into snapshots.", no_args_is_help=True, **_HELP
)
app.add_typer(schema_app, name="schema")
app.add_typer(import_app, name="import")


def _version() -> str:
    """The installed distribution's version (importlib.metadata), else the package's own."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gangplan")
    except PackageNotFoundError:
        from gangplan import __version__

        return __version__


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"gangplan {_version()}")
        raise typer.Exit()


@app.callback()
def _app_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print gangplan's version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    pass


KUBE_VERSION_HELP = (
    "The kube-scheduler version greedy reproduces (scores, pod order, preemption, hierarchy validation differ; docs/explanation/greedy-fidelity.md); "
    f"{DEVELOPMENT.value} is the development code after v{NEWEST.value}. Default: the newest release."
)


def _kv(v: KubeVersion | None) -> str | None:
    return v.value if v is not None else None


PREEMPTION_HELP = (
    "Whether both engines may evict lower-priority pods (greedy: DefaultPreemption and workload-aware "
    "preemption, KEP-5710; exact: minimum-disruption victims). Default: as kube-scheduler's profile."
)
TIME_LIMIT_HELP = (
    "Exact engine: the work limit, in units of deterministic work (CP-SAT's deterministic time, "
    "about a second each): the same answer on an idle or a busy machine."
)
WALL_LIMIT_HELP = (
    "Exact engine: the wall-clock cap in seconds, a safety net; the output says when it, "
    "not the work limit, stopped a search (then a rerun may differ)."
)
SNAPSHOT_HELP = "Snapshot file or directory; - reads it from standard input (kubectl get ... -o yaml | gangplan diff -)."
STRICT_HELP = "Treat inputs that can change scheduling but are not modelled (see the warnings) as bad input (exit 2)."


# ---- inspect / validate / schema ---------------------------------------------------------------
@app.command()
def inspect(
    snapshot: Annotated[
        Path,
        typer.Argument(
            help="Snapshot file or directory (Kubernetes YAML/JSON); - reads standard input."
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    kube_version: Annotated[
        KubeVersion | None,
        typer.Option("--kube-version", help=KUBE_VERSION_HELP, show_default=NEWEST.value),
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help=STRICT_HELP)] = False,
) -> None:
    """Summarise a snapshot: node shapes, resources, topology, pending groups, gated pods, and the
    kube-scheduler version its Nodes' kubelets suggest."""
    from gangplan.render import render_summary
    from gangplan.summary import inspect_json, inspect_summary

    cluster = load(snapshot, strict=strict, kube_version=_kv(kube_version))
    record = inspect_summary(cluster)
    if as_json:
        sys.stdout.write(json.dumps(inspect_json(record), indent=2) + "\n")
    else:
        render_summary(console(Output.table), record)


@app.command()
def validate(
    snapshot: Annotated[
        Path,
        typer.Argument(
            help="The snapshot the result was computed on (file or directory; - reads standard input)."
        ),
    ],
    result: Annotated[
        Path, typer.Argument(help="A Result JSON written by `gangplan solve --out`.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print violations as JSON.")] = False,
    kube_version: Annotated[
        KubeVersion | None,
        typer.Option(
            "--kube-version",
            help=KUBE_VERSION_HELP + " Give the one the result was solved with.",
            show_default=NEWEST.value,
        ),
    ] = None,
) -> None:
    """Check every hard rule of RESULT on SNAPSHOT; exit 1 if any is violated."""
    from gangplan import api

    cluster = load(snapshot, kube_version=_kv(kube_version))
    res = read_result(result)
    violations = api.validate(cluster, res)
    if as_json:
        sys.stdout.write(json.dumps([v.__dict__ for v in violations], indent=2) + "\n")
    elif violations:
        out.print(f"[bold red]{len(violations)} violation(s)[/bold red]")
        for v in violations:
            out.print(f"  {v}", markup=False)
    else:
        out.print(
            f"[green]valid[/green]: {len(res.placements())} placements, {len(res.victims)} victims, no rule violated"
        )
    if violations:
        raise typer.Exit(EXIT_VIOLATIONS)


def _print_schema(name: str) -> None:
    from gangplan.models.documents import json_schema

    sys.stdout.write(json.dumps(json_schema(name), indent=2) + "\n")


@schema_app.command("result")
def schema_result() -> None:
    """The JSON Schema of the Result (`solve --json`, `solve --out`)."""
    _print_schema("result")


@schema_app.command("diff")
def schema_diff() -> None:
    """The JSON Schema of the diff document (`diff --json`)."""
    _print_schema("diff")


@schema_app.command("suite")
def schema_suite() -> None:
    """The JSON Schema of a suite run (`diff --suite DIR --json`)."""
    _print_schema("suite")


@schema_app.command("bench-row")
def schema_bench_row() -> None:
    """The JSON Schema of the bench rows (`bench --json`: one row per snapshot of the database)."""
    _print_schema("bench-row")


@schema_app.command("inspect")
def schema_inspect() -> None:
    """The JSON Schema of the snapshot summary (`inspect --json`)."""
    _print_schema("inspect")


@schema_app.command("violations")
def schema_violations() -> None:
    """The JSON Schema of the violation list (`validate --json`)."""
    _print_schema("violations")


@app.command()
def expand(
    snapshot: Annotated[
        Path,
        typer.Argument(
            help="Snapshot file or directory with Jobs, JobSets or LeaderWorkerSets; - reads standard input."
        ),
    ],
    kube_version: Annotated[
        KubeVersion | None,
        typer.Option("--kube-version", help=KUBE_VERSION_HELP, show_default=NEWEST.value),
    ] = None,
) -> None:
    """Print what gangplan synthesizes from the snapshot's Jobs, JobSets and LeaderWorkerSets (the
    Workloads, PodGroups, Jobs, StatefulSets and pending pods their controllers create) as YAML."""
    from gangplan.io.loader import load_with_expansion
    from gangplan.io.writer import dump_snapshot

    try:
        cluster, objects = load_with_expansion(snapshot, kube_version=_kv(kube_version))
    except SnapshotError as e:
        raise _bad_input(e) from None
    for line in cluster.translations:
        err.print(f"note: {line}", markup=False)
    sys.stdout.write(dump_snapshot(objects))


# ---- import ------------------------------------------------------------------------------------
@import_app.command("alibaba-nodes")
def import_alibaba_nodes(
    csv_path: Annotated[
        Path, typer.Argument(help="openb_node_list_*.csv from the Alibaba GPU trace v2023.")
    ],
    output: Annotated[
        Path, typer.Option("--out", "-o", help="Snapshot file to write (multi-document YAML).")
    ] = Path("nodes.yaml"),
) -> None:
    """Convert an Alibaba openb node list into Kubernetes Node objects."""
    from gangplan.io.alibaba import alibaba_nodes_to_objects
    from gangplan.io.writer import write_snapshot

    output = out_file(output)
    try:
        objects = alibaba_nodes_to_objects(csv_path)
        write_snapshot(objects, output)
    except SnapshotError as e:
        raise _bad_input(e) from None
    out.print(f"wrote {len(objects)} nodes to {output}")


# ---- solve ------------------------------------------------------------------------------------
Engine = StrEnum("Engine", {e: e for e in ENGINES})
TieBreak = StrEnum("TieBreak", {t: t for t in TIE_BREAKS})
Objective = StrEnum("Objective", {o: o for o in OBJECTIVES})


class TraceOpt(StrEnum):
    none = "none"
    summary = "summary"
    full = "full"


TRACE_HELP = (
    "How much of the greedy trace the JSON holds: summary keeps, of each placement decision, the chosen placement, "
    "the runner-up and the reported one; full every placement evaluated (large on clusters with many domains); none no trace."
)


@app.command()
def solve(
    snapshot: Annotated[Path, typer.Argument(help=SNAPSHOT_HELP)],
    engine: Annotated[
        Engine, typer.Option(help="greedy: kube-scheduler's cycle; exact: the CP-SAT optimum.")
    ] = Engine(D.ENGINE),
    time_limit: Annotated[
        float, typer.Option("--time-limit", help=TIME_LIMIT_HELP, min=0.01)
    ] = D.TIME_LIMIT,
    wall_limit: Annotated[
        float | None,
        typer.Option(
            "--wall-limit", help=WALL_LIMIT_HELP, min=0.01, show_default="3 x --time-limit + 10"
        ),
    ] = None,
    workers: Annotated[
        int, typer.Option(help="Exact engine: " + D.WORKERS_HELP, min=1)
    ] = D.WORKERS,
    seed: Annotated[
        int, typer.Option(help="Seed for every random choice (CP-SAT, --tie-break random).")
    ] = D.SEED,
    tie_break: Annotated[
        TieBreak,
        typer.Option(
            "--tie-break", help="Greedy ties: first node in snapshot order, or seeded random."
        ),
    ] = TieBreak(D.TIE_BREAK),
    objective: Annotated[
        Objective, typer.Option(help="Exact engine objective after the admission tiers.")
    ] = Objective(D.OBJECTIVE),
    result_path: Annotated[
        Path | None, typer.Option("--out", help="Write the Result JSON to this file.")
    ] = None,
    explain: Annotated[
        str | None,
        typer.Option(
            help="Also print the greedy trace of this pending pod: namespace/name, or a bare name when unique."
        ),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print the Result JSON instead of tables (same as -o json)."),
    ] = False,
    output_arg: Annotated[
        str,
        typer.Option(
            "--output",
            "-o",
            help="table: fits 100 columns, reasons shortened; wide: every column and the full reasons; json: the Result. A file name with a suffix (result.json) writes the Result JSON there, as -o meant before (same as --out).",
        ),
    ] = Output.table.value,
    preemption: Annotated[
        bool | None,
        typer.Option(
            "--preemption/--no-preemption",
            help=PREEMPTION_HELP,
            show_default="as the profile: on unless DefaultPreemption is disabled",
        ),
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help=STRICT_HELP)] = False,
    kube_version: Annotated[
        KubeVersion | None,
        typer.Option("--kube-version", help=KUBE_VERSION_HELP, show_default=NEWEST.value),
    ] = None,
    trace: Annotated[TraceOpt, typer.Option("--trace", help=TRACE_HELP)] = TraceOpt.summary,
) -> None:
    """Place the pending pods of a snapshot with one engine and print the outcome per group."""
    from gangplan.render import render_result, render_trace

    if output_arg in Output.__members__:
        output = Output(output_arg)
    elif Path(output_arg).suffix or "/" in output_arg:  # the 0.1 contract: `solve -o result.json`
        output, result_path = Output.table, result_path or Path(output_arg)
    else:
        raise _bad_input(
            SnapshotError(
                "<arguments>",
                f"-o/--output: {output_arg!r} is none of table, wide, json (nor a file name with a suffix, which -o also accepts)",
            )
        )
    as_json = as_json or output == Output.json
    options = engine_options(
        SolveOptions,
        time_limit=time_limit,
        wall_limit=wall_limit,
        workers=workers,
        seed=seed,
        tie_break=tie_break.value,
        objective=objective.value,
        preemption=preemption,
        kube_version=_kv(kube_version),
    )
    cluster = load(snapshot, strict=strict, warn=True, kube_version=options.kube_version)
    pod = resolve_pod(cluster, explain, snapshot) if explain else None
    with _spinner(not as_json) as sp:
        result, greedy = run_engine(
            cluster, engine.value, snapshot=source(snapshot), options=options, progress=sp.update
        )
    if result_path is not None:
        write_with(result_path, lambda fp: result.write_json(fp, trace=trace.value))
    if as_json:
        result.write_json(sys.stdout, trace=trace.value)
        return
    shown = console(output)
    render_result(shown, result, cluster, wide=output == Output.wide)
    if pod:
        render_trace(shown, greedy, pod, cluster)


@app.command()
def why(
    snapshot: Annotated[Path, typer.Argument(help=SNAPSHOT_HELP)],
    pod: Annotated[
        str, typer.Argument(help="The pending pod: namespace/name, or a bare name when unique.")
    ],
    seed: Annotated[
        int,
        typer.Option(
            help="Seed for every random choice (--tie-break random, v1.36 gang pod order)."
        ),
    ] = D.SEED,
    tie_break: Annotated[
        TieBreak,
        typer.Option(
            "--tie-break", help="Greedy ties: first node in snapshot order, or seeded random."
        ),
    ] = TieBreak(D.TIE_BREAK),
    preemption: Annotated[
        bool | None,
        typer.Option(
            "--preemption/--no-preemption",
            help=PREEMPTION_HELP,
            show_default="as the profile: on unless DefaultPreemption is disabled",
        ),
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help=STRICT_HELP)] = False,
    kube_version: Annotated[
        KubeVersion | None,
        typer.Option("--kube-version", help=KUBE_VERSION_HELP, show_default=NEWEST.value),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the same as JSON: pod, snapshot, outcome (node, reason), context (the lines above the cycle), cycle (trace.pods[POD] of `solve --json`: rejections per Filter plugin, top scores, chosen), details (what blocked the pod behind a reason) and placements (every topology placement tried for its gang, its verdict and score, and the choice).",
        ),
    ] = False,
) -> None:
    """Why is POD Pending: kube-scheduler's cycle for it (the short form of solve --explain POD).

    Prints where the pod's cycle sits in its gang's (or why it was not evaluated: gated, its group
    invalid, the gang stopped at an earlier pod), each Filter plugin's rejections with the taint or
    selector behind them, the scores and the choice. Exit codes: 0, 2 bad input.
    """
    from gangplan.render import render_trace

    options = engine_options(
        SolveOptions,
        seed=seed,
        tie_break=tie_break.value,
        preemption=preemption,
        kube_version=_kv(kube_version),
    )
    cluster = load(snapshot, strict=strict, warn=True, kube_version=options.kube_version)
    key = resolve_pod(cluster, pod, snapshot, field="POD")
    _, greedy = run_engine(cluster, "greedy", snapshot=source(snapshot), options=options)
    if as_json:
        sys.stdout.write(
            json.dumps(why_document(greedy, key, cluster, source(snapshot)), indent=2) + "\n"
        )
        return
    render_trace(console(Output.table), greedy, key, cluster)


@app.command()
def diff(
    snapshot: Annotated[Path | None, typer.Argument(help=SNAPSHOT_HELP)] = None,
    suite: Annotated[
        Path | None,
        typer.Option(help="Run every scenario of this directory and check its expectations."),
    ] = None,
    time_limit: Annotated[
        float, typer.Option("--time-limit", help=TIME_LIMIT_HELP, min=0.01)
    ] = D.TIME_LIMIT,
    wall_limit: Annotated[
        float | None,
        typer.Option(
            "--wall-limit", help=WALL_LIMIT_HELP, min=0.01, show_default="3 x --time-limit + 10"
        ),
    ] = None,
    probe_time_limit: Annotated[
        float,
        typer.Option(
            "--probe-time-limit",
            help="Work limit (units) of each exact solve while searching the decisive step.",
            min=0.01,
        ),
    ] = D.PROBE_TIME_LIMIT,
    workers: Annotated[int, typer.Option(help=D.WORKERS_HELP, min=1)] = D.WORKERS,
    seed: Annotated[int, typer.Option(help="Seed for CP-SAT and --tie-break random.")] = D.SEED,
    tie_break: Annotated[
        TieBreak, typer.Option("--tie-break", help="Greedy ties: snapshot order or seeded random.")
    ] = TieBreak(D.TIE_BREAK),
    plan: Annotated[
        Path | None,
        typer.Option(
            help="Write the optimal placement as core/v1 Bindings to this YAML file, and beside it a .sh script that evicts the victims first and then creates the Bindings."
        ),
    ] = None,
    nominate: Annotated[
        bool,
        typer.Option(
            help="With --plan: no Bindings; the script sets status.nominatedNodeName (status subresource) and leaves binding to kube-scheduler."
        ),
    ] = False,
    preemption: Annotated[
        bool | None,
        typer.Option(
            "--preemption/--no-preemption",
            help=PREEMPTION_HELP,
            show_default="as the profile: on unless DefaultPreemption is disabled",
        ),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="Print the diff as JSON (same as -o json; `gangplan schema diff`)."
        ),
    ] = False,
    output: Annotated[
        Output,
        typer.Option(
            "--output",
            "-o",
            help="table: summary first, fits 100 columns; wide: every group and the full reasons; json: the diff document.",
        ),
    ] = Output.table,
    strict: Annotated[bool, typer.Option("--strict", help=STRICT_HELP)] = False,
    kube_version: Annotated[
        KubeVersion | None,
        typer.Option("--kube-version", help=KUBE_VERSION_HELP, show_default=NEWEST.value),
    ] = None,
    samples: Annotated[
        int,
        typer.Option(
            "--samples",
            help="Also run greedy K times (seeds SEED..SEED+K-1, random ties and, in v1.36, random gang pod orders) and report how often it admits each group and reaches the optimum.",
            min=0,
        ),
    ] = D.SAMPLES,
    trace: Annotated[TraceOpt, typer.Option("--trace", help=TRACE_HELP)] = TraceOpt.summary,
) -> None:
    """Greedy (kube-scheduler) against optimal (CP-SAT): classification and the decisive greedy step.

    Exit codes: 0 greedy proven to match the optimum (identical, tie-break, equivalent), 3 greedy
    is suboptimal, 4 model mismatch (a bug), 5 unproven (no better placement found, but a compared
    tier is open: a larger --time-limit may decide), 2 bad input. With --suite: 4 if any scenario
    mismatches, else 1 if an expectation is not met, else 5 if a scenario is unproven, else 0.
    """
    from gangplan import cli_diff

    as_json = as_json or output == Output.json
    options = engine_options(
        DiffOptions,
        time_limit=time_limit,
        wall_limit=wall_limit,
        probe_time_limit=probe_time_limit,
        workers=workers,
        seed=seed,
        tie_break=tie_break.value,
        preemption=preemption,
        kube_version=_kv(kube_version),
        samples=samples,
    )
    if (snapshot is None) == (suite is None):
        raise _bad_input(
            SnapshotError("<arguments>", "give exactly one of SNAPSHOT or --suite DIR")
        )
    if suite is not None:
        code = cli_diff.diff_suite(suite, options, output=output, as_json=as_json)
    else:
        code = cli_diff.diff_one(
            snapshot,
            options,
            plan=plan,
            nominate=nominate,
            strict=strict,
            output=output,
            as_json=as_json,
            trace=trace.value,
        )
    if code:
        raise typer.Exit(code)


class Strategy(StrEnum):
    LeastAllocated = "LeastAllocated"
    MostAllocated = "MostAllocated"


@app.command()
def whatif(
    snapshot: Annotated[Path, typer.Argument(help=SNAPSHOT_HELP)],
    variants: Annotated[
        list[Path] | None,
        typer.Argument(
            help='Variant files or directories of objects laid over the snapshot: same kind/namespace/name replaces, others are added, a KubeSchedulerConfiguration replaces the profile, an object annotated gangplan.io/remove: "true" removes its namesake.',
            show_default=False,
        ),
    ] = None,
    scoring: Annotated[
        list[Strategy] | None,
        typer.Option(
            "--scoring",
            help="A variant with NodeResourcesFit's scoringStrategy set to this type (repeatable).",
            show_default=False,
        ),
    ] = None,
    add_nodes: Annotated[
        int | None,
        typer.Option(
            "--add-nodes",
            help="A variant with N idle copies of the node given by --like.",
            min=1,
            show_default=False,
        ),
    ] = None,
    like: Annotated[
        str | None, typer.Option("--like", help="The node --add-nodes copies.", show_default=False)
    ] = None,
    drain: Annotated[
        list[str] | None,
        typer.Option(
            "--drain",
            help="A variant with this node (NAME) or these nodes (LABEL=VALUE) cordoned and their bound pods evicted (repeatable: one variant each).",
            show_default=False,
        ),
    ] = None,
    time_limit: Annotated[float, typer.Option(help=TIME_LIMIT_HELP)] = D.TIME_LIMIT,
    wall_limit: Annotated[
        float | None,
        typer.Option(
            "--wall-limit", help=WALL_LIMIT_HELP, min=0.01, show_default="3 x --time-limit + 10"
        ),
    ] = None,
    probe_time_limit: Annotated[
        float,
        typer.Option(
            help="Work limit (units) of each exact solve while searching the decisive step."
        ),
    ] = D.PROBE_TIME_LIMIT,
    workers: Annotated[int, typer.Option(help=D.WORKERS_HELP, min=1)] = D.WORKERS,
    seed: Annotated[int, typer.Option(help="Seed for CP-SAT and --tie-break random.")] = D.SEED,
    tie_break: Annotated[
        TieBreak, typer.Option("--tie-break", help="Greedy ties: snapshot order or seeded random.")
    ] = TieBreak(D.TIE_BREAK),
    preemption: Annotated[
        bool | None,
        typer.Option(
            "--preemption/--no-preemption",
            help=PREEMPTION_HELP,
            show_default="as the profile: on unless DefaultPreemption is disabled",
        ),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print one JSON row per variant (same as -o json; `gangplan schema whatif`).",
        ),
    ] = False,
    output: Annotated[
        Output,
        typer.Option(
            "--output",
            "-o",
            help="table: one row per variant; wide: the notes and warnings in full; json: the rows.",
        ),
    ] = Output.table,
    strict: Annotated[bool, typer.Option("--strict", help=STRICT_HELP)] = False,
    kube_version: Annotated[
        KubeVersion | None,
        typer.Option("--kube-version", help=KUBE_VERSION_HELP, show_default=NEWEST.value),
    ] = None,
) -> None:
    """What if: the snapshot and each variant of it, greedy against optimal, one row each.

    Rows: groups admitted by greedy and by the optimum, idle GPUs after each, the classification
    and the kind of decisive step. Exit codes: 0, 4 if a variant's diff is a model mismatch (a
    bug), else 5 if a variant's diff is unproven, 2 bad input.
    """
    from gangplan import cli_diff

    as_json = as_json or output == Output.json
    base, layers = cli_diff.whatif_layers(
        snapshot,
        variants or [],
        scoring=[s.value for s in scoring or ()],
        add_nodes=add_nodes,
        like=like,
        drain=drain or [],
    )
    options = engine_options(
        DiffOptions,
        time_limit=time_limit,
        wall_limit=wall_limit,
        probe_time_limit=probe_time_limit,
        workers=workers,
        seed=seed,
        tie_break=tie_break.value,
        preemption=preemption,
        kube_version=_kv(kube_version),
    )
    code = cli_diff.whatif(
        snapshot,
        variants or [],
        base,
        layers,
        options,
        strict=strict,
        output=output,
        as_json=as_json,
    )
    if code:
        raise typer.Exit(code)


@schema_app.command("whatif")
def schema_whatif() -> None:
    """The JSON Schema of the what-if rows (`whatif --json`)."""
    _print_schema("whatif")


# ---- replay (issue 22) ------------------------------------------------------------------------
@app.command()
def replay(
    trace: Annotated[
        Path,
        typer.Argument(
            help="The jobs: an openb pod CSV, the Philly job CSV, or gangplan's jobs.csv (X.csv falls back to X.csv.xz)."
        ),
    ],
    nodes: Annotated[
        str | None,
        typer.Option(
            "--nodes",
            help="The cluster: an openb node CSV, a snapshot (its nodes and bound pods), or 'unlimited' (one 8-GPU node per worker).",
        ),
    ] = None,
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            help="fill (the FGD paper's experiment: one attempt each, nothing leaves) or timed (a discrete-event clock).",
        ),
    ] = D.REPLAY_MODE,
    policy: Annotated[
        str,
        typer.Option(
            "--policy",
            help="Comma-separated: default, mostallocated, bestfit, fgd, random, packing, dotprod, clustering; shadow (timed: the default greedy plus a per-epoch exact solve on its state, running pods fixed: the regret); optimal (timed: the per-epoch exact optimum starts the jobs of its own run); or a KubeSchedulerConfiguration file (named by its stem).",
        ),
    ] = ",".join(D.REPLAY_POLICIES),
    seeds: Annotated[str, typer.Option("--seeds", help="A..B, N or N,M,...")] = ",".join(
        map(str, D.REPLAY_SEEDS)
    ),
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Write summary.json, timeseries.csv and jobs.csv here."),
    ] = None,
    arrival_scale: Annotated[
        float,
        typer.Option(
            "--arrival-scale",
            help="Timed mode: divide submit times by k (k > 1 compresses inter-arrival times).",
        ),
    ] = D.ARRIVAL_SCALE,
    vc: Annotated[
        str | None,
        typer.Option(
            "--vc",
            help="Philly: keep this VC's jobs and size the cluster from philly_vc.csv beside the trace (nodes x 8 GPUs).",
        ),
    ] = None,
    interval: Annotated[
        float, typer.Option("--interval", help="Timed mode: seconds between timeseries.csv rows.")
    ] = D.TIMESERIES_INTERVAL,
    epoch: Annotated[
        float | None,
        typer.Option(
            "--epoch",
            help="Shadow: solve at the first event instant with pending jobs in each S seconds; optimal: solve at the instants k*S after a change (default: every event instant with pending jobs).",
        ),
    ] = None,
    exact_time_limit: Annotated[
        float,
        typer.Option(
            "--exact-time-limit",
            help="Shadow / optimal: seconds per epoch's exact solve (one at the limit is a bound with its gap).",
        ),
    ] = D.EPOCH_TIME_LIMIT,
    export_epoch: Annotated[
        int | None,
        typer.Option(
            "--export-epoch",
            help="Shadow / optimal: write epoch N's state (running pods bound, pending jobs) to DIR/epoch-N.yaml, a snapshot for gangplan diff; needs --out.",
        ),
    ] = None,
    bound: Annotated[
        str,
        typer.Option(
            "--bound",
            help="Fill mode's packing bound: lp (the aggregated LP, milliseconds, weak), patterns (column generation over node patterns, about a minute per arrived percent and seed on 1,213 nodes; try --bound-percents 100) or none.",
        ),
    ] = D.BOUND_METHOD,
    bound_percents: Annotated[
        str,
        typer.Option(
            "--bound-percents",
            help="Fill: the arrived percents (1..130, comma-separated) at which the packing bound is computed.",
        ),
    ] = ",".join(map(str, D.BOUND_PERCENTS)),
    bound_work_limit: Annotated[
        float,
        typer.Option(
            "--bound-work-limit",
            help="Fill with --bound patterns: CP-SAT deterministic seconds per bound's column generation (stopped there it is still a bound, with its gap).",
        ),
    ] = D.BOUND_WORK_LIMIT,
    movable: Annotated[
        bool,
        typer.Option(
            "--movable-bound",
            help="Shadow / optimal: at each epoch also the bound with running pods movable (every running job still runs, anywhere): epochs.csv movable_* columns; one more solve per epoch.",
        ),
    ] = False,
    parquet: Annotated[
        bool,
        typer.Option(
            "--parquet",
            help="Also write timeseries.parquet and jobs.parquet (and epochs.parquet) beside the CSVs; needs pyarrow: pip install 'gangplan[parquet]'.",
        ),
    ] = False,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Continue the killed replay in --out DIR: its finished runs (DIR/runs, each saved as it finishes) are read back, the rest run; exit 2 if they came from other inputs or flags.",
        ),
    ] = False,
    gpu_class: Annotated[
        str | None,
        typer.Option(
            "--gpu-class",
            help="A --nodes snapshot with DRA GPUs: the DeviceClass whose ResourceSlice devices are the replay's GPUs (default: the one DeviceClass named like a GPU that selects devices).",
        ),
    ] = None,
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
    s = result.summary
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
    if out_dir is not None:
        extra = ", epochs.csv" if any(r.epochs is not None for r in s.runs) else ""
        pq = (
            (", timeseries.parquet, jobs.parquet" + (", epochs.parquet" if extra else ""))
            if parquet
            else ""
        )
        out.print(f"wrote {out_dir}/summary.json, timeseries.csv, jobs.csv{extra}, report.html{pq}")


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


@schema_app.command("replay")
def schema_replay() -> None:
    """The JSON Schema of `replay --out DIR`'s summary.json."""
    _print_schema("replay")


@schema_app.command("why")
def schema_why() -> None:
    """The JSON Schema of `why --json`."""
    _print_schema("why")


# ---- bench / report / generate --------------------------------------------------------------
@app.command()
def bench(
    suite: Annotated[
        Path, typer.Argument(help="A suite file (kind: BenchSuite) or a directory of snapshots.")
    ],
    out_db: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="SQLite database the results go into, as each snapshot finishes."
        ),
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
        typer.Option(
            "--json",
            help="Print every snapshot of the database as JSON rows (`gangplan schema bench-row`) instead of the table.",
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


@app.command()
def report(
    db: Annotated[Path, typer.Argument(help="A results database written by `gangplan bench`.")],
    out_dir: Annotated[
        Path,
        typer.Option("--out", "-o", help="Directory for index.html, the CSV tables and the plots."),
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


@app.command()
def generate(
    shape: Annotated[
        str,
        typer.Argument(
            help="Cluster shape: " + "; ".join(f"{k} ({v})" for k, v in SHAPES.items()) + "."
        ),
    ],
    out_path: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="Snapshot file to write (multi-document YAML). Here -o is the file, as in bench, report and import; in solve, diff and whatif it is the output format.",
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
    seed: Annotated[int, typer.Option(help="Seed for the load and gang draws.")] = 0,
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


def command_tree():
    """The click command tree typer builds from ``app`` (for :mod:`gangplan.cli_reference`, which
    documents every command and flag; only this module imports typer)."""
    import typer.main

    return typer.main.get_command(app)


def _pipe_closed(e: SystemExit) -> bool:
    """Click turns a write to a closed pipe (``gangplan solve ... | head``) into exit 1 from inside
    its ``except OSError`` block, so the exit's context is the EPIPE error."""
    ctx = e.__context__
    return isinstance(ctx, OSError) and ctx.errno == errno.EPIPE


def _quiet_stdout() -> None:
    """A reader that went away is not an error (as for Unix tools): point stdout at /dev/null so
    the interpreter's final flush does not complain, and exit 0."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


KUBECTL_PLUGIN = "kubectl-gangplan"
"""The second console script: kubectl runs ``kubectl-gangplan`` on the PATH for ``kubectl gangplan``."""


def _prog_name() -> str:
    """``kubectl gangplan`` when run as the kubectl plugin (usage lines then read as typed), else ``gangplan``."""
    return (
        "kubectl gangplan"
        if Path(sys.argv[0] if sys.argv else "").name.startswith(KUBECTL_PLUGIN)
        else "gangplan"
    )


def main() -> None:
    """Console entry point (``gangplan`` and ``kubectl-gangplan``): bad input exits 2 with a
    message, never a traceback."""
    try:
        app(prog_name=_prog_name())
    except SystemExit as e:
        if _pipe_closed(e):
            _quiet_stdout()
            sys.exit(0)
        raise
    except BrokenPipeError:
        _quiet_stdout()
        sys.exit(0)
    except SnapshotError as e:  # raised outside a command's own handling
        err.print(f"error: {e}", markup=False)
        sys.exit(EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # noqa: BLE001 - a bug: say so plainly, keep the traceback opt-in
        if os.environ.get("GANGPLAN_DEBUG"):
            raise
        err.print(
            f"internal error: {type(e).__name__}: {e} (set GANGPLAN_DEBUG=1 for the traceback)",
            markup=False,
        )
        sys.exit(EXIT_INTERNAL)


if __name__ == "__main__":
    main()
