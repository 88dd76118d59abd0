"""The cells and lines the people's views share (:mod:`gangplan.render` and its
``render_*`` modules): a scheduler reason in one line with its blockers named, a topology domain
shortened, name lists cut (never hiding just one name), the table and line styles."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gangplan.models.cluster import Cluster
from gangplan.models.result import Result

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


def with_blockers(
    short: str, full: str | None, cluster: Cluster | None, pod_key: str | None = None
) -> str:
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
    insufficient = [
        r.removeprefix("Insufficient ") for _, r in counted if r.startswith("Insufficient ")
    ]
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
    console.print(
        Text(text, style=style), no_wrap=not wide, overflow="fold" if wide else "ellipsis"
    )


def _para(console: Console, text: str, indent: int = 2) -> None:
    """A paragraph wrapped at the console width, continuation lines indented under the first."""
    console.print(
        textwrap.fill(
            text,
            width=console.width,
            initial_indent=" " * indent,
            subsequent_indent=" " * (indent + 4),
            break_on_hyphens=False,
            break_long_words=False,
        ),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def _heading(console: Console, title: str, note: str = "") -> None:
    console.print()
    console.print(Text.assemble((title, "bold"), (f" {note}" if note else "", "dim")))


def _outcome(admitted: bool, placed: int, domain: str | None, wide: bool) -> Text:
    t = Text("admitted" if admitted else "rejected", style="green" if admitted else "red")
    t.append(f" {placed}")
    if domain:
        t.append(" " + (domain if wide else short_domain(domain)))
    return t


def _cut(items, n: int) -> tuple[list, int]:
    """The first ``n`` of ``items`` and how many are left out, but never just one: "(+1)" takes
    about the room of the name it hides (``gpu-b1, gpu-b2, gpu-b3``, never ``gpu-b1, gpu-b2, ... (+1)``)."""
    items = list(items)
    if len(items) <= n + 1:
        return items, 0
    return items[:n], len(items) - n


def _short(items: list[str], n: int = 6) -> str:
    shown, hidden = _cut(items, n)
    return ", ".join(shown) + (f", ... (+{hidden})" if hidden else "")


def _names(keys: list[str], n: int = 4) -> str:
    if not keys:
        return "none"
    shown, hidden = _cut(keys, n)
    return ", ".join(shown) + (f" (+{hidden})" if hidden else "")


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
        out.append(
            f"pod order of {shown} drawn (v{r.options.kube_version}: Go map order; --seed {r.options.seed or 0}); odds: diff --samples K"
        )
    if r.options.tie_break == "random" and any(c.tie_count > 1 for c in trace.pods.values()):
        out.append(
            f"node ties drawn (--tie-break random, --seed {r.options.seed or 0}); odds: diff --samples K"
        )
    return out


__all__ = ["chance_lines", "short_domain", "short_reason", "with_blockers"]
