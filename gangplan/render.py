"""Rich rendering for people. Every view here has a JSON twin produced by the library."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gangplan.models.cluster import Cluster
from gangplan.models.documents import NodeEvidence
from gangplan.models.result import Result
from gangplan.models.well_known import GPU


def render_summary(console: Console, s: dict[str, Any]) -> None:
    c = s["counts"]
    console.print(f"[bold]Snapshot[/bold] {', '.join(s['sources'])}")
    console.print(
        f"  {c['nodes']} nodes ({c['unschedulableNodes']} unschedulable, {c['taintedNodes']} tainted), "
        f"{c['boundPods']} bound pods, {c['pendingPods']} pending pods ({c['gatedPods']} gated), "
        f"{c['podGroups']} PodGroups, {c['compositePodGroups']} CompositePodGroups, "
        f"{c['priorityClasses']} PriorityClasses, {c['podDisruptionBudgets']} PDBs"
    )
    if s["skippedKinds"]:
        console.print("  skipped kinds: " + ", ".join(f"{k} x{n}" for k, n in s["skippedKinds"].items()), markup=False)
    from gangplan.io.schema import is_unknown_warning

    for line in s.get("warnings", ()):
        label = "warning" if is_unknown_warning(line) else "not modelled"  # unknown fields: docs/validation.md
        console.print(f"  [yellow]{label}[/yellow]: {escape(line)}")
    p = s["profile"]
    console.print(
        f"  profile {p['schedulerName']} ({p['source']}): {p['fitStrategy']} {p['fitResources']}, "
        f"percentageOfNodesToScore {p['percentageOfNodesToScore'] or 'adaptive'}"
    )
    kv = s.get("kubeVersion")
    if kv:
        kubelets = ", ".join(f"v{m} x{n}" for m, n in kv["kubelets"].items()) or "no kubeletVersion on the Nodes"
        hint = f"suggested v{kv['suggested']}" if kv["suggested"] else "no version suggested"
        flag = "" if kv["suggested"] in (None, kv["used"]) else f"  [yellow](run with --kube-version {kv['suggested']})[/yellow]"
        console.print(f"  kube-scheduler v{kv['used']} reproduced; kubelets: {escape(kubelets)}, {hint}{flag}")
        if kv.get("apiSuggested") and kv["apiSuggested"] != kv["used"]:
            console.print(f"  the scheduling objects' apiVersions suggest v{kv['apiSuggested']}")
        for line in kv.get("notServed", ()):
            console.print(f"  [yellow]not served by v{kv['used']}[/yellow]: {escape(line)}")

    t = Table(title="Node shapes", title_justify="left")
    t.add_column("nodes", justify="right")
    t.add_column("GPU model")
    t.add_column("allocatable")
    shapes, hidden = _cut(s["nodeShapes"], 15)
    for shape in shapes:
        t.add_row(str(shape["count"]), shape["gpuModel"] or "-", ", ".join(f"{k}={v}" for k, v in shape["allocatable"].items()))
    if hidden:
        t.add_row("...", f"{hidden} more shapes", "")
    console.print(t)

    t = Table(title="Resources", title_justify="left")
    for col in ("resource", "allocatable", "requested", "free"):
        t.add_column(col, justify="right" if col != "resource" else "left")
    for r, v in s["resources"].items():
        t.add_row(r, v["allocatable"], v["requested"], v["free"])
    console.print(t)

    topo = s["topology"]
    t = Table(title=f"Topology levels ({topo['source']})", title_justify="left")
    # Label keys and domain (node) names fold onto more lines rather than being cut (issue 41);
    # one domain a line.
    t.add_column("label", overflow="fold")
    t.add_column("domains", justify="right")
    t.add_column("nodes without label", justify="right")
    t.add_column("free capacity per domain", overflow="fold")
    for lv in topo["levels"]:
        free = lv.get("free") or {}
        shown, hidden = _cut(free.items(), 8)
        cells = "\n".join(f"{d}: " + " ".join(f"{k}={v}" for k, v in f.items() if k in ("nodes", "cpu", GPU)) for d, f in shown)
        if hidden:
            cells += f"\n... (+{hidden})"
        t.add_row(lv["label"], str(lv["domains"]), str(lv["nodesWithoutLabel"]), cells)
    console.print(t)

    t = Table(title="Pending groups", title_justify="left")
    _name_col(t, "group", (g["group"] for g in s["pendingGroups"]))
    for col in ("policy", "minCount", "pods", "pending", "bound", "gated", "priority", "topology", "requests"):
        t.add_column(col, overflow="fold")
    for g in s["pendingGroups"]:
        t.add_row(
            g["group"],
            g["policy"] or "[red]missing[/red]",
            str(g["minCount"] if g["minCount"] is not None else "-"),
            str(g["pods"]),
            str(g["pending"]),
            str(g["bound"]),
            str(g["gated"]),
            str(g["priority"] if g["priority"] is not None else "-"),
            g["topologyKey"] or "-",
            g["requests"],
        )
    console.print(t)
    console.print(f"  single pending pods (no group): {s['singlePendingPods']}")
    if s["gated"]:
        t = Table(title="Gated pods", title_justify="left")
        gated, hidden = _cut(s["gated"].items(), 50)
        _name_col(t, "pod", [k for k, _ in gated])
        t.add_column("why")
        for k, why in gated:
            t.add_row(k, why)
        if hidden:
            t.add_row("...", f"{hidden} more")
        console.print(t)


# ---- shared pieces for one-line cells --------------------------------------------------------
_MINCOUNT = re.compile(r"minCount (\d+) not reached \((\d+) of (\d+) pods schedulable\)")
_PLACEMENTS = re.compile(r"(\d+)/(\d+) placements are available")
_NODES = re.compile(r"(\d+)/(\d+) nodes are available: (.*?)(?:\.\)?(?=\s|$|;)|;|$)")
_COUNTED = re.compile(r"(\d+) ([^,]+)")


def short_reason(text: str | None) -> str:
    """A one-line summary of a scheduler reason (the full text is in ``-o wide`` and ``--explain``).

    ``PodGroup ml/x: minCount 32 not reached (14 of 32 pods schedulable); ml/x-21: 0/32 nodes are
    available: 32 Insufficient cpu, 32 Insufficient memory.`` becomes ``0/32 nodes: Insufficient
    cpu, memory; only 14/32 schedulable`` (14 of the minCount 32): the nodes' reason first, as
    it is what a reader acts on. Texts without a known shape are kept (a table cell cuts them
    with an ellipsis).
    """
    if not text:
        return ""
    parts = []
    m = _NODES.search(text)
    if m:  # first: what the user acts on (the resource, the taint, the selector)
        parts.append(f"{m.group(1)}/{m.group(2)} nodes: {_why_nodes(m.group(3))}")
    m = _PLACEMENTS.search(text)
    if m:
        parts.append(f"{m.group(1)}/{m.group(2)} placements")
    m = _MINCOUNT.search(text)
    if m:
        parts.append(f"only {m.group(2)}/{m.group(1)} schedulable")
    if not parts:
        return " ".join(text.split())
    return "; ".join(parts)


_FAILED_POD = re.compile(r"(?:^|; )([A-Za-z0-9.-]+/[A-Za-z0-9.-]+): \d+/\d+ nodes are available")


def with_blockers(short: str, full: str | None, cluster: Cluster | None, pod_key: str | None = None) -> str:
    """``short`` (a :func:`short_reason`) with the reasons that name no object made concrete for
    the pod that failed (named in ``full``, else ``pod_key``): ``had untolerated taint(s)`` ->
    ``taint nvidia.com/gpu=present:NoSchedule on 2``, the selector entry a node lacks
    (:mod:`gangplan.solver.blockers`)."""
    if cluster is None or not full or not short:
        return short
    m = _FAILED_POD.search(full)
    key = m.group(1) if m else pod_key
    pod = cluster.pod_by_key.get(key) if key else None
    if pod is None:
        return short
    from gangplan.solver.blockers import details

    found = details(cluster, pod)
    for reason, detail in found.items():
        brief = reason.removeprefix("node(s) ")
        if brief in short:
            short = short.replace(brief, detail, 1)
        elif reason in short:
            short = short.replace(reason, detail, 1)
    return short


def _why_nodes(reasons: str) -> str:
    """``32 Insufficient cpu, 32 Insufficient memory, 1 node(s) had untolerated taint(s)`` ->
    ``Insufficient cpu, memory; untolerated taint``: the distinct reasons, most nodes first."""
    counted = [(int(m.group(1)), m.group(2).strip()) for m in _COUNTED.finditer(reasons)]
    counted.sort(key=lambda kv: -kv[0])
    insufficient = [r.removeprefix("Insufficient ") for _, r in counted if r.startswith("Insufficient ")]
    other = [r.removeprefix("node(s) ") for _, r in counted if not r.startswith("Insufficient ")]
    out = []
    if insufficient:
        out.append("Insufficient " + ", ".join(insufficient))
    out += other
    return "; ".join(out) if out else reasons.strip()


def short_domain(domain: str | None) -> str:
    """``network.topology.nvidia.com/block=su-3`` -> ``block=su-3`` (the key's last segment)."""
    if not domain:
        return ""
    key, _, value = domain.partition("=")
    return f"{key.rsplit('/', 1)[-1]}={value}"


def _table() -> Table:
    return Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)


def _name_col(t: Table, header: str, names: Iterable[str], **kw) -> None:
    """A column of names the reader needs whole (groups, pods): at least as wide as the longest,
    so the table wraps or cuts the other columns instead."""
    width = max((len(n) for n in names), default=0)
    t.add_column(header, no_wrap=True, min_width=max(width, len(header)), **kw)


def _flex(text: str, wide: bool) -> Text:
    """A cell that stays on one line (cut with an ellipsis) unless ``wide``."""
    return Text(text, no_wrap=not wide, overflow="fold" if wide else "ellipsis")


def _line(console: Console, text: str, wide: bool, style: str = "") -> None:
    """One line: cut with an ellipsis at the console width, unless ``wide`` (then wrapped)."""
    console.print(Text(text, style=style), no_wrap=not wide, overflow="fold" if wide else "ellipsis")


def _para(console: Console, text: str, indent: int = 2) -> None:
    """A paragraph wrapped at the console width, continuation lines indented under the first."""
    console.print(textwrap.fill(text, width=console.width, initial_indent=" " * indent, subsequent_indent=" " * (indent + 4),
                                break_on_hyphens=False, break_long_words=False), markup=False, highlight=False, soft_wrap=True)


def _heading(console: Console, title: str, note: str = "") -> None:
    console.print()
    console.print(Text.assemble((title, "bold"), (f" {note}" if note else "", "dim")))


def _outcome(admitted: bool, placed: int, domain: str | None, wide: bool) -> Text:
    t = Text("admitted" if admitted else "rejected", style="green" if admitted else "red")
    t.append(f" {placed}")
    if domain:
        t.append(" " + (domain if wide else short_domain(domain)))
    return t


def render_result(console: Console, r: Result, cluster: Cluster, *, wide: bool = False) -> None:
    """One engine's Result: summary line first, then the groups, the single pods and the victims."""
    head = f"[bold]{r.engine}[/bold] {r.status.value}"
    if r.gap is not None:
        head += f", gap {r.gap:.4%}"
    head += f", {r.wall_seconds:.3f} s"
    console.print(head)
    singles = {k: o for k, o in r.pods.items() if cluster.pod_by_key[k].group_key is None}
    admitted = sum(1 for g in r.groups.values() if g.admitted)
    summary = f"  admitted {admitted}/{len(r.groups)} groups"
    if singles:
        summary += f", single pods {sum(1 for o in singles.values() if o.node)}/{len(singles)} placed"
    summary += f", {len(r.victims)} victim(s)"
    console.print(summary, markup=False)
    console.print("  objective: " + ", ".join(f"{k}={v:g}" for k, v in r.objective.items()), markup=False)
    if r.bound:
        console.print("  bound:     " + ", ".join(f"{k}={v:g}" for k, v in r.bound.items()), markup=False)
    for line in chance_lines(r):
        console.print(f"  [yellow]chance[/yellow]: {escape(line)}")
    if r.groups:
        _heading(console, "Groups")
        t = _table()
        _name_col(t, "group", r.groups)
        for col, kw in (("outcome", {"no_wrap": True}), ("placed/min", {"no_wrap": True, "justify": "right"}),
                        ("nodes", {"no_wrap": not wide}), ("reason", {})):
            t.add_column(col, **kw)
        for key, g in r.groups.items():
            members = cluster.groups.members(key)
            nodes = sorted({r.pods[p.key].node for p in members if p.key in r.pods and r.pods[p.key].node})
            nodes += sorted({p.node_name for p in members if p.node_name and p.key not in r.victims} - set(nodes))
            nodes_cell = ", ".join(nodes) if wide else (_short(nodes, 2) if nodes else "-")
            reason = (g.reason or "") if wide else with_blockers(short_reason(g.reason), g.reason, cluster)
            t.add_row(key, _outcome(g.admitted, g.placed, g.domain, wide), f"{g.placed}/{g.min_count}", nodes_cell, _flex(reason, wide))
        console.print(t)
    if r.composite_groups:
        _heading(console, "Composite groups")
        t = _table()
        _name_col(t, "group", (k + ("" if c.root else " (child)") for k, c in r.composite_groups.items()))
        for col in ("outcome", "children/min", "pods placed"):
            t.add_column(col, no_wrap=True, justify="left" if col == "outcome" else "right")
        for key, c in r.composite_groups.items():
            outcome = Text("admitted" if c.admitted else "rejected", style="green" if c.admitted else "red")
            t.add_row(key + ("" if c.root else " (child)"), outcome, f"{c.groups_admitted}/{c.need} of {c.children}", str(c.placed))
        console.print(t)
    if singles:
        _heading(console, "Single pods")
        t = _table()
        _name_col(t, "pod", singles)
        t.add_column("node", no_wrap=True)
        t.add_column("reason")
        for key, o in singles.items():
            reason = (o.reason or "") if wide else with_blockers(short_reason(o.reason), o.reason, cluster, key)
            t.add_row(key, (o.node or "-") + (" (nominated)" if o.nominated else ""), _flex("" if o.node else reason, wide))
        console.print(t)
    if r.victims:
        _line(console, f"  victims ({len(r.victims)}): " + (", ".join(r.victims) if wide else _short(r.victims)), wide)
    if not wide and any(len(g.reason or "") > len(short_reason(g.reason)) for g in r.groups.values()):
        console.print("  (reasons shortened: -o wide for the full text, --explain POD for one pod's trace)", style="dim")


def _cut(items, n: int) -> tuple[list, int]:
    """The first ``n`` of ``items`` and how many are left out, but never just one: "(+1)" takes
    about the room of the name it hides (issue 41: ``gpu-b1, gpu-b2, ... (+1)`` of three nodes)."""
    items = list(items)
    if len(items) <= n + 1:
        return items, 0
    return items[:n], len(items) - n


def _short(items: list[str], n: int = 6) -> str:
    shown, hidden = _cut(items, n)
    return ", ".join(shown) + (f", ... (+{hidden})" if hidden else "")


def explain_context(r: Result, cluster: Cluster | None, pod_key: str) -> list[str]:
    """Where ``pod_key``'s cycle sits in its gang's: the cycle that evaluated it, and when it was
    not evaluated, why (gated at PreEnqueue, the group failed validation, or GangScheduling's
    PlacementFeasible stopped the gang's cycle at an earlier pod). Never "not evaluated" for a pod
    that was."""
    trace = r.greedy_trace
    pod = cluster.pod_by_key.get(pod_key) if cluster is not None else None
    if cluster is not None and pod_key in cluster.gated:
        return [f"not evaluated: gated at PreEnqueue ({cluster.gated[pod_key]})"]
    group = pod.group_key if pod is not None else None
    if group is None:
        return [] if pod_key in trace.pods else ["not evaluated by the scheduler in this run"]
    cycle = trace.groups.get(group)
    members = [p.key for p in cluster.groups.members(group)] if cluster is not None else []
    order = cycle.member_order.drawn if cycle is not None and cycle.member_order is not None else []
    evaluated = [k for k in trace.order if k in set(members)] or [k for k in members if k in trace.pods]
    root = cluster.groups.root_of(group) if cluster is not None else group
    attempts = 1 + sum(1 for q in trace.requeues or () if q.entity == root)
    lines = []
    if cycle is None:
        return [f"not evaluated: the workload cycle never reached group {group} (its root {root} failed before it)"] if root != group else [f"not evaluated: group {group} was not scheduled in this run"]
    where = f"group {group}: {cycle.status}" + (f" after {attempts} attempt(s)" if attempts > 1 else "")
    if cycle.progression:
        where += f"; PlacementFeasible after each pod: {', '.join(cycle.progression)}"
    lines.append(where)
    if order:
        lines.append(f"pod order drawn from the seed (v1.36 Go map order): {_short(order)}")
    if pod_key in trace.pods:
        if pod_key in evaluated:
            lines.append(f"evaluated as pod {evaluated.index(pod_key) + 1} of {len(members)} in the gang's cycle")
        return lines
    if cycle.status == "SchedulerError" or (cycle.reason or "").startswith(("invalid", "validation")):
        lines.append(f"not evaluated: the group failed validation ({cycle.reason})")
        return lines
    failed = [k for k in evaluated if not (trace.pods[k].chosen if k in trace.pods else None)]
    first = failed[0] if failed else None
    if first is not None:
        err = trace.pods[first].fit_error or ""
        lines.append(f"not evaluated: the gang's cycle stopped after {first} failed ({with_blockers(short_reason(err), err, cluster, first) or 'no node fits'}): "
                     f"with {len(members) - len(evaluated)} pod(s) left, minCount could no longer be reached, so GangScheduling's "
                     "PlacementFeasible returned Unschedulable before this pod's turn")
    elif cycle.placements is not None:
        lines.append("not evaluated in the placement that was kept: no placement (topology domain) held the whole gang")
    else:
        lines.append(f"not evaluated: {cycle.reason or 'the gang cycle ended before its turn'}")
    return lines


def placement_decision_of(r: Result, cluster: Cluster | None, pod_key: str) -> tuple[str, Any] | None:
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
    key = d.key or "a PlacementGenerate plugin"
    head = f"placements tried for group {group} ({key}"
    head += f", inside {d.parent})" if d.parent else ")"
    head += f": {len(entries)} evaluated of {d.generated} generated"
    if d.nominated:
        head += f"; {d.nominated} first, for the group's nominated pods"
    lines = [head]
    feasible = [e for e in entries if e.status == "Success"]
    for e in entries:
        verdict = "feasible" if e.status == "Success" else f"{e.status}: {e.reason or 'no reason recorded'}"
        pods = f", {e.assigned} pod(s) proposed" if e.status == "Success" else ""
        if e.total is not None:
            score = _placement_score(e)
        elif e.status != "Success":
            score = "not scored (failed)"
        elif len(feasible) == 1:
            score = "not scored (the only feasible placement)"
        else:
            score = "score -"
        lines.append(f"placement {e.name} ({e.nodes} nodes): {verdict}{pods}; {score}")
    outcome = r.groups.get(group)
    admitted = outcome.admitted if outcome is not None else None
    if d.chosen is None:
        lines.append(f"chosen placement: none; none of the {len(entries)} placement(s) held the whole gang, so the gang was rejected "
                     "and none of its pods were placed")
        return lines
    if not d.scored or len(feasible) <= 1:
        why = "the only feasible placement, chosen without scoring"
    else:
        best = next((e for e in feasible if e.name == d.chosen), None)
        total = best.total if best is not None else None
        others = sorted((e for e in feasible if e.name != d.chosen), key=lambda e: -1 if e.total is None else -e.total)
        if d.tie_count > 1:
            tied = [e.name for e in feasible if e.total == total]
            rule = r.options.tie_break or "first"
            how = (f"the earliest in generation order wins (--tie-break {rule})" if rule == "first"
                   else f"kube-scheduler picks one at random; here drawn from seed {r.options.seed} (--tie-break {rule})")
            why = f"a tie: {', '.join(tied)} share the highest total score {total}; {how}"
        else:
            runner = f" (next: {others[0].name}, {others[0].total})" if others else ""
            why = f"the highest total score, {total}{runner}"
    line = f"chosen placement: {d.chosen}, {why}"
    if admitted is False:
        line += f"; but the gang was reverted later and none of its pods stayed placed ({outcome.reason or 'no reason recorded'})"
    lines.append(line)
    return lines


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
    console.print(f"[bold]{pod_key}[/bold]: " + (f"-> {outcome.node}" if outcome and outcome.node else f"not placed ({outcome.reason if outcome else '?'})"))
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
    console.print(f"  evaluated {tr.evaluated_nodes} nodes, {tr.feasible_nodes} feasible{where}", markup=False)
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
    if tr.top:
        plugins = sorted({p for row in tr.top for p in row.scores})
        t = Table(title="Top scored nodes (weighted)", title_justify="left")
        t.add_column("node")
        t.add_column("total", justify="right")
        for p in plugins:
            t.add_column(p, justify="right")
        for row in tr.top:
            t.add_row(row.node, str(row.total), *[str(row.scores.get(p, "")) for p in plugins])
        console.print(t)
    if len(tr.tie_set) > 1:
        console.print(f"  tie set: {_short(tr.tie_set)}")
    if placed:
        console.print(f"  chosen: {placed}", markup=False)
    elif tr.chosen:
        # never "chosen: <node>" for a pod that is not placed in the end
        what = ("the gang was rejected: no placement held it" if decision is not None and decision[1].chosen is None
                else "its gang's cycle was reverted")
        inside = f" in placement {domain}" if domain else ""
        _para(console, f"not placed: its cycle{inside} picked {tr.chosen}, but {what}, so nothing was kept")
    else:
        console.print("  no node chosen: no node fit the pod in its cycle", markup=False)


_CLASS_STYLE = {
    "identical": "green",
    "tie-break": "green",
    "equivalent": "green",
    "greedy-suboptimal": "yellow",
    "greedy-suboptimal-sometimes": "yellow",
    "model-mismatch": "bold red",
    "unproven": "magenta",
}

MAX_ROWS = 12
"""Default view: at most this many group rows; beyond, only the groups whose outcome differs."""


def _admitted(groups, attr: str) -> str:
    n = sum(1 for g in groups if getattr(g, attr))
    return f"{n}/{len(groups)}"


def _names(keys: list[str], n: int = 4) -> str:
    if not keys:
        return "none"
    shown, hidden = _cut(keys, n)
    return ", ".join(shown) + (f" (+{hidden})" if hidden else "")


def _use_brief(u) -> str:
    """``16 pods, 128 nvidia.com/gpu in block=su-3``: the GPUs when it has any, else cpu and memory."""
    gpus = {r: q for r, q in u.requests.items() if "gpu" in r}
    res = gpus or {r: q for r, q in u.requests.items() if r in ("cpu", "memory")}
    where = f" in {short_domain(u.domain)}" if u.domain else f" on {len(u.nodes)} nodes"
    return f"{u.pods} pods, " + ", ".join(f"{q} {r}" for r, q in res.items()) + where


def decisive_lines(d) -> list[str]:
    """The decisive step in (at most) three lines, for the summary."""
    s = d.decisive
    if s is None:
        return []
    adm = d.admission
    if s.kind == "admission" and s.pod is None:
        gained = adm.only_optimal if adm else []
        first = gained[0] if gained else None
        g = next((x for x in d.groups if x.group == first), None)
        return [
            "the difference is which groups get admitted: every greedy choice that counts is shared by an optimum",
            f"the optimum also admits {_names(gained)}",
            f"greedy rejected {first}: {short_reason(g.greedy_reason)}" if g and g.greedy_reason else (s.why or ""),
        ]
    if s.kind == "admission":
        u = adm.first_given_up if adm and adm.first_given_up and adm.first_given_up.group == s.group else None
        entity = s.group or s.pod
        if not s.group_outcome_differs:
            second = f"greedy reverted {entity}, and the optimum shown leaves it out too"
        else:
            second = f"the optimum gives up {entity}" + (f": {_use_brief(u)}" if u else ", which greedy admits")
        return [
            f"admission, not placement: no optimum keeps greedy choice #{s.step} {s.pod} -> {s.greedy_node}",
            second,
            f"to admit {_names(adm.only_optimal if adm else [], 3)}",
        ]
    first = f"greedy choice #{s.step}: {s.pod}" + (f" ({s.group})" if s.group else "") + f" -> {s.greedy_node}; no optimal placement shares it"
    second = f"the optimum puts it on {s.optimal_node}" if s.optimal_node else f"the optimum admits {s.group} too but leaves it unplaced"
    pe = s.placement
    if pe and pe.greedy is not None:
        second += f"; greedy chose {pe.greedy} over {pe.optimal}"
        if pe.misled_by:
            second += f" ({pe.misled_by})"
    elif isinstance(s.greedy_scores, NodeEvidence) and isinstance(s.optimal_scores, NodeEvidence):
        second += f" (greedy scored {s.greedy_node} {s.greedy_scores.total}, {s.optimal_node} {s.optimal_scores.total})"
    if not s.group_outcome_differs:
        third = s.why or ""
    elif s.failed_pod:
        third = f"then {s.failed_pod} failed: {short_reason(s.failed_reason)}"
    else:
        third = s.why or ""
    return [first, second, third]


def tie_note(d) -> str | None:
    """Whether the decisive greedy choice was a tie kube-scheduler breaks at random: equal top
    node scores (``selectHost`` picks one of them at random), or equal placement scores; with
    ``--samples K``, how often greedy admitted the step's group."""
    s = d.decisive
    if s is None or s.pod is None:
        return None
    cycle = d.greedy.greedy_trace.pods.get(s.pod) if d.greedy.engine == "greedy" else None
    note = None
    pe = s.placement
    infos = pe.placements if pe else {}
    g = infos.get(pe.greedy) if pe and pe.greedy is not None else None
    o = infos.get(pe.optimal) if pe and pe.optimal is not None else None
    g_total, o_total = (g.total if g else None), (o.total if o else None)
    if pe and pe.greedy is not None and g_total is not None and g_total == o_total:
        note = f"a tie between placements {pe.greedy} and {pe.optimal} (total {g_total} each)"
    elif cycle is not None and cycle.tie_count > 1 and s.optimal_node and s.optimal_node in cycle.tie_set:
        note = f"a tie among {cycle.tie_count} nodes with the top score, the optimum's node among them"
    if note is None:
        return None
    note += ": kube-scheduler breaks it at random"
    if d.samples is not None and s.group in d.samples.admitted:
        note += f"; {s.group} admitted in {d.samples.admitted[s.group]} of {d.samples.runs} runs"
    else:
        note += "; diff --samples K gives the odds"
    return note


def chance_lines(r: Result) -> list[str]:
    """Where a greedy run drew what upstream leaves to chance: the pod order of v1.36 gangs (a Go
    map), and node ties under ``--tie-break random``; ``diff --samples K`` gives the odds."""
    trace = r.greedy_trace if r.engine == "greedy" else None
    if trace is None:
        return []
    drawn = sorted(k for k, g in trace.groups.items() if g.member_order is not None)
    out = []
    if drawn:
        shown = _names(drawn, 3)
        out.append(f"pod order of {shown} drawn (v{r.options.kube_version}: Go map order; --seed {r.options.seed or 0}); odds: diff --samples K")
    if r.options.tie_break == "random" and any(c.tie_count > 1 for c in trace.pods.values()):
        out.append(f"node ties drawn (--tie-break random, --seed {r.options.seed or 0}); odds: diff --samples K")
    return out


def sample_lines(samples, *, wide: bool = False, proven: bool = True) -> list[str]:
    """``--samples K``: how often greedy reaches the optimum (``proven`` False: the best
    placement found, which is not proven optimal), then each group's share of runs."""
    if samples is None:
        return []
    head = f"{samples.runs} greedy runs (seeds {samples.seeds[0]}..{samples.seeds[1]}, random ties, v{samples.kube_version})"
    if samples.reaches_target is not None:
        target = "optimum" if proven else "best placement found (unproven)"
        head += f": {target} in {samples.reaches_target}/{samples.runs}"
    shares = [f"{k} {n}/{samples.runs}" for k, n in sorted(samples.admitted.items())]
    lines = [head]
    if shares:
        lines.append("admitted: " + (", ".join(shares) if wide else _names(shares, 6)))
    return lines


def proof_lines(proof) -> list[str]:
    """What the exact engine proved, for the table: the proven and open compared tiers, and for an
    open one what it means and what to do (``OptimalProof.advice``)."""
    if proof is None:
        return []
    compared = [t for t in proof.tiers if t.compared]
    proven = [t.tier for t in compared if t.proven]
    if proof.proven:
        return [f"proven: {', '.join(proven) or 'nothing to compare'}"]
    head = (f"proven: {', '.join(proven)}; open: " if proven else "open: ") + ", ".join(proof.open_tiers)
    stop = {"work-limit": "stopped by the work limit", "wall-clock": "stopped by the wall-clock cap: another run may differ",
            "no-solution": "no placement found"}.get(proof.stopped_by)
    if stop:
        head += f" ({stop})"
    return [head] + ([proof.advice] if proof.advice else [])


def render_diff(console: Console, d, *, wide: bool = False) -> None:
    """A people's view of a Diff (gangplan.solver.diff.Diff): the summary first, then details."""
    style = _CLASS_STYLE.get(d.classification, "white")
    gap = "" if d.gap is None else f", gap {d.gap:.2%}"
    console.print(Text(d.snapshot, style="bold"), no_wrap=not wide, overflow="fold" if wide else "ellipsis")
    console.print(f"  verdict    [{style}]{d.classification}[/{style}] (optimum {d.optimal_status}{gap}, {d.seconds:.2f} s)")
    for i, text in enumerate(proof_lines(d.proof)):
        style = "" if d.proof.proven else "magenta"
        if i == 0:
            _line(console, "  proof      " + text, wide, style=style)
        else:  # the advice: wrapped, never cut
            console.print(Text(textwrap.fill(text, width=max(40, console.width), initial_indent=" " * 13,
                                             subsequent_indent=" " * 13, break_on_hyphens=False), style=style), soft_wrap=True)
    ga, oa = _admitted(d.groups, "greedy_admitted"), _admitted(d.groups, "optimal_admitted")
    singles = d.single_pods or []
    line = f"  admitted   greedy {ga} groups, optimal {oa}"
    if singles:
        line += f"; single pods placed: greedy {sum(1 for p in singles if p.greedy_node)}/{len(singles)}, optimal {sum(1 for p in singles if p.optimal_node)}/{len(singles)}"
    _line(console, line, wide)
    adm = d.admission
    if adm and (adm.only_greedy or adm.only_optimal):
        n = 50 if wide else 2
        _line(console, f"             only greedy: {_names(adm.only_greedy, n)}; only optimal: {_names(adm.only_optimal, n)}", wide)
    for i, text in enumerate(decisive_lines(d)):
        if text:
            _line(console, ("  decisive   " if i == 0 else "             ") + text, wide)
    tie = tie_note(d)
    if tie:  # issue 41: a random outcome is named in the summary (wrapped, never cut), not only in the details
        console.print(Text(textwrap.fill("the decisive choice was " + tie, width=max(40, console.width), initial_indent="  tie        ",
                                         subsequent_indent=" " * 13, break_on_hyphens=False), style="yellow"), soft_wrap=True)
    if d.samples is None:
        for text in chance_lines(d.greedy):
            _line(console, "  chance     " + text, wide)
    for i, text in enumerate(sample_lines(d.samples, wide=wide, proven=d.proof is None or d.proof.proven)):
        _line(console, ("  samples    " if i == 0 else "             ") + text, wide)
    for p in d.problems:
        _line(console, f"  problem    {p}", wide, style="red")

    _heading(console, "Objective", "(lexicographic, highest tier first)")
    t = _table()
    t.add_column("tier", no_wrap=True)
    t.add_column("greedy", justify="right")
    t.add_column("optimal", justify="right")
    proofs = {tp.tier: tp for tp in d.proof.tiers} if d.proof is not None else {}
    if proofs:
        t.add_column("bound", justify="right")
        t.add_column("proof")
    for k in d.optimal_objective:
        if k in d.greedy_objective:
            row = [escape(k), f"{d.greedy_objective[k]:g}", f"{d.optimal_objective[k]:g}"]
            if proofs:
                tp = proofs.get(k)
                bound = "-" if tp is None or tp.bound is None else f"{tp.bound:g}"
                row += [bound, Text("-" if tp is None else ("proven" if tp.proven else "open"),
                                    style="" if tp is None or tp.proven else "magenta")]
            t.add_row(*row)
    console.print(t)

    rows = d.groups
    hidden = 0
    if not wide and len(rows) > MAX_ROWS:
        shown = [g for g in rows if g.differs]
        hidden = len(rows) - len(shown)
        rows = shown
    if rows:
        _heading(console, "Groups", "whose outcome differs" if hidden else "")
        t = _table()
        _name_col(t, "group", (g.group for g in rows))
        t.add_column("min", justify="right", no_wrap=True)
        t.add_column("greedy", no_wrap=True)
        t.add_column("optimal", no_wrap=True)
        t.add_column("greedy reason")
        for g in rows:
            reason = "" if g.greedy_admitted else ((g.greedy_reason or "") if wide else short_reason(g.greedy_reason))
            t.add_row(escape(g.group), str(g.min_count), _outcome(g.greedy_admitted, g.greedy_placed, g.greedy_domain, wide),
                      _outcome(g.optimal_admitted, g.optimal_placed, g.optimal_domain, wide), _flex(reason, wide))
        console.print(t)
    if hidden:
        console.print(f"  (+{hidden} groups with the same outcome in both; -o wide lists every group)", style="dim")
    elif not wide and any(not g.greedy_admitted and len(g.greedy_reason or "") > len(short_reason(g.greedy_reason)) for g in rows):
        console.print("  (reasons shortened: -o wide for the full text)", style="dim")
    if singles:
        _heading(console, "Single pods")
        t = _table()
        _name_col(t, "pod", (p.pod for p in singles))
        t.add_column("greedy")
        t.add_column("optimal")
        for p in singles:
            gr = p.greedy_node or ("not placed: " + ((p.greedy_reason or "") if wide else short_reason(p.greedy_reason)))
            op = p.optimal_node or ("not placed: " + ((p.optimal_reason or "") if wide else short_reason(p.optimal_reason)))
            t.add_row(escape(p.pod), _flex(gr, wide), _flex(op, wide))
        console.print(t)
    eng = d.engines
    if eng and (eng.greedy.victims or eng.optimal.victims):
        console.print()
        for label, side in (("greedy", eng.greedy), ("optimal", eng.optimal)):
            pods = [p for u in side.victims for p in u.pods]
            prio = ", ".join(f"p={p}: {n}" for p, n in side.victims_by_priority.items())
            text = f"  victims {label}: {len(pods)} pod(s) in {len(side.victims)} unit(s)" + (f" ({prio})" if prio else "")
            text += f", {side.pdb_violations} PDB violation(s)" + (f", broken groups: {_names(side.broken_groups)}" if side.broken_groups else "")
            if wide and pods:
                text += ": " + ", ".join(pods)
            _line(console, text, wide)
    _render_decisive_details(console, d, wide)


def _render_decisive_details(console: Console, d, wide: bool) -> None:
    s = d.decisive
    if s is None:
        return
    _heading(console, "Decisive step", f"({s.probes} exact solves over {s.candidates} candidate choices, {s.skipped} skipped)")
    if s.unproven_probes:
        _para(console, f"{s.unproven_probes} probe(s) answered no without a proof: the true step may come later; "
                       "a larger --probe-time-limit decides them")
    if s.pod is not None:
        _para(console, f"greedy choice #{s.step}: pod {s.pod} -> {s.greedy_node}; no optimal placement shares it")
        if s.optimal_node:
            _para(console, f"the optimum puts {s.pod} on {s.optimal_node}")
        elif s.kind == "placement":
            _para(console, f"the optimum (agreeing with every earlier greedy choice) admits {s.group} but does not place {s.pod}")
        else:
            _para(console, f"the optimum (agreeing with every earlier greedy choice) does not place {s.pod}")
    tie = tie_note(d)
    if tie:
        _para(console, tie)
    _render_scores(console, s)
    pe = s.placement
    if pe:
        _para(console, f"placement: {pe.group} chose {pe.key}={pe.greedy} over {pe.optimal}"
              + (f", misled by {pe.misled_by}" if pe.misled_by else ""))
        for side, dom in (("greedy", pe.greedy), ("optimal", pe.optimal)):
            info = pe.placements.get(dom) if dom is not None else None
            if info:
                parts = ", ".join(f"{p} {v}" for p, v in info.scores.items())
                detail = f"total {info.total} = {parts}" if parts else f"{info.status}: {info.reason or 'not scored'}"
                _para(console, f"{side}'s domain {dom} ({info.nodes} nodes): {detail}", indent=4)
    if s.failed_pod:
        reason = (s.failed_reason or "") if wide else short_reason(s.failed_reason)
        _para(console, f"then {s.failed_pod} failed: {reason}")
    pre = s.preemption
    if pre:
        def units(us) -> str:
            if not us:
                return "nobody"
            pods = sum(len(u.pods) for u in us)
            names = [u.name + (f" ({len(u.pods)} pods, all)" if len(u.pods) > 1 else "") for u in us]
            kept, hidden = _cut(names, 3)
            shown = ", ".join(kept) + (f", +{hidden} more" if hidden else "")
            prios = "/".join(str(p) for p in sorted({u.priority for u in us}, reverse=True))
            return f"{pods} pod(s) at priority {prios} ({shown})"
        _para(console, f"preemption for {pre.entity} ({pre.path}): greedy evicts {units(pre.victims)} for {_short(pre.nodes) or '-'}")
        _para(console, f"the optimum evicts {units(pre.optimal_victims)}" + (f" and uses {_short(pre.optimal_nodes)}" if pre.optimal_nodes else ""), indent=4)
        _para(console, f"greedy's criterion: {pre.criterion}", indent=4)
    if s.why:
        _para(console, f"why: {s.why}")


def _render_scores(console: Console, s) -> None:
    """The per-plugin scores greedy gave its node and the optimum's node at the decisive step, one
    row per plugin (so the table stays narrow whatever the plugin names)."""
    sides = []
    for label, node, sc in (("greedy", s.greedy_node, s.greedy_scores), ("optimum", s.optimal_node, s.optimal_scores)):
        if not node or not isinstance(sc, NodeEvidence):
            continue
        if not sc.feasible:
            _para(console, f"{label}'s node {node}: not feasible for greedy at that step ({sc.reason})")
            continue
        sides.append((f"{node} ({label})", sc.scores, sc.total))
    if not sides:
        return
    t = _table()
    t.add_column("plugin score at that step", no_wrap=True)
    for head, _, _ in sides:
        t.add_column(head, justify="right", no_wrap=True)
    plugins = list(dict.fromkeys(p for _, sc, _ in sides for p in sc))
    for plugin in plugins:
        t.add_row(plugin, *[str(sc.get(plugin, "")) for _, sc, _ in sides])
    t.add_row("total", *[str(total) for _, _, total in sides])
    console.print(Padding(t, (0, 0, 0, 2), expand=False))


def render_whatif(console: Console, rows, *, title: str, wide: bool = False) -> None:
    """``gangplan whatif``: one row per variant (``WhatIfRowDocument``), the snapshot first."""
    console.print(Text(f"{title}: what if", style="bold"), no_wrap=not wide, overflow="fold" if wide else "ellipsis")
    t = _table()
    _name_col(t, "variant", (r.variant for r in rows))
    for col in ("greedy", "optimal", "idle GPUs", "classification", "decisive"):
        t.add_column(col, no_wrap=True, justify="right" if col in ("greedy", "optimal", "idle GPUs") else "left")
    for r in rows:
        t.add_row(r.variant, f"{r.greedy_admitted}/{r.groups}", f"{r.optimal_admitted}/{r.groups}",
                  f"{r.greedy_idle_gpus} / {r.optimal_idle_gpus}", r.classification, r.decisive or "-")
    console.print(t)
    console.print("  groups admitted of those with pending pods; idle GPUs after greedy / after the optimum", style="dim")
    for r in rows:
        if r.advice:
            _line(console, f"  {r.variant}: {r.advice}", wide, style="magenta")
        for note in r.notes:
            _line(console, f"  {r.variant}: {note}", wide)


def render_suite(console: Console, rows, *, title: str = "suite", wide: bool = False) -> None:
    console.print(Text.assemble((title, "bold"), ": greedy (kube-scheduler) vs optimal (CP-SAT), groups admitted per engine"))
    t = _table()
    t.add_column("scenario", no_wrap=True)
    t.add_column("greedy", no_wrap=True, justify="right")
    t.add_column("optimal", no_wrap=True, justify="right")
    t.add_column("classification", no_wrap=True)
    t.add_column("differs in", no_wrap=True)
    t.add_column("expectations")
    t.add_column("s", justify="right", no_wrap=True)
    for r in rows:
        if r.error:
            t.add_row(escape(r.scenario), "-", "-", Text("error", style="red"), "-", _flex(r.error, wide), f"{r.seconds:.2f}")
            continue
        d = r.diff
        style = _CLASS_STYLE.get(d.classification, "white")
        if r.expectations == 0:
            exp = Text("-")
        elif not r.failures:
            exp = Text(f"{r.expectations} met", style="green")
        else:
            exp = Text("; ".join(r.failures), style="red", no_wrap=not wide, overflow="fold" if wide else "ellipsis")
        t.add_row(escape(r.scenario), _admitted(d.groups, "greedy_admitted"), _admitted(d.groups, "optimal_admitted"),
                  Text(d.classification, style=style), escape(differing_tier(d) or "-"), exp, f"{r.seconds:.2f}")
    console.print(t)
    console.print(suite_summary(rows), style="dim", soft_wrap=True, markup=False, highlight=False)
    for r in rows:
        if r.diff is not None and r.diff.proof is not None and r.diff.proof.advice and r.diff.classification == "unproven":
            _line(console, f"  {r.scenario}: {r.diff.proof.advice}", wide, style="magenta")


def differing_tier(d) -> str | None:
    """The highest objective tier on which greedy and the optimum differ (the suite's "differs in"
    column: a greedy-suboptimal row with equal group counts names the tier that decides it)."""
    return next((k for k, v in d.optimal_objective.items() if k in d.greedy_objective and d.greedy_objective[k] != v), None)


def suite_summary(rows) -> str:
    """One line: scenarios per classification, the unproven ones counted apart from those proven
    to match the optimum."""
    from collections import Counter

    counts = Counter("error" if r.error else r.diff.classification for r in rows)
    proven = sum(counts.pop(c, 0) for c in ("identical", "tie-break", "equivalent"))
    parts = [f"{proven} proven to match the optimum"] + [f"{n} {c}" for c, n in sorted(counts.items())]
    failed = sum(1 for r in rows if r.failures)
    if failed:
        parts.append(f"{failed} with unmet expectations")
    return f"  {len(rows)} scenarios: " + ", ".join(parts)


def render_bench(console: Console, summary, db, classes: dict[str, int], statuses: dict[str, int], failed: list[dict]) -> None:
    """``gangplan bench``: what this run did, then outcomes and failures over the whole database."""
    from gangplan.bench.store import FAILED

    total = sum(statuses.values())
    console.print(f"[bold]{summary.suite}[/bold]: {summary.ran} snapshot(s) run now, {summary.skipped} already in the database, {summary.seconds:.1f} s; {db} holds {total}")
    t = Table(show_edge=False)
    t.add_column("outcome (whole database)")
    t.add_column("snapshots", justify="right")
    for name, n in sorted(classes.items()):
        t.add_row(name, str(n))
    for name in FAILED:
        if statuses.get(name):
            t.add_row(f"[red]{name}[/red]", str(statuses[name]))
    console.print(t)
    if failed:
        console.print(f"[red]{len(failed)} snapshot(s) failed[/red] (run them again with --retry-failed):")
        for f in failed:
            console.print(Text.assemble("  ", (f["task_id"], "bold"), f"  {f['status']}: ", f["error"] or "no message"), soft_wrap=True)
    console.print(f"results: {db}  (gangplan report {db} --out report)")
