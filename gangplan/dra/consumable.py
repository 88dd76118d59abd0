"""Consumable capacity (KEP-5075): what a request consumes of a device's capacities and whether
that fits (``incubating/consumable_capacity.go`` and ``cmpRequestOverCapacity`` of
``incubating/allocator_incubating.go``, kubernetes/kubernetes v1.36)."""

from __future__ import annotations

from collections.abc import Mapping

from gangplan.dra.model import CapName, Device, DeviceRequest, RequestPolicy
from gangplan.predicates.devices import share_fits


def qualify(name: str, driver: str) -> CapName:
    """A capacity name as written (``memory`` or ``example.com/memory``) -> (domain, name); an
    unqualified name is in the device driver's domain (``resolveCapacityName``)."""
    if "/" in name:
        domain, _, short = name.partition("/")
        return domain, short
    return driver, name


def consumed_amount(requested: int | None, value: int, policy: RequestPolicy | None) -> int:
    """``calculateConsumedCapacity`` (``incubating/consumable_capacity.go`` v1.36): a capacity the
    request does not name consumes the policy's default, else the whole value; a named one
    consumes the request, raised to ``validRange.min`` and rounded up to ``min + k * step``, or to
    the smallest of ``validValues`` at least the request (the request itself above them all)."""
    if requested is None:
        return policy.default if policy is not None and policy.default is not None else value
    if policy is None:
        return requested
    if policy.has_range and policy.min is not None:
        if requested < policy.min:
            return policy.min
        if policy.step is None or policy.step <= 0:
            return requested
        k = -(-(requested - policy.min) // policy.step)
        return policy.min + k * policy.step
    if policy.valid_values is not None:
        for v in policy.valid_values:
            if requested <= v:
                return v
    return requested


def violates(amount: int, policy: RequestPolicy | None) -> bool:
    """``violatesPolicy``: the default always passes; otherwise above ``validRange.max`` or off
    its steps, or not one of ``validValues``."""
    if policy is None or (policy.default is not None and amount == policy.default):
        return False
    if policy.has_range:
        if policy.max is not None and amount > policy.max:
            return True
        if (
            policy.step is not None
            and policy.step > 0
            and (amount - (policy.min or 0)) % policy.step != 0
        ):
            return True
        return False
    if policy.valid_values:
        return amount not in policy.valid_values
    return False


def consumption(device: Device, request: DeviceRequest) -> dict[CapName, int] | None:
    """What ``request`` consumes of each capacity of ``device`` (``getConsumedCapacityFromRequest``),
    or None when the device cannot serve it: the request names a capacity the device lacks, or an
    amount violates the capacity's request policy (``cmpRequestOverCapacity``'s soft checks)."""
    asked: dict[CapName, int] = {}
    for name, amount in request.capacity:
        key = qualify(name, device.driver)
        if key[1] not in device.capacity.get(key[0], {}):
            return None
        asked[key] = amount
    out: dict[CapName, int] = {}
    for domain, caps in device.capacity.items():
        for name, value in caps.items():
            key = (domain, name)
            policy = device.policies.get(key)
            amount = consumed_amount(asked.get(key), value, policy)
            if violates(amount, policy):
                return None
            out[key] = amount
    return out


def fits(
    device: Device, amounts: Mapping[CapName, int], *already: Mapping[CapName, int] | None
) -> bool:
    """Whether ``amounts`` on top of ``already`` stay within every capacity value of ``device``
    (:func:`gangplan.predicates.devices.share_fits` per capacity)."""
    for (domain, name), q in amounts.items():
        used = sum(a.get((domain, name), 0) for a in already if a)
        if not share_fits(device.capacity[domain][name] - used, q):
            return False
    return True
