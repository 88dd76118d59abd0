"""The structured allocator, per node: ``staging/src/k8s.io/dynamic-resource-allocation/
structured/internal/incubating/allocator_incubating.go`` and ``incubating/consumable_capacity.go``
(kubernetes/kubernetes v1.36: the variant default feature gates select once DRAConsumableCapacity
is beta and on by default; for claims and devices without consumable capacity it behaves as
``stable/allocator_stable.go`` of v1.35), as the DynamicResources plugin
(``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``) calls it in Filter.

Candidate devices are the node's (:attr:`DraState.devices_by_node`: pools by driver then pool
name, slices by name, devices in slice order). Claims, then their requests, then each of a
request's ``count`` devices are allocated depth first: the first device that is not in use, that
matches the DeviceClass selectors and then the request selectors, and whose capacity the request
fits is tried, and the search backtracks when the rest cannot be satisfied. A request's next
device is searched after the one its previous device took (``allocateOne``'s start location), so
one request never takes a device twice. The first full solution wins; there is no device scoring.
A selector error fails the allocation (:class:`AllocationError`), it never only skips the device.

Constraints (``spec.devices.constraints``, ``matchAttribute`` / ``distinctAttribute``) are checked
as ``allocateDevice`` checks them (``incubating/allocator_incubating.go`` ``matchAttributeConstraint``
and ``incubating/constraint.go`` ``distinctAttributeConstraint``, kubernetes/kubernetes v1.36; the
stable variant of v1.35 and the experimental one of master do the same for these two): after the
device is found free, selectable and with capacity enough, each constraint of the claim that
applies to the request (its ``requests`` name it, or it names none) must accept the device, or the
search moves on to the next device. The device must have the attribute (``lookupAttribute``: the
fully qualified name, or the short name when its domain is the device's driver); for
``matchAttribute`` the first device of the claim the constraint covers fixes the value and every
later one must carry the same type and value; for ``distinctAttribute`` its value must differ from
every value already taken of the same type (a value of another type counts as different). Undoing
a device undoes its constraint entries, so backtracking tries every combination in device order.
A constraint of neither kind fails the allocation ("empty constraint (unsupported constraint
type?)"), and so does ``distinctAttribute`` where the allocator has no case for it
(``distinct=False``: v1.35's stable allocator, DRAConsumableCapacity off by default there).

Consumable capacity (KEP-5075): a device with ``allowMultipleAllocations`` is never in use by an
allocation that shares it; each request it serves consumes, per capacity of the device, the
amount :func:`consumption` gives, and the device takes a request while what the snapshot's shared
allocations consume (``consumed``), what this allocation has already put on it and the request's
amount stay within the capacity's value. A device without it stays exclusive, and a request's
capacity requests must fit within its values (``cmpRequestOverCapacity`` runs for every device).

Partitionable devices (KEP-4815; ``allocateDevice`` and ``checkAvailableCounters`` of
``stable/allocator_stable.go`` and ``incubating/allocator_incubating.go``, kubernetes/kubernetes
@03ab440c): a device with ``consumesCounters`` is never allocated while the gate
DRAPartitionableDevices is off (``partitionable=False``: v1.35). Otherwise it takes, per counter
set and counter of its pool, its consumption on top of what the pool's allocated devices consume
(``in_use``, the snapshot's and in-flight allocations, on any node; a shared device with a share
in ``consumed``) and what this allocation has already taken; it is refused when any counter of
the pool would then exceed its value (so a counter already over-consumed refuses every device of
the pool), and backtracking gives its consumption back. A shared device (``allowMultipleAllocations``)
takes its counters once, with its first share (upstream skips the check once some of its
capacity is in use). Consumption of a set or counter the pool does not define is not checked.
Two differences, both in what upstream leaves behind while backtracking: at @03ab440c
``allocateDevice`` does not give a device's counters back when a constraint (or a device taint)
then refuses it, nor when a shared device's share is undone; gangplan gives them back. And
upstream caches a pool's counters by pool name alone, gangplan by (driver, pool).

Device taints (KEP-5055; ``allocateDevice`` / ``taintPreventsAllocation`` of both variants,
kubernetes/kubernetes @03ab440c): a device with a NoSchedule or NoExecute taint that no toleration
of the request (or subrequest) tolerates (``ToleratesTaint``, ``resourceclaim/devicetoleration.go``)
is skipped like a device in use: :func:`matches` refuses it, so every path (search, counting,
the joint model, the brute force, the exact engine's counts and the validator) sees the same
devices. Taints with effect None never prevent allocation. allocationMode All still enumerates
tainted devices (``validateDeviceRequest`` lists every selectable one) and then fails when one is
not tolerated, without an error. Which taints count is the release's (:attr:`Device.taints`,
:meth:`gangplan.dra.model.DraState.for_version`: none in v1.35, the slices' in v1.36, the slices'
and DeviceTaintRules' from v1.37).

Admin access (KEP-5018; ``allocateDevice`` of both variants, kubernetes/kubernetes @03ab440c): a
request with ``admin_access`` skips only a device its own claim is taking (``allocatingDeviceForClaim``;
the snapshot's in-use devices and other claims' are candidates), and every device taken, with
admin access or not, is then allocating for its claim, so later requests without admin access
in the same search skip it. Selectors, taints, counters and capacity are checked as for any
request. Its results carry ``admin`` and do not take their device afterwards
(:attr:`DeviceResult.takes`, ``foreachAllocatedDevice``). Counting and the joint CP-SAT model
leave such requests to the search, and :func:`allocate_joint` keeps the order given.

Counting (not upstream's code, the same answer): where no claim has constraints, no device of the
node is shared, consumes counters or has consumed capacity recorded, no request asks for capacity, no selector
raises, and the free devices each request can take are per request one set or disjoint sets,
the search never backtracks and its first solution is each slot's first free device of its set,
so :func:`_counted` computes it from bit masks; everywhere else the search runs. Tested against
the search and the brute force (tests/test_dra_counting.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from gangplan.dra.cel import CelError, evaluate
from gangplan.dra.model import (
    CapName,
    Constraint,
    CounterPool,
    Device,
    DeviceClass,
    DeviceID,
    DeviceRequest,
    RequestPolicy,
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
    return AllocationError(f"claim {key}, constraint #{i}: empty constraint (unsupported constraint type?)")


def _must(key: str, request: DeviceRequest, d: Device) -> AllocationError:
    """``allocateDevice`` with ``must`` (allocationMode All): a constraint refusing one of the
    devices is an error, not a reason to try another."""
    return AllocationError(f"claim {key}, request {request.name}: cannot add device {'/'.join(d.id)} because a claim constraint would not be satisfied")


def all_devices(key: str, request: DeviceRequest, devices: Sequence[Device], classes: dict[str, DeviceClass]) -> list[int]:
    """``validateDeviceRequest`` for ``allocationMode: All``: the indexes of every device of the
    node's pools that matches the request (in use or not: taking it is the search's part), or an
    :class:`AllocationError` when a pool of the node is incomplete or a selector fails."""
    for d in devices:
        if d.pool_incomplete:
            raise AllocationError(f"claim {key}, request {request.name}: asks for all devices, but resource pool {d.driver}/{d.pool} is currently being updated")
    return [i for i, d in enumerate(devices) if selectable(d, request, classes)]  # (tainted ones too: the search refuses them)


def constraints_hold(constraints: Sequence[Constraint], picked: Sequence[tuple[str, Device]]) -> bool:
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
        if policy.step is not None and policy.step > 0 and (amount - (policy.min or 0)) % policy.step != 0:
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


def fits(device: Device, amounts: Mapping[CapName, int], *already: Mapping[CapName, int] | None) -> bool:
    """Whether ``amounts`` on top of ``already`` stay within every capacity value of ``device``."""
    for (domain, name), q in amounts.items():
        total = q + sum(a.get((domain, name), 0) for a in already if a)
        if total > device.capacity[domain][name]:
            return False
    return True


def counter_pools(devices: Sequence[Device]) -> dict[int, CounterPool]:
    """The counter pools of the devices that consume counters, by ``id``."""
    return {id(d.counter_pool): d.counter_pool for d in devices if d.counters and d.counter_pool is not None}


def _pools_of(devices: Sequence[Device], cache: dict | None) -> dict[int, CounterPool]:
    """:func:`counter_pools`, cached per device list in ``cache`` (none: nothing consumes counters)."""
    if cache is None:
        return counter_pools(devices)
    key = (id(devices), "pools")
    got = cache.get(key)
    if got is None:
        got = cache[key] = counter_pools(devices)
    return got


def available_counters(cp: CounterPool, in_use: Iterable[DeviceID], consumed: Consumed | None) -> dict[tuple[str, str], int]:
    """(counter set, counter) -> what is left of it once the pool's allocated devices (``in_use``:
    exclusive allocations, the snapshot's and in-flight ones; ``consumed``: shared devices with a
    share allocated) have taken theirs; may be negative. Consumption of a set or counter the pool
    does not define is ignored (``checkAvailableCounters``)."""
    have = {(cset, c): v for cset, values in cp.sets.items() for c, v in values.items()}
    for d in cp.users:
        if d.id in in_use or (consumed and d.id in consumed):
            for cset, amounts in d.counters:
                for c, v in amounts:
                    if (cset, c) in have:
                        have[(cset, c)] -= v
    return have


def counters_fit_alone(d: Device, in_use: Iterable[DeviceID], consumed: Consumed | None) -> bool:
    """Whether ``d`` alone fits its pool's counters after the allocated devices' consumption."""
    if not d.counters or d.counter_pool is None:
        return True
    if d.allow_multiple and consumed and d.id in consumed:
        return True
    have = available_counters(d.counter_pool, in_use, consumed)
    need: dict[tuple[str, str], int] = {}
    for cset, amounts in d.counters:
        for c, v in amounts:
            need[(cset, c)] = need.get((cset, c), 0) + v
    return all(v >= need.get(key, 0) for key, v in have.items())


_NO = object()
"""A device that cannot serve a request (not matching, or its capacity policy refuses it)."""


def _statuses(devices: Sequence[Device], request: DeviceRequest, classes: dict[str, DeviceClass]) -> list:
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


def allocate_results(claims: Sequence[tuple[str, Sequence[DeviceRequest]]], devices: Sequence[Device], in_use: Iterable[DeviceID] | set,
                     classes: dict[str, DeviceClass], consumed: Consumed | None = None,
                     cache: dict | None = None, constraints: Constraints | None = None,
                     distinct: bool = True, *, counting: bool = True, partitionable: bool | None = None) -> dict[str, tuple[DeviceResult, ...]] | None:
    """The allocation of every claim (claim key -> its device results, in request order), or None
    when no full allocation exists. ``counting``: answer the common case by counting
    (:func:`_counted`, the same result as the search; False forces the search, for tests). ``in_use``: devices allocated exclusively elsewhere;
    ``consumed``: capacity shared allocations elsewhere consume (KEP-5075). ``cache`` (owned by
    one :class:`DraState`, whose device lists and classes never change) keeps each (device list,
    request) pair's selector and policy outcome across calls. ``constraints``: each claim's
    matchAttribute / distinctAttribute constraints (:attr:`DraState.constraints`); ``distinct``:
    whether the allocator knows ``distinctAttribute`` (module docstring); ``partitionable``: whether
    devices consuming shared counters may be allocated (gate DRAPartitionableDevices; None: as
    ``distinct``, both gates turn on by default in v1.36, :func:`gangplan.models.version.dra_partitionable_devices`)."""
    if partitionable is None:
        partitionable = distinct
    if not isinstance(in_use, (set, frozenset)):
        in_use = set(in_use)
    if counting:
        got = _counted(claims, devices, in_use, classes, consumed, cache, constraints)
        if got is not _SEARCH:
            return got
    pools = _pools_of(devices, cache) if partitionable else {}
    avail = {id(cp): available_counters(cp, in_use, consumed) for cp in pools.values()}
    taking: dict[int, dict[tuple[str, str], int]] = {k: {} for k in avail}
    used = _local(devices, in_use)
    base = consumed or {}
    slots: list[tuple[int, DeviceRequest, int]] = []
    fixed: list[int | None] = []  # allocationMode All: the one device each of its slots must take
    label: list[str] = []  # the result's request name: the request's, or <request>/<subrequest>
    blocks: list[list[tuple[int, int]]] = []  # per request, its alternatives' slot ranges (firstAvailable: several)
    for k, (key, requests) in enumerate(claims):
        for r in requests:
            alts = r.alternatives or (r,)
            for a in r.alternatives:
                if a.device_class not in classes:  # (validateDeviceRequest, before any search)
                    raise AllocationError(f"claim {key}, request {r.name}/{a.name}: could not retrieve device class {a.device_class}")
            block = []
            for a in alts:
                lo = len(slots)
                name = f"{r.name}/{a.name}" if r.alternatives else r.name
                if a.all:
                    alls = all_devices(key, a, devices, classes)
                    n_slots = max(len(alls), 1)
                    fixed.extend(alls or [-1])  # (none: a slot nothing fills, the request fails there)
                else:
                    n_slots = a.count
                    fixed.extend([None] * a.count)
                slots.extend((k, a, j) for j in range(n_slots))
                label.extend([name] * n_slots)
                block.append((lo, len(slots)))
            blocks.append(block)
    block_of = [0] * len(slots)
    alt_end = [0] * len(slots)
    for b, block in enumerate(blocks):
        for lo, hi in block:
            for t in range(lo, hi):
                block_of[t], alt_end[t] = b, hi
    # Per slot, the constraints that apply to its request: (index into ``taken``, is it a
    # matchAttribute, every device's value of its attribute).
    slot_cons: list[tuple[tuple[int, bool, list], ...]] = [()] * len(slots)
    taken: list[list] = []
    if constraints:
        first: dict[int, int] = {}
        values: dict[CapName, list] = {}
        for k, (key, _) in enumerate(claims):
            cons = constraints.get(key, ())
            for i, c in enumerate(cons):
                if c.kind == "empty" or (c.kind == "distinct" and not distinct):
                    raise _empty(key, i)
                if c.attribute not in values:
                    values[c.attribute] = [attribute_value(d, c.attribute) for d in devices]
            if cons:
                first[k] = len(taken)
                taken.extend([] for _ in cons)
        for s, (k, _r, _) in enumerate(slots):
            if k in first:
                cons = constraints[claims[k][0]]
                slot_cons[s] = tuple((first[k] + i, c.kind == "match", values[c.attribute]) for i, c in enumerate(cons) if c.applies(label[s]))

    def admits(s: int, i: int) -> list[int] | None:
        """The constraint entries device ``i`` adds for slot ``s`` (None: a constraint refuses it)."""
        added = []
        for ci, same, vals in slot_cons[s]:
            v = vals[i]
            have = taken[ci]
            if v is _ABSENT or (have and (have[0] != v if same else v in have)):
                for cj in added:
                    taken[cj].pop()
                return None
            have.append(v)
            added.append(ci)
        return added

    def undo(added: list[int]) -> None:
        for ci in added:
            taken[ci].pop()
    store: dict = cache if cache is not None else {}
    status: list[list] = []
    errors: list[bool] = []
    for _, r, _ in slots:
        key = (id(devices), r)
        got = store.get(key)
        if got is None:
            got = _statuses(devices, r, classes)
            got = store[key] = (got, any(isinstance(q, AllocationError) for q in got))
        status.append(got[0])
        errors.append(got[1])
    left = [0] * len(slots)  # slots of the same request still to fill after this one
    for s in range(len(slots) - 2, -1, -1):
        if slots[s + 1][2] > 0:
            left[s] = left[s + 1] + 1
    chosen: list[tuple[int, int, dict[CapName, int] | None]] = []  # (slot, device index, consumed)
    allocating: dict[DeviceID, dict[CapName, int]] = {}
    mine: list[set[DeviceID]] = [set() for _ in claims]  # per claim, the exclusive devices it is taking (allocatingDeviceForClaim)
    n = len(devices)

    def take(d: Device) -> tuple | None:
        """``checkAvailableCounters``: add what ``d`` consumes to its pool's counters being
        allocated; None (and nothing added) when some counter of the pool would then exceed what
        is available (a counter already over-consumed refuses every device of the pool)."""
        cp = d.counter_pool
        if cp is None:
            return ()  # the pool defines no counter sets: nothing to check (as upstream)
        k = id(cp)
        now, have = taking[k], avail[k]
        for cset, amounts in d.counters:
            for c, v in amounts:
                now[(cset, c)] = now.get((cset, c), 0) + v
        if any(v < now.get(key, 0) for key, v in have.items()):
            give_back(d, d.counters)
            return None
        return d.counters

    def give_back(d: Device, took) -> None:
        if d.counter_pool is None:
            return
        now = taking[id(d.counter_pool)]
        for cset, amounts in took:
            for c, v in amounts:
                now[(cset, c)] -= v

    def enter(b: int) -> bool:
        """Request ``b`` onwards: its alternatives in priority order, each with everything after
        it (``allocateOne``'s loop over subrequests: the first that leads to a full solution)."""
        if b == len(blocks):
            return True
        return any(one(lo) for lo, _ in blocks[b])

    def after(s: int) -> bool:
        return one(s + 1) if s + 1 < alt_end[s] else enter(block_of[s] + 1)

    def one(s: int) -> bool:
        j = slots[s][2]
        st = status[s]
        f = fixed[s]
        if f is not None:  # allocationMode All: this device or nothing
            candidates: Iterable[int] = (f,) if f >= 0 else ()
        else:
            start = chosen[-1][1] + 1 if j > 0 else 0  # the same request: after its previous device
            rest = left[s] if not errors[s] else 0  # (an error must surface where upstream reaches it)
            candidates = range(start, n - rest)  # the request's later devices come after this one
        for i in candidates:
            q = st[i]
            if q is _NO:
                continue
            d = devices[i]
            admin = slots[s][1].admin_access
            if d.id in used if not admin else (d.id in mine[slots[s][0]] and not d.allow_multiple):
                continue  # (admin access: only a device its own claim is taking is in use)
            if isinstance(q, AllocationError):
                raise q
            if d.counters and not partitionable:
                continue  # (allocateDevice: the gate is off)
            if not d.allow_multiple:
                if q and not fits(d, q, base.get(d.id)):
                    continue
                added = admits(s, i) if slot_cons[s] else ()
                if added is None:
                    if f is not None:
                        raise _must(claims[slots[s][0]][0], slots[s][1], d)
                    continue
                took = take(d) if d.counters else ()
                if took is None:
                    if added:
                        undo(added)
                    continue
                # allocateDevice marks the device as allocating for the claim, with admin access
                # too: later requests without it skip it in this allocation (an admin-access
                # request may take a device already in use, which stays in use after undoing it).
                was = d.id in used
                used.add(d.id)
                mine[slots[s][0]].add(d.id)
                chosen.append((s, i, None))
                if after(s):
                    return True
                chosen.pop()
                mine[slots[s][0]].discard(d.id)
                if not was:
                    used.discard(d.id)
                if added:
                    undo(added)
                if took:
                    give_back(d, took)
                continue
            now = allocating.get(d.id)
            if q and not fits(d, q, base.get(d.id), now):
                continue
            added = admits(s, i) if slot_cons[s] else ()
            if added is None:
                if f is not None:
                    raise _must(claims[slots[s][0]][0], slots[s][1], d)
                continue
            # A shared device takes its counters once, with its first share (upstream skips the
            # check when some of its capacity is already in use).
            took = take(d) if d.counters and now is None and d.id not in base else ()
            if took is None:
                if added:
                    undo(added)
                continue
            allocating[d.id] = dict(q) if now is None else {k: now.get(k, 0) + q.get(k, 0) for k in now.keys() | q.keys()}
            chosen.append((s, i, q))
            if after(s):
                return True
            chosen.pop()
            if added:
                undo(added)
            if took:
                give_back(d, took)
            if now is None:
                del allocating[d.id]
            else:
                allocating[d.id] = now
        return False

    if not enter(0):
        return None
    out: dict[str, list[DeviceResult]] = {key: [] for key, _ in claims}
    for s, i, q in chosen:
        out[claims[slots[s][0]][0]].append(DeviceResult(label[s], devices[i].id, None if q is None else tuple(sorted(q.items())), slots[s][1].admin_access))
    return {k: tuple(v) for k, v in out.items()}


_SEARCH = object()
""":func:`_counted` cannot answer by counting: run the search."""


def _device_info(devices: Sequence[Device], store: dict) -> tuple[dict[DeviceID, int], frozenset[DeviceID], bool]:
    """Per device list (cached in ``store``): device id -> bit, the ids, whether any is shared
    or consumes counters (then counting never decides: the search does)."""
    key = (id(devices), "info")
    got = store.get(key)
    if got is None:
        bits = {d.id: 1 << i for i, d in enumerate(devices)}
        got = store[key] = (bits, frozenset(bits), any(d.allow_multiple or d.counters for d in devices))
    return got


def _usable(devices: Sequence[Device], request: DeviceRequest, classes: dict[str, DeviceClass], store: dict) -> int | None:
    """The bit mask of the devices that can serve ``request`` on their own (matching, capacity
    policy accepting it, its consumption within their capacity with nothing else consumed), or
    None when a selector raised on one of them (the search must meet the error where upstream
    does)."""
    key = (id(devices), "mask", request.device_class, request.selectors, request.capacity, request.tolerations)  # not the name nor the count
    got = store.get(key, _ABSENT)
    if got is _ABSENT:
        probe = DeviceRequest(name="", device_class=request.device_class, selectors=request.selectors, capacity=request.capacity,
                              tolerations=request.tolerations)
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


def usable_mask(devices: Sequence[Device], request: DeviceRequest, classes: dict[str, DeviceClass], store: dict,
                in_use: set | frozenset, consumed: Consumed | None) -> int | None:
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


def countable_mask(devices: Sequence[Device], request: DeviceRequest, classes: dict[str, DeviceClass], store: dict,
                   in_use: set | frozenset, consumed: Consumed | None) -> int | None:
    """:func:`usable_mask` where counting decides allocations from ``devices`` (none of them is
    shared, :func:`_counted`): a claim set whose requests all draw on this one mask is allocated
    exactly when the mask holds as many devices as they ask for together, and then takes its
    lowest bits. None where the search must decide."""
    if _device_info(devices, store)[2]:
        return None
    return usable_mask(devices, request, classes, store, in_use, consumed)


def _counted(claims: Sequence[tuple[str, Sequence[DeviceRequest]]], devices: Sequence[Device], in_use: set | frozenset,
             classes: dict[str, DeviceClass], consumed: Consumed | None, cache: dict | None,
             constraints: Constraints | None) -> dict[str, tuple[DeviceResult, ...]] | None | object:
    """The search's answer by counting, where that is exact, else ``_SEARCH``.

    It is exact when no claim has constraints, no device of the node is shared
    (``allowMultipleAllocations``) or has consumed capacity recorded, no request asks for
    capacity, no selector raises, and the free devices each request can take (its usable mask
    minus the devices in use) are, request by request, either the same set or disjoint sets.
    Then an allocation exists exactly when every such set holds at least the devices its requests
    ask for together (the sets do not compete), and the depth-first search never backtracks: each
    slot, in claim, request and count order, takes the first free device of its set (the next
    after its request's previous device is the first free one, as the earlier ones are taken),
    which is what is returned here. Otherwise the search runs (:func:`allocate_results`)."""
    if constraints and any(constraints.get(key) for key, _ in claims):
        return _SEARCH
    store: dict = cache if cache is not None else {}
    bits, ids, shared = _device_info(devices, store)
    if shared or (consumed and not ids.isdisjoint(consumed)):
        return _SEARCH
    used = _used_bits(bits, in_use)
    plan: list[tuple[int, DeviceRequest, int]] = []
    need: dict[int, int] = {}
    for k, (_, requests) in enumerate(claims):
        for r in requests:
            if r.capacity or r.all or r.alternatives or r.admin_access:
                return _SEARCH
            m = _usable(devices, r, classes, store)
            if m is None:
                return _SEARCH
            m &= ~used
            if m not in need:
                for other in need:
                    if other & m:
                        return _SEARCH
                need[m] = 0
            need[m] += r.count
            plan.append((k, r, m))
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


def allocate(claims: Sequence[tuple[str, Sequence[DeviceRequest]]], devices: Sequence[Device], in_use: Iterable[DeviceID] | set,
             classes: dict[str, DeviceClass], consumed: Consumed | None = None, cache: dict | None = None,
             constraints: Constraints | None = None, distinct: bool = True, partitionable: bool | None = None) -> dict[str, tuple[DeviceID, ...]] | None:
    """Devices for every claim (claim key -> device ids, in request order), or None when no
    full allocation exists (:func:`allocate_results` without the consumed capacity)."""
    got = allocate_results(claims, devices, in_use, classes, consumed, cache, constraints, distinct, partitionable=partitionable)
    if got is None:
        return None
    return {k: tuple(r.device for r in v) for k, v in got.items()}


def allocate_joint(claims: Sequence[tuple[str, Sequence[DeviceRequest]]], devices: Sequence[Device], in_use: Iterable[DeviceID] | set,
                   classes: dict[str, DeviceClass], consumed: Consumed | None = None, constraints: Constraints | None = None,
                   distinct: bool = True, cache: dict | None = None, *, counting: bool = True,
                   partitionable: bool | None = None) -> dict[str, tuple[DeviceResult, ...]] | None:
    """One allocation of all ``claims`` together, or None when none exists: first the claims one
    after another in the order given, each the first solution on what the earlier ones left (when
    every one succeeds this is exactly what the joint depth-first search in that order returns,
    its first full solution starting with the first claim's first solution); otherwise the joint
    search with the claims that take the most devices first, which finds an allocation whenever
    one exists (existence does not depend on the order) with less backtracking over small claims
    placed first on devices the large ones need. ``cache`` and ``counting``: as for
    :func:`allocate_results`; where counting decides (:func:`_counted`), the claims one after
    another are the claims together: each slot takes the first free device of its set either way,
    and when counting finds no allocation, none exists in any order. For plain ExactCount claims
    the joint allocation after a failed sequence is decided by :func:`_joint_by_model`."""
    if counting:
        got = _counted(claims, devices, in_use if isinstance(in_use, (set, frozenset)) else set(in_use), classes, consumed, cache, constraints)
        if got is not _SEARCH:
            return got
    if any(r.admin_access for _, rs in claims for r in rs):
        # Admin access (KEP-5018): an admin-access device keeps later requests of this search off
        # it, so the order is the allocation: the claims together, in the order given.
        if partitionable is None:
            partitionable = distinct
        return allocate_results(claims, devices, in_use, classes, consumed, cache, constraints, distinct, counting=counting, partitionable=partitionable)
    # (counters: the pool's devices on other nodes count too, so in_use is not restricted)
    used = set(in_use) if any(d.counters for d in devices) else _local(devices, in_use)
    taken: dict[DeviceID, dict[CapName, int]] = {d: dict(v) for d, v in (consumed or {}).items()}
    out: dict[str, tuple[DeviceResult, ...]] = {}
    for key, reqs in claims:
        got = allocate_results([(key, reqs)], devices, used, classes, taken, cache, constraints, distinct, counting=counting, partitionable=partitionable)
        if got is None:
            break
        out.update(got)
        used.update(r.device for r in got[key] if r.consumed is None)
        add_consumed(taken, got[key])
    else:
        return out
    if partitionable is None:
        partitionable = distinct
    got = _joint_by_model(claims, devices, set(in_use), classes, consumed, constraints, partitionable)
    if got is not _SEARCH:
        return got
    order = sorted(claims, key=lambda kr: -sum(r.count for r in kr[1]))
    return allocate_results(order, devices, in_use, classes, consumed, cache, constraints, distinct, counting=counting, partitionable=partitionable)


def _joint_by_model(claims: Sequence[tuple[str, Sequence[DeviceRequest]]], devices: Sequence[Device], in_use: set,
                    classes: dict[str, DeviceClass], consumed: Consumed | None, constraints: Constraints | None,
                    partitionable: bool, allowed: Mapping[str, set[DeviceID] | frozenset[DeviceID]] | None = None
                    ) -> dict[str, tuple[DeviceResult, ...]] | None | object:
    """Whether the claims have a joint allocation, as a small CP-SAT model (not upstream's code:
    the depth-first search over interchangeable devices matched by overlapping requests, or
    partitions of one GPU, is exponential when it must backtrack, and only the validator and the
    naming of an exact Result ask for a joint allocation of several pods' claims). Per (request, device it matches) a
    boolean; each request gets its count, each device at most one request, and per pool the
    counters hold what the taken devices consume. Only for plain ExactCount requests without
    constraints, capacity requests or shared devices (else ``_SEARCH``: the search decides). The
    devices of a request are returned in device order. One worker, fixed seed: deterministic.
    ``allowed``: claim key -> the devices it may take (the validator's check across nodes with
    multi-node devices: those reachable from every node of its pods); default all."""
    if constraints and any(constraints.get(key) for key, _ in claims):
        return _SEARCH
    reqs = [(key, r) for key, rs in claims for r in rs]
    if any(r.all or r.alternatives or r.capacity or r.admin_access for _, r in reqs):
        return _SEARCH
    try:
        if allowed is None:
            cand = [[i for i, d in enumerate(devices) if d.id not in in_use and (partitionable or not d.counters) and matches(d, r, classes)] for _, r in reqs]
        else:  # (only the devices each claim may take: across nodes most of them are on other nodes)
            pos = {d.id: i for i, d in enumerate(devices)}
            cand = [[i for i in sorted(pos[x] for x in allowed[key] if x in pos and x not in in_use)
                     if (partitionable or not devices[i].counters) and matches(devices[i], r, classes)] for key, r in reqs]
    except AllocationError:
        return _SEARCH  # (the search meets the error where upstream does)
    if any(devices[i].allow_multiple for c in cand for i in c):
        return _SEARCH
    from ortools.sat.python import cp_model

    # Requests with the same candidate devices are one group (their count summed): no symmetric
    # copies for the solver to tell apart (a pigeonhole over interchangeable claims is hard for it).
    groups: dict[tuple[int, ...], list[int]] = {}
    for q, c in enumerate(cand):
        groups.setdefault(tuple(c), []).append(q)
    keys = list(groups)
    need = [sum(reqs[q][1].count for q in groups[g]) for g in keys]
    if len({i for c in cand for i in c}) < sum(need):
        return None
    m = cp_model.CpModel()
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    for q, g in enumerate(keys):
        if len(g) < need[q]:
            return None
        for i in g:
            x[(q, i)] = m.new_bool_var("")
        m.add(sum(x[(q, i)] for i in g) == need[q])
    by_device: dict[int, list] = {}
    for (_q, i), v in x.items():
        by_device.setdefault(i, []).append(v)
    for vs in by_device.values():
        if len(vs) > 1:
            m.add(sum(vs) <= 1)
    pools = _pools_of(devices, None)
    for cp in pools.values():
        have = available_counters(cp, in_use, consumed)
        for key, left in sorted(have.items()):
            terms = [(v, amount) for (_q, i), v in x.items() if devices[i].counter_pool is cp
                     for cset, amounts in devices[i].counters if cset == key[0] for c, amount in amounts if c == key[1]]
            users = {i for (_q, i) in x if devices[i].counter_pool is cp and devices[i].counters}
            if left < 0 and users:
                for (_q, i), v in x.items():
                    if i in users:
                        m.add(v == 0)
            elif terms:
                m.add(sum(a * v for v, a in terms) <= left)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    solver.parameters.max_time_in_seconds = 30.0
    status = solver.solve(m)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        if status == cp_model.INFEASIBLE:
            return None
        return _SEARCH  # (undecided in time: the search decides)
    out: dict[str, list[DeviceResult]] = {key: [] for key, _ in claims}
    for q, g in enumerate(keys):
        taken = iter([i for i in g if solver.value(x[(q, i)])])  # handed out in request order
        for t in groups[g]:
            key, r = reqs[t]
            out[key].extend(DeviceResult(r.name, devices[next(taken)].id) for _ in range(r.count))
    by_claim = {key: [] for key, _ in claims}
    for key, rs in claims:  # each claim's results in its request order
        names = [r.name for r in rs]
        by_claim[key] = sorted(out[key], key=lambda res: names.index(res.request))
    return {k: tuple(v) for k, v in by_claim.items()}


def add_consumed(into: dict[DeviceID, dict[CapName, int]], results: Iterable[DeviceResult]) -> None:
    """Add the consumed capacity of shared ``results`` to ``into`` (device -> capacity -> amount)."""
    for r in results:
        if r.consumed is not None and not r.admin:  # (an admin-access share is not counted, foreachAllocatedDevice)
            per = into.setdefault(r.device, {})
            for k, v in r.consumed:
                per[k] = per.get(k, 0) + v


def brute_force_exists(claims: Sequence[tuple[str, Sequence[DeviceRequest]]], devices: Sequence[Device], in_use: Iterable[DeviceID],
                       classes: dict[str, DeviceClass], consumed: Consumed | None = None,
                       constraints: Constraints | None = None, partitionable: bool = True) -> bool:
    """Whether any allocation exists: every assignment of devices to the slots is tried (distinct
    exclusive devices; a shared device at most once per request, its consumed capacity summed;
    every claim's constraints, :func:`constraints_hold`): the reference the allocator is tested
    against (tests/test_dra.py, tests/test_dra_consumable.py, tests/test_dra_constraints.py)."""
    from itertools import permutations, product

    choices = [(k, j, r) for k, (_, requests) in enumerate(claims) for j, r in enumerate(requests) if r.alternatives]
    if choices:  # firstAvailable: any subrequest of each (existence does not depend on priority)
        for pick in product(*(r.alternatives for _, _, r in choices)):
            chosen = {(k, j): replace(a, name=f"{r.name}/{a.name}") for (k, j, r), a in zip(choices, pick, strict=True)}
            plain = [(key, tuple(chosen.get((k, j), r) for j, r in enumerate(requests))) for k, (key, requests) in enumerate(claims)]
            if brute_force_exists(plain, devices, in_use, classes, consumed, constraints, partitionable):
                return True
        return False
    if any(r.admin_access for _, requests in claims for r in requests):
        return _brute_admin(claims, devices, set(in_use), classes, constraints or {})
    used = set(in_use)
    free = [d for d in devices if d.id not in used and (partitionable or not d.counters)]
    slots = []
    pinned: list[DeviceID | None] = []  # allocationMode All: the device the slot must take
    for k, (key, requests) in enumerate(claims):
        for r in requests:
            if r.all:
                alls = [devices[i].id for i in all_devices(key, r, devices, classes)]
                if not alls or any(d not in {x.id for x in free} for d in alls):
                    return False
                slots.extend((k, r) for _ in alls)
                pinned.extend(alls)
                continue
            slots.extend((k, r) for _ in range(r.count))
            pinned.extend([None] * r.count)
    cons = constraints or {}

    def pins(picked: Sequence[Device]) -> bool:
        return all(p is None or d.id == p for d, p in zip(picked, pinned, strict=True))

    def counted(picked: Iterable[Device]) -> bool:
        """Every pool's counters hold what the distinct ``picked`` devices consume, on top of the
        allocated devices' consumption (a shared device with a share allocated takes none)."""
        per: dict[int, dict[tuple[str, str], int]] = {}
        pools: dict[int, CounterPool] = {}
        for d in {d.id: d for d in picked}.values():
            if not d.counters or d.counter_pool is None or (d.allow_multiple and consumed and d.id in consumed):
                continue
            pools[id(d.counter_pool)] = d.counter_pool
            now = per.setdefault(id(d.counter_pool), {})
            for cset, amounts in d.counters:
                for c, v in amounts:
                    now[(cset, c)] = now.get((cset, c), 0) + v
        for k, now in per.items():
            have = available_counters(pools[k], used, consumed)
            if any(v < now.get(key, 0) for key, v in have.items()):
                return False
        return True

    def constrained(picked: Sequence[Device]) -> bool:
        by_claim: dict[int, list[tuple[str, Device]]] = {}
        for d, (k, r) in zip(picked, slots, strict=True):
            by_claim.setdefault(k, []).append((r.name, d))
        return all(constraints_hold(cons.get(claims[k][0], ()), got) for k, got in by_claim.items())

    if not any(d.allow_multiple for d in free) and not any(r.capacity for _, r in slots):
        if len(slots) > len(free):
            return False
        return any(pins(p) and all(matches(d, r, classes) for d, (_, r) in zip(p, slots, strict=True)) and constrained(p) and counted(p)
                   for p in permutations(free, len(slots)))
    base = consumed or {}
    for p in product(range(len(free)), repeat=len(slots)):
        seen: set[tuple[int, str, int]] = set()
        exclusive: set[int] = set()
        total: dict[int, dict[CapName, int]] = {}
        ok = True
        for i, (k, r) in zip(p, slots, strict=True):
            d = free[i]
            q = consumption(d, r) if matches(d, r, classes) else None
            if q is None or (k, r.name, i) in seen or i in exclusive:
                ok = False
                break
            seen.add((k, r.name, i))
            if not d.allow_multiple:
                if i in total or not fits(d, q, base.get(d.id)):
                    ok = False
                    break
                exclusive.add(i)
                continue
            t = total.setdefault(i, {})
            for key, v in q.items():
                t[key] = t.get(key, 0) + v
        if ok and pins([free[i] for i in p]) and all(fits(free[i], t, base.get(free[i].id)) for i, t in total.items()) \
                and constrained([free[i] for i in p]) and counted(free[i] for i in p):
            return True
    return False


def _brute_admin(claims: Sequence[tuple[str, Sequence[DeviceRequest]]], devices: Sequence[Device], in_use: set[DeviceID],
                 classes: dict[str, DeviceClass], constraints: Constraints) -> bool:
    """:func:`brute_force_exists` with admin-access requests (KEP-5018), for exclusive devices and
    ExactCount requests: every assignment of devices to the slots (claims, requests, count in
    order) is tried, where a slot without admin access takes a device not in use and taken by no
    earlier slot, and an admin-access slot any matching device no earlier slot of its own claim
    took (``allocateDevice``: every device taken is allocating for its claim, and only admin
    access ignores what other claims and the snapshot hold)."""
    from itertools import product

    slots = []
    for k, (_, requests) in enumerate(claims):
        for r in requests:
            if r.all or r.capacity or r.alternatives:
                raise NotImplementedError("brute force with admin access: ExactCount requests only")
            slots.extend((k, r) for _ in range(r.count))
    if any(d.allow_multiple or d.counters for d in devices):
        raise NotImplementedError("brute force with admin access: exclusive devices without counters only")
    for p in product(range(len(devices)), repeat=len(slots)):
        ok = True
        for s, (i, (k, r)) in enumerate(zip(p, slots, strict=True)):
            d = devices[i]
            earlier = [(kt, devices[j].id) for j, (kt, _) in zip(p[:s], slots[:s], strict=True)]
            if not matches(d, r, classes):
                ok = False
            elif r.admin_access:
                ok = all(did != d.id for kt, did in earlier if kt == k)
            else:
                ok = d.id not in in_use and all(did != d.id for _, did in earlier)
            if not ok:
                break
        if not ok:
            continue
        by_claim: dict[int, list[tuple[str, Device]]] = {}
        for i, (k, r) in zip(p, slots, strict=True):
            by_claim.setdefault(k, []).append((r.name, devices[i]))
        if all(constraints_hold(constraints.get(claims[k][0], ()), got) for k, got in by_claim.items()):
            return True
    return False
