"""The human output at 100 columns: summary first, one-line cells, nothing wider than the terminal.

Snapshot files live in ``tests/snapshots/``; timings are replaced by ``<t>`` before comparing.
Regenerate them with ``GANGPLAN_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_human_output.py``
after a deliberate change, and read the diff.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io.loader import load_snapshot
from gangplan.summary import summarize

ROOT = Path(__file__).resolve().parent.parent
SHOWCASE = ROOT / "scenarios" / "showcase"
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
runner = CliRunner()
TIME = re.compile(r"\b\d+\.\d+ s\b")


def run(*args: str, columns: int = 100, code: int = 0) -> str:
    res = runner.invoke(app, list(args), env={"COLUMNS": str(columns)})
    assert res.exit_code == code, res.output
    assert res.stderr == ""  # no spinner: stderr is not a terminal
    return res.stdout


def normalise(text: str) -> str:
    return "\n".join(TIME.sub("<t> s", line).rstrip() for line in text.splitlines()) + "\n"


def matches_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    got = normalise(text)
    if os.environ.get("GANGPLAN_UPDATE_SNAPSHOTS"):
        path.write_text(got)
    assert got == path.read_text()


CASES = [
    ("diff-design-card-a100.txt", ["diff", str(SHOWCASE / "design-card-a100.yaml")], 3),
    ("diff-two-gangs-compete.txt", ["diff", str(SHOWCASE / "two-gangs-compete.yaml")], 3),
    (
        "diff-tas-rack-no-backtracking.txt",
        ["diff", str(SHOWCASE / "tas-rack-no-backtracking.yaml")],
        3,
    ),
    ("solve-dedicated-gpu-pool.txt", ["solve", str(SHOWCASE / "dedicated-gpu-pool.yaml")], 0),
]


@pytest.mark.parametrize(("name", "args", "code"), CASES, ids=[c[0] for c in CASES])
def test_human_output_at_100_columns_matches_its_snapshot(
    name: str, args: list[str], code: int
) -> None:
    text = run(*[a.replace(str(ROOT) + "/", "") for a in args], code=code)
    assert max(len(line) for line in text.splitlines()) <= 100
    matches_snapshot(name, text)


def test_the_summary_comes_first_with_the_verdict_admissions_and_a_three_line_decisive_step() -> (
    None
):
    lines = run("diff", "scenarios/showcase/design-card-a100.yaml", code=3).splitlines()
    assert lines[0] == "scenarios/showcase/design-card-a100.yaml"
    assert lines[1].startswith("  verdict    greedy-suboptimal")
    assert lines[2] == "  proof      proven: admitted[p=0], placed"
    assert lines[3].startswith("  admitted   greedy 0/1 groups, optimal 1/1")
    decisive = [i for i, line in enumerate(lines) if line.startswith("  decisive ")]
    assert decisive == [5]
    assert lines[5:8] == [
        "  decisive   greedy choice #1: ml/a (ml/train) -> n1; no optimal placement shares it",
        "             the optimum puts it on n2 (greedy scored n1 416, n2 409)",
        "             then ml/b failed: 0/2 nodes: Insufficient nvidia.com/gpu; didn't match pod affinity ru…",
    ]
    assert lines[8] == "" and lines.index("Objective (lexicographic, highest tier first)") > 8


def test_wide_output_shows_the_full_reasons(tmp_path: Path) -> None:
    narrow = run("diff", "scenarios/showcase/two-gangs-compete.yaml", code=3)
    wide = run("diff", "scenarios/showcase/two-gangs-compete.yaml", "-o", "wide", code=3)
    full = "PodGroup team-b/large: minCount 4 not reached (2 of 4 pods schedulable)"
    assert full not in " ".join(narrow.split()) and full in " ".join(wide.split())
    assert "…" in narrow and "…" not in wide


def test_single_pods_are_listed_with_their_node_or_reason(load_text) -> None:
    text = run("solve", "scenarios/showcase/dedicated-gpu-pool.yaml")
    assert "ml/dashboard   cpu-1" in text


def test_a_single_pod_that_does_not_fit_shows_its_reason(write_text) -> None:
    snap = write_text("""\
        apiVersion: v1
        kind: Node
        metadata: {name: n1}
        status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: big, namespace: default}
        spec: {containers: [{name: c, resources: {requests: {cpu: "4"}}}]}
        """)
    text = run("diff", str(snap))
    assert re.search(
        r"default/big\s+not placed: 0/1 nodes: Insufficient cpu\s+not placed: not placed in the optimum",
        text,
    )
    text = run("solve", str(snap))
    assert re.search(r"default/big\s+-\s+0/1 nodes: Insufficient cpu", text)


def test_the_32_gang_dgx_case_says_the_difference_is_admission_and_names_the_groups(
    dgx32, tmp_path: Path
) -> None:
    from rich.console import Console

    from gangplan.render import render_diff

    snap = tmp_path / "dgx.yaml"
    run(
        "generate", "dgx-h100-superpod", "--gangs", "32", "--utilisation", "0.4", "--out", str(snap)
    )
    same = [summarize(c) | {"sources": []} for c in (load_snapshot(snap), dgx32[0])]
    assert same[0] == same[1]  # the fixture is the snapshot the command writes
    console = Console(width=100, record=True, file=io.StringIO())
    render_diff(console, dgx32[1])
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= 100
    assert lines[1].startswith("  verdict    greedy-suboptimal")
    assert lines[2] == "  proof      proven: admitted[p=0], placed"
    assert lines[3] == "  admitted   greedy 14/32 groups, optimal 16/32"
    decisive = next(i for i, line in enumerate(lines) if line.startswith("  decisive "))
    assert decisive <= 5
    assert lines[decisive].startswith(
        "  decisive   admission, not placement: no optimum keeps greedy choice #"
    )
    assert (
        lines[decisive + 1].startswith("             the optimum gives up train/gang-")
        and "nvidia.com/gpu" in lines[decisive + 1]
    )
    assert lines[decisive + 2].startswith("             to admit train/gang-")
    assert "train/gang-00" not in "\n".join(
        lines[decisive : decisive + 3]
    )  # rejected by both: never blamed
    assert len(lines) < 60
