"""A Kueue ``Workload`` object (``kueue.x-k8s.io`` v1beta1 / v1beta2) as Kueue reads it (issue 42).

Sources, kubernetes-sigs/kueue at tag v0.19.2 (8eab68778fc1b52affe165fdf5af29d1e9b4f3cb):

* ``apis/kueue/v1beta2/workload_types.go`` and ``apis/kueue/v1beta1/workload_types.go``: podSets
  (1..18, a map keyed by ``name``, default ``main``), ``count`` (default 1, minimum 0),
  ``minCount`` (minimum 1; CEL ``minCount should be positive and less or equal to count``),
  ``topologyRequest``, ``queueName``, ``priority`` (v1beta1 ``priorityClassName`` /
  ``priorityClassSource``, v1beta2 ``priorityClassRef``; CEL: a class without ``priority`` is
  refused), ``active`` (default true); ``status.admission`` (``clusterQueue``,
  ``podSetAssignments`` with ``flavors``, ``resourceUsage``, ``count``, ``topologyAssignment``:
  v1beta1 ``domains`` of ``values`` + ``count``; v1beta2 compressed ``slices``, decoded here into
  domains with their CEL rules) and the conditions ``QuotaReserved`` and ``Finished``.
* ``pkg/webhooks/workload_webhook.go`` (``ValidateWorkload``): the reserved ``pods`` resource key,
  at most one podSet with ``minCount``, ``status.admission`` required while ``QuotaReserved`` is
  true, assignments naming a podSet that exists, ``resourceUsage`` a multiple of ``count``, and
  ``validateTASSliceSize`` (``podSetSliceRequiredTopology`` and ``podSetSliceSize`` together, a
  size above 0).
  ``status.reclaimablePods`` naming a podSet of the Workload with a count not above its count
  (``validateReclaimablePods``).
* ``pkg/workload/workload.go`` ``HasQuotaReservation`` (condition ``QuotaReserved`` true) and
  ``IsFinished`` (condition ``Finished`` true); ``pkg/util/priority`` ``Priority`` (an unset
  priority is 0, ``constants.DefaultPriority``).

One difference from Kueue: the webhook words a ``resourceUsage`` that is not a multiple of the
count with ``%d`` of a pointer (it prints an address); gangplan prints the count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gangplan.io import kueue_errors as E
from gangplan.io.errors import SnapshotError
from gangplan.io.fields import Ctx
from gangplan.io.kueue_objects import quantity, version_of
from gangplan.io.parse import parse_pod
from gangplan.io.parse_common import metadata
from gangplan.models.kueue import (
    KueueAdmission,
    KueuePodSet,
    PodSetAdmission,
    TopologyAssignment,
    TopologyDomainAssignment,
    TopologyRequest,
)

MAX_PODSETS = 18
PODSET_NAME_RE = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"


@dataclass
class ParsedWorkload:
    """A snapshot Workload before its pods are linked (:mod:`gangplan.io.kueue_workloads`)."""

    namespace: str
    name: str
    ctx: Ctx
    queue_name: str
    priority: int
    priority_class: str
    creation_timestamp: str
    podsets: list[KueuePodSet]
    templates: list[dict]
    """Each podSet's ``template`` (raw), to make its pods when its job is not in the snapshot."""
    admission: KueueAdmission | None
    active: bool
    finished: bool
    owners: list[dict] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    uid: str = ""
    annotations: dict[str, str] = field(default_factory=dict)
    reclaimable_pods: dict[str, int] = field(default_factory=dict)


def template_view(ctx: Ctx, ns: str, template: Any, path: str) -> tuple[dict, dict[str, str], Any]:
    """A pod template read as a pod (:func:`gangplan.io.parse.parse_pod`: the effective request,
    overhead included, node selector, affinity, tolerations), errors named under ``path``:
    (raw template, its annotations, the parsed pod)."""
    t = ctx.map(template, path, required=True)
    tm = ctx.map(t.get("metadata"), path + ".metadata")
    pod_raw = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "template",
            "namespace": ns,
            "labels": tm.get("labels") or {},
            "annotations": tm.get("annotations") or {},
        },
        "spec": ctx.map(t.get("spec"), path + ".spec", required=True),
    }
    inner = Ctx(ctx.file, ctx.obj)
    try:
        pod = parse_pod(inner, pod_raw)
    except SnapshotError as e:
        where = e.field or ""
        if path and where.startswith(("metadata.", "spec")):
            where = path + "." + where
        raise ctx.fail(where or path or None, e.message) from None
    return t, ctx.str_map(tm.get("annotations"), path + ".metadata.annotations"), pod


def podset_from_pod(name: str, count: int, min_count: int | None, pod: Any, tr: Any) -> KueuePodSet:
    return KueuePodSet(
        name=name,
        count=count,
        min_count=min_count,
        requests=dict(pod.requests),
        node_selector=dict(pod.node_selector),
        node_affinity=pod.affinity.node_required,
        tolerations=pod.tolerations,
        topology_request=tr,
    )


def _reserved_pods_key(ctx: Ctx, spec: dict, path: str) -> None:
    """``validateResourceList``: ``pods`` is reserved for Kueue's own use."""
    for what in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(what) or ()):
            if not isinstance(c, dict):
                continue
            res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
            for kind in ("requests", "limits"):
                if isinstance(res.get(kind), dict) and "pods" in res[kind]:
                    raise E.invalid(
                        ctx,
                        f"{path}.template.spec.{what}[{i}].resources.{kind}[pods]",
                        "pods",
                        "the key is reserved for internal kueue use",
                    )


def topology_request(ctx: Ctx, raw: Any, path: str) -> TopologyRequest | None:
    """``PodSet.topologyRequest`` of a Workload object."""
    if raw is None:
        return None
    m = ctx.map(raw, path)
    constraints = []
    for i, c in enumerate(
        E.items(
            ctx,
            m.get("podsetSliceRequiredTopologyConstraints"),
            path + ".podsetSliceRequiredTopologyConstraints",
            most=3,
        )
    ):
        cp = f"{path}.podsetSliceRequiredTopologyConstraints[{i}]"
        c = ctx.map(c, cp, required=True)
        size = E.minimum(ctx, c.get("size"), cp + ".size", 1, default=None)
        if size is None:
            raise E.required(ctx, cp + ".size")
        constraints.append((ctx.str(c.get("topology"), cp + ".topology", required=True), size))
    slice_required = ctx.opt_str(
        m.get("podSetSliceRequiredTopology"), path + ".podSetSliceRequiredTopology"
    )
    slice_size = (
        None
        if m.get("podSetSliceSize") is None
        else ctx.int32(m.get("podSetSliceSize"), path + ".podSetSliceSize")
    )
    # validateTASSliceSize (workload_webhook.go)
    if slice_required is not None:
        if slice_size is None:
            raise E.required(
                ctx,
                path + ".podSetSliceSize",
                "must be set when podSetSliceRequiredTopology is specified",
            )
        if slice_size <= 0:
            raise E.invalid(ctx, path + ".podSetSliceSize", slice_size, "must be greater than 0")
    elif slice_size is not None:
        raise E.forbidden(
            ctx,
            path + ".podSetSliceSize",
            "may not be set when podSetSliceRequiredTopology is not specified",
        )
    return TopologyRequest(
        required=ctx.opt_str(m.get("required"), path + ".required"),
        preferred=ctx.opt_str(m.get("preferred"), path + ".preferred"),
        unconstrained=ctx.bool(m.get("unconstrained"), path + ".unconstrained"),
        slice_required=slice_required,
        slice_size=slice_size,
        slice_constraints=tuple(constraints),
        podset_group=ctx.opt_str(m.get("podSetGroupName"), path + ".podSetGroupName"),
        pod_index_label=ctx.opt_str(m.get("podIndexLabel"), path + ".podIndexLabel"),
        sub_group_index_label=ctx.opt_str(
            m.get("subGroupIndexLabel"), path + ".subGroupIndexLabel"
        ),
        sub_group_count=(
            None
            if m.get("subGroupCount") is None
            else ctx.int32(m.get("subGroupCount"), path + ".subGroupCount")
        ),
    )


def _conditions(ctx: Ctx, status: dict) -> dict[str, str]:
    out = {}
    for f, c in ctx.maps(status.get("conditions"), "status.conditions"):
        out[ctx.str(c.get("type"), f + ".type")] = ctx.str(c.get("status"), f + ".status")
    return out


def decode_slices(
    ctx: Ctx, ta: dict, path: str, levels: int
) -> tuple[TopologyDomainAssignment, ...]:
    """v1beta2 ``TopologyAssignment.slices`` -> domains, in slice order then domain order: a level's
    values are ``universal`` repeated, or ``prefix + root + suffix`` per domain; pod counts are
    ``universal`` repeated or ``individual``. The CEL rules of ``TopologyAssignment``,
    ``TopologyAssignmentSlice`` and ``TopologyAssignmentSliceLevelValues`` are checked."""
    out: list[TopologyDomainAssignment] = []
    slices = E.items(ctx, ta.get("slices"), path + ".slices", most=1000)
    for i, s in enumerate(slices):
        sp = f"{path}.slices[{i}]"
        s = ctx.map(s, sp, required=True)
        n = E.minimum(ctx, s.get("domainCount"), sp + ".domainCount", 1, default=None)
        if n is None:
            raise E.required(ctx, sp + ".domainCount")
        per_level = E.items(ctx, s.get("valuesPerLevel"), sp + ".valuesPerLevel", least=1, most=16)
        if len(per_level) != levels:
            raise E.rule(
                ctx,
                path,
                "valuesPerLevel must have the same length as the number of levels in this TopologyAssignment",
            )
        columns: list[list[str]] = []
        for j, lv in enumerate(per_level):
            lp = f"{sp}.valuesPerLevel[{j}]"
            lv = ctx.map(lv, lp, required=True)
            if (lv.get("universal") is None) == (lv.get("individual") is None):
                raise E.rule(
                    ctx, lp, "exactly one of the fields in [universal individual] must be set"
                )
            if lv.get("universal") is not None:
                columns.append([ctx.str(lv["universal"], lp + ".universal")] * n)
                continue
            ind = ctx.map(lv["individual"], lp + ".individual")
            roots = [
                ctx.str(r, f"{lp}.individual.roots[{k}]")
                for k, r in enumerate(
                    E.items(ctx, ind.get("roots"), lp + ".individual.roots", least=1, most=100000)
                )
            ]
            if len(roots) != n:
                raise E.rule(
                    ctx,
                    sp,
                    "valuesPerLevel.individual, if set, must have roots of length equal to domainCount of this TopologyAssignmentSlice",
                )
            pre = ctx.str(ind.get("prefix"), lp + ".individual.prefix")
            suf = ctx.str(ind.get("suffix"), lp + ".individual.suffix")
            columns.append([pre + r + suf for r in roots])
        pc = ctx.map(s.get("podCounts"), sp + ".podCounts", required=True)
        if (pc.get("universal") is None) == (pc.get("individual") is None):
            raise E.rule(
                ctx,
                sp + ".podCounts",
                "exactly one of the fields in [universal individual] must be set",
            )
        if pc.get("universal") is not None:
            counts = [E.minimum(ctx, pc["universal"], sp + ".podCounts.universal", 1)] * n
        else:
            counts = [
                E.minimum(ctx, c, f"{sp}.podCounts.individual[{k}]", 1)
                for k, c in enumerate(
                    E.items(
                        ctx, pc["individual"], sp + ".podCounts.individual", least=1, most=100000
                    )
                )
            ]
            if len(counts) != n:
                raise E.rule(ctx, sp, "podCounts.individual must have length equal to domainCount")
        for d in range(n):
            out.append(
                TopologyDomainAssignment(values=tuple(col[d] for col in columns), count=counts[d])
            )
    return tuple(out)


def topology_assignment(ctx: Ctx, raw: Any, path: str, v1beta1: bool) -> TopologyAssignment | None:
    if raw is None:
        return None
    ta = ctx.map(raw, path)
    levels = tuple(
        ctx.str(lv, f"{path}.levels[{i}]", required=True)
        for i, lv in enumerate(E.items(ctx, ta.get("levels"), path + ".levels", least=1, most=16))
    )
    if not levels:
        raise E.required(ctx, path + ".levels")
    if not v1beta1:
        return TopologyAssignment(levels=levels, domains=decode_slices(ctx, ta, path, len(levels)))
    domains = []
    for i, d in enumerate(ctx.list(ta.get("domains"), path + ".domains")):
        dp = f"{path}.domains[{i}]"
        d = ctx.map(d, dp, required=True)
        values = tuple(
            ctx.str(v, f"{dp}.values[{k}]")
            for k, v in enumerate(E.items(ctx, d.get("values"), dp + ".values", least=1, most=16))
        )
        if len(values) != len(levels):
            raise ctx.fail(
                dp + ".values", f"expected one value per level ({len(levels)}), got {len(values)}"
            )
        count = E.minimum(ctx, d.get("count"), dp + ".count", 1, default=None)
        if count is None:
            raise E.required(ctx, dp + ".count")
        domains.append(TopologyDomainAssignment(values=values, count=count))
    return TopologyAssignment(levels=levels, domains=tuple(domains))


def parse_kueue_workload(ctx: Ctx, raw: dict) -> ParsedWorkload:
    """A Workload object of either version (see the module docstring)."""
    import re

    ns, name, meta = metadata(ctx, raw, namespaced=True)
    v1beta1 = version_of(raw) == "v1beta1"
    spec = ctx.map(raw.get("spec"), "spec", required=True)
    if spec.get("podSets") is None:
        raise E.required(ctx, "spec.podSets")
    sets = E.items(ctx, spec.get("podSets"), "spec.podSets", least=1, most=MAX_PODSETS)
    podsets: list[KueuePodSet] = []
    templates: list[dict] = []
    names: list[str] = []
    with_min = 0
    for i, ps in enumerate(sets):
        path = f"spec.podSets[{i}]"
        ps = ctx.map(ps, path, required=True)
        ps_name = ctx.str(ps.get("name"), path + ".name") or "main"
        if len(ps_name) > 63 or not re.fullmatch(PODSET_NAME_RE, ps_name):
            raise E.invalid(
                ctx,
                path + ".name",
                ps_name,
                f"{path}.name in body should match '^{PODSET_NAME_RE}$'",
            )
        if ps_name in names:
            raise E.duplicate(ctx, path, {"name": ps_name})
        names.append(ps_name)
        count = E.minimum(ctx, ps.get("count"), path + ".count", 0, default=1)
        min_count = E.minimum(ctx, ps.get("minCount"), path + ".minCount", 1, default=None)
        if min_count is not None:
            with_min += 1
            if min_count > count:
                raise E.rule(ctx, path, "minCount should be positive and less or equal to count")
        if ps.get("template") is None:
            raise E.required(ctx, path + ".template")
        template, _, pod = template_view(ctx, ns, ps.get("template"), path + ".template")
        _reserved_pods_key(ctx, template.get("spec") or {}, path)
        tr = topology_request(ctx, ps.get("topologyRequest"), path + ".topologyRequest")
        podsets.append(podset_from_pod(ps_name, count or 0, min_count, pod, tr))
        templates.append(template)
    class_field = "priorityClassName" if v1beta1 else "priorityClassRef"
    priority_class = ""
    if spec.get(class_field) is not None:
        if v1beta1:
            priority_class = ctx.str(spec.get(class_field), "spec.priorityClassName")
        else:
            cref = ctx.map(spec.get(class_field), "spec.priorityClassRef")
            priority_class = ctx.str(cref.get("name"), "spec.priorityClassRef.name", required=True)
            group = ctx.str(cref.get("group"), "spec.priorityClassRef.group")
            kind = ctx.str(cref.get("kind"), "spec.priorityClassRef.kind")
            if group not in ("kueue.x-k8s.io", "scheduling.k8s.io"):
                raise E.unsupported(
                    ctx,
                    "spec.priorityClassRef.group",
                    group,
                    ("kueue.x-k8s.io", "scheduling.k8s.io"),
                )
            if kind not in ("WorkloadPriorityClass", "PriorityClass"):
                raise E.unsupported(
                    ctx,
                    "spec.priorityClassRef.kind",
                    kind,
                    ("WorkloadPriorityClass", "PriorityClass"),
                )
            if group == "scheduling.k8s.io" and kind != "PriorityClass":
                raise E.rule(
                    ctx,
                    "spec.priorityClassRef",
                    "only the PriorityClass kind is allowed for the scheduling.k8s.io group",
                )
            if group == "kueue.x-k8s.io" and kind != "WorkloadPriorityClass":
                raise E.rule(
                    ctx,
                    "spec.priorityClassRef",
                    "only the WorkloadPriorityClass kind is allowed for the kueue.x-k8s.io group",
                )
        if priority_class and spec.get("priority") is None:
            raise E.rule(
                ctx,
                "spec",
                "priority should not be nil when priorityClassName is set"
                if v1beta1
                else "priority should not be nil when priorityClassRef is set",
            )
    priority = ctx.int32(spec.get("priority"), "spec.priority", default=0)
    if with_min > 1:
        raise E.invalid(ctx, "spec.podSets", with_min, "at most one podSet can use minCount")
    status = ctx.map(raw.get("status"), "status")
    conditions = _conditions(ctx, status)
    reserved = conditions.get("QuotaReserved") == "True"
    admission = None
    if reserved:
        if status.get("admission") is None:
            raise E.required(
                ctx, "status.admission", "must be set while the QuotaReserved condition is true"
            )
        admission = _admission(ctx, status["admission"], names, v1beta1)
    reclaimable = _reclaimable(ctx, status.get("reclaimablePods"), podsets)
    return ParsedWorkload(
        namespace=ns,
        name=name,
        ctx=ctx,
        queue_name=ctx.str(spec.get("queueName"), "spec.queueName"),
        priority=priority,
        priority_class=priority_class,
        creation_timestamp=ctx.str(meta.get("creationTimestamp"), "metadata.creationTimestamp"),
        podsets=podsets,
        templates=templates,
        admission=admission,
        active=ctx.bool(spec.get("active"), "spec.active", default=True),
        finished=conditions.get("Finished") == "True",
        owners=[o for _, o in ctx.maps(meta.get("ownerReferences"), "metadata.ownerReferences")],
        labels=ctx.str_map(meta.get("labels"), "metadata.labels"),
        uid=ctx.str(meta.get("uid"), "metadata.uid"),
        annotations=ctx.str_map(meta.get("annotations"), "metadata.annotations"),
        reclaimable_pods=reclaimable,
    )


def _reclaimable(ctx: Ctx, raw: Any, podsets: list[KueuePodSet]) -> dict[str, int]:
    """``status.reclaimablePods`` (at most 18, a map keyed by name) as the webhook's
    ``validateReclaimablePods`` checks it: a podSet of the Workload, a count not above its count."""
    path = "status.reclaimablePods"
    counts = {ps.name: ps.count for ps in podsets}
    out: dict[str, int] = {}
    for i, r in enumerate(E.items(ctx, raw, path, most=MAX_PODSETS)):
        r = ctx.map(r, f"{path}[{i}]", required=True)
        name = ctx.str(r.get("name"), f"{path}[{i}].name", required=True)
        count = E.minimum(ctx, r.get("count"), f"{path}[{i}].count", 0, default=0) or 0
        if name not in counts:
            raise E.unsupported(ctx, f"{path}[{name}].name", name, tuple(counts))
        if count > counts[name]:
            raise E.invalid(
                ctx, f"{path}[{name}].count", count, f"should be less or equal to {counts[name]}"
            )
        out[name] = count
    return out


def _admission(ctx: Ctx, raw: Any, podsets: list[str], v1beta1: bool) -> KueueAdmission:
    path = "status.admission"
    a = ctx.map(raw, path)
    out = []
    for i, psa in enumerate(
        E.items(ctx, a.get("podSetAssignments"), path + ".podSetAssignments", most=MAX_PODSETS)
    ):
        pp = f"{path}.podSetAssignments[{i}]"
        psa = ctx.map(psa, pp, required=True)
        name = ctx.str(psa.get("name"), pp + ".name") or "main"
        if name not in podsets:
            raise ctx.fail(pp + ".name", f"Not found: {E.go_value(name)}")
        usage_raw = ctx.map(psa.get("resourceUsage"), pp + ".resourceUsage")
        usage = {
            str(r): quantity(ctx, q, f"{pp}.resourceUsage.{r}", str(r))
            for r, q in usage_raw.items()
        }
        count = E.minimum(ctx, psa.get("count"), pp + ".count", 0, default=None)
        if count:
            for r, v in usage.items():
                if v % count:
                    raise E.invalid(
                        ctx,
                        f"{pp}.resourceUsage[{r}]",
                        str(usage_raw[r]),
                        f"is not a multiple of {count}",
                    )
        out.append(
            PodSetAdmission(
                name=name,
                flavors=ctx.str_map(psa.get("flavors"), pp + ".flavors"),
                resource_usage=usage,
                count=count,
                topology_assignment=topology_assignment(
                    ctx, psa.get("topologyAssignment"), pp + ".topologyAssignment", v1beta1
                ),
            )
        )
    return KueueAdmission(
        cluster_queue=ctx.str(a.get("clusterQueue"), path + ".clusterQueue"), podsets=tuple(out)
    )


__all__ = [
    "MAX_PODSETS",
    "ParsedWorkload",
    "decode_slices",
    "parse_kueue_workload",
    "podset_from_pod",
    "template_view",
    "topology_assignment",
    "topology_request",
]
