"""``gangplan bench`` and ``gangplan report``: typer command functions, wiring only.

Registered in :mod:`gangplan.cli` with ``app.command()(bench)`` and ``app.command()(report)``.
Bad input (a suite that does not parse, a database that already holds results without
``--resume``, an unreachable Dask scheduler) exits 2 with the message, like every other command.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gangplan.cliutil import bad_input as _bad_input
from gangplan.io.errors import SnapshotError

EXIT_FAILURES = 1

_out = Console(highlight=False, width=int(os.environ.get("COLUMNS") or 100))


def bench(
    suite: Annotated[Path, typer.Argument(help="A suite file (kind: BenchSuite) or a directory of snapshots.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="SQLite database the results go into, as each snapshot finishes.")] = Path("results.db"),
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Snapshots run at once (local processes, or LocalCluster workers with --dask local).", min=1)] = 1,
    resume: Annotated[bool, typer.Option("--resume", help="Continue a database: skip the snapshots it already holds (failed ones too, unless --retry-failed).")] = False,
    retry_failed: Annotated[bool, typer.Option("--retry-failed", help="Run the snapshots recorded as error, timeout or crashed again (implies --resume).")] = False,
    time_limit: Annotated[float | None, typer.Option("--time-limit", help="Seconds per exact solve phase (default: the suite's timeLimit, else 10).", min=0.01, show_default=False)] = None,
    task_timeout: Annotated[float | None, typer.Option("--task-timeout", help="Wall seconds per snapshot before it is killed and recorded as timeout (default: the suite's taskTimeout, else 5 x time limit + 30).", min=0.1, show_default=False)] = None,
    explain: Annotated[bool | None, typer.Option("--explain/--no-explain", help="Also find the decisive greedy step of suboptimal snapshots (default: the suite's explain, else no).", show_default=False)] = None,
    dask: Annotated[str | None, typer.Option("--dask", help="Run on Dask: a scheduler address (tcp://host:8786) or 'local' for a LocalCluster of --jobs workers (default: local processes).", show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print every snapshot of the database as JSON rows (`gangplan schema bench-row`) instead of the table.")] = False,
) -> None:
    """Run greedy, exact and the diff on every snapshot of SUITE into a results database.

    The table counts everything in the database (earlier runs included) and names every failed
    snapshot with its cause. Exit codes: 0 every snapshot finished, 1 a snapshot in the database
    failed (error, timeout or crashed), 2 bad input.
    """
    import json
    import sys

    from gangplan.bench.runner import run_bench
    from gangplan.bench.store import bench_rows, outcome_counts

    try:
        summary = run_bench(suite, out, jobs=jobs, resume=resume, retry_failed=retry_failed, time_limit=time_limit, task_timeout=task_timeout, explain=explain,
                            executor="dask" if dask else "local", dask_address=dask, progress=not as_json and sys.stderr.isatty())
    except SnapshotError as e:
        raise _bad_input(e) from None
    classes, statuses, failed = outcome_counts(out)
    if as_json:
        sys.stdout.write(json.dumps(bench_rows(out), indent=2) + "\n")
    else:
        total = sum(statuses.values())
        _out.print(f"[bold]{summary.suite}[/bold]: {summary.ran} snapshot(s) run now, {summary.skipped} already in the database, {summary.seconds:.1f} s; {out} holds {total}")
        table = Table(show_edge=False)
        table.add_column("outcome (whole database)")
        table.add_column("snapshots", justify="right")
        for name, n in sorted(classes.items()):
            table.add_row(name, str(n))
        for name in ("error", "timeout", "crashed"):
            if statuses.get(name):
                table.add_row(f"[red]{name}[/red]", str(statuses[name]))
        _out.print(table)
        if failed:
            _out.print(f"[red]{len(failed)} snapshot(s) failed[/red] (run them again with --retry-failed):")
            for f in failed:
                _out.print(Text.assemble("  ", (f["task_id"], "bold"), f"  {f['status']}: ", f["error"] or "no message"), soft_wrap=True)
        _out.print(f"results: {out}  (gangplan report {out} --out report)")
    if failed:
        raise typer.Exit(EXIT_FAILURES)


def report(
    db: Annotated[Path, typer.Argument(help="A results database written by `gangplan bench`.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for index.html, the CSV tables and the plots.")] = Path("report"),
    compare: Annotated[Path | None, typer.Option("--compare", help="A second results database to show side by side.")] = None,
) -> None:
    """Tables (CSV) and an HTML report with plots from a results database."""
    from gangplan.bench.report import build_report

    try:
        index = build_report(db, out, compare=compare)
    except SnapshotError as e:
        raise _bad_input(e) from None
    _out.print(f"wrote {index}")


__all__ = ["bench", "report"]
