"""What gangplan reads of Dynamic Resource Allocation objects (``k8s.io/api`` ``resource/v1``
``types.go``; v1beta1 / v1beta2 are read into the same shapes by :mod:`gangplan.io.dra_parse`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DeviceID = tuple[str, str, str]
"""(driver, pool, device): how ``status.allocation.devices.results`` names a device."""

CapName = tuple[str, str]
"""(domain, capacity name): a device capacity, its qualified name split (unqualified names are in
the driver's domain), as ``resolveCapacityName`` resolves both spellings to one name."""

EXTENDED_PREFIX = "deviceclass.resource.kubernetes.io/"
"""KEP-5004's implicit extended resource name of every DeviceClass (``<prefix><class name>``)."""


@dataclass(frozen=True)
class DeviceClass:
    name: str
    selectors: tuple[str, ...] = ()
    """CEL expressions (``spec.selectors[].cel.expression``), all must be true."""
    extended_resource_name: str | None = None


@dataclass(frozen=True)
class RequestPolicy:
    """``DeviceCapacity.requestPolicy`` (KEP-5075, ``staging/src/k8s.io/api/resource/v1/types.go``
    ``CapacityRequestPolicy``, kubernetes/kubernetes v1.36), amounts as scheduler integers:
    ``default``, ``validValues`` (ascending) or ``validRange`` {min, max, step}."""

    default: int | None = None
    valid_values: tuple[int, ...] | None = None
    min: int | None = None
    max: int | None = None
    step: int | None = None

    @property
    def has_range(self) -> bool:
        return self.min is not None or self.max is not None or self.step is not None


TAINT_EFFECTS = ("None", "NoSchedule", "NoExecute")
"""``DeviceTaintEffect`` values (``k8s.io/api`` ``resource/v1alpha3/types.go``, master): ``None``
is informational; only ``NoSchedule`` and ``NoExecute`` keep a claim off the device."""

TOLERATION_OPERATORS = ("Exists", "Equal")
"""``DeviceTolerationOperator`` values; an empty operator is ``Equal`` (defaulting)."""


@dataclass(frozen=True)
class DeviceTaint:
    """One ``DeviceTaint`` (``resource/v1`` ``types.go``: key, value, effect; ``timeAdded`` is
    read by the eviction controller only and not kept)."""

    key: str
    value: str = ""
    effect: str = "NoSchedule"
    source: str = ""
    """Where it comes from: ``""`` (the ResourceSlice) or ``DeviceTaintRule/<name>``."""

    def __str__(self) -> str:
        return (
            f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"
        )


@dataclass(frozen=True)
class DeviceToleration:
    """One ``DeviceToleration`` of a request or subrequest (``tolerationSeconds`` only bounds a
    NoExecute eviction, which gangplan does not model, so it is not kept)."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: DeviceTaint) -> bool:
        """``ToleratesTaint`` (``staging/src/k8s.io/dynamic-resource-allocation/resourceclaim/
        devicetoleration.go``, kubernetes/kubernetes @030880a5): an empty effect matches every
        effect, an empty key every key; ``Exists`` matches any value, ``Equal`` (or empty) the
        same value; any other operator nothing."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return self.operator == "Exists"


def untolerated(
    taints: tuple[DeviceTaint, ...], tolerations: tuple[DeviceToleration, ...]
) -> DeviceTaint | None:
    """``taintPreventsAllocation`` (``structured/internal/stable/allocator_stable.go`` and
    ``incubating/allocator_incubating.go``, kubernetes/kubernetes @03ab440c): the first taint
    with effect NoSchedule or NoExecute that no toleration tolerates (other effects, ``None``
    included, never prevent allocation), or None."""
    for t in taints:
        if t.effect in ("NoSchedule", "NoExecute") and not any(
            tol.tolerates(t) for tol in tolerations
        ):
            return t
    return None


@dataclass(frozen=True)
class TaintRule:
    """A ``DeviceTaintRule`` (KEP-5055; ``resource.k8s.io`` v1alpha3, v1beta2 from v1.36, v1 from
    v1.37): its taint on every device the selector matches. ``driver`` / ``pool`` / ``device``
    None match any; ``selected`` False: no ``spec.deviceSelector`` (the resourceslice tracker of
    kubernetes/kubernetes @030880a5 then taints every device, although the API documentation
    says no device is matched; gangplan follows the code and warns)."""

    name: str
    taint: DeviceTaint
    driver: str | None = None
    pool: str | None = None
    device: str | None = None
    selected: bool = True

    def applies(self, driver: str, pool: str, device: str) -> bool:
        """``applyPatches`` of ``staging/src/k8s.io/dynamic-resource-allocation/resourceslice/
        tracker/tracker.go``: driver, pool and device name each equal when set."""
        return (
            (self.driver is None or self.driver == driver)
            and (self.pool is None or self.pool == pool)
            and (self.device is None or self.device == device)
        )


@dataclass(frozen=True)
class Tolerations:
    """A request's tolerations as one element of a selector key (:func:`selector_key`)."""

    tolerations: tuple[DeviceToleration, ...]


def selector_key(request: DeviceRequest) -> tuple:
    """What decides which devices ``request`` can take besides its class and capacity: its
    selectors, and its tolerations when it has any (one :class:`Tolerations` element after the
    CEL expressions). The exact engine keys its device-count rows on (class, selector key), so
    requests with different tolerations count different devices where devices are tainted."""
    return (
        request.selectors
        if not request.tolerations
        else (*request.selectors, Tolerations(request.tolerations))
    )


def probe(
    device_class: str,
    key: tuple,
    capacity: tuple[tuple[str, int], ...] = (),
    *,
    all: bool = False,
    name: str = "",
    count: int = 1,
    admin_access: bool = False,
) -> DeviceRequest:
    """The request a (class, :func:`selector_key`) pair stands for."""
    tolerations: tuple[DeviceToleration, ...] = ()
    selectors = []
    for k in key:
        if isinstance(k, Tolerations):
            tolerations = k.tolerations
        else:
            selectors.append(k)
    return DeviceRequest(
        name=name,
        device_class=device_class,
        selectors=tuple(selectors),
        count=count,
        capacity=capacity,
        all=all,
        tolerations=tolerations,
        admin_access=admin_access,
    )


Counters = tuple[tuple[str, tuple[tuple[str, int], ...]], ...]
"""``consumesCounters`` of a device: (counter set, ((counter, amount), ...)), sorted."""


@dataclass(eq=False)
class CounterPool:
    """The shared counters of one resource pool (KEP-4815, ``resource/v1`` ``types.go``
    ``CounterSet``, kubernetes/kubernetes v1.36): every ``spec.sharedCounters`` set of the pool's
    current slices, and every device of the pool that consumes counters (on any node), from which
    the allocator subtracts what allocated devices consume (``checkAvailableCounters``)."""

    driver: str
    pool: str
    sets: dict[str, dict[str, int]] = field(default_factory=dict)
    """counter set -> counter -> value (scheduler integers)."""
    users: list = field(default_factory=list)
    """The pool's devices with ``consumesCounters``."""


@dataclass(frozen=True)
class NodeReach:
    """Where a device of a multi-node ResourceSlice can be used (``resource/v1`` ``types.go``
    ``ResourceSliceSpec.nodeSelector`` / ``allNodes``, or a device's own with
    ``perDeviceNodeSelection``), and where an allocation made of such devices is usable
    (``status.allocation.nodeSelector``): any of ``terms`` matches the node (a NodeSelector's
    terms are ORed, each term's requirements ANDed); no terms: every node (``allNodes``, or an
    allocation without a node selector). ``NodeMatches`` of ``structured/internal/incubating/
    pools_incubating.go`` (kubernetes/kubernetes v1.36) with ``nodeaffinity.NewNodeSelector``:
    the matching is :func:`gangplan.predicates.labels.node_matches_terms`, the one NodeAffinity
    uses."""

    terms: tuple = ()
    """:class:`gangplan.models.objects.NodeSelectorTerm` values."""

    def matches(self, node) -> bool:
        if not self.terms:
            return True
        from gangplan.predicates.labels import node_matches_terms

        return node_matches_terms(self.terms, node)


ANYWHERE = NodeReach()
"""Every node: an ``allNodes`` device, or an allocation with no node selector."""


@dataclass(frozen=True)
class Device:
    driver: str
    pool: str
    slice: str
    name: str
    attributes: dict[str, dict[str, Any]] = field(default_factory=dict, hash=False, compare=False)
    """domain -> attribute name -> value (qualified names split; unqualified ones in the driver's domain)."""
    capacity: dict[str, dict[str, int]] = field(default_factory=dict, hash=False, compare=False)
    """domain -> capacity name -> scheduler integer."""
    allow_multiple: bool = False
    """``allowMultipleAllocations`` (KEP-5075): several claims may share the device, each consuming
    part of its capacity."""
    policies: dict[CapName, RequestPolicy] = field(default_factory=dict, hash=False, compare=False)
    """The ``requestPolicy`` of each capacity that has one."""
    counters: Counters = field(default=(), hash=False, compare=False)
    """``consumesCounters`` (KEP-4815): what allocating the device takes of its pool's shared counters."""
    pool_incomplete: bool = field(default=False, hash=False, compare=False)
    """The pool has fewer current slices than ``resourceSliceCount`` (a request for All devices fails)."""
    counter_pool: CounterPool | None = field(default=None, hash=False, compare=False, repr=False)
    """The pool's shared counters (set by :func:`gangplan.io.dra_build.build_state` for a device with ``counters``)."""
    taints: tuple[DeviceTaint, ...] = field(default=(), hash=False, compare=False)
    """The taints the allocator checks at the release reproduced (:meth:`DraState.for_version`):
    none while DRADeviceTaints is off, else the slice's, plus those of matching DeviceTaintRules
    while DRADeviceTaintRules is on."""
    slice_taints: tuple[DeviceTaint, ...] = field(default=(), hash=False, compare=False, repr=False)
    """``spec.devices[].taints`` of the ResourceSlice."""
    rule_taints: tuple[DeviceTaint, ...] = field(default=(), hash=False, compare=False, repr=False)
    """The taints of the snapshot's DeviceTaintRules that select the device."""
    binding_conditions: tuple[str, ...] = field(default=(), hash=False, compare=False)
    """``bindingConditions`` (KEP-5007): condition types that must be true in the claim's
    ``status.devices`` before the pod binds (PreBind waits). A release with the gate off does not
    allocate the device (:meth:`DraState.for_version`)."""
    binding_failure_conditions: tuple[str, ...] = field(default=(), hash=False, compare=False)
    """``bindingFailureConditions`` (KEP-5007): any of them true makes PreBind give the claim up."""
    reach: NodeReach | None = field(default=None, hash=False, compare=False)
    """None: local to one node (the slice's ``nodeName``, or the device's own with
    ``perDeviceNodeSelection``); else the nodes a multi-node device is reachable from. Such a
    device is in :attr:`DraState.devices_by_node` of every node it reaches, and one allocation of
    it takes it from all of them."""
    per_device: bool = field(default=False, hash=False, compare=False)
    """Published in a slice with ``perDeviceNodeSelection`` (part of KEP-4815: a release without
    DRAPartitionableDevices skips the slice, ``GatherPools``)."""

    @property
    def id(self) -> DeviceID:
        return (self.driver, self.pool, self.name)

    def cel_value(self) -> dict:
        return {
            "driver": self.driver,
            "attributes": self.attributes,
            "capacity": self.capacity,
            "allowMultipleAllocations": self.allow_multiple,
        }


@dataclass(frozen=True)
class DeviceRequest:
    """One ExactCount request of a claim (``spec.devices.requests[].exactly``)."""

    name: str
    device_class: str
    selectors: tuple[str, ...] = ()
    count: int = 1
    capacity: tuple[tuple[str, int], ...] = ()
    """``capacity.requests`` (KEP-5075): capacity name as written -> scheduler integer, sorted."""
    all: bool = False
    """``allocationMode: All``: every matching device of the node's pools (``count`` unused)."""
    alternatives: tuple[DeviceRequest, ...] = ()
    """``firstAvailable`` (KEP-4816): the subrequests in priority order; the allocator takes the
    first with which the whole allocation succeeds (its results are named ``<request>/<sub>``).
    The request's own class, selectors and count are then unused."""
    tolerations: tuple[DeviceToleration, ...] = ()
    """``tolerations`` (KEP-5055) of the ``ExactDeviceRequest`` or ``DeviceSubRequest``."""
    admin_access: bool = False
    """``adminAccess: true`` (KEP-5018, gate DRAAdminAccess): the request may take devices in use
    (allocated in the snapshot or being allocated for another claim), only not one its own claim
    is taking, and its results do not make the device in use for others (``allocateDevice``,
    ``structured/internal/stable/allocator_stable.go`` and ``incubating/allocator_incubating.go``,
    kubernetes/kubernetes @03ab440c; ``foreachAllocatedDevice``, ``pkg/scheduler/framework/
    plugins/dynamicresources/allocateddevices.go`` @030880a5)."""


@dataclass(frozen=True)
class Constraint:
    """One ``spec.devices.constraints[]`` entry (``resource/v1`` ``types.go`` ``DeviceConstraint``):
    ``matchAttribute`` (every device picked for the listed requests has the attribute, all with
    one value) or ``distinctAttribute`` (KEP-5075, gate DRAConsumableCapacity: all have it, with
    pairwise different values). ``requests`` empty: every request of the claim."""

    kind: str
    """``match``, ``distinct``, or ``empty`` (neither field set: upstream's allocator fails the
    claim with "empty constraint (unsupported constraint type?)")."""
    attribute: CapName = ("", "")
    """The fully qualified attribute name split (domain, name)."""
    requests: tuple[str, ...] = ()

    def applies(self, request: str) -> bool:
        """``request``: a request's name, or ``<request>/<subrequest>`` (``matches``: a constraint
        naming the request covers all its subrequests)."""
        return (
            not self.requests
            or request in self.requests
            or request.split("/", 1)[0] in self.requests
        )


@dataclass(frozen=True)
class Claim:
    """A ResourceClaim (or one a pod would get from a template, or an extended-resource claim)."""

    key: str
    """namespace/name; generated claims get ``namespace/<pod>-<pod claim name>``."""
    requests: tuple[DeviceRequest, ...] = ()
    allocated: tuple[DeviceID, ...] | None = None
    """``status.allocation.devices.results`` when the claim is allocated."""
    shared: tuple[tuple[DeviceID, tuple[tuple[CapName, int], ...]], ...] = ()
    """The results with a ``shareID`` (KEP-5075) and their ``consumedCapacity``: such a device is
    not in use, it only has that much less capacity left."""
    allocated_nodes: tuple[str, ...] | None = None
    """Nodes ``status.allocation.nodeSelector`` names (matchFields metadata.name), None = any."""
    allocated_reach: NodeReach | None = None
    """``status.allocation.nodeSelector`` when it is not only a list of node names (terms on node
    labels, as an allocation of multi-node devices gets): the nodes it matches; None = any."""
    reserved_for: tuple[str, ...] = ()
    unsupported: str | None = None
    """Why the claim cannot be allocated by gangplan (a feature not modelled): no node fits it."""
    constraints: tuple[Constraint, ...] = ()
    """``spec.devices.constraints`` (matchAttribute / distinctAttribute)."""
    result_requests: tuple[str, ...] = ()
    """``status.allocation.devices.results[].request``, one per :attr:`allocated` entry."""
    result_admin: tuple[bool, ...] = ()
    """``status.allocation.devices.results[].adminAccess``, one per :attr:`allocated` entry (empty:
    none): such a result neither takes its device nor consumes its capacity for other claims
    (``foreachAllocatedDevice`` skips it, ``allocateddevices.go`` @030880a5)."""

    def usable_on(self, node) -> bool:
        """Whether the claim's allocation in the snapshot is usable on ``node`` (its
        ``status.allocation.nodeSelector`` matches; DynamicResources Filter: "resourceclaim not
        available on the node")."""
        if self.allocated_nodes is not None and node.name not in self.allocated_nodes:
            return False
        return self.allocated_reach is None or self.allocated_reach.matches(node)

    def request_named(self, name: str) -> DeviceRequest | None:
        """The request (or ``<request>/<subrequest>``) a result names."""
        base, _, sub = name.partition("/")
        for r in self.requests:
            if r.name == base:
                if not sub:
                    return r
                return next((a for a in r.alternatives if a.name == sub), None)
        return None


@dataclass
class DraState:
    """Everything DRA in a snapshot. Empty (``bool(state) is False``) without DRA objects."""

    classes: dict[str, DeviceClass] = field(default_factory=dict)
    devices_by_node: dict[str, list[Device]] = field(default_factory=dict)
    """node -> its node-local devices in allocator order (driver, pool, slice name, slice order)."""
    claims: dict[str, Claim] = field(default_factory=dict)
    """namespace/name -> claim object of the snapshot."""
    templates: dict[str, tuple[DeviceRequest, ...]] = field(default_factory=dict)
    constraints: dict[str, tuple[Constraint, ...]] = field(default_factory=dict)
    """claim key -> its ``spec.devices.constraints`` (only claims that have some; generated
    claims of templates included): what :func:`gangplan.dra.allocator.allocate_results` checks."""
    pod_claims: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """pending pod key -> the claim keys it uses, in ``spec.resourceClaims`` order (generated
    claims of templates are in :attr:`claims` too)."""
    pod_missing: dict[str, str] = field(default_factory=dict)
    """pending pod key -> why its claims cannot be resolved (PreFilter rejects it)."""
    extended: dict[str, str] = field(default_factory=dict)
    """extended resource name -> DeviceClass that serves it (KEP-5004)."""
    in_use: frozenset[DeviceID] = frozenset()
    """Devices allocated to claims in the snapshot (results without a ``shareID``)."""
    consumed: dict[DeviceID, dict[CapName, int]] = field(default_factory=dict)
    """KEP-5075: per device, the capacity the snapshot's shared allocations consume (summed)."""
    alloc_cache: dict = field(default_factory=dict, repr=False, compare=False)
    """The allocator's per (device list, request) selector outcomes (:mod:`gangplan.dra.allocator`)."""
    taint_rules: tuple[TaintRule, ...] = ()
    """The snapshot's DeviceTaintRules (KEP-5055)."""
    taint_mode: str = "rules"
    """Which taints :attr:`Device.taints` holds in this state: ``off``, ``slices`` or ``rules``
    (:func:`gangplan.models.version.dra_taint_mode`)."""
    binding_on: bool = True
    """Whether devices with binding conditions are in :attr:`devices_by_node` (KEP-5007; the
    release's DRADeviceBindingConditions gate, :func:`gangplan.models.version.dra_binding_conditions`)."""
    per_device_on: bool = True
    """Whether devices of ``perDeviceNodeSelection`` slices are in :attr:`devices_by_node`
    (KEP-4815's DRAPartitionableDevices gate, :func:`gangplan.models.version.dra_partitionable_devices`)."""
    bound_out: dict[str, list[Device]] = field(default_factory=dict, repr=False, compare=False)
    """Every node's devices, binding-conditioned and per-device-selected ones included, when this
    view leaves some out."""
    _views: dict = field(default_factory=dict, repr=False, compare=False)
    """(taint mode, binding on, per-device on) -> the state of that view (shared by every view of
    one snapshot); also the views' derived sets (:attr:`multi_node`, :meth:`device`)."""

    def __bool__(self) -> bool:
        return bool(self.classes or self.devices_by_node or self.claims or self.pod_claims)

    @property
    def multi_node(self) -> frozenset[DeviceID]:
        """Devices of multi-node ResourceSlices (:attr:`Device.reach`) this view allocates."""
        got = self._views.get(("multi", self.taint_mode, self.binding_on, self.per_device_on))
        if got is None:
            got = self._views[("multi", self.taint_mode, self.binding_on, self.per_device_on)] = (
                frozenset(
                    d.id
                    for devs in self.devices_by_node.values()
                    for d in devs
                    if d.reach is not None
                )
            )
        return got

    def local_only(self, keep_plain: bool = False) -> DraState:
        """This view without the devices of multi-node slices, or (``keep_plain``) only without
        those that consume shared counters or allow multiple allocations (what the exact engine
        counts: :mod:`gangplan.dra.capacity`)."""
        if not self.multi_node:
            return self
        key = ("local", self.taint_mode, self.binding_on, self.per_device_on, keep_plain)
        got = self._views.get(key)
        if got is None:
            from dataclasses import replace

            def kept_device(d: Device) -> bool:
                return d.reach is None or (keep_plain and not d.counters and not d.allow_multiple)

            def local(nodes: dict[str, list[Device]]) -> dict[str, list[Device]]:
                return {
                    n: kept
                    for n, devs in nodes.items()
                    if (kept := [d for d in devs if kept_device(d)])
                }

            got = self._views[key] = replace(
                self,
                devices_by_node=local(self.devices_by_node),
                bound_out=local(self.bound_out),
                alloc_cache={},
                _views={},
            )
        return got

    def device(self, did: DeviceID) -> Device | None:
        """The device ``did`` names in this view (on any node), or None."""
        index = self._views.get(("index", self.taint_mode, self.binding_on, self.per_device_on))
        if index is None:
            index = self._views[("index", self.taint_mode, self.binding_on, self.per_device_on)] = {
                d.id: d for devs in self.devices_by_node.values() for d in devs
            }
        return index.get(did)

    @property
    def tainted(self) -> bool:
        """Whether any device has a taint, from its slice or a DeviceTaintRule (at any release;
        devices a view leaves out for their binding conditions included)."""
        every = self.bound_out or self.devices_by_node
        return any(d.slice_taints or d.rule_taints for devs in every.values() for d in devs)

    def for_version(self, version) -> DraState:
        """This snapshot's DRA state as kube-scheduler ``version`` sees it: the same object when
        no device is tainted or the release checks the same taints; else a state whose devices
        carry the taints that release checks (:attr:`Device.taints`), with its own allocator cache.
        Devices with binding conditions (KEP-5007) and those of ``perDeviceNodeSelection`` slices
        (KEP-4815) are left out where the release's gate is off."""
        from gangplan.models.version import (
            dra_binding_conditions,
            dra_partitionable_devices,
            dra_taint_mode,
        )

        return self.view(
            dra_taint_mode(version),
            dra_binding_conditions(version),
            dra_partitionable_devices(version),
        )

    @property
    def binding(self) -> int:
        """How many devices have binding conditions (KEP-5007), in any view."""
        every = self.bound_out or self.devices_by_node
        return sum(1 for devs in every.values() for d in devs if d.binding_conditions)

    def version_notes(self, version) -> tuple[str, ...]:
        """What release ``version`` ignores of the snapshot's device taints with its default
        feature gates (a cluster that enabled a gate behaves as the release that has it on)."""
        from gangplan.models.version import (
            dra_binding_conditions,
            dra_partitionable_devices,
            dra_taint_mode,
        )

        mode = dra_taint_mode(version)
        out = []
        if self.per_device and not dra_partitionable_devices(version):
            out.append(
                f"{self.per_device} device(s) are published in ResourceSlices with perDeviceNodeSelection, which kube-scheduler v{version} skips "
                "(DRAPartitionableDevices is off by default before v1.36); choose --kube-version 1.36 or later if the cluster enables the gate"
            )
        if self.binding and not dra_binding_conditions(version):
            out.append(
                f"{self.binding} device(s) have binding conditions (KEP-5007), which kube-scheduler v{version} does not allocate "
                "(DRADeviceBindingConditions is off by default before v1.36); choose --kube-version 1.36 or later if the cluster enables the gate"
            )
        tainted = sum(1 for devs in self.devices_by_node.values() for d in devs if d.slice_taints)
        if mode == "off" and tainted:
            out.append(
                f"{tainted} device(s) have taints in their ResourceSlice, which kube-scheduler v{version} does not check (DRADeviceTaints is off by default "
                "before v1.36): they are allocated as untainted devices; choose --kube-version 1.36 or later if the cluster enables the gate"
            )
        if mode != "rules" and self.taint_rules:
            out.append(
                f"{len(self.taint_rules)} DeviceTaintRule(s) are not applied by kube-scheduler v{version} (DRADeviceTaintRules is off by default before v1.37); "
                "choose --kube-version 1.37 or later if the cluster enables the gate"
            )
        return tuple(out)

    def at_taint_mode(self, mode: str) -> DraState:
        return self.view(mode, self.binding_on, self.per_device_on)

    @property
    def per_device(self) -> int:
        """How many devices are published in ``perDeviceNodeSelection`` slices, in any view."""
        got = self._views.get(("per-device",))
        if got is None:
            every = self.bound_out or self.devices_by_node
            got = self._views[("per-device",)] = len(
                {d.id for devs in every.values() for d in devs if d.per_device}
            )
        return got

    def view(self, mode: str, binding_on: bool, per_device_on: bool = True) -> DraState:
        """The state with the device taints of taint ``mode``, without the devices that have
        binding conditions unless ``binding_on``, and without those of ``perDeviceNodeSelection``
        slices unless ``per_device_on`` (``GatherPools`` skips such a slice while
        DRAPartitionableDevices is off). Every view shares one cache of views."""
        binding_on = binding_on or not self.binding
        per_device_on = per_device_on or not self.per_device
        mode = mode if self.tainted else self.taint_mode
        here = (self.taint_mode, self.binding_on, self.per_device_on)
        if (mode, binding_on, per_device_on) == here:
            return self
        views = self._views
        views.setdefault(here, self)
        got = views.get((mode, binding_on, per_device_on))
        if got is None:
            from dataclasses import replace

            def effective(d: Device) -> tuple[DeviceTaint, ...]:
                return (
                    ()
                    if mode == "off"
                    else d.slice_taints
                    if mode == "slices"
                    else d.slice_taints + d.rule_taints
                )

            made: dict[int, Device] = {}
            every = self.bound_out or self.devices_by_node
            by_node, all_by_node = {}, {}
            for node, devs in every.items():
                out = []
                for d in devs:
                    nd = made.get(id(d))
                    if nd is None:
                        nd = made[id(d)] = replace(d, taints=effective(d)) if self.tainted else d
                    out.append(nd)
                all_by_node[node] = out
                by_node[node] = [
                    d
                    for d in out
                    if (binding_on or not d.binding_conditions)
                    and (per_device_on or not d.per_device)
                ]
            # (a device's counter pool is shared: counters are looked up by device id)
            whole = binding_on and per_device_on
            got = views[(mode, binding_on, per_device_on)] = replace(
                self,
                devices_by_node=by_node,
                bound_out={} if whole else all_by_node,
                alloc_cache={},
                taint_mode=mode,
                binding_on=binding_on,
                per_device_on=per_device_on,
                _views=views,
            )
        return got

    def extended_requests(self, pod, node) -> tuple[DeviceRequest, ...]:
        """KEP-5004: the pod's extended resource requests a DeviceClass serves on ``node``
        (one without that resource in ``status.allocatable``), as device requests."""
        ext = self.extended
        if not ext:
            return ()
        mine = sorted((r, q) for r, q in pod.requests.items() if r in ext and q > 0)
        if not mine:
            return ()
        made = self.alloc_cache.setdefault(
            "extended-requests", {}
        )  # one object per (resource, count)
        out = []
        for r, q in mine:
            if node.allocatable.get(r, 0) == 0:
                req = made.get((r, q))
                if req is None:
                    req = made[(r, q)] = DeviceRequest(
                        name=f"extended:{r}", device_class=ext[r], count=q
                    )
                out.append(req)
        return tuple(out)

    def mapped_on(self, node) -> set[str]:
        """Extended resources DRA serves on ``node`` (NodeResourcesFit leaves them to DynamicResources)."""
        return {r for r in self.extended if node.allocatable.get(r, 0) == 0}
