"""The warm start from the domain LP (gangplan.solver.exact.domain_start): a valid placement,
never above the proven optimum, the optimum where the LP is integral, and the engine proving the
top tier by it and the domain bound."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangplan.models.result import Status
from gangplan.models.trace import HintUse
from gangplan.solver.exact import domain_bound as db
from gangplan.solver.exact import engine, solve_exact
from gangplan.solver.exact.budget import Budget, Meter
from gangplan.solver.exact.build import build_model
from gangplan.solver.exact.domain_start import domain_start, pack_plan, rounded_plan
from gangplan.solver.exact.start.hint import default_incumbent, placements_from_counts
from gangplan.solver.outcome import build_result
from gangplan.solver.validate import validate
from tests.test_exact_domain_bound import build


def snapshot(
    nodes: list[tuple[str, int, int]], gangs: list[tuple[int, int, bool]], singles: list[int]
):
    """``nodes``: (rack, GPUs, GPUs in use); ``gangs``: (pods, GPUs per pod, rack-held), each an
    all-or-nothing PodGroup; ``singles``: GPUs per single pod (the domain bound's test snapshot)."""
    return build(nodes, [(size, g, held, True) for size, g, held in gangs], singles)


def checked(cluster, built, counts):
    """The start as a Result, and what the validator says of it."""
    placements = placements_from_counts(built.em, counts)
    result = build_result(
        cluster, engine="start", status=Status.HEURISTIC, placements=placements, name_devices=False
    )
    return [str(v) for v in validate(cluster, result)]


node_st = st.tuples(
    st.sampled_from(["r0", "r1", "r2"]), st.sampled_from([2, 4, 8]), st.integers(0, 4)
)
gang_st = st.tuples(st.integers(1, 4), st.sampled_from([1, 2, 4]), st.booleans())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.lists(node_st, min_size=2, max_size=6),
    gangs=st.lists(gang_st, min_size=1, max_size=5),
    singles=st.lists(st.sampled_from([1, 2, 4]), max_size=3),
)
def test_the_domain_start_is_valid_and_never_above_the_proven_optimum(nodes, gangs, singles):
    nodes = [(r, g, min(u, g)) for r, g, u in nodes]
    c = snapshot(nodes, gangs, singles)
    built = build_model(c)
    bound = db.domain_bound(built)
    if bound is None:
        return
    packed = pack_plan(built, bound, Meter(None, 10.0))
    if (
        packed is None
    ):  # nothing planned: the LP admits no whole entity (e.g. a gang larger than the cluster)
        assert not rounded_plan(bound)
    else:
        assert checked(c, built, packed) == []
    start = domain_start(built, bound, None, budget=Budget(10.0))
    tier = built.tiers[0]
    if start is not None:
        assert checked(c, built, start) == []
        assert tier.value(start) <= bound.bound
    r = solve_exact(c, time_limit=10.0, workers=1)
    assert [str(v) for v in validate(c, r)] == []
    assert r.status == Status.OPTIMAL
    if packed is not None:
        assert tier.value(packed) <= r.objective[tier.name]
    if start is not None:
        assert tier.value(start) <= r.objective[tier.name]


def crossed_racks():
    # Rack r0: two free 4-GPU nodes; rack r1: one free 4-GPU node. Queue order: a rack-held gang of
    # 2 x 2 GPUs, then one of 2 x 4 GPUs. First fit puts the first into r0 and the second fits
    # nowhere; the optimum has both (the first in r1). The LP is integral here.
    nodes = [("r0", 4, 0), ("r0", 4, 0), ("r1", 4, 0)]
    return snapshot(nodes, [(2, 2, True), (2, 4, True)], [])


def test_a_small_instance_where_the_domain_start_is_the_optimum():
    c = crossed_racks()
    built = build_model(c)
    bound = db.domain_bound(built)
    assert bound is not None and bound.bound == 2 == bound.trivial
    assert len(rounded_plan(bound)) == 2
    start = domain_start(built, bound, None, budget=Budget(10.0))
    assert start is not None and built.tiers[0].value(start) == 2
    assert checked(c, built, start) == []
    r = solve_exact(c, time_limit=10.0, workers=1)
    assert [str(v) for v in validate(c, r)] == [] and r.objective["admitted[p=0]"] == 2


def two_racks():
    # Two racks of two 4-GPU nodes with 2 GPUs in use each; three rack-held gangs of 2 x 2 GPUs:
    # one per rack fits (the domain bound: 2 of the trivial 3).
    return snapshot(
        [("r0", 4, 2), ("r0", 4, 2), ("r1", 4, 2), ("r1", 4, 2)], [(2, 2, True)] * 3, []
    )


def test_the_engine_starts_from_it_and_proves_the_tier_without_a_search(monkeypatch):
    # The engine's own starts find the optimum of so small an instance; with them left out
    # (nothing placed) the domain start is what reaches the bound.
    monkeypatch.setattr(db, "MIN_VARIABLES", 0)

    def nothing(built, hint, **kw):
        return default_incumbent(built.em), HintUse()

    monkeypatch.setattr(engine, "warm_start", nothing)
    c = two_racks()
    r = solve_exact(c, time_limit=10.0, workers=1)
    assert [str(v) for v in validate(c, r)] == []
    tier = "admitted[p=0]"
    assert r.objective[tier] == 2 and r.bound[tier] == 2
    assert r.params["domainBound"]["bound"] == 2 and r.params["domainBound"]["start"] == 2
    assert r.trace.hint.start == "domain LP start"
    top = next(p for p in r.trace.phases if p.tier == tier)
    assert top.status == "OPTIMAL"
    assert r.status == Status.OPTIMAL


def test_no_domain_start_with_forced_pods():
    c = two_racks()
    built = build_model(c, fixed={"default/g0-0": "n0"})
    assert db.relaxation(built) is None


def test_a_pod_goes_where_it_breaks_no_slot_of_a_larger_size():
    """A rack with a node of 2 GPUs free and one of 3 (and a full node elsewhere, so the rack is
    the smaller domain). The rack-held 1-GPU pod is packed first;
    on the 2-GPU node (the least room left) it would break the 2-GPU slot the two 2-GPU single
    pods need; on the 3-GPU node it breaks none, and one packing admits all three."""
    c = snapshot([("r0", 2, 0), ("r0", 4, 1), ("r1", 2, 2)], [(1, 1, True)], [2, 2])
    built = build_model(c)
    bound = db.domain_bound(built)
    assert bound is not None and bound.bound == 3
    packed = pack_plan(built, bound, Meter(None, 10.0))
    assert packed is not None and checked(c, built, packed) == []
    assert built.tiers[0].value(packed) == 3
