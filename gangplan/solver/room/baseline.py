"""The greedy baseline of ``make-room``: empty the domain with the fewest pods in the way first, in
the spirit of KAI-Scheduler's consolidation (its reclaim / consolidation actions pick the
victims that free a node's room with the fewest evictions; ``pkg/scheduler/actions/consolidation``
of kai-scheduler/KAI-Scheduler). Documented so every make-room answer shows what a simple
heuristic costs beside the optimum.

Per target, highest priority first (then by key):

1. Its domains: the values of its group's ``topology_key`` (a PodGroup's or its root's
   scheduling constraint), or the whole cluster when it has none.
2. In each domain, the nodes that can be emptied (every pod on them may move, or with
   ``--evict`` be evicted for being of lower priority) ordered by the pods in the way (fewest
   first, then most free GPUs, then name); the other nodes only lend their free room.
3. Domains ordered by the pods in the way of the shortest prefix of that order whose room (and
   the other nodes' free room) holds the target's pods by first fit decreasing; the first domain
   whose plan the greedy check (:func:`.verify.check_plan`) verifies wins: its nodes are emptied
   (their pods evicted) one more at a time, in order, each time the first-fit test passes, until
   the check verifies or the domain is used up; the emptied nodes and the nodes whose free room
   the first fit gives the target are cordoned while the moved pods are re-created.

The state the next target sees is the one the verified plan left (the check's second step).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from gangplan.models.cluster import Cluster
from gangplan.models.objective import pdb_violations
from gangplan.models.objects import Node, Pod
from gangplan.models.room import Move, RoomPlan, RoomWeights
from gangplan.models.well_known import GPU
from gangplan.solver.room.cost import check_doc, plan_cost
from gangplan.solver.room.mark import after_moves, bound, move_order, target_pods
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


def _first_domain(state, root, movable_keys, evict, seed, expected=()):
    """The first domain (in the module docstring's order) whose emptied nodes verify, as
    (nodes cordoned, its check, pods moved, pods evicted), or None."""
    prio = _priority(state, root)
    goal = [state.pod_by_key[k] for k in sorted(target_pods(state, [root]))]
    for order, others in _ranked_domains(state, root, movable_keys, prio, evict, goal):
        found = _empty_domain(state, root, order, others, goal, seed, evict, expected)
        if found is not None:
            return found
    return None


def baseline_plan(
    cluster: Cluster,
    roots: list[str],
    movable: list[Pod],
    *,
    weights: RoomWeights,
    evict: bool,
    seed: int = 0,
    expected: tuple[str, ...] | list[str] = (),
) -> tuple[RoomPlan, dict[str, str]]:
    """The baseline plan for ``roots`` (see the module docstring), and where the plan leaves the
    movable and target pods it placed (pod -> node, for the exact engine's start). ``expected``:
    the pods kube-scheduler preempts without any plan (not the plan's evictions)."""
    movable_keys = {p.key for p in movable}
    state = cluster
    moves: list[Move] = []
    evictions: list[str] = []
    cordon: set[str] = set()
    admitted: list[str] = []
    last: Check | None = None
    for root in sorted(roots, key=lambda r: (-_priority(cluster, r), r)):
        best = _first_domain(state, root, movable_keys, evict, seed, expected)
        if best is None:
            continue
        chosen, last, moved, gone = best
        admitted.append(root)
        cordon.update(chosen)
        moves += [
            Move(pod=k, from_=state.pod_by_key[k].node_name, to=last.landed.get(k, ""))
            for k in move_order(state, moved)
        ]
        evictions += gone + [k for k in last.preempted if k not in gone and k not in expected]
        r1, r2 = last.results
        state = bound(bound(after_moves(state, moved, gone, chosen), r1, uncordon=chosen), r2)
    if set(admitted) != set(roots) or last is None:
        return RoomPlan(found=False, targets_admitted=sorted(admitted)), {}
    now = state.pod_by_key
    placed = {
        k: now[k].node_name
        for k in sorted(movable_keys | target_pods(cluster, roots))
        if k in now and now[k].node_name is not None
    }
    plan = RoomPlan(
        found=True,
        targets_admitted=sorted(admitted),
        cordon=sorted(cordon),
        moves=moves,
        evictions=sorted(evictions),
        cost=plan_cost(cluster, [m.pod for m in moves], evictions, weights),
        check=check_doc(last),
    )
    return plan, placed


def _priority(cluster: Cluster, root: str) -> int:
    tree = cluster.groups
    if root in tree:
        return tree.node(root).priority
    return cluster.pod_by_key[root].priority


@dataclass
class _Index:
    """What the baseline reads of one state, computed once: bound pods and free room per node."""

    state: Cluster
    on_node: dict[str, list[Pod]]
    free: dict[str, dict[str, int]]

    @classmethod
    def of(cls, state: Cluster) -> _Index:
        on_node: dict[str, list[Pod]] = defaultdict(list)
        for p in state.bound_pods:
            on_node[p.node_name].append(p)
        return cls(state, on_node, _free(state))


def _in_way(
    index: _Index, node: str, movable: set[str], prio: int, evict: bool
) -> tuple[list[str], list[str], bool]:
    """(pods to move, pods to evict, whether something that must stay is there). A pod of a
    ``disruptionMode: all`` group brings every running pod of its root group along."""
    state = index.state
    tree = state.groups
    moved: list[str] = []
    gone: list[str] = []
    stuck = False

    def take(p: Pod) -> None:
        nonlocal stuck
        if p.key in movable:
            moved.append(p.key)
        elif evict and p.priority < prio:
            gone.append(p.key)
        else:
            stuck = True

    for p in index.on_node.get(node, ()):
        take(p)
    roots = {tree.entity_of(state.pod_by_key[k]).key for k in moved + gone}
    whole = sorted(r for r in roots if r in tree and tree.node(r).disruption_mode == "all")
    for r in whole:
        for p in tree.entity_pods(tree.node(r).entity):
            if p.node_name is not None and p.node_name != node:
                take(p)
    return moved, gone, stuck


def _fits(pods: list[Pod], bins: list[tuple[str, dict[str, int]]]) -> set[str] | None:
    """First fit decreasing of ``pods`` (by GPUs, then CPU) into ``bins`` ((node, free room)): the
    nodes it uses, or None when the target does not fit the room at all."""
    room = [(name, dict(b)) for name, b in bins]
    used = set()
    for p in sorted(pods, key=lambda p: (-p.requests.get(GPU, 0), -p.requests.get("cpu", 0))):
        for name, b in room:
            if all(b.get(r, 0) >= q for r, q in p.requests.items()):
                for r, q in p.requests.items():
                    b[r] = b.get(r, 0) - q
                used.add(name)
                break
        else:
            return None
    return used


def _candidates(index: _Index, nodes, movable, prio, evict):
    """(emptiable nodes in order, the free room of the others): a node is emptiable when every pod
    on it may move (or, with ``evict``, be evicted); fewest pods in the way first."""
    free = index.free
    ranked, others = [], []
    for n in nodes:
        if n.unschedulable:
            continue
        moved, gone, stuck = _in_way(index, n.name, movable, prio, evict)
        if stuck or not (moved or gone):
            others.append((n.name, free[n.name]))
            continue
        ranked.append((len(moved) + len(gone), -free[n.name].get(GPU, 0), n.name, n, moved, gone))
    ranked.sort(key=lambda t: t[:3])
    return [(n, moved, gone) for *_, n, moved, gone in ranked], others


def _ranked_domains(state, root, movable, prio, evict, goal):
    out = []
    index = _Index.of(state)
    for name, nodes in _domains(state, root):
        order, others = _candidates(index, nodes, movable, prio, evict)
        cost, bins = 0, list(others)
        for n, moved, gone in order + [(None, [], [])]:
            if _fits(goal, bins) is not None:
                break
            if n is None:
                cost = None
                break
            bins.append((n.name, dict(n.allocatable)))
            cost += len(moved) + len(gone)
        if cost is not None:
            out.append((cost, name, order, others))
    out.sort(key=lambda t: t[:2])
    return [(order, others) for _, _, order, others in out]


def _empty_domain(state, root, order, others, goal, seed, evict, expected=()):
    """Empty the domain's nodes one more at a time (in order) until the greedy check verifies;
    a node whose pods a PodDisruptionBudget would keep is skipped."""
    chosen: list[str] = []
    moved: list[str] = []
    gone: list[str] = []
    bins = list(others)
    checks = 0
    pods = state.pod_by_key
    for n, m, g in order:
        if pdb_violations(state, [pods[k] for k in moved + gone + m + g]):
            continue
        chosen.append(n.name)
        moved += m
        gone += g
        bins.append((n.name, dict(n.allocatable)))
        used = _fits(goal, bins)
        if used is None:
            continue
        if checks >= MAX_CHECKS:
            return None
        checks += 1
        fenced = sorted(set(chosen) | used)  # the emptied nodes and the free room the target takes
        check = check_plan(
            state,
            targets=[root],
            moved=moved,
            evicted=gone,
            cordoned=fenced,
            seed=seed,
            evict=evict,
            expected=expected,
        )
        if check.verified:
            return fenced, check, list(moved), list(gone)
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
