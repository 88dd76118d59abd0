"""The ``shadow`` exact policy of a timed replay (issue 22, item 4a): at each epoch, the exact
engine (:func:`gangplan.solver.exact.solve_exact`) on greedy's own state, running pods fixed.

An epoch is an event instant at which some job is pending before greedy's attempt round (every
such instant, or with ``epoch=S`` the first such instant in each window ``[k S, (k + 1) S)``). The
state handed to the exact engine is the cluster as greedy's round found it:

* the nodes of the replay, their bound (running) pods fixed where greedy put them;
* every pending job (ready, in backoff or in the unschedulable pool: the optimum is not bound by
  the queue), a job of more than one worker as a gang PodGroup (``minCount`` = its gang size),
  its GPUs as ``nvidia.com/gpu`` requests, a required topology key as the PodGroup's
  ``schedulingConstraints.topology`` (a preferred key is left out, as greedy's replay does).

It is the Cluster of the Kubernetes objects :func:`epoch_objects` writes (:func:`epoch_cluster`:
built from models on a whole-GPU trace, loaded from the objects on a GPU-sharing one), so the
exported snapshot (``--export-epoch N DIR``, those objects) is exactly what was solved and
``gangplan diff`` accepts it. Greedy's placements of this round are the hint, so the exact answer is never worse
than greedy's (lexicographic: admitted per priority, then GPUs, :data:`EPOCH_OBJECTIVE`). Per epoch:
``regret_gpus`` = GPUs of pending jobs the exact engine admits minus those greedy admitted at that
instant (may be negative in GPUs when the optimum admits more jobs of fewer GPUs), ``regret_jobs``
the same in jobs, ``exact_gpus_untried`` the part of the optimum's GPUs on jobs greedy did not
even try at that instant (backing off or pooled: regret the queue causes, not the placement), and
when the solve hit its time limit the status FEASIBLE with its ``gap``: a
bound, never an optimum.

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

GPU counts of the epoch records (``greedy_gpus``, ``exact_gpus``, ``exact_gpus_untried``, the
regrets, ``movable_gpus``) are GPU-equivalents: a worker counts ``gpu * gpu_milli / 1000`` (0.5
for a half-GPU pod), an integer whenever the total is whole (every whole-GPU trace), else a
float rounded to 1/1000.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field
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
from gangplan.models.result import Status
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


def as_gpus(milli: int) -> int | float:
    """GPU-equivalents of ``milli`` GPU milli: an int when whole, else a float (1/1000 steps)."""
    return milli // MILLI if milli % MILLI == 0 else round(milli / MILLI, 3)


def job_milli(job: ReplayJob, workers: int) -> int:
    """GPU milli of ``workers`` pods of ``job`` (``gpu`` devices of ``gpu_milli`` each)."""
    return job.gpu * min(job.gpu_milli, MILLI) * workers if job.gpu else 0


def gpus_of(jobs: list[ReplayJob], workers: dict[int, int]) -> int | float:
    """GPU-equivalents of the jobs ``workers`` names (job index -> pods placed)."""
    return as_gpus(sum(job_milli(jobs[k], w) for k, w in workers.items()))


@dataclass
class EpochRecord:
    index: int
    time: float
    pending_jobs: int
    greedy_gpus: int | float
    """GPU-equivalents (module docstring: a half-GPU pod counts 0.5), as ``exact_gpus``."""
    exact_gpus: int | float
    greedy_jobs: int
    exact_jobs: int
    status: str
    gap: float | None
    wall_s: float
    exact_gpus_untried: int | float = 0
    """GPUs the exact engine admits among the pending jobs greedy did not try at this instant
    (backing off, or in the unschedulable pool with no event for them): the queue's share of
    the regret, the rest being placement."""
    movable_jobs: int | None = None
    """With the movable bound (``--movable-bound``): pending jobs the exact engine starts when the
    running pods may move (every running job still runs); None when not asked."""
    movable_jobs_bound: int | None = None
    """Its proven bound (equal to ``movable_jobs`` when ``movable_status`` is OPTIMAL)."""
    movable_gpus: int | float | None = None
    movable_status: str | None = None
    repairs: int = 0
    """GPU-sharing traces: extra solves :func:`solve_epoch` needed because the exact engine's
    shared-capacity relaxation put shares on a node that no device allocation holds (each adds
    a node-affinity exclusion); when > 0 the status is OPTIMAL only if the answer admits as many
    jobs as the first, relaxed, optimum (an upper bound), else FEASIBLE with that gap."""

    @property
    def regret_gpus(self) -> int | float:
        d = self.exact_gpus - self.greedy_gpus
        return d if isinstance(d, int) else as_gpus(round(d * MILLI))

    @property
    def regret_jobs(self) -> int:
        return self.exact_jobs - self.greedy_jobs


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


EPOCH_OBJECTIVE = "gpus"
"""The exact engine's objective at every epoch: entities admitted per priority, then the GPUs of
the placed pods (``nvidia.com/gpu``; on a GPU-sharing epoch, whose GPUs are DRA devices, that tier
is 0 everywhere and pods placed decide), then pods placed: the lexicographic order the module
docstring promises. With the default objective (no GPU tier) an epoch could start a 1-GPU job
where greedy started a 5-GPU one and report a regret of -4 GPUs."""


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
    ``matchFields`` term; :func:`solve_epoch`'s repair of the shared-capacity relaxation).
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


@dataclass
class MovableBound:
    """The epoch's state with running pods movable (item 4c): every running job must still run,
    anywhere; how many pending jobs could start with them (``jobs``: the solution's count,
    ``jobs_bound``: CP-SAT's proven bound on it, equal when ``status`` is OPTIMAL)."""

    jobs: int
    jobs_bound: int
    gpus: int | float
    status: str


@dataclass
class EpochSolve:
    """One epoch's exact solve (:func:`solve_epoch`): ``placements`` = admitted pending job ->
    the node of each of its pods; ``devices`` (GPU-sharing traces) = the same jobs -> the device
    indices each pod's claim got on its node (the Result's ``claims``)."""

    record: EpochRecord
    placements: dict[int, list[str]]
    cluster: Cluster
    result: Any
    devices: dict[int, list[tuple[int, ...]]] = field(default_factory=dict)


def _job_of(key: str) -> tuple[int, int]:
    name = key.split("/", 1)[1]
    k, i = name[1:].split("-", 1)
    return int(k), int(i)


def _hint(jobs: list[ReplayJob], placed: dict[int, list[str]], keys: list[int]):
    from gangplan.models.result import PodOutcome, Result

    return Result(
        engine="greedy",
        status=Status.HEURISTIC,
        pods={
            f"{NAMESPACE}/{job_key(k)}-{i}": PodOutcome(node=placed[k][i] if k in placed else None)
            for k in keys
            for i in range(jobs[k].gang)
        },
    )


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


def solve_epoch(
    now: float,
    index: int,
    nodes: tuple[Node, ...],
    jobs: list[ReplayJob],
    running: dict[int, list[str]],
    pending: list[int],
    greedy: dict[int, list[str]],
    *,
    time_limit: float,
    seed: int,
    tried: set[int] | None = None,
    export: str | None = None,
    devices: dict[int, list[tuple[int, ...]]] | None = None,
    placer=None,
) -> EpochSolve:
    """The exact engine on one epoch's state: ``running`` (job -> nodes of its pods) fixed,
    ``pending`` jobs free, ``greedy`` (the pending jobs greedy placed from this state) the hint,
    so the answer is never worse. No preemption: the running pods stay (a greedy start that
    preempted shows as negative regret). ``export``: write the
    state to this path first. ``devices``: on a GPU-sharing trace, the devices of each running
    job's pods (:func:`epoch_objects`). The one epoch solve of the ``shadow`` and ``optimal`` policies."""
    import time

    from gangplan.solver.exact import solve_exact

    if export is not None:
        write_epoch(
            epoch_objects(nodes, jobs, running, pending, devices, placer=placer),
            export,
            now,
            index,
            len(running),
            len(pending),
        )
    shared = sharing(jobs)
    hint = _hint(jobs, greedy, pending)
    avoid: dict[tuple[int, int], set[str]] = {}
    first_jobs: int | None = None
    first_status = ""
    wall = 0.0
    repairs = 0
    while True:
        cluster = epoch_cluster(
            nodes,
            jobs,
            running,
            pending,
            source=f"<epoch {index}>",
            avoid=avoid,
            placer=placer,
            devices=devices,
        )
        t = time.perf_counter()
        res = solve_exact(
            cluster,
            time_limit=time_limit,
            workers=1,
            seed=seed,
            hint=hint,
            preemption=False,
            objective=EPOCH_OBJECTIVE,
        )
        wall += time.perf_counter() - t
        where: dict[int, dict[int, str]] = {}
        devs: dict[int, dict[int, tuple[int, ...]]] = {}
        unallocated: dict[str, list[tuple[int, int]]] = {}
        for key, o in res.pods.items():
            if o.node is not None and not o.nominated:
                k, i = _job_of(key)
                where.setdefault(k, {})[i] = o.node
                if shared and jobs[k].gpu:
                    got = tuple(
                        device_index(c.device)
                        for c in o.claims
                        if c.driver == DRIVER and c.pool == o.node
                    )
                    if len(got) != jobs[k].gpu:
                        unallocated.setdefault(o.node, []).append((k, i))
                    devs.setdefault(k, {})[i] = got
        placements = {
            k: [w[i] for i in sorted(w)] for k, w in where.items() if len(w) >= jobs[k].gang
        }
        if first_jobs is None:
            first_jobs, first_status = len(placements), str(res.status)
        if not unallocated:
            break
        # The exact engine's shared-capacity rows are a bin-packing relaxation on nodes of several
        # GPUs with mixed shares (docs/explanation/dra.md): no joint device allocation holds the
        # shares it put on these nodes. Forbid one pod there that greedy's hint does not put
        # there (the hint's own pods on a node have an allocation: greedy made it), then every
        # such pod after 3 rounds; each round strictly restricts, and the hint stays feasible.
        repairs += 1
        for node, pods in unallocated.items():
            movable = [
                (k, i)
                for k, i in pods
                if not (k in greedy and i < len(greedy[k]) and greedy[k][i] == node)
            ]
            movable.sort(key=lambda ki: (-job_milli(jobs[ki[0]], 1), ki))
            for ki in movable if repairs > 3 else movable[:1]:
                avoid.setdefault(ki, set()).add(node)
            if not movable:
                raise AssertionError(
                    f"epoch {index}: node {node}: no device allocation for the exact engine's shares, all greedy's"
                )
    status, gap = str(res.status), res.gap
    if repairs:
        # the first (relaxed) solve's admitted jobs bound the true optimum from above
        relaxed_optimal = first_status == "OPTIMAL"
        if not (relaxed_optimal and len(placements) >= first_jobs and status == "OPTIMAL"):
            status = "FEASIBLE"
            gap = (
                round((first_jobs - len(placements)) / first_jobs, 6)
                if first_jobs and relaxed_optimal
                else gap
            )
    rec = EpochRecord(
        index=index,
        time=now,
        pending_jobs=len(pending),
        greedy_gpus=gpus_of(jobs, {k: jobs[k].gang for k in greedy}),
        exact_gpus=gpus_of(jobs, {k: len(v) for k, v in placements.items()}),
        greedy_jobs=len(greedy),
        exact_jobs=len(placements),
        status=status,
        gap=gap,
        wall_s=round(wall, 3),
        exact_gpus_untried=0
        if tried is None
        else gpus_of(jobs, {k: len(v) for k, v in placements.items() if k not in tried}),
        repairs=repairs,
    )
    chosen = {k: [devs[k][i] for i in sorted(devs[k])] for k in placements if k in devs}
    return EpochSolve(rec, placements, cluster, res, chosen)


def movable_bound(
    nodes: tuple[Node, ...],
    jobs: list[ReplayJob],
    running: dict[int, list[str]],
    pending: list[int],
    placed: dict[int, list[str]],
    *,
    time_limit: float,
    seed: int,
    placer=None,
) -> MovableBound:
    """Item 4c: the epoch with running pods movable. Every job of ``running`` becomes a pending
    job one priority above every pending job, so the first tier of the exact objective (entities
    admitted per priority, highest first) keeps them all running (their current placement is the
    hint and proves it at once), and the next tiers count the pending jobs that could start with
    them anywhere: no placement history, only the nodes and the running set. ``placed``
    (pending job -> nodes, e.g. the policy's own answer at this epoch) joins the hint."""
    from dataclasses import replace

    from gangplan.models.objective import admitted_tier
    from gangplan.solver.exact import solve_exact

    top = max((jobs[k].priority for k in pending), default=0) + 1
    boosted = list(jobs)
    for k in running:
        boosted[k] = replace(
            jobs[k], priority=top, min_count=len(running[k]), workers=len(running[k])
        )
    keys = sorted(running) + sorted(pending)
    cluster = epoch_cluster(nodes, boosted, {}, keys, source="<movable bound>", placer=placer)
    hint = _hint(boosted, {**running, **placed}, keys)
    res = solve_exact(
        cluster,
        time_limit=time_limit,
        workers=1,
        seed=seed,
        hint=hint,
        preemption=False,
        objective=EPOCH_OBJECTIVE,
    )
    counts: dict[int, int] = {}
    for key, o in res.pods.items():
        if o.node is not None and not o.nominated:
            k, _ = _job_of(key)
            counts[k] = counts.get(k, 0) + 1
    admitted = [k for k in pending if counts.get(k, 0) >= jobs[k].gang]
    if len([k for k in running if counts.get(k, 0) >= len(running[k])]) < len(running):
        raise AssertionError(
            "movable bound: the running jobs no longer all run (their placement was the hint)"
        )
    tiers = [admitted_tier(p) for p in sorted({jobs[k].priority for k in pending}, reverse=True)]
    bound = (
        sum(int(round(res.bound.get(t, res.objective.get(t, 0)))) for t in tiers)
        if str(res.status) != "OPTIMAL"
        else len(admitted)
    )
    return MovableBound(
        jobs=len(admitted),
        jobs_bound=max(bound, len(admitted)),
        gpus=gpus_of(jobs, {k: counts[k] for k in admitted}),
        status=str(res.status),
    )


@dataclass
class Shadow:
    """Per-epoch exact solves of one timed run; ``export`` = (epoch index, directory);
    ``movable``: also the bound with running pods movable (:func:`movable_bound`) per epoch."""

    time_limit: float = 2.0
    epoch: float | None = None
    seed: int = 0
    export: tuple[int, str] | None = None
    movable: bool = False
    records: list[EpochRecord] = field(default_factory=list)
    _window: int | None = None
    exported: str | None = None

    def check(self, jobs: list[ReplayJob], source: str, policy: str = "shadow") -> None:
        """Nothing is refused any more: GPU-sharing traces are written with DRA consumable
        capacity (module docstring), and the one path that still sees whole GPUs (the timed run's
        preemption) is off on such traces (:mod:`gangplan.replay.timed`). Kept for callers."""
        return None

    def due(self, now: float, pending: int) -> bool:
        if not pending:
            return False
        if self.epoch is None:
            return True
        w = math.floor(now / self.epoch)
        if w == self._window:
            return False
        self._window = w
        return True

    def export_path(self, index: int) -> str | None:
        if self.export is not None and self.export[0] == index:
            from pathlib import Path

            path = str(Path(self.export[1]) / f"epoch-{index}.yaml")
            self.exported = path
            return path
        return None

    def record(
        self,
        rec: EpochRecord,
        nodes: tuple[Node, ...],
        jobs: list[ReplayJob],
        running: dict[int, list[str]],
        pending: list[int],
        placed: dict[int, list[str]],
        placer=None,
    ) -> EpochRecord:
        """Keep ``rec``, with the movable bound when asked (``placed``: the answer at this epoch)."""
        if self.movable:
            if len(placed) == len(
                pending
            ):  # every pending job starts: nothing above it, by counting
                mb = MovableBound(
                    jobs=len(placed),
                    jobs_bound=len(placed),
                    gpus=gpus_of(jobs, {k: len(v) for k, v in placed.items()}),
                    status="OPTIMAL",
                )
            else:
                mb = movable_bound(
                    nodes,
                    jobs,
                    running,
                    pending,
                    placed,
                    time_limit=self.time_limit,
                    seed=self.seed,
                    placer=placer,
                )
            rec.movable_jobs, rec.movable_jobs_bound, rec.movable_gpus, rec.movable_status = (
                mb.jobs,
                mb.jobs_bound,
                mb.gpus,
                mb.status,
            )
        self.records.append(rec)
        return rec

    def solve(
        self,
        now: float,
        nodes: tuple[Node, ...],
        jobs: list[ReplayJob],
        running: dict[int, list[str]],
        pending: list[int],
        greedy: dict[int, list[str]],
        tried: set[int] | None = None,
        placer=None,
    ) -> EpochRecord:
        """``greedy``: job index -> nodes, the jobs of ``pending`` greedy placed at ``now``;
        ``tried``: the jobs greedy attempted at ``now`` (None: all of ``pending``)."""
        index = len(self.records)
        devices = None
        if sharing(jobs):
            # the timed run's placer (the owner of ``nodes``): its running pods keep their devices
            # through greedy's round (no preemption on a sharing trace), so they are read now
            if placer is None:
                raise ValueError(
                    "shadow on a GPU-sharing trace: no live placer owns these nodes (the devices of running pods are unknown)"
                )
            devices = {k: placer.devices_of_job(f"j{k}") for k in running if jobs[k].gpu}
        es = solve_epoch(
            now,
            index,
            nodes,
            jobs,
            running,
            pending,
            greedy,
            time_limit=self.time_limit,
            seed=self.seed,
            tried=tried,
            export=self.export_path(index),
            devices=devices,
            placer=placer,
        )
        self.last_result = (es.cluster, es.result)
        return self.record(es.record, nodes, jobs, running, pending, es.placements, placer=placer)


__all__ = [
    "DEVICE_CLASS",
    "DRIVER",
    "EpochRecord",
    "EpochSolve",
    "MovableBound",
    "Shadow",
    "as_gpus",
    "device_index",
    "epoch_cluster",
    "epoch_group",
    "epoch_objects",
    "epoch_pod",
    "gpus_of",
    "movable_bound",
    "node_object",
    "sharing",
    "solve_epoch",
    "write_epoch",
]
