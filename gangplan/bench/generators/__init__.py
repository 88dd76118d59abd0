"""Instance generators for the benchmarks and ``gangplan generate``: they build Kubernetes
object dicts (and, in memory, Clusters) and never run an engine.

:mod:`.builders` (object dicts, seeded draws, the in-memory load), :mod:`.scheduler_perf`
(upstream's gang benchmarks), :mod:`.gpu_clusters` (the exact engine's GPU scaling family),
:mod:`.small_snapshots` (small random snapshots for property tests), :mod:`.topology_shapes`
(GB200 / DGX / TAS shapes), :mod:`.dra_gpu` (the same with NVIDIA's DRA driver objects) and
:mod:`.families` (the bench suite families over them and the real traces).
"""
