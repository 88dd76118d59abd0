"""The decisive greedy step: the earliest greedy choice no optimal placement shares, found by a
binary search over prefixes of greedy's choices fixed in the exact model (see
:mod:`gangplan.solver.diff`).

Each probe decides P(k): an optimal placement agrees with the first k candidate choices. A probe
whose prefix the optimum itself does not share first runs :func:`cannot_reach` (a feasibility
solve with the optimum's admission tiers held), whose INFEASIBLE is the probe's no; otherwise, and
when that check finds a solution or runs out of time, the probe is a full ``solve_exact`` with the
prefix fixed, whose Result is the agreeing optimum the diff reports. The step's node evidence
replays greedy and evaluates only the cycles that can be the one greedy's trace keeps
(``pod_scores_at_step(chosen=...)``)."""

from __future__ import annotations

from collections.abc import Callable

from gangplan.gcpause import gc_paused
from gangplan.models.cluster import Cluster
from gangplan.models.documents import (
    DecisiveStep,
    NodeEvidence,
    NoEvidence,
)
from gangplan.models.objective import ADMITTED_PREFIX, PLACED, compare, is_cost
from gangplan.models.result import Result, Status
from gangplan.models.trace import ClosestToGreedy
from gangplan.solver.diff.classification import differing_groups, entity_differs, shared_tiers
from gangplan.solver.diff.evidence import (
    ONLY_OPTIMAL,
    admitted_in,
    name_list,
    next_failure,
    preemption_evidence,
    why_text,
)
from gangplan.solver.diff.proof import TIEBREAK_TIER
from gangplan.solver.exact.budget import Budget
from gangplan.solver.validate import validate

Progress = Callable[[str], None]


def greedy_choices(greedy: Result) -> list[tuple[str, str]]:
    """(pod, node) for every successful greedy pod choice, in scheduling order (reverted ones too)."""
    return greedy.greedy_trace.chosen_steps()


def candidate_choices(
    cluster: Cluster, greedy: Result, optimal: Result
) -> tuple[list[tuple[int, str, str]], int]:
    """The choices the decisive step may blame, as (1-based step, pod, node), and how many were
    skipped: a choice is a candidate when it survives in greedy's result (``kept``, and the pod is
    placed there) or its group is admitted by the optimum (a single pod: the optimum places it)."""
    cycles = greedy.greedy_trace.pods
    admitted = set(optimal.admitted_groups())
    out, skipped = [], 0
    for step, (pod, node) in enumerate(greedy_choices(greedy), start=1):
        kept = (
            cycles[pod].kept and greedy.pods.get(pod) is not None and greedy.pods[pod].node == node
        )
        p = cluster.pod_by_key.get(pod)
        group = p.group_key if p is not None else None
        theirs = (
            group in admitted
            if group
            else (optimal.pods.get(pod) is not None and optimal.pods[pod].node is not None)
        )
        if kept or theirs:
            out.append((step, pod, node))
        else:
            skipped += 1
    return out, skipped


PRECHECK_SHARE = 0.5
"""The feasibility pre-check of a probe (:func:`cannot_reach`) gets this share of the probe's limit;
when it decides nothing the full probe runs with what the pre-check left of the limit: one probe,
one work limit (``--probe-time-limit``). On the 10,000-node GB200 shape the first probe's
pre-check spends its 2.5 units undecided and the full probe then ends UNKNOWN whatever it is
given (no start: one pod of a gang fixed alone), so the pair cost 7.5 units, now 5."""


PRECHECK_GIVE_UP = 2
"""A search stops running pre-checks once this many more of them decided nothing than decided a
probe (each undecided one costs a model build and a feasibility solve on top of the full probe)."""


def decision_tiers(obj: dict[str, float], other: dict[str, float]) -> dict[str, float]:
    """The tiers of ``obj`` that ``other`` carries too, the tie-break left out: a probe asks whether
    an *optimal* placement keeps the prefix, and optimal is the decision tiers (the tie-break only
    orders equal optima, and its value is not proven: counting it made a probe's answer depend on
    how far its tie-break phase got)."""
    return {k: v for k, v in shared_tiers(obj, other).items() if k != TIEBREAK_TIER}


def optimum_agrees(optimal: Result, prefix: list[tuple[int, str, str]]) -> bool:
    """Does ``optimal`` itself place every pod of ``prefix`` on greedy's node (then P(k) holds)?"""
    pods = optimal.pods
    return all(pods.get(pod) is not None and pods[pod].node == node for _, pod, node in prefix)


def cannot_reach(
    cluster: Cluster,
    fixed: dict[str, str],
    optimal: Result,
    *,
    time_limit: float,
    workers: int,
    seed: int,
    preemption: bool | None,
    budget: Budget | None = None,
) -> bool:
    """A probe's "no" decided without the probe's optimisation: True only when no placement that
    keeps ``fixed`` reaches the optimum's decision tiers, so the full probe (``solve_exact`` with
    ``fixed``) can only end below the optimum (or INFEASIBLE) and answer no.

    The probe's model (:func:`~gangplan.solver.exact.build.build_model`, the same ``fixed``) with
    each of the proven optimum's non-cost decision tiers (``admitted[p=P]``, ``gpus``, ``placed``)
    held at >= its value, and no objective: INFEASIBLE means every solution of the probe is
    lexicographically below the optimum on those tiers (the optimum is proven, so none is above
    it), i.e. the probe answers no whatever its tie-break. FEASIBLE or a time-out decides nothing
    (False: the full probe runs). Only for an ``OPTIMAL`` optimum. On the real-inventory shape
    (issue 27) this replaces a 1.3 s probe (build 0.45 s, decision 0.5 s, tie-break 0.35 s) by
    the build and one feasibility solve. ``budget``: the probe's (the feasibility solve's work is
    charged to it)."""
    from gangplan.solver.exact.build import build_model, hand_over
    from gangplan.solver.exact.objective import GPUS
    from gangplan.solver.exact.solve import feasible

    if optimal.status != Status.OPTIMAL:
        return False
    on, _ = cluster.profile.resolve_preemption(preemption)
    built = build_model(cluster, fixed=dict(fixed), preemption=on)
    if built.inst.fixed_errors:
        return True  # solve_exact answers INFEASIBLE
    model = built.model.clone()  # the built model stays as built: the full probe may take it
    held = 0
    for t in built.tiers:
        if t.cost or is_cost(t.name) or t.name not in optimal.objective:
            continue
        value = optimal.objective[t.name]
        if (t.name.startswith(ADMITTED_PREFIX) or t.name in (PLACED, GPUS)) and value == int(value):
            model.add(t.expr >= int(value))  # fewer tiers held only weakens the check
            held += 1
    decided = (
        held > 0
        and feasible(
            built,
            workers=workers,
            seed=seed,
            time_limit=time_limit * PRECHECK_SHARE,
            budget=budget,
            model=model,
        )
        is False
    )
    if not decided:  # the full probe (solve_exact with the same fixed) builds this model next
        hand_over(cluster, built, fixed=dict(fixed), preemption=on)
    return decided


def find_decisive_step(
    cluster: Cluster,
    greedy: Result,
    optimal: Result,
    *,
    time_limit: float,
    workers: int,
    seed: int,
    preemption: bool | None = None,
    progress: Progress | None = None,
) -> DecisiveStep | None:
    """Binary search over prefixes of the candidate choices (see the module docstring)."""
    return search_decisive_step(
        cluster,
        greedy,
        optimal,
        time_limit=time_limit,
        workers=workers,
        seed=seed,
        preemption=preemption,
        progress=progress,
    )[0]


def search_decisive_step(
    cluster: Cluster,
    greedy: Result,
    optimal: Result,
    *,
    time_limit: float,
    workers: int,
    seed: int,
    preemption: bool | None = None,
    progress: Progress | None = None,
) -> tuple[DecisiveStep | None, Result]:
    """The decisive step and the optimum it refers to: the optimal placement found that agrees
    with every candidate choice before the step (``optimal`` itself when the step is the first).
    ``preemption`` is the exact probes'; the greedy evidence replays greedy's own run
    (:func:`~gangplan.solver.greedy.replay_options`) or reads its trace."""
    from gangplan.solver.exact import solve_exact
    from gangplan.solver.exact.build import drop_handed
    from gangplan.solver.greedy import placement_evidence, pod_scores_at_step, replay_options

    if not greedy_choices(greedy):
        return _admission_only(cluster, greedy, optimal, candidates=0, skipped=0, probes=0), optimal
    choices, skipped = candidate_choices(cluster, greedy, optimal)
    target = optimal.objective
    probes = 0
    pre = {"decided": 0, "wasted": 0}
    unproven = [0]

    def agrees(k: int) -> tuple[bool, Result]:
        nonlocal probes
        probes += 1
        if progress:
            progress(
                f"decisive step: exact probe {probes} (first {k} of {len(choices)} greedy choices fixed)"
            )
        fixed = {pod: node for _, pod, node in choices[:k]}
        probe = Budget(time_limit)  # the pre-check and the full probe together (PRECHECK_SHARE)
        if (
            k > 0
            and pre["wasted"] < PRECHECK_GIVE_UP + pre["decided"]
            and not optimum_agrees(optimal, choices[:k])
        ):
            if cannot_reach(
                cluster,
                fixed,
                optimal,
                time_limit=time_limit,
                workers=workers,
                seed=seed,
                preemption=preemption,
                budget=probe,
            ):
                pre["decided"] += 1
                return (
                    False,
                    optimal,
                )  # what the full probe would answer (see cannot_reach), without its solve
            pre["wasted"] += 1
        # The decision tiers answer the probe; the tie-break (which of equal optima) is solved only
        # for the probe whose optimum the diff reports (below), with the same budget and hint.
        try:
            r = solve_exact(
                cluster,
                time_limit=probe.left(),
                workers=workers,
                seed=seed,
                fixed=fixed,
                hint=optimal if k == 0 else None,
                preemption=preemption,
                tiebreak=False,
            )
        finally:
            drop_handed()  # the pre-check's model, if the probe did not take it (it holds the cluster)
        if r.status not in (Status.OPTIMAL, Status.FEASIBLE):
            # INFEASIBLE: the prefix cannot hold, a proven no. UNKNOWN (no solution within the
            # limit: 10,000-node GB200, a gang's first pod fixed alone is no start) proves nothing.
            unproven[0] += r.status == Status.UNKNOWN
            return False, r
        # FEASIBLE but equal to the optimum also proves agreement; below it is undecided -> treat as
        # no, and counted (DecisiveStep.unproven_probes).
        yes = compare(decision_tiers(r.objective, target), decision_tiers(target, r.objective)) >= 0
        if not yes and r.status != Status.OPTIMAL:
            unproven[0] += 1
        return yes, r

    if not choices:
        return _admission_only(
            cluster, greedy, optimal, candidates=0, skipped=skipped, probes=0
        ), optimal
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
            if r is not optimal:  # the reported optimum, with its tie-break (see agrees)
                r = solve_exact(
                    cluster,
                    time_limit=time_limit,
                    workers=workers,
                    seed=seed,
                    fixed={p: n for _, p, n in choices},
                    preemption=preemption,
                )
            return _admission_only(
                cluster, greedy, r, candidates=len(choices), skipped=skipped, probes=probes
            ), r
        k *= 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        ok, r = agrees(mid)
        if ok:
            lo, best_agreeing = mid, r
        else:
            hi = mid
    if (
        best_agreeing is not optimal
    ):  # the reported optimum: the agreeing probe again, with its tie-break
        fixed = {p: n for _, p, n in choices[:lo]}
        best_agreeing = solve_exact(
            cluster,
            time_limit=time_limit,
            workers=workers,
            seed=seed,
            fixed=fixed,
            preemption=preemption,
        )
    step, pod, node = choices[hi - 1]
    outcome = best_agreeing.pods.get(pod)
    opt_node = outcome.node if outcome is not None else None
    group, differs = entity_differs(cluster, pod, greedy, best_agreeing)
    still_admitted = bool(
        group and group in best_agreeing.groups and best_agreeing.groups[group].admitted
    )
    kind = "placement" if opt_node is not None or still_admitted else "admission"
    nodes = [n for n in (node, opt_node) if n]
    try:  # greedy's own run (its options, preemption included), before the cycle that made the choice
        with gc_paused():  # as solve_greedy runs (gangplan.gcpause)
            scores = pod_scores_at_step(
                cluster, pod, nodes, step="recorded", chosen=node, **replay_options(greedy)
            )
    except ValueError:
        scores = {}
    placement = (
        placement_evidence(cluster, greedy, group, node, opt_node) if group and opt_node else None
    )
    failed_pod, failed_reason = next_failure(greedy, pod)
    why = why_text(cluster, greedy, best_agreeing, pod, node, opt_node, group, differs)
    pre = preemption_evidence(cluster, greedy, best_agreeing, pod)
    return DecisiveStep(
        kind=kind,
        step=step,
        pod=pod,
        group=group,
        greedy_node=node,
        optimal_node=opt_node,
        group_outcome_differs=differs,
        why=why,
        greedy_scores=node_evidence(scores.get(node)),
        optimal_scores=node_evidence(scores.get(opt_node) if opt_node else None),
        failed_pod=failed_pod,
        failed_reason=failed_reason,
        probes=probes,
        unproven_probes=unproven[0],
        candidates=len(choices),
        skipped=skipped,
        placement=placement,
        preemption=pre,
    ), best_agreeing


def _greedy_reason(cluster: Cluster, greedy: Result, key: str) -> str | None:
    """Greedy's reason for ``key`` (a group, or a single pod): the group's, else that of its first
    pod greedy left unplaced."""
    if key in greedy.groups:
        if greedy.groups[key].reason:
            return greedy.groups[key].reason
        left = [
            p.key
            for p in cluster.groups.members(key)
            if p.key in greedy.pods and not greedy.pods[p.key].node
        ]
        return greedy.pods[left[0]].reason if left else None
    o = greedy.pods.get(key)
    return o.reason if o else None


def _admission_only(
    cluster: Cluster, greedy: Result, optimal: Result, *, candidates: int, skipped: int, probes: int
) -> DecisiveStep:
    """Every candidate choice is shared by an optimum: the difference is what greedy did not admit
    (a group or single pod), or, where both admit the same, the pods of an admitted group greedy
    left out that the optimum places (a basic group places its pods one by one)."""
    differ = differing_groups(cluster, greedy, optimal)
    gained = [
        k
        for k in differ
        if admitted_in(cluster, optimal, k) and not admitted_in(cluster, greedy, k)
    ]
    more = [
        k
        for k in differ
        if k in optimal.groups
        and k in greedy.groups
        and optimal.groups[k].placed > greedy.groups[k].placed
    ]
    first = gained[0] if gained else (more[0] if more else None)
    reason = _greedy_reason(cluster, greedy, first) if first is not None else None
    if gained or not more:
        what = f"the optimum also admits {name_list(gained, full=ONLY_OPTIMAL)}"
    else:
        extra = optimal.groups[first].placed - greedy.groups[first].placed
        what = (
            f"both admit the same; the optimum also places {extra} more pod(s) of {first} "
            f"({greedy.groups[first].placed} -> {optimal.groups[first].placed})"
        )
    why = (
        "every greedy choice that survives, or belongs to a group the optimum admits, is shared by an optimal placement; "
        + what
        + (f" (greedy: {reason})" if reason else "")
    )
    pre = None
    if not gained and set(greedy.victims) != set(optimal.victims):
        # Same placements, other victims: the difference is greedy's victim choice.
        for pod in greedy.greedy_trace.order:
            pre = preemption_evidence(cluster, greedy, optimal, pod)
            if pre is not None:
                why = (
                    "every greedy placement is shared by an optimal placement; what differs is which pods are evicted: "
                    + pre["criterion"]
                )
                break
    return DecisiveStep(
        kind="admission",
        group=first,
        group_outcome_differs=first is not None,
        why=why,
        probes=probes,
        candidates=candidates,
        skipped=skipped,
        preemption=pre,
    )


def closest_optimum(
    cluster: Cluster,
    optimal: Result,
    agreeing: Result,
    step: DecisiveStep | None,
    *,
    violations: list | None = None,
) -> Result:
    """The optimum the diff reports: ``agreeing`` (an optimal placement that shares every greedy
    choice before the decisive step, so the groups, the admission summary, the plan and the step
    all describe one placement) when it passes the validator and ties ``optimal`` on every
    decision tier (the tie-break, which only orders equal optima, may differ); else ``optimal``. Status, gap and bound stay those of the proven solve; the trace says which
    greedy choices were fixed. ``violations``: the validator's findings for ``agreeing`` when the
    caller has them."""
    if agreeing is optimal or agreeing.status not in (Status.OPTIMAL, Status.FEASIBLE):
        return optimal
    if (
        not set(optimal.objective) <= set(agreeing.objective)
        or compare(
            decision_tiers(agreeing.objective, optimal.objective),
            decision_tiers(optimal.objective, agreeing.objective),
        )
        < 0
    ):
        return optimal
    if (
        validate(cluster, agreeing) if violations is None else violations
    ):  # the caller reports this as a model mismatch
        return optimal
    note = ClosestToGreedy(
        fixed_choices=agreeing.options.fixed_count,
        probe_status=agreeing.status.value,
        why="an optimal placement that agrees with greedy's choices before the decisive step"
        + (f" (#{step.step})" if step is not None and step.step else ""),
    )
    trace = agreeing.exact_trace
    update = {
        "status": optimal.status,
        "gap": optimal.gap,
        "bound": optimal.bound,
        "snapshot": optimal.snapshot,
        "wall_seconds": optimal.wall_seconds,
    }
    if trace is not None:
        update["trace"] = trace.model_copy(update={"closest_to_greedy": note})
    return agreeing.model_copy(update=update)


def node_evidence(got: dict | None) -> NodeEvidence | NoEvidence:
    """A node's evidence from :func:`gangplan.solver.greedy.pod_scores_at_step` as its record."""
    return NoEvidence() if not got else NodeEvidence.model_validate(got)
