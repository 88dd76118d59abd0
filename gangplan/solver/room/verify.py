"""The greedy check of a make-room plan: kube-scheduler's own cycle (gangplan's greedy engine at
the snapshot's version) runs the plan's steps, and the plan works only if the targets are then
admitted and every moved pod runs again.

Steps (what ``plan.sh`` does, :mod:`gangplan.io.plan`): cordon the nodes the targets are to take;
evict the moved and evicted pods (the Eviction API); the controllers re-create the moved pods and
kube-scheduler places them, every pending pod of the snapshot queued as it is (the targets too:
they may find room elsewhere); once they run, uncordon; kube-scheduler then places what is still
pending. Each step's Result goes through the independent validator; the moved pods land where
kube-scheduler puts them, not where the optimum wished.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from gangplan.models.cluster import Cluster
from gangplan.models.objective import pdb_violations
from gangplan.models.result import Result
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.room.mark import after_moves, bound
from gangplan.solver.validate import validate


@dataclass
class Check:
    """What the greedy replay of a plan gave."""

    verified: bool
    targets_admitted: list[str]
    targets_pending: list[str]
    moved_running: int
    moved_pending: list[str]
    landed: dict[str, str] = field(default_factory=dict)
    """Moved pod -> the node kube-scheduler re-created it on."""
    preempted: list[str] = field(default_factory=list)
    """Pods kube-scheduler's own preemption evicted during the replay (not in the plan)."""
    violations: list[str] = field(default_factory=list)
    """Why the plan does not work beyond the targets and moved pods: evictions the Eviction API
    refuses, preemptions not allowed, and validator findings on the replay's Results (a gangplan
    bug if any)."""
    results: tuple[Result, Result] | None = None


def admitted_roots(cluster: Cluster, results: Iterable[Result], roots: Iterable[str]) -> list[str]:
    """The roots among ``roots`` the runs admitted: a single pod placed; a PodGroup with its
    minCount of pods running (bound before, or placed by a run); a CompositePodGroup with its
    minGroupCount of children admitted."""
    results = list(results)
    placed = {k for r in results for k, o in r.pods.items() if o.node is not None}
    gone = {k for r in results for k in r.victims}
    tree = cluster.groups
    running: dict[str, int] = {}
    for p in cluster.pods:
        if p.group_key and p.key not in gone and (p.node_name is not None or p.key in placed):
            running[p.group_key] = running.get(p.group_key, 0) + 1

    def admitted(key: str) -> bool:
        node = tree.node(key)
        if node.is_leaf:
            return running.get(key, 0) >= node.need
        return sum(1 for c in node.children if admitted(c)) >= node.need

    out = []
    for root in sorted(set(roots)):
        if root in tree:
            if admitted(root):
                out.append(root)
        elif root in placed:
            out.append(root)
    return out


def check_plan(
    cluster: Cluster,
    *,
    targets: Iterable[str],
    moved: Iterable[str],
    evicted: Iterable[str],
    cordoned: Iterable[str],
    seed: int = 0,
    tie_break: str = "first",
    evict: bool = False,
    expected: Iterable[str] = (),
) -> Check:
    """Run the plan's steps with the greedy engine (see the module docstring). The plan fails
    when the Eviction API would refuse one of its evictions (a PodDisruptionBudget's
    ``disruptionsAllowed``), and, unless ``evict`` lets lower-priority work stop, when
    kube-scheduler's own preemption evicts anything on the way that it would not evict without
    the plan (``expected``: the victims of its run on the snapshot as it is)."""
    targets, moved, cordoned = sorted(set(targets)), sorted(set(moved)), sorted(set(cordoned))
    evicted = sorted(set(evicted))
    refused = pdb_violations(cluster, [cluster.pod_by_key[k] for k in moved + evicted])
    step1 = after_moves(cluster, moved, evicted, cordoned)
    r1 = solve_greedy(step1, seed=seed, tie_break=tie_break)
    violations = [f"step 1: {v}" for v in validate(step1, r1)]
    landed = {k: r1.pods[k].node for k in moved if r1.pods.get(k) and r1.pods[k].node}
    step2 = bound(step1, r1, uncordon=cordoned)
    r2 = solve_greedy(step2, seed=seed, tie_break=tie_break)
    violations += [f"step 2: {v}" for v in validate(step2, r2)]
    admitted = admitted_roots(step1, [r1, r2], targets)
    preempted = sorted(set(r1.victims) | set(r2.victims))
    moved_pending = [k for k in moved if k not in landed or k in preempted]
    if refused:
        violations.append(
            f"the Eviction API refuses {refused} of the evictions: a PodDisruptionBudget's disruptionsAllowed"
        )
    extra = sorted(set(preempted) - set(expected))
    if extra and not evict:
        violations.append(
            f"kube-scheduler preempts {len(extra)} pod(s) on the way, which only --evict allows"
        )
    ok = set(admitted) == set(targets) and not moved_pending and not violations
    return Check(
        verified=ok,
        targets_admitted=admitted,
        targets_pending=[t for t in targets if t not in admitted],
        moved_running=len(moved) - len(moved_pending),
        moved_pending=moved_pending,
        landed=landed,
        preempted=preempted,
        violations=violations,
        results=(r1, r2),
    )
