"""Benchmark support: instance generators, suites, the runner and its executors, store, report.

Generators: :mod:`~gangplan.bench.builders` (Kubernetes object dicts, seeded draws, the in-memory
load), :mod:`~gangplan.bench.scheduler_perf` (upstream's gang benchmarks),
:mod:`~gangplan.bench.gpu_clusters` (the exact engine's GPU scaling family),
:mod:`~gangplan.bench.small_snapshots` (small random snapshots for property tests),
:mod:`~gangplan.bench.topology_shapes` (GB200 / DGX / TAS shapes behind ``gangplan generate``) and
:mod:`~gangplan.bench.families` (the bench suite families over them and the real traces).
Snapshots are written with :func:`gangplan.io.writer.write_snapshot`.
"""
