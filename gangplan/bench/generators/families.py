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

This module holds the generated families (``gpu``, ``scheduler-perf``, ``mixed``, ``huge``);
:mod:`gangplan.bench.generators.trace_families` the ones built on real traces, and
:mod:`gangplan.bench.generators.families_common` the registry and the pieces every family
shares. Importing this module registers every family; the registry's names are importable
from here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gangplan.bench.generators.builders import Obj, priority_class_object, seeded_rng
from gangplan.bench.generators.families_common import (
    _STREAM_MIXED_GANGS,
    _STREAM_MIXED_NODES,
    FAMILIES,
    Family,
    _gang,
    _gang_size,
    _gpu_requests,
    _job_term,
    _nodes_with_usage,
    _NodeShape,
    _priority_classes,
    build_family,
    data_dir,
    family,
)
from gangplan.bench.generators.families_common import _STREAM_PHILLY as _STREAM_PHILLY
from gangplan.bench.generators.families_common import _read_csv as _read_csv
from gangplan.bench.generators.families_common import data_dir_path as data_dir_path
from gangplan.bench.generators.gpu_clusters import gpu_cluster, gpu_gangs
from gangplan.bench.generators.huge_clusters import huge_cluster
from gangplan.bench.generators.scheduler_perf import scheduler_perf_gangs
from gangplan.bench.generators.trace_families import _inventory as _inventory
from gangplan.bench.generators.trace_families import alibaba_family as alibaba_family
from gangplan.bench.generators.trace_families import philly_family as philly_family
from gangplan.bench.generators.trace_families import philly_jobs as philly_jobs
from gangplan.bench.generators.trace_families import preload
from gangplan.bench.generators.trace_families import real_inventory_family as real_inventory_family
from gangplan.models.well_known import GPU_PRODUCT, HOSTNAME, RACK, ZONE


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


# The redundant aliases above re-export what moved out of this module and is imported from it:
# the trace families' builders, and what benchmarks/real_inventory.py builds its instances from.
__all__ = ["FAMILIES", "Family", "build_family", "data_dir", "family", "preload"]
