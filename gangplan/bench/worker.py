"""One bench task: build the snapshot, diff it, validate both results, return the rows.

:func:`run_task` is the unit of work every executor (:mod:`gangplan.bench.executors`) runs, in a
forked local process or on a Dask worker. It never raises for a bad snapshot or an engine bug: it
returns the task's rows with ``status`` ``error`` and the message, so one scenario can never stop
the suite. :class:`RunOptions` are the per-task settings, the same on every executor.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gangplan.bench.store import diff_row, run_row
from gangplan.bench.suites import Task
from gangplan.io.errors import SnapshotError
from gangplan.models.cluster import Cluster
from gangplan.models.documents import BenchDiff, BenchRun
from gangplan.models.result import Result
from gangplan.models.well_known import GPU

DEFAULT_TIME_LIMIT = 10.0


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


def cluster_stats(cluster: Cluster) -> dict[str, int]:
    """Size of the instance, for the report's x axes."""
    gpus = sum(n.allocatable.get(GPU, 0) for n in cluster.nodes)
    used = sum(p.requests.get(GPU, 0) for p in cluster.bound_pods)
    pending = cluster.pending_pods
    groups = {p.group_key for p in pending if p.group_key}
    return {
        "nodes": len(cluster.nodes),
        "pending_pods": len(pending),
        "groups": len(groups),
        "gpus": int(gpus),
        "free_gpus": int(gpus - used),
    }


def engine_row(
    cluster: Cluster, result: Result, engine: str, violations: list | None = None
) -> dict[str, Any]:
    """One ``runs`` row (a :class:`BenchRun`, :func:`gangplan.bench.store.run_row`); the result is
    validated, whatever the engine claims: here, unless
    ``violations`` (the validator's findings the diff already has) are given."""
    from gangplan.solver.validate import validate

    if violations is None:
        violations = validate(cluster, result)
    placements = result.placements()
    return run_row(
        BenchRun(
            engine=engine,
            status=result.status.value,
            objective=dict(result.objective),
            admitted_groups=len(result.admitted_groups()),
            groups=len(result.groups),
            placed_pods=len(placements),
            pending_pods=len(result.pods),
            placed_gpus=int(sum(cluster.pod_by_key[k].requests.get(GPU, 0) for k in placements)),
            victims=len(result.victims),
            gap=None if result.gap is None else round(float(result.gap), 6),
            violations=len(violations),
            wall_seconds=round(float(result.wall_seconds), 4),
        )
    )


def _task_row(
    task: Task,
    opts: RunOptions,
    status: str,
    error: str | None,
    stats: dict[str, int],
    seconds: float,
) -> dict[str, Any]:
    return {
        "task_id": task.id,
        "family": task.family,
        "generator": task.generator,
        "params": json.dumps(task.params, sort_keys=True)
        if task.generator
        else json.dumps({"path": task.path}),
        "seed": task.seed,
        "status": status,
        "error": error,
        **stats,
        "time_limit": opts.time_limit,
        "wall_seconds": round(seconds, 4),
    }


def failed_outcome(
    task: Task, opts: RunOptions, status: str, error: str, seconds: float
) -> dict[str, Any]:
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
        return failed_outcome(
            task,
            opts,
            "error",
            _error_text("load" if task.path else "generate", e),
            time.perf_counter() - t0,
        )
    stats = cluster_stats(cluster)
    try:
        d = diff_snapshot(
            cluster,
            snapshot=task.id,
            time_limit=opts.time_limit,
            probe_time_limit=opts.probe_time_limit,
            workers=opts.workers,
            seed=opts.seed,
            tie_break=opts.tie_break,
            explain=opts.explain,
        )
        runs = [
            engine_row(cluster, d.greedy, "greedy", d.violations["greedy"]),
            engine_row(cluster, d.optimal, "exact", d.violations["optimal"]),
        ]
    except Exception as e:  # noqa: BLE001 - an engine bug on one snapshot must not stop the suite
        out = failed_outcome(task, opts, "error", _error_text("diff", e), time.perf_counter() - t0)
        out["task"].update(stats)
        return out
    diff = diff_row(
        BenchDiff(
            classification=d.classification,
            gap=None if d.gap is None else round(float(d.gap), 6),
            problems=len(d.problems),
            first_problem=d.problems[0] if d.problems else None,
            decisive_step=d.decisive.step if d.decisive else None,
            decisive_pod=d.decisive.pod if d.decisive else None,
            seconds=round(d.seconds, 4),
        )
    )
    return {
        "task": _task_row(task, opts, "ok", None, stats, time.perf_counter() - t0),
        "runs": runs,
        "diff": diff,
    }


__all__ = [
    "DEFAULT_TIME_LIMIT",
    "RunOptions",
    "cluster_stats",
    "engine_row",
    "failed_outcome",
    "run_task",
]
