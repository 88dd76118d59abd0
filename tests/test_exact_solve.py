"""The exact engine's solve loop: phases and band weights, limits, determinism, scale."""

from __future__ import annotations

import pytest

from gangplan.bench.generators.builders import to_cluster
from gangplan.bench.generators.gpu_clusters import gpu_benchmark
from gangplan.models.result import Status
from gangplan.solver.exact import solve_exact
from gangplan.solver.exact.solve import PhaseReport, _tier_reports, band_weights, group_tiers
from gangplan.solver.exact.variables import Tier
from gangplan.solver.outcome import compare
from gangplan.solver.validate import validate


def tier(name: str, upper: int) -> Tier:
    return Tier(name=name, expr=0, value=lambda cnt: 0, upper=upper)


def test_band_weights_make_every_tier_dominate_all_lower_ones_together():
    group = [tier("admitted[p=10]", 3), tier("admitted[p=0]", 4), tier("placed", 9)]
    w = band_weights(group)
    assert w == [50, 10, 1]
    for i in range(len(group) - 1):  # one more unit of tier i beats every lower tier at its maximum
        assert w[i] > sum(wj * t.upper for wj, t in zip(w[i + 1 :], group[i + 1 :], strict=True))


def test_decision_tiers_merge_until_the_weights_grow_too_large_and_the_tiebreak_stays_alone():
    tiers = [
        tier("admitted[p=1]", 10),
        tier("admitted[p=0]", 10),
        tier("placed", 10**11),
        tier("tiebreak", 5),
    ]
    assert [[t.name for t in g] for g in group_tiers(tiers)] == [
        ["admitted[p=1]", "admitted[p=0]"],
        ["placed"],
        ["tiebreak"],
    ]


def test_per_tier_bounds_follow_from_a_merged_bound_only_below_proven_tiers():
    group = [tier("a", 3), tier("b", 4), tier("c", 9)]  # weights 50, 10, 1
    # values 2, 3, 5 (= 135); bound 140: a <= 2 proven, then b <= (140 - 100) // 10 = 4 > 3.
    reports = _tier_reports(group, band_weights(group), [2, 3, 5], 140, 1.0)
    assert [(r.tier, r.status, r.bound) for r in reports] == [
        ("a", "OPTIMAL", 2.0),
        ("b", "FEASIBLE", 4.0),
        ("c", "FEASIBLE", 9.0),
    ]
    assert isinstance(reports[0], PhaseReport)


def busy_cluster(nodes: int, pods: int, seed: int = 0):
    return to_cluster(gpu_benchmark(nodes, pods, profile="busy", seed=seed))


def test_a_tiny_time_limit_still_returns_a_valid_answer_never_worse_than_the_hint():
    c = busy_cluster(200, 256)
    first = solve_exact(c, time_limit=5.0, workers=2, seed=0)
    rushed = solve_exact(c, time_limit=0.01, workers=2, seed=0, hint=first)
    assert rushed.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert [str(v) for v in validate(c, rushed)] == []
    shared = [k for k in first.objective if k != "tiebreak"]
    assert (
        compare({k: rushed.objective[k] for k in shared}, {k: first.objective[k] for k in shared})
        >= 0
    )
    assert rushed.gap is not None and rushed.bound


def test_one_worker_gives_the_same_bytes_twice():
    c = busy_cluster(60, 96, seed=3)

    def run():
        r = solve_exact(c, time_limit=30.0, workers=1, seed=7)
        assert r.status == Status.OPTIMAL
        return r.model_copy(update={"wall_seconds": 0.0}).to_json(with_trace=False)

    assert run() == run()


@pytest.mark.slow
def test_a_thousand_nodes_and_512_pending_pods_are_proven_optimal_within_seconds():
    c = busy_cluster(1000, 512)
    r = solve_exact(c, time_limit=30.0, workers=2, seed=0)
    assert r.status == Status.OPTIMAL
    decision = {p.phase: p.seconds for p in r.exact_trace.phases if p.tier != "tiebreak"}
    assert r.exact_trace.build_seconds + sum(decision.values()) < 5.0
    assert [str(v) for v in validate(c, r)] == []
