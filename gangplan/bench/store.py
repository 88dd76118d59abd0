"""The results store: one SQLite file, written as each task finishes, read back by the report.

Tables (one transaction per task, so a killed run loses nothing it finished and never leaves half
a task behind):

``tasks``  one row per snapshot: family, generator parameters, seed, cluster size, and ``status``
           (``ok``, ``error`` = an exception, ``timeout`` = over the task's wall limit, ``crashed``
           = the worker process died). PRIMARY KEY ``task_id``.
``runs``   one row per snapshot and engine (``greedy``, ``exact``) that finished: result status,
           objective tiers (JSON, highest tier first), admitted groups, placed pods and GPUs,
           victims, gap, violations found by ``validate``, wall seconds. PRIMARY KEY
           ``(task_id, engine)``.
``diffs``  one row per snapshot whose diff finished: the classification of
           :mod:`gangplan.solver.diff`, the gap, the problems (count and first one: why a
           snapshot is a model mismatch), the decisive step. PRIMARY KEY
           ``task_id``.
``meta``   key/value: the suite, the options of the first run.

The keys make ``--resume`` safe: a task already in ``tasks`` is skipped, and a second insert of a
task would fail rather than duplicate it (``--retry-failed`` replaces a failed task's row in the
transaction that writes its new outcome; a failed task has no ``runs`` or ``diffs`` rows). WAL journaling lets the report (or a test) read while a
bench writes.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from gangplan.models.documents import BenchDiff, BenchRun

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tasks (
    task_id TEXT PRIMARY KEY,
    family TEXT NOT NULL,
    generator TEXT,
    params TEXT NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    nodes INTEGER,
    pending_pods INTEGER,
    groups INTEGER,
    gpus INTEGER,
    free_gpus INTEGER,
    time_limit REAL,
    wall_seconds REAL,
    finished_at REAL
);
CREATE TABLE IF NOT EXISTS runs (
    task_id TEXT NOT NULL REFERENCES tasks(task_id),
    engine TEXT NOT NULL,
    status TEXT NOT NULL,
    objective TEXT NOT NULL,
    admitted_groups INTEGER NOT NULL,
    groups INTEGER NOT NULL,
    placed_pods INTEGER NOT NULL,
    pending_pods INTEGER NOT NULL,
    placed_gpus INTEGER NOT NULL,
    victims INTEGER NOT NULL,
    gap REAL,
    violations INTEGER NOT NULL,
    wall_seconds REAL NOT NULL,
    PRIMARY KEY (task_id, engine)
);
CREATE TABLE IF NOT EXISTS diffs (
    task_id TEXT PRIMARY KEY REFERENCES tasks(task_id),
    classification TEXT NOT NULL,
    gap REAL,
    problems INTEGER NOT NULL,
    first_problem TEXT,
    decisive_step INTEGER,
    decisive_pod TEXT,
    seconds REAL NOT NULL
);
"""

TASK_COLUMNS = (
    "task_id",
    "family",
    "generator",
    "params",
    "seed",
    "status",
    "error",
    "nodes",
    "pending_pods",
    "groups",
    "gpus",
    "free_gpus",
    "time_limit",
    "wall_seconds",
    "finished_at",
)
RUN_COLUMNS = ("task_id", *BenchRun.model_fields)
"""One engine run: the fields of :class:`~gangplan.models.documents.BenchRun`, the one record
the worker builds, this table stores, ``gangplan bench --json`` prints and the report reads."""
DIFF_COLUMNS = ("task_id", *BenchDiff.model_fields)
"""One diff: the fields of :class:`~gangplan.models.documents.BenchDiff`."""
TABLES = {"tasks": TASK_COLUMNS, "runs": RUN_COLUMNS, "diffs": DIFF_COLUMNS}
FAILED = ("error", "timeout", "crashed")
"""Task statuses of a task that did not finish (the others: ``ok``)."""
TIME_COLUMNS = frozenset({"wall_seconds", "seconds", "finished_at"})
"""Columns that measure time: they differ between runs of the same suite, nothing else should."""


def connect(path: str | Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=30.0)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")  # in WAL: a commit survives a killed process
    conn.executescript(SCHEMA)
    conn.execute(
        "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
        (str(SCHEMA_VERSION),),
    )
    conn.commit()
    return conn


class ResultStore:
    """Append-only writer of task outcomes (see :func:`gangplan.bench.worker.run_task`)."""

    def __init__(self, path: str | Path) -> None:
        from gangplan.io.errors import SnapshotError

        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = connect(self.path)
        except (OSError, sqlite3.DatabaseError) as e:
            raise SnapshotError(str(self.path), f"cannot use as a results database: {e}") from None

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    def done_ids(self, *, failed: bool = True) -> set[str]:
        """Recorded tasks; with ``failed=False`` only those that finished ``ok``."""
        sql = "SELECT task_id FROM tasks" + ("" if failed else " WHERE status = 'ok'")
        return {r[0] for r in self.conn.execute(sql)}

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM tasks").fetchone()[0])

    def set_meta(self, values: Mapping[str, Any], *, overwrite: bool = False) -> None:
        verb = "INSERT OR REPLACE" if overwrite else "INSERT OR IGNORE"
        with self.conn:
            self.conn.executemany(
                f"{verb} INTO meta(key, value) VALUES (?, ?)",
                [(k, json.dumps(v)) for k, v in values.items()],
            )

    def record(self, outcome: Mapping[str, Any], *, replace_failed: bool = False) -> bool:
        """Write one task's rows in one transaction; False if the task was already recorded.

        ``replace_failed``: a recorded failure (error, timeout, crashed) of the same task is
        deleted in the same transaction, so a retried task still has exactly one row.
        """
        task = dict(outcome["task"], finished_at=round(time.time(), 3))
        try:
            with self.conn:
                if replace_failed:
                    self.conn.execute(
                        f"DELETE FROM tasks WHERE task_id = ? AND status IN ({', '.join('?' for _ in FAILED)})",
                        (task["task_id"], *FAILED),
                    )
                _insert(self.conn, "tasks", TASK_COLUMNS, [task])
                _insert(
                    self.conn,
                    "runs",
                    RUN_COLUMNS,
                    [dict(r, task_id=task["task_id"]) for r in outcome.get("runs", ())],
                )
                if outcome.get("diff"):
                    _insert(
                        self.conn,
                        "diffs",
                        DIFF_COLUMNS,
                        [dict(outcome["diff"], task_id=task["task_id"])],
                    )
        except sqlite3.IntegrityError:
            return False
        return True


def _insert(
    conn: sqlite3.Connection,
    table: str,
    columns: tuple[str, ...],
    rows: Iterable[Mapping[str, Any]],
) -> None:
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"
    conn.executemany(sql, [tuple(r.get(c) for c in columns) for r in rows])


def read_rows(path: str | Path, *, without_times: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Every row of every result table, sorted by key; ``without_times`` drops :data:`TIME_COLUMNS`."""
    if not Path(path).is_file():
        raise FileNotFoundError(path)
    conn = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    try:
        out = {}
        for table, columns in TABLES.items():
            keep = [c for c in columns if not (without_times and c in TIME_COLUMNS)]
            order = "task_id, engine" if table == "runs" else "task_id"
            cur = conn.execute(f"SELECT {', '.join(keep)} FROM {table} ORDER BY {order}")
            out[table] = [dict(zip(keep, row, strict=True)) for row in cur]
        return out
    finally:
        conn.close()


def read_meta(path: str | Path) -> dict[str, Any]:
    conn = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    try:
        return {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM meta")}
    finally:
        conn.close()


def bench_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every snapshot of the database as one camelCase document (``gangplan schema bench-row``):
    its task row, its engine runs and its diff, JSON columns parsed."""
    from gangplan.models.documents import BenchRow

    rows = read_rows(path)
    runs: dict[str, list[dict[str, Any]]] = {}
    for r in rows["runs"]:
        runs.setdefault(r["task_id"], []).append(r)
    diffs = {d["task_id"]: d for d in rows["diffs"]}
    out = []
    for t in rows["tasks"]:
        tid = t["task_id"]
        task = {k: v for k, v in t.items() if k != "params"}
        doc = BenchRow(
            **task,
            params=json.loads(t["params"] or "{}"),
            runs=[
                BenchRun(
                    **{
                        **{k: v for k, v in r.items() if k != "task_id"},
                        "objective": json.loads(r["objective"]),
                    }
                )
                for r in runs.get(tid, [])
            ],
            diff=BenchDiff(**{k: v for k, v in diffs[tid].items() if k != "task_id"})
            if tid in diffs
            else None,
        )
        out.append(doc.dump())
    return out


def outcome_counts(path: str | Path) -> tuple[dict[str, int], dict[str, int], list[dict[str, Any]]]:
    """Over everything in the database: classifications of the finished diffs, task statuses,
    and the failed tasks (task id, status, error) in id order."""
    rows = read_rows(path)
    classes: dict[str, int] = {}
    for d in rows["diffs"]:
        classes[d["classification"]] = classes.get(d["classification"], 0) + 1
    statuses: dict[str, int] = {}
    for t in rows["tasks"]:
        statuses[t["status"]] = statuses.get(t["status"], 0) + 1
    failed = [
        {"task_id": t["task_id"], "status": t["status"], "error": t["error"]}
        for t in rows["tasks"]
        if t["status"] in FAILED
    ]
    return classes, statuses, failed


__all__ = [
    "DIFF_COLUMNS",
    "RUN_COLUMNS",
    "ResultStore",
    "TASK_COLUMNS",
    "TIME_COLUMNS",
    "bench_rows",
    "connect",
    "diff_row",
    "outcome_counts",
    "read_meta",
    "read_rows",
    "run_row",
]


def run_row(run: BenchRun) -> dict[str, Any]:
    """A :class:`BenchRun` as its ``runs`` row (``objective`` as JSON text)."""
    return {**run.model_dump(), "objective": json.dumps(run.objective)}


def diff_row(diff: BenchDiff) -> dict[str, Any]:
    """A :class:`BenchDiff` as its ``diffs`` row."""
    return diff.model_dump()
