"""The topology showcase snapshots: the decisive step is the first gang's placement, and the
placement score that chose it is PlacementBinPacking (``pkg/scheduler/framework/plugins/topologyaware/``,
kubernetes/kubernetes @008b3652)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplan.io.loader import load_snapshot
from gangplan.solver.diff import GREEDY_SUBOPTIMAL, diff_snapshot
from gangplan.solver.greedy import placement_evidence, placement_scores_at_step, solve_greedy
from gangplan.solver.validate import validate

SHOWCASE = Path(__file__).resolve().parent.parent / "scenarios" / "showcase"

CASES = [
    # file, first gang, its greedy rack, its optimal rack, (greedy rack score, optimal rack score)
    ("tas-rack-binpacking-blocks.yaml", "ml/finetune", "rack-large", "rack-small", (65, 58)),
    ("tas-rack-no-backtracking.yaml", "train/pg-1", "rack-a1", "rack-a2", (90, 75)),
    ("tas-cpg-no-backtracking.yaml", "train/pg-1", "rack-a1", "rack-a2", (90, 75)),
    ("tas-nvl72-fragmentation.yaml", "ml/eval", "nvl72-a.0", "nvl72-b.0", (66, 61)),
]


@pytest.mark.parametrize(
    "name, group, greedy_rack, optimal_rack, bin_packing", CASES, ids=[c[0] for c in CASES]
)
def test_the_decisive_step_is_the_first_gangs_rack_chosen_by_bin_packing(
    name, group, greedy_rack, optimal_rack, bin_packing
):
    path = SHOWCASE / name
    cluster = load_snapshot(path)
    d = diff_snapshot(cluster, snapshot=str(path), time_limit=20.0, probe_time_limit=10.0)
    assert d.classification == GREEDY_SUBOPTIMAL
    assert validate(cluster, d.greedy) == [] and validate(cluster, d.optimal) == []
    assert d.decisive is not None and d.decisive.group == group and d.decisive.step == 1
    # a failing CompositePodGroup drops its children's pods, so only a standalone gang keeps its rack
    key = cluster.pod_groups[group].topology_key
    assert d.greedy.groups[group].domain == (
        None if cluster.pod_groups[group].parent else f"{key}={greedy_rack}"
    )
    assert d.optimal.groups[group].domain == f"{key}={optimal_rack}"
    got = placement_scores_at_step(cluster, group, [greedy_rack, optimal_rack])
    assert got["chosen"] == greedy_rack
    scores = (
        got["placements"][greedy_rack]["scores"]["PlacementBinPacking"],
        got["placements"][optimal_rack]["scores"]["PlacementBinPacking"],
    )
    assert scores == bin_packing
    assert (
        got["placements"][greedy_rack]["scores"]["PodGroupPodsCount"]
        == got["placements"][optimal_rack]["scores"]["PodGroupPodsCount"]
    )
    evidence = placement_evidence(
        cluster, d.greedy, d.decisive.group, d.decisive.greedy_node, d.decisive.optimal_node
    )
    assert (evidence.group, evidence.greedy, evidence.optimal, evidence.misled_by) == (
        group,
        greedy_rack,
        optimal_rack,
        "PlacementBinPacking",
    )
    assert d.decisive.placement == evidence  # the diff read it from its greedy Result, no replay


def test_placement_evidence_is_none_when_both_nodes_share_the_domain():
    cluster = load_snapshot(SHOWCASE / "tas-rack-no-backtracking.yaml")
    assert placement_evidence(cluster, solve_greedy(cluster), "train/pg-1", "a1-0", "a1-3") is None


def test_on_a_small_upstream_tas_shape_greedy_admits_every_gang_and_exact_proves_it_optimal():
    from gangplan.bench.generators.builders import to_cluster
    from gangplan.bench.generators.scheduler_perf import scheduler_perf_gangs
    from gangplan.models.result import Status
    from gangplan.models.well_known import RACK
    from gangplan.solver.exact import solve_exact
    from gangplan.solver.greedy import solve_greedy

    cluster = to_cluster(
        scheduler_perf_gangs(
            nodes=300, gangs=40, pods_per_gang=4, nodes_per_rack=100, topology_key=RACK
        )
    )
    greedy = solve_greedy(cluster, top_k=0)
    exact = solve_exact(cluster, time_limit=30.0, hint=greedy)
    assert validate(cluster, greedy) == [] and validate(cluster, exact) == []
    assert all(g.admitted for g in greedy.groups.values())
    assert exact.status == Status.OPTIMAL
    assert {k: exact.objective[k] for k in greedy.objective} == greedy.objective
    racks = {g.domain for g in greedy.groups.values()}
    assert racks <= {f"{RACK}=rack-{i}" for i in range(3)}
