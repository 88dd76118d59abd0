"""Greedy against optimal on one snapshot: classification and the decisive greedy step.

Classification (``Diff.classification``):

``identical``           same placements and victims
``tie-break``           same objective, different nodes, and wherever they differ the optimum's node
                        was in the greedy's tie set for that pod (an arbitrary upstream choice)
``equivalent``          same objective, different nodes for other reasons
``greedy-suboptimal``   the optimum is lexicographically better on the shared objective tiers
``model-mismatch``      a result fails validation, the greedy placement is infeasible in the exact
                        model, or greedy beats a proven optimum: the engines disagree about the
                        rules, which is a bug

The decisive step is found, not guessed. The *candidates* are the greedy's pod choices, in
scheduling order, that survive in greedy's final result or belong to a group the optimum admits
(a single pod counts as its own group): a tentative choice of a group greedy reverted and the
optimum rejects left no trace and cannot be to blame. The candidates c1..cn are fixed in the
exact model one prefix at a time. ``P(k)`` = "an optimal placement exists that agrees with
c1..ck"; P(0) holds, and once P fails it keeps failing, so a binary search finds the first k
with P(k) false: ck is the earliest candidate no optimal placement shares. The optimum ``R``
found for P(k-1) agrees with every earlier candidate; if R puts ck's pod on another node the step
is a ``placement`` step, if R leaves it out the difference is which groups get admitted (an
``admission`` step). When every candidate is shared by an optimum (P(n) holds), the step is an
``admission`` step without a pod: greedy's choices were all right, the optimum admits more.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gangplan.models.cluster import Cluster
from gangplan.models.documents import (
    Admission,
    DecisiveStep,
    DiffDocument,
    Engines,
    EngineSide,
    GroupDiff,
    GroupUse,
    SinglePodDiff,
    VictimUnit,
)
from gangplan.models.groups import parse_timestamp
from gangplan.models.objective import compare, pdb_violations
from gangplan.models.preemption import PICK_CRITERIA, PickKey, deciding_index, pick_key
from gangplan.models.quantity import format_quantity
from gangplan.models.result import Result, Status
from gangplan.models.trace import ClosestToGreedy, NodeVictims, PodPreemption, check_trace_level
from gangplan.solver.greedy.samples import Samples, sample_greedy
from gangplan.solver.validate import validate

IDENTICAL = "identical"
TIE_BREAK = "tie-break"
EQUIVALENT = "equivalent"
GREEDY_SUBOPTIMAL = "greedy-suboptimal"
GREEDY_SUBOPTIMAL_SOMETIMES = "greedy-suboptimal-sometimes"
"""With ``--samples K``: some of the K seeded greedy runs reach the optimum and some do not."""
MODEL_MISMATCH = "model-mismatch"

Progress = Callable[[str], None]
FRAME_COLUMNS = ("group", "priority", "min_count", "greedy_admitted", "optimal_admitted", "greedy_placed", "optimal_placed",
                 "greedy_domain", "optimal_domain", "greedy_reason", "optimal_reason", "differs")
"""The columns of :meth:`Diff.to_frame` (fields of :class:`~gangplan.models.documents.GroupDiff`)."""


@dataclass
class Diff:
    snapshot: str
    classification: str
    groups: list[GroupDiff]
    greedy_objective: dict[str, float]
    optimal_objective: dict[str, float]
    optimal_status: str
    gap: float | None
    problems: list[str]
    decisive: DecisiveStep | None
    greedy: Result
    optimal: Result
    seconds: float
    single_pods: list[SinglePodDiff] | None = None
    admission: Admission | None = None
    engines: Engines | None = None
    samples: Samples | None = None

    def __repr__(self) -> str:
        g, o = self.greedy.admitted_groups(), self.optimal.admitted_groups()
        n = len(self.groups)
        step = ""
        if self.decisive is not None:
            step = f"; decisive step {'#' + str(self.decisive.step) + ' ' if self.decisive.step else ''}({self.decisive.kind})"
        return (f"<Diff {self.classification}: greedy {len(g)}/{n} groups admitted, {len(self.greedy.placements())} pods placed, "
                f"{len(self.greedy.victims)} victims; optimal {len(o)}/{n}, {len(self.optimal.placements())} pods, "
                f"{len(self.optimal.victims)} victims{step}>")

    @property
    def kube_version(self) -> str | None:
        """The kube-scheduler version greedy reproduced (``kubeVersion`` of the diff JSON)."""
        return self.greedy.options.kube_version

    @property
    def warnings(self) -> list[str]:
        """Snapshot inputs gangplan does not model (``warnings`` of the diff JSON)."""
        return list(self.greedy.warnings)

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per PodGroup with pending pods: ``group``, ``priority``,
        ``min_count``, then greedy against the optimum (``*_admitted``, ``*_placed``,
        ``*_domain``, ``*_reason``) and ``differs``."""
        import pandas as pd

        return pd.DataFrame([{c: getattr(g, c) for c in FRAME_COLUMNS} for g in self.groups], columns=list(FRAME_COLUMNS))

    @property
    def exit_code(self) -> int:
        return {MODEL_MISMATCH: 4, GREEDY_SUBOPTIMAL: 3, GREEDY_SUBOPTIMAL_SOMETIMES: 3}.get(self.classification, 0)

    def document(self, *, with_results: bool = True) -> DiffDocument:
        return DiffDocument(
            snapshot=self.snapshot,
            classification=self.classification,  # type: ignore[arg-type]
            optimal_status=self.optimal_status,
            gap=self.gap,
            seconds=round(self.seconds, 3),
            greedy_objective=self.greedy_objective,
            optimal_objective=self.optimal_objective,
            problems=self.problems,
            groups=self.groups,
            single_pods=self.single_pods or [],
            admission=self.admission or Admission(),
            engines=self.engines or Engines(greedy=_side_stub(self.greedy), optimal=_side_stub(self.optimal)),
            decisive=self.decisive,
            warnings=self.warnings,
            kube_version=self.kube_version,
            samples=self.samples.document() if self.samples is not None else None,
            greedy=self.greedy if with_results else None,
            optimal=self.optimal if with_results else None,
        )

    def to_dict(self, *, with_results: bool = True, trace: str | None = None) -> dict[str, Any]:
        """The ``diff --json`` document (camelCase; ``gangplan schema diff``), its Results'
        traces at ``trace`` (``none``, ``summary`` or ``full``; None: full)."""
        level = check_trace_level(trace)
        data = self.document(with_results=with_results).dump(exclude_none=False, exclude={"greedy", "optimal"} if not with_results else None,
                                                              context={"trace": level})
        if level == "none":
            for side in ("greedy", "optimal"):
                if isinstance(data.get(side), dict):
                    data[side]["trace"] = {}
        return data


def _side_stub(r: Result) -> EngineSide:
    placed = r.placements()
    return EngineSide(status=r.status.value, admitted_groups=len(r.admitted_groups()), placed_pods=len(placed), single_pods_placed=0)


def _shared(obj: dict[str, float], other: dict[str, float]) -> dict[str, float]:
    return {k: v for k, v in obj.items() if k in other}


def greedy_choices(greedy: Result) -> list[tuple[str, str]]:
    """(pod, node) for every successful greedy pod choice, in scheduling order (reverted ones too)."""
    return greedy.greedy_trace.chosen_steps()


def candidate_choices(cluster: Cluster, greedy: Result, optimal: Result) -> tuple[list[tuple[int, str, str]], int]:
    """The choices the decisive step may blame, as (1-based step, pod, node), and how many were
    skipped: a choice is a candidate when it survives in greedy's result (``kept``, and the pod is
    placed there) or its group is admitted by the optimum (a single pod: the optimum places it)."""
    cycles = greedy.greedy_trace.pods
    admitted = set(optimal.admitted_groups())
    out, skipped = [], 0
    for step, (pod, node) in enumerate(greedy_choices(greedy), start=1):
        kept = cycles[pod].kept and greedy.pods.get(pod) is not None and greedy.pods[pod].node == node
        p = cluster.pod_by_key.get(pod)
        group = p.group_key if p is not None else None
        theirs = group in admitted if group else (optimal.pods.get(pod) is not None and optimal.pods[pod].node is not None)
        if kept or theirs:
            out.append((step, pod, node))
        else:
            skipped += 1
    return out, skipped


def classify(cluster: Cluster, greedy: Result, optimal: Result, *, greedy_feasible_in_model: bool | None = None) -> tuple[str, list[str]]:
    problems = [f"greedy: {v}" for v in validate(cluster, greedy)]
    problems += [f"exact: {v}" for v in validate(cluster, optimal)]
    if greedy_feasible_in_model is False:
        problems.append("the greedy placement is infeasible in the exact model")
    c = compare(optimal.objective, greedy.objective)
    if c < 0 and optimal.status == Status.OPTIMAL:
        problems.append("greedy beats a proven optimum")
    if problems:
        return MODEL_MISMATCH, problems
    if c > 0:
        return GREEDY_SUBOPTIMAL, problems
    if greedy.placements() == optimal.placements() and greedy.victims == optimal.victims:
        return IDENTICAL, problems
    cycles = greedy.greedy_trace.pods
    gp, op = greedy.placements(), optimal.placements()
    differing = [k for k in set(gp) | set(op) if gp.get(k) != op.get(k)]
    if differing and all(k in gp and k in op and k in cycles and op[k] in cycles[k].tie_set for k in differing):
        return TIE_BREAK, problems
    return EQUIVALENT, problems


def _group_desc(g) -> str:
    if g is None:
        return "no pending pod"
    word = "admitted" if g.admitted else "not admitted"
    return f"{word}, {g.placed} pod(s) on nodes" + (f" in {g.domain}" if g.domain else "")


def _group_differs(a, b) -> bool:
    if a is None or b is None:
        return (a is None) != (b is None)
    return (a.admitted, a.placed, a.domain) != (b.admitted, b.placed, b.domain)


def _entity_differs(cluster: Cluster, pod: str, greedy: Result, other: Result) -> tuple[str | None, bool]:
    """(group or None, whether that group - or the single pod - ends differently in the two results)."""
    p = cluster.pod_by_key.get(pod)
    group = p.group_key if p is not None else None
    if group:
        return group, _group_differs(greedy.groups.get(group), other.groups.get(group))
    a, b = greedy.pods.get(pod), other.pods.get(pod)
    return None, (a.node if a else None) != (b.node if b else None)


def _differing_groups(cluster: Cluster, greedy: Result, other: Result) -> list[str]:
    """Groups (and single pods) whose outcome differs, in greedy's scheduling order."""
    seen, out = set(), []
    order = list(greedy.greedy_trace.order) + sorted(other.pods)
    for pod in order:
        p = cluster.pod_by_key.get(pod)
        if p is None:
            continue
        key = p.group_key or pod
        if key in seen:
            continue
        seen.add(key)
        if _entity_differs(cluster, pod, greedy, other)[1]:
            out.append(key)
    return out


def _names(keys: list[str], n: int = 4) -> str:
    if not keys:
        return "none"
    return ", ".join(keys[:n]) + (f" and {len(keys) - n} more" if len(keys) > n else "")


def group_use(cluster: Cluster, result: Result, group: str) -> GroupUse:
    """What ``group``'s pods placed by ``result`` take: pods, nodes, domain, summed requests."""
    members = [p for p in cluster.groups.members(group) if p.key in result.pods and result.pods[p.key].node]
    total: Counter[str] = Counter()
    for p in members:
        total.update(p.requests)
    g = result.groups.get(group)
    return GroupUse(
        group=group,
        pods=len(members),
        nodes=sorted({result.pods[p.key].node for p in members}),  # type: ignore[misc]
        domain=g.domain if g else None,
        requests={r: format_quantity(r, q) for r, q in sorted(total.items(), key=lambda kv: (kv[0] not in ("cpu", "memory"), kv[0])) if q and r != "pods"},
    )


def admission(cluster: Cluster, greedy: Result, optimal: Result) -> Admission:
    ga, oa = greedy.admitted_groups(), optimal.admitted_groups()
    only_g = [k for k in ga if k not in set(oa)]
    only_o = [k for k in oa if k not in set(ga)]
    first = None
    if only_g:
        order = [cluster.pod_by_key[k].group_key for k in greedy.greedy_trace.order if k in cluster.pod_by_key]
        ranked = sorted(only_g, key=lambda k: order.index(k) if k in order else len(order))
        first = group_use(cluster, greedy, ranked[0])
    return Admission(greedy=ga, optimal=oa, only_greedy=only_g, only_optimal=only_o, first_given_up=first)


def _victim_units(cluster: Cluster, result: Result) -> list[VictimUnit]:
    """The victims as the units they were evicted in (``cluster.groups.victim_units``), highest
    priority first."""
    pods = [cluster.pod_by_key[k] for k in result.victims if k in cluster.pod_by_key]
    units = [VictimUnit.of(u) for u in cluster.groups.victim_units(pods)]
    return sorted(units, key=lambda u: (-u.priority, u.unit))


def engine_side(cluster: Cluster, result: Result) -> EngineSide:
    placed = result.placements()
    gone = [cluster.pod_by_key[k] for k in sorted(set(result.victims)) if k in cluster.pod_by_key]
    units = _victim_units(cluster, result)
    by_prio: Counter[int] = Counter()
    for u in units:
        by_prio[u.priority] += len(u.pods)
    return EngineSide(
        status=result.status.value,
        admitted_groups=len(result.admitted_groups()),
        placed_pods=len(placed),
        single_pods_placed=sum(1 for k in placed if cluster.pod_by_key[k].group_key is None),
        victims=units,
        victims_by_priority={str(p): n for p, n in sorted(by_prio.items(), reverse=True)},
        pdb_violations=pdb_violations(cluster, gone),
        broken_groups=cluster.groups.broken_groups(gone),
    )


def single_pods(cluster: Cluster, greedy: Result, optimal: Result) -> list[SinglePodDiff]:
    out = []
    for key in sorted(set(greedy.pods) | set(optimal.pods)):
        p = cluster.pod_by_key.get(key)
        if p is None or p.group_key is not None:
            continue
        g, o = greedy.pods.get(key), optimal.pods.get(key)
        gn, on = (g.node if g else None), (o.node if o else None)
        out.append(SinglePodDiff(pod=key, greedy_node=gn, optimal_node=on, greedy_reason=None if gn else (g.reason if g else None),
                                 optimal_reason=None if on else (o.reason if o else None), priority=p.priority, differs=gn != on))
    return out


def find_decisive_step(cluster: Cluster, greedy: Result, optimal: Result, *, time_limit: float, workers: int, seed: int, preemption: bool | None = None, progress: Progress | None = None) -> DecisiveStep | None:
    """Binary search over prefixes of the candidate choices (see the module docstring)."""
    return search_decisive_step(cluster, greedy, optimal, time_limit=time_limit, workers=workers, seed=seed, preemption=preemption, progress=progress)[0]


def search_decisive_step(cluster: Cluster, greedy: Result, optimal: Result, *, time_limit: float, workers: int, seed: int, preemption: bool | None = None, progress: Progress | None = None) -> tuple[DecisiveStep | None, Result]:
    """The decisive step and the optimum it refers to: the optimal placement found that agrees
    with every candidate choice before the step (``optimal`` itself when the step is the first).
    ``preemption`` is the exact probes'; the greedy evidence replays greedy's own run
    (:func:`~gangplan.solver.greedy.replay_options`) or reads its trace."""
    from gangplan.solver.exact import solve_exact
    from gangplan.solver.greedy import placement_evidence, pod_scores_at_step, replay_options

    if not greedy_choices(greedy):
        return _admission_only(cluster, greedy, optimal, candidates=0, skipped=0, probes=0), optimal
    choices, skipped = candidate_choices(cluster, greedy, optimal)
    target = optimal.objective
    probes = 0

    def agrees(k: int) -> tuple[bool, Result]:
        nonlocal probes
        probes += 1
        if progress:
            progress(f"decisive step: exact probe {probes} (first {k} of {len(choices)} greedy choices fixed)")
        fixed = {pod: node for _, pod, node in choices[:k]}
        r = solve_exact(cluster, time_limit=time_limit, workers=workers, seed=seed, fixed=fixed, hint=optimal if k == 0 else None, preemption=preemption)
        if r.status not in (Status.OPTIMAL, Status.FEASIBLE):
            return False, r
        # FEASIBLE but equal to the optimum also proves agreement; below it is undecided -> treat as no.
        return compare(_shared(r.objective, target), _shared(target, r.objective)) >= 0, r

    if not choices:
        return _admission_only(cluster, greedy, optimal, candidates=0, skipped=skipped, probes=0), optimal
    # P(0) holds (k=0 is the optimum itself); find the first k with P(k) false. Galloping from the
    # start (k = 1, 2, 4, ...), then bisecting: decisive steps are usually early, so this takes
    # about 2 log2(step) probes instead of log2(choices) + 1 (e.g. 6 instead of 11 for step 5 of 921).
    lo, best_agreeing, k = 0, optimal, 1
    while True:
        k = min(k, len(choices))
        ok, r = agrees(k)
        if not ok:
            hi = k
            break
        lo, best_agreeing = k, r
        if k == len(choices):
            return _admission_only(cluster, greedy, r, candidates=len(choices), skipped=skipped, probes=probes), r
        k *= 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        ok, r = agrees(mid)
        if ok:
            lo, best_agreeing = mid, r
        else:
            hi = mid
    step, pod, node = choices[hi - 1]
    outcome = best_agreeing.pods.get(pod)
    opt_node = outcome.node if outcome is not None else None
    group, differs = _entity_differs(cluster, pod, greedy, best_agreeing)
    still_admitted = bool(group and group in best_agreeing.groups and best_agreeing.groups[group].admitted)
    kind = "placement" if opt_node is not None or still_admitted else "admission"
    nodes = [n for n in (node, opt_node) if n]
    try:  # greedy's own run (its options, preemption included), before the cycle that made the choice
        scores = pod_scores_at_step(cluster, pod, nodes, step="recorded", **replay_options(greedy))
    except ValueError:
        scores = {}
    placement = placement_evidence(cluster, greedy, group, node, opt_node) if group and opt_node else None
    failed_pod, failed_reason = _next_failure(greedy, pod)
    why = _why(cluster, greedy, best_agreeing, pod, node, opt_node, group, differs)
    pre = _preemption_evidence(cluster, greedy, best_agreeing, pod)
    return DecisiveStep(
        kind=kind,
        step=step,
        pod=pod,
        group=group,
        greedy_node=node,
        optimal_node=opt_node,
        group_outcome_differs=differs,
        why=why,
        greedy_scores=scores.get(node, {}),
        optimal_scores=scores.get(opt_node, {}) if opt_node else {},
        failed_pod=failed_pod,
        failed_reason=failed_reason,
        probes=probes,
        candidates=len(choices),
        skipped=skipped,
        placement=placement,
        preemption=pre,
    ), best_agreeing


def _next_failure(greedy: Result, pod: str) -> tuple[str | None, str | None]:
    trace = greedy.greedy_trace
    order = trace.order
    start = order.index(pod) + 1 if pod in order else 0
    for key in order[start:]:
        t = trace.pods.get(key)
        if t is None or not t.chosen:
            return key, (t.fit_error if t is not None else None) or (greedy.pods[key].reason if key in greedy.pods else None)
    return None, None


def _why(cluster: Cluster, greedy: Result, opt: Result, pod: str, node: str, opt_node: str | None, group: str | None, differs: bool) -> str:
    entity = group or pod
    others = [k for k in _differing_groups(cluster, greedy, opt) if k != entity]
    if opt_node is None and group and group in opt.groups and opt.groups[group].admitted:
        return (f"the optimum admits {group} too but leaves {pod} unplaced (a pod past minCount): the room it takes on {node} "
                f"goes to {_names(others)}")
    if opt_node is None:
        use = group_use(cluster, greedy, group) if group else None
        held = f" (in greedy it holds {_use_text(use)})" if use and use.pods else ""
        gained = [k for k in others if _admitted_in(cluster, opt, k) and not _admitted_in(cluster, greedy, k)]
        return (f"no optimal placement keeps {pod} on {node} after greedy's earlier choices; the optimum that agrees with "
                f"them leaves {entity} out{held} and admits {_names(gained)} instead")
    if opt_node == node:
        return (f"the probe with {pod} fixed on {node} did not reach the optimum within --probe-time-limit, so the step is "
                "undecided beyond this point")
    if differs:
        return f"{entity} ends differently: greedy {_desc(cluster, greedy, entity)}, the optimum {_desc(cluster, opt, entity)}"
    if not others and set(greedy.victims) != set(opt.victims):
        return (f"{entity} ends the same in both ({_desc(cluster, greedy, entity)}); {pod} on {node} instead of {opt_node} is what "
                f"costs disruption: greedy evicts {len(greedy.victims)} pod(s) in all, the optimum {len(opt.victims)}")
    return (f"{entity} ends the same in both ({_desc(cluster, greedy, entity)}); {pod} on {node} instead of {opt_node} is what "
            f"costs: it leaves no room for {_names(others)}, whose outcome differs")


def _admitted_in(cluster: Cluster, r: Result, key: str) -> bool:
    if key in r.groups:
        return r.groups[key].admitted
    o = r.pods.get(key)
    return bool(o and o.node)


def _desc(cluster: Cluster, r: Result, key: str) -> str:
    if key in cluster.groups:
        return _group_desc(r.groups.get(key))
    o = r.pods.get(key)
    return f"on {o.node}" if o and o.node else "not placed"


def _use_text(use: GroupUse) -> str:
    res = ", ".join(f"{q} {r}" for r, q in use.requests.items())
    where = f" in {use.domain}" if use.domain else ""
    return f"{use.pods} pod(s) on {len(use.nodes)} node(s){where}" + (f": {res}" if res else "")


def _admission_only(cluster: Cluster, greedy: Result, optimal: Result, *, candidates: int, skipped: int, probes: int) -> DecisiveStep:
    """Every candidate choice is shared by an optimum: the difference is what greedy did not admit."""
    gained = [k for k in _differing_groups(cluster, greedy, optimal) if _admitted_in(cluster, optimal, k) and not _admitted_in(cluster, greedy, k)]
    first = gained[0] if gained else None
    reason = None
    if first is not None:
        reason = greedy.groups[first].reason if first in greedy.groups else (greedy.pods[first].reason if first in greedy.pods else None)
    why = ("every greedy choice that survives, or belongs to a group the optimum admits, is shared by an optimal placement; "
           f"the optimum also admits {_names(gained)}" + (f" (greedy: {reason})" if reason else ""))
    pre = None
    if not gained and set(greedy.victims) != set(optimal.victims):
        # Same placements, other victims: the difference is greedy's victim choice.
        for pod in greedy.greedy_trace.order:
            pre = _preemption_evidence(cluster, greedy, optimal, pod)
            if pre is not None:
                why = ("every greedy placement is shared by an optimal placement; what differs is which pods are evicted: "
                       + pre["criterion"])
                break
    return DecisiveStep(kind="admission", group=first, group_outcome_differs=first is not None, why=why,
                        probes=probes, candidates=candidates, skipped=skipped, preemption=pre)


def _preemption_evidence(cluster: Cluster, greedy: Result, opt: Result, pod: str) -> dict | None:
    """Greedy's victim choice for ``pod``'s entity against the optimum's, when greedy preempted
    for it and the optimum evicts other pods (None otherwise)."""
    p = cluster.pod_by_key.get(pod)
    if p is None:
        return None
    tree = cluster.groups
    entity = tree.entity_of(p)
    t = (greedy.greedy_trace.preemption or {}).get(str(entity))
    if t is None or t.status != "Success" or not t.victims:
        return None
    greedy_victims = set(t.victims)
    if greedy_victims <= set(opt.victims) and len(greedy_victims) == len(opt.victims):
        return None
    members = [q.key for q in tree.entity_pods(entity)]
    opt_nodes = sorted({opt.pods[k].node for k in members if k in opt.pods and opt.pods[k].node})
    on_opt_nodes = {q.key for q in cluster.bound_pods if q.node_name in opt_nodes}
    opt_victims = sorted(v for v in opt.victims if v in on_opt_nodes) or sorted(opt.victims)

    def units(keys) -> list[dict]:
        chosen = [cluster.pod_by_key[k] for k in sorted(set(keys)) if k in cluster.pod_by_key]
        out = []
        for u in tree.victim_units(chosen):
            out.append({"unit": str(u.key), "name": u.key.key, "kind": u.kind, "priority": u.priority, "pods": [q.key for q in u.pods]})
        return out

    if isinstance(t, PodPreemption):
        chosen = t.chosen
        nodes = [chosen] if chosen else []
        criterion = _default_preemption_criterion(t, chosen, opt_nodes[0] if opt_nodes else None, cluster)
    else:
        nodes = sorted(set(t.nominated.values()))
        criterion = ("workload-aware preemption removed every lower-priority unit, placed the group on the emptied cluster "
                     f"(on {_names(nodes)}), then put units back in MoreImportantVictim order"
                     + (" (PDB-violating units first)" if t.violating else "")
                     + f" ({len(t.reprieved)} reprieved); the {len(t.victims)} pod(s) that could not go back were evicted")
    return {"entity": str(entity), "path": t.kind, "nodes": nodes, "victims": units(t.victims),
            "pdbViolations": t.pdb_violations, "criterion": criterion,
            "optimalNodes": opt_nodes, "optimalVictims": units(opt_victims)}


def _default_preemption_criterion(t: PodPreemption, chosen: str | None, other: str | None, cluster: Cluster) -> str:
    """Which pickOneNodeForPreemption criterion made greedy's node win over the optimum's (the
    criteria and their order: :mod:`gangplan.models.preemption`, the implementation greedy ran)."""
    mine, theirs = t.nodes.get(chosen or ""), t.nodes.get(other) if other else None
    if not isinstance(mine, NodeVictims):
        return f"default preemption chose {chosen}"
    if not isinstance(theirs, NodeVictims):
        why = theirs if isinstance(theirs, str) else "not evaluated (enough candidates were found before it)"
        return f"default preemption chose {chosen}; the optimum's node {other}: {why}"

    def key(entry: NodeVictims) -> PickKey:
        pods = [cluster.pod_by_key[k] for k in entry.victims if k in cluster.pod_by_key]
        return pick_key([(cluster.groups.unit_priority(q), parse_timestamp(q.start_time) if q.start_time else None) for q in pods], entry.pdb_violations)

    a, b = key(mine), key(theirs)
    i = deciding_index(a, b)
    if i is None:
        return f"default preemption chose {chosen} over {other}: equal on {', '.join(PICK_CRITERIA)}, decided by node order"
    if i == len(PICK_CRITERIA) - 1:
        return (f"default preemption chose {chosen} over {other}: equal on {', '.join(PICK_CRITERIA[:-1])}, decided by "
                f"{PICK_CRITERIA[i]} ({a.describe(i)} vs {b.describe(i)})")
    return f"default preemption chose {chosen} over {other} by {PICK_CRITERIA[i]} ({a.describe(i)} vs {b.describe(i)})"


def closest_optimum(cluster: Cluster, optimal: Result, agreeing: Result, step: DecisiveStep | None) -> Result:
    """The optimum the diff reports: ``agreeing`` (an optimal placement that shares every greedy
    choice before the decisive step, so the groups, the admission summary, the plan and the step
    all describe one placement) when it passes the validator and ties ``optimal`` on every tier;
    else ``optimal``. Status, gap and bound stay those of the proven solve; the trace says which
    greedy choices were fixed."""
    if agreeing is optimal or agreeing.status not in (Status.OPTIMAL, Status.FEASIBLE):
        return optimal
    if not set(optimal.objective) <= set(agreeing.objective) or compare(_shared(agreeing.objective, optimal.objective), optimal.objective) < 0:
        return optimal
    if validate(cluster, agreeing):  # the caller reports this as a model mismatch
        return optimal
    note = ClosestToGreedy(fixed_choices=agreeing.options.fixed_count, probe_status=agreeing.status.value,
                           why="an optimal placement that agrees with greedy's choices before the decisive step"
                               + (f" (#{step.step})" if step is not None and step.step else ""))
    trace = agreeing.exact_trace
    update = {"status": optimal.status, "gap": optimal.gap, "bound": optimal.bound,
              "snapshot": optimal.snapshot, "wall_seconds": optimal.wall_seconds}
    if trace is not None:
        update["trace"] = trace.model_copy(update={"closest_to_greedy": note})
    return agreeing.model_copy(update=update)


def sometimes(classification: str, drawn: Samples) -> str:
    """The classification over the sampled runs: ``greedy-suboptimal-sometimes`` when greedy
    reaches the optimum in some runs (the main one included) and misses it in others."""
    if classification == MODEL_MISMATCH or drawn.reaches_target is None:
        return classification
    hits = drawn.reaches_target + (0 if classification == GREEDY_SUBOPTIMAL else 1)
    misses = (drawn.runs - drawn.reaches_target) + (1 if classification == GREEDY_SUBOPTIMAL else 0)
    if hits and misses:
        return GREEDY_SUBOPTIMAL_SOMETIMES
    return classification


def diff_snapshot(cluster: Cluster, *, snapshot: str = "", time_limit: float = 10.0, probe_time_limit: float = 5.0, workers: int = 2, seed: int = 0, tie_break: str = "first", explain: bool = True, preemption: bool | None = None, progress: Progress | None = None, kube_version: str | None = None, samples: int = 0,
                  greedy: Result | None = None, optimal: Result | None = None) -> Diff:
    """Run both engines on ``cluster`` and compare them (``preemption``: both may evict;
    ``None``: as the profile; ``kube_version``: the kube-scheduler version greedy reproduces,
    default the cluster's).

    ``greedy`` / ``optimal``: Results already computed on ``cluster`` (``solve_greedy``,
    ``solve_exact``) to compare instead of running that engine again; the caller keeps them
    consistent with the options (:func:`gangplan.diff` checks that). The decisive step's probes
    and ``samples`` still run.

    ``samples`` K > 0 also runs greedy with seeds ``seed .. seed + K - 1`` and random ties
    (:mod:`gangplan.solver.greedy.samples`) and counts how often it admits each group and reaches
    the optimum; when some of those runs reach it and some do not (or the main run and the
    samples disagree), the classification is ``greedy-suboptimal-sometimes``.

    ``progress`` (optional) is called with a short description before each long step."""
    from gangplan.solver.exact import check_feasible, solve_exact
    from gangplan.solver.greedy import solve_greedy

    cluster = cluster.at_version(kube_version)
    t0 = time.perf_counter()
    if greedy is not None and greedy.engine != "greedy":
        raise ValueError(f"greedy= takes a greedy Result, not a {greedy.engine} one")
    if optimal is not None and optimal.engine != "exact":
        raise ValueError(f"optimal= takes an exact Result, not a {optimal.engine} one")
    if greedy is None:
        if progress:
            progress("greedy: kube-scheduler's cycle")
        greedy = solve_greedy(cluster, tie_break=tie_break, seed=seed, snapshot=snapshot, preemption=preemption)
    if optimal is None:
        if progress:
            progress("exact: CP-SAT, tier by tier")
        optimal = solve_exact(cluster, time_limit=time_limit, workers=workers, seed=seed, hint=greedy, snapshot=snapshot, preemption=preemption)
    if progress:
        progress("checking the greedy placement in the exact model")
    feasible = check_feasible(cluster, greedy.placements(), greedy.victims)
    feasible_ok = feasible is True or (isinstance(feasible, list) and not feasible)
    classification, problems = classify(cluster, greedy, optimal, greedy_feasible_in_model=feasible_ok)
    if isinstance(feasible, list) and feasible:
        problems += [f"exact model rejects the greedy placement: {p}" for p in feasible]
    decisive = None
    if explain and classification == GREEDY_SUBOPTIMAL:
        decisive, agreeing = search_decisive_step(cluster, greedy, optimal, time_limit=probe_time_limit, workers=workers, seed=seed, preemption=preemption, progress=progress)
        broken = [f"exact (decisive-step probe): {v}" for v in validate(cluster, agreeing)] if agreeing is not optimal else []
        if broken:  # the exact engine produced an invalid placement: a bug, like any other mismatch
            classification, problems = MODEL_MISMATCH, problems + broken
        else:
            optimal = closest_optimum(cluster, optimal, agreeing, decisive)
    groups = []
    for key in sorted(set(greedy.groups) | set(optimal.groups)):
        g, o = greedy.groups.get(key), optimal.groups.get(key)
        ref = g or o
        groups.append(
            GroupDiff(
                group=key,
                min_count=ref.min_count,
                greedy_admitted=bool(g and g.admitted),
                optimal_admitted=bool(o and o.admitted),
                greedy_placed=g.placed if g else 0,
                optimal_placed=o.placed if o else 0,
                greedy_domain=g.domain if g else None,
                optimal_domain=o.domain if o else None,
                greedy_reason=g.reason if g else None,
                optimal_reason=o.reason if o else None,
                priority=ref.priority,
                differs=_group_differs(g, o),
            )
        )
    drawn = None
    if samples:
        if progress:
            progress(f"greedy: {samples} seeded runs (random ties and pod orders)")
        drawn = sample_greedy(cluster, samples, seed=seed, preemption=preemption, target=optimal.objective, snapshot=snapshot)
        classification = sometimes(classification, drawn)
    return Diff(
        samples=drawn,
        snapshot=snapshot,
        classification=classification,
        groups=groups,
        greedy_objective=greedy.objective,
        optimal_objective=optimal.objective,
        optimal_status=optimal.status.value,
        gap=optimal.gap,
        problems=problems,
        decisive=decisive,
        greedy=greedy,
        optimal=optimal,
        seconds=time.perf_counter() - t0,
        single_pods=single_pods(cluster, greedy, optimal),
        admission=admission(cluster, greedy, optimal),
        engines=Engines(greedy=engine_side(cluster, greedy), optimal=engine_side(cluster, optimal)),
    )
