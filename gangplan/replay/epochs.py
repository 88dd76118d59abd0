"""A timed replay's state at one instant as Kubernetes objects (:func:`epoch_objects`) and as the
Cluster of those objects (:func:`epoch_cluster`): what the ``shadow`` and ``optimal`` policies'
exact epochs solve (:mod:`gangplan.replay.shadow`), what ``--export-epoch N DIR`` writes
(:func:`write_epoch`) and what the timed run's preemption sees. The nodes of the replay, the
running pods bound where the replay put them, the pending jobs' pods (a gang as a PodGroup) and
the pods a ``--nodes`` snapshot binds (:func:`resident`).

**GPU sharing** (issue 22 item 5): on a trace with GPU-sharing jobs (``gpu_milli`` < 1000,
:func:`sharing`) the GPUs are written as the replay models them (:mod:`gangplan.replay.gpushare`),
in Kubernetes' own terms, DRA consumable capacity (KEP-5075, docs/explanation/dra.md "Consumable
capacity"): every node's GPUs are one ResourceSlice of devices ``gpu-<d>`` (``d`` the replay's
device index) with ``allowMultipleAllocations: true`` and one capacity ``milli: 1000`` (no request
policy: a request consumes exactly the milli it asks), the node's ``nvidia.com/gpu.product`` label
as the string attribute ``productName`` (the model restriction stays a node-affinity term, as
greedy's replay); one DeviceClass (:data:`DEVICE_CLASS`); a running pod's GPUs are a ResourceClaim
allocated to the devices the replay's placer gave it (``status.allocation`` with a ``shareID`` and
``consumedCapacity`` ``milli`` per device, ``reservedFor`` the pod), so running shares are fixed
where they are; a pending job's pods claim from one ResourceClaimTemplate asking ``count: gpu``
devices with ``capacity.requests.milli: gpu_milli``. Whole-GPU jobs of such a trace ask 1000 milli
per device (all of it). The devices the exact engine names for a pending pod
(``PodOutcome.claims``) are the ones the ``optimal`` policy gives it (:meth:`Placer.force
<gangplan.replay.engine.Placer.force>`). A trace of whole GPUs only is written as before
(``nvidia.com/gpu`` extended resources; the same objects byte for byte).
"""

from __future__ import annotations

import uuid
from typing import Any

from gangplan.io.loader import load_objects
from gangplan.models.cluster import Cluster
from gangplan.models.objects import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    Affinity,
    Node,
    NodeSelectorTerm,
    Pod,
    PodGroup,
    Requirement,
)
from gangplan.models.well_known import GPU, GPU_PRODUCT
from gangplan.replay.traces import MIB, ReplayJob

NAMESPACE = "replay"
DRIVER = "gpu.replay.gangplan.io"
"""The DRA driver of the replay's shared GPUs (GPU-sharing traces, module docstring)."""
DEVICE_CLASS = "shared-gpu.replay.gangplan.io"
CLAIM = "gpu"
"""The pod's claim name and the claim's one request name."""
MILLI = 1000
POD_GROUP_API = "scheduling.k8s.io/v1beta1"


def sharing(jobs: list[ReplayJob]) -> bool:
    """Whether the trace has GPU-sharing jobs (``gpu_milli`` < 1000): then the epoch objects model
    GPUs as DRA devices with consumable capacity (module docstring)."""
    return any(j.fractional for j in jobs)


def _quantity(name: str, value: int) -> str:
    return f"{value}m" if name == CPU else str(value)


def node_object(n: Node, shared: bool = False) -> dict[str, Any]:
    """``shared``: without ``nvidia.com/gpu`` (the GPUs are the node's ResourceSlice)."""
    alloc = {k: _quantity(k, int(v)) for k, v in n.allocatable.items() if not (shared and k == GPU)}
    spec: dict[str, Any] = {}
    if n.taints:
        spec["taints"] = [
            {k: v for k, v in (("key", t.key), ("value", t.value), ("effect", t.effect)) if v}
            for t in n.taints
        ]
    if n.unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": n.name, "labels": dict(n.labels)},
        "spec": spec,
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def job_key(k: int) -> str:
    return f"j{k}"


def _pod(
    job: ReplayJob,
    k: int,
    i: int,
    node: str | None,
    group: str | None,
    shared: bool = False,
    avoid: set[str] | None = None,
) -> dict[str, Any]:
    req: dict[str, str] = {}
    if job.cpu_milli:
        req["cpu"] = f"{job.cpu_milli}m"
    if job.memory_mib:
        req["memory"] = f"{job.memory_mib}Mi"
    if job.gpu and not shared:
        req[GPU] = str(job.gpu)
    spec: dict[str, Any] = {}
    if node is not None:
        spec["nodeName"] = node
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    if job.priority:
        spec["priority"] = job.priority
    term: dict[str, Any] = {}
    if job.gpu and job.gpu_models:
        term["matchExpressions"] = [
            {"key": GPU_PRODUCT, "operator": "In", "values": list(job.gpu_models)}
        ]
    if avoid:
        term["matchFields"] = [
            {"key": "metadata.name", "operator": "NotIn", "values": sorted(avoid)}
        ]
    if term:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
            }
        }
    # An extended resource needs a limit equal to its request, or the API server refuses the pod.
    resources: dict[str, Any] = (
        {"requests": req, "limits": {GPU: req[GPU]}} if GPU in req else {"requests": req}
    )
    spec["containers"] = [{"name": "worker", "resources": resources}]
    if job.gpu and shared:
        ref = (
            {"resourceClaimName": _claim_name(k, i)}
            if node is not None
            else {"resourceClaimTemplateName": _template_name(k)}
        )
        spec["resourceClaims"] = [{"name": CLAIM, **ref}]
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{job_key(k)}-{i}",
            "namespace": NAMESPACE,
            "labels": {"job": job.name},
        },
        "spec": spec,
    }
    if node is not None:
        pod["status"] = {"phase": "Running"}
    return pod


def epoch_pod(
    job: ReplayJob,
    k: int,
    i: int,
    node: str | None,
    group: str | None,
    source: str,
    avoid: set[str] | None = None,
) -> Pod:
    """:func:`_pod` of a whole-GPU trace as the Pod model the loader makes of it (``tests/
    test_replay_preemption.py`` and ``tests/test_replay_timed.py`` hold the two equal)."""
    req: dict[str, int] = {}
    if job.cpu_milli:
        req[CPU] = job.cpu_milli
    if job.memory_mib:
        req[MEMORY] = job.memory_mib * MIB
    if job.gpu:
        req[GPU] = job.gpu
    nonzero = {
        CPU: job.cpu_milli or DEFAULT_MILLI_CPU_REQUEST,
        MEMORY: job.memory_mib * MIB or DEFAULT_MEMORY_REQUEST,
    }
    exprs = (
        (Requirement(key=GPU_PRODUCT, operator="In", values=tuple(job.gpu_models)),)
        if job.gpu and job.gpu_models
        else ()
    )
    fields = (
        (Requirement(key="metadata.name", operator="NotIn", values=tuple(sorted(avoid))),)
        if avoid
        else ()
    )
    affinity = (
        Affinity(node_required=(NodeSelectorTerm(match_expressions=exprs, match_fields=fields),))
        if exprs or fields
        else Affinity()
    )
    return Pod(
        namespace=NAMESPACE,
        name=f"{job_key(k)}-{i}",
        labels={"job": job.name},
        node_name=node,
        requests=req,
        nonzero_requests=nonzero,
        affinity=affinity,
        priority=job.priority,
        pod_group=group,
        phase="Running" if node is not None else "Pending",
        source=source,
    )


def epoch_group(job: ReplayJob, k: int, source: str) -> PodGroup:
    """The PodGroup :func:`epoch_objects` writes for a pending gang, as the loader reads it."""
    return PodGroup(
        namespace=NAMESPACE,
        name=job_key(k),
        policy="gang",
        min_count=job.gang,
        priority=job.priority,
        topology_key=job.required_topology_key or None,
        api_version=POD_GROUP_API,
        source=source,
    )


def epoch_cluster(
    nodes: tuple[Node, ...],
    jobs: list[ReplayJob],
    running: dict[int, list[str]],
    pending: list[int],
    *,
    source: str,
    avoid: dict[tuple[int, int], set[str]] | None = None,
    placer=None,
    devices: dict[int, list[tuple[int, ...]]] | None = None,
    kube_version=None,
    profile=None,
) -> Cluster:
    """The Cluster of :func:`epoch_objects` (same arguments; ``profile``: the scheduler profile,
    default the default one; ``kube_version``: default the newest). On a trace of whole GPUs it
    is built from models (:func:`epoch_pod`, :func:`epoch_group`, the resident pods read once per
    run, :meth:`Placer.resident <gangplan.replay.engine.Placer.resident>`), equal to what the
    loader makes of the objects, without writing and parsing them at every epoch or preemption.
    On a GPU-sharing trace the GPUs are DRA devices (module docstring): the objects are written
    and loaded, since the exact engine's device view is built from DRA objects."""
    if sharing(jobs):
        loaded = load_objects(
            epoch_objects(nodes, jobs, running, pending, devices, avoid, placer=placer),
            source,
            kube_version=kube_version,
        )
        return loaded if profile is None else loaded.model_copy(update={"profile": profile})
    res = placer.resident() if placer is not None else Cluster()
    pods = list(res.pods)
    for k in sorted(running):
        pods += [epoch_pod(jobs[k], k, i, node, None, source) for i, node in enumerate(running[k])]
    groups = dict(res.pod_groups)
    for k in sorted(pending):
        job, group = jobs[k], None
        if job.gang > 1:
            g = epoch_group(job, k, source)
            groups[g.key], group = g, g.name
        pods += [
            epoch_pod(job, k, i, None, group, source, (avoid or {}).get((k, i)))
            for i in range(job.gang)
        ]
    extra: dict = {} if profile is None else {"profile": profile}
    if kube_version is not None:
        extra["kube_version"] = kube_version
    return Cluster(
        nodes=nodes,
        pods=tuple(pods),
        pod_groups=groups,
        composite_pod_groups=res.composite_pod_groups,
        workloads=res.workloads,
        pdbs=res.pdbs,
        namespaces=res.namespaces,
        priority_classes=dict(res.priority_classes),
        sources=(source,),
        **extra,
    )


def _claim_name(k: int, i: int) -> str:
    """A pod's claim: for a pending pod the one the resourceclaim controller makes from its
    template (``<pod>-<claim>``), for a running one the same name, allocated."""
    return f"{job_key(k)}-{i}-{CLAIM}"


def _template_name(k: int) -> str:
    return f"{job_key(k)}-{CLAIM}"


def _claim_spec(job: ReplayJob) -> dict[str, Any]:
    return {
        "devices": {
            "requests": [
                {
                    "name": CLAIM,
                    "exactly": {
                        "deviceClassName": DEVICE_CLASS,
                        "allocationMode": "ExactCount",
                        "count": job.gpu,
                        "capacity": {"requests": {"milli": str(min(job.gpu_milli, MILLI))}},
                    },
                }
            ]
        }
    }


def device_name(d: int) -> str:
    return f"gpu-{d}"


def device_index(name: str) -> int:
    """The replay's device index of a device :func:`epoch_objects` wrote (``gpu-<d>``)."""
    return int(name.removeprefix("gpu-"))


def _dra_objects(nodes: tuple[Node, ...]) -> list[dict[str, Any]]:
    """The DeviceClass and one ResourceSlice per node with GPUs (module docstring)."""
    out: list[dict[str, Any]] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": DEVICE_CLASS},
            "spec": {
                "selectors": [
                    {
                        "cel": {
                            "expression": f"device.driver == '{DRIVER}' && device.allowMultipleAllocations"
                        }
                    }
                ]
            },
        }
    ]
    for n in nodes:
        count = int(n.allocatable.get(GPU, 0))
        if count <= 0:
            continue
        attrs: dict[str, Any] = {}
        model = n.labels.get(GPU_PRODUCT)
        devices = []
        for d in range(count):
            attrs = {"index": {"int": d}, **({"productName": {"string": model}} if model else {})}
            devices.append(
                {
                    "name": device_name(d),
                    "allowMultipleAllocations": True,
                    "attributes": attrs,
                    "capacity": {"milli": {"value": str(MILLI)}},
                }
            )
        out.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{n.name}-gpus"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": n.name,
                    "pool": {"name": n.name, "generation": 1, "resourceSliceCount": 1},
                    "devices": devices,
                },
            }
        )
    return out


def _allocated_claim(
    job: ReplayJob, k: int, i: int, node: str, devices: tuple[int, ...]
) -> dict[str, Any]:
    """A running pod's claim, allocated to the devices it holds (a share of each: shareID and
    consumedCapacity, as kube-scheduler's DynamicResources PreBind writes for a device with
    ``allowMultipleAllocations``)."""
    return _claim_object(
        NAMESPACE,
        _claim_name(k, i),
        f"{job_key(k)}-{i}",
        node,
        devices,
        _claim_spec(job),
        min(job.gpu_milli, MILLI),
    )


def _claim_object(
    namespace: str,
    name: str,
    pod: str,
    node: str,
    devices: tuple[int, ...],
    spec: dict[str, Any],
    milli: int,
) -> dict[str, Any]:
    results = [
        {
            "request": CLAIM,
            "driver": DRIVER,
            "pool": node,
            "device": device_name(d),
            "shareID": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{namespace}/{name}/{d}")),
            "consumedCapacity": {"milli": str(milli)},
        }
        for d in devices
    ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
        "status": {
            "allocation": {
                "devices": {"results": results},
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [node]}
                            ]
                        }
                    ]
                },
            },
            "reservedFor": [{"resource": "pods", "name": pod}],
        },
    }


def resident(placer, shared: bool) -> list[dict[str, Any]]:
    """The objects of the pods a ``--nodes`` snapshot binds (:func:`gangplan.replay.traces.resident_objects`)
    in ``placer``'s cluster (none without a placer). On a GPU-sharing epoch a resident pod's
    ``nvidia.com/gpu`` becomes a claim allocated to whole devices of its node's ResourceSlice,
    the lowest indices in pod order: the devices the replay's device table gives bound pods
    (:class:`gangplan.replay.gpushare.GpuDevices`)."""
    from gangplan.replay.traces import resident_objects

    if placer is None:
        return []
    objs = resident_objects(placer.cluster)
    if not shared:
        return objs
    out: list[dict[str, Any]] = []
    taken: dict[str, int] = {}
    for raw in objs:
        out.append(raw)
        spec = raw.get("spec") or {}
        node = spec.get("nodeName")
        if raw.get("kind") != "Pod" or not node:
            continue
        count = 0
        for c in spec.get("containers") or []:
            res = c.get("resources") or {}
            count += int(
                str((res.get("requests") or {}).get(GPU, (res.get("limits") or {}).get(GPU, 0)))
            )
            for part in ("requests", "limits"):
                (res.get(part) or {}).pop(GPU, None)
        if not count:
            continue
        first = taken.get(node, 0)
        taken[node] = first + count
        meta = raw.get("metadata") or {}
        ns, pod = meta.get("namespace") or "default", meta.get("name")
        name = f"{pod}-{CLAIM}"
        spec.setdefault("resourceClaims", []).append({"name": CLAIM, "resourceClaimName": name})
        claim_spec = {
            "devices": {
                "requests": [
                    {
                        "name": CLAIM,
                        "exactly": {
                            "deviceClassName": DEVICE_CLASS,
                            "allocationMode": "ExactCount",
                            "count": count,
                            "capacity": {"requests": {"milli": str(MILLI)}},
                        },
                    }
                ]
            }
        }
        out.append(
            _claim_object(
                ns, name, pod, node, tuple(range(first, first + count)), claim_spec, MILLI
            )
        )
    return out


def epoch_objects(
    nodes: tuple[Node, ...],
    jobs: list[ReplayJob],
    running: dict[int, list[str]],
    pending: list[int],
    devices: dict[int, list[tuple[int, ...]]] | None = None,
    avoid: dict[tuple[int, int], set[str]] | None = None,
    *,
    placer=None,
) -> list[dict[str, Any]]:
    """The state as Kubernetes objects: nodes, running pods bound (``running``: job index ->
    the node of each worker), pending jobs' pods (``gang`` workers each, the workers a replay
    places; gangs of more than one with a PodGroup). On a GPU-sharing trace (:func:`sharing`)
    the GPUs are DRA devices with consumable capacity (module docstring) and ``devices`` (job
    index -> the device indices of each worker on its node, every running GPU job) is needed.
    ``avoid``: (job, worker) of a pending pod -> nodes it may not use (a required node-affinity
    ``matchFields`` term; :func:`~gangplan.replay.shadow.solve_epoch`'s repair of the
    shared-capacity relaxation).
    ``placer``: the timed run's placer that owns ``nodes``, whose snapshot's bound pods stay
    (:func:`resident`); None: no such pods."""
    shared = sharing(jobs)
    out = [node_object(n, shared) for n in nodes]
    if shared:
        out += _dra_objects(nodes)
    out += resident(placer, shared)
    for k in sorted(running):
        job = jobs[k]
        out += [_pod(job, k, i, node, None, shared) for i, node in enumerate(running[k])]
        if shared and job.gpu:
            held = (devices or {}).get(k)
            if held is None or len(held) != len(running[k]):
                raise ValueError(
                    f"epoch_objects: running job {job.name} (j{k}) shares GPUs but its devices are not given"
                )
            out += [
                _allocated_claim(job, k, i, node, tuple(held[i]))
                for i, node in enumerate(running[k])
            ]
    for k in sorted(pending):
        job = jobs[k]
        group = None
        if job.gang > 1:
            group = job_key(k)
            spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": job.gang}}}
            if job.required_topology_key:
                spec["schedulingConstraints"] = {"topology": [{"key": job.required_topology_key}]}
            if job.priority:
                spec["priority"] = job.priority
            out.append(
                {
                    "apiVersion": POD_GROUP_API,
                    "kind": "PodGroup",
                    "metadata": {"name": group, "namespace": NAMESPACE},
                    "spec": spec,
                }
            )
        if shared and job.gpu:
            out.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaimTemplate",
                    "metadata": {"name": _template_name(k), "namespace": NAMESPACE},
                    "spec": {"spec": _claim_spec(job)},
                }
            )
        out += [
            _pod(job, k, i, None, group, shared, (avoid or {}).get((k, i))) for i in range(job.gang)
        ]
    return out


def write_epoch(
    objects: list[dict[str, Any]], path: str, now: float, index: int, running: int, pending: int
) -> None:
    """Write one epoch's objects (:func:`epoch_objects`) as a snapshot for ``gangplan diff``."""
    from pathlib import Path

    from gangplan.io.writer import write_snapshot

    write_snapshot(
        objects,
        Path(path),
        header=f"gangplan replay epoch {index} at t={now:g} s: {running} running jobs fixed, {pending} pending",
    )


__all__ = [
    "CLAIM",
    "DEVICE_CLASS",
    "DRIVER",
    "MILLI",
    "NAMESPACE",
    "POD_GROUP_API",
    "device_index",
    "device_name",
    "epoch_cluster",
    "epoch_group",
    "epoch_objects",
    "epoch_pod",
    "job_key",
    "node_object",
    "resident",
    "sharing",
    "write_epoch",
]
