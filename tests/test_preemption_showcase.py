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


@pytest.mark.parametrize(
    ("name", "classification", "tier"),
    [
        ("preempt-needless-eviction", "greedy-suboptimal", "victims[p=10]"),
        ("preempt-two-blockers", "identical", None),
        ("preempt-nvlink-clique", "greedy-suboptimal", "victims[p=10]"),
        ("preempt-one-gang-not-five", "greedy-suboptimal", "brokenGroups"),
        ("preempt-all-mode-unit", "greedy-suboptimal", "brokenGroups"),
    ],
)
def test_the_optimum_disrupts_less_on_the_stated_tier(
    name: str, classification: str, tier: str | None
) -> None:
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


@pytest.mark.parametrize(
    ("name", "greedy_units", "optimal_units"),
    [
        (
            "preempt-one-gang-not-five",
            [f"pod:research/sweep-{k}-0" for k in range(5)],
            [f"pod:research/eval-{i}" for i in range(5)],
        ),
        ("preempt-all-mode-unit", ["research/ckpt"], ["pod:batch/batch-a", "pod:batch/batch-b"]),
    ],
)
def test_the_decisive_step_names_greedys_victim_choice_against_the_optimums(
    name, greedy_units, optimal_units
) -> None:
    cluster = load_snapshot(SHOWCASE / f"{name}.yaml")
    d = diff_snapshot(cluster, time_limit=10.0, probe_time_limit=5.0, workers=1)
    pre = d.decisive.preemption
    assert pre is not None and pre.entity == "ml/train" and pre.path == "workload"
    assert [u.unit for u in pre.victims] == greedy_units
    assert [u.unit for u in pre.optimal_victims] == optimal_units
    assert "MoreImportantVictim" in pre.criterion


def test_a_single_pods_default_preemption_names_the_pick_one_node_criterion() -> None:
    from gangplan.bench.generators.builders import node_object, pod_group_object, pod_object
    from gangplan.io.loader import load_objects

    def bound(name, node, start, group=None):
        o = pod_object(name, node_name=node, priority=0, group=group, requests={"cpu": "2"})
        o["status"] = {"phase": "Running", "startTime": start}
        return o

    objs = [
        node_object("node-a", cpu="2"),
        node_object("node-b", cpu="2"),
        node_object("node-c", cpu="2"),
        pod_group_object("pair", min_count=2, priority=0),
        bound("pair-0", "node-a", "2026-11-30T09:00:00Z", "pair"),
        bound("pair-1", "node-c", "2026-11-30T09:00:00Z", "pair"),
        bound("solo", "node-b", "2026-11-30T08:00:00Z"),
        pod_object("urgent", priority=100, requests={"cpu": "2"}),
    ]
    cluster = load_objects(objs)
    d = diff_snapshot(cluster, time_limit=5.0, probe_time_limit=5.0, workers=1)
    assert validate(cluster, d.greedy) == [] and validate(cluster, d.optimal) == []
    assert d.greedy.victims == ["default/pair-0"] and d.optimal.victims == ["default/solo"]
    assert d.classification == "greedy-suboptimal"
    pre = d.decisive.preemption
    assert pre.path == "pod" and pre.nodes == ["node-a"] and pre.optimal_nodes == ["node-b"]
    assert pre.criterion.startswith(
        "default preemption chose node-a over node-b: equal on fewest PDB violations"
    )
