"""``report.html`` of ``gangplan replay --out DIR``: the plots a reader wants, as base64 PNGs in
one self-contained page (same bytes for the same inputs: the Agg backend, no software metadata).

* fill mode: unallocated GPU % against arrived % per policy (mean over seeds, a band of one
  standard deviation) and the packing bound;
* timed mode: allocated GPUs, pending jobs and fragment / stranded GPUs over time per run, and the CDF of queueing delay
  per run (jobs that started); with ``shadow`` runs, the regret per epoch.
"""

from __future__ import annotations

import base64
import html
import io

from gangplan.replay.output import ReplayOutput


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "gangplan"
    return plt


def _png(fig) -> str:
    plt = _plt()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _figure(fig, alt: str) -> str:
    return f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{_png(fig)}"><figcaption>{html.escape(alt)}</figcaption></figure>'


def fill_figures(out: ReplayOutput) -> list[str]:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, p in out.summary.policies.items():
        if not p.unallocated_percent_mean:
            continue
        xs = [int(k) for k in p.unallocated_percent_mean]
        m = list(p.unallocated_percent_mean.values())
        sd = list((p.unallocated_percent_std or {}).values()) or [0.0] * len(m)
        ax.plot(xs, m, label=name, linewidth=1.4)
        ax.fill_between(xs, [a - b for a, b in zip(m, sd, strict=True)], [a + b for a, b in zip(m, sd, strict=True)], alpha=0.2)
    ax.plot([0, 100], [100, 0], color="grey", linestyle=":", linewidth=1, label="ideal (100 - arrived)")
    b = out.summary.packing_bound_unallocated_percent
    if b:
        ax.plot([int(k) for k in b], list(b.values()), color="black", linestyle="--", marker="o", markersize=3, linewidth=1.2, label="packing bound")
    ax.set_xlabel("arrived GPU %")
    ax.set_ylabel("unallocated GPU %")
    ax.set_xlim(0, 130)
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return [_figure(fig, "Unallocated GPU % against arrived GPU % per policy (mean over seeds, band: one standard deviation), and the packing bound")]


def timed_figures(out: ReplayOutput) -> list[str]:
    plt = _plt()
    figs = []
    fig, (a1, a2, a3) = plt.subplots(3, 1, figsize=(8, 7.5), sharex=True)
    for tr in out.timed:
        if not tr.changes:
            continue
        t0 = tr.changes[0][0]
        ts = [(t - t0) / 3600 for t, _, _ in tr.changes]
        a1.step(ts, [a for _, a, _ in tr.changes], where="post", linewidth=0.8, label=f"{tr.policy} seed {tr.seed}")
        a2.step(ts, [p for _, _, p in tr.changes], where="post", linewidth=0.8, label=f"{tr.policy} seed {tr.seed}")
        if len(tr.frag) == len(tr.changes):
            a3.step(ts, [f / 1000 for _, f, _ in tr.frag], where="post", linewidth=0.8, label=f"{tr.policy} seed {tr.seed} fragment")
            a3.step(ts, [s / 1000 for _, _, s in tr.frag], where="post", linewidth=0.6, linestyle="--", label=f"{tr.policy} seed {tr.seed} stranded")
    cap = out.summary.capacity_gpus
    a1.axhline(cap, color="grey", linestyle=":", linewidth=1, label=f"capacity {cap}")
    a1.set_ylabel("allocated GPUs")
    a2.set_ylabel("pending jobs")
    a3.set_ylabel("idle GPUs: fragment / stranded")
    a3.set_xlabel("hours since the first arrival")
    for a in (a1, a2, a3):
        a.grid(alpha=0.3)
        a.legend(fontsize=7)
    figs.append(_figure(fig, "Allocated GPUs, pending jobs and fragment / stranded GPUs (FGD's definitions) over time"))
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for tr in out.timed:
        d = sorted(r.start - r.arrival for r in tr.records if r.start is not None)
        if d:
            ax.step([max(x, 0.1) for x in d], [(k + 1) / len(d) for k in range(len(d))], where="post", linewidth=1, label=f"{tr.policy} seed {tr.seed}")
    ax.set_xscale("log")
    ax.set_xlabel("queueing delay, s (0 drawn at 0.1 s)")
    ax.set_ylabel("fraction of started jobs")
    ax.set_ylim(0, 1.01)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    figs.append(_figure(fig, "CDF of queueing delay"))
    shadows = [tr for tr in out.timed if tr.shadow is not None and tr.shadow.records]
    if shadows:
        fig, ax = plt.subplots(figsize=(7, 3.5))
        for tr in shadows:
            recs = tr.shadow.records
            t0 = tr.changes[0][0] if tr.changes else 0.0
            ax.plot([(e.time - t0) / 3600 for e in recs], [e.regret_gpus for e in recs], marker=".", linewidth=0.6, label=f"{tr.policy} seed {tr.seed}")
        ax.set_xlabel("hours since the first arrival")
        ax.set_ylabel("regret, GPUs")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        figs.append(_figure(fig, "Shadow: per-epoch regret (GPUs the exact engine admits beyond greedy)"))
    return figs


def _table(out: ReplayOutput) -> str:
    s = out.summary
    rows = []
    for r in s.runs:
        if s.mode == "fill":
            u = (r.unallocated_percent or {}).get("100")
            rows.append([r.policy, r.seed, r.jobs, r.placed, r.failed, "" if u is None else f"{u:.2f}"])
        else:
            q = r.queueing_delay
            rows.append([r.policy, r.seed, r.jobs, r.placed, r.unfinished, *(("", "", "", "") if q is None else (f"{q.mean:.1f}", f"{q.p50:g}", f"{q.p99:g}", f"{q.p999:g}")),
                         f"{r.jct.mean:.0f}" if r.jct else "", f"{r.idle_gpu_hours:.1f}", "" if r.regret_gpus_total is None else r.regret_gpus_total])
    head = (["policy", "seed", "jobs", "placed", "failed", "unallocated % at 100 % arrived"] if s.mode == "fill" else
            ["policy", "seed", "jobs", "started", "unfinished", "delay mean s", "p50", "p99", "p99.9", "JCT mean s", "idle GPU-h", "regret GPUs"])
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{th}</tr>{body}</table>"


def report_html(out: ReplayOutput) -> str:
    s = out.summary
    figs = fill_figures(out) if s.mode == "fill" else timed_figures(out)
    caveats = "".join(f"<li>{html.escape(c)}</li>" for c in s.caveats)
    title = f"gangplan replay: {s.mode} mode, {s.trace_jobs} jobs on {s.node_count} nodes ({s.capacity_gpus} GPUs)"
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}figure{margin:1em 0}</style></head><body>\n"
        f"<h1>{html.escape(title)}</h1>\n<p>trace {html.escape(s.trace)}; nodes {html.escape(s.nodes)}; seeds {html.escape(', '.join(map(str, s.seeds)))}</p>\n"
        f"{_table(out)}\n" + "\n".join(figs) + (f"\n<h2>Caveats</h2><ul>{caveats}</ul>" if caveats else "") + "\n</body></html>\n"
    )


__all__ = ["report_html"]
