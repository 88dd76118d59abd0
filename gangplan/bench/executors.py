"""Where tasks run: a local process per task, this process, or a Dask cluster.

Every executor runs :func:`gangplan.bench.worker.run_task` and yields the outcomes as they finish;
only the caller writes the database.

``local`` forks one process per task (at most ``jobs`` at once) after importing the engines once
here, so a task costs a fork, not an import. A process per task, rather than a
``ProcessPoolExecutor``, is what lets the runner kill exactly the task that is over its wall limit
(a pool can only abandon the future while the worker keeps computing) and tell which task a
crashed process (segfault, OOM kill) was running (a pool breaks as a whole). ``fork``, not
``forkserver`` or ``spawn``: those re-import the ``__main__`` script in every child, which for an
unguarded script means running it again. The runner keeps this process single-threaded while it
forks (its progress bar refreshes without a thread).

``dask`` submits the same function to ``dask.distributed`` with ``retries``: a task whose worker
dies is rescheduled by the scheduler, and one that raises is retried; one that still fails is
recorded ``crashed``. The wall limit there is the engines' own time limit: Dask cannot kill a task.
"""

from __future__ import annotations

import importlib
import multiprocessing
import multiprocessing.connection
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from gangplan.bench.generators.families import preload
from gangplan.bench.suites import Task
from gangplan.bench.worker import RunOptions, failed_outcome, run_task
from gangplan.io.errors import SnapshotError

PRELOAD = [
    "gangplan.bench.worker",
    "gangplan.solver.diff",
    "gangplan.solver.greedy",
    "gangplan.solver.exact",
]
DASK_RETRIES = 2


class Executor(Protocol):
    def execute(self, tasks: Sequence[Task], opts: RunOptions) -> Iterator[dict[str, Any]]: ...


def make_executor(
    kind: str, *, jobs: int = 1, dask_address: str | None = None, dask_processes: bool = True
) -> Executor:
    if jobs < 1:
        raise SnapshotError("--jobs", f"must be at least 1, got {jobs}")
    if kind == "local":
        return LocalExecutor(jobs)
    if kind == "inline":
        return InlineExecutor()
    if kind == "dask":
        return DaskExecutor(dask_address or "local", jobs, processes=dask_processes)
    raise SnapshotError("--executor", f"unknown executor {kind!r}; use local, inline or dask")


class InlineExecutor:
    """Run in this process, one task after the other: no isolation, no wall limit (debugging)."""

    def execute(self, tasks: Sequence[Task], opts: RunOptions) -> Iterator[dict[str, Any]]:
        for t in tasks:
            yield run_task(t, opts)


def _child(conn: multiprocessing.connection.Connection, task: Task, opts: RunOptions) -> None:
    try:
        conn.send(run_task(task, opts))
    finally:
        conn.close()


@dataclass
class _Running:
    task: Task
    process: multiprocessing.process.BaseProcess
    conn: multiprocessing.connection.Connection
    started: float


class LocalExecutor:
    """At most ``jobs`` task processes at once, each killed when over ``opts.wall_limit``."""

    def __init__(self, jobs: int = 1, *, start_method: str = "fork") -> None:
        self.jobs = jobs
        self.ctx = multiprocessing.get_context(start_method)
        if start_method == "forkserver":
            self.ctx.set_forkserver_preload(PRELOAD)
        else:
            for module in PRELOAD:
                try:
                    importlib.import_module(module)
                except ImportError:  # each task then records the import error as its failure
                    pass

    def _start(self, task: Task, opts: RunOptions) -> _Running:
        recv, send = self.ctx.Pipe(duplex=False)
        proc = self.ctx.Process(
            target=_child, args=(send, task, opts), name=f"gangplan-bench {task.id}", daemon=True
        )
        proc.start()
        send.close()  # the child holds the only write end: EOF on recv means it is gone
        return _Running(task, proc, recv, time.monotonic())

    def execute(self, tasks: Sequence[Task], opts: RunOptions) -> Iterator[dict[str, Any]]:
        if self.ctx.get_start_method() == "fork":
            seen = set()
            for t in tasks:
                key = (
                    t.generator,
                    t.params.get("data_dir"),
                    t.params.get("inventory"),
                    t.params.get("pod_list"),
                )
                if key not in seen:
                    seen.add(key)
                    preload(t.generator, t.params)
        queue = deque(tasks)
        running: list[_Running] = []
        limit = opts.wall_limit
        try:
            while queue or running:
                while queue and len(running) < self.jobs:
                    running.append(self._start(queue.popleft(), opts))
                next_deadline = min(r.started + limit for r in running)
                multiprocessing.connection.wait(
                    [r.conn for r in running], timeout=max(0.0, next_deadline - time.monotonic())
                )
                for r in list(running):
                    outcome = self._poll(r, opts)
                    if outcome is not None:
                        running.remove(r)
                        yield outcome
        finally:
            for r in running:  # the caller stopped early (error, Ctrl-C): leave nothing behind
                r.process.kill()
                r.process.join()
                r.conn.close()

    @staticmethod
    def _poll(r: _Running, opts: RunOptions) -> dict[str, Any] | None:
        """The task's outcome if it ended (sent, died or overran), else None."""
        limit = opts.wall_limit
        elapsed = time.monotonic() - r.started
        if r.conn.poll():
            try:
                outcome = r.conn.recv()
            except (EOFError, OSError):
                outcome = None
            r.process.join()
            r.conn.close()
            if outcome is not None:
                return outcome
            code = r.process.exitcode
            return failed_outcome(
                r.task,
                opts,
                "crashed",
                f"worker process exited with code {code} before sending a result (killed, or out of memory: try fewer --jobs)",
                elapsed,
            )
        if elapsed >= limit:
            r.process.kill()
            r.process.join()
            r.conn.close()
            return failed_outcome(
                r.task,
                opts,
                "timeout",
                f"over the task wall limit of {limit:g} s (raise --task-timeout, or lower --time-limit)",
                elapsed,
            )
        return None


class DaskExecutor:
    """Submit every task to a Dask scheduler; ``address`` ``local`` starts a LocalCluster."""

    def __init__(
        self, address: str, jobs: int = 1, *, processes: bool = True, connect_timeout: float = 30.0
    ) -> None:
        self.address, self.jobs, self.processes, self.connect_timeout = (
            address,
            jobs,
            processes,
            connect_timeout,
        )

    def _client(self):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise SnapshotError(
                "--dask", "Dask is not installed: pip install 'gangplan[dask]'"
            ) from None
        if self.address == "local":
            cluster = LocalCluster(
                n_workers=self.jobs,
                threads_per_worker=1,
                processes=self.processes,
                dashboard_address=None,
                silence_logs=40,
            )
            return Client(cluster), cluster
        try:
            return Client(self.address, timeout=self.connect_timeout), None
        except (OSError, TimeoutError) as e:
            raise SnapshotError(
                "--dask", f"cannot reach the Dask scheduler at {self.address}: {e}"
            ) from None

    def execute(self, tasks: Sequence[Task], opts: RunOptions) -> Iterator[dict[str, Any]]:
        if not tasks:
            return
        from dask.distributed import as_completed

        client, cluster = self._client()
        try:
            futures = {
                client.submit(
                    run_task,
                    t,
                    opts,
                    key=f"gangplan-bench-{i}-{t.id}",
                    pure=False,
                    retries=DASK_RETRIES,
                ): t
                for i, t in enumerate(tasks)
            }
            for fut in as_completed(futures):
                task = futures[fut]
                try:
                    yield fut.result()
                except Exception as e:  # noqa: BLE001 - lost worker after retries, or a task that raised
                    yield failed_outcome(
                        task, opts, "crashed", f"dask: {type(e).__name__}: {e}", 0.0
                    )
                fut.release()
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


__all__ = ["DaskExecutor", "Executor", "InlineExecutor", "LocalExecutor", "make_executor"]
