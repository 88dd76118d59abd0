"""Realistic topology-labelled clusters with existing load and pending topology-constrained gangs.

Every generator returns Kubernetes object dicts in snapshot order (a Kueue ``Topology`` listing
the levels, PriorityClass, nodes, bound pods, PodGroups, pending pods), usable with
:func:`gangplan.bench.generators.builders.to_cluster` and :func:`gangplan.io.writer.write_snapshot`.
Random draws come from ``numpy.random.default_rng([seed, stream])``: the same arguments give the
same objects, byte for byte once written. The shapes follow the vendors' published topology
(NVIDIA GB200 NVL72 and DGX SuperPOD reference architectures, GKE's topology labels):

* :func:`gb200_nvl72`: a GB200 NVL72 rack is one NVLink domain of 18 compute trays with
  4 GPUs each; a DGX GB200 scalable unit (SU) is 8 racks. Node labels follow GKE A4X, where the
  sub-block is the NVLink domain: ``cloud.google.com/gce-topology-block`` (the SU),
  ``cloud.google.com/gce-topology-subblock`` (the rack), ``cloud.google.com/gce-topology-host``,
  plus ``topology.kubernetes.io/rack`` (the rack again) and ``nvidia.com/gpu.clique`` (the NVLink
  partition the DRA driver reports, ``<domain>.<clique id>``; ``cliques_per_rack`` > 1 splits a
  rack's domain into partitions). Topology levels: block, sub-block, clique, hostname. Node size
  (140 cpu, 884Gi) is an assumption modelled on an A4X VM, not a sourced fact.
* :func:`dgx_h100_superpod`: 8-GPU nodes (the node is its own NVLink domain), scalable
  units of 32 nodes on one rail-optimised leaf group, 4 SUs behind one spine group (the fully
  tested build). Labels use NVIDIA Topograph v0.1 names: ``network.topology.nvidia.com/block``
  (the SU leaf group) and ``network.topology.nvidia.com/spine``. Levels: spine, block, hostname.
  Node size (224 cpu = 2 x 56 cores x 2 threads, 2000Gi) is an assumption.
* :func:`scheduler_perf_tas` (upstream ``test/integration/scheduler_perf/podgroup/tas``,
  ``templates/node.yaml`` @e423d6d5): default nodes (4 cpu, 32Gi, 110 pods), zones of 100 or
  1,000 nodes, racks of 100, gangs of identical 100m / 100Mi pods in one rack each.

Existing load: ``utilisation`` of the accelerator (cpu for the scheduler_perf shape) is taken by
bound pods in namespace ``running``. Nodes are visited in a seeded random order; each gets a whole
node's worth (70 %) or a random part of it (30 %) until the target is met, so some nodes are full,
some fragmented and the rest idle. A pod's cpu and memory are the node's share per GPU.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gangplan.bench.generators.builders import (
    Obj,
    node_object,
    pod_group_object,
    pod_object,
    priority_class_object,
    seeded_rng,
    topology_object,
)
from gangplan.models.well_known import (
    GCE_BLOCK,
    GCE_HOST,
    GCE_SUBBLOCK,
    GPU,
    GPU_CLIQUE,
    GPU_PRODUCT,
    HOSTNAME,
    RACK,
    TOPOGRAPH_BLOCK,
    TOPOGRAPH_SPINE,
    ZONE,
)

NVL72_NODES = 18
NVL72_GPUS_PER_NODE = 4
GB200_SU_RACKS = 8
DGX_GPUS_PER_NODE = 8
DGX_SU_NODES = 32
DGX_SUS_PER_SPINE = 4
PERF_NODES_PER_RACK = 100

RUNNING_NAMESPACE = "running"
RUNNING_PRIORITY_CLASS = "running-jobs"
RUNNING_PRIORITY = 1000
WHOLE_NODE_SHARE = 0.7
"""Fraction of load draws that take a whole node (the rest take a random part of one)."""

_STREAM_LOAD, _STREAM_GANGS = 11, 12


@dataclass(frozen=True)
class NodeSpec:
    """The per-node capacity of a shape: ``units`` is what utilisation counts (GPUs, or cpu cores)."""

    cpu: int
    memory_gi: int
    gpus: int

    @property
    def units(self) -> int:
        return self.gpus or self.cpu

    def share(self, units: int) -> dict[str, str]:
        """Requests of a pod holding ``units`` of this node (cpu and memory pro rata)."""
        if self.gpus:
            return {
                "cpu": str(self.cpu * units // self.gpus),
                "memory": f"{self.memory_gi * units // self.gpus}Gi",
                GPU: str(units),
            }
        return {"cpu": str(units), "memory": f"{self.memory_gi * units // self.cpu}Gi"}


GB200_NODE = NodeSpec(cpu=140, memory_gi=884, gpus=NVL72_GPUS_PER_NODE)
DGX_H100_NODE = NodeSpec(cpu=224, memory_gi=2000, gpus=DGX_GPUS_PER_NODE)
PERF_NODE = NodeSpec(cpu=4, memory_gi=32, gpus=0)


# ---- load ---------------------------------------------------------------------------------------
def used_units(n: int, units_per_node: int, utilisation: float, seed: int) -> list[int]:
    """Units in use per node, summing to ``round(utilisation * n * units_per_node)`` exactly.

    >>> used_units(4, 8, 0.5, seed=1)
    [8, 5, 3, 0]
    >>> sum(used_units(100, 4, 0.37, seed=3))
    148
    """
    if not 0.0 <= utilisation <= 1.0:
        raise ValueError(f"utilisation must be within [0, 1], got {utilisation}")
    rng = seeded_rng(seed, _STREAM_LOAD)
    target = round(utilisation * n * units_per_node)
    used = [0] * n
    order = rng.permutation(n).tolist()
    while target > 0:
        progressed = False
        for i in order:
            room = units_per_node - used[i]
            if room == 0 or target == 0:
                continue
            take = room if rng.random() < WHOLE_NODE_SHARE else int(rng.integers(1, room + 1))
            take = min(take, target)
            used[i] += take
            target -= take
            progressed = True
        if not progressed:
            break
    return used


def _parts(units: int) -> list[int]:
    """Split into pods of powers of two, largest first (how jobs usually fill a node)."""
    return [1 << b for b in range(units.bit_length() - 1, -1, -1) if units & (1 << b)]


def _load_pods(names: Sequence[str], used: Sequence[int], spec: NodeSpec) -> list[Obj]:
    pods = []
    for name, units in zip(names, used, strict=True):
        for j, u in enumerate(_parts(units)):
            pods.append(
                pod_object(
                    f"run-{name}-{j}",
                    namespace=RUNNING_NAMESPACE,
                    node_name=name,
                    requests=spec.share(u),
                    priority=RUNNING_PRIORITY,
                    priority_class=RUNNING_PRIORITY_CLASS,
                    labels={"app": "running"},
                    created=0,
                )
            )
    return pods


# ---- gangs --------------------------------------------------------------------------------------
def topology_gangs(
    gangs: int,
    sizes: Sequence[int],
    requests: dict[str, str],
    *,
    topology_key: str | None,
    seed: int,
    namespace: str = "train",
    first_created: int = 10,
) -> list[Obj]:
    """``gangs`` all-or-nothing PodGroups (size drawn uniformly from ``sizes``) of identical pods
    with ``requests``, each constrained to one domain of ``topology_key``; gang ``g`` is created
    at second ``first_created + 2g`` so queue order is gang order. PodGroups first, then pods."""
    rng = seeded_rng(seed, _STREAM_GANGS)
    width = len(str(max(gangs - 1, 0)))
    groups: list[Obj] = []
    pods: list[Obj] = []
    for g in range(gangs):
        name = f"gang-{g:0{width}d}"
        k = int(sizes[int(rng.integers(0, len(sizes)))])
        groups.append(
            pod_group_object(
                name,
                namespace=namespace,
                min_count=k,
                topology_key=topology_key,
                created=first_created + 2 * g,
            )
        )
        for j in range(k):
            pods.append(
                pod_object(
                    f"{name}-{j}",
                    namespace=namespace,
                    group=name,
                    requests=requests,
                    labels={"job": name},
                    created=first_created + 2 * g + 1,
                )
            )
    return groups + pods


# ---- shapes -------------------------------------------------------------------------------------
def gb200_nvl72(
    *,
    racks: int = GB200_SU_RACKS,
    racks_per_block: int = GB200_SU_RACKS,
    cliques_per_rack: int = 1,
    utilisation: float = 0.5,
    gangs: int = 8,
    gang_sizes: Sequence[int] = (2, 4, 9, 18),
    gpus_per_pod: int = NVL72_GPUS_PER_NODE,
    topology_key: str | None = GPU_CLIQUE,
    seed: int = 0,
) -> list[Obj]:
    """GB200 NVL72 racks (18 nodes x 4 GPUs, one NVLink domain each) grouped into SUs (blocks).

    Pending gangs: pods of ``gpus_per_pod`` GPUs (a whole tray by default), ``gang_sizes`` pods
    each, constrained to one ``topology_key`` domain (the NVLink clique by default)."""
    if NVL72_NODES % cliques_per_rack:
        raise ValueError(f"cliques_per_rack must divide {NVL72_NODES}, got {cliques_per_rack}")
    names, labels = [], []
    per_clique = NVL72_NODES // cliques_per_rack
    rwidth = len(str(max(racks - 1, 0)))
    for r in range(racks):
        block, rack = f"su-{r // racks_per_block}", f"nvl72-{r:0{rwidth}d}"
        for t in range(NVL72_NODES):
            name = f"{rack}-tray-{t:02d}"
            names.append(name)
            labels.append(
                {
                    HOSTNAME: name,
                    GCE_BLOCK: block,
                    GCE_SUBBLOCK: rack,
                    GCE_HOST: f"host-{rack}-{t:02d}",
                    RACK: rack,
                    GPU_CLIQUE: f"{rack}.{t // per_clique}",
                    GPU_PRODUCT: "GB200",
                }
            )
    levels = (GCE_BLOCK, GCE_SUBBLOCK, GPU_CLIQUE, HOSTNAME)
    requests = GB200_NODE.share(gpus_per_pod)
    return _assemble(
        "gb200-nvl72", levels, names, labels, GB200_NODE, utilisation, seed
    ) + topology_gangs(gangs, gang_sizes, requests, topology_key=topology_key, seed=seed)


def dgx_h100_superpod(
    *,
    nodes: int = DGX_SU_NODES * DGX_SUS_PER_SPINE,
    su_nodes: int = DGX_SU_NODES,
    sus_per_spine: int = DGX_SUS_PER_SPINE,
    utilisation: float = 0.5,
    gangs: int = 8,
    gang_sizes: Sequence[int] = (2, 4, 8, 16, 32),
    gpus_per_pod: int = DGX_GPUS_PER_NODE,
    topology_key: str | None = TOPOGRAPH_BLOCK,
    seed: int = 0,
) -> list[Obj]:
    """DGX H100 SuperPOD: 8-GPU nodes in 32-node scalable units, 4 SUs per spine group.

    Pending gangs: pods of ``gpus_per_pod`` GPUs (a whole node by default), constrained to one SU
    (``network.topology.nvidia.com/block``) by default."""
    width = len(str(max(nodes - 1, 0)))
    names, labels = [], []
    for i in range(nodes):
        su = i // su_nodes
        name = f"dgx-{i:0{width}d}"
        names.append(name)
        labels.append(
            {
                HOSTNAME: name,
                TOPOGRAPH_SPINE: f"spine-{su // sus_per_spine}",
                TOPOGRAPH_BLOCK: f"su-{su}",
                GPU_PRODUCT: "H100",
            }
        )
    levels = (TOPOGRAPH_SPINE, TOPOGRAPH_BLOCK, HOSTNAME)
    requests = DGX_H100_NODE.share(gpus_per_pod)
    return _assemble(
        "dgx-h100-superpod", levels, names, labels, DGX_H100_NODE, utilisation, seed
    ) + topology_gangs(gangs, gang_sizes, requests, topology_key=topology_key, seed=seed)


def scheduler_perf_tas(
    *,
    nodes: int = 5000,
    nodes_per_zone: int = 1000,
    nodes_per_rack: int = PERF_NODES_PER_RACK,
    utilisation: float = 0.0,
    gangs: int = 750,
    pods_per_gang: int = 4,
    topology_key: str | None = RACK,
    seed: int = 0,
) -> list[Obj]:
    """The upstream TAS benchmark shape: default nodes, zones of ``nodes_per_zone`` (100 or
    1,000), racks of ``nodes_per_rack``, gangs of ``pods_per_gang`` 100m / 100Mi pods in one rack.
    ``utilisation`` of the cpu is taken by bound 1-core pods (upstream starts empty: 0)."""
    if nodes_per_zone % nodes_per_rack:
        raise ValueError(
            f"racks must nest in zones: {nodes_per_rack} does not divide {nodes_per_zone}"
        )
    width = len(str(max(nodes - 1, 0)))
    names = [f"node-{i:0{width}d}" for i in range(nodes)]
    labels = [
        {HOSTNAME: n, ZONE: f"zone-{i // nodes_per_zone}", RACK: f"rack-{i // nodes_per_rack}"}
        for i, n in enumerate(names)
    ]
    levels = (ZONE, RACK, HOSTNAME)
    return _assemble(
        "scheduler-perf-tas", levels, names, labels, PERF_NODE, utilisation, seed
    ) + topology_gangs(
        gangs,
        (pods_per_gang,),
        {"cpu": "100m", "memory": "100Mi"},
        topology_key=topology_key,
        seed=seed,
        namespace="default",
    )


def _assemble(
    name: str,
    levels: tuple[str, ...],
    names: list[str],
    labels: list[dict[str, str]],
    spec: NodeSpec,
    utilisation: float,
    seed: int,
) -> list[Obj]:
    out: list[Obj] = [
        topology_object(name, levels),
        priority_class_object(RUNNING_PRIORITY_CLASS, RUNNING_PRIORITY),
    ]
    for n, lab in zip(names, labels, strict=True):
        out.append(
            node_object(n, cpu=spec.cpu, memory=f"{spec.memory_gi}Gi", gpus=spec.gpus, labels=lab)
        )
    used = used_units(len(names), spec.units, utilisation, seed)
    return out + _load_pods(names, used, spec)


# ---- by name (``gangplan generate``) --------------------------------------------------------------
SHAPES: dict[str, str] = {
    "gb200-nvl72": "GB200 NVL72 racks (18 nodes x 4 GPUs per NVLink domain), 8 racks per SU block",
    "dgx-h100-superpod": "DGX H100 SuperPOD: 8-GPU nodes, 32-node scalable units, 4 SUs per spine",
    "scheduler-perf-tas": "upstream scheduler_perf TAS: 4-cpu nodes, zones of 1,000 (or 100), racks of 100",
}

DEFAULT_NODES = 144
DEFAULT_UTILISATION = 0.4
DEFAULT_GANGS = 32
"""Defaults of ``gangplan generate``, chosen so a default draw shows the point: with 32 gangs of
mixed sizes on 144 nodes at 40 % load the free GPUs are oversubscribed and greedy usually admits
fewer gangs than the optimum (measured over seeds 0-11 with default `gangplan diff`: gb200-nvl72
11 of 12, dgx-h100-superpod 12 of 12 greedy-suboptimal; docs/benchmarks.md has the smaller
draws that showed it less often).
scheduler-perf-tas is upstream's throughput benchmark, identical 4-pod gangs of 100m pods: greedy
matches the optimum there at any load (0 of 12), by design of that benchmark."""


def generate_shape(
    shape: str, *, nodes: int, utilisation: float, seed: int, gangs: int, **options: Any
) -> list[Obj]:
    """One of :data:`SHAPES` with about ``nodes`` nodes (GB200: rounded up to whole racks).

    ``options`` go to the shape's generator (e.g. ``gang_sizes``, ``topology_key``)."""
    if shape == "gb200-nvl72":
        return gb200_nvl72(
            racks=max(1, math.ceil(nodes / NVL72_NODES)),
            utilisation=utilisation,
            seed=seed,
            gangs=gangs,
            **options,
        )
    if shape == "dgx-h100-superpod":
        return dgx_h100_superpod(
            nodes=nodes, utilisation=utilisation, seed=seed, gangs=gangs, **options
        )
    if shape == "scheduler-perf-tas":
        options.setdefault("nodes_per_zone", 1000 if nodes >= 1000 else PERF_NODES_PER_RACK)
        return scheduler_perf_tas(
            nodes=nodes, utilisation=utilisation, seed=seed, gangs=gangs, **options
        )
    raise ValueError(f"unknown shape {shape!r}; use one of {', '.join(SHAPES)}")
