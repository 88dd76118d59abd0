"""The group model: one frozen forest of PodGroups and CompositePodGroups, shared by every engine.

Built once per :class:`~gangplan.models.cluster.Cluster` (``cluster.groups``) from the normalised
PodGroups, CompositePodGroups and pods, it answers every question about group structure that the
greedy engine, the exact engine, the validator, the Result assembly and the diff ask:

* the tree: each group's parent, its children in queue order (creationTimestamp, then key: the
  order the scheduling queue pre-sorts a CompositePodGroup's children in), its root, depth and the
  leaf PodGroups below it, and the pods of each leaf;
* what each group needs: ``minCount`` for a gang PodGroup, ``minGroupCount`` for a gang
  CompositePodGroup, 1 for a basic group (upstream's PlacementFeasible uses M = 1), and
  :meth:`GroupTree.satisfied`, the recursive "this subtree is scheduled" rule;
* queue entities as typed :class:`EntityKey` values (a single pod, or a root group);
* victim units of workload-aware preemption (:meth:`GroupTree.victim_units`, KEP-5710) and the
  groups an eviction breaks (:meth:`GroupTree.broken_groups`);
* :meth:`GroupTree.validation_error`, the single mirror of kube-scheduler's run-time group and
  hierarchy validation (:mod:`gangplan.models.hierarchy`), and PreEnqueue gating (:func:`gate`).

No engine derives any of this on its own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from functools import cached_property

from gangplan.models.objects import (
    PREEMPT_LOWER_PRIORITY,
    CompositePodGroup,
    Pod,
    PodGroup,
    SchedulerProfile,
)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_timestamp(ts: str) -> datetime:
    """RFC 3339 to an aware datetime; a missing or unreadable timestamp sorts first."""
    if not ts:
        return EPOCH
    try:
        dt = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return EPOCH
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


class EntityKind(StrEnum):
    POD = "Pod"
    POD_GROUP = "PodGroup"
    COMPOSITE = "CompositePodGroup"


@dataclass(frozen=True, order=True)
class EntityKey:
    """A queue entity (a single pod or a root group) or a victim unit, typed.

    ``str(key)`` is the stable id used in JSON (Result traces, the diff): ``pod:<ns>/<name>`` for
    a pod, the group's ``<ns>/<name>`` otherwise.

    >>> str(EntityKey(EntityKind.POD, "ml/a")), str(EntityKey(EntityKind.POD_GROUP, "ml/g"))
    ('pod:ml/a', 'ml/g')
    """

    kind: EntityKind
    key: str

    def __str__(self) -> str:
        return f"pod:{self.key}" if self.kind is EntityKind.POD else self.key

    @property
    def is_pod(self) -> bool:
        return self.kind is EntityKind.POD

    @classmethod
    def pod(cls, pod_key: str) -> EntityKey:
        return cls(EntityKind.POD, pod_key)


@dataclass(frozen=True)
class GroupNode:
    """One PodGroup or CompositePodGroup in the forest."""

    key: str
    kind: EntityKind
    obj: PodGroup | CompositePodGroup
    parent: str | None
    """Parent CompositePodGroup key as written (it may be missing from the snapshot)."""
    children: tuple[str, ...]
    """Child group keys in queue order (creationTimestamp, then key)."""
    root: str
    depth: int
    """1 for a root; a child's depth is its parent's + 1."""
    leaves: tuple[str, ...]
    """The PodGroups at or below this group, depth first in child order."""
    members: tuple[Pod, ...]
    """A PodGroup's pods (bound and pending) in snapshot order; () for a CompositePodGroup."""

    @property
    def is_leaf(self) -> bool:
        return self.kind is EntityKind.POD_GROUP

    @property
    def gang(self) -> bool:
        return self.obj.policy == "gang"

    @property
    def need(self) -> int:
        """What PlacementFeasible counts against: pods for a PodGroup, children for a composite."""
        if not self.gang:
            return 1
        return self.obj.min_count if isinstance(self.obj, PodGroup) else self.obj.min_group_count

    @property
    def priority(self) -> int:
        return self.obj.priority

    @property
    def disruption_mode(self) -> str:
        return self.obj.disruption_mode

    @property
    def topology_key(self) -> str | None:
        return self.obj.topology_key

    @property
    def entity(self) -> EntityKey:
        return EntityKey(self.kind, self.key)

    @property
    def preemption_policy(self) -> str:
        """The group's ``spec.preemptionPolicy`` with the API default (PreemptLowerPriority)."""
        return getattr(self.obj, "preemption_policy", None) or PREEMPT_LOWER_PRIORITY


@dataclass(frozen=True)
class VictimUnit:
    """A preemption victim unit (KEP-5710 ``getCrossNodesVictims``): evicted or kept as a whole.

    A bound pod without a ``disruptionMode: all`` ancestor is its own unit (``kind`` ``Pod`` for a
    pod without group, ``PodGroup`` for a Single-mode group member); the bound pods of every leaf
    under the highest ``all`` ancestor form one unit of that ancestor's kind.
    """

    key: EntityKey
    kind: str
    pods: tuple[Pod, ...]
    priority: int


@dataclass(frozen=True)
class GroupTree:
    """The frozen forest. Build it with :meth:`build`; every engine reads ``cluster.groups``."""

    nodes: Mapping[str, GroupNode]
    roots: tuple[str, ...]
    """Root group keys in the order of their first pod in the snapshot (then key)."""
    pods: Mapping[str, Pod]
    errors: Mapping[str, str] = field(default_factory=dict)
    """Root -> hierarchy validation failure (structure and pods), see :meth:`validation_error`."""
    cycles: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Group key -> the cycle of parent links it is on or leads into."""

    # ---- construction ----------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        pods: Iterable[Pod],
        pod_groups: Mapping[str, PodGroup],
        composites: Mapping[str, CompositePodGroup],
    ) -> GroupTree:
        """The forest of ``pod_groups`` and ``composites`` with ``pods`` as leaf members: the
        structure only, with no ``errors`` (:func:`gangplan.models.hierarchy.validated` adds the
        run-time hierarchy validation to the same structure)."""
        pods = tuple(pods)
        members: dict[str, list[Pod]] = defaultdict(list)
        for p in pods:
            if p.group_key is not None and p.group_key in pod_groups:
                members[p.group_key].append(p)
        objs: dict[str, PodGroup | CompositePodGroup] = {**composites, **pod_groups}
        kids: dict[str, list[str]] = defaultdict(list)
        for key, g in objs.items():
            if g.parent is not None and f"{g.namespace}/{g.parent}" in composites:
                kids[f"{g.namespace}/{g.parent}"].append(key)
        for k in kids:
            kids[k].sort(key=lambda c: (parse_timestamp(objs[c].creation_timestamp), c))
        cycles = _cycles(objs, composites)
        roots_of: dict[str, str] = {}
        depth_of: dict[str, int] = {}
        for key in objs:
            chain = _ancestors(objs, composites, key)
            roots_of[key] = min(cycles[key]) if key in cycles else chain[-1]
            depth_of[key] = len(chain)

        def leaves(key: str, seen: frozenset[str] = frozenset()) -> tuple[str, ...]:
            if key in pod_groups:
                return (key,)
            if key in seen:
                return ()
            return tuple(x for c in kids.get(key, ()) for x in leaves(c, seen | {key}))

        nodes = {
            key: GroupNode(
                key=key,
                kind=EntityKind.POD_GROUP if key in pod_groups else EntityKind.COMPOSITE,
                obj=g,
                parent=None if g.parent is None else f"{g.namespace}/{g.parent}",
                children=tuple(kids.get(key, ())) if key in composites else (),
                root=roots_of[key],
                depth=depth_of[key],
                leaves=leaves(key),
                members=tuple(members.get(key, ())),
            )
            for key, g in objs.items()
        }
        first: dict[str, int] = {}
        for i, p in enumerate(pods):
            if p.group_key in nodes:
                first.setdefault(roots_of[p.group_key], i)
        roots = sorted({n.root for n in nodes.values()}, key=lambda r: (first.get(r, len(pods)), r))
        tree = cls(nodes=nodes, roots=tuple(roots), pods={p.key: p for p in pods}, cycles=cycles)
        return tree

    # ---- structure ---------------------------------------------------------------------------
    def __contains__(self, key: object) -> bool:
        return key in self.nodes

    def node(self, key: str) -> GroupNode:
        return self.nodes[key]

    def is_leaf(self, key: str) -> bool:
        n = self.nodes.get(key)
        return n is not None and n.is_leaf

    @property
    def leaf_keys(self) -> list[str]:
        return [k for k, n in self.nodes.items() if n.is_leaf]

    @property
    def composite_keys(self) -> list[str]:
        return [k for k, n in self.nodes.items() if not n.is_leaf]

    def root_of(self, group_key: str) -> str:
        return self.nodes[group_key].root

    def leaves(self, key: str) -> tuple[str, ...]:
        return self.nodes[key].leaves if key in self.nodes else ()

    def members(self, key: str) -> tuple[Pod, ...]:
        """Every pod of the PodGroup, or of every leaf under a composite, in leaf order."""
        return tuple(p for leaf in self.leaves(key) for p in self.nodes[leaf].members)

    def subtree(self, key: str) -> list[str]:
        """``key`` and every group below it, parents before children."""
        out, stack = [], [key]
        while stack:
            k = stack.pop()
            if k in out or k not in self.nodes:
                continue
            out.append(k)
            stack.extend(reversed(self.nodes[k].children))
        return out

    def ancestors(self, key: str) -> list[str]:
        """``key``, its parent, ... up to the highest group in the snapshot (a cycle stops it)."""
        out = []
        while key in self.nodes and key not in out:
            out.append(key)
            parent = self.nodes[key].parent
            if parent is None:
                break
            key = parent
        return out

    def bottom_up(self) -> list[str]:
        """Every group key, children before parents (then by key)."""
        return sorted(self.nodes, key=lambda k: (-self.nodes[k].depth, k))

    # ---- entities ----------------------------------------------------------------------------
    def group_of(self, pod: Pod) -> GroupNode | None:
        g = pod.group_key  # a property that formats the key: read once (called per bound pod)
        return self.nodes.get(g) if g else None

    def entity_of(self, pod: Pod) -> EntityKey:
        """The queue entity a pod belongs to: its root group, or the pod itself."""
        g = self.group_of(pod)
        if g is None:
            return EntityKey.pod(pod.key)
        return self.nodes[g.root].entity

    def entity_priority(self, entity: EntityKey) -> int:
        if entity.is_pod:
            return self.pods[entity.key].priority
        return self.nodes[entity.key].priority

    def entity_pods(self, entity: EntityKey) -> tuple[Pod, ...]:
        if entity.is_pod:
            return (self.pods[entity.key],)
        return self.members(entity.key)

    def validation_error(self, root: str) -> str | None:
        """Why kube-scheduler refuses to schedule this hierarchy (SchedulerError), or None."""
        return self.errors.get(root)

    def preemption_policy(self, entity: EntityKey) -> str:
        """The entity's preemption policy as a preemptor: a pod's own; a group's ``spec.preemptionPolicy``
        (PreemptLowerPriority by default). Validation makes every pod of a group agree with it."""
        if entity.is_pod:
            return self.pods[entity.key].preemption_policy
        return self.nodes[entity.key].preemption_policy

    # ---- what groups need ----------------------------------------------------------------------
    def satisfied(self, key: str, placed: Mapping[str, int]) -> bool:
        """The subtree is scheduled: a PodGroup has ``need`` pods on nodes (``placed`` counts
        bound and new pods per PodGroup), a CompositePodGroup ``need`` satisfied children."""
        n = self.nodes[key]
        if n.is_leaf:
            return placed.get(key, 0) >= n.need
        return sum(1 for c in n.children if c in self.nodes and self.satisfied(c, placed)) >= n.need

    # ---- victims -------------------------------------------------------------------------------
    def highest_all_ancestor(self, group_key: str) -> str | None:
        """The highest group at or above ``group_key`` with ``disruptionMode: all``, or None."""
        found = None
        for k in self.ancestors(group_key):
            if self.nodes[k].disruption_mode == "all":
                found = k
        return found

    @cached_property
    def _group_units(self) -> dict[str, EntityKey | None]:
        """Group key -> the entity of its highest ``disruptionMode: all`` group, or None; filled
        as groups are asked about (:meth:`_unit_key`). The forest never changes, so the answer is
        kept: victim units are asked for every bound pod (100,000 on the largest shapes), many
        times per run."""
        return {}

    def _unit_key(self, group_key: str) -> EntityKey | None:
        """The unit entity of the pods of ``group_key`` (a group of the forest), or None when
        each of them is its own unit (see :meth:`unit_of`)."""
        memo = self._group_units
        try:
            return memo[group_key]
        except KeyError:
            top = self.highest_all_ancestor(group_key)
            unit = memo[group_key] = None if top is None else self.nodes[top].entity
            return unit

    def unit_of(self, pod: Pod) -> EntityKey:
        """The victim unit a bound pod belongs to."""
        g = self.group_of(pod)
        unit = self._unit_key(g.key) if g is not None else None
        return EntityKey.pod(pod.key) if unit is None else unit

    def unit_priority(self, pod: Pod) -> int:
        """A pod's priority as victim or preemptor: its root group's, else its own
        (KEP-5710 ``getPodPriority``)."""
        g = self.group_of(pod)
        return self.nodes[g.root].priority if g is not None else pod.priority

    def victim_units(self, on_nodes: Iterable[Pod]) -> list[VictimUnit]:
        """The units over ``on_nodes`` (bound pods still on a node), in the order of their first
        pod; a unit holds only pods of ``on_nodes``. (:meth:`unit_of`, :meth:`group_of` and
        :meth:`unit_priority` inlined: each pod's group is looked up once.)"""
        # A pod that is its own unit is keyed by its pod key (a str) until the units are made, a
        # group unit by its EntityKey: the two never compare equal, and no EntityKey is made and
        # hashed per pod (most of 100,000 bound pods are units of their own).
        by_unit: dict[str | EntityKey, list[Pod]] = {}
        first_group: dict[str | EntityKey, GroupNode | None] = {}  # a unit's first pod's group
        nodes = self.nodes
        for p in on_nodes:
            gk = p.group_key
            g = nodes.get(gk) if gk else None
            unit: str | EntityKey | None = self._unit_key(g.key) if g is not None else None
            if unit is None:
                unit = p.key
            pods = by_unit.get(unit)
            if pods is None:
                by_unit[unit] = [p]
                first_group[unit] = g
            else:
                pods.append(p)
        out = []
        for unit, pods in by_unit.items():
            g = first_group[unit]
            if isinstance(unit, str):
                key, kind = EntityKey.pod(unit), "PodGroup" if g is not None else "Pod"
            else:
                key, kind = unit, str(unit.kind)
            priority = nodes[g.root].priority if g is not None else pods[0].priority
            out.append(VictimUnit(key, kind, tuple(pods), priority))
        return out

    def broken_groups(self, evicted: Iterable[Pod]) -> list[str]:
        """The groups an eviction of ``evicted`` breaks, sorted: every gang PodGroup (and every
        ``disruptionMode: all`` PodGroup) that loses at least one pod. The one rule behind the
        ``brokenGroups`` disruption tier of both engines and the diff's ``brokenGroups`` list."""
        return sorted(
            {
                g.key
                for p in evicted
                if (g := self.group_of(p)) is not None and (g.gang or g.disruption_mode == "all")
            }
        )


def _ancestors(
    objs: Mapping[str, PodGroup | CompositePodGroup],
    composites: Mapping[str, CompositePodGroup],
    key: str,
) -> list[str]:
    """``key`` and its ancestors up to the highest one present (parents are CompositePodGroups)."""
    chain = [key]
    g = objs[key]
    while g.parent is not None:
        parent = f"{g.namespace}/{g.parent}"
        if parent not in composites or parent in chain:
            break
        chain.append(parent)
        g = composites[parent]
    return chain


def _cycles(
    objs: Mapping[str, PodGroup | CompositePodGroup], composites: Mapping[str, CompositePodGroup]
) -> dict[str, tuple[str, ...]]:
    """Group key -> the cycle its parent chain runs into (members in chain order)."""
    out: dict[str, tuple[str, ...]] = {}
    for start in objs:
        chain, key = [start], start
        while True:
            g = objs[key] if key == start else composites[key]
            parent = f"{g.namespace}/{g.parent}" if g.parent is not None else None
            if parent is None or parent not in composites:
                break
            if parent in chain:
                out[start] = tuple(chain[chain.index(parent) :])
                break
            chain.append(parent)
            key = parent
    return out


def gate(pods: Iterable[Pod], tree: GroupTree, profile: SchedulerProfile) -> dict[str, str]:
    """Pending pods the scheduler would not queue, and why: scheduling gates (SchedulingGates),
    another scheduler's pods, and GangScheduling's PreEnqueue (a missing PodGroup or parent, a
    hierarchy whose root is not ready, a hierarchy with a missing parent or a cycle, which the
    queue holds back as incomplete)."""
    counts: dict[str, int] = defaultdict(int)
    pods = list(pods)
    for p in pods:
        if p.group_key in tree:
            counts[p.group_key] += 1
    memo: dict[str, tuple[bool, str]] = {}

    def ready(key: str) -> tuple[bool, str]:
        if key in memo:
            return memo[key]
        memo[key] = (False, f"CompositePodGroup {key} is on a cycle")  # guards cycles
        n = tree.node(key)
        if n.is_leaf:
            have = counts.get(key, 0)
            res = (
                have >= n.need,
                f"waiting for gang quorum: PodGroup {key} has {have} of minCount {n.need} pods",
            )
        else:
            n_ready = sum(1 for k in n.children if ready(k)[0])
            res = (
                n_ready >= n.need,
                f"waiting for CompositePodGroup {key}: {n_ready} of minGroupCount {n.need} children ready",
            )
        memo[key] = res
        return res

    gated: dict[str, str] = {}
    for p in pods:
        if p.node_name is not None:
            continue
        if p.scheduling_gates:
            gated[p.key] = "scheduling gates: " + ", ".join(p.scheduling_gates)
            continue
        if p.scheduler_name != profile.scheduler_name:
            gated[p.key] = (
                f"schedulerName {p.scheduler_name!r} is not served by profile {profile.scheduler_name!r}"
            )
            continue
        if p.group_key is None:
            continue
        g = tree.group_of(p)
        if g is None:
            gated[p.key] = f"waiting for pod group {p.group_key}"
            continue
        top = tree.node(tree.ancestors(g.key)[-1])
        if top.parent is not None and top.parent not in tree and g.key not in tree.cycles:
            gated[p.key] = f"waiting for CompositePodGroup {top.parent}"
            continue
        if g.key in tree.cycles:
            cycle = tree.cycles[g.key]
            gated[p.key] = (
                f"waiting for an incomplete hierarchy: parent links form a cycle ({' -> '.join(cycle + (cycle[0],))})"
            )
            continue
        ok, why = ready(g.root)
        if not ok:
            gated[p.key] = why
    return gated
