"""What every bench generator family shares (:mod:`gangplan.bench.generators.families`): the
registry (:func:`family`, :data:`FAMILIES`, :func:`build_family`), where the real traces live
(:func:`data_dir`) and a cached CSV reader, and the pieces the families build from: gang sizes,
GPU requests, priority classes, rack labels, nodes with their existing load, one gang's objects.
The families register themselves when :mod:`gangplan.bench.generators.families` is imported.
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
)
from gangplan.io.compressed import resolve
from gangplan.io.errors import SnapshotError
from gangplan.models.well_known import GPU, GPU_PRODUCT, HOSTNAME, RACK, ZONE

# Stream ids of the families of families.py and trace_families.py (gpu_clusters.py uses 1 and 2,
# small_snapshots.py 3 and 5).
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


__all__ = ["FAMILIES", "Family", "build_family", "data_dir", "data_dir_path", "family"]
