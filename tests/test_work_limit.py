"""Issue 37: the exact engine's budget is deterministic work, and a budget too small to prove
gives ``unproven``, never ``identical`` / ``equivalent`` / ``tie-break``.

The snapshot is the generator's GB200 NVL72 shape (432 nodes, 60 rack-held gangs, seed 2): with
0.02 units of work the exact engine finds nothing better than greedy but cannot close the
admission tier (bound one group above); with 1 unit it proves a placement that admits one more
group. Same input and options give the same bytes: the work limit, not the clock, decides.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gangplan.bench.generators.topology_shapes import generate_shape
from gangplan.cli import app
from gangplan.io.loader import load_pairs
from gangplan.models.base import without_time
from gangplan.models.result import Status
from gangplan.solver.diff import GREEDY_SUBOPTIMAL, UNPROVEN, diff_snapshot
from gangplan.solver.exact.budget import Budget, Meter
from gangplan.solver.validate import validate

SHAPE = dict(nodes=432, utilisation=0.4, seed=2, gangs=60)
TINY = 0.02


@pytest.fixture(scope="module")
def cluster():
    objs = generate_shape("gb200-nvl72", **SHAPE)
    return load_pairs([("gb200-432.yaml", o) for o in objs], sources=("gb200-432.yaml",))


def test_a_tiny_work_limit_is_unproven_and_more_work_proves_the_difference(cluster) -> None:
    d = diff_snapshot(cluster, time_limit=TINY, explain=False)
    assert validate(cluster, d.greedy) == [] and validate(cluster, d.optimal) == []
    assert d.classification == UNPROVEN and d.exit_code == 5
    assert d.optimal.status == Status.FEASIBLE
    assert d.proof.first_open == "admitted[p=0]" and d.proof.might_gain == 1.0
    assert d.proof.stopped_by == "work-limit" and d.optimal.params["stoppedBy"] == "work-limit"
    assert "up to 1 more groups" in d.proof.advice
    more = diff_snapshot(cluster, time_limit=1.0, explain=False)
    assert validate(cluster, more.optimal) == []
    assert more.classification == GREEDY_SUBOPTIMAL and more.proof.proven
    top = "admitted[p=0]"
    assert more.optimal.objective[top] == d.greedy.objective[top] + d.proof.might_gain


def test_the_same_work_limit_gives_the_same_bytes(cluster) -> None:
    a = diff_snapshot(cluster, time_limit=TINY, explain=False).to_dict()
    b = diff_snapshot(cluster, time_limit=TINY, explain=False).to_dict()
    assert json.dumps(without_time(a)) == json.dumps(without_time(b))
    work = a["optimal"]["trace"]["timing"]["work"]
    assert work == b["optimal"]["trace"]["timing"]["work"] and work > 0


def test_the_cli_exits_5_and_says_what_to_do(tmp_path: Path) -> None:
    runner = CliRunner()
    snap = tmp_path / "gb200.yaml"
    res = runner.invoke(
        app,
        [
            "generate",
            "gb200-nvl72",
            "--nodes",
            "432",
            "--gangs",
            "60",
            "--seed",
            "2",
            "--utilisation",
            "0.4",
            "--out",
            str(snap),
        ],
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["diff", str(snap), "--time-limit", str(TINY)], env={"COLUMNS": "100"})
    assert res.exit_code == 5, res.output
    text = " ".join(res.stdout.split())
    assert "verdict unproven" in text and "stopped by the work limit" in text
    assert (
        "up to 1 more groups or single pods at priority 0 might be admitted; rerun with --time-limit 60"
        in text
    )


def test_a_wall_clock_cap_that_stops_the_search_is_reported() -> None:
    objs = generate_shape("gb200-nvl72", nodes=720, utilisation=0.4, seed=0, gangs=60)
    cluster = load_pairs([("gb200-720.yaml", o) for o in objs], sources=("gb200-720.yaml",))
    d = diff_snapshot(cluster, time_limit=50.0, wall_limit=0.01, explain=False)
    assert validate(cluster, d.optimal) == []
    assert d.classification == UNPROVEN and d.proof.stopped_by == "wall-clock"
    assert d.optimal.params["stoppedBy"] == "wall-clock" and d.optimal.params["wallLimit"] == 0.01
    from gangplan.render import proof_lines

    assert "stopped by the wall-clock cap: another run may differ" in proof_lines(d.proof)[0]


def test_budget_shares_and_meter_count_work_not_time() -> None:
    b = Budget(2.0, wall=100.0)
    child = b.sub(1.5)
    child.charge(1.0)
    assert b.used == 1.0 and child.left() == 0.5 and b.left() == 1.0
    child.charge(1.0)
    assert child.left() == 0.0 and b.left() == 0.0 and not b.wall_hit
    m = Meter(Budget(1.0, wall=100.0), 0.5)
    m.tick(1_000_000)
    assert not m.done() and m.units == 0.25
    m.tick(1_000_000)
    assert m.done() and m.budget.used == 0.5
    late = Budget(1.0, wall=0.0)
    assert late.exhausted() and late.wall_hit
