"""Generator families for bench suites: a name, its parameters with defaults, and a builder.

A suite file (:mod:`gangplan.bench.suites`) names a family by its ``generator`` and gives a grid
of parameters and a list of seeds; each cell of the grid and each seed is one snapshot. A family
returns the Kubernetes object dicts of :mod:`gangplan.bench.generators.builders` (so every instance can be
written as YAML with :func:`gangplan.io.writer.write_snapshot` and read back unchanged) and is
deterministic per seed: random draws come from :func:`~gangplan.bench.generators.builders.seeded_rng` with a
stream id per family.

Families:

``gpu``             :func:`~gangplan.bench.generators.gpu_clusters.gpu_cluster` + ``gpu_gangs`` (docs/benchmarks.md)
``scheduler-perf``  :func:`~gangplan.bench.generators.scheduler_perf.scheduler_perf_gangs` (upstream's gang benchmarks)
``mixed``           GPU racks at a chosen utilisation, with knobs for gang sizes, heterogeneous gangs,
                    pod affinity / anti-affinity, PodGroup topology, spread and priorities
``philly``          gangs whose GPU totals are a window of real Microsoft Philly jobs
``alibaba``         nodes sampled from a real Alibaba inventory (openb 2023, spot 2026, PAI 2020),
                    gangs of identical pods sampled from the openb pod lists
``real-inventory``  the whole Alibaba spot-GPU inventory in racks, Philly-sized multi-GPU jobs
``huge``            :func:`~gangplan.bench.generators.huge_clusters.huge_cluster`: 10,000 GB200- or DGX-like
                    nodes, 100,000 bound pods, 5,000 pending pods in rack- and block-constrained gangs

The real traces are read from ``$GANGPLAN_DATA_DIR`` or ``<repo>/../shared/data`` (see each
folder's README for provenance and license); a suite can also pass ``data_dir``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gangplan.bench.generators.builders import (
    Obj,
    node_object,
    pod_group_object,
    pod_object,
    priority_class_object,
    seeded_rng,
)
from gangplan.bench.generators.gpu_clusters import (
    CPU_PER_GPU,
    MEMORY_PER_GPU_GI,
    RUNNING_PRIORITY,
    RUNNING_PRIORITY_CLASS,
    gpu_cluster,
    gpu_gangs,
)
from gangplan.bench.generators.huge_clusters import huge_cluster
from gangplan.bench.generators.scheduler_perf import scheduler_perf_gangs
from gangplan.io.compressed import resolve
from gangplan.io.errors import SnapshotError
from gangplan.models.well_known import GPU, GPU_PRODUCT, HOSTNAME, RACK, ZONE

# Stream ids of this module (gpu_clusters.py uses 1 and 2, small_snapshots.py 3 and 5).
_STREAM_MIXED_NODES, _STREAM_MIXED_GANGS, _STREAM_PHILLY, _STREAM_ALIBABA, _STREAM_FILL = (
    11,
    12,
    13,
    14,
    15,
)


@dataclass(frozen=True)
class Family:
    name: str
    build: Callable[..., list[Obj]]
    defaults: Mapping[str, Any]
    doc: str


FAMILIES: dict[str, Family] = {}


def family(
    name: str, doc: str, **defaults: Any
) -> Callable[[Callable[..., list[Obj]]], Callable[..., list[Obj]]]:
    """Register a builder ``f(seed=..., **params)`` under ``name`` with its parameter defaults."""

    def register(f: Callable[..., list[Obj]]) -> Callable[..., list[Obj]]:
        FAMILIES[name] = Family(name, f, dict(defaults), doc)
        return f

    return register


def build_family(name: str, params: Mapping[str, Any], seed: int) -> list[Obj]:
    """The objects of one instance; unknown families or parameters raise ``ValueError``."""
    if name not in FAMILIES:
        raise ValueError(f"unknown generator {name!r}; known: {', '.join(sorted(FAMILIES))}")
    fam = FAMILIES[name]
    unknown = sorted(set(params) - set(fam.defaults))
    if unknown:
        raise ValueError(
            f"generator {name!r} has no parameter {unknown[0]!r}; it takes: {', '.join(sorted(fam.defaults))}"
        )
    return fam.build(seed=int(seed), **{**fam.defaults, **params})


def data_dir(override: str | None = None) -> Path:
    """Where the real traces live: ``override``, ``$GANGPLAN_DATA_DIR`` or ``<repo>/../shared/data``."""
    if override:
        return Path(override)
    env = os.environ.get("GANGPLAN_DATA_DIR")
    if env:
        return Path(env)
    return (
        Path(__file__).resolve().parents[3].parent / "shared" / "data"
    )  # this file: <repo>/gangplan/bench/generators/


def data_dir_path(override: str | None, *parts: str) -> Path:
    """A trace file under :func:`data_dir`: the plain file, or its ``.xz`` / ``.gz`` copy when only
    that exists (the repository's test copies are ``.xz``; :mod:`gangplan.io.compressed`)."""
    return resolve(data_dir(override).joinpath(*parts))


@lru_cache(maxsize=16)
def _read_csv(path: str, header: tuple[str, ...] | None = None) -> pd.DataFrame:
    p = resolve(path)
    if not p.is_file():
        raise SnapshotError(
            path, "trace file not found (set GANGPLAN_DATA_DIR or the family's data_dir)"
        )
    return pd.read_csv(
        p,
        header=None if header else "infer",
        names=list(header) if header else None,
        keep_default_na=False,
    )


# ---- shared pieces ----------------------------------------------------------------------------
def _gang_size(rng: np.random.Generator, dist: str, max_size: int) -> int:
    """``loguniform``: many small gangs, a few large; ``uniform`` on 1..max; ``fixed``: always max."""
    if dist == "fixed":
        return int(max_size)
    if dist == "uniform":
        return int(rng.integers(1, max_size + 1))
    if dist == "loguniform":
        return int(min(max_size, max(1, math.floor(2 ** rng.uniform(0, math.log2(max_size + 1))))))
    raise ValueError(f"unknown gang_size_dist {dist!r}; use loguniform, uniform or fixed")


def _gpu_requests(
    gpus: int, cpu_per_gpu: int = CPU_PER_GPU, mem_per_gpu_gi: int = MEMORY_PER_GPU_GI
) -> dict[str, str]:
    return {"cpu": str(gpus * cpu_per_gpu), "memory": f"{gpus * mem_per_gpu_gi}Gi", GPU: str(gpus)}


def _priority_classes(levels: int) -> dict[str, int]:
    """``levels`` PriorityClasses ``gang-p0`` (lowest) .. with values 10, 20, ..."""
    return {f"gang-p{i}": 10 * (i + 1) for i in range(max(1, int(levels)))}


def _rack_labels(
    name: str, index: int, nodes_per_rack: int, racks_per_zone: int, gpu_type: str | None
) -> dict[str, str]:
    rack = index // nodes_per_rack
    labels = {HOSTNAME: name, ZONE: f"zone-{rack // racks_per_zone}", RACK: f"rack-{rack}"}
    if gpu_type:
        labels[GPU_PRODUCT] = gpu_type
    return labels


@dataclass(frozen=True)
class _NodeShape:
    name: str
    cpu_milli: int
    memory_mib: int
    gpus: int
    model: str


def _nodes_with_usage(
    shapes: Sequence[_NodeShape],
    utilisation: float,
    seed: int,
    nodes_per_rack: int,
    racks_per_zone: int,
) -> list[Obj]:
    """Node objects in racks, then bound pods using ~``utilisation`` of each node's GPUs.

    A node's used GPUs are Binomial(gpus, utilisation): partly used nodes dominate, which is the
    fragmentation that makes gang placement hard. A bound pod also takes the same share of the
    node's CPU and memory, half of it, so GPUs stay the binding resource.
    """
    if not 0.0 <= utilisation <= 1.0:
        raise ValueError(f"utilisation must be in [0, 1], got {utilisation}")
    rng = seeded_rng(seed, _STREAM_FILL)
    used = rng.binomial([s.gpus for s in shapes], utilisation) if shapes else []
    out: list[Obj] = [priority_class_object(RUNNING_PRIORITY_CLASS, RUNNING_PRIORITY)]
    bound: list[Obj] = []
    for i, s in enumerate(shapes):
        out.append(
            node_object(
                s.name,
                cpu=f"{s.cpu_milli}m",
                memory=f"{s.memory_mib}Mi",
                gpus=s.gpus,
                labels=_rack_labels(s.name, i, nodes_per_rack, racks_per_zone, s.model or None),
            )
        )
        u = int(used[i])
        if u:
            share = u / s.gpus / 2
            bound.append(
                pod_object(
                    f"run-{s.name}",
                    namespace="running",
                    node_name=s.name,
                    priority=RUNNING_PRIORITY,
                    priority_class=RUNNING_PRIORITY_CLASS,
                    labels={"app": "running"},
                    created=0,
                    requests={
                        "cpu": f"{int(s.cpu_milli * share)}m",
                        "memory": f"{int(s.memory_mib * share)}Mi",
                        GPU: str(u),
                    },
                )
            )
    return out + bound


def _gang(
    name: str,
    pods: list[tuple[str, dict[str, str]]],
    *,
    index: int,
    namespace: str,
    priority: tuple[str, int] | None,
    topology_key: str | None = None,
    node_selector: Mapping[str, str] | None = None,
    affinity: Mapping[str, Any] | None = None,
    spread: Sequence[Mapping[str, Any]] = (),
) -> list[Obj]:
    """One all-or-nothing PodGroup (minCount = its pods) and its pods, created after gang ``index - 1``."""
    pc, value = priority if priority else (None, None)
    out = [
        pod_group_object(
            name,
            namespace=namespace,
            min_count=len(pods),
            priority=value,
            priority_class=pc,
            topology_key=topology_key,
            created=2 * index,
        )
    ]
    for pod_name, requests in pods:
        out.append(
            pod_object(
                pod_name,
                namespace=namespace,
                group=name,
                requests=requests,
                priority=value,
                priority_class=pc,
                labels={"job": name},
                node_selector=node_selector,
                affinity=affinity,
                topology_spread=spread,
                created=2 * index + 1,
            )
        )
    return out


def _job_term(name: str, topology_key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"job": name}}, "topologyKey": topology_key}


# ---- families ---------------------------------------------------------------------------------
@family(
    "gpu",
    "gpu_cluster + gpu_gangs: the exact engine's scaling family (docs/benchmarks.md)",
    nodes=16,
    pending_pods=32,
    profile="mixed",
    gpus_per_node=8,
    nodes_per_rack=16,
    max_gang_size=32,
    same_rack_fraction=0.5,
    selector_fraction=0.2,
)
def gpu_family(
    *,
    seed: int,
    nodes: int,
    pending_pods: int,
    profile: str,
    gpus_per_node: int,
    nodes_per_rack: int,
    max_gang_size: int,
    same_rack_fraction: float,
    selector_fraction: float,
) -> list[Obj]:
    cluster = gpu_cluster(
        nodes,
        gpus_per_node=gpus_per_node,
        nodes_per_rack=nodes_per_rack,
        profile=profile,
        seed=seed,
    )
    return cluster + gpu_gangs(
        pending_pods,
        seed=seed,
        max_gang_size=max_gang_size,
        same_rack_fraction=same_rack_fraction,
        selector_fraction=selector_fraction,
    )


@family(
    "scheduler-perf",
    "scheduler_perf_gangs: upstream's PodGroup benchmarks (seed-independent)",
    nodes=20,
    gangs=10,
    pods_per_gang=3,
    policy="gang",
    nodes_per_rack=None,
    topology_key=None,
)
def scheduler_perf_family(
    *,
    seed: int,
    nodes: int,
    gangs: int,
    pods_per_gang: int,
    policy: str,
    nodes_per_rack: int | None,
    topology_key: str | None,
) -> list[Obj]:
    del seed  # upstream's shapes are fixed; seeds only repeat them
    return scheduler_perf_gangs(
        nodes,
        gangs,
        pods_per_gang,
        policy,
        nodes_per_rack=nodes_per_rack,
        topology_key=topology_key,
    )


@family(
    "mixed",
    "GPU racks at a utilisation, gangs with heterogeneous pods, affinity, anti-affinity, topology, spread, priorities",
    nodes=16,
    gpus_per_node=8,
    cpu=128,
    memory_gi=1024,
    nodes_per_rack=4,
    racks_per_zone=2,
    gpu_types=["H100", "A100"],
    utilisation=0.5,
    gangs=8,
    gang_size_dist="loguniform",
    max_gang_size=8,
    gpus_per_pod=[1, 2, 4, 8],
    hetero_fraction=0.0,
    affinity_fraction=0.0,
    anti_affinity_fraction=0.0,
    topology_fraction=0.0,
    spread_fraction=0.0,
    selector_fraction=0.0,
    priorities=1,
)
def mixed_family(
    *,
    seed: int,
    nodes: int,
    gpus_per_node: int,
    cpu: int,
    memory_gi: int,
    nodes_per_rack: int,
    racks_per_zone: int,
    gpu_types: Sequence[str],
    utilisation: float,
    gangs: int,
    gang_size_dist: str,
    max_gang_size: int,
    gpus_per_pod: Sequence[int],
    hetero_fraction: float,
    affinity_fraction: float,
    anti_affinity_fraction: float,
    topology_fraction: float,
    spread_fraction: float,
    selector_fraction: float,
    priorities: int,
) -> list[Obj]:
    """Each knob is the share of gangs that get the feature, drawn independently per gang.

    Heterogeneous gang: a CPU-only launcher (8 cores, 32Gi) plus workers alternating between r and
    2r GPUs. Affinity: required pod affinity to the gang's own pods per rack. Anti-affinity:
    required anti-affinity per hostname (one pod per node). Topology: the PodGroup's
    ``schedulingConstraints.topology`` on the rack label. Spread: maxSkew 1 over zones.
    """
    rng_nodes = seeded_rng(seed, _STREAM_MIXED_NODES)
    n_racks = -(-nodes // nodes_per_rack)
    rack_type = [
        str(gpu_types[int(k)]) for k in rng_nodes.integers(0, len(gpu_types), size=n_racks)
    ]
    width = len(str(max(nodes - 1, 0)))
    shapes = [
        _NodeShape(
            f"gpu-{i:0{width}d}",
            cpu * 1000,
            memory_gi * 1024,
            gpus_per_node,
            rack_type[i // nodes_per_rack],
        )
        for i in range(nodes)
    ]
    out = _nodes_with_usage(shapes, utilisation, seed, nodes_per_rack, racks_per_zone)
    rng = seeded_rng(seed, _STREAM_MIXED_GANGS)
    classes = _priority_classes(priorities)
    out += [priority_class_object(n, v) for n, v in classes.items()]
    gwidth = len(str(max(gangs - 1, 0)))
    for g in range(gangs):
        out += _mixed_gang(
            rng,
            g,
            f"gang-{g:0{gwidth}d}",
            classes,
            gpus_per_node=gpus_per_node,
            gang_size_dist=gang_size_dist,
            max_gang_size=max_gang_size,
            gpus_per_pod=gpus_per_pod,
            gpu_types=gpu_types,
            shares=(
                hetero_fraction,
                affinity_fraction,
                anti_affinity_fraction,
                topology_fraction,
                spread_fraction,
                selector_fraction,
            ),
        )
    return out


def _mixed_gang(
    rng: np.random.Generator,
    index: int,
    name: str,
    classes: Mapping[str, int],
    *,
    gpus_per_node: int,
    gang_size_dist: str,
    max_gang_size: int,
    gpus_per_pod: Sequence[int],
    gpu_types: Sequence[str],
    shares: tuple[float, ...],
) -> list[Obj]:
    # Draw every random number in a fixed order, used or not, so one knob never shifts the others.
    k = _gang_size(rng, gang_size_dist, max_gang_size)
    r = min(int(gpus_per_pod[int(rng.integers(0, len(gpus_per_pod)))]), gpus_per_node)
    hetero, affinity, anti, topology, spread, selector = (rng.random() < s for s in shares)
    gpu_type = str(gpu_types[int(rng.integers(0, len(gpu_types)))])
    pc = sorted(classes)[int(rng.integers(0, len(classes)))]
    pods: list[tuple[str, dict[str, str]]] = []
    if hetero and k > 1:
        pods.append((f"{name}-launcher", {"cpu": "8", "memory": "32Gi"}))
        for j in range(1, k):
            pods.append((f"{name}-{j}", _gpu_requests(r if j % 2 else min(2 * r, gpus_per_node))))
    else:
        pods = [(f"{name}-{j}", _gpu_requests(r)) for j in range(k)]
    aff: dict[str, Any] = {}
    if affinity and k > 1:
        aff["podAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [_job_term(name, RACK)]
        }
    if anti and k > 1:
        aff["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [_job_term(name, HOSTNAME)]
        }
    spread_terms = (
        [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"job": name}},
            }
        ]
        if spread and k > 1
        else []
    )
    return _gang(
        name,
        pods,
        index=index,
        namespace="train",
        priority=(pc, classes[pc]),
        topology_key=RACK if topology and k > 1 else None,
        node_selector={GPU_PRODUCT: gpu_type} if selector else None,
        affinity=aff or None,
        spread=spread_terms,
    )


def _split_gpus(total: int, per_node: int) -> list[int]:
    """Philly gives a job's total GPUs only: split into ceil(total / per_node) equal workers.

    12 -> 2 x 6, 24 -> 3 x 8, 32 -> 4 x 8; a remainder (never seen in the trace) goes to the first workers.
    """
    workers = -(-total // per_node)
    base, extra = divmod(total, workers)
    return [base + (1 if i < extra else 0) for i in range(workers)]


@family(
    "philly",
    "a window of real Microsoft Philly jobs (num_gpus split into <= 8-GPU workers) on a GPU cluster",
    nodes=16,
    gpus_per_node=8,
    nodes_per_rack=4,
    racks_per_zone=2,
    utilisation=0.5,
    jobs=12,
    min_gpus=1,
    vc=None,
    sampling="window",
    same_rack_fraction=0.5,
    data_dir=None,
)
def philly_family(
    *,
    seed: int,
    nodes: int,
    gpus_per_node: int,
    nodes_per_rack: int,
    racks_per_zone: int,
    utilisation: float,
    jobs: int,
    min_gpus: int,
    vc: str | None,
    sampling: str,
    same_rack_fraction: float,
    data_dir: str | None,
) -> list[Obj]:
    """Jobs are philly.csv rows with ``num_gpus >= min_gpus`` (of VC ``vc`` if given) that fit the
    cluster, in submit order. ``sampling`` "window": ``jobs`` consecutive arrivals from a seeded
    start (a realistic mix); "uniform": a seeded sample without replacement, then submit order."""
    trace = _read_csv(str(data_dir_path(data_dir, "philly-pollux", "philly.csv")))
    rows = trace[(trace["num_gpus"] >= min_gpus) & (trace["num_gpus"] <= nodes * gpus_per_node)]
    if vc:
        rows = rows[rows["cluster"] == vc]
    rows = rows.sort_values(["timestamp"], kind="stable")
    if rows.empty:
        raise ValueError(
            f"no Philly job with num_gpus >= {min_gpus} fits {nodes} x {gpus_per_node} GPUs (vc={vc})"
        )
    rng = seeded_rng(seed, _STREAM_PHILLY)
    n = min(jobs, len(rows))
    if sampling == "window":
        start = int(rng.integers(0, len(rows) - n + 1))
        picked = rows.iloc[start : start + n]
    elif sampling == "uniform":
        picked = rows.iloc[np.sort(rng.choice(len(rows), size=n, replace=False))]
    else:
        raise ValueError(f"unknown sampling {sampling!r}; use window or uniform")
    width = len(str(max(nodes - 1, 0)))
    shapes = [
        _NodeShape(f"gpu-{i:0{width}d}", 128_000, 1024 * 1024, gpus_per_node, "")
        for i in range(nodes)
    ]
    out = _nodes_with_usage(shapes, utilisation, seed, nodes_per_rack, racks_per_zone)
    jwidth = len(str(max(n - 1, 0)))
    for g, total in enumerate(int(x) for x in picked["num_gpus"]):
        name = f"job-{g:0{jwidth}d}"
        split = _split_gpus(total, gpus_per_node)
        same_rack = len(split) > 1 and rng.random() < same_rack_fraction
        pods = [(f"{name}-{j}", _gpu_requests(r)) for j, r in enumerate(split)]
        out += _gang(
            name,
            pods,
            index=g,
            namespace="philly",
            priority=None,
            topology_key=RACK if same_rack else None,
        )
    return out


_INVENTORIES = ("openb", "openb-all", "spot", "pai")


def _inventory(name: str, override: str | None) -> list[_NodeShape]:
    """GPU nodes of a real Alibaba inventory, in file order.

    openb: ``sn,cpu_milli,memory_mib,gpu,model``. spot: ``gpu_model,gpu_capacity_num,cpu_num,node_name``
    with no memory column: 8 GiB per vCPU is assumed. pai (no header): ``machine,gpu_type,cap_cpu,cap_mem (GB),cap_gpu``.
    """
    if name in ("openb", "openb-all"):
        f = "openb_node_list_gpu_node.csv" if name == "openb" else "openb_node_list_all_node.csv"
        df = _read_csv(str(data_dir_path(override, "alibaba-gpu-v2023", f)))
        return [
            _NodeShape(r.sn, int(r.cpu_milli), int(r.memory_mib), int(r.gpu), str(r.model))
            for r in df.itertuples()
            if int(r.gpu) > 0
        ]
    if name == "spot":
        df = _read_csv(str(data_dir_path(override, "alibaba-spot-gpu-v2026", "node_info_df.csv")))
        return [
            _NodeShape(
                f"spot-{int(r.node_name):04d}",
                int(r.cpu_num) * 1000,
                int(r.cpu_num) * 8 * 1024,
                int(r.gpu_capacity_num),
                str(r.gpu_model),
            )
            for r in df.itertuples()
            if int(r.gpu_capacity_num) > 0
        ]
    if name == "pai":
        df = _read_csv(
            str(data_dir_path(override, "alibaba-pai-v2020", "pai_machine_spec.csv")),
            ("machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"),
        )
        return [
            _NodeShape(
                f"pai-{r.machine[:12]}",
                int(r.cap_cpu) * 1000,
                int(r.cap_mem) * 1024,
                int(r.cap_gpu),
                str(r.gpu_type),
            )
            for r in df.itertuples()
            if int(r.cap_gpu) > 0
        ]
    raise ValueError(f"unknown inventory {name!r}; use one of {', '.join(_INVENTORIES)}")


@family(
    "alibaba",
    "nodes sampled from a real Alibaba inventory; gangs of k identical whole-GPU pods from an openb pod list",
    inventory="openb",
    nodes=16,
    nodes_per_rack=4,
    racks_per_zone=2,
    utilisation=0.5,
    pod_list="multigpu50",
    gangs=8,
    gang_size_dist="loguniform",
    max_gang_size=4,
    gpu_spec=True,
    data_dir=None,
)
def alibaba_family(
    *,
    seed: int,
    inventory: str,
    nodes: int,
    nodes_per_rack: int,
    racks_per_zone: int,
    utilisation: float,
    pod_list: str,
    gangs: int,
    gang_size_dist: str,
    max_gang_size: int,
    gpu_spec: bool,
    data_dir: str | None,
) -> list[Obj]:
    """The trace has no gangs (README caveat): a gang here is k copies of one sampled pod with
    ``num_gpu >= 1`` and ``gpu_milli == 1000`` (whole GPUs). With ``gpu_spec`` and an openb
    inventory, the pod's allowed models become required node affinity on the GPU model label."""
    rng = seeded_rng(seed, _STREAM_ALIBABA)
    inv = _inventory(inventory, data_dir)
    pick = np.sort(rng.choice(len(inv), size=min(nodes, len(inv)), replace=False))
    shapes = [inv[int(i)] for i in pick]
    out = _nodes_with_usage(shapes, utilisation, seed, nodes_per_rack, racks_per_zone)
    pods_df = _read_csv(
        str(data_dir_path(data_dir, "alibaba-gpu-v2023", f"openb_pod_list_{pod_list}.csv"))
    )
    gpu_milli = pd.to_numeric(pods_df["gpu_milli"], errors="coerce").fillna(0)
    whole = pods_df[(pods_df["num_gpu"].astype(int) >= 1) & (gpu_milli == 1000)]
    max_node_gpus = max(s.gpus for s in shapes)
    whole = whole[whole["num_gpu"].astype(int) <= max_node_gpus]
    if whole.empty:
        raise ValueError(
            f"openb_pod_list_{pod_list} has no whole-GPU pod that fits the sampled nodes"
        )
    use_spec = gpu_spec and inventory.startswith("openb") and "gpu_spec" in whole.columns
    gwidth = len(str(max(gangs - 1, 0)))
    for g in range(gangs):
        row = whole.iloc[int(rng.integers(0, len(whole)))]
        k = _gang_size(rng, gang_size_dist, max_gang_size)
        name = f"gang-{g:0{gwidth}d}"
        req = {
            "cpu": f"{int(row['cpu_milli'])}m",
            "memory": f"{int(row['memory_mib'])}Mi",
            GPU: str(int(row["num_gpu"])),
        }
        models = [m for m in str(row["gpu_spec"]).split("|") if m] if use_spec else []
        affinity = (
            {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": GPU_PRODUCT, "operator": "In", "values": models}
                                ]
                            }
                        ]
                    }
                }
            }
            if models
            else None
        )
        out += _gang(
            name,
            [(f"{name}-{j}", req) for j in range(k)],
            index=g,
            namespace="alibaba",
            priority=None,
            affinity=affinity,
        )
    return out


@family(
    "real-inventory",
    "the whole Alibaba spot-GPU v2026 inventory in racks, with Philly-sized multi-GPU jobs (issue 27's shape)",
    jobs=1000,
    utilisation=0.8,
    min_gpus=2,
    worker_gpus=4,
    nodes_per_rack=8,
    racks_per_zone=8,
    max_rack_gang=8,
    data_dir=None,
)
def real_inventory_family(
    *,
    seed: int,
    jobs: int,
    utilisation: float,
    min_gpus: int,
    worker_gpus: int,
    nodes_per_rack: int,
    racks_per_zone: int,
    max_rack_gang: int,
    data_dir: str | None,
) -> list[Obj]:
    """A shape built differently from the generated ones: all 4,278 nodes of
    ``alibaba-spot-gpu-v2026/node_info_df.csv`` (3,396 one-GPU, 10 four-GPU and 872 eight-GPU
    servers), listed by model and GPU count so that racks of ``nodes_per_rack`` consecutive nodes
    hold identical servers except where one group ends (535 racks in 67 zones at the defaults);
    each node runs one bound pod using Binomial(GPUs, ``utilisation``) of its GPUs
    (:func:`_nodes_with_usage`, about 3,600 bound pods at 0.8).

    Pending: ``jobs`` Philly jobs drawn uniformly (seeded, without replacement, then submit order)
    from the rows of ``philly-pollux/philly.csv`` with ``num_gpus >= min_gpus``, each split into
    workers of at most ``worker_gpus`` GPUs (:func:`_split_gpus`). A one-worker job is a basic
    PodGroup; a gang of up to ``max_rack_gang`` workers must stay in one rack
    (``schedulingConstraints.topology`` on the rack label); bigger ones are unconstrained. At the
    defaults, 1,000 jobs give about 1,500 pending pods of which about a third are in some 320
    rack-constrained gangs of 2-8 pods: only the 109 racks of eight-GPU servers can hold them,
    so each gang's placement search meets some 430 infeasible racks (the case issue 27 profiles).
    """
    shapes = _inventory("spot", data_dir)
    by_kind: dict[tuple[str, int], list[_NodeShape]] = {}
    for s in shapes:
        by_kind.setdefault((s.model, s.gpus), []).append(s)
    ordered = [s for g in by_kind.values() for s in g]
    out = _nodes_with_usage(ordered, utilisation, seed, nodes_per_rack, racks_per_zone)
    trace = _read_csv(str(data_dir_path(data_dir, "philly-pollux", "philly.csv")))
    rows = trace[trace["num_gpus"] >= min_gpus]
    if rows.empty:
        raise ValueError(f"no Philly job with num_gpus >= {min_gpus}")
    rng = seeded_rng(seed, _STREAM_PHILLY)
    n = min(jobs, len(rows))
    picked = rows.iloc[np.sort(rng.choice(len(rows), size=n, replace=False))].sort_values(
        ["timestamp"], kind="stable"
    )
    return out + philly_jobs([int(x) for x in picked["num_gpus"]], worker_gpus, max_rack_gang)


def philly_jobs(totals: Sequence[int], worker_gpus: int, max_rack_gang: int) -> list[Obj]:
    """Pending jobs of these GPU totals, in order (``job-<g>`` in namespace ``philly``): each split
    into workers of at most ``worker_gpus`` GPUs; one worker is a basic PodGroup, several an
    all-or-nothing gang confined to one rack up to ``max_rack_gang`` workers (unconstrained above)."""
    out: list[Obj] = []
    width = len(str(max(len(totals) - 1, 0)))
    for g, total in enumerate(totals):
        name = f"job-{g:0{width}d}"
        pods = [
            (f"{name}-{j}", _gpu_requests(r)) for j, r in enumerate(_split_gpus(total, worker_gpus))
        ]
        if len(pods) == 1:
            out.append(pod_group_object(name, namespace="philly", policy="basic", created=2 * g))
            out.append(
                pod_object(
                    pods[0][0],
                    namespace="philly",
                    group=name,
                    requests=pods[0][1],
                    labels={"job": name},
                    created=2 * g + 1,
                )
            )
        else:
            out += _gang(
                name,
                pods,
                index=g,
                namespace="philly",
                priority=None,
                topology_key=RACK if len(pods) <= max_rack_gang else None,
            )
    return out


@family(
    "huge",
    "10,000 GB200- or DGX-like nodes, 100,000 bound pods, 5,000 pending pods in rack/block gangs (issue 27 item 5)",
    variant="gb200",
    nodes=10_000,
    bound_pods=100_000,
    pending_pods=5_000,
    utilisation=0.8,
    gpu_share=0.85,
    max_gang_size=32,
    rack_fraction=0.5,
    single_fraction=0.1,
)
def huge_family(*, seed: int, **params: Any) -> list[Obj]:
    """:func:`gangplan.bench.generators.huge_clusters.huge_cluster` with these parameters."""
    return huge_cluster(seed=seed, **params)


def preload(generator: str | None, params: Mapping[str, Any]) -> None:
    """Read the trace files an instance needs into this process's cache, so that processes forked
    afterwards share them instead of each parsing the CSV again. Errors are left to the task."""
    if generator not in ("philly", "alibaba", "real-inventory"):
        return
    p = {**FAMILIES[generator].defaults, **params}
    try:
        if generator == "real-inventory":
            _inventory("spot", p["data_dir"])
            _read_csv(str(data_dir_path(p["data_dir"], "philly-pollux", "philly.csv")))
        elif generator == "philly":
            _read_csv(str(data_dir_path(p["data_dir"], "philly-pollux", "philly.csv")))
        else:
            _inventory(p["inventory"], p["data_dir"])
            _read_csv(
                str(
                    data_dir_path(
                        p["data_dir"], "alibaba-gpu-v2023", f"openb_pod_list_{p['pod_list']}.csv"
                    )
                )
            )
    except (SnapshotError, ValueError, OSError):
        pass


__all__ = ["FAMILIES", "Family", "build_family", "data_dir", "family", "preload"]
