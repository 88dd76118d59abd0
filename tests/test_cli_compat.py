"""CLI contracts kept across changes: ``solve -o FILE`` still writes the Result (``-o`` now also
selects the output format: table, wide, json)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from gangplan.cli import app

SNAPSHOT = Path(__file__).resolve().parent.parent / "scenarios" / "showcase" / "gang-fits.yaml"


def test_solve_dash_o_with_a_file_name_writes_the_result_as_before(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    res = CliRunner().invoke(app, ["solve", str(SNAPSHOT), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["engine"] == "greedy"
    assert "admitted 1/1 groups" in res.stdout


def test_solve_dash_o_json_prints_the_result() -> None:
    res = CliRunner().invoke(app, ["solve", str(SNAPSHOT), "-o", "json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["engine"] == "greedy"
