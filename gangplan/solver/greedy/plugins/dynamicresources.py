"""DynamicResources: ``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``
(kubernetes/kubernetes v1.35). PreFilter skips pods without claims (and without extended
resources a DeviceClass maps, KEP-5004) and rejects a pod whose claim or template is missing;
Filter allocates the pod's unallocated claims on the node with the structured allocator
(:mod:`gangplan.dra.allocator`), seeing the devices of every claim allocated in the snapshot and
the pending allocations of pods assumed earlier in the run (the gang's own pods included), as
Reserve's in-flight allocations are seen upstream. The rules are :mod:`gangplan.dra.rules`.
Consumable capacity (KEP-5075, v1.36): what earlier pods' allocations consume of shared devices
on a node is replayed with the devices they took, so later pods see only the capacity left.

The node state after the pending pods assumed there is built from the state before the newest
one (Reserve's order), restricted to the node's devices. Counting (issue 23): a pod whose devices
all come from one (DeviceClass, selectors) pair, without capacity requests or constraints, from
claims neither allocated in the snapshot nor shared, on a node without shared devices or consumed
capacity, passes Filter exactly when the node's free devices of that pair are at least what it
asks for (one cached bit mask per node and pair, :func:`gangplan.dra.allocator.countable_mask`),
and its allocation in the replay is the lowest of them: the allocator's first solution
(:func:`gangplan.dra.allocator._counted`). Every other pod goes to the allocator.
"""

from __future__ import annotations

import itertools

import numpy as np

from gangplan.dra import rules
from gangplan.dra.allocator import add_consumed, countable_mask
from gangplan.dra.model import probe, selector_key
from gangplan.solver.greedy.framework import SKIP, SUCCESS, unschedulable
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.plugins.base import Plugin

NAME = names.DYNAMIC_RESOURCES


class DynamicResources(Plugin):
    name = NAME

    def __init__(self, cluster, profile) -> None:
        super().__init__(cluster, profile)
        self.dra = cluster.dra
        self._users: dict[str, list[str]] = {}
        if self.dra:
            for pod_key, keys in self.dra.pod_claims.items():
                for k in keys:
                    self._users.setdefault(k, []).append(pod_key)
        self._replays: dict[tuple, tuple] = {}
        self._uses_dra: dict[str, bool] = {}
        self._signatures: dict[str, tuple | None] = {}
        self._outcomes: dict[tuple, object] = {}
        self._distinct = rules.distinct_supported(cluster)
        self._counts: dict[str, tuple | None] = {}
        self._cannot = self.status(unschedulable(rules.CANNOT_ALLOCATE, unresolvable=True))
        self._global = bool(self.dra) and bool(self.dra.multi_node)
        self._global_at = None
        self._gmasks: dict = {}
        self._where = None
        self._chain: list = []
        self._serial = 0
        self._log: list[tuple] = []
        self._live = (
            (set(self.dra.in_use), {d: dict(v) for d, v in self.dra.consumed.items()}, {})
            if self._global
            else None
        )

    def _countable(self, pod):
        """(probe request, devices the claims ask for, (extended resource, count) pairs) when
        every device ``pod`` asks for comes from one (DeviceClass, selectors) pair, without
        capacity requests, admin access or constraints, from claims neither allocated, shared nor unsupported;
        else None (the allocator decides). Such a pod is counted (:meth:`_counted`)."""
        got = self._counts.get(pod.key, False)
        if got is not False:
            return got
        dra, pair, n, out = self.dra, None, 0, None
        for key in dict.fromkeys(dra.pod_claims.get(pod.key, ())):
            c = dra.claims[key]
            if (
                c.allocated is not None
                or len(self._users.get(key, ())) > 1
                or c.unsupported is not None
                or dra.constraints.get(key)
            ):
                break
            if any(
                r.capacity
                or r.all
                or r.alternatives
                or r.admin_access
                or (pair is not None and (r.device_class, selector_key(r)) != pair)
                for r in c.requests
            ):
                break
            for r in c.requests:
                pair, n = (r.device_class, selector_key(r)), n + r.count
        else:
            ext = tuple(
                (r, q) for r, q in sorted(pod.requests.items()) if q > 0 and r in dra.extended
            )
            if (
                all(pair is None or (dra.extended[r], ()) == pair for r, _ in ext)
                and len({dra.extended[r] for r, _ in ext}) <= 1
            ):
                pair = pair or ((dra.extended[ext[0][0]], ()) if ext else None)
                out = (None if pair is None else probe(pair[0], pair[1]), n, ext)
        self._counts[pod.key] = out
        return out

    def _counted(self, pod, node, state) -> tuple[int, int, list] | None:
        """For a countable pod on ``node`` in ``state``: (devices it needs there, free devices
        it could take as a bit mask, the node's devices); None where the allocator must decide."""
        got = self._countable(pod)
        if got is None:
            return None
        probe, n, ext = got
        n += sum(q for r, q in ext if node.allocatable.get(r, 0) == 0)
        if probe is None or n == 0:
            return (n, 0, []) if probe is None else (0, 0, [])
        devices = self.dra.devices_by_node.get(node.name, ())
        free = countable_mask(
            devices, probe, self.dra.classes, self.dra.alloc_cache, state[0], state[1]
        )
        return None if free is None else (n, free, devices)

    def pre_filter(self, cs, pod, snap):
        if not rules.uses_dra(self.dra, pod):
            return SKIP
        if pod.key in self.dra.pod_missing:
            return self.status(unschedulable(self.dra.pod_missing[pod.key], unresolvable=True))
        return SUCCESS

    def _claim_nodes(self, snap, pod) -> dict[str, str]:
        """Shared claims of ``pod`` another assumed pending pod allocated: claim -> its node."""
        out: dict[str, str] = {}
        for key in self.dra.pod_claims.get(pod.key, ()):
            for other in self._users.get(key, ()):
                if (
                    other != pod.key
                    and other in snap.node_of
                    and snap.cluster.pod_by_key[other].node_name is None
                ):
                    out[key] = snap.names[snap.node_of[other]]
                    break
        return out

    def _uses(self, pod) -> bool:
        got = self._uses_dra.get(pod.key)
        if got is None:
            got = self._uses_dra[pod.key] = rules.uses_dra(self.dra, pod)
        return got

    def _node_state(self, snap, i: int):
        """(replay key, (devices in use, capacity consumed on shared devices, claims allocated ->
        :data:`rules.Site`)) on node ``i`` after the pending pods assumed there, in order: what
        :func:`rules.replay_usage` gives, restricted to the node's devices (the only ones its
        allocations see), built from the state after all but the newest pod (Reserve's order).
        With multi-node devices (:attr:`DraState.multi_node`) one pod's allocation takes devices
        from other nodes' lists too: the state is then that of every pending pod assumed, in
        assume order (:meth:`_global_state`), the same for every node."""
        if self._global:
            return self._global_state(snap)
        pending = tuple(p for p in snap.pods_on[i] if p.node_name is None and self._uses(p))
        keys = tuple(p.key for p in pending)
        node = snap.nodes[i]
        return self._replay((i, keys), pending, lambda _: node, lambda: self._base_state(snap, i))

    def _global_state(self, snap):
        """:meth:`_node_state` with multi-node devices: every pending pod using DRA that is
        assumed, in assume order (``snap.node_of``), each allocated on its node from what the
        snapshot's claims and the pods before it left (in-flight allocations are cluster-wide
        upstream: ``pkg/scheduler/framework/plugins/dynamicresources/allocateddevices.go``).

        One live state (devices in use, consumed capacity, claims allocated) follows the chain of
        pods replayed: an assume appends a pod and applies its allocation, a forget drops the
        chain back to the longest common prefix, undoing what each dropped pod took (exclusive
        devices are taken once, so the undo is exact). The key is the serial of the chain's last
        entry; :attr:`_log` records every device whose use changed, for :meth:`_global_mask`."""
        now, size = len(snap.changes), len(snap.node_of)
        at = self._global_at
        if at is not None and at[1] is snap and at[0] == now:
            return at[2]
        by_key = snap.cluster.pod_by_key

        def wanted(items) -> list:
            return [
                (by_key[k], j)
                for k, j in items
                if by_key[k].node_name is None and self._uses(by_key[k])
            ]

        chain = self._chain  # [((pod key, node), delta, serial)] of the pods replayed, in order
        if at is not None and at[1] is snap and size - at[3] == now - at[0] > 0:
            # only assumes since (each appends one entry to node_of and one change): the new
            # entries are node_of's last ones, in order, after what the chain holds
            new = wanted(
                reversed(list(itertools.islice(reversed(snap.node_of.items()), size - at[3])))
            )
        else:
            placed = wanted(snap.node_of.items())
            keep = 0
            while (
                keep < len(chain)
                and keep < len(placed)
                and chain[keep][0] == (placed[keep][0].key, placed[keep][1])
            ):
                keep += 1
            while len(chain) > keep:
                self._undo(chain.pop()[1])
            new = placed[keep:]
        for p, j in new:
            self._serial += 1
            chain.append(((p.key, j), self._take(p, snap.nodes[j]), self._serial))
        got = (("global", chain[-1][2] if chain else 0), self._live)
        self._global_at = (now, snap, got, size)
        return got

    def _take(self, pod, node) -> tuple:
        """Allocate ``pod``'s claims on ``node`` from the live state and apply it; the delta
        (devices taken, capacity consumed per device, claims allocated) for :meth:`_undo`."""
        in_use, consumed, allocated = self._live
        taken: list = []
        used: list = []
        sites: dict = {}
        fast = self._counted(pod, node, self._live)
        if fast is not None:  # the allocator's first solution: the lowest free devices
            need, free, devices = fast
            if need <= free.bit_count():
                for _ in range(need):
                    low = free & -free
                    free ^= low
                    taken.append(devices[low.bit_length() - 1].id)
                sites = dict.fromkeys(
                    self.dra.pod_claims.get(pod.key, ()), node.name
                )  # (unshared: where they are usable matters to no other pod)
        else:
            got, _ = rules.try_node_results(
                self.dra, pod, node, in_use, allocated, consumed, self._distinct
            )
            for ck, results in (got or {}).items():
                taken.extend(
                    r.device for r in results if r.takes
                )  # (not admin access: foreachAllocatedDevice)
                used.extend(
                    (r.device, r.consumed)
                    for r in results
                    if r.consumed is not None and not r.admin
                )
                if not ck.endswith("/extended-resources"):
                    sites[ck] = rules.allocation_site(self.dra, results, node)
        in_use.update(taken)
        for d, amounts in used:
            per = consumed.setdefault(d, {})
            for k, v in amounts:
                per[k] = per.get(k, 0) + v
        sites = {k: v for k, v in sites.items() if k not in allocated}
        allocated.update(sites)
        self._log.append(tuple(taken) + tuple(d for d, _ in used))
        return (tuple(taken), tuple(used), tuple(sites))

    def _undo(self, delta: tuple) -> None:
        """Give back what :meth:`_take` applied."""
        in_use, consumed, allocated = self._live
        taken, used, sites = delta
        in_use.difference_update(taken)
        for d, amounts in used:
            per = consumed[d]
            for k, v in amounts:
                per[k] -= v
            if d not in self.dra.consumed and not any(per.values()):
                del consumed[d]  # (absent, as before: the allocator's counting looks at the keys)
        for k in sites:
            allocated.pop(k, None)
        self._log.append(tuple(taken) + tuple(d for d, _ in used))

    def _replay(self, key, pending, node_of, base):
        """(key, state) after allocating ``pending`` in order, each on ``node_of(pod)``, from the
        cached state of the longest prefix of ``key`` replayed before (or ``base()``)."""
        got = self._replays.get(key)
        if got is not None:
            return key, got
        head, keys = key
        j = len(keys)
        while j > 0 and (head, keys[:j]) not in self._replays:
            j -= 1
        state = self._replays.get((head, keys[:j])) if j else base()
        if len(self._replays) > 100_000:
            self._replays.clear()
        for n in range(j, len(keys)):
            state = self._step(state, pending[n], node_of(pending[n]))
            self._replays[(head, keys[: n + 1])] = state
        return key, state

    def _step(self, state, pod, node):
        """The state after ``pod``'s Reserve on ``node``: its claims allocated there, if they can be."""
        in_use, consumed, allocated = state
        fast = self._counted(pod, node, state)
        if fast is not None:  # the allocator's first solution: the lowest free devices
            need, free, devices = fast
            if need <= free.bit_count():
                taken = set(in_use)
                for _ in range(need):
                    low = free & -free
                    free ^= low
                    taken.add(devices[low.bit_length() - 1].id)
                claims = dict.fromkeys(
                    self.dra.pod_claims.get(pod.key, ())
                )  # (unshared: where they are usable matters to no other pod)
                state = (
                    frozenset(taken),
                    consumed,
                    {**allocated, **dict.fromkeys(claims, node.name)} if claims else allocated,
                )
            return state
        got, _ = rules.try_node_results(
            self.dra, pod, node, in_use, allocated, consumed, self._distinct
        )
        if got:
            in_use, consumed, allocated = (
                set(in_use),
                {d: dict(v) for d, v in consumed.items()},
                dict(allocated),
            )
            for ck, results in got.items():
                in_use.update(
                    r.device for r in results if r.takes
                )  # (not admin access: foreachAllocatedDevice)
                add_consumed(consumed, results)
                if not ck.endswith("/extended-resources"):
                    allocated[ck] = rules.allocation_site(self.dra, results, node)
            state = (frozenset(in_use), consumed, allocated)
        return state

    def _base_state(self, snap, i: int):
        """The snapshot's devices in use and consumed capacity on node ``i``, nothing allocated."""
        devices = self.dra.devices_by_node.get(snap.nodes[i].name, ())
        # (KEP-4815: a counter pool's allocated devices on other nodes take their counters too)
        others = {
            u.id
            for d in devices
            if d.counter_pool is not None
            for u in d.counter_pool.users
            if u.id in self.dra.in_use
        }
        return (
            frozenset({d.id for d in devices if d.id in self.dra.in_use} | others),
            {d.id: dict(self.dra.consumed[d.id]) for d in devices if d.id in self.dra.consumed},
            {},
        )

    def filter_one(self, cs, pod, snap, i):
        key, state = self._node_state(snap, i)
        in_use, consumed, _ = state
        fast = self._counted(pod, snap.nodes[i], state)
        if (
            fast is not None
        ):  # counting decides (NodeResourcesFit-like): enough free matching devices
            return SUCCESS if fast[0] <= fast[1].bit_count() else self._cannot
        sig = self._signatures.get(pod.key, False)
        if sig is False:
            sig = self._signatures[pod.key] = self._signature(pod)
        if self._global:
            key = (i, key)  # (one state for every node)
        if sig is not None:  # the outcome depends on the node's state and the pod's signature only
            hit = self._outcomes.get((key, sig))
            if hit is not None:
                return hit
        claim_nodes = state[2] if self._global else self._claim_nodes(snap, pod)
        got, why = rules.try_node(
            self.dra, pod, snap.nodes[i], in_use, claim_nodes, consumed, self._distinct
        )
        out = SUCCESS if got is not None else self.status(unschedulable(why, unresolvable=True))
        if sig is not None:
            if len(self._outcomes) > 200_000:
                self._outcomes.clear()
            self._outcomes[(key, sig)] = out
        return out

    def _signature(self, pod):
        """What the Filter outcome of ``pod`` depends on besides node state, when that is all
        (no claim shared with another pod, none allocated in the snapshot); else None."""
        sig = []
        for key in self.dra.pod_claims.get(pod.key, ()):
            c = self.dra.claims[key]
            if c.allocated is not None or len(self._users.get(key, ())) > 1:
                return None
            sig.append(
                (
                    c.unsupported,
                    tuple(
                        (
                            r.device_class,
                            r.selectors,
                            r.count,
                            r.capacity,
                            r.all,
                            r.alternatives,
                            r.tolerations,
                            r.admin_access,
                        )
                        for r in c.requests
                    ),
                    c.constraints,
                )
            )
        return (
            tuple(sig),
            tuple(sorted((r, q) for r, q in pod.requests.items() if r in self.dra.extended)),
        )

    def filter_mask(self, cs, pod, snap, idx):
        sig = self._signature(pod)
        if sig is None:
            return super().filter_mask(cs, pod, snap, idx)
        if self._global:
            return self._global_mask(cs, pod, snap, sig)[idx]

        def compute(nodes: np.ndarray) -> np.ndarray:
            return np.fromiter(
                (self.filter_one(cs, pod, snap, int(i)).ok for i in nodes),
                dtype=bool,
                count=len(nodes),
            )

        return snap.node_array((NAME, sig), compute)[idx]

    def _global_mask(self, cs, pod, snap, sig) -> np.ndarray:
        """:meth:`filter_mask` of a pod with a signature when the state is global (multi-node
        devices): the outcome on a node depends on the devices in use there and the consumed
        capacity, so from the array computed earlier only the nodes that list a device whose use
        changed since (:attr:`_log`, :meth:`_device_nodes`) are computed again."""
        self._global_state(snap)
        entry = self._gmasks.get(sig)
        arr = None
        if entry is not None and entry[2] is snap:
            arr, at = entry[0], entry[1]
            if at < len(self._log):
                where = self._device_nodes(snap)
                dirty: set[int] = set()
                for ids in self._log[at:]:
                    for d in ids:
                        dirty.update(where.get(d, ()))
                if len(dirty) > snap.n // 4:
                    arr = None
                elif dirty:
                    idx = np.fromiter(sorted(dirty), dtype=np.int64, count=len(dirty))
                    arr[idx] = np.fromiter(
                        (self.filter_one(cs, pod, snap, int(i)).ok for i in idx),
                        dtype=bool,
                        count=len(idx),
                    )
        if arr is None:
            arr = np.fromiter(
                (self.filter_one(cs, pod, snap, i).ok for i in range(snap.n)),
                dtype=bool,
                count=snap.n,
            )
        if len(self._gmasks) > 4096:
            self._gmasks.clear()
        self._gmasks[sig] = (arr, len(self._log), snap)
        return arr

    def _device_nodes(self, snap) -> dict:
        """Device id -> positions of the nodes whose outcome its use can change: the nodes that
        list it, and for a device consuming shared counters those of every device of its pool."""
        got = self._where
        if got is not None and got[0] is snap:
            return got[1]
        out: dict = {}
        for name, devs in self.dra.devices_by_node.items():
            i = snap.index.get(name)
            if i is None:
                continue
            for d in devs:
                out.setdefault(d.id, set()).add(i)
        pools = {
            id(d.counter_pool): d.counter_pool
            for devs in self.dra.devices_by_node.values()
            for d in devs
            if d.counter_pool is not None
        }
        for cp in pools.values():
            nodes = set().union(*(out.get(u.id, set()) for u in cp.users))
            for u in cp.users:
                out.setdefault(u.id, set()).update(nodes)
        self._where = (snap, out)
        return out
