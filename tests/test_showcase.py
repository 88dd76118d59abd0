"""The showcase suite: every scenario's expectations, and the decisive step of the design card."""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplan.io.loader import load_snapshot
from gangplan.solver.diff import GREEDY_SUBOPTIMAL, diff_snapshot
from gangplan.solver.greedy import solve_greedy
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


@pytest.mark.parametrize("path", suite_entries(SHOWCASE), ids=lambda p: p.name)
def test_showcase_scenario_meets_its_expectations_at_v135(path: Path) -> None:
    """The suite at kube-scheduler v1.35 (``diff --suite --kube-version 1.35``): every expectation
    for that version (``<key>-v1.35`` where it differs) is met, and both engines' Results are valid
    for v1.35 (no topology constraint read there: :func:`gangplan.models.version.topology_constraints_read`)."""
    row = run_scenario(path, time_limit=20.0, probe_time_limit=10.0, kube_version="1.35")
    assert row.error is None
    assert row.expectations > 0
    assert row.failures == []
    cluster = load_snapshot(path, kube_version="1.35")
    assert validate(cluster, row.diff.greedy) == []
    assert validate(cluster, row.diff.optimal) == []
    assert row.diff.problems == []


def test_v135_reads_no_topology_constraint_and_says_so() -> None:
    """preempt-nvlink-clique at v1.35: no clique constraint, so the 16 gang pods fit the 21 nodes
    with 4 free GPUs and nothing is evicted; the warning names the dropped constraint. Switching
    the loaded v1.37 snapshot to v1.35 and back gives the same groups as loading at each."""
    path = SHOWCASE / "preempt-nvlink-clique.yaml"
    c35 = load_snapshot(path, kube_version="1.35")
    assert c35.pod_groups["ml/llm"].topology_key is None
    assert any("spec.schedulingConstraints.topology" in w for w in c35.version_warnings)
    c37 = load_snapshot(path)
    assert c37.pod_groups["ml/llm"].topology_key == "nvidia.com/gpu.clique"
    assert c37.at_version("1.35").pod_groups == c35.pod_groups
    assert c35.at_version("1.37").pod_groups == c37.pod_groups
    assert not any("schedulingConstraints" in w for w in c37.version_warnings)
    r = solve_greedy(c35)
    assert validate(c35, r) == []
    assert r.groups["ml/llm"].admitted and r.victims == []
    placed = r.placements()
    nodes = {placed[p.key] for p in c35.groups.members("ml/llm")}
    assert len(nodes) == 16 and not any(n.startswith("clique-a") for n in nodes)


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
