"""Run a benchmark cell in a fresh process, so that its peak memory is its own (shared by the
benchmark scripts; they run as ``python benchmarks/<script>.py``, which puts this folder on the path)."""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable
from typing import Any


def _entry(fn: Callable[..., dict], args: tuple, queue) -> None:
    queue.put(fn(*args))


def run_isolated(
    fn: Callable[..., dict], args: tuple, error_row: Callable[[int | None], dict[str, Any]]
) -> dict:
    """``fn(*args)`` in a spawned process; a cell that dies without a row gives ``error_row(exit code)``."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_entry, args=(fn, args, queue))
    proc.start()
    while True:
        try:
            row = queue.get(timeout=5)
            break
        except Exception:  # queue.Empty: still running, or dead without a row
            if not proc.is_alive():
                row = error_row(proc.exitcode)
                break
    proc.join()
    return row
