"""A make-room question as a snapshot the engines read (:mod:`gangplan.models.room`), and the
answers read back from it.

:func:`marked` turns the cluster into the exact engine's question: movable running pods pending
again (``gangplan.io/moved-from``), the targets marked, every other pending pod held by a gate.
:func:`after_moves` is the cluster a plan leaves while its moved pods are re-created (the
targets' nodes cordoned), :func:`bound` a cluster with a greedy run's placements bound; the
greedy check (:mod:`.verify`) runs kube-scheduler's cycle on both.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import timedelta

from gangplan.models.cluster import Cluster
from gangplan.models.groups import EPOCH, parse_timestamp
from gangplan.models.objects import Node, Pod
from gangplan.models.result import Result
from gangplan.models.room import HOLD_GATE, MOVED_FROM, TARGET, why_not_movable
from gangplan.models.well_known import GPU
from gangplan.predicates.taints import blocked_by_unschedulable, first_untolerated_taint


def target_pods(cluster: Cluster, targets: Iterable[str]) -> set[str]:
    """Pending pod keys of the target root entities (group keys, or pod keys of single pods)."""
    wanted = set(targets)
    tree = cluster.groups
    out = set()
    for p in cluster.pending_pods:
        ent = tree.entity_of(p)
        if ent.key in wanted:
            out.add(p.key)
    return out


def movable_pods(cluster: Cluster, targets: Iterable[str]) -> tuple[list[Pod], dict[str, str]]:
    """The running pods that may move (snapshot order), and why each other running pod may not."""
    tree = cluster.groups
    wanted = set(targets)
    nodes = {n.name: n for n in cluster.nodes}
    names = set(nodes)
    claimed = _pods_with_claims(cluster)
    out, why = [], {}
    for p in cluster.bound_pods:
        reason = why_not_movable(p, names)
        if reason is None and _refused_by(nodes[p.node_name], p):
            reason = "its node no longer admits it (cordoned or tainted): it stays where it runs"
        if reason is None and tree.entity_of(p).key in wanted:
            reason = "part of a target"
        if reason is None and p.pod_group and p.group_key not in tree:
            reason = "its PodGroup is not in the snapshot (a re-created pod would wait for it)"
        if reason is None and p.key in claimed:
            reason = "holds DRA ResourceClaims (make-room does not move those yet)"
        if reason is None:
            out.append(p)
        else:
            why[p.key] = reason
    return out, why


def _refused_by(node: Node, pod: Pod) -> bool:
    """Would ``node`` refuse ``pod`` were it scheduled now (cordoned, or a NoSchedule / NoExecute
    taint it does not tolerate: the NodeUnschedulable and TaintToleration Filters)? Such a pod
    runs there from before; the model cannot let it stay, so make-room leaves it out of the
    moves instead of forcing it off."""
    return blocked_by_unschedulable(node, pod.tolerations) or (
        first_untolerated_taint(node.taints, pod.tolerations) is not None
    )


def _pods_with_claims(cluster: Cluster) -> set[str]:
    """Pods using ResourceClaims: pending ones (:attr:`gangplan.dra.DraState.pod_claims`) and
    the consumers a claim is reserved for."""
    dra = cluster.dra
    if dra is None:
        return set()
    keys = {k for k, v in dra.pod_claims.items() if v}
    for claim in dra.claims.values():
        keys.update(claim.reserved_for)
    return keys


def _with_pods(cluster: Cluster, pods: list[Pod], held: Mapping[str, str] = {}) -> Cluster:
    return cluster.with_pods(pods, held=held)


def pending_again(pod: Pod, **update) -> Pod:
    """``pod`` as its controller re-creates it after an eviction: same spec, no node, Pending
    (``update``: what else differs, such as its creation time or an annotation)."""
    return pod.model_copy(
        update={
            "node_name": None,
            "phase": "Pending",
            "nominated_node_name": None,
            "start_time": None,
            **update,
        }
    )


def marked(cluster: Cluster, targets: Iterable[str], movable: Iterable[Pod]) -> Cluster:
    """The make-room question (see the module docstring)."""
    goal = target_pods(cluster, targets)
    moving = {p.key for p in movable}
    pods = []
    for p in cluster.pods:
        if p.key in moving:
            pods.append(pending_again(p, annotations={**p.annotations, MOVED_FROM: p.node_name}))
        elif p.key in goal:
            pods.append(p.model_copy(update={"annotations": {**p.annotations, TARGET: "true"}}))
        elif p.node_name is None:
            gates = p.scheduling_gates + (HOLD_GATE,)
            pods.append(p.model_copy(update={"scheduling_gates": gates}))
        else:
            pods.append(p)
    return _with_pods(cluster, pods)


def move_order(cluster: Cluster, keys: Iterable[str]) -> list[str]:
    """The order a plan evicts the pods it moves: largest GPU request first, then CPU, then key.
    Re-created in that order, they queue in it (kube-scheduler's queue sorts equal priorities by
    creation time), so the large pods pick their room before the small ones fill it."""
    pods = cluster.pod_by_key
    return sorted(
        set(keys),
        key=lambda k: (
            -pods[k].requests.get(GPU, 0),
            -pods[k].requests.get("cpu", 0),
            k,
        ),
    )


def after_moves(
    cluster: Cluster, moved: Iterable[str], evicted: Iterable[str], cordoned: Iterable[str]
) -> Cluster:
    """The cluster once the plan has cordoned ``cordoned``, evicted ``evicted`` for good and
    evicted ``moved`` in :func:`move_order` (their controllers re-create them: pending again,
    same spec, created one after the other after every pod of the snapshot)."""
    order = move_order(cluster, moved)
    gone, fenced = set(evicted), set(cordoned)
    latest = max((parse_timestamp(p.creation_timestamp) for p in cluster.pods), default=EPOCH)
    created = {
        k: (latest + timedelta(seconds=i + 1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        for i, k in enumerate(order)
    }
    pods = []
    for p in cluster.pods:
        if p.key in gone:
            continue
        if p.key in created:
            p = pending_again(p, creation_timestamp=created[p.key])
        pods.append(p)
    nodes = tuple(
        n.model_copy(update={"unschedulable": True}) if n.name in fenced else n
        for n in cluster.nodes
    )
    return _with_pods(cluster.model_copy(update={"nodes": nodes}), pods)


def bound(cluster: Cluster, result: Result, uncordon: Iterable[str] = ()) -> Cluster:
    """``cluster`` with ``result``'s placements bound, its victims gone, ``uncordon`` schedulable
    again."""
    gone = set(result.victims)
    placed = {k: o.node for k, o in result.pods.items() if o.node is not None}
    pods = []
    for p in cluster.pods:
        if p.key in gone:
            continue
        if p.key in placed:
            p = p.model_copy(
                update={"node_name": placed[p.key], "phase": "Running", "nominated_node_name": None}
            )
        pods.append(p)
    free = set(uncordon)
    nodes: tuple[Node, ...] = tuple(
        n.model_copy(update={"unschedulable": False}) if n.name in free else n
        for n in cluster.nodes
    )
    return _with_pods(cluster.model_copy(update={"nodes": nodes}), pods)


def pair_moves(
    movable: list[Pod], placed: Mapping[str, str | None], signature
) -> dict[str, str | None]:
    """Where each movable pod goes, with interchangeable pods (same group, same ``signature``)
    paired so that as many as possible stay where they run: the engine decides how many pods of
    a kind go on each node, not which."""
    kinds: dict[tuple, list[Pod]] = defaultdict(list)
    for p in movable:
        kinds[(p.group_key, signature(p))].append(p)
    out: dict[str, str | None] = {}
    for pods in kinds.values():
        slots: dict[str | None, int] = defaultdict(int)
        for p in pods:
            slots[placed.get(p.key)] += 1
        rest = []
        for p in pods:
            if slots.get(p.node_name, 0) > 0:
                slots[p.node_name] -= 1
                out[p.key] = p.node_name
            else:
                rest.append(p)
        free = [
            n
            for n, k in sorted(slots.items(), key=lambda kv: (kv[0] is None, kv[0] or ""))
            for _ in range(k)
        ]
        for p, n in zip(rest, free, strict=True):
            out[p.key] = n
    return out
