"""The exact engine, one constraint family at a time, on tiny snapshots whose optimum is worked out
by hand (stated in each case). Each family is also tested alone: a placement that breaks only that
family is forced through ``fixed`` and the model must be infeasible, and ``check_feasible`` must
name the family. Every Result goes through the independent validator."""

from __future__ import annotations

import pytest

from gangplan.bench.generators.builders import (
    composite_pod_group_object,
    node_object,
    pod_group_object,
    pod_object,
)
from gangplan.io.loader import load_objects
from gangplan.models.result import Status
from gangplan.models.well_known import GPU, HOSTNAME, ZONE
from gangplan.solver.exact import check_feasible, solve_exact
from gangplan.solver.outcome import build_result
from gangplan.solver.validate import validate


def cluster(*objs):
    return load_objects(
        [o for group in objs for o in (group if isinstance(group, list) else [group])]
    )


def solve(c, **kw):
    kw.setdefault("time_limit", 10.0)
    r = solve_exact(c, **kw)
    assert [str(v) for v in validate(c, r)] == []
    return r


def shared(r) -> dict[str, float]:
    """The tiers both engines share (admitted per priority, placed)."""
    return {k: v for k, v in r.objective.items() if k.startswith("admitted") or k == "placed"}


def node(name, labels=None, **kw):
    return node_object(name, labels={HOSTNAME: name, **(labels or {})}, **kw)


def gang(name, size, min_count, *, requests, priority=0, pod_kw=None, **group_kw):
    """A PodGroup (gang, or basic with min_count=None) and ``size`` identical pending members."""
    policy = "basic" if min_count is None else "gang"
    objs = [
        pod_group_object(
            name, policy=policy, min_count=min_count or 1, priority=priority, **group_kw
        )
    ]
    for i in range(size):
        objs.append(
            pod_object(
                f"{name}-{i}",
                group=name,
                requests=requests,
                priority=priority,
                labels={"group": name},
                created=i,
                **(pod_kw or {}),
            )
        )
    return objs


def assert_forced_infeasible(c, fixed, family):
    """Forcing ``fixed`` breaks exactly ``family``: the model is infeasible and the family named."""
    r = solve_exact(c, time_limit=5.0, fixed=fixed)
    assert r.status == Status.INFEASIBLE
    verdict = check_feasible(c, {k: v for k, v in fixed.items() if v is not None})
    assert verdict is not True
    assert any(v == family or v.startswith(family + ":") for v in verdict), verdict


# ---- capacity ---------------------------------------------------------------------------------
def capacity_cluster():
    # n1 has 8 GPUs, n2 has 4: 12 GPUs. Gang a: 3 x 4 GPUs (12), gang b: 2 x 4 GPUs (8).
    # Both need 20 > 12, so one gang runs; a places more pods. Optimum: admitted 1, placed 3 (a).
    return cluster(
        node("n1", gpus=8, cpu="32"),
        node("n2", gpus=4, cpu="32"),
        gang("a", 3, 3, requests={"cpu": "1", GPU: "4"}),
        gang("b", 2, 2, requests={"cpu": "1", GPU: "4"}),
    )


def test_capacity_on_an_extended_resource_admits_the_gang_that_places_more_pods():
    r = solve(capacity_cluster())
    assert r.status == Status.OPTIMAL
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 3.0}
    assert r.admitted_groups() == ["default/a"]


def test_capacity_alone_rejects_three_four_gpu_pods_on_an_eight_gpu_node():
    c = capacity_cluster()
    fixed = {"default/a-0": "n1", "default/a-1": "n1", "default/a-2": "n1"}
    assert_forced_infeasible(c, fixed, "capacity")


def test_the_pod_slot_counts_as_capacity():
    # n1 allows 2 pods and runs one already; a basic group of 3 tiny pods places 1 pod.
    c = cluster(
        node("n1", pods=2),
        pod_object("running", node_name="n1", requests={"cpu": "100m"}),
        gang("g", 3, None, requests={"cpu": "100m"}),
    )
    r = solve(c)
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 1.0}
    assert check_feasible(c, {"default/g-0": "n1", "default/g-1": "n1"}) == ["capacity"]


# ---- taints and unschedulable -----------------------------------------------------------------
def taint_cluster():
    # t1: NoSchedule taint, t2: NoExecute taint, u: cordoned, p: PreferNoSchedule (does not block).
    # Four single pods without tolerations fit only on p (room for 4). One pod tolerating
    # everything could go anywhere. Optimum: all 5 placed.
    taint = {"key": "dedicated", "value": "gpu"}
    return cluster(
        node("t1", taints=[{**taint, "effect": "NoSchedule"}]),
        node("t2", taints=[{**taint, "effect": "NoExecute"}]),
        node("u", unschedulable=True),
        node("p", cpu="4", taints=[{**taint, "effect": "PreferNoSchedule"}]),
        [pod_object(f"s{i}", requests={"cpu": "1"}) for i in range(4)],
        pod_object("tol", requests={"cpu": "1"}, tolerations=[{"operator": "Exists"}]),
    )


def test_taints_and_cordons_leave_only_the_prefer_no_schedule_node_to_intolerant_pods():
    r = solve(taint_cluster())
    assert shared(r) == {"admitted[p=0]": 5.0, "placed": 5.0}
    assert {r.pods[f"default/s{i}"].node for i in range(4)} == {"p"}
    assert r.pods["default/tol"].node in {"t1", "t2", "u"}


@pytest.mark.parametrize(
    "target, family", [("t1", "taint"), ("t2", "taint"), ("u", "unschedulable")]
)
def test_taint_rules_alone_reject_a_forced_intolerant_pod(target, family):
    assert_forced_infeasible(taint_cluster(), {"default/s0": target}, family)


# ---- node selector and required node affinity ---------------------------------------------------
def selector_cluster():
    # a: nodeSelector gpu=h100 (only h1); b: required affinity size Gt 8 (only big);
    # each node holds one pod. Optimum: both placed, a on h1, b on big.
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "size", "operator": "Gt", "values": ["8"]}]}
                ]
            }
        }
    }
    return cluster(
        node("h1", cpu="1", labels={"gpu": "h100", "size": "4"}),
        node("big", cpu="1", labels={"gpu": "a100", "size": "16"}),
        node("other", cpu="1", labels={"size": "2"}),
        pod_object("a", requests={"cpu": "1"}, node_selector={"gpu": "h100"}),
        pod_object("b", requests={"cpu": "1"}, affinity=affinity),
    )


def test_node_selector_and_node_affinity_pick_the_only_matching_nodes():
    r = solve(selector_cluster())
    assert r.placements() == {"default/a": "h1", "default/b": "big"}


def test_node_selector_alone_rejects_a_forced_mismatch():
    assert_forced_infeasible(selector_cluster(), {"default/a": "big"}, "node-selector")
    assert_forced_infeasible(selector_cluster(), {"default/b": "other"}, "node-selector")


# ---- host ports ---------------------------------------------------------------------------------
def port_cluster():
    # A bound pod holds port 8080 on n1. Basic group of 3 pods all wanting 8080 on n1, n2, n3:
    # one per node, n1 excluded. Optimum: 2 placed, on n2 and n3.
    return cluster(
        node("n1"),
        node("n2"),
        node("n3"),
        pod_object("web", node_name="n1", requests={"cpu": "100m"}, host_ports=[8080]),
        gang("g", 3, None, requests={"cpu": "100m"}, pod_kw={"host_ports": [8080]}),
    )


def test_host_ports_allow_one_pod_per_node_and_respect_bound_pods():
    r = solve(port_cluster())
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 2.0}
    assert sorted(r.placements().values()) == ["n2", "n3"]


def test_host_ports_alone_reject_two_pods_on_one_node_and_a_pod_beside_the_bound_one():
    assert_forced_infeasible(
        port_cluster(), {"default/g-0": "n2", "default/g-1": "n2"}, "host-port"
    )
    assert_forced_infeasible(port_cluster(), {"default/g-0": "n1"}, "host-port")


# ---- inter-pod anti-affinity -----------------------------------------------------------------
def anti_cluster():
    # Gang of 3 (minCount 2), one pod per host by anti-affinity to its own group; 2 hosts.
    # Optimum: admitted 1, placed 2.
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"group": "g"}}, "topologyKey": HOSTNAME}
            ]
        }
    }
    return cluster(
        node("n1"), node("n2"), gang("g", 3, 2, requests={"cpu": "100m"}, pod_kw={"affinity": anti})
    )


def test_anti_affinity_by_hostname_places_one_pod_per_node():
    r = solve(anti_cluster())
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 2.0}
    assert sorted(r.placements().values()) == ["n1", "n2"]


def test_anti_affinity_alone_rejects_two_members_on_one_node():
    assert_forced_infeasible(
        anti_cluster(), {"default/g-0": "n1", "default/g-1": "n1"}, "pod-anti-affinity"
    )


def test_a_running_pods_anti_affinity_keeps_matching_pods_out_of_its_zone():
    # The running pod in zone a repels app=web by zone: web pods only fit zone b (1 node, 1 pod).
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": ZONE}
            ]
        }
    }
    c = cluster(
        node("a1", labels={ZONE: "a"}),
        node("a2", labels={ZONE: "a"}),
        node("b1", cpu="1", labels={ZONE: "b"}),
        pod_object("guard", node_name="a1", requests={"cpu": "100m"}, affinity=anti),
        pod_object("web-0", requests={"cpu": "1"}, labels={"app": "web"}),
        pod_object("web-1", requests={"cpu": "1"}, labels={"app": "web"}),
    )
    r = solve(c)
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 1.0}
    assert list(r.placements().values()) == ["b1"]
    assert check_feasible(c, {"default/web-0": "a2"}) == [
        "pod-anti-affinity: default/web-0 on node a2"
    ]


# ---- inter-pod affinity -----------------------------------------------------------------------
def self_affine_cluster():
    # Basic group of 2 pods, each requiring a pod of its group on the same host; each node fits
    # one pod. First-pod rule: one pod alone may go anywhere, two must share a host. Optimum:
    # admitted 1, placed 1.
    aff = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"group": "g"}}, "topologyKey": HOSTNAME}
            ]
        }
    }
    return cluster(
        node("n1", cpu="1"),
        node("n2", cpu="1"),
        gang("g", 2, None, requests={"cpu": "1"}, pod_kw={"affinity": aff}),
    )


def test_the_first_pod_rule_lets_exactly_one_self_affine_pod_run_alone():
    r = solve(self_affine_cluster())
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 1.0}


def test_pod_affinity_alone_rejects_self_affine_pods_on_different_hosts():
    assert_forced_infeasible(
        self_affine_cluster(), {"default/g-0": "n1", "default/g-1": "n2"}, "pod-affinity"
    )


def test_affinity_to_a_running_pod_confines_pods_to_its_zone():
    aff = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": ZONE}
            ]
        }
    }
    c = cluster(
        node("a1", labels={ZONE: "a"}),
        node("b1", labels={ZONE: "b"}),
        node("b2", labels={ZONE: "b"}),
        pod_object("db", node_name="b2", requests={"cpu": "100m"}, labels={"app": "db"}),
        pod_object("app", requests={"cpu": "1"}, affinity=aff),
    )
    r = solve(c)
    assert r.pods["default/app"].node in {"b1", "b2"}
    assert check_feasible(c, {"default/app": "a1"}) == ["pod-affinity"]


# ---- topology spread --------------------------------------------------------------------------
def spread_cluster(min_count):
    # Zone a: 3 roomy nodes; zone b: 1 node with room for 1 pod. 4 pods, maxSkew 1 by zone.
    # Final state: b holds at most 1, so a at most 2. Basic group: placed 3. Gang of 4: nothing.
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"group": "g"}},
        }
    ]
    return cluster(
        node("a1", labels={ZONE: "a"}),
        node("a2", labels={ZONE: "a"}),
        node("a3", labels={ZONE: "a"}),
        node("b1", cpu="1", labels={ZONE: "b"}),
        gang("g", 4, min_count, requests={"cpu": "1"}, pod_kw={"topology_spread": spread}),
    )


def test_spread_caps_the_roomy_zone_at_max_skew_above_the_small_one():
    r = solve(spread_cluster(None))
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 3.0}
    r = solve(spread_cluster(4))
    assert shared(r) == {"admitted[p=0]": 0.0, "placed": 0.0}


def test_spread_alone_rejects_three_pods_in_one_zone_against_one_in_the_other():
    fixed = {"default/g-0": "a1", "default/g-1": "a2", "default/g-2": "a3", "default/g-3": None}
    assert_forced_infeasible(spread_cluster(None), fixed, "topology-spread")


# ---- gangs, basic groups, composites, group topology -------------------------------------------
def extras_cluster():
    # Gang of 5 with minCount 3; room for 4 pods. Optimum: admitted 1, placed 4 (extras allowed).
    return cluster(node("n1", cpu="2"), node("n2", cpu="2"), gang("g", 5, 3, requests={"cpu": "1"}))


def test_a_gang_places_extra_pods_past_min_count():
    r = solve(extras_cluster())
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 4.0}
    assert r.groups["default/g"].admitted


def test_the_gang_rule_alone_rejects_fewer_than_min_count_pods():
    fixed = {
        "default/g-0": "n1",
        "default/g-1": "n2",
        "default/g-2": None,
        "default/g-3": None,
        "default/g-4": None,
    }
    assert_forced_infeasible(extras_cluster(), fixed, "gang")


def test_bound_members_count_toward_min_count():
    # 2 of a minCount-3 gang already run; room for 1 more pod: placing it admits the gang.
    c = cluster(
        node("n1", cpu="3"),
        pod_group_object("g", min_count=3),
        [
            pod_object(f"run-{i}", group="g", node_name="n1", requests={"cpu": "1"})
            for i in range(2)
        ],
        pod_object("new", group="g", requests={"cpu": "1"}),
    )
    r = solve(c)
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 1.0}


def test_a_basic_group_places_whatever_fits():
    c = cluster(node("n1", cpu="2"), gang("b", 3, None, requests={"cpu": "1"}))
    r = solve(c)
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 2.0}


def test_a_composite_group_needs_min_group_count_satisfied_children():
    # Root needs 2 of 3 child gangs (2 x 1 cpu each); room for 5 cpu: 2 children fit, not 3.
    # Optimum: the root admitted (1 entity), placed 4. With room for 3 cpu: nothing.
    def build(cpu):
        objs = [node("n1", cpu=cpu), composite_pod_group_object("root", min_group_count=2)]
        for k in range(3):
            objs += gang(f"c{k}", 2, 2, requests={"cpu": "1"}, parent="root")
        return cluster(*objs)

    r = solve(build("5"))
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 4.0}
    r = solve(build("3"))
    assert shared(r) == {"admitted[p=0]": 0.0, "placed": 0.0}
    verdict = check_feasible(build("5"), {"default/c0-0": "n1", "default/c0-1": "n1"})
    assert verdict == ["composite"]


def test_a_group_topology_key_keeps_the_gang_in_one_zone():
    # Each zone has 2 one-pod nodes; a gang of 3 with topology zone cannot run, a gang of 2 can.
    nodes = [node(f"{z}{i}", cpu="1", labels={ZONE: z}) for z in "ab" for i in range(2)]
    r = solve(cluster(*nodes, gang("g", 3, 3, requests={"cpu": "1"}, topology_key=ZONE)))
    assert shared(r) == {"admitted[p=0]": 0.0, "placed": 0.0}
    c = cluster(*nodes, gang("g", 2, 2, requests={"cpu": "1"}, topology_key=ZONE))
    r = solve(c)
    assert r.groups["default/g"].domain in {f"{ZONE}=a", f"{ZONE}=b"}
    assert check_feasible(c, {"default/g-0": "a0", "default/g-1": "b0"}) == ["topology"]


# ---- priorities, validation, gating -----------------------------------------------------------
def test_a_higher_priority_admission_beats_any_number_of_lower_ones():
    # One 4-cpu node. hi: 1 pod x 3 cpu at priority 100; lo1, lo2: 1 pod x 2 cpu at priority 0.
    # Optimum: hi admitted (admitted[p=100] = 1), no low one fits beside it.
    c = cluster(
        node("n1", cpu="4"),
        gang("hi", 1, 1, requests={"cpu": "3"}, priority=100),
        gang("lo1", 1, 1, requests={"cpu": "2"}),
        gang("lo2", 1, 1, requests={"cpu": "2"}),
    )
    r = solve(c)
    assert shared(r) == {"admitted[p=100]": 1.0, "admitted[p=0]": 0.0, "placed": 1.0}


def test_a_group_whose_pod_priority_differs_from_the_group_is_never_placed():
    c = cluster(
        node("n1"),
        pod_group_object("g", min_count=1, priority=10),
        pod_object("ok", group="g", priority=10, requests={"cpu": "1"}),
        pod_object("odd", group="g", priority=5, requests={"cpu": "1"}),
    )
    r = solve(c)
    assert r.placements() == {}
    assert r.pods["default/ok"].reason.startswith("SchedulerError: ")


def test_gated_pods_are_never_placed():
    gated = pod_object("gated", requests={"cpu": "1"})
    gated["spec"]["schedulingGates"] = [{"name": "wait"}]
    c = cluster(node("n1"), gated, pod_object("free", requests={"cpu": "1"}))
    r = solve(c)
    assert r.placements() == {"default/free": "n1"}
    assert r.pods["default/gated"].reason.startswith("gated")
    assert check_feasible(c, {"default/gated": "n1"})[0].startswith("result-shape")


# ---- objective choice, hints, fixed, bookkeeping -------------------------------------------------
def gpu_choice_cluster():
    # One node, 4 cpu, 8 GPUs. Single pods: a (2 cpu, 8 GPUs), b and c (2 cpu each, no GPU).
    # Any two pods fit: admitted 2, placed 2 either way; objective "gpus" must take a.
    return cluster(
        node("n1", cpu="4", gpus=8),
        pod_object("a", requests={"cpu": "2", GPU: "8"}),
        pod_object("b", requests={"cpu": "2"}),
        pod_object("c", requests={"cpu": "2"}),
    )


def test_the_gpus_objective_prefers_allocating_gpus_after_admission():
    r = solve(gpu_choice_cluster(), objective="gpus")
    assert shared(r) == {"admitted[p=0]": 2.0, "placed": 2.0}
    assert r.objective["gpus"] == 8.0
    assert r.pods["default/a"].node == "n1"


def test_an_unknown_objective_is_refused():
    with pytest.raises(ValueError, match="objective"):
        solve_exact(gpu_choice_cluster(), objective="fastest")


def test_a_valid_hint_is_used_and_the_answer_is_never_worse():
    c = capacity_cluster()
    hint = build_result(
        c,
        engine="greedy",
        status=Status.HEURISTIC,
        placements={"default/b-0": "n2", "default/b-1": "n1"},
    )
    r = solve(c, hint=hint, time_limit=5.0)
    assert r.exact_trace.hint.used is True
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 3.0}


def test_the_entities_an_invalid_hint_breaks_are_dropped_before_it_is_trusted():
    c = capacity_cluster()
    hint = build_result(
        c,
        engine="greedy",
        status=Status.HEURISTIC,
        placements={f"default/a-{i}": "n2" for i in range(3)},
    )
    r = solve(c, hint=hint, time_limit=5.0)
    assert r.exact_trace.hint.dropped == 3
    assert r.exact_trace.hint.violations[0].startswith("[capacity] Node/n2")
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 3.0}


def test_fixed_pods_stay_where_they_are_forced_and_the_rest_is_optimised():
    r = solve(capacity_cluster(), fixed={"default/b-0": "n1", "default/b-1": "n1"})
    assert r.pods["default/b-0"].node == "n1" and r.pods["default/b-1"].node == "n1"
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 2.0}


def test_an_exact_placement_is_feasible_in_check_feasible():
    c = port_cluster()
    assert check_feasible(c, solve(c).placements()) is True


def test_the_tier_values_of_the_model_match_the_shared_objective():
    r = solve(capacity_cluster())
    for phase in r.exact_trace.phases:
        assert r.objective[phase.tier] == phase.value
    assert r.gap == 0.0 and r.bound["placed"] == 3.0
    assert r.engine == "exact"


def test_fixing_a_valid_prefix_starts_from_it_and_still_finds_the_optimum():
    # Forcing gang a's three pods where they fit is valid on its own, so it is the incumbent.
    fixed = {"default/a-0": "n1", "default/a-1": "n1", "default/a-2": "n2"}
    r = solve(capacity_cluster(), fixed=fixed)
    assert r.exact_trace.hint.start == "the fixed placements alone"
    assert {k: r.pods[k].node for k in fixed} == fixed
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 3.0}


def test_fixing_pods_onto_a_node_that_does_not_exist_is_infeasible():
    r = solve_exact(capacity_cluster(), fixed={"default/a-0": "nowhere"})
    assert r.status == Status.INFEASIBLE
    assert r.exact_trace.infeasible == ["result-shape: default/a-0 fixed to unknown node 'nowhere'"]


def two_zone_nodes(cpu="1"):
    return [node(f"{z}{i}", cpu=cpu, labels={ZONE: z}) for z in "ab" for i in range(2)]


def test_a_topology_gang_with_extras_keeps_its_extras_in_its_own_zone():
    # Zone a has room for 2 pods, zone b for 1 (b1 is full). Gang of 3, minCount 2, one zone:
    # optimum admitted 1, placed 2, both in zone a (the pooled count-per-domain path).
    nodes = two_zone_nodes()
    c = cluster(
        *nodes,
        pod_object("busy", node_name="b1", requests={"cpu": "1"}),
        gang("g", 3, 2, requests={"cpu": "1"}, topology_key=ZONE),
    )
    r = solve(c)
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 2.0}
    assert r.groups["default/g"].domain == f"{ZONE}=a"


def test_a_topology_gang_of_pods_with_host_ports_needs_one_node_per_pod_in_one_zone():
    # Private classes (host ports) under a group topology: 3 pods cannot fit in a 2-node zone.
    roomy = two_zone_nodes(cpu="4")
    r = solve(
        cluster(
            *roomy,
            gang(
                "g", 3, 3, requests={"cpu": "1"}, topology_key=ZONE, pod_kw={"host_ports": [9000]}
            ),
        )
    )
    assert shared(r) == {"admitted[p=0]": 0.0, "placed": 0.0}
    r = solve(
        cluster(
            *roomy,
            gang(
                "g", 2, 2, requests={"cpu": "1"}, topology_key=ZONE, pod_kw={"host_ports": [9000]}
            ),
        )
    )
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 2.0}
    assert len(set(r.placements().values())) == 2


def test_a_composite_topology_keeps_every_child_group_in_one_zone():
    # Two child gangs of 2 one-cpu pods under a root confined to one zone; each zone holds 4 pods
    # only when both nodes are 2-cpu. With 1-cpu nodes the root cannot run both children in a zone.
    def build(cpu):
        objs = [
            *two_zone_nodes(cpu=cpu),
            composite_pod_group_object("root", min_group_count=2, topology_key=ZONE),
        ]
        for k in range(2):
            objs += gang(f"c{k}", 2, 2, requests={"cpu": "1"}, parent="root")
        return cluster(*objs)

    r = solve(build("2"))
    assert shared(r) == {"admitted[p=0]": 1.0, "placed": 4.0}
    assert len({n[0] for n in r.placements().values()}) == 1
    r = solve(build("1"))
    assert shared(r) == {"admitted[p=0]": 0.0, "placed": 0.0}
