"""The mutable node state one run schedules against: upstream's cache snapshot, as numpy arrays.

Mirrors ``pkg/scheduler/backend/cache/snapshot.go`` and ``framework/types.go`` NodeInfo
(kubernetes/kubernetes v1.36): per node the allocatable, the sum of the requests of its pods
(``Requested``), the sum of their non-zero cpu/memory requests (``NonZeroRequested``), its pods,
and the host ports in use. Assuming a pod adds it to all of these; forgetting it removes it, so a
failed group reverts exactly. Per-node work in the plugins is vectorised over these arrays.

The scan order of Filter is upstream's node tree order (``backend/cache/node_tree.go``): nodes
are grouped by zone (region + zone labels, in order of first appearance) and listed round-robin
across zones. Ties are broken by snapshot position, not scan order.
"""

from __future__ import annotations

import numpy as np

from gangplan.models.base import kept_beside
from gangplan.models.cluster import Cluster
from gangplan.models.objects import CPU, MEMORY, PODS, HostPort, Pod
from gangplan.models.well_known import REGION, REGION_BETA, ZONE, ZONE_BETA

ZONE_LABELS = (ZONE, ZONE_BETA)
DRA_SERVED = 1 << 50
"""Allocatable a node is given, in the greedy engine's table only, for an extended resource it
lacks that a DeviceClass maps (KEP-5004): ``fit.go`` skips such a resource and DynamicResources
allocates devices for it instead."""
REGION_LABELS = (REGION, REGION_BETA)


def zone_key(labels: dict[str, str]) -> str:
    """``utilnode.GetZoneKey``: "" when neither region nor zone is set."""
    zone = next((labels[k] for k in ZONE_LABELS if k in labels), "")
    region = next((labels[k] for k in REGION_LABELS if k in labels), "")
    if not zone and not region:
        return ""
    return region + ":\x00:" + zone


def node_tree_order(cluster: Cluster) -> np.ndarray:
    """Node positions in upstream's node-tree list order (round-robin over zones)."""
    zones: dict[str, list[int]] = {}
    for i, n in enumerate(cluster.nodes):
        zones.setdefault(zone_key(n.labels), []).append(i)
    out: list[int] = []
    lists = list(zones.values())
    depth = max((len(v) for v in lists), default=0)
    for j in range(depth):
        for v in lists:
            if j < len(v):
                out.append(v[j])
    return np.array(out, dtype=np.int64)


class NodeTableStart:
    """What every :class:`NodeTable` of a snapshot starts from: the nodes as arrays, upstream's
    node-tree order, and the snapshot's bound pods assumed on their nodes (with the pending pods'
    nominations). It depends on the snapshot alone, so it is made once per snapshot and kept
    beside it (``Cluster._greedy_nodes``, :func:`~gangplan.models.base.kept_beside`); each table
    copies what it may change. A diff runs two sessions on one snapshot (the greedy run and the
    decisive step's replay), and on a 10,000-node snapshot with 100,000 bound pods making this
    costs about 0.3 s, copying it a few milliseconds. Nothing here is changed after it is made."""

    def __init__(self, cluster: Cluster) -> None:
        nodes = cluster.nodes
        self.n = len(nodes)
        self.names = [n.name for n in nodes]
        self.index = dict(cluster.node_index)
        names = [r for r in cluster.resource_names if r != PODS]
        for r in list(cluster.profile.fit_resources) + list(cluster.profile.balanced_resources):
            if r not in names and r != PODS:
                names.append(r)
        self.resources: list[str] = names
        self.res_index = {r: i for i, r in enumerate(names)}
        self.alloc = np.array(
            [[n.allocatable.get(r, 0) for r in names] for n in nodes], dtype=np.int64
        ).reshape(self.n, len(names))
        self.allowed_pods = np.array([n.allocatable.get(PODS, 0) for n in nodes], dtype=np.int64)
        dra = cluster.dra
        if (
            dra
        ):  # KEP-5004: NodeResourcesFit leaves a DRA-served extended resource to DynamicResources
            for i, node in enumerate(nodes):
                for r in dra.mapped_on(node):
                    if r in self.res_index:
                        self.alloc[i, self.res_index[r]] = DRA_SERVED
        self.scan_order = node_tree_order(cluster)
        self.requested = np.zeros_like(self.alloc)
        self.nonzero = np.zeros((self.n, 2), dtype=np.int64)
        self.pod_count = np.zeros(self.n, dtype=np.int64)
        self.bound_on_nodes = 0
        self.pods_on: list[list[Pod]] = [[] for _ in range(self.n)]
        self.ports_on: list[list[HostPort]] = [[] for _ in range(self.n)]
        self.anti_affinity_pods: dict[str, tuple[Pod, int]] = {}
        self.affinity_pods: dict[str, tuple[Pod, int]] = {}
        self.node_of: dict[str, int] = {}
        self.changes: list[int] = []
        self._load_bound(cluster.bound_pods)
        self.nominated: dict[int, dict[str, Pod]] = {}
        for p in cluster.pending_pods:
            if p.nominated_node_name in self.index and p.key not in cluster.gated:
                self.nominated.setdefault(self.index[p.nominated_node_name], {})[p.key] = p

    def _load_bound(self, pods: tuple[Pod, ...]) -> None:
        """:meth:`NodeTable.assume` of every bound pod on a node of the snapshot, in snapshot
        order, as one batch: the same end state (integer sums; lists, dicts and ``changes`` filled
        in the same order). It skips what one ``assume`` each would do in vain: no pod is
        terminating yet, every one is bound, and their vectors are not kept (few bound pods are
        ever looked at again; :meth:`NodeTable._pod_vectors` makes a victim's when it is
        forgotten)."""
        index = self.index
        placed = [(p, index[p.node_name]) for p in pods if p.node_name in index]
        if not placed:
            return
        # Flat comprehensions and C-level dict updates: ~100,000 pods on a 10,000-node snapshot.
        n, res = len(placed), self.resources
        bound = [p for p, _ in placed]
        rows = [i for _, i in placed]
        req = np.array([p.requests.get(r, 0) for p in bound for r in res], dtype=np.int64).reshape(
            n, len(res)
        )
        nz = np.array(
            [p.nonzero_requests.get(r, 0) for p in bound for r in (CPU, MEMORY)], dtype=np.int64
        ).reshape(n, 2)
        at = np.array(rows, dtype=np.int64)
        np.add.at(self.requested, at, req)
        np.add.at(self.nonzero, at, nz)
        np.add.at(self.pod_count, at, 1)
        self.bound_on_nodes = n
        pods_on, ports_on = self.pods_on, self.ports_on
        for p, i in placed:
            pods_on[i].append(p)
            if p.host_ports:
                ports_on[i].extend(p.host_ports)
        keys = [p.key for p in bound]
        self.node_of.update(zip(keys, rows, strict=True))
        # A pod with required anti-affinity has pod terms: both tables come from those pods.
        terms = [
            (k, (p, i)) for k, (p, i) in zip(keys, placed, strict=True) if p.affinity.has_pod_terms
        ]
        self.anti_affinity_pods.update(
            (k, v) for k, v in terms if v[0].affinity.pod_anti_affinity_required
        )
        self.affinity_pods.update(terms)
        self.changes = rows


class NodeTable:
    """Nodes and everything on them, mutable by :meth:`assume` / :meth:`forget`."""

    def __init__(self, cluster: Cluster) -> None:
        start = kept_beside(cluster, "_greedy_nodes", NodeTableStart)
        self.cluster = cluster
        self.nodes = cluster.nodes
        self.n = start.n
        self.names = list(start.names)
        self.index = dict(start.index)
        self.resources: list[str] = list(start.resources)
        self.res_index = dict(start.res_index)
        self.alloc = start.alloc.copy()
        self.allowed_pods = start.allowed_pods.copy()
        self.requested = start.requested.copy()
        self.free = self.alloc - self.requested
        """``alloc - requested``, kept up to date by assume / forget."""
        self.all_nodes = np.arange(self.n, dtype=np.int64)
        self.nonzero = start.nonzero.copy()
        self.pod_count = start.pod_count.copy()
        self.bound_on_nodes = start.bound_on_nodes
        """How many pods bound in the snapshot are on nodes (evictions take them off)."""
        self.pods_on: list[list[Pod]] = [list(on) for on in start.pods_on]
        self.ports_on: list[list[HostPort]] = [list(on) for on in start.ports_on]
        self.anti_affinity_pods: dict[str, tuple[Pod, int]] = dict(start.anti_affinity_pods)
        """Pods with required anti-affinity terms (for the existing-pods anti-affinity check)."""
        self.affinity_pods: dict[str, tuple[Pod, int]] = dict(start.affinity_pods)
        """Pods with any pod (anti-)affinity term (InterPodAffinity scoring of existing pods)."""
        self.affinity_lists: tuple[frozenset[int], frozenset[int]] | None = None
        """(nodes with pods with any pod (anti-)affinity term, nodes with pods with required
        anti-affinity) as upstream's snapshot lists stood when the current pod-group cycle began,
        while a cycle of a release whose lists go stale runs (:meth:`freeze_affinity_lists`);
        None: the lists follow every assume and forget."""
        self.node_of: dict[str, int] = dict(start.node_of)
        self.scan_order = start.scan_order.copy()
        self.next_start_node_index = 0
        self._vectors: dict[int, tuple] = {}
        self.changes: list[int] = list(start.changes)
        """Node positions in the order assume / forget touched them (for incremental caches)."""
        self._node_cache: dict[object, list] = {}
        self._label_codes: dict[str, tuple] = {}
        self._static: dict[object, np.ndarray] = {}
        self.victim_units_cache: list | None = None
        """Victim units over every bound pod (:func:`gangplan.solver.greedy.victims.victim_units`)."""
        self.victim_priority_floor: int | None = None
        """The lowest unit priority over every bound pod (:func:`gangplan.solver.greedy.victims.victims_below`)."""
        self.placed_units_cache: dict[tuple, object] = {}
        """(unit key, pod keys) -> the victim unit over pods the run placed (rule V of issue 39),
        one object per such set (:func:`gangplan.solver.greedy.victims.victim_units`)."""
        self.placement_cache: dict[tuple[str, int], tuple[np.ndarray, list]] = {}
        """(topology key, id of the parent node array) -> (that array, its placements): see
        :func:`gangplan.solver.greedy.placement.generate_placements`."""
        self.terminating: dict[str, Pod] = {}
        """Pod key -> a terminating copy of a victim whose deletion was issued in the run and has
        not completed (rule W of issue 39): :meth:`assume` places the copy whatever object it is
        given, so the victim keeps its requests, labels and affinity terms on its node while
        PodTopologySpread, like ``countPodsMatchSelector``, skips it as being deleted."""
        self.nnn: dict[str, int | None] = {}
        """Pod key -> ``status.nominatedNodeName`` set (a node position) or cleared (None) during the
        run; a pod not in it has its input's (:meth:`nominated_node`)."""
        self.nominated: dict[int, dict[str, Pod]] = {
            i: dict(pods) for i, pods in start.nominated.items()
        }
        """Node -> pending pods nominated to it (``status.nominatedNodeName``) and not yet tried."""

    # ---- pod vectors ---------------------------------------------------------------------------
    def request_vector(self, pod: Pod) -> np.ndarray:
        """The pod's effective request per resource (Filter)."""
        return self._pod_vectors(pod)[0]

    def signature(self, pod: Pod) -> bytes:
        """The pod's resource vectors as one hashable key (identical pods share it)."""
        self._pod_vectors(pod)
        return self._vectors[id(pod)][3]

    def _pod_vectors(self, pod: Pod) -> tuple[np.ndarray, np.ndarray]:
        key = id(pod)
        got = self._vectors.get(key)
        if got is None or got[2] is not pod:
            req = np.array([pod.requests.get(r, 0) for r in self.resources], dtype=np.int64)
            nz = np.array(
                [pod.nonzero_requests.get(CPU, 0), pod.nonzero_requests.get(MEMORY, 0)],
                dtype=np.int64,
            )
            got = (req, nz, pod, req.tobytes() + b"|" + nz.tobytes())
            self._vectors[key] = got
        return got[0], got[1]

    def node_array(self, key: object, compute) -> np.ndarray:
        """A per-node array ``compute(all nodes)``, cached under ``key`` and brought up to date by
        recomputing only the nodes assume / forget touched since (identical pods in a row cost one
        node each). ``compute`` takes node positions and must depend on nothing but node state.
        The returned array is shared: index it, never write to it."""
        entry = self._node_cache.get(key)
        now = len(self.changes)
        if entry is None or now - entry[1] > max(self.n // 8, 1):
            entry = [compute(self.all_nodes), now]
            self._node_cache[key] = entry
        elif entry[1] < now:
            # the touched nodes, sorted and each once (np.unique's sort costs more on a few)
            dirty = np.array(sorted(set(self.changes[entry[1] :])), dtype=np.int64)
            entry[0][dirty] = compute(dirty)
            entry[1] = now
        return entry[0]

    # ---- mutation ------------------------------------------------------------------------------
    def assume(self, pod: Pod, i: int) -> None:
        """Add ``pod`` to node ``i`` (upstream ``AssumePod`` into the snapshot)."""
        req, nz = self._pod_vectors(pod)
        self.requested[i] += req
        self.free[i] -= req
        self.nonzero[i] += nz
        self.pod_count[i] += 1
        self._place(pod, i)

    def _place(self, pod: Pod, i: int) -> None:
        """What :meth:`assume` records besides the per-node arrays."""
        if self.terminating:
            pod = self.terminating.get(pod.key, pod)
        self.bound_on_nodes += pod.bound
        self.pods_on[i].append(pod)
        self.ports_on[i].extend(pod.host_ports)
        self.node_of[pod.key] = i
        self.changes.append(i)
        aff = pod.affinity
        if aff.pod_anti_affinity_required:
            self.anti_affinity_pods[pod.key] = (pod, i)
        if aff.has_pod_terms:
            self.affinity_pods[pod.key] = (pod, i)

    def freeze_affinity_lists(self) -> tuple[frozenset[int], frozenset[int]] | None:
        """Take upstream's snapshot-wide (anti-)affinity node lists as they stand now, for the
        pod-group cycle that begins (``models.version.stale_affinity_lists``); returns what was
        frozen before, for :attr:`affinity_lists` to be set back to when the cycle ends."""
        before = self.affinity_lists
        self.affinity_lists = (
            frozenset(i for _, i in self.affinity_pods.values()),
            frozenset(i for _, i in self.anti_affinity_pods.values()),
        )
        return before

    def forget(self, pod: Pod) -> None:
        """Undo :meth:`assume` (upstream ``ForgetPod``)."""
        i = self.node_of.pop(pod.key)
        self.changes.append(i)
        req, nz = self._pod_vectors(pod)
        self.requested[i] -= req
        self.free[i] += req
        self.nonzero[i] -= nz
        self.pod_count[i] -= 1
        on = self.pods_on[i]
        # The same object is on the node (node_of holds one entry per key), so an identity
        # match removes exactly what the key comparison would; a copy of it falls back to keys.
        at = next((k for k, p in enumerate(on) if p is pod), None)
        self.pods_on[i] = (
            on[:at] + on[at + 1 :] if at is not None else [p for p in on if p.key != pod.key]
        )
        self._unplace(pod, i)

    def _unplace(self, pod: Pod, i: int) -> None:
        """What :meth:`forget` undoes besides the per-node arrays and the node's pod list."""
        self.bound_on_nodes -= pod.bound
        if pod.host_ports:
            ports = list(self.ports_on[i])
            for hp in pod.host_ports:
                ports.remove(hp)
            self.ports_on[i] = ports
        self.anti_affinity_pods.pop(pod.key, None)
        self.affinity_pods.pop(pod.key, None)

    def _stacked_vectors(self, pods: list[Pod]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_pod_vectors` of every pod, one row each (for the batched updates)."""
        vecs = [self._pod_vectors(p) for p in pods]
        req = np.array([v[0] for v in vecs], dtype=np.int64).reshape(len(pods), len(self.resources))
        return req, np.array([v[1] for v in vecs], dtype=np.int64)

    def assume_all(self, placed: list[tuple[Pod, int]]) -> None:
        """:meth:`assume` of every (pod, node) in order, the per-node arrays updated at once: the
        same end state (integer sums; lists, dicts and :attr:`changes` filled in the same order)."""
        if not placed:
            return
        rows = np.array([i for _, i in placed], dtype=np.int64)
        req, nz = self._stacked_vectors([p for p, _ in placed])
        self._add_rows(rows, req, nz)
        for pod, i in placed:
            self._place(pod, i)

    def _add_rows(self, rows: np.ndarray, req: np.ndarray, nz: np.ndarray) -> None:
        """The per-node arrays of :meth:`assume` for one pod per row of ``req`` / ``nz``, on
        node ``rows[k]`` (a node may repeat: its sums take every row)."""
        np.add.at(self.requested, rows, req)
        np.subtract.at(self.free, rows, req)
        np.add.at(self.nonzero, rows, nz)
        np.add.at(self.pod_count, rows, 1)

    def forget_all(self, pods: list[Pod]) -> None:
        """:meth:`forget` of every pod in order, the per-node arrays updated at once: the same end
        state (what stays on a node keeps its order)."""
        if not pods:
            return
        at = [self.node_of.pop(p.key) for p in pods]
        self.changes.extend(at)
        rows = np.array(at, dtype=np.int64)
        req, nz = self._stacked_vectors(pods)
        np.subtract.at(self.requested, rows, req)
        np.add.at(self.free, rows, req)
        np.subtract.at(self.nonzero, rows, nz)
        np.subtract.at(self.pod_count, rows, 1)
        gone: dict[int, set[str]] = {}
        for pod, i in zip(pods, at, strict=True):
            gone.setdefault(i, set()).add(pod.key)
            self._unplace(pod, i)
        for i, keys in gone.items():
            self.pods_on[i] = [p for p in self.pods_on[i] if p.key not in keys]

    def nominated_node(self, pod: Pod) -> int | None:
        """The position of the pod's ``status.nominatedNodeName`` now: as set or cleared during
        the run (:attr:`nnn`), else the input's (None: none, or not a node of the snapshot)."""
        if pod.key in self.nnn:
            return self.nnn[pod.key]
        return self.index.get(pod.nominated_node_name or "")

    def nominate(self, pod: Pod, i: int | None) -> None:
        """Set (``i``) or clear (None) the pod's nomination: its ``status.nominatedNodeName`` and
        its entry in the nominator (:attr:`nominated`, what other pods' Filter adds)."""
        self.clear_nomination(pod)
        self.nnn[pod.key] = i
        if i is not None:
            self.nominated.setdefault(i, {})[pod.key] = pod

    def mark_terminating(self, pods: list[Pod]) -> None:
        """The pods (on nodes) got a delete call: each stays on its node as a terminating copy."""
        for p in pods:
            i = self.node_of.get(p.key)
            if i is None or p.key in self.terminating:
                continue
            self.forget(p)
            self.terminating[p.key] = p.model_copy(update={"terminating": True})
            self.assume(p, i)

    def remove_terminating(self, keys: list[str]) -> list[tuple[Pod, int]]:
        """The deletions of ``keys`` completed: those pods leave their nodes. Returns each removed
        pod (the input's object) with the node it left."""
        out = []
        for k in keys:
            copy = self.terminating.get(k)
            i = self.node_of.get(k)
            if copy is None or i is None:
                self.terminating.pop(k, None)
                continue
            self.forget(copy)
            del self.terminating[k]
            out.append((copy, i))
        return out

    def clear_nomination(self, pod: Pod) -> None:
        """A pod leaves the nominator once its own cycle runs (placed or failed)."""
        i = self.nominated_node(pod)
        if i is not None and i in self.nominated:
            self.nominated[i].pop(pod.key, None)
            if not self.nominated[i]:
                del self.nominated[i]

    def static_array(self, key: object, compute) -> np.ndarray:
        """A per-node array that depends only on node objects and the pod spec (never on what
        runs where): computed once per key. Shared: index it, never write to it."""
        got = self._static.get(key)
        if got is None:
            got = compute()
            self._static[key] = got
        return got

    # ---- lookups -------------------------------------------------------------------------------
    def label_codes(self, key: str) -> tuple[np.ndarray, list[str], dict[str, int]]:
        """Node label ``key`` as integer codes (-1 where missing), the values by code, and the
        code of each value. Node labels never change, so this is computed once per key."""
        got = self._label_codes.get(key)
        if got is None:
            values: dict[str, int] = {}
            codes = np.full(self.n, -1, dtype=np.int64)
            for i, node in enumerate(self.nodes):
                v = node.labels.get(key)
                if v is not None:
                    codes[i] = values.setdefault(v, len(values))
            got = (codes, list(values), values)
            self._label_codes[key] = got
        return got
