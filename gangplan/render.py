"""Rich rendering for people. Every view here has a JSON twin produced by the library."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gangplan.models.cluster import Cluster
from gangplan.models.result import Result


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
    for line in s.get("warnings", ()):
        console.print(f"  [yellow]not modelled[/yellow]: {escape(line)}")
    p = s["profile"]
    console.print(
        f"  profile {p['schedulerName']} ({p['source']}): {p['fitStrategy']} {p['fitResources']}, "
        f"percentageOfNodesToScore {p['percentageOfNodesToScore'] or 'adaptive'}"
    )

    t = Table(title="Node shapes", title_justify="left")
    t.add_column("nodes", justify="right")
    t.add_column("GPU model")
    t.add_column("allocatable")
    for shape in s["nodeShapes"][:15]:
        t.add_row(str(shape["count"]), shape["gpuModel"] or "-", ", ".join(f"{k}={v}" for k, v in shape["allocatable"].items()))
    if len(s["nodeShapes"]) > 15:
        t.add_row("...", f"{len(s['nodeShapes']) - 15} more shapes", "")
    console.print(t)

    t = Table(title="Resources", title_justify="left")
    for col in ("resource", "allocatable", "requested", "free"):
        t.add_column(col, justify="right" if col != "resource" else "left")
    for r, v in s["resources"].items():
        t.add_row(r, v["allocatable"], v["requested"], v["free"])
    console.print(t)

    topo = s["topology"]
    t = Table(title=f"Topology levels ({topo['source']})", title_justify="left")
    t.add_column("label")
    t.add_column("domains", justify="right")
    t.add_column("nodes without label", justify="right")
    t.add_column("free capacity per domain")
    for lv in topo["levels"]:
        free = lv.get("free") or {}
        cells = "; ".join(f"{d}: " + " ".join(f"{k}={v}" for k, v in f.items() if k in ("nodes", "cpu", "nvidia.com/gpu")) for d, f in list(free.items())[:8])
        if len(free) > 8:
            cells += f"; ... (+{len(free) - 8})"
        t.add_row(lv["label"], str(lv["domains"]), str(lv["nodesWithoutLabel"]), cells)
    console.print(t)

    t = Table(title="Pending groups", title_justify="left")
    for col in ("group", "policy", "minCount", "pods", "pending", "bound", "gated", "priority", "topology", "requests"):
        t.add_column(col)
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
        t.add_column("pod")
        t.add_column("why")
        for k, why in list(s["gated"].items())[:50]:
            t.add_row(k, why)
        if len(s["gated"]) > 50:
            t.add_row("...", f"{len(s['gated']) - 50} more")
        console.print(t)


def render_result(console: Console, r: Result, cluster: Cluster) -> None:
    head = f"[bold]{r.engine}[/bold] {r.status.value}"
    if r.gap is not None:
        head += f", gap {r.gap:.4%}"
    head += f", {r.wall_seconds:.3f} s"
    console.print(head)
    console.print("  objective: " + ", ".join(f"{k}={v:g}" for k, v in r.objective.items()), markup=False)
    if r.bound:
        console.print("  bound:     " + ", ".join(f"{k}={v:g}" for k, v in r.bound.items()), markup=False)
    t = Table(title="Groups", title_justify="left")
    for col in ("group", "outcome", "placed/minCount", "nodes used", "domain", "reason"):
        t.add_column(col)
    for key, g in r.groups.items():
        group_pods = cluster.groups.members(key)
        members = [p.key for p in group_pods]
        nodes = sorted({r.pods[k].node for k in members if k in r.pods and r.pods[k].node})
        nodes += sorted({p.node_name for p in group_pods if p.node_name} - set(nodes))
        t.add_row(
            key,
            "[green]admitted[/green]" if g.admitted else "[red]not admitted[/red]",
            f"{g.placed}/{g.min_count}",
            escape(_short(nodes)),
            escape(g.domain or "-"),
            escape(g.reason or ""),
        )
    console.print(t)
    singles = {k: o for k, o in r.pods.items() if cluster.pod_by_key[k].group_key is None}
    if singles:
        placed = sum(1 for o in singles.values() if o.node)
        console.print(f"  single pods: {placed}/{len(singles)} placed")
    if r.victims:
        console.print(f"  victims ({len(r.victims)}): {_short(r.victims)}")


def _short(items: list[str], n: int = 6) -> str:
    if len(items) <= n:
        return ", ".join(items)
    return ", ".join(items[:n]) + f", ... (+{len(items) - n})"


def render_trace(console: Console, r: Result, pod_key: str) -> None:
    """One pod's greedy trace: feasible nodes, rejections per plugin, top scores, the choice."""
    tr = r.trace.get("pods", {}).get(pod_key)
    outcome = r.pods.get(pod_key)
    console.print(f"[bold]{pod_key}[/bold]: " + (f"-> {outcome.node}" if outcome and outcome.node else f"not placed ({outcome.reason if outcome else '?'})"))
    if tr is None:
        console.print("  (not evaluated by the scheduler: gated, or its group failed validation)")
        return
    console.print(f"  evaluated {tr.get('evaluatedNodes', '?')} nodes, {tr.get('feasibleNodes', '?')} feasible")
    for plugin, reasons in (tr.get("rejections") or {}).items():
        for reason, n in reasons.items():
            console.print(f"  rejected by {plugin}: {n} x {reason}", markup=False)
    if tr.get("fitError"):
        console.print(f"  FitError: {tr['fitError']}", markup=False)
    top = tr.get("top") or []
    if top:
        plugins = sorted({p for row in top for p in row.get("scores", {})})
        t = Table(title="Top scored nodes (weighted)", title_justify="left")
        t.add_column("node")
        t.add_column("total", justify="right")
        for p in plugins:
            t.add_column(p, justify="right")
        for row in top:
            t.add_row(row["node"], str(row["total"]), *[str(row.get("scores", {}).get(p, "")) for p in plugins])
        console.print(t)
    if tr.get("tieSet") and len(tr["tieSet"]) > 1:
        console.print(f"  tie set: {_short(tr['tieSet'])}")
    console.print(f"  chosen: {tr.get('chosen')}")


_CLASS_STYLE = {
    "identical": "green",
    "tie-break": "green",
    "equivalent": "green",
    "greedy-suboptimal": "yellow",
    "model-mismatch": "bold red",
}


def _admitted(groups, attr: str) -> str:
    n = sum(1 for g in groups if getattr(g, attr))
    return f"{n}/{len(groups)}"


def render_diff(console: Console, d) -> None:
    """A people's view of a Diff (gangplan.solver.diff.Diff)."""
    style = _CLASS_STYLE.get(d.classification, "white")
    gap = "" if d.gap is None else f", gap {d.gap:.4%}"
    console.print(f"[bold]{d.snapshot}[/bold]: [{style}]{d.classification}[/{style}] (optimum {d.optimal_status}{gap}, {d.seconds:.2f} s)")
    t = Table(title="Objective (lexicographic, highest tier first)", title_justify="left")
    t.add_column("tier")
    t.add_column("greedy", justify="right")
    t.add_column("optimal", justify="right")
    for k in d.optimal_objective:
        if k in d.greedy_objective:
            t.add_row(escape(k), f"{d.greedy_objective[k]:g}", f"{d.optimal_objective[k]:g}")
    console.print(t)
    t = Table(title="Groups", title_justify="left")
    for col in ("group", "minCount", "greedy", "optimal", "greedy reason"):
        t.add_column(col)
    for g in d.groups:
        gr = f"{'[green]admitted[/green]' if g.greedy_admitted else '[red]rejected[/red]'} {g.greedy_placed}" + (f" {g.greedy_domain}" if g.greedy_domain else "")
        op = f"{'[green]admitted[/green]' if g.optimal_admitted else '[red]rejected[/red]'} {g.optimal_placed}" + (f" {g.optimal_domain}" if g.optimal_domain else "")
        t.add_row(escape(g.group), str(g.min_count), gr, op, escape("" if g.greedy_admitted else (g.greedy_reason or "")))
    console.print(t)
    s = d.decisive
    if s is not None:
        console.print("[bold]Decisive step[/bold]")
        console.print(
            f"  greedy choice #{s.step}: pod {s.pod} -> {s.greedy_node}; no optimal placement shares it "
            f"(found by fixing greedy prefixes in the exact model, {s.probes} solves)",
            markup=False,
        )
        if s.optimal_node:
            console.print(f"  the optimum puts {s.pod} on {s.optimal_node}", markup=False)
        for label, node, sc in (("greedy's node", s.greedy_node, s.greedy_scores), ("optimum's node", s.optimal_node, s.optimal_scores)):
            if node and sc:
                if not sc.get("feasible", True):
                    console.print(f"  {label} {node}: not feasible for greedy at that step ({sc.get('reason')})", markup=False)
                    continue
                parts = ", ".join(f"{p} {v}" for p, v in (sc.get("scores") or {}).items())
                console.print(f"  {label} {node}: total {sc.get('total')} = {parts}", markup=False)
        pe = s.placement
        if pe:
            console.print(
                f"  placement: {pe.get('group')} chose {pe.get('key')}={pe.get('greedy')} over {pe.get('optimal')}"
                + (f", misled by {pe['misledBy']}" if pe.get("misledBy") else ""),
                markup=False,
            )
            for side in ("greedy", "optimal"):
                dom = pe.get(side)
                info = (pe.get("placements") or {}).get(dom)
                if info:
                    parts = ", ".join(f"{p} {v}" for p, v in (info.get("scores") or {}).items())
                    detail = f"total {info.get('total')} = {parts}" if parts else f"{info.get('status')}: {info.get('reason') or 'not scored'}"
                    console.print(f"    {side}'s domain {dom} ({info.get('nodes')} nodes): {detail}", markup=False)
        if s.failed_pod:
            console.print(f"  then {s.failed_pod} failed: {s.failed_reason}", markup=False)
    for p in d.problems:
        console.print(f"  [red]problem[/red]: {p}")


def render_suite(console: Console, rows) -> None:
    t = Table(title="Showcase suite: greedy (kube-scheduler) vs optimal (CP-SAT)", title_justify="left")
    for col in ("scenario", "greedy admitted", "optimal admitted", "classification", "expectations", "time s"):
        t.add_column(col, justify="right" if col in ("time s",) else "left")
    for r in rows:
        if r.error:
            t.add_row(escape(r.scenario), "-", "-", "[red]error[/red]", escape(r.error), f"{r.seconds:.2f}")
            continue
        d = r.diff
        style = _CLASS_STYLE.get(d.classification, "white")
        exp = "-" if r.expectations == 0 else (f"[green]{r.expectations} met[/green]" if not r.failures else "[red]" + escape("; ".join(r.failures)) + "[/red]")
        t.add_row(escape(r.scenario), _admitted(d.groups, "greedy_admitted"), _admitted(d.groups, "optimal_admitted"), f"[{style}]{d.classification}[/{style}]", exp, f"{r.seconds:.2f}")
    console.print(t)
