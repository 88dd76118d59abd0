"""v1.35 gangs (``scheduling.k8s.io/v1alpha1``): pods and Workload ``spec.podGroups`` into PodGroups.

In v1.35 there is no PodGroup object. A pod joins a gang through ``spec.workloadRef {name,
podGroup, podGroupReplicaKey}``, and the Workload's ``spec.podGroups[] {name, policy: {basic: {} |
gang: {minCount}}}`` gives the policy. Pods with the same namespace and the same whole
``workloadRef`` (all three fields) form one gang instance; each replica key is a separate gang with
the entry's minCount (``pkg/scheduler/backend/workloadmanager/podgroupinfo.go`` and
``plugins/gangscheduling/gangscheduling.go``, v1.35 versions; docs/upstream-api-shapes.md §8).
PreEnqueue holds a pod back while its Workload, or the podGroups entry it names, is missing.

gangplan gives each gang instance a PodGroup named ``<workload>-<podGroup>`` (``-<replicaKey>``
appended when set), with ``api_version`` ``scheduling.k8s.io/v1alpha1`` so that hierarchy
validation, which v1.35 does not have, is skipped for it. Its priority is its first pod's (v1.35
has no group priority). It is scheduled with the workload cycle of the newest code: for a gang that
does not fit, v1.35's pod-by-pod cycles with a Permit wait end the same way (nothing binds after the
5-minute timeout); see docs/explanation/greedy-fidelity.md for where the two can differ.
"""

from __future__ import annotations

from collections.abc import Mapping

from gangplan.models.objects import Pod, PodGroup, Workload

V1ALPHA1 = "scheduling.k8s.io/v1alpha1"


def gang_name(workload: str, pod_group: str, replica_key: str) -> str:
    """The PodGroup name a v1.35 Workload's gang gets: ``<workload>-<podGroup>[-<replicaKey>]``.

    >>> gang_name("train", "workers", ""), gang_name("train", "workers", "1")
    ('train-workers', 'train-workers-1')
    """
    return f"{workload}-{pod_group}" + (f"-{replica_key}" if replica_key else "")


def synthesize(
    pods: list[Pod], workloads: Mapping[str, Workload], groups: Mapping[str, PodGroup]
) -> tuple[list[Pod], dict[str, PodGroup], dict[str, str]]:
    """(pods with ``pod_group`` set, the synthesized PodGroups by key, pods held back -> why)."""
    out_pods: list[Pod] = []
    made: dict[str, PodGroup] = {}
    held: dict[str, str] = {}
    for p in pods:
        if p.workload_ref is None or p.pod_group is not None:
            out_pods.append(p)
            continue
        wname, gname, replica = p.workload_ref
        wl = workloads.get(f"{p.namespace}/{wname}")
        entry = wl.pod_groups_v1alpha1.get(gname) if wl is not None else None
        if wl is None or entry is None:
            if p.node_name is None:
                held[p.key] = (
                    f"waiting for Workload {p.namespace}/{wname}"
                    if wl is None
                    else f"Workload {p.namespace}/{wname} has no pod group {gname!r}"
                )
            out_pods.append(p)
            continue
        name = gang_name(wname, gname, replica)
        key = f"{p.namespace}/{name}"
        if key not in made and key not in groups:
            policy, count = entry
            made[key] = PodGroup(
                namespace=p.namespace,
                name=name,
                policy=policy,
                min_count=count,
                priority=p.priority,
                workload_ref=wname,
                creation_timestamp=p.creation_timestamp,
                api_version=V1ALPHA1,
                source=wl.source,
            )
        out_pods.append(p.model_copy(update={"pod_group": name}))
    return out_pods, made, held
