"""Victims and the pod-to-pod rules (issue 12 part 2): the validator's one definition and the
exact engine's evictions of units that carry, meet or block inter-pod terms.

Validator semantics (``gangplan/predicates/affinity_order.py``): victims are absent from the final
state for capacity, anti-affinity, spread and host ports, but each victim is evicted at some point
of the placing order, so a pending pod placed before may count it as the supporter of its required
pod affinity. Every engine result goes through validate(); the exact engine is never worse than
the greedy one.
"""

from __future__ import annotations

import pytest

from gangplan.bench.generators.builders import node_object, pod_group_object, pod_object, to_cluster
from gangplan.bench.generators.small_snapshots import small_preemption
from gangplan.models.result import Status
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.outcome import build_result, compare, is_cost
from gangplan.solver.validate import validate

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _node(name: str, cpu: int, zone: str) -> dict:
    return node_object(name, cpu=str(cpu), labels={HOST: name, ZONE: zone})


def _affine(app: str, key: str = ZONE) -> dict:
    return {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}
            ]
        }
    }


def _anti(app: str, key: str = HOST) -> dict:
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}
            ]
        }
    }


def _violations(cluster, placements: dict[str, str], victims=()) -> list[str]:
    result = build_result(
        cluster, engine="test", status=Status.HEURISTIC, placements=placements, victims=victims
    )
    return [str(v) for v in validate(cluster, result)]


def _both(cluster):
    g = solve_greedy(cluster)
    e = solve_exact(cluster, hint=g, time_limit=5.0, workers=1)
    assert [str(v) for v in validate(cluster, g)] == []
    assert [str(v) for v in validate(cluster, e)] == []
    assert compare(e.objective, g.objective) >= 0, (e.objective, g.objective)
    return g, e


# ---- the validator: victims as possible affinity supporters ----------------------------------------
def _one_supporter():
    return to_cluster(
        [
            _node("n0", 4, "z0"),
            _node("n1", 4, "z1"),
            pod_object("sup", node_name="n0", labels={"app": "a"}, requests={"cpu": "1"}),
            pod_object(
                "p",
                priority=100,
                labels={"app": "new"},
                affinity=_affine("a"),
                requests={"cpu": "1"},
            ),
        ]
    )


def test_a_victim_may_support_a_pod_placed_before_it_was_evicted():
    c = _one_supporter()
    assert _violations(c, {"default/p": "n0"}, victims=["default/sup"]) == []


def test_a_victim_supports_only_in_its_own_domain():
    c = _one_supporter()
    out = _violations(c, {"default/p": "n1"}, victims=["default/sup"])
    assert [v for v in out if v.startswith("[pod-affinity] default/p")], out


def test_a_victim_matching_a_self_affine_pod_may_be_gone_before_it_uses_the_first_pod_rule():
    # Kept, the victim switches the first-pod rule off and z1 has no support; evicted before the
    # pod, the pod is the first pod of its terms.
    c = to_cluster(
        [
            _node("n0", 4, "z0"),
            _node("n1", 4, "z1"),
            pod_object("sup", node_name="n0", labels={"app": "a"}, requests={"cpu": "1"}),
            pod_object(
                "s", priority=100, labels={"app": "a"}, affinity=_affine("a"), requests={"cpu": "1"}
            ),
        ]
    )
    assert _violations(c, {"default/s": "n1"}, victims=["default/sup"]) == []
    assert _violations(c, {"default/s": "n1"})  # not a victim: it runs, so s is not first


def test_a_victim_supports_early_pods_then_leaves_room_for_a_first_pod():
    # p needs the victim (z0), s needs it gone (first-pod rule in z1): p, evict, s.
    c = to_cluster(
        [
            _node("n0", 4, "z0"),
            _node("n1", 4, "z1"),
            pod_object("sup", node_name="n0", labels={"app": "a"}, requests={"cpu": "1"}),
            pod_object(
                "p",
                priority=100,
                labels={"app": "new"},
                affinity=_affine("a"),
                requests={"cpu": "1"},
            ),
            pod_object(
                "s", priority=100, labels={"app": "a"}, affinity=_affine("a"), requests={"cpu": "1"}
            ),
        ]
    )
    assert _violations(c, {"default/p": "n0", "default/s": "n1"}, victims=["default/sup"]) == []


def test_no_eviction_time_helps_a_pod_that_needs_the_victim_and_is_counted_by_a_first_pod():
    # q (app=a) needs the victim in z0, so it comes before the eviction; s needs the victim gone
    # and nothing matching before it, but q matches and is placed: no order passes.
    c = to_cluster(
        [
            _node("n0", 4, "z0"),
            _node("n1", 4, "z1"),
            pod_object("sup", node_name="n0", labels={"app": "a"}, requests={"cpu": "1"}),
            pod_object(
                "q", priority=100, labels={"app": "a"}, affinity=_affine("a"), requests={"cpu": "1"}
            ),
            pod_object(
                "s", priority=100, labels={"app": "a"}, affinity=_affine("a"), requests={"cpu": "1"}
            ),
        ]
    )
    out = _violations(c, {"default/q": "n0", "default/s": "n1"}, victims=["default/sup"])
    assert any(v.startswith("[pod-affinity]") for v in out), out


def test_a_victim_never_blocks_anti_affinity():
    c = to_cluster(
        [
            _node("n0", 4, "z0"),
            pod_object("b", node_name="n0", labels={"app": "b"}, requests={"cpu": "1"}),
            pod_object(
                "p", priority=100, labels={"app": "new"}, affinity=_anti("b"), requests={"cpu": "1"}
            ),
        ]
    )
    assert _violations(c, {"default/p": "n0"}, victims=["default/b"]) == []
    assert any(v.startswith("[pod-anti-affinity]") for v in _violations(c, {"default/p": "n0"}))


# ---- seeds 174 / 180 / 211 of small_preemption, built explicitly ------------------------------------
def test_a_pod_placed_while_its_supporter_ran_stays_valid_when_a_later_preemptor_evicts_it():
    """Seed 211's shape: ``follower`` (affinity to app=a in its zone) goes first next to ``sup``;
    ``big`` then only fits by evicting ``sup``, which upstream does without looking at the
    follower's affinity (``SelectVictimsOnNode``, preemption.go). Both engines admit both."""
    c = to_cluster(
        [
            _node("n0", 4, "z0"),
            pod_object(
                "sup", node_name="n0", priority=0, labels={"app": "a"}, requests={"cpu": "1"}
            ),
            pod_object(
                "follower",
                priority=100,
                labels={"app": "new"},
                affinity=_affine("a"),
                requests={"cpu": "1"},
                created=1,
            ),
            pod_object(
                "big", priority=100, labels={"app": "new"}, requests={"cpu": "3"}, created=2
            ),
        ]
    )
    g, e = _both(c)
    assert g.victims == ["default/sup"]
    assert g.placements() == {"default/follower": "n0", "default/big": "n0"}
    assert e.placements() == g.placements() and e.victims == g.victims


# ---- the exact engine: units that were never evicted before ----------------------------------------
def _spread(app: str, key: str = HOST) -> dict:
    return {
        "maxSkew": 1,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": app}},
    }


def test_a_bound_pod_holding_the_wanted_host_port_is_evicted():
    c = to_cluster(
        [
            _node("n0", 4, "z0"),
            pod_object(
                "holder", node_name="n0", priority=0, host_ports=[8080], requests={"cpu": "1"}
            ),
            pod_object("web", priority=100, host_ports=[8080], requests={"cpu": "1"}),
        ]
    )
    g, e = _both(c)
    assert g.victims == e.victims == ["default/holder"]
    assert e.placements() == {"default/web": "n0"}


def test_a_bound_pod_the_pending_pods_anti_affinity_rejects_is_evicted_not_the_whole_node():
    # n0 holds the app=b pod and a harmless one; only the app=b pod has to go.
    c = to_cluster(
        [
            _node("n0", 4, "z0"),
            pod_object("b", node_name="n0", priority=0, labels={"app": "b"}, requests={"cpu": "1"}),
            pod_object(
                "ok", node_name="n0", priority=0, labels={"app": "a"}, requests={"cpu": "1"}
            ),
            pod_object(
                "p", priority=100, labels={"app": "new"}, affinity=_anti("b"), requests={"cpu": "1"}
            ),
        ]
    )
    g, e = _both(c)
    assert e.victims == ["default/b"] and e.placements() == {"default/p": "n0"}


def test_a_bound_pod_whose_own_anti_affinity_rejects_the_pending_pod_is_evicted():
    c = to_cluster(
        [
            _node("n0", 4, "z0"),
            pod_object(
                "h",
                node_name="n0",
                priority=0,
                labels={"app": "h"},
                affinity=_anti("new"),
                requests={"cpu": "1"},
            ),
            pod_object("p", priority=100, labels={"app": "new"}, requests={"cpu": "1"}),
        ]
    )
    g, e = _both(c)
    assert e.victims == ["default/h"] and e.placements() == {"default/p": "n0"}


def test_the_model_evicts_a_blocker_only_together_with_the_placement_that_needs_it():
    # n1 is free: no reason to evict the app=b pod on n0.
    c = to_cluster(
        [
            _node("n0", 4, "z0"),
            _node("n1", 4, "z1"),
            pod_object("b", node_name="n0", priority=0, labels={"app": "b"}, requests={"cpu": "1"}),
            pod_object(
                "p", priority=100, labels={"app": "new"}, affinity=_anti("b"), requests={"cpu": "1"}
            ),
        ]
    )
    g, e = _both(c)
    assert e.victims == [] and e.placements() == {"default/p": "n1"}


def test_evicted_pods_leave_the_spread_counts():
    # n0 holds two app=s pods, n1 is taken by a pod that may not be evicted; maxSkew 1 on the
    # hostname: p fits on n0 only once both app=s pods are gone (one left: skew 2).
    c = to_cluster(
        [
            _node("n0", 4, "z0"),
            _node("n1", 1, "z1"),
            pod_object(
                "s1", node_name="n0", priority=0, labels={"app": "s"}, requests={"cpu": "1"}
            ),
            pod_object(
                "s2", node_name="n0", priority=0, labels={"app": "s"}, requests={"cpu": "1"}
            ),
            pod_object("top", node_name="n1", priority=200, requests={"cpu": "1"}),
            pod_object(
                "p",
                priority=100,
                labels={"app": "s"},
                topology_spread=[_spread("s")],
                requests={"cpu": "1"},
            ),
        ]
    )
    g, e = _both(c)
    assert e.placements() == {"default/p": "n0"}
    assert e.victims == ["default/s1", "default/s2"]


def test_a_gang_with_pending_pods_may_lose_its_bound_pod_to_a_higher_priority_preemptor():
    # gang g (minCount 2) has one pod bound and one pending; the urgent pod needs g's room. After
    # the eviction g would need both pods new, so its pending pod stays out: the bound count of
    # the gang rule is bound minus evicted.
    c = to_cluster(
        [
            _node("n0", 2, "z0"),
            pod_group_object("g", min_count=2, priority=10),
            pod_object("g-0", node_name="n0", priority=10, group="g", requests={"cpu": "1"}),
            pod_object("top", node_name="n0", priority=200, requests={"cpu": "1"}),
            pod_object("urgent", priority=100, requests={"cpu": "1"}, created=1),
            pod_object("g-1", priority=10, group="g", requests={"cpu": "1"}, created=2),
        ]
    )
    g, e = _both(c)
    assert e.victims == ["default/g-0"]
    assert e.placements() == {"default/urgent": "n0"}
    assert e.objective["admitted[p=100]"] == 1


def test_a_gang_never_evicts_its_own_bound_pods():
    # g's pending pod has g's priority: its bound mate is not a victim for it.
    c = to_cluster(
        [
            _node("n0", 1, "z0"),
            pod_group_object("g", min_count=1, priority=10),
            pod_object("g-0", node_name="n0", priority=10, group="g", requests={"cpu": "1"}),
            pod_object("g-1", priority=10, group="g", requests={"cpu": "1"}),
        ]
    )
    g, e = _both(c)
    assert e.victims == [] and e.placements() == {}


# ---- the seeded fuzz of issue 12 ---------------------------------------------------------------------
def _first_difference(a: dict[str, float], b: dict[str, float]) -> str | None:
    return next((k for k in a if k in b and a[k] != b[k]), None)


def _fuzz(seeds) -> dict[str, int]:
    """Both engines on small_preemption(seed): both valid, exact never lexicographically worse;
    counts of seeds where exact is strictly better, and where it disrupts strictly less (the
    first differing tier is a disruption tier: admission and placement equal)."""
    counts = {"seeds": 0, "exactBetter": 0, "exactDisruptsLess": 0}
    for seed in seeds:
        c = to_cluster(small_preemption(seed))
        g = solve_greedy(c)
        e = solve_exact(c, hint=g, time_limit=5.0, workers=1)
        assert [str(v) for v in validate(c, g)] == [], seed
        assert [str(v) for v in validate(c, e)] == [], seed
        assert compare(e.objective, g.objective) >= 0, (seed, e.objective, g.objective)
        counts["seeds"] += 1
        if compare(e.objective, g.objective) > 0:
            counts["exactBetter"] += 1
            tier = _first_difference(e.objective, g.objective)
            if tier is not None and is_cost(tier):
                counts["exactDisruptsLess"] += 1
    print(f"small_preemption fuzz: {counts}")
    return counts


def test_fuzz_both_engines_valid_and_exact_never_worse_on_40_seeds():
    counts = _fuzz(range(40))
    assert counts["seeds"] == 40 and counts["exactDisruptsLess"] > 0


@pytest.mark.slow
def test_fuzz_both_engines_valid_and_exact_never_worse_on_300_seeds():
    counts = _fuzz(range(300))
    assert counts["seeds"] == 300 and counts["exactDisruptsLess"] > 0
