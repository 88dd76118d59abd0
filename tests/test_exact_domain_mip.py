"""The top admission tier proven by the domain relaxation with whole counts
(gangplan.solver.exact.domain_mip): never below the proven optimum, and where the LP bound is
fractional above it, a proof the engine uses."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangplan.models.result import Status
from gangplan.solver.exact import domain_bound as db
from gangplan.solver.exact import domain_mip as dm
from gangplan.solver.exact import solve_exact
from gangplan.solver.exact.budget import Budget
from gangplan.solver.exact.build import build_model
from gangplan.solver.validate import validate
from tests.test_exact_domain_bound import build, gang_st, node_st

TIER = "admitted[p=0]"


def three_racks():
    """Three racks of two 4-GPU nodes, all free (8 GPUs a rack); three rack-held gangs of 5 x 1
    GPU and three of 3 x 2 GPUs. A rack holds one gang of either kind (5 + 6 > 8), so 3 are
    admitted; the LP admits 1 + 0.5 per rack (5 + 0.5 x 6 = 8 GPUs): 4.5, bound 4."""
    nodes = [(f"r{i // 2}", 4, 0) for i in range(6)]
    gangs = [(5, 1, True, True)] * 3 + [(3, 2, True, True)] * 3
    return build(nodes, gangs, [])


def test_whole_counts_prove_what_the_lp_bound_does_not():
    built = build_model(three_racks())
    bound = db.domain_bound(built)
    assert bound is not None and bound.bound == 4 and abs(bound.lp - 4.5) < 1e-6
    proof = dm.integral_check(bound.relaxation, 3, Budget(10.0))
    assert proof is not None and proof.proven and proof.status == "INFEASIBLE"
    assert proof.record()["asked"] == 4 and proof.record()["proven"] is True
    no = dm.integral_check(bound.relaxation, 2, Budget(10.0))  # 3 are admitted: 2 is no optimum
    assert no is not None and not no.proven


def test_one_round_of_domain_cuts_already_proves_the_three_racks():
    # Per rack 5 a + 6 b <= 8 GPUs; with lam = 5: a + b <= 1, so at most one gang a rack.
    bound = db.domain_bound(build_model(three_racks()))
    cut = dm.cut_bound(bound.relaxation, Budget(10.0), bound.plan)
    assert cut is not None and abs(cut - 3.0) < 1e-6


def test_the_engine_proves_the_tier_by_whole_counts_and_says_so(monkeypatch):
    monkeypatch.setattr(db, "MIN_VARIABLES", 0)
    c = three_racks()
    r = solve_exact(c, time_limit=10.0, workers=1)
    assert [str(v) for v in validate(c, r)] == []
    assert r.objective[TIER] == 3 and r.bound[TIER] == 3
    record = r.params["domainBound"]
    assert record["bound"] == 4 and record["start"] == 3
    assert record["integral"]["proven"] is True  # the start proven by the cuts, no search
    assert record["integral"]["cutLp"] == 3.0 and record["integral"]["by"] == "domain cuts"
    assert r.status == Status.OPTIMAL


def test_no_check_without_work_left():
    built = build_model(three_racks())
    bound = db.domain_bound(built)
    spent = Budget(10.0)
    spent.charge(10.0 - dm.MIN_LEFT / 2)
    assert dm.integral_check(bound.relaxation, 3, spent) is None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.lists(node_st, min_size=2, max_size=5),
    gangs=st.lists(gang_st, min_size=1, max_size=5),
    singles=st.lists(st.sampled_from([1, 2, 4]), max_size=3),
)
def test_whole_counts_never_prove_less_than_the_proven_optimum(nodes, gangs, singles):
    nodes = [(r, g, min(u, g)) for r, g, u in nodes]
    c = build(nodes, gangs, singles)
    bound = db.domain_bound(build_model(c))
    if bound is None:
        return
    r = solve_exact(c, time_limit=10.0, workers=1)  # small: no domain bound inside
    assert r.status == Status.OPTIMAL
    best = int(r.objective[bound.tier])
    cut = dm.cut_bound(bound.relaxation, Budget(10.0), bound.plan)
    assert cut is None or cut >= best - 1e-6  # the cuts are valid: never below the optimum
    if best >= 1:
        below = dm.integral_check(bound.relaxation, best - 1, Budget(10.0))
        assert below is None or not below.proven  # the optimum admits ``best``
