"""``gangplan make-room``: what would it take to admit pending groups (issue 40); the work is
:func:`gangplan.api.make_room`, registered on the app by :mod:`gangplan.cli`.

Exit codes: 0 a plan that works (checked by kube-scheduler's cycle), or nothing to do; 2 bad
input; 3 no working plan (none exists, none was found within the work limit, or the one found
fails the check: the table says which).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from gangplan.cli_common import Output, console, load, source, spinner
from gangplan.cli_options import (
    EXIT_VIOLATIONS,
    KubeVersionOpt,
    OptionalSnapshotArg,
    Seed,
    Strict,
    TimeLimit,
    WallLimit,
    Workers,
    bad_input,
    json_flag,
    kv,
    output_option,
)
from gangplan.io.errors import SnapshotError
from gangplan.models import defaults as D

EXIT_NO_PLAN = 3
"""``make-room``: no working plan (none exists, none found in time, or it fails the check)."""


def _weights(given: list[str]):
    from pydantic import ValidationError

    from gangplan.models.room import RoomWeights

    values: dict[str, int] = {}
    for item in given:
        name, sep, value = item.partition("=")
        if not sep or name not in RoomWeights.model_fields:
            raise SnapshotError(
                "<arguments>",
                f"--weight {item!r}: give NAME=VALUE, NAME one of {', '.join(RoomWeights.model_fields)}",
            )
        try:
            values[name] = int(value)
        except ValueError:
            raise SnapshotError(
                "<arguments>", f"--weight {item!r}: the value must be a whole number"
            ) from None
    try:
        return RoomWeights(**values)
    except ValidationError as e:
        raise SnapshotError(
            "<arguments>", f"--weight: {e.errors()[0]['loc'][0]} {e.errors()[0]['msg']}"
        ) from None


def _suite(directory: Path, *, as_json: bool, **options) -> None:
    from rich.table import Table

    from gangplan.solver.room.suite import run_room_suite

    try:
        rows = run_room_suite(directory, **options)
    except SnapshotError as e:
        raise bad_input(e) from None
    if as_json:
        docs = [
            {
                "scenario": r.scenario,
                "error": r.error,
                "expectations": r.expectations,
                "failures": r.failures,
                "plan": r.doc.model_dump(mode="json", by_alias=True) if r.doc else None,
            }
            for r in rows
        ]
        json.dump(docs, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        shown = console(Output.table)
        table = Table(show_edge=False, header_style="bold")
        for col in ("scenario", "expectations", "met", "optimal", "baseline", "s"):
            table.add_column(col)
        for r in rows:
            o = r.doc.optimal if r.doc else None
            b = r.doc.baseline if r.doc else None
            table.add_row(
                r.scenario,
                str(r.expectations),
                "yes" if r.ok else "NO: " + "; ".join(r.failures or [r.error or ""]),
                f"{len(o.moves)} moved, {len(o.evictions)} evicted" if o and o.found else "no plan",
                f"{len(b.moves)} moved, {len(b.evictions)} evicted" if b and b.found else "no plan",
                f"{r.seconds:.1f}",
            )
        shown.print(table)
        met = sum(1 for r in rows if r.ok)
        shown.print(f"{met} of {len(rows)} scenarios meet every expectation")
    if not all(r.ok for r in rows):
        raise typer.Exit(EXIT_VIOLATIONS)


Groups = Annotated[
    list[str] | None,
    typer.Argument(
        help="The pending groups to admit: PodGroup or CompositePodGroup (namespace/name, or a bare name "
        "when unique), or a pending pod. Default: every pending group kube-scheduler leaves pending.",
        show_default=False,
    ),
]
Evict = Annotated[
    bool,
    typer.Option(
        "--evict",
        help="Lower-priority running work may be stopped for good, as preemption would (default: only moves).",
    ),
]
Weight = Annotated[
    list[str] | None,
    typer.Option(
        "--weight",
        help="A cost weight, NAME=VALUE (repeatable): groups (per running group disrupted, default 1000000), "
        "moves (per pod moved, 10000), evictions (per pod evicted, 10000), gpus (per GPU interrupted, 1).",
        show_default=False,
    ),
]
Like = Annotated[
    str | None,
    typer.Option(
        "--like",
        help="Nodes to add copy this node; default: the largest node classes of the snapshot.",
    ),
]
AddNodes = Annotated[
    bool,
    typer.Option("--add-nodes/--no-add-nodes", help="Also count the fewest nodes to add instead."),
]
Copies = Annotated[
    int,
    typer.Option(
        "--copies", help="Also count how many of this many copies of each target fit now.", min=0
    ),
]
Samples = Annotated[
    int,
    typer.Option(
        "--samples",
        help="Also replay the plan K times with seeded random score ties (kube-scheduler draws them "
        "at random) and say in how many it works.",
        min=0,
    ),
]
Suite = Annotated[
    Path | None,
    typer.Option(
        "--suite",
        help="Run every scenario of this directory instead (targets and options from their "
        "gangplan.io/expect-room* and room-* annotations) and check the expectations; exit 1 when one is not met.",
    ),
]
Plan = Annotated[
    Path | None,
    typer.Option(
        "--plan",
        help="Write the plan: this file gets the Evictions, a script beside it (same stem, .sh) "
        "cordons, evicts, waits for the moved pods and uncordons.",
    ),
]
AsJson = Annotated[bool, json_flag("Print the plan document (gangplan schema make-room).")]
OutputArg = Annotated[str, output_option("table, wide (every move), or json (same as --json).")]


def _solve(snapshot: Path, groups, *, strict: bool, like: str | None, weight, **options):
    """Load the snapshot and run :func:`gangplan.api.make_room`; bad input is SnapshotError."""
    from gangplan import api

    weights = _weights(weight or [])
    cluster = load(snapshot, strict=strict, warn=True, kube_version=options["kube_version"])
    if like is not None and like not in cluster.node_index:
        raise SnapshotError("<arguments>", f"--like {like!r}: no such node in the snapshot")
    with spinner(not options.pop("quiet")) as sp:
        sp.update("make-room")
        try:
            doc = api.make_room(
                cluster,
                groups or None,
                snapshot=source(snapshot),
                weights=weights,
                like=like,
                **options,
            )
        except ValueError as e:  # a target that is no pending group
            raise SnapshotError(source(snapshot), str(e)) from None
    return cluster, doc


def _print(doc, cluster, *, plan: Path | None, output: Output) -> None:
    from gangplan.render_room import render_room

    written = None
    if plan is not None and doc.optimal.found:
        from gangplan.io.room_plan import write_room_plan

        try:
            written = write_room_plan(doc, cluster, plan)
        except OSError as e:
            raise SnapshotError(str(plan), f"cannot write: {e.strerror or e}") from None
    if output == Output.json:
        json.dump(doc.model_dump(mode="json", by_alias=True), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    shown = console(output)
    render_room(shown, doc, wide=output == Output.wide)
    if written is not None:
        shown.print(f"plan: {written}; apply with: bash {written}", markup=False, soft_wrap=True)


def make_room(
    snapshot: OptionalSnapshotArg = None,
    groups: Groups = None,
    evict: Evict = False,
    weight: Weight = None,
    like: Like = None,
    add_nodes: AddNodes = True,
    copies: Copies = 0,
    samples: Samples = 0,
    suite: Suite = None,
    plan: Plan = None,
    time_limit: TimeLimit = D.TIME_LIMIT,
    wall_limit: WallLimit = None,
    workers: Workers = D.WORKERS,
    seed: Seed = D.SEED,
    kube_version: KubeVersionOpt = None,
    strict: Strict = False,
    as_json: AsJson = False,
    output_arg: OutputArg = Output.table.value,
) -> None:
    """What would it take to admit pending groups: the fewest moves of running pods (and, with
    --evict, evictions), checked by kube-scheduler's own cycle, beside a greedy baseline; and the
    fewest nodes to add.

    Exit codes: 0 a plan that works (or nothing to do), 1 --suite: an expectation not met,
    2 bad input, 3 no working plan."""
    engine = dict(time_limit=time_limit, wall_limit=wall_limit, workers=workers, seed=seed)
    if output_arg not in Output.__members__:
        raise bad_input(
            SnapshotError(
                "<arguments>", f"-o/--output: {output_arg!r} is none of table, wide, json"
            )
        )
    output = Output.json if as_json else Output(output_arg)
    if suite is not None:
        if snapshot is not None or groups:
            raise bad_input(SnapshotError("<arguments>", "--suite DIR takes no SNAPSHOT or GROUP"))
        _suite(suite, as_json=output == Output.json, **engine)
        return
    if snapshot is None:
        raise bad_input(SnapshotError("<arguments>", "give a SNAPSHOT (or --suite DIR)"))
    try:
        cluster, doc = _solve(
            snapshot,
            groups,
            strict=strict,
            like=like,
            weight=weight,
            evict=evict,
            add_nodes=add_nodes,
            copies=copies,
            samples=samples,
            kube_version=kv(kube_version),
            quiet=output == Output.json,
            **engine,
        )
        _print(doc, cluster, plan=plan, output=output)
    except SnapshotError as e:
        raise bad_input(e) from None
    if doc.targets and not doc.verified:
        raise typer.Exit(EXIT_NO_PLAN)
