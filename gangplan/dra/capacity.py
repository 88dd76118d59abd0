"""The exact engine's view of DRA: device counts as resource dimensions (no variable per pod
claim and device).

Per node, the devices that match a (DeviceClass, request selectors) pair and are not allocated
in the snapshot are counted, and that count becomes a resource ``dra.gangplan.io/<n>`` of the
node; each pending pod requests, per pair, the devices its unallocated claims ask for. KEP-5004
extended resources a DeviceClass maps get, on nodes without them in ``status.allocatable``, the
count of the class's free devices (bound pods hold theirs through claims), one row per class
that every name mapping to it (explicit and ``deviceclass.resource.kubernetes.io/<class>``) draws
on; nodes serving them by a device plugin keep their allocatable. A claim allocated in
the snapshot pins its pods to the nodes of its allocation (``dra.gangplan.io/claim-<n>``); a
claim gangplan cannot allocate asks for a resource no node has.

Devices of multi-node ResourceSlices (``nodeSelector`` / ``allNodes`` / ``perDeviceNodeSelection``,
:attr:`gangplan.dra.model.Device.reach`) count on every node they reach, and :class:`MultiRows`
says that each serves one node only: per group of such devices with the same reaching nodes and
per device-count resource, the exact engine borrows an integer number of them per node
(:func:`gangplan.solver.exact.capacity.add_multi_node_rows`). Those that consume shared counters
or allow multiple allocations are left out (:meth:`DraState.local_only`, named in a warning); for
allocationMode All, constraints and overlapping requests the per-node rows see them as the
node's (a relaxation the validator decides, warned).

This is exact when the devices of different pairs on a node are disjoint (the GB200 channel and
DRA-only GPU cases); when a device matches several pairs the counts over-state what is free, and
the validator (:func:`gangplan.dra.capacity.check_node`) is what catches a wrong placement.
A claim shared by several pending pods is one allocation: its pods carry a required pod affinity
term on a per-node label (same node) and a row only nodes able to allocate the claim alone offer;
for plain ExactCount requests its devices are counted once on the node its pods land on
(:func:`shared_claim_rows`; before, they were not subtracted from what other claims see there,
and the validator refused such exact placements).

Partitionable devices (KEP-4815): a free device that consumes shared counters counts for its
pairs when it fits its pool's counters alone (after the allocated devices' consumption); where
such devices exist the exact engine adds a boolean per device, counter rows and per-resource
rows over them (:class:`CounterRows`, :func:`gangplan.solver.exact.capacity.add_counter_rows`).
With the gate off (v1.35) such a device counts for nothing.

Consumable capacity (KEP-5075; the allocator mirrors ``incubating/consumable_capacity.go`` of
kubernetes/kubernetes v1.36): a (DeviceClass, request selectors) pair that matches a device with
``allowMultipleAllocations`` gets, instead of a device count, rows over the node's matching devices
that still have no variable per (pod claim, device):

* per capacity name, ``sum of consumed amounts <= sum of what is left of the devices' values``
  (the snapshot's shared allocations subtracted; an exclusive matching device counts whole);
* per capacity name and each amount ``a`` pending requests consume, ``consumers of at least a <=
  sum over devices of floor(left / a)`` (each device holds at most that many of them);
* per request, a row only nodes with at least ``count`` devices that can serve it alone offer
  (one request never takes a device twice).

A request's amount is the least it consumes on any matching device (the request policies of
different devices may round it differently). These rows are exact on a node with one matching
device per pair, and for consumers of one size; with several devices and mixed sizes they are a
relaxation (bin packing): the validator, which allocates every claim of a node jointly, is what
catches a placement they let through.

Device taints (KEP-5055): a pair is (DeviceClass, selector key, capacity requests), the selector
key being the request's selectors plus its tolerations when it has any
(:func:`gangplan.dra.model.selector_key`), and a device counts for a pair only when the pair's
tolerations tolerate its NoSchedule / NoExecute taints (:func:`gangplan.dra.allocator.matches`).
Requests that differ only in tolerations are different pairs, and where a tainted device is
counted by both, the Hall rows below keep the counts exact. For allocationMode All a tainted
device the request does not tolerate counts among the matching devices but not the free ones,
so the claim fits nowhere on that node, as upstream's allocator fails it there.

Admin access (KEP-5018): a request with ``adminAccess`` takes no device count and no capacity
row (its devices stay free for other claims, in use or not); it adds a row only nodes with
``count`` devices it could take alone offer (:func:`_admin_count`: matching, taints tolerated,
counters as for any device). Within one pod an admin-access device keeps the pod's later
requests off it: a pod with an admin-access request and other requests gets a row only nodes
where its claims, in its order, allocate alone from the snapshot's free devices offer.

Pairs whose selectors match overlapping devices on a node ("any GPU" beside "a GPU of 80 GB")
each count every device they match; :func:`_hall_rows` adds, per group of overlapping pairs, a
row per subset (Hall's condition: what the subset asks for is at most the devices any of its pairs
matches), which makes the counts exact for ExactCount requests of exclusive devices (before, a
node of 4 such GPUs took two pods of 2 of each and the validator rejected the exact Result).
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field

from gangplan.dra.allocator import (
    _SEARCH,
    AllocationError,
    _joint_by_model,
    allocate_joint,
    allocate_results,
    available_counters,
    consumption,
    counters_fit_alone,
    fits,
    matches,
    selectable,
    usable_mask,
)
from gangplan.dra.model import CapName, Device, DeviceRequest, DraState, probe, selector_key
from gangplan.dra.rules import CANNOT_ALLOCATE, distinct_supported, replay, try_node
from gangplan.gcpause import gc_paused
from gangplan.models.base import Beside
from gangplan.models.objects import LabelSelector, PodAffinityTerm


def _fits_alone(dra: DraState, node, key: str, distinct: bool = True) -> bool:
    """Whether ``node`` can allocate claim ``key`` from its free devices, alone."""
    try:
        return allocate_results([(key, dra.claims[key].requests)], dra.devices_by_node.get(node.name, ()), dra.in_use, dra.classes, dra.consumed,
                                dra.alloc_cache, dra.constraints, distinct) is not None
    except AllocationError:
        return False


PairKey = tuple[str, tuple[str, ...], tuple[tuple[str, int], ...]]
"""(DeviceClass, request selectors, capacity requests): the devices a request can take."""


@dataclass(frozen=True)
class AlignedConstraint:
    """One constraint of a claim shape, for the exact engine's per-value rows."""

    kind: str
    """``match`` or ``distinct``."""
    attribute: CapName
    pairs: tuple[tuple[PairKey, int], ...]
    """The pairs the requests it covers draw from, with the devices one claim takes of each."""


@dataclass
class AlignedRows:
    """Claims with matchAttribute / distinctAttribute constraints, as the exact engine models
    them (:func:`gangplan.solver.exact.capacity.add_aligned_rows`): per claim shape a resource
    (one unit per claim) that only nodes able to allocate one such claim alone offer, and per node
    the free devices of each (pair, attribute) split by the attribute's value."""

    shapes: dict[str, tuple[AlignedConstraint, ...]] = field(default_factory=dict)
    """resource name -> the shape's constraints."""
    supply: dict[str, dict[tuple[PairKey, CapName], dict[object, int]]] = field(default_factory=dict)
    """node name -> (pair, attribute) -> attribute value -> free devices of the pair with it."""
    relaxed: dict[str, str] = field(default_factory=dict)
    """node name -> why the rows are a relaxation there (the validator decides)."""


def aligned_rows(view) -> AlignedRows | None:
    """The per-value rows of a :func:`capacity_view` (None when no pending claim has constraints)."""
    rows = view_rows(view)
    return rows.aligned if rows is not None else None


def _aligned(dra: DraState, nodes, shapes: dict[str, tuple[AlignedConstraint, ...]]) -> AlignedRows:
    """Count, per node, the free exclusive devices of each (pair, attribute) by value."""
    from gangplan.dra.allocator import attribute_value

    rows = AlignedRows(shapes=shapes)
    wanted = sorted({(p, c.attribute) for cons in shapes.values() for c in cons for p, _ in c.pairs}, key=repr)
    by_pair: dict[PairKey, list[tuple[str, ...]]] = {}
    for cons in shapes.values():
        for c in cons:
            for p, _ in c.pairs:
                by_pair.setdefault(p, []).append(c.attribute)
    for n in nodes:
        per: dict[tuple[PairKey, CapName], dict[object, int]] = {}
        why = []
        devices = dra.devices_by_node.get(n.name, ())
        for pair, attr in wanted:
            req = probe(pair[0], pair[1], pair[2])
            counts: dict[object, int] = {}
            mask = usable_mask(devices, req, dra.classes, dra.alloc_cache, dra.in_use, dra.consumed)  # as _serves, cached
            for at, d in enumerate(devices):
                if mask is not None:
                    ok = bool(mask >> at & 1)
                else:
                    try:
                        ok = _serves(dra, d, req) is not None
                    except AllocationError:
                        ok = False
                if not ok:
                    continue
                if d.allow_multiple:
                    why.append(f"device {'/'.join(d.id)} is shared (allowMultipleAllocations)")
                    continue
                v = attribute_value(d, attr)
                if isinstance(v, tuple):
                    counts[v] = counts.get(v, 0) + 1
            per[(pair, attr)] = counts
        if any(len(set(a)) > 1 for a in by_pair.values()):
            why.append("constraints on different attributes draw on the same devices")
        if why and (any(per.values()) or any("shared" in w for w in why)):
            rows.relaxed[n.name] = why[0]
        rows.supply[n.name] = per
    return rows

PREFIX = "dra.gangplan.io/"
NODE_LABEL = PREFIX + "node"
"""A label naming the node itself, the topology key of the shared-claim affinity terms."""
_BIG = 1 << 40


@dataclass
class CapacityRows:
    """What a :func:`capacity_view` adds beside its resource rows, for the exact engine's DRA
    families (:mod:`gangplan.solver.exact.capacity`): one record per view, held by the view itself
    (``Cluster._dra_rows``), so it lives and dies with it."""

    aligned: AlignedRows | None = None
    counters: CounterRows | None = None
    all: dict | None = None
    first_available: dict | None = None
    multi: MultiRows | None = None
    shared: dict | None = None


def _held(obj, name: str):
    """What ``obj`` holds beside its fields under ``name`` for itself: each holder names its
    owner, so a copy of the object (``model_copy``, ``at_version``), which shares the holder, is
    not mistaken for it."""
    holder = getattr(obj, name, None)
    return holder.value[1] if holder is not None and holder.value[0] is obj else None


def view_rows(view) -> CapacityRows | None:
    """The :class:`CapacityRows` of a capacity view (None for anything else)."""
    return _held(view, "_dra_rows")


def view_source(view):
    """The snapshot a capacity view was made of (``view`` itself for anything else)."""
    source = _held(view, "_dra_source")
    return source if source is not None else view


def _serves(dra: DraState, d: Device, request: DeviceRequest, partitionable: bool = True) -> dict[CapName, int] | None:
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
    one = DeviceRequest(name=request.name, device_class=request.device_class, selectors=request.selectors, count=1, capacity=request.capacity,
                        tolerations=request.tolerations)
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
            if d.counters and (not partitionable or not counters_fit_alone(d, dra.in_use, dra.consumed)):
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
    return {(dom, n): v - used.get((dom, n), 0) for dom, caps in d.capacity.items() for n, v in caps.items()}


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
                got = [d for d in self.dra.devices_by_node.get(node_name, ()) if d.id not in self.dra.in_use and matches(d, self.probe, self.dra.classes)]
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
        amounts = [q for n in self.dra.devices_by_node for d in self.devices(n) if (q := consumption(d, r)) is not None]
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
                total += left if at_least is None else int(left >= at_least)
            else:
                total += max(left, 0) if at_least is None else max(left, 0) // at_least
        return total


def capacity_view(cluster):
    """``cluster`` with DRA demands and supplies as resources (itself without DRA); cached. Built
    with the cyclic collector paused (:mod:`gangplan.gcpause`: a copy of every node and pod
    holds no cycles, and the collections its allocations trigger cost the exact engine more than
    the view itself)."""
    with gc_paused():
        return _capacity_view(cluster)


def _capacity_view(cluster):
    dra: DraState | None = cluster.dra
    if not dra:
        return cluster
    cached = _held(cluster, "_dra_view")
    if cached is not None:
        return cached
    dropped = len(dra.multi_node) - len(dra.local_only(keep_plain=True).multi_node)
    dra = dra.local_only(keep_plain=True)  # (multi-node devices with counters or shares are not offered: module docstring)
    dims: dict[tuple, str] = {}
    pod_extra: dict[str, dict[str, int]] = {}
    node_extra: dict[str, dict[str, int]] = {n.name: {} for n in cluster.nodes}
    users: dict[str, list[str]] = {}
    for p in cluster.pending_pods:
        for key in dra.pod_claims.get(p.key, ()):
            users.setdefault(key, []).append(p.key)
    shared = {k for k, v in users.items() if len(v) > 1 and dra.claims[k].allocated is None and dra.claims[k].unsupported is None}
    pod_shared: dict[str, list[str]] = {}
    pairs: dict[tuple, _Shareable | None] = {}
    aligned: dict[str, tuple[str, tuple[AlignedConstraint, ...]]] = {}
    distinct = distinct_supported(cluster)
    consumers: list[tuple[dict, str, tuple, CapName, int, int]] = []
    all_claims: dict[str, str] = {}
    fa_alts: dict[str, list] = {}
    admin_pods: dict[str, object] = {}
    shared_demand: dict[str, list[tuple[str, int]] | None] = {}

    def _shareable(r: DeviceRequest) -> _Shareable | None:
        """The rows of ``r``'s pair when some free device it matches is shared, else None."""
        key = (r.device_class, selector_key(r))
        if key not in pairs:
            sh = _Shareable(dra, r.device_class, key[1])
            pairs[key] = sh if any(d.allow_multiple for n in dra.devices_by_node for d in sh.devices(n)) else None
        return pairs[key]

    for p in cluster.pending_pods:
        extra: dict[str, int] = {}
        if p.key in dra.pod_missing:
            extra[PREFIX + "unallocatable"] = 1
        for key in dra.pod_claims.get(p.key, ()):
            c = dra.claims[key]
            if key in shared:
                # One allocation for all its pods: a same-node constraint (required pod affinity
                # on a per-node label) and a row that only nodes able to hold the claim offer.
                name = dims.setdefault(("shared", key), f"{PREFIX}shared-{len(dims)}")
                extra[name] = 1
                pod_shared.setdefault(p.key, []).append(name)
                if name not in shared_demand:
                    # Its devices, once per node its pods land on (add_shared_claim_rows), for plain
                    # ExactCount requests; anything else stays a relaxation the validator decides.
                    plain = not c.constraints and all(not (r.all or r.alternatives or r.capacity or r.admin_access) and _shareable(r) is None
                                                      for r in c.requests)
                    shared_demand[name] = [(dims.setdefault(("request", r.device_class, selector_key(r)), f"{PREFIX}{len(dims)}"), r.count)
                                           for r in c.requests] if plain else None
                continue
            if c.allocated is not None:
                if c.allocated_nodes is not None:
                    name = dims.setdefault(("claim", key), f"{PREFIX}claim-{len(dims)}")
                    extra[name] = 1
                    for n in c.allocated_nodes:
                        if n in node_extra:
                            node_extra[n][name] = _BIG
                continue
            if c.unsupported is not None:
                extra[PREFIX + "unallocatable"] = 1
                continue
            if c.constraints:
                # matchAttribute / distinctAttribute: one unit per claim of its shape, and
                # per-value rows in the exact engine (AlignedRows); the requests still count below.
                shape = (tuple((r.name, r.device_class, r.selectors, r.count, r.capacity, r.tolerations) for r in c.requests), c.constraints)
                name = dims.setdefault(("aligned", shape), f"{PREFIX}aligned-{len(dims)}")
                extra[name] = extra.get(name, 0) + 1
                if name not in aligned:
                    shaped = []
                    for k in c.constraints:
                        got: Counter = Counter()
                        for r in c.requests:
                            if k.applies(r.name):
                                got[(r.device_class, selector_key(r), r.capacity)] += r.count
                        shaped.append(AlignedConstraint(k.kind, k.attribute, tuple(sorted(got.items(), key=repr))))
                    aligned[name] = (key, tuple(shaped))
            if any(r.all or r.alternatives for r in c.requests):
                # allocationMode All / firstAvailable: one unit of the claim's shape, offered where
                # the claim fits alone. Per All request one unit of its pair's ``all`` row, 1 where
                # every matching device is free, and (exact engine, add_all_rows) no other request
                # of the pair next to it. Per firstAvailable request one unit of its ``fa`` row,
                # which the exact engine splits over the subrequests (add_first_available_rows).
                shape = tuple((r.name, r.device_class, r.selectors, r.count, r.capacity, r.all, r.alternatives, r.tolerations) for r in c.requests)
                name = dims.setdefault(("allclaim", shape), f"{PREFIX}allclaim-{len(dims)}")
                extra[name] = extra.get(name, 0) + 1
                all_claims.setdefault(name, key)
                for r in c.requests:
                    if r.alternatives:
                        row = dims.setdefault(("fa", shape, r.name), f"{PREFIX}fa-{len(dims)}")
                        extra[row] = extra.get(row, 0) + 1
                        if row not in fa_alts:
                            offered: list = []
                            for a in r.alternatives:
                                if a.all or a.capacity or _shareable(a) is not None:
                                    offered.append(None)  # (not offered by the exact engine: conservative)
                                    continue
                                pair = dims.setdefault(("request", a.device_class, selector_key(a)), f"{PREFIX}{len(dims)}")
                                offered.append((pair, a.count))
                            fa_alts[row] = offered
                    if r.all:
                        pair = (r.device_class, selector_key(r), r.capacity)
                        row = dims.setdefault(("all", *pair), f"{PREFIX}all-{len(dims)}")
                        extra[row] = extra.get(row, 0) + 1
            for r in c.requests:
                if r.all or r.alternatives:
                    continue
                if r.admin_access:
                    # KEP-5018: no device count nor capacity row (the devices stay free for other
                    # claims); a row only nodes with ``count`` devices it can take offer.
                    name = dims.setdefault(("admin", r.device_class, selector_key(r), r.capacity, r.count), f"{PREFIX}admin-{len(dims)}")
                    extra[name] = 1
                    continue
                sh = _shareable(r)
                if sh is None:
                    key = ("request", r.device_class, selector_key(r)) if not r.capacity else ("request", r.device_class, selector_key(r), r.capacity)
                    name = dims.setdefault(key, f"{PREFIX}{len(dims)}")
                    extra[name] = extra.get(name, 0) + r.count
                    continue
                # KEP-5075: a pair with shared devices: capacity rows (module docstring).
                name = dims.setdefault(("serves", r), f"{PREFIX}serves-{len(dims)}")
                extra[name] = 1
                for cap, q in sh.demand(r).items():
                    row = dims.setdefault(("cap", r.device_class, selector_key(r), cap), f"{PREFIX}cap-{len(dims)}")
                    extra[row] = extra.get(row, 0) + r.count * q
                    consumers.append((extra, r.device_class, selector_key(r), cap, q, r.count))
        for r, q in p.requests.items():
            cls = dra.extended.get(r)
            if cls is not None and q > 0:  # every name of one class draws on one row (explicit and implicit)
                name = f"{PREFIX}class-{cls}"
                extra[name] = extra.get(name, 0) + q
        mine = [dra.claims[k] for k in dra.pod_claims.get(p.key, ()) if k not in shared and dra.claims[k].allocated is None]
        if any(r.admin_access for c in mine for r in c.requests) and sum(len(c.requests) for c in mine) > 1:
            # KEP-5018: within the pod an admin-access device keeps its later requests off it, which
            # the rows above do not see: a row only nodes where the pod's claims fit alone offer.
            shape = (tuple((c.requests, c.constraints) for c in mine), tuple(sorted((r, q) for r, q in p.requests.items() if r in dra.extended)))
            name = dims.setdefault(("adminpod", shape), f"{PREFIX}adminpod-{len(dims)}")
            extra[name] = 1
            admin_pods.setdefault(name, p)
        if extra:
            pod_extra[p.key] = extra
    all_rows: dict[str, list[tuple[str, str, int]]] = {}
    thresholds: dict[tuple, str] = {}
    for extra, cls, sel, cap, q, count in consumers:
        for a in sorted(pairs[(cls, sel)].amounts[cap]):
            if q >= a:
                row = thresholds.setdefault((cls, sel, cap, a), f"{PREFIX}cap-{len(dims) + len(thresholds)}")
                extra[row] = extra.get(row, 0) + count
    asked = {name[len(PREFIX) + len("class-"):] for extra in pod_extra.values() for name in extra if name.startswith(PREFIX + "class-")}
    for n in cluster.nodes:
        for (kind, *rest), name in dims.items():
            if kind == "request":
                capacity = rest[2] if len(rest) > 2 else ()
                node_extra[n.name][name] = _count(dra, n, probe(rest[0], rest[1], capacity), distinct)
            elif kind == "serves":
                node_extra[n.name][name] = _BIG if _count(dra, n, rest[0], distinct) >= rest[0].count else 0
            elif kind == "cap":
                node_extra[n.name][name] = pairs[(rest[0], rest[1])].supply(n.name, rest[2], None)
            elif kind == "adminpod":
                node_extra[n.name][name] = _BIG if try_node(dra, admin_pods[name], n, dra.in_use, {}, None, distinct)[0] is not None else 0
            elif kind == "admin":
                node_extra[n.name][name] = _BIG if _admin_count(dra, n, probe(rest[0], rest[1], rest[2], admin_access=True), distinct) >= rest[3] else 0
            elif kind == "shared":
                node_extra[n.name][name] = _BIG if _fits_alone(dra, n, rest[0], distinct) else 0
            elif kind == "aligned":
                node_extra[n.name][name] = _BIG if _fits_alone(dra, n, aligned[name][0], distinct) else 0
            elif kind == "fa":
                node_extra[n.name][name] = _BIG  # (the claim's row says where it fits)
            elif kind == "allclaim":
                node_extra[n.name][name] = _BIG if _fits_alone(dra, n, all_claims[name], distinct) else 0
            elif kind == "all":
                total, free = _all_count(dra, n, probe(rest[0], rest[1], rest[2], all=True), distinct)
                node_extra[n.name][name] = 1 if total and total == free else 0
                if total:
                    req_row = dims.get(("request", *rest[:2])) if not rest[2] else dims.get(("request", *rest))
                    if req_row is not None:
                        all_rows.setdefault(n.name, []).append((name, req_row, total))
        for (cls, sel, cap, a), name in thresholds.items():
            node_extra[n.name][name] = pairs[(cls, sel)].supply(n.name, cap, a)
        served = dra.mapped_on(n)
        for cls in sorted(set(dra.extended.values())):
            names = [r for r, c in dra.extended.items() if c == cls]
            row = f"{PREFIX}class-{cls}"
            if any(r in served for r in names):
                if cls in asked:  # (a row no pending pod draws on is left out)
                    node_extra[n.name][row] = _count(dra, n, DeviceRequest(name="", device_class=cls), distinct)  # bound pods' devices are in use
                for r in names:
                    if r in served:
                        node_extra[n.name][r] = _BIG  # the class row holds the devices
            else:
                node_extra[n.name][row] = _BIG  # served by a device plugin here: its allocatable binds
    hall_probes = [(name, probe(rest[0], rest[1], rest[2] if len(rest) > 2 else ()))
                   for (kind, *rest), name in dims.items() if kind == "request"]
    hall_probes += [(f"{PREFIX}class-{cls}", DeviceRequest(name="", device_class=cls)) for cls in sorted(asked)]
    hall, hall_relaxed = _hall_rows(dra, cluster.nodes, hall_probes, node_extra, distinct)
    for row, members in hall.items():
        for extra in pod_extra.values():
            need = sum(extra.get(m, 0) for m in members)
            if need:
                extra[row] = need

    def node(n):
        update: dict = {"allocatable": {**n.allocatable, **node_extra[n.name]}} if node_extra[n.name] else {}
        if shared:
            update["labels"] = {**n.labels, NODE_LABEL: n.name}
        return n.model_copy(update=update) if update else n

    def pod(p):
        if p.key not in pod_extra:
            return p
        update: dict = {"requests": {**p.requests, **pod_extra[p.key]}}
        if p.key in pod_shared:
            labels = {**p.labels, **{name: "true" for name in pod_shared[p.key]}}
            terms = tuple(PodAffinityTerm(label_selector=LabelSelector(match_labels={name: "true"}), topology_key=NODE_LABEL) for name in pod_shared[p.key])
            update["labels"] = labels
            update["affinity"] = p.affinity.model_copy(update={"pod_affinity_required": p.affinity.pod_affinity_required + terms})
        return p.model_copy(update=update)

    nodes = tuple(node(n) for n in cluster.nodes)
    pods = tuple(pod(p) for p in cluster.pods)
    fields = {f: getattr(cluster, f) for f in type(cluster).model_fields}
    rows = _aligned(dra, cluster.nodes, {name: cons for name, (_, cons) in aligned.items()}) if aligned else None
    if rows is not None and rows.relaxed:
        first = sorted(rows.relaxed)[0]
        fields["warnings"] = (*fields.get("warnings", ()), f"exact engine: the device rows of claims with matchAttribute / distinctAttribute constraints are "
                              f"not exact on {len(rows.relaxed)} node(s) (e.g. {first}: {rows.relaxed[first]}): there the exact engine places at most "
                              f"one such claim per node")
    probes = [(name, probe(rest[0], rest[1], rest[2] if len(rest) > 2 else ()))
              for (kind, *rest), name in dims.items() if kind == "request"]
    probes += [(f"{PREFIX}class-{cls}", DeviceRequest(name="", device_class=cls)) for cls in sorted(asked)]
    crows = _counter_rows(dra, cluster.nodes, probes) if distinct else None
    if crows is not None and crows.relaxed:
        first = sorted(crows.relaxed)[0]
        fields["warnings"] = (*fields.get("warnings", ()), f"exact engine: the shared-counter rows of partitionable devices are not exact on "
                              f"{len(crows.relaxed)} node(s) (e.g. {first}: {crows.relaxed[first]}): the validator decides there")
    if hall_relaxed:
        fields["warnings"] = (*fields.get("warnings", ()), f"exact engine: {len(hall_relaxed)} group(s) of more than {HALL_MAX_PAIRS} device requests "
                              f"match overlapping devices (e.g. {', '.join(hall_relaxed[0][:3])}, ...): their device rows are a relaxation there, "
                              "the validator decides")
    if any(None in v for v in fa_alts.values()):
        fields["warnings"] = (*fields.get("warnings", ()), "exact engine: firstAvailable subrequests with allocationMode All, capacity requests or "
                              "shared devices are not offered by the exact engine (the greedy engine and the validator allocate them)")
    mrows = _multi_rows(dra, cluster.nodes, probes, distinct) if dra.multi_node else None
    if dropped:
        fields["warnings"] = (*fields.get("warnings", ()), f"exact engine: {dropped} device(s) of multi-node ResourceSlices (nodeSelector / allNodes / "
                              "perDeviceNodeSelection) consume shared counters or allow multiple allocations and are not offered by the exact engine: "
                              "its optimum may be below the true one (the greedy engine and the validator allocate them)")
    if mrows is not None and shared:
        fields["warnings"] = (*fields.get("warnings", ()), f"exact engine: {len(shared)} claim(s) shared by several pending pods keep their pods on one "
                              "node, which multi-node devices do not require (kube-scheduler may spread them over the nodes one allocation "
                              "reaches): there the exact optimum may be below the true one")
    if mrows is not None and (all_rows or rows is not None or hall):
        fields["warnings"] = (*fields.get("warnings", ()), "exact engine: multi-node devices are counted across nodes for ExactCount requests; "
                              "allocationMode All, matchAttribute / distinctAttribute and overlapping requests see them per node, a relaxation "
                              "the validator decides")
    view = type(cluster)(**{**fields, "nodes": nodes, "pods": pods})
    demands = {k: v for k, v in shared_demand.items() if v}
    view._dra_rows = Beside((view, CapacityRows(aligned=rows, counters=crows, all=all_rows or None,
                                                first_available=fa_alts or None, multi=mrows, shared=demands or None)))
    view._dra_source = Beside((view, cluster))
    cluster._dra_view = Beside((cluster, view))
    return view


@dataclass
class MultiRows:
    """Multi-node devices as the exact engine counts them
    (:func:`gangplan.solver.exact.capacity.add_multi_node_rows`): the free ones grouped by the set
    of nodes that reach them, and per device-count resource (a (DeviceClass, selectors) pair or a
    KEP-5004 class row) the devices of each group that serve it and each node's own (node-local)
    devices that do. A node's count in the view holds both; the rows say that a multi-node device
    serves one node only."""

    groups: list[tuple[frozenset[str], int]] = field(default_factory=list)
    """(nodes reaching the group, its free devices)."""
    serves: dict[str, dict[int, int]] = field(default_factory=dict)
    """resource -> group index -> its devices that serve the resource alone."""
    local: dict[str, dict[str, int]] = field(default_factory=dict)
    """resource -> node -> its node-local devices that serve it alone."""


def _multi_rows(dra: DraState, nodes, probes: list[tuple[str, DeviceRequest]], partitionable: bool) -> MultiRows | None:
    free = {}
    reach: dict = {}
    for n in nodes:
        for d in dra.devices_by_node.get(n.name, ()):
            if d.reach is not None and d.id not in dra.in_use:
                free.setdefault(d.id, d)
                reach.setdefault(d.id, set()).add(n.name)
    if not free:
        return None
    by_group: dict[frozenset, list[Device]] = {}
    for did, d in free.items():
        by_group.setdefault(frozenset(reach[did]), []).append(d)
    order = sorted(by_group, key=lambda s: sorted(s))
    out = MultiRows(groups=[(s, len(by_group[s])) for s in order])
    for name, pr in probes:
        one = DeviceRequest(name="", device_class=pr.device_class, selectors=pr.selectors, capacity=pr.capacity, tolerations=pr.tolerations)
        try:
            per = {g: m for g, s in enumerate(order) if (m := sum(1 for d in by_group[s] if _serves(dra, d, one, partitionable) is not None))}
        except AllocationError:
            continue
        if not per:
            continue
        out.serves[name] = per
        try:
            out.local[name] = {n.name: sum(1 for d in dra.devices_by_node.get(n.name, ()) if d.reach is None and _serves(dra, d, one, partitionable) is not None)
                               for n in nodes}
        except AllocationError:
            out.local[name] = {n.name: 0 for n in nodes}
    return out if out.serves else None


def multi_node_rows(view) -> MultiRows | None:
    """The multi-node device rows of a :func:`capacity_view` (None without such devices)."""
    rows = view_rows(view)
    return rows.multi if rows is not None else None


def shared_claim_rows(view) -> dict[str, list[tuple[str, int]]] | None:
    """Claims shared by several pending pods in a :func:`capacity_view`: their ``shared`` resource
    (1 for each of their pods) -> the device-count resources their requests draw on, with the
    devices each takes, for :func:`gangplan.solver.exact.capacity.add_shared_claim_rows` (plain
    ExactCount requests only); None without any."""
    rows = view_rows(view)
    return rows.shared if rows is not None else None


HALL_MAX_PAIRS = 6
"""Overlapping request pairs per group up to which every subset gets its row (2^6 - 7 = 57 rows)."""


def _mask(dra: DraState, node, request: DeviceRequest, partitionable: bool = True) -> int:
    """Bit ``i``: ``node``'s ``i``-th device can serve ``request`` alone (popcount == :func:`_count`)."""
    devices = dra.devices_by_node.get(node.name, ())
    got = usable_mask(devices, request, dra.classes, dra.alloc_cache, dra.in_use, dra.consumed)
    if got is not None:
        return got
    one = DeviceRequest(name=request.name, device_class=request.device_class, selectors=request.selectors, count=1, capacity=request.capacity,
                        tolerations=request.tolerations)
    m = 0
    try:
        for i, d in enumerate(devices):
            if _serves(dra, d, one, partitionable) is not None:
                m |= 1 << i
    except AllocationError:
        return 0
    return m


def _hall_rows(dra: DraState, nodes, probes: list[tuple[str, DeviceRequest]], node_extra: dict[str, dict[str, int]],
               partitionable: bool = True) -> tuple[dict[str, tuple[str, ...]], list[tuple[str, ...]]]:
    """Rows that make the per-pair device counts exact where pairs match overlapping devices.

    Each row of ``probes`` (a (DeviceClass, selectors) pair, or a KEP-5004 class row) counts the
    node's free devices that pair matches; two pairs matching the same devices ("any GPU" and "a
    GPU of 80 GB") would each count all of them. Exclusive devices given to requests are a
    bipartite b-matching, which exists exactly when Hall's condition holds: for every set ``S`` of
    pairs, the devices asked for through ``S`` are at most the devices matching some pair of ``S``.
    Pairs are grouped where their matches overlap on some node (elsewhere the condition follows
    from the rows of the parts); each group of at most :data:`HALL_MAX_PAIRS` pairs gets a row per
    subset of two or more, its supply per node the union's size (unbounded where a member is
    served without devices, a device plugin's resource). Larger groups keep the relaxation and are
    returned as the second value (named in a warning). Rows are written into ``node_extra``; the
    result maps each row's name to its member pairs (the caller adds the pods' demands)."""
    masks: dict[str, dict[str, int]] = {}
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for n in nodes:
        if not dra.devices_by_node.get(n.name):
            continue
        per = {name: m for name, req in probes if node_extra[n.name].get(name) != _BIG and (m := _mask(dra, n, req, partitionable))}
        masks[n.name] = per
        items = sorted(per.items())
        for i, (a, ma) in enumerate(items):
            for b, mb in items[i + 1:]:
                if ma & mb:
                    parent[find(a)] = find(b)
    groups: dict[str, list[str]] = {}
    for x in sorted(parent):
        groups.setdefault(find(x), []).append(x)
    rows: dict[str, tuple[str, ...]] = {}
    relaxed: list[tuple[str, ...]] = []
    for members in sorted(groups.values()):
        if len(members) < 2:
            continue
        if len(members) > HALL_MAX_PAIRS:
            relaxed.append(tuple(members))
            continue
        for size in range(2, len(members) + 1):
            for subset in itertools.combinations(members, size):
                row = f"{PREFIX}hall-{len(rows)}"
                rows[row] = subset
                for n in nodes:
                    extra = node_extra[n.name]
                    if any(extra.get(m) == _BIG for m in subset):
                        extra[row] = _BIG
                        continue
                    per = masks.get(n.name, {})
                    union = 0
                    for m in subset:
                        union |= per.get(m, 0)
                    extra[row] = union.bit_count()
    return rows, relaxed


def first_available_rows(view) -> dict[str, list] | None:
    """firstAvailable in a :func:`capacity_view`: the ``fa`` resource of each (claim shape,
    request) -> per subrequest in priority order, (the device-count resource its pair draws on,
    devices per claim), or None where the exact engine does not offer it; None without any."""
    rows = view_rows(view)
    return rows.first_available if rows is not None else None


def all_rows(view) -> dict[str, list[tuple[str, str, int]]] | None:
    """allocationMode All in a :func:`capacity_view`: node -> (the pair's ``all`` resource, the
    pair's device-count resource, the node's matching devices), for
    :func:`gangplan.solver.exact.capacity.add_all_rows`; None without All requests."""
    rows = view_rows(view)
    return rows.all if rows is not None else None


def _all_count(dra: DraState, node, request: DeviceRequest, partitionable: bool = True) -> tuple[int, int]:
    """(devices of ``node`` matching ``request``, of which free and able to serve it alone; a
    tainted device it does not tolerate counts in the first only, as allocationMode All lists
    every selectable device and then fails on it)."""
    devices = dra.devices_by_node.get(node.name, ())
    try:
        total = [d for d in devices if selectable(d, request, dra.classes)]
        return len(total), sum(1 for d in total if _serves(dra, d, request, partitionable) is not None)
    except AllocationError:
        return 0, 0


@dataclass
class NodeCounters:
    """One node's partitionable devices, for the exact engine's per-device rows."""

    devices: list[tuple[str, tuple[str, ...], tuple[tuple[tuple[str, str, str], int], ...]]] = field(default_factory=list)
    """Per free device consuming counters that can serve some pending pair alone: (device name,
    the device-count resources it serves, ((pool, counter set, counter), amount) it consumes)."""
    plain: dict[str, int] = field(default_factory=dict)
    """Device-count resource -> the node's devices without counters that serve it alone."""
    available: dict[tuple[str, str, str], int] = field(default_factory=dict)
    """(driver/pool, counter set, counter) -> what the allocated devices left of it."""


@dataclass
class CounterRows:
    """KEP-4815 as the exact engine models it (:func:`gangplan.solver.exact.capacity.add_counter_rows`):
    a boolean per partitionable device (only where such devices exist), counter rows over them,
    and per device-count resource ``demand <= plain devices + taken partitionable devices``."""

    nodes: dict[str, NodeCounters] = field(default_factory=dict)
    relaxed: dict[str, str] = field(default_factory=dict)
    """node -> why its rows are a relaxation there (the validator decides)."""


def counter_rows(view) -> CounterRows | None:
    """The partitionable-device rows of a :func:`capacity_view` (None without such devices)."""
    rows = view_rows(view)
    return rows.counters if rows is not None else None


def _counter_rows(dra: DraState, nodes, probes: list[tuple[str, DeviceRequest]]) -> CounterRows | None:
    """Per node with free devices that consume counters and serve a pending pair (``probes``:
    device-count resource -> its pair), the rows of :class:`CounterRows`."""
    if not probes or not any(d.counters for devs in dra.devices_by_node.values() for d in devs):
        return None
    out = CounterRows()
    where: dict[int, set[str]] = {}
    for node, devs in dra.devices_by_node.items():
        for d in devs:
            if d.counter_pool is not None:
                where.setdefault(id(d.counter_pool), set()).add(node)
    for n in nodes:
        devs = dra.devices_by_node.get(n.name, ())
        if not any(d.counters for d in devs):
            continue
        nc = NodeCounters(plain={name: 0 for name, _ in probes})
        pools: dict[int, object] = {}
        for d in devs:
            try:
                serves = tuple(name for name, probe in probes if _serves(dra, d, probe) is not None)
            except AllocationError:
                serves = ()
            if not serves:
                continue
            if not d.counters:
                for name in serves:
                    nc.plain[name] += 1
                continue
            if d.allow_multiple:
                out.relaxed.setdefault(n.name, f"device {'/'.join(d.id)} is shared (allowMultipleAllocations) and consumes counters")
                for name in serves:
                    nc.plain[name] += 1
                continue
            cp = d.counter_pool
            if cp is None:
                for name in serves:
                    nc.plain[name] += 1
                continue
            if len(where.get(id(cp), ())) > 1:
                out.relaxed.setdefault(n.name, f"counter pool {cp.driver}/{cp.pool} spans several nodes")
            pools[id(cp)] = cp
            amounts: dict[tuple[str, str, str], int] = {}
            for cset, values in d.counters:
                for c, v in values:
                    if c in cp.sets.get(cset, {}):
                        key = (f"{cp.driver}/{cp.pool}", cset, c)
                        amounts[key] = amounts.get(key, 0) + v
            nc.devices.append((d.name, serves, tuple(sorted(amounts.items()))))
        if not nc.devices:
            continue
        for cp in pools.values():
            for (cset, c), v in available_counters(cp, dra.in_use, dra.consumed).items():
                nc.available[(f"{cp.driver}/{cp.pool}", cset, c)] = v
        out.nodes[n.name] = nc
    return out if out.nodes else None


def check_nodes(dra: DraState, placed: list[tuple[object, list]], distinct: bool = True,
                named: dict[str, tuple[tuple[str, str, str, str, str], ...]] | None = None) -> list[tuple[str, str]]:
    """The validator's check with multi-node devices (:attr:`DraState.multi_node`): ``placed``
    (node, its new pods in order) for every node with new pods using DRA, in node order. Each
    node must have a joint allocation (:func:`check_node`) from what the snapshot's claims leave,
    less the multi-node devices the nodes before it took and those the Result names for pods on
    other nodes (``named``: pod key -> (claim, request, driver, pool, device)). A claim whose pods
    are on several nodes is allocated once: with the devices the Result names for it when it names
    any (:func:`gangplan.dra.results.check_named` checks them), else on the first of its nodes;
    its allocation must be usable on every other (``status.allocation.nodeSelector``,
    :func:`gangplan.dra.rules.allocation_site`). (node or claim, why) per problem."""
    from gangplan.dra.allocator import DeviceResult
    from gangplan.dra.rules import allocation_site

    named = named or {}
    claim_nodes: dict[str, list[str]] = {}
    for node, pods in placed:
        for p in pods:
            for key in dra.pod_claims.get(p.key, ()):
                if dra.claims[key].allocated is None and node.name not in claim_nodes.setdefault(key, []):
                    claim_nodes[key].append(node.name)
    by_claim: dict[str, list] = {}
    for node, pods in placed:
        for p in pods:
            for claim, _, driver, pool, device in named.get(p.key, ()):
                by_claim.setdefault(f"{p.namespace}/{claim}", []).append((node.name, (driver, pool, device)))
    out: list[tuple[str, str]] = []
    used = set(dra.in_use)
    sites: dict = {}
    for key, where in claim_nodes.items():  # shared across nodes with named devices: that allocation
        devs = [d for n, d in by_claim.get(key, ()) if n == where[0]]
        if len(where) > 1 and devs:
            sites[key] = allocation_site(dra, [DeviceResult("", d) for d in devs], next(node for node, _ in placed if node.name == where[0]))
            used.update(d for d in devs if d in dra.multi_node)
    multi = dra.multi_node
    named_multi: dict[str, set] = {}  # node -> the multi-node devices named for its pods' claims (not shared across nodes)
    for k, v in by_claim.items():
        if k not in sites:
            for n, d in v:
                if d in multi:
                    named_multi.setdefault(n, set()).add(d)
    every = set().union(*named_multi.values()) if named_multi else set()
    for node, pods in placed:
        others = every - named_multi.get(node.name, set())
        why, got = _check_node(dra, node, pods, distinct, used | others, sites)
        if why is not None:
            out.append((node.name, why))
            continue
        for key, results in (got or {}).items():
            used.update(r.device for r in results if r.takes and r.device in multi)
            if key in claim_nodes and len(claim_nodes[key]) > 1:
                sites[key] = allocation_site(dra, results, node)
    if out:  # nodes one after another may split the multi-node devices badly: decide jointly
        got = _across_nodes(dra, placed, distinct)
        if got is not None and got is not _SEARCH:
            return []
    return out


def _across_nodes(dra: DraState, placed: list[tuple[object, list]], partitionable: bool):
    """Whether every new pod's claims on every node have one joint allocation, a claim whose pods
    are on several nodes taking only devices every one of them reaches (plain ExactCount claims:
    :func:`gangplan.dra.allocator._joint_by_model` over all the nodes' devices at once); the
    allocation, None when none exists, ``_SEARCH`` when the claims are not plain."""
    from gangplan.dra.rules import demand

    claims: list = []
    allowed: dict[str, set] = {}
    devices: dict = {}
    for node, pods in placed:
        mine = dra.devices_by_node.get(node.name, ())
        for d in mine:
            devices.setdefault(d.id, d)
        ids = {d.id for d in mine}
        for p in pods:
            todo, why = demand(dra, p, node, {})
            if why is not None:
                return None
            for key, reqs in todo:
                if key not in allowed:
                    claims.append((key, reqs))
                    allowed[key] = set(ids)
                else:
                    allowed[key] &= ids
    if not claims:
        return {}
    try:
        return _joint_by_model(claims, list(devices.values()), set(dra.in_use), dra.classes, dra.consumed, dra.constraints, partitionable, allowed)
    except AllocationError:
        return _SEARCH


def check_node(dra: DraState, node, pods_in_order, distinct: bool = True) -> str | None:
    """The validator's independent check of one node: one joint allocation of every new pod's
    claims (and KEP-5004 extended requests) from the node's free devices, by backtracking over
    all of them at once, must exist (distinct matching devices, none used twice), and claims
    allocated in the snapshot must be usable on the node. Admin-access requests (KEP-5018) are
    left out of the joint allocation; each pod with one must allocate its own claims alone.
    None when it holds, else why."""
    return _check_node(dra, node, pods_in_order, distinct)[0]


def _check_node(dra: DraState, node, pods_in_order, distinct: bool = True, in_use=None, sites=None) -> tuple[str | None, dict | None]:
    """:func:`check_node` with the devices in use (default: the snapshot's) and the claims
    allocated on other nodes (claim -> :data:`gangplan.dra.rules.Site`); (why, the joint allocation)."""
    todo = []
    seen: set[str] = set()
    per_pod: list[tuple[str, list]] = []
    for p in pods_in_order:
        got, why = _demand_only(dra, p, node, sites)
        if why is not None:
            return f"pod {p.key}: {why}", None
        mine = []
        for key, reqs in got:
            if key not in seen:
                seen.add(key)
                todo.append((key, reqs))
                mine.append((key, reqs))
        per_pod.append((p.key, mine))
    if not todo:
        return None, {}
    devices = dra.devices_by_node.get(node.name, ())
    in_use = dra.in_use if in_use is None else in_use
    if any(r.admin_access for _, reqs in todo for r in reqs):
        # KEP-5018: admin-access requests take devices in use or not and leave them free, so
        # the joint allocation is of the other requests; each pod's own claims, in its order,
        # must then be allocatable from the snapshot's free devices (an admin-access device keeps
        # the pod's later requests off it; other pods' allocations never block one).
        for pod_key, mine in per_pod:
            if not any(r.admin_access for _, reqs in mine for r in reqs):
                continue
            try:
                alone = allocate_joint(mine, devices, in_use, dra.classes, dra.consumed, constraints=dra.constraints, distinct=distinct, cache=dra.alloc_cache)
            except AllocationError as e:
                return str(e), None
            if alone is None:
                return f"{CANNOT_ALLOCATE}: the claims of {pod_key} (with admin access) cannot be allocated on the node", None
        todo = [(key, tuple(r for r in reqs if not r.admin_access)) for key, reqs in todo]
        todo = [(key, reqs) for key, reqs in todo if reqs]
        if not todo:
            return None, {}
    try:
        got = allocate_joint(todo, devices, in_use, dra.classes, dra.consumed, constraints=dra.constraints, distinct=distinct, cache=dra.alloc_cache)
    except AllocationError as e:
        return str(e), None
    if got is None:
        return f"{CANNOT_ALLOCATE}: the claims of {', '.join(sorted(p.key for p in pods_in_order))} need more matching free devices than the node has", None
    return _recount(dra, devices, [r for results in got.values() for r in results], in_use), got


def _recount(dra: DraState, devices, results, in_use=None) -> str | None:
    """KEP-5075, counted again from the joint allocation: an exclusive device is taken once and
    is neither in use nor shared; on a shared device the snapshot's consumption plus every
    consumed amount stays within each capacity value."""
    by_id = {d.id: d for d in devices}
    taken: set = set()
    total: dict = {}
    for r in results:
        d = by_id[r.device]
        if r.device in (dra.in_use if in_use is None else in_use):
            return f"{CANNOT_ALLOCATE}: device {'/'.join(r.device)} is in use"
        if r.consumed is None:
            if r.device in taken or r.device in total:
                return f"{CANNOT_ALLOCATE}: device {'/'.join(r.device)} allocated twice"
            taken.add(r.device)
            continue
        if not d.allow_multiple or r.device in taken:
            return f"{CANNOT_ALLOCATE}: device {'/'.join(r.device)} is shared but does not allow multiple allocations"
        per = total.setdefault(r.device, dict(dra.consumed.get(r.device, {})))
        for k, v in r.consumed:
            per[k] = per.get(k, 0) + v
    for did, per in total.items():
        caps = by_id[did].capacity
        for (dom, name), v in sorted(per.items()):
            if v > caps.get(dom, {}).get(name, 0):
                return f"{CANNOT_ALLOCATE}: device {'/'.join(did)} capacity {dom}/{name}: {v} consumed of {caps.get(dom, {}).get(name, 0)}"
    return None


def _demand_only(dra: DraState, pod, node, sites=None):
    from gangplan.dra.rules import demand

    todo, why = demand(dra, pod, node, sites or {})
    return todo, why


__all__ = ["capacity_view", "check_node", "replay", "try_node"]
