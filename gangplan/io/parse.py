"""Parse raw Kubernetes objects (dicts from YAML/JSON) into gangplan's normalised models.

Each ``parse_*`` function takes the raw object and a :class:`Ctx` and either returns a model or
raises :class:`SnapshotError` naming the field. Fields a type does not define are not read here:
the loader names them in warnings (:mod:`gangplan.io.schema`), as strict field validation would.
Defaulting that the API server would have applied to a hand-written object (requests from limits,
the default namespace, matchLabelKeys merged into the selector) is applied here.
"""

from __future__ import annotations

import re
from typing import Any

from gangplan.io.fields import Ctx
from gangplan.io.resources_validation import check_requirements
from gangplan.io.validation_pod_resources import pod_level_requests
from gangplan.models.objects import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    PREEMPT_LOWER_PRIORITY,
    PREEMPTION_POLICIES,
    Affinity,
    CompositePodGroup,
    GroupClaim,
    HostPort,
    LabelSelector,
    Namespace,
    Node,
    NodeSelectorTerm,
    Pod,
    PodAffinityTerm,
    PodDisruptionBudget,
    PodGroup,
    PreferredSchedulingTerm,
    PriorityClass,
    Requirement,
    Taint,
    Toleration,
    TopologyLevels,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
    Workload,
)
from gangplan.models.quantity import add_resources, max_resources
from gangplan.predicates.labels import parse_int64

_NODE_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_LABEL_OPS = ("In", "NotIn", "Exists", "DoesNotExist")


# ---- selectors and affinity -------------------------------------------------------------------
def _requirements(ctx: Ctx, raw: Any, field: str, ops: tuple[str, ...]) -> tuple[Requirement, ...]:
    out = []
    for f, r in ctx.maps(raw, field):
        op = ctx.enum(r.get("operator"), f + ".operator", ops, default="")
        values = ctx.str_list(r.get("values"), f + ".values")
        if op in ("In", "NotIn") and not values:
            raise ctx.fail(f + ".values", f"operator {op} needs at least one value")
        if op in ("Gt", "Lt"):
            if len(values) != 1:
                raise ctx.fail(f + ".values", f"operator {op} needs exactly one value")
            if parse_int64(values[0]) is None:
                raise ctx.fail(f + ".values", f"operator {op} needs an integer, got {values[0]!r}")
        out.append(
            Requirement(
                key=ctx.str(r.get("key"), f + ".key", required=True), operator=op, values=values
            )
        )
    return tuple(out)


def parse_label_selector(ctx: Ctx, raw: Any, field: str) -> LabelSelector | None:
    if raw is None:
        return None
    m = ctx.map(raw, field)
    return LabelSelector(
        match_labels=ctx.str_map(m.get("matchLabels"), field + ".matchLabels"),
        match_expressions=_requirements(
            ctx, m.get("matchExpressions"), field + ".matchExpressions", _LABEL_OPS
        ),
    )


def node_selector_term(ctx: Ctx, raw: dict, field: str) -> NodeSelectorTerm:
    return NodeSelectorTerm(
        match_expressions=_requirements(
            ctx, raw.get("matchExpressions"), field + ".matchExpressions", _NODE_OPS
        ),
        match_fields=_requirements(ctx, raw.get("matchFields"), field + ".matchFields", _NODE_OPS),
    )


def _pod_affinity_term(
    ctx: Ctx, raw: dict, field: str, pod_labels: dict[str, str]
) -> PodAffinityTerm:
    selector = parse_label_selector(ctx, raw.get("labelSelector"), field + ".labelSelector")
    match_keys = ctx.str_list(raw.get("matchLabelKeys"), field + ".matchLabelKeys")
    mismatch_keys = ctx.str_list(raw.get("mismatchLabelKeys"), field + ".mismatchLabelKeys")
    if selector is not None and (match_keys or mismatch_keys):
        # The API server merges these into the selector at creation (KEP-3633, v1.31+).
        extra = [
            Requirement(key=k, operator="In", values=(pod_labels[k],))
            for k in match_keys
            if k in pod_labels
        ]
        extra += [
            Requirement(key=k, operator="NotIn", values=(pod_labels[k],))
            for k in mismatch_keys
            if k in pod_labels
        ]
        exprs = selector.match_expressions + tuple(
            e for e in extra if e not in selector.match_expressions
        )
        selector = LabelSelector(match_labels=selector.match_labels, match_expressions=exprs)
    return PodAffinityTerm(
        label_selector=selector,
        namespaces=ctx.str_list(raw.get("namespaces"), field + ".namespaces"),
        namespace_selector=parse_label_selector(
            ctx, raw.get("namespaceSelector"), field + ".namespaceSelector"
        ),
        topology_key=ctx.str(raw.get("topologyKey"), field + ".topologyKey", required=True),
    )


def _weighted_terms(
    ctx: Ctx, raw: Any, field: str, labels: dict[str, str]
) -> tuple[WeightedPodAffinityTerm, ...]:
    out = []
    for f, w in ctx.maps(raw, field):
        out.append(
            WeightedPodAffinityTerm(
                weight=ctx.int32(
                    w.get("weight"), f + ".weight", required=True, minimum=1, maximum=100
                ),
                term=_pod_affinity_term(
                    ctx,
                    ctx.map(w.get("podAffinityTerm"), f + ".podAffinityTerm", required=True),
                    f + ".podAffinityTerm",
                    labels,
                ),
            )
        )
    return tuple(out)


def parse_affinity(ctx: Ctx, raw: Any, field: str, labels: dict[str, str]) -> Affinity:
    a = ctx.map(raw, field)
    if not a:
        return Affinity()
    na = ctx.map(a.get("nodeAffinity"), field + ".nodeAffinity")
    pa = ctx.map(a.get("podAffinity"), field + ".podAffinity")
    paa = ctx.map(a.get("podAntiAffinity"), field + ".podAntiAffinity")
    node_required = None
    req_raw = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req_raw is not None:
        f = field + ".nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        req = ctx.map(req_raw, f)
        node_required = tuple(
            node_selector_term(ctx, t, tf)
            for tf, t in ctx.maps(
                req.get("nodeSelectorTerms"), f + ".nodeSelectorTerms", required=True
            )
        )
    preferred = []
    f = field + ".nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    for pf, p in ctx.maps(na.get("preferredDuringSchedulingIgnoredDuringExecution"), f):
        preferred.append(
            PreferredSchedulingTerm(
                weight=ctx.int32(
                    p.get("weight"), pf + ".weight", required=True, minimum=1, maximum=100
                ),
                preference=node_selector_term(
                    ctx,
                    ctx.map(p.get("preference"), pf + ".preference", required=True),
                    pf + ".preference",
                ),
            )
        )

    def required_terms(block: dict, name: str) -> tuple[PodAffinityTerm, ...]:
        f = f"{field}.{name}.requiredDuringSchedulingIgnoredDuringExecution"
        return tuple(
            _pod_affinity_term(ctx, t, tf, labels)
            for tf, t in ctx.maps(block.get("requiredDuringSchedulingIgnoredDuringExecution"), f)
        )

    return Affinity(
        node_required=node_required,
        node_preferred=tuple(preferred),
        pod_affinity_required=required_terms(pa, "podAffinity"),
        pod_affinity_preferred=_weighted_terms(
            ctx,
            pa.get("preferredDuringSchedulingIgnoredDuringExecution"),
            field + ".podAffinity.preferredDuringSchedulingIgnoredDuringExecution",
            labels,
        ),
        pod_anti_affinity_required=required_terms(paa, "podAntiAffinity"),
        pod_anti_affinity_preferred=_weighted_terms(
            ctx,
            paa.get("preferredDuringSchedulingIgnoredDuringExecution"),
            field + ".podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution",
            labels,
        ),
    )


def _tolerations(ctx: Ctx, raw: Any, field: str) -> tuple[Toleration, ...]:
    out = []
    for f, t in ctx.maps(raw, field):
        op = ctx.enum(t.get("operator"), f + ".operator", ("Exists", "Equal"), default="Equal")
        effect = ctx.enum(
            t.get("effect"),
            f + ".effect",
            ("", "NoSchedule", "PreferNoSchedule", "NoExecute"),
            default="",
        )
        key = ctx.str(t.get("key"), f + ".key")
        if op == "Equal" and key == "":
            raise ctx.fail(f + ".key", "operator Equal needs a key")
        out.append(
            Toleration(
                key=key, operator=op, value=ctx.str(t.get("value"), f + ".value"), effect=effect
            )
        )
    return tuple(out)


# ---- metadata ---------------------------------------------------------------------------------
def metadata(ctx: Ctx, raw: dict, *, namespaced: bool) -> tuple[str, str, dict]:
    meta = ctx.map(raw.get("metadata"), "metadata", required=True)
    name = ctx.str(meta.get("name"), "metadata.name", required=True)
    ns = (
        ctx.str(meta.get("namespace"), "metadata.namespace", default="default")
        if namespaced
        else ""
    )
    return ns or "default", name, meta


# ---- Node -------------------------------------------------------------------------------------
def parse_node(ctx: Ctx, raw: dict) -> Node:
    _, name, meta = metadata(ctx, raw, namespaced=False)
    spec = ctx.map(raw.get("spec"), "spec")
    status = ctx.map(raw.get("status"), "status")
    if status.get("allocatable") is not None:
        alloc = ctx.resources(status.get("allocatable"), "status.allocatable")
    elif status.get("capacity") is not None:
        alloc = ctx.resources(status.get("capacity"), "status.capacity")
    else:
        raise ctx.fail(
            "status.allocatable",
            "required field is missing (neither allocatable nor capacity is set)",
        )
    taints = []
    for f, t in ctx.maps(spec.get("taints"), "spec.taints"):
        taints.append(
            Taint(
                key=ctx.str(t.get("key"), f + ".key", required=True),
                value=ctx.str(t.get("value"), f + ".value"),
                effect=ctx.enum(
                    t.get("effect"),
                    f + ".effect",
                    ("NoSchedule", "PreferNoSchedule", "NoExecute"),
                    default="",
                ),
            )
        )
    images: dict[str, int] = {}
    for f, im in ctx.maps(status.get("images"), "status.images"):
        size = ctx.int(im.get("sizeBytes"), f + ".sizeBytes", minimum=0)  # int64
        for n in ctx.str_list(im.get("names"), f + ".names"):
            images[n] = size
    return Node(
        name=name,
        labels=ctx.str_map(meta.get("labels"), "metadata.labels"),
        annotations=ctx.str_map(meta.get("annotations"), "metadata.annotations"),
        taints=tuple(taints),
        unschedulable=ctx.bool(spec.get("unschedulable"), "spec.unschedulable"),
        allocatable=alloc,
        images=images,
        kubelet_version=ctx.str(
            ctx.map(status.get("nodeInfo"), "status.nodeInfo").get("kubeletVersion"),
            "status.nodeInfo.kubeletVersion",
        ),
        source=ctx.file,
    )


# ---- Pod --------------------------------------------------------------------------------------
def _container_requests(ctx: Ctx, c: dict, f: str) -> dict[str, int]:
    res = ctx.map(c.get("resources"), f + ".resources")
    req = ctx.resources(res.get("requests"), f + ".resources.requests")
    lim = ctx.resources(res.get("limits"), f + ".resources.limits")
    if req or lim:  # as the API server validates them (issue 41)
        check_requirements(ctx, res, f + ".resources")
    for k, v in lim.items():  # API defaulting: a limit without a request sets the request
        req.setdefault(k, v)
    return req


def _nonzero(req: dict[str, int]) -> dict[str, int]:
    return {
        CPU: req.get(CPU, DEFAULT_MILLI_CPU_REQUEST),
        MEMORY: req.get(MEMORY, DEFAULT_MEMORY_REQUEST),
    }


def pod_requests(
    ctx: Ctx, spec: dict
) -> tuple[dict[str, int], dict[str, int], tuple[HostPort, ...], tuple[str, ...]]:
    """Effective and non-zero requests, host ports and images of a pod.

    Mirrors ``resource.PodRequests`` (k8s.io/component-helpers/resource/helpers.go, v1.35):
    containers are summed, restartable init containers (sidecars) add to the sum and to every later
    init container, the result is the max of the sum and each init container, pod-level requests
    replace it for the resources they set (:mod:`gangplan.io.validation_pod_resources`), then
    overhead is added.
    """
    total: dict[str, int] = {}
    total_nz: dict[str, int] = {}
    ports: list[HostPort] = []
    images: list[str] = []
    for f, c in ctx.maps(spec.get("containers"), "spec.containers", required=True):
        r = _container_requests(ctx, c, f)
        total = add_resources(total, r)
        total_nz = add_resources(total_nz, _nonzero(r))
        if c.get("image") is not None:
            images.append(ctx.str(c.get("image"), f + ".image"))
        for pf, p in ctx.maps(c.get("ports"), f + ".ports"):
            # validateContainerPorts: containerPort (required upstream; checked when given) and a
            # non-zero hostPort are port numbers 1..65535 (pkg/apis/core/validation, v1.35).
            if p.get("containerPort") is not None:
                ctx.int32(p.get("containerPort"), pf + ".containerPort", minimum=1, maximum=65535)
            hp = ctx.int32(p.get("hostPort"), pf + ".hostPort", minimum=0, maximum=65535)
            if hp > 0:
                ports.append(
                    HostPort(
                        port=hp,
                        protocol=ctx.str(p.get("protocol"), pf + ".protocol", default="TCP"),
                        host_ip=ctx.str(p.get("hostIP"), pf + ".hostIP", default="0.0.0.0")
                        or "0.0.0.0",
                    )
                )
    init_max: dict[str, int] = {}
    init_max_nz: dict[str, int] = {}
    sidecars: dict[str, int] = {}
    sidecars_nz: dict[str, int] = {}
    for f, c in ctx.maps(spec.get("initContainers"), "spec.initContainers"):
        r = _container_requests(ctx, c, f)
        nz = _nonzero(r)
        if ctx.str(c.get("restartPolicy"), f + ".restartPolicy") == "Always":
            total, total_nz = add_resources(total, r), add_resources(total_nz, nz)
            sidecars, sidecars_nz = add_resources(sidecars, r), add_resources(sidecars_nz, nz)
            r, nz = dict(sidecars), dict(sidecars_nz)
        else:
            r, nz = add_resources(r, sidecars), add_resources(nz, sidecars_nz)
        init_max, init_max_nz = max_resources(init_max, r), max_resources(init_max_nz, nz)
    total, total_nz = max_resources(total, init_max), max_resources(total_nz, init_max_nz)
    # Pod-level spec.resources: defaulted and validated, its requests replace the aggregate (issue 41).
    for k, v in pod_level_requests(ctx, spec, total).items():
        total[k] = v
        if k in (CPU, MEMORY):
            total_nz[k] = v
    overhead = ctx.resources(spec.get("overhead"), "spec.overhead")
    if overhead:
        check_requirements(ctx, spec.get("overhead"), "spec.overhead", overhead=True)
    total, total_nz = (
        add_resources(total, overhead),
        add_resources(total_nz, {k: v for k, v in overhead.items() if k in (CPU, MEMORY)}),
    )
    for k in sorted(total.keys() | total_nz.keys()):
        # Each quantity fits an int64; their sum must too (kube-scheduler adds them in int64).
        amount = max(total.get(k, 0), total_nz.get(k, 0))
        ctx.check_amount(
            amount,
            "spec.containers",
            k,
            what=f"the pod's {k} request (containers, init containers and overhead together)",
        )
    return total, total_nz, tuple(ports), tuple(images)


def parse_pod(ctx: Ctx, raw: dict) -> Pod:
    ns, name, meta = metadata(ctx, raw, namespaced=True)
    spec = ctx.map(raw.get("spec"), "spec", required=True)
    status = ctx.map(raw.get("status"), "status")
    labels = ctx.str_map(meta.get("labels"), "metadata.labels")
    requests, nonzero, ports, images = pod_requests(ctx, spec)
    spread = []
    for f, t in ctx.maps(spec.get("topologySpreadConstraints"), "spec.topologySpreadConstraints"):
        sel = parse_label_selector(ctx, t.get("labelSelector"), f + ".labelSelector")
        match_keys = ctx.str_list(t.get("matchLabelKeys"), f + ".matchLabelKeys")
        if sel is not None and match_keys:
            extra = tuple(
                Requirement(key=k, operator="In", values=(labels[k],))
                for k in match_keys
                if k in labels
            )
            sel = LabelSelector(
                match_labels=sel.match_labels,
                match_expressions=sel.match_expressions
                + tuple(e for e in extra if e not in sel.match_expressions),
            )
        min_domains = t.get("minDomains")
        when = ctx.enum(
            t.get("whenUnsatisfiable"),
            f + ".whenUnsatisfiable",
            ("DoNotSchedule", "ScheduleAnyway"),
            default="",
        )
        if min_domains is not None and when != "DoNotSchedule":
            # validateMinDomains (pkg/apis/core/validation, v1.35)
            raise ctx.fail(
                f + ".minDomains",
                f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when or '(unset)'}",
            )
        spread.append(
            TopologySpreadConstraint(
                max_skew=ctx.int32(t.get("maxSkew"), f + ".maxSkew", required=True, minimum=1),
                topology_key=ctx.str(t.get("topologyKey"), f + ".topologyKey", required=True),
                when_unsatisfiable=when,
                label_selector=sel,
                min_domains=None
                if min_domains is None
                else ctx.int32(min_domains, f + ".minDomains", minimum=1),
                node_affinity_policy=ctx.enum(
                    t.get("nodeAffinityPolicy"),
                    f + ".nodeAffinityPolicy",
                    ("Honor", "Ignore"),
                    default="Honor",
                ),
                node_taints_policy=ctx.enum(
                    t.get("nodeTaintsPolicy"),
                    f + ".nodeTaintsPolicy",
                    ("Honor", "Ignore"),
                    default="Ignore",
                ),
            )
        )
    sg = ctx.map(spec.get("schedulingGroup"), "spec.schedulingGroup")
    wref = ctx.map(spec.get("workloadRef"), "spec.workloadRef")
    workload_ref = None
    if wref:
        workload_ref = (
            ctx.str(wref.get("name"), "spec.workloadRef.name", required=True),
            ctx.str(wref.get("podGroup"), "spec.workloadRef.podGroup", required=True),
            ctx.str(wref.get("podGroupReplicaKey"), "spec.workloadRef.podGroupReplicaKey"),
        )
    if not spec.get("nodeName"):
        _pending_pod_notes(ctx, spec)
    owners = ctx.maps(meta.get("ownerReferences"), "metadata.ownerReferences")
    priority = spec.get("priority")
    return Pod(
        namespace=ns,
        name=name,
        uid=ctx.str(meta.get("uid"), "metadata.uid"),
        labels=labels,
        annotations=ctx.str_map(meta.get("annotations"), "metadata.annotations"),
        creation_timestamp=ctx.str(meta.get("creationTimestamp"), "metadata.creationTimestamp"),
        node_name=ctx.opt_str(spec.get("nodeName"), "spec.nodeName") or None,
        requests=requests,
        nonzero_requests=nonzero,
        node_selector=ctx.str_map(spec.get("nodeSelector"), "spec.nodeSelector"),
        affinity=parse_affinity(ctx, spec.get("affinity"), "spec.affinity", labels),
        tolerations=_tolerations(ctx, spec.get("tolerations"), "spec.tolerations"),
        # Priority resolution from the class happens in the loader, which knows every PriorityClass.
        priority=ctx.int32(priority, "spec.priority") if priority is not None else 0,
        priority_class_name=ctx.str(spec.get("priorityClassName"), "spec.priorityClassName"),
        scheduler_name=ctx.str(
            spec.get("schedulerName"), "spec.schedulerName", default="default-scheduler"
        )
        or "default-scheduler",
        # An unset policy comes from the PriorityClass (Priority admission), resolved by the loader.
        preemption_policy=ctx.enum(
            spec.get("preemptionPolicy"),
            "spec.preemptionPolicy",
            PREEMPTION_POLICIES,
            default=PREEMPT_LOWER_PRIORITY,
        ),
        host_ports=ports,
        topology_spread=tuple(spread),
        pod_group=ctx.opt_str(sg.get("podGroupName"), "spec.schedulingGroup.podGroupName") or None,
        workload_ref=workload_ref,
        scheduling_gates=tuple(
            ctx.str(g.get("name"), f + ".name", required=True)
            for f, g in ctx.maps(spec.get("schedulingGates"), "spec.schedulingGates")
        ),
        phase=ctx.str(status.get("phase"), "status.phase", default="Pending") or "Pending",
        start_time=ctx.opt_str(status.get("startTime"), "status.startTime"),
        nominated_node_name=ctx.opt_str(status.get("nominatedNodeName"), "status.nominatedNodeName")
        or None,
        terminating=meta.get("deletionTimestamp") is not None,
        images=images,
        owner_kind=ctx.str(owners[0][1].get("kind"), owners[0][0] + ".kind") if owners else None,
        source=ctx.file,
    )


def _pending_pod_notes(ctx: Ctx, spec: dict) -> None:
    """Fields of a pending pod that filter nodes through plugins gangplan does not run."""
    # spec.resourceClaims: read by gangplan.io.dra_build (the loader), which names what it does not model.
    for _, v in ctx.maps(spec.get("volumes"), "spec.volumes"):
        if v.get("persistentVolumeClaim") is not None or v.get("ephemeral") is not None:
            ctx.note(
                "spec.volumes[].persistentVolumeClaim",
                "VolumeBinding / VolumeZone are not modelled: node affinity of the pod's volumes is ignored",
            )
            break


# ---- PodGroup / CompositePodGroup / Workload --------------------------------------------------
# Wire shapes per version: docs/upstream-api-shapes.md (k8s.io/api scheduling/*/types.go, v0.35.0 to
# master 10b39a39). Shapes are recognised by content, so one parser reads every served version.
_INT_OR_PERCENT_RE = re.compile(r"[0-9]+%?")
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


# ---- cluster-wide kinds -----------------------------------------------------------------------
# pkg/apis/scheduling/types.go and scheduling/v1 helpers (v1.35): user classes go up to one billion;
# the names with the "system-" prefix are reserved for the two system classes and their values.
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {
    "system-cluster-critical": 2_000_000_000,
    "system-node-critical": 2_000_001_000,
}


def parse_priority_class(ctx: Ctx, raw: dict) -> PriorityClass:
    """A PriorityClass, validated as ``ValidatePriorityClass`` (pkg/apis/scheduling/validation, v1.35)."""
    _, name, _ = metadata(ctx, raw, namespaced=False)
    global_default = ctx.bool(raw.get("globalDefault"), "globalDefault")
    if name.startswith("system-"):
        if name not in SYSTEM_PRIORITY_CLASSES:
            raise ctx.fail(
                "metadata.name",
                f"priority class names with the 'system-' prefix are reserved for system use only: {name} is not a known system priority class",
            )
        if global_default:
            raise ctx.fail("globalDefault", f"globalDefault of {name} PriorityClass must be false")
        system_value = SYSTEM_PRIORITY_CLASSES[name]
        value = ctx.int32(
            raw.get("value"), "value", required=True, minimum=system_value, maximum=system_value
        )
    else:
        value = ctx.int32(
            raw.get("value"), "value", required=True, maximum=HIGHEST_USER_DEFINABLE_PRIORITY
        )
    return PriorityClass(
        name=name,
        value=value,
        global_default=global_default,
        preemption_policy=ctx.enum(
            raw.get("preemptionPolicy"),
            "preemptionPolicy",
            PREEMPTION_POLICIES,
            default=PREEMPT_LOWER_PRIORITY,
        ),
        source=ctx.file,
    )


def parse_pdb(ctx: Ctx, raw: dict) -> tuple[PodDisruptionBudget, bool]:
    """The PDB, and whether ``status.disruptionsAllowed`` was given (else the loader computes it)."""
    ns, name, _ = metadata(ctx, raw, namespaced=True)
    spec = ctx.map(raw.get("spec"), "spec", required=True)
    status = ctx.map(raw.get("status"), "status")
    has_status = status.get("disruptionsAllowed") is not None
    mina = spec.get("minAvailable")
    maxu = spec.get("maxUnavailable")
    if mina is not None and maxu is not None:
        raise ctx.fail(
            "spec.minAvailable", "minAvailable and maxUnavailable are mutually exclusive"
        )
    for f, v in (("spec.minAvailable", mina), ("spec.maxUnavailable", maxu)):
        if v is not None:
            s = ctx.str(v, f)
            if not _INT_OR_PERCENT_RE.fullmatch(s):
                raise ctx.fail(f, f"expected a non-negative integer or percentage, got {s!r}")
    return (
        PodDisruptionBudget(
            namespace=ns,
            name=name,
            selector=parse_label_selector(ctx, spec.get("selector"), "spec.selector"),
            min_available=None if mina is None else str(mina),
            max_unavailable=None if maxu is None else str(maxu),
            disruptions_allowed=ctx.int32(
                status.get("disruptionsAllowed"), "status.disruptionsAllowed", minimum=0
            ),
            disrupted_pods=tuple(
                ctx.map(status.get("disruptedPods"), "status.disruptedPods").keys()
            ),
            source=ctx.file,
        ),
        has_status,
    )


def parse_namespace(ctx: Ctx, raw: dict) -> Namespace:
    _, name, meta = metadata(ctx, raw, namespaced=False)
    return Namespace(name=name, labels=ctx.str_map(meta.get("labels"), "metadata.labels"))


def parse_topology(ctx: Ctx, raw: dict) -> TopologyLevels:
    _, name, _ = metadata(ctx, raw, namespaced=False)
    spec = ctx.map(raw.get("spec"), "spec", required=True)
    levels = tuple(
        ctx.str(lv.get("nodeLabel"), f + ".nodeLabel", required=True)
        for f, lv in ctx.maps(spec.get("levels"), "spec.levels", required=True)
    )
    if not levels:
        raise ctx.fail("spec.levels", "at least one level is required")
    if len(set(levels)) != len(levels):
        raise ctx.fail("spec.levels", "node labels must be unique")
    return TopologyLevels(name=name, levels=levels, source=ctx.file)
