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

Modules: :mod:`gangplan.dra.matching` (selectors, taints, attributes and constraints, the result
types), :mod:`gangplan.dra.consumable` (KEP-5075 amounts), :mod:`gangplan.dra.shared_counters`
(KEP-4815 counters), :mod:`gangplan.dra.search` (the depth-first search),
:mod:`gangplan.dra.counting` (the counting path and the bit masks), :mod:`gangplan.dra.joint_model`
(a joint allocation as a CP-SAT model) and :mod:`gangplan.dra.brute_force` (the reference the
tests compare against). This module holds the entry points (:func:`allocate_results`,
:func:`allocate`, :func:`allocate_joint`), and every name of the allocator is importable from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gangplan.dra.brute_force import _brute_admin as _brute_admin
from gangplan.dra.brute_force import brute_force_exists as brute_force_exists
from gangplan.dra.consumable import consumed_amount as consumed_amount
from gangplan.dra.consumable import consumption as consumption
from gangplan.dra.consumable import fits as fits
from gangplan.dra.consumable import qualify as qualify
from gangplan.dra.consumable import violates as violates
from gangplan.dra.counting import _SEARCH, _counted
from gangplan.dra.counting import _device_info as _device_info
from gangplan.dra.counting import _usable as _usable
from gangplan.dra.counting import _used_bits as _used_bits
from gangplan.dra.counting import countable_mask as countable_mask
from gangplan.dra.counting import usable_mask as usable_mask
from gangplan.dra.joint_model import _joint_by_model
from gangplan.dra.matching import _ABSENT as _ABSENT
from gangplan.dra.matching import AllocationError as AllocationError
from gangplan.dra.matching import Constraints, Consumed, DeviceResult, add_consumed
from gangplan.dra.matching import _empty as _empty
from gangplan.dra.matching import _must as _must
from gangplan.dra.matching import all_devices as all_devices
from gangplan.dra.matching import attribute_value as attribute_value
from gangplan.dra.matching import constraints_hold as constraints_hold
from gangplan.dra.matching import has_attribute as has_attribute
from gangplan.dra.matching import matches as matches
from gangplan.dra.matching import selectable as selectable
from gangplan.dra.model import CapName, Device, DeviceClass, DeviceID, DeviceRequest
from gangplan.dra.search import _NO as _NO
from gangplan.dra.search import _local, search
from gangplan.dra.search import _statuses as _statuses
from gangplan.dra.shared_counters import _pools_of as _pools_of
from gangplan.dra.shared_counters import available_counters as available_counters
from gangplan.dra.shared_counters import counter_pools as counter_pools
from gangplan.dra.shared_counters import counters_fit_alone as counters_fit_alone


def allocate_results(
    claims: Sequence[tuple[str, Sequence[DeviceRequest]]],
    devices: Sequence[Device],
    in_use: Iterable[DeviceID] | set,
    classes: dict[str, DeviceClass],
    consumed: Consumed | None = None,
    cache: dict | None = None,
    constraints: Constraints | None = None,
    distinct: bool = True,
    *,
    counting: bool = True,
    partitionable: bool | None = None,
) -> dict[str, tuple[DeviceResult, ...]] | None:
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
    return search(
        claims, devices, in_use, classes, consumed, cache, constraints, distinct, partitionable
    )


def allocate(
    claims: Sequence[tuple[str, Sequence[DeviceRequest]]],
    devices: Sequence[Device],
    in_use: Iterable[DeviceID] | set,
    classes: dict[str, DeviceClass],
    consumed: Consumed | None = None,
    cache: dict | None = None,
    constraints: Constraints | None = None,
    distinct: bool = True,
    partitionable: bool | None = None,
) -> dict[str, tuple[DeviceID, ...]] | None:
    """Devices for every claim (claim key -> device ids, in request order), or None when no
    full allocation exists (:func:`allocate_results` without the consumed capacity)."""
    got = allocate_results(
        claims,
        devices,
        in_use,
        classes,
        consumed,
        cache,
        constraints,
        distinct,
        partitionable=partitionable,
    )
    if got is None:
        return None
    return {k: tuple(r.device for r in v) for k, v in got.items()}


def allocate_joint(
    claims: Sequence[tuple[str, Sequence[DeviceRequest]]],
    devices: Sequence[Device],
    in_use: Iterable[DeviceID] | set,
    classes: dict[str, DeviceClass],
    consumed: Consumed | None = None,
    constraints: Constraints | None = None,
    distinct: bool = True,
    cache: dict | None = None,
    *,
    counting: bool = True,
    partitionable: bool | None = None,
) -> dict[str, tuple[DeviceResult, ...]] | None:
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
        got = _counted(
            claims,
            devices,
            in_use if isinstance(in_use, (set, frozenset)) else set(in_use),
            classes,
            consumed,
            cache,
            constraints,
        )
        if got is not _SEARCH:
            return got
    if any(r.admin_access for _, rs in claims for r in rs):
        # Admin access (KEP-5018): an admin-access device keeps later requests of this search off
        # it, so the order is the allocation: the claims together, in the order given.
        if partitionable is None:
            partitionable = distinct
        return allocate_results(
            claims,
            devices,
            in_use,
            classes,
            consumed,
            cache,
            constraints,
            distinct,
            counting=counting,
            partitionable=partitionable,
        )
    # (counters: the pool's devices on other nodes count too, so in_use is not restricted)
    used = set(in_use) if any(d.counters for d in devices) else _local(devices, in_use)
    taken: dict[DeviceID, dict[CapName, int]] = {d: dict(v) for d, v in (consumed or {}).items()}
    out: dict[str, tuple[DeviceResult, ...]] = {}
    for key, reqs in claims:
        got = allocate_results(
            [(key, reqs)],
            devices,
            used,
            classes,
            taken,
            cache,
            constraints,
            distinct,
            counting=counting,
            partitionable=partitionable,
        )
        if got is None:
            break
        out.update(got)
        used.update(r.device for r in got[key] if r.consumed is None)
        add_consumed(taken, got[key])
    else:
        return out
    if partitionable is None:
        partitionable = distinct
    got = _joint_by_model(
        claims, devices, set(in_use), classes, consumed, constraints, partitionable
    )
    if got is not _SEARCH:
        return got
    order = sorted(claims, key=lambda kr: -sum(r.count for r in kr[1]))
    return allocate_results(
        order,
        devices,
        in_use,
        classes,
        consumed,
        cache,
        constraints,
        distinct,
        counting=counting,
        partitionable=partitionable,
    )
