"""Rich rendering of Kueue's admission (issue 42): one Result's Workloads (``solve``), and Kueue
against the optimum in a diff. The JSON twins are ``Result.kueue`` and the diff's ``kueue``."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from gangplan.models.result import KueueOutcome, KueueWorkloadOutcome
from gangplan.render_text import _flex, _heading, _line, _name_col, _names, _table


def _flavors(w: KueueWorkloadOutcome) -> str:
    parts = []
    for p in w.podsets:
        names = sorted(set(p.flavors.values()))
        text = ",".join(names) or "-"
        if p.topology:
            doms = sorted({"/".join(d["values"][:1]) for d in p.topology})
            text += f" [{w.levels[0] if w.levels else 'domain'}: {', '.join(doms)}]"
        parts.append(text if len(w.podsets) == 1 else f"{p.name}: {text}")
    return "; ".join(parts) or "-"


def _state(w: KueueWorkloadOutcome) -> Text:
    if not w.admitted:
        return Text("pending", style="red")
    if w.recorded:
        return Text("admitted before", style="dim")
    text = Text(f"admitted c{w.cycle}" if w.cycle else "admitted", style="green")
    if w.borrows:
        text.append(" (borrows)", style="yellow")
    if not w.running:
        text.append(" (not all pods placed)", style="red")
    return text


def render_kueue_outcome(console: Console, k: KueueOutcome, *, wide: bool = False) -> None:
    """The Workloads of one Result: queue, outcome, flavors (and TAS domains), Kueue's reason."""
    run = {key: w for key, w in k.workloads.items() if not w.recorded}
    admitted = sum(1 for w in run.values() if w.admitted)
    note = (
        f"(Kueue v{k.version} admission, {k.cycles} cycle(s))"
        if k.cycles
        else f"(Kueue v{k.version} rules)"
    )
    _heading(console, "Kueue Workloads", note)
    _line(console, f"  admitted {admitted}/{len(run)} pending Workloads", wide)
    for t in k.ties:
        _line(console, f"  tie: {t}", wide, style="yellow")
    before = {key: w for key, w in k.workloads.items() if w.recorded}
    if before:
        other = {key: w.recheck for key, w in before.items() if w.recheck and w.recheck != "same"}
        _line(
            console,
            f"  {len(before)} admitted before the snapshot; gangplan's Kueue agrees with "
            f"{len(before) - len(other)} of them now",
            wide,
        )
        for key, text in list(other.items())[: None if wide else 5]:
            _line(console, f"    {key}: {text}", wide, style="yellow")
    if not run:
        return
    t = _table()
    _name_col(t, "workload", run)
    t.add_column("ClusterQueue", no_wrap=True)
    t.add_column("outcome", no_wrap=True)
    t.add_column("pods", justify="right", no_wrap=True)
    t.add_column("flavors", no_wrap=not wide)
    t.add_column("reason")
    for key, w in run.items():
        t.add_row(
            key,
            w.cluster_queue or "-",
            _state(w),
            str(w.pods),
            _flex(_flavors(w), wide),
            _flex(w.reason or "", wide),
        )
    console.print(t)


def render_kueue_diff(console: Console, d, *, wide: bool = False) -> None:
    """The diff's Kueue lines: admissions per engine, the Workloads only one admits, and the
    decisive step in Kueue's terms."""
    k = d.kueue
    if k is None:
        return
    _line(
        console,
        f"  kueue      greedy admits {k.greedy_admitted}/{k.workloads} Workloads ({k.greedy_running} run whole), optimal {k.optimal_admitted} ({k.optimal_running})"
        + (f"; other flavors or domains: {_names(k.other_flavor, 3)}" if k.other_flavor else ""),
        wide,
    )
    if k.only_greedy or k.only_optimal:
        n = 50 if wide else 3
        _line(
            console,
            f"             only Kueue: {_names(k.only_greedy, n)}; only optimal: {_names(k.only_optimal, n)}",
            wide,
        )
    for t in d.greedy.kueue.ties if d.greedy.kueue is not None else ():
        _line(console, f"  kueue tie  {t}", wide, style="yellow")
    s = k.decisive
    if s is None:
        return
    where = f"cycle {s.cycle}: " if s.cycle else ""
    _line(console, f"  kueue step {where}{s.workload} {s.greedy}", wide, style="yellow")
    _line(console, f"             the optimum: {s.optimal}", wide)
    for r in s.refused[: None if wide else 3]:
        _line(console, f"             then refused {r}", wide)


KUEUE_PENDING = ": pending:"
"""How :func:`kueue_context`'s first line says Kueue holds the Workload back."""


def _amount(resource: str, value: int) -> str:
    from gangplan.predicates.quota import format_amount

    return format_amount(resource, value)


def kueue_context(r, cluster, pod_key: str) -> list[str]:
    """What Kueue did with the Workload of ``pod_key`` (``why``, ``--explain``): admitted with
    which flavors and domains, or pending with Kueue's message and the quota numbers of every
    (flavor, resource) it lacks."""
    if r.kueue is None or cluster is None or cluster.kueue is None:
        return []
    owner = cluster.kueue.pod_owners().get(pod_key)
    w = r.kueue.workloads.get(owner[0]) if owner else None
    if owner is None or w is None:
        return []
    head = f"Kueue: Workload {owner[0]} (LocalQueue {w.local_queue or '-'} -> ClusterQueue {w.cluster_queue or '-'})"
    if w.admitted:
        when = "before the snapshot" if w.recorded else f"in cycle {w.cycle}" if w.cycle else ""
        borrow = ", borrowing from its cohort" if w.borrows else ""
        return [f"{head}: admitted {when}{borrow}: {_flavors(w)}"]
    lines = [f"{head}{KUEUE_PENDING} {w.reason}"]
    for q in w.quota:
        if q.requested <= q.available:
            continue
        lines.append(
            f"quota {q.resource} in flavor {q.flavor}: asks {_amount(q.resource, q.requested)}, "
            f"{_amount(q.resource, q.available)} available (nominal {_amount(q.resource, q.nominal)}, "
            f"used {_amount(q.resource, q.used)}, at most {_amount(q.resource, q.most)} with borrowing)"
        )
    return lines
