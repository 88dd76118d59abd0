"""The bench runner: rows per snapshot and engine, failures recorded, kill and resume, the CLI."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gangplan.bench import executors
from gangplan.bench.executors import LocalExecutor
from gangplan.bench.runner import run_bench
from gangplan.bench.store import read_rows
from gangplan.bench.suites import Task, load_suite
from gangplan.bench.worker import RunOptions, run_task
from gangplan.cli import app
from gangplan.io.errors import SnapshotError

REPO = Path(__file__).resolve().parent.parent


def write_suite(tmp_path: Path, seeds: int = 2, extra: str = "") -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(f"""\
apiVersion: gangplan.io/v1alpha1
kind: BenchSuite
metadata: {{name: t}}
spec:
  timeLimit: 5
  families:
  - name: mix
    generator: mixed
    params: {{nodes: 6, gangs: 4, max_gang_size: 3}}
    grid: {{utilisation: [0.3, 0.7]}}
    seeds: {{count: {seeds}}}
{extra}""")
    return path


def test_every_snapshot_gets_a_task_row_two_validated_engine_rows_and_a_diff(
    tmp_path: Path,
) -> None:
    suite = write_suite(tmp_path)
    summary = run_bench(suite, tmp_path / "r.db", jobs=2, progress=False)
    rows = read_rows(tmp_path / "r.db")
    ids = [t.id for t in load_suite(suite).tasks]
    assert summary.ran == len(ids) == 4 and summary.failures == 0
    assert sorted(r["task_id"] for r in rows["tasks"]) == sorted(ids)
    assert [(r["task_id"], r["engine"]) for r in rows["runs"]] == [
        (i, e) for i in sorted(ids) for e in ("exact", "greedy")
    ]
    assert len(rows["diffs"]) == 4
    for r in rows["runs"]:
        assert r["violations"] == 0
        assert r["placed_pods"] <= r["pending_pods"]
        assert list(json.loads(r["objective"]))[-1] in ("placed", "tiebreak") or json.loads(
            r["objective"]
        )


def test_run_task_counts_placed_gpus_from_the_pods_it_placed() -> None:
    task = Task(
        id="x",
        family="x",
        generator="mixed",
        params={
            "nodes": 4,
            "gangs": 3,
            "gpus_per_pod": [2],
            "gang_size_dist": "fixed",
            "max_gang_size": 2,
            "utilisation": 0.0,
        },
    )
    out = run_task(task, RunOptions(time_limit=5))
    for r in out["runs"]:
        assert r["placed_gpus"] == 2 * r["placed_pods"]
    assert out["task"]["gpus"] == out["task"]["free_gpus"] == 32


def test_a_database_with_results_is_refused_without_resume_and_resume_skips_what_is_done(
    tmp_path: Path,
) -> None:
    suite = write_suite(tmp_path)
    run_bench(suite, tmp_path / "r.db", progress=False)
    before = read_rows(tmp_path / "r.db")
    with pytest.raises(SnapshotError, match="--resume"):
        run_bench(suite, tmp_path / "r.db", progress=False)
    again = run_bench(suite, tmp_path / "r.db", resume=True, progress=False)
    assert again.ran == 0 and again.skipped == 4
    assert read_rows(tmp_path / "r.db") == before


def test_a_generator_error_a_timeout_and_a_crash_are_recorded_and_the_suite_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = """\
  - name: broken
    generator: philly
    params: {data_dir: /nonexistent}
  - name: slow
    generator: mixed
"""
    suite = load_suite(write_suite(tmp_path, seeds=1, extra=extra))
    crash_id = suite.tasks[0].id
    real = executors.run_task

    def crash_first_hang_slow(task: Task, opts: RunOptions) -> dict:
        if task.id == crash_id:
            os._exit(3)
        if task.family == "slow":
            time.sleep(60)
        return real(task, opts)

    monkeypatch.setattr(
        executors, "run_task", crash_first_hang_slow
    )  # reaches the child: it is forked
    t0 = time.monotonic()
    summary = run_bench(
        suite,
        tmp_path / "r.db",
        executor=LocalExecutor(2, start_method="fork"),
        task_timeout=1.5,
        progress=False,
    )
    assert time.monotonic() - t0 < 20
    status = {
        r["task_id"]: (r["status"], r["error"]) for r in read_rows(tmp_path / "r.db")["tasks"]
    }
    assert summary.ran == len(status) == 4
    assert status[crash_id][0] == "crashed" and "code 3" in status[crash_id][1]
    broken = next(v for k, v in status.items() if k.startswith("broken/"))
    assert broken[0] == "error" and "philly.csv" in broken[1]
    slow = next(v for k, v in status.items() if k.startswith("slow/"))
    assert slow == (
        "timeout",
        "over the task wall limit of 1.5 s (raise --task-timeout, or lower --time-limit)",
    )
    assert " at " not in broken[1] and "SnapshotError" not in broken[1]
    assert [v[0] for k, v in status.items() if k.startswith("mix/") and k != crash_id] == ["ok"]


KILL_SCRIPT = """
import sys
from gangplan.bench.runner import run_bench
run_bench(sys.argv[1], sys.argv[2], jobs=1, progress=False)
"""


def _count(db: Path) -> int:
    if not db.exists():
        return 0
    conn = sqlite3.connect(db, timeout=5)
    try:
        return conn.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def test_a_killed_bench_resumes_without_losing_or_duplicating_a_finished_row(
    tmp_path: Path,
) -> None:
    suite = write_suite(tmp_path, seeds=25)
    total = len(load_suite(suite).tasks)
    db = tmp_path / "r.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", KILL_SCRIPT, str(suite), str(db)], start_new_session=True, cwd=REPO
    )
    deadline = time.monotonic() + 45
    while _count(db) < 4 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = read_rows(db)
    assert 4 <= len(before["tasks"]) < total, "the run should have been killed midway"
    summary = run_bench(suite, db, resume=True, progress=False)
    after = read_rows(db)
    assert summary.skipped == len(before["tasks"]) and summary.ran == total - len(before["tasks"])
    for table, rows in before.items():
        assert all(r in after[table] for r in rows), f"a finished {table} row was lost or changed"
    assert len({r["task_id"] for r in after["tasks"]}) == len(after["tasks"]) == total
    assert (
        len({(r["task_id"], r["engine"]) for r in after["runs"]}) == len(after["runs"]) == 2 * total
    )
    assert len(after["diffs"]) == total


def test_the_bench_and_report_commands_write_a_database_and_a_report(tmp_path: Path) -> None:
    runner = CliRunner()
    suite = write_suite(tmp_path, seeds=1)
    res = runner.invoke(app, ["bench", str(suite), "--out", str(tmp_path / "r.db"), "--jobs", "2"])
    assert res.exit_code == 0, res.output
    assert len(read_rows(tmp_path / "r.db")["tasks"]) == 2
    res = runner.invoke(app, ["bench", str(suite), "--out", str(tmp_path / "r.db")])
    assert res.exit_code == 2 and "--resume" in res.output
    res = runner.invoke(app, ["report", str(tmp_path / "r.db"), "--out", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "rep" / "index.html").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bench", "{tmp}/missing.yaml"], "no such suite"),
        (["bench", "{tmp}/notasuite.yaml"], "kind: BenchSuite"),
        (["report", "{tmp}/missing.db"], "no such results database"),
        (["report", "{tmp}/notasuite.yaml"], "not a gangplan results database"),
        (["bench", "{suite}", "--out", "{tmp}/notasuite.yaml"], "cannot use as a results database"),
    ],
    ids=[
        "a missing suite",
        "a YAML file that is not a suite",
        "a missing database",
        "a file that is not a database",
        "an output that is not a database",
    ],
)
def test_bad_input_exits_2_with_a_message(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "notasuite.yaml").write_text("kind: Pod\n")
    suite = write_suite(tmp_path, seeds=1)
    res = CliRunner().invoke(app, [a.format(tmp=tmp_path, suite=suite) for a in args])
    assert res.exit_code == 2
    assert message in res.output


def test_explain_records_the_decisive_greedy_step_of_a_suboptimal_snapshot(tmp_path: Path) -> None:
    suite = tmp_path / "cards"
    suite.mkdir()
    (suite / "design-card-a100.yaml").write_bytes(
        (REPO / "scenarios" / "showcase" / "design-card-a100.yaml").read_bytes()
    )
    run_bench(suite, tmp_path / "r.db", explain=True, progress=False)
    (diff,) = read_rows(tmp_path / "r.db")["diffs"]
    assert diff["task_id"] == "cards/design-card-a100.yaml"
    assert diff["classification"] == "greedy-suboptimal"
    assert diff["decisive_step"] >= 1 and diff["decisive_pod"]


def test_retry_failed_reruns_timed_out_snapshots_and_keeps_one_row_per_snapshot(
    tmp_path: Path,
) -> None:
    suite = write_suite(tmp_path)
    first = run_bench(suite, tmp_path / "r.db", task_timeout=0.001, progress=False)
    assert first.statuses["timeout"] == 4
    again = run_bench(suite, tmp_path / "r.db", resume=True, progress=False)
    assert again.ran == 0
    retried = run_bench(suite, tmp_path / "r.db", retry_failed=True, progress=False)
    rows = read_rows(tmp_path / "r.db")
    assert retried.ran == 4 and retried.statuses["ok"] == 4
    assert [r["status"] for r in rows["tasks"]] == ["ok"] * 4
    assert len(rows["runs"]) == 8 and len(rows["diffs"]) == 4


BROKEN = """\
  - name: broken
    generator: philly
    params: {data_dir: /nonexistent}
"""


def test_the_bench_command_names_each_failed_snapshot_with_a_one_line_cause(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, seeds=1, extra=BROKEN)
    db = tmp_path / "r.db"
    res = CliRunner().invoke(app, ["bench", str(suite), "--out", str(db)])
    assert res.exit_code == 1, res.output
    broken = "broken/data_dir=/nonexistent/seed=0"
    line = next(x for x in res.stdout.splitlines() if broken in x)
    assert (
        "error: generate: /nonexistent/philly-pollux/philly.csv: trace file not found (set GANGPLAN_DATA_DIR"
        in line
    )
    assert ".py:" not in res.stdout and "Traceback" not in res.output


def test_resume_prints_the_outcomes_of_everything_in_the_database(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, seeds=1, extra=BROKEN)
    db = tmp_path / "r.db"
    run_bench(suite, db, progress=False)
    res = CliRunner().invoke(app, ["bench", str(suite), "--out", str(db), "--resume"])
    assert res.exit_code == 1, res.output  # the database still holds a failed snapshot
    assert "0 snapshot(s) run now, 3 already in the database" in res.stdout
    rows = read_rows(db)
    counts = {}
    for d in rows["diffs"]:
        counts[d["classification"]] = counts.get(d["classification"], 0) + 1
    counts["error"] = 1
    table = {}
    for x in res.stdout.splitlines():
        cells = [c.strip() for c in x.replace("│", "|").split("|")]
        if len(cells) == 2 and cells[1].isdigit():
            table[cells[0]] = int(cells[1])
    assert table == counts and sum(table.values()) == 3
    assert "broken/data_dir=/nonexistent/seed=0" in res.stdout


def test_an_engine_bug_is_recorded_as_an_internal_error_without_a_source_location(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gangplan.solver.diff as diff_module

    def boom(*a, **k):
        raise TypeError("unsupported operand")

    monkeypatch.setattr(diff_module, "diff_snapshot", boom)
    monkeypatch.delenv("GANGPLAN_DEBUG", raising=False)
    out = run_task(
        Task(id="x", family="x", generator="mixed", params={"nodes": 4, "gangs": 2}),
        RunOptions(time_limit=1),
    )
    assert out["task"]["status"] == "error"
    assert out["task"]["error"] == (
        "diff: internal error (a gangplan bug) TypeError: unsupported operand; "
        "rerun with GANGPLAN_DEBUG=1 for where it was raised"
    )


def test_bench_help_shows_every_default_and_no_stray_period() -> None:
    res = CliRunner().invoke(app, ["bench", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    text = " ".join(res.stdout.split())
    for default in (
        "[default: results.db]",
        "[default: 1; x>=1]",
        "(default: the suite's timeLimit, else 10)",
        "(default: the suite's taskTimeout, else 5 x time limit + 30)",
        "(default: the suite's explain, else no)",
        "(default: local processes)",
    ):
        assert default in text, default
    assert " ." not in text


def test_a_bench_task_validates_each_result_once(monkeypatch) -> None:
    """The diff validates its two Results and hands the findings to the bench rows (issue 24):
    no Result the task reports goes through the validator twice."""
    import gangplan.solver.diff.classification as classify_module
    import gangplan.solver.diff.decisive as decisive_module
    import gangplan.solver.diff.run as run_module
    import gangplan.solver.validate as validate_module

    real = validate_module.validate
    seen: list[int] = []

    def counting(cluster, result):
        seen.append(id(result))
        return real(cluster, result)

    for module in (validate_module, classify_module, decisive_module, run_module):
        monkeypatch.setattr(module, "validate", counting)
    task = Task(
        id="x",
        family="x",
        generator="mixed",
        params={
            "nodes": 4,
            "gangs": 3,
            "gpus_per_pod": [2],
            "gang_size_dist": "fixed",
            "max_gang_size": 2,
            "utilisation": 0.0,
        },
    )
    out = run_task(task, RunOptions(time_limit=5))
    assert out["task"]["status"] == "ok" and [r["violations"] for r in out["runs"]] == [0, 0]
    assert len(seen) >= 2 and len(seen) == len(set(seen))
