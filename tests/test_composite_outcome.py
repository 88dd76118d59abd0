"""A CompositePodGroup has an outcome row in the Result (issue 24): the rule the objective counts
(its children against minGroupCount, its root admitted), so a composite (or a Volcano / KAI job
translated into one) is no longer missing from the outcome."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

import gangplan as gp
from gangplan.cli import app
from gangplan.models.result import Result

ROOT = Path(__file__).resolve().parents[1]
CPG = ROOT / "scenarios" / "showcase" / "tas-cpg-no-backtracking.yaml"


def test_the_composite_has_a_row_in_both_engines_results():
    cluster = gp.load(CPG)
    greedy = gp.solve(cluster)
    optimal = gp.solve(cluster, engine="exact", time_limit=10, workers=1, hint=greedy)
    for r in (greedy, optimal):
        assert gp.validate(cluster, r) == []
    g, o = greedy.composite_groups["train/job"], optimal.composite_groups["train/job"]
    assert (g.admitted, g.groups_admitted, g.need, g.children, g.root) == (False, 0, 2, 2, True)
    assert (o.admitted, o.groups_admitted, o.placed) == (True, 2, 8)
    # the row agrees with the objective's admission tier
    assert optimal.objective["admitted[p=0]"] == 1 and greedy.objective["admitted[p=0]"] == 0
    # and survives the JSON round trip; snapshots without composites carry no key
    assert (
        Result.model_validate_json(optimal.to_json()).composite_groups == optimal.composite_groups
    )
    plain = gp.solve(gp.load(ROOT / "scenarios" / "showcase" / "gang-fits.yaml"))
    assert "compositeGroups" not in plain.to_json()


def test_the_solve_table_lists_the_composite():
    out = CliRunner(env={"COLUMNS": "100"}).invoke(app, ["solve", str(CPG)])
    assert out.exit_code == 0, out.output
    assert (
        "Composite groups" in out.stdout and "train/job" in out.stdout and "0/2 of 2" in out.stdout
    )
