"""The bench generator families built on real traces (:mod:`gangplan.bench.generators.families`
lists every family): ``philly`` (a window of Microsoft Philly jobs), ``alibaba`` (nodes sampled
from an Alibaba inventory, gangs from the openb pod lists), ``real-inventory`` (the whole
Alibaba spot-GPU inventory with Philly-sized jobs), and :func:`preload`, which reads their trace
files once before the bench forks its workers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from gangplan.bench.generators.builders import Obj, pod_group_object, pod_object, seeded_rng
from gangplan.bench.generators.families_common import (
    _STREAM_ALIBABA,
    _STREAM_PHILLY,
    FAMILIES,
    _gang,
    _gang_size,
    _gpu_requests,
    _nodes_with_usage,
    _NodeShape,
    _read_csv,
    data_dir_path,
    family,
)
from gangplan.io.errors import SnapshotError
from gangplan.models.well_known import GPU, GPU_PRODUCT, RACK


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


__all__ = ["philly_jobs", "preload"]
