"""Who preemption may evict, and in which order: the candidate victim units on the nodes (rule V
of issue 39: every pod on a node, bound in the snapshot or placed by the run), the ones below a
preemptor's priority, their importance (``MoreImportantVictim``) and their PDB classes
(``FilterVictimsWithPDBViolation``). Used by :mod:`.preemption`, which runs default and
workload-aware preemption with them."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from gangplan.models.groups import VictimUnit, parse_timestamp
from gangplan.models.objective import pdb_counts
from gangplan.models.objects import Pod, PodDisruptionBudget
from gangplan.models.preemption import FAR_FUTURE
from gangplan.models.version import NEWEST, KubeVersion

if TYPE_CHECKING:
    from gangplan.models.cluster import Cluster
    from gangplan.solver.greedy.snapshot import NodeTable
    from gangplan.solver.greedy.state import RunState

RANK = {"Pod": 1, "PodGroup": 2, "CompositePodGroup": 3}


def importance(u: VictimUnit, version: KubeVersion = NEWEST) -> tuple:
    """Sort key of a victim unit, most important first (``MoreImportantVictim``): priority,
    then unit kind (CompositePodGroup over PodGroup over Pod), size, earliest start, uid.
    v1.36 (``moreImportantVictim``, ``framework/preemption/types.go`` release-1.36) ranks a unit
    as a group when its first pod belongs to one (``IsPodGroup``: ``spec.schedulingGroup`` set),
    so a lone pod of a ``disruptionMode: Pod`` group counts as a group there."""
    rank = RANK[u.kind] if version != KubeVersion.V1_36 else (1 if u.pods[0].group_key else 0)
    return (
        -u.priority,
        -rank,
        -len(u.pods),
        min((start_time(p) for p in u.pods), default=FAR_FUTURE),
        u.pods[0].uid,
        u.pods[0].key,
    )


def start_time(p: Pod) -> datetime:
    """A pod's ``status.startTime``; a pod without one sorts last (:data:`FAR_FUTURE`)."""
    return parse_timestamp(p.start_time) if p.start_time else FAR_FUTURE


def victim_units(cluster: Cluster, snap: NodeTable, placed: Iterable[Pod] = ()) -> list[VictimUnit]:
    """Every unit over the pods on nodes that preemption may evict (``getCrossNodesVictims``): the
    bound pods still on a node, in pod order, then the units over ``placed`` (pending pods the run
    placed, rule V of issue 39) still on a node, in the given order. A ``disruptionMode: all``
    group with pods of both kinds on nodes is one unit holding both.

    Bound pods leave only as whole units of this list (evictions) and come back the same way, so
    the units over the bound pods still on nodes are the units over every bound pod whose first
    pod is on a node: those are computed once per run and filtered. When their pods do not add up
    to the bound pods on nodes (a unit partly on nodes, which evictions never leave), the pods are
    grouped again. The units over ``placed`` are built per call; one over the same pods is the
    same object each time (:attr:`NodeTable.placed_units_cache`)."""
    cached = snap.victim_units_cache
    if cached is None:
        every = cluster.groups.victim_units(cluster.bound_pods)
        cached = snap.victim_units_cache = [(u.pods[0].key, len(u.pods), u) for u in every]
    on = snap.node_of
    out = [u for first, _, u in cached if first in on]
    if sum(n for first, n, _ in cached if first in on) != snap.bound_on_nodes:
        out = cluster.groups.victim_units(p for p in cluster.bound_pods if p.key in on)
    extra = [p for p in placed if p.key in on]
    if not extra:
        return out
    at = {u.key: k for k, u in enumerate(out) if not u.key.is_pod}
    units = snap.placed_units_cache
    for u in cluster.groups.victim_units(extra):
        k = at.get(u.key)
        if k is not None:  # an all-mode unit: its bound pods and those the run placed
            u = VictimUnit(u.key, u.kind, out[k].pods + u.pods, u.priority)
        ident = (u.key, tuple(p.key for p in u.pods))
        u = units.setdefault(ident, u)
        if k is not None:
            out[k] = u
        else:
            out.append(u)
    return out


def victims_below(state: RunState, priority: int) -> list[VictimUnit]:
    """The units of :func:`victim_units` with a priority below ``priority`` (the preemptor's):
    the only ones preemption may evict (``isPreemptionAllowed``). The candidates are every pod on
    a node (rule V of issue 39): bound pods of the snapshot, pods the run placed earlier
    (:attr:`RunState.placements`: bound or nominated, with the victims of a preemption still
    terminating), never the preemptor's own pods of its current attempt.

    When no unit can be below it (every running pod outranks the preemptor, as on a cluster whose
    running jobs have a higher class), that is known without listing the units: the floor over
    every bound pod is computed once per run, and :attr:`RunState.placed_floor` bounds the pods
    the run placed (a pod placed during the run lowers it)."""
    cluster, snap = state.cluster, state.snap
    floor = snap.victim_priority_floor
    if floor is None:
        tree = cluster.groups
        floor = snap.victim_priority_floor = min(
            (tree.unit_priority(p) for p in cluster.bound_pods), default=None
        )
    placed_floor = state.placed_floor
    bound_below = floor is not None and floor < priority
    placed_below = placed_floor is not None and placed_floor < priority
    if not bound_below and not placed_below:
        return []
    placed: list[Pod] = []
    if placed_below:
        tree, by_key = cluster.groups, cluster.pod_by_key
        placed = [
            p
            for k in state.placements
            if tree.unit_priority(p := by_key[k]) < priority and k in snap.node_of
        ]
    return [u for u in victim_units(cluster, snap, placed) if u.priority < priority]


def classify_pdb(
    units: list[VictimUnit], pdbs: tuple[PodDisruptionBudget, ...]
) -> tuple[list[VictimUnit], list[VictimUnit], dict[str, int]]:
    """``FilterVictimsWithPDBViolation``: (violating, non-violating, violating pods per unit).
    Budgets are consumed in the given (importance) order; a pod stops at its first violated PDB."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]

    def violating(pod: Pod) -> bool:
        for i, pdb in enumerate(pdbs):
            if not pdb_counts(pdb, pod):
                continue
            allowed[i] -= 1
            if allowed[i] < 0:
                return True
        return False

    bad, good, counts = [], [], {}
    for u in units:
        n = sum(1 for p in u.pods if violating(p))
        if n:
            bad.append(u)
            counts[str(u.key)] = n
        else:
            good.append(u)
    return bad, good, counts
