"""Benchmark support: the instance generators (:mod:`gangplan.bench.generators`) apart from what
runs them: :mod:`~gangplan.bench.suites` (suite files), :mod:`~gangplan.bench.runner` ->
:mod:`~gangplan.bench.executors` (local processes or Dask) -> :mod:`~gangplan.bench.worker` (one
task), :mod:`~gangplan.bench.store` (SQLite) and :mod:`~gangplan.bench.report`.
Snapshots are written with :func:`gangplan.io.writer.write_snapshot`.
"""
