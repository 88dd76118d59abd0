"""JobSet (``jobset.x-k8s.io/v1alpha2``): the child Jobs the JobSet controller creates.

Sources (kubernetes-sigs/jobset @ 08dfbdfd682714a9ab929633eca8dc95315187e7, docs/upstream-foreign-apis.md
§5.2): ``pkg/controllers/jobset_controller.go`` (``constructJobsFromTemplate``, ``constructJob``,
``labelAndAnnotateObject``, ``globalJobIndex``, ``groupJobIndex``), ``pkg/util/placement/placement.go``
(``GenJobName``: ``<jobset>-<replicatedJob>-<jobIndex>``), ``pkg/webhooks/jobset_webhook.go`` and the
CRD defaults (``replicas`` 1, ``groupName`` ``default``, child Job ``completionMode: Indexed``, pod
``restartPolicy: OnFailure``, ``network.enableDNSHostnames`` true so the pod ``subdomain`` is
``network.subdomain`` or the JobSet name), ``api/jobset/v1alpha2/jobset_types.go`` (label keys).

Every Job and its pod template get the labels ``jobset.sigs.k8s.io/{jobset-name, jobset-uid,
replicatedjob-name, restart-attempt, replicatedjob-replicas, global-replicas, job-index, job-key,
job-global-index, group-name, group-replicas, job-group-index}`` (``coordinator`` with
``spec.coordinator``), repeated as annotations. ``job-key`` is the sha1 of ``<namespace>/<job
name>``. The Jobs are then expanded by :mod:`.job`: they have a controller owner, so the v1.37 Job
controller creates no Workload or PodGroup for them unless the template delegates one with
``scheduling.k8s.io/group-template-name``; at this commit JobSet creates none itself (the
workload-aware scheduling guide has the user bring a Workload and PodGroup and set
``schedulingGroup`` in the pod template). Not reproduced: ``job-restart-attempt`` (gate
RestartJob), startup policy ordering (``InOrder`` creates later Jobs once earlier ones are ready:
gangplan creates all), exclusive placement (its annotations are passed through, not applied).
"""

from __future__ import annotations

import copy

from gangplan.io.expand.env import ExpandEnv, Meta, object_meta, owner_ref
from gangplan.io.expand.naming import sha1_hex
from gangplan.io.fields import Ctx

API = "jobset.x-k8s.io/v1alpha2"
P = "jobset.sigs.k8s.io/"


def expand_jobset(ctx: Ctx, raw: dict, env: ExpandEnv, meta: Meta) -> tuple[list[dict], str | None]:
    """(the child Jobs, why nothing was expanded)."""
    spec = ctx.map(raw.get("spec"), "spec", required=True)
    rjobs = ctx.maps(spec.get("replicatedJobs"), "spec.replicatedJobs", required=True)
    if env.owned("Job", meta.namespace, "JobSet", meta.name) or env.labelled(
        "Job", meta.namespace, P + "jobset-name", meta.name
    ):
        return [], "its Jobs are in the snapshot"
    if env.owned("Pod", meta.namespace, "JobSet", meta.name) or env.labelled(
        "Pod", meta.namespace, P + "jobset-name", meta.name
    ):
        return [], "its pods are in the snapshot"
    status = ctx.map(raw.get("status"), "status")
    restarts = ctx.int32(status.get("restarts"), "status.restarts", minimum=0)
    network = ctx.map(spec.get("network"), "spec.network")
    dns = ctx.bool(
        network.get("enableDNSHostnames"), "spec.network.enableDNSHostnames", default=True
    )
    subdomain = ctx.str(network.get("subdomain"), "spec.network.subdomain") or meta.name
    suspend = spec.get("suspend")
    coordinator = ctx.map(spec.get("coordinator"), "spec.coordinator")
    if any(
        k.startswith(("alpha.jobset.sigs.k8s.io/", P)) and "exclusive" in k
        for k in meta.annotations
    ):
        env.note(
            "JobSet",
            "metadata.annotations",
            "exclusive placement is not applied to the expanded pods",
            f"{meta.namespace}/{meta.name}",
        )

    parsed = []
    for f, rj in rjobs:
        name = ctx.str(rj.get("name"), f + ".name", required=True)
        replicas = ctx.int32(rj.get("replicas"), f + ".replicas", default=1, minimum=0)
        group = ctx.str(rj.get("groupName"), f + ".groupName") or "default"
        template = ctx.map(rj.get("template"), f + ".template", required=True)
        ctx.map(template.get("spec"), f + ".template.spec", required=True)
        parsed.append((f, name, replicas, group, template))
    global_replicas = sum(r for _, _, r, _, _ in parsed)
    env.reserve(ctx, global_replicas, "spec.replicatedJobs", "Jobs")
    group_replicas: dict[str, int] = {}
    for _, _, r, g, _ in parsed:
        group_replicas[g] = group_replicas.get(g, 0) + r
    coord = ""
    if coordinator:
        coord = (
            f"{meta.name}-{ctx.str(coordinator.get('replicatedJob'), 'spec.coordinator.replicatedJob', required=True)}-"
            f"{ctx.int32(coordinator.get('jobIndex'), 'spec.coordinator.jobIndex', minimum=0)}-"
            f"{ctx.int32(coordinator.get('podIndex'), 'spec.coordinator.podIndex', minimum=0)}.{subdomain}"
        )

    jobs: list[dict] = []
    global_index = 0
    group_index: dict[str, int] = {}
    source = f"JobSet/{meta.namespace}/{meta.name}"
    for f, rname, replicas, group, template in parsed:
        for j in range(replicas):
            job_name = f"{meta.name}-{rname}-{j}"
            tags = {
                P + "jobset-name": meta.name,
                P + "jobset-uid": meta.uid,
                P + "replicatedjob-name": rname,
                P + "restart-attempt": str(restarts),
                P + "replicatedjob-replicas": str(replicas),
                P + "global-replicas": str(global_replicas),
                P + "job-index": str(j),
                P + "job-key": sha1_hex(f"{meta.namespace}/{job_name}"),
                P + "job-global-index": str(global_index),
                P + "group-name": group,
                P + "group-replicas": str(group_replicas[group]),
                P + "job-group-index": str(group_index.get(group, 0)),
            }
            if coord:
                tags[P + "coordinator"] = coord
            global_index += 1
            group_index[group] = group_index.get(group, 0) + 1
            tm = ctx.map(template.get("metadata"), f + ".template.metadata")
            job_spec = copy.deepcopy(template["spec"])
            job_spec.setdefault("completionMode", "Indexed")
            if suspend is not None:
                job_spec["suspend"] = bool(suspend)
            tf = f + ".template.spec.template"
            pod_t = ctx.map(job_spec.get("template"), tf, required=True)
            pm = ctx.map(pod_t.get("metadata"), tf + ".metadata")
            pod_t["metadata"] = {
                **pm,
                "labels": {**ctx.str_map(pm.get("labels"), tf + ".metadata.labels"), **tags},
                "annotations": {
                    **ctx.str_map(pm.get("annotations"), tf + ".metadata.annotations"),
                    **tags,
                },
            }
            ps = ctx.map(pod_t.get("spec"), tf + ".spec", required=True)
            ps.setdefault("restartPolicy", "OnFailure")
            if dns:
                ps.setdefault("subdomain", subdomain)
            jmeta = object_meta(
                job_name,
                meta.namespace,
                source=source,
                labels={**ctx.str_map(tm.get("labels"), f + ".template.metadata.labels"), **tags},
                annotations={
                    **ctx.str_map(tm.get("annotations"), f + ".template.metadata.annotations"),
                    **tags,
                },
                owners=[owner_ref(API, "JobSet", meta.name, meta.uid)],
                creation_timestamp=meta.creation_timestamp,
                uid_kind="Job",
            )
            jobs.append(
                {"apiVersion": "batch/v1", "kind": "Job", "metadata": jmeta, "spec": job_spec}
            )
    return jobs, None
