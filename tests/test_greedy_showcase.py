"""The greedy engine on the showcase snapshots: it rejects the counterexample gangs exactly as
kube-scheduler would (same FitError text), the trace shows the decisive choice, the fitting gang is
admitted, every Result passes the independent validator, and runs are byte-for-byte repeatable."""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplan.io.loader import load_snapshot
from gangplan.solver.greedy import pod_scores_at_step, solve_greedy
from gangplan.solver.validate import validate

SHOWCASE = Path(__file__).resolve().parent.parent / "scenarios" / "showcase"
ALL = sorted(SHOWCASE.glob("*.yaml"))


def _solve(name: str, kube_version: str | None = None):
    cluster = load_snapshot(SHOWCASE / name, kube_version=kube_version)
    result = solve_greedy(cluster, snapshot=name)
    assert validate(cluster, result) == []
    return cluster, result


def test_heterogeneous_gang_is_rejected_because_p1_took_the_bigger_node():
    _, r = _solve("heterogeneous-gang.yaml")
    assert not r.groups["default/hetero"].admitted
    p1 = r.greedy_trace.pods["default/p1"]
    assert p1.chosen == "node-a"
    assert [t.node for t in p1.top] == ["node-a", "node-b"]
    assert p1.top[0].total > p1.top[1].total
    assert p1.top[0].scores["NodeResourcesFit"] == 74  # cpu 50, memory 98 -> 74
    assert r.pods["default/p2"].reason == "0/2 nodes are available: 2 Insufficient cpu."
    assert r.pods["default/p1"].node is None  # the group failed, so p1's placement was reverted
    assert r.greedy_trace.groups["default/hetero"].progression == ["Wait", "Unschedulable"]


def test_intra_group_affinity_gang_fails_at_its_first_pod_and_is_fast_rejected():
    _, r = _solve("intra-group-affinity.yaml")
    assert not r.groups["default/affine"].admitted
    assert (
        r.pods["default/p1"].reason
        == "0/2 nodes are available: 2 node(s) didn't match pod affinity rules."
    )
    assert r.greedy_trace.order == [
        "default/p1"
    ]  # remaining + scheduled < minCount: p2 never tried
    assert r.greedy_trace.groups["default/affine"].progression == ["Unschedulable"]


def test_design_card_in_v136_fails_at_b_which_completed_the_quorum_and_goes_first():
    """v1.36 orders a gang's pods by their first PreEnqueue pass: b completed the quorum, so b is
    tried first, finds no pod matching its affinity to a, and the gang is rejected before a is tried."""
    _, r = _solve("design-card-a100.yaml", "1.36")
    assert not r.groups["ml/train"].admitted
    assert r.greedy_trace.order == ["ml/b"]
    assert r.pods["ml/b"].reason.startswith(
        "0/2 nodes are available: 2 node(s) didn't match pod affinity rules."
    )


@pytest.mark.parametrize(
    ("version", "totals"), [("1.35", {"n1": 441, "n2": 434}), ("1.37", {"n1": 416, "n2": 409})]
)
def test_design_card_gang_fails_because_a_prefers_the_fuller_gpu_node(version, totals):
    """The totals differ by version only through NodeResourcesBalancedAllocation (v1.36's change
    of balance scores both nodes 25 lower here); the choice and the failure do not."""
    _, r = _solve("design-card-a100.yaml", version)
    assert not r.groups["ml/train"].admitted
    a = r.greedy_trace.pods["ml/a"]
    assert a.chosen == "n1"
    assert {t.node: t.total for t in a.top} == totals
    assert (
        r.pods["ml/b"].reason
        == "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match pod affinity rules."
    )


def test_design_card_scores_at_the_decisive_step_show_n1_above_n2():
    cluster = load_snapshot(SHOWCASE / "design-card-a100.yaml")
    got = pod_scores_at_step(cluster, "ml/a", ["n1", "n2"])
    assert got["n1"]["feasible"] and got["n2"]["feasible"]
    assert (got["n1"]["total"], got["n2"]["total"]) == (416, 409)
    assert (
        got["n1"]["scores"]["NodeResourcesFit"] == 41
        and got["n2"]["scores"]["NodeResourcesFit"] == 34
    )
    later = pod_scores_at_step(cluster, "ml/b", ["n1", "n2"])
    assert later["n1"] == {
        "feasible": False,
        "reason": "Insufficient nvidia.com/gpu",
        "scores": {},
        "total": 0,
    }
    assert later["n2"]["reason"] == "node(s) didn't match pod affinity rules"


def test_fixing_the_decisive_choice_admits_the_design_card_gang():
    cluster = load_snapshot(SHOWCASE / "design-card-a100.yaml")
    r = solve_greedy(cluster, fixed={"ml/a": "n2"})
    assert validate(cluster, r) == []
    assert r.groups["ml/train"].admitted
    assert r.placements() == {"ml/a": "n2", "ml/b": "n2"}


def test_gang_fits_is_admitted_with_every_pod_placed():
    _, r = _solve("gang-fits.yaml")
    assert r.groups["ml/llm-train"].admitted
    assert len(r.placements()) == 4
    assert r.greedy_trace.groups["ml/llm-train"].progression == ["Wait", "Wait", "Wait", "Success"]


@pytest.mark.parametrize("path", ALL, ids=[p.stem for p in ALL])
def test_every_showcase_matches_its_expect_greedy_annotation_and_validates(path):
    cluster = load_snapshot(path)
    r = solve_greedy(cluster)
    assert validate(cluster, r) == []
    assert r.engine == "greedy" and r.status.value == "HEURISTIC"
    for key, group in cluster.pod_groups.items():
        expect = group.annotations.get("gangplan.io/expect-greedy")
        if expect in ("admitted", "rejected") and key in r.groups:
            assert r.groups[key].admitted == (expect == "admitted"), key


@pytest.mark.parametrize("path", ALL, ids=[p.stem for p in ALL])
def test_same_input_twice_gives_identical_json_bytes(path):
    cluster = load_snapshot(path)
    runs = [
        solve_greedy(load_snapshot(path), tie_break="random", seed=7).model_copy(
            update={"wall_seconds": 0.0}
        )
        for _ in range(2)
    ]
    assert runs[0].to_json() == runs[1].to_json()
    assert (
        solve_greedy(cluster).model_copy(update={"wall_seconds": 0.0}).to_json()
        == solve_greedy(cluster).model_copy(update={"wall_seconds": 0.0}).to_json()
    )
