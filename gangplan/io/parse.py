"""Parse raw Kubernetes objects (dicts from YAML/JSON) into gangplan's normalised models.

Each ``parse_*`` function takes the raw object and a :class:`Ctx` and either returns a model or
raises :class:`SnapshotError` naming the field. Fields a type does not define are not read here:
the loader names them in warnings (:mod:`gangplan.io.schema`), as strict field validation would.
Defaulting that the API server would have applied to a hand-written object (requests from limits,
the default namespace, matchLabelKeys merged into the selector) is applied here.

Node, Pod and the cluster-wide kinds are parsed in this module; the pieces every kind shares
(metadata, selectors, affinity) in :mod:`gangplan.io.parse_common`, PodGroup, CompositePodGroup
and Workload in :mod:`gangplan.io.parse_groups`. Every ``parse_*`` function is importable from here.
"""

from __future__ import annotations

import re
from typing import Any

from gangplan.io.fields import Ctx
from gangplan.io.parse_common import (
    metadata,
    node_selector_term,
    parse_affinity,
    parse_label_selector,
)
from gangplan.io.parse_groups import (
    COMPOSITE_SPEC_FIELDS,
    GROUP_CLAIM_FIELDS,
    PODGROUP_SPEC_FIELDS,
    parse_composite_pod_group,
    parse_pod_group,
    parse_workload,
)
from gangplan.io.resources_validation import check_requirements
from gangplan.io.validation_pod_resources import pod_level_requests
from gangplan.models.objects import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    PREEMPT_LOWER_PRIORITY,
    PREEMPTION_POLICIES,
    HostPort,
    LabelSelector,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    Requirement,
    Taint,
    Toleration,
    TopologyLevels,
    TopologySpreadConstraint,
)
from gangplan.models.quantity import add_resources, max_resources


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


# ---- cluster-wide kinds -----------------------------------------------------------------------
_INT_OR_PERCENT_RE = re.compile(r"[0-9]+%?")
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


__all__ = [
    "COMPOSITE_SPEC_FIELDS",
    "GROUP_CLAIM_FIELDS",
    "HIGHEST_USER_DEFINABLE_PRIORITY",
    "PODGROUP_SPEC_FIELDS",
    "SYSTEM_PRIORITY_CLASSES",
    "metadata",
    "node_selector_term",
    "parse_affinity",
    "parse_composite_pod_group",
    "parse_label_selector",
    "parse_namespace",
    "parse_node",
    "parse_pdb",
    "parse_pod",
    "parse_pod_group",
    "parse_priority_class",
    "parse_topology",
    "parse_workload",
    "pod_requests",
]
