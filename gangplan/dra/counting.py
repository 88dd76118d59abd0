"""The structured allocator's answer by counting, where the depth-first search would never
backtrack (not upstream's code, the same answer; :func:`_counted` says when), and the bit masks
of the devices a request can take alone that the exact engine's counts and the greedy
DynamicResources plugin read (:func:`usable_mask`, :func:`countable_mask`)."""

from __future__ import annotations

from collections.abc import Sequence

from gangplan.dra.consumable import consumption, fits
from gangplan.dra.matching import (
    _ABSENT,
    AllocationError,
    Constraints,
    Consumed,
    DeviceResult,
    matches,
)
from gangplan.dra.model import Device, DeviceClass, DeviceID, DeviceRequest

_SEARCH = object()
""":func:`_counted` cannot answer by counting: run the search."""


def _device_info(
    devices: Sequence[Device], store: dict
) -> tuple[dict[DeviceID, int], frozenset[DeviceID], bool]:
    """Per device list (cached in ``store``): device id -> bit, the ids, whether any is shared
    or consumes counters (then counting never decides: the search does)."""
    key = (id(devices), "info")
    got = store.get(key)
    if got is None:
        bits = {d.id: 1 << i for i, d in enumerate(devices)}
        got = store[key] = (
            bits,
            frozenset(bits),
            any(d.allow_multiple or d.counters for d in devices),
        )
    return got


def _usable(
    devices: Sequence[Device], request: DeviceRequest, classes: dict[str, DeviceClass], store: dict
) -> int | None:
    """The bit mask of the devices that can serve ``request`` on their own (matching, capacity
    policy accepting it, its consumption within their capacity with nothing else consumed), or
    None when a selector raised on one of them (the search must meet the error where upstream
    does)."""
    key = (
        id(devices),
        "mask",
        request.device_class,
        request.selectors,
        request.capacity,
        request.tolerations,
    )  # not the name nor the count
    got = store.get(key, _ABSENT)
    if got is _ABSENT:
        probe = DeviceRequest(
            name="",
            device_class=request.device_class,
            selectors=request.selectors,
            capacity=request.capacity,
            tolerations=request.tolerations,
        )
        got = 0
        for i, d in enumerate(devices):
            try:
                if not matches(d, probe, classes):
                    continue
            except AllocationError:
                got = None
                break
            if not probe.capacity and not d.policies:
                got |= 1 << i  # it consumes every capacity value whole, which fits
                continue
            q = consumption(d, probe)
            if q is not None and (not q or fits(d, q)):
                got |= 1 << i
        store[key] = got
    return got


def _used_bits(bits: dict[DeviceID, int], in_use: set | frozenset) -> int:
    used = 0
    if len(in_use) <= len(bits):
        for d in in_use:
            b = bits.get(d)
            if b:
                used |= b
    else:
        for d, b in bits.items():
            if d in in_use:
                used |= b
    return used


def usable_mask(
    devices: Sequence[Device],
    request: DeviceRequest,
    classes: dict[str, DeviceClass],
    store: dict,
    in_use: set | frozenset,
    consumed: Consumed | None,
) -> int | None:
    """The bit mask (bit ``i``: ``devices[i]``) of the devices not in use that can serve
    ``request`` alone, or None when that must be decided device by device: a selector raises on
    one of them, one has consumed capacity recorded, or one consumes shared counters. ``store``:
    the :class:`DraState`'s cache."""
    bits, ids, special = _device_info(devices, store)
    if consumed and not ids.isdisjoint(consumed):
        return None
    if special and any(d.counters for d in devices):
        return None  # counters depend on what is allocated: device by device
    m = _usable(devices, request, classes, store)
    return None if m is None else m & ~_used_bits(bits, in_use)


def countable_mask(
    devices: Sequence[Device],
    request: DeviceRequest,
    classes: dict[str, DeviceClass],
    store: dict,
    in_use: set | frozenset,
    consumed: Consumed | None,
) -> int | None:
    """:func:`usable_mask` where counting decides allocations from ``devices`` (none of them is
    shared, :func:`_counted`): a claim set whose requests all draw on this one mask is allocated
    exactly when the mask holds as many devices as they ask for together, and then takes its
    lowest bits. None where the search must decide."""
    if _device_info(devices, store)[2]:
        return None
    return usable_mask(devices, request, classes, store, in_use, consumed)


def _counted(
    claims: Sequence[tuple[str, Sequence[DeviceRequest]]],
    devices: Sequence[Device],
    in_use: set | frozenset,
    classes: dict[str, DeviceClass],
    consumed: Consumed | None,
    cache: dict | None,
    constraints: Constraints | None,
) -> dict[str, tuple[DeviceResult, ...]] | None | object:
    """The search's answer by counting, where that is exact, else ``_SEARCH``.

    It is exact when no claim has constraints, no device of the node is shared
    (``allowMultipleAllocations``) or has consumed capacity recorded, no request asks for
    capacity, no selector raises, and the free devices each request can take (its usable mask
    minus the devices in use) are, request by request, either the same set or disjoint sets.
    Then an allocation exists exactly when every such set holds at least the devices its requests
    ask for together (the sets do not compete), and the depth-first search never backtracks: each
    slot, in claim, request and count order, takes the first free device of its set (the next
    after its request's previous device is the first free one, as the earlier ones are taken),
    which is what is returned here. Otherwise the search runs
    (:func:`gangplan.dra.allocator.allocate_results`)."""
    if constraints and any(constraints.get(key) for key, _ in claims):
        return _SEARCH
    store: dict = cache if cache is not None else {}
    bits, ids, shared = _device_info(devices, store)
    if shared or (consumed and not ids.isdisjoint(consumed)):
        return _SEARCH
    plan = _plan(claims, devices, classes, store, _used_bits(bits, in_use))
    if plan is _SEARCH:
        return plan
    need: dict[int, int] = {}
    for _, r, m in plan:
        need[m] = need.get(m, 0) + r.count
    for m, n in need.items():
        if m.bit_count() < n:
            return None
    out: dict[str, list[DeviceResult]] = {key: [] for key, _ in claims}
    taken = 0
    for k, r, m in plan:
        free = m & ~taken
        for _ in range(r.count):
            low = free & -free
            free ^= low
            taken |= low
            out[claims[k][0]].append(DeviceResult(r.name, devices[low.bit_length() - 1].id))
    return {k: tuple(v) for k, v in out.items()}


def _plan(
    claims: Sequence[tuple[str, Sequence[DeviceRequest]]],
    devices: Sequence[Device],
    classes: dict[str, DeviceClass],
    store: dict,
    used: int,
) -> list[tuple[int, DeviceRequest, int]] | object:
    """Per request in claim and request order, (claim index, request, the free devices it can
    take as a bit mask); ``_SEARCH`` when a request is not a plain ExactCount one, a selector
    raises, or two requests' sets overlap without being the same."""
    plan: list[tuple[int, DeviceRequest, int]] = []
    masks: set[int] = set()
    for k, (_, requests) in enumerate(claims):
        for r in requests:
            if r.capacity or r.all or r.alternatives or r.admin_access:
                return _SEARCH
            m = _usable(devices, r, classes, store)
            if m is None:
                return _SEARCH
            m &= ~used
            if m not in masks:
                if any(other & m for other in masks):
                    return _SEARCH
                masks.add(m)
            plan.append((k, r, m))
    return plan
