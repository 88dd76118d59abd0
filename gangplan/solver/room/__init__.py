"""What would it take to admit pending groups (``gangplan make-room``, issue 40).

:func:`make_room` answers with two plans for the same targets:

* **optimal**: the exact engine's make-room objective (:mod:`gangplan.solver.exact.room`) on the
  marked cluster (:mod:`.mark`): the targets admitted first, then the cheapest moves of running
  pods their controllers re-create and, with ``evict``, evictions of lower-priority work, as
  weighed by :class:`~gangplan.models.room.RoomWeights`; proven or with what stays open;
* **baseline**: a greedy heuristic in the spirit of KAI-Scheduler's consolidation
  (:mod:`.baseline`).

Both are then run through kube-scheduler's own cycle (:mod:`.verify`): a plan is ``verified``
only when, after its steps, the greedy engine admits every target and every moved pod runs
again. The document is :class:`~gangplan.models.room.RoomDocument`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from gangplan.models import defaults as D
from gangplan.models.cluster import Cluster
from gangplan.models.objects import Pod
from gangplan.models.result import Result, Status
from gangplan.models.room import (
    CopiesThatFit,
    Move,
    RoomCost,
    RoomDocument,
    RoomPlan,
    RoomSpec,
    RoomWeights,
)
from gangplan.solver.exact import solve_exact
from gangplan.solver.exact.instance import pod_signature
from gangplan.solver.exact.room import ROOM_COST
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.outcome import build_result
from gangplan.solver.room.baseline import baseline_plan
from gangplan.solver.room.cost import check_doc, plan_cost
from gangplan.solver.room.grow import copies_that_fit, nodes_to_add
from gangplan.solver.room.mark import (
    bound,
    marked,
    movable_pods,
    move_order,
    pair_moves,
    target_pods,
)
from gangplan.solver.room.verify import admitted_roots, check_plan


class TargetError(ValueError):
    """A named target is not a pending group (or pod) of the snapshot."""


def resolve_targets(cluster: Cluster, names: Sequence[str] | None, greedy: Result) -> list[str]:
    """Root entity keys to admit. ``names``: PodGroup / CompositePodGroup keys (``ns/name``, or a
    bare name when unique) or pending pod keys; a child group names its root. Default: every
    pending root the greedy run leaves unadmitted."""
    tree = cluster.groups
    pending_roots: dict[str, list[Pod]] = {}
    for p in cluster.queued_pods:
        pending_roots.setdefault(tree.entity_of(p).key, []).append(p)
    if not names:
        done = set(admitted_roots(cluster, [greedy], pending_roots))
        return sorted(k for k in pending_roots if k not in done)
    out = []
    for name in names:
        key = _resolve(cluster, name, pending_roots)
        if key not in out:
            out.append(key)
    return out


def _resolve(cluster: Cluster, name: str, pending_roots: dict[str, list[Pod]]) -> str:
    tree = cluster.groups
    keys = [name] if "/" in name else [k for k in tree.nodes if k.split("/", 1)[1] == name]
    keys += [
        p.key for p in cluster.pending_pods if p.key == name or ("/" not in name and p.name == name)
    ]
    hits = []
    for k in keys:
        if k in tree:
            hits.append(tree.node(k).root)
        elif k in cluster.pod_by_key:
            hits.append(tree.entity_of(cluster.pod_by_key[k]).key)
    hits = sorted(set(hits))
    if len(hits) > 1:
        raise TargetError(f"{name!r} names several groups: {', '.join(hits)}; give namespace/name")
    if not hits:
        raise TargetError(
            f"{name!r} is no PodGroup, CompositePodGroup or pending pod of the snapshot"
        )
    if hits[0] not in pending_roots:
        raise TargetError(f"{hits[0]} has no pending pod kube-scheduler would queue")
    return hits[0]


def optimal_plan(
    cluster: Cluster,
    roots: list[str],
    movable: list[Pod],
    *,
    weights: RoomWeights,
    evict: bool,
    time_limit: float,
    wall_limit: float | None,
    workers: int,
    seed: int,
    start: dict[str, str] | None = None,
) -> tuple[RoomPlan, Result]:
    """The exact engine's plan (see the module docstring) and its Result on the marked cluster.
    ``start``: a plan's placements (pod -> node: the baseline's) the search starts from; every
    movable pod where it runs otherwise."""
    question = marked(cluster, roots, movable)
    placements = {p.key: p.node_name for p in movable}
    placements.update(start or {})
    stay = build_result(question, engine="greedy", status=Status.FEASIBLE, placements=placements)
    result = solve_exact(
        question,
        room=RoomSpec(weights=weights, evict=evict),
        hint=stay,
        preemption=evict,
        time_limit=time_limit,
        wall_limit=wall_limit,
        workers=workers,
        seed=seed,
    )
    moves, gone = decoded_moves(cluster, question, movable, result)
    evictions = sorted(gone + list(result.victims))
    goal = target_pods(question, roots)
    cordon = sorted({o.node for k, o in result.pods.items() if k in goal and o.node})
    admitted = admitted_roots(question, [result], roots)
    found = result.status in (Status.OPTIMAL, Status.FEASIBLE) and set(admitted) == set(roots)
    if not found:
        return RoomPlan(found=False, targets_admitted=admitted), result
    cost = plan_cost(cluster, [m.pod for m in moves], evictions, weights)
    plan = RoomPlan(
        found=True,
        targets_admitted=admitted,
        cordon=cordon,
        moves=moves,
        evictions=evictions,
        cost=cost,
    )
    return plan, result


def decoded_moves(
    cluster: Cluster, question: Cluster, movable: list[Pod], result: Result
) -> tuple[list[Move], list[str]]:
    """The exact Result on the marked cluster as moves (in :func:`.mark.move_order`) and the
    movable pods it leaves unplaced (evicted). The pods of a ``disruptionMode: all`` group that
    moves are all moves, even those that land where they ran (the group is re-created whole)."""
    placed = {k: o.node for k, o in result.pods.items()}
    where = pair_moves(movable, placed, pod_signature)
    tree = question.groups

    def root(p: Pod) -> str | None:
        return tree.entity_of(p).key if p.group_key in tree else None

    whole = {
        root(p)
        for p in movable
        if root(p)
        and tree.node(root(p)).disruption_mode == "all"
        and where.get(p.key) != p.node_name
    }
    moves, gone = [], []
    order = {k: i for i, k in enumerate(move_order(cluster, [p.key for p in movable]))}
    for p in sorted(movable, key=lambda p: order[p.key]):
        to = where.get(p.key)
        if to is None:
            gone.append(p.key)
        elif to != p.node_name or root(p) in whole:
            moves.append(Move(pod=p.key, from_=p.node_name, to=to))
    return moves, gone


def _cost_bound(result: Result, cost: RoomCost) -> int | None:
    """The lowest total cost the search could not rule out."""
    trace = result.exact_trace
    for ph in (trace.phases or []) if trace else []:
        if ph.tier == ROOM_COST and ph.bound is not None:
            return max(0, cost.total - int(round(float(ph.bound) - float(ph.value))))
    return None


def make_room(
    cluster: Cluster,
    targets: Sequence[str] | None = None,
    *,
    evict: bool = False,
    weights: RoomWeights | None = None,
    time_limit: float = D.TIME_LIMIT,
    wall_limit: float | None = None,
    workers: int = D.WORKERS,
    seed: int = D.SEED,
    snapshot: str | None = None,
    like: str | None = None,
    add_nodes: bool = True,
    copies: int = 0,
    samples: int = 0,
) -> RoomDocument:
    """The cheapest change that admits ``targets`` (default: every pending group kube-scheduler
    leaves pending), the greedy baseline's, and the greedy check of both (module docstring).

    ``add_nodes``: also the fewest new nodes per shape (``like``: the node to copy; default the
    largest node classes) that admit the targets with nothing moved (:mod:`.grow`); ``copies``:
    also how many of ``copies`` copies of each target fit now. The check breaks kube-scheduler's
    score ties by snapshot order; ``samples``: it also runs that many times with seeded random
    ties (upstream draws them at random) and says in how many the plan works."""
    weights = weights or RoomWeights()
    greedy = solve_greedy(cluster, seed=seed)
    roots = resolve_targets(cluster, targets, greedy)
    # The state kube-scheduler reaches before any plan: what its run places stays placed there.
    settled = bound(cluster, greedy)
    notes: list[str] = []
    as_is = set(admitted_roots(cluster, [greedy], roots))
    asked = list(roots)
    if as_is:
        notes.append(f"kube-scheduler admits {', '.join(sorted(as_is))} as the snapshot is")
        roots = [r for r in roots if r not in as_is]
    grow = dict(time_limit=time_limit, workers=workers, seed=seed)
    fits = []
    for root in asked if copies else []:
        g, e, ok = copies_that_fit(cluster, root, most=copies, **grow)
        fits.append(CopiesThatFit(target=root, offered=copies, greedy=g, optimal=e, proven=ok))
    movable, why = movable_pods(cluster, roots)
    not_movable = dict(sorted(Counter(why.values()).items()))
    common = dict(
        snapshot=snapshot,
        kube_version=cluster.kube_version.value,
        targets=roots,
        weights=weights,
        evict=evict,
        not_movable=not_movable,
    )
    if not roots:
        empty = RoomPlan(found=True)
        if not as_is:
            notes.append("kube-scheduler admits every pending group as the snapshot is")
        notes.append("nothing to do")
        return RoomDocument(
            **common,
            verified=True,
            proven=True,
            status="OPTIMAL",
            bound=0,
            optimal=empty,
            baseline=empty,
            copies_that_fit=fits,
            notes=notes,
        )
    base, start = baseline_plan(
        cluster, roots, movable, weights=weights, evict=evict, seed=seed, expected=greedy.victims
    )
    plan, result = optimal_plan(
        settled,
        roots,
        [p for p in movable if p.key in settled.pod_by_key],
        start=start if base.found and not base.evictions else None,
        weights=weights,
        evict=evict,
        time_limit=time_limit,
        wall_limit=wall_limit,
        workers=workers,
        seed=seed,
    )
    if plan.found:
        check = check_plan(
            cluster,
            targets=roots,
            moved=[m.pod for m in plan.moves],
            evicted=plan.evictions,
            cordoned=plan.cordon,
            seed=seed,
            evict=evict,
            expected=greedy.victims,
        )
        doc = check_doc(check)
        if samples:
            draws = [
                check_plan(
                    cluster,
                    targets=roots,
                    moved=[m.pod for m in plan.moves],
                    evicted=plan.evictions,
                    cordoned=plan.cordon,
                    seed=s,
                    tie_break="random",
                    evict=evict,
                    expected=greedy.victims,
                ).verified
                for s in range(seed, seed + samples)
            ]
            doc = doc.model_copy(update={"draws": samples, "draws_working": sum(draws)})
        plan = plan.model_copy(update={"check": doc})
    proven = result.status == Status.OPTIMAL
    more = nodes_to_add(cluster, roots, like=like, **grow) if add_nodes else []
    if not plan.found and proven:
        notes.append(
            "no plan admits every target: the exact engine proved it "
            f"(at most {len(plan.targets_admitted)} of {len(roots)} admitted)"
        )
    return RoomDocument(
        **common,
        verified=bool(plan.found and plan.check and plan.check.verified),
        proven=proven,
        status=result.status.value,
        bound=plan.cost.total if proven else _cost_bound(result, plan.cost),
        optimal=plan,
        baseline=base,
        nodes_to_add=more,
        copies_that_fit=fits,
        notes=notes,
    )


__all__ = ["TargetError", "make_room", "plan_cost", "resolve_targets"]
