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
(:func:`shared_claim_rows`).

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
matches), which makes the counts exact for ExactCount requests of exclusive devices.

Modules: :mod:`gangplan.dra.capacity_rows` (the view's resource names and the records beside it,
with their readers), :mod:`gangplan.dra.device_counts` (per-node device counts),
:mod:`gangplan.dra.row_families` (per-value, counter, multi-node and Hall rows) and
:mod:`gangplan.dra.node_check` (the validator's check); this module builds the view
(:class:`_ViewBuilder`) and re-exports their names.
"""

from __future__ import annotations

from collections import Counter

from gangplan.dra.capacity_rows import (
    _BIG,
    NODE_LABEL,
    PREFIX,
    AlignedConstraint,
    CapacityRows,
    _held,
)
from gangplan.dra.capacity_rows import HALL_MAX_PAIRS as HALL_MAX_PAIRS
from gangplan.dra.capacity_rows import AlignedRows as AlignedRows
from gangplan.dra.capacity_rows import CounterRows as CounterRows
from gangplan.dra.capacity_rows import MultiRows as MultiRows
from gangplan.dra.capacity_rows import NodeCounters as NodeCounters
from gangplan.dra.capacity_rows import PairKey as PairKey
from gangplan.dra.capacity_rows import aligned_rows as aligned_rows
from gangplan.dra.capacity_rows import all_rows as all_rows
from gangplan.dra.capacity_rows import counter_rows as counter_rows
from gangplan.dra.capacity_rows import first_available_rows as first_available_rows
from gangplan.dra.capacity_rows import multi_node_rows as multi_node_rows
from gangplan.dra.capacity_rows import shared_claim_rows as shared_claim_rows
from gangplan.dra.capacity_rows import view_rows as view_rows
from gangplan.dra.capacity_rows import view_source as view_source
from gangplan.dra.device_counts import _admin_count, _all_count, _count, _fits_alone, _Shareable
from gangplan.dra.device_counts import _left as _left
from gangplan.dra.device_counts import _mask as _mask
from gangplan.dra.device_counts import _serves as _serves
from gangplan.dra.model import CapName, DeviceRequest, DraState, probe, selector_key
from gangplan.dra.node_check import _across_nodes as _across_nodes
from gangplan.dra.node_check import _check_node as _check_node
from gangplan.dra.node_check import _demand_only as _demand_only
from gangplan.dra.node_check import _recount as _recount
from gangplan.dra.node_check import check_node
from gangplan.dra.node_check import check_nodes as check_nodes
from gangplan.dra.row_families import _aligned, _counter_rows, _hall_rows, _multi_rows
from gangplan.dra.rules import distinct_supported, replay, try_node
from gangplan.gcpause import gc_paused
from gangplan.models.base import Beside
from gangplan.models.objects import LabelSelector, PodAffinityTerm

RESTRICTED = "the exact optimum may be below the true one"
"""How every warning of a part of the snapshot the exact model leaves out ends: those warnings are
the view's ``CapacityRows.restricted``, and its bounds then hold for less than the snapshot
(:func:`gangplan.solver.diff.proof.restricted_model`)."""


def capacity_view(cluster):
    """``cluster`` with DRA demands and supplies as resources (itself without DRA); cached. Built
    with the cyclic collector paused (:mod:`gangplan.gcpause`: a copy of every node and pod
    holds no cycles, and the collections its allocations trigger cost the exact engine more than
    the view itself)."""
    with gc_paused():
        return _capacity_view(cluster)


def _capacity_view(cluster):
    """:func:`capacity_view` without pausing the collector."""
    dra: DraState | None = cluster.dra
    if not dra:
        return cluster
    cached = _held(cluster, "_dra_view")
    if cached is not None:
        return cached
    return _ViewBuilder(cluster, dra).build()


class _ViewBuilder:
    """One capacity view in the making (module docstring): the pending pods' demands, one
    resource per kind of row (``dims``: row key -> resource name, named in the order first met),
    then each node's supply of every row, the Hall rows over overlapping pairs, the exact engine's
    DRA families beside the view and the warnings that name its relaxations."""

    def __init__(self, cluster, dra: DraState) -> None:
        self.cluster = cluster
        self.dropped = len(dra.multi_node) - len(dra.local_only(keep_plain=True).multi_node)
        self.dra = dra.local_only(
            keep_plain=True
        )  # (multi-node devices with counters or shares are not offered: module docstring)
        self.distinct = distinct_supported(cluster)
        self.dims: dict[tuple, str] = {}
        self.pod_extra: dict[str, dict[str, int]] = {}
        self.node_extra: dict[str, dict[str, int]] = {n.name: {} for n in cluster.nodes}
        users: dict[str, list[str]] = {}
        for p in cluster.pending_pods:
            for key in self.dra.pod_claims.get(p.key, ()):
                users.setdefault(key, []).append(p.key)
        claims = self.dra.claims
        self.shared = {
            k
            for k, v in users.items()
            if len(v) > 1 and claims[k].allocated is None and claims[k].unsupported is None
        }
        self.pod_shared: dict[str, list[str]] = {}
        self.pairs: dict[tuple, _Shareable | None] = {}
        self.aligned: dict[str, tuple[str, tuple[AlignedConstraint, ...]]] = {}
        self.consumers: list[tuple[dict, str, tuple, CapName, int, int]] = []
        self.all_claims: dict[str, str] = {}
        self.fa_alts: dict[str, list] = {}
        self.admin_pods: dict[str, object] = {}
        self.shared_demand: dict[str, list[tuple[str, int]] | None] = {}
        self.all_rows: dict[str, list[tuple[str, str, int]]] = {}
        self.thresholds: dict[tuple, str] = {}
        self.asked: set[str] = set()

    def build(self):
        """The view: pods' demands, capacity thresholds, nodes' supplies, Hall rows, then the
        copy of the cluster with them and the records beside it."""
        for p in self.cluster.pending_pods:
            self._pod(p)
        self._thresholds()
        self.asked = {
            name[len(PREFIX) + len("class-") :]
            for extra in self.pod_extra.values()
            for name in extra
            if name.startswith(PREFIX + "class-")
        }
        for n in self.cluster.nodes:
            self._node(n)
        probes = [
            (name, probe(rest[0], rest[1], rest[2] if len(rest) > 2 else ()))
            for (kind, *rest), name in self.dims.items()
            if kind == "request"
        ]
        probes += [
            (f"{PREFIX}class-{cls}", DeviceRequest(name="", device_class=cls))
            for cls in sorted(self.asked)
        ]
        hall, hall_relaxed = _hall_rows(
            self.dra, self.cluster.nodes, probes, self.node_extra, self.distinct
        )
        for row, members in hall.items():
            for extra in self.pod_extra.values():
                need = sum(extra.get(m, 0) for m in members)
                if need:
                    extra[row] = need
        return self._view(probes, hall, hall_relaxed)

    def _dim(self, key: tuple, kind: str) -> str:
        """The resource of row ``key``, named ``<prefix><kind><n>`` when first met."""
        return self.dims.setdefault(key, f"{PREFIX}{kind}{len(self.dims)}")

    def _shareable(self, r: DeviceRequest) -> _Shareable | None:
        """The rows of ``r``'s pair when some free device it matches is shared, else None."""
        key = (r.device_class, selector_key(r))
        if key not in self.pairs:
            sh = _Shareable(self.dra, r.device_class, key[1])
            self.pairs[key] = (
                sh
                if any(d.allow_multiple for n in self.dra.devices_by_node for d in sh.devices(n))
                else None
            )
        return self.pairs[key]

    # The pending pods' demands.

    def _pod(self, p) -> None:
        dra = self.dra
        extra: dict[str, int] = {}
        if p.key in dra.pod_missing:
            extra[PREFIX + "unallocatable"] = 1
        for key in dra.pod_claims.get(p.key, ()):
            self._claim(p, key, dra.claims[key], extra)
        for r, q in p.requests.items():
            cls = dra.extended.get(r)
            if (
                cls is not None and q > 0
            ):  # every name of one class draws on one row (explicit and implicit)
                name = f"{PREFIX}class-{cls}"
                extra[name] = extra.get(name, 0) + q
        self._admin_pod(p, extra)
        if extra:
            self.pod_extra[p.key] = extra

    def _claim(self, p, key: str, c, extra: dict[str, int]) -> None:
        if key in self.shared:
            self._shared_claim(p, key, c, extra)
            return
        if c.allocated is not None:
            if c.allocated_nodes is not None:
                name = self._dim(("claim", key), "claim-")
                extra[name] = 1
                for n in c.allocated_nodes:
                    if n in self.node_extra:
                        self.node_extra[n][name] = _BIG
            return
        if c.unsupported is not None:
            extra[PREFIX + "unallocatable"] = 1
            return
        if c.constraints:
            self._aligned_claim(key, c, extra)
        if any(r.all or r.alternatives for r in c.requests):
            self._all_claim(key, c, extra)
        for r in c.requests:
            if not (r.all or r.alternatives):
                self._request(r, extra)

    def _shared_claim(self, p, key: str, c, extra: dict[str, int]) -> None:
        """One allocation for all its pods: a same-node constraint (required pod affinity on a
        per-node label) and a row that only nodes able to hold the claim offer."""
        name = self._dim(("shared", key), "shared-")
        extra[name] = 1
        self.pod_shared.setdefault(p.key, []).append(name)
        if name not in self.shared_demand:
            # Its devices, once per node its pods land on (add_shared_claim_rows), for plain
            # ExactCount requests; anything else stays a relaxation the validator decides.
            plain = not c.constraints and all(
                not (r.all or r.alternatives or r.capacity or r.admin_access)
                and self._shareable(r) is None
                for r in c.requests
            )
            self.shared_demand[name] = (
                [
                    (self._dim(("request", r.device_class, selector_key(r)), ""), r.count)
                    for r in c.requests
                ]
                if plain
                else None
            )

    def _aligned_claim(self, key: str, c, extra: dict[str, int]) -> None:
        """matchAttribute / distinctAttribute: one unit per claim of its shape, and per-value rows
        in the exact engine (AlignedRows); the requests still count."""
        shape = (
            tuple(
                (r.name, r.device_class, r.selectors, r.count, r.capacity, r.tolerations)
                for r in c.requests
            ),
            c.constraints,
        )
        name = self._dim(("aligned", shape), "aligned-")
        extra[name] = extra.get(name, 0) + 1
        if name not in self.aligned:
            shaped = []
            for k in c.constraints:
                got: Counter = Counter()
                for r in c.requests:
                    if k.applies(r.name):
                        got[(r.device_class, selector_key(r), r.capacity)] += r.count
                shaped.append(
                    AlignedConstraint(k.kind, k.attribute, tuple(sorted(got.items(), key=repr)))
                )
            self.aligned[name] = (key, tuple(shaped))

    def _all_claim(self, key: str, c, extra: dict[str, int]) -> None:
        """allocationMode All / firstAvailable: one unit of the claim's shape, offered where the
        claim fits alone. Per All request one unit of its pair's ``all`` row, 1 where every
        matching device is free, and (exact engine, add_all_rows) no other request of the pair
        next to it. Per firstAvailable request one unit of its ``fa`` row, which the exact engine
        splits over the subrequests (add_first_available_rows)."""
        shape = tuple(
            (
                r.name,
                r.device_class,
                r.selectors,
                r.count,
                r.capacity,
                r.all,
                r.alternatives,
                r.tolerations,
            )
            for r in c.requests
        )
        name = self._dim(("allclaim", shape), "allclaim-")
        extra[name] = extra.get(name, 0) + 1
        self.all_claims.setdefault(name, key)
        for r in c.requests:
            if r.alternatives:
                row = self._dim(("fa", shape, r.name), "fa-")
                extra[row] = extra.get(row, 0) + 1
                if row not in self.fa_alts:
                    self.fa_alts[row] = [self._offered(a) for a in r.alternatives]
            if r.all:
                row = self._dim(("all", r.device_class, selector_key(r), r.capacity), "all-")
                extra[row] = extra.get(row, 0) + 1

    def _offered(self, a: DeviceRequest) -> tuple[str, int] | None:
        """A subrequest as the exact engine offers it: (its pair's device-count resource, devices
        per claim); None for one it does not offer (conservative)."""
        if a.all or a.capacity or self._shareable(a) is not None:
            return None
        return self._dim(("request", a.device_class, selector_key(a)), ""), a.count

    def _request(self, r: DeviceRequest, extra: dict[str, int]) -> None:
        """An ExactCount request: devices of its pair; with admin access (KEP-5018) no device
        count nor capacity row (the devices stay free for other claims) but a row only nodes with
        ``count`` devices it can take offer; on a pair with shared devices, capacity rows
        (KEP-5075, module docstring)."""
        if r.admin_access:
            name = self._dim(
                ("admin", r.device_class, selector_key(r), r.capacity, r.count), "admin-"
            )
            extra[name] = 1
            return
        sh = self._shareable(r)
        if sh is None:
            key = (
                ("request", r.device_class, selector_key(r))
                if not r.capacity
                else ("request", r.device_class, selector_key(r), r.capacity)
            )
            name = self._dim(key, "")
            extra[name] = extra.get(name, 0) + r.count
            return
        name = self._dim(("serves", r), "serves-")
        extra[name] = 1
        for cap, q in sh.demand(r).items():
            row = self._dim(("cap", r.device_class, selector_key(r), cap), "cap-")
            extra[row] = extra.get(row, 0) + r.count * q
            self.consumers.append((extra, r.device_class, selector_key(r), cap, q, r.count))

    def _admin_pod(self, p, extra: dict[str, int]) -> None:
        """KEP-5018: within the pod an admin-access device keeps its later requests off it, which
        the rows of its requests do not see: a row only nodes where the pod's claims fit alone
        offer."""
        dra = self.dra
        mine = [
            dra.claims[k]
            for k in dra.pod_claims.get(p.key, ())
            if k not in self.shared and dra.claims[k].allocated is None
        ]
        if (
            any(r.admin_access for c in mine for r in c.requests)
            and sum(len(c.requests) for c in mine) > 1
        ):
            shape = (
                tuple((c.requests, c.constraints) for c in mine),
                tuple(sorted((r, q) for r, q in p.requests.items() if r in dra.extended)),
            )
            name = self._dim(("adminpod", shape), "adminpod-")
            extra[name] = 1
            self.admin_pods.setdefault(name, p)

    def _thresholds(self) -> None:
        """KEP-5075: per capacity and each amount ``a`` pending requests consume, the consumers
        of at least ``a``."""
        for extra, cls, sel, cap, q, count in self.consumers:
            for a in sorted(self.pairs[(cls, sel)].amounts[cap]):
                if q >= a:
                    row = self.thresholds.setdefault(
                        (cls, sel, cap, a), f"{PREFIX}cap-{len(self.dims) + len(self.thresholds)}"
                    )
                    extra[row] = extra.get(row, 0) + count

    # The nodes' supplies.

    def _node(self, n) -> None:
        extra = self.node_extra[n.name]
        for (kind, *rest), name in self.dims.items():
            supply = self.SUPPLY.get(kind)
            if supply is not None:
                extra[name] = supply(self, n, name, rest)
        for (cls, sel, cap, a), name in self.thresholds.items():
            extra[name] = self.pairs[(cls, sel)].supply(n.name, cap, a)
        dra, served = self.dra, self.dra.mapped_on(n)
        for cls in sorted(set(dra.extended.values())):
            names = [r for r, c in dra.extended.items() if c == cls]
            row = f"{PREFIX}class-{cls}"
            if any(r in served for r in names):
                if cls in self.asked:  # (a row no pending pod draws on is left out)
                    extra[row] = _count(
                        dra, n, DeviceRequest(name="", device_class=cls), self.distinct
                    )  # bound pods' devices are in use
                for r in names:
                    if r in served:
                        extra[r] = _BIG  # the class row holds the devices
            else:
                extra[row] = _BIG  # served by a device plugin here: its allocatable binds

    def _request_supply(self, n, name: str, rest: list) -> int:
        return _count(
            self.dra, n, probe(rest[0], rest[1], rest[2] if len(rest) > 2 else ()), self.distinct
        )

    def _serves_supply(self, n, name: str, rest: list) -> int:
        return _BIG if _count(self.dra, n, rest[0], self.distinct) >= rest[0].count else 0

    def _cap_supply(self, n, name: str, rest: list) -> int:
        return self.pairs[(rest[0], rest[1])].supply(n.name, rest[2], None)

    def _adminpod_supply(self, n, name: str, rest: list) -> int:
        return (
            _BIG
            if try_node(
                self.dra, self.admin_pods[name], n, self.dra.in_use, {}, None, self.distinct
            )[0]
            is not None
            else 0
        )

    def _admin_supply(self, n, name: str, rest: list) -> int:
        return (
            _BIG
            if _admin_count(
                self.dra, n, probe(rest[0], rest[1], rest[2], admin_access=True), self.distinct
            )
            >= rest[3]
            else 0
        )

    def _shared_supply(self, n, name: str, rest: list) -> int:
        return _BIG if _fits_alone(self.dra, n, rest[0], self.distinct) else 0

    def _aligned_supply(self, n, name: str, rest: list) -> int:
        return _BIG if _fits_alone(self.dra, n, self.aligned[name][0], self.distinct) else 0

    def _fa_supply(self, n, name: str, rest: list) -> int:
        return _BIG  # (the claim's row says where it fits)

    def _allclaim_supply(self, n, name: str, rest: list) -> int:
        return _BIG if _fits_alone(self.dra, n, self.all_claims[name], self.distinct) else 0

    def _all_supply(self, n, name: str, rest: list) -> int:
        """1 where every device matching the All request is free; the node's matching devices
        go to :attr:`CapacityRows.all` beside the pair's device-count row."""
        total, free = _all_count(
            self.dra, n, probe(rest[0], rest[1], rest[2], all=True), self.distinct
        )
        if total:
            req_row = (
                self.dims.get(("request", *rest[:2]))
                if not rest[2]
                else self.dims.get(("request", *rest))
            )
            if req_row is not None:
                self.all_rows.setdefault(n.name, []).append((name, req_row, total))
        return 1 if total and total == free else 0

    SUPPLY = {
        "request": _request_supply,
        "serves": _serves_supply,
        "cap": _cap_supply,
        "adminpod": _adminpod_supply,
        "admin": _admin_supply,
        "shared": _shared_supply,
        "aligned": _aligned_supply,
        "fa": _fa_supply,
        "allclaim": _allclaim_supply,
        "all": _all_supply,
    }
    """Row kind -> a node's supply of such a row (``claim`` rows are set with the pods' demands)."""

    # The view.

    def _view(self, probes: list[tuple[str, DeviceRequest]], hall: dict, hall_relaxed: list):
        cluster, dra, distinct = self.cluster, self.dra, self.distinct
        nodes = tuple(self._node_copy(n) for n in cluster.nodes)
        pods = tuple(self._pod_copy(p) for p in cluster.pods)
        fields = {f: getattr(cluster, f) for f in type(cluster).model_fields}
        rows = (
            _aligned(dra, cluster.nodes, {name: cons for name, (_, cons) in self.aligned.items()})
            if self.aligned
            else None
        )
        crows = _counter_rows(dra, cluster.nodes, probes) if distinct else None
        mrows = _multi_rows(dra, cluster.nodes, probes, distinct) if dra.multi_node else None
        warnings, restricted = self._warnings(rows, crows, mrows, hall, hall_relaxed)
        if warnings:
            fields["warnings"] = (*fields.get("warnings", ()), *warnings)
        view = type(cluster)(**{**fields, "nodes": nodes, "pods": pods})
        demands = {k: v for k, v in self.shared_demand.items() if v}
        view._dra_rows = Beside(
            (
                view,
                CapacityRows(
                    aligned=rows,
                    counters=crows,
                    all=self.all_rows or None,
                    first_available=self.fa_alts or None,
                    multi=mrows,
                    shared=demands or None,
                    restricted=tuple(restricted),
                ),
            )
        )
        view._dra_source = Beside((view, cluster))
        cluster._dra_view = Beside((cluster, view))
        return view

    def _node_copy(self, n):
        extra = self.node_extra[n.name]
        update: dict = {"allocatable": {**n.allocatable, **extra}} if extra else {}
        if self.shared:
            update["labels"] = {**n.labels, NODE_LABEL: n.name}
        return n.model_copy(update=update) if update else n

    def _pod_copy(self, p):
        if p.key not in self.pod_extra:
            return p
        update: dict = {"requests": {**p.requests, **self.pod_extra[p.key]}}
        if p.key in self.pod_shared:
            names = self.pod_shared[p.key]
            labels = {**p.labels, **{name: "true" for name in names}}
            terms = tuple(
                PodAffinityTerm(
                    label_selector=LabelSelector(match_labels={name: "true"}),
                    topology_key=NODE_LABEL,
                )
                for name in names
            )
            update["labels"] = labels
            update["affinity"] = p.affinity.model_copy(
                update={"pod_affinity_required": p.affinity.pod_affinity_required + terms}
            )
        return p.model_copy(update=update)

    def _warnings(
        self, rows, crows, mrows, hall: dict, hall_relaxed: list
    ) -> tuple[list[str], list[str]]:
        """What the view's rows leave to the validator, or where the exact optimum may be below
        the true one: (every warning, those of the second kind)."""
        out: list[str] = []
        restricted: list[str] = []
        if rows is not None and rows.relaxed:
            first = sorted(rows.relaxed)[0]
            out.append(
                f"exact engine: the device rows of claims with matchAttribute / distinctAttribute constraints are "
                f"not exact on {len(rows.relaxed)} node(s) (e.g. {first}: {rows.relaxed[first]}): there the exact engine places at most "
                f"one such claim per node"
            )
        if crows is not None and crows.relaxed:
            first = sorted(crows.relaxed)[0]
            out.append(
                f"exact engine: the shared-counter rows of partitionable devices are not exact on "
                f"{len(crows.relaxed)} node(s) (e.g. {first}: {crows.relaxed[first]}): the validator decides there"
            )
        if hall_relaxed:
            out.append(
                f"exact engine: {len(hall_relaxed)} group(s) of more than {HALL_MAX_PAIRS} device requests "
                f"match overlapping devices (e.g. {', '.join(hall_relaxed[0][:3])}, ...): their device rows are a relaxation there, "
                "the validator decides"
            )
        if any(None in v for v in self.fa_alts.values()):
            out.append(
                "exact engine: firstAvailable subrequests with allocationMode All, capacity requests or "
                "shared devices are not offered by the exact engine (the greedy engine and the validator allocate them): "
                f"{RESTRICTED}"
            )
            restricted.append(out[-1])
        if self.dropped:
            out.append(
                f"exact engine: {self.dropped} device(s) of multi-node ResourceSlices (nodeSelector / allNodes / "
                "perDeviceNodeSelection) consume shared counters or allow multiple allocations and are not offered by the exact engine "
                f"(the greedy engine and the validator allocate them): {RESTRICTED}"
            )
            restricted.append(out[-1])
        if mrows is not None and self.shared:
            out.append(
                f"exact engine: {len(self.shared)} claim(s) shared by several pending pods keep their pods on one "
                "node, which multi-node devices do not require (kube-scheduler may spread them over the nodes one allocation "
                f"reaches): {RESTRICTED}"
            )
            restricted.append(out[-1])
        if mrows is not None and (self.all_rows or rows is not None or hall):
            out.append(
                "exact engine: multi-node devices are counted across nodes for ExactCount requests; "
                "allocationMode All, matchAttribute / distinctAttribute and overlapping requests see them per node, a relaxation "
                "the validator decides"
            )
        return out, restricted


__all__ = ["capacity_view", "check_node", "replay", "try_node"]
