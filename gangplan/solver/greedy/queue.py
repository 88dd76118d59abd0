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
from datetime import datetime

from gangplan.models.cluster import Cluster
from gangplan.models.groups import EntityKey, parse_timestamp
from gangplan.models.objects import Pod


@dataclass(frozen=True)
class Entity:
    key: EntityKey
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


def entities(cluster: Cluster) -> list[Entity]:
    """The queue's entities in PrioritySort order."""
    position = {p.key: i for i, p in enumerate(cluster.pods)}
    tree = cluster.groups
    seen: dict[EntityKey, Entity] = {}
    for pod in queued_pods(cluster):
        ent = tree.entity_of(pod)
        if ent.is_pod:
            seen[ent] = Entity(ent, pod.priority, parse_timestamp(pod.creation_timestamp), position[pod.key])
        elif ent not in seen:
            seen[ent] = _group_entity(cluster, ent, position)
    return sorted(seen.values(), key=Entity.sort_key)


def _group_entity(cluster: Cluster, ent: EntityKey, position: dict[str, int]) -> Entity:
    root = cluster.groups.node(ent.key)
    members = cluster.groups.members(root.key)
    stamps = sorted(parse_timestamp(p.creation_timestamp) for p in members)
    if root.is_leaf:
        quorum = min(root.need, len(stamps))
        ts = stamps[quorum - 1] if stamps else parse_timestamp(root.obj.creation_timestamp)
    else:
        ts = stamps[0] if stamps else parse_timestamp(root.obj.creation_timestamp)
    first = min((position[p.key] for p in members), default=len(position))
    return Entity(ent, root.priority, ts, first)
