"""Reading ``resource.k8s.io`` objects (v1, and v1beta1 / v1beta2 as v1.33-v1.35 servers return
them) into :mod:`gangplan.dra.model`. Field renames (``k8s.io/api`` ``resource/v1beta1`` vs ``v1``
``types.go``): v1beta1 keeps a device's ``attributes`` / ``capacity`` under ``basic`` and a
request's ``deviceClassName`` / ``selectors`` / ``allocationMode`` / ``count`` on the request
itself; v1beta2 and v1 move them to the device and under ``exactly``. Capacity is a quantity
(v1beta1 before v1.33) or ``{value: quantity}``.

What is read but not modelled is named with ``ctx.note`` (a warning; ``--strict`` refuses it):
partitionable devices and shared counters (KEP-4815), ``All`` allocation mode, ``firstAvailable``,
admin access, device taints and tolerations, binding conditions, multi-node slices (nodeSelector /
allNodes / perDeviceNodeSelection), constraints (matchAttribute), consumable capacity, claim
``config``. A claim using one of them cannot be allocated by gangplan: no node fits it.
"""

from __future__ import annotations

from typing import Any

from gangplan.dra.cel import AVAILABLE, check
from gangplan.dra.model import Claim, Device, DeviceClass, DeviceID, DeviceRequest
from gangplan.io.fields import Ctx
from gangplan.models.quantity import QuantityError, to_scheduler_int

VERSIONS = ("v1", "v1beta1", "v1beta2")
KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")


def _selectors(ctx: Ctx, raw: Any, field: str) -> tuple[str, ...]:
    out = []
    for f, s in ctx.maps(raw, field):
        cel = ctx.map(s.get("cel"), f + ".cel", required=True)
        expr = ctx.str(cel.get("expression"), f + ".cel.expression", required=True)
        if not AVAILABLE:
            ctx.note(f + ".cel", "CEL selectors need cel-expr-python, which is not installed: the claim is not allocatable")
        elif (why := check(expr)) is not None:
            ctx.note(f + ".cel.expression", f"CEL expression rejected ({why}): allocations that need it fail")
        out.append(expr)
    return tuple(out)


def parse_device_class(ctx: Ctx, raw: dict) -> DeviceClass:
    meta = ctx.map(raw.get("metadata"), "metadata", required=True)
    spec = ctx.map(raw.get("spec"), "spec")
    # spec.config is passed to drivers only: it never changes placement, and is not read.
    return DeviceClass(
        name=ctx.str(meta.get("name"), "metadata.name", required=True),
        selectors=_selectors(ctx, spec.get("selectors"), "spec.selectors"),
        extended_resource_name=ctx.opt_str(spec.get("extendedResourceName"), "spec.extendedResourceName") or None,
    )


def _value(ctx: Ctx, v: dict, field: str) -> Any:
    for k in ("int", "bool", "string"):
        if k in v:
            return v[k]
    if "version" in v:
        ctx.note(field + ".version", "version attributes are passed to CEL as strings (no semver functions)")
        return v["version"]
    raise ctx.fail(field, "attribute must set one of int, bool, string, version")


def _qualify(name: str, driver: str) -> tuple[str, str]:
    if "/" in name:
        domain, _, short = name.partition("/")
        return domain, short
    return driver, name


def parse_resource_slice(ctx: Ctx, raw: dict) -> tuple[str | None, list[Device], tuple[str, str, int, int]]:
    """(node name or None for a multi-node slice, devices, (driver, pool, generation, sliceCount))."""
    meta = ctx.map(raw.get("metadata"), "metadata", required=True)
    name = ctx.str(meta.get("name"), "metadata.name", required=True)
    spec = ctx.map(raw.get("spec"), "spec", required=True)
    driver = ctx.str(spec.get("driver"), "spec.driver", required=True)
    pool = ctx.map(spec.get("pool"), "spec.pool", required=True)
    pool_name = ctx.str(pool.get("name"), "spec.pool.name", required=True)
    generation = ctx.int(pool.get("generation"), "spec.pool.generation", minimum=0)
    count = ctx.int(pool.get("resourceSliceCount"), "spec.pool.resourceSliceCount", minimum=0) or 1
    node = ctx.opt_str(spec.get("nodeName"), "spec.nodeName") or None
    for f in ("nodeSelector", "allNodes", "perDeviceNodeSelection"):
        if spec.get(f):
            ctx.note(f"spec.{f}", "multi-node ResourceSlices are not modelled: their devices are not allocated")
            node = None
    if spec.get("sharedCounters"):
        ctx.note("spec.sharedCounters", "shared counters (partitionable devices, KEP-4815) are not modelled: devices consuming counters are not allocated")
    devices = []
    for f, d in ctx.maps(spec.get("devices"), "spec.devices"):
        basic = ctx.map(d.get("basic"), f + ".basic") if "basic" in d else d  # v1beta1
        dname = ctx.str(d.get("name"), f + ".name", required=True)
        skip = None
        for feature, what in (("consumesCounters", "shared counters (KEP-4815)"), ("taints", "device taints"),
                              ("bindingConditions", "binding conditions"), ("allowMultipleAllocations", "consumable capacity (KEP-5075)"),
                              ("nodeName", "per-device node selection"), ("nodeSelector", "per-device node selection"), ("allNodes", "per-device node selection")):
            if basic.get(feature) or d.get(feature):
                ctx.note(f"{f.split('[')[0]}[].{feature}", f"{what} not modelled: the device is not allocated")
                skip = feature
        attrs: dict[str, dict[str, Any]] = {}
        for an, av in ctx.map(basic.get("attributes"), f + ".attributes").items():
            dom, short = _qualify(str(an), driver)
            attrs.setdefault(dom, {})[short] = _value(ctx, ctx.map(av, f"{f}.attributes.{an}"), f"{f.split('[')[0]}[].attributes")
        caps: dict[str, dict[str, int]] = {}
        for cn, cv in ctx.map(basic.get("capacity"), f + ".capacity").items():
            q = cv.get("value") if isinstance(cv, dict) else cv
            if isinstance(cv, dict) and cv.get("requestPolicy"):
                ctx.note(f"{f.split('[')[0]}[].capacity.requestPolicy", "consumable capacity (KEP-5075) is not modelled")
            try:
                amount = to_scheduler_int("dra-capacity", q)
            except QuantityError as e:
                raise ctx.fail(f"{f}.capacity.{cn}", str(e)) from None
            dom, short = _qualify(str(cn), driver)
            caps.setdefault(dom, {})[short] = amount
        if skip is None:
            devices.append(Device(driver=driver, pool=pool_name, slice=name, name=dname, attributes=attrs, capacity=caps))
    return node, devices, (driver, pool_name, generation, count)


def _requests(ctx: Ctx, devices: dict, field: str) -> tuple[tuple[DeviceRequest, ...], str | None]:
    """The ExactCount requests of a claim spec's ``devices``, and why it is not allocatable."""
    out = []
    why = None
    if devices.get("constraints"):
        ctx.note(field + ".constraints", "constraints (matchAttribute / distinctAttribute) are not modelled: the claim is not allocatable")
        why = "constraints are not modelled"
    # devices.config is passed to drivers only: it never changes placement, and is not read.
    for f, r in ctx.maps(devices.get("requests"), field + ".requests"):
        name = ctx.str(r.get("name"), f + ".name", required=True)
        if r.get("firstAvailable"):
            ctx.note(field + ".requests[].firstAvailable", "firstAvailable (prioritized alternatives) is not modelled: the claim is not allocatable")
            why = "firstAvailable is not modelled"
            continue
        ex = ctx.map(r.get("exactly"), f + ".exactly") if "exactly" in r else r  # v1beta1: on the request
        ef = f + ".exactly" if "exactly" in r else f
        mode = ctx.enum(ex.get("allocationMode"), ef + ".allocationMode", ("ExactCount", "All"), default="ExactCount")
        if mode == "All":
            ctx.note(field + ".requests[].allocationMode", "allocationMode All is not modelled: the claim is not allocatable")
            why = "allocationMode All is not modelled"
        if ex.get("adminAccess"):
            ctx.note(field + ".requests[].adminAccess", "admin access is not modelled: the claim is not allocatable")
            why = "adminAccess is not modelled"
        if ex.get("tolerations"):
            ctx.note(field + ".requests[].tolerations", "device taints and tolerations are not modelled (tainted devices are not allocated)")
        if ex.get("capacity"):
            ctx.note(field + ".requests[].capacity", "consumable capacity requests (KEP-5075) are not modelled: the claim is not allocatable")
            why = "consumable capacity is not modelled"
        out.append(DeviceRequest(
            name=name,
            device_class=ctx.str(ex.get("deviceClassName"), ef + ".deviceClassName", required=True),
            selectors=_selectors(ctx, ex.get("selectors"), ef + ".selectors"),
            count=ctx.int(ex.get("count"), ef + ".count", minimum=1) or 1,
        ))
    return tuple(out), why


def parse_claim_template(ctx: Ctx, raw: dict) -> tuple[str, tuple[DeviceRequest, ...], str | None]:
    meta = ctx.map(raw.get("metadata"), "metadata", required=True)
    key = f"{ctx.str(meta.get('namespace'), 'metadata.namespace', default='default') or 'default'}/{ctx.str(meta.get('name'), 'metadata.name', required=True)}"
    inner = ctx.map(ctx.map(raw.get("spec"), "spec", required=True).get("spec"), "spec.spec")
    reqs, why = _requests(ctx, ctx.map(inner.get("devices"), "spec.spec.devices"), "spec.spec.devices")
    return key, reqs, why


def parse_claim(ctx: Ctx, raw: dict) -> Claim:
    meta = ctx.map(raw.get("metadata"), "metadata", required=True)
    key = f"{ctx.str(meta.get('namespace'), 'metadata.namespace', default='default') or 'default'}/{ctx.str(meta.get('name'), 'metadata.name', required=True)}"
    spec = ctx.map(raw.get("spec"), "spec")
    reqs, why = _requests(ctx, ctx.map(spec.get("devices"), "spec.devices"), "spec.devices")
    status = ctx.map(raw.get("status"), "status")
    alloc = ctx.map(status.get("allocation"), "status.allocation")
    allocated: tuple[DeviceID, ...] | None = None
    nodes: tuple[str, ...] | None = None
    if alloc:
        results = []
        for f, r in ctx.maps(ctx.map(alloc.get("devices"), "status.allocation.devices").get("results"), "status.allocation.devices.results"):
            results.append((ctx.str(r.get("driver"), f + ".driver", required=True), ctx.str(r.get("pool"), f + ".pool", required=True),
                            ctx.str(r.get("device"), f + ".device", required=True)))
        allocated = tuple(results)
        sel = ctx.map(alloc.get("nodeSelector"), "status.allocation.nodeSelector")
        names: list[str] = []
        for tf, t in ctx.maps(sel.get("nodeSelectorTerms"), "status.allocation.nodeSelector.nodeSelectorTerms"):
            for _, e in ctx.maps(t.get("matchFields"), tf + ".matchFields"):
                if e.get("key") == "metadata.name" and e.get("operator") == "In":
                    names.extend(ctx.str_list(e.get("values"), tf + ".matchFields[].values"))
            if t.get("matchExpressions"):
                ctx.note("status.allocation.nodeSelector", "an allocation node selector on labels is not modelled: the claim is usable on any node")
        nodes = tuple(names) if names else None
    reserved = tuple(str((r or {}).get("name", "")) for _, r in ctx.maps(status.get("reservedFor"), "status.reservedFor"))
    return Claim(key=key, requests=reqs, allocated=allocated, allocated_nodes=nodes, reserved_for=reserved, unsupported=why)
