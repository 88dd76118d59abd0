"""The ``summary.json`` of ``gangplan replay`` (``gangplan schema replay``)."""

from __future__ import annotations

from typing import Literal

from gangplan.models.base import Document

_Doc = Document
"""(:class:`gangplan.models.base.Document`, the one base of the printed documents.)"""


class Quantiles(_Doc):
    """Seconds: mean, median and 99th percentile (nearest rank) over the jobs that started."""

    mean: float
    p50: float
    p99: float


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
    allocated_gpus: int
    """Fill: GPUs allocated at the end. Timed: the peak."""
    unallocated_percent: dict[str, float] | None = None
    """Fill: unallocated GPU % keyed by integer arrived % ("1" .. "130")."""
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
    unfinished: int | None = None


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
    arrival_scale: float | None = None
    caveats: list[str]
    policies: dict[str, PolicySummary]
    runs: list[ReplayRun]


__all__ = ["PolicySummary", "Quantiles", "ReplayRun", "ReplaySummary"]
