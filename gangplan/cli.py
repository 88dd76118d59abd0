"""The ``gangplan`` command line: the app, its commands and their flags. The flags the commands
share are spelled once in :mod:`~gangplan.cli_options`; ``replay`` (:mod:`~gangplan.cli_replay`)
and ``bench`` / ``report`` / ``generate`` (:mod:`~gangplan.cli_bench`) are declared in their own
modules and registered here, in the order ``--help`` lists them. These and ``cli_options`` are the
modules that import typer; what the commands do beyond wiring lives in the library and in the
typer-free ``gangplan.cli_*`` modules (:mod:`~gangplan.cli_common`: consoles, loading, files;
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
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperGroup

from gangplan.cli_bench import bench, generate, report
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
from gangplan.cli_options import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_VIOLATIONS,
    KUBE_VERSION_HELP,
    Engine,
    EngineOpt,
    KubeVersionOpt,
    KueueVersionOpt,
    Objective,
    ObjectiveOpt,
    OptionalSnapshotArg,
    Preemption,
    ProbeTimeLimit,
    Seed,
    SnapshotArg,
    Strategy,
    Strict,
    TieBreak,
    TieBreakLongOpt,
    TieBreakOpt,
    TimeLimit,
    Trace,
    TraceOpt,
    WallLimit,
    Workers,
    json_flag,
    kube_version_option,
    out_option,
    output_option,
    probe_time_limit_option,
    seed_option,
    time_limit_option,
    workers_option,
)
from gangplan.cli_options import bad_input as _bad_input
from gangplan.cli_options import kv as _kv
from gangplan.cli_replay import replay
from gangplan.cli_room import make_room
from gangplan.cli_solve import resolve_pod, run_engine, why_document
from gangplan.io.errors import SnapshotError
from gangplan.models import defaults as D
from gangplan.models.options import DiffOptions, SolveOptions
from gangplan.models.version import KubeVersion

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


# ---- inspect / validate / schema ---------------------------------------------------------------
@app.command()
def inspect(
    snapshot: Annotated[
        Path,
        typer.Argument(
            help="Snapshot file or directory (Kubernetes YAML/JSON); - reads standard input."
        ),
    ],
    as_json: Annotated[bool, json_flag("Print the summary as JSON.")] = False,
    kube_version: KubeVersionOpt = None,
    strict: Strict = False,
    fit: Annotated[
        bool,
        typer.Option(
            "--fit",
            help="Also run the greedy and exact engines for the largest gang of each pending gang "
            "shape that fits now (a few seconds on 1,000 nodes).",
        ),
    ] = False,
) -> None:
    """Summarise a snapshot: node shapes, resources, topology, pending groups, gated pods, the
    kube-scheduler version its Nodes' kubelets suggest, and how fragmented its GPUs are."""
    from gangplan.render import render_summary
    from gangplan.summary import inspect_json, inspect_summary

    cluster = load(snapshot, strict=strict, kube_version=_kv(kube_version))
    record = inspect_summary(cluster, fit=fit)
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
    as_json: Annotated[bool, json_flag("Print violations as JSON.")] = False,
    kube_version: Annotated[
        KubeVersion | None,
        kube_version_option(KUBE_VERSION_HELP + " Give the one the result was solved with."),
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
    kube_version: KubeVersionOpt = None,
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
    output: Annotated[Path, out_option("Snapshot file to write (multi-document YAML).")] = Path(
        "nodes.yaml"
    ),
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


# ---- solve / why / diff / whatif ---------------------------------------------------------------
@app.command()
def solve(
    snapshot: SnapshotArg,
    engine: EngineOpt = Engine(D.ENGINE),
    time_limit: TimeLimit = D.TIME_LIMIT,
    wall_limit: WallLimit = None,
    workers: Annotated[int, workers_option("Exact engine: " + D.WORKERS_HELP)] = D.WORKERS,
    seed: Annotated[
        int, seed_option("Seed for every random choice (CP-SAT, --tie-break random).")
    ] = D.SEED,
    tie_break: TieBreakLongOpt = TieBreak(D.TIE_BREAK),
    objective: ObjectiveOpt = Objective(D.OBJECTIVE),
    result_path: Annotated[
        Path | None, out_option("Write the Result JSON to this file.", short=False)
    ] = None,
    explain: Annotated[
        str | None,
        typer.Option(
            help="Also print the greedy trace of this pending pod: namespace/name, or a bare name when unique."
        ),
    ] = None,
    as_json: Annotated[
        bool,
        json_flag("Print the Result JSON instead of tables (same as -o json)."),
    ] = False,
    output_arg: Annotated[
        str,
        output_option(
            "table: fits 100 columns, reasons shortened; wide: every column and the full reasons; json: the Result. A file name with a suffix (result.json) writes the Result JSON there, as -o meant before (same as --out)."
        ),
    ] = Output.table.value,
    preemption: Preemption = None,
    strict: Strict = False,
    kube_version: KubeVersionOpt = None,
    trace: Trace = TraceOpt.summary,
    kueue_version: KueueVersionOpt = None,
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
    cluster = load(
        snapshot,
        strict=strict,
        warn=True,
        kube_version=options.kube_version,
        kueue_version=kueue_version,
    )
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
    snapshot: SnapshotArg,
    pod: Annotated[
        str, typer.Argument(help="The pending pod: namespace/name, or a bare name when unique.")
    ],
    seed: Annotated[
        int, seed_option("Seed for every random choice (--tie-break random, v1.36 gang pod order).")
    ] = D.SEED,
    tie_break: TieBreakLongOpt = TieBreak(D.TIE_BREAK),
    preemption: Preemption = None,
    strict: Strict = False,
    kube_version: KubeVersionOpt = None,
    kueue_version: KueueVersionOpt = None,
    as_json: Annotated[
        bool,
        json_flag(
            "Print the same as JSON: pod, snapshot, outcome (node, reason), context (the lines above the cycle), cycle (trace.pods[POD] of `solve --json`: rejections per Filter plugin, top scores, chosen), details (what blocked the pod behind a reason) and placements (every topology placement tried for its gang, its verdict and score, and the choice)."
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
    cluster = load(
        snapshot,
        strict=strict,
        warn=True,
        kube_version=options.kube_version,
        kueue_version=kueue_version,
    )
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
    snapshot: OptionalSnapshotArg = None,
    suite: Annotated[
        Path | None,
        typer.Option(help="Run every scenario of this directory and check its expectations."),
    ] = None,
    time_limit: TimeLimit = D.TIME_LIMIT,
    wall_limit: WallLimit = None,
    probe_time_limit: ProbeTimeLimit = D.PROBE_TIME_LIMIT,
    workers: Workers = D.WORKERS,
    seed: Seed = D.SEED,
    tie_break: TieBreakOpt = TieBreak(D.TIE_BREAK),
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
    preemption: Preemption = None,
    as_json: Annotated[
        bool,
        json_flag("Print the diff as JSON (same as -o json; `gangplan schema diff`)."),
    ] = False,
    output: Annotated[
        Output,
        output_option(
            "table: summary first, fits 100 columns; wide: every group and the full reasons; json: the diff document."
        ),
    ] = Output.table,
    strict: Strict = False,
    kube_version: KubeVersionOpt = None,
    samples: Annotated[
        int,
        typer.Option(
            "--samples",
            help="Also run greedy K times (seeds SEED..SEED+K-1, random ties and, in v1.36, random gang pod orders) and report how often it admits each group and reaches the optimum.",
            min=0,
        ),
    ] = D.SAMPLES,
    trace: Trace = TraceOpt.summary,
    kueue_version: KueueVersionOpt = None,
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
            kueue_version=kueue_version,
        )
    if code:
        raise typer.Exit(code)


@app.command()
def whatif(
    snapshot: SnapshotArg,
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
    quota: Annotated[
        list[str] | None,
        typer.Option(
            "--quota",
            help="A variant with a Kueue ClusterQueue's nominal quota set, CQ:FLAVOR:RESOURCE=QUANTITY, or raised, =+QUANTITY (repeatable: one variant each).",
            show_default=False,
        ),
    ] = None,
    cohort: Annotated[
        list[str] | None,
        typer.Option(
            "--cohort",
            help="A variant with a Kueue ClusterQueue put in a cohort, CQ=COHORT (CQ= leaves it; repeatable: one variant each).",
            show_default=False,
        ),
    ] = None,
    time_limit: Annotated[float, time_limit_option()] = D.TIME_LIMIT,
    wall_limit: WallLimit = None,
    probe_time_limit: Annotated[float, probe_time_limit_option()] = D.PROBE_TIME_LIMIT,
    workers: Workers = D.WORKERS,
    seed: Seed = D.SEED,
    tie_break: TieBreakOpt = TieBreak(D.TIE_BREAK),
    preemption: Preemption = None,
    as_json: Annotated[
        bool,
        json_flag("Print one JSON row per variant (same as -o json; `gangplan schema whatif`)."),
    ] = False,
    output: Annotated[
        Output,
        output_option(
            "table: one row per variant; wide: the notes and warnings in full; json: the rows."
        ),
    ] = Output.table,
    strict: Strict = False,
    kube_version: KubeVersionOpt = None,
) -> None:
    """What if: the snapshot and each variant of it, greedy against optimal, one row each.

    Rows: groups admitted by greedy and by the optimum (and, with Kueue, Workloads admitted by
    Kueue and by the optimum), idle GPUs after each, the classification and the kind of
    decisive step. Exit codes: 0, 4 if a variant's diff is a model mismatch (a
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
        quota=quota or [],
        cohort=cohort or [],
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


# ---- replay, bench, report, generate: their own modules, registered here in the help order ----
app.command("make-room")(make_room)
app.command()(replay)
app.command()(bench)
app.command()(report)
app.command()(generate)


@schema_app.command("replay")
def schema_replay() -> None:
    """The JSON Schema of `replay --out DIR`'s summary.json."""
    _print_schema("replay")


@schema_app.command("make-room")
def schema_make_room() -> None:
    """The JSON Schema of `make-room --json`."""
    _print_schema("make-room")


@schema_app.command("why")
def schema_why() -> None:
    """The JSON Schema of `why --json`."""
    _print_schema("why")


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
