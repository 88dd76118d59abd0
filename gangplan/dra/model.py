"""What gangplan reads of Dynamic Resource Allocation objects (``k8s.io/api`` ``resource/v1``
``types.go``; v1beta1 / v1beta2 are read into the same shapes by :mod:`gangplan.dra.parse`)."""

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
    """The pool's shared counters (set by :func:`gangplan.dra.build.build_state` for a device with ``counters``)."""

    @property
    def id(self) -> DeviceID:
        return (self.driver, self.pool, self.name)

    def cel_value(self) -> dict:
        return {"driver": self.driver, "attributes": self.attributes, "capacity": self.capacity,
                "allowMultipleAllocations": self.allow_multiple}


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
        return not self.requests or request in self.requests or request.split("/", 1)[0] in self.requests


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
    reserved_for: tuple[str, ...] = ()
    unsupported: str | None = None
    """Why the claim cannot be allocated by gangplan (a feature not modelled): no node fits it."""
    constraints: tuple[Constraint, ...] = ()
    """``spec.devices.constraints`` (matchAttribute / distinctAttribute)."""


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

    def __bool__(self) -> bool:
        return bool(self.classes or self.devices_by_node or self.claims or self.pod_claims)

    def extended_requests(self, pod, node) -> tuple[DeviceRequest, ...]:
        """KEP-5004: the pod's extended resource requests a DeviceClass serves on ``node``
        (one without that resource in ``status.allocatable``), as device requests."""
        ext = self.extended
        if not ext:
            return ()
        mine = sorted((r, q) for r, q in pod.requests.items() if r in ext and q > 0)
        if not mine:
            return ()
        made = self.alloc_cache.setdefault("extended-requests", {})  # one object per (resource, count)
        out = []
        for r, q in mine:
            if node.allocatable.get(r, 0) == 0:
                req = made.get((r, q))
                if req is None:
                    req = made[(r, q)] = DeviceRequest(name=f"extended:{r}", device_class=ext[r], count=q)
                out.append(req)
        return tuple(out)

    def mapped_on(self, node) -> set[str]:
        """Extended resources DRA serves on ``node`` (NodeResourcesFit leaves them to DynamicResources)."""
        return {r for r in self.extended if node.allocatable.get(r, 0) == 0}
