"""The bench report: pandas tables (CSV, Parquet when pyarrow is there) and an HTML page of plots.

It answers "how often, by how much, and at what cost does greedy lose to the optimum?":

* ``families.csv``  per family: snapshots, failures, classifications, the share where greedy is
  suboptimal, admitted groups and placed GPUs of both engines, exact solve time, greedy pods/s;
* ``snapshots.csv`` per snapshot: size, status, classification and both engines' numbers side by side;
* ``runs.csv`` / ``tasks.csv`` / ``diffs.csv``: the database tables as they are;
* ``index.html``: the family and snapshot tables and four plots (PNG, embedded), or with
  ``compare`` the two databases side by side.

Numbers are copied from the database unchanged (HTML floats are printed with ``repr``, which reads
back to the same float); only the per-family aggregates are computed here, rounded to 4 decimals.
"""

from __future__ import annotations

import base64
import html
import io
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from gangplan.bench.store import DIFF_COLUMNS, FAILED, RUN_COLUMNS, TASK_COLUMNS
from gangplan.io.errors import SnapshotError

CLASSES = (
    "identical",
    "tie-break",
    "equivalent",
    "greedy-suboptimal",
    "model-mismatch",
    "unproven",
)
CLASS_COLORS = {
    "identical": "#4c72b0",
    "tie-break": "#64b5cd",
    "equivalent": "#8172b2",
    "greedy-suboptimal": "#dd8452",
    "model-mismatch": "#c44e52",
    "unproven": "#b35ab3",
    "error": "#7f7f7f",
    "timeout": "#b0b0b0",
    "crashed": "#404040",
}
HTML_ROW_LIMIT = 5000
ENGINE_FIELDS = (
    "status",
    "admitted_groups",
    "groups",
    "placed_pods",
    "pending_pods",
    "placed_gpus",
    "victims",
    "gap",
    "violations",
    "wall_seconds",
)


@dataclass
class BenchData:
    """The three tables of one database, plus the per-snapshot and per-family views."""

    name: str
    tasks: pd.DataFrame
    runs: pd.DataFrame
    diffs: pd.DataFrame
    snapshots: pd.DataFrame = field(init=False)
    families: pd.DataFrame = field(init=False)
    meta: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.snapshots = snapshot_table(self.tasks, self.runs, self.diffs)
        self.families = family_table(self.snapshots)


def _meta(conn: sqlite3.Connection) -> dict[str, object]:
    return {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM meta")}


def load(db_path: str | Path) -> BenchData:
    p = Path(db_path)
    if not p.is_file():
        raise SnapshotError(str(p), "no such results database")
    try:
        conn = sqlite3.connect(f"file:{p.resolve()}?mode=ro", uri=True)
        try:
            tasks = pd.read_sql_query(
                f"SELECT {', '.join(TASK_COLUMNS)} FROM tasks ORDER BY task_id", conn
            )
            runs = pd.read_sql_query(
                f"SELECT {', '.join(RUN_COLUMNS)} FROM runs ORDER BY task_id, engine", conn
            )
            diffs = pd.read_sql_query(
                f"SELECT {', '.join(DIFF_COLUMNS)} FROM diffs ORDER BY task_id", conn
            )
            meta = _meta(conn)
        finally:
            conn.close()
    except (sqlite3.DatabaseError, pd.errors.DatabaseError) as e:
        raise SnapshotError(str(p), f"not a gangplan results database: {e}") from None
    data = BenchData(p.stem, tasks, runs, diffs)
    data.meta = meta
    return data


# ---- tables -----------------------------------------------------------------------------------
def snapshot_table(tasks: pd.DataFrame, runs: pd.DataFrame, diffs: pd.DataFrame) -> pd.DataFrame:
    """One row per snapshot: its size and status, the classification, greedy_* and exact_* columns."""
    base = tasks[
        [
            "task_id",
            "family",
            "seed",
            "status",
            "error",
            "nodes",
            "pending_pods",
            "groups",
            "gpus",
            "free_gpus",
        ]
    ].copy()
    for engine in ("greedy", "exact"):
        part = runs[runs["engine"] == engine][["task_id", *ENGINE_FIELDS]]
        base = base.merge(
            part.rename(columns={c: f"{engine}_{c}" for c in ENGINE_FIELDS}),
            on="task_id",
            how="left",
        )
    base = base.merge(
        diffs[["task_id", "classification", "decisive_step", "first_problem"]],
        on="task_id",
        how="left",
    )
    base["outcome"] = base["classification"].where(base["classification"].notna(), base["status"])
    secs = base["greedy_wall_seconds"]
    base["greedy_pods_per_s"] = (base["greedy_pending_pods"] / secs.where(secs > 0)).round(1)
    base["why"] = base["first_problem"].where(
        base["first_problem"].notna(), base["error"]
    )  # mismatch or failure
    return base.drop(columns=["first_problem", "error"])


FAMILY_COLUMNS = [
    "family",
    "snapshots",
    "diffed",
    "failed",
    *CLASSES,
    "suboptimal_share",
    "greedy_admitted_groups_mean",
    "exact_admitted_groups_mean",
    "greedy_placed_gpus_mean",
    "exact_placed_gpus_mean",
    "exact_optimal_share",
    "exact_seconds_median",
    "exact_seconds_max",
    "greedy_pods_per_s_median",
    "violations",
]


def family_table(snap: pd.DataFrame) -> pd.DataFrame:
    """Per family: counts per outcome, share greedy-suboptimal among diffed snapshots, means, times."""
    rows = []
    for fam, g in snap.groupby("family", sort=True):
        diffed = g[g["classification"].notna()]
        row = {
            "family": fam,
            "snapshots": len(g),
            "diffed": len(diffed),
            "failed": int(g["status"].isin(FAILED).sum()),
        }
        for c in CLASSES:
            row[c] = int((g["classification"] == c).sum())
        row["suboptimal_share"] = (
            round(row["greedy-suboptimal"] / len(diffed), 4) if len(diffed) else np.nan
        )
        for col in ("admitted_groups", "placed_gpus"):
            for engine in ("greedy", "exact"):
                row[f"{engine}_{col}_mean"] = (
                    round(float(diffed[f"{engine}_{col}"].mean()), 4) if len(diffed) else np.nan
                )
        row["exact_optimal_share"] = (
            round(float((diffed["exact_status"] == "OPTIMAL").mean()), 4) if len(diffed) else np.nan
        )
        row["exact_seconds_median"] = (
            round(float(diffed["exact_wall_seconds"].median()), 4) if len(diffed) else np.nan
        )
        row["exact_seconds_max"] = (
            round(float(diffed["exact_wall_seconds"].max()), 4) if len(diffed) else np.nan
        )
        row["greedy_pods_per_s_median"] = (
            round(float(diffed["greedy_pods_per_s"].median()), 1) if len(diffed) else np.nan
        )
        row["violations"] = (
            int(diffed["greedy_violations"].sum() + diffed["exact_violations"].sum())
            if len(diffed)
            else 0
        )
        rows.append(row)
    return pd.DataFrame(rows, columns=FAMILY_COLUMNS)


def write_tables(data: BenchData, out: Path, prefix: str = "") -> list[str]:
    """CSV always, Parquet when pyarrow is importable; returns the file names written."""
    names = []
    frames = {
        "families": data.families,
        "snapshots": data.snapshots,
        "runs": data.runs,
        "tasks": data.tasks,
        "diffs": data.diffs,
    }
    try:
        import pyarrow  # noqa: F401

        parquet = True
    except ImportError:
        parquet = False
    for name, df in frames.items():
        df.to_csv(out / f"{prefix}{name}.csv", index=False)
        names.append(f"{prefix}{name}.csv")
        if parquet:
            df.to_parquet(out / f"{prefix}{name}.parquet", index=False)
            names.append(f"{prefix}{name}.parquet")
    return names


# ---- plots ------------------------------------------------------------------------------------
def _figure(width: float = 7.0, height: float = 4.0, ncols: int = 1):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, ncols, figsize=(width, height), squeeze=False)
    return fig, list(axes[0])


def _legend(ax, **options) -> None:
    if ax.get_legend_handles_labels()[0]:  # an empty database draws no points
        ax.legend(**options)


def _png(fig) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def plot_outcomes(datasets: Sequence[BenchData]) -> bytes:
    """Stacked bars: the share of each outcome per family (one bar per database and family)."""
    fams = sorted(set().union(*(set(d.snapshots["family"]) for d in datasets)))
    fig, (ax,) = _figure(8.0, max(2.6, 1.3 + 0.45 * len(fams) * len(datasets)))
    labels, y = [], 0
    for fam in reversed(fams):
        for d in reversed(datasets):
            g = d.snapshots[d.snapshots["family"] == fam]
            left = 0.0
            for outcome in (*CLASSES, *FAILED):
                share = float((g["outcome"] == outcome).mean()) if len(g) else 0.0
                if share:
                    ax.barh(
                        y,
                        share,
                        left=left,
                        color=CLASS_COLORS[outcome],
                        label=outcome if outcome not in ax.get_legend_handles_labels()[1] else None,
                    )
                left += share
            sub = float((g["outcome"] == "greedy-suboptimal").mean()) if len(g) else 0.0
            ax.text(
                1.01,
                y,
                f"{sub:.0%}",
                va="center",
                fontsize=8,
                color=CLASS_COLORS["greedy-suboptimal"],
            )
            labels.append(fam if len(datasets) == 1 else f"{fam} [{d.name}]")
            y += 1
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_xlim(0, 1.08)
    ax.set_xlabel("share of snapshots (right: greedy-suboptimal)")
    ax.set_title("How often greedy loses to the optimum, by family")
    _legend(ax, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=4, fontsize=8, frameon=False)
    return _png(fig)


def plot_greedy_vs_optimal(datasets: Sequence[BenchData]) -> bytes:
    """Scatter: admitted groups and placed GPUs, greedy (x) against the optimum (y)."""
    fig, axes = _figure(10.0, 4.4, ncols=2)
    markers = ("o", "s", "^", "D", "v", "P", "X", "*")
    for ax, col, title in zip(
        axes, ("admitted_groups", "placed_gpus"), ("admitted groups", "placed GPUs"), strict=True
    ):
        top = 1.0
        for di, d in enumerate(datasets):
            s = d.snapshots[d.snapshots["classification"].notna()]
            for fi, (fam, g) in enumerate(s.groupby("family", sort=True)):
                label = fam if len(datasets) == 1 else f"{fam} [{d.name}]"
                ax.scatter(
                    g[f"greedy_{col}"],
                    g[f"exact_{col}"],
                    s=22,
                    alpha=0.6,
                    marker=markers[(fi + di) % len(markers)],
                    label=label,
                )
                top = max(top, float(g[[f"greedy_{col}", f"exact_{col}"]].max().max()))
        ax.plot([0, top], [0, top], color="#999999", lw=1, ls="--")
        if top > 50:  # a few large snapshots would squash the rest into a corner
            ax.set_xscale("symlog", linthresh=10)
            ax.set_yscale("symlog", linthresh=10)
        ax.set_xlabel(f"greedy: {title}")
        ax.set_ylabel(f"optimal: {title}")
        ax.set_title(f"{title}: points above the line = greedy lost")
    _legend(axes[1], fontsize=7, loc="lower right")
    return _png(fig)


def plot_exact_cost(datasets: Sequence[BenchData]) -> bytes:
    """Exact solve time and gap against cluster size (nodes), log scales."""
    fig, axes = _figure(10.0, 4.2, ncols=2)
    status_colors = {
        "OPTIMAL": "#4c72b0",
        "FEASIBLE": "#dd8452",
        "UNKNOWN": "#c44e52",
        "INFEASIBLE": "#404040",
    }
    for d in datasets:
        s = d.snapshots[d.snapshots["exact_status"].notna()]
        for status, g in s.groupby("exact_status", sort=True):
            label = status if len(datasets) == 1 else f"{status} [{d.name}]"
            axes[0].scatter(
                g["nodes"],
                g["exact_wall_seconds"].clip(lower=1e-4),
                s=18,
                alpha=0.6,
                color=status_colors.get(status),
                label=label,
            )
            axes[1].scatter(
                g["nodes"],
                g["exact_gap"].fillna(0.0),
                s=18,
                alpha=0.6,
                color=status_colors.get(status),
                label=label,
            )
    axes[0].set_xscale("log")
    axes[0].set_yscale("log")
    axes[0].set_title("exact solve time")
    axes[0].set_ylabel("seconds")
    axes[1].set_xscale("log")
    axes[1].set_yscale("symlog", linthresh=1e-3)
    axes[1].set_ylim(bottom=-1e-4)
    axes[1].set_title("exact gap (0 = proven optimal)")
    axes[1].set_ylabel("relative gap")
    for ax in axes:
        ax.set_xlabel("nodes")
        _legend(ax, fontsize=7)
    return _png(fig)


def plot_greedy_speed(datasets: Sequence[BenchData]) -> bytes:
    """Greedy throughput: pending pods per second against pending pods, log scales."""
    fig, (ax,) = _figure(7.0, 4.2)
    for d in datasets:
        s = d.snapshots[d.snapshots["greedy_pods_per_s"].notna()]
        for fam, g in s.groupby("family", sort=True):
            ax.scatter(
                g["greedy_pending_pods"],
                g["greedy_pods_per_s"],
                s=18,
                alpha=0.6,
                label=fam if len(datasets) == 1 else f"{fam} [{d.name}]",
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("pending pods")
    ax.set_ylabel("greedy pods / s")
    ax.set_title("Greedy engine throughput")
    _legend(ax, fontsize=7)
    return _png(fig)


PLOTS = {
    "outcomes.png": (
        plot_outcomes,
        "Share of each outcome per family; the number is the share where greedy is suboptimal.",
    ),
    "greedy_vs_optimal.png": (
        plot_greedy_vs_optimal,
        "Admitted groups and placed GPUs: greedy against the optimum.",
    ),
    "exact_cost.png": (plot_exact_cost, "Exact engine: solve time and gap against cluster size."),
    "greedy_speed.png": (plot_greedy_speed, "Greedy engine: pods per second."),
}


# ---- HTML -------------------------------------------------------------------------------------
def _cell(v: object) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
        return ""
    if isinstance(v, float | np.floating):
        f = float(v)
        return str(int(f)) if f.is_integer() and abs(f) < 1e15 else repr(f)
    if isinstance(v, np.integer):
        return str(int(v))
    return html.escape(str(v))


def html_table(df: pd.DataFrame, table_id: str, limit: int = HTML_ROW_LIMIT) -> str:
    """A plain HTML table; floats print as ``repr`` so they read back to the database's value."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = []
    for row in df.head(limit).itertuples(index=False):
        body.append("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>")
    more = f"<p>{len(df) - limit} more rows in the CSV.</p>" if len(df) > limit else ""
    return f'<table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>{more}'


_STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1400px}table{border-collapse:collapse;font-size:12px;margin-bottom:1em}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
img{max-width:100%;border:1px solid #eee;margin:0.5em 0}.scroll{max-height:480px;overflow:auto}"""


def _page(title: str, sections: list[str]) -> str:
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title><style>{_STYLE}</style></head>'
        f"<body><h1>{html.escape(title)}</h1>\n" + "\n".join(sections) + "\n</body></html>\n"
    )


def _img(png: bytes, alt: str) -> str:
    return f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}"><figcaption>{html.escape(alt)}</figcaption></figure>'


def _about(d: BenchData, db_path: str | Path) -> str:
    opts = d.meta.get("options") or {}
    limit = opts.get("time_limit") if isinstance(opts, dict) else None
    return (
        f"<p>Database <code>{html.escape(str(db_path))}</code>: suite <b>{html.escape(str(d.meta.get('suite', '?')))}</b>, "
        f"{len(d.tasks)} snapshots, exact time limit {html.escape(str(limit))} s per phase. "
        "<i>suboptimal_share</i> = greedy-suboptimal / diffed snapshots; means are over diffed snapshots; "
        "<i>failed</i> = error, timeout or crashed.</p>"
    )


def comparison_table(a: BenchData, b: BenchData) -> pd.DataFrame:
    """Per family, key numbers of both databases next to each other (suffixes ``_a`` / ``_b``)."""
    keep = [
        "family",
        "snapshots",
        "failed",
        "greedy-suboptimal",
        "suboptimal_share",
        "greedy_admitted_groups_mean",
        "exact_admitted_groups_mean",
        "exact_seconds_median",
        "greedy_pods_per_s_median",
    ]
    return (
        a.families[keep]
        .merge(b.families[keep], on="family", how="outer", suffixes=("_a", "_b"))
        .sort_values("family")
    )


def paired_snapshots(a: BenchData, b: BenchData) -> pd.DataFrame:
    """The snapshots both databases ran, with outcome and admitted groups from each."""
    cols = [
        "task_id",
        "family",
        "outcome",
        "greedy_admitted_groups",
        "exact_admitted_groups",
        "exact_status",
    ]
    return (
        a.snapshots[cols]
        .merge(b.snapshots[cols], on=["task_id", "family"], suffixes=("_a", "_b"))
        .sort_values("task_id")
    )


def build_report(
    db_path: str | Path, out_dir: str | Path, *, compare: str | Path | None = None
) -> Path:
    """Write the tables and ``index.html`` into ``out_dir``; returns the HTML path."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SnapshotError(
            str(out), f"cannot create the report directory: {e.strerror or e}"
        ) from None
    a = load(db_path)
    datasets = [a]
    sections = []
    if compare is not None:
        b = load(compare)
        if b.name == a.name:
            a.name, b.name = str(db_path), str(compare)
        datasets.append(b)
        files = write_tables(a, out, "a_") + write_tables(b, out, "b_")
        comp, pairs = comparison_table(a, b), paired_snapshots(a, b)
        comp.to_csv(out / "compare_families.csv", index=False)
        pairs.to_csv(out / "compare_snapshots.csv", index=False)
        files += ["compare_families.csv", "compare_snapshots.csv"]
        title = f"gangplan bench: {a.name} (a) vs {b.name} (b)"
        sections += [_about(a, db_path), _about(b, compare)]
        sections.append(f"<h2>Families, side by side</h2>{html_table(comp, 'compare-families')}")
    else:
        files = write_tables(a, out)
        title = f"gangplan bench: {a.name}"
        sections.append(_about(a, db_path))
        sections.append(f"<h2>Families</h2>{html_table(a.families, 'families')}")
    for name, (plot, caption) in PLOTS.items():
        png = plot(datasets)
        (out / name).write_bytes(png)
        files.append(name)
        sections.append(_img(png, caption))
    if compare is not None:
        sections.append(
            f'<h2>Snapshots in both</h2><div class="scroll">{html_table(pairs, "compare-snapshots")}</div>'
        )
    for d, tag in zip(datasets, ("a-", "b-") if compare is not None else ("",), strict=False):
        sections.append(
            f'<h2>Snapshots{f" ({d.name})" if compare is not None else ""}</h2><div class="scroll">{html_table(d.snapshots, tag + "snapshots")}</div>'
        )
        sections.append(
            f'<h2>Runs{f" ({d.name})" if compare is not None else ""}</h2><div class="scroll">{html_table(d.runs, tag + "runs")}</div>'
        )
    sections.append("<p>Files: " + ", ".join(f'<a href="{f}">{f}</a>' for f in files) + "</p>")
    index = out / "index.html"
    index.write_text(_page(title, sections), encoding="utf-8")
    return index


__all__ = [
    "BenchData",
    "PLOTS",
    "build_report",
    "family_table",
    "html_table",
    "load",
    "snapshot_table",
]
