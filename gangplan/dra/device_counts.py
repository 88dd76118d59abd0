"""Per node, how many devices can serve a request alone, for the rows of a DRA capacity view
(:mod:`gangplan.dra.capacity`): free, matching (class and request selectors, taints tolerated),
their capacity enough and their shared counters enough after the allocated devices'; for
admin-access requests (KEP-5018) in use or not; for allocationMode All, all matching devices and
the free ones; for shared devices (KEP-5075), what is left of each capacity
(:class:`_Shareable`)."""

from __future__ import annotations

from gangplan.dra.allocator import allocate_results
from gangplan.dra.capacity_rows import _BIG
from gangplan.dra.consumable import consumption, fits
from gangplan.dra.counting import usable_mask
from gangplan.dra.matching import AllocationError, matches, selectable
from gangplan.dra.model import CapName, Device, DeviceRequest, DraState, probe
from gangplan.dra.shared_counters import counters_fit_alone
from gangplan.predicates.devices import share_fits, shares_held


def _fits_alone(dra: DraState, node, key: str, distinct: bool = True) -> bool:
    """Whether ``node`` can allocate claim ``key`` from its free devices, alone."""
    try:
        return (
            allocate_results(
                [(key, dra.claims[key].requests)],
                dra.devices_by_node.get(node.name, ()),
                dra.in_use,
                dra.classes,
                dra.consumed,
                dra.alloc_cache,
                dra.constraints,
                distinct,
            )
            is not None
        )
    except AllocationError:
        return False


def _serves(
    dra: DraState, d: Device, request: DeviceRequest, partitionable: bool = True
) -> dict[CapName, int] | None:
    """What ``request`` consumes of ``d`` when ``d`` can serve it alone (free, matching, its
    capacity left enough, its shared counters enough after the allocated devices'), else None."""
    if d.id in dra.in_use or not matches(d, request, dra.classes):
        return None
    if d.counters and (not partitionable or not counters_fit_alone(d, dra.in_use, dra.consumed)):
        return None
    q = consumption(d, request)
    return q if q is not None and fits(d, q, dra.consumed.get(d.id)) else None


def _count(dra: DraState, node, request: DeviceRequest, partitionable: bool = True) -> int:
    """How many of ``node``'s devices can serve ``request`` alone (:func:`_serves`). From the
    allocator's cached mask of the devices that can (:func:`gangplan.dra.allocator.usable_mask`)
    when none of them has consumed capacity recorded; else device by device."""
    devices = dra.devices_by_node.get(node.name, ())
    got = usable_mask(devices, request, dra.classes, dra.alloc_cache, dra.in_use, dra.consumed)
    if got is not None:
        return got.bit_count()
    one = DeviceRequest(
        name=request.name,
        device_class=request.device_class,
        selectors=request.selectors,
        count=1,
        capacity=request.capacity,
        tolerations=request.tolerations,
    )
    n = 0
    for d in dra.devices_by_node.get(node.name, ()):
        try:
            if _serves(dra, d, one, partitionable) is not None:
                n += 1
        except AllocationError:
            # A selector that fails on a device fails the allocation when the search reaches it:
            # only the devices before it count (the first free ones are taken first).
            break
    return n


def _admin_count(dra: DraState, node, request: DeviceRequest, partitionable: bool = True) -> int:
    """KEP-5018: how many of ``node``'s devices an admin-access ``request`` could take alone: in
    use or not, matching (class and request selectors, taints tolerated), its capacity request
    within what the snapshot's shares leave, and a device consuming counters only while the
    release allocates such devices (``allocateDevice`` checks counters with admin access too;
    :func:`counters_fit_alone` as for any device)."""
    n = 0
    try:
        for d in dra.devices_by_node.get(node.name, ()):
            if not matches(d, request, dra.classes):
                continue
            if d.counters and (
                not partitionable or not counters_fit_alone(d, dra.in_use, dra.consumed)
            ):
                continue
            q = consumption(d, request)
            if q is not None and fits(d, q, dra.consumed.get(d.id)):
                n += 1
    except AllocationError:
        return 0
    return n


def _left(dra: DraState, d: Device) -> dict[CapName, int]:
    """What is left of each capacity of ``d`` after the snapshot's shared allocations."""
    used = dra.consumed.get(d.id, {})
    return {
        (dom, n): v - used.get((dom, n), 0)
        for dom, caps in d.capacity.items()
        for n, v in caps.items()
    }


class _Shareable:
    """The consumable-capacity rows of one (DeviceClass, request selectors) pair (module docstring)."""

    def __init__(self, dra: DraState, cls: str, selectors: tuple) -> None:
        self.dra, self.probe = dra, probe(cls, selectors)
        self.amounts: dict[CapName, set[int]] = {}
        self._devices: dict[str, list[Device]] = {}
        self._demand: dict[tuple, dict[CapName, int]] = {}

    def devices(self, node_name: str) -> list[Device]:
        got = self._devices.get(node_name)
        if got is None:
            try:
                got = [
                    d
                    for d in self.dra.devices_by_node.get(node_name, ())
                    if d.id not in self.dra.in_use and matches(d, self.probe, self.dra.classes)
                ]
            except AllocationError:
                got = []
            self._devices[node_name] = got
        return got

    def demand(self, r: DeviceRequest) -> dict[CapName, int]:
        """The least ``r`` consumes per capacity name on any matching device of the cluster (0
        of a name some candidate device lacks)."""
        got = self._demand.get(r.capacity)
        if got is not None:
            return got
        amounts = [
            q
            for n in self.dra.devices_by_node
            for d in self.devices(n)
            if (q := consumption(d, r)) is not None
        ]
        names = {k for q in amounts for k in q}
        got = {k: min(q.get(k, 0) for q in amounts) for k in sorted(names)}
        for k, v in got.items():
            self.amounts.setdefault(k, set())
            if v > 0:
                self.amounts[k].add(v)
        self._demand[r.capacity] = got
        return got

    @staticmethod
    def names_of(d: Device) -> list[CapName]:
        return [(dom, n) for dom, caps in d.capacity.items() for n in caps]

    def supply(self, node_name: str, name: CapName, at_least: int | None) -> int:
        """Sum of what is left of ``name`` (``at_least`` None), or how many consumers of at least
        ``at_least`` fit, over the node's matching devices."""
        total = 0
        for d in self.devices(node_name):
            left = _left(self.dra, d).get(name)
            if left is None:
                if at_least is None:
                    continue
                total += _BIG if d.allow_multiple else 1
                continue
            if not d.allow_multiple:
                total += left if at_least is None else int(share_fits(left, at_least))
            else:
                total += max(left, 0) if at_least is None else shares_held(left, at_least)
        return total


def _mask(dra: DraState, node, request: DeviceRequest, partitionable: bool = True) -> int:
    """Bit ``i``: ``node``'s ``i``-th device can serve ``request`` alone (popcount == :func:`_count`)."""
    devices = dra.devices_by_node.get(node.name, ())
    got = usable_mask(devices, request, dra.classes, dra.alloc_cache, dra.in_use, dra.consumed)
    if got is not None:
        return got
    one = DeviceRequest(
        name=request.name,
        device_class=request.device_class,
        selectors=request.selectors,
        count=1,
        capacity=request.capacity,
        tolerations=request.tolerations,
    )
    m = 0
    try:
        for i, d in enumerate(devices):
            if _serves(dra, d, one, partitionable) is not None:
                m |= 1 << i
    except AllocationError:
        return 0
    return m


def _all_count(
    dra: DraState, node, request: DeviceRequest, partitionable: bool = True
) -> tuple[int, int]:
    """(devices of ``node`` matching ``request``, of which free and able to serve it alone; a
    tainted device it does not tolerate counts in the first only, as allocationMode All lists
    every selectable device and then fails on it)."""
    devices = dra.devices_by_node.get(node.name, ())
    try:
        total = [d for d in devices if selectable(d, request, dra.classes)]
        return len(total), sum(
            1 for d in total if _serves(dra, d, request, partitionable) is not None
        )
    except AllocationError:
        return 0, 0
