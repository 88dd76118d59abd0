"""``solve --explain POD`` and ``why POD``: one pod's cycle in its gang's (why it was or was not
evaluated), every topology placement tried for the pod's gang with its verdict and score, and the
Filter rejections, scores and choice of its scheduling cycle. ``why --json`` reads the same lines
(:func:`explain_context`, :func:`placement_lines`)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from gangplan.models.cluster import Cluster
from gangplan.models.result import Result
from gangplan.render_kueue import KUEUE_PENDING, kueue_context
from gangplan.render_text import _para, _short, short_reason, with_blockers


def explain_context(r: Result, cluster: Cluster | None, pod_key: str) -> list[str]:
    """Where ``pod_key``'s cycle sits in its gang's: the cycle that evaluated it, and when it was
    not evaluated, why (gated at PreEnqueue, the group failed validation, or GangScheduling's
    PlacementFeasible stopped the gang's cycle at an earlier pod). Never "not evaluated" for a pod
    that was."""
    kueue = kueue_context(r, cluster, pod_key)
    if kueue and cluster is not None:  # what kube-scheduler saw: after Kueue's admission
        from gangplan.solver.kueue import kube_view

        if kueue[0].endswith(KUEUE_PENDING) or KUEUE_PENDING + " " in kueue[0]:
            return kueue
        return kueue + _kube_context(r, kube_view(cluster), pod_key) + permit_hold_lines(r, pod_key)
    return _kube_context(r, cluster, pod_key) + permit_hold_lines(r, pod_key)


def permit_hold_lines(r: Result, pod_key: str) -> list[str]:
    """v1.35 only: each time the pod waited at Permit for its gang's quorum
    (``trace.permitHolds``, :class:`~gangplan.models.trace.PermitHold`): the node it held, from
    when to when, how the hold ended and which entities failed meanwhile."""
    lines = []
    for h in r.greedy_trace.permit_holds or []:
        if pod_key not in h.pods:
            continue
        end = (
            "the gang's quorum was reached and its pods bound"
            if h.outcome == "quorum"
            else f"the {h.deadline - h.since:g} s Permit timeout released it (the pod forgotten, the node freed)"
        )
        lines.append(
            f"waited at Permit on {h.pods[pod_key]} for gang {h.entity}'s quorum from {h.since:g} s "
            f"to {h.until:g} s (assumed, not bound): {end}"
        )
        if h.failed_meanwhile:
            lines.append(
                f"meanwhile failed (the held pods may have blocked them): {_short(h.failed_meanwhile)}"
            )
    return lines


def _kube_context(r: Result, cluster: Cluster | None, pod_key: str) -> list[str]:
    trace = r.greedy_trace
    pod = cluster.pod_by_key.get(pod_key) if cluster is not None else None
    if cluster is not None and pod_key in cluster.gated:
        return [f"not evaluated: gated at PreEnqueue ({cluster.gated[pod_key]})"]
    group = pod.group_key if pod is not None else None
    if group is None:
        return [] if pod_key in trace.pods else ["not evaluated by the scheduler in this run"]
    cycle = trace.groups.get(group)
    root = cluster.groups.root_of(group) if cluster is not None else group
    if cycle is None:
        return (
            [
                f"not evaluated: the workload cycle never reached group {group} (its root {root} failed before it)"
            ]
            if root != group
            else [f"not evaluated: group {group} was not scheduled in this run"]
        )
    members = [p.key for p in cluster.groups.members(group)] if cluster is not None else []
    evaluated = [k for k in trace.order if k in set(members)] or [
        k for k in members if k in trace.pods
    ]
    lines = _gang_cycle_lines(trace, cycle, group, root)
    if pod_key in trace.pods:
        if pod_key in evaluated:
            lines.append(
                f"evaluated as pod {evaluated.index(pod_key) + 1} of {len(members)} in the gang's cycle"
            )
        return lines
    lines.append(_why_not_evaluated(trace, cycle, cluster, members, evaluated))
    return lines


def _gang_cycle_lines(trace, cycle, group: str, root: str) -> list[str]:
    """The gang's cycle: its status and attempts, PlacementFeasible after each pod, the drawn pod order."""
    attempts = 1 + sum(1 for q in trace.requeues or () if q.entity == root)
    where = f"group {group}: {cycle.status}" + (
        f" after {attempts} attempt(s)" if attempts > 1 else ""
    )
    if cycle.progression:
        where += f"; PlacementFeasible after each pod: {', '.join(cycle.progression)}"
    lines = [where]
    order = cycle.member_order.drawn if cycle.member_order is not None else []
    if order:
        lines.append(f"pod order drawn from the seed (v1.36 Go map order): {_short(order)}")
    return lines


def _why_not_evaluated(
    trace, cycle, cluster: Cluster | None, members: list[str], evaluated: list[str]
) -> str:
    """Why a gang member the cycle never evaluated was left out."""
    if cycle.status == "SchedulerError" or (cycle.reason or "").startswith(
        ("invalid", "validation")
    ):
        return f"not evaluated: the group failed validation ({cycle.reason})"
    failed = [k for k in evaluated if not (trace.pods[k].chosen if k in trace.pods else None)]
    first = failed[0] if failed else None
    if first is not None:
        err = trace.pods[first].fit_error or ""
        return (
            f"not evaluated: the gang's cycle stopped after {first} failed ({with_blockers(short_reason(err), err, cluster, first) or 'no node fits'}): "
            f"with {len(members) - len(evaluated)} pod(s) left, minCount could no longer be reached, so GangScheduling's "
            "PlacementFeasible returned Unschedulable before this pod's turn"
        )
    if cycle.placements is not None:
        return "not evaluated in the placement that was kept: no placement (topology domain) held the whole gang"
    return f"not evaluated: {cycle.reason or 'the gang cycle ended before its turn'}"


def placement_decision_of(
    r: Result, cluster: Cluster | None, pod_key: str
) -> tuple[str, Any] | None:
    """``(group, decision)``: the topology placement decision (``trace.groups[g].placements``)
    that holds ``pod_key``'s gang, from its PodGroup up through its parents; None when there is none."""
    trace = r.greedy_trace
    pod = cluster.pod_by_key.get(pod_key) if cluster is not None else None
    group = pod.group_key if pod is not None else None
    seen: set[str] = set()
    while group is not None and group not in seen:
        seen.add(group)
        cycle = trace.groups.get(group)
        if cycle is not None and cycle.placements is not None:
            return group, cycle.placements
        node = cluster.groups.nodes.get(group) if cluster is not None else None
        group = node.parent if node is not None else None
    return None


def _placement_score(e) -> str:
    if e.total is None:
        return "score -"
    parts = ", ".join(f"{k} {v}" for k, v in e.scores.items())
    return f"score {e.total}" + (f" ({parts})" if parts else "")


def placement_lines(r: Result, cluster: Cluster | None, pod_key: str) -> list[str]:
    """Every placement (topology domain) tried for ``pod_key``'s gang, one line each with its
    verdict (feasible, or why it failed) and its score, then which one was chosen and why: the
    only feasible one, the highest total, or the tie rule; or that none was and the gang was
    rejected (issue 41). Only what the greedy trace recorded; [] for a gang without a topology
    constraint."""
    found = placement_decision_of(r, cluster, pod_key)
    if found is None:
        return []
    group, d = found
    entries = d.entries()
    feasible = [e for e in entries if e.status == "Success"]
    lines = [_placements_head(group, d, len(entries))] + [
        _placement_line(e, feasible) for e in entries
    ]
    if d.chosen is None:
        lines.append(
            f"chosen placement: none; none of the {len(entries)} placement(s) held the whole gang, so the gang was rejected "
            "and none of its pods were placed"
        )
        return lines
    line = f"chosen placement: {d.chosen}, {_why_chosen(r, d, feasible)}"
    outcome = r.groups.get(group)
    if outcome is not None and outcome.admitted is False:
        line += f"; but the gang was reverted later and none of its pods stayed placed ({outcome.reason or 'no reason recorded'})"
    lines.append(line)
    return lines


def _placements_head(group: str, d, evaluated: int) -> str:
    """``placements tried for group G (KEY, inside PARENT): N evaluated of M generated; ...``"""
    key = d.key or "a PlacementGenerate plugin"
    head = f"placements tried for group {group} ({key}"
    head += f", inside {d.parent})" if d.parent else ")"
    head += f": {evaluated} evaluated of {d.generated} generated"
    if d.nominated:
        head += f"; {d.nominated} first, for the group's nominated pods"
    return head


def _placement_line(e, feasible: list) -> str:
    """One placement tried: its verdict, the pods it proposes and its score."""
    verdict = (
        "feasible" if e.status == "Success" else f"{e.status}: {e.reason or 'no reason recorded'}"
    )
    pods = f", {e.assigned} pod(s) proposed" if e.status == "Success" else ""
    if e.total is not None:
        score = _placement_score(e)
    elif e.status != "Success":
        score = "not scored (failed)"
    elif len(feasible) == 1:
        score = "not scored (the only feasible placement)"
    else:
        score = "score -"
    return f"placement {e.name} ({e.nodes} nodes): {verdict}{pods}; {score}"


def _why_chosen(r: Result, d, feasible: list) -> str:
    """Why the chosen placement won: the only feasible one, the highest total, or the tie rule."""
    if not d.scored or len(feasible) <= 1:
        return "the only feasible placement, chosen without scoring"
    best = next((e for e in feasible if e.name == d.chosen), None)
    total = best.total if best is not None else None
    if d.tie_count > 1:
        tied = [e.name for e in feasible if e.total == total]
        rule = r.options.tie_break or "first"
        how = (
            f"the earliest in generation order wins (--tie-break {rule})"
            if rule == "first"
            else f"kube-scheduler picks one at random; here drawn from seed {r.options.seed} (--tie-break {rule})"
        )
        return f"a tie: {', '.join(tied)} share the highest total score {total}; {how}"
    others = sorted(
        (e for e in feasible if e.name != d.chosen),
        key=lambda e: -1 if e.total is None else -e.total,
    )
    runner = f" (next: {others[0].name}, {others[0].total})" if others else ""
    return f"the highest total score, {total}{runner}"


def _domain_of(cluster: Cluster | None, node: str | None, key: str | None) -> str | None:
    if cluster is None or node is None or key is None:
        return None
    n = next((x for x in cluster.nodes if x.name == node), None)
    return n.labels.get(key) if n is not None else None


def render_trace(console: Console, r: Result, pod_key: str, cluster: Cluster | None = None) -> None:
    """One pod's greedy trace: its place in the gang's cycle, feasible nodes, rejections per
    plugin, top scores, the choice."""
    tr = r.greedy_trace.pods.get(pod_key)
    outcome = r.pods.get(pod_key)
    console.print(
        f"[bold]{pod_key}[/bold]: "
        + (
            f"-> {outcome.node}"
            if outcome and outcome.node
            else f"not placed ({outcome.reason if outcome else '?'})"
        )
    )
    for line in explain_context(r, cluster, pod_key):
        _para(console, line)
    for line in placement_lines(r, cluster, pod_key):
        _para(console, line)
    if tr is None:
        return
    placed = outcome.node if outcome is not None else None
    decision = placement_decision_of(r, cluster, pod_key)
    domain = _domain_of(cluster, tr.chosen, decision[1].key) if decision is not None else None
    where = f" (its cycle in placement {domain})" if domain else ""
    console.print(
        f"  evaluated {tr.evaluated_nodes} nodes, {tr.feasible_nodes} feasible{where}", markup=False
    )
    _render_rejections(console, tr, cluster, pod_key)
    if tr.top:
        console.print(_top_scores_table(tr.top))
    if len(tr.tie_set) > 1:
        console.print(f"  tie set: {_short(tr.tie_set)}")
    _render_choice(console, tr, placed, decision, domain)


def _render_rejections(console: Console, tr, cluster: Cluster | None, pod_key: str) -> None:
    """Filter rejections per plugin (with the blockers' details where known) and the FitError."""
    found = {}
    if cluster is not None and pod_key in cluster.pod_by_key:
        from gangplan.solver.blockers import details

        found = details(cluster, cluster.pod_by_key[pod_key])
    for plugin, reasons in tr.rejections.items():
        for reason, n in reasons.items():
            extra = f" ({found[reason]})" if reason in found else ""
            console.print(f"  rejected by {plugin}: {n} x {reason}{extra}", markup=False)
    if tr.fit_error:
        console.print(f"  FitError: {tr.fit_error}", markup=False)


def _top_scores_table(top) -> Table:
    plugins = sorted({p for row in top for p in row.scores})
    t = Table(title="Top scored nodes (weighted)", title_justify="left")
    t.add_column("node")
    t.add_column("total", justify="right")
    for p in plugins:
        t.add_column(p, justify="right")
    for row in top:
        t.add_row(row.node, str(row.total), *[str(row.scores.get(p, "")) for p in plugins])
    return t


def _render_choice(console: Console, tr, placed: str | None, decision, domain: str | None) -> None:
    """The node chosen; never "chosen: <node>" for a pod that is not placed in the end."""
    if placed:
        console.print(f"  chosen: {placed}", markup=False)
    elif tr.chosen:
        what = (
            "the gang was rejected: no placement held it"
            if decision is not None and decision[1].chosen is None
            else "its gang's cycle was reverted"
        )
        inside = f" in placement {domain}" if domain else ""
        _para(
            console,
            f"not placed: its cycle{inside} picked {tr.chosen}, but {what}, so nothing was kept",
        )
    else:
        console.print("  no node chosen: no node fit the pod in its cycle", markup=False)


__all__ = [
    "explain_context",
    "permit_hold_lines",
    "placement_decision_of",
    "placement_lines",
    "render_trace",
]
