"""The showcase suite: every scenario's expectations, and the decisive step of the design card."""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplan.io.loader import load_snapshot
from gangplan.solver.diff import GREEDY_SUBOPTIMAL, diff_snapshot
from gangplan.solver.suite import run_scenario, suite_entries
from gangplan.solver.validate import validate

SHOWCASE = Path(__file__).resolve().parent.parent / "scenarios" / "showcase"


@pytest.mark.parametrize("path", suite_entries(SHOWCASE), ids=lambda p: p.name)
def test_showcase_scenario_meets_its_expectations(path: Path) -> None:
    row = run_scenario(path, time_limit=20.0, probe_time_limit=10.0)
    assert row.error is None
    assert row.expectations > 0, "every showcase scenario states its expected outcome"
    assert row.failures == []
    cluster = load_snapshot(path)
    assert validate(cluster, row.diff.greedy) == []
    assert validate(cluster, row.diff.optimal) == []
    assert row.diff.problems == []


def test_design_card_decisive_step_is_pod_a_choosing_n1_over_n2() -> None:
    path = SHOWCASE / "design-card-a100.yaml"
    d = diff_snapshot(load_snapshot(path), snapshot=str(path))
    assert d.classification == GREEDY_SUBOPTIMAL
    s = d.decisive
    assert s is not None
    assert (s.pod, s.greedy_node, s.optimal_node) == ("ml/a", "n1", "n2")
    assert s.greedy_scores["total"] > s.optimal_scores["total"]
    assert s.failed_pod == "ml/b"
    assert "0/2 nodes are available" in s.failed_reason
