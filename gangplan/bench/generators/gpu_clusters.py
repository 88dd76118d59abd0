"""GPU clusters in racks and zones with a utilisation profile, and pending GPU gangs.

The instance family of docs/benchmarks.md for the exact engine's scaling benchmark:
:func:`gpu_cluster` (nodes and the bound pods that realise the load), :func:`gpu_gangs` (the
pending gangs) and :func:`gpu_benchmark` (one cell of the grid, both together).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from gangplan.bench.generators.builders import (
    Obj,
    node_object,
    pod_group_object,
    pod_object,
    priority_class_object,
    seeded_rng,
    topology_object,
)
from gangplan.models.well_known import GPU, GPU_PRODUCT, HOSTNAME, RACK, ZONE

# Stream ids keep the random draws of different generators independent for one seed.
_STREAM_GPU_CLUSTER, _STREAM_GPU_GANGS = 1, 2

UTILISATION_PROFILES: dict[str, tuple[float, float, float]] = {
    "mixed": (0.30, 0.35, 0.35),
    "busy": (0.70, 0.20, 0.10),
}
"""Fractions of nodes that are full, partly used and idle (docs/benchmarks.md)."""

GPU_GANG_PRIORITIES: dict[str, int] = {"gangplan-low": 10, "gangplan-mid": 50, "gangplan-high": 100}
"""PriorityClasses of the pending GPU gangs."""

RUNNING_PRIORITY_CLASS, RUNNING_PRIORITY = "gangplan-running", 1000
"""The class of the bound pods that realise the utilisation: above every pending gang, so a
preempting engine cannot make room by evicting them (the benchmark measures placement)."""

CPU_PER_GPU, MEMORY_PER_GPU_GI = 12, 96
"""A pod asks this much CPU (cores) and memory (GiB) per GPU: GPUs, not CPU, are what binds."""


def _gpu_node_labels(name: str, rack: int, zone: int, gpu_type: str) -> dict[str, str]:
    return {HOSTNAME: name, ZONE: f"zone-{zone}", RACK: f"rack-{rack}", GPU_PRODUCT: gpu_type}


def _used_gpus(rng: np.random.Generator, n: int, gpus_per_node: int, profile: str) -> list[int]:
    """GPUs in use per node: exact category counts, shuffled over the nodes."""
    if profile not in UTILISATION_PROFILES:
        raise ValueError(
            f"unknown utilisation profile {profile!r}; use one of {sorted(UTILISATION_PROFILES)}"
        )
    full_frac, part_frac, _ = UTILISATION_PROFILES[profile]
    n_full, n_part = round(n * full_frac), round(n * part_frac)
    category = np.array([2] * n_full + [1] * n_part + [0] * (n - n_full - n_part))
    category = category[rng.permutation(n)]
    partial = rng.integers(1, max(gpus_per_node, 2), size=n)  # 1 .. gpus_per_node-1
    return [
        gpus_per_node if c == 2 else int(partial[i]) if c == 1 and gpus_per_node > 1 else 0
        for i, c in enumerate(category)
    ]


def _power_of_two_parts(used: int) -> list[int]:
    """Split ``used`` GPUs into pods of 8/4/2/1 GPUs, largest first (how jobs usually fill a node)."""
    return [1 << b for b in range(used.bit_length() - 1, -1, -1) if used & (1 << b)]


def gpu_cluster(
    nodes: int,
    *,
    gpus_per_node: int = 8,
    cpu: int = 128,
    memory: str = "1024Gi",
    nodes_per_rack: int = 16,
    racks_per_zone: int = 8,
    profile: Literal["mixed", "busy"] = "mixed",
    gpu_types: Sequence[str] = ("H100", "A100"),
    seed: int = 0,
    with_topology: bool = False,
) -> list[Obj]:
    """GPU nodes in racks and zones, with bound pods realising a utilisation profile.

    The instance family of docs/benchmarks.md: 8-GPU / 128-core nodes, racks of 16, zones of
    8 racks, one GPU type per rack (label :data:`GPU_PRODUCT`). ``profile`` "mixed" makes 30 % of
    nodes full, 35 % partly used (1..7 GPUs) and 35 % idle; "busy" 70/20/10. Used GPUs are bound
    pods in namespace ``running`` of 8/4/2/1 GPUs (plus :data:`CPU_PER_GPU` cores and
    :data:`MEMORY_PER_GPU_GI` GiB per GPU) at priority :data:`RUNNING_PRIORITY`. Returns the
    PriorityClass, the nodes, then the bound pods (and a Kueue Topology if ``with_topology``).
    """
    rng = seeded_rng(seed, _STREAM_GPU_CLUSTER)
    width = len(str(max(nodes - 1, 0)))
    n_racks = -(-nodes // nodes_per_rack)
    rack_types = [str(gpu_types[int(k)]) for k in rng.integers(0, len(gpu_types), size=n_racks)]
    used = _used_gpus(rng, nodes, gpus_per_node, profile)
    out: list[Obj] = [priority_class_object(RUNNING_PRIORITY_CLASS, RUNNING_PRIORITY)]
    if with_topology:
        out.append(topology_object("gpu-topology", (ZONE, RACK, HOSTNAME)))
    bound: list[Obj] = []
    for i in range(nodes):
        name = f"gpu-{i:0{width}d}"
        rack = i // nodes_per_rack
        out.append(
            node_object(
                name,
                cpu=cpu,
                memory=memory,
                gpus=gpus_per_node,
                labels=_gpu_node_labels(name, rack, rack // racks_per_zone, rack_types[rack]),
            )
        )
        for j, g in enumerate(_power_of_two_parts(used[i])):
            bound.append(
                pod_object(
                    f"run-{name}-{j}",
                    namespace="running",
                    node_name=name,
                    requests=_gpu_pod_requests(g),
                    priority=RUNNING_PRIORITY,
                    priority_class=RUNNING_PRIORITY_CLASS,
                    labels={"app": "running"},
                    created=0,
                )
            )
    return out + bound


def _gpu_pod_requests(gpus: int) -> dict[str, str]:
    return {
        "cpu": str(gpus * CPU_PER_GPU),
        "memory": f"{gpus * MEMORY_PER_GPU_GI}Gi",
        GPU: str(gpus),
    }


def _gang_size(rng: np.random.Generator, max_size: int) -> int:
    """Log-uniform on 1..max_size: many small gangs, a few large ones (mean ~9 for 32)."""
    return int(min(max_size, max(1, math.floor(2 ** rng.uniform(0, math.log2(max_size + 1))))))


def gpu_gangs(
    n_pods_total: int,
    *,
    seed: int = 0,
    namespace: str = "train",
    max_gang_size: int = 32,
    gpus_per_pod: Sequence[int] = (1, 2, 4, 8),
    same_rack_fraction: float = 0.5,
    selector_fraction: float = 0.2,
    gpu_types: Sequence[str] = ("H100", "A100"),
    priorities: Mapping[str, int] | None = None,
    topology_key: str = RACK,
) -> list[Obj]:
    """Pending GPU gangs totalling exactly ``n_pods_total`` pods (the last gang is cut to fit).

    Each gang has k identical pods (k log-uniform in 1..``max_gang_size``), each asking for r GPUs
    (r uniform in ``gpus_per_pod``); it is all-or-nothing (``minCount = k``). About
    ``same_rack_fraction`` of the multi-pod gangs must sit in one rack (``topology_key``), about
    ``selector_fraction`` of gangs select a GPU type by ``nodeSelector``. Priorities come from
    ``priorities`` (default :data:`GPU_GANG_PRIORITIES`), the same on the PodGroup and its pods.
    Gang ``g`` is created at second ``g``, its pods right after, so queue order is gang order.
    Returns the PriorityClasses, the PodGroups, then the pods.
    """
    rng = seeded_rng(seed, _STREAM_GPU_GANGS)
    classes = dict(priorities or GPU_GANG_PRIORITIES)
    class_names = sorted(classes)
    sizes: list[int] = []
    remaining = n_pods_total
    while remaining > 0:
        sizes.append(min(_gang_size(rng, max_gang_size), remaining))
        remaining -= sizes[-1]
    width = len(str(max(len(sizes) - 1, 0)))
    groups: list[Obj] = []
    pods: list[Obj] = []
    for g, k in enumerate(sizes):
        name = f"gang-{g:0{width}d}"
        r = int(gpus_per_pod[int(rng.integers(0, len(gpus_per_pod)))])
        same_rack = k > 1 and rng.random() < same_rack_fraction
        selector = (
            {GPU_PRODUCT: str(gpu_types[int(rng.integers(0, len(gpu_types)))])}
            if rng.random() < selector_fraction
            else None
        )
        pc = class_names[int(rng.integers(0, len(class_names)))]
        groups.append(
            pod_group_object(
                name,
                namespace=namespace,
                min_count=k,
                priority=classes[pc],
                priority_class=pc,
                topology_key=topology_key if same_rack else None,
                created=2 * g,
            )
        )
        for j in range(k):
            pods.append(
                pod_object(
                    f"{name}-{j}",
                    namespace=namespace,
                    group=name,
                    requests=_gpu_pod_requests(r),
                    priority=classes[pc],
                    priority_class=pc,
                    labels={"job": name},
                    node_selector=selector,
                    created=2 * g + 1,
                )
            )
    return [priority_class_object(n, classes[n]) for n in class_names] + groups + pods


def gpu_benchmark(
    nodes: int,
    pending_pods: int,
    *,
    profile: Literal["mixed", "busy"] = "mixed",
    seed: int = 0,
    **gang_options: Any,
) -> list[Obj]:
    """One cell of the exact engine's scaling grid: :func:`gpu_cluster` plus :func:`gpu_gangs`.

    The grid of docs/benchmarks.md is nodes in {100, 1000, 5000} x pending pods in
    {64, 512, 2048} x profile in {mixed, busy}.
    """
    return gpu_cluster(nodes, profile=profile, seed=seed) + gpu_gangs(
        pending_pods, seed=seed, **gang_options
    )


__all__ = [
    "CPU_PER_GPU",
    "GPU_GANG_PRIORITIES",
    "MEMORY_PER_GPU_GI",
    "RUNNING_PRIORITY",
    "RUNNING_PRIORITY_CLASS",
    "UTILISATION_PROFILES",
    "gpu_benchmark",
    "gpu_cluster",
    "gpu_gangs",
]
