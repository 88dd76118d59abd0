"""Every JSON the CLI prints validates against the schema ``gangplan schema NAME`` exports, every
name in those schemas is camelCase, and the objective and bound list their tiers in one order."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io.loader import load_snapshot
from gangplan.models.documents import SCHEMAS, schema_id
from gangplan.models.result import Result
from gangplan.solver.validate import validate
from tests.schema_check import SchemaError, check, errors

ROOT = Path(__file__).resolve().parent.parent
SHOWCASE = ROOT / "scenarios" / "showcase"
PREEMPTION = ROOT / "scenarios" / "upstream-preemption"
runner = CliRunner()
CAMEL = re.compile(r"^[a-z][a-zA-Z0-9]*$")


def schema(name: str) -> dict:
    res = runner.invoke(app, ["schema", name])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def printed(*args: str, codes: tuple[int, ...] = (0,)) -> object:
    res = runner.invoke(app, list(args))
    assert res.exit_code in codes, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_each_schema_has_its_id_and_only_camel_case_names(name: str) -> None:
    s = schema(name)
    assert s["$id"] == schema_id(name) == f"https://gangplan.io/schemas/{name}-v1.json"
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    names = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            names.extend(node.get("properties", {}))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(s)
    assert names, name
    assert [n for n in names if not CAMEL.match(n)] == []


def test_the_checker_finds_a_wrong_type_a_missing_key_and_an_unknown_key() -> None:
    s = schema("violations")
    assert errors(s, [{"rule": "capacity", "subject": "node/n1", "message": "over"}]) == []
    assert errors(s, [{"rule": 3, "subject": "n", "message": "m"}]) == [
        "$[0].rule: int 3 is not of type ['string']"
    ]
    assert errors(s, [{"rule": "r", "subject": "n"}]) == ["$[0]: missing required key 'message'"]
    assert errors(s, [{"rule": "r", "subject": "n", "message": "m", "min_count": 1}]) == [
        "$[0].min_count: no value is allowed here"
    ]
    with pytest.raises(SchemaError, match="does not implement"):
        check({"type": "string", "pattern": "x"}, "x")


def test_solve_json_and_out_validate_against_the_result_schema(tmp_path: Path) -> None:
    s = schema("result")
    snap = SHOWCASE / "tas-rack-no-backtracking.yaml"
    for engine in ("greedy", "exact"):
        doc = printed(
            "solve",
            str(snap),
            "--engine",
            engine,
            "--json",
            "--out",
            str(tmp_path / f"{engine}.json"),
        )
        check(s, doc)
        check(s, json.loads((tmp_path / f"{engine}.json").read_text()))
        assert validate(load_snapshot(snap), Result.model_validate(doc)) == []
    check(s, printed("solve", str(snap), "-o", "json"))


@pytest.mark.parametrize(
    "args",
    [
        [str(SHOWCASE / "design-card-a100.yaml")],
        [str(SHOWCASE / "two-gangs-compete.yaml")],
        [str(SHOWCASE / "tas-cpg-no-backtracking.yaml")],
        [str(SHOWCASE / "gang-fits.yaml")],
        [str(PREEMPTION / "podgroup-10-gang-with-wap.yaml"), "--preemption"],
    ],
    ids=["design-card", "two-gangs", "tas-cpg", "gang-fits", "preemption"],
)
def test_diff_json_validates_against_the_diff_schema(args: list[str]) -> None:
    doc = printed("diff", *args, "--json", codes=(0, 3))
    check(schema("diff"), doc)
    cluster = load_snapshot(Path(args[0]))
    for side in ("greedy", "optimal"):
        assert validate(cluster, Result.model_validate(doc[side])) == []
    assert doc["schemaVersion"] == 1
    assert {"minCount", "greedyAdmitted", "optimalPlaced", "differs"} <= set(doc["groups"][0])


def test_the_diff_json_holds_each_engines_victims_by_unit_and_priority() -> None:
    doc = printed(
        "diff", str(PREEMPTION / "podgroup-11-partial-wap.yaml"), "--preemption", "--json"
    )
    for side in ("greedy", "optimal"):
        e = doc["engines"][side]
        assert e["victims"] == [
            {
                "unit": "podgroup-test/very-low1",
                "kind": "Pod",
                "priority": 5,
                "pods": ["podgroup-test/very-low1"],
            },
            {
                "unit": "podgroup-test/very-low2",
                "kind": "Pod",
                "priority": 5,
                "pods": ["podgroup-test/very-low2"],
            },
        ]
        assert e["victimsByPriority"] == {"5": 2}
        assert (e["pdbViolations"], e["brokenGroups"]) == (0, [])
        assert sorted(p for u in e["victims"] for p in u["pods"]) == doc[side]["victims"]


def test_diff_suite_json_validates_against_the_suite_schema(tmp_path: Path) -> None:
    suite = tmp_path / "mini"
    suite.mkdir()
    for name in ("design-card-a100.yaml", "gang-fits.yaml"):
        shutil.copy(SHOWCASE / name, suite / name)
    (suite / "broken.yaml").write_text(
        "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: -1}}}]}\n"
    )
    doc = printed("diff", "--suite", str(suite), "--json", codes=(1,))
    check(schema("suite"), doc)
    assert [r["scenario"] for r in doc] == [
        "broken.yaml",
        "design-card-a100.yaml",
        "gang-fits.yaml",
    ]
    assert doc[0]["error"] and doc[0]["diff"] is None
    assert (
        "greedy" not in doc[1]["diff"] and doc[1]["diff"]["classification"] == "greedy-suboptimal"
    )


@pytest.mark.parametrize(
    "path", sorted(p for p in SHOWCASE.iterdir() if p.suffix == ".yaml")[:6], ids=lambda p: p.name
)
def test_inspect_json_validates_against_the_inspect_schema(path: Path) -> None:
    check(schema("inspect"), printed("inspect", str(path), "--json"))


def test_validate_json_validates_against_the_violations_schema(tmp_path: Path) -> None:
    snap = SHOWCASE / "design-card-a100.yaml"
    bad = printed("solve", str(snap), "--json")
    bad["pods"]["ml/a"] = {"node": "n1", "reason": None, "nominated": False}
    bad["pods"]["ml/b"] = {"node": "n2", "reason": None, "nominated": False}
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    doc = printed("validate", str(snap), str(tmp_path / "bad.json"), "--json", codes=(1,))
    check(schema("violations"), doc)
    assert "pod-affinity" in {v["rule"] for v in doc}


def test_bench_json_validates_against_the_bench_row_schema(tmp_path: Path) -> None:
    suite = tmp_path / "cards"
    suite.mkdir()
    shutil.copy(SHOWCASE / "design-card-a100.yaml", suite / "design-card-a100.yaml")
    doc = printed("bench", str(suite), "--out", str(tmp_path / "r.db"), "--json")
    check(schema("bench-row"), doc)
    (row,) = doc
    assert row["taskId"] == "cards/design-card-a100.yaml" and row["status"] == "ok"
    assert {r["engine"] for r in row["runs"]} == {"greedy", "exact"}
    assert (
        row["diff"]["classification"] == "greedy-suboptimal" and row["runs"][0]["violations"] == 0
    )


@pytest.mark.parametrize("objective", ["default", "gpus", "compact"])
def test_objective_and_bound_list_the_tiers_in_the_same_order(objective: str) -> None:
    for snap, extra in (
        (SHOWCASE / "two-gangs-compete.yaml", []),
        (SHOWCASE / "tas-preferred-nvlink.yaml", []),
        (PREEMPTION / "podgroup-11-partial-wap.yaml", ["--preemption"]),
    ):
        doc = printed(
            "solve", str(snap), "--engine", "exact", "--objective", objective, "--json", *extra
        )
        assert validate(load_snapshot(snap), Result.model_validate(doc)) == []
        shared = [k for k in doc["objective"] if k in doc["bound"]]
        assert shared == [k for k in doc["bound"] if k in doc["objective"]]
        assert list(doc["bound"]) == shared
        if objective == "gpus":
            assert shared.index("gpus") < shared.index("placed")


@pytest.mark.parametrize("name", ["preempt-all-mode-unit.yaml", "preempt-one-gang-not-five.yaml"])
def test_the_engines_section_agrees_with_the_disruption_tiers(name: str) -> None:
    doc = printed("diff", str(SHOWCASE / name), "--json", codes=(0, 3))
    check(schema("diff"), doc)
    for side, objective in (
        ("greedy", doc["greedyObjective"]),
        ("optimal", doc["optimalObjective"]),
    ):
        e = doc["engines"][side]
        assert sorted(p for u in e["victims"] for p in u["pods"]) == doc[side]["victims"] != []
        assert sum(e["victimsByPriority"].values()) == objective["victims"]
        assert {k: v for k, v in objective.items() if k.startswith("victims[p=") and v} == {
            f"victims[p={p}]": n for p, n in e["victimsByPriority"].items()
        }
        assert (e["pdbViolations"], len(e["brokenGroups"])) == (
            objective["pdbViolations"],
            objective["brokenGroups"],
        )
