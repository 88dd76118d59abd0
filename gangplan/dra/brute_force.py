"""The reference the structured allocator is tested against (not upstream's code): whether any
allocation exists, by trying every assignment of devices to the slots
(:func:`brute_force_exists`; tests/test_dra.py, tests/test_dra_consumable.py,
tests/test_dra_constraints.py and the other DRA tests)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from itertools import permutations, product

from gangplan.dra.consumable import consumption, fits
from gangplan.dra.matching import Constraints, Consumed, all_devices, constraints_hold, matches
from gangplan.dra.model import CapName, CounterPool, Device, DeviceClass, DeviceID, DeviceRequest
from gangplan.dra.shared_counters import available_counters


def brute_force_exists(
    claims: Sequence[tuple[str, Sequence[DeviceRequest]]],
    devices: Sequence[Device],
    in_use: Iterable[DeviceID],
    classes: dict[str, DeviceClass],
    consumed: Consumed | None = None,
    constraints: Constraints | None = None,
    partitionable: bool = True,
) -> bool:
    """Whether any allocation exists: every assignment of devices to the slots is tried (distinct
    exclusive devices; a shared device at most once per request, its consumed capacity summed;
    every claim's constraints, :func:`constraints_hold`): the reference the allocator is tested
    against (tests/test_dra.py, tests/test_dra_consumable.py, tests/test_dra_constraints.py)."""
    choices = [
        (k, j, r)
        for k, (_, requests) in enumerate(claims)
        for j, r in enumerate(requests)
        if r.alternatives
    ]
    if choices:  # firstAvailable: any subrequest of each (existence does not depend on priority)
        return any(
            brute_force_exists(
                plain, devices, in_use, classes, consumed, constraints, partitionable
            )
            for plain in _subrequest_choices(claims, choices)
        )
    if any(r.admin_access for _, requests in claims for r in requests):
        return _brute_admin(claims, devices, set(in_use), classes, constraints or {})
    brute = _Brute(
        claims, devices, set(in_use), classes, consumed, constraints or {}, partitionable
    )
    if brute.slots is None:
        return False
    if not any(d.allow_multiple for d in brute.free) and not any(
        r.capacity for _, r in brute.slots
    ):
        return brute.exclusive_exists()
    return brute.shared_exists()


def _subrequest_choices(
    claims: Sequence[tuple[str, Sequence[DeviceRequest]]],
    choices: list[tuple[int, int, DeviceRequest]],
):
    """The claims with each firstAvailable request (``choices``: claim index, request index,
    request) replaced by one of its subrequests (named ``<request>/<subrequest>``), every
    combination in turn."""
    for pick in product(*(r.alternatives for _, _, r in choices)):
        chosen = {
            (k, j): replace(a, name=f"{r.name}/{a.name}")
            for (k, j, r), a in zip(choices, pick, strict=True)
        }
        yield [
            (key, tuple(chosen.get((k, j), r) for j, r in enumerate(requests)))
            for k, (key, requests) in enumerate(claims)
        ]


class _Brute:
    """The slots of plain (no firstAvailable, no admin access) claims and the free devices, with
    the checks every assignment of devices to the slots must pass."""

    def __init__(
        self,
        claims: Sequence[tuple[str, Sequence[DeviceRequest]]],
        devices: Sequence[Device],
        used: set[DeviceID],
        classes: dict[str, DeviceClass],
        consumed: Consumed | None,
        cons: Constraints,
        partitionable: bool,
    ) -> None:
        self.claims, self.classes, self.used, self.consumed, self.cons = (
            claims,
            classes,
            used,
            consumed,
            cons,
        )
        self.free = [d for d in devices if d.id not in used and (partitionable or not d.counters)]
        self.slots: list[tuple[int, DeviceRequest]] | None = []
        self.pinned: list[DeviceID | None] = []  # allocationMode All: the device the slot must take
        for k, (key, requests) in enumerate(claims):
            for r in requests:
                if r.all:
                    alls = [devices[i].id for i in all_devices(key, r, devices, classes)]
                    if not alls or any(d not in {x.id for x in self.free} for d in alls):
                        self.slots = None
                        return
                    self.slots.extend((k, r) for _ in alls)
                    self.pinned.extend(alls)
                    continue
                self.slots.extend((k, r) for _ in range(r.count))
                self.pinned.extend([None] * r.count)

    def pins(self, picked: Sequence[Device]) -> bool:
        return all(p is None or d.id == p for d, p in zip(picked, self.pinned, strict=True))

    def counted(self, picked: Iterable[Device]) -> bool:
        """Every pool's counters hold what the distinct ``picked`` devices consume, on top of the
        allocated devices' consumption (a shared device with a share allocated takes none)."""
        consumed = self.consumed
        per: dict[int, dict[tuple[str, str], int]] = {}
        pools: dict[int, CounterPool] = {}
        for d in {d.id: d for d in picked}.values():
            if (
                not d.counters
                or d.counter_pool is None
                or (d.allow_multiple and consumed and d.id in consumed)
            ):
                continue
            pools[id(d.counter_pool)] = d.counter_pool
            now = per.setdefault(id(d.counter_pool), {})
            for cset, amounts in d.counters:
                for c, v in amounts:
                    now[(cset, c)] = now.get((cset, c), 0) + v
        for k, now in per.items():
            have = available_counters(pools[k], self.used, consumed)
            if any(v < now.get(key, 0) for key, v in have.items()):
                return False
        return True

    def constrained(self, picked: Sequence[Device]) -> bool:
        by_claim: dict[int, list[tuple[str, Device]]] = {}
        for d, (k, r) in zip(picked, self.slots, strict=True):
            by_claim.setdefault(k, []).append((r.name, d))
        return all(
            constraints_hold(self.cons.get(self.claims[k][0], ()), got)
            for k, got in by_claim.items()
        )

    def exclusive_exists(self) -> bool:
        """Exclusive devices only, no capacity requests: every ordered choice of distinct free
        devices for the slots."""
        if len(self.slots) > len(self.free):
            return False
        return any(
            self.pins(p)
            and all(matches(d, r, self.classes) for d, (_, r) in zip(p, self.slots, strict=True))
            and self.constrained(p)
            and self.counted(p)
            for p in permutations(self.free, len(self.slots))
        )

    def shared_exists(self) -> bool:
        """Shared devices or capacity requests: every choice of free devices for the slots, a
        shared device taken at most once per request with its consumption summed."""
        base = self.consumed or {}
        for p in product(range(len(self.free)), repeat=len(self.slots)):
            total = self._shares(p, base)
            if (
                total is not None
                and self.pins([self.free[i] for i in p])
                and all(fits(self.free[i], t, base.get(self.free[i].id)) for i, t in total.items())
                and self.constrained([self.free[i] for i in p])
                and self.counted(self.free[i] for i in p)
            ):
                return True
        return False

    def _shares(self, p: tuple[int, ...], base: Consumed) -> dict[int, dict[CapName, int]] | None:
        """What assignment ``p`` consumes of each shared device it takes, or None when a device
        cannot serve its slot, serves one request twice, or an exclusive one is taken twice or
        lacks the capacity."""
        seen: set[tuple[int, str, int]] = set()
        exclusive: set[int] = set()
        total: dict[int, dict[CapName, int]] = {}
        for i, (k, r) in zip(p, self.slots, strict=True):
            d = self.free[i]
            q = consumption(d, r) if matches(d, r, self.classes) else None
            if q is None or (k, r.name, i) in seen or i in exclusive:
                return None
            seen.add((k, r.name, i))
            if not d.allow_multiple:
                if i in total or not fits(d, q, base.get(d.id)):
                    return None
                exclusive.add(i)
                continue
            t = total.setdefault(i, {})
            for key, v in q.items():
                t[key] = t.get(key, 0) + v
        return total


def _brute_admin(
    claims: Sequence[tuple[str, Sequence[DeviceRequest]]],
    devices: Sequence[Device],
    in_use: set[DeviceID],
    classes: dict[str, DeviceClass],
    constraints: Constraints,
) -> bool:
    """:func:`brute_force_exists` with admin-access requests (KEP-5018), for exclusive devices and
    ExactCount requests: every assignment of devices to the slots (claims, requests, count in
    order) is tried, where a slot without admin access takes a device not in use and taken by no
    earlier slot, and an admin-access slot any matching device no earlier slot of its own claim
    took (``allocateDevice``: every device taken is allocating for its claim, and only admin
    access ignores what other claims and the snapshot hold)."""
    slots = []
    for k, (_, requests) in enumerate(claims):
        for r in requests:
            if r.all or r.capacity or r.alternatives:
                raise NotImplementedError("brute force with admin access: ExactCount requests only")
            slots.extend((k, r) for _ in range(r.count))
    if any(d.allow_multiple or d.counters for d in devices):
        raise NotImplementedError(
            "brute force with admin access: exclusive devices without counters only"
        )
    for p in product(range(len(devices)), repeat=len(slots)):
        if not all(
            _admin_slot_ok(p, s, slots, devices, in_use, classes) for s in range(len(slots))
        ):
            continue
        by_claim: dict[int, list[tuple[str, Device]]] = {}
        for i, (k, r) in zip(p, slots, strict=True):
            by_claim.setdefault(k, []).append((r.name, devices[i]))
        if all(
            constraints_hold(constraints.get(claims[k][0], ()), got) for k, got in by_claim.items()
        ):
            return True
    return False


def _admin_slot_ok(
    p: tuple[int, ...],
    s: int,
    slots: list[tuple[int, DeviceRequest]],
    devices: Sequence[Device],
    in_use: set[DeviceID],
    classes: dict[str, DeviceClass],
) -> bool:
    """Whether slot ``s`` may take device ``p[s]`` after the earlier slots took theirs."""
    i, (k, r) = p[s], slots[s]
    d = devices[i]
    earlier = [(kt, devices[j].id) for j, (kt, _) in zip(p[:s], slots[:s], strict=True)]
    if not matches(d, r, classes):
        return False
    if r.admin_access:
        return all(did != d.id for kt, did in earlier if kt == k)
    return d.id not in in_use and all(did != d.id for _, did in earlier)
