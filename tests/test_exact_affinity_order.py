"""Regressions (fuzz seeds 209 and 395): required podAffinity is checked when a pod is placed, so
the exact model must accept what some placement order allows, exactly as the validator does."""

from __future__ import annotations

from gangplan.bench.generators.builders import node_object, pod_group_object, pod_object, to_cluster
from gangplan.solver.exact import check_feasible, solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

ZONE = "topology.kubernetes.io/zone"


def _affinity(key: str) -> dict:
    return {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"group": "g"}}, "topologyKey": key}
            ]
        }
    }


def _cluster(*, bound_mate_on: str | None = None, both_affine: bool = False):
    objs = [
        node_object("n0", cpu="2", labels={ZONE: "zone-b"}),
        node_object("n1", cpu="4", labels={ZONE: "zone-a"}),
        node_object("bare", cpu="4"),
        pod_group_object("g", min_count=2 if not bound_mate_on else 1, priority=100),
        pod_object(
            "lead",
            group="g",
            priority=100,
            labels={"group": "g"},
            affinity=_affinity(ZONE),
            requests={"cpu": "2"},
        ),
        pod_object(
            "mate",
            group="g",
            priority=100,
            labels={"group": "g"},
            affinity=_affinity(ZONE) if both_affine else None,
            requests={"cpu": "3"},
        ),
    ]
    if bound_mate_on:
        objs.append(
            pod_object("old", node_name=bound_mate_on, labels={"group": "g"}, requests={"cpu": "1"})
        )
    return to_cluster(objs)


def test_a_first_pod_followed_by_an_unconstrained_mate_in_another_zone_is_feasible() -> None:
    c = _cluster()
    assert check_feasible(c, {"default/lead": "n0", "default/mate": "n1"}) is True
    greedy = solve_greedy(c)
    assert validate(c, greedy) == []
    assert check_feasible(c, greedy.placements(), greedy.victims) is True


def test_two_self_affine_pods_in_different_zones_are_infeasible() -> None:
    c = _cluster(both_affine=True)
    assert check_feasible(c, {"default/lead": "n0", "default/mate": "n1"}) == ["pod-affinity"]
    exact = solve_exact(c, time_limit=5.0)
    assert validate(c, exact) == []


def test_a_bound_matching_pod_on_an_unlabelled_node_does_not_stop_the_first_pod_rule() -> None:
    c = _cluster(bound_mate_on="bare")
    assert check_feasible(c, {"default/lead": "n0", "default/mate": "n1"}) is True


def test_a_bound_matching_pod_in_a_zone_stops_the_first_pod_rule() -> None:
    c = _cluster(bound_mate_on="n1")
    assert check_feasible(c, {"default/lead": "n0"}) == ["pod-affinity"]
    assert check_feasible(c, {"default/lead": "n1"}) is True
