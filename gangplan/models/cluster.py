"""The immutable, engine-neutral snapshot both engines read."""

from __future__ import annotations

from collections import defaultdict
from functools import cached_property

from pydantic import BaseModel, ConfigDict, Field

from gangplan.models.objects import (
    CompositePodGroup,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PriorityClass,
    SchedulerProfile,
    TopologyLevels,
    Workload,
)


class Cluster(BaseModel):
    """Every object of a snapshot, normalised. Nothing here changes after loading.

    ``pods`` holds bound pods (``node_name`` set, not terminated) and pending pods, in snapshot
    order. ``gated`` maps a pending pod key to the reason the scheduler would not even queue it
    (missing PodGroup, gang quorum not reached, scheduling gates); gated pods are still in ``pods``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    pod_groups: dict[str, PodGroup] = Field(default_factory=dict)
    composite_pod_groups: dict[str, CompositePodGroup] = Field(default_factory=dict)
    workloads: dict[str, Workload] = Field(default_factory=dict)
    priority_classes: dict[str, PriorityClass] = Field(default_factory=dict)
    pdbs: tuple[PodDisruptionBudget, ...] = ()
    namespaces: dict[str, Namespace] = Field(default_factory=dict)
    profile: SchedulerProfile = Field(default_factory=SchedulerProfile)
    topologies: tuple[TopologyLevels, ...] = ()
    gated: dict[str, str] = Field(default_factory=dict)
    skipped_kinds: dict[str, int] = Field(default_factory=dict)
    sources: tuple[str, ...] = ()

    # ---- lookups -------------------------------------------------------------------------
    @cached_property
    def node_index(self) -> dict[str, int]:
        """Node name -> position in the snapshot (the default tie-break order)."""
        return {n.name: i for i, n in enumerate(self.nodes)}

    @cached_property
    def pod_by_key(self) -> dict[str, Pod]:
        return {p.key: p for p in self.pods}

    @cached_property
    def bound_pods(self) -> tuple[Pod, ...]:
        return tuple(p for p in self.pods if p.node_name is not None)

    @cached_property
    def pending_pods(self) -> tuple[Pod, ...]:
        """Every pod without a node, gated ones included."""
        return tuple(p for p in self.pods if p.node_name is None)

    @cached_property
    def schedulable_pods(self) -> tuple[Pod, ...]:
        """Pending pods the scheduler would queue (not gated)."""
        return tuple(p for p in self.pending_pods if p.key not in self.gated)

    @cached_property
    def pods_by_node(self) -> dict[str, tuple[Pod, ...]]:
        out: dict[str, list[Pod]] = defaultdict(list)
        for p in self.bound_pods:
            out[p.node_name].append(p)  # type: ignore[index]
        return {k: tuple(v) for k, v in out.items()}

    @cached_property
    def group_members(self) -> dict[str, tuple[Pod, ...]]:
        """PodGroup key -> its pods (bound and pending) in snapshot order."""
        out: dict[str, list[Pod]] = defaultdict(list)
        for p in self.pods:
            if p.group_key is not None:
                out[p.group_key].append(p)
        return {k: tuple(v) for k, v in out.items()}

    @cached_property
    def composite_children(self) -> dict[str, tuple[str, ...]]:
        """CompositePodGroup key -> keys of its child PodGroups and CompositePodGroups."""
        out: dict[str, list[str]] = defaultdict(list)
        for g in list(self.composite_pod_groups.values()) + list(self.pod_groups.values()):
            if g.parent is not None:
                out[f"{g.namespace}/{g.parent}"].append(g.key)
        return {k: tuple(v) for k, v in out.items()}

    def group_of(self, pod: Pod) -> PodGroup | None:
        return self.pod_groups.get(pod.group_key) if pod.group_key else None

    def root_of(self, group_key: str) -> str:
        """The key of the root of a group's hierarchy (itself when it has no parent)."""
        key = group_key
        seen = set()
        while key not in seen:
            seen.add(key)
            g = self.pod_groups.get(key) or self.composite_pod_groups.get(key)
            if g is None or g.parent is None:
                return key
            key = f"{g.namespace}/{g.parent}"
        return key

    def unit_priority(self, pod: Pod) -> int:
        """A pod's priority as a preemption victim or preemptor: its root group's priority, else
        its own (KEP-5710 ``getPodPriority``)."""
        if pod.group_key and pod.group_key in self.pod_groups:
            root = self.root_of(pod.group_key)
            g = self.pod_groups.get(root) or self.composite_pod_groups.get(root)
            if g is not None:
                return g.priority
        return pod.priority

    def highest_all_ancestor(self, group_key: str) -> str | None:
        """The highest group at or above ``group_key`` with ``disruptionMode: all`` (the key of
        the victim unit its pods belong to, KEP-5710), or None."""
        found, key, seen = None, group_key, set()
        while key not in seen:
            seen.add(key)
            g = self.pod_groups.get(key) or self.composite_pod_groups.get(key)
            if g is None:
                break
            if g.disruption_mode == "all":
                found = key
            if g.parent is None:
                break
            key = f"{g.namespace}/{g.parent}"
        return found

    def group_min_count(self, group_key: str) -> int:
        g = self.pod_groups[group_key]
        return g.min_count if g.policy == "gang" else 1

    @cached_property
    def resource_names(self) -> tuple[str, ...]:
        """Every resource any node offers or any pod requests, cpu and memory first."""
        names: set[str] = set()
        for n in self.nodes:
            names.update(n.allocatable)
        for p in self.pods:
            names.update(p.requests)
        head = [r for r in ("cpu", "memory", "pods", "ephemeral-storage") if r in names or r in ("cpu", "memory", "pods")]
        return tuple(head + sorted(names - set(head)))

    def topology_levels(self) -> tuple[str, ...]:
        """The levels of the first Kueue Topology in the snapshot, or ``()``."""
        return self.topologies[0].levels if self.topologies else ()
