"""Properties of the greedy engine on random small snapshots (tests/strategies.py): every Result
passes the independent validator, runs repeat byte for byte, the trace agrees with the Result, a
rejected gang keeps none of its pods, and an admitted gang holds at least minCount pods."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate
from tests.strategies import small_clusters


@settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(small_clusters())
def test_greedy_results_validate_repeat_and_agree_with_their_trace(cluster) -> None:
    r = solve_greedy(cluster)
    assert [str(v) for v in validate(cluster, r)] == []
    again = solve_greedy(cluster)
    assert (
        r.model_copy(update={"wall_seconds": 0.0}).to_json()
        == again.model_copy(update={"wall_seconds": 0.0}).to_json()
    )
    placed = r.placements()
    for key, t in r.greedy_trace.pods.items():
        assert t.kept == (key in placed)
        if t.kept:
            assert t.chosen == placed[key]
        if t.chosen is None:
            assert t.fit_error and r.pods[key].reason
    for key, g in r.groups.items():
        members = [p.key for p in cluster.groups.node(key).members if p.node_name is None]
        if not g.admitted:
            assert not any(m in placed for m in members)
        else:
            assert g.placed >= g.min_count


@settings(
    max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(small_clusters())
def test_random_tie_breaks_still_give_valid_results(cluster) -> None:
    for seed in (1, 2):
        r = solve_greedy(cluster, tie_break="random", seed=seed)
        assert [str(v) for v in validate(cluster, r)] == []
