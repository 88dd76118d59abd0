"""What one device is to one request in the structured allocator: whether it is selectable
(``isSelectable``: DeviceClass selectors, then request selectors), whether its taints let the
request take it (``taintPreventsAllocation``, KEP-5055), a device's value of an attribute
(``lookupAttribute``) and whether the devices a claim got satisfy its ``matchAttribute`` /
``distinctAttribute`` constraints; the types the allocator answers with (:class:`DeviceResult`,
:class:`AllocationError`). Upstream: ``staging/src/k8s.io/dynamic-resource-allocation/structured/
internal/incubating/allocator_incubating.go`` and ``incubating/constraint.go`` (kubernetes/kubernetes
v1.36); :mod:`gangplan.dra.allocator` describes the whole allocator."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from gangplan.dra.cel import CelError, evaluate
from gangplan.dra.model import (
    CapName,
    Constraint,
    Device,
    DeviceClass,
    DeviceID,
    DeviceRequest,
    untolerated,
)

Consumed = Mapping[DeviceID, Mapping[CapName, int]]
"""Per device, capacity already consumed by shared allocations (``AggregatedCapacity``)."""

Constraints = Mapping[str, Sequence[Constraint]]
"""Claim key -> its ``spec.devices.constraints`` (claims without any may be absent)."""

_ABSENT = object()


def attribute_value(device: Device, attribute: CapName) -> object:
    """``lookupAttribute``: the device's value of a fully qualified attribute, as a (type, value)
    pair so that ``1`` and ``True`` differ as they do in the API; ``_ABSENT`` without it. The
    parser files an unqualified attribute under the driver's domain, which is where the short
    name lookup of upstream finds it."""
    v = device.attributes.get(attribute[0], {}).get(attribute[1], _ABSENT)
    return v if v is _ABSENT else (type(v), v)


def has_attribute(device: Device, attribute: CapName) -> bool:
    return attribute_value(device, attribute) is not _ABSENT


def _empty(key: str, i: int) -> AllocationError:
    return AllocationError(
        f"claim {key}, constraint #{i}: empty constraint (unsupported constraint type?)"
    )


def _must(key: str, request: DeviceRequest, d: Device) -> AllocationError:
    """``allocateDevice`` with ``must`` (allocationMode All): a constraint refusing one of the
    devices is an error, not a reason to try another."""
    return AllocationError(
        f"claim {key}, request {request.name}: cannot add device {'/'.join(d.id)} because a claim constraint would not be satisfied"
    )


def all_devices(
    key: str, request: DeviceRequest, devices: Sequence[Device], classes: dict[str, DeviceClass]
) -> list[int]:
    """``validateDeviceRequest`` for ``allocationMode: All``: the indexes of every device of the
    node's pools that matches the request (in use or not: taking it is the search's part), or an
    :class:`AllocationError` when a pool of the node is incomplete or a selector fails."""
    for d in devices:
        if d.pool_incomplete:
            raise AllocationError(
                f"claim {key}, request {request.name}: asks for all devices, but resource pool {d.driver}/{d.pool} is currently being updated"
            )
    return [
        i for i, d in enumerate(devices) if selectable(d, request, classes)
    ]  # (tainted ones too: the search refuses them)


def constraints_hold(
    constraints: Sequence[Constraint], picked: Sequence[tuple[str, Device]]
) -> bool:
    """Whether the devices a claim got (``(request name, device)`` each) satisfy every one of its
    constraints: the reference the search is tested against, and what the validator checks."""
    for c in constraints:
        values = [attribute_value(d, c.attribute) for r, d in picked if c.applies(r)]
        if any(v is _ABSENT for v in values):
            return False
        if c.kind == "match" and len(set(values)) > 1:
            return False
        if c.kind == "distinct" and len(set(values)) != len(values):
            return False
        if c.kind not in ("match", "distinct"):
            return False
    return True


class AllocationError(Exception):
    """The allocation cannot be attempted (unknown class, selector error): kube-scheduler's
    Filter returns an Error status with this message."""


@dataclass(frozen=True)
class DeviceResult:
    """One ``DeviceRequestAllocationResult``: the request, the device, and for a device shared
    (``allowMultipleAllocations``, a ``shareID`` upstream) its ``consumedCapacity``; None when the
    device is allocated exclusively."""

    request: str
    device: DeviceID
    consumed: tuple[tuple[CapName, int], ...] | None = None
    admin: bool = False
    """``adminAccess: true`` on the result (KEP-5018): the device is not in use for other claims
    once allocated, nor does its consumed capacity count (``foreachAllocatedDevice``)."""

    @property
    def takes(self) -> bool:
        """Whether the result makes its device in use for later allocations (exclusive, not admin)."""
        return self.consumed is None and not self.admin


def matches(device: Device, request: DeviceRequest, classes: dict[str, DeviceClass]) -> bool:
    """Whether ``device`` can serve ``request`` before capacity and constraints: it is selectable
    (:func:`selectable`) and, when it has taints, the request tolerates every NoSchedule and
    NoExecute one (``allocateDevice`` checks ``taintPreventsAllocation`` after the device is found
    free and selectable and before the constraints, ``structured/internal/stable/allocator_stable.go``
    and ``incubating/allocator_incubating.go``, kubernetes/kubernetes @03ab440c: a refusal, never
    an error, also for allocationMode All). :attr:`Device.taints` holds the taints the release
    checks (none where DRADeviceTaints is off)."""
    if not selectable(device, request, classes):
        return False
    return not device.taints or untolerated(device.taints, request.tolerations) is None


def selectable(device: Device, request: DeviceRequest, classes: dict[str, DeviceClass]) -> bool:
    """``isSelectable``: every class selector, then every request selector, is true."""
    cls = classes.get(request.device_class)
    if cls is None:
        raise AllocationError(
            f"request {request.name}: could not retrieve device class {request.device_class}"
        )
    try:
        for expr in cls.selectors:
            if not evaluate(expr, device):
                return False
        for expr in request.selectors:
            if not evaluate(expr, device):
                return False
    except CelError as e:
        raise AllocationError(
            f"request {request.name}: selector failed for device {device.driver}/{device.pool}/{device.name}: {e}"
        ) from None
    return True


def add_consumed(into: dict[DeviceID, dict[CapName, int]], results: Iterable[DeviceResult]) -> None:
    """Add the consumed capacity of shared ``results`` to ``into`` (device -> capacity -> amount)."""
    for r in results:
        if (
            r.consumed is not None and not r.admin
        ):  # (an admin-access share is not counted, foreachAllocatedDevice)
            per = into.setdefault(r.device, {})
            for k, v in r.consumed:
                per[k] = per.get(k, 0) + v
