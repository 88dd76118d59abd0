"""The replay report (issue 41): one colour per policy in every panel, the packing bound drawn as
steps through the percents it was computed at (never above what a policy achieved), a title
that says what was run, no always-empty column, plots at the page's full width. Asserted on the
matplotlib figures the page is drawn from, not on pixels."""

from __future__ import annotations

import bisect
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from matplotlib.colors import to_hex  # noqa: E402

from gangplan.replay.report import (  # noqa: E402
    BOUND_DRAWSTYLE,
    _table,
    fill_plots,
    policy_colours,
    report_html,
    report_title,
    timed_plots,
)
from gangplan.replay.run import replay  # noqa: E402

DATA = Path(__file__).parent / "data" / "replay"


@pytest.fixture(scope="module")
def timed():
    return replay(DATA / "jobs.csv", DATA / "nodes.yaml", mode="timed", policies=["default", "fgd"])


@pytest.fixture(scope="module")
def fill():
    return replay(
        DATA / "jobs.csv",
        DATA / "nodes.yaml",
        mode="fill",
        policies=["default", "fgd"],
        seeds=[1, 2, 3],
    )


def _policy_of(label: str, names) -> str | None:
    head = label.split(" ")[0]
    return head if head in names else None


def test_timed_panels_give_each_policy_one_colour_from_one_mapping(timed):
    colours = policy_colours(timed)
    assert list(colours) == ["default", "fgd"] and colours["default"] != colours["fgd"]
    plots = timed_plots(timed)
    axes = [ax for fig, _ in plots for ax in fig.axes]
    assert len(axes) == 4  # allocated, pending, fragment / stranded, delay CDF
    for ax in axes:
        seen: dict[str, set[str]] = {}
        for line in ax.get_lines():
            p = _policy_of(line.get_label(), colours)
            if p is not None:
                seen.setdefault(p, set()).add(to_hex(line.get_color()))
        assert seen == {p: {c} for p, c in colours.items()}, (ax.get_ylabel(), seen)
    # the third panel, whose colours used to contradict the first two: fragment solid, stranded dashed, same colour
    frag = axes[2]
    styles = {(line.get_label(), line.get_linestyle()) for line in frag.get_lines()}
    assert ("fgd seed 42 fragment", "-") in styles and (
        "fgd seed 42 stranded (dashed)",
        "--",
    ) in styles


def test_fill_curves_bands_and_bound(fill):
    colours = policy_colours(fill)
    [(fig, _)] = fill_plots(fill)
    [ax] = fig.axes
    lines = {line.get_label(): line for line in ax.get_lines()}
    for p, c in colours.items():
        assert to_hex(lines[p].get_color()) == c
    bands = ax.collections
    assert [to_hex(b.get_facecolor()[0], keep_alpha=False) for b in bands] == list(colours.values())
    [bound] = [line for label, line in lines.items() if label.startswith("packing bound")]
    assert bound.get_drawstyle() == BOUND_DRAWSTYLE == "steps-pre"
    b = fill.summary.packing_bound_unallocated_percent
    assert list(bound.get_xdata()) == [int(k) for k in b] and list(bound.get_ydata()) == list(
        b.values()
    )
    # what steps-pre draws at each integer arrived percent: the value computed at the next point
    # at or right of it; never above a policy's mean there (straight lines and where-post steps were)
    ks = [int(k) for k in b]
    for p in colours:
        mean = fill.summary.policies[p].unallocated_percent_mean
        for k, v in mean.items():
            x = int(k)
            if ks[0] <= x <= ks[-1]:
                assert b[str(ks[bisect.bisect_left(ks, x)])] <= v + 1e-6, (p, x)
    # the old drawings were above: straight lines at 49 % and where-post steps at 52 %
    d = fill.summary.policies["default"].unallocated_percent_mean
    assert b["40"] + (b["50"] - b["40"]) * 0.9 > d["49"] and b["50"] > d["52"]


def test_fill_title_says_what_was_run(fill):
    title, what = report_title(fill)
    jobs = sorted(r.jobs for r in fill.summary.runs)
    assert fill.summary.trace_jobs == 40 and jobs[-1] < 40
    assert f"{jobs[0]}-{jobs[-1]} jobs per run" in title and "130 %" in title
    assert "40 jobs" not in title and "the trace's 40 jobs" in what and "seeds 1, 2, 3" in what


def test_regret_column_only_with_data(timed):
    assert "regret GPUs" not in _table(timed)
    runs = [
        r.model_copy(update={"regret_gpus_total": 3 if r.policy == "fgd" else None})
        for r in timed.summary.runs
    ]
    shadowed = type(timed)(timed.summary.model_copy(update={"runs": runs}), timed.fill, timed.timed)
    table = _table(shadowed)
    assert "<th>regret GPUs</th>" in table and "<td>3</td></tr>" in table


def test_plots_span_the_page(timed):
    page = report_html(timed)
    assert "img{display:block;width:100%;height:auto}" in page and "max-width:60em" not in page
    assert "timed mode: 40 jobs on 8 nodes (64 GPUs)" in page
