"""Workloads before submission: what the Job, JobSet and LeaderWorkerSet controllers would create.

A snapshot may hold a controller object whose pods do not exist yet (a Job about to be submitted,
or one captured before its controller ran). The loader hands such objects to :func:`expand`, which
synthesizes the Workloads, PodGroups, intermediate objects (a JobSet's Jobs, a LeaderWorkerSet's
StatefulSets) and pending pods their controllers would create, as Kubernetes objects; the loader
then reads the pods and groups among them like any other object of the snapshot. One module per
controller, each citing the upstream source it follows: :mod:`.job`, :mod:`.jobset`, :mod:`.lws`;
names are deterministic (:mod:`.naming`).

An object that already has its pods in the snapshot (pods owned by it through ownerReferences, or
labelled ``job-name`` / ``batch.kubernetes.io/job-name``, ``jobset.sigs.k8s.io/jobset-name``,
``leaderworkerset.sigs.k8s.io/name``; for a JobSet also its Jobs) is not expanded again.
``gangplan expand FILE`` prints what was synthesized.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from gangplan.io.expand.env import ExpandEnv
from gangplan.io.expand.job import expand_job
from gangplan.io.expand.jobset import expand_jobset
from gangplan.io.expand.lws import expand_lws
from gangplan.io.fields import Ctx

CONTROLLER_KINDS = {
    "Job": "batch",
    "JobSet": "jobset.x-k8s.io",
    "LeaderWorkerSet": "leaderworkerset.x-k8s.io",
}
_WHO = {
    "Job": "the v1.37 Job controller (gate WorkloadWithJob)",
    "JobSet": "the JobSet controller, then the Job controller",
    "LeaderWorkerSet": "the LeaderWorkerSet controller and StatefulSets",
}
_API = {
    "Job": "batch/v1",
    "JobSet": "jobset.x-k8s.io/v1alpha2",
    "LeaderWorkerSet": "leaderworkerset.x-k8s.io/v1",
}


@dataclass
class Expansion:
    objects: list[tuple[str, dict]] = field(default_factory=list)
    """(file of the object it came from, synthesized object), in creation order."""
    lines: list[str] = field(default_factory=list)
    """One line per controller kind: what was expanded, and what was not and why."""
    notes: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(kind, field, message, name) of what the expansion could not reproduce: warnings."""


def _names(names: list[str]) -> str:
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")


def _counts(objs: list[dict]) -> str:
    c = Counter(o["kind"] for o in objs)
    order = ["Job", "StatefulSet", "Workload", "PodGroup", "Pod"]
    parts = []
    for k in sorted(c, key=lambda k: (order.index(k) if k in order else 9, k)):
        label = (
            "Volcano PodGroup"
            if k == "PodGroup"
            and any(
                o["apiVersion"].startswith("scheduling.volcano.sh") for o in objs if o["kind"] == k
            )
            else k
        )
        parts.append(f"{c[k]} {label}{'s' if c[k] != 1 else ''}")
    return ", ".join(parts) or "nothing"


def expand(
    controllers: list[tuple[str, dict]],
    *,
    pods: list[dict],
    workloads: list[dict],
    groups: set[str] | frozenset[str] = frozenset(),
) -> Expansion:
    """Expand Jobs, JobSets and LeaderWorkerSets (``controllers``: (file, raw object), snapshot
    order); ``groups``: ``namespace/name`` of the snapshot's PodGroups (found, not made again)."""
    env = ExpandEnv(
        pods=pods,
        workloads=workloads,
        jobs=[raw for _, raw in controllers if raw.get("kind") == "Job"],
        existing_groups=set(groups),
    )
    out = Expansion()
    done: dict[str, list[str]] = {k: [] for k in CONTROLLER_KINDS}
    made: dict[str, list[dict]] = {k: [] for k in CONTROLLER_KINDS}
    groups: dict[str, Counter[str]] = {k: Counter() for k in CONTROLLER_KINDS}
    providers: Counter[str] = Counter()
    skipped: dict[tuple[str, str], list[str]] = {}
    # JobSets labelled for Kueue: their Jobs are suspended until admission, not for good.
    kueue_jobsets = {
        (
            str((raw.get("metadata") or {}).get("namespace") or "default"),
            (raw.get("metadata") or {}).get("name"),
        )
        for _, raw in controllers
        if raw.get("kind") == "JobSet"
        and isinstance(raw.get("metadata"), dict)
        and "kueue.x-k8s.io/queue-name" in (raw["metadata"].get("labels") or {})
    }
    for file, raw in controllers:
        kind = raw["kind"]
        m = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
        ctx = Ctx(
            file,
            f"{kind}/{m.get('namespace') or 'default'}/{m.get('name') or m.get('generateName') or '?'}",
        )
        meta = env.meta(ctx, raw, kind)
        ref = f"{kind}/{meta.namespace}/{meta.name}"
        ctx = Ctx(file, ref)
        if kind == "Job":
            parent = meta.controller or {}
            res = expand_job(
                ctx,
                raw,
                env,
                meta=meta,
                kueue=parent.get("kind") == "JobSet"
                and (meta.namespace, parent.get("name")) in kueue_jobsets,
            )
            objs, why = res.objects, res.skipped
            if why is None:
                groups[kind][res.groups] += 1
        elif kind == "JobSet":
            jobs, why = expand_jobset(ctx, raw, env, meta)
            objs = []
            for job in jobs:
                jctx = Ctx(file, f"Job/{meta.namespace}/{job['metadata']['name']} (from {ref})")
                res = expand_job(jctx, job, env, kueue="kueue.x-k8s.io/queue-name" in meta.labels)
                objs += [job, *res.objects]
                groups[kind][res.groups or f"no pods: {res.skipped}"] += 1
        else:
            objs, why, provider = expand_lws(ctx, raw, env, meta)
            if why is None:
                providers[provider] += 1
        if why is not None:
            skipped.setdefault((kind, why), []).append(f"{meta.namespace}/{meta.name}")
            continue
        done[kind].append(f"{meta.namespace}/{meta.name}")
        made[kind] += objs
        out.objects += [(file, o) for o in objs]
    for kind in CONTROLLER_KINDS:
        if done[kind]:
            n = len(done[kind])
            how = "; ".join(
                f"{c} x {g}" if c > 1 or n > 1 or kind == "JobSet" else g
                for g, c in sorted(groups[kind].items())
            )
            if kind == "LeaderWorkerSet":
                how = "; ".join(f"gang provider {p} ({c})" for p, c in sorted(providers.items()))
            out.lines.append(
                f"expanded {n} {kind} ({_API[kind]}) into {_counts(made[kind])} as {_WHO[kind]} would create them"
                + (f" [{how}]" if how else "")
                + f": {_names(done[kind])}"
            )
        for (k, why), names in sorted(skipped.items()):
            if k == kind:
                out.lines.append(
                    f"not expanded: {len(names)} {kind} ({_API[kind]}), {why}: {_names(names)}"
                )
    out.notes = env.notes
    return out
