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

This is exact when the devices of different pairs on a node are disjoint (the GB200 channel and
DRA-only GPU cases); when a device matches several pairs the counts over-state what is free, and
the validator (:func:`gangplan.dra.capacity.check_node`) is what catches a wrong placement.
A claim shared by several pending pods is one allocation: its pods carry a required pod affinity
term on a per-node label (same node) and a row only nodes able to allocate the claim alone offer
(its devices are not subtracted from what other claims see there).
"""

from __future__ import annotations

import weakref

from gangplan.dra.allocator import AllocationError, allocate, matches
from gangplan.dra.model import DeviceRequest, DraState
from gangplan.dra.rules import CANNOT_ALLOCATE, replay, try_node
from gangplan.models.objects import LabelSelector, PodAffinityTerm


def _fits_alone(dra: DraState, node, key: str) -> bool:
    """Whether ``node`` can allocate claim ``key`` from its free devices, alone."""
    try:
        return allocate([(key, dra.claims[key].requests)], dra.devices_by_node.get(node.name, ()), dra.in_use, dra.classes) is not None
    except AllocationError:
        return False

PREFIX = "dra.gangplan.io/"
NODE_LABEL = PREFIX + "node"
"""A label naming the node itself, the topology key of the shared-claim affinity terms."""
_BIG = 1 << 40
_VIEWS: dict[int, tuple[weakref.ref, object]] = {}


def _count(dra: DraState, node, request: DeviceRequest) -> int:
    one = DeviceRequest(name=request.name, device_class=request.device_class, selectors=request.selectors, count=1)
    try:
        return sum(1 for d in dra.devices_by_node.get(node.name, ()) if d.id not in dra.in_use and matches(d, one, dra.classes))
    except AllocationError:
        return 0


def capacity_view(cluster):
    """``cluster`` with DRA demands and supplies as resources (itself without DRA); cached."""
    dra: DraState | None = cluster.dra
    if not dra:
        return cluster
    got = _VIEWS.get(id(cluster))
    if got is not None and got[0]() is cluster:
        return got[1]
    dims: dict[tuple, str] = {}
    pod_extra: dict[str, dict[str, int]] = {}
    node_extra: dict[str, dict[str, int]] = {n.name: {} for n in cluster.nodes}
    users: dict[str, list[str]] = {}
    for p in cluster.pending_pods:
        for key in dra.pod_claims.get(p.key, ()):
            users.setdefault(key, []).append(p.key)
    shared = {k for k, v in users.items() if len(v) > 1 and dra.claims[k].allocated is None and dra.claims[k].unsupported is None}
    pod_shared: dict[str, list[str]] = {}
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
            for r in c.requests:
                name = dims.setdefault(("request", r.device_class, r.selectors), f"{PREFIX}{len(dims)}")
                extra[name] = extra.get(name, 0) + r.count
        for r, q in p.requests.items():
            cls = dra.extended.get(r)
            if cls is not None and q > 0:  # every name of one class draws on one row (explicit and implicit)
                name = f"{PREFIX}class-{cls}"
                extra[name] = extra.get(name, 0) + q
        if extra:
            pod_extra[p.key] = extra
    for n in cluster.nodes:
        for (kind, *rest), name in dims.items():
            if kind == "request":
                node_extra[n.name][name] = _count(dra, n, DeviceRequest(name="", device_class=rest[0], selectors=rest[1]))
            elif kind == "shared":
                node_extra[n.name][name] = _BIG if _fits_alone(dra, n, rest[0]) else 0
        served = dra.mapped_on(n)
        for cls in sorted(set(dra.extended.values())):
            names = [r for r, c in dra.extended.items() if c == cls]
            row = f"{PREFIX}class-{cls}"
            if any(r in served for r in names):
                node_extra[n.name][row] = _count(dra, n, DeviceRequest(name="", device_class=cls))  # bound pods' devices are in use
                for r in names:
                    if r in served:
                        node_extra[n.name][r] = _BIG  # the class row holds the devices
            else:
                node_extra[n.name][row] = _BIG  # served by a device plugin here: its allocatable binds
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
    view = type(cluster)(**{**fields, "nodes": nodes, "pods": pods})
    _VIEWS[id(cluster)] = (weakref.ref(cluster), view)
    return view


def check_node(dra: DraState, node, pods_in_order) -> str | None:
    """The validator's independent check of one node: one joint allocation of every new pod's
    claims (and KEP-5004 extended requests) from the node's free devices, by backtracking over
    all of them at once, must exist (distinct matching devices, none used twice), and claims
    allocated in the snapshot must be usable on the node. None when it holds, else why."""
    todo = []
    seen: set[str] = set()
    for p in pods_in_order:
        got, why = _demand_only(dra, p, node)
        if why is not None:
            return f"pod {p.key}: {why}"
        for key, reqs in got:
            if key not in seen:
                seen.add(key)
                todo.append((key, reqs))
    if not todo:
        return None
    try:
        ok = allocate(todo, dra.devices_by_node.get(node.name, ()), dra.in_use, dra.classes)
    except AllocationError as e:
        return str(e)
    return None if ok is not None else f"{CANNOT_ALLOCATE}: the claims of {', '.join(sorted(p.key for p in pods_in_order))} need more matching free devices than the node has"


def _demand_only(dra: DraState, pod, node):
    from gangplan.dra.rules import demand

    todo, why = demand(dra, pod, node, {})
    return todo, why


__all__ = ["capacity_view", "check_node", "replay", "try_node"]
