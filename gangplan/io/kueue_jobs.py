"""Kueue's Workloads for jobs: names, podSets and topology annotations, as its job reconciler
makes them (issue 42).

kubernetes-sigs/kueue v0.19.2 (8eab68778fc1b52affe165fdf5af29d1e9b4f3cb):
``pkg/controller/jobframework/workload_names.go`` (``GetWorkloadNameForOwnerWithGVK``),
``pkg/controller/jobframework/tas.go`` (``NewPodSetTopologyRequest``) and
``tas_validation.go`` (``ValidateTASPodSetRequest``, with its messages),
``pkg/controller/jobs/job/job_controller.go`` and ``pkg/controller/jobs/jobset/jobset_controller.go``
(``PodSets``). Used by :mod:`gangplan.io.kueue_workloads`.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from gangplan.io import kueue_errors as E
from gangplan.io.fields import Ctx
from gangplan.io.kueue_objects import _label_key_problem
from gangplan.io.kueue_workload_parse import podset_from_pod, template_view
from gangplan.models.kueue import KueuePodSet, TopologyRequest

MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
JOBSET_JOB_INDEX = "jobset.sigs.k8s.io/job-index"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE_REQUIRED = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
SLICE_CONSTRAINTS = "kueue.x-k8s.io/podset-slice-required-topology-constraints"
PODSET_GROUP = "kueue.x-k8s.io/podset-group-name"


# ---- names -----------------------------------------------------------------------------------
def workload_name(owner_name: str, owner_uid: str, group: str, kind: str) -> str:
    """``GetWorkloadNameForOwnerWithGVK`` (v0.19.2, ShortWorkloadNames off: 253 characters).

    >>> workload_name("name", "uid", "batch", "Job")
    'job-name-ef3a1'
    """
    prefix = (kind.lower() + "-" + owner_name)[: 253 - 1 - 5]
    h = hashlib.sha1(f"{kind}\n{group}\n{owner_name}\n{owner_uid}".encode()).hexdigest()
    return f"{prefix}-{h[:5]}"


# ---- topology annotations -----------------------------------------------------------------------
def topology_from_annotations(
    ctx: Ctx,
    ann: dict[str, str],
    path: str,
    *,
    pod_index_label: str | None,
    sub_group: tuple[str, int] | None = None,
) -> TopologyRequest | None:
    """``ValidateTASPodSetRequest`` then ``NewPodSetTopologyRequest(...).Build()``
    (``pkg/controller/jobframework/tas_validation.go``, ``tas.go``, v0.19.2). ``path``: the
    template's ``metadata.annotations``."""

    def key(k: str) -> str:
        return f"{path}[{k}]"

    found = [k for k in (REQUIRED, PREFERRED, UNCONSTRAINED) if k in ann]
    if len(found) > 1:
        raise ctx.fail(
            path,
            f'Invalid value: must not contain more than one topology annotation: ["{REQUIRED}", "{PREFERRED}", "{UNCONSTRAINED}"]',
        )
    for k in (REQUIRED, PREFERRED, SLICE_REQUIRED):
        if k in ann:
            problem = _label_key_problem(ann[k])
            if problem:
                raise E.invalid(ctx, key(k), ann[k], problem)
    if PODSET_GROUP in ann:
        if ann[PODSET_GROUP].isdigit():
            raise E.invalid(ctx, key(PODSET_GROUP), ann[PODSET_GROUP], "must not be a number")
        if SLICE_SIZE in ann:
            raise E.forbidden(
                ctx, key(PODSET_GROUP), f"may not be set when '{SLICE_SIZE}' is specified"
            )
        if SLICE_REQUIRED in ann:
            raise E.forbidden(
                ctx, key(PODSET_GROUP), f"may not be set when '{SLICE_REQUIRED}' is specified"
            )
        if REQUIRED not in ann and PREFERRED not in ann:
            raise E.forbidden(
                ctx,
                key(PODSET_GROUP),
                f"may not be set when neither '{PREFERRED}' nor '{REQUIRED}' is specified",
            )
    if UNCONSTRAINED in ann and ann[UNCONSTRAINED].lower() not in (
        "1",
        "t",
        "true",
        "0",
        "f",
        "false",
    ):
        raise E.invalid(ctx, key(UNCONSTRAINED), ann[UNCONSTRAINED], "must be a boolean value")
    size: int | None = None
    if SLICE_SIZE in ann:
        if (
            not re.fullmatch(r"[+-]?[0-9]+", ann[SLICE_SIZE])
            or not -(2**31) <= int(ann[SLICE_SIZE]) < 2**31
        ):
            raise E.invalid(ctx, key(SLICE_SIZE), ann[SLICE_SIZE], "must be a numeric value")
        size = int(ann[SLICE_SIZE])
        if size < 1:
            raise E.invalid(
                ctx, key(SLICE_SIZE), ann[SLICE_SIZE], "must be greater than or equal to 1"
            )
    if SLICE_REQUIRED in ann and SLICE_SIZE not in ann:
        raise E.required(ctx, key(SLICE_SIZE), f"must be set when '{SLICE_REQUIRED}' is specified")
    if SLICE_SIZE in ann and SLICE_REQUIRED not in ann:
        raise E.forbidden(
            ctx, key(SLICE_SIZE), f"may not be set when '{SLICE_REQUIRED}' is not specified"
        )
    constraints: tuple[tuple[str, int], ...] = ()
    if SLICE_CONSTRAINTS in ann:
        if SLICE_REQUIRED in ann or SLICE_SIZE in ann:
            raise E.forbidden(
                ctx,
                key(SLICE_CONSTRAINTS),
                f"may not be set together with '{SLICE_REQUIRED}' or '{SLICE_SIZE}'",
            )
        try:
            items = json.loads(ann[SLICE_CONSTRAINTS])
            constraints = tuple((str(c["topology"]), int(c["size"])) for c in items)
        except (ValueError, TypeError, KeyError):
            raise E.invalid(
                ctx,
                key(SLICE_CONSTRAINTS),
                ann[SLICE_CONSTRAINTS],
                "failed to parse multi-layer topology constraints annotation",
            ) from None
        if not 1 <= len(constraints) <= 3:
            raise E.invalid(
                ctx,
                key(SLICE_CONSTRAINTS),
                ann[SLICE_CONSTRAINTS],
                f"topology constraints must contain between 1 and 3 entries: got {len(constraints)}",
            )
    required = ann.get(REQUIRED)
    preferred = ann.get(PREFERRED) if required is None else None
    unconstrained = (
        required is None
        and preferred is None
        and ann.get(UNCONSTRAINED, "").lower() in ("1", "t", "true")
    )
    has_slice = (SLICE_REQUIRED in ann and SLICE_SIZE in ann) or bool(constraints)
    if not found and not has_slice and pod_index_label is None and sub_group is None:
        return None
    return TopologyRequest(
        required=required,
        preferred=preferred,
        unconstrained=unconstrained,
        slice_required=ann.get(SLICE_REQUIRED) if SLICE_SIZE in ann and not constraints else None,
        slice_size=size if SLICE_REQUIRED in ann and not constraints else None,
        slice_constraints=constraints,
        podset_group=ann.get(PODSET_GROUP) if (REQUIRED in ann or PREFERRED in ann) else None,
        pod_index_label=pod_index_label,
        sub_group_index_label=sub_group[0] if sub_group else None,
        sub_group_count=sub_group[1] if sub_group else None,
    )


# ---- jobs --------------------------------------------------------------------------------------
class Job:
    """A Kueue-managed Job, JobSet or pod (group) of the snapshot."""

    def __init__(
        self, kind: str, ns: str, name: str, uid: str, raw: dict, ctx: Ctx, meta: Any
    ) -> None:
        self.kind, self.ns, self.name, self.uid, self.raw, self.ctx, self.meta = (
            kind,
            ns,
            name,
            uid,
            raw,
            ctx,
            meta,
        )


def controllers(b: Any) -> list[Job]:
    """The Jobs and JobSets gangplan expands, with the names and uids the expansion gave them
    (``ExpandEnv.meta`` replayed in the same order: ``generateName`` completes the same way)."""
    from gangplan.io.expand import CONTROLLER_KINDS
    from gangplan.io.expand.env import ExpandEnv

    env = ExpandEnv()
    out = []
    for file, raw in b.foreign:
        kind = raw.get("kind")
        if kind not in CONTROLLER_KINDS:
            continue
        m = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
        ctx = Ctx(
            file,
            f"{kind}/{m.get('namespace') or 'default'}/{m.get('name') or m.get('generateName') or '?'}",
        )
        meta = env.meta(ctx, raw, kind)
        if kind in ("Job", "JobSet"):
            out.append(
                Job(
                    kind,
                    meta.namespace,
                    meta.name,
                    meta.uid,
                    raw,
                    Ctx(file, f"{kind}/{meta.namespace}/{meta.name}"),
                    meta,
                )
            )
    return out


def job_count(ctx: Ctx, spec: dict, path: str) -> int:
    parallelism = ctx.int32(spec.get("parallelism"), path + ".parallelism", default=1)
    completions = spec.get("completions")
    if completions is not None:
        parallelism = min(parallelism, ctx.int32(completions, path + ".completions"))
    return parallelism


def job_podsets(j: Job) -> tuple[list[KueuePodSet], list[dict]]:
    """The podSets of a Job (``main``) or JobSet (one per replicatedJob) and their templates
    (``job_controller.go`` / ``jobset_controller.go`` ``PodSets``)."""
    ctx, spec = j.ctx, j.ctx.map(j.raw.get("spec"), "spec", required=True)
    if j.kind == "Job":
        t, ann, pod = template_view(ctx, j.ns, spec.get("template"), "spec.template")
        count = job_count(ctx, spec, "spec")
        min_raw = j.meta.annotations.get(MIN_PARALLELISM)
        min_count = (
            int(min_raw) if min_raw is not None and re.fullmatch(r"[+-]?\d+", min_raw) else None
        )
        tr = topology_from_annotations(
            ctx, ann, "spec.template.metadata.annotations", pod_index_label=COMPLETION_INDEX
        )
        return [podset_from_pod("main", count, min_count, pod, tr)], [t]
    sets, templates = [], []
    for i, rj in enumerate(ctx.list(spec.get("replicatedJobs"), "spec.replicatedJobs")):
        rp = f"spec.replicatedJobs[{i}]"
        rj = ctx.map(rj, rp, required=True)
        replicas = ctx.int32(rj.get("replicas"), rp + ".replicas", default=1)
        jt = ctx.map(rj.get("template"), rp + ".template", required=True)
        js = ctx.map(jt.get("spec"), rp + ".template.spec", required=True)
        tp = rp + ".template.spec.template"
        t, ann, pod = template_view(ctx, j.ns, js.get("template"), tp)
        tr = topology_from_annotations(
            ctx,
            ann,
            tp + ".metadata.annotations",
            pod_index_label=COMPLETION_INDEX,
            sub_group=(JOBSET_JOB_INDEX, replicas),
        )
        name = ctx.str(rj.get("name"), rp + ".name", required=True).lower()
        sets.append(
            podset_from_pod(
                name, replicas * job_count(ctx, js, rp + ".template.spec"), None, pod, tr
            )
        )
        templates.append(t)
    return sets, templates


__all__ = [
    "Job",
    "controllers",
    "job_count",
    "job_podsets",
    "topology_from_annotations",
    "workload_name",
]
