"""Replay inputs: the jobs of a trace and the cluster they run on.

Three trace formats, all read into :class:`ReplayJob` rows (one job = one gang of ``workers``
identical pods, ``min_count`` of them needed at once):

* the Alibaba openb pod list (``openb_pod_list_*.csv``): one pod per row, a gang of one;
  ``submit`` = ``creation_time``, ``duration`` = ``deletion_time - creation_time``;
* the Philly job list of the Pollux artifact (``philly.csv``: ``timestamp, duration, num_gpus``):
  a job of g GPUs is a gang of ``ceil(g / 8)`` workers of ``g / workers`` GPUs each,
  ``minCount = workers``; ``--vc NAME`` keeps that VC's jobs and sizes the cluster from
  ``philly_vc.csv`` (``node num`` x 8 GPUs);
* gangplan's neutral ``jobs.csv`` (:data:`JOBS_COLUMNS`, docs/tutorials/replay.md).

Every reader raises :class:`~gangplan.io.errors.SnapshotError` naming file, line, row and column.
"""

from __future__ import annotations

import csv
import functools
import math
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from gangplan.io.alibaba import alibaba_nodes_to_objects
from gangplan.io.compressed import open_text, resolve
from gangplan.io.csvrows import csv_rows
from gangplan.io.errors import SnapshotError
from gangplan.models.cluster import Cluster
from gangplan.models.objects import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    Node,
    Pod,
)
from gangplan.models.well_known import GPU, GPU_PRODUCT, HOSTNAME
from gangplan.replay.gpushare import request_annotations

MIB = 1024 * 1024
PHILLY_GPUS_PER_NODE = 8
PHILLY_NODE_CPU_MILLI = 64_000
PHILLY_NODE_MEMORY_MIB = 512 * 1024
"""Philly's trace has GPUs only: its nodes get 8 GPUs, 64 cores and 512 GiB (never binding: a
Philly worker asks for GPUs alone)."""

OPENB_COLUMNS = (
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "creation_time",
    "deletion_time",
)
PHILLY_COLUMNS = ("timestamp", "duration", "num_gpus")
JOBS_COLUMNS = ("job", "submit", "duration", "workers", "cpu_milli", "memory_mib", "gpu")
"""Required columns of the neutral ``jobs.csv``; optional: ``min_count`` (default = workers),
``priority`` (0), ``required_topology_key``, ``preferred_topology_key``, ``gpu_model`` (a
``|``-separated list of allowed ``nvidia.com/gpu.product`` values)."""
JOBS_OPTIONAL = (
    "min_count",
    "priority",
    "required_topology_key",
    "preferred_topology_key",
    "gpu_model",
)


@dataclass(frozen=True)
class ReplayJob:
    """One job of a trace: a gang of ``workers`` identical pods."""

    name: str
    submit: float
    duration: float
    workers: int
    cpu_milli: int
    memory_mib: int
    gpu: int
    """GPU devices per worker (a GPU-sharing openb pod has one: see :attr:`gpu_milli`)."""
    gpu_milli: int = 1000
    """The milli each device gives (openb ``gpu_milli``); < 1000 shares the device."""
    gpu_models: tuple[str, ...] = ()
    min_count: int = 0
    priority: int = 0
    required_topology_key: str = ""
    preferred_topology_key: str = ""
    row: int = 0

    @property
    def gang(self) -> int:
        return self.min_count or self.workers

    @property
    def gpus(self) -> int:
        """GPU devices of the whole job (shared or whole)."""
        return self.gpu * self.workers

    @property
    def gpu_milli_total(self) -> int:
        """GPU milli of the whole job (the simulator's ``TotalMilliGpu`` times workers)."""
        return self.gpu * self.gpu_milli * self.workers if self.gpu else 0

    @property
    def fractional(self) -> bool:
        return self.gpu > 0 and self.gpu_milli < 1000


@dataclass
class Trace:
    jobs: list[ReplayJob]
    kind: str
    """``openb``, ``philly`` or ``jobs``."""
    source: str
    vc_nodes: int | None = None
    """Philly with ``--vc``: the VC's node count."""


# ---- CSV plumbing ---------------------------------------------------------------------------------
_rows = csv_rows
"""(row number, line, row) for every data row (:func:`gangplan.io.csvrows.csv_rows`)."""


class _Row:
    def __init__(self, file: str, row_no: int, line: int, row: dict[str, str]) -> None:
        self.file, self.row_no, self.line, self.row = file, row_no, line, row

    def fail(self, column: str, message: str) -> SnapshotError:
        return SnapshotError(
            self.file, message, obj=f"row {self.row_no}", field=column, line=self.line
        )

    def text(self, column: str, default: str = "") -> str:
        v = self.row.get(column)
        return default if v is None else v.strip()

    def int(self, column: str, *, minimum: int = 0, default: int | None = None) -> int:
        t = self.text(column)
        if not t and default is not None:
            return default
        try:
            v = float(t)
        except ValueError:
            raise self.fail(column, f"expected an integer, got {self.row.get(column)!r}") from None
        if not math.isfinite(v) or v != int(v):
            raise self.fail(column, f"expected an integer, got {self.row.get(column)!r}")
        if v < minimum:
            raise self.fail(
                column, f"expected an integer >= {minimum}, got {self.row.get(column)!r}"
            )
        return int(v)

    def seconds(self, column: str) -> float:
        t = self.text(column)
        try:
            v = float(t)
        except ValueError:
            raise self.fail(
                column, f"expected a number of seconds, got {self.row.get(column)!r}"
            ) from None
        if not math.isfinite(v) or v < 0:
            raise self.fail(
                column, f"expected a non-negative number of seconds, got {self.row.get(column)!r}"
            )
        return v


def sniff(path: str | os.PathLike) -> str:
    """The trace format of ``path`` from its header: ``openb``, ``philly`` or ``jobs``."""
    name = str(path)
    try:
        with open_text(path) as f:
            header = {h.strip() for h in next(csv.reader(f), [])}
    except OSError as e:
        raise SnapshotError(name, f"cannot read: {e.strerror or e}") from None
    except (csv.Error, UnicodeDecodeError) as e:
        raise SnapshotError(name, f"invalid CSV header: {e}", line=1) from None
    if "job" in header and "submit" in header:
        return "jobs"
    if "num_gpus" in header and "timestamp" in header:
        return "philly"
    if "num_gpu" in header and "gpu_milli" in header:
        return "openb"
    raise SnapshotError(
        name,
        f"not a trace gangplan reads: the header ({','.join(sorted(header)) or 'empty'}) is none of the openb pod list, the Philly job list, gangplan's jobs.csv",
        line=1,
    )


# ---- readers ------------------------------------------------------------------------------------
def read_openb_pods(path: str | os.PathLike) -> list[ReplayJob]:
    file, out = str(path), []
    for row_no, line, raw in _rows(path, OPENB_COLUMNS):
        r = _Row(file, row_no, line, raw)
        created, deleted = r.int("creation_time"), r.int("deletion_time")
        if deleted < created:
            raise r.fail(
                "deletion_time", f"deletion_time {deleted} is before creation_time {created}"
            )
        num_gpu, milli = r.int("num_gpu"), r.int("gpu_milli")
        if milli > 1000:
            raise r.fail("gpu_milli", f"expected at most 1000, got {milli}")
        spec = r.text("gpu_spec")
        out.append(
            ReplayJob(
                name=r.text("name") or f"pod-{row_no}",
                submit=float(created),
                duration=float(deleted - created),
                workers=1,
                cpu_milli=r.int("cpu_milli"),
                memory_mib=r.int("memory_mib"),
                gpu=num_gpu,
                gpu_milli=milli if num_gpu else 0,
                gpu_models=tuple(s for s in spec.split("|") if s),
                row=row_no,
            )
        )
    return out


def philly_gang(g: int) -> tuple[int, int]:
    """(workers, GPUs per worker) of a Philly job of ``g`` GPUs: ``ceil(g / 8)`` workers of
    ``g / workers`` GPUs (rounded up when ``g`` does not divide).

    >>> philly_gang(1), philly_gang(8), philly_gang(16), philly_gang(12)
    ((1, 1), (1, 8), (2, 8), (2, 6))
    """
    workers = max(1, math.ceil(g / PHILLY_GPUS_PER_NODE))
    return workers, math.ceil(g / workers)


def read_philly(path: str | os.PathLike, *, vc: str | None = None) -> list[ReplayJob]:
    file, rows = str(path), []
    for row_no, line, raw in _rows(path, PHILLY_COLUMNS):
        r = _Row(file, row_no, line, raw)
        if vc is not None and r.text("cluster") != vc:
            continue
        t = r.text("timestamp")
        try:
            submit = datetime.fromisoformat(t).timestamp() if not _is_number(t) else float(t)
        except ValueError:
            raise r.fail("timestamp", f"expected a date-time or seconds, got {t!r}") from None
        duration = r.seconds("duration")
        g = r.int("num_gpus", minimum=1)
        rows.append((submit, row_no, duration, g))
    if not rows:
        where = f" of VC {vc!r}" if vc else ""
        raise SnapshotError(file, f"no jobs{where} in the trace")
    t0 = min(s for s, *_ in rows)
    out = []
    for submit, row_no, duration, g in rows:
        w, per = philly_gang(g)
        out.append(
            ReplayJob(
                name=f"philly-{row_no}",
                submit=submit - t0,
                duration=duration,
                workers=w,
                cpu_milli=0,
                memory_mib=0,
                gpu=per,
                min_count=w,
                row=row_no,
            )
        )
    return out


def _is_number(t: str) -> bool:
    try:
        float(t)
    except ValueError:
        return False
    return True


def philly_vc_nodes(vc_path: str | os.PathLike, vc: str) -> int:
    file = str(vc_path)
    for row_no, line, raw in _rows(vc_path, ("vc", "node num")):
        r = _Row(file, row_no, line, raw)
        if r.text("vc") == vc:
            return r.int("node num", minimum=1)
    raise SnapshotError(file, f"no VC named {vc!r}", field="vc")


def read_jobs_csv(path: str | os.PathLike) -> list[ReplayJob]:
    file, out, seen = str(path), [], set()
    for row_no, line, raw in _rows(path, JOBS_COLUMNS):
        r = _Row(file, row_no, line, raw)
        name = r.text("job")
        if not name:
            raise r.fail("job", "empty job name")
        if name in seen:
            raise r.fail("job", f"duplicate job {name!r}")
        seen.add(name)
        workers = r.int("workers", minimum=1)
        min_count = r.int("min_count", minimum=1, default=workers)
        if min_count > workers:
            raise r.fail("min_count", f"min_count {min_count} exceeds workers {workers}")
        out.append(
            ReplayJob(
                name=name,
                submit=r.seconds("submit"),
                duration=r.seconds("duration"),
                workers=workers,
                cpu_milli=r.int("cpu_milli"),
                memory_mib=r.int("memory_mib"),
                gpu=r.int("gpu"),
                gpu_models=tuple(s for s in r.text("gpu_model").split("|") if s),
                min_count=min_count,
                priority=r.int("priority", minimum=-(2**31), default=0),
                required_topology_key=r.text("required_topology_key"),
                preferred_topology_key=r.text("preferred_topology_key"),
                row=row_no,
            )
        )
    return out


def read_trace(
    path: str | os.PathLike, *, vc: str | None = None, vc_file: str | os.PathLike | None = None
) -> Trace:
    """Read any of the three formats (sniffed from the header)."""
    kind = sniff(path)
    if vc is not None and kind != "philly":
        raise SnapshotError(str(path), f"--vc applies to the Philly trace only; this is {kind}")
    if kind == "openb":
        return Trace(read_openb_pods(path), kind, str(path))
    if kind == "jobs":
        return Trace(read_jobs_csv(path), kind, str(path))
    jobs = read_philly(path, vc=vc)
    nodes = None
    if vc is not None:
        nodes = philly_vc_nodes(vc_file or Path(path).with_name("philly_vc.csv"), vc)
    return Trace(jobs, kind, str(path), vc_nodes=nodes)


# ---- the cluster ----------------------------------------------------------------------------------
def philly_nodes(count: int) -> list[Node]:
    return [
        Node(
            name=f"philly-node-{i:04d}",
            labels={HOSTNAME: f"philly-node-{i:04d}"},
            allocatable={
                "cpu": PHILLY_NODE_CPU_MILLI,
                "memory": PHILLY_NODE_MEMORY_MIB * MIB,
                "pods": 110,
                GPU: PHILLY_GPUS_PER_NODE,
            },
        )
        for i in range(count)
    ]


def read_nodes(path: str | os.PathLike, *, gpu_class: str | None = None) -> Cluster:
    """The cluster a replay starts from: an openb node CSV (every node empty) or a snapshot (its
    nodes, Topology objects and bound pods; its pending pods are not replayed, a caveat counts
    them). A snapshot's DRA GPUs (ResourceSlice devices of the DeviceClass ``gpu_class``, or the
    one named like a GPU) become ``nvidia.com/gpu`` (:mod:`gangplan.replay.dragpus`)."""
    p = resolve(path)
    if p.is_file() and (p.name.endswith(".csv") or ".csv." in p.name):
        from gangplan.io.loader import load_objects

        cluster = load_objects(alibaba_nodes_to_objects(path), source=str(path))
        return Cluster(nodes=cluster.nodes, sources=(str(path),))
    from gangplan.io.loader import load_snapshot

    cluster = load_snapshot(path)
    notes = [f"nodes {path}: {w}" for w in cluster.warnings]
    pending = [p.key for p in cluster.pods if p.node_name is None]
    if pending:
        shown = ", ".join(pending[:3]) + (
            f" and {len(pending) - 3} more" if len(pending) > 3 else ""
        )
        notes.append(
            f"nodes {path}: {len(pending)} pending pods of the snapshot are not replayed (the trace is the workload): {shown}"
        )
    nodes, bound = cluster.nodes, tuple(cluster.bound_pods)
    if cluster.dra and any(cluster.dra.devices_by_node.values()):
        from gangplan.replay.dragpus import translate

        nodes, bound, more = translate(cluster, gpu_class, str(path))
        notes += more
    elif gpu_class is not None:
        raise SnapshotError(
            str(path),
            f"--gpu-class {gpu_class}: the snapshot has no ResourceSlice devices",
            field="--gpu-class",
        )
    return Cluster(
        nodes=nodes,
        pods=bound,
        topologies=cluster.topologies,
        priority_classes=cluster.priority_classes,
        sources=cluster.sources,
        warnings=tuple(notes),
    )


RESIDENT_KINDS = frozenset(
    {"PriorityClass", "PodGroup", "CompositePodGroup", "Workload", "PodDisruptionBudget"}
)
"""Kinds of a ``--nodes`` snapshot written into every exact epoch and preemption run beside its
bound pods (:func:`resident_objects`)."""


def resident_objects(cluster: Cluster) -> list[dict]:
    """The snapshot's own objects of the pods ``cluster`` binds (a :func:`read_nodes` cluster,
    read again from its ``sources``): those Pods, and its PriorityClasses, groups and
    PodDisruptionBudgets, as written. They stay for the whole replay, so the exact epochs and
    the preemption runs (:func:`gangplan.replay.shadow.epoch_objects`) must see them too.
    Copies: callers may change them."""
    import copy

    if not cluster.pods:
        return []
    out = copy.deepcopy(_resident(cluster.sources, frozenset(p.key for p in cluster.pods)))
    gpus = {p.key: int(p.requests.get(GPU, 0)) for p in cluster.pods}
    for raw in out:
        spec = raw.get("spec") or {}
        if raw.get("kind") != "Pod" or not spec.pop("resourceClaims", None):
            continue
        # Its claims are not in the epoch: the GPUs they held are nvidia.com/gpu (dragpus.translate).
        meta = raw.get("metadata") or {}
        containers = spec.get("containers") or []
        written = sum(
            int(str(((c.get("resources") or {}).get("requests") or {}).get(GPU, 0)))
            for c in containers
        )
        extra = gpus.get(f"{meta.get('namespace') or 'default'}/{meta.get('name')}", 0) - written
        if extra > 0 and containers:
            res = containers[0].setdefault("resources", {})
            req = res.setdefault("requests", {})
            req[GPU] = str(int(str(req.get(GPU, 0))) + extra)
            res.setdefault("limits", {})[GPU] = req[
                GPU
            ]  # an extended resource's limit equals its request
    return out


@functools.lru_cache(maxsize=8)
def _resident(sources: tuple[str, ...], keys: frozenset[str]) -> list[dict]:
    from gangplan.io.loader import file_objects

    out = []
    for f in sources:
        for raw in file_objects(f):
            kind = raw.get("kind")
            meta = raw.get("metadata") or {}
            if kind == "Pod":
                if f"{meta.get('namespace') or 'default'}/{meta.get('name')}" in keys:
                    out.append(raw)
            elif kind in RESIDENT_KINDS:
                out.append(raw)
    return out


def unlimited_philly_nodes(jobs: list[ReplayJob]) -> int:
    """Enough 8-GPU nodes that every job of the trace could run at once."""
    return sum(j.workers for j in jobs)


def model_selector(models: tuple[str, ...]):
    """Required node affinity ``nvidia.com/gpu.product In models`` (None when any model)."""
    from gangplan.models.objects import Affinity, NodeSelectorTerm, Requirement

    if not models:
        return Affinity()
    return Affinity(
        node_required=(
            NodeSelectorTerm(
                match_expressions=(
                    Requirement(key=GPU_PRODUCT, operator="In", values=tuple(models)),
                )
            ),
        )
    )


def worker_pod(
    job: ReplayJob, index: int, *, namespace: str = "replay", group: str | None = None
) -> Pod:
    """One worker of ``job`` as a pending Pod. Its GPUs are a device request (``gpu`` devices of
    ``gpu_milli`` each, :mod:`gangplan.replay.gpushare`) carried by annotations, not
    ``nvidia.com/gpu``; the allowed models are a node-affinity term (GPU pods only)."""
    req: dict[str, int] = {"cpu": job.cpu_milli, "memory": job.memory_mib * MIB}
    nonzero = {
        CPU: job.cpu_milli or DEFAULT_MILLI_CPU_REQUEST,
        MEMORY: job.memory_mib * MIB or DEFAULT_MEMORY_REQUEST,
    }
    return Pod(
        namespace=namespace,
        name=f"{job.name}-{index}" if job.workers > 1 else job.name,
        requests={k: v for k, v in req.items() if v},
        nonzero_requests=nonzero,
        annotations=request_annotations(job.gpu, job.gpu_milli),
        affinity=model_selector(job.gpu_models if job.gpu else ()),
        priority=job.priority,
        pod_group=group,
    )


__all__ = [
    "JOBS_COLUMNS",
    "JOBS_OPTIONAL",
    "ReplayJob",
    "Trace",
    "philly_gang",
    "philly_nodes",
    "read_jobs_csv",
    "read_nodes",
    "read_openb_pods",
    "read_philly",
    "read_trace",
    "resident_objects",
    "sniff",
    "worker_pod",
]
