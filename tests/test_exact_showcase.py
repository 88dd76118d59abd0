"""The exact engine on the showcase snapshots: the greedy counterexamples are admitted, proven
optimal and valid; every showcase's ``gangplan.io/expect-optimal`` annotation holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplan.io.loader import load_snapshot
from gangplan.models.result import Status
from gangplan.solver.exact import solve_exact
from gangplan.solver.validate import validate

SHOWCASE = Path(__file__).resolve().parent.parent / "scenarios" / "showcase"
COUNTEREXAMPLES = {
    "heterogeneous-gang.yaml": ("default/hetero", {"default/p1": "node-b", "default/p2": "node-a"}),
    "intra-group-affinity.yaml": ("default/affine", None),
    "design-card-a100.yaml": ("ml/train", {"ml/a": "n2", "ml/b": "n2"}),
}


@pytest.mark.parametrize("name", sorted(COUNTEREXAMPLES))
def test_exact_admits_the_gang_greedy_rejects_and_proves_it_optimal(name):
    cluster = load_snapshot(SHOWCASE / name)
    result = solve_exact(cluster, time_limit=10.0, workers=2, seed=0, snapshot=name)
    group, placements = COUNTEREXAMPLES[name]
    assert [str(v) for v in validate(cluster, result)] == []
    assert result.status == Status.OPTIMAL
    assert result.groups[group].admitted
    assert result.gap == 0.0
    if placements is not None:  # the only placement that runs the gang
        assert result.placements() == placements
    else:  # both pods share a host (p1 needs p2 beside it)
        assert len(set(result.placements().values())) == 1 and len(result.placements()) == 2


def _expected_optimal(cluster) -> dict[str, str]:
    return {
        k: g.annotations["gangplan.io/expect-optimal"]
        for k, g in cluster.pod_groups.items()
        if "gangplan.io/expect-optimal" in g.annotations
    }


@pytest.mark.parametrize("path", sorted(SHOWCASE.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_showcase_meets_its_expected_optimal_outcome(path):
    cluster = load_snapshot(path)
    result = solve_exact(cluster, time_limit=10.0, workers=2, seed=0)
    assert [str(v) for v in validate(cluster, result)] == []
    assert result.status == Status.OPTIMAL
    for group, expected in _expected_optimal(cluster).items():
        assert ("admitted" if result.groups[group].admitted else "rejected") == expected, group
