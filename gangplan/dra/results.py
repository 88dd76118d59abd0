"""The devices each claim of a placement gets, named in the Result (both engines), and the
validator's check of those names.

One rule for both engines: per node, the pending pods placed there, in placement order, get one
joint allocation from :func:`gangplan.dra.allocator.allocate_joint` (claims of the first pod first,
then the next pod's, each claim's requests in order). When the pods' allocations one after the
other succeed (what the greedy engine's DynamicResources Filter / Reserve did, and what
kube-scheduler does), the joint depth-first search returns exactly those devices: its first full
solution starts with the first pod's first full solution. When they do not (an exact placement
kube-scheduler would reach only in another order), it returns an allocation that exists (searched
with the claims that take the most devices first).

Consumable capacity (KEP-5075): the joint allocation sees what the snapshot's shared allocations
consume (:attr:`DraState.consumed`); a device with ``allowMultipleAllocations`` may be named for
several claims, and :func:`assign_consumed` gives the ``consumedCapacity`` of each named share.

Claims allocated in the snapshot keep their allocation and are not named again. A KEP-5004
extended-resource claim (what kube-scheduler creates at PreBind, ``<pod>-extended-resources-``
plus a random suffix) is named ``<pod>-extended-resources``, its requests by the resource name.
"""

from __future__ import annotations

from collections.abc import Mapping

from gangplan.dra.allocator import (
    AllocationError,
    allocate_joint,
    available_counters,
    constraints_hold,
    consumption,
    fits,
    matches,
    selectable,
)
from gangplan.dra.model import CapName, DraState, untolerated
from gangplan.dra.rules import allocation_site, demand, distinct_supported, uses_dra
from gangplan.gcpause import gc_paused

EXTENDED_SUFFIX = "/extended-resources"
"""The key suffix :func:`gangplan.dra.rules.demand` gives a pod's extended-resource claim."""

Named = tuple[str, str, str, str, str]
"""(claim name in the pod's namespace, request, driver, pool, device)."""


def claim_name(key: str) -> str:
    """The ResourceClaim name a claim key stands for (``ns/name``; ``ns/pod/extended-resources``
    -> ``pod-extended-resources``)."""
    if key.endswith(EXTENDED_SUFFIX):
        return key[: -len(EXTENDED_SUFFIX)].split("/", 1)[1] + "-extended-resources"
    return key.split("/", 1)[1]


def request_name(request) -> str:
    return request.name.removeprefix("extended:")


def _original(cluster):
    """The snapshot a :func:`gangplan.dra.capacity.capacity_view` was made of (the exact engine's
    Instance holds the view, whose nodes offer DRA-served extended resources as allocatable)."""
    from gangplan.dra.capacity import view_source

    return view_source(cluster)


def assign_devices(cluster, placements: Mapping[str, str]) -> dict[str, tuple[Named, ...]]:
    """Pod key -> the devices its claims got on its node, for every placed pending pod using DRA
    (``placements`` in placement order). Pods sharing a claim each list it."""
    return {k: tuple(n for n, _ in v) for k, v in _assign(cluster, placements).items()}


def assign_consumed(
    cluster, placements: Mapping[str, str]
) -> dict[str, tuple[tuple[tuple[CapName, int], ...] | None, ...]]:
    """KEP-5075: per pod, the ``consumedCapacity`` of each entry :func:`assign_devices` names, in
    the same order ((domain, capacity name) -> amount; None for a device allocated exclusively)."""
    return {k: tuple(c for _, c in v) for k, v in _assign(cluster, placements).items()}


def _assign(
    cluster, placements: Mapping[str, str]
) -> dict[str, tuple[tuple[Named, tuple | None], ...]]:
    with gc_paused():  # many small acyclic objects (gangplan.gcpause)
        return _assign_paused(cluster, placements)


def _assign_paused(
    cluster, placements: Mapping[str, str]
) -> dict[str, tuple[tuple[Named, tuple | None], ...]]:
    dra: DraState | None = cluster.dra
    if not dra:
        return {}
    cluster = _original(cluster)
    by_node: dict[str, list] = {}
    for key, node in placements.items():
        p = cluster.pod_by_key.get(key)
        if p is not None and p.node_name is None and uses_dra(dra, p):
            by_node.setdefault(node, []).append(p)
    nodes = {n.name: n for n in cluster.nodes} if by_node else {}
    distinct = distinct_supported(cluster)
    if dra.multi_node and by_node:
        got = _in_order(dra, cluster, placements, nodes, distinct)
        if got is not None:
            return got
    out: dict[str, tuple] = {}
    # Multi-node devices (DraState.multi_node): one node's allocation takes them from the nodes
    # after it, and a claim allocated on one node of them is used, not allocated again, by pods on
    # the other nodes it reaches.
    used = set(dra.in_use)
    sites: dict[str, object] = {}
    done: dict[str, tuple] = {}
    for node_name, pods in by_node.items():
        node = nodes.get(node_name)
        if node is None:
            continue
        named = _name_on_node(dra, node, pods, distinct, used, sites, done)
        for k, v in (named or {}).items():
            out[k] = out.get(k, ()) + tuple(v)
    return out


def _name_on_node(
    dra: DraState, node, pods, distinct: bool, used: set, sites: dict, done: dict
) -> dict[str, list] | None:
    """Pod key -> the devices named for its claims on ``node`` (one joint allocation of the
    node's pods' claims; claims allocated on another node of their multi-node devices are
    reused, ``done``); None when the claims cannot be allocated (the validator's rule dra
    reports the node). ``used``, ``sites`` and ``done`` take what this node allocated."""
    todo, owners, reused = _node_claims(dra, node, pods, sites, done)
    alloc: dict | None = {}
    if todo:
        try:
            if any(r.admin_access for _, reqs in todo for r in reqs):
                alloc = _one_by_one(dra, pods, todo, owners, node.name, distinct, used)
            else:
                alloc = allocate_joint(
                    todo,
                    dra.devices_by_node.get(node.name, ()),
                    used,
                    dra.classes,
                    dra.consumed,
                    constraints=dra.constraints,
                    distinct=distinct,
                    cache=dra.alloc_cache,
                )
        except AllocationError:
            alloc = None
    if alloc is None:
        return None
    named: dict[str, list] = {}
    for key, reqs in todo:
        entries = _entries(key, reqs, alloc[key])
        if dra.multi_node:
            used.update(r.device for r in alloc[key] if r.takes and r.device in dra.multi_node)
            if not key.endswith(EXTENDED_SUFFIX):
                sites[key] = allocation_site(dra, alloc[key], node)
                done[key] = entries
        for pk in owners[key]:
            named.setdefault(pk, []).extend(entries)
    for key, pks in reused.items():
        for pk in pks:
            named.setdefault(pk, []).extend(done[key])
    return named


def _node_claims(
    dra: DraState, node, pods, sites: dict, done: dict
) -> tuple[list, dict[str, list[str]], dict[str, list[str]]]:
    """The claims the node's pods need allocated there (each once, with its requests, in pod
    order), claim -> the pods that use it, and claim allocated on another node (``done``) ->
    the pods here that reuse it."""
    todo: list = []
    owners: dict[str, list[str]] = {}
    reused: dict[str, list[str]] = {}
    for p in pods:
        got, why = demand(dra, p, node, sites)
        if why is not None:
            continue
        for key, reqs in got:
            if key not in owners:
                todo.append((key, reqs))
            owners.setdefault(key, []).append(p.key)
        for key in dra.pod_claims.get(p.key, ()):
            if key in done:
                reused.setdefault(key, []).append(p.key)
    return todo, owners, reused


def _entries(key: str, reqs, results) -> list[tuple[Named, tuple | None]]:
    """The named devices of claim ``key``'s ``results`` (with their consumed capacity)."""
    by_name = {r.name: r for r in reqs}
    out = []
    for res in results:
        r = by_name.get(
            res.request
        )  # (firstAvailable: <request>/<subrequest>, named as upstream's result)
        rname = request_name(r) if r is not None else res.request
        driver, pool, device = res.device
        out.append(((claim_name(key), rname, driver, pool, device), res.consumed))
    return out


def _in_order(
    dra: DraState, cluster, placements: Mapping[str, str], nodes: dict, distinct: bool
) -> dict[str, tuple] | None:
    """With multi-node devices: every placed pod's claims allocated in placement order, each on
    its node from what the pods before it left and with the claims they allocated (what the
    greedy engine's DynamicResources did, and kube-scheduler does: in-flight allocations are
    cluster-wide); None when some pod's claims cannot be allocated so (the per-node joint
    allocations then decide)."""
    from gangplan.dra.allocator import add_consumed
    from gangplan.dra.rules import try_node_results

    used = set(dra.in_use)
    consumed = {d: dict(v) for d, v in dra.consumed.items()}
    sites: dict = {}
    done: dict[str, list] = {}
    out: dict[str, list] = {}
    for key, node_name in placements.items():
        p = cluster.pod_by_key.get(key)
        node = nodes.get(node_name)
        if p is None or node is None or p.node_name is not None or not uses_dra(dra, p):
            continue
        got, _ = try_node_results(dra, p, node, used, sites, consumed, distinct)
        if got is None:
            return None
        mine = out.setdefault(key, [])
        for ck in dra.pod_claims.get(key, ()):
            if ck in done and ck not in got:
                mine.extend(done[ck])
        for ck, results in got.items():
            reqs = dra.claims[ck].requests if ck in dra.claims else dra.extended_requests(p, node)
            entries = _entries(ck, reqs, results)
            used.update(r.device for r in results if r.takes)
            add_consumed(consumed, results)
            if not ck.endswith(EXTENDED_SUFFIX):
                sites[ck] = allocation_site(dra, results, node)
                done[ck] = entries
            mine.extend(entries)
    return {k: tuple(v) for k, v in out.items() if v}


def _one_by_one(dra: DraState, pods, todo, owners, node_name: str, distinct: bool, in_use=None):
    """KEP-5018: with admin-access requests, each pod's claims in placement order, on what the
    earlier pods took (their results without admin access; Reserve's order, as
    :func:`gangplan.dra.rules.replay_usage`); None when one pod's claims cannot be allocated."""
    from gangplan.dra.allocator import add_consumed, allocate_results

    used = set(dra.in_use if in_use is None else in_use)
    consumed = {d: dict(v) for d, v in dra.consumed.items()}
    first = {key: owners[key][0] for key, _ in todo}
    out: dict = {}
    devices = dra.devices_by_node.get(node_name, ())
    for p in pods:
        mine = [(key, reqs) for key, reqs in todo if first[key] == p.key]
        if not mine:
            continue
        got = allocate_results(
            mine, devices, used, dra.classes, consumed, dra.alloc_cache, dra.constraints, distinct
        )
        if got is None:
            return None
        for results in got.values():
            used.update(r.device for r in results if r.takes)
            add_consumed(consumed, results)
        out.update(got)
    return out


def _chosen(reqs, items, pod_key: str, claim: str, out: list) -> list:
    """The requests the devices named for a claim answer: each plain request, and for a
    ``firstAvailable`` request the one subrequest its devices are named for (renamed
    ``<request>/<subrequest>``); a problem is added to ``out`` when they name several or none."""
    from dataclasses import replace

    got = []
    for r in reqs:
        if not r.alternatives:
            got.append(r)
            continue
        subs = sorted({q.split("/", 1)[1] for q, _ in items if q.startswith(r.name + "/")})
        if len(subs) != 1 or subs[0] not in {a.name for a in r.alternatives}:
            out.append(
                (
                    pod_key,
                    f"claim {claim} request {r.name}: devices named for {len(subs)} of its subrequests, not one",
                )
            )
            continue
        a = next(a for a in r.alternatives if a.name == subs[0])
        got.append(replace(a, name=f"{r.name}/{a.name}"))
    return got


def check_named(
    cluster, node_of: Mapping[str, str], named: Mapping[str, tuple[Named, ...]]
) -> list[tuple[str, str]]:
    """The validator's check of the devices a Result names: (pod key or claim, why) per problem.
    Every named device exists on the pod's node, is free in the snapshot, matches its request
    (DeviceClass and request selectors; its NoSchedule / NoExecute taints tolerated, KEP-5055, at
    the release of ``cluster``), each request gets its count, no device is named for two
    claims, and pods sharing a claim name the same devices."""
    with gc_paused():  # many small acyclic objects (gangplan.gcpause)
        return _check_named(cluster, node_of, named)


def _check_named(
    cluster, node_of: Mapping[str, str], named: Mapping[str, tuple[Named, ...]]
) -> list[tuple[str, str]]:
    dra: DraState | None = cluster.dra
    if not dra:
        return [
            (k, "names devices but the snapshot has no DRA objects") for k, v in named.items() if v
        ]
    check = _NamedCheck(cluster, dra)
    for pod_key, entries in named.items():
        check.pod(pod_key, entries, node_of.get(pod_key))
    check.shared_capacity()
    check.out.extend(
        _check_counters(cluster, dra, check.holder, {i: full for (full, _, i) in check.shares})
    )
    return check.out


class _NamedCheck:
    """:func:`check_named` pod by pod, claim by claim, request by request, device by device,
    with what the devices named so far hold; ``out`` collects (pod key or claim, why)."""

    def __init__(self, cluster, dra: DraState) -> None:
        self.cluster, self.dra = cluster, dra
        self.out: list[tuple[str, str]] = []
        self.holder: dict[
            tuple[str, str, str], str
        ] = {}  # device -> the claim it is named for exclusively
        self.shares: dict[
            tuple[str, str, tuple[str, str, str]], dict
        ] = {}  # (claim, request, device) -> what the share consumes
        self.shared_by: dict[
            tuple[str, str, str], str
        ] = {}  # device -> the first claim with a share of it
        self.claim_devices: dict[str, tuple] = {}  # claim -> the devices named for it
        self.nodes = {x.name: x for x in cluster.nodes}

    def pod(self, pod_key: str, entries: tuple[Named, ...], node: str | None) -> None:
        p = self.cluster.pod_by_key.get(pod_key)
        if node is None or p is None:
            self.out.append((pod_key, "names devices but is not placed"))
            return
        devices = {d.id: d for d in self.dra.devices_by_node.get(node, ())}
        n = self.nodes.get(node)
        expected: dict[str, tuple] = {}
        got, _ = demand(self.dra, p, n, {}) if n is not None else ([], None)
        for key, reqs in got:
            expected[claim_name(key)] = reqs
        mine: dict[str, list] = {}
        for claim, request, driver, pool, device in entries:
            mine.setdefault(claim, []).append((request, (driver, pool, device)))
        for claim, items in sorted(mine.items()):
            reqs = expected.get(claim)
            if reqs is None:
                self.out.append(
                    (
                        pod_key,
                        f"names devices for claim {claim}, which it does not allocate on {node}",
                    )
                )
                continue
            self._claim(pod_key, node, devices, claim, f"{p.namespace}/{claim}", items, reqs)

    def _claim(
        self, pod_key: str, node: str, devices: dict, claim: str, full: str, items: list, reqs
    ) -> None:
        """One claim's named devices: the same for every pod sharing it, none twice (but shares),
        each request's count, its constraints, no request it lacks."""
        out = self.out
        ids = tuple(i for _, i in items)
        if full in self.claim_devices and self.claim_devices[full] != ids:
            out.append((full, "pods sharing the claim name different devices"))
        self.claim_devices[full] = ids
        twice = [
            i
            for i in set(ids)
            if ids.count(i) > 1 and not (i in devices and devices[i].allow_multiple)
        ]
        if twice:
            out.append((pod_key, f"claim {claim} names a device twice"))
        for r in _chosen(reqs, items, pod_key, claim, out):
            self._request(pod_key, node, devices, claim, full, items, r, twice)
        self._constraints(pod_key, devices, claim, full, items)
        unknown = (
            {q for q, _ in items}
            - {request_name(r) for r in reqs}
            - {f"{r.name}/{a.name}" for r in reqs for a in r.alternatives}
        )
        for q in sorted(unknown):
            out.append((pod_key, f"claim {claim} has no request {q}"))
        for c, _, i in self.shares:
            if c == full:
                self.shared_by.setdefault(i, full)

    def _constraints(self, pod_key: str, devices: dict, claim: str, full: str, items: list) -> None:
        """The claim's matchAttribute / distinctAttribute constraints hold for the devices named
        (when all of them are on the node)."""
        cons = self.dra.constraints.get(full, ())
        if cons:
            picked = [(q, devices[i]) for q, i in items if i in devices]
            if len(picked) == len(items) and not constraints_hold(cons, picked):
                what = ", ".join(f"{c.kind}Attribute {'/'.join(c.attribute)}" for c in cons)
                self.out.append(
                    (pod_key, f"claim {claim}: the devices named break its constraints ({what})")
                )

    def _request(
        self,
        pod_key: str,
        node: str,
        devices: dict,
        claim: str,
        full: str,
        items: list,
        r,
        twice: list,
    ) -> None:
        """The devices named for one request: its count (allocationMode All: exactly every
        matching device of the node), none twice, each one checked."""
        out = self.out
        mine_r = [i for q, i in items if q == request_name(r)]
        if r.all:  # allocationMode All: exactly every matching device of the node
            try:
                want = sorted(
                    d.id for d in devices.values() if selectable(d, r, self.dra.classes)
                )  # (a tainted one too: refused below)
            except AllocationError as e:
                out.append((pod_key, f"claim {claim} request {request_name(r)}: {e}"))
                want = sorted(mine_r)
            if sorted(mine_r) != want or not want:
                out.append(
                    (
                        pod_key,
                        f"claim {claim} request {request_name(r)} (allocationMode All): {len(mine_r)} device(s) named, "
                        f"not the {len(want)} matching device(s) of {node}",
                    )
                )
        elif len(mine_r) != r.count:
            out.append(
                (
                    pod_key,
                    f"claim {claim} request {request_name(r)}: {len(mine_r)} device(s) named, {r.count} requested",
                )
            )
        if len(set(mine_r)) != len(mine_r) and not twice:
            out.append((pod_key, f"claim {claim} request {request_name(r)} names a device twice"))
        for i in mine_r:
            self._device(pod_key, node, devices.get(i), claim, full, r, i)

    def _device(self, pod_key: str, node: str, d, claim: str, full: str, r, i) -> None:
        """One named device: on the node, free in the snapshot (but for admin access, KEP-5018),
        matching its request with its taints tolerated (KEP-5055), then as a share or as an
        exclusive device."""
        out = self.out
        if d is None:
            out.append((pod_key, f"claim {claim}: device {'/'.join(i)} is not on node {node}"))
            return
        if (
            i in self.dra.in_use and not r.admin_access
        ):  # (KEP-5018: admin access may take a device in use)
            out.append(
                (pod_key, f"claim {claim}: device {'/'.join(i)} is allocated in the snapshot")
            )
        why = _mismatch(d, r, self.dra.classes)
        if why is not None:
            out.append((pod_key, f"claim {claim}: device {'/'.join(i)} {why}"))
        if d.allow_multiple:
            self._share(pod_key, d, claim, full, r, i)
        else:
            self._exclusive(pod_key, d, claim, full, r, i)

    def _share(self, pod_key: str, d, claim: str, full: str, r, i) -> None:
        """KEP-5075: a share of a device with ``allowMultipleAllocations``; its consumed capacity
        is summed in :meth:`shared_capacity`."""
        if i in self.holder:
            self.out.append(
                (pod_key, f"device {'/'.join(i)} named for claims {self.holder[i]} and {full}")
            )
        q = consumption(d, r)
        if q is None:
            self.out.append(
                (
                    pod_key,
                    f"claim {claim}: device {'/'.join(i)} cannot serve the capacity request {request_name(r)} asks for",
                )
            )
        elif (
            full,
            request_name(r),
            i,
        ) not in self.shares and not r.admin_access:  # (KEP-5018: an admin share is not counted)
            self.shares[(full, request_name(r), i)] = q

    def _exclusive(self, pod_key: str, d, claim: str, full: str, r, i) -> None:
        """A device allocated exclusively: its capacity serves the request, and no other claim
        names it (an admin-access request's device stays free for other claims: checked per pod
        by the rule dra)."""
        q = consumption(d, r)
        if q is None or not fits(d, q):
            self.out.append(
                (
                    pod_key,
                    f"claim {claim}: device {'/'.join(i)} cannot serve the capacity request {request_name(r)} asks for",
                )
            )
        if r.admin_access:
            return
        if i in self.shared_by:
            self.out.append(
                (pod_key, f"device {'/'.join(i)} named for claims {self.shared_by[i]} and {full}")
            )
        other = self.holder.setdefault(i, full)
        if other != full:
            self.out.append((pod_key, f"device {'/'.join(i)} named for claims {other} and {full}"))

    def shared_capacity(self) -> None:
        """KEP-5075: on each shared device, the snapshot's consumption plus every named share's fits."""
        total: dict[tuple[str, str, str], dict] = {}
        for (_, _, i), q in self.shares.items():
            per = total.setdefault(i, dict(self.dra.consumed.get(i, {})))
            for k, v in q.items():
                per[k] = per.get(k, 0) + v
        by_id = (
            {d.id: d for devices in self.dra.devices_by_node.values() for d in devices}
            if total
            else {}
        )
        for i, per in sorted(total.items()):
            caps = by_id[i].capacity
            if any(v > caps.get(dom, {}).get(name, 0) for (dom, name), v in per.items()):
                owners = sorted({full for (full, _, j) in self.shares if j == i})
                self.out.append(
                    (
                        owners[-1],
                        f"device {'/'.join(i)}: the shares named for {', '.join(owners)} consume more than its capacity",
                    )
                )


def _mismatch(d, r, classes) -> str | None:
    """Why device ``d`` cannot serve request ``r`` (a selector error, a taint it does not
    tolerate, or not matching), or None when it can (:func:`gangplan.dra.allocator.matches`)."""
    try:
        ok = matches(d, r, classes)
    except AllocationError as e:
        return str(e)
    if ok:
        return None
    t = untolerated(d.taints, r.tolerations)
    return (
        f"has taint {t}{' (' + t.source + ')' if t.source else ''}, which request {request_name(r)} does not tolerate"
        if t is not None
        else f"does not match request {request_name(r)} (class {r.device_class})"
    )


def _check_counters(
    cluster, dra: DraState, exclusive: Mapping, shared: Mapping
) -> list[tuple[str, str]]:
    """KEP-4815: the named devices that consume shared counters (an exclusive device, or a shared
    one without a share in the snapshot, once), per pool, take no more of any counter than the
    snapshot's allocated devices left; and none is named where the release does not allocate them."""
    named = {**{i: c for i, c in shared.items()}, **{i: c for i, c in exclusive.items()}}
    if not named:
        return []
    by_id = {d.id: d for devices in dra.devices_by_node.values() for d in devices if d.counters}
    users = {i: by_id[i] for i in sorted(named) if i in by_id}
    if not users:
        return []
    if not distinct_supported(cluster):
        return [
            (
                named[i],
                f"device {'/'.join(i)} consumes shared counters, which this release does not allocate (DRAPartitionableDevices off)",
            )
            for i in users
        ]
    out: list[tuple[str, str]] = []
    per, pools = _counter_use(dra, users)
    for key in sorted(per):
        have = available_counters(pools[key], dra.in_use, dra.consumed)
        over = sorted(k for k, v in have.items() if v < per[key].get(k, 0))
        if over:
            cset, c = over[0]
            owners = sorted({named[i] for i, d in users.items() if d.counter_pool is pools[key]})
            out.append(
                (
                    owners[-1],
                    f"pool {key[0]}/{key[1]} counter {cset}/{c}: the devices named for {', '.join(owners)} consume "
                    f"{per[key].get((cset, c), 0)} of the {max(have[(cset, c)], 0)} left",
                )
            )
    return out


def _counter_use(
    dra: DraState, users: Mapping
) -> tuple[dict[tuple[str, str], dict], dict[tuple[str, str], object]]:
    """Per (driver, pool): what the named devices consuming counters take of each (counter set,
    counter), and the pool (a shared device with a share in the snapshot takes none)."""
    per: dict[tuple[str, str], dict] = {}
    pools: dict[tuple[str, str], object] = {}
    for i, d in users.items():
        cp = d.counter_pool
        if cp is None or (d.allow_multiple and i in dra.consumed):
            continue
        pools[(cp.driver, cp.pool)] = cp
        now = per.setdefault((cp.driver, cp.pool), {})
        for cset, amounts in d.counters:
            for c, v in amounts:
                now[(cset, c)] = now.get((cset, c), 0) + v
    return per, pools
