"""The Dask executor writes the same rows as the local one (times apart), and survives task failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplan.bench import executors
from gangplan.bench.executors import DaskExecutor
from gangplan.bench.runner import run_bench
from gangplan.bench.store import read_rows
from gangplan.bench.suites import Task
from gangplan.bench.worker import RunOptions
from gangplan.io.errors import SnapshotError

pytest.importorskip("dask.distributed", reason="the dask extra is not installed")

SUITE = """\
apiVersion: gangplan.io/v1alpha1
kind: BenchSuite
metadata: {name: dask-parity}
spec:
  timeLimit: 5
  families:
  - name: mix
    generator: mixed
    params: {nodes: 8, gangs: 5, max_gang_size: 4, hetero_fraction: 0.5}
    grid: {utilisation: [0.3, 0.7]}
    seeds: [0, 1, 2]
  - name: philly
    generator: philly
    params: {nodes: 8, jobs: 6, min_gpus: 2}
    seeds: [0, 1]
  - name: broken
    generator: philly
    params: {data_dir: /nonexistent}
"""


@pytest.mark.traces
def test_a_dask_local_cluster_with_2_workers_writes_the_rows_the_local_executor_writes(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    local = run_bench(suite, tmp_path / "local.db", jobs=2, progress=False)
    on_dask = run_bench(
        suite,
        tmp_path / "dask.db",
        jobs=2,
        executor="dask",
        dask_address="local",
        dask_processes=False,
        progress=False,
    )
    assert local.ran == on_dask.ran == 9
    a, b = (
        read_rows(tmp_path / "local.db", without_times=True),
        read_rows(tmp_path / "dask.db", without_times=True),
    )
    assert a == b
    assert sum(r["status"] == "error" for r in a["tasks"]) == 1 and len(a["diffs"]) == 8


def test_a_task_that_fails_on_every_dask_retry_is_recorded_as_crashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = tmp_path / "calls"  # a file: Dask pickles the function, so a list would be a copy
    real = executors.run_task

    def explode(task: Task, opts: RunOptions) -> dict:
        with calls.open("a") as f:
            f.write(task.id + "\n")
        if task.id == "x/explodes/seed=0":
            raise RuntimeError("worker-side failure")
        return real(task, opts)

    monkeypatch.setattr(
        executors, "run_task", explode
    )  # processes=False: the workers share this module
    tasks = [
        Task(id=f"x/{n}/seed=0", family="x", generator="mixed", params={"nodes": 4, "gangs": 2})
        for n in ("explodes", "fine")
    ]
    outcomes = {
        o["task"]["task_id"]: o["task"]
        for o in DaskExecutor("local", 2, processes=False).execute(tasks, RunOptions(time_limit=5))
    }
    assert outcomes["x/fine/seed=0"]["status"] == "ok"
    assert outcomes["x/explodes/seed=0"]["status"] == "crashed"
    assert "worker-side failure" in outcomes["x/explodes/seed=0"]["error"]
    assert calls.read_text().split().count("x/explodes/seed=0") == 1 + executors.DASK_RETRIES


def _die_once(marker: str, task: Task, opts: RunOptions) -> dict:
    """Kill the worker process the first time any task runs; run normally after that."""
    import os

    from gangplan.bench.worker import run_task

    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        return run_task(task, opts)
    os.close(fd)
    os._exit(1)


def test_tasks_of_a_dask_worker_that_dies_are_rescheduled_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import functools
    import sys

    import cloudpickle

    module = sys.modules[__name__]
    cloudpickle.register_pickle_by_value(
        module
    )  # the worker processes cannot import this test file
    monkeypatch.setattr(executors, "run_task", functools.partial(_die_once, str(tmp_path / "died")))
    tasks = [
        Task(
            id=f"x/{i}/seed=0",
            family="x",
            generator="mixed",
            params={"nodes": 4, "gangs": 2},
            seed=i,
        )
        for i in range(3)
    ]
    try:
        outcomes = list(
            DaskExecutor("local", 2, processes=True).execute(tasks, RunOptions(time_limit=5))
        )
    finally:
        cloudpickle.unregister_pickle_by_value(module)
    assert (tmp_path / "died").exists()
    assert sorted(o["task"]["task_id"] for o in outcomes) == [t.id for t in tasks]
    assert all(o["task"]["status"] == "ok" for o in outcomes)


@pytest.mark.traces
def test_a_scheduler_address_is_used_as_it_is(tmp_path: Path) -> None:
    from dask.distributed import LocalCluster

    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    with LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        summary = run_bench(
            suite,
            tmp_path / "r.db",
            executor="dask",
            dask_address=cluster.scheduler_address,
            progress=False,
        )
    assert summary.ran == 9 and summary.statuses["ok"] == 8


def test_an_unreachable_scheduler_is_bad_input(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    with pytest.raises(SnapshotError, match="cannot reach the Dask scheduler"):
        run_bench(
            suite,
            tmp_path / "r.db",
            executor=DaskExecutor("tcp://127.0.0.1:1", connect_timeout=1),
            progress=False,
        )
