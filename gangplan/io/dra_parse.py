"""Reading ``resource.k8s.io`` objects (v1, and v1beta1 / v1beta2 as v1.33-v1.35 servers return
them) into :mod:`gangplan.dra.model`. Field renames (``k8s.io/api`` ``resource/v1beta1`` vs ``v1``
``types.go``): v1beta1 keeps a device's ``attributes`` / ``capacity`` under ``basic`` and a
request's ``deviceClassName`` / ``selectors`` / ``allocationMode`` / ``count`` on the request
itself; v1beta2 and v1 move them to the device and under ``exactly``. Capacity is a quantity
(v1beta1 before v1.33) or ``{value: quantity}``.

What is read but not modelled is named with ``ctx.note`` (a warning; ``--strict`` refuses it):
claim ``config``. A claim using one of them cannot be allocated by gangplan: no node fits it.
Multi-node slices (``nodeSelector`` / ``allNodes`` / ``perDeviceNodeSelection``) are read into
:attr:`gangplan.dra.model.Device.reach`. Constraints (``matchAttribute``, ``distinctAttribute``)
are read into :class:`gangplan.dra.model.Constraint` and checked by the allocator; a
``firstAvailable`` request (KEP-4816) into a :class:`gangplan.dra.model.DeviceRequest` whose
``alternatives`` are its subrequests in priority order.

Partitionable devices (KEP-4815, ``resource/v1`` ``types.go`` ``CounterSet`` /
``DeviceCounterConsumption``, kubernetes/kubernetes v1.36): a slice's ``sharedCounters`` (counter
sets: name -> counters, each ``{value: quantity}``; in v1 they live in slices without devices)
and a device's ``consumesCounters`` are read; :func:`gangplan.io.dra_build.build_state` joins a
pool's sets and its consuming devices into one :class:`gangplan.dra.model.CounterPool`.

Device taints (KEP-5055, ``resource/v1`` ``types.go`` ``DeviceTaint`` / ``DeviceToleration``,
``resource/v1alpha3`` ``DeviceTaintRule``, kubernetes/kubernetes master): a device's ``taints``
(key, value, effect ``None`` / ``NoSchedule`` / ``NoExecute``; ``timeAdded`` is not kept), a
request's or subrequest's ``tolerations`` (key, operator ``Exists`` / ``Equal``, value, effect;
``tolerationSeconds`` only bounds an eviction) and DeviceTaintRules (``spec.deviceSelector``:
driver, pool, device; ``spec.taint``) are read. An effect or operator outside these is refused:
API validation accepts no other on write (the API's "consumers must treat unknown effects like
None" is for values a newer server may store, which a snapshot of a served release cannot hold).
Which taints count at which release is :meth:`gangplan.dra.model.DraState.for_version`.

Consumable capacity (KEP-5075, ``resource/v1`` ``types.go`` of kubernetes/kubernetes v1.36) is
read: a device's ``allowMultipleAllocations`` and each capacity's ``requestPolicy`` (``default``,
``validValues``, ``validRange`` {min, max, step}), a request's ``capacity.requests``, and an
allocation result's ``shareID`` and ``consumedCapacity``. Its quantities become scheduler
integers (``Quantity.Value()``, rounded up); a fractional one is named in a warning.
"""

from __future__ import annotations

from typing import Any

from gangplan.dra.cel import AVAILABLE, check
from gangplan.dra.model import (
    ANYWHERE,
    TAINT_EFFECTS,
    TOLERATION_OPERATORS,
    CapName,
    Claim,
    Constraint,
    Device,
    DeviceClass,
    DeviceID,
    DeviceRequest,
    DeviceTaint,
    DeviceToleration,
    NodeReach,
    RequestPolicy,
    TaintRule,
)
from gangplan.io.fields import Ctx
from gangplan.models.quantity import QuantityError, parse_quantity, to_scheduler_int

VERSIONS = ("v1", "v1beta1", "v1beta2")
KINDS = (
    "DeviceClass",
    "ResourceSlice",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "DeviceTaintRule",
)
KIND_VERSIONS = {"DeviceTaintRule": ("v1", "v1beta2", "v1alpha3")}
"""The ``resource.k8s.io`` versions read per kind where they differ from :data:`VERSIONS`:
DeviceTaintRule is v1alpha3 (v1.33+), v1beta2 (v1.36+) and v1 (v1.37+; kubernetes/api master
``resource/*/register.go``)."""

MAX_BINDING_CONDITIONS = 4
"""``resource/v1`` ``Device.bindingConditions`` / ``bindingFailureConditions``: at most 4 each (API validation)."""


def readable(kind: str, version: str) -> bool:
    """Whether gangplan reads ``kind`` in ``resource.k8s.io/<version>``."""
    return kind in KINDS and version in KIND_VERSIONS.get(kind, VERSIONS)


def _taint(ctx: Ctx, raw: dict, field: str, source: str = "") -> DeviceTaint:
    """One ``DeviceTaint``: key required, effect one of :data:`TAINT_EFFECTS` (required)."""
    key = ctx.str(raw.get("key"), field + ".key", required=True)
    effect = ctx.str(raw.get("effect"), field + ".effect", required=True)
    if effect not in TAINT_EFFECTS:
        raise ctx.fail(
            field + ".effect",
            f"unknown device taint effect {effect!r} (must be one of {', '.join(TAINT_EFFECTS)})",
        )
    return DeviceTaint(
        key=key, value=ctx.str(raw.get("value"), field + ".value"), effect=effect, source=source
    )


def _tolerations(ctx: Ctx, raw, field: str) -> tuple[DeviceToleration, ...]:
    """``tolerations`` of a request or subrequest (API validation: operator Exists or Equal, an
    empty key only with Exists, no value with Exists, effect empty or a known one)."""
    out = []
    for f, t in ctx.maps(raw, field):
        op = ctx.str(t.get("operator"), f + ".operator", default="Equal") or "Equal"
        if op not in TOLERATION_OPERATORS:
            raise ctx.fail(
                f + ".operator", f"unknown toleration operator {op!r} (must be Exists or Equal)"
            )
        key = ctx.str(t.get("key"), f + ".key")
        value = ctx.str(t.get("value"), f + ".value")
        effect = ctx.str(t.get("effect"), f + ".effect")
        if effect and effect not in TAINT_EFFECTS:
            raise ctx.fail(
                f + ".effect",
                f"unknown device taint effect {effect!r} (must be empty or one of {', '.join(TAINT_EFFECTS)})",
            )
        if not key and op != "Exists":
            raise ctx.fail(f + ".operator", "an empty key requires operator Exists")
        if op == "Exists" and value:
            raise ctx.fail(f + ".value", "must be empty with operator Exists")
        if t.get("tolerationSeconds") is not None:
            ctx.int(t.get("tolerationSeconds"), f + ".tolerationSeconds")
        out.append(DeviceToleration(key=key, operator=op, value=value, effect=effect))
    return tuple(out)


def parse_taint_rule(ctx: Ctx, raw: dict) -> TaintRule:
    """A ``DeviceTaintRule``: ``spec.taint`` and ``spec.deviceSelector`` (driver, pool, device;
    the v1alpha3 ``deviceClassName`` and ``selectors``, tombstoned since v1.35 and never applied
    by a scheduler gangplan reproduces, are named in a warning and the rule is not applied)."""
    meta = ctx.map(raw.get("metadata"), "metadata", required=True)
    name = ctx.str(meta.get("name"), "metadata.name", required=True)
    spec = ctx.map(raw.get("spec"), "spec", required=True)
    taint = _taint(
        ctx,
        ctx.map(spec.get("taint"), "spec.taint", required=True),
        "spec.taint",
        source=f"DeviceTaintRule/{name}",
    )
    if spec.get("deviceSelector") is None:
        ctx.note(
            "spec.deviceSelector",
            "a DeviceTaintRule without deviceSelector: applied to every device, as the scheduler's ResourceSlice tracker does "
            "(the API documentation says it matches no device)",
        )
        return TaintRule(name=name, taint=taint, selected=False)
    sel = ctx.map(spec.get("deviceSelector"), "spec.deviceSelector")
    for f in ("deviceClassName", "selectors"):
        if sel.get(f):
            ctx.note(
                f"spec.deviceSelector.{f}",
                f"deviceSelector.{f} (removed in v1.35) is not modelled: the rule taints no device",
            )
            return TaintRule(
                name=name, taint=taint, driver="", pool="", device=""
            )  # (matches nothing)
    return TaintRule(
        name=name,
        taint=taint,
        driver=ctx.opt_str(sel.get("driver"), "spec.deviceSelector.driver"),
        pool=ctx.opt_str(sel.get("pool"), "spec.deviceSelector.pool"),
        device=ctx.opt_str(sel.get("device"), "spec.deviceSelector.device"),
    )


def _selectors(ctx: Ctx, raw: Any, field: str) -> tuple[str, ...]:
    out = []
    for f, s in ctx.maps(raw, field):
        cel = ctx.map(s.get("cel"), f + ".cel", required=True)
        expr = ctx.str(cel.get("expression"), f + ".cel.expression", required=True)
        if not AVAILABLE:
            ctx.note(
                f + ".cel",
                "CEL selectors need cel-expr-python, which is not installed: the claim is not allocatable",
            )
        elif (why := check(expr)) is not None:
            ctx.note(
                f + ".cel.expression",
                f"CEL expression rejected ({why}): allocations that need it fail",
            )
        out.append(expr)
    return tuple(out)


def parse_device_class(ctx: Ctx, raw: dict) -> DeviceClass:
    meta = ctx.map(raw.get("metadata"), "metadata", required=True)
    spec = ctx.map(raw.get("spec"), "spec")
    # spec.config is passed to drivers only: it never changes placement, and is not read.
    return DeviceClass(
        name=ctx.str(meta.get("name"), "metadata.name", required=True),
        selectors=_selectors(ctx, spec.get("selectors"), "spec.selectors"),
        extended_resource_name=ctx.opt_str(
            spec.get("extendedResourceName"), "spec.extendedResourceName"
        )
        or None,
    )


def _value(ctx: Ctx, v: dict, field: str) -> Any:
    for k in ("int", "bool", "string"):
        if k in v:
            return v[k]
    if "version" in v:
        from gangplan.dra.semver import Semver, SemverError

        text = ctx.str(v["version"], field + ".version", required=True)
        try:
            return Semver(
                text
            )  # a Semver value in CEL (gangplan.dra.semver); matchAttribute compares the string
        except SemverError as e:
            raise ctx.fail(
                field + ".version", f"not a semantic version (semver.org 2.0.0): {e}"
            ) from None
    raise ctx.fail(field, "attribute must set one of int, bool, string, version")


def _amount(ctx: Ctx, q: Any, field: str, note_field: str) -> int:
    """A capacity quantity as a scheduler integer (rounded up as ``Quantity.Value()``)."""
    try:
        amount = to_scheduler_int("dra-capacity", q)
        exact = parse_quantity(q)
    except QuantityError as e:
        raise ctx.fail(field, str(e)) from None
    if exact != amount:
        ctx.note(
            note_field,
            f"fractional capacity quantities are rounded up to integers ({q} -> {amount})",
        )
    return amount


def _policy(ctx: Ctx, raw: dict, field: str, note_field: str) -> RequestPolicy:
    """``DeviceCapacity.requestPolicy`` (KEP-5075)."""
    default = (
        _amount(ctx, raw["default"], field + ".default", note_field)
        if raw.get("default") is not None
        else None
    )
    values = None
    if raw.get("validValues") is not None:
        if not isinstance(raw["validValues"], list):
            raise ctx.fail(field + ".validValues", "must be a list of quantities")
        values = tuple(
            sorted(
                _amount(ctx, v, field + ".validValues[]", note_field) for v in raw["validValues"]
            )
        )
    rng = ctx.map(raw.get("validRange"), field + ".validRange")
    bounds = {
        k: _amount(ctx, rng[k], f"{field}.validRange.{k}", note_field)
        if rng.get(k) is not None
        else None
        for k in ("min", "max", "step")
    }
    return RequestPolicy(default=default, valid_values=values, **bounds)


def _qualify(name: str, driver: str) -> tuple[str, str]:
    if "/" in name:
        domain, _, short = name.partition("/")
        return domain, short
    return driver, name


def _reach(ctx: Ctx, raw: dict, field: str, what: str) -> str | NodeReach | None:
    """Node selection of a slice (``nodeName`` / ``nodeSelector`` / ``allNodes``) or of a device
    of a ``perDeviceNodeSelection`` slice: the node name, a :class:`NodeReach`, or None when none
    is set. API validation (``resource/v1`` ``types.go``) allows exactly one, and a node selector
    of exactly one term; a snapshot breaking that is refused (exit 2)."""
    from gangplan.io.parse import node_selector_term

    node = ctx.opt_str(raw.get("nodeName"), field + "nodeName") or None
    sel = raw.get("nodeSelector")
    every = ctx.bool(raw.get("allNodes"), field + "allNodes")
    set_ = [f for f, v in (("nodeName", node), ("nodeSelector", sel), ("allNodes", every)) if v]
    if len(set_) > 1:
        raise ctx.fail(
            field + set_[1],
            f"{what}: must set exactly one of nodeName, nodeSelector, allNodes (got {', '.join(set_)})",
        )
    if sel:
        sel = ctx.map(sel, field + "nodeSelector")
        terms = list(
            ctx.maps(sel.get("nodeSelectorTerms"), field + "nodeSelector.nodeSelectorTerms")
        )
        if len(terms) != 1:
            raise ctx.fail(
                field + "nodeSelector.nodeSelectorTerms",
                f"must have exactly one term, got {len(terms)}",
            )
        return NodeReach((node_selector_term(ctx, terms[0][1], terms[0][0]),))
    if every:
        return ANYWHERE
    return node


def parse_resource_slice(
    ctx: Ctx, raw: dict
) -> tuple[
    list[str | NodeReach | None], list[Device], tuple[str, str, int, int], dict[str, dict[str, int]]
]:
    """(per device, where it is: its node's name, the :class:`NodeReach` of a multi-node device,
    or None when the slice sets no node selection; devices; (driver, pool, generation,
    sliceCount); shared counter sets: name -> counter -> value). A device's ``consumesCounters``
    is read into :attr:`Device.counters`; :func:`gangplan.io.dra_build.build_state` joins the pool's
    sets and puts each device on the nodes it reaches.

    Multi-node slices (``resource/v1`` ``types.go``): ``nodeSelector`` (one term) or ``allNodes``
    give every device of the slice that reach; ``perDeviceNodeSelection`` lets each device set
    its own ``nodeName`` / ``nodeSelector`` / ``allNodes``."""
    meta = ctx.map(raw.get("metadata"), "metadata", required=True)
    name = ctx.str(meta.get("name"), "metadata.name", required=True)
    spec = ctx.map(raw.get("spec"), "spec", required=True)
    driver = ctx.str(spec.get("driver"), "spec.driver", required=True)
    pool = ctx.map(spec.get("pool"), "spec.pool", required=True)
    pool_name = ctx.str(pool.get("name"), "spec.pool.name", required=True)
    generation = ctx.int(pool.get("generation"), "spec.pool.generation", minimum=0)
    count = ctx.int(pool.get("resourceSliceCount"), "spec.pool.resourceSliceCount", minimum=0) or 1
    per_device = bool(ctx.bool(spec.get("perDeviceNodeSelection"), "spec.perDeviceNodeSelection"))
    where = _reach(ctx, spec, "spec.", f"ResourceSlice {name}")
    if per_device and where is not None:
        raise ctx.fail(
            "spec.perDeviceNodeSelection",
            "must set exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection",
        )
    counter_sets: dict[str, dict[str, int]] = {}
    for f, cs in ctx.maps(spec.get("sharedCounters"), "spec.sharedCounters"):
        cname = ctx.str(cs.get("name"), f + ".name", required=True)
        if cname in counter_sets:
            raise ctx.fail(f + ".name", f"counter set {cname!r} is defined twice")
        counter_sets[cname] = _counter_map(
            ctx, cs.get("counters"), f + ".counters", "spec.sharedCounters[].counters"
        )
    devices: list[Device] = []
    targets: list[str | NodeReach | None] = []
    for f, d in ctx.maps(spec.get("devices"), "spec.devices"):
        device, mine = _slice_device(ctx, f, d, driver, pool_name, name, per_device, where)
        devices.append(device)
        targets.append(mine)
    if devices and where is None and not per_device:
        ctx.note(
            "spec.nodeName",
            "the slice sets none of nodeName, nodeSelector, allNodes, perDeviceNodeSelection: its devices are on no node "
            "(upstream's allocator skips such a slice)",
        )
    return targets, devices, (driver, pool_name, generation, count), counter_sets


def _slice_device(
    ctx: Ctx,
    f: str,
    d: dict,
    driver: str,
    pool_name: str,
    slice_name: str,
    per_device: bool,
    where: str | NodeReach | None,
) -> tuple[Device, str | NodeReach | None]:
    """One device of a ResourceSlice (``f``: its field path), and where it is (the slice's node
    selection, or with ``perDeviceNodeSelection`` its own)."""
    basic = ctx.map(d.get("basic"), f + ".basic") if "basic" in d else d  # v1beta1
    dname = ctx.str(d.get("name"), f + ".name", required=True)
    raw_taints = basic.get("taints", d.get("taints"))
    taints = (
        tuple(_taint(ctx, t, tf) for tf, t in ctx.maps(raw_taints, f + ".taints"))
        if raw_taints is not None
        else ()
    )
    if per_device:
        mine = _reach(ctx, d, f + ".", f"device {dname}")
        if mine is None:
            raise ctx.fail(
                f,
                "perDeviceNodeSelection: the device must set exactly one of nodeName, nodeSelector, allNodes",
            )
    else:
        if any(d.get(k) for k in ("nodeName", "nodeSelector", "allNodes")):
            raise ctx.fail(
                f,
                "nodeName, nodeSelector and allNodes of a device need spec.perDeviceNodeSelection: true",
            )
        mine = where
    # KEP-5007: allocatable where the release's gate is on (DraState.for_version); bindsToNode
    # only pins the allocation to the node, which every device gangplan allocates already is.
    binding = tuple(
        ctx.str_list(
            basic.get("bindingConditions", d.get("bindingConditions")), f + ".bindingConditions"
        )
    )
    binding_failure = tuple(
        ctx.str_list(
            basic.get("bindingFailureConditions", d.get("bindingFailureConditions")),
            f + ".bindingFailureConditions",
        )
    )
    for what, got in (
        ("bindingConditions", binding),
        ("bindingFailureConditions", binding_failure),
    ):
        if (
            len(got) > MAX_BINDING_CONDITIONS
        ):  # resource/v1 types.go: "The maximum number of binding conditions is 4."
            raise ctx.fail(
                f"{f}.{what}", f"must have at most {MAX_BINDING_CONDITIONS} items, got {len(got)}"
            )
    attrs: dict[str, dict[str, Any]] = {}
    for an, av in ctx.map(basic.get("attributes"), f + ".attributes").items():
        dom, short = _qualify(str(an), driver)
        attrs.setdefault(dom, {})[short] = _value(
            ctx, ctx.map(av, f"{f}.attributes.{an}"), f"{f}.attributes.{an}"
        )
    multiple = ctx.bool(
        basic.get("allowMultipleAllocations", d.get("allowMultipleAllocations")),
        f + ".allowMultipleAllocations",
    )
    caps, policies = _device_capacity(ctx, f, basic, driver)
    consumes = _consumes_counters(ctx, f, basic, d)
    device = Device(
        driver=driver,
        pool=pool_name,
        slice=slice_name,
        name=dname,
        attributes=attrs,
        capacity=caps,
        allow_multiple=multiple,
        policies=policies,
        counters=tuple(sorted(consumes)),
        taints=taints,
        slice_taints=taints,
        binding_conditions=binding,
        binding_failure_conditions=binding_failure,
        reach=mine if isinstance(mine, NodeReach) else None,
        per_device=per_device,
    )
    return device, mine


def _device_capacity(
    ctx: Ctx, f: str, basic: dict, driver: str
) -> tuple[dict[str, dict[str, int]], dict[CapName, RequestPolicy]]:
    """A device's ``capacity``: domain -> name -> value, and each capacity's ``requestPolicy``
    (KEP-5075)."""
    caps: dict[str, dict[str, int]] = {}
    policies: dict[CapName, RequestPolicy] = {}
    for cn, cv in ctx.map(basic.get("capacity"), f + ".capacity").items():
        q = cv.get("value") if isinstance(cv, dict) else cv
        amount = _amount(ctx, q, f"{f}.capacity.{cn}", f"{f.split('[')[0]}[].capacity")
        dom, short = _qualify(str(cn), driver)
        caps.setdefault(dom, {})[short] = amount
        if isinstance(cv, dict) and cv.get("requestPolicy"):
            policies[(dom, short)] = _policy(
                ctx,
                ctx.map(cv["requestPolicy"], f"{f}.capacity.{cn}.requestPolicy"),
                f"{f}.capacity.{cn}.requestPolicy",
                f"{f.split('[')[0]}[].capacity",
            )
    return caps, policies


def _consumes_counters(
    ctx: Ctx, f: str, basic: dict, d: dict
) -> list[tuple[str, tuple[tuple[str, int], ...]]]:
    """A device's ``consumesCounters`` (KEP-4815): (counter set, ((counter, amount), ...)) each."""
    consumes = []
    for cf, cc in ctx.maps(
        basic.get("consumesCounters", d.get("consumesCounters")), f + ".consumesCounters"
    ):
        cset = ctx.str(cc.get("counterSet"), cf + ".counterSet", required=True)
        if cc.get("compatibilityGroups"):
            ctx.note(
                f"{f.split('[')[0]}[].consumesCounters[].compatibilityGroups",
                "device compatibility groups (DRADeviceCompatibilityGroups, alpha) are not modelled: only the counters are checked",
            )
        amounts = _counter_map(
            ctx,
            cc.get("counters"),
            cf + ".counters",
            f"{f.split('[')[0]}[].consumesCounters[].counters",
        )
        consumes.append((cset, tuple(sorted(amounts.items()))))
    return consumes


def _counter_map(ctx: Ctx, raw: Any, field: str, note_field: str) -> dict[str, int]:
    """``counters`` of a CounterSet or a DeviceCounterConsumption: name -> ``{value: quantity}``
    (``Counter``), as scheduler integers."""
    out: dict[str, int] = {}
    for cn, cv in ctx.map(raw, field, required=True).items():
        q = cv.get("value") if isinstance(cv, dict) else cv
        if q is None:
            raise ctx.fail(f"{field}.{cn}.value", "required")
        out[str(cn)] = _amount(ctx, q, f"{field}.{cn}.value", note_field)
    return out


def _requests(ctx: Ctx, devices: dict, field: str) -> tuple[tuple[DeviceRequest, ...], str | None]:
    """The requests of a claim spec's ``devices`` (``exactly``, or ``firstAvailable``: the
    subrequests in priority order as :attr:`DeviceRequest.alternatives`), and why the claim is
    not allocatable."""
    out = []
    why: list[str] = []
    # devices.config is passed to drivers only: it never changes placement, and is not read.
    for f, r in ctx.maps(devices.get("requests"), field + ".requests"):
        name = ctx.str(r.get("name"), f + ".name", required=True)
        if r.get("firstAvailable"):
            if r.get("exactly"):
                raise ctx.fail(f, "must set exactly one of exactly, firstAvailable")
            subs = tuple(
                _exact(
                    ctx,
                    sr,
                    sf,
                    ctx.str(sr.get("name"), sf + ".name", required=True),
                    field + ".requests[].firstAvailable[]",
                    why,
                )
                for sf, sr in ctx.maps(r.get("firstAvailable"), f + ".firstAvailable")
            )
            if len({x.name for x in subs}) < len(subs):
                raise ctx.fail(f + ".firstAvailable", "subrequest names must be unique")
            out.append(
                DeviceRequest(name=name, device_class=subs[0].device_class, alternatives=subs)
            )
            continue
        ex = (
            ctx.map(r.get("exactly"), f + ".exactly") if "exactly" in r else r
        )  # v1beta1: on the request
        ef = f + ".exactly" if "exactly" in r else f
        out.append(_exact(ctx, ex, ef, name, field + ".requests[]", why))
    return tuple(out), (why[0] if why else None)


def _exact(
    ctx: Ctx, ex: dict, ef: str, name: str, note_field: str, why: list[str]
) -> DeviceRequest:
    """One ``ExactDeviceRequest`` (or ``DeviceSubRequest``). ``adminAccess`` (KEP-5018) is read
    into :attr:`DeviceRequest.admin_access`: ``DeviceSubRequest`` has no such field in
    ``resource/v1`` ``types.go`` (admin access is set on the ``ExactDeviceRequest`` only), so a
    subrequest that carries one is refused as API validation would."""
    mode = ctx.enum(
        ex.get("allocationMode"),
        ef + ".allocationMode",
        ("ExactCount", "All"),
        default="ExactCount",
    )
    admin = ctx.bool(ex.get("adminAccess"), ef + ".adminAccess")
    if admin and "firstAvailable[]" in note_field:
        raise ctx.fail(
            ef + ".adminAccess", "a subrequest (firstAvailable) has no adminAccess field"
        )
    tolerations = (
        _tolerations(ctx, ex["tolerations"], ef + ".tolerations")
        if ex.get("tolerations") is not None
        else ()
    )
    asked = ctx.map(
        ctx.map(ex.get("capacity"), ef + ".capacity").get("requests"), ef + ".capacity.requests"
    )
    return DeviceRequest(
        name=name,
        device_class=ctx.str(ex.get("deviceClassName"), ef + ".deviceClassName", required=True),
        selectors=_selectors(ctx, ex.get("selectors"), ef + ".selectors"),
        count=ctx.int(ex.get("count"), ef + ".count", minimum=1) or 1,
        all=mode == "All",
        capacity=tuple(
            sorted(
                (
                    str(cn),
                    _amount(
                        ctx, cq, f"{ef}.capacity.requests.{cn}", note_field + ".capacity.requests"
                    ),
                )
                for cn, cq in asked.items()
            )
        ),
        tolerations=tolerations,
        admin_access=bool(admin),
    )


def _request_names(ctx: Ctx, devices: dict, field: str) -> set[str]:
    """The names a constraint may use: each request's, and ``<request>/<subrequest>``."""
    names = set()
    for _, r in ctx.maps(devices.get("requests"), field + ".requests"):
        names.add(str(r.get("name")))
        for sr in r.get("firstAvailable") or ():
            if isinstance(sr, dict):
                names.add(f"{r.get('name')}/{sr.get('name')}")
    return names


CONSTRAINT_FIELDS = frozenset({"requests", "matchAttribute", "distinctAttribute"})


def _constraints(ctx: Ctx, devices: dict, field: str, names: set[str]) -> tuple[Constraint, ...]:
    """``devices.constraints`` (``DeviceConstraint``: ``requests`` plus exactly one of
    ``matchAttribute`` / ``distinctAttribute``, a fully qualified attribute name). Both set, a name
    without a domain or an unknown request name is refused (API validation refuses them too);
    neither set is kept as an ``empty`` constraint, which fails the allocation as upstream's
    allocator does (a constraint type of a newer API)."""
    out = []
    for f, c in ctx.maps(devices.get("constraints"), field + ".constraints"):
        for k in sorted(set(c) - CONSTRAINT_FIELDS):
            if c[k] is not None:
                ctx.note(f"{field}.constraints[].{k}", f"unknown constraint field {k!r}: not read")
        requests = ctx.str_list(c.get("requests"), f + ".requests")
        for r in requests:
            if r not in names:
                raise ctx.fail(
                    f + ".requests",
                    f"names request {r!r}, which the claim does not have ({', '.join(sorted(names)) or 'none'})",
                )
        kinds = [k for k in ("matchAttribute", "distinctAttribute") if c.get(k) is not None]
        if len(kinds) > 1:
            raise ctx.fail(f, "must set exactly one of matchAttribute, distinctAttribute")
        if not kinds:
            out.append(Constraint(kind="empty", requests=requests))
            continue
        name = ctx.str(c.get(kinds[0]), f"{f}.{kinds[0]}", required=True)
        domain, sep, short = name.partition("/")
        if not sep or not domain or not short:
            raise ctx.fail(
                f"{f}.{kinds[0]}",
                f"must be a fully qualified attribute name (<domain>/<name>), got {name!r}",
            )
        out.append(
            Constraint(
                kind="match" if kinds[0] == "matchAttribute" else "distinct",
                attribute=(domain, short),
                requests=requests,
            )
        )
    return tuple(out)


def parse_claim_template(ctx: Ctx, raw: dict) -> tuple[str, tuple[DeviceRequest, ...], str | None]:
    meta = ctx.map(raw.get("metadata"), "metadata", required=True)
    key = f"{ctx.str(meta.get('namespace'), 'metadata.namespace', default='default') or 'default'}/{ctx.str(meta.get('name'), 'metadata.name', required=True)}"
    inner = ctx.map(ctx.map(raw.get("spec"), "spec", required=True).get("spec"), "spec.spec")
    devices = ctx.map(inner.get("devices"), "spec.spec.devices")
    reqs, why = _requests(ctx, devices, "spec.spec.devices")
    names = _request_names(ctx, devices, "spec.spec.devices")
    return key, reqs, why, _constraints(ctx, devices, "spec.spec.devices", names)


def parse_claim(ctx: Ctx, raw: dict) -> Claim:
    meta = ctx.map(raw.get("metadata"), "metadata", required=True)
    key = f"{ctx.str(meta.get('namespace'), 'metadata.namespace', default='default') or 'default'}/{ctx.str(meta.get('name'), 'metadata.name', required=True)}"
    spec = ctx.map(raw.get("spec"), "spec")
    devices = ctx.map(spec.get("devices"), "spec.devices")
    reqs, why = _requests(ctx, devices, "spec.devices")
    names = _request_names(ctx, devices, "spec.devices")
    constraints = _constraints(ctx, devices, "spec.devices", names)
    status = ctx.map(raw.get("status"), "status")
    alloc = ctx.map(status.get("allocation"), "status.allocation")
    allocated: tuple[DeviceID, ...] | None = None
    nodes: tuple[str, ...] | None = None
    reach: NodeReach | None = None
    shared: list[tuple[DeviceID, tuple[tuple[CapName, int], ...]]] = []
    result_requests: list[str] = []
    result_admin: list[bool] = []
    if alloc:
        results = []
        for f, r in ctx.maps(
            ctx.map(alloc.get("devices"), "status.allocation.devices").get("results"),
            "status.allocation.devices.results",
        ):
            did = (
                ctx.str(r.get("driver"), f + ".driver", required=True),
                ctx.str(r.get("pool"), f + ".pool", required=True),
                ctx.str(r.get("device"), f + ".device", required=True),
            )
            results.append(did)
            result_requests.append(ctx.str(r.get("request"), f + ".request"))
            result_admin.append(bool(ctx.bool(r.get("adminAccess"), f + ".adminAccess")))
            if (
                r.get("shareID") and not result_admin[-1]
            ):  # KEP-5075: a share of the device, consuming part of its capacity
                used = ctx.map(r.get("consumedCapacity"), f + ".consumedCapacity")
                shared.append(
                    (
                        did,
                        tuple(
                            sorted(
                                (
                                    _qualify(str(cn), did[0]),
                                    _amount(
                                        ctx,
                                        cq,
                                        f"{f}.consumedCapacity.{cn}",
                                        "status.allocation.devices.results[].consumedCapacity",
                                    ),
                                )
                                for cn, cq in used.items()
                            )
                        ),
                    )
                )
        allocated = tuple(results)
        from gangplan.io.parse import node_selector_term

        sel = ctx.map(alloc.get("nodeSelector"), "status.allocation.nodeSelector")
        terms = [
            node_selector_term(ctx, t, tf)
            for tf, t in ctx.maps(
                sel.get("nodeSelectorTerms"), "status.allocation.nodeSelector.nodeSelectorTerms"
            )
        ]
        if terms and all(
            not t.match_expressions
            and len(t.match_fields) == 1
            and t.match_fields[0].key == "metadata.name"
            and t.match_fields[0].operator == "In"
            for t in terms
        ):
            nodes = tuple(
                v for t in terms for v in t.match_fields[0].values
            )  # (the node-local allocation's selector)
        elif terms:
            reach = NodeReach(
                tuple(terms)
            )  # (an allocation of multi-node devices: terms on node labels)
    reserved = tuple(
        str((r or {}).get("name", ""))
        for _, r in ctx.maps(status.get("reservedFor"), "status.reservedFor")
    )
    return Claim(
        key=key,
        requests=reqs,
        allocated=allocated,
        allocated_nodes=nodes,
        allocated_reach=reach,
        reserved_for=reserved,
        unsupported=why,
        shared=tuple(shared),
        constraints=constraints,
        result_requests=tuple(result_requests),
        result_admin=tuple(result_admin) if any(result_admin) else (),
    )
