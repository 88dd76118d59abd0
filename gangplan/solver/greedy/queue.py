"""The scheduling queue, reduced to the order in which a batch of pending work is attempted.

Mirrors PrioritySort ``Less`` (``pkg/scheduler/framework/plugins/queuesort/priority_sort.go``)
and ``PodGroupMemberPodsOrderingFunc`` (verified from ``pkg/scheduler/framework/types_test.go``
@98be7dfc and PR #140421), kubernetes/kubernetes v1.37-era:

* Entities are single pods and root groups (a PodGroup without parent, or a root
  CompositePodGroup). Higher priority first, then the earlier queue timestamp.
* The queue timestamp of a single pod is its ``creationTimestamp``. A group's entity only becomes
  poppable once GangScheduling's PreEnqueue admits its pods, i.e. once ``minCount`` member pods
  exist (1 for basic groups), so a group uses the creationTimestamp of its ``minCount``-th oldest
  member (bound members included, as ``AllPodsCount`` counts them). This reproduces upstream's
  "two gangs race" integration test (the gang completing its quorum first wins). A root
  CompositePodGroup uses its oldest member pod. This choice is ours: upstream does not say which
  member timestamp the entity carries (not verified against upstream code).
* Remaining ties: the position of the entity's first pod in the snapshot.

Pods inside a group (:func:`member_order`), per version (:func:`gangplan.models.version.quorum_pod_first`):

* v1.35 (no pod-group cycle: every pod is its own activeQ entry, PrioritySort over pods) and
  v1.37+ (the queue stores the group and tries its pods in the order they were added to it,
  ``QueuedPodInfos``, no sort): arrival order, i.e. higher priority, then creationTimestamp, then
  name (the snapshot cannot tell the arrival order of pods created in the same second; a
  ``kubectl get`` lists them by name).
* v1.36 (``podGroupInfoForPod`` in ``schedule_one_podgroup.go`` @008b3652): the group's pods are
  collected from the queue (the popped pod, then the others from a Go map, in random order) and
  sorted by priority, then ``InitialAttemptTimestamp``. That timestamp is set when a pod first
  passes PreEnqueue and enters activeQ (``moveToActiveQ``, ``scheduling_queue.go``). GangScheduling's
  PreEnqueue gates a gang's pods until ``minCount`` pods of the group exist, so the pod whose
  arrival completes the quorum passes first; the event handler then moves the gated pods out of the
  unschedulable pool (``MoveAllToActiveOrBackoffQueue``, iterating a map: random order), each
  reading the clock anew; pods arriving after the quorum pass at their own arrival. So: the quorum
  pod, then the pods gated before it in a random order, then later pods in arrival order. The
  random part is drawn from the run's seed (one independent draw per group,
  ``random.Random("<seed>/member-order/<group>")``) and the trace records it
  (``groups[g].memberOrder``). Pods already bound count towards the quorum, as ``AllPodsCount``
  counts them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime

from gangplan.models.cluster import Cluster
from gangplan.models.groups import EntityKey, GroupNode, parse_timestamp
from gangplan.models.objects import Pod
from gangplan.models.trace import MemberOrder
from gangplan.models.version import quorum_pod_first


@dataclass(frozen=True)
class Entity:
    key: EntityKey
    priority: int
    timestamp: datetime
    position: int

    def sort_key(self) -> tuple:
        return (-self.priority, self.timestamp, self.position)


def queued_pods(cluster: Cluster) -> list[Pod]:
    """Pending pods the scheduler would attempt (:attr:`Cluster.queued_pods`: not gated, not being deleted)."""
    return list(cluster.queued_pods)


def arrival_order(pods) -> list[Pod]:
    """Pods in the order they were created: creationTimestamp, then name."""
    return sorted(pods, key=lambda p: (parse_timestamp(p.creation_timestamp), p.name))


def draw_order(pods: list[Pod], seed: int, group: str) -> list[Pod]:
    """The Go map order of the gated pods leaving the unschedulable pool: a uniform permutation
    drawn from ``random.Random("<seed>/member-order/<group>")`` (one stream per group, so one
    group's draw does not shift another's)."""
    out = list(pods)
    random.Random(f"{seed}/member-order/{group}").shuffle(out)
    return out


def member_order(
    pods: list[Pod],
    group: GroupNode | None = None,
    *,
    cluster: Cluster | None = None,
    seed: int = 0,
) -> tuple[list[Pod], MemberOrder | None]:
    """The queued pods of one PodGroup in the order its cycle tries them (module docstring), and
    the record of a random draw when the version's order has one (None otherwise)."""
    by_arrival = sorted(
        arrival_order(pods), key=lambda p: -p.priority
    )  # stable: arrival within a priority
    if (
        group is None
        or cluster is None
        or not group.gang
        or not quorum_pod_first(cluster.kube_version)
    ):
        return by_arrival, None
    queued = {p.key for p in pods}
    arrivals = arrival_order(group.members)
    need = min(group.need, len(arrivals))
    if need < 1:
        return by_arrival, None
    quorum = arrivals[need - 1]
    gated = [p for p in arrivals[: need - 1] if p.key in queued]
    later = [p for p in arrivals[need:] if p.key in queued]
    drawn = draw_order(gated, seed, group.key)
    head = [quorum] if quorum.key in queued else []
    initial = head + drawn + later  # InitialAttemptTimestamp order
    rank = {p.key: i for i, p in enumerate(initial)}
    ordered = sorted(pods, key=lambda p: (-p.priority, rank[p.key]))
    record = None
    if len(gated) > 1:
        record = MemberOrder(
            rule="quorum-first", quorum_pod=quorum.key, drawn=[p.key for p in drawn], seed=seed
        )
    return ordered, record


def entities(cluster: Cluster) -> list[Entity]:
    """The queue's entities in PrioritySort order."""
    position = _Positions(cluster)
    tree = cluster.groups
    seen: dict[EntityKey, Entity] = {}
    for pod in queued_pods(cluster):
        ent = tree.entity_of(pod)
        if ent.is_pod:
            seen[ent] = Entity(
                ent, pod.priority, parse_timestamp(pod.creation_timestamp), position[pod.key]
            )
        elif ent not in seen:
            seen[ent] = _group_entity(cluster, ent, position)
    return sorted(seen.values(), key=Entity.sort_key)


class _Positions:
    """Pod key -> the position of the snapshot's pod with that key (the last one, should two
    share it), and how many keys there are. Positions are taken by object identity through
    :attr:`Cluster.pod_by_key` rather than by formatting the key of every pod: a 10,000-node
    snapshot holds 100,000 bound pods, and only queued pods and group members are looked up."""

    def __init__(self, cluster: Cluster) -> None:
        self._at = {id(p): i for i, p in enumerate(cluster.pods)}
        self._by_key = cluster.pod_by_key

    def __getitem__(self, key: str) -> int:
        return self._at[id(self._by_key[key])]

    def __len__(self) -> int:
        return len(self._by_key)


def _group_entity(cluster: Cluster, ent: EntityKey, position: _Positions) -> Entity:
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
