"""``report.html`` of ``gangplan replay --out DIR``: the plots a reader wants, as base64 PNGs in
one self-contained page (same bytes for the same inputs: the Agg backend, no software metadata).

* fill mode: unallocated GPU % against arrived % per policy (mean over seeds, a band of one
  standard deviation) and the packing bound, drawn as steps through the arrived percents it was
  computed at;
* timed mode: allocated GPUs, pending jobs and fragment / stranded GPUs over time per run, and the CDF of queueing delay
  per run (jobs that started); with ``shadow`` runs, the regret per epoch.

One colour per policy in every panel (:func:`policy_colours`). :func:`fill_plots` and
:func:`timed_plots` return the matplotlib figures themselves (what the tests read);
:func:`report_html` renders them.
"""

from __future__ import annotations

import base64
import html
import io

from gangplan.replay.output import ReplayOutput

PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
"""matplotlib's ``tab10``, assigned to the policies in the order they were given."""

BOUND_DRAWSTYLE = "steps-pre"
"""The packing bound is computed at a few arrived percents (10, 20, .. 130). Between two of
them the arrived jobs are a superset of the left point's and a subset of the right point's, so
the bound there lies between the two values and no placement leaves less than the right one:
each step holds the value of the point at its right end (``where="pre"``). Straight lines, or
steps holding the left value, drew the bound above what the policies achieved."""

WIDTH_IN = 13.0
"""Figure width in inches (1,300 px at 100 dpi); the page scales every image to its full width."""


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "gangplan"
    return plt


def policy_colours(out: ReplayOutput) -> dict[str, str]:
    """Policy name -> colour, the one mapping every panel takes its colours from: the
    summary's policies in their order, then any other policy a run carries."""
    names = list(out.summary.policies)
    for r in [*out.summary.runs, *out.fill, *out.timed]:
        if r.policy not in names:
            names.append(r.policy)
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def _png(fig) -> str:
    plt = _plt()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _figure(fig, alt: str) -> str:
    return f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{_png(fig)}"><figcaption>{html.escape(alt)}</figcaption></figure>'


def fill_plots(out: ReplayOutput) -> list[tuple[object, str]]:
    """The fill mode's figure and its caption."""
    plt = _plt()
    colours = policy_colours(out)
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 6.0), layout="constrained")
    for name, p in out.summary.policies.items():
        if not p.unallocated_percent_mean:
            continue
        xs = [int(k) for k in p.unallocated_percent_mean]
        m = list(p.unallocated_percent_mean.values())
        sd = list((p.unallocated_percent_std or {}).values()) or [0.0] * len(m)
        ax.plot(xs, m, label=name, linewidth=1.4, color=colours[name])
        ax.fill_between(
            xs,
            [a - b for a, b in zip(m, sd, strict=True)],
            [a + b for a, b in zip(m, sd, strict=True)],
            alpha=0.2,
            color=colours[name],
            linewidth=0,
        )
    ax.plot(
        [0, 100], [100, 0], color="grey", linestyle=":", linewidth=1, label="ideal (100 - arrived)"
    )
    b = out.summary.packing_bound_unallocated_percent
    if b:
        method = out.summary.packing_bound_method or "lp"
        ax.plot(
            [int(k) for k in b],
            list(b.values()),
            color="black",
            linestyle="--",
            drawstyle=BOUND_DRAWSTYLE,
            marker="o",
            markersize=3,
            linewidth=1.2,
            label=f"packing bound ({method}; computed at the dots, each step holds the next dot's value)",
        )
    ax.set_xlabel("arrived GPU %")
    ax.set_ylabel("unallocated GPU %")
    ax.set_xlim(0, 130)
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9)
    return [
        (
            fig,
            "Unallocated GPU % against arrived GPU % per policy (mean over seeds, band: one standard deviation), "
            "and the packing bound (no placement of the jobs arrived leaves less)",
        )
    ]


def timed_plots(out: ReplayOutput) -> list[tuple[object, str]]:
    """The timed mode's figures and their captions: allocation / queue / idle panels, the delay
    CDF, and with shadow runs the regret per epoch."""
    plt = _plt()
    colours = policy_colours(out)
    plots = []
    fig, (a1, a2, a3) = plt.subplots(
        3, 1, figsize=(WIDTH_IN, 10.5), sharex=True, layout="constrained"
    )
    for tr in out.timed:
        if not tr.changes:
            continue
        c = colours[tr.policy]
        t0 = tr.changes[0][0]
        ts = [(t - t0) / 3600 for t, _, _ in tr.changes]
        a1.step(
            ts,
            [a for _, a, _ in tr.changes],
            where="post",
            linewidth=0.8,
            color=c,
            label=f"{tr.policy} seed {tr.seed}",
        )
        a2.step(
            ts,
            [p for _, _, p in tr.changes],
            where="post",
            linewidth=0.8,
            color=c,
            label=f"{tr.policy} seed {tr.seed}",
        )
        if len(tr.frag) == len(tr.changes):
            a3.step(
                ts,
                [f / 1000 for _, f, _ in tr.frag],
                where="post",
                linewidth=0.8,
                color=c,
                label=f"{tr.policy} seed {tr.seed} fragment",
            )
            a3.step(
                ts,
                [s / 1000 for _, _, s in tr.frag],
                where="post",
                linewidth=0.8,
                linestyle="--",
                color=c,
                label=f"{tr.policy} seed {tr.seed} stranded (dashed)",
            )
    cap = out.summary.capacity_gpus
    a1.axhline(cap, color="grey", linestyle=":", linewidth=1, label=f"capacity {cap}")
    a1.set_ylabel("allocated GPUs")
    a2.set_ylabel("pending jobs")
    a3.set_ylabel("idle GPUs: fragment / stranded")
    a3.set_xlabel("hours since the first arrival")
    for a in (a1, a2, a3):
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    plots.append(
        (
            fig,
            "Allocated GPUs, pending jobs and fragment / stranded GPUs (FGD's definitions) over time",
        )
    )
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 5.5), layout="constrained")
    for tr in out.timed:
        d = sorted(r.start - r.arrival for r in tr.records if r.start is not None)
        if d:
            ax.step(
                [max(x, 0.1) for x in d],
                [(k + 1) / len(d) for k in range(len(d))],
                where="post",
                linewidth=1,
                color=colours[tr.policy],
                label=f"{tr.policy} seed {tr.seed}",
            )
    ax.set_xscale("log")
    ax.set_xlabel("queueing delay, s (0 drawn at 0.1 s)")
    ax.set_ylabel("fraction of started jobs")
    ax.set_ylim(0, 1.01)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9)
    plots.append((fig, "CDF of queueing delay"))
    shadows = [tr for tr in out.timed if tr.shadow is not None and tr.shadow.records]
    if shadows:
        fig, ax = plt.subplots(figsize=(WIDTH_IN, 4.5), layout="constrained")
        for tr in shadows:
            recs = tr.shadow.records
            t0 = tr.changes[0][0] if tr.changes else 0.0
            ax.plot(
                [(e.time - t0) / 3600 for e in recs],
                [e.regret_gpus for e in recs],
                marker=".",
                linewidth=0.6,
                color=colours[tr.policy],
                label=f"{tr.policy} seed {tr.seed}",
            )
        ax.set_xlabel("hours since the first arrival")
        ax.set_ylabel("regret, GPUs")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=9)
        plots.append((fig, "Shadow: per-epoch regret (GPUs the exact engine admits beyond greedy)"))
    return plots


def fill_figures(out: ReplayOutput) -> list[str]:
    return [_figure(fig, alt) for fig, alt in fill_plots(out)]


def timed_figures(out: ReplayOutput) -> list[str]:
    return [_figure(fig, alt) for fig, alt in timed_plots(out)]


def _table(out: ReplayOutput) -> str:
    s = out.summary
    rows = []
    regret = any(r.regret_gpus_total is not None for r in s.runs)
    for r in s.runs:
        if s.mode == "fill":
            u = (r.unallocated_percent or {}).get("100")
            rows.append(
                [r.policy, r.seed, r.jobs, r.placed, r.failed, "" if u is None else f"{u:.2f}"]
            )
        else:
            q = r.queueing_delay
            rows.append(
                [
                    r.policy,
                    r.seed,
                    r.jobs,
                    r.placed,
                    r.unfinished,
                    *(
                        ("", "", "", "")
                        if q is None
                        else (f"{q.mean:.1f}", f"{q.p50:g}", f"{q.p99:g}", f"{q.p999:g}")
                    ),
                    f"{r.jct.mean:.0f}" if r.jct else "",
                    f"{r.idle_gpu_hours:.1f}",
                    *(
                        [("" if r.regret_gpus_total is None else r.regret_gpus_total)]
                        if regret
                        else []
                    ),
                ]
            )
    head = (
        ["policy", "seed", "jobs tried", "placed", "failed", "unallocated % at 100 % arrived"]
        if s.mode == "fill"
        else [
            "policy",
            "seed",
            "jobs",
            "started",
            "unfinished",
            "delay mean s",
            "p50",
            "p99",
            "p99.9",
            "JCT mean s",
            "idle GPU-h",
            *(["regret GPUs"] if regret else []),
        ]
    )
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><tr>{th}</tr>{body}</table>"


def _span(values: list[int]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


def report_title(out: ReplayOutput) -> tuple[str, str]:
    """The page's title and the sentence under it: what was run."""
    s = out.summary
    where = f"{s.node_count} nodes ({s.capacity_gpus} GPUs)"
    seeds = f"seed{'s' if len(s.seeds) > 1 else ''} {', '.join(map(str, s.seeds))}"
    policies = ", ".join(s.policies)
    if s.mode == "fill":
        per_run = [r.jobs for r in s.runs] or [s.trace_jobs]
        ratio = s.inflation_ratio
        stop = f"{ratio * 100:g} %" if ratio else None
        title = f"gangplan replay, fill mode: {_span(per_run)} jobs per run on {where}" + (
            f", filled until {stop} of the GPUs had arrived" if stop else ""
        )
        if not ratio:
            how = f"every one of the trace's {s.trace_jobs} jobs tried once, in a seeded order"
        elif max(per_run) <= s.trace_jobs:
            how = (
                f"each run tried the trace's {s.trace_jobs} jobs in a seeded order with random ones removed until the rest ask for at most {stop} "
                f"of the GPUs ({ratio:g} x {s.capacity_gpus}); each job tried once, in that order"
            )
        else:
            how = (
                f"each run tried the trace's {s.trace_jobs} jobs in a seeded order, topped up with clones of random ones until they ask for "
                f"{stop} of the GPUs ({ratio:g} x {s.capacity_gpus}); each job tried once, in that order"
            )
        return title, f"{how}; policies {policies}; {seeds}."
    title = f"gangplan replay, timed mode: {s.trace_jobs} jobs on {where}"
    scale = f"; arrivals x {s.arrival_scale:g}" if s.arrival_scale not in (None, 1, 1.0) else ""
    return (
        title,
        f"every job of the trace at its arrival time; policies {policies}; {seeds}{scale}.",
    )


def report_html(out: ReplayOutput) -> str:
    s = out.summary
    figs = fill_figures(out) if s.mode == "fill" else timed_figures(out)
    caveats = "".join(f"<li>{html.escape(c)}</li>" for c in s.caveats)
    title, what = report_title(out)
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}figure{margin:1em 0}"
        "img{display:block;width:100%;height:auto}</style></head><body>\n"
        f"<h1>{html.escape(title)}</h1>\n<p>{html.escape(what)}</p>\n"
        f"<p>trace {html.escape(s.trace)}; nodes {html.escape(s.nodes)}</p>\n"
        f"{_table(out)}\n"
        + "\n".join(figs)
        + (f"\n<h2>Caveats</h2><ul>{caveats}</ul>" if caveats else "")
        + "\n</body></html>\n"
    )


__all__ = [
    "BOUND_DRAWSTYLE",
    "PALETTE",
    "fill_plots",
    "policy_colours",
    "report_html",
    "report_title",
    "timed_plots",
]
