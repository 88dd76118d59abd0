"""``--trace none|summary|full`` (issue 27): what each level keeps of a Result and a diff, and the
deferred placement entries of counted decisions (:meth:`PlacementDecision.entries`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gangplan.bench.generators.builders import to_cluster
from gangplan.bench.generators.topology_shapes import generate_shape
from gangplan.models.result import Result
from gangplan.solver.greedy import placement_decision, solve_greedy
from gangplan.solver.validate import validate

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def run():
    cluster = to_cluster(
        generate_shape("dgx-h100-superpod", nodes=256, utilisation=0.6, seed=3, gangs=24)
    )
    r = solve_greedy(cluster)
    assert validate(cluster, r) == []
    return cluster, r


def decisions(data):
    return {g: t["placements"] for g, t in data["trace"]["groups"].items() if "placements" in t}


def test_full_lists_every_generated_placement_and_summary_keeps_chosen_runner_up_or_reported(run):
    _, r = run
    full, summary = decisions(r.to_dict(trace="full")), decisions(r.to_dict(trace="summary"))
    assert full and full.keys() == summary.keys()
    for g, d in full.items():
        s = summary[g]
        assert (
            len(d["evaluated"]) == d["generated"]
        )  # no nominations here: every placement evaluated
        assert {k: v for k, v in s.items() if k != "evaluated"} == {
            k: v for k, v in d.items() if k != "evaluated"
        }
        names = [e["name"] for e in s["evaluated"]]
        assert names == [
            e["name"] for e in d["evaluated"] if e["name"] in names
        ]  # evaluation order kept
        feasible = [
            e for e in d["evaluated"] if e["status"] == "Success" and e["name"] != d["chosen"]
        ]
        if d["chosen"] is not None:
            assert d["chosen"] in names
        else:
            assert names[0] == d["evaluated"][0]["name"]
        if feasible:
            best = max(e["total"] if e["total"] is not None else -1 for e in feasible)
            assert any(
                e["name"] in names and (e["total"] if e["total"] is not None else -1) == best
                for e in feasible
            )
        assert len(names) <= 3


def test_deferred_entries_are_the_counted_ones_with_their_fit_error(run):
    _, r = run
    failed = [
        e
        for d in decisions(r.to_dict(trace="full")).values()
        for e in d["evaluated"]
        if e["status"] != "Success"
    ]
    assert failed and all(e["reason"] and "minCount" in e["reason"] for e in failed)


def test_levels_round_trip_and_none_drops_the_trace(run):
    _, r = run
    for level in ("summary", "full"):
        back = Result.from_json(r.to_json(trace=level))
        assert back.placements() == r.placements()
    assert r.to_dict(trace="none")["trace"] == {}
    assert r.to_json() == r.to_json(trace="full")
    with pytest.raises(ValueError, match="unknown trace level"):
        r.to_dict(trace="everything")


def test_placement_lookup_reads_deferred_entries(run):
    _, r = run
    for g, cycle in r.greedy_trace.groups.items():
        if cycle.placements is None:
            continue
        every = [e.name for e in cycle.placements.entries()]
        got = placement_decision(cycle.placements, every)["placements"]
        assert all(v["status"] != "NotEvaluated" for v in got.values()), g


def test_cli_default_json_is_the_summary(run, tmp_path):
    from typer.testing import CliRunner

    from gangplan.cli import app
    from gangplan.io.writer import write_snapshot

    path = tmp_path / "s.yaml"
    write_snapshot(
        generate_shape("dgx-h100-superpod", nodes=256, utilisation=0.6, seed=3, gangs=24), path
    )
    out = CliRunner().invoke(app, ["solve", str(path), "--json"])
    assert out.exit_code == 0, out.output
    full = CliRunner().invoke(app, ["solve", str(path), "--json", "--trace", "full"])
    s, f = json.loads(out.stdout), json.loads(full.stdout)
    assert s["pods"] == f["pods"] and len(out.stdout) < len(full.stdout)
    assert decisions(s) == decisions(Result.from_json(full.stdout).to_dict(trace="summary"))
