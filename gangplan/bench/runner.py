"""Run a suite: greedy, exact and the diff per task, each result validated, into the store.

:func:`run_task` is the unit of work every executor runs (a forked local process or a Dask
worker). It never raises for a bad snapshot or an engine bug: it returns the task's rows with
``status`` ``error`` and the message, so one scenario can never stop the suite. The parent
(:func:`run_bench`) is the only writer of the database; it records each outcome as it arrives.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gangplan.bench.store import ResultStore
from gangplan.bench.suites import Suite, Task, load_suite
from gangplan.io.errors import SnapshotError
from gangplan.models.cluster import Cluster
from gangplan.models.result import Result
from gangplan.models.well_known import GPU

DEFAULT_TIME_LIMIT = 10.0
FAILED = ("error", "timeout", "crashed")


@dataclass(frozen=True)
class RunOptions:
    """Per-task solver settings; the same on every executor so their rows agree."""

    time_limit: float = DEFAULT_TIME_LIMIT
    probe_time_limit: float = 5.0
    workers: int = 1
    """CP-SAT workers per solve. 1 keeps a solve deterministic and leaves the cores to --jobs."""
    seed: int = 0
    tie_break: str = "first"
    explain: bool = False
    task_timeout: float | None = None
    """Wall seconds per task (local executor); None: 5 x time_limit + 30."""

    @property
    def wall_limit(self) -> float:
        return self.task_timeout if self.task_timeout is not None else 5 * self.time_limit + 30


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


# ---- one task ---------------------------------------------------------------------------------
def cluster_stats(cluster: Cluster) -> dict[str, int]:
    """Size of the instance, for the report's x axes."""
    gpus = sum(n.allocatable.get(GPU, 0) for n in cluster.nodes)
    used = sum(p.requests.get(GPU, 0) for p in cluster.bound_pods)
    pending = cluster.pending_pods
    groups = {p.group_key for p in pending if p.group_key}
    return {"nodes": len(cluster.nodes), "pending_pods": len(pending), "groups": len(groups), "gpus": int(gpus), "free_gpus": int(gpus - used)}


def engine_row(cluster: Cluster, result: Result, engine: str) -> dict[str, Any]:
    """One ``runs`` row; the result is validated here, whatever the engine claims."""
    from gangplan.solver.validate import validate

    placements = result.placements()
    return {
        "engine": engine,
        "status": result.status.value,
        "objective": json.dumps(result.objective),
        "admitted_groups": len(result.admitted_groups()),
        "groups": len(result.groups),
        "placed_pods": len(placements),
        "pending_pods": len(result.pods),
        "placed_gpus": int(sum(cluster.pod_by_key[k].requests.get(GPU, 0) for k in placements)),
        "victims": len(result.victims),
        "gap": None if result.gap is None else round(float(result.gap), 6),
        "violations": len(validate(cluster, result)),
        "wall_seconds": round(float(result.wall_seconds), 4),
    }


def _task_row(task: Task, opts: RunOptions, status: str, error: str | None, stats: dict[str, int], seconds: float) -> dict[str, Any]:
    return {
        "task_id": task.id, "family": task.family, "generator": task.generator,
        "params": json.dumps(task.params, sort_keys=True) if task.generator else json.dumps({"path": task.path}),
        "seed": task.seed, "status": status, "error": error, **stats,
        "time_limit": opts.time_limit, "wall_seconds": round(seconds, 4),
    }


def failed_outcome(task: Task, opts: RunOptions, status: str, error: str, seconds: float) -> dict[str, Any]:
    """The rows of a task that did not finish: only its ``tasks`` row, with the reason."""
    return {"task": _task_row(task, opts, status, error, {}, seconds), "runs": [], "diff": None}


def _error_text(phase: str, e: BaseException) -> str:
    """One line a user can act on: bad input (a snapshot, a generator parameter, a missing data
    file) as its message; anything else is a gangplan bug, said so, with how to see more
    (``GANGPLAN_DEBUG=1`` adds where it was raised)."""
    if isinstance(e, SnapshotError | ValueError | FileNotFoundError | KeyError):
        text = f"{phase}: {e.args[0] if isinstance(e, KeyError) and e.args else e}"
    else:
        text = f"{phase}: internal error (a gangplan bug) {type(e).__name__}: {e}; rerun with GANGPLAN_DEBUG=1 for where it was raised"
        if os.environ.get("GANGPLAN_DEBUG") and e.__traceback__:
            where = traceback.extract_tb(e.__traceback__)[-1]
            text += f" ({Path(where.filename).name}:{where.lineno})"
    return " ".join(text.split())


def run_task(task: Task, opts: RunOptions) -> dict[str, Any]:
    """Build the snapshot, diff it, validate both results; return the rows (never raises on bad input)."""
    from gangplan.solver.diff import diff_snapshot

    t0 = time.perf_counter()
    try:
        cluster = task.build()
    except Exception as e:  # noqa: BLE001 - a bad generator cell is a recorded failure, not a stop
        return failed_outcome(task, opts, "error", _error_text("load" if task.path else "generate", e), time.perf_counter() - t0)
    stats = cluster_stats(cluster)
    try:
        d = diff_snapshot(cluster, snapshot=task.id, time_limit=opts.time_limit, probe_time_limit=opts.probe_time_limit,
                          workers=opts.workers, seed=opts.seed, tie_break=opts.tie_break, explain=opts.explain)
        runs = [engine_row(cluster, d.greedy, "greedy"), engine_row(cluster, d.optimal, "exact")]
    except Exception as e:  # noqa: BLE001 - an engine bug on one snapshot must not stop the suite
        out = failed_outcome(task, opts, "error", _error_text("diff", e), time.perf_counter() - t0)
        out["task"].update(stats)
        return out
    diff = {
        "classification": d.classification,
        "gap": None if d.gap is None else round(float(d.gap), 6),
        "problems": len(d.problems),
        "first_problem": d.problems[0] if d.problems else None,
        "decisive_step": d.decisive.step if d.decisive else None,
        "decisive_pod": d.decisive.pod if d.decisive else None,
        "seconds": round(d.seconds, 4),
    }
    return {"task": _task_row(task, opts, "ok", None, stats, time.perf_counter() - t0), "runs": runs, "diff": diff}


# ---- a suite ----------------------------------------------------------------------------------
def resolve_options(suite: Suite, *, time_limit: float | None, task_timeout: float | None, explain: bool | None,
                    workers: int, probe_time_limit: float | None, seed: int) -> RunOptions:
    """Explicit arguments win over the suite file's spec, which wins over the defaults."""
    tl = time_limit if time_limit is not None else suite.time_limit or DEFAULT_TIME_LIMIT
    return RunOptions(
        time_limit=float(tl),
        probe_time_limit=float(probe_time_limit if probe_time_limit is not None else min(5.0, tl)),
        workers=int(workers), seed=int(seed),
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
    from gangplan.bench.executors import make_executor

    if not isinstance(suite, Suite):
        suite = load_suite(suite)
    opts = resolve_options(suite, time_limit=time_limit, task_timeout=task_timeout, explain=explain,
                           workers=workers, probe_time_limit=probe_time_limit, seed=seed)
    t0 = time.perf_counter()
    with ResultStore(db_path) as store:
        resume = resume or retry_failed
        done = store.done_ids(failed=not retry_failed)
        if store.count() and not resume:
            raise SnapshotError(str(db_path), f"already holds {store.count()} finished task(s): pass --resume to continue it, or choose another --out")
        store.set_meta({"suite": suite.name, "suite_source": suite.source, "options": asdict(opts)})
        todo = [t for t in suite.tasks if t.id not in done]
        summary = BenchSummary(suite=suite.name, db=str(db_path), total=len(suite.tasks), skipped=len(suite.tasks) - len(todo))
        runner = executor if hasattr(executor, "execute") else make_executor(executor, jobs=jobs, dask_address=dask_address, dask_processes=dask_processes)
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
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("failures: {task.fields[failures]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                console=Console(stderr=True), auto_refresh=False,  # no thread: the local executor forks
            )
            self._progress.start()
            self._task = self._progress.add_task(self.name, total=self.total, completed=self.completed, failures=0)
        return self

    def advance(self, failures: int) -> None:
        if self._progress is not None:
            self._progress.update(self._task, advance=1, failures=failures, refresh=True)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()


__all__ = ["BenchSummary", "RunOptions", "cluster_stats", "engine_row", "failed_outcome", "run_bench", "run_task"]
