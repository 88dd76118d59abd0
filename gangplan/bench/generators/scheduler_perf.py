"""The gang benchmarks of upstream's scheduler_perf, as snapshots.

:func:`scheduler_perf_gangs`, :func:`scheduler_perf_composite`,
:func:`scheduler_perf_gang_preemption` and :func:`scheduler_perf_gang_preemption_podgroups` mirror
``test/integration/scheduler_perf/`` (``podgroup/{gangscheduling,basicscheduling,tas}``, ``cpg``,
``workload_preemption``, kubernetes/kubernetes v1.37-era). A
preemption shape is written as the state after its filler pods bound. Deterministic: no random
draws.
"""

from __future__ import annotations

from typing import Literal

from gangplan.bench.generators.builders import (
    Obj,
    composite_pod_group_object,
    node_object,
    pod_group_object,
    pod_object,
    scheduler_config_object,
)
from gangplan.models.well_known import HOSTNAME, RACK, ZONE


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
        out.append(
            scheduler_config_object(percentage_of_nodes_to_score=percentage_of_nodes_to_score)
        )
    width = len(str(max(nodes - 1, 0)))
    for i in range(nodes):
        labels = None
        if nodes_per_rack:
            labels = {
                HOSTNAME: f"node-{i:0{width}d}",
                ZONE: f"zone-{i // 100}",
                RACK: f"rack-{i // nodes_per_rack}",
            }
        out.append(node_object(f"node-{i:0{width}d}", labels=labels))
    gwidth = len(str(max(gangs - 1, 0)))
    for g in range(gangs):
        out.append(
            pod_group_object(
                f"pg-{g:0{gwidth}d}",
                namespace=namespace,
                policy=policy,
                min_count=pods_per_gang,
                topology_key=topology_key,
                created=0,
            )
        )
    total = gangs * pods_per_gang
    pwidth = len(str(max(total - 1, 0)))
    for i in range(total):
        g = i // pods_per_gang
        out.append(
            pod_object(
                f"pod-{i:0{pwidth}d}",
                namespace=namespace,
                group=f"pg-{g:0{gwidth}d}",
                requests={"cpu": "100m", "memory": "100Mi"},
                labels={"pod-group": f"pg-{g:0{gwidth}d}"},
                created=1 + i,
            )
        )
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
        labels = (
            {HOSTNAME: name, ZONE: f"zone-{i // 1000}", RACK: f"rack-{i // 100}"}
            if topology
            else None
        )
        out.append(node_object(name, labels=labels))
    cwidth = len(str(max(composites - 1, 0)))
    groups: list[tuple[str, str]] = []
    for c in range(composites):
        cname = f"cpg-{c:0{cwidth}d}"
        out.append(
            composite_pod_group_object(
                cname,
                namespace=namespace,
                policy=policy,
                min_group_count=groups_per_composite,
                topology_key=ZONE if topology else None,
                created=0,
            )
        )
        for g in range(groups_per_composite):
            groups.append((f"{cname}-pg-{g}", cname))
    for gname, cname in groups:
        out.append(
            pod_group_object(
                gname,
                namespace=namespace,
                policy=policy,
                min_count=pods_per_group,
                parent=cname,
                topology_key=RACK if topology else None,
                created=0,
            )
        )
    for k, (gname, _) in enumerate(groups):
        for j in range(pods_per_group):
            out.append(
                pod_object(
                    f"{gname}-{j}",
                    namespace=namespace,
                    group=gname,
                    requests={"cpu": "100m", "memory": "100Mi"},
                    labels={"pod-group": gname},
                    created=1 + k * pods_per_group + j,
                )
            )
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
    out: list[Obj] = [
        node_object(f"node-{i:0{len(str(max(nodes - 1, 0)))}d}") for i in range(nodes)
    ]
    names = [o["metadata"]["name"] for o in out]
    for i in range(fillers):
        out.append(
            pod_object(
                f"pod-low-priority-{i}",
                namespace="gang-preempt-1",
                node_name=names[(i // per_node) % nodes],
                requests={"cpu": "40m", "memory": "100Mi"},
                priority=i,
                host_ports=[8000 + i % per_node],
                labels={"app": "blue"},
                created=0,
            )
        )
    for g in range(gangs):
        out.append(
            pod_group_object(
                f"gang-{g}",
                namespace="gang-preempt-0",
                min_count=pods_per_gang,
                priority=gang_priority,
                created=1,
            )
        )
    for i in range(gangs * pods_per_gang):
        out.append(
            pod_object(
                f"pod-gang-{i}",
                namespace="gang-preempt-0",
                group=f"gang-{i // pods_per_gang}",
                requests={"cpu": gang_cpu, "memory": "100Mi"},
                priority=gang_priority,
                created=2 + i,
            )
        )
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
            out.append(
                pod_group_object(
                    f"gang-{g}",
                    namespace=ns,
                    min_count=pods_per_gang,
                    priority=prio,
                    created=0 if bound else 1,
                )
            )
        for k in range(count * pods_per_gang):
            g = k // pods_per_gang
            out.append(
                pod_object(
                    f"pod-gang-{k}",
                    namespace=ns,
                    group=f"gang-{g}",
                    priority=prio,
                    node_name=f"node-{k % nodes:0{width}d}" if bound else None,
                    requests={"cpu": cpu, "memory": "100Mi"},
                    host_ports=[base + g],
                    created=0 if bound else 2 + k,
                )
            )
    return out


__all__ = [
    "scheduler_perf_composite",
    "scheduler_perf_gang_preemption",
    "scheduler_perf_gang_preemption_podgroups",
    "scheduler_perf_gangs",
]
