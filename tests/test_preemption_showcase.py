"""The preemption showcase (issue 12, part 5): where greedy's victim choice loses, the tier that says so.

Each scenario's victim counts are checked by the suite expectations (test_showcase); here, the
classification and the first disruption tier on which the optimum beats greedy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplan.io.loader import load_snapshot
from gangplan.solver.diff import diff_snapshot
from gangplan.solver.outcome import is_cost
from gangplan.solver.validate import validate

SHOWCASE = Path(__file__).resolve().parent.parent / "scenarios" / "showcase"


def _first_difference(greedy: dict, optimal: dict) -> str | None:
    return next((k for k in greedy if k in optimal and greedy[k] != optimal[k]), None)


@pytest.mark.parametrize(("name", "classification", "tier"), [
    ("preempt-needless-eviction", "greedy-suboptimal", "victims[p=10]"),
    ("preempt-two-blockers", "identical", None),
    ("preempt-nvlink-clique", "greedy-suboptimal", "victims[p=10]"),
    ("preempt-one-gang-not-five", "greedy-suboptimal", "brokenGroups"),
    ("preempt-all-mode-unit", "greedy-suboptimal", "brokenGroups"),
])
def test_the_optimum_disrupts_less_on_the_stated_tier(name: str, classification: str, tier: str | None) -> None:
    cluster = load_snapshot(SHOWCASE / f"{name}.yaml")
    d = diff_snapshot(cluster, time_limit=10.0, workers=1, explain=False)
    assert validate(cluster, d.greedy) == [] and validate(cluster, d.optimal) == []
    assert d.classification == classification
    first = _first_difference(d.greedy.objective, d.optimal.objective)
    assert first == tier
    if tier is not None:
        assert is_cost(tier) and d.optimal.objective[tier] < d.greedy.objective[tier]
    # admission is never traded for disruption
    assert d.greedy.admitted_groups() == d.optimal.admitted_groups()


def test_an_all_mode_unit_is_evicted_whole_across_its_nodes() -> None:
    cluster = load_snapshot(SHOWCASE / "preempt-all-mode-unit.yaml")
    d = diff_snapshot(cluster, time_limit=10.0, workers=1, explain=False)
    assert d.greedy.victims == ["research/ckpt-0", "research/ckpt-1"]
    assert d.optimal.victims == ["batch/batch-a", "batch/batch-b"]
