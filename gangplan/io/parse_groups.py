"""PodGroup, CompositePodGroup and Workload objects of every served version into gangplan's models
(re-exported by :mod:`gangplan.io.parse`, whose docstring says what parsing does).
"""

from __future__ import annotations

from typing import Any

from gangplan.io.fields import Ctx
from gangplan.io.parse_common import metadata
from gangplan.models.objects import (
    PREEMPTION_POLICIES,
    CompositePodGroup,
    GroupClaim,
    PodGroup,
    Workload,
)

# ---- PodGroup / CompositePodGroup / Workload --------------------------------------------------
# Wire shapes per version: docs/upstream-api-shapes.md (k8s.io/api scheduling/*/types.go, v0.35.0 to
# master 10b39a39). Shapes are recognised by content, so one parser reads every served version.
# v1alpha2 (1.36) strings; lower-case and capitalised spellings of the 1.37 union members too.
_DISRUPTION_STRINGS = {
    "Pod": "single",
    "PodGroup": "all",
    "single": "single",
    "all": "all",
    "Single": "single",
    "All": "all",
}
_POLICIES = ("basic", "gang")

PODGROUP_SPEC_FIELDS = frozenset(
    {
        "parentCompositePodGroupName",
        "workloadRef",
        "podGroupTemplateRef",
        "schedulingPolicy",
        "schedulingConstraints",
        "resourceClaims",
        "disruptionMode",
        "priorityClassName",
        "priority",
        "preemptionPolicy",
    }
)
COMPOSITE_SPEC_FIELDS = PODGROUP_SPEC_FIELDS - {"podGroupTemplateRef", "resourceClaims"}


def _policy(ctx: Ctx, pol: dict, field: str, count_field: str) -> tuple[str, int]:
    """A ``{basic: {}}`` / ``{gang: {minCount}}`` union (``minGroupCount`` for a composite)."""
    known = [k for k in _POLICIES if pol.get(k) is not None]
    unknown = sorted(k for k in pol if k not in _POLICIES and pol[k] is not None)
    if len(known) > 1:
        raise ctx.fail(field, "must set exactly one of basic, gang")
    for k in unknown:
        ctx.note(
            f"{field}.{k}",
            f"unknown scheduling policy {k!r}: not modelled" + ("" if known else "; read as basic"),
        )
    if not known:
        if unknown:
            return "basic", 1
        raise ctx.fail(field, "must set exactly one of basic, gang")
    if known[0] == "basic":
        ctx.map(pol.get("basic"), field + ".basic")
        return "basic", 1
    gang = ctx.map(pol.get("gang"), field + ".gang", required=True)
    return "gang", ctx.int32(
        gang.get(count_field), f"{field}.gang.{count_field}", required=True, minimum=1
    )


def _topology_key(ctx: Ctx, spec: dict) -> str | None:
    sc = ctx.map(spec.get("schedulingConstraints"), "spec.schedulingConstraints")
    topo = ctx.maps(sc.get("topology"), "spec.schedulingConstraints.topology")
    if len(topo) > 1:
        raise ctx.fail(
            "spec.schedulingConstraints.topology", f"at most 1 entry is allowed, got {len(topo)}"
        )
    if not topo:
        return None
    f, t = topo[0]
    return ctx.str(t.get("key"), f + ".key", required=True)


def _disruption(ctx: Ctx, spec: dict) -> str:
    """``spec.disruptionMode``: the v1alpha2 strings ``Pod`` / ``PodGroup``, or the v1alpha3 / v1beta1
    union ``{single: {}}`` / ``{all: {}}`` (API default ``{"single": {}}``). A basic group may use
    ``all`` (the newest code evicts it as one unit)."""
    raw = spec.get("disruptionMode")
    field = "spec.disruptionMode"
    if raw is None:
        return "single"
    if isinstance(raw, str):
        if raw not in _DISRUPTION_STRINGS:
            raise ctx.fail(
                field,
                f"must be one of Pod, PodGroup (v1alpha2) or {{single: {{}}}}, {{all: {{}}}}; got {raw!r}",
            )
        return _DISRUPTION_STRINGS[raw]
    mode = ctx.map(raw, field)
    members = [k for k in ("single", "all") if k in mode and mode[k] is not None]
    if len(members) != 1:
        raise ctx.fail(
            field,
            f"exactly one of single, all must be set; got {', '.join(sorted(mode)) or 'none'}",
        )
    ctx.map(mode[members[0]], f"{field}.{members[0]}")
    return members[0]


def _workload_ref(ctx: Ctx, spec: dict) -> str | None:
    """The Workload a group comes from, in all three wire shapes: ``workloadRef {workloadName,
    templateName}`` (1.37), ``podGroupTemplateRef {workload: {workloadName, podGroupTemplateName}}``
    (1.36, ``null`` when unset) and the flat ``podGroupTemplateRef {workloadName, ...}``."""
    if spec.get("workloadRef") is not None:
        ref = ctx.map(spec.get("workloadRef"), "spec.workloadRef")
        return ctx.str(ref.get("workloadName"), "spec.workloadRef.workloadName", required=True)
    if spec.get("podGroupTemplateRef") is None:
        return None
    ref = ctx.map(spec.get("podGroupTemplateRef"), "spec.podGroupTemplateRef")
    if ref.get("workload") is not None:
        inner = ctx.map(ref.get("workload"), "spec.podGroupTemplateRef.workload")
        return ctx.str(
            inner.get("workloadName"),
            "spec.podGroupTemplateRef.workload.workloadName",
            required=True,
        )
    if ref.get("workloadName") is not None:
        return ctx.str(ref.get("workloadName"), "spec.podGroupTemplateRef.workloadName")
    for k in sorted(ref):
        ctx.note(f"spec.podGroupTemplateRef.{k}", f"unknown template reference {k!r}: not read")
    return None


def _preemption_policy(ctx: Ctx, spec: dict) -> str | None:
    pp = spec.get("preemptionPolicy")
    return (
        None
        if pp is None
        else ctx.enum(pp, "spec.preemptionPolicy", PREEMPTION_POLICIES, default="")
    )


def _unread_spec_fields(ctx: Ctx, spec: dict, known: frozenset[str]) -> None:
    for k in sorted(set(spec) - known):
        if spec[k] is not None:
            ctx.note(f"spec.{k}", "unknown field: not read")


def _group_fields(
    ctx: Ctx, ns: str, name: str, meta: dict, spec: dict, policy: str
) -> dict[str, Any]:
    """The fields a PodGroup and a CompositePodGroup read alike (v1alpha2+ / v1beta1
    ``PodGroupSpec`` and ``CompositePodGroupSpec`` share them)."""
    return {
        "namespace": ns,
        "name": name,
        "uid": ctx.str(meta.get("uid"), "metadata.uid"),
        "policy": policy,
        "disruption_mode": _disruption(ctx, spec),
        "priority": ctx.int32(spec.get("priority"), "spec.priority"),
        "priority_class_name": ctx.str(spec.get("priorityClassName"), "spec.priorityClassName"),
        "preemption_policy": _preemption_policy(ctx, spec),
        "topology_key": _topology_key(ctx, spec),
        "parent": ctx.opt_str(
            spec.get("parentCompositePodGroupName"), "spec.parentCompositePodGroupName"
        )
        or None,
        "workload_ref": _workload_ref(ctx, spec),
        "creation_timestamp": ctx.str(meta.get("creationTimestamp"), "metadata.creationTimestamp"),
        "source": ctx.file,
    }


GROUP_CLAIM_FIELDS = frozenset({"name", "resourceClaimName", "resourceClaimTemplateName"})


def _group_claims(ctx: Ctx, spec: dict, status: dict) -> tuple[GroupClaim, ...]:
    """``spec.resourceClaims`` (KEP-5729 ``PodGroupResourceClaim``: a name unique in the group and
    exactly one of ``resourceClaimName`` / ``resourceClaimTemplateName``; at most 4) and the claims
    ``status.resourceClaimStatuses`` says were made from the templates. A missing or doubled
    name, neither or both references, or a status naming no claim entry is refused; another field
    is named in a warning."""
    out: list[GroupClaim] = []
    entries = ctx.maps(spec.get("resourceClaims"), "spec.resourceClaims")
    if len(entries) > 4:
        raise ctx.fail("spec.resourceClaims", f"at most 4 entries are allowed, got {len(entries)}")
    made: dict[str, str] = {}
    for f, st in ctx.maps(status.get("resourceClaimStatuses"), "status.resourceClaimStatuses"):
        made[ctx.str(st.get("name"), f + ".name", required=True)] = (
            ctx.opt_str(st.get("resourceClaimName"), f + ".resourceClaimName") or ""
        )
    for f, e in entries:
        for k in sorted(set(e) - GROUP_CLAIM_FIELDS):
            if e[k] is not None:
                ctx.note(f"spec.resourceClaims[].{k}", f"unknown field {k!r}: not read")
        cname = ctx.str(e.get("name"), f + ".name", required=True)
        if any(c.name == cname for c in out):
            raise ctx.fail(f + ".name", f"duplicate claim name {cname!r}")
        claim = ctx.opt_str(e.get("resourceClaimName"), f + ".resourceClaimName") or None
        template = (
            ctx.opt_str(e.get("resourceClaimTemplateName"), f + ".resourceClaimTemplateName")
            or None
        )
        if (claim is None) == (template is None):
            raise ctx.fail(
                f, "must set exactly one of resourceClaimName, resourceClaimTemplateName"
            )
        out.append(
            GroupClaim(
                name=cname,
                resource_claim_name=claim,
                resource_claim_template_name=template,
                generated=made.get(cname) or None if template is not None else None,
            )
        )
    for n in sorted(set(made) - {c.name for c in out}):
        raise ctx.fail(
            "status.resourceClaimStatuses", f"names {n!r}, which spec.resourceClaims does not have"
        )
    return tuple(out)


def parse_pod_group(ctx: Ctx, raw: dict) -> PodGroup:
    ns, name, meta = metadata(ctx, raw, namespaced=True)
    spec = ctx.map(raw.get("spec"), "spec", required=True)
    policy, count = _policy(
        ctx,
        ctx.map(spec.get("schedulingPolicy"), "spec.schedulingPolicy", required=True),
        "spec.schedulingPolicy",
        "minCount",
    )
    _unread_spec_fields(ctx, spec, PODGROUP_SPEC_FIELDS)
    return PodGroup(
        **_group_fields(ctx, ns, name, meta, spec, policy),
        resource_claims=_group_claims(ctx, spec, ctx.map(raw.get("status"), "status")),
        min_count=count,
        annotations=ctx.str_map(meta.get("annotations"), "metadata.annotations"),
        api_version=raw.get("apiVersion") if isinstance(raw.get("apiVersion"), str) else "",
    )


def parse_composite_pod_group(ctx: Ctx, raw: dict) -> CompositePodGroup:
    ns, name, meta = metadata(ctx, raw, namespaced=True)
    spec = ctx.map(raw.get("spec"), "spec", required=True)
    policy, count = _policy(
        ctx,
        ctx.map(spec.get("schedulingPolicy"), "spec.schedulingPolicy", required=True),
        "spec.schedulingPolicy",
        "minGroupCount",
    )
    _unread_spec_fields(ctx, spec, COMPOSITE_SPEC_FIELDS)
    return CompositePodGroup(
        **_group_fields(ctx, ns, name, meta, spec, policy), min_group_count=count
    )


def _template_names(
    ctx: Ctx, spec: dict, field: str, out_pg: list[str], out_cpg: list[str]
) -> None:
    """Template names of a v1alpha2+ Workload, composite templates walked recursively."""
    for f, t in ctx.maps(spec.get("podGroupTemplates"), field + "podGroupTemplates"):
        out_pg.append(ctx.str(t.get("name"), f + ".name"))
        if t.get("resourceClaims"):
            ctx.note(
                "spec.podGroupTemplates[].resourceClaims",
                "ResourceClaims of a template (DRA) are not modelled",
            )
    for f, t in ctx.maps(
        spec.get("compositePodGroupTemplates"), field + "compositePodGroupTemplates"
    ):
        out_cpg.append(ctx.str(t.get("name"), f + ".name"))
        _template_names(ctx, t, f + ".", out_pg, out_cpg)


def parse_workload(ctx: Ctx, raw: dict) -> Workload:
    """A Workload of any version. v1alpha1 (1.35) lists ``spec.podGroups[] {name, policy}``: the gangs
    themselves (there is no PodGroup object); later versions list templates only."""
    ns, name, _ = metadata(ctx, raw, namespaced=True)
    spec = ctx.map(raw.get("spec"), "spec")
    pgt: list[str] = []
    cpgt: list[str] = []
    _template_names(ctx, spec, "spec.", pgt, cpgt)
    v1alpha1: dict[str, tuple[str, int]] = {}
    for f, g in ctx.maps(spec.get("podGroups"), "spec.podGroups"):
        gname = ctx.str(g.get("name"), f + ".name", required=True)
        if gname in v1alpha1:
            raise ctx.fail(f + ".name", f"duplicate pod group name {gname!r}")
        v1alpha1[gname] = _policy(
            ctx, ctx.map(g.get("policy"), f + ".policy", required=True), f + ".policy", "minCount"
        )
    return Workload(
        namespace=ns,
        name=name,
        pod_group_templates=tuple(pgt),
        composite_pod_group_templates=tuple(cpgt),
        pod_groups_v1alpha1=v1alpha1,
        source=ctx.file,
    )


__all__ = [
    "COMPOSITE_SPEC_FIELDS",
    "GROUP_CLAIM_FIELDS",
    "PODGROUP_SPEC_FIELDS",
    "parse_composite_pod_group",
    "parse_pod_group",
    "parse_workload",
]
