"""Rich rendering for people. Every view here has a JSON twin produced by the library.

The views live by what they show: this module the snapshot summary (``inspect``), one engine's
Result (``solve``) and the bench table; :mod:`gangplan.render_trace` one pod's cycle (``--explain``,
``why``); :mod:`gangplan.render_diff` the diff, the suite and what-if rows; and
:mod:`gangplan.render_text` the cells and lines they share. Every name is importable from here."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from gangplan.models.cluster import Cluster
from gangplan.models.documents import (
    Fragmentation,
    FragmentationLevel,
    GangShapeFit,
    InspectDocument,
    KubeVersionSummary,
    NodeShape,
    PendingGroup,
    ResourceTotals,
    TopologySummary,
)
from gangplan.models.result import Result
from gangplan.models.well_known import GPU
from gangplan.render_diff import (
    MAX_ROWS,
    decisive_lines,
    differing_tier,
    proof_lines,
    render_diff,
    render_suite,
    render_whatif,
    sample_lines,
    suite_summary,
    tie_note,
)
from gangplan.render_text import _cut as _cut
from gangplan.render_text import (
    _flex,
    _heading,
    _line,
    _name_col,
    _outcome,
    _table,
    chance_lines,
    short_domain,
    short_reason,
    with_blockers,
)
from gangplan.render_text import _names as _names
from gangplan.render_text import _short as _short
from gangplan.render_trace import (
    explain_context,
    placement_decision_of,
    placement_lines,
    render_trace,
)

COUNTS_LINE = (
    "  {nodes} nodes ({unschedulable_nodes} unschedulable, {tainted_nodes} tainted), {bound_pods} bound pods, "
    "{pending_pods} pending pods ({gated_pods} gated), {pod_groups} PodGroups, {composite_pod_groups} CompositePodGroups, "
    "{priority_classes} PriorityClasses, {pod_disruption_budgets} PDBs"
)
"""``inspect``'s counts line, filled from :class:`~gangplan.models.documents.Counts` by field name."""


def render_summary(console: Console, s: InspectDocument | dict[str, Any]) -> None:
    """``gangplan inspect``: the summary (:func:`gangplan.summary.inspect_summary`; its
    ``inspect --json`` dict is read back into the record), then its tables."""
    if isinstance(s, dict):
        s = InspectDocument.model_validate(s)
    _summary_head(console, s)
    _summary_kube_version(console, s.kube_version)
    console.print(_node_shapes_table(s.node_shapes))
    console.print(_resources_table(s.resources))
    console.print(_topology_table(s.topology))
    console.print(_pending_groups_table(s.pending_groups))
    console.print(f"  single pending pods (no group): {s.single_pending_pods}")
    if s.gated:
        console.print(_gated_table(s.gated))
    if s.fragmentation is not None:
        _fragmentation(console, s.fragmentation)
    if s.kueue is not None:
        _kueue_summary(console, s.kueue)


def _kueue_summary(console: Console, k) -> None:
    """Kueue's queues and quota (``inspect``)."""
    from gangplan.predicates.quota import format_amount

    _heading(console, "Kueue", f"(v{k.version} reproduced)")
    t = _table()
    for col in ("ClusterQueue", "strategy", "admitted", "pending", "LocalQueues"):
        t.add_column(
            col,
            no_wrap=col != "LocalQueues",
            justify="right" if col in ("admitted", "pending") else "left",
        )
    for q in k.queues:
        t.add_row(
            q.cluster_queue,
            q.strategy,
            str(q.admitted),
            str(q.pending),
            ", ".join(q.local_queues) or "-",
        )
    console.print(t)
    t = _table()
    for col in (
        "ClusterQueue",
        "cohort",
        "flavor",
        "resource",
        "nominal",
        "borrow",
        "used",
        "available",
    ):
        t.add_column(
            col,
            no_wrap=True,
            justify="right" if col in ("nominal", "borrow", "used", "available") else "left",
        )
    for r in k.quota:
        t.add_row(
            r.cluster_queue,
            r.cohort or "-",
            r.flavor,
            r.resource,
            format_amount(r.resource, r.nominal),
            "-" if r.borrowing_limit is None else format_amount(r.resource, r.borrowing_limit),
            format_amount(r.resource, r.used),
            format_amount(r.resource, r.available),
        )
    console.print(t)


def _summary_head(console: Console, s: InspectDocument) -> None:
    """Sources, counts, skipped kinds, warnings and the scheduler profile."""
    from gangplan.io.schema import is_unknown_warning

    console.print(f"[bold]Snapshot[/bold] {', '.join(s.sources)}")
    console.print(COUNTS_LINE.format_map(dict(s.counts)))
    if s.skipped_kinds:
        console.print(
            "  skipped kinds: " + ", ".join(f"{k} x{n}" for k, n in s.skipped_kinds.items()),
            markup=False,
        )
    for line in s.warnings:
        label = (
            "warning" if is_unknown_warning(line) else "not modelled"
        )  # unknown fields: docs/validation.md
        console.print(f"  [yellow]{label}[/yellow]: {escape(line)}")
    p = s.profile
    console.print(
        f"  profile {p.scheduler_name} ({p.source}): {p.fit_strategy} {p.fit_resources}, "
        f"percentageOfNodesToScore {p.percentage_of_nodes_to_score or 'adaptive'}"
    )


def _summary_kube_version(console: Console, kv: KubeVersionSummary | None) -> None:
    """The version reproduced, the kubelets' and the apiVersions' suggestions, what is not served."""
    if kv is None:
        return
    kubelets = (
        ", ".join(f"v{m} x{n}" for m, n in kv.kubelets.items()) or "no kubeletVersion on the Nodes"
    )
    hint = f"suggested v{kv.suggested}" if kv.suggested else "no version suggested"
    flag = (
        ""
        if kv.suggested in (None, kv.used)
        else f"  [yellow](run with --kube-version {kv.suggested})[/yellow]"
    )
    console.print(
        f"  kube-scheduler v{kv.used} reproduced; kubelets: {escape(kubelets)}, {hint}{flag}"
    )
    if kv.api_suggested and kv.api_suggested != kv.used:
        console.print(f"  the scheduling objects' apiVersions suggest v{kv.api_suggested}")
    for line in kv.not_served:
        console.print(f"  [yellow]not served by v{kv.used}[/yellow]: {escape(line)}")


def _node_shapes_table(node_shapes: list[NodeShape]) -> Table:
    t = Table(title="Node shapes", title_justify="left")
    t.add_column("nodes", justify="right")
    t.add_column("GPU model")
    t.add_column("allocatable")
    shapes, hidden = _cut(node_shapes, 15)
    for shape in shapes:
        t.add_row(
            str(shape.count),
            shape.gpu_model or "-",
            ", ".join(f"{k}={v}" for k, v in shape.allocatable.items()),
        )
    if hidden:
        t.add_row("...", f"{hidden} more shapes", "")
    return t


def _resources_table(resources: dict[str, ResourceTotals]) -> Table:
    t = Table(title="Resources", title_justify="left")
    for col in ("resource", "allocatable", "requested", "free"):
        t.add_column(col, justify="right" if col != "resource" else "left")
    for r, v in resources.items():
        t.add_row(r, v.allocatable, v.requested, v.free)
    return t


def _topology_table(topo: TopologySummary) -> Table:
    t = Table(title=f"Topology levels ({topo.source})", title_justify="left")
    # Label keys and domain (node) names fold onto more lines rather than being cut (issue 41);
    # one domain a line.
    t.add_column("label", overflow="fold")
    t.add_column("domains", justify="right")
    t.add_column("nodes without label", justify="right")
    t.add_column("free capacity per domain", overflow="fold")
    for lv in topo.levels:
        shown, hidden = _cut((lv.free or {}).items(), 8)
        cells = "\n".join(
            f"{d}: " + " ".join(f"{k}={v}" for k, v in f.items() if k in ("nodes", "cpu", GPU))
            for d, f in shown
        )
        if hidden:
            cells += f"\n... (+{hidden})"
        t.add_row(lv.label, str(lv.domains), str(lv.nodes_without_label), cells)
    return t


DOMAINS_SHOWN = 6
"""Domains per level ``inspect`` lists (the most free GPUs first); a line sums up the rest."""


def _g(x: float) -> str:
    """GPUs as a person reads them: whole numbers without decimals."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _fragmentation(console: Console, f: Fragmentation) -> None:
    """``inspect``'s "how fragmented is the cluster": the totals, the pending mix and the FGD
    measure against it, GPUs per domain, the largest gang of each pending shape."""
    if not f.gpus:
        console.print(f"[bold]GPU fragmentation[/bold]: no node lists {GPU}")
        if f.gangs:
            console.print(_gangs_table(f))
        return
    console.print(
        f"[bold]GPU fragmentation[/bold] ({GPU}): {f.gpus} allocatable, {f.free} free, "
        f"{f.free_on_idle_nodes} of them on {f.idle_nodes} idle nodes (every GPU free)"
    )
    if f.mix:
        shown, hidden = _cut(f.mix, 5)
        parts = [
            f"{m.pods} x {{cpu {m.cpu}, {m.gpus} GPU"
            + (f" of {m.gpu_milli}m" if m.gpus and m.gpu_milli != 1000 else "")
            + (f" {'/'.join(m.models)}" if m.models else "")
            + f"}} ({100 * m.share:.3g} %)"
            for m in shown
        ]
        console.print(
            "  pending mix: " + ", ".join(parts) + (f", ... (+{hidden} shapes)" if hidden else ""),
            markup=False,
        )
    if f.fgd is not None:
        d = f.fgd
        console.print(
            f"  FGD against the mix: fragment {_g(d.fragment_gpus)} GPUs "
            f"({d.fragmentation_rate:g} % of the {_g(d.idle_gpus)} idle, {d.fragment_share:g} % "
            f"of all), stranded {_g(d.stranded_gpus)} GPUs"
        )
    else:
        console.print("  FGD: no pending pod, no mix to measure against")
    for lv in f.levels:
        console.print(_domains_table(lv))
    if f.gangs:
        console.print(_gangs_table(f))


def _domains_table(lv: FragmentationLevel) -> Table:
    t = Table(
        title=f"GPUs per {lv.label} ({len(lv.domains)} domain"
        + ("s, most free first)" if len(lv.domains) != 1 else ")"),
        title_justify="left",
    )
    t.add_column("domain", overflow="fold")
    for col in ("nodes", "GPUs", "free", "free on idle nodes", "fragment", "stranded"):
        t.add_column(col, justify="right")
    shown, hidden = _cut(lv.domains, DOMAINS_SHOWN)
    for d in shown:
        t.add_row(
            d.domain,
            str(d.nodes),
            str(d.gpus),
            str(d.free),
            f"{d.free_on_idle_nodes} ({d.idle_nodes} nodes)",
            _or_dash(None if d.fragment_gpus is None else _g(d.fragment_gpus)),
            _or_dash(None if d.stranded_gpus is None else _g(d.stranded_gpus)),
        )
    if hidden:
        rest = lv.domains[len(shown) :]
        free = sorted(d.free for d in rest)
        t.add_row(
            f"... {hidden} more",
            str(sum(d.nodes for d in rest)),
            str(sum(d.gpus for d in rest)),
            f"{free[0]}..{free[-1]}",
            f"{sum(d.free_on_idle_nodes for d in rest)} ({sum(d.idle_nodes for d in rest)} nodes)",
            _sum_or_dash([d.fragment_gpus for d in rest]),
            _sum_or_dash([d.stranded_gpus for d in rest]),
        )
    if lv.nodes_without_label:
        t.add_row(f"(no label: {lv.nodes_without_label} nodes)", "", "", "", "", "", "")
    return t


def _sum_or_dash(values: list[float | None]) -> str:
    return "-" if any(v is None for v in values) else _g(round(sum(values), 3))  # type: ignore[arg-type]


def _fits(g: GangShapeFit, fit: bool) -> str:
    """Whether a gang of the shape fits now, by what is known."""
    if g.bound < g.pods:
        return "no"
    if not fit or g.note or g.greedy is None or g.exact is None:
        return "?"
    if g.greedy >= g.pods:
        return "yes"
    if g.exact >= g.pods:
        return "optimum only"
    return "no" if g.proven else "not found"


def _gangs_table(f: Fragmentation) -> Table:
    title = "Largest gang of each pending shape that fits now" + (
        "" if f.fit else " (bound: resources alone; --fit runs the engines)"
    )
    t = Table(title=title, title_justify="left")
    t.add_column("gang", overflow="fold")
    t.add_column("topology", overflow="fold")
    t.add_column("groups", justify="right")
    t.add_column("bound", justify="right")
    if f.fit:
        t.add_column("greedy", justify="right")
        t.add_column("exact", justify="right")
    t.add_column("fits")
    for g in f.gangs:
        req = ", ".join(f"{k}: {v}" for k, v in g.request.items() if k in ("cpu", GPU))
        row = [f"{g.pods} x {{{req}}}", g.topology_key or "-", str(len(g.groups)), str(g.bound)]
        if f.fit:
            if g.note:
                row += [g.note, ""]
            else:
                row += [
                    _or_dash(g.greedy),
                    _or_dash(g.exact) + (" proven" if g.proven else " (not proven)"),
                ]
        t.add_row(*row, _fits(g, f.fit))
    return t


def _or_dash(value: Any) -> str:
    return str(value if value is not None else "-")


def _pending_groups_table(groups: list[PendingGroup]) -> Table:
    t = Table(title="Pending groups", title_justify="left")
    _name_col(t, "group", (g.group for g in groups))
    for col in (
        "policy",
        "minCount",
        "pods",
        "pending",
        "bound",
        "gated",
        "priority",
        "topology",
        "requests",
    ):
        t.add_column(col, overflow="fold")
    for g in groups:
        t.add_row(
            g.group,
            g.policy or "[red]missing[/red]",
            _or_dash(g.min_count),
            str(g.pods),
            str(g.pending),
            str(g.bound),
            str(g.gated),
            _or_dash(g.priority),
            g.topology_key or "-",
            g.requests,
        )
    return t


def _gated_table(gated_pods: dict[str, str]) -> Table:
    t = Table(title="Gated pods", title_justify="left")
    gated, hidden = _cut(gated_pods.items(), 50)
    _name_col(t, "pod", [k for k, _ in gated])
    t.add_column("why")
    for k, why in gated:
        t.add_row(k, why)
    if hidden:
        t.add_row("...", f"{hidden} more")
    return t


def render_result(console: Console, r: Result, cluster: Cluster, *, wide: bool = False) -> None:
    """One engine's Result: summary line first, then the groups, the single pods and the victims."""
    singles = {k: o for k, o in r.pods.items() if cluster.pod_by_key[k].group_key is None}
    _result_head(console, r, singles)
    if r.groups:
        _result_groups(console, r, cluster, wide)
    if r.composite_groups:
        _result_composite_groups(console, r)
    if singles:
        _result_single_pods(console, singles, cluster, wide)
    if r.kueue is not None:
        from gangplan.render_kueue import render_kueue_outcome

        render_kueue_outcome(console, r.kueue, wide=wide)
    if r.victims:
        _line(
            console,
            f"  victims ({len(r.victims)}): "
            + (", ".join(r.victims) if wide else _short(r.victims)),
            wide,
        )
    if not wide and any(
        len(g.reason or "") > len(short_reason(g.reason)) for g in r.groups.values()
    ):
        console.print(
            "  (reasons shortened: -o wide for the full text, --explain POD for one pod's trace)",
            style="dim",
        )


def _result_head(console: Console, r: Result, singles: dict) -> None:
    """Engine, status, gap and time; groups admitted, single pods placed, victims; objective, bound, chance."""
    head = f"[bold]{r.engine}[/bold] {r.status.value}"
    if r.gap is not None:
        head += f", gap {r.gap:.4%}"
    head += f", {r.wall_seconds:.3f} s"
    console.print(head)
    admitted = sum(1 for g in r.groups.values() if g.admitted)
    summary = f"  admitted {admitted}/{len(r.groups)} groups"
    if singles:
        summary += (
            f", single pods {sum(1 for o in singles.values() if o.node)}/{len(singles)} placed"
        )
    summary += f", {len(r.victims)} victim(s)"
    console.print(summary, markup=False)
    console.print(
        "  objective: " + ", ".join(f"{k}={v:g}" for k, v in r.objective.items()), markup=False
    )
    if r.bound:
        console.print(
            "  bound:     " + ", ".join(f"{k}={v:g}" for k, v in r.bound.items()), markup=False
        )
    for line in chance_lines(r):
        console.print(f"  [yellow]chance[/yellow]: {escape(line)}")


def _group_nodes(r: Result, cluster: Cluster, key: str) -> list[str]:
    """The nodes a group's pods are on: those the Result places, then those bound and not evicted."""
    members = cluster.groups.members(key)
    nodes = sorted({r.pods[p.key].node for p in members if p.key in r.pods and r.pods[p.key].node})
    return nodes + sorted(
        {p.node_name for p in members if p.node_name and p.key not in r.victims} - set(nodes)
    )


def _result_groups(console: Console, r: Result, cluster: Cluster, wide: bool) -> None:
    _heading(console, "Groups")
    t = _table()
    _name_col(t, "group", r.groups)
    for col, kw in (
        ("outcome", {"no_wrap": True}),
        ("placed/min", {"no_wrap": True, "justify": "right"}),
        ("nodes", {"no_wrap": not wide}),
        ("reason", {}),
    ):
        t.add_column(col, **kw)
    for key, g in r.groups.items():
        nodes = _group_nodes(r, cluster, key)
        nodes_cell = ", ".join(nodes) if wide else (_short(nodes, 2) if nodes else "-")
        reason = (
            (g.reason or "") if wide else with_blockers(short_reason(g.reason), g.reason, cluster)
        )
        t.add_row(
            key,
            _outcome(g.admitted, g.placed, g.domain, wide),
            f"{g.placed}/{g.min_count}",
            nodes_cell,
            _flex(reason, wide),
        )
    console.print(t)


def _result_composite_groups(console: Console, r: Result) -> None:
    _heading(console, "Composite groups")
    t = _table()
    _name_col(
        t, "group", (k + ("" if c.root else " (child)") for k, c in r.composite_groups.items())
    )
    for col in ("outcome", "children/min", "pods placed"):
        t.add_column(col, no_wrap=True, justify="left" if col == "outcome" else "right")
    for key, c in r.composite_groups.items():
        outcome = Text(
            "admitted" if c.admitted else "rejected", style="green" if c.admitted else "red"
        )
        t.add_row(
            key + ("" if c.root else " (child)"),
            outcome,
            f"{c.groups_admitted}/{c.need} of {c.children}",
            str(c.placed),
        )
    console.print(t)


def _result_single_pods(console: Console, singles: dict, cluster: Cluster, wide: bool) -> None:
    _heading(console, "Single pods")
    t = _table()
    _name_col(t, "pod", singles)
    t.add_column("node", no_wrap=True)
    t.add_column("reason")
    for key, o in singles.items():
        reason = (
            (o.reason or "")
            if wide
            else with_blockers(short_reason(o.reason), o.reason, cluster, key)
        )
        t.add_row(
            key,
            (o.node or "-") + (" (nominated)" if o.nominated else ""),
            _flex("" if o.node else reason, wide),
        )
    console.print(t)


def render_bench(
    console: Console,
    summary,
    db,
    classes: dict[str, int],
    statuses: dict[str, int],
    failed: list[dict],
) -> None:
    """``gangplan bench``: what this run did, then outcomes and failures over the whole database."""
    from gangplan.bench.store import FAILED

    total = sum(statuses.values())
    console.print(
        f"[bold]{summary.suite}[/bold]: {summary.ran} snapshot(s) run now, {summary.skipped} already in the database, {summary.seconds:.1f} s; {db} holds {total}"
    )
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
        console.print(
            f"[red]{len(failed)} snapshot(s) failed[/red] (run them again with --retry-failed):"
        )
        for f in failed:
            console.print(
                Text.assemble(
                    "  ", (f["task_id"], "bold"), f"  {f['status']}: ", f["error"] or "no message"
                ),
                soft_wrap=True,
            )
    console.print(f"results: {db}  (gangplan report {db} --out report)")


__all__ = [
    "MAX_ROWS",
    "chance_lines",
    "decisive_lines",
    "differing_tier",
    "explain_context",
    "placement_decision_of",
    "placement_lines",
    "proof_lines",
    "render_bench",
    "render_diff",
    "render_result",
    "render_suite",
    "render_summary",
    "render_trace",
    "render_whatif",
    "sample_lines",
    "short_domain",
    "short_reason",
    "suite_summary",
    "tie_note",
    "with_blockers",
]
