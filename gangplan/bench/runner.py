"""Run a suite: every task on an executor, each outcome recorded in the store as it arrives.

:func:`run_bench` is the only writer of the database. What a task does (greedy, exact, the diff,
both results validated) is :func:`gangplan.bench.worker.run_task`; where it runs (a forked local
process, this process, a Dask worker) is :mod:`gangplan.bench.executors`. Imports go one way:
runner -> executors -> worker.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gangplan.bench.executors import make_executor
from gangplan.bench.store import FAILED, ResultStore
from gangplan.bench.suites import Suite, load_suite
from gangplan.bench.worker import DEFAULT_TIME_LIMIT, RunOptions
from gangplan.io.errors import SnapshotError


@dataclass
class BenchSummary:
    suite: str
    db: str
    total: int
    skipped: int
    ran: int = 0
    statuses: Counter = field(default_factory=Counter)
    classifications: Counter = field(default_factory=Counter)
    seconds: float = 0.0

    @property
    def failures(self) -> int:
        return sum(self.statuses[s] for s in FAILED)


# ---- a suite ----------------------------------------------------------------------------------
def resolve_options(
    suite: Suite,
    *,
    time_limit: float | None,
    task_timeout: float | None,
    explain: bool | None,
    workers: int,
    probe_time_limit: float | None,
    seed: int,
) -> RunOptions:
    """Explicit arguments win over the suite file's spec, which wins over the defaults."""
    tl = time_limit if time_limit is not None else suite.time_limit or DEFAULT_TIME_LIMIT
    return RunOptions(
        time_limit=float(tl),
        probe_time_limit=float(probe_time_limit if probe_time_limit is not None else min(5.0, tl)),
        workers=int(workers),
        seed=int(seed),
        explain=suite.explain if explain is None else bool(explain),
        task_timeout=task_timeout if task_timeout is not None else suite.task_timeout,
    )


def run_bench(
    suite: Suite | str | Path,
    db_path: str | Path,
    *,
    jobs: int = 1,
    resume: bool = False,
    retry_failed: bool = False,
    time_limit: float | None = None,
    executor: str | Any = "local",
    dask_address: str | None = None,
    progress: bool = True,
    task_timeout: float | None = None,
    explain: bool | None = None,
    workers: int = 1,
    probe_time_limit: float | None = None,
    seed: int = 0,
    dask_processes: bool = True,
) -> BenchSummary:
    """Run every task of ``suite`` not yet in ``db_path`` and record each as it finishes.

    ``executor``: ``local`` (a process per task, at most ``jobs`` at once, wall limit per task),
    ``inline`` (this process, no isolation: for debugging) or ``dask`` (``dask_address``
    ``tcp://host:port``, or ``local`` for a LocalCluster of ``jobs`` workers). A database that
    already holds results is refused unless ``resume``; then finished tasks are skipped, and with
    ``retry_failed`` (which implies ``resume``) the failed ones are run again. An object
    with an ``execute(tasks, opts)`` method is used as the executor as it is.
    """
    if not isinstance(suite, Suite):
        suite = load_suite(suite)
    opts = resolve_options(
        suite,
        time_limit=time_limit,
        task_timeout=task_timeout,
        explain=explain,
        workers=workers,
        probe_time_limit=probe_time_limit,
        seed=seed,
    )
    t0 = time.perf_counter()
    with ResultStore(db_path) as store:
        resume = resume or retry_failed
        done = store.done_ids(failed=not retry_failed)
        if store.count() and not resume:
            raise SnapshotError(
                str(db_path),
                f"already holds {store.count()} finished task(s): pass --resume to continue it, or choose another --out",
            )
        store.set_meta({"suite": suite.name, "suite_source": suite.source, "options": asdict(opts)})
        todo = [t for t in suite.tasks if t.id not in done]
        summary = BenchSummary(
            suite=suite.name,
            db=str(db_path),
            total=len(suite.tasks),
            skipped=len(suite.tasks) - len(todo),
        )
        runner = (
            executor
            if hasattr(executor, "execute")
            else make_executor(
                executor, jobs=jobs, dask_address=dask_address, dask_processes=dask_processes
            )
        )
        with _Progress(progress, len(suite.tasks), summary.skipped, suite.name) as bar:
            for outcome in runner.execute(todo, opts):
                store.record(outcome, replace_failed=retry_failed)
                _count(summary, outcome)
                bar.advance(summary.failures)
    summary.seconds = time.perf_counter() - t0
    return summary


def _count(summary: BenchSummary, outcome: dict[str, Any]) -> None:
    summary.ran += 1
    summary.statuses[outcome["task"]["status"]] += 1
    if outcome.get("diff"):
        summary.classifications[outcome["diff"]["classification"]] += 1


class _Progress:
    """A rich progress bar on stderr (done / total, failures, elapsed, ETA), or nothing."""

    def __init__(self, enabled: bool, total: int, completed: int, name: str) -> None:
        self.enabled, self.total, self.completed, self.name = enabled, total, completed, name
        self._progress = None
        self._task = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("failures: {task.fields[failures]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                auto_refresh=False,  # no thread: the local executor forks
            )
            self._progress.start()
            self._task = self._progress.add_task(
                self.name, total=self.total, completed=self.completed, failures=0
            )
        return self

    def advance(self, failures: int) -> None:
        if self._progress is not None:
            self._progress.update(self._task, advance=1, failures=failures, refresh=True)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()


__all__ = ["BenchSummary", "resolve_options", "run_bench"]
