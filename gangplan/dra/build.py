"""Assemble a :class:`DraState` from the ``resource.k8s.io`` objects and pods the loader read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from gangplan.dra.model import EXTENDED_PREFIX, Claim, Device, DraState
from gangplan.dra.parse import (
    parse_claim,
    parse_claim_template,
    parse_device_class,
    parse_resource_slice,
)
from gangplan.io.fields import Ctx

Note = Callable[[str, str, str, str], None]
"""(kind, field, message, object name) -> records a warning."""

UNMODELLED_GROUP_CLAIM = "DynamicResources (DRA) is not modelled for claims shared by a pod group (KEP-5729): the pod is placed as if its claims were allocatable anywhere"


def build_state(objects: list[tuple[Ctx, str, dict]], pods: list[tuple[object, dict, Ctx]], group_claims: set[tuple[str, str]],
                note: Note, nodes: dict | None = None) -> DraState:
    """``objects``: (context, kind, raw) of every DRA object read; ``pods``: (Pod, raw, context)
    of the snapshot; ``group_claims``: (namespace, claim or template name) that pod groups share;
    ``nodes``: name -> Node (to find bound pods whose DRA-served extended resources no claim covers)."""
    st = DraState()
    slices: dict[tuple[str, str], list[tuple[int, int, str, str | None, list[Device]]]] = {}
    templates: dict[str, tuple] = {}
    for ctx, kind, raw in objects:
        name = ctx.obj.split("/", 1)[1] if "/" in ctx.obj else ctx.obj
        if kind == "DeviceClass":
            c = parse_device_class(ctx, raw)
            st.classes[c.name] = c
        elif kind == "ResourceSlice":
            node, devices, (driver, pool, gen, count) = parse_resource_slice(ctx, raw)
            slices.setdefault((driver, pool), []).append((gen, count, str(raw["metadata"]["name"]), node, devices))
        elif kind == "ResourceClaim":
            c = parse_claim(ctx, raw)
            st.claims[c.key] = c
        elif kind == "ResourceClaimTemplate":
            key, reqs, why, cons = parse_claim_template(ctx, raw)
            templates[key] = (reqs, why, cons)
            st.templates[key] = reqs
        for field, message in ctx.notes:
            note(kind, field, message, name)
        ctx.notes.clear()
    # Pools: only the newest generation counts (upstream GatherPools); by driver, pool, slice name.
    for (driver, pool), got in sorted(slices.items()):
        newest = max(g for g, *_ in got)
        current = sorted((s for s in got if s[0] == newest), key=lambda s: s[2])
        if len(current) < current[0][1]:
            note("ResourceSlice", "spec.pool.resourceSliceCount", f"pool {driver}/{pool} is incomplete ({len(current)} of {current[0][1]} slices): its devices are allocated as published", current[0][2])
        for _, _, _, node, devices in current:
            if node is not None:
                st.devices_by_node.setdefault(node, []).extend(devices)
    # KEP-5004: explicit extendedResourceName (first class by name when several), and the implicit name.
    for cname in sorted(st.classes):
        c = st.classes[cname]
        st.extended[EXTENDED_PREFIX + cname] = cname
        if c.extended_resource_name:
            if c.extended_resource_name in st.extended:
                note("DeviceClass", "spec.extendedResourceName", f"{c.extended_resource_name} is mapped by several DeviceClasses: {st.extended[c.extended_resource_name]} is used", cname)
            else:
                st.extended[c.extended_resource_name] = cname
    # KEP-5075 (``foreachAllocatedDevice`` in pkg/scheduler/framework/plugins/dynamicresources,
    # v1.36): a result with a shareID consumes capacity, the others take their device.
    dedicated: set = set()
    for c in st.claims.values():
        shares = Counter(d for d, _ in c.shared)
        for d in c.allocated or ():
            if shares[d] > 0:
                shares[d] -= 1
            else:
                dedicated.add(d)
        for d, used in c.shared:
            per = st.consumed.setdefault(d, {})
            for k, v in used:
                per[k] = per.get(k, 0) + v
    st.in_use = frozenset(dedicated)
    reserved = {(c.key.split("/", 1)[0], name) for c in st.claims.values() if c.allocated is not None for name in c.reserved_for}
    for pod, raw, ctx in pods:
        if getattr(pod, "node_name", None):
            node = (nodes or {}).get(pod.node_name)
            served = st.mapped_on(node) if node is not None else set()
            if any(pod.requests.get(r, 0) > 0 for r in served) and (pod.namespace, pod.name) not in reserved:
                note("Pod", "spec.containers[].resources", "a bound pod uses an extended resource DRA serves on its node (KEP-5004) but no allocated "
                     "ResourceClaim in the snapshot is reserved for it: its devices count as free", pod.key)
            continue
        spec = raw.get("spec") or {}
        status = raw.get("status") or {}
        seen = len(ctx.notes)  # the loader has already recorded the notes before these
        generated = {str(s.get("name")): s.get("resourceClaimName") for _, s in ctx.maps(status.get("resourceClaimStatuses"), "status.resourceClaimStatuses")}
        keys = []
        for f, rc in ctx.maps(spec.get("resourceClaims"), "spec.resourceClaims"):
            cname = ctx.str(rc.get("name"), f + ".name", required=True)
            claim_name = ctx.opt_str(rc.get("resourceClaimName"), f + ".resourceClaimName")
            tpl = ctx.opt_str(rc.get("resourceClaimTemplateName"), f + ".resourceClaimTemplateName")
            if (claim_name is None) == (tpl is None):
                raise ctx.fail(f, "must set exactly one of resourceClaimName, resourceClaimTemplateName")
            if (pod.namespace, claim_name or tpl) in group_claims:
                note("Pod", "spec.resourceClaims", UNMODELLED_GROUP_CLAIM, pod.key)
                continue
            if claim_name is not None:
                key = f"{pod.namespace}/{claim_name}"
                if key not in st.claims:
                    st.pod_missing.setdefault(pod.key, f'resourceclaim "{claim_name}" not found')
                else:
                    keys.append(key)
                continue
            gen = generated.get(cname)
            if gen and f"{pod.namespace}/{gen}" in st.claims:
                keys.append(f"{pod.namespace}/{gen}")
                continue
            tkey = f"{pod.namespace}/{tpl}"
            if tkey not in templates:
                st.pod_missing.setdefault(pod.key, f'resourceclaimtemplate "{tpl}" not found')
                continue
            reqs, why, cons = templates[tkey]
            key = f"{pod.namespace}/{pod.name}-{cname}"  # what the resourceclaim controller would create
            st.claims[key] = Claim(key=key, requests=reqs, unsupported=why, constraints=cons)
            keys.append(key)
        if keys:
            st.pod_claims[pod.key] = tuple(keys)
        for field, message in ctx.notes[seen:]:
            note("Pod", field, message, pod.key)
    st.constraints = {k: c.constraints for k, c in st.claims.items() if c.constraints}
    return st
