"""The structured allocator, per node: ``staging/src/k8s.io/dynamic-resource-allocation/
structured/internal/stable/allocator_stable.go`` (kubernetes/kubernetes v1.35, the variant the
default feature gates select when no alpha/beta DRA feature is in use), as the DynamicResources
plugin (``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``) calls it in Filter.

Candidate devices are the node's (:attr:`DraState.devices_by_node`: pools by driver then pool
name, slices by name, devices in slice order). Claims, then their requests, then each of a
request's ``count`` devices are allocated depth first: the first device that is neither in use
nor already taken by this allocation and that matches the DeviceClass selectors and then the
request selectors is tried, and the search backtracks when the rest cannot be satisfied. The
first full solution wins; there is no device scoring. A selector error fails the allocation
(:class:`AllocationError`), it never only skips the device.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gangplan.dra.cel import CelError, evaluate
from gangplan.dra.model import Device, DeviceClass, DeviceID, DeviceRequest


class AllocationError(Exception):
    """The allocation cannot be attempted (unknown class, selector error): kube-scheduler's
    Filter returns an Error status with this message."""


def matches(device: Device, request: DeviceRequest, classes: dict[str, DeviceClass]) -> bool:
    """``isSelectable``: every class selector, then every request selector, is true."""
    cls = classes.get(request.device_class)
    if cls is None:
        raise AllocationError(f"request {request.name}: could not retrieve device class {request.device_class}")
    try:
        for expr in cls.selectors:
            if not evaluate(expr, device):
                return False
        for expr in request.selectors:
            if not evaluate(expr, device):
                return False
    except CelError as e:
        raise AllocationError(f"request {request.name}: selector failed for device {device.driver}/{device.pool}/{device.name}: {e}") from None
    return True


def allocate(claims: Sequence[tuple[str, Sequence[DeviceRequest]]], devices: Sequence[Device], in_use: Iterable[DeviceID] | set,
             classes: dict[str, DeviceClass]) -> dict[str, tuple[DeviceID, ...]] | None:
    """Devices for every claim (claim key -> device ids, in request order), or None when no
    full allocation exists. ``in_use``: devices allocated elsewhere (unavailable)."""
    used = set(in_use)
    slots: list[tuple[int, DeviceRequest]] = []
    for k, (_, requests) in enumerate(claims):
        for r in requests:
            slots.extend((k, r) for _ in range(r.count))
    chosen: list[Device] = []

    def one(s: int) -> bool:
        if s == len(slots):
            return True
        _, request = slots[s]
        for d in devices:
            if d.id in used:
                continue
            if not matches(d, request, classes):
                continue
            used.add(d.id)
            chosen.append(d)
            if one(s + 1):
                return True
            chosen.pop()
            used.discard(d.id)
        return False

    if not one(0):
        return None
    out: dict[str, list[DeviceID]] = {key: [] for key, _ in claims}
    for (k, _), d in zip(slots, chosen, strict=True):
        out[claims[k][0]].append(d.id)
    return {k: tuple(v) for k, v in out.items()}


def brute_force_exists(claims: Sequence[tuple[str, Sequence[DeviceRequest]]], devices: Sequence[Device], in_use: Iterable[DeviceID],
                       classes: dict[str, DeviceClass]) -> bool:
    """Whether any allocation exists (every assignment of distinct free devices to the slots
    tried): the reference the allocator is tested against (tests/test_dra.py)."""
    from itertools import permutations

    used = set(in_use)
    free = [d for d in devices if d.id not in used]
    slots = [r for _, requests in claims for r in requests for _ in range(r.count)]
    if len(slots) > len(free):
        return False
    return any(all(matches(d, r, classes) for d, r in zip(p, slots, strict=True)) for p in permutations(free, len(slots)))
