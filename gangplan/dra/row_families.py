"""The rows of a DRA capacity view (:mod:`gangplan.dra.capacity`) beyond plain device counts, per
node: the free devices of constrained claims' pairs by attribute value (:func:`_aligned`), the
partitionable devices and their pools' counters (KEP-4815, :func:`_counter_rows`), the
multi-node devices by the nodes that reach them (:func:`_multi_rows`), and Hall's condition
over pairs matching overlapping devices (:func:`_hall_rows`)."""

from __future__ import annotations

import itertools

from gangplan.dra.capacity_rows import (
    _BIG,
    HALL_MAX_PAIRS,
    PREFIX,
    AlignedConstraint,
    AlignedRows,
    CounterRows,
    MultiRows,
    NodeCounters,
    PairKey,
)
from gangplan.dra.counting import usable_mask
from gangplan.dra.device_counts import _mask, _serves
from gangplan.dra.matching import AllocationError, attribute_value
from gangplan.dra.model import CapName, Device, DeviceRequest, DraState, probe
from gangplan.dra.shared_counters import available_counters


def _aligned(dra: DraState, nodes, shapes: dict[str, tuple[AlignedConstraint, ...]]) -> AlignedRows:
    """Count, per node, the free exclusive devices of each (pair, attribute) by value."""
    rows = AlignedRows(shapes=shapes)
    wanted = sorted(
        {(p, c.attribute) for cons in shapes.values() for c in cons for p, _ in c.pairs}, key=repr
    )
    by_pair: dict[PairKey, list[tuple[str, ...]]] = {}
    for cons in shapes.values():
        for c in cons:
            for p, _ in c.pairs:
                by_pair.setdefault(p, []).append(c.attribute)
    overlapping = any(len(set(a)) > 1 for a in by_pair.values())
    for n in nodes:
        why: list[str] = []
        devices = dra.devices_by_node.get(n.name, ())
        per = {(pair, attr): _by_value(dra, devices, pair, attr, why) for pair, attr in wanted}
        if overlapping:
            why.append("constraints on different attributes draw on the same devices")
        if why and (any(per.values()) or any("shared" in w for w in why)):
            rows.relaxed[n.name] = why[0]
        rows.supply[n.name] = per
    return rows


def _by_value(
    dra: DraState, devices, pair: PairKey, attr: CapName, why: list[str]
) -> dict[object, int]:
    """Attribute value -> the node's free exclusive devices of ``pair`` with it (a shared device
    that serves the pair is named in ``why`` instead)."""
    req = probe(pair[0], pair[1], pair[2])
    counts: dict[object, int] = {}
    mask = usable_mask(
        devices, req, dra.classes, dra.alloc_cache, dra.in_use, dra.consumed
    )  # as _serves, cached
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
    return counts


def _multi_rows(
    dra: DraState, nodes, probes: list[tuple[str, DeviceRequest]], partitionable: bool
) -> MultiRows | None:
    """The free multi-node devices grouped by the nodes that reach them, and per device-count
    resource of ``probes`` the devices of each group and each node's own that serve it alone
    (:class:`MultiRows`); None without free multi-node devices or none serving a resource."""
    free: dict = {}
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
        one = DeviceRequest(
            name="",
            device_class=pr.device_class,
            selectors=pr.selectors,
            capacity=pr.capacity,
            tolerations=pr.tolerations,
        )
        try:
            per = {
                g: m
                for g, s in enumerate(order)
                if (m := _serving(dra, by_group[s], one, partitionable))
            }
        except AllocationError:
            continue
        if not per:
            continue
        out.serves[name] = per
        try:
            out.local[name] = {
                n.name: _serving(
                    dra,
                    [d for d in dra.devices_by_node.get(n.name, ()) if d.reach is None],
                    one,
                    partitionable,
                )
                for n in nodes
            }
        except AllocationError:
            out.local[name] = {n.name: 0 for n in nodes}
    return out if out.serves else None


def _serving(dra: DraState, devices, one: DeviceRequest, partitionable: bool) -> int:
    """How many of ``devices`` serve ``one`` alone (:func:`gangplan.dra.device_counts._serves`)."""
    return sum(1 for d in devices if _serves(dra, d, one, partitionable) is not None)


def _hall_rows(
    dra: DraState,
    nodes,
    probes: list[tuple[str, DeviceRequest]],
    node_extra: dict[str, dict[str, int]],
    partitionable: bool = True,
) -> tuple[dict[str, tuple[str, ...]], list[tuple[str, ...]]]:
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
        per = {
            name: m
            for name, req in probes
            if node_extra[n.name].get(name) != _BIG and (m := _mask(dra, n, req, partitionable))
        }
        masks[n.name] = per
        items = sorted(per.items())
        for i, (a, ma) in enumerate(items):
            for b, mb in items[i + 1 :]:
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


def _counter_rows(
    dra: DraState, nodes, probes: list[tuple[str, DeviceRequest]]
) -> CounterRows | None:
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
        nc = _node_counters(dra, n.name, devs, probes, where, out)
        if nc is not None:
            out.nodes[n.name] = nc
    return out if out.nodes else None


def _node_counters(
    dra: DraState,
    node: str,
    devs,
    probes: list[tuple[str, DeviceRequest]],
    where: dict[int, set[str]],
    out: CounterRows,
) -> NodeCounters | None:
    """One node's :class:`NodeCounters` (None when none of its devices consuming counters
    serves a pair); why its rows are a relaxation goes to ``out.relaxed``."""
    nc = NodeCounters(plain={name: 0 for name, _ in probes})
    pools: dict[int, object] = {}
    for d in devs:
        try:
            serves = tuple(name for name, probe in probes if _serves(dra, d, probe) is not None)
        except AllocationError:
            serves = ()
        if not serves:
            continue
        cp = d.counter_pool
        if d.counters and d.allow_multiple:
            out.relaxed.setdefault(
                node,
                f"device {'/'.join(d.id)} is shared (allowMultipleAllocations) and consumes counters",
            )
        if not d.counters or d.allow_multiple or cp is None:
            for name in serves:
                nc.plain[name] += 1
            continue
        if len(where.get(id(cp), ())) > 1:
            out.relaxed.setdefault(node, f"counter pool {cp.driver}/{cp.pool} spans several nodes")
        pools[id(cp)] = cp
        nc.devices.append((d.name, serves, _consumes(d, cp)))
    if not nc.devices:
        return None
    for cp in pools.values():
        for (cset, c), v in available_counters(cp, dra.in_use, dra.consumed).items():
            nc.available[(f"{cp.driver}/{cp.pool}", cset, c)] = v
    return nc


def _consumes(d: Device, cp) -> tuple[tuple[tuple[str, str, str], int], ...]:
    """((driver/pool, counter set, counter), amount) that ``d`` consumes of the counters its pool
    defines, sorted."""
    amounts: dict[tuple[str, str, str], int] = {}
    for cset, values in d.counters:
        for c, v in values:
            if c in cp.sets.get(cset, {}):
                key = (f"{cp.driver}/{cp.pool}", cset, c)
                amounts[key] = amounts.get(key, 0) + v
    return tuple(sorted(amounts.items()))
