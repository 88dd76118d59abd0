"""The exact run's kept model (gangplan.solver.exact.kept, issue 37): the diff asks it whether the
model accepts greedy's placement instead of building the model again; it must answer as
``check_feasible`` does whenever it says yes, and never say yes to a placement the model rejects."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_exact_domain_bound import build

from gangplan.models.result import Status
from gangplan.solver.diff import decisive
from gangplan.solver.diff.run import greedy_in_model
from gangplan.solver.exact import check_feasible, kept, solve_exact
from gangplan.solver.greedy import solve_greedy

node_st = st.tuples(st.sampled_from(["r0", "r1"]), st.sampled_from([2, 4]), st.integers(0, 3))
gang_st = st.tuples(st.integers(1, 3), st.sampled_from([1, 2, 4]), st.booleans(), st.booleans())


def _small_models_kept(monkeypatch) -> None:
    monkeypatch.setattr(kept, "MIN_VARIABLES", 0)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.lists(node_st, min_size=2, max_size=5),
    gangs=st.lists(gang_st, min_size=1, max_size=4),
    singles=st.lists(st.sampled_from([1, 2, 4]), max_size=3),
)
def test_the_kept_model_accepts_what_check_feasible_accepts(nodes, gangs, singles):
    nodes = [(r, g, min(u, g)) for r, g, u in nodes]
    c = build(nodes, gangs, singles)
    greedy = solve_greedy(c)
    old = kept.MIN_VARIABLES
    kept.MIN_VARIABLES = 0
    try:
        optimal = solve_exact(c, time_limit=5, hint=greedy)
        model = kept.take(optimal, c)
    finally:
        kept.MIN_VARIABLES = old
    assert model is not None
    said = kept.accepts(model, greedy.placements())
    truth = check_feasible(c, greedy.placements(), greedy.victims)
    assert said == (truth is True)
    # The optimum's placement too (the phases' own constraints are not part of the check).
    assert kept.accepts(model, optimal.placements())


def test_a_placement_over_capacity_is_not_accepted(monkeypatch):
    _small_models_kept(monkeypatch)
    c = build([("r0", 4, 0), ("r1", 4, 0)], [(2, 4, False, True)], [4])
    greedy = solve_greedy(c)
    optimal = solve_exact(c, time_limit=5, hint=greedy)
    model = kept.take(optimal, c)
    assert model is not None and kept.accepts(model, optimal.placements())
    crowded = {pod: "n0" for pod in optimal.placements()}  # 3 pods of 4 GPUs on one 4-GPU node
    assert not kept.accepts(model, crowded)
    assert check_feasible(c, crowded) is not True


def test_only_the_same_result_and_cluster_take_the_model(monkeypatch):
    _small_models_kept(monkeypatch)
    c = build([("r0", 4, 0), ("r1", 4, 2)], [(2, 2, True, True)], [2])
    first = solve_exact(c, time_limit=5)
    assert kept.take(first.model_copy(), c) is None  # another object: nothing (and dropped)
    assert kept.take(first, c) is None
    second = solve_exact(c, time_limit=5)
    other = build([("r0", 4, 0)], [(1, 2, False, True)], [])
    assert kept.take(second, other) is None
    third = solve_exact(c, time_limit=5)
    assert kept.take(third, c) is not None
    assert kept.take(third, c) is None  # taken once
    small = solve_exact(c, time_limit=5)
    monkeypatch.setattr(kept, "MIN_VARIABLES", 10**9)
    assert solve_exact(c, time_limit=5) is not None and kept.take(small, c) is None


def test_greedy_in_model_falls_back_when_nothing_is_kept():
    c = build([("r0", 4, 0), ("r1", 4, 2)], [(2, 2, True, True), (1, 4, False, True)], [2])
    greedy = solve_greedy(c)
    optimal = solve_exact(c, time_limit=5, hint=greedy)  # small: not kept
    assert greedy_in_model(c, greedy, optimal) == check_feasible(c, greedy.placements())


def test_a_probe_that_finds_nothing_is_an_unproven_no(monkeypatch):
    """A probe whose solve ends UNKNOWN (no solution within its limit) answers no, and is counted
    among the probes that answered no without a proof."""
    import gangplan.solver.exact as exact

    c = build([("r0", 4, 2), ("r1", 4, 0)], [(1, 2, False, True), (1, 4, False, True)], [])
    greedy = solve_greedy(c)
    optimal = solve_exact(c, time_limit=5, hint=greedy)
    real = exact.solve_exact

    def unknown(cluster, **kw):
        r = real(cluster, **kw)
        return r.model_copy(update={"status": Status.UNKNOWN}) if kw.get("fixed") else r

    monkeypatch.setattr(exact, "solve_exact", unknown)
    monkeypatch.setattr(decisive, "cannot_reach", lambda *a, **k: False)
    step, agreeing = decisive.search_decisive_step(
        c, greedy, optimal, time_limit=5, workers=1, seed=0
    )
    assert greedy.placements() and step is not None
    assert step.probes >= 1 and step.unproven_probes == step.probes
    assert agreeing is optimal
