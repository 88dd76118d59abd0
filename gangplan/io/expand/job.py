"""batch/v1 Job: the Workload, PodGroup and pending pods the v1.37 Job controller creates.

Sources (docs/upstream-foreign-apis.md §5.1):

* kubernetes/kubernetes ``pkg/controller/job/job_scheduling_manager.go`` (stored version
  06aef7c6dc70e4149c09aaaf0862f4ca29f3b3d7): ``shouldManageWorkloadForJob`` (gate
  ``WorkloadWithJob`` on; no ``spec.template.spec.schedulingGroup``; no controller owner unless it
  delegates with the annotation ``scheduling.k8s.io/group-template-name``), ``isNewJob`` (objects
  are created only for a Job that never started), ``buildWorkloadItem`` (one template
  ``<job>-pgt-0``, Basic unless ``spec.scheduling`` says otherwise, gang ``minCount`` defaulted to
  ``parallelism``), ``createPodGroup`` (spec copied from the template plus ``workloadRef``;
  controller ownerRef to the Job and, for a root Job, a non-controller ownerRef to the Workload),
  ``computeWorkloadName`` / ``computePodGroupName`` (:mod:`.naming`);
* kubernetes/api ``batch/v1/types.go`` (``JobSpec.Scheduling``) and kubernetes/enhancements
  ``keps/sig-apps/5547-integrate-workload-with-job/README.md`` @ 64765b4b (field names
  ``schedulingPolicy`` / ``schedulingConstraints``, validation ``minCount <= parallelism``, ``all``
  disruption invalid with ``basic``; a CronJob's Job is standalone);
* ``pkg/controller/job/indexed_job_utils.go`` and ``pkg/registry/batch/job/strategy.go``
  (``generateSelector``): pod names ``<job>-<5 chars>`` (NonIndexed) or ``<job>-<index>-<5 chars>``
  (Indexed), labels ``batch.kubernetes.io/job-name``, ``job-name``,
  ``batch.kubernetes.io/controller-uid``, ``controller-uid``, and for Indexed Jobs the label and
  annotation ``batch.kubernetes.io/job-completion-index`` and ``spec.hostname: <job>-<index>``.

Pods: ``min(parallelism, completions - succeeded)`` (a work queue without ``completions``:
``parallelism`` until a pod succeeded), Indexed ones taking the lowest indexes not in
``status.completedIndexes``. Where the two upstream sources disagree (a CronJob's Job: the stored
controller skips it, the KEP gives it its own Workload) the KEP is followed. The older
``policy`` / ``constraints`` names and a topology entry written ``level:`` (KEP-6089 text, the
KEP's Example 1) are read with a warning. Not reproduced: the managed-by annotation (its key is not
in the API read; gangplan marks every synthesized object with ``gangplan.io/expanded-from``
instead), the pods' ownerRef to their PodGroup, and pod failure / backoff bookkeeping.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from gangplan.io.expand.env import (
    MAX_EXPANDED,
    ExpandEnv,
    Meta,
    object_meta,
    owner_ref,
    template_parts,
)
from gangplan.io.expand.naming import generate_name, pod_group_name, workload_name
from gangplan.io.fields import Ctx

GROUP_TEMPLATE_ANNOTATION = "scheduling.k8s.io/group-template-name"
PARENT_CPG_ANNOTATION = "scheduling.k8s.io/parent-compositepodgroup"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
SCHEDULING_API = "scheduling.k8s.io/v1alpha3"  # the client the stored controller creates them with


@dataclass
class JobExpansion:
    objects: list[dict] = field(default_factory=list)
    skipped: str | None = None
    """Why nothing was expanded (pods already there, finished, suspended)."""
    groups: str = ""
    """What the controller did about groups, for the summary line."""


def _completed(ctx: Ctx, raw: Any) -> list[tuple[int, int]]:
    """``status.completedIndexes`` (``"1,3-5"``) as sorted inclusive ranges."""
    text = ctx.str(raw, "status.completedIndexes")
    out: list[tuple[int, int]] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        lo, _, hi = part.partition("-")
        try:
            out.append((int(lo), int(hi or lo)))
        except ValueError:
            raise ctx.fail(
                "status.completedIndexes", f"expected a list of indexes and ranges, got {text!r}"
            ) from None
    return sorted(out)


def _pending_indexes(done: list[tuple[int, int]], completions: int, parallelism: int) -> list[int]:
    """The first ``parallelism`` indexes below ``completions`` not in ``done``, without walking
    every index (completions may be near int32's limit)."""
    out: list[int] = []
    i = 0
    for lo, hi in [*done, (completions, completions)]:
        while i < min(lo, completions) and len(out) < parallelism:
            out.append(i)
            i += 1
        if len(out) >= parallelism or i >= completions:
            break
        i = max(i, hi + 1)
    return out


def _union(ctx: Ctx, raw: Any, fld: str, members: tuple[str, ...]) -> str:
    m = ctx.map(raw, fld)
    set_ = [k for k in members if m.get(k) is not None]
    if len(set_) != 1 or any(k not in members for k in m):
        raise ctx.fail(fld, f"must set exactly one of {', '.join(members)}")
    ctx.map(m[set_[0]], f"{fld}.{set_[0]}")
    return set_[0]


def compile_template(
    ctx: Ctx, env: ExpandEnv, meta: Meta, spec: dict, parallelism: int
) -> dict[str, Any]:
    """``spec.scheduling`` compiled into the Workload's one PodGroupTemplate (``buildWorkloadItem``)."""
    sched = ctx.map(spec.get("scheduling"), "spec.scheduling")
    tpl: dict[str, Any] = {"name": f"{meta.name}-pgt-0"}
    pol_field = "spec.scheduling.schedulingPolicy"
    pol = sched.get("schedulingPolicy")
    if pol is None and sched.get("policy") is not None:
        pol, pol_field = sched.get("policy"), "spec.scheduling.policy"
        env.note(
            "Job",
            pol_field,
            "read as spec.scheduling.schedulingPolicy (the older KEP-6089 field name)",
            f"{meta.namespace}/{meta.name}",
        )
    policy = "basic" if pol is None else _union(ctx, pol, pol_field, ("basic", "gang"))
    if policy == "gang":
        gang = ctx.map(ctx.map(pol, pol_field).get("gang"), pol_field + ".gang")
        if gang.get("minCount") is None:
            count = max(parallelism, 1)  # defaultMinCountForJob
        else:
            count = ctx.int32(gang.get("minCount"), pol_field + ".gang.minCount", minimum=1)
            if count > parallelism:
                raise ctx.fail(
                    pol_field + ".gang.minCount",
                    f"must not exceed spec.parallelism ({parallelism}), got {count}",
                )
        tpl["schedulingPolicy"] = {"gang": {"minCount": count}}
    else:
        tpl["schedulingPolicy"] = {"basic": {}}
    sc_field = "spec.scheduling.schedulingConstraints"
    sc = sched.get("schedulingConstraints")
    if sc is None and sched.get("constraints") is not None:
        sc, sc_field = sched.get("constraints"), "spec.scheduling.constraints"
        env.note(
            "Job",
            sc_field,
            "read as spec.scheduling.schedulingConstraints (the older KEP-6089 field name)",
            f"{meta.namespace}/{meta.name}",
        )
    topo = ctx.maps(ctx.map(sc, sc_field).get("topology"), sc_field + ".topology")
    if len(topo) > 1:
        raise ctx.fail(sc_field + ".topology", f"at most 1 entry is allowed, got {len(topo)}")
    if topo:
        f, t = topo[0]
        key = t.get("key")
        if key is None and t.get("level") is not None:
            key = t.get("level")
            env.note(
                "Job",
                f + ".level",
                "read as key (the API field; the KEP's Example 1 writes level)",
                f"{meta.namespace}/{meta.name}",
            )
        tpl["schedulingConstraints"] = {
            "topology": [{"key": ctx.str(key, f + ".key", required=True)}]
        }
    if sched.get("disruptionMode") is not None:
        mode = _union(
            ctx, sched.get("disruptionMode"), "spec.scheduling.disruptionMode", ("single", "all")
        )
        if mode == "all" and policy == "basic":
            raise ctx.fail(
                "spec.scheduling.disruptionMode", "all is invalid with the basic scheduling policy"
            )
        tpl["disruptionMode"] = {mode: {}}
    claims = ctx.list(sched.get("resourceClaims"), "spec.scheduling.resourceClaims")
    if claims:
        tpl["resourceClaims"] = copy.deepcopy(claims)
    return tpl


def _pod_group(
    name: str,
    meta: Meta,
    source: str,
    wl_name: str,
    template: dict,
    owners: list[dict],
    parent: str | None,
) -> dict:
    spec: dict[str, Any] = {
        "workloadRef": {"workloadName": wl_name, "templateName": template["name"]},
        "schedulingPolicy": copy.deepcopy(template.get("schedulingPolicy") or {"basic": {}}),
    }
    for k in ("schedulingConstraints", "disruptionMode", "resourceClaims"):
        if template.get(k) is not None:
            spec[k] = copy.deepcopy(template[k])
    if parent:
        spec["parentCompositePodGroupName"] = parent
    return {
        "apiVersion": SCHEDULING_API,
        "kind": "PodGroup",
        "metadata": object_meta(
            name,
            meta.namespace,
            source=source,
            owners=owners,
            creation_timestamp=meta.creation_timestamp,
            uid_kind="PodGroup",
        ),
        "spec": spec,
    }


def _delegated(ctx: Ctx, env: ExpandEnv, meta: Meta, source: str) -> tuple[dict | None, str]:
    """A non-root Job whose parent delegates its PodGroup (``getOrCreateDelegatedPodGroup``)."""
    parent = meta.controller or {}
    group = str(parent.get("apiVersion", "")).rpartition("/")[0]
    template_name = meta.annotations[GROUP_TEMPLATE_ANNOTATION]
    for wl in env.workloads:
        wm = wl.get("metadata") or {}
        ref = (wl.get("spec") or {}).get("controllerRef") or {}
        if (
            (wm.get("namespace") or "default") == meta.namespace
            and ref.get("apiGroup") == group
            and ref.get("kind") == parent.get("kind")
            and ref.get("name") == parent.get("name")
        ):
            for t in (wl.get("spec") or {}).get("podGroupTemplates") or ():
                if isinstance(t, dict) and t.get("name") == template_name:
                    wname = str(wm.get("name"))
                    owners = [owner_ref("batch/v1", "Job", meta.name, meta.uid)]
                    pg = _pod_group(
                        pod_group_name(wname, template_name),
                        meta,
                        source,
                        wname,
                        t,
                        owners,
                        meta.annotations.get(PARENT_CPG_ANNOTATION),
                    )
                    return (
                        pg,
                        f"a PodGroup for template {template_name!r} of the parent's Workload {wname}",
                    )
            return (
                None,
                f"no PodGroup: the parent's Workload {wm.get('name')} has no template {template_name!r}",
            )
    return (
        None,
        f"no PodGroup: no Workload of {parent.get('kind')} {parent.get('name')} in the snapshot",
    )


def expand_job(
    ctx: Ctx, raw: dict, env: ExpandEnv, *, meta: Meta | None = None, kueue: bool = False
) -> JobExpansion:
    """``kueue``: the Job belongs to a JobSet labelled ``kueue.x-k8s.io/queue-name`` (suspended by
    Kueue until admission, like a Job with the label)."""
    meta = meta or env.meta(ctx, raw, "Job")
    ref = f"Job/{meta.namespace}/{meta.name}"
    spec = ctx.map(raw.get("spec"), "spec", required=True)
    status = ctx.map(raw.get("status"), "status")
    labels, annotations, pod_spec = template_parts(ctx, spec.get("template"), "spec.template")
    mode = ctx.enum(
        spec.get("completionMode"),
        "spec.completionMode",
        ("NonIndexed", "Indexed"),
        default="NonIndexed",
    )
    # An Indexed Job's parallelism is capped (maxParallelismForIndexedJob, pkg/apis/batch/validation).
    parallelism = ctx.int32(
        spec.get("parallelism"),
        "spec.parallelism",
        default=1,
        minimum=0,
        maximum=MAX_EXPANDED if mode == "Indexed" else None,
    )
    completions = (
        None
        if spec.get("completions") is None
        else ctx.int32(spec.get("completions"), "spec.completions", minimum=0)
    )
    if mode == "Indexed" and completions is None:
        raise ctx.fail("spec.completions", "an Indexed Job needs completions")
    succeeded = ctx.int32(status.get("succeeded"), "status.succeeded", minimum=0)
    failed = ctx.int32(status.get("failed"), "status.failed", minimum=0)
    conditions = {
        ctx.str(c.get("type"), f + ".type"): ctx.str(c.get("status"), f + ".status")
        for f, c in ctx.maps(status.get("conditions"), "status.conditions")
    }
    if env.owned("Pod", meta.namespace, "Job", meta.name) or any(
        env.labelled("Pod", meta.namespace, k, meta.name)
        for k in ("batch.kubernetes.io/job-name", "job-name")
    ):
        return JobExpansion(skipped="its pods are in the snapshot")
    if conditions.get("Complete") == "True" or conditions.get("Failed") == "True":
        return JobExpansion(skipped="it has finished")
    if ctx.bool(spec.get("suspend"), "spec.suspend"):
        if "kueue.x-k8s.io/queue-name" not in meta.labels and not kueue:
            return JobExpansion(skipped="it is suspended (the Job controller creates no pods)")
        env.note(
            "Job",
            "spec.suspend",
            "suspended by Kueue until admission: expanded as Kueue would admit it",
            f"{meta.namespace}/{meta.name}",
        )

    # Which pods the controller creates now.
    if completions is None:
        env.reserve(ctx, parallelism if succeeded == 0 else 0, "spec.parallelism")
        ordinals = list(range(parallelism if succeeded == 0 else 0))
    elif mode == "Indexed":
        ordinals = _pending_indexes(
            _completed(ctx, status.get("completedIndexes")), completions, parallelism
        )
        env.reserve(ctx, len(ordinals), "spec.parallelism")
    else:
        env.reserve(ctx, min(parallelism, max(completions - succeeded, 0)), "spec.parallelism")
        ordinals = list(range(min(parallelism, max(completions - succeeded, 0))))

    # Scheduling objects (shouldManageWorkloadForJob, ensureWorkloadAndPodGroup, isNewJob).
    out = JobExpansion()
    pg_name: str | None = None
    controller = meta.controller
    new = (
        status.get("startTime") is None
        and succeeded == 0
        and failed == 0
        and conditions.get("Suspended") != "True"
    )
    if pod_spec.get("schedulingGroup") is not None:
        out.groups = "no Workload/PodGroup (the pod template brings its own schedulingGroup)"
    elif (
        controller is not None
        and controller.get("kind") != "CronJob"
        and GROUP_TEMPLATE_ANNOTATION not in meta.annotations
    ):
        out.groups = f"no Workload/PodGroup (controller owner {controller.get('kind')} owns them, no {GROUP_TEMPLATE_ANNOTATION} delegation)"
    elif not new:
        out.groups = "no Workload/PodGroup (the Job has started: the controller only discovers existing ones)"
    elif controller is not None and controller.get("kind") != "CronJob":
        pg, out.groups = _delegated(ctx, env, meta, ref)
        if pg is not None:
            pg_name = pg["metadata"]["name"]
            key = f"{meta.namespace}/{pg_name}"
            if key in env.made_groups:
                # computePodGroupName hashes only the Workload and template names: a second Job
                # delegated to the same template gets the same name, the create fails with
                # AlreadyExists and the Job controller's sync errors out before creating pods.
                env.note(
                    "Job",
                    f"metadata.annotations.{GROUP_TEMPLATE_ANNOTATION}",
                    f"its PodGroup name {pg_name} is taken by the PodGroup of {env.made_groups[key]} "
                    "(computePodGroupName depends on the Workload and template only): upstream's create fails, so no pods are created",
                    f"{meta.namespace}/{meta.name}",
                )
                return JobExpansion(
                    skipped="its delegated PodGroup's name is taken by another Job's (no pods)"
                )
            if key in env.existing_groups:
                out.groups = f"the existing PodGroup {pg_name} (discovered, not created)"
            else:
                env.made_groups[key] = ref
                out.objects.append(pg)
    else:
        if controller is not None:
            env.note(
                "Job",
                "metadata.ownerReferences",
                "a CronJob's Job gets its own Workload and PodGroup as KEP-5547 says (the stored controller code skips Jobs with any controller owner)",
                f"{meta.namespace}/{meta.name}",
            )
        template = compile_template(ctx, env, meta, spec, parallelism)
        wname = workload_name(meta.name, meta.uid)
        pg_name = pod_group_name(wname, template["name"])
        if f"{meta.namespace}/{pg_name}" in env.existing_groups:
            out.groups = f"the existing Workload/PodGroup {pg_name} (discovered, not created)"
        else:
            job_owner = owner_ref("batch/v1", "Job", meta.name, meta.uid)
            wl = {
                "apiVersion": SCHEDULING_API,
                "kind": "Workload",
                "metadata": object_meta(
                    wname,
                    meta.namespace,
                    source=ref,
                    owners=[job_owner],
                    creation_timestamp=meta.creation_timestamp,
                    uid_kind="Workload",
                ),
                "spec": {
                    "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": meta.name},
                    "podGroupTemplates": [template],
                },
            }
            owners = [
                job_owner,
                owner_ref(
                    SCHEDULING_API, "Workload", wname, wl["metadata"]["uid"], controller=False
                ),
            ]
            out.objects += [wl, _pod_group(pg_name, meta, ref, wname, template, owners, None)]
            env.made_groups[f"{meta.namespace}/{pg_name}"] = ref
            policy = (
                "gang minCount " + str(template["schedulingPolicy"]["gang"]["minCount"])
                if "gang" in template["schedulingPolicy"]
                else "basic"
            )
            out.groups = f"Workload + PodGroup ({policy})"

    sel = {
        "batch.kubernetes.io/controller-uid": meta.uid,
        "batch.kubernetes.io/job-name": meta.name,
        "controller-uid": meta.uid,
        "job-name": meta.name,
    }
    if ctx.bool(spec.get("manualSelector"), "spec.manualSelector"):
        sel = {}
    for n, idx in enumerate(ordinals):
        pl, pa, ps = {**labels, **sel}, dict(annotations), copy.deepcopy(pod_spec)
        if mode == "Indexed":
            pl[COMPLETION_INDEX] = pa[COMPLETION_INDEX] = str(idx)
            base = f"{meta.name}-{idx}-"
            ps.setdefault("hostname", f"{meta.name}-{idx}")
        else:
            base = f"{meta.name}-"
        if pg_name is not None:
            ps["schedulingGroup"] = {"podGroupName": pg_name}
        pmeta = object_meta(
            generate_name(base, f"{meta.uid}/{n}"),
            meta.namespace,
            source=ref,
            labels=pl,
            annotations=pa,
            owners=[owner_ref("batch/v1", "Job", meta.name, meta.uid)],
            creation_timestamp=meta.creation_timestamp,
            uid_kind="Pod",
        )
        pmeta["generateName"] = base
        pmeta["finalizers"] = ["batch.kubernetes.io/job-tracking"]
        out.objects.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": pmeta,
                "spec": ps,
                "status": {"phase": "Pending"},
            }
        )
    return out
