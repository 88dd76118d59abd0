"""Kubernetes objects as plain dicts, in the snapshot format, and what every generator shares.

The builders (:func:`node_object`, :func:`pod_object`, :func:`pod_group_object`, ...) are the small
fluent-free equivalents of upstream's ``pkg/scheduler/testing/wrappers.go``: each returns the dict a
YAML snapshot would hold (``apiVersion``/``kind``/``metadata``/``spec``/``status``), so a generated
instance can be written with :func:`gangplan.io.writer.write_snapshot` and read back by
``gangplan`` exactly like a hand-written one, or loaded in memory with :func:`to_cluster`.
Generators draw from :func:`seeded_rng` (``numpy.random.default_rng([seed, stream])``, a stream
id per generator): the same arguments give the same objects in the same order, byte for byte
once written.

The generators built on these: :mod:`gangplan.bench.generators.scheduler_perf` (upstream's gang
benchmarks), :mod:`gangplan.bench.generators.gpu_clusters` (the exact engine's scaling family),
:mod:`gangplan.bench.generators.small_snapshots` (small random snapshots for property tests),
:mod:`gangplan.bench.generators.topology_shapes` (GB200 / DGX / TAS shapes) and the bench suite families
of :mod:`gangplan.bench.generators.families`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import numpy as np

from gangplan.io.loader import load_objects
from gangplan.models.cluster import Cluster
from gangplan.models.well_known import GPU

Obj = dict[str, Any]
Quantity = str | int

POD_GROUP_API = "scheduling.k8s.io/v1beta1"
SCHEDULER_CONFIG_API = "kubescheduler.config.k8s.io/v1"
KUEUE_TOPOLOGY_API = "kueue.x-k8s.io/v1beta2"

BASE_TIME = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)
"""creationTimestamp of the first generated object; later objects are one second apart."""


def timestamp(seconds: int) -> str:
    """RFC 3339 time ``seconds`` after :data:`BASE_TIME` (the queue orders by it)."""
    return (BASE_TIME + timedelta(seconds=int(seconds))).strftime("%Y-%m-%dT%H:%M:%SZ")


def seeded_rng(seed: int, stream: int) -> np.random.Generator:
    """The generator of one draw: ``stream`` keeps different generators independent for one seed."""
    return np.random.default_rng([int(seed), stream])


def to_cluster(objects: list[Obj], source: str = "<generated>") -> Cluster:
    """Load generated objects into a Cluster without a YAML round trip (same rules as files)."""
    return load_objects(objects, source=source)


# ---- object builders --------------------------------------------------------------------------
def node_object(
    name: str,
    *,
    cpu: Quantity = "4",
    memory: Quantity = "32Gi",
    pods: int = 110,
    gpus: int = 0,
    extra: Mapping[str, Quantity] | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Iterable[Mapping[str, str]] = (),
    unschedulable: bool = False,
) -> Obj:
    """A v1 Node; the defaults are scheduler_perf's ``templates/node-default.yaml`` (4 CPU, 32Gi, 110 pods)."""
    allocatable: dict[str, str] = {"cpu": str(cpu), "memory": str(memory), "pods": str(pods)}
    if gpus:
        allocatable[GPU] = str(gpus)
    for k, v in (extra or {}).items():
        allocatable[k] = str(v)
    obj: Obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
    if labels:
        obj["metadata"]["labels"] = dict(labels)
    spec: Obj = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    if spec:
        obj["spec"] = spec
    obj["status"] = {"capacity": dict(allocatable), "allocatable": allocatable}
    return obj


def pod_object(
    name: str,
    *,
    namespace: str = "default",
    requests: Mapping[str, Quantity] | None = None,
    group: str | None = None,
    node_name: str | None = None,
    priority: int | None = None,
    priority_class: str | None = None,
    labels: Mapping[str, str] | None = None,
    node_selector: Mapping[str, str] | None = None,
    tolerations: Iterable[Mapping[str, str]] = (),
    affinity: Mapping[str, Any] | None = None,
    host_ports: Iterable[int] = (),
    topology_spread: Iterable[Mapping[str, Any]] = (),
    created: int | str | None = None,
    image: str = "registry.k8s.io/pause:3.10",
    owner: tuple[str, str] | None = None,
) -> Obj:
    """A v1 Pod with one container. A pod with ``node_name`` is written as bound and Running.
    ``owner``: (kind, name) of its controller (``metadata.ownerReferences``, ``apps/v1`` for a
    ReplicaSet / StatefulSet / DaemonSet, ``batch/v1`` for a Job).

    Extended resources (``nvidia.com/gpu``) get a limit equal to the request, as the API requires.
    ``created`` is seconds after :data:`BASE_TIME` or a ready RFC 3339 string.
    """
    meta: Obj = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = dict(labels)
    if created is not None:
        meta["creationTimestamp"] = created if isinstance(created, str) else timestamp(created)
    if owner is not None:
        kind, oname = owner
        api = {"Job": "batch/v1", "JobSet": "jobset.x-k8s.io/v1alpha2"}.get(kind, "apps/v1")
        if kind == "LeaderWorkerSet":
            api = "leaderworkerset.x-k8s.io/v1"
        meta["ownerReferences"] = [
            {
                "apiVersion": api,
                "kind": kind,
                "name": oname,
                "uid": f"uid-{oname}",
                "controller": True,
            }
        ]
    container: Obj = {"name": "main", "image": image}
    reqs = {k: str(v) for k, v in (requests or {}).items()}
    if reqs:
        container["resources"] = {"requests": reqs}
        ext = {k: v for k, v in reqs.items() if "/" in k}
        if ext:
            container["resources"]["limits"] = ext
    ports = [{"containerPort": p, "hostPort": p, "protocol": "TCP"} for p in host_ports]
    if ports:
        container["ports"] = ports
    spec: Obj = {}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    if node_name is not None:
        spec["nodeName"] = node_name
    if priority_class is not None:
        spec["priorityClassName"] = priority_class
    if priority is not None:
        spec["priority"] = int(priority)
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    tolerations = [dict(t) for t in tolerations]
    if tolerations:
        spec["tolerations"] = tolerations
    if affinity:
        spec["affinity"] = dict(affinity)
    spread = [dict(s) for s in topology_spread]
    if spread:
        spec["topologySpreadConstraints"] = spread
    spec["containers"] = [container]
    obj: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    obj["status"] = {"phase": "Running"} if node_name is not None else {"phase": "Pending"}
    return obj


def pod_group_object(
    name: str,
    *,
    namespace: str = "default",
    policy: Literal["gang", "basic"] = "gang",
    min_count: int = 1,
    priority: int | None = None,
    priority_class: str | None = None,
    topology_key: str | None = None,
    parent: str | None = None,
    annotations: Mapping[str, str] | None = None,
    created: int | str | None = None,
) -> Obj:
    """A ``scheduling.k8s.io/v1beta1`` PodGroup (``schedulingPolicy.gang.minCount`` or ``basic``)."""
    meta: Obj = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = dict(annotations)
    if created is not None:
        meta["creationTimestamp"] = created if isinstance(created, str) else timestamp(created)
    spec: Obj = {
        "schedulingPolicy": {"gang": {"minCount": int(min_count)}}
        if policy == "gang"
        else {"basic": {}}
    }
    if priority_class is not None:
        spec["priorityClassName"] = priority_class
    if priority is not None:
        spec["priority"] = int(priority)
    if topology_key is not None:
        spec["schedulingConstraints"] = {"topology": [{"key": topology_key}]}
    if parent is not None:
        spec["parentCompositePodGroupName"] = parent
    return {"apiVersion": POD_GROUP_API, "kind": "PodGroup", "metadata": meta, "spec": spec}


def composite_pod_group_object(
    name: str,
    *,
    namespace: str = "default",
    policy: Literal["gang", "basic"] = "gang",
    min_group_count: int = 1,
    priority: int | None = None,
    topology_key: str | None = None,
    parent: str | None = None,
    annotations: Mapping[str, str] | None = None,
    created: int | str | None = None,
) -> Obj:
    """A CompositePodGroup (KEP-6012): a parent needing ``minGroupCount`` admitted children."""
    obj = pod_group_object(
        name,
        namespace=namespace,
        policy=policy,
        min_count=min_group_count,
        priority=priority,
        topology_key=topology_key,
        parent=parent,
        annotations=annotations,
        created=created,
    )
    obj["kind"] = "CompositePodGroup"
    obj["apiVersion"] = (
        "scheduling.k8s.io/v1alpha3"  # the only version that serves CompositePodGroup
    )
    if policy == "gang":
        obj["spec"]["schedulingPolicy"] = {"gang": {"minGroupCount": int(min_group_count)}}
    return obj


def priority_class_object(name: str, value: int, *, global_default: bool = False) -> Obj:
    """A ``scheduling.k8s.io/v1`` PriorityClass."""
    obj: Obj = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": int(value),
    }
    if global_default:
        obj["globalDefault"] = True
    return obj


def scheduler_config_object(*, percentage_of_nodes_to_score: int | None = None) -> Obj:
    """A KubeSchedulerConfiguration with the default profile (and optionally the sampling knob)."""
    obj: Obj = {"apiVersion": SCHEDULER_CONFIG_API, "kind": "KubeSchedulerConfiguration"}
    if percentage_of_nodes_to_score is not None:
        obj["percentageOfNodesToScore"] = int(percentage_of_nodes_to_score)
    obj["profiles"] = [{"schedulerName": "default-scheduler"}]
    return obj


def topology_object(name: str, levels: Sequence[str]) -> Obj:
    """A Kueue ``Topology``: node label keys from the coarsest level to the finest."""
    return {
        "apiVersion": KUEUE_TOPOLOGY_API,
        "kind": "Topology",
        "metadata": {"name": name},
        "spec": {"levels": [{"nodeLabel": k} for k in levels]},
    }


PREEMPTIBLE_CLASS = "preemptible"


def preemptible_load(objs: list[Obj], seed: int, share: float = 0.3) -> list[Obj]:
    """``objs`` with the bound pods of a seeded ``share`` of the nodes moved to the PriorityClass
    ``preemptible`` (value 0, below every pending pod): a cluster where workload-aware preemption
    has many candidate units per failed gang (``benchmarks/preemption_scaling.py`` and the
    greedy goldens' ``draw__preemptible_*``). Changes ``objs`` in place and returns it."""
    names = [o["metadata"]["name"] for o in objs if o["kind"] == "Node"]
    rng = np.random.default_rng([seed, 11])
    chosen = set(rng.choice(names, size=int(len(names) * share), replace=False).tolist())
    objs.append(priority_class_object(PREEMPTIBLE_CLASS, 0))
    for o in objs:
        if o["kind"] == "Pod" and o["spec"].get("nodeName") in chosen:
            o["spec"].pop("priority", None)
            o["spec"]["priorityClassName"] = PREEMPTIBLE_CLASS
    return objs


__all__ = [
    "BASE_TIME",
    "KUEUE_TOPOLOGY_API",
    "POD_GROUP_API",
    "PREEMPTIBLE_CLASS",
    "SCHEDULER_CONFIG_API",
    "Obj",
    "composite_pod_group_object",
    "node_object",
    "pod_group_object",
    "pod_object",
    "preemptible_load",
    "priority_class_object",
    "scheduler_config_object",
    "seeded_rng",
    "timestamp",
    "to_cluster",
    "topology_object",
]
