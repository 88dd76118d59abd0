"""Foreign group APIs and workload controllers, turned into the native model while loading.

The loader hands every object of these kinds to this package instead of skipping it
(:func:`claims`); before the Cluster is built, :func:`apply`

1. expands Jobs, JobSets and LeaderWorkerSets into the objects their controllers would create
   (:mod:`gangplan.io.expand`) and reads those like any snapshot object;
2. translates the foreign groups into native PodGroups / CompositePodGroups and links their pods
   (``pod_group``): scheduler-plugins coscheduling (:mod:`.coscheduling`), Volcano and its
   HyperNodes (:mod:`.volcano`), KAI-Scheduler and its Topology (:mod:`.kai`), then Kueue's TAS pod
   annotations (:mod:`.kueue`), so ``cluster.groups`` sees ordinary groups and no engine changes;
3. reads the schedulerName of the foreign scheduler on those pods as the profile's.

Each step adds ONE line per kind to ``Cluster.translations`` (shown as ``note: ...``); what is not
translated is a warning. After priorities are resolved, :func:`align` gives each translated
hierarchy one priority and preemption policy, as kube-scheduler's hierarchy validation requires:
the group's when the foreign object names a priority class (Volcano, KAI order jobs by it), else
its pods' (the highest, when they differ).
"""

from __future__ import annotations

from typing import Any

from gangplan.io import expand as _expand
from gangplan.io import kueue_workloads
from gangplan.io.foreign import coscheduling, kai, kueue, volcano
from gangplan.io.foreign.common import Env
from gangplan.models.objects import PREEMPT_LOWER_PRIORITY

# (kind, API group) -> versions read. Other versions stay "not read" warnings.
READ: dict[tuple[str, str], tuple[str, ...]] = {
    ("PodGroup", "scheduling.x-k8s.io"): ("v1alpha1",),
    ("PodGroup", "scheduling.volcano.sh"): ("v1beta1",),
    ("HyperNode", "topology.volcano.sh"): ("v1alpha1",),
    ("PodGroup", "scheduling.run.ai"): ("v2alpha2",),
    ("Topology", "kai.scheduler"): ("v1alpha1",),
    ("Job", "batch"): ("v1",),
    ("JobSet", "jobset.x-k8s.io"): ("v1alpha2",),
    ("LeaderWorkerSet", "leaderworkerset.x-k8s.io"): ("v1",),
}
FOREIGN_SCHEDULERS = {"volcano": "Volcano", "kai-scheduler": "KAI-Scheduler"}
"""Schedulers whose groupless pods are read as single pods of the profile: both give such a pod a
one-member group of its own (Volcano's PodGroup controller, KAI's pod grouper for plain pods)."""

# Workload controllers gangplan does not expand: named in a warning when none of their pods is in
# the snapshot. (kind, API group) -> what is lost.
UNEXPANDED = {
    ("ReplicaSet", "apps"): "a ReplicaSet",
    ("Deployment", "apps"): "a Deployment",
    ("StatefulSet", "apps"): "a StatefulSet",
    ("DaemonSet", "apps"): "a DaemonSet",
    ("Job", "batch.volcano.sh"): "a Volcano Job",
    ("PyTorchJob", "kubeflow.org"): "a Kubeflow PyTorchJob",
    ("TFJob", "kubeflow.org"): "a Kubeflow TFJob",
    ("MPIJob", "kubeflow.org"): "a Kubeflow MPIJob",
    ("TrainJob", "trainer.kubeflow.org"): "a Kubeflow TrainJob",
    ("RayJob", "ray.io"): "a RayJob",
    ("RayCluster", "ray.io"): "a RayCluster",
}


def api_group(api_version: Any) -> str | None:
    if not isinstance(api_version, str) or not api_version:
        return None
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def claims(kind: Any, api_version: Any) -> bool:
    """Does this package read the object? A ``Job`` without apiVersion is read as batch/v1."""
    group = api_group(api_version)
    if kind == "Job" and group is None:
        return True
    versions = READ.get((kind, group or ""))
    return versions is not None and str(api_version).rsplit("/", 1)[-1] in versions


def apply(b: Any) -> None:
    """Expand controllers, translate foreign groups (see the module docstring); fills
    ``b.translations`` and ``b.held`` and records hierarchies for :func:`align`."""
    env = Env(b)
    b.foreign_env = env
    kueue_workloads.prepare(b)  # Kueue's objects, read when the snapshot has a ClusterQueue
    objs = list(b.foreign)
    controllers = [(f, r) for f, r in objs if r.get("kind") in _expand.CONTROLLER_KINDS]
    if controllers:
        ex = _expand.expand(
            controllers,
            pods=[raw for _, raw, _ in b.pods.values()],
            workloads=b.raw_workloads,
            groups=set(b.pod_groups) | set(b.cpgs),
        )
        for kind, fld, message, name in ex.notes:
            b.note(kind, fld, message, name)
        for file, obj in ex.objects:
            b.expanded.append(obj)
            if obj["kind"] in ("Pod", "Workload", "PodGroup"):
                b.add(
                    f"{file} (expanded from {obj['metadata']['annotations']['gangplan.io/expanded-from']})",
                    obj,
                )
        env.lines += ex.lines
    # Kueue's workloads, their pods (the expanded ones included) and the pods held until admission.
    kueue_workloads.build(b)
    objs = [(f, r) for f, r in b.foreign if r.get("kind") not in _expand.CONTROLLER_KINDS]

    def of(kind: str, group: str) -> list[tuple[str, dict]]:
        return [
            (f, r)
            for f, r in objs
            if r.get("kind") == kind and api_group(r.get("apiVersion")) == group
        ]

    coscheduling.translate(env, of("PodGroup", "scheduling.x-k8s.io"))
    volcano.translate(
        env, of("PodGroup", "scheduling.volcano.sh"), of("HyperNode", "topology.volcano.sh")
    )
    kai.translate(
        env,
        of("PodGroup", "scheduling.run.ai"),
        kai.read_topologies(env, of("Topology", "kai.scheduler")),
    )
    kueue.translate(env, managed=b.kueue_pods)
    singles: dict[str, int] = {}
    for key, pod, _ in env.pods():
        if (
            pod.pod_group is None
            and pod.node_name is None
            and pod.scheduler_name in FOREIGN_SCHEDULERS
            and key not in env.held
        ):
            singles[pod.scheduler_name] = singles.get(pod.scheduler_name, 0) + 1
            env.read_as_profile(key)
    for name, n in sorted(env.renamed.items()):
        single = singles.get(name, 0)
        what = f"{n - single} pods of translated groups" if n > single else ""
        if single:
            what += (
                (" and " if what else "")
                + f"{single} pods without a group (single pods: {FOREIGN_SCHEDULERS[name]} gives each a one-member group)"
            )
        env.lines.append(
            f"read schedulerName {name!r} as the profile's ({env.profile_name!r}) for {what}"
        )
    for message in env.synthesized_labels.values():
        env.lines.append(message)
    b.translations += env.lines
    b.held.update(env.held)
    _unexpanded(b)


def _unexpanded(b: Any) -> None:
    """Warn about workload controllers of the snapshot that have no pod in it."""
    owners: set[tuple[str, str, str]] = set()
    for _, raw, _ in b.pods.values():
        meta = raw.get("metadata") or {}
        for o in meta.get("ownerReferences") or ():
            if isinstance(o, dict):
                owners.add(
                    (
                        str(meta.get("namespace") or "default"),
                        str(o.get("kind")),
                        str(o.get("name")),
                    )
                )
    rs_owners = {}

    def meta_of(raw: dict) -> dict:
        return raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}

    for raw in b.controllers:
        meta = meta_of(raw)
        if raw.get("kind") == "ReplicaSet":
            for o in (
                meta.get("ownerReferences") if isinstance(meta.get("ownerReferences"), list) else ()
            ):
                if isinstance(o, dict) and o.get("kind") == "Deployment":
                    rs_owners.setdefault(
                        (str(meta.get("namespace") or "default"), str(o.get("name"))), []
                    ).append(str(meta.get("name")))
    for raw in b.controllers:
        meta = meta_of(raw)
        ns, name, kind = (
            str(meta.get("namespace") or "default"),
            str(meta.get("name", "?")),
            str(raw.get("kind")),
        )
        have = (ns, kind, name) in owners
        if kind == "Deployment":
            have = (
                have
                or any((ns, "ReplicaSet", rs) in owners for rs in rs_owners.get((ns, name), ()))
                or any(
                    o[0] == ns and o[1] == "ReplicaSet" and o[2].startswith(name + "-")
                    for o in owners
                )
            )
        if kind == "StatefulSet" and not have:
            have = any(o[0] == ns and o[1] == "StatefulSet" and o[2] == name for o in owners)
        replicas = (
            (raw.get("spec") or {}).get("replicas") if isinstance(raw.get("spec"), dict) else None
        )
        if have or replicas == 0:
            continue
        what = UNEXPANDED[(kind, api_group(raw.get("apiVersion")) or "")]
        b.note(
            f"{kind} ({raw.get('apiVersion')})",
            "",
            f"not read: {what} without pods in the snapshot; gangplan does not expand it (only pods in the snapshot are scheduled)",
            f"{ns}/{name}",
        )


def align(b: Any, pods: list, groups: dict, cpgs: dict) -> tuple[list, dict, dict]:
    """One priority and preemption policy per translated hierarchy (see the module docstring)."""
    env: Env | None = getattr(b, "foreign_env", None)
    if env is None or not env.hierarchies:
        return pods, groups, cpgs
    index = {p.key: i for i, p in enumerate(pods)}
    adopted = 0
    for h in env.hierarchies:
        root = groups.get(h.root) or cpgs.get(h.root)
        members = [pods[index[k]] for k in h.pods if k in index]
        if root is None:
            continue
        if h.from_group or not members:
            prio, policy = root.priority, root.preemption_policy or PREEMPT_LOWER_PRIORITY
        else:
            top = max(members, key=lambda p: p.priority)
            prio, policy = top.priority, top.preemption_policy
        for k in h.keys:
            store = groups if k in groups else cpgs
            g = store[k]
            if g.priority != prio or (g.preemption_policy or PREEMPT_LOWER_PRIORITY) != policy:
                store[k] = g.model_copy(update={"priority": prio, "preemption_policy": policy})
        for p in members:
            if p.priority != prio or p.preemption_policy != policy:
                pods[index[p.key]] = p.model_copy(
                    update={"priority": prio, "preemption_policy": policy}
                )
                adopted += 1
    if adopted:
        b.translations.append(
            f"{adopted} pods of translated groups take their group's priority and preemption policy "
            "(a native hierarchy has one; the group's priorityClassName where the foreign object names one, else the highest of its pods)"
        )
    return pods, groups, cpgs
