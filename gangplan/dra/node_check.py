"""The validator's DRA check of a placement (:mod:`gangplan.solver.validate`): per node, one joint
allocation of every new pod's claims from the node's free devices must exist
(:func:`check_node`); with multi-node devices, the nodes one after another and, where that
fails, jointly (:func:`check_nodes`). Consumable capacity (KEP-5075) is counted again from the
joint allocation (:func:`_recount`)."""

from __future__ import annotations

from gangplan.dra.allocator import _joint_by_model, allocate_joint
from gangplan.dra.counting import _SEARCH
from gangplan.dra.matching import AllocationError, DeviceResult
from gangplan.dra.model import DraState
from gangplan.dra.rules import CANNOT_ALLOCATE, allocation_site, demand
from gangplan.predicates.devices import share_fits


def check_nodes(
    dra: DraState,
    placed: list[tuple[object, list]],
    distinct: bool = True,
    named: dict[str, tuple[tuple[str, str, str, str, str], ...]] | None = None,
) -> list[tuple[str, str]]:
    """The validator's check with multi-node devices (:attr:`DraState.multi_node`): ``placed``
    (node, its new pods in order) for every node with new pods using DRA, in node order. Each
    node must have a joint allocation (:func:`check_node`) from what the snapshot's claims leave,
    less the multi-node devices the nodes before it took and those the Result names for pods on
    other nodes (``named``: pod key -> (claim, request, driver, pool, device)). A claim whose pods
    are on several nodes is allocated once: with the devices the Result names for it when it names
    any (:func:`gangplan.dra.results.check_named` checks them), else on the first of its nodes;
    its allocation must be usable on every other (``status.allocation.nodeSelector``,
    :func:`gangplan.dra.rules.allocation_site`). (node or claim, why) per problem."""
    claim_nodes = _claim_nodes(dra, placed)
    by_claim = _named_by_claim(placed, named or {})
    out: list[tuple[str, str]] = []
    used = set(dra.in_use)
    sites = _named_sites(dra, placed, claim_nodes, by_claim, used)
    multi = dra.multi_node
    named_multi: dict[
        str, set
    ] = {}  # node -> the multi-node devices named for its pods' claims (not shared across nodes)
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


def _claim_nodes(dra: DraState, placed: list[tuple[object, list]]) -> dict[str, list[str]]:
    """Claim not allocated in the snapshot -> the nodes of its new pods, in node order."""
    claim_nodes: dict[str, list[str]] = {}
    for node, pods in placed:
        for p in pods:
            for key in dra.pod_claims.get(p.key, ()):
                if dra.claims[key].allocated is None and node.name not in claim_nodes.setdefault(
                    key, []
                ):
                    claim_nodes[key].append(node.name)
    return claim_nodes


def _named_by_claim(
    placed: list[tuple[object, list]], named: dict[str, tuple[tuple[str, str, str, str, str], ...]]
) -> dict[str, list]:
    """Claim key -> (node of the pod, device) for each device the Result names for it."""
    by_claim: dict[str, list] = {}
    for node, pods in placed:
        for p in pods:
            for claim, _, driver, pool, device in named.get(p.key, ()):
                by_claim.setdefault(f"{p.namespace}/{claim}", []).append(
                    (node.name, (driver, pool, device))
                )
    return by_claim


def _named_sites(
    dra: DraState,
    placed: list[tuple[object, list]],
    claim_nodes: dict[str, list[str]],
    by_claim: dict[str, list],
    used: set,
) -> dict:
    """Claims shared across nodes with devices named on their first node: claim -> where that
    allocation is usable (its multi-node devices added to ``used``)."""
    sites: dict = {}
    for key, where in claim_nodes.items():
        devs = [d for n, d in by_claim.get(key, ()) if n == where[0]]
        if len(where) > 1 and devs:
            sites[key] = allocation_site(
                dra,
                [DeviceResult("", d) for d in devs],
                next(node for node, _ in placed if node.name == where[0]),
            )
            used.update(d for d in devs if d in dra.multi_node)
    return sites


def _across_nodes(dra: DraState, placed: list[tuple[object, list]], partitionable: bool):
    """Whether every new pod's claims on every node have one joint allocation, a claim whose pods
    are on several nodes taking only devices every one of them reaches (plain ExactCount claims:
    :func:`gangplan.dra.allocator._joint_by_model` over all the nodes' devices at once); the
    allocation, None when none exists, ``_SEARCH`` when the claims are not plain."""
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
        return _joint_by_model(
            claims,
            list(devices.values()),
            set(dra.in_use),
            dra.classes,
            dra.consumed,
            dra.constraints,
            partitionable,
            allowed,
        )
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


def _check_node(
    dra: DraState, node, pods_in_order, distinct: bool = True, in_use=None, sites=None
) -> tuple[str | None, dict | None]:
    """:func:`check_node` with the devices in use (default: the snapshot's) and the claims
    allocated on other nodes (claim -> :data:`gangplan.dra.rules.Site`); (why, the joint allocation)."""
    why, todo, per_pod = _node_demand(dra, node, pods_in_order, sites)
    if why is not None:
        return why, None
    if not todo:
        return None, {}
    devices = dra.devices_by_node.get(node.name, ())
    in_use = dra.in_use if in_use is None else in_use
    if any(r.admin_access for _, reqs in todo for r in reqs):
        why = _admin_pods_alone(dra, devices, in_use, per_pod, distinct)
        if why is not None:
            return why, None
        todo = [(key, tuple(r for r in reqs if not r.admin_access)) for key, reqs in todo]
        todo = [(key, reqs) for key, reqs in todo if reqs]
        if not todo:
            return None, {}
    try:
        got = allocate_joint(
            todo,
            devices,
            in_use,
            dra.classes,
            dra.consumed,
            constraints=dra.constraints,
            distinct=distinct,
            cache=dra.alloc_cache,
        )
    except AllocationError as e:
        return str(e), None
    if got is None:
        return (
            f"{CANNOT_ALLOCATE}: the claims of {', '.join(sorted(p.key for p in pods_in_order))} need more matching free devices than the node has",
            None,
        )
    return _recount(dra, devices, [r for results in got.values() for r in results], in_use), got


def _node_demand(
    dra: DraState, node, pods_in_order, sites
) -> tuple[str | None, list, list[tuple[str, list]]]:
    """(why a pod cannot use the node, else None; every claim the pods need allocated, each once,
    with its requests, in pod order; per pod, the claims it brings first)."""
    todo = []
    seen: set[str] = set()
    per_pod: list[tuple[str, list]] = []
    for p in pods_in_order:
        got, why = _demand_only(dra, p, node, sites)
        if why is not None:
            return f"pod {p.key}: {why}", [], []
        mine = []
        for key, reqs in got:
            if key not in seen:
                seen.add(key)
                todo.append((key, reqs))
                mine.append((key, reqs))
        per_pod.append((p.key, mine))
    return None, todo, per_pod


def _admin_pods_alone(
    dra: DraState, devices, in_use, per_pod: list[tuple[str, list]], distinct: bool
) -> str | None:
    """KEP-5018: admin-access requests take devices in use or not and leave them free, so the
    joint allocation is of the other requests; each pod's own claims, in its order, must then be
    allocatable from the snapshot's free devices (an admin-access device keeps the pod's later
    requests off it; other pods' allocations never block one). Why not, or None."""
    for pod_key, mine in per_pod:
        if not any(r.admin_access for _, reqs in mine for r in reqs):
            continue
        try:
            alone = allocate_joint(
                mine,
                devices,
                in_use,
                dra.classes,
                dra.consumed,
                constraints=dra.constraints,
                distinct=distinct,
                cache=dra.alloc_cache,
            )
        except AllocationError as e:
            return str(e)
        if alone is None:
            return f"{CANNOT_ALLOCATE}: the claims of {pod_key} (with admin access) cannot be allocated on the node"
    return None


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
            if not share_fits(caps.get(dom, {}).get(name, 0), v):
                return f"{CANNOT_ALLOCATE}: device {'/'.join(did)} capacity {dom}/{name}: {v} consumed of {caps.get(dom, {}).get(name, 0)}"
    return None


def _demand_only(dra: DraState, pod, node, sites=None):
    todo, why = demand(dra, pod, node, sites or {})
    return todo, why
