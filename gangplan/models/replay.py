"""The ``summary.json`` of ``gangplan replay`` (``gangplan schema replay``)."""

from __future__ import annotations

from typing import Literal

from gangplan.models.base import Document

_Doc = Document
"""(:class:`gangplan.models.base.Document`, the one base of the printed documents.)"""


class Quantiles(_Doc):
    """Seconds: mean, median and 99th / 99.9th percentiles (nearest rank) and maximum over the jobs that started."""

    mean: float
    p50: float
    p99: float
    p999: float | None = None
    """99.9th percentile (nearest rank), the Helios / Lucid tail."""
    max: float | None = None


class ReplayRun(_Doc):
    """One policy under one seed."""

    policy: str
    seed: int
    jobs: int
    """Jobs replayed (fill mode: after the top-up with clones)."""
    placed: int
    failed: int
    """Fill: jobs dropped because they did not fit. Timed: jobs that never started."""
    requested_gpus: int
    """GPU milli requested // 1000 (see ``requested_gpu_milli``)."""
    allocated_gpus: int
    """Fill: GPUs allocated at the end. Timed: the peak. GPU milli // 1000 (see ``allocated_gpu_milli``)."""
    requested_gpu_milli: int | None = None
    """GPU milli the jobs requested (fill: every job tried; timed: every job of the trace), unrounded."""
    allocated_gpu_milli: int | None = None
    """Fill: GPU milli allocated at the end. Timed: the peak. Unrounded."""
    unallocated_percent: dict[str, float] | None = None
    """Fill: unallocated GPU % keyed by integer arrived % ("1" .. "130")."""
    frag_gpu_milli: float | None = None
    """Fill, at the end: the FGD simulator's fragment GPU milli against the typical pods
    (``frag.go`` ``NodeGpuShareFragAmount`` summed over nodes except ``Q3Satisfied``;
    :mod:`gangplan.replay.frag`): the expected idle milli the next typical pod could not use."""
    fragmentation_rate_percent: float | None = None
    """Fill, at the end: ``100 * frag / idle GPU milli`` (``ClusterGpuFragReport``'s Frag ratio)."""
    fragmentation_percent: float | None = None
    """Fill, at the end: the fragment's share of the cluster, ``100 * frag / capacity milli``."""
    stranded_gpu_milli: int | None = None
    """Fill, at the end: idle GPU milli on nodes where no typical pod with GPUs fits at all."""
    unschedulable_flushes: int | None = None
    """Timed: moves out of the unschedulable pool by the 5-minute flush (no event for the job)."""
    preemptions: int | None = None
    """Timed: failed attempts whose PostFilter (the profile's DefaultPreemption, the greedy
    engine's own preemption) evicted running jobs of lower priority."""
    evicted_jobs: int | None = None
    """Timed: jobs evicted at least once (each eviction sends the job back to the queue, its work
    lost; ``evictions`` per job in ``jobs.csv``)."""
    queueing_delay: Quantiles | None = None
    jct: Quantiles | None = None
    makespan: float | None = None
    """Timed: from the first arrival to the last completion, seconds."""
    gpu_utilisation_mean: float | None = None
    """Timed: time-average of allocated / capacity GPUs over the makespan, 0..1."""
    idle_gpu_hours: float | None = None
    idle_gpu_hours_while_pending: float | None = None
    """Timed: idle GPU-hours during which at least one job waited."""
    allocated_gpu_seconds: float | None = None
    """Timed: sum over completed jobs of GPUs x duration (equals the trace's gpu_time)."""
    frag_gpu_hours: float | None = None
    """Timed: the time integral over the makespan of the FGD simulator's fragment GPUs (idle GPU
    milli the next typical pod could not use, ``pkg/utils/frag.go``), in GPU-hours."""
    stranded_gpu_hours: float | None = None
    """Timed: the same of stranded GPUs (idle on nodes no typical GPU pod fits)."""
    unfinished: int | None = None
    epochs: int | None = None
    """Shadow: epochs solved by the exact engine (event instants with pending jobs; ``--epoch S``:
    the first in each S seconds). Optimal: instants after an arrival or departure with a
    pending job that could fit (``--epoch S``: the instants k S), those where greedy started
    every candidate proven by counting (``wall_s`` 0 in ``epochs.csv``). Per epoch in ``epochs.csv``."""
    regret_gpus_total: int | float | None = None
    """Shadow / optimal (on its own run's state): over the epochs, GPUs of pending jobs the exact engine admits minus those greedy
    admitted at that instant (running pods fixed). An epoch whose solve hit its limit counts
    its best found solution: a lower bound on that epoch's regret. GPU-equivalents: a GPU-sharing
    pod counts ``gpu_milli / 1000`` (a float on such traces, an integer on whole-GPU ones)."""
    regret_gpus_max: int | float | None = None
    regret_jobs_total: int | None = None
    """Shadow / optimal: the same in admitted jobs."""
    regret_queue_gpus_total: int | float | None = None
    """Shadow / optimal: of the optimum's GPUs, those on jobs greedy did not try at that instant (backing
    off or pooled): regret the queue causes rather than the placement."""
    epochs_with_regret: int | None = None
    epochs_at_limit: int | None = None
    """Shadow / optimal: epochs whose solve stopped at ``--exact-time-limit`` unproven (FEASIBLE or UNKNOWN)."""
    gap_max: float | None = None
    """Shadow / optimal: the largest relative gap of those epochs (a bound with its gap, never an optimum)."""
    movable_regret_jobs_total: int | None = None
    """Shadow / optimal with ``--movable-bound``: over the epochs, the proven bound on pending jobs
    startable with the running pods movable minus those the optimum started with them fixed: at
    most this many job starts were lost to where earlier jobs were put."""
    movable_epochs_at_limit: int | None = None
    """Those movable solves that stopped at ``--exact-time-limit`` (their bound is CP-SAT's)."""
    exported_epoch: str | None = None
    """Shadow / optimal: the snapshot ``--export-epoch`` wrote."""


class PolicySummary(_Doc):
    """Over the seeds of one policy."""

    runs: int
    unallocated_percent_mean: dict[str, float] | None = None
    unallocated_percent_std: dict[str, float] | None = None
    """Population standard deviation over seeds (0 with one seed)."""
    queueing_delay_mean: float | None = None
    jct_mean: float | None = None
    makespan_mean: float | None = None
    idle_gpu_hours_mean: float | None = None


class ReplaySummary(_Doc):
    schema_version: Literal[1] = 1
    mode: Literal["fill", "timed"]
    trace: str
    trace_kind: Literal["openb", "philly", "jobs"]
    nodes: str
    node_count: int
    capacity_gpus: int
    trace_jobs: int
    seeds: list[int]
    inflation_ratio: float | None = None
    packing_bound_unallocated_percent: dict[str, float] | None = None
    """Fill: the packing bound's unallocated GPU % (a lower bound for any placement of the
    arrived jobs: the aggregated LP over node classes, or with ``--bound patterns`` the pattern
    bound) keyed by arrived percent ("10", "20", .. "130", or ``--bound-percents``), mean over
    the seeds' fill orders."""
    packing_bound_method: str | None = None
    """Fill: ``lp`` or ``patterns`` (None: no bound computed)."""
    packing_bound_gap_percent: dict[str, float] | None = None
    """Fill with ``--bound patterns``: per arrived percent, the largest gap over the seeds between
    the bound and the last restricted master (points of capacity; 0 where every column
    generation converged; a generation stopped at ``--bound-work-limit`` is still a bound)."""
    arrival_scale: float | None = None
    caveats: list[str]
    policies: dict[str, PolicySummary]
    runs: list[ReplayRun]


__all__ = ["PolicySummary", "Quantiles", "ReplayRun", "ReplaySummary"]
