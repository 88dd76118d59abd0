"""The DynamicResources rules one pod on one node obeys, written once: the greedy plugin, the
exact engine's capacity rows and the validator all call these (``pkg/scheduler/framework/plugins/
dynamicresources/dynamicresources.go``, kubernetes/kubernetes v1.35: PreFilter / Filter; v1.36 for
consumable capacity, KEP-5075: what earlier allocations consume of shared devices is passed to the
allocator with the devices in use)."""

from __future__ import annotations

from collections.abc import Iterable

from gangplan.dra.allocator import (
    AllocationError,
    Consumed,
    DeviceResult,
    add_consumed,
    allocate_results,
)
from gangplan.dra.model import (
    ANYWHERE,
    CapName,
    Claim,
    DeviceID,
    DeviceRequest,
    DraState,
    NodeReach,
)

CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"
"""Filter's reasons (both UnschedulableAndUnresolvable, ``statusUnschedulable``)."""


def distinct_supported(cluster) -> bool:
    """Whether the allocator of the release ``cluster`` reproduces knows ``distinctAttribute``
    (:func:`gangplan.models.version.dra_distinct_attribute`)."""
    from gangplan.models.version import dra_distinct_attribute

    return dra_distinct_attribute(cluster.kube_version)


def uses_dra(dra: DraState | None, pod) -> bool:
    """PreFilter does not Skip: the pod has claims, or asks for an extended resource a DeviceClass maps."""
    if not dra:
        return False
    return (
        pod.key in dra.pod_claims
        or pod.key in dra.pod_missing
        or any(q > 0 and r in dra.extended for r, q in pod.requests.items())
    )


Site = str | NodeReach
"""Where a claim allocated in this run is usable: its node's name (some device is node-local), or
the :class:`NodeReach` of its multi-node devices (``status.allocation.nodeSelector``)."""


def reaches(site: Site, node) -> bool:
    return site == node.name if isinstance(site, str) else site.matches(node)


def allocation_site(dra: DraState, results: Iterable[DeviceResult], node) -> Site:
    """``createNodeSelector`` (``structured/internal/incubating/allocator_incubating.go``,
    kubernetes/kubernetes v1.36; the same in ``stable``): a claim with any node-local device is
    usable on ``node`` only; else one term ANDing every multi-node device's selector
    requirements (each once: same key, operator and set of values), and with none every node."""
    fields: list = []
    exprs: list = []
    seen: set = set()
    for r in results:
        d = dra.device(r.device)
        if d is None or d.reach is None:
            return node.name
        for term in d.reach.terms:  # (a slice's or device's nodeSelector has exactly one term)
            for into, reqs in ((fields, term.match_fields), (exprs, term.match_expressions)):
                for q in reqs:
                    k = (into is fields, q.key, q.operator, frozenset(q.values))
                    if k not in seen:
                        seen.add(k)
                        into.append(q)
    if not fields and not exprs:
        return ANYWHERE
    from gangplan.models.objects import NodeSelectorTerm

    return NodeReach(
        (NodeSelectorTerm(match_expressions=tuple(exprs), match_fields=tuple(fields)),)
    )


def demand(
    dra: DraState, pod, node, claim_node: dict[str, Site]
) -> tuple[list[tuple[str, tuple[DeviceRequest, ...]]], str | None]:
    """What ``pod`` must allocate on ``node``: (claim key, requests) pairs, or the reason the node
    is rejected before allocating. ``claim_node``: claims already allocated in this run (pending
    allocations of earlier pods) -> where they are usable (:data:`Site`)."""
    todo: list[tuple[str, tuple[DeviceRequest, ...]]] = []
    for key in dra.pod_claims.get(pod.key, ()):
        c: Claim = dra.claims[key]
        if c.allocated is not None:
            if not c.usable_on(node):
                return [], NOT_AVAILABLE
            continue
        if key in claim_node:
            if not reaches(claim_node[key], node):
                return [], NOT_AVAILABLE
            continue
        if c.unsupported is not None:
            return [], CANNOT_ALLOCATE
        if any(k == key for k, _ in todo):
            continue
        todo.append((key, c.requests))
    ext = dra.extended_requests(pod, node)
    if ext:
        todo.append((f"{pod.key}/extended-resources", ext))
    return todo, None


def try_node_results(
    dra: DraState,
    pod,
    node,
    in_use: Iterable[DeviceID],
    claim_node: dict[str, Site],
    consumed: Consumed | None = None,
    distinct: bool = True,
) -> tuple[dict[str, tuple[DeviceResult, ...]] | None, str | None]:
    """Filter: the allocation of ``pod``'s claims on ``node`` (claim key -> device results with
    the consumed capacity of shared devices; empty when nothing needs allocating), or None and the
    reason (``CANNOT_ALLOCATE``, ``NOT_AVAILABLE``, or the allocator's error text). ``consumed``:
    capacity consumed on shared devices (default: the snapshot's)."""
    todo, why = demand(dra, pod, node, claim_node)
    if why is not None:
        return None, why
    if not todo:
        return {}, None
    try:
        got = allocate_results(
            todo,
            dra.devices_by_node.get(node.name, ()),
            in_use,
            dra.classes,
            dra.consumed if consumed is None else consumed,
            dra.alloc_cache,
            dra.constraints,
            distinct,
        )
    except AllocationError as e:
        return None, str(e)
    return (got, None) if got is not None else (None, CANNOT_ALLOCATE)


def try_node(
    dra: DraState,
    pod,
    node,
    in_use: Iterable[DeviceID],
    claim_node: dict[str, Site],
    consumed: Consumed | None = None,
    distinct: bool = True,
) -> tuple[dict[str, tuple[DeviceID, ...]] | None, str | None]:
    """:func:`try_node_results` with only the device ids (claim key -> devices)."""
    got, why = try_node_results(dra, pod, node, in_use, claim_node, consumed, distinct)
    if got is None:
        return None, why
    return {k: tuple(r.device for r in v) for k, v in got.items()}, None


def replay_usage(
    dra: DraState, pods_in_order: Iterable, node, claim_node: dict[str, Site], distinct: bool = True
) -> tuple[set[DeviceID], dict[DeviceID, dict[CapName, int]], dict[str, Site]]:
    """Devices in use on ``node`` after the pending ``pods_in_order`` placed there were allocated
    one after another (Reserve, in placement order), the capacity then consumed on shared devices
    (the snapshot's included), and the claims they allocated -> node."""
    in_use = set(dra.in_use)
    consumed = {d: dict(v) for d, v in dra.consumed.items()}
    allocated: dict[str, Site] = {}
    for p in pods_in_order:
        got, _ = try_node_results(
            dra, p, node, in_use, {**claim_node, **allocated}, consumed, distinct
        )
        for key, results in (got or {}).items():
            in_use.update(
                r.device for r in results if r.takes
            )  # (not admin access: foreachAllocatedDevice)
            add_consumed(consumed, results)
            if not key.endswith("/extended-resources"):
                allocated[key] = allocation_site(dra, results, node)
    return in_use, consumed, allocated


def replay(
    dra: DraState, pods_in_order: Iterable, node, claim_node: dict[str, Site], distinct: bool = True
) -> tuple[set[DeviceID], dict[str, Site]]:
    """:func:`replay_usage` without the consumed capacity: devices in use and allocated claims."""
    in_use, _, allocated = replay_usage(dra, pods_in_order, node, claim_node, distinct)
    return in_use, allocated
