"""``gangplan diff``, ``diff --suite`` and ``whatif`` for people: the verdict, proof, admission,
decisive step, tie and samples lines first, then the objective, group, single-pod and victim
tables and the decisive step's details; a row per scenario or variant. ``diff --json`` (and the
suite and what-if JSON) are their twins."""

from __future__ import annotations

import textwrap

from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.text import Text

from gangplan.models.documents import NodeEvidence
from gangplan.render_kueue import render_kueue_diff
from gangplan.render_text import (
    _cut,
    _flex,
    _heading,
    _line,
    _name_col,
    _names,
    _outcome,
    _para,
    _short,
    _table,
    chance_lines,
    short_domain,
    short_reason,
)

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
    if s.kind == "admission" and s.pod is None:
        return _all_shared_lines(d, s)
    if s.kind == "admission":
        return _admission_step_lines(d.admission, s)
    return _placement_step_lines(s)


def _all_shared_lines(d, s) -> list[str]:
    """An admission step without a pod: every greedy choice that counts is shared by an optimum."""
    adm = d.admission
    gained = adm.only_optimal if adm else []
    first = gained[0] if gained else None
    g = next((x for x in d.groups if x.group == first), None)
    return [
        "the difference is which groups get admitted: every greedy choice that counts is shared by an optimum",
        f"the optimum also admits {_names(gained)}",
        f"greedy rejected {first}: {short_reason(g.greedy_reason)}"
        if g and g.greedy_reason
        else (s.why or ""),
    ]


def _admission_step_lines(adm, s) -> list[str]:
    """An admission step: no optimum keeps a greedy choice; what the optimum gives up, to admit what."""
    u = (
        adm.first_given_up
        if adm and adm.first_given_up and adm.first_given_up.group == s.group
        else None
    )
    entity = s.group or s.pod
    if not s.group_outcome_differs:
        second = f"greedy reverted {entity}, and the optimum shown leaves it out too"
    else:
        second = f"the optimum gives up {entity}" + (
            f": {_use_brief(u)}" if u else ", which greedy admits"
        )
    return [
        f"admission, not placement: no optimum keeps greedy choice #{s.step} {s.pod} -> {s.greedy_node}",
        second,
        f"to admit {_names(adm.only_optimal if adm else [], 3)}",
    ]


def _placement_step_lines(s) -> list[str]:
    """A placement step: the greedy choice, where the optimum puts the pod (and why greedy did not), what followed."""
    first = (
        f"greedy choice #{s.step}: {s.pod}"
        + (f" ({s.group})" if s.group else "")
        + f" -> {s.greedy_node}; no optimal placement shares it"
    )
    second = (
        f"the optimum puts it on {s.optimal_node}"
        if s.optimal_node
        else f"the optimum admits {s.group} too but leaves it unplaced"
    )
    pe = s.placement
    if pe and pe.greedy is not None:
        second += f"; greedy chose {pe.greedy} over {pe.optimal}"
        if pe.misled_by:
            second += f" ({pe.misled_by})"
    elif isinstance(s.greedy_scores, NodeEvidence) and isinstance(s.optimal_scores, NodeEvidence):
        second += f" (greedy scored {s.greedy_node} {s.greedy_scores.total}, {s.optimal_node} {s.optimal_scores.total})"
    if s.group_outcome_differs and s.failed_pod:
        third = f"then {s.failed_pod} failed: {short_reason(s.failed_reason)}"
    else:
        third = s.why or ""
    return [first, second, third]


def tie_note(d) -> str | None:
    """Whether the decisive greedy choice was a tie kube-scheduler breaks at random: equal top
    node scores (``selectHost`` picks one of them at random), equal placement scores, or a tie
    inside the workload-aware preemption that placed the step's group (its simulation chose the
    nodes, and so the victims); with ``--samples K``, how often greedy admitted the step's group
    (for the preemption's tie: how often it reached the optimum)."""
    s = d.decisive
    if s is None or s.pod is None:
        return None
    note = _placement_tie(s.placement) or _node_tie(d, s)
    inside = note is None and (note := _simulation_tie(d, s)) is not None
    if note is None:
        return None
    note += ": kube-scheduler breaks it at random"
    # a Diff's Samples says reaches_target, its document reaches_optimum
    reached = getattr(d.samples, "reaches_optimum", getattr(d.samples, "reaches_target", None))
    if inside and reached is not None:
        # the group is admitted either way; what the draw changes is the victims
        note += f"; greedy reaches the optimum in {reached} of {d.samples.runs} runs"
    elif d.samples is not None and s.group in d.samples.admitted:
        note += f"; {s.group} admitted in {d.samples.admitted[s.group]} of {d.samples.runs} runs"
    else:
        note += "; diff --samples K gives the odds"
    return note


def _placement_tie(pe) -> str | None:
    """Greedy's and the optimum's placements scored the same total."""
    if not pe or pe.greedy is None:
        return None
    g = pe.placements.get(pe.greedy)
    o = pe.placements.get(pe.optimal) if pe.optimal is not None else None
    g_total, o_total = (g.total if g else None), (o.total if o else None)
    if g_total is not None and g_total == o_total:
        return f"a tie between placements {pe.greedy} and {pe.optimal} (total {g_total} each)"
    return None


def _node_tie(d, s) -> str | None:
    """The optimum's node was in the greedy cycle's set of top-scored nodes."""
    cycle = d.greedy.greedy_trace.pods.get(s.pod) if d.greedy.engine == "greedy" else None
    if (
        cycle is not None
        and cycle.tie_count > 1
        and s.optimal_node
        and s.optimal_node in cycle.tie_set
    ):
        return (
            f"a tie among {cycle.tie_count} nodes with the top score, the optimum's node among them"
        )
    return None


def _simulation_tie(d, s) -> str | None:
    """The step's group was placed after a workload-aware preemption whose simulation broke a
    score tie (``trace.preemption[root].simulationTied``): which nodes it chose, and so which
    victims, was a draw (rule W of issue 39: the binding cycle after the victims' deletion is
    what the step scores, not the simulation)."""
    if d.greedy.engine != "greedy" or s.group is None:
        return None
    for root, pre in sorted(d.greedy.greedy_trace.preemption.items()):
        if (
            getattr(pre, "simulation_tied", False)
            and pre.status == "Success"
            and (root == s.group or s.pod in pre.nominated)
        ):
            return (
                f"a tie inside the workload-aware preemption for {root}, whose simulation chose "
                "the nodes and so the victims"
            )
    return None


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
    head = (f"proven: {', '.join(proven)}; open: " if proven else "open: ") + ", ".join(
        proof.open_tiers
    )
    stop = {
        "work-limit": "stopped by the work limit",
        "wall-clock": "stopped by the wall-clock cap: another run may differ",
        "no-solution": "no placement found",
    }.get(proof.stopped_by)
    if stop:
        head += f" ({stop})"
    return [head] + ([proof.advice] if proof.advice else [])


def render_diff(console: Console, d, *, wide: bool = False) -> None:
    """A people's view of a Diff (gangplan.solver.diff.Diff): the summary first, then details."""
    _diff_verdict(console, d, wide)
    _diff_admitted(console, d, wide)
    render_kueue_diff(console, d, wide=wide)
    _diff_decisive_summary(console, d, wide)
    _objective_table(console, d)
    _groups_table(console, d.groups, wide)
    _single_pods_table(console, d.single_pods or [], wide)
    _victim_lines(console, d.engines, wide)
    _render_decisive_details(console, d, wide)


def _wrapped(console: Console, text: str, first: str, style: str) -> None:
    """``text`` wrapped to the console under a 13-column label (never cut)."""
    console.print(
        Text(
            textwrap.fill(
                text,
                width=max(40, console.width),
                initial_indent=first,
                subsequent_indent=" " * 13,
                break_on_hyphens=False,
            ),
            style=style,
        ),
        soft_wrap=True,
    )


def _diff_verdict(console: Console, d, wide: bool) -> None:
    """The snapshot, the verdict and what the exact engine proved."""
    style = _CLASS_STYLE.get(d.classification, "white")
    gap = "" if d.gap is None else f", gap {d.gap:.2%}"
    console.print(
        Text(d.snapshot, style="bold"), no_wrap=not wide, overflow="fold" if wide else "ellipsis"
    )
    console.print(
        f"  verdict    [{style}]{d.classification}[/{style}] (optimum {d.optimal_status}{gap}, {d.seconds:.2f} s)"
    )
    for i, text in enumerate(proof_lines(d.proof)):
        style = "" if d.proof.proven else "magenta"
        if i == 0:
            _line(console, "  proof      " + text, wide, style=style)
        else:  # the advice: wrapped, never cut
            _wrapped(console, text, " " * 13, style)


def _diff_admitted(console: Console, d, wide: bool) -> None:
    """Groups admitted (and single pods placed) per engine, and the groups only one admits."""
    ga, oa = _admitted(d.groups, "greedy_admitted"), _admitted(d.groups, "optimal_admitted")
    singles = d.single_pods or []
    line = f"  admitted   greedy {ga} groups, optimal {oa}"
    if singles:
        line += f"; single pods placed: greedy {sum(1 for p in singles if p.greedy_node)}/{len(singles)}, optimal {sum(1 for p in singles if p.optimal_node)}/{len(singles)}"
    _line(console, line, wide)
    adm = d.admission
    if adm and (adm.only_greedy or adm.only_optimal):
        n = 50 if wide else 2
        _line(
            console,
            f"             only greedy: {_names(adm.only_greedy, n)}; only optimal: {_names(adm.only_optimal, n)}",
            wide,
        )


def _diff_decisive_summary(console: Console, d, wide: bool) -> None:
    """The decisive step, a tie it was, the chance or samples lines and the problems."""
    for i, text in enumerate(decisive_lines(d)):
        if text:
            _line(console, ("  decisive   " if i == 0 else "             ") + text, wide)
    tie = tie_note(d)
    if tie:  # issue 41: a random outcome is named in the summary (wrapped, never cut), not only in the details
        _wrapped(console, "the decisive choice was " + tie, "  tie        ", "yellow")
    if d.samples is None:
        for text in chance_lines(d.greedy):
            _line(console, "  chance     " + text, wide)
    for i, text in enumerate(
        sample_lines(d.samples, wide=wide, proven=d.proof is None or d.proof.proven)
    ):
        _line(console, ("  samples    " if i == 0 else "             ") + text, wide)
    for p in d.problems:
        _line(console, f"  problem    {p}", wide, style="red")


def _objective_table(console: Console, d) -> None:
    """The shared objective tiers, greedy against optimal, with each tier's bound and proof."""
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
                row += _tier_proof_cells(proofs.get(k))
            t.add_row(*row)
    console.print(t)


def _tier_proof_cells(tp) -> list:
    bound = "-" if tp is None or tp.bound is None else f"{tp.bound:g}"
    return [
        bound,
        Text(
            "-" if tp is None else ("proven" if tp.proven else "open"),
            style="" if tp is None or tp.proven else "magenta",
        ),
    ]


def _groups_table(console: Console, rows, wide: bool) -> None:
    """One row per group (by default at most :data:`MAX_ROWS`, else the differing ones)."""
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
            reason = (
                ""
                if g.greedy_admitted
                else ((g.greedy_reason or "") if wide else short_reason(g.greedy_reason))
            )
            t.add_row(
                escape(g.group),
                str(g.min_count),
                _outcome(g.greedy_admitted, g.greedy_placed, g.greedy_domain, wide),
                _outcome(g.optimal_admitted, g.optimal_placed, g.optimal_domain, wide),
                _flex(reason, wide),
            )
        console.print(t)
    if hidden:
        console.print(
            f"  (+{hidden} groups with the same outcome in both; -o wide lists every group)",
            style="dim",
        )
    elif not wide and any(
        not g.greedy_admitted and len(g.greedy_reason or "") > len(short_reason(g.greedy_reason))
        for g in rows
    ):
        console.print("  (reasons shortened: -o wide for the full text)", style="dim")


def _not_placed(node: str | None, reason: str | None, wide: bool) -> str:
    return node or ("not placed: " + ((reason or "") if wide else short_reason(reason)))


def _single_pods_table(console: Console, singles, wide: bool) -> None:
    if not singles:
        return
    _heading(console, "Single pods")
    t = _table()
    _name_col(t, "pod", (p.pod for p in singles))
    t.add_column("greedy")
    t.add_column("optimal")
    for p in singles:
        t.add_row(
            escape(p.pod),
            _flex(_not_placed(p.greedy_node, p.greedy_reason, wide), wide),
            _flex(_not_placed(p.optimal_node, p.optimal_reason, wide), wide),
        )
    console.print(t)


def _victim_lines(console: Console, eng, wide: bool) -> None:
    """Per engine: the pods it evicts, by priority, PDB violations and the groups it breaks."""
    if not eng or not (eng.greedy.victims or eng.optimal.victims):
        return
    console.print()
    for label, side in (("greedy", eng.greedy), ("optimal", eng.optimal)):
        pods = [p for u in side.victims for p in u.pods]
        prio = ", ".join(f"p={p}: {n}" for p, n in side.victims_by_priority.items())
        text = f"  victims {label}: {len(pods)} pod(s) in {len(side.victims)} unit(s)" + (
            f" ({prio})" if prio else ""
        )
        text += f", {side.pdb_violations} PDB violation(s)" + (
            f", broken groups: {_names(side.broken_groups)}" if side.broken_groups else ""
        )
        if wide and pods:
            text += ": " + ", ".join(pods)
        _line(console, text, wide)


def _render_decisive_details(console: Console, d, wide: bool) -> None:
    s = d.decisive
    if s is None:
        return
    _heading(
        console,
        "Decisive step",
        f"({s.probes} exact solves over {s.candidates} candidate choices, {s.skipped} skipped)",
    )
    if s.unproven_probes:
        _para(
            console,
            f"{s.unproven_probes} probe(s) answered no without a proof: the true step may come later; "
            "a larger --probe-time-limit decides them",
        )
    if s.pod is not None:
        _render_decisive_choice(console, s)
    tie = tie_note(d)
    if tie:
        _para(console, tie)
    _render_scores(console, s)
    if s.placement:
        _render_placement_evidence(console, s.placement)
    if s.failed_pod:
        reason = (s.failed_reason or "") if wide else short_reason(s.failed_reason)
        _para(console, f"then {s.failed_pod} failed: {reason}")
    if s.preemption:
        _render_preemption(console, s.preemption)
    if s.why:
        _para(console, f"why: {s.why}")


def _render_decisive_choice(console: Console, s) -> None:
    """The greedy choice no optimum shares, and what the optimum does with its pod."""
    _para(
        console,
        f"greedy choice #{s.step}: pod {s.pod} -> {s.greedy_node}; no optimal placement shares it",
    )
    if s.optimal_node:
        _para(console, f"the optimum puts {s.pod} on {s.optimal_node}")
    elif s.kind == "placement":
        _para(
            console,
            f"the optimum (agreeing with every earlier greedy choice) admits {s.group} but does not place {s.pod}",
        )
    else:
        _para(
            console,
            f"the optimum (agreeing with every earlier greedy choice) does not place {s.pod}",
        )


def _render_placement_evidence(console: Console, pe) -> None:
    """The topology placement greedy chose over the optimum's, with each one's scores."""
    _para(
        console,
        f"placement: {pe.group} chose {pe.key}={pe.greedy} over {pe.optimal}"
        + (f", misled by {pe.misled_by}" if pe.misled_by else ""),
    )
    for side, dom in (("greedy", pe.greedy), ("optimal", pe.optimal)):
        info = pe.placements.get(dom) if dom is not None else None
        if info:
            parts = ", ".join(f"{p} {v}" for p, v in info.scores.items())
            detail = (
                f"total {info.total} = {parts}"
                if parts
                else f"{info.status}: {info.reason or 'not scored'}"
            )
            _para(console, f"{side}'s domain {dom} ({info.nodes} nodes): {detail}", indent=4)


def _victim_units(us) -> str:
    """``N pod(s) at priority P (unit, unit (k pods, all), +M more)``, or ``nobody``."""
    if not us:
        return "nobody"
    pods = sum(len(u.pods) for u in us)
    names = [u.name + (f" ({len(u.pods)} pods, all)" if len(u.pods) > 1 else "") for u in us]
    kept, hidden = _cut(names, 3)
    shown = ", ".join(kept) + (f", +{hidden} more" if hidden else "")
    prios = "/".join(str(p) for p in sorted({u.priority for u in us}, reverse=True))
    return f"{pods} pod(s) at priority {prios} ({shown})"


def _render_preemption(console: Console, pre) -> None:
    """Whom greedy's preemption evicts against whom the optimum does, and greedy's criterion."""
    _para(
        console,
        f"preemption for {pre.entity} ({pre.path}): greedy evicts {_victim_units(pre.victims)} for {_short(pre.nodes) or '-'}",
    )
    _para(
        console,
        f"the optimum evicts {_victim_units(pre.optimal_victims)}"
        + (f" and uses {_short(pre.optimal_nodes)}" if pre.optimal_nodes else ""),
        indent=4,
    )
    _para(console, f"greedy's criterion: {pre.criterion}", indent=4)


def _render_scores(console: Console, s) -> None:
    """The per-plugin scores greedy gave its node and the optimum's node at the decisive step, one
    row per plugin (so the table stays narrow whatever the plugin names)."""
    sides = []
    for label, node, sc in (
        ("greedy", s.greedy_node, s.greedy_scores),
        ("optimum", s.optimal_node, s.optimal_scores),
    ):
        if not node or not isinstance(sc, NodeEvidence):
            continue
        if not sc.feasible:
            _para(
                console,
                f"{label}'s node {node}: not feasible for greedy at that step ({sc.reason})",
            )
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
    console.print(
        Text(f"{title}: what if", style="bold"),
        no_wrap=not wide,
        overflow="fold" if wide else "ellipsis",
    )
    t = _table()
    _name_col(t, "variant", (r.variant for r in rows))
    for col in ("greedy", "optimal", "idle GPUs", "classification", "decisive"):
        t.add_column(
            col,
            no_wrap=True,
            justify="right" if col in ("greedy", "optimal", "idle GPUs") else "left",
        )
    for r in rows:
        t.add_row(
            r.variant,
            f"{r.greedy_admitted}/{r.groups}",
            f"{r.optimal_admitted}/{r.groups}",
            f"{r.greedy_idle_gpus} / {r.optimal_idle_gpus}",
            r.classification,
            r.decisive or "-",
        )
    console.print(t)
    console.print(
        "  groups admitted of those with pending pods; idle GPUs after greedy / after the optimum",
        style="dim",
    )
    for r in rows:
        if r.kueue is not None:
            k = r.kueue
            pending = (
                f"; pending: {_names(r.kueue_pending, 50 if wide else 3)}"
                if r.kueue_pending
                else ""
            )
            _line(
                console,
                f"  {r.variant}: Kueue admits {k.greedy_admitted}/{k.workloads} Workloads, optimal {k.optimal_admitted}{pending}",
                wide,
            )
    for r in rows:
        if r.advice:
            _line(console, f"  {r.variant}: {r.advice}", wide, style="magenta")
        for note in r.notes:
            _line(console, f"  {r.variant}: {note}", wide)


def render_suite(console: Console, rows, *, title: str = "suite", wide: bool = False) -> None:
    console.print(
        Text.assemble(
            (title, "bold"),
            ": greedy (kube-scheduler) vs optimal (CP-SAT), groups admitted per engine",
        )
    )
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
            t.add_row(
                escape(r.scenario),
                "-",
                "-",
                Text("error", style="red"),
                "-",
                _flex(r.error, wide),
                f"{r.seconds:.2f}",
            )
            continue
        d = r.diff
        style = _CLASS_STYLE.get(d.classification, "white")
        if r.expectations == 0:
            exp = Text("-")
        elif not r.failures:
            exp = Text(f"{r.expectations} met", style="green")
        else:
            exp = Text(
                "; ".join(r.failures),
                style="red",
                no_wrap=not wide,
                overflow="fold" if wide else "ellipsis",
            )
        t.add_row(
            escape(r.scenario),
            _admitted(d.groups, "greedy_admitted"),
            _admitted(d.groups, "optimal_admitted"),
            Text(d.classification, style=style),
            escape(differing_tier(d) or "-"),
            exp,
            f"{r.seconds:.2f}",
        )
    console.print(t)
    console.print(suite_summary(rows), style="dim", soft_wrap=True, markup=False, highlight=False)
    for r in rows:
        if (
            r.diff is not None
            and r.diff.proof is not None
            and r.diff.proof.advice
            and r.diff.classification == "unproven"
        ):
            _line(console, f"  {r.scenario}: {r.diff.proof.advice}", wide, style="magenta")


def differing_tier(d) -> str | None:
    """The highest objective tier on which greedy and the optimum differ (the suite's "differs in"
    column: a greedy-suboptimal row with equal group counts names the tier that decides it)."""
    return next(
        (
            k
            for k, v in d.optimal_objective.items()
            if k in d.greedy_objective and d.greedy_objective[k] != v
        ),
        None,
    )


def suite_summary(rows) -> str:
    """One line: scenarios per classification, the unproven ones counted apart from those proven
    to match the optimum."""
    from collections import Counter

    counts = Counter("error" if r.error else r.diff.classification for r in rows)
    proven = sum(counts.pop(c, 0) for c in ("identical", "tie-break", "equivalent"))
    parts = [f"{proven} proven to match the optimum"] + [
        f"{n} {c}" for c, n in sorted(counts.items())
    ]
    failed = sum(1 for r in rows if r.failures)
    if failed:
        parts.append(f"{failed} with unmet expectations")
    return f"  {len(rows)} scenarios: " + ", ".join(parts)


__all__ = [
    "MAX_ROWS",
    "decisive_lines",
    "differing_tier",
    "proof_lines",
    "render_diff",
    "render_suite",
    "render_whatif",
    "sample_lines",
    "suite_summary",
    "tie_note",
]
