"""Assemble a :class:`DraState` from the ``resource.k8s.io`` objects and pods the loader read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace

from gangplan.dra.model import EXTENDED_PREFIX, Claim, CounterPool, Device, DraState, untolerated
from gangplan.io.dra_parse import (
    parse_claim,
    parse_claim_template,
    parse_device_class,
    parse_resource_slice,
    parse_taint_rule,
)
from gangplan.io.fields import Ctx

Note = Callable[[str, str, str, str], None]
"""(kind, field, message, object name) -> records a warning."""


def group_claim_key(namespace: str, group: str, claim) -> str:
    """The claim key of a PodGroup claim (KEP-5729): the named ResourceClaim, the one
    ``status.resourceClaimStatuses`` names, or ``<group>-<claim name>`` for the claim the
    controller would make from the template (upstream adds a random suffix)."""
    if claim.resource_claim_name is not None:
        return f"{namespace}/{claim.resource_claim_name}"
    return f"{namespace}/{claim.generated or f'{group}-{claim.name}'}"


def _group_claim(groups, pod, name: str, claim: str | None, template: str | None):
    """The pod's group claim its entry (name, claim, template) matches exactly, or None."""
    if not isinstance(groups, Mapping) or not getattr(pod, "pod_group", None):
        return None
    g = groups.get(pod.group_key)
    for c in getattr(g, "resource_claims", ()):
        if (
            c.name == name
            and c.resource_claim_name == claim
            and c.resource_claim_template_name == template
        ):
            return c
    return None


ADMIN_LABEL = "resource.kubernetes.io/admin-access"
"""The namespace label admin access needs (KEP-5018; ``AuthorizedForAdmin``, ``pkg/registry/
resource/utils.go``, run by the ResourceClaim and ResourceClaimTemplate strategies' create and
update validation, kubernetes/kubernetes master; value ``"true"``)."""


def _admin(requests) -> bool:
    return any(r.admin_access for r in requests)


def _admin_refused(namespaces: Mapping | None, namespace: str) -> bool:
    """Whether the snapshot has ``namespace`` as a Namespace object without the admin-access label."""
    ns = (namespaces or {}).get(namespace)
    return ns is not None and getattr(ns, "labels", {}).get(ADMIN_LABEL) != "true"


def build_state(
    objects: list[tuple[Ctx, str, dict]],
    pods: list[tuple[object, dict, Ctx]],
    groups: Mapping | set,
    note: Note,
    nodes: dict | None = None,
    namespaces: Mapping | None = None,
) -> DraState:
    """``objects``: (context, kind, raw) of every DRA object read; ``pods``: (Pod, raw, context)
    of the snapshot; ``groups``: group key -> PodGroup (their ``resource_claims``, KEP-5729);
    ``nodes``: name -> Node (to find bound pods whose DRA-served extended resources no claim covers);
    ``namespaces``: name -> Namespace of the snapshot (its labels).

    Admin access (KEP-5018) needs the namespace label :data:`ADMIN_LABEL` ``"true"``, which API
    validation checks when a claim or template is written, never the scheduler. A ResourceClaim
    or ResourceClaimTemplate asking for it in a namespace the snapshot has without the label
    (the label removed after it was written) is named in a warning and modelled as written; a
    claim the resourceclaim controller has still to make from such a template would be refused by
    the API server, so its pod waits for it (PreFilter rejects the pod). Without the Namespace in
    the snapshot nothing is checked.

    A pod's ``spec.resourceClaims`` entry that matches one of its PodGroup's claims exactly (same
    name, same claim or template) uses the group's claim: one claim for every pod of the group,
    allocated for the first of them that is placed and shared by the rest (a shared claim, as
    :mod:`gangplan.dra.rules` and the exact engine's same-node rows treat any claim several
    pending pods use)."""
    st = DraState()
    slices: dict[tuple[str, str], list[tuple[int, int, str, str | None, list[Device]]]] = {}
    templates: dict[str, tuple] = {}
    rules: list = []
    for ctx, kind, raw in objects:
        name = ctx.obj.split("/", 1)[1] if "/" in ctx.obj else ctx.obj
        _read_object(st, ctx, kind, raw, slices, templates, rules, namespaces)
        for field, message in ctx.notes:
            note(kind, field, message, name)
        ctx.notes.clear()
    _gather_pools(st, slices, rules, nodes, note)
    _map_extended(st, note)
    _allocated_devices(st)
    st.taint_rules = tuple(rules)
    _note_evictions(st, note)
    reserved = {
        (c.key.split("/", 1)[0], name)
        for c in st.claims.values()
        if c.allocated is not None
        for name in c.reserved_for
    }
    for pod, raw, ctx in pods:
        if getattr(pod, "node_name", None):
            _note_bound_pod(st, pod, nodes, reserved, note)
            continue
        seen = len(ctx.notes)  # the loader has already recorded the notes before these
        keys = _pod_claim_keys(st, pod, raw, ctx, groups, templates, namespaces)
        if keys:
            st.pod_claims[pod.key] = tuple(keys)
        for field, message in ctx.notes[seen:]:
            note("Pod", field, message, pod.key)
    st.constraints = {k: c.constraints for k, c in st.claims.items() if c.constraints}
    return st


def _read_object(
    st: DraState,
    ctx: Ctx,
    kind: str,
    raw: dict,
    slices: dict,
    templates: dict,
    rules: list,
    namespaces: Mapping | None,
) -> None:
    """One DRA object into ``st`` (DeviceClass, ResourceClaim, the templates' requests), or kept
    for later: a ResourceSlice's devices by (driver, pool), a template, a DeviceTaintRule."""
    if kind == "DeviceClass":
        c = parse_device_class(ctx, raw)
        st.classes[c.name] = c
    elif kind == "ResourceSlice":
        targets, devices, (driver, pool, gen, count), counter_sets = parse_resource_slice(ctx, raw)
        slices.setdefault((driver, pool), []).append(
            (gen, count, str(raw["metadata"]["name"]), targets, devices, counter_sets)
        )
    elif kind == "ResourceClaim":
        c = parse_claim(ctx, raw)
        st.claims[c.key] = c
        if any(_admin(r.alternatives or (r,)) for r in c.requests) and _admin_refused(
            namespaces, c.key.split("/", 1)[0]
        ):
            ctx.note(
                "spec.devices.requests[].exactly.adminAccess",
                f"admin access in namespace {c.key.split('/', 1)[0]}, which lacks the label "
                f'{ADMIN_LABEL}: "true" that API validation requires when the claim is written: the claim is modelled as written',
            )
    elif kind == "ResourceClaimTemplate":
        key, reqs, why, cons = parse_claim_template(ctx, raw)
        templates[key] = (reqs, why, cons)
        st.templates[key] = reqs
        if _admin(reqs) and _admin_refused(namespaces, key.split("/", 1)[0]):
            ctx.note(
                "spec.spec.devices.requests[].exactly.adminAccess",
                f"admin access in namespace {key.split('/', 1)[0]}, which lacks the label "
                f'{ADMIN_LABEL}: "true": the API server refuses the claims the resourceclaim controller would make from the template, '
                "so pods waiting for one stay pending",
            )
    elif kind == "DeviceTaintRule":
        rules.append(parse_taint_rule(ctx, raw))


def _gather_pools(st: DraState, slices: dict, rules: list, nodes: dict | None, note: Note) -> None:
    """Pools: only the newest generation counts (upstream GatherPools); by driver, pool, slice name.
    A device of a multi-node slice (nodeSelector / allNodes / perDeviceNodeSelection) is on the
    list of every node it reaches, at its place in that order.
    KEP-4815: a pool's counter sets are those of all its current slices (in v1 a slice has
    either devices or sharedCounters, so they live in slices of their own), wherever the slices'
    nodes are; every device of the pool that consumes counters joins one CounterPool."""
    reaches: dict = {}

    def reached(where) -> list[str]:
        """The snapshot's nodes (in their order) a multi-node device's :class:`NodeReach` matches."""
        got = reaches.get(where)
        if got is None:
            got = reaches[where] = [n for n, obj in (nodes or {}).items() if where.matches(obj)]
        return got

    for (driver, pool), got in sorted(slices.items()):
        newest = max(g for g, *_ in got)
        current = sorted((s for s in got if s[0] == newest), key=lambda s: s[2])
        incomplete = len(current) < current[0][1]
        if incomplete:
            note(
                "ResourceSlice",
                "spec.pool.resourceSliceCount",
                f"pool {driver}/{pool} is incomplete ({len(current)} of {current[0][1]} slices): its devices are allocated as published",
                current[0][2],
            )
        cp = _counter_pool(driver, pool, current, note)
        for _, _, sname, targets, devices, _ in current:
            _complete_devices(devices, rules, incomplete, cp, sname, note)
            for d, where in zip(devices, targets, strict=True):
                if isinstance(where, str):
                    st.devices_by_node.setdefault(where, []).append(d)
                elif (
                    where is not None
                ):  # a multi-node device: on every node of the snapshot it reaches (GatherPools)
                    for n in reached(where):
                        st.devices_by_node.setdefault(n, []).append(d)


def _counter_pool(driver: str, pool: str, current: list, note: Note) -> CounterPool | None:
    """KEP-4815: the pool's counter sets from its current slices (the first by slice name where
    several define one), or None when no slice defines any and no device consumes any."""
    cp = None
    for _, _, sname, _, devices, counter_sets in current:
        if counter_sets or any(d.counters for d in devices):
            cp = cp or CounterPool(driver, pool)
        for cname, values in counter_sets.items():
            if cname in cp.sets:
                note(
                    "ResourceSlice",
                    "spec.sharedCounters",
                    f"counter set {cname!r} of pool {driver}/{pool} is defined in several slices: the first (by slice name) is used",
                    sname,
                )
                continue
            cp.sets[cname] = values
    return cp


def _complete_devices(
    devices: list[Device],
    rules: list,
    incomplete: bool,
    cp: CounterPool | None,
    sname: str,
    note: Note,
) -> None:
    """One current slice's devices as the scheduler sees them, in place: each matching
    DeviceTaintRule's taint added (KEP-5055, the ResourceSlice tracker), the pool's
    incompleteness marked, and each device consuming counters joined to the pool's CounterPool."""
    if rules:  # KEP-5055: the scheduler's ResourceSlice tracker adds each matching rule's taint
        for i, d in enumerate(devices):
            extra = tuple(r.taint for r in rules if r.applies(d.driver, d.pool, d.name))
            if extra:
                devices[i] = replace(d, rule_taints=extra, taints=d.slice_taints + extra)
    if incomplete:
        devices[:] = [replace(d, pool_incomplete=True) for d in devices]
    if cp is None:
        return
    for i, d in enumerate(devices):
        if d.counters:
            for cname, _ in d.counters:
                if cname not in cp.sets:
                    note(
                        "ResourceSlice",
                        "spec.devices[].consumesCounters",
                        f"device {d.name} consumes counter set {cname!r}, which pool {cp.driver}/{cp.pool} does not define: "
                        "that consumption is not checked (as upstream's allocator)",
                        sname,
                    )
            devices[i] = d = replace(d, counter_pool=cp)
            cp.users.append(d)


def _map_extended(st: DraState, note: Note) -> None:
    """KEP-5004: explicit extendedResourceName (first class by name when several), and the implicit name."""
    for cname in sorted(st.classes):
        c = st.classes[cname]
        st.extended[EXTENDED_PREFIX + cname] = cname
        if c.extended_resource_name:
            if c.extended_resource_name in st.extended:
                note(
                    "DeviceClass",
                    "spec.extendedResourceName",
                    f"{c.extended_resource_name} is mapped by several DeviceClasses: {st.extended[c.extended_resource_name]} is used",
                    cname,
                )
            else:
                st.extended[c.extended_resource_name] = cname


def _allocated_devices(st: DraState) -> None:
    """KEP-5075 (``foreachAllocatedDevice`` in pkg/scheduler/framework/plugins/dynamicresources,
    v1.36): a result with a shareID consumes capacity, the others take their device. A result
    with adminAccess (KEP-5018) does neither: "Is not considered as allocated"
    (``allocateddevices.go`` @030880a5; the parser keeps no share of it)."""
    dedicated: set = set()
    for c in st.claims.values():
        shares = Counter(d for d, _ in c.shared)
        for i, d in enumerate(c.allocated or ()):
            if c.result_admin and c.result_admin[i]:
                continue
            if shares[d] > 0:
                shares[d] -= 1
            else:
                dedicated.add(d)
        for d, used in c.shared:
            per = st.consumed.setdefault(d, {})
            for k, v in used:
                per[k] = per.get(k, 0) + v
    st.in_use = frozenset(dedicated)


def _note_bound_pod(st: DraState, pod, nodes: dict | None, reserved: set, note: Note) -> None:
    """A bound pod using an extended resource DRA serves on its node (KEP-5004) with no allocated
    claim reserved for it: named in a warning (its devices count as free)."""
    node = (nodes or {}).get(pod.node_name)
    served = st.mapped_on(node) if node is not None else set()
    if (
        any(pod.requests.get(r, 0) > 0 for r in served)
        and (pod.namespace, pod.name) not in reserved
    ):
        note(
            "Pod",
            "spec.containers[].resources",
            "a bound pod uses an extended resource DRA serves on its node (KEP-5004) but no allocated "
            "ResourceClaim in the snapshot is reserved for it: its devices count as free",
            pod.key,
        )


def _pod_claim_keys(
    st: DraState,
    pod,
    raw: dict,
    ctx: Ctx,
    groups: Mapping | set,
    templates: dict,
    namespaces: Mapping | None,
) -> list[str]:
    """The claim keys of a pending pod's ``spec.resourceClaims``, in order; an entry whose claim
    is missing is noted in :attr:`DraState.pod_missing` instead."""
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    generated = {
        str(s.get("name")): s.get("resourceClaimName")
        for _, s in ctx.maps(status.get("resourceClaimStatuses"), "status.resourceClaimStatuses")
    }
    keys = []
    for f, rc in ctx.maps(spec.get("resourceClaims"), "spec.resourceClaims"):
        key = _entry_key(st, pod, ctx, f, rc, generated, groups, templates, namespaces)
        if key is not None:
            keys.append(key)
    return keys


def _entry_key(
    st: DraState,
    pod,
    ctx: Ctx,
    f: str,
    rc: dict,
    generated: dict,
    groups: Mapping | set,
    templates: dict,
    namespaces: Mapping | None,
) -> str | None:
    """The claim key of one ``spec.resourceClaims`` entry: its PodGroup's claim (KEP-5729), the
    named ResourceClaim, the claim ``status.resourceClaimStatuses`` names, or the one the
    resourceclaim controller would create from the template (added to ``st``); None when missing."""
    cname = ctx.str(rc.get("name"), f + ".name", required=True)
    claim_name = ctx.opt_str(rc.get("resourceClaimName"), f + ".resourceClaimName")
    tpl = ctx.opt_str(rc.get("resourceClaimTemplateName"), f + ".resourceClaimTemplateName")
    if (claim_name is None) == (tpl is None):
        raise ctx.fail(f, "must set exactly one of resourceClaimName, resourceClaimTemplateName")
    gc = _group_claim(groups, pod, cname, claim_name, tpl)
    if gc is not None and tpl is not None:
        key = group_claim_key(pod.namespace, pod.pod_group, gc)
        if key not in st.claims:
            if gc.generated is not None:
                st.pod_missing.setdefault(pod.key, f'resourceclaim "{gc.generated}" not found')
                return None
            if not _claim_from_template(st, pod, tpl, templates, key, namespaces):
                return None
        return key
    if claim_name is not None:
        key = f"{pod.namespace}/{claim_name}"
        if key not in st.claims:
            st.pod_missing.setdefault(pod.key, f'resourceclaim "{claim_name}" not found')
            return None
        return key
    gen = generated.get(cname)
    if gen and f"{pod.namespace}/{gen}" in st.claims:
        return f"{pod.namespace}/{gen}"
    key = f"{pod.namespace}/{pod.name}-{cname}"  # what the resourceclaim controller would create
    return key if _claim_from_template(st, pod, tpl, templates, key, namespaces) else None


def _claim_from_template(
    st, pod, tpl: str, templates, key: str, namespaces: Mapping | None = None
) -> bool:
    """The claim ``key`` the resourceclaim controller makes from the pod's template ``tpl`` (in the
    pod's namespace), added to ``st``; False (the pod is noted missing it) when there is no such
    template, or when it asks for admin access in a namespace without :data:`ADMIN_LABEL` (API
    validation refuses the claim: "admin access to devices requires the
    `resource.kubernetes.io/admin-access: true` label on the containing namespace")."""
    tkey = f"{pod.namespace}/{tpl}"
    if tkey not in templates:
        st.pod_missing.setdefault(pod.key, f'resourceclaimtemplate "{tpl}" not found')
        return False
    reqs, why, cons = templates[tkey]
    if _admin(reqs) and _admin_refused(namespaces, pod.namespace):
        st.pod_missing.setdefault(
            pod.key,
            f'resourceclaim "{key.split("/", 1)[1]}" not found (the API server refuses it: admin access to devices '
            f"requires the `{ADMIN_LABEL}: true` label on the containing namespace)",
        )
        return False
    st.claims[key] = Claim(key=key, requests=reqs, unsupported=why, constraints=cons)
    return True


def _note_evictions(st: DraState, note: Note) -> None:
    """KEP-5055: a claim allocated in the snapshot keeps its devices whatever their taints (the
    allocator only checks new allocations). A NoExecute taint its request does not tolerate would
    make the device taint eviction controller evict the claim's pods, which gangplan does not
    model: named in a warning (the taints of the newest release's view: slices and rules)."""
    by_id = {d.id: d for devs in st.devices_by_node.values() for d in devs}
    for c in st.claims.values():
        for i, did in enumerate(c.allocated or ()):
            d = by_id.get(did)
            if d is None:
                continue
            name = c.result_requests[i] if i < len(c.result_requests) else ""
            r = c.request_named(name)
            noexec = tuple(t for t in d.slice_taints + d.rule_taints if t.effect == "NoExecute")
            t = untolerated(noexec, r.tolerations if r is not None else ())
            if t is not None:
                note(
                    "ResourceClaim",
                    "status.allocation.devices.results[]",
                    f"device {'/'.join(did)} has NoExecute taint {t}"
                    f"{' (' + t.source + ')' if t.source else ''}, which the claim does not tolerate: eviction by NoExecute device taints is not "
                    "modelled, the claim keeps its devices and its pods stay",
                    c.key,
                )
                break
