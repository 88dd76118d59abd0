"""The greedy baseline of ``make-room``: empty the domain with the fewest pods in the way first, in
the spirit of KAI-Scheduler's consolidation (its reclaim / consolidation actions pick the
victims that free a node's room with the fewest evictions; ``pkg/scheduler/actions/consolidation``
of kai-scheduler/KAI-Scheduler). Documented so every make-room answer shows what a simple
heuristic costs beside the optimum.

Per target, highest priority first (then by key):

1. Its domains: the values of its group's ``topology_key`` (a PodGroup's or its root's
   scheduling constraint), or the whole cluster when it has none.
2. In each domain, the nodes ordered by the pods in the way (movable pods on the node, then
   lower-priority pods when evictions are allowed; fewest first, then most free GPUs, then
   name); a node with a pod that can neither move nor be evicted is used only for its free room.
3. Domains ordered by the pods in the way of the cheapest nodes that hold the target's total
   request (an aggregate, necessary test); the first domain whose plan the greedy check
   (:func:`.verify.check_plan`) verifies wins: its nodes are emptied one more at a time, in
   order, each time the aggregate test passes, until the check verifies or the domain is used up.

The state the next target sees is the one the verified plan left (the check's second step).
"""

from __future__ import annotations

from collections import defaultdict

from gangplan.models.cluster import Cluster
from gangplan.models.objects import Node, Pod
from gangplan.models.room import Move, RoomCost, RoomPlan, RoomWeights
from gangplan.models.well_known import GPU
from gangplan.solver.room.cost import check_doc, plan_cost
from gangplan.solver.room.mark import after_moves, bound, target_pods
from gangplan.solver.room.verify import Check, check_plan

MAX_CHECKS = 24
"""Greedy checks per target at most (each is two runs of the greedy engine)."""


def _topology_key(cluster: Cluster, root: str) -> str | None:
    tree = cluster.groups
    if root not in tree:
        return None
    node = tree.node(root)
    if node.obj.topology_key:
        return node.obj.topology_key
    for leaf in node.leaves:
        key = tree.node(leaf).obj.topology_key
        if key:
            return key
    return None


def _domains(cluster: Cluster, root: str) -> list[tuple[str, list[Node]]]:
    key = _topology_key(cluster, root)
    if key is None:
        return [("", list(cluster.nodes))]
    out: dict[str, list[Node]] = defaultdict(list)
    for n in cluster.nodes:
        if key in n.labels:
            out[f"{key}={n.labels[key]}"].append(n)
    return sorted(out.items())


def _need(pods: list[Pod]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for p in pods:
        for r, q in p.requests.items():
            out[r] += q
    return out


def baseline_plan(
    cluster: Cluster,
    roots: list[str],
    movable: list[Pod],
    *,
    weights: RoomWeights,
    evict: bool,
    seed: int = 0,
) -> RoomPlan:
    """The baseline plan for ``roots`` (see the module docstring)."""
    movable_keys = {p.key for p in movable}
    order = sorted(roots, key=lambda r: (-_priority(cluster, r), r))
    state = cluster
    moves: list[Move] = []
    evictions: list[str] = []
    cordon: set[str] = set()
    admitted: list[str] = []
    last: Check | None = None
    for root in order:
        prio = _priority(cluster, root)
        goal = [state.pod_by_key[k] for k in sorted(target_pods(state, [root]))]
        need = _need(goal)
        best = None
        for _, nodes in _ranked_domains(state, root, movable_keys, prio, evict, need):
            found = _empty_domain(state, root, nodes, movable_keys, prio, evict, need, seed)
            if found is not None:
                best = found
                break
        if best is None:
            continue
        chosen, check, moved, gone = best
        last = check
        admitted.append(root)
        cordon.update(chosen)
        moves += [
            Move(pod=k, from_=state.pod_by_key[k].node_name, to=check.landed.get(k, ""))
            for k in moved
        ]
        evictions += gone
        r1, r2 = check.results
        step1 = after_moves(state, moved, gone, chosen)
        state = bound(bound(step1, r1, uncordon=chosen), r2)
    found = set(admitted) == set(roots)
    cost = plan_cost(cluster, [m.pod for m in moves], evictions, weights)
    return RoomPlan(
        found=found,
        targets_admitted=sorted(admitted),
        cordon=sorted(cordon) if found else [],
        moves=moves if found else [],
        evictions=sorted(evictions) if found else [],
        cost=cost if found else RoomCost(),
        check=check_doc(last) if found and last is not None else None,
    )


def _priority(cluster: Cluster, root: str) -> int:
    tree = cluster.groups
    if root in tree:
        return tree.node(root).priority
    return cluster.pod_by_key[root].priority


def _in_way(
    state: Cluster, node: str, movable: set[str], prio: int, evict: bool
) -> tuple[list[str], list[str], bool]:
    """(pods to move, pods to evict, whether something that must stay is there)."""
    moved, gone, stuck = [], [], False
    for p in state.bound_pods:
        if p.node_name != node:
            continue
        if p.key in movable:
            moved.append(p.key)
        elif evict and p.priority < prio:
            gone.append(p.key)
        else:
            stuck = True
    return moved, gone, stuck


def _ranked_domains(state, root, movable, prio, evict, need):
    out = []
    for name, nodes in _domains(state, root):
        ranked = []
        for n in nodes:
            moved, gone, stuck = _in_way(state, n.name, movable, prio, evict)
            ranked.append((len(moved) + len(gone), -int(n.allocatable.get(GPU, 0)), n.name, n))
        ranked.sort(key=lambda t: t[:3])
        total = defaultdict(int)
        cost = 0
        for k, _, _, n in ranked:
            for r, q in n.allocatable.items():
                total[r] += q
            cost += k
            if all(total.get(r, 0) >= q for r, q in need.items()):
                break
        else:
            continue  # the whole domain cannot hold the target
        out.append((cost, name, [n for *_, n in ranked]))
    out.sort(key=lambda t: t[:2])
    return [(name, nodes) for _, name, nodes in out]


def _empty_domain(state, root, nodes, movable, prio, evict, need, seed):
    """Empty ``nodes`` one more at a time (in order) until the greedy check verifies."""
    chosen: list[str] = []
    moved: list[str] = []
    gone: list[str] = []
    checks = 0
    free = _free(state)
    room = defaultdict(int)
    for n in nodes:
        m, g, stuck = _in_way(state, n.name, movable, prio, evict)
        chosen.append(n.name)
        moved += m
        gone += g
        for r, q in n.allocatable.items():
            room[r] += q if not stuck else free[n.name].get(r, 0)
        if not all(room.get(r, 0) >= q for r, q in need.items()):
            continue
        if checks >= MAX_CHECKS:
            return None
        checks += 1
        check = check_plan(
            state, targets=[root], moved=moved, evicted=gone, cordoned=chosen, seed=seed
        )
        if check.verified:
            return list(chosen), check, list(moved), list(gone)
    return None


def _free(state: Cluster) -> dict[str, dict[str, int]]:
    used: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for p in state.bound_pods:
        for r, q in p.requests.items():
            used[p.node_name][r] += q
    return {
        n.name: {r: q - used[n.name].get(r, 0) for r, q in n.allocatable.items()}
        for n in state.nodes
    }
