"""Problem data of the exact engine: the snapshot reduced to what the CP-SAT model decides.

The model never sees single pods of a group one by one. Pods of one leaf PodGroup (or single pods
of one priority) whose placement-relevant fields are identical form a :class:`PodClass`; the model
decides *how many* of a class go on each node. Pods in a class are interchangeable for every rule
the validator checks (requests, selectors, tolerations, affinity, ports, spread, labels that other
pods' terms look at), so counting them is exact, and concrete pods are only picked when decoding
(in snapshot order, so the choice is deterministic).

The bound state (bound pods minus victims) is turned into per-node numpy arrays once, so that the
eligibility step works on whole node vectors instead of pod x node Python loops.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from gangplan.dra.capacity import capacity_view
from gangplan.models.base import Beside
from gangplan.models.cluster import Cluster
from gangplan.models.memo import ClusterMemo
from gangplan.models.objects import PODS, Pod
from gangplan.solver.exact.bound import bound_pods, resources_of
from gangplan.solver.exact.victims import EvictUnit, evictable_units, eviction_room
from gangplan.topology import TopologyTree

NO_DOMAIN = -1


@dataclass
class PodClass:
    """Interchangeable pending pods: same group, same placement-relevant fields, same fixing."""

    index: int
    pods: list[Pod]
    group: str | None
    """Leaf PodGroup key; None for single pods (then every pod is its own entity)."""
    entity: str | None
    """Root entity key (PodGroup or CompositePodGroup); None for single pods."""
    priority: int
    fixed_node: int | None = None
    """Node index every pod of the class is forced onto (``fixed``); all of them must be placed."""

    @property
    def rep(self) -> Pod:
        return self.pods[0]

    @property
    def size(self) -> int:
        return len(self.pods)


@dataclass
class LeafGroup:
    key: str
    gang: bool
    min_count: int
    bound: int
    """Pods of the group already on nodes (victims excluded)."""
    evictable: list[tuple[int, int]] = field(default_factory=list)
    """(evictable unit index, pods of this group in it): the bound count is
    ``bound - sum k * evict[u]`` (preemption only, see :mod:`.gang`)."""
    classes: list[int] = field(default_factory=list)
    parent: str | None = None
    topology_key: str | None = None


@dataclass
class CompositeNode:
    key: str
    need: int
    children: list[str]
    parent: str | None = None
    topology_key: str | None = None


@dataclass(frozen=True)
class Instance:
    """The problem data, built once by :func:`build_instance` and never changed after (the model
    build only reads it; per-objective plans such as :mod:`.locality`'s are family outputs)."""

    cluster: Cluster
    nodes_alloc: np.ndarray  # [N, R] allocatable
    free: np.ndarray  # [N, R] allocatable - bound usage
    free_pods: np.ndarray  # [N] remaining pod slots (large when the node lists no pods cap)
    blocked: (
        np.ndarray
    )  # [N] no pod slot left: validate rejects any new pod there (an over-committed
    # resource blocks only the classes that request it: eligibility.fit_counts, as NodeResourcesFit)
    resources: tuple[str, ...]
    bound_on_node: list[list[Pod]]
    bound_node_of: dict[str, int]
    classes: list[PodClass]
    class_of: dict[str, int]
    leaves: dict[str, LeafGroup]
    composites: dict[str, CompositeNode]
    roots: list[str]
    excluded: dict[str, str]
    """Pending pods the model never places -> why (gated, group validation, fixed unplaced)."""
    fixed_errors: list[str]
    """Forced placements that can never hold (unknown node, gated pod): the model is infeasible."""
    units: list[EvictUnit] = field(default_factory=list)
    """Evictable victim units (``preemption=True`` only, see :mod:`.preemption`); empty otherwise."""
    evict_room: np.ndarray | None = None
    """[N, R] resources the evictable units could free per node (None without preemption)."""
    evict_slots: np.ndarray | None = None
    """[N] pod slots the evictable units could free per node (None without preemption)."""
    unit_of: dict[str, int] = field(default_factory=dict)
    """Bound pod key -> index of its evictable unit in ``units`` (preemption only)."""
    victim_pods: list[tuple[Pod, int]] = field(default_factory=list)
    """(pod, node) of the victims removed up front (``victims``): gone for every rule but
    required pod affinity, where a victim may still support a pod placed before it left
    (:mod:`gangplan.predicates.affinity_order`)."""

    @property
    def n_nodes(self) -> int:
        return len(self.cluster.nodes)

    @cached_property
    def _domain_cache(self) -> dict[str, tuple[np.ndarray, list[str]]]:
        return {}

    @cached_property
    def tree(self) -> TopologyTree:
        """The snapshot's topology tree (levels from the Kueue Topology or well-known labels),
        built once per Cluster object (a diff builds the model once per probe; the tree is only
        read)."""
        held = self.cluster._topology_tree  # (owner, tree) beside the snapshot: it dies with it
        if held is not None and held.value[0] is self.cluster:
            return held.value[1]
        tree = TopologyTree.from_cluster(self.cluster)
        self.cluster._topology_tree = Beside((self.cluster, tree))
        return tree

    def level_ids(self, key: str) -> tuple[np.ndarray, int]:
        """Per node the domain id at ``key``, -1 without the label, and the number of domains:
        tree ids (label values root to leaf) when ``key`` is a tree level, else label values."""
        if key in self.tree.levels:
            i = self.tree.level_index(key)
            return self.tree.node_domain[i].astype(np.int64), len(self.tree.domains[i])
        ids, names = self.domains(key)
        return ids, len(names)

    @cached_property
    def _domain_lists(self) -> dict[str, list[int]]:
        return {}

    def domain_list(self, key: str) -> list[int]:
        """:meth:`domains`' ids as one list, kept per key (the same object every call): for the
        value functions of auxiliary variables, which read one node's id at a time
        (:meth:`.variables.Counts.per_domain`)."""
        out = self._domain_lists.get(key)
        if out is None:
            out = self._domain_lists[key] = self.domains(key)[0].tolist()
        return out

    def domains(self, key: str) -> tuple[np.ndarray, list[str]]:
        """Per node the id of its ``key`` domain (``NO_DOMAIN`` without the label), and the names."""
        cache = self._domain_cache
        if key not in cache:
            names: dict[str, int] = {}
            ids = np.full(self.n_nodes, NO_DOMAIN, dtype=np.int64)
            for i, n in enumerate(self.cluster.nodes):
                if key in n.labels:
                    ids[i] = names.setdefault(n.labels[key], len(names))
            cache[key] = (ids, list(names))
        return cache[key]


def pod_signature(p: Pod) -> str:
    """Every field of a pod the rules read; equal signatures mean interchangeable pods."""
    return p.model_dump_json(
        include={
            "namespace",
            "labels",
            "requests",
            "node_selector",
            "affinity",
            "tolerations",
            "priority",
            "host_ports",
            "topology_spread",
            "scheduler_name",
        }
    )


def _bound_state(cluster: Cluster, victims: set[str]):
    """Allocatable and free resources per node (:func:`.bound.resources_of` order), free pod
    slots, blocked nodes, and the bound pods left (not ``victims``, on nodes of the snapshot) per
    node and by key, from the cluster's :class:`.bound.BoundPods`."""
    bp = bound_pods(cluster)
    n = len(cluster.nodes)
    alloc = np.zeros((n, len(bp.resources)), dtype=np.int64)
    ridx = {r: i for i, r in enumerate(bp.resources)}
    for i, node in enumerate(cluster.nodes):
        for r, q in node.allocatable.items():
            if r in ridx:
                alloc[i, ridx[r]] = q
    keys, node_of, pods = bp.keys, bp.node, bp.pods
    kept = bp.on_known if not victims else [j for j in bp.on_known if keys[j] not in victims]
    bound_on_node: list[list[Pod]] = [[] for _ in range(n)]
    for j in kept:
        bound_on_node[node_of[j]].append(pods[j])
    bound_node_of: dict[str, int] = {keys[j]: node_of[j] for j in kept}
    used = np.zeros_like(alloc)
    if kept:  # integer sums: the same as adding the pods one by one
        np.add.at(used, np.asarray([node_of[j] for j in kept]), bp.requests[kept])
    big = np.iinfo(np.int32).max
    free_pods = np.array(
        [
            node.allocatable[PODS] - len(bound_on_node[i]) if PODS in node.allocatable else big
            for i, node in enumerate(cluster.nodes)
        ],
        dtype=np.int64,
    )
    blocked = free_pods < 0
    return alloc, alloc - used, free_pods, blocked, bound_on_node, bound_node_of


def _snapshot_order(cluster: Cluster) -> dict[str, int]:
    return {p.key: i for i, p in enumerate(cluster.pods)}


snapshot_order: ClusterMemo[dict[str, int]] = ClusterMemo(_snapshot_order)
"""``snapshot_order(cluster)``: pod key -> position in ``cluster.pods`` (classes and queue order
follow it), made once per cluster object. Read only."""


def build_instance(
    cluster: Cluster,
    *,
    fixed: dict[str, str | None] | None = None,
    victims: tuple[str, ...] | list[str] = (),
    preemption: bool = False,
) -> Instance:
    """Group the schedulable pending pods into classes and the groups into a tree.

    ``victims`` leave the bound state statically (check_feasible of a result with victims);
    ``preemption`` adds the evictable units the model may decide to evict (:mod:`.victims`,
    :mod:`.preemption`)."""
    fixed = dict(fixed or {})
    cluster = capacity_view(
        cluster
    )  # DRA devices as resource rows (gangplan.dra.capacity); itself without DRA
    resources = resources_of(cluster)
    alloc, free, free_pods, blocked, bound_on_node, bound_node_of = _bound_state(
        cluster, set(victims)
    )
    tree = cluster.groups
    excluded: dict[str, str] = {}
    fixed_errors: list[str] = []
    buckets: dict[tuple, list[Pod]] = defaultdict(list)
    pending = {p.key for p in cluster.pending_pods}
    for key in sorted(set(fixed) - pending):
        if fixed[key] is not None:
            fixed_errors.append(f"result-shape: {key} is not a pending pod of the snapshot")
    for p in cluster.pending_pods:
        target = fixed.get(p.key)
        skip = cluster.not_queued.get(p.key)  # gated or being deleted: never placed
        if skip is not None:
            excluded[p.key] = skip
            if target:
                what = (
                    f"gated ({cluster.gated[p.key]})"
                    if p.key in cluster.gated
                    else f"not attempted ({skip})"
                )
                fixed_errors.append(f"result-shape: {p.key} is {what} but fixed to {target}")
            continue
        ent = tree.entity_of(p)
        invalid = None if ent.is_pod else tree.validation_error(ent.key)
        if invalid is not None:
            excluded[p.key] = f"SchedulerError: {invalid}"
            if target:
                fixed_errors.append(f"group-validation: {p.key} fixed to {target} but {invalid}")
            continue
        if p.key in fixed and target is None:
            excluded[p.key] = "fixed unplaced"
            continue
        node_idx = None
        if target:
            if target not in cluster.node_index:
                fixed_errors.append(f"result-shape: {p.key} fixed to unknown node {target!r}")
                continue
            node_idx = cluster.node_index[target]
        group = p.group_key if p.group_key in tree else None
        buckets[(group, pod_signature(p), node_idx)].append(p)
    classes: list[PodClass] = []
    class_of: dict[str, int] = {}
    # Classes in order of their first pod in the snapshot: deterministic model and decoding.
    order = snapshot_order(cluster)
    for (group, _sig, node_idx), pods in sorted(
        buckets.items(), key=lambda kv: order[kv[1][0].key]
    ):
        ent = tree.root_of(group) if group else None
        prio = tree.node(ent).priority if ent else pods[0].priority
        c = PodClass(
            index=len(classes),
            pods=pods,
            group=group,
            entity=ent,
            priority=prio,
            fixed_node=node_idx,
        )
        classes.append(c)
        for p in pods:
            class_of[p.key] = c.index
    leaves, composites, roots = _group_tree(cluster, classes, bound_node_of)
    units: list[EvictUnit] = []
    unit_of: dict[str, int] = {}
    evict_room = evict_slots = None
    if preemption:
        units = evictable_units(cluster, classes, bound_node_of, resources)
        evict_room, evict_slots = eviction_room(units, len(cluster.nodes), len(resources))
        # A node is only out of reach when it stays over-committed with every evictable unit gone
        # (capacity then asks for the evictions that fix it before a pod lands, see .capacity).
        blocked = free_pods + evict_slots < 0
        bp = bound_pods(cluster)
        for i, u in enumerate(units):
            per_group: dict[str, int] = defaultdict(int)
            for j in bp.rows_of(u.pods):
                if bp.group[j] in leaves:
                    per_group[bp.group[j]] += 1  # type: ignore[index]
            for g, k in sorted(per_group.items()):
                leaves[g].evictable.append((i, k))
        unit_of = {bp.keys[j]: i for i, u in enumerate(units) for j in bp.rows_of(u.pods)}
    gone = set(victims)
    return Instance(
        cluster=cluster,
        nodes_alloc=alloc,
        free=free,
        free_pods=free_pods,
        blocked=blocked,
        resources=resources,
        bound_on_node=bound_on_node,
        bound_node_of=bound_node_of,
        classes=classes,
        class_of=class_of,
        leaves=leaves,
        composites=composites,
        roots=roots,
        excluded=excluded,
        fixed_errors=fixed_errors,
        units=units,
        evict_room=evict_room,
        evict_slots=evict_slots,
        unit_of=unit_of,
        victim_pods=[
            (p, cluster.node_index[p.node_name])
            for p in (cluster.bound_pods if gone else ())
            if p.key in gone and p.node_name in cluster.node_index
        ],
    )


def _group_tree(cluster: Cluster, classes: list[PodClass], bound_node_of: dict[str, int]):
    """Leaf groups and composite ancestors of every root entity that has a class to place, read
    from the shared group forest (``cluster.groups``) plus the model's own bookkeeping."""
    tree = cluster.groups
    with_classes = {c.entity for c in classes if c.entity is not None}
    roots = [r for r in tree.roots if r in with_classes]
    leaves: dict[str, LeafGroup] = {}
    composites: dict[str, CompositeNode] = {}
    for r in roots:
        for key in tree.subtree(r):
            g = tree.node(key)
            if g.is_leaf:
                bound = sum(1 for p in g.members if p.key in bound_node_of)
                leaves[key] = LeafGroup(
                    key=key,
                    gang=g.gang,
                    min_count=g.need,
                    bound=bound,
                    parent=g.parent if key != r else None,
                    topology_key=g.topology_key,
                )
            else:
                composites[key] = CompositeNode(
                    key=key,
                    need=g.need,
                    children=list(g.children),
                    parent=g.parent if key != r else None,
                    topology_key=g.topology_key,
                )
    for c in classes:
        if c.group is not None and c.group in leaves:
            leaves[c.group].classes.append(c.index)
    return leaves, composites, roots


def canonical(obj) -> str:
    """A stable string key for pydantic objects and tuples of them (dict fields are not hashable)."""
    if hasattr(obj, "model_dump"):
        return json.dumps(obj.model_dump(mode="json"), sort_keys=True)
    if isinstance(obj, tuple | list):
        return "[" + ",".join(canonical(o) for o in obj) + "]"
    return json.dumps(obj, sort_keys=True)
