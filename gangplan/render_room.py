"""``gangplan make-room`` for people: the optimal plan beside the greedy baseline, the moves, and
the greedy check (the JSON twin is :class:`gangplan.models.room.RoomDocument`)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gangplan.models.room import RoomDocument, RoomPlan

MAX_MOVES = 20


def _verdict(doc: RoomDocument) -> Text:
    plan = doc.optimal
    if not doc.targets:
        return Text("nothing to do: kube-scheduler admits every pending group", style="green")
    if plan.found and doc.verified:
        what = "proven cheapest" if doc.proven else "best found (not proven cheapest)"
        return Text(f"plan ({what}), checked by kube-scheduler's cycle: it works", style="green")
    if plan.found:
        return Text(
            "plan found, but kube-scheduler's cycle does not follow it (see the check): not a working plan",
            style="bold red",
        )
    if doc.proven:
        return Text(
            "no plan: no moves (or allowed evictions) admit every target (proven)", style="red"
        )
    return Text(
        "no plan found within the work limit (not proven impossible): rerun with a larger --time-limit",
        style="yellow",
    )


def _cost_cells(plan: RoomPlan) -> list[str]:
    if not plan.found:
        return ["no plan", "-", "-", "-", "-", "-"]
    c = plan.cost
    ok = "yes" if plan.check and plan.check.verified else "no"
    return [
        f"{len(plan.targets_admitted)}",
        str(c.groups),
        str(c.moves),
        str(c.evictions),
        str(c.gpus),
        ok,
    ]


def _table(console: Console, doc: RoomDocument) -> None:
    table = Table(show_edge=False, header_style="bold")
    for col in ("plan", "admitted", "groups hit", "moved", "evicted", "GPUs hit", "works"):
        table.add_column(col, justify="left" if col == "plan" else "right")
    table.add_row("optimal", *_cost_cells(doc.optimal))
    table.add_row("greedy baseline", *_cost_cells(doc.baseline))
    console.print(table)
    if doc.optimal.found and not doc.proven and doc.bound is not None:
        console.print(
            f"not proven: a plan might cost as little as {doc.bound} (this one {doc.optimal.cost.total}); "
            "rerun with a larger --time-limit"
        )


def _steps(console: Console, plan: RoomPlan, wide: bool) -> None:
    """The plan's cordons, moves (and where kube-scheduler re-created each) and evictions."""
    if plan.cordon:
        console.print(f"cordon: {', '.join(plan.cordon)}")
    moves = plan.moves if wide else plan.moves[:MAX_MOVES]
    landed = plan.check.landed if plan.check else {}
    for m in moves:
        at = landed.get(m.pod)
        where = m.to if at in (None, m.to) else f"{m.to} (kube-scheduler: {at})"
        console.print(f"  move {m.pod}: {m.from_} -> {where}")
    if len(plan.moves) > len(moves):
        console.print(f"  ... and {len(plan.moves) - len(moves)} more (--output wide, or --json)")
    for key in plan.evictions:
        console.print(f"  evict {key}")


def _check(console: Console, plan: RoomPlan) -> None:
    """Why the greedy replay did not follow the plan, and what kube-scheduler preempted."""
    check = plan.check
    if check is None:
        return
    lines = []
    if not check.verified:
        if check.targets_pending:
            lines.append(f"still pending: {', '.join(check.targets_pending)}")
        if check.moved_pending:
            lines.append(f"moved pods left pending: {', '.join(check.moved_pending)}")
        lines += check.violations
    if check.preempted:
        lines.append(f"kube-scheduler also preempted {', '.join(check.preempted)}")
    if check.draws:
        lines.append(
            f"with random score ties, as kube-scheduler draws them: works in "
            f"{check.draws_working} of {check.draws} draws"
        )
    else:
        lines.append("score ties broken by snapshot order (--samples K draws them at random)")
    for line in lines:
        console.print(f"check: {line}")


def _more(console: Console, doc: RoomDocument) -> None:
    """What could not move, the nodes to add instead, and the notes."""
    for why, count in doc.not_movable.items():
        console.print(f"not movable: {count} pod(s): {why}")
    for n in doc.nodes_to_add:
        where = ", ".join(f"{k}={v}" for k, v in n.domain.items())
        console.print(
            f"or add {n.count} node(s) like {n.shape}"
            + (f" in {where}" if where else "")
            + ("" if n.proven else " (fewer not ruled out)")
        )
    for note in doc.notes:
        console.print(note)


def render_room(console: Console, doc: RoomDocument, *, wide: bool = False) -> None:
    console.print(Text(f"make-room: {', '.join(doc.targets) or '(no target)'}", style="bold"))
    console.print(_verdict(doc))
    if not doc.targets:
        return
    _table(console, doc)
    if doc.optimal.found:
        _steps(console, doc.optimal, wide)
        _check(console, doc.optimal)
    _more(console, doc)
