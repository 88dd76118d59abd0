"""scheduler-plugins coscheduling ``PodGroup`` (``scheduling.x-k8s.io/v1alpha1``) -> native gangs.

Sources (kubernetes-sigs/scheduler-plugins @ 903da7df82cb8794dda8f2d510ba1156111662dd,
docs/upstream-foreign-apis.md §1): ``apis/scheduling/v1alpha1/types.go`` (``minMember``,
``minResources``, ``scheduleTimeoutSeconds``), ``pkg/coscheduling/core/core.go`` (PreFilter rejects
while fewer than ``minMember`` pods carry the label; Permit waits for ``minMember`` assigned pods;
a labelled pod without its PodGroup is denied, ``PodGroupNotFound``), ``pkg/util/podgroup.go``
(label ``scheduling.x-k8s.io/pod-group``), the Helm chart (scheduler ``scheduler-plugins-scheduler``).

Translation: one gang PodGroup per coscheduling PodGroup, same namespace and name (suffixed
``-coscheduling`` if a native group has that name), ``gang.minCount = max(minMember, 1)``; pods
labelled with its name join it; a labelled pod whose PodGroup is missing waits (gated), as
coscheduling never lets it run. ``scheduleTimeoutSeconds`` (Permit timing) is ignored;
``minResources`` (an aggregate PreFilter pre-check) is ignored, with a warning when it asks for
more than the ``minMember`` smallest pods of the group request, because then coscheduling rejects
the group where native scheduling may admit it.
"""

from __future__ import annotations

from gangplan.io.fields import Ctx
from gangplan.io.foreign.common import Env, Hierarchy, read_objects
from gangplan.models.objects import PodGroup

API = "scheduling.x-k8s.io/v1alpha1"
LABEL = "scheduling.x-k8s.io/pod-group"
SCHEDULERS = ("scheduler-plugins-scheduler",)
_KNOWN = {"minMember", "minResources", "scheduleTimeoutSeconds"}


def translate(env: Env, objects: list[tuple[str, dict]]) -> None:
    if not objects:
        return
    by_name: dict[tuple[str, str], tuple[str, Ctx, int, dict[str, int]]] = {}
    names = []
    for obj in read_objects(objects, "PodGroup", API):
        file, ctx, m, ns, name, spec = (
            obj.file,
            obj.ctx,
            obj.meta,
            obj.namespace,
            obj.name,
            obj.spec,
        )
        min_member = ctx.int32(spec.get("minMember"), "spec.minMember", minimum=0)
        min_res = ctx.resources(spec.get("minResources"), "spec.minResources")
        ctx.int32(spec.get("scheduleTimeoutSeconds"), "spec.scheduleTimeoutSeconds", minimum=0)
        for k in sorted(set(spec) - _KNOWN):
            env.note(f"PodGroup ({API})", f"spec.{k}", "unknown field: not read", f"{ns}/{name}")
        native = env.free_name(ns, name, "coscheduling")
        pg = PodGroup(
            namespace=ns,
            name=native,
            uid=ctx.str(m.get("uid"), "metadata.uid"),
            policy="gang",
            min_count=max(min_member, 1),
            creation_timestamp=ctx.str(m.get("creationTimestamp"), "metadata.creationTimestamp"),
            annotations=ctx.str_map(m.get("annotations"), "metadata.annotations"),
            api_version=API,
            source=file,
        )
        env.add(pg, ctx)
        env.hierarchies.append(Hierarchy(root=pg.key, keys=[pg.key]))
        by_name[(ns, name)] = (native, ctx, max(min_member, 1), min_res)
        names.append(f"{ns}/{name}")
    members: dict[tuple[str, str], list] = {}
    for key, pod, _raw in env.pods():
        value = pod.labels.get(LABEL)
        if not value:
            continue
        if pod.pod_group is not None:
            env.note(
                "Pod",
                f"metadata.labels.{LABEL}",
                "ignored: the pod already names a native PodGroup (spec.schedulingGroup)",
                key,
            )
            continue
        target = by_name.get((pod.namespace, value))
        if target is None:
            if pod.node_name is None:
                env.held[key] = (
                    f"coscheduling PodGroup {pod.namespace}/{value} not found (coscheduling denies the pod at Permit: PodGroupNotFound)"
                )
            continue
        env.link(key, target[0], SCHEDULERS)
        members.setdefault((pod.namespace, value), []).append(pod)
        next(h for h in env.hierarchies if h.root == f"{pod.namespace}/{target[0]}").pods.append(
            key
        )
    for (ns, name), (_native, _ctx, count, min_res) in by_name.items():
        pods = members.get((ns, name), [])
        for r, want in sorted(min_res.items()):
            have = (
                sum(sorted(p.requests.get(r, 0) for p in pods)[:count]) if len(pods) >= count else 0
            )
            if want > have:
                env.note(
                    f"PodGroup ({API})",
                    f"spec.minResources.{r}",
                    "not modelled: coscheduling rejects the group unless the free capacity of all nodes covers minResources, which asks for more than its minMember smallest pods request",
                    f"{ns}/{name}",
                )
                break
    env.lines.append(
        f"translated {len(by_name)} PodGroup ({API}) -> native gang PodGroups: minMember -> gang minCount, "
        f"pods by label {LABEL}; minResources, scheduleTimeoutSeconds ignored: {', '.join(names[:3])}{', ...' if len(names) > 3 else ''}"
    )
