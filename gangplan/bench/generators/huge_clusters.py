"""Issue 27 item 5's shape: 10,000 GPU nodes, 100,000 bound pods, 5,000 pending pods in gangs.

:func:`huge_cluster` builds one seeded instance in either of two variants, with the node labels
and topology levels of :mod:`gangplan.bench.generators.topology_shapes`:

* ``gb200``: GB200 NVL72 racks of 18 nodes x 4 GPUs (one NVLink domain each; the rack is the
  GKE A4X sub-block and ``topology.kubernetes.io/rack``, the clique ``nvidia.com/gpu.clique``),
  8 racks per scalable unit (``cloud.google.com/gce-topology-block``). Whole racks: 10,000 nodes
  round up to 556 racks, 10,008 nodes.
* ``dgx``: DGX H100 8-GPU nodes, 4 per rack (``topology.kubernetes.io/rack``; the SuperPOD
  reference architecture's power budget gives 4 DGX per rack), 32 nodes per scalable unit
  (``network.topology.nvidia.com/block``), 4 SUs per spine.

Bound load (namespace ``running``, priority 1000): :func:`~gangplan.bench.generators.topology_shapes.used_units`
takes ``utilisation`` of the GPUs (whole nodes or a random part, seeded), split into pods of
powers of two (4+2+1 ...), each with ``gpu_share`` of the node's cpu and memory per GPU; the
rest of ``bound_pods`` are CPU-only pods of the kind every GPU node runs (device plugin, DCGM
exporter, node exporter, CNI and log agents ...: 100m-1 cpu, 128Mi-1Gi), spread evenly over the
nodes (a seeded remainder gets one more). Bound pods are as slim as the essentials of a
``kubectl get -o yaml`` dump allow: name, namespace, uid, labels, nodeName, priority, one
container (name, image, requests; extended resources also as limits), phase Running.

Pending (namespace ``train``): gangs of 2-``max_gang_size`` pods (log-uniform: many small, a few
large), pods of 1, 2, 4 (or 8 on DGX) GPUs, each gang an all-or-nothing PodGroup whose KEP-5732
``schedulingConstraints.topology`` requires one rack (share ``rack_fraction``) or one block (the
rest); a rack gang's pod size is halved until the gang fits a rack's GPUs. ``single_fraction`` of
``pending_pods`` are single pods without a PodGroup. Gangs are created 2 s apart, so queue order
is creation order; the last gang is cut to what is left of ``pending_pods`` (at least 2 pods).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gangplan.bench.generators.builders import (
    Obj,
    pod_group_object,
    priority_class_object,
    seeded_rng,
    timestamp,
    topology_object,
)
from gangplan.bench.generators.topology_shapes import (
    DGX_H100_NODE,
    DGX_SU_NODES,
    DGX_SUS_PER_SPINE,
    GB200_NODE,
    GB200_SU_RACKS,
    NVL72_NODES,
    RUNNING_NAMESPACE,
    RUNNING_PRIORITY,
    RUNNING_PRIORITY_CLASS,
    NodeSpec,
    used_units,
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
)

DGX_RACK_NODES = 4
VARIANTS = ("gb200", "dgx")
IMAGE = "registry.k8s.io/pause:3.10"
_STREAM_DAEMONS, _STREAM_PENDING = 21, 22

DAEMONS: tuple[tuple[str, str, str], ...] = (
    ("nvidia-device-plugin", "100m", "128Mi"),
    ("dcgm-exporter", "200m", "512Mi"),
    ("node-exporter", "100m", "128Mi"),
    ("kube-proxy", "100m", "256Mi"),
    ("cni-agent", "250m", "512Mi"),
    ("log-agent", "200m", "512Mi"),
    ("gpu-feature-discovery", "100m", "128Mi"),
    ("csi-node", "100m", "256Mi"),
    ("sidecar", "500m", "1Gi"),
)
"""CPU-only bound pods, cycled per node: (name, cpu, memory)."""


@dataclass(frozen=True)
class _Variant:
    spec: NodeSpec
    levels: tuple[str, ...]
    rack_key: str
    block_key: str
    rack_nodes: int
    block_nodes: int
    pod_gpus: tuple[int, ...]


_VARIANTS = {
    "gb200": _Variant(
        GB200_NODE,
        (GCE_BLOCK, GCE_SUBBLOCK, GPU_CLIQUE, HOSTNAME),
        RACK,
        GCE_BLOCK,
        NVL72_NODES,
        NVL72_NODES * GB200_SU_RACKS,
        (1, 2, 4),
    ),
    "dgx": _Variant(
        DGX_H100_NODE,
        (TOPOGRAPH_SPINE, TOPOGRAPH_BLOCK, RACK, HOSTNAME),
        RACK,
        TOPOGRAPH_BLOCK,
        DGX_RACK_NODES,
        DGX_SU_NODES,
        (1, 2, 4, 8),
    ),
}


def _uid(kind: int, i: int) -> str:
    """A fixed RFC 4122-shaped uid per (kind, index), so dumps are byte-identical per seed."""
    return f"{kind:08x}-{i >> 16 & 0xFFFF:04x}-4{i >> 4 & 0xFFF:03x}-8{i & 0xFFF:03x}-{i * 2654435761 % 2**48:012x}"


def _node(name: str, spec: NodeSpec, labels: dict[str, str]) -> Obj:
    alloc = {
        "cpu": str(spec.cpu),
        "memory": f"{spec.memory_gi}Gi",
        "pods": "110",
        GPU: str(spec.gpus),
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"capacity": dict(alloc), "allocatable": alloc},
    }


def _bound(name: str, uid: str, node: str, app: str, requests: dict[str, str]) -> Obj:
    resources: dict[str, Any] = {"requests": requests}
    if GPU in requests:
        resources["limits"] = {GPU: requests[GPU]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": RUNNING_NAMESPACE,
            "uid": uid,
            "labels": {"app": app},
        },
        "spec": {
            "nodeName": node,
            "priority": RUNNING_PRIORITY,
            "containers": [{"name": "main", "image": IMAGE, "resources": resources}],
        },
        "status": {"phase": "Running"},
    }


def _pending(
    name: str, uid: str, job: str, group: str | None, requests: dict[str, str], created: int
) -> Obj:
    spec: dict[str, Any] = {}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    # A fresh dict per pod: shared ones would be written as YAML anchors, which no kubectl dump has.
    spec["containers"] = [
        {
            "name": "main",
            "image": IMAGE,
            "resources": {"requests": dict(requests), "limits": {GPU: requests[GPU]}},
        }
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "train",
            "uid": uid,
            "labels": {"job": job},
            "creationTimestamp": timestamp(created),
        },
        "spec": spec,
        "status": {"phase": "Pending"},
    }


def _nodes(variant: str, nodes: int) -> tuple[list[str], list[dict[str, str]]]:
    v = _VARIANTS[variant]
    names, labels = [], []
    if variant == "gb200":
        racks = max(1, math.ceil(nodes / NVL72_NODES))
        for r in range(racks):
            rack, block = f"nvl72-{r:04d}", f"su-{r // GB200_SU_RACKS:03d}"
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
                        GPU_CLIQUE: f"{rack}.0",
                        GPU_PRODUCT: "GB200",
                    }
                )
    else:
        for i in range(nodes):
            su = i // v.block_nodes
            name = f"dgx-{i:05d}"
            names.append(name)
            labels.append(
                {
                    HOSTNAME: name,
                    TOPOGRAPH_SPINE: f"spine-{su // DGX_SUS_PER_SPINE:02d}",
                    TOPOGRAPH_BLOCK: f"su-{su:03d}",
                    RACK: f"rack-{i // DGX_RACK_NODES:04d}",
                    GPU_PRODUCT: "H100",
                }
            )
    return names, labels


def _gpu_requests(spec: NodeSpec, gpus: int, share: float) -> dict[str, str]:
    return {
        "cpu": f"{int(spec.cpu * 1000 * share) * gpus // spec.gpus}m",
        "memory": f"{int(spec.memory_gi * 1024 * share) * gpus // spec.gpus}Mi",
        GPU: str(gpus),
    }


def _parts(units: int) -> list[int]:
    return [1 << b for b in range(units.bit_length() - 1, -1, -1) if units & (1 << b)]


def huge_cluster(
    *,
    seed: int,
    variant: str = "gb200",
    nodes: int = 10_000,
    bound_pods: int = 100_000,
    pending_pods: int = 5_000,
    utilisation: float = 0.8,
    gpu_share: float = 0.85,
    max_gang_size: int = 32,
    rack_fraction: float = 0.5,
    single_fraction: float = 0.1,
) -> list[Obj]:
    """The objects of one instance (module docstring): Topology, PriorityClass, nodes, bound pods,
    PodGroups, pending pods."""
    if variant not in _VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; use one of {', '.join(VARIANTS)}")
    if max_gang_size < 2:
        raise ValueError(f"max_gang_size must be at least 2, got {max_gang_size}")
    v = _VARIANTS[variant]
    spec = v.spec
    names, labels = _nodes(variant, nodes)
    out: list[Obj] = [
        topology_object(f"huge-{variant}", v.levels),
        priority_class_object(RUNNING_PRIORITY_CLASS, RUNNING_PRIORITY),
    ]
    out += [_node(n, spec, lab) for n, lab in zip(names, labels, strict=True)]

    used = used_units(len(names), spec.gpus, utilisation, seed)
    gpu_pods = [(n, u) for n, units in zip(names, used, strict=True) for u in _parts(units)]
    daemons = max(0, bound_pods - len(gpu_pods))
    base, extra = divmod(daemons, len(names))
    rng = seeded_rng(seed, _STREAM_DAEMONS)
    one_more = set(rng.choice(len(names), size=extra, replace=False).tolist()) if extra else set()
    k = 0
    bound: list[Obj] = []
    for n, u in gpu_pods:
        bound.append(
            _bound(f"run-{n}-g{k}", _uid(1, k), n, "training", _gpu_requests(spec, u, gpu_share))
        )
        k += 1
    for i, n in enumerate(names):
        for d in range(base + (i in one_more)):
            app, cpu, mem = DAEMONS[d % len(DAEMONS)]
            bound.append(
                _bound(
                    f"{app}-{n}-{d // len(DAEMONS)}",
                    _uid(1, k),
                    n,
                    app,
                    {"cpu": cpu, "memory": mem},
                )
            )
            k += 1
    out += bound

    rng = seeded_rng(seed, _STREAM_PENDING)
    rack_gpus = v.rack_nodes * spec.gpus
    singles = int(round(pending_pods * single_fraction))
    in_gangs = pending_pods - singles
    groups: list[Obj] = []
    pods: list[Obj] = []
    g = placed = 0
    while placed < in_gangs:
        size = int(
            min(
                max_gang_size, max(2, math.floor(2 ** rng.uniform(1, math.log2(max_gang_size + 1))))
            )
        )
        r = int(v.pod_gpus[int(rng.integers(0, len(v.pod_gpus)))])
        in_rack = bool(rng.random() < rack_fraction)
        left = in_gangs - placed
        size = left if left - size < 2 else size
        while in_rack and size * r > rack_gpus and r > 1:
            r //= 2
        if in_rack and size * r > rack_gpus:
            in_rack = False
        name = f"gang-{g:04d}"
        groups.append(
            pod_group_object(
                name,
                namespace="train",
                min_count=size,
                topology_key=v.rack_key if in_rack else v.block_key,
                created=2 * g,
            )
        )
        req = _gpu_requests(spec, r, gpu_share)
        pods += [
            _pending(f"{name}-{j}", _uid(2, placed + j), name, name, req, 2 * g + 1)
            for j in range(size)
        ]
        placed += size
        g += 1
    for s in range(singles):
        r = int(v.pod_gpus[int(rng.integers(0, len(v.pod_gpus)))])
        pods.append(
            _pending(
                f"single-{s:04d}",
                _uid(3, s),
                f"single-{s:04d}",
                None,
                _gpu_requests(spec, r, gpu_share),
                2 * (g + s) + 1,
            )
        )
    return out + groups + pods


__all__ = ["DAEMONS", "VARIANTS", "huge_cluster"]
