"""Deterministic instance generators: Kubernetes objects as plain dicts, in the snapshot format.

Everything here returns the dicts a YAML snapshot would hold (``apiVersion``/``kind``/``metadata``/
``spec``/``status``), so a generated instance can be written with :func:`write_snapshot` and read
back by ``gangplan`` exactly like a hand-written one, or loaded in memory with :func:`to_cluster`.
Random choices come from ``numpy.random.default_rng([seed, stream])``: the same arguments give the
same objects in the same order, byte for byte once written.

Three families:

* **object builders** (``node_object``, ``pod_object``, ``pod_group_object``, ...), the small
  fluent-free equivalents of upstream's ``pkg/scheduler/testing/wrappers.go``;
* **scheduler_perf shapes** (:func:`scheduler_perf_gangs`, :func:`scheduler_perf_composite`,
  :func:`scheduler_perf_gang_preemption`, :func:`scheduler_perf_gang_preemption_podgroups`), the
  upstream gang benchmarks of ``test/integration/scheduler_perf/`` (``podgroup/{gangscheduling,
  basicscheduling,tas}``, ``cpg``, ``workload_preemption``; ``upstream-benchmarks.md`` §0, §2.1-2.5
  for the commits read); a preemption shape is written as the state after its filler pods bound;
* **GPU clusters** (:func:`gpu_cluster`, :func:`gpu_gangs`, :func:`gpu_benchmark`), the instance
  family of ``cpsat-modeling.md`` §1 for the exact engine's scaling benchmark;
* **small mixed snapshots** (:func:`small_mixed_snapshot` over a :class:`Chooser`, :func:`small_mixed`
  from a seed): a few nodes and groups with every constraint kind, for property tests
  (``tests/strategies.py`` draws the same instances through hypothesis) and random-instance runs.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol

import numpy as np
import yaml

from gangplan.io.loader import load_objects
from gangplan.models.cluster import Cluster

Obj = dict[str, Any]
Quantity = str | int

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
RACK = "topology.kubernetes.io/rack"
GPU = "nvidia.com/gpu"
GPU_PRODUCT = "nvidia.com/gpu.product"

POD_GROUP_API = "scheduling.k8s.io/v1beta1"
SCHEDULER_CONFIG_API = "kubescheduler.config.k8s.io/v1"
KUEUE_TOPOLOGY_API = "kueue.x-k8s.io/v1beta2"

BASE_TIME = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)
"""creationTimestamp of the first generated object; later objects are one second apart."""

# Stream ids keep the random draws of different generators independent for one seed.
_STREAM_GPU_CLUSTER, _STREAM_GPU_GANGS = 1, 2


def timestamp(seconds: int) -> str:
    """RFC 3339 time ``seconds`` after :data:`BASE_TIME` (the queue orders by it)."""
    return (BASE_TIME + timedelta(seconds=int(seconds))).strftime("%Y-%m-%dT%H:%M:%SZ")


def _rng(seed: int, stream: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), stream])


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
) -> Obj:
    """A v1 Pod with one container. A pod with ``node_name`` is written as bound and Running.

    Extended resources (``nvidia.com/gpu``) get a limit equal to the request, as the API requires.
    ``created`` is seconds after :data:`BASE_TIME` or a ready RFC 3339 string.
    """
    meta: Obj = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = dict(labels)
    if created is not None:
        meta["creationTimestamp"] = created if isinstance(created, str) else timestamp(created)
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
    spec: Obj = {"schedulingPolicy": {"gang": {"minCount": int(min_count)}} if policy == "gang" else {"basic": {}}}
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
        name, namespace=namespace, policy=policy, min_count=min_group_count, priority=priority,
        topology_key=topology_key, parent=parent, annotations=annotations, created=created,
    )
    obj["kind"] = "CompositePodGroup"
    obj["apiVersion"] = "scheduling.k8s.io/v1alpha3"  # the only version that serves CompositePodGroup
    if policy == "gang":
        obj["spec"]["schedulingPolicy"] = {"gang": {"minGroupCount": int(min_group_count)}}
    return obj


def priority_class_object(name: str, value: int, *, global_default: bool = False) -> Obj:
    """A ``scheduling.k8s.io/v1`` PriorityClass."""
    obj: Obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": int(value)}
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


# ---- output -----------------------------------------------------------------------------------
def to_cluster(objects: list[Obj], source: str = "<generated>") -> Cluster:
    """Load generated objects into a Cluster without a YAML round trip (same rules as files)."""
    return load_objects(objects, source=source)


try:  # libyaml dumps large instances ~10x faster; output is identical for these plain objects.
    _Dumper = yaml.CSafeDumper  # type: ignore[attr-defined]
except AttributeError:  # pragma: no cover
    _Dumper = yaml.SafeDumper


def dump_snapshot(objects: Iterable[Obj], header: str | None = None) -> str:
    """Multi-document YAML for ``objects``, in order, keys in insertion order (deterministic)."""
    text = yaml.dump_all(list(objects), Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000)
    if header:
        text = "".join(f"# {line}\n".replace("# \n", "#\n") for line in header.splitlines()) + text
    return text


def write_snapshot(objects: Iterable[Obj], path: str | os.PathLike, header: str | None = None) -> None:
    """Write ``objects`` as one multi-document YAML file; ``header`` becomes leading comments."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(dump_snapshot(objects, header))


# ---- upstream scheduler_perf shapes -------------------------------------------------------------
def scheduler_perf_gangs(
    nodes: int = 5000,
    gangs: int = 1000,
    pods_per_gang: int = 3,
    policy: Literal["gang", "basic"] = "gang",
    percentage_of_nodes_to_score: int | None = None,
    *,
    nodes_per_rack: int | None = None,
    topology_key: str | None = None,
    namespace: str = "default",
) -> list[Obj]:
    """The PodGroup suites of scheduler_perf: default nodes, ``gangs`` groups of identical pods.

    Mirrors ``test/integration/scheduler_perf/podgroup/gangscheduling/performance-config.yaml``
    @3a1efed4 (gang) and ``podgroup/basicscheduling`` @121460de (basic): nodes are
    ``templates/node-default.yaml`` (4 CPU, 32Gi, 110 pods, no labels), member pods request 100m
    CPU and 100Mi (``gang-pod.yaml`` @736e3b68), pod ``i`` belongs to group ``i // pods_per_gang``,
    and all PodGroups are created before the pods. With ``nodes_per_rack`` the nodes get the TAS
    labels of ``podgroup/tas`` (``templates/node.yaml`` @e423d6d5): zone ``zone-(i div 100)``, rack
    ``rack-(i div nodes_per_rack)``; ``topology_key`` (e.g. :data:`RACK`) then puts every group in
    one domain (``schedulingConstraints.topology``, @4966917a).
    """
    out: list[Obj] = []
    if percentage_of_nodes_to_score is not None:
        out.append(scheduler_config_object(percentage_of_nodes_to_score=percentage_of_nodes_to_score))
    width = len(str(max(nodes - 1, 0)))
    for i in range(nodes):
        labels = None
        if nodes_per_rack:
            labels = {HOSTNAME: f"node-{i:0{width}d}", ZONE: f"zone-{i // 100}", RACK: f"rack-{i // nodes_per_rack}"}
        out.append(node_object(f"node-{i:0{width}d}", labels=labels))
    gwidth = len(str(max(gangs - 1, 0)))
    for g in range(gangs):
        out.append(pod_group_object(
            f"pg-{g:0{gwidth}d}", namespace=namespace, policy=policy, min_count=pods_per_gang,
            topology_key=topology_key, created=0,
        ))
    total = gangs * pods_per_gang
    pwidth = len(str(max(total - 1, 0)))
    for i in range(total):
        g = i // pods_per_gang
        out.append(pod_object(
            f"pod-{i:0{pwidth}d}", namespace=namespace, group=f"pg-{g:0{gwidth}d}",
            requests={"cpu": "100m", "memory": "100Mi"}, labels={"pod-group": f"pg-{g:0{gwidth}d}"},
            created=1 + i,
        ))
    return out


def scheduler_perf_composite(
    nodes: int = 100,
    composites: int = 10,
    groups_per_composite: int = 2,
    pods_per_group: int = 3,
    policy: Literal["gang", "basic"] = "gang",
    *,
    topology: bool = False,
    namespace: str = "default",
) -> list[Obj]:
    """The CompositePodGroup suites of scheduler_perf (``cpg/performance-config.yaml`` @7495ca01).

    CPGBasicScheduling / CPGGangScheduling: default nodes, ``composites`` CPGs each parent of
    ``groups_per_composite`` PodGroups of ``pods_per_group`` 100m/100Mi pods; the gang variant needs
    every child (``minGroupCount = groups_per_composite``) and every pod (``minCount``). With
    ``topology`` (CPGTopologyAwareScheduling, ``templates/tas-node.yaml`` @52619d70) nodes are
    labelled zone ``zone-(i div 1000)`` and rack ``rack-(i div 100)``, the CPG must sit in one zone
    and each child group in one rack.
    """
    out: list[Obj] = []
    width = len(str(max(nodes - 1, 0)))
    for i in range(nodes):
        name = f"node-{i:0{width}d}"
        labels = {HOSTNAME: name, ZONE: f"zone-{i // 1000}", RACK: f"rack-{i // 100}"} if topology else None
        out.append(node_object(name, labels=labels))
    cwidth = len(str(max(composites - 1, 0)))
    groups: list[tuple[str, str]] = []
    for c in range(composites):
        cname = f"cpg-{c:0{cwidth}d}"
        out.append(composite_pod_group_object(
            cname, namespace=namespace, policy=policy, min_group_count=groups_per_composite,
            topology_key=ZONE if topology else None, created=0,
        ))
        for g in range(groups_per_composite):
            groups.append((f"{cname}-pg-{g}", cname))
    for gname, cname in groups:
        out.append(pod_group_object(
            gname, namespace=namespace, policy=policy, min_count=pods_per_group, parent=cname,
            topology_key=RACK if topology else None, created=0,
        ))
    for k, (gname, _) in enumerate(groups):
        for j in range(pods_per_group):
            out.append(pod_object(
                f"{gname}-{j}", namespace=namespace, group=gname, requests={"cpu": "100m", "memory": "100Mi"},
                labels={"pod-group": gname}, created=1 + k * pods_per_group + j,
            ))
    return out


def scheduler_perf_gang_preemption(
    nodes: int = 100,
    fillers: int = 1000,
    gangs: int = 1,
    pods_per_gang: int = 100,
    gang_cpu: str = "3970m",
    gang_priority: int = 10000,
) -> list[Obj]:
    """GangPreemptionBasic (``workload_preemption/performance-config.yaml`` @0ca3eac3), already filled.

    Default nodes hold ``fillers`` low-priority pods (40m / 100Mi, priority = their index, namespace
    ``gang-preempt-1``), spread evenly the way their host ports force (``pod-low-priority.yaml``
    @3e5e3838: port ``8000 + index mod (fillers / nodes)``): filler i is bound to node
    ``i div (fillers / nodes)``. Then ``gangs`` pending gangs (``gang-pod.yaml``, ``podgroup.yaml``:
    minCount = ``pods_per_gang``, priority 10000 unless set) of ``gang_cpu`` pods in
    ``gang-preempt-0``; with 3970m a gang pod fits on a node only after every filler there is evicted.
    """
    per_node = max(fillers // max(nodes, 1), 1)
    out: list[Obj] = [node_object(f"node-{i:0{len(str(max(nodes - 1, 0)))}d}") for i in range(nodes)]
    names = [o["metadata"]["name"] for o in out]
    for i in range(fillers):
        out.append(pod_object(
            f"pod-low-priority-{i}", namespace="gang-preempt-1", node_name=names[(i // per_node) % nodes],
            requests={"cpu": "40m", "memory": "100Mi"}, priority=i, host_ports=[8000 + i % per_node],
            labels={"app": "blue"}, created=0,
        ))
    for g in range(gangs):
        out.append(pod_group_object(f"gang-{g}", namespace="gang-preempt-0", min_count=pods_per_gang, priority=gang_priority, created=1))
    for i in range(gangs * pods_per_gang):
        out.append(pod_object(
            f"pod-gang-{i}", namespace="gang-preempt-0", group=f"gang-{i // pods_per_gang}",
            requests={"cpu": gang_cpu, "memory": "100Mi"}, priority=gang_priority, created=2 + i,
        ))
    return out


def scheduler_perf_gang_preemption_podgroups(
    nodes: int = 100,
    low_gangs: int = 5,
    high_gangs: int = 1,
    pods_per_gang: int = 100,
    low_cpu: str = "600m",
    high_cpu: str = "3500m",
) -> list[Obj]:
    """GangPreemptionPodGroups (``workload_preemption/performance-config.yaml`` @0ca3eac3), filled.

    ``low_gangs`` bound gangs (priority 1000, ``low_cpu`` pods, host port ``8000 + gang``) are spread
    one pod per node per gang, as their host ports force: overall low pod k sits on node
    ``k mod nodes``. ``high_gangs`` pending gangs (priority 9999999, ``high_cpu`` pods, host port
    ``9000 + gang``) must evict them: 3500m needs every 600m pod on its node gone when 5 are there.
    """
    width = len(str(max(nodes - 1, 0)))
    out: list[Obj] = [node_object(f"node-{i:0{width}d}") for i in range(nodes)]
    for count, prio, ns, base, cpu, bound in (
        (low_gangs, 1000, "gang-preempt-1", 8000, low_cpu, True),
        (high_gangs, 9999999, "gang-preempt-0", 9000, high_cpu, False),
    ):
        for g in range(count):
            out.append(pod_group_object(f"gang-{g}", namespace=ns, min_count=pods_per_gang, priority=prio, created=0 if bound else 1))
        for k in range(count * pods_per_gang):
            g = k // pods_per_gang
            out.append(pod_object(
                f"pod-gang-{k}", namespace=ns, group=f"gang-{g}", priority=prio,
                node_name=f"node-{k % nodes:0{width}d}" if bound else None,
                requests={"cpu": cpu, "memory": "100Mi"}, host_ports=[base + g], created=0 if bound else 2 + k,
            ))
    return out


# ---- GPU clusters (cpsat-modeling.md §1) ---------------------------------------------------------
UTILISATION_PROFILES: dict[str, tuple[float, float, float]] = {
    "mixed": (0.30, 0.35, 0.35),
    "busy": (0.70, 0.20, 0.10),
}
"""Fractions of nodes that are full, partly used and idle (``cpsat-modeling.md`` §1)."""

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
        raise ValueError(f"unknown utilisation profile {profile!r}; use one of {sorted(UTILISATION_PROFILES)}")
    full_frac, part_frac, _ = UTILISATION_PROFILES[profile]
    n_full, n_part = round(n * full_frac), round(n * part_frac)
    category = np.array([2] * n_full + [1] * n_part + [0] * (n - n_full - n_part))
    category = category[rng.permutation(n)]
    partial = rng.integers(1, max(gpus_per_node, 2), size=n)  # 1 .. gpus_per_node-1
    return [gpus_per_node if c == 2 else int(partial[i]) if c == 1 and gpus_per_node > 1 else 0 for i, c in enumerate(category)]


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

    The instance family of ``cpsat-modeling.md`` §1: 8-GPU / 128-core nodes, racks of 16, zones of
    8 racks, one GPU type per rack (label :data:`GPU_PRODUCT`). ``profile`` "mixed" makes 30 % of
    nodes full, 35 % partly used (1..7 GPUs) and 35 % idle; "busy" 70/20/10. Used GPUs are bound
    pods in namespace ``running`` of 8/4/2/1 GPUs (plus :data:`CPU_PER_GPU` cores and
    :data:`MEMORY_PER_GPU_GI` GiB per GPU) at priority :data:`RUNNING_PRIORITY`. Returns the
    PriorityClass, the nodes, then the bound pods (and a Kueue Topology if ``with_topology``).
    """
    rng = _rng(seed, _STREAM_GPU_CLUSTER)
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
        out.append(node_object(
            name, cpu=cpu, memory=memory, gpus=gpus_per_node,
            labels=_gpu_node_labels(name, rack, rack // racks_per_zone, rack_types[rack]),
        ))
        for j, g in enumerate(_power_of_two_parts(used[i])):
            bound.append(pod_object(
                f"run-{name}-{j}", namespace="running", node_name=name,
                requests=_gpu_pod_requests(g), priority=RUNNING_PRIORITY,
                priority_class=RUNNING_PRIORITY_CLASS, labels={"app": "running"}, created=0,
            ))
    return out + bound


def _gpu_pod_requests(gpus: int) -> dict[str, str]:
    return {"cpu": str(gpus * CPU_PER_GPU), "memory": f"{gpus * MEMORY_PER_GPU_GI}Gi", GPU: str(gpus)}


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
    rng = _rng(seed, _STREAM_GPU_GANGS)
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
        selector = {GPU_PRODUCT: str(gpu_types[int(rng.integers(0, len(gpu_types)))])} if rng.random() < selector_fraction else None
        pc = class_names[int(rng.integers(0, len(class_names)))]
        groups.append(pod_group_object(
            name, namespace=namespace, min_count=k, priority=classes[pc], priority_class=pc,
            topology_key=topology_key if same_rack else None, created=2 * g,
        ))
        for j in range(k):
            pods.append(pod_object(
                f"{name}-{j}", namespace=namespace, group=name, requests=_gpu_pod_requests(r),
                priority=classes[pc], priority_class=pc, labels={"job": name},
                node_selector=selector, created=2 * g + 1,
            ))
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

    The grid of ``cpsat-modeling.md`` §1 is nodes in {100, 1000, 5000} x pending pods in
    {64, 512, 2048} x profile in {mixed, busy}.
    """
    return gpu_cluster(nodes, profile=profile, seed=seed) + gpu_gangs(pending_pods, seed=seed, **gang_options)


# ---- small random mixed snapshots (tests, random-instance benchmarks) ----------------------------
class Chooser(Protocol):
    """Where random choices come from: a numpy Generator (:class:`SeededChooser`) or hypothesis's
    ``draw`` (``tests/strategies.py``), so seeded instances and shrinking property tests share one
    description of "a small random cluster"."""

    def integer(self, lo: int, hi: int) -> int:
        """An integer in ``lo..hi``, both included."""
        ...

    def pick(self, options: Sequence[Any]) -> Any:
        """One of ``options``; earlier options are what hypothesis shrinks towards."""
        ...


class SeededChooser:
    """A :class:`Chooser` over ``numpy.random.default_rng([seed, stream])``."""

    def __init__(self, seed: int, stream: int = 3) -> None:
        self._rng = _rng(seed, stream)

    def integer(self, lo: int, hi: int) -> int:
        return int(self._rng.integers(lo, hi + 1))

    def pick(self, options: Sequence[Any]) -> Any:
        return options[int(self._rng.integers(0, len(options)))]


SMALL_TAINTS: dict[str, dict[str, str]] = {
    "dedicated": {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
    "spot": {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
}
SMALL_TOLERATIONS: dict[str, list[dict[str, str]]] = {
    "none": [],
    "dedicated": [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
    "everything": [{"operator": "Exists"}],
}
SMALL_CONSTRAINTS = ("none", "selector", "toleration", "affinity", "anti-affinity", "host-port", "spread")
"""The kinds of constraint a small group's members may carry (one kind per group)."""

_MI = 2**20


def _small_node(c: Chooser, index: int) -> tuple[Obj, dict[str, int]]:
    """A node object and its allocatable as scheduler integers (for filling it with bound pods)."""
    name = f"n{index}"
    cpu = c.pick([1000, 2000, 4000, 8000])
    memory_mi = c.pick([1024, 2048, 4096, 8192])
    gpus = c.pick([0, 0, 2, 4, 8])
    pods = c.pick([3, 8, 110])
    labels = {HOSTNAME: name}
    if c.integer(0, 4):  # most nodes carry a zone, a few do not
        zone = c.pick(["zone-a", "zone-b"])
        labels[ZONE] = zone
        labels[RACK] = f"{zone}-rack-{c.integer(0, 1)}"
    if gpus:
        labels[GPU_PRODUCT] = c.pick(["H100", "A100"])
    taint = c.pick([None, None, None, "dedicated", "spot"])
    obj = node_object(
        name, cpu=f"{cpu}m", memory=f"{memory_mi}Mi", pods=pods, gpus=gpus, labels=labels,
        taints=[SMALL_TAINTS[taint]] if taint else (), unschedulable=c.integer(0, 7) == 0,
    )
    return obj, {"cpu": cpu, "memory": memory_mi * _MI, GPU: gpus, "pods": pods}


def _small_bound_pods(c: Chooser, node: str, free: dict[str, int], first: int) -> list[Obj]:
    """0-2 running pods on ``node`` whose requests fit what is left of its allocatable."""
    out = []
    for j in range(c.integer(0, min(2, free["pods"]))):
        cpu = c.integer(0, free["cpu"] // 250) * 250
        memory = c.integer(0, free["memory"] // (256 * _MI)) * 256 * _MI
        gpus = c.integer(0, free[GPU])
        free.update(cpu=free["cpu"] - cpu, memory=free["memory"] - memory, pods=free["pods"] - 1)
        free[GPU] -= gpus
        requests = {"cpu": f"{cpu}m", "memory": f"{memory // _MI}Mi"}
        if gpus:
            requests[GPU] = str(gpus)
        out.append(pod_object(
            f"run-{node}-{j}", node_name=node, requests=requests, labels={"app": c.pick(["a", "b"])},
            priority=c.pick([0, 5, 100]), created=first + j,
        ))
    return out


def _small_requests(c: Chooser) -> dict[str, str]:
    requests = {"cpu": f"{c.pick([100, 250, 500, 1000, 2000, 3000])}m"}
    memory = c.pick([0, 128, 512, 1024, 3072])
    if memory:
        requests["memory"] = f"{memory}Mi"
    gpus = c.pick([0, 0, 0, 1, 2, 4])
    if gpus:
        requests[GPU] = str(gpus)
    return requests


def _member_constraint(c: Chooser, kind: str, group: str, key: str) -> dict[str, Any]:
    """The :func:`pod_object` keyword arguments expressing one constraint kind among group members."""
    same_group = {"labelSelector": {"matchLabels": {"group": group}}, "topologyKey": key}
    if kind == "selector":
        return {"node_selector": c.pick([{ZONE: "zone-a"}, {GPU_PRODUCT: "H100"}, {RACK: "zone-b-rack-0"}])}
    if kind == "toleration":
        return {"tolerations": SMALL_TOLERATIONS[c.pick(["dedicated", "everything"])]}
    if kind == "affinity":
        return {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [same_group]}}}
    if kind == "anti-affinity":
        return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [same_group]}}}
    if kind == "host-port":
        return {"host_ports": [8080]}
    if kind == "spread":
        spread = {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"group": group}}}
        return {"topology_spread": [spread]}
    return {}


def _small_pod_group(c: Chooser, index: int, first: int, max_size: int) -> list[Obj]:
    """One PodGroup and its 1..max_size pending members; most members carry the group's constraint."""
    name = f"pg{index}"
    size = c.integer(1, max_size)
    policy = c.pick(["gang", "gang", "basic"])
    min_count = c.integer(1, size) if policy == "gang" else 1
    priority = c.pick([0, 10, 100])
    kind = c.pick(SMALL_CONSTRAINTS)
    key = c.pick([HOSTNAME, ZONE])
    group = pod_group_object(name, policy=policy, min_count=min_count, priority=priority, created=first)
    same_shape = c.pick([False, True])
    shared = _small_requests(c)
    members = []
    for j in range(size):
        constrained = kind != "none" and c.integer(0, 3) > 0
        extra = _member_constraint(c, kind, name, key) if constrained else {}
        members.append(pod_object(
            f"{name}-{j}", group=name, requests=shared if same_shape else _small_requests(c),
            labels={"group": name, "app": c.pick(["a", "b"])}, priority=priority, created=first + 1 + j,
            **extra,
        ))
    return [group, *members]


def _small_single_pod(c: Chooser, index: int, created: int) -> Obj:
    return pod_object(
        f"solo{index}", requests=_small_requests(c), labels={"app": c.pick(["a", "b"])},
        priority=c.pick([0, 10, 100]), tolerations=SMALL_TOLERATIONS[c.pick(["none", "none", "dedicated"])],
        created=created,
    )


def small_mixed_snapshot(
    c: Chooser, *, max_nodes: int = 6, max_groups: int = 3, max_group_size: int = 4, max_singles: int = 2
) -> list[Obj]:
    """A small random snapshot: 2..max_nodes nodes, bound pods, 1..max_groups PodGroups, single pods.

    Nodes have random cpu / memory / GPUs / pod slots, most a zone and rack label, GPU nodes a GPU
    type; some are tainted (NoSchedule or PreferNoSchedule) or cordoned. Bound pods use part of the
    capacity, never more. Each PodGroup is a gang (``minCount <= size``) or basic, its pods have
    mixed or identical requests and, per group, one kind of constraint among members (nodeSelector,
    tolerations, required pod affinity / anti-affinity on hostname or zone, a host port, a
    DoNotSchedule spread). Pods carry their group's priority (beta validation, ``kep-algorithms.md``
    §1.6) and every gang has its quorum, so nothing is gated.
    """
    nodes, bound = [], []
    for i in range(c.integer(2, max_nodes)):
        obj, free = _small_node(c, i)
        nodes.append(obj)
        bound += _small_bound_pods(c, obj["metadata"]["name"], free, first=10 * i)
    groups: list[Obj] = []
    for g in range(c.integer(1, max_groups)):
        groups += _small_pod_group(c, g, first=100 + 10 * g, max_size=max_group_size)
    singles = [_small_single_pod(c, s, 200 + s) for s in range(c.integer(0, max_singles))]
    return nodes + bound + groups + singles


def small_preemption_snapshot(ch: Chooser) -> list[Obj]:
    """A small random snapshot where preemption matters (issue 12's fuzz): 2-4 nodes (4-8 CPU, zone
    and hostname labels), 2-8 bound pods at priority 0, 10 or 50 (labels ``app: a|b``), some in
    bound gangs of two with ``disruptionMode`` single or all, a PDB over ``app: a`` half the time;
    1-3 pending entities at priority 50 or 100 (a single pod or a gang of 1-3 pods of 1-4 CPU),
    some with required anti-affinity to ``app: b`` on the hostname or affinity to ``app: a`` on
    the zone, some with ``preemptionPolicy: Never``."""
    objs: list[Obj] = []
    n_nodes = ch.integer(2, 4)
    nodes = [f"n{i}" for i in range(n_nodes)]
    free = {}
    for i, n in enumerate(nodes):
        cpu = ch.pick([4, 6, 8])
        free[n] = cpu
        objs.append(node_object(n, cpu=str(cpu), labels={HOSTNAME: n, ZONE: f"z{i % 2}"}))
    k = 0
    for b in range(ch.integer(2, 8)):
        prio = ch.pick([0, 10, 50])
        app = ch.pick(["a", "b"])
        gang = ch.integer(0, 3) == 0
        size = 2 if gang else 1
        group = None
        if gang:
            group = f"bg{b}"
            g = pod_group_object(group, min_count=2, priority=prio)
            g["spec"]["disruptionMode"] = {ch.pick(["single", "all"]): {}}
            objs.append(g)
        for _ in range(size):
            cpu = ch.integer(1, 3)
            room = [n for n in nodes if free[n] >= cpu]
            if not room:
                break
            n = ch.pick(room)
            free[n] -= cpu
            objs.append(pod_object(f"run{k}", node_name=n, priority=prio, group=group, labels={"app": app}, requests={"cpu": str(cpu)}, created=k))
            k += 1
    if ch.integer(0, 1):
        objs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb-a", "namespace": "default"},
                     "spec": {"maxUnavailable": ch.pick([0, 1]), "selector": {"matchLabels": {"app": "a"}}}})
    for e in range(ch.integer(1, 3)):
        prio = ch.pick([50, 100])
        size = ch.integer(1, 3)
        rule = ch.pick([None, None, "anti", "affinity"])
        affinity = None
        if rule == "anti":
            affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": "b"}}, "topologyKey": HOSTNAME}]}}
        elif rule == "affinity":
            affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": ZONE}]}}
        group = None
        if size > 1 or ch.integer(0, 1):
            group = f"pg{e}"
            objs.append(pod_group_object(group, min_count=size, priority=prio))
        never = ch.integer(0, 4) == 0
        for i in range(size):
            pod = pod_object(f"new{e}-{i}", priority=prio, group=group, affinity=affinity, labels={"app": "new"}, requests={"cpu": str(ch.integer(1, 4))}, created=100 + e)
            if never:
                pod["spec"]["preemptionPolicy"] = "Never"
            objs.append(pod)
        if never and group:
            objs[-size - 1]["spec"]["preemptionPolicy"] = "Never"
    return objs


def small_preemption(seed: int) -> list[Obj]:
    """:func:`small_preemption_snapshot` drawn from a seed."""
    return small_preemption_snapshot(SeededChooser(seed, stream=5))


def small_mixed(seed: int, **limits: int) -> list[Obj]:
    """:func:`small_mixed_snapshot` drawn from a seed (for benchmarks over many random instances)."""
    return small_mixed_snapshot(SeededChooser(seed), **limits)


__all__ = [
    "BASE_TIME",
    "Chooser",
    "SMALL_CONSTRAINTS",
    "SeededChooser",
    "GPU",
    "GPU_GANG_PRIORITIES",
    "GPU_PRODUCT",
    "HOSTNAME",
    "RACK",
    "RUNNING_PRIORITY",
    "RUNNING_PRIORITY_CLASS",
    "UTILISATION_PROFILES",
    "ZONE",
    "composite_pod_group_object",
    "dump_snapshot",
    "gpu_benchmark",
    "gpu_cluster",
    "gpu_gangs",
    "node_object",
    "pod_group_object",
    "pod_object",
    "priority_class_object",
    "scheduler_config_object",
    "small_mixed",
    "small_mixed_snapshot",
    "small_preemption",
    "small_preemption_snapshot",
    "scheduler_perf_composite",
    "scheduler_perf_gang_preemption",
    "scheduler_perf_gang_preemption_podgroups",
    "scheduler_perf_gangs",
    "timestamp",
    "to_cluster",
    "topology_object",
    "write_snapshot",
]
