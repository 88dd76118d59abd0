"""LeaderWorkerSet (``leaderworkerset.x-k8s.io/v1``): its StatefulSets, pods and gang groups.

Sources (kubernetes-sigs/lws @ 060ab4da17eea1f0865fcbd3236bb1075e2cea32, docs/upstream-foreign-apis.md
§5.3): ``pkg/controllers/leaderworkerset_controller.go`` (``constructLeaderStatefulSetApplyConfiguration``:
a leader StatefulSet ``<lws>`` with ``replicas = spec.replicas``, Parallel pod management, template
``leaderTemplate`` or else ``workerTemplate``), ``pkg/controllers/pod_controller.go`` (``Reconcile``,
``constructWorkerStatefulSetApplyConfiguration``: per leader pod ``<lws>-<g>`` a worker StatefulSet
``<lws>-<g>`` owned by it, ``replicas = size - 1``, ordinals from 1, so workers ``<lws>-<g>-<w>``),
``pkg/webhooks/pod_webhook.go`` (``Default``: labels ``leaderworkerset.sigs.k8s.io/{name,
worker-index, group-index, group-key, template-revision-hash}``, ``group-key`` = sha1 of
``<namespace>/<leader pod name>``; annotations ``leaderworkerset.sigs.k8s.io/size`` and, on workers,
``leader-name``), ``pkg/schedulerprovider/volcano_provider.go`` (with the controller setting
``gangSchedulingManagement.schedulerProvider: volcano``: every pod of group g gets
``scheduling.k8s.io/group-name: <lws>-<g>-<revision>`` and the pod controller creates a Volcano
PodGroup of that name per leader pod, ``minMember = size`` (1 with ``startupPolicy: LeaderReady``),
``minResources`` = one leader + ``size - 1`` workers, queue from the LWS annotation
``scheduling.volcano.sh/queue-name``, the LWS's ``volcano.sh/*`` annotations).

LWS has no Workload API integration at that commit, so without the Volcano provider the pods carry
no group. The provider is controller configuration, not part of the object: gangplan assumes it
when a template sets ``schedulerName: volcano`` (the LWS guide's instruction for it), and the
annotation ``gangplan.io/lws-gang-provider: volcano | none`` on the LWS decides otherwise. The
Volcano PodGroups are then translated like any other (:mod:`gangplan.io.foreign.volcano`).

Deterministic stand-ins: the template revision hash (upstream: a hash of the controller revision)
is the first 10 hex digits of sha1 of the canonical JSON of ``spec.leaderWorkerTemplate``. With
``LeaderReady`` upstream creates the workers only once the leader is Ready; gangplan creates them
at once (the Volcano gang then needs only the leader, as upstream's ``minMember: 1``). Not
reproduced: exclusive placement (``leaderworkerset.sigs.k8s.io/exclusive-topology``) and subgroup
policies (warned), the StatefulSets' own ``controller-revision-hash`` label, headless Services.
"""

from __future__ import annotations

import copy
import hashlib
import json

from gangplan.io.expand.env import ExpandEnv, Meta, object_meta, owner_ref, template_parts
from gangplan.io.fields import Ctx
from gangplan.io.parse import pod_requests
from gangplan.models.objects import CPU

API = "leaderworkerset.x-k8s.io/v1"
P = "leaderworkerset.sigs.k8s.io/"
PROVIDER_ANNOTATION = "gangplan.io/lws-gang-provider"
VOLCANO_GROUP = "scheduling.k8s.io/group-name"


def _quantities(req: dict[str, int]) -> dict[str, str]:
    return {k: (f"{v}m" if k == CPU else str(v)) for k, v in sorted(req.items()) if v}


def expand_lws(
    ctx: Ctx, raw: dict, env: ExpandEnv, meta: Meta
) -> tuple[list[dict], str | None, str]:
    """(StatefulSets, pods and Volcano PodGroups; why nothing was expanded; the gang provider)."""
    spec = ctx.map(raw.get("spec"), "spec", required=True)
    if env.owned("Pod", meta.namespace, "StatefulSet", meta.name) or env.labelled(
        "Pod", meta.namespace, P + "name", meta.name
    ):
        return [], "its pods are in the snapshot", ""
    replicas = ctx.int32(spec.get("replicas"), "spec.replicas", default=1, minimum=0)
    lwt_raw = ctx.map(spec.get("leaderWorkerTemplate"), "spec.leaderWorkerTemplate", required=True)
    size = ctx.int32(lwt_raw.get("size"), "spec.leaderWorkerTemplate.size", default=1, minimum=1)
    startup = ctx.enum(
        spec.get("startupPolicy"),
        "spec.startupPolicy",
        ("LeaderCreated", "LeaderReady"),
        default="LeaderCreated",
    )
    wl, wa, wspec = template_parts(
        ctx, lwt_raw.get("workerTemplate"), "spec.leaderWorkerTemplate.workerTemplate"
    )
    if lwt_raw.get("leaderTemplate") is not None:
        ll, la, lspec = template_parts(
            ctx, lwt_raw.get("leaderTemplate"), "spec.leaderWorkerTemplate.leaderTemplate"
        )
    else:
        ll, la, lspec = dict(wl), dict(wa), copy.deepcopy(wspec)
    who = f"{meta.namespace}/{meta.name}"
    if lwt_raw.get("subGroupPolicy") is not None:
        env.note(
            "LeaderWorkerSet",
            "spec.leaderWorkerTemplate.subGroupPolicy",
            "subgroups are not expanded (no subgroup labels)",
            who,
        )
    if P + "exclusive-topology" in meta.annotations:
        env.note(
            "LeaderWorkerSet",
            "metadata.annotations",
            "exclusive-topology placement (pod affinity per group) is not applied",
            who,
        )
    provider = meta.annotations.get(PROVIDER_ANNOTATION, "")
    if provider not in ("", "volcano", "none"):
        raise ctx.fail(
            f"metadata.annotations.{PROVIDER_ANNOTATION}",
            f"must be volcano or none, got {provider!r}",
        )
    if not provider:
        provider = (
            "volcano"
            if "volcano" in (wspec.get("schedulerName"), lspec.get("schedulerName"))
            else "none"
        )
    rev = hashlib.sha1(json.dumps(lwt_raw, sort_keys=True, default=str).encode()).hexdigest()[:10]
    source = f"LeaderWorkerSet/{meta.namespace}/{meta.name}"
    ts = meta.creation_timestamp

    leader_sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": object_meta(
            meta.name,
            meta.namespace,
            source=source,
            labels={P + "name": meta.name, P + "template-revision-hash": rev},
            annotations={P + "replicas": str(replicas)},
            owners=[owner_ref(API, "LeaderWorkerSet", meta.name, meta.uid)],
            creation_timestamp=ts,
            uid_kind="StatefulSet",
        ),
        "spec": {
            "replicas": replicas,
            "podManagementPolicy": "Parallel",
            "serviceName": meta.name,
            "selector": {"matchLabels": {P + "name": meta.name, P + "worker-index": "0"}},
            "template": {
                "metadata": {
                    "labels": {
                        **ll,
                        P + "name": meta.name,
                        P + "worker-index": "0",
                        P + "template-revision-hash": rev,
                    },
                    "annotations": {**la, P + "size": str(size)},
                },
                "spec": copy.deepcopy(lspec),
            },
        },
    }
    out = [leader_sts]
    lreq = pod_requests(ctx, lspec)[0]
    wreq = pod_requests(ctx, wspec)[0]
    env.reserve(ctx, replicas * size, "spec.replicas")
    for g in range(replicas):
        leader = f"{meta.name}-{g}"
        key = hashlib.sha1(f"{meta.namespace}/{leader}".encode()).hexdigest()
        group = f"{meta.name}-{g}-{rev}"
        common = {
            P + "name": meta.name,
            P + "group-index": str(g),
            P + "group-key": key,
            P + "template-revision-hash": rev,
        }
        extra = {VOLCANO_GROUP: group} if provider == "volcano" else {}
        leader_owner = owner_ref("apps/v1", "StatefulSet", meta.name, leader_sts["metadata"]["uid"])
        lpod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": object_meta(
                leader,
                meta.namespace,
                source=source,
                labels={
                    **ll,
                    **common,
                    P + "worker-index": "0",
                    "statefulset.kubernetes.io/pod-name": leader,
                    "apps.kubernetes.io/pod-index": str(g),
                },
                annotations={**la, P + "size": str(size), **extra},
                owners=[leader_owner],
                creation_timestamp=ts,
                uid_kind="Pod",
            ),
            "spec": copy.deepcopy(lspec),
            "status": {"phase": "Pending"},
        }
        out.append(lpod)
        lpod_owner = owner_ref("v1", "Pod", leader, lpod["metadata"]["uid"])
        if provider == "volcano":
            total = dict(lreq)
            for k, v in wreq.items():
                total[k] = total.get(k, 0) + v * (size - 1)
            pg_spec: dict = {
                "minMember": 1 if startup == "LeaderReady" else size,
                "minResources": _quantities(total),
            }
            if meta.annotations.get("scheduling.volcano.sh/queue-name"):
                pg_spec["queue"] = meta.annotations["scheduling.volcano.sh/queue-name"]
            out.append(
                {
                    "apiVersion": "scheduling.volcano.sh/v1beta1",
                    "kind": "PodGroup",
                    "metadata": object_meta(
                        group,
                        meta.namespace,
                        source=source,
                        labels={
                            P + "name": meta.name,
                            P + "group-index": str(g),
                            P + "template-revision-hash": rev,
                        },
                        annotations={
                            k: v for k, v in meta.annotations.items() if k.startswith("volcano.sh/")
                        },
                        owners=[lpod_owner],
                        creation_timestamp=ts,
                    ),
                    "spec": pg_spec,
                }
            )
        if size == 1:
            continue
        wsts = {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": object_meta(
                leader,
                meta.namespace,
                source=source,
                labels={P + "name": meta.name, P + "group-index": str(g), P + "group-key": key},
                owners=[lpod_owner],
                creation_timestamp=ts,
                uid_kind="StatefulSet",
            ),
            "spec": {
                "replicas": size - 1,
                "ordinals": {"start": 1},
                "podManagementPolicy": "Parallel",
                "serviceName": meta.name,
                "selector": {
                    "matchLabels": {
                        P + "name": meta.name,
                        P + "group-index": str(g),
                        P + "group-key": key,
                    }
                },
                "template": {
                    "metadata": {
                        "labels": {**wl, **common},
                        "annotations": {**wa, P + "size": str(size), P + "leader-name": leader},
                    },
                    "spec": copy.deepcopy(wspec),
                },
            },
        }
        out.append(wsts)
        for w in range(1, size):
            name = f"{leader}-{w}"
            out.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": object_meta(
                        name,
                        meta.namespace,
                        source=source,
                        labels={
                            **wl,
                            **common,
                            P + "worker-index": str(w),
                            "statefulset.kubernetes.io/pod-name": name,
                            "apps.kubernetes.io/pod-index": str(w),
                        },
                        annotations={
                            **wa,
                            P + "size": str(size),
                            P + "leader-name": leader,
                            **extra,
                        },
                        owners=[
                            owner_ref("apps/v1", "StatefulSet", leader, wsts["metadata"]["uid"])
                        ],
                        creation_timestamp=ts,
                        uid_kind="Pod",
                    ),
                    "spec": copy.deepcopy(wspec),
                    "status": {"phase": "Pending"},
                }
            )
    return out, None, provider
