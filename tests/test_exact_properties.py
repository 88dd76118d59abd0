"""Properties of the exact engine on random small snapshots (tests/strategies.py):

* every result is valid by the independent validator, and its placement is feasible in
  ``check_feasible`` (the model agrees with itself when everything is fixed);
* on snapshots small enough to enumerate every assignment, the exact objective equals the best
  objective among all valid assignments (brute force over validate + outcome.objective: the
  validator and the shared objective are the reference, not the model);
* a hint never makes the answer worse, and forcing the exact placement back through ``fixed``
  reproduces its objective.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings

from gangplan.models.result import Status
from gangplan.solver.exact import check_feasible, solve_exact
from gangplan.solver.outcome import build_result, compare, objective
from gangplan.solver.validate import validate
from tests.strategies import small_clusters

MAX_ENUMERATION = 800


def shared(obj: dict[str, float]) -> dict[str, float]:
    return {k: v for k, v in obj.items() if k.startswith("admitted") or k == "placed"}


def brute_force_best(cluster) -> dict[str, float] | None:
    """The best shared objective over every valid assignment, or None when there are too many."""
    pods = [p.key for p in cluster.schedulable_pods]
    choices = [None] + [n.name for n in cluster.nodes]
    if len(choices) ** len(pods) > MAX_ENUMERATION:
        return None
    best = None
    for combo in itertools.product(choices, repeat=len(pods)):
        placements = {k: n for k, n in zip(pods, combo, strict=True) if n is not None}
        obj = shared(objective(cluster, placements))
        if best is not None and compare(obj, best) <= 0:
            continue
        result = build_result(
            cluster, engine="brute", status=Status.HEURISTIC, placements=placements
        )
        if not validate(cluster, result):
            best = obj
    return best


@settings(
    max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(small_clusters())
def test_exact_results_are_valid_optimal_and_feasible_when_fixed(cluster):
    r = solve_exact(cluster, time_limit=5.0, workers=2, seed=0, preemption=False)
    assert [str(v) for v in validate(cluster, r)] == []
    assert r.status == Status.OPTIMAL
    assert check_feasible(cluster, r.placements()) is True
    fixed = {p.key: r.pods[p.key].node for p in cluster.schedulable_pods}
    again = solve_exact(cluster, time_limit=5.0, fixed=fixed, preemption=False)
    assert shared(again.objective) == shared(r.objective)


@settings(
    max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(small_clusters(max_nodes=3, max_groups=2, max_group_size=3, max_singles=1))
def test_exact_matches_brute_force_on_enumerable_snapshots(cluster):
    r = solve_exact(cluster, time_limit=5.0, workers=2, seed=0, preemption=False)
    assert [str(v) for v in validate(cluster, r)] == []
    best = brute_force_best(cluster)
    if best is not None:
        assert shared(r.objective) == best


@settings(
    max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(small_clusters())
def test_a_hint_never_makes_the_answer_worse(cluster):
    plain = solve_exact(cluster, time_limit=5.0, workers=2, seed=0, preemption=False)
    # The optimum itself as the hint: it must be trusted whole, and the answer stays as good.
    hinted = solve_exact(cluster, time_limit=5.0, workers=2, seed=0, hint=plain, preemption=False)
    assert [str(v) for v in validate(cluster, hinted)] == []
    assert hinted.exact_trace.hint.used is True
    assert compare(shared(hinted.objective), shared(plain.objective)) == 0
