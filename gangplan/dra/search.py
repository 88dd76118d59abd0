"""The structured allocator's depth-first search (``allocateOne`` / ``allocateDevice`` of
``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/incubating/
allocator_incubating.go``, kubernetes/kubernetes v1.36): claims, then their requests (a
firstAvailable request's subrequests in priority order), then each of a request's devices, the
first device that can take the slot tried first, backtracking when the rest cannot be satisfied.
What it checks per device (in use, selectors, taints, capacity, constraints, shared counters,
admin access) is described in :mod:`gangplan.dra.allocator`; :func:`search` is its entry point."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from gangplan.dra.consumable import consumption, fits
from gangplan.dra.matching import (
    _ABSENT,
    AllocationError,
    Constraints,
    Consumed,
    DeviceResult,
    _empty,
    _must,
    all_devices,
    attribute_value,
    matches,
)
from gangplan.dra.model import CapName, Device, DeviceClass, DeviceID, DeviceRequest
from gangplan.dra.shared_counters import _pools_of, available_counters

_NO = object()
"""A device that cannot serve a request (not matching, or its capacity policy refuses it)."""


def _statuses(
    devices: Sequence[Device], request: DeviceRequest, classes: dict[str, DeviceClass]
) -> list:
    """Per device: what ``request`` consumes of it, ``_NO``, or the :class:`AllocationError` its
    selectors raise (raised only when the search reaches that device, as ``isSelectable`` is)."""
    out: list = []
    for d in devices:
        try:
            ok = matches(d, request, classes)
        except AllocationError as e:
            out.append(e)
            continue
        q = consumption(d, request) if ok else None
        out.append(_NO if q is None else q)
    return out


def _local(devices: Sequence[Device], in_use: Iterable[DeviceID]) -> set[DeviceID]:
    """A mutable copy of ``in_use``, restricted to ``devices`` when that is smaller (the search
    only asks about those)."""
    if isinstance(in_use, (set, frozenset)) and len(in_use) > len(devices):
        return {d.id for d in devices if d.id in in_use}
    return set(in_use)


class _Search:
    """One search over ``claims`` on one node's ``devices``: the slots to fill (one per device a
    request asks for; per device of an allocationMode All request, the device it must take), what
    each device is to each slot's request (:func:`_statuses`, cached per device list and
    request), and what the devices taken so far hold (in use, shared capacity allocated, shared
    counters taken, constraint values taken)."""

    def __init__(
        self,
        claims: Sequence[tuple[str, Sequence[DeviceRequest]]],
        devices: Sequence[Device],
        in_use: set | frozenset,
        classes: dict[str, DeviceClass],
        consumed: Consumed | None,
        cache: dict | None,
        constraints: Constraints | None,
        distinct: bool,
        partitionable: bool,
    ) -> None:
        self.claims, self.devices, self.partitionable = claims, devices, partitionable
        pools = _pools_of(devices, cache) if partitionable else {}
        self.avail = {id(cp): available_counters(cp, in_use, consumed) for cp in pools.values()}
        self.taking: dict[int, dict[tuple[str, str], int]] = {k: {} for k in self.avail}
        self.used = _local(devices, in_use)
        self.base = consumed or {}
        self._lay_out(classes)
        self._constrain(constraints, distinct)
        self._read_statuses(classes, cache)
        self.chosen: list[
            tuple[int, int, dict[CapName, int] | None]
        ] = []  # (slot, device index, consumed)
        self.allocating: dict[DeviceID, dict[CapName, int]] = {}
        self.mine: list[set[DeviceID]] = [
            set() for _ in claims
        ]  # per claim, the exclusive devices it is taking (allocatingDeviceForClaim)
        self.n = len(devices)

    def _lay_out(self, classes: dict[str, DeviceClass]) -> None:
        """The slots, in claim, request and count order: per slot (claim index, request or
        subrequest, index within it), the device it must take (allocationMode All) and its
        result's request name; per request, its alternatives' slot ranges (firstAvailable: one per
        subrequest, else one)."""
        self.slots: list[tuple[int, DeviceRequest, int]] = []
        self.fixed: list[
            int | None
        ] = []  # allocationMode All: the one device each of its slots must take
        self.label: list[
            str
        ] = []  # the result's request name: the request's, or <request>/<subrequest>
        self.blocks: list[list[tuple[int, int]]] = []
        for k, (key, requests) in enumerate(self.claims):
            for r in requests:
                for a in r.alternatives:
                    if a.device_class not in classes:  # (validateDeviceRequest, before any search)
                        raise AllocationError(
                            f"claim {key}, request {r.name}/{a.name}: could not retrieve device class {a.device_class}"
                        )
                self.blocks.append(
                    [self._add_slots(k, key, r, a, classes) for a in r.alternatives or (r,)]
                )
        self.block_of = [0] * len(self.slots)
        self.alt_end = [0] * len(self.slots)
        for b, block in enumerate(self.blocks):
            for lo, hi in block:
                for t in range(lo, hi):
                    self.block_of[t], self.alt_end[t] = b, hi
        self.left = [0] * len(self.slots)  # slots of the same request still to fill after this one
        for s in range(len(self.slots) - 2, -1, -1):
            if self.slots[s + 1][2] > 0:
                self.left[s] = self.left[s + 1] + 1

    def _add_slots(
        self, k: int, key: str, r: DeviceRequest, a: DeviceRequest, classes: dict[str, DeviceClass]
    ) -> tuple[int, int]:
        """The slots of request ``r`` of claim ``k`` (``a``: ``r`` itself or one of its
        subrequests), appended; their range."""
        lo = len(self.slots)
        name = f"{r.name}/{a.name}" if r.alternatives else r.name
        if a.all:
            alls = all_devices(key, a, self.devices, classes)
            n_slots = max(len(alls), 1)
            self.fixed.extend(alls or [-1])  # (none: a slot nothing fills, the request fails there)
        else:
            n_slots = a.count
            self.fixed.extend([None] * a.count)
        self.slots.extend((k, a, j) for j in range(n_slots))
        self.label.extend([name] * n_slots)
        return lo, len(self.slots)

    def _constrain(self, constraints: Constraints | None, distinct: bool) -> None:
        """Per slot, the constraints that apply to its request: (index into ``taken``, the values
        taken for that constraint so far; is it a matchAttribute, every device's value of its
        attribute). A constraint of neither kind, or a distinctAttribute the release's allocator
        does not know, fails the allocation."""
        self.slot_cons: list[tuple[tuple[int, bool, list], ...]] = [()] * len(self.slots)
        self.taken: list[list] = []
        if not constraints:
            return
        first: dict[int, int] = {}
        values: dict[CapName, list] = {}
        for k, (key, _) in enumerate(self.claims):
            cons = constraints.get(key, ())
            for i, c in enumerate(cons):
                if c.kind == "empty" or (c.kind == "distinct" and not distinct):
                    raise _empty(key, i)
                if c.attribute not in values:
                    values[c.attribute] = [attribute_value(d, c.attribute) for d in self.devices]
            if cons:
                first[k] = len(self.taken)
                self.taken.extend([] for _ in cons)
        for s, (k, _r, _) in enumerate(self.slots):
            if k in first:
                cons = constraints[self.claims[k][0]]
                self.slot_cons[s] = tuple(
                    (first[k] + i, c.kind == "match", values[c.attribute])
                    for i, c in enumerate(cons)
                    if c.applies(self.label[s])
                )

    def _read_statuses(self, classes: dict[str, DeviceClass], cache: dict | None) -> None:
        """Per slot, what each device is to its request (:func:`_statuses`) and whether any
        selector raised; kept in ``cache`` per (device list, request)."""
        store: dict = cache if cache is not None else {}
        self.status: list[list] = []
        self.errors: list[bool] = []
        for _, r, _ in self.slots:
            key = (id(self.devices), r)
            got = store.get(key)
            if got is None:
                got = _statuses(self.devices, r, classes)
                got = store[key] = (got, any(isinstance(q, AllocationError) for q in got))
            self.status.append(got[0])
            self.errors.append(got[1])

    def _admit(self, s: int, i: int, d: Device) -> list[int] | tuple | None:
        """The constraint entries device ``i`` adds for slot ``s`` (``matchAttributeConstraint`` /
        ``distinctAttributeConstraint``.add), None when a constraint refuses it; for a slot of an
        allocationMode All request a refusal is an error (``allocateDevice`` with ``must``)."""
        if not self.slot_cons[s]:
            return ()
        added = []
        for ci, same, vals in self.slot_cons[s]:
            v = vals[i]
            have = self.taken[ci]
            if v is _ABSENT or (have and (have[0] != v if same else v in have)):
                self._undo(added)
                if self.fixed[s] is not None:
                    raise _must(self.claims[self.slots[s][0]][0], self.slots[s][1], d)
                return None
            have.append(v)
            added.append(ci)
        return added

    def _undo(self, added: Iterable[int]) -> None:
        """``.remove`` of the constraints: the entries a device added."""
        for ci in added:
            self.taken[ci].pop()

    def _take(self, d: Device) -> tuple | None:
        """``checkAvailableCounters``: add what ``d`` consumes to its pool's counters being
        allocated; None (and nothing added) when some counter of the pool would then exceed what
        is available (a counter already over-consumed refuses every device of the pool)."""
        cp = d.counter_pool
        if cp is None:
            return ()  # the pool defines no counter sets: nothing to check (as upstream)
        k = id(cp)
        now, have = self.taking[k], self.avail[k]
        for cset, amounts in d.counters:
            for c, v in amounts:
                now[(cset, c)] = now.get((cset, c), 0) + v
        if any(v < now.get(key, 0) for key, v in have.items()):
            self._give_back(d, d.counters)
            return None
        return d.counters

    def _give_back(self, d: Device, took) -> None:
        if d.counter_pool is None:
            return
        now = self.taking[id(d.counter_pool)]
        for cset, amounts in took:
            for c, v in amounts:
                now[(cset, c)] -= v

    def enter(self, b: int) -> bool:
        """Request ``b`` onwards: its alternatives in priority order, each with everything after
        it (``allocateOne``'s loop over subrequests: the first that leads to a full solution)."""
        if b == len(self.blocks):
            return True
        return any(self.one(lo) for lo, _ in self.blocks[b])

    def after(self, s: int) -> bool:
        return self.one(s + 1) if s + 1 < self.alt_end[s] else self.enter(self.block_of[s] + 1)

    def _candidates(self, s: int) -> Iterable[int]:
        """The device indexes slot ``s`` may take, in order: allocationMode All, its device or
        nothing; else those after its request's previous device (so one request never takes a
        device twice), leaving room for the request's later slots."""
        f = self.fixed[s]
        if f is not None:
            return (f,) if f >= 0 else ()
        start = (
            self.chosen[-1][1] + 1 if self.slots[s][2] > 0 else 0
        )  # the same request: after its previous device
        rest = (
            self.left[s] if not self.errors[s] else 0
        )  # (an error must surface where upstream reaches it)
        return range(start, self.n - rest)  # the request's later devices come after this one

    def one(self, s: int) -> bool:
        """Slot ``s`` onwards: each candidate device that is free (admin access: only a device its
        own claim is taking is in use), selectable (a selector error fails the allocation here),
        allowed by the partitionable-devices gate and accepted by :meth:`_exclusive` or
        :meth:`_shared`, with everything after it; undone when the rest fails."""
        k, r = self.slots[s][0], self.slots[s][1]
        st, used, mine, admin = self.status[s], self.used, self.mine[k], r.admin_access
        for i in self._candidates(s):
            q = st[i]
            if q is _NO:
                continue
            d = self.devices[i]
            if d.id in used if not admin else (d.id in mine and not d.allow_multiple):
                continue  # (admin access: only a device its own claim is taking is in use)
            if isinstance(q, AllocationError):
                raise q
            if d.counters and not self.partitionable:
                continue  # (allocateDevice: the gate is off)
            deallocate = (
                self._exclusive(s, i, d, q) if not d.allow_multiple else self._shared(s, i, d, q)
            )
            if deallocate is None:
                continue
            if self.after(s):
                return True
            deallocate()
        return False

    def _exclusive(
        self, s: int, i: int, d: Device, q: dict[CapName, int]
    ) -> Callable[[], None] | None:
        """``allocateDevice`` for a device without ``allowMultipleAllocations``: its capacity fits
        the request, the constraints accept it and its shared counters fit; it is then allocating
        for the claim, with admin access too (later requests without it skip it in this
        allocation; an admin-access request may take a device already in use, which stays in use
        after undoing it). The function that undoes it, or None when refused."""
        if q and not fits(d, q, self.base.get(d.id)):
            return None
        added = self._admit(s, i, d)
        if added is None:
            return None
        took = self._take(d) if d.counters else ()
        if took is None:
            self._undo(added)
            return None
        mine = self.mine[self.slots[s][0]]
        was = d.id in self.used
        self.used.add(d.id)
        mine.add(d.id)
        self.chosen.append((s, i, None))

        def deallocate() -> None:
            self.chosen.pop()
            mine.discard(d.id)
            if not was:
                self.used.discard(d.id)
            self._undo(added)
            if took:
                self._give_back(d, took)

        return deallocate

    def _shared(
        self, s: int, i: int, d: Device, q: dict[CapName, int]
    ) -> Callable[[], None] | None:
        """``allocateDevice`` for a device with ``allowMultipleAllocations``: the request's amount
        on top of what the snapshot and this allocation consume of it fits each capacity, the
        constraints accept it, and it takes its shared counters once, with its first share
        (upstream skips the check when some of its capacity is already in use). The function that
        undoes it, or None when refused."""
        now = self.allocating.get(d.id)
        if q and not fits(d, q, self.base.get(d.id), now):
            return None
        added = self._admit(s, i, d)
        if added is None:
            return None
        took = self._take(d) if d.counters and now is None and d.id not in self.base else ()
        if took is None:
            self._undo(added)
            return None
        self.allocating[d.id] = (
            dict(q)
            if now is None
            else {k: now.get(k, 0) + q.get(k, 0) for k in now.keys() | q.keys()}
        )
        self.chosen.append((s, i, q))

        def deallocate() -> None:
            self.chosen.pop()
            self._undo(added)
            if took:
                self._give_back(d, took)
            if now is None:
                del self.allocating[d.id]
            else:
                self.allocating[d.id] = now

        return deallocate

    def results(self) -> dict[str, tuple[DeviceResult, ...]]:
        """The devices chosen, per claim in slot order."""
        out: dict[str, list[DeviceResult]] = {key: [] for key, _ in self.claims}
        for s, i, q in self.chosen:
            k, r = self.slots[s][0], self.slots[s][1]
            out[self.claims[k][0]].append(
                DeviceResult(
                    self.label[s],
                    self.devices[i].id,
                    None if q is None else tuple(sorted(q.items())),
                    r.admin_access,
                )
            )
        return {k: tuple(v) for k, v in out.items()}


def search(
    claims: Sequence[tuple[str, Sequence[DeviceRequest]]],
    devices: Sequence[Device],
    in_use: set | frozenset,
    classes: dict[str, DeviceClass],
    consumed: Consumed | None,
    cache: dict | None,
    constraints: Constraints | None,
    distinct: bool,
    partitionable: bool,
) -> dict[str, tuple[DeviceResult, ...]] | None:
    """The first full allocation of every claim in depth-first order (claim key -> its device
    results, in request order), or None when none exists; the arguments as for
    :func:`gangplan.dra.allocator.allocate_results`, ``partitionable`` decided."""
    run = _Search(
        claims, devices, in_use, classes, consumed, cache, constraints, distinct, partitionable
    )
    if not run.enter(0):
        return None
    return run.results()
