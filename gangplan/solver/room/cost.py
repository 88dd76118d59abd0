"""What a make-room plan costs (:class:`~gangplan.models.room.RoomWeights`), and its greedy
check as a document: shared by the optimal plan and the baseline."""

from __future__ import annotations

from collections.abc import Iterable

from gangplan.models.cluster import Cluster
from gangplan.models.room import RoomCheck, RoomCost, RoomWeights
from gangplan.models.well_known import GPU
from gangplan.solver.room.verify import Check


def plan_cost(
    cluster: Cluster, moves: Iterable[str], evictions: Iterable[str], weights: RoomWeights
) -> RoomCost:
    """The cost of moving and evicting these running pods (:class:`RoomWeights`)."""
    moves, evictions = sorted(set(moves)), sorted(set(evictions))
    tree, pods = cluster.groups, cluster.pod_by_key
    touched = [pods[k] for k in moves + evictions]
    groups = {tree.entity_of(p).key for p in touched if p.group_key in tree}
    gpus = sum(int(p.requests.get(GPU, 0)) for p in touched)
    parts = {"groups": len(groups), "moves": len(moves), "evictions": len(evictions), "gpus": gpus}
    return RoomCost(**parts, total=weights.cost(**parts))


def check_doc(check: Check) -> RoomCheck:
    return RoomCheck(
        verified=check.verified,
        targets_admitted=check.targets_admitted,
        targets_pending=check.targets_pending,
        moved_running=check.moved_running,
        moved_pending=check.moved_pending,
        landed=check.landed,
        preempted=check.preempted,
        violations=check.violations,
    )
