"""The scheduling queue, reduced to the order in which a batch of pending work is attempted.

Mirrors PrioritySort ``Less`` (``pkg/scheduler/framework/plugins/queuesort/priority_sort.go``)
and ``PodGroupMemberPodsOrderingFunc`` (spec §1.3, verified from ``framework/types_test.go``
id 60702751550 and PR #140421), kubernetes/kubernetes v1.37-era:

* Entities are single pods and root groups (a PodGroup without parent, or a root
  CompositePodGroup). Higher priority first, then the earlier queue timestamp.
* The queue timestamp of a single pod is its ``creationTimestamp``. A group's entity only becomes
  poppable once GangScheduling's PreEnqueue admits its pods, i.e. once ``minCount`` member pods
  exist (1 for basic groups), so a group uses the creationTimestamp of its ``minCount``-th oldest
  member (bound members included, as ``AllPodsCount`` counts them). This reproduces upstream's
  "two gangs race" integration test (the gang completing its quorum first wins). A root
  CompositePodGroup uses its oldest member pod. This choice is ours: upstream does not say which
  member timestamp the entity carries (spec §1.3 [unverified]).
* Remaining ties: the position of the entity's first pod in the snapshot.
* Pods inside a group: higher priority, more attempts (always 0 here), earlier timestamp, name.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from gangplan.models.cluster import Cluster
from gangplan.models.objects import Pod

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


@dataclass(frozen=True)
class Entity:
    key: str
    """``pod:<ns/name>`` for a single pod, else the root group's key."""
    kind: str  # "pod" | "group" | "composite"
    priority: int
    timestamp: datetime
    position: int

    def sort_key(self) -> tuple:
        return (-self.priority, self.timestamp, self.position)


def queued_pods(cluster: Cluster) -> list[Pod]:
    """Pending pods the scheduler would attempt: not gated, not being deleted."""
    return [p for p in cluster.pending_pods if p.key not in cluster.gated and not p.terminating]


def member_order(pods: list[Pod]) -> list[Pod]:
    """Pods inside one group, in ``PodGroupMemberPodsOrderingFunc`` order."""
    return sorted(pods, key=lambda p: (-p.priority, 0, parse_timestamp(p.creation_timestamp), p.name))


def leaf_groups(cluster: Cluster, root: str) -> list[str]:
    """Every PodGroup under ``root`` (itself when it is a PodGroup)."""
    if root in cluster.pod_groups:
        return [root]
    out: list[str] = []
    for child in cluster.composite_children.get(root, ()):
        out.extend(leaf_groups(cluster, child))
    return out


def entities(cluster: Cluster) -> list[Entity]:
    """The queue's entities in PrioritySort order."""
    position = {p.key: i for i, p in enumerate(cluster.pods)}
    seen: dict[str, Entity] = {}
    for pod in queued_pods(cluster):
        gkey = pod.group_key
        if gkey is None or gkey not in cluster.pod_groups:
            key = f"pod:{pod.key}"
            seen[key] = Entity(key, "pod", pod.priority, parse_timestamp(pod.creation_timestamp), position[pod.key])
            continue
        root = cluster.root_of(gkey)
        if root not in seen:
            seen[root] = _group_entity(cluster, root, position)
    return sorted(seen.values(), key=Entity.sort_key)


def _group_entity(cluster: Cluster, root: str, position: dict[str, int]) -> Entity:
    members = [p for g in leaf_groups(cluster, root) for p in cluster.group_members.get(g, ())]
    stamps = sorted(parse_timestamp(p.creation_timestamp) for p in members)
    if root in cluster.pod_groups:
        g = cluster.pod_groups[root]
        quorum = min(cluster.group_min_count(root), len(stamps))
        ts = stamps[quorum - 1] if stamps else parse_timestamp(g.creation_timestamp)
        kind, prio = "group", g.priority
    else:
        cg = cluster.composite_pod_groups[root]
        ts = stamps[0] if stamps else parse_timestamp(cg.creation_timestamp)
        kind, prio = "composite", cg.priority
    first = min((position[p.key] for p in members), default=len(position))
    return Entity(root, kind, prio, ts, first)
