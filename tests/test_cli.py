"""End-to-end checks of the CLI wiring: inspect, validate, schema, plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io.loader import load_snapshot
from gangplan.models.result import Result, Status
from gangplan.solver.outcome import build_result

SHOWCASE = Path(__file__).resolve().parent.parent / "scenarios" / "showcase"
runner = CliRunner()


def showcase_snapshots() -> list[Path]:
    return sorted(p for p in SHOWCASE.iterdir() if p.suffix == ".yaml" or p.is_dir())


@pytest.mark.parametrize("path", showcase_snapshots(), ids=lambda p: p.name)
def test_inspect_summarises_every_showcase_snapshot(path: Path) -> None:
    res = runner.invoke(app, ["inspect", str(path), "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    cluster = load_snapshot(path)
    assert summary["counts"]["nodes"] == len(cluster.nodes)
    assert summary["counts"]["pendingPods"] == len(cluster.pending_pods)
    assert sum(s["count"] for s in summary["nodeShapes"]) == len(cluster.nodes)


def test_inspect_table_names_the_pending_gang() -> None:
    res = runner.invoke(app, ["inspect", str(SHOWCASE / "design-card-a100.yaml")])
    assert res.exit_code == 0
    assert "ml/train" in res.stdout
    assert "MostAllocated" in res.stdout


def test_schema_result_lists_the_contract_keys() -> None:
    res = runner.invoke(app, ["schema", "result"])
    assert res.exit_code == 0
    schema = json.loads(res.stdout)
    for key in (
        "engine",
        "status",
        "pods",
        "groups",
        "victims",
        "objective",
        "bound",
        "gap",
        "wallSeconds",
        "trace",
    ):
        assert key in schema["properties"], key
    group = schema["$defs"]["GroupOutcome"]["properties"]
    assert {"admitted", "placed", "minCount", "domain", "reason"} <= set(group)


def _result(placements: dict[str, str]) -> Result:
    cluster = load_snapshot(SHOWCASE / "design-card-a100.yaml")
    return build_result(cluster, engine="manual", status=Status.HEURISTIC, placements=placements)


def test_validate_accepts_a_valid_result_and_rejects_a_broken_one(tmp_path: Path) -> None:
    snap = str(SHOWCASE / "design-card-a100.yaml")
    good = tmp_path / "good.json"
    good.write_text(_result({"ml/a": "n2", "ml/b": "n2"}).to_json())
    res = runner.invoke(app, ["validate", snap, str(good)])
    assert res.exit_code == 0, res.output
    assert "valid" in res.stdout

    bad = tmp_path / "bad.json"
    bad.write_text(_result({"ml/a": "n1", "ml/b": "n2"}).to_json())
    res = runner.invoke(app, ["validate", snap, str(bad), "--json"])
    assert res.exit_code == 1
    rules = {v["rule"] for v in json.loads(res.stdout)}
    assert rules == {"pod-affinity"}


def test_validate_reports_a_non_result_file_as_bad_input(tmp_path: Path) -> None:
    bogus = tmp_path / "r.json"
    bogus.write_text('{"engine": "greedy"}')
    res = runner.invoke(app, ["validate", str(SHOWCASE / "design-card-a100.yaml"), str(bogus)])
    assert res.exit_code == 2
    assert "r.json" in res.output and "status" in res.output


def test_solve_with_preemption_lists_the_victims_and_the_result_is_valid(tmp_path: Path) -> None:
    snap = (
        Path(__file__).resolve().parent.parent
        / "scenarios"
        / "upstream-preemption"
        / "podgroup-11-partial-wap.yaml"
    )
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["solve", str(snap), "--preemption", "--out", str(out)])
    assert res.exit_code == 0, res.output
    r = Result.from_json(out.read_text())
    assert r.victims == ["podgroup-test/very-low1", "podgroup-test/very-low2"]
    assert runner.invoke(app, ["validate", str(snap), str(out)]).exit_code == 0
    exact_out = tmp_path / "e.json"
    res = runner.invoke(
        app, ["solve", str(snap), "--preemption", "--engine", "exact", "--out", str(exact_out)]
    )
    assert res.exit_code == 0, res.output
    assert Result.from_json(exact_out.read_text()).victims == r.victims
    res = runner.invoke(app, ["diff", str(snap), "--preemption", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["classification"] == "identical"
