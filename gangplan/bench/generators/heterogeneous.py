"""Random heterogeneous GPU clusters with heterogeneous gangs, some held to a rack (issue 37).

The shape where proofs are hard for the exact engine: node types that differ in every resource
(so no single "GPU unit" packs them), gangs whose pods differ (a launcher beside GPU workers, CPU
workers beside GPU ones), all-or-nothing, a share of them confined to one rack, three priorities.

* **Nodes**: ``nodes`` nodes in racks of :data:`NODES_PER_RACK`, zones of :data:`RACKS_PER_ZONE`
  racks; each rack one type of :data:`NODE_TYPES` (8 x H100 / 192 cores / 2 TiB, 8 x A100 / 128 /
  1 TiB, 4 x L40S / 64 / 512 GiB, CPU-only 96 / 768 GiB), drawn with weights 3 : 3 : 2 : 1 and
  labelled with ``nvidia.com/gpu.product``.
* **Load**: each node runs one bound pod using Binomial(GPUs, U) of its GPUs and an independent
  uniform share (up to ``utilisation``) of its CPU and memory, at a priority above every pending
  gang (what is measured is placement, not preemption).
* **Gangs**: ``gangs`` PodGroups of k pods (k log-uniform in 1..``max_gang_size``); a gang is a
  launcher (2-8 cores, no GPU) plus GPU workers of g GPUs (1, 2, 4 or 8) with 6-24 cores and
  32-192 GiB per GPU, or, one time in six, CPU workers only (4-32 cores); ``minCount`` = k; about
  ``rack_fraction`` of the multi-pod gangs are held to one rack
  (``schedulingConstraints.topology`` on the rack label), about a fifth select a GPU product by
  ``nodeSelector``. Priorities 100 / 50 / 10. Gang ``g`` is created at second ``2g``.

Seeded (:func:`..builders.seeded_rng`, stream :data:`STREAM`): the same arguments give the same
objects in the same order.
"""

from __future__ import annotations

import math

import numpy as np

from gangplan.bench.generators.builders import (
    Obj,
    node_object,
    pod_group_object,
    pod_object,
    priority_class_object,
    seeded_rng,
)
from gangplan.models.well_known import GPU, GPU_PRODUCT, HOSTNAME, RACK, ZONE

STREAM = 37
NODES_PER_RACK, RACKS_PER_ZONE = 8, 8
PRODUCT = GPU_PRODUCT
NODE_TYPES: dict[str, tuple[int, int, int, int]] = {
    # name: (gpus, cores, memory GiB, weight)
    "H100": (8, 192, 2048, 3),
    "A100": (8, 128, 1024, 3),
    "L40S": (4, 64, 512, 2),
    "cpu": (0, 96, 768, 1),
}
PRIORITIES = {"high": 100, "medium": 50, "low": 10}
RUNNING_CLASS, RUNNING_PRIORITY = "running", 1000


def heterogeneous_cluster(
    nodes: int = 300,
    gangs: int = 120,
    *,
    seed: int = 0,
    utilisation: float = 0.5,
    max_gang_size: int = 16,
    rack_fraction: float = 0.4,
) -> list[Obj]:
    """The objects of one instance (module docstring): PriorityClasses, nodes, bound pods,
    PodGroups, pending pods."""
    rng = seeded_rng(seed, STREAM)
    types = list(NODE_TYPES)
    weights = np.array([NODE_TYPES[t][3] for t in types], dtype=float)
    n_racks = -(-nodes // NODES_PER_RACK)
    rack_type = [
        types[int(k)] for k in rng.choice(len(types), size=n_racks, p=weights / weights.sum())
    ]
    out: list[Obj] = [priority_class_object(RUNNING_CLASS, RUNNING_PRIORITY)]
    out += [priority_class_object(n, v) for n, v in sorted(PRIORITIES.items())]
    bound: list[Obj] = []
    width = len(str(max(nodes - 1, 0)))
    for i in range(nodes):
        rack = i // NODES_PER_RACK
        kind = rack_type[rack]
        gpus, cores, mem, _ = NODE_TYPES[kind]
        name = f"node-{i:0{width}d}"
        labels = {
            HOSTNAME: name,
            RACK: f"rack-{rack:03d}",
            ZONE: f"zone-{rack // RACKS_PER_ZONE:02d}",
        }
        if gpus:
            labels[PRODUCT] = kind
        out.append(node_object(name, cpu=cores, memory=f"{mem}Gi", gpus=gpus, labels=labels))
        used_gpus = int(rng.binomial(gpus, utilisation)) if gpus else 0
        cpu_used = int(cores * rng.uniform(0, utilisation))
        mem_used = int(mem * rng.uniform(0, utilisation))
        if used_gpus or cpu_used:
            requests = {"cpu": str(max(1, cpu_used)), "memory": f"{max(1, mem_used)}Gi"}
            if used_gpus:
                requests[GPU] = str(used_gpus)
            bound.append(
                pod_object(
                    f"run-{name}",
                    namespace="running",
                    node_name=name,
                    requests=requests,
                    priority=RUNNING_PRIORITY,
                    priority_class=RUNNING_CLASS,
                    created=0,
                )
            )
    out += bound
    groups: list[Obj] = []
    pods: list[Obj] = []
    gw = len(str(max(gangs - 1, 0)))
    classes = sorted(PRIORITIES)
    for g in range(gangs):
        name = f"gang-{g:0{gw}d}"
        k = int(
            min(
                max_gang_size, max(1, math.floor(2 ** rng.uniform(0, math.log2(max_gang_size + 1))))
            )
        )
        pc = classes[int(rng.integers(0, len(classes)))]
        cpu_only = rng.random() < 1 / 6
        rack_held = k > 1 and rng.random() < rack_fraction
        selector = None
        if not cpu_only and rng.random() < 0.2:
            selector = {PRODUCT: str(rng.choice(["H100", "A100", "L40S"]))}
        groups.append(
            pod_group_object(
                name,
                namespace="train",
                min_count=k,
                priority=PRIORITIES[pc],
                priority_class=pc,
                topology_key=RACK if rack_held else None,
                created=2 * g,
            )
        )
        gpus = int(rng.choice([1, 2, 4, 8])) if not cpu_only else 0
        if selector and selector[PRODUCT] == "L40S":
            gpus = min(gpus, 4)
        per_gpu_cpu, per_gpu_mem = int(rng.integers(6, 25)), int(rng.integers(32, 193))
        cpu_worker = int(rng.integers(4, 33))
        for j in range(k):
            if j == 0 and k > 1 and not cpu_only:  # the launcher
                requests = {
                    "cpu": str(int(rng.integers(2, 9))),
                    "memory": f"{int(rng.integers(8, 65))}Gi",
                }
            elif cpu_only:
                requests = {"cpu": str(cpu_worker), "memory": f"{4 * cpu_worker}Gi"}
            else:
                requests = {
                    "cpu": str(gpus * per_gpu_cpu),
                    "memory": f"{gpus * per_gpu_mem}Gi",
                    GPU: str(gpus),
                }
            pods.append(
                pod_object(
                    f"{name}-{j}",
                    namespace="train",
                    group=name,
                    requests=requests,
                    priority=PRIORITIES[pc],
                    priority_class=pc,
                    labels={"job": name},
                    node_selector=selector if GPU in requests else None,
                    created=2 * g + 1,
                )
            )
    return out + groups + pods


__all__ = ["heterogeneous_cluster"]
