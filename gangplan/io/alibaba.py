"""Convert the Alibaba GPU cluster trace v2023 ("openb", FGD, USENIX ATC '23) into snapshots.

The trace (``alibaba/clusterdata``, ``cluster-trace-gpu-v2023/csv/``) lists nodes
(``sn,cpu_milli,memory_mib,gpu,model``) and pods (``name,cpu_milli,memory_mib,num_gpu,gpu_milli,
gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time``). Its terms are "research or
study purpose" with attribution; the generated files say where they come from.

Node labels follow what a real GPU cluster carries: ``kubernetes.io/hostname``, the GPU feature
discovery labels ``nvidia.com/gpu.product`` (the trace's model code) and ``nvidia.com/gpu.count``,
and ``node.kubernetes.io/instance-type`` naming the shape (``g2x8.96c.384gi``).

The trace has **no gangs**: :func:`build_alibaba_showcase` builds them (documented there).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gangplan.io.csvrows import csv_rows
from gangplan.io.errors import SnapshotError
from gangplan.io.writer import write_snapshot
from gangplan.models.well_known import GPU, GPU_COUNT, GPU_PRODUCT, HOSTNAME, INSTANCE_TYPE

NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = (
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "qos",
    "pod_phase",
    "creation_time",
)
PODS_PER_NODE = "110"  # the kubelet's default maxPods

SOURCE_NOTE = (
    "Derived from the Alibaba GPU cluster trace v2023 (alibaba/clusterdata, cluster-trace-gpu-v2023;\n"
    'Weng et al., "Beware of Fragmentation", USENIX ATC \'23). Research/study use only, cite the paper.'
)


# ---- reading the CSVs ---------------------------------------------------------------------------
_rows = csv_rows
"""(row number, line, row) for every data row (:func:`gangplan.io.csvrows.csv_rows`)."""


def _int(file: str, row_no: int, line: int, row: dict[str, str], column: str) -> int:
    text = row[column].strip()
    if not text.isascii() or not text.isdigit():
        raise SnapshotError(
            file,
            f"expected a non-negative integer, got {row[column]!r}",
            obj=f"row {row_no}",
            field=column,
            line=line,
        )
    return int(text)


@dataclass(frozen=True)
class TraceNode:
    name: str
    cpu_milli: int
    memory_mib: int
    gpu: int
    model: str


@dataclass(frozen=True)
class TracePod:
    name: str
    cpu_milli: int
    memory_mib: int
    num_gpu: int
    gpu_milli: int
    gpu_spec: str
    qos: str
    phase: str
    creation_time: int


def read_trace_nodes(csv_path: str | os.PathLike) -> list[TraceNode]:
    """The rows of an ``openb_node_list_*.csv``; bad rows raise :class:`SnapshotError`."""
    file, out, seen = str(csv_path), [], set()
    for row_no, line, row in _rows(csv_path, NODE_COLUMNS):
        sn = row["sn"].strip()
        if not sn:
            raise SnapshotError(file, "empty node name", obj=f"row {row_no}", field="sn", line=line)
        if sn in seen:
            raise SnapshotError(
                file, f"duplicate node {sn!r}", obj=f"row {row_no}", field="sn", line=line
            )
        seen.add(sn)
        values = {c: _int(file, row_no, line, row, c) for c in ("cpu_milli", "memory_mib", "gpu")}
        model = row["model"].strip()
        if values["gpu"] > 0 and not model:
            raise SnapshotError(
                file, "a GPU node needs a model", obj=f"row {row_no}", field="model", line=line
            )
        out.append(TraceNode(name=sn, model=model, **values))
    return out


def read_trace_pods(csv_path: str | os.PathLike) -> list[TracePod]:
    """The rows of an ``openb_pod_list_*.csv`` with the full column set."""
    file, out = str(csv_path), []
    for row_no, line, row in _rows(csv_path, POD_COLUMNS):
        values = {
            c: _int(file, row_no, line, row, c)
            for c in ("cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "creation_time")
        }
        out.append(
            TracePod(
                name=row["name"].strip(),
                gpu_spec=row["gpu_spec"].strip(),
                qos=row["qos"].strip(),
                phase=row["pod_phase"].strip(),
                **values,
            )
        )
    return out


# ---- nodes --------------------------------------------------------------------------------------
def instance_type(n: TraceNode) -> str:
    """A cloud-like instance type naming the shape, e.g. ``g2x8.96c.384gi`` or ``cpu.32c.256gi``.

    >>> instance_type(TraceNode("x", 96000, 393216, 8, "G2"))
    'g2x8.96c.384gi'
    """
    cores = f"{n.cpu_milli // 1000}c" if n.cpu_milli % 1000 == 0 else f"{n.cpu_milli}m"
    mem = f"{n.memory_mib // 1024}gi" if n.memory_mib % 1024 == 0 else f"{n.memory_mib}mi"
    head = f"{n.model.lower()}x{n.gpu}" if n.gpu > 0 else "cpu"
    return f"{head}.{cores}.{mem}"


def node_object(n: TraceNode, *, gpu_resource: str = GPU) -> dict[str, Any]:
    labels = {HOSTNAME: n.name, INSTANCE_TYPE: instance_type(n)}
    allocatable = {"cpu": f"{n.cpu_milli}m", "memory": f"{n.memory_mib}Mi", "pods": PODS_PER_NODE}
    if n.gpu > 0:
        labels[GPU_PRODUCT] = n.model
        labels[GPU_COUNT] = str(n.gpu)
        allocatable[gpu_resource] = str(n.gpu)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": n.name, "labels": labels},
        "status": {"allocatable": allocatable},
    }


def alibaba_nodes_to_objects(
    csv_path: str | os.PathLike, *, gpu_resource: str = GPU
) -> list[dict[str, Any]]:
    """Kubernetes Node objects for every row of an openb node list, in file order."""
    return [node_object(n, gpu_resource=gpu_resource) for n in read_trace_nodes(csv_path)]


# ---- the showcase: existing usage from the pod trace, plus gangs --------------------------------
@dataclass(frozen=True)
class GangSpec:
    """One pending gang: ``size`` identical workers, all of them needed (minCount = size)."""

    name: str
    size: int
    gpus: int
    cpu_milli: int
    memory_mib: int
    gpu_product: str | None
    created: str


DEFAULT_GANGS = (
    # Shapes are the trace's own multi-GPU pod shapes (openb_pod_list_default.csv). finetune and
    # llm-pretrain ask for 512 GPUs each; finetune's 4-GPU workers run on any model.
    GangSpec("eval-t4", 8, 2, 17400, 43008, "T4", "2026-11-30T10:00:00Z"),
    GangSpec("finetune", 128, 4, 32200, 132096, None, "2026-11-30T10:01:00Z"),
    GangSpec("llm-pretrain", 64, 8, 64200, 263168, "G2", "2026-11-30T10:02:00Z"),
)
TRACE_NAMESPACE = "openb"
GANG_NAMESPACE = "ml"


def _whole_gpus(p: TracePod) -> int:
    """In a snapshot a GPU-sharing pod (gpu_milli < 1000) still holds one whole ``nvidia.com/gpu``
    (the showcase's engines count whole GPUs). ``gangplan replay`` shares GPUs by milli instead
    (:mod:`gangplan.replay.gpushare`)."""
    return p.num_gpu


def bind_first_fit(
    nodes: list[TraceNode], pods: list[TracePod]
) -> tuple[list[tuple[TracePod, str]], list[TracePod]]:
    """Bind pods in order to the first node (file order) with room and an allowed GPU model.

    Deterministic and deliberately uneven: early nodes fill up, later ones stay empty, as in a
    cluster that grew over time. Returns the bindings and the pods that fit nowhere.
    """
    free = [[n.cpu_milli, n.memory_mib, n.gpu] for n in nodes]
    bound, dropped = [], []
    for p in pods:
        allowed = set(p.gpu_spec.split("|")) if p.gpu_spec else None
        gpus = _whole_gpus(p)
        for n, f in zip(nodes, free, strict=True):
            if (
                f[0] >= p.cpu_milli
                and f[1] >= p.memory_mib
                and f[2] >= gpus
                and (allowed is None or gpus == 0 or n.model in allowed)
            ):
                f[0] -= p.cpu_milli
                f[1] -= p.memory_mib
                f[2] -= gpus
                bound.append((p, n.name))
                break
        else:
            dropped.append(p)
    return bound, dropped


def _resources(
    cpu_milli: int, memory_mib: int, gpus: int, gpu_resource: str
) -> dict[str, dict[str, str]]:
    """A container's resources. GPUs are an extended resource: the API server refuses a request
    without an equal limit (``validateResourceRequirements``), so the limit is written too."""
    req = {"cpu": f"{cpu_milli}m", "memory": f"{memory_mib}Mi"}
    if not gpus:
        return {"requests": req}
    req[gpu_resource] = str(gpus)
    return {"requests": req, "limits": {gpu_resource: str(gpus)}}


def bound_pod_object(p: TracePod, node: str, *, gpu_resource: str = GPU) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": p.name,
        "namespace": TRACE_NAMESPACE,
        "labels": {"app": "openb", "qos": p.qos},
    }
    if p.num_gpu and p.gpu_milli < 1000:
        meta["annotations"] = {"gangplan.io/trace-gpu-milli": str(p.gpu_milli)}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "nodeName": node,
            "containers": [
                {
                    "name": "main",
                    "resources": _resources(
                        p.cpu_milli, p.memory_mib, _whole_gpus(p), gpu_resource
                    ),
                }
            ],
        },
        "status": {"phase": "Running"},
    }


def gang_objects(
    g: GangSpec, *, gpu_resource: str = GPU, annotations: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """A PodGroup (gang, minCount = size) and its pending pods."""
    group: dict[str, Any] = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": g.name, "namespace": GANG_NAMESPACE, "creationTimestamp": g.created},
        "spec": {"schedulingPolicy": {"gang": {"minCount": g.size}}},
    }
    if annotations:
        group["metadata"]["annotations"] = dict(annotations)
    out = [group]
    for i in range(g.size):
        spec: dict[str, Any] = {"schedulingGroup": {"podGroupName": g.name}}
        if g.gpu_product:
            spec["nodeSelector"] = {GPU_PRODUCT: g.gpu_product}
        spec["containers"] = [
            {
                "name": "worker",
                "resources": _resources(g.cpu_milli, g.memory_mib, g.gpus, gpu_resource),
            }
        ]
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{g.name}-{i}",
                    "namespace": GANG_NAMESPACE,
                    "labels": {"job": g.name},
                    "creationTimestamp": g.created,
                },
                "spec": spec,
            }
        )
    return out


def build_alibaba_showcase(
    out_dir: str | os.PathLike,
    *,
    node_csv: str | os.PathLike,
    pod_csv: str | os.PathLike,
    gangs: tuple[GangSpec, ...] = DEFAULT_GANGS,
    expectations: dict[str, dict[str, str]] | None = None,
    gpu_resource: str = GPU,
) -> dict[str, int]:
    """Write ``nodes.yaml``, ``running.yaml`` and ``workload.yaml`` under ``out_dir``.

    * nodes: every row of ``node_csv`` (:func:`alibaba_nodes_to_objects`);
    * running: the trace's ``Running`` pods, sorted by (creation_time, name), bound first-fit
      (:func:`bind_first_fit`); GPU-sharing pods are rounded up to one whole GPU;
    * workload: the pending ``gangs`` (the trace has no gangs; these are built, not observed).

    ``expectations`` maps a gang name to ``gangplan.io/expect-*`` annotations for its PodGroup.
    Returns counts for the report. The same inputs give the same bytes.
    """
    out = Path(out_dir)
    nodes = read_trace_nodes(node_csv)
    running = sorted(
        (p for p in read_trace_pods(pod_csv) if p.phase == "Running"),
        key=lambda p: (p.creation_time, p.name),
    )
    bound, dropped = bind_first_fit(nodes, running)
    write_snapshot(
        [node_object(n, gpu_resource=gpu_resource) for n in nodes],
        out / "nodes.yaml",
        header=f"{len(nodes)} nodes from {Path(node_csv).name}.\n{SOURCE_NOTE}",
    )
    write_snapshot(
        [bound_pod_object(p, node, gpu_resource=gpu_resource) for p, node in bound],
        out / "running.yaml",
        header=(
            f"{len(bound)} Running pods of {Path(pod_csv).name}, bound first-fit in (creation_time, name) order\n"
            f"to nodes in file order ({len(dropped)} fit nowhere and are left out). GPU-sharing pods hold a whole GPU.\n{SOURCE_NOTE}"
        ),
    )
    workload = [
        obj
        for g in gangs
        for obj in gang_objects(
            g, gpu_resource=gpu_resource, annotations=(expectations or {}).get(g.name)
        )
    ]
    lines = [
        f"{g.name}: {g.size} x {g.gpus} GPU, {g.cpu_milli}m cpu, {g.memory_mib}Mi"
        + (f", {GPU_PRODUCT}={g.gpu_product}" if g.gpu_product else "")
        for g in gangs
    ]
    write_snapshot(
        workload,
        out / "workload.yaml",
        header="Pending gangs (built for gangplan; the trace itself has no gangs):\n"
        + "\n".join(lines),
    )
    return {
        "nodes": len(nodes),
        "bound_pods": len(bound),
        "dropped_pods": len(dropped),
        "pending_pods": sum(g.size for g in gangs),
        "gangs": len(gangs),
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m gangplan.io.alibaba DATA_DIR OUT_DIR``: regenerate the showcase snapshot."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        raise SystemExit("usage: python -m gangplan.io.alibaba DATA_DIR OUT_DIR")
    data = Path(args[0])
    counts = build_alibaba_showcase(
        args[1],
        node_csv=data / "openb_node_list_gpu_node.csv",
        pod_csv=data / "openb_pod_list_default.csv",
        expectations=SHOWCASE_EXPECTATIONS,
    )
    print(" ".join(f"{k}={v}" for k, v in counts.items()))


SHOWCASE_EXPECTATIONS: dict[str, dict[str, str]] = {
    # After first-fit binding, 167 G2 nodes have all 8 GPUs free (165 with cpu and memory for a
    # pretrain worker). LeastAllocated ranks an empty node above a half-used one (a fresh G2 keeps
    # 66 % free after one finetune worker, a G2 already holding one 33 %), so greedy spreads the
    # 128 workers one per node: 110 land on whole G2 nodes and fewer than 64 stay whole (greedy
    # engine, 0.1 s). Packing finetune two per node leaves room for all three gangs:
    # tests/test_alibaba.py builds that placement and validates it; the exact engine agrees.
    "llm-pretrain": {
        "gangplan.io/expect-greedy": "rejected",
        "gangplan.io/expect-optimal": "admitted",
    },
}


if __name__ == "__main__":
    main()
