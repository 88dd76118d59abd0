"""Kueue Topology-Aware Scheduling pod annotations -> a gang with a topology constraint.

Sources (kubernetes-sigs/kueue @ ff69552e79ad21652c36caa97038382e55625cf7, docs/upstream-foreign-apis.md
§4): ``site/content/en/docs/concepts/topology_aware_scheduling.md`` (required: all pods of the PodSet
in one domain of the level, else the workload waits; preferred: that level, then each higher level,
then distributed; domains are paths of label values, "two nodes with the same rack label, but in
different blocks"), ``apis/kueue/v1beta2/topology_types.go``, ``pkg/controller/jobs/pod/constants``
(plain-pod groups: label ``kueue.x-k8s.io/pod-group-name``).

Kueue admits a PodSet (a Job's pods, count = parallelism) as a whole, so the pods that carry
``kueue.x-k8s.io/podset-required-topology`` or ``podset-preferred-topology`` and belong to one
PodSet (same namespace and controller owner, or the same ``kueue.x-k8s.io/pod-group-name``) become
one gang: ``minCount`` = the PodSet's pods, required level -> ``schedulingConstraints.topology``
(a synthesized path label where the level's values repeat under different parents,
:meth:`~gangplan.io.foreign.common.Env.level_key`, levels from the Kueue ``Topology`` that lists
the level), preferred level -> ``gangplan.io/preferred-topology``. Pods without a group get a new
PodGroup ``<owner>-<podset>`` (the PodSet name from ``kueue.x-k8s.io/podset``, else ``main``); pods
that all form one native PodGroup (the Job controller's basic group, say) have it made a gang of the
PodSet with the constraint, unless it already has another topology key (warned). Slices
(``podset-slice-*``) and ``podset-group-name`` are not translated (warned). Without a ClusterQueue the quota
objects (ClusterQueue, LocalQueue, ResourceFlavor, Workload) stay in the warnings; with one, the pods
of Kueue's workloads are left to Kueue (:mod:`gangplan.io.kueue_workloads`) and not translated.
"""

from __future__ import annotations

from gangplan.io.foreign.common import PREFERRED, Env, Hierarchy
from gangplan.models.objects import PodGroup

REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_KUEUE = "kueue.x-k8s.io/podset-preferred-topology"
POD_GROUP = "kueue.x-k8s.io/pod-group-name"
PODSET = "kueue.x-k8s.io/podset"
_UNTRANSLATED = (
    "kueue.x-k8s.io/podset-slice-required-topology",
    "kueue.x-k8s.io/podset-slice-size",
    "kueue.x-k8s.io/podset-slice-required-topology-constraints",
    "kueue.x-k8s.io/podset-group-name",
)


def translate(env: Env, managed: frozenset[str] | set[str] = frozenset()) -> None:
    """``managed``: pods of Kueue workloads when the snapshot has a ClusterQueue
    (:mod:`gangplan.io.kueue_workloads`): Kueue places them, their annotations are read there."""
    podsets: dict[tuple[str, str, str], list[str]] = {}
    for key, pod, raw in env.pods():
        if REQUIRED not in pod.annotations and PREFERRED_KUEUE not in pod.annotations:
            continue
        if key in managed:
            continue
        for a in _UNTRANSLATED:
            if a in pod.annotations:
                env.note(
                    "Pod",
                    f"metadata.annotations.{a}",
                    "Kueue TAS slices and PodSet groups are not translated",
                    key,
                )
        meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
        owner = next(
            (
                o
                for o in meta.get("ownerReferences") or ()
                if isinstance(o, dict) and o.get("controller")
            ),
            None,
        )
        if pod.labels.get(POD_GROUP):
            ident = pod.labels[POD_GROUP]
        elif owner is not None:
            ident = str(owner.get("name"))
        else:
            ident = pod.name
        kind = (
            "PodGroupName"
            if pod.labels.get(POD_GROUP)
            else str(owner.get("kind"))
            if owner is not None
            else "Pod"
        )
        podsets.setdefault((pod.namespace, kind, ident, pod.labels.get(PODSET, "main")), []).append(
            key
        )
    if not podsets:
        return
    made = changed = 0
    names: list[str] = []
    levels_of = [t.levels for t in env.b.topologies.values()]
    members: dict[str, int] = {}
    for _, p, _ in env.pods():
        if p.group_key:
            members[p.group_key] = members.get(p.group_key, 0) + 1
    for (ns, _kind, ident, podset), keys in sorted(podsets.items()):
        pods = [env.b.pods[k][0] for k in keys]
        ann = pods[0].annotations
        ctx = env.b.pods[keys[0]][2]
        req = ann.get(REQUIRED) or None
        pref = None if req else ann.get(PREFERRED_KUEUE) or None
        if any(
            p.annotations.get(REQUIRED) != ann.get(REQUIRED)
            or p.annotations.get(PREFERRED_KUEUE) != ann.get(PREFERRED_KUEUE)
            for p in pods
        ):
            raise ctx.fail(
                f"metadata.annotations.{REQUIRED}",
                f"the pods of Kueue PodSet {ns}/{ident} ({podset}) disagree on their topology annotations",
            )
        key = req
        if req:
            levels = next((lv for lv in levels_of if req in lv), ())
            if not levels:
                env.note(
                    "Pod",
                    f"metadata.annotations.{REQUIRED}",
                    "no Kueue Topology lists this level: domains are its plain label values",
                    keys[0],
                )
            key = env.level_key(req, levels)
        groups = {p.pod_group for p in pods}
        names.append(f"{ns}/{ident}")
        if groups == {None}:
            name = env.free_name(ns, f"{ident}-{podset}", "kueue")
            pg = PodGroup(
                namespace=ns,
                name=name,
                policy="gang",
                min_count=len(pods),
                topology_key=key,
                annotations={PREFERRED: pref} if pref else {},
                creation_timestamp=min(p.creation_timestamp for p in pods),
                api_version="kueue.x-k8s.io",
                source=ctx.file,
            )
            env.add(pg, ctx)
            for k in keys:
                env.link(k, name, ())
            env.hierarchies.append(Hierarchy(root=pg.key, keys=[pg.key], pods=list(keys)))
            made += 1
            continue
        gkey = f"{ns}/{next(iter(groups))}" if len(groups) == 1 and None not in groups else None
        entry = env.b.pod_groups.get(gkey) if gkey else None
        if entry is None or members.get(gkey, 0) != len(keys) or entry[0].parent is not None:
            env.note(
                "Pod",
                f"metadata.annotations.{REQUIRED if req else PREFERRED_KUEUE}",
                "not applied: the PodSet's pods are not exactly one native PodGroup",
                keys[0],
            )
            continue
        g, gctx = entry
        if key and g.topology_key and g.topology_key != key:
            env.note(
                "PodGroup",
                "spec.schedulingConstraints.topology",
                f"kept: Kueue's level {req} differs from the group's own topology key",
                gkey,
            )
            continue
        update: dict = {"policy": "gang", "min_count": len(pods)}
        if key:
            update["topology_key"] = key
        if pref:
            update["annotations"] = {**g.annotations, PREFERRED: pref}
        env.b.pod_groups[gkey] = (g.model_copy(update=update), gctx)
        changed += 1
    parts = []
    if made:
        parts.append(f"{made} new gang PodGroup{'s' if made != 1 else ''}")
    if changed:
        parts.append(
            f"{changed} native PodGroup{'s' if changed != 1 else ''} made a gang of the PodSet"
        )
    if parts:
        env.lines.append(
            f"translated {len(names)} Kueue TAS PodSet (pod annotations {REQUIRED} / {PREFERRED_KUEUE}) -> {', '.join(parts)}: "
            f"minCount = the PodSet's pods (Kueue admits it whole), required level -> topology key, preferred level -> {PREFERRED}: "
            f"{', '.join(names[:3])}{', ...' if len(names) > 3 else ''}"
        )
