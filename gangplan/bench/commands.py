"""``gangplan bench`` and ``gangplan report``: typer command functions, wiring only.

Registered in :mod:`gangplan.cli` with ``app.command()(bench)`` and ``app.command()(report)``.
Bad input (a suite that does not parse, a database that already holds results without
``--resume``, an unreachable Dask scheduler) exits 2 with the message, like every other command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from gangplan.cliutil import bad_input as _bad_input
from gangplan.io.errors import SnapshotError

EXIT_FAILURES = 1

_out = Console(highlight=False)


def bench(
    suite: Annotated[Path, typer.Argument(help="A suite file (kind: BenchSuite) or a directory of snapshots.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="SQLite database the results go into, as each snapshot finishes.")] = Path("results.db"),
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Snapshots run at once (local processes, or LocalCluster workers with --dask local).", min=1)] = 1,
    resume: Annotated[bool, typer.Option("--resume", help="Continue a database: skip the snapshots it already holds.")] = False,
    retry_failed: Annotated[bool, typer.Option("--retry-failed", help="With --resume: run the snapshots recorded as error, timeout or crashed again.")] = False,
    time_limit: Annotated[float | None, typer.Option("--time-limit", help="Seconds per exact solve phase [default: the suite's timeLimit, else 10].", min=0.01)] = None,
    task_timeout: Annotated[float | None, typer.Option("--task-timeout", help="Wall seconds per snapshot before it is killed and recorded as timeout [default: the suite's taskTimeout, else 5 x time limit + 30].", min=0.1)] = None,
    explain: Annotated[bool | None, typer.Option("--explain/--no-explain", help="Also find the decisive greedy step of suboptimal snapshots [default: the suite's explain].")] = None,
    dask: Annotated[str | None, typer.Option("--dask", help="Run on Dask: a scheduler address (tcp://host:8786) or 'local' for a LocalCluster of --jobs workers.")] = None,
) -> None:
    """Run greedy, exact and the diff on every snapshot of SUITE into a results database."""
    from gangplan.bench.runner import run_bench

    try:
        summary = run_bench(suite, out, jobs=jobs, resume=resume, retry_failed=retry_failed, time_limit=time_limit, task_timeout=task_timeout, explain=explain,
                            executor="dask" if dask else "local", dask_address=dask)
    except SnapshotError as e:
        raise _bad_input(e) from None
    _out.print(f"[bold]{summary.suite}[/bold]: {summary.ran} snapshot(s) run, {summary.skipped} already done, {summary.seconds:.1f} s")
    table = Table(show_edge=False)
    table.add_column("outcome")
    table.add_column("snapshots", justify="right")
    for name, n in sorted(summary.classifications.items()):
        table.add_row(name, str(n))
    for name in ("error", "timeout", "crashed"):
        if summary.statuses[name]:
            table.add_row(f"[red]{name}[/red]", str(summary.statuses[name]))
    _out.print(table)
    _out.print(f"results: {out}  (gangplan report {out})")
    if summary.failures:
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
