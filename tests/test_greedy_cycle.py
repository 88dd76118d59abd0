"""The pod-group cycle and the per-pod cycle of the greedy engine, on small hand-made clusters.

Group scenarios follow upstream's integration tests (spec §6.1
``test/integration/scheduler/podgroup/podgroup_test.go`` @008b3652 and §6.3 ``cpg_test.go``
@16457a8a): one 4-CPU node, 1-CPU pods, priority 100 unless said otherwise.
"""

from __future__ import annotations

import json

import pytest

from gangplan.models.objects import CompositePodGroup, PodGroup, SchedulerProfile
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.greedy.schedule_one import num_feasible_nodes_to_find
from gangplan.solver.greedy.snapshot import node_tree_order
from gangplan.solver.greedy.testing import make_cluster, make_node, make_pod
from gangplan.solver.validate import validate

CPU = 1000
GiB = 1024**3


def node(name="node-1", cpu=4, **kw):
    return make_node(name, cpu=cpu * CPU, memory=64 * GiB, **kw)


def gang(name, min_count, policy="gang", priority=100, **kw):
    return PodGroup(
        namespace="default",
        name=name,
        policy=policy,
        min_count=min_count if policy == "gang" else 1,
        priority=priority,
        **kw,
    )


def member(name, group, cpu=1, t=0, priority=100, **kw):
    return make_pod(
        name,
        group=group,
        requests={"cpu": cpu * CPU, "memory": GiB},
        priority=priority,
        created=f"2026-11-30T10:00:{t:02d}Z",
        **kw,
    )


def blocker(cpu, node_name="node-1"):
    return make_pod(
        f"blocker-{cpu}", node=node_name, requests={"cpu": cpu * CPU, "memory": GiB}, priority=100
    )


def solve(cluster, **kw):
    r = solve_greedy(cluster, **kw)
    assert validate(cluster, r) == []
    return r


def test_gang_that_fits_binds_every_pod():
    c = make_cluster(
        [node()], [member(f"p{i}", "pg", t=i) for i in range(3)], groups=[gang("pg", 3)]
    )
    r = solve(c)
    assert r.groups["default/pg"].admitted and len(r.placements()) == 3


def test_gang_with_min_count_met_places_extra_pods_greedily_and_leaves_the_rest():
    """podgroup_test case 4: a 1-CPU blocker, gang minCount 3 of four 1-CPU pods: exactly 3 bind."""
    c = make_cluster(
        [node()],
        [blocker(1)] + [member(f"p{i}", "pg", t=i) for i in range(4)],
        groups=[gang("pg", 3)],
    )
    r = solve(c)
    assert r.groups["default/pg"].admitted
    assert sorted(r.placements()) == ["default/p0", "default/p1", "default/p2"]
    assert r.pods["default/p3"].reason == "0/1 nodes are available: 1 Insufficient cpu."
    assert r.greedy_trace.groups["default/pg"].progression == ["Wait", "Wait", "Success", "Success"]


def test_gang_that_cannot_reach_min_count_places_nothing():
    """podgroup_test case 3: a 2-CPU blocker leaves room for 2 of the 3 pods: none bind."""
    c = make_cluster(
        [node()],
        [blocker(2)] + [member(f"p{i}", "pg", t=i) for i in range(3)],
        groups=[gang("pg", 3)],
    )
    r = solve(c)
    assert not r.groups["default/pg"].admitted
    assert r.placements() == {}
    assert r.pods["default/p0"].reason.startswith(
        "pod group default/pg is unschedulable: PodGroup default/pg: minCount 3 not reached"
    )


@pytest.mark.parametrize(
    ("times", "winner"),
    [
        ({"p": (0, 2, 5), "other-p": (1, 3, 4)}, "default/other"),  # other-p3 arrives before p3
        ({"p": (0, 2, 4), "other-p": (1, 3, 5)}, "default/pg1"),
    ],
    ids=["the gang completing its quorum first wins", "the gang whose pods are all older wins"],
)
def test_two_gangs_race_for_one_node_without_deadlock_or_partial_placement(times, winner):
    """podgroup_test case 5: two gangs of three 1-CPU pods on one 4-CPU node."""
    pods = [member(f"p{i + 1}", "pg1", t=t) for i, t in enumerate(times["p"])]
    pods += [member(f"other-p{i + 1}", "other", t=t) for i, t in enumerate(times["other-p"])]
    r = solve(make_cluster([node()], pods, groups=[gang("pg1", 3), gang("other", 3)]))
    assert [k for k, g in r.groups.items() if g.admitted] == [winner]
    assert len(r.placements()) == 3


def test_basic_group_binds_what_fits():
    """podgroup_test case 8: basic group, 2-CPU blocker: 2 bound, 1 unschedulable."""
    c = make_cluster(
        [node()],
        [blocker(2)] + [member(f"p{i}", "pg", t=i) for i in range(3)],
        groups=[gang("pg", 1, policy="basic")],
    )
    r = solve(c)
    assert r.groups["default/pg"].admitted and len(r.placements()) == 2


def test_gang_whose_min_count_is_met_by_bound_pods_needs_a_new_pod_to_succeed():
    """Spec §1.4 step 6: root Success with no newly placed pod becomes Unschedulable."""
    bound = [
        make_pod(
            f"b{i}",
            group="pg",
            node="node-1",
            requests={"cpu": 2 * CPU, "memory": GiB},
            priority=100,
        )
        for i in range(2)
    ]
    c = make_cluster([node()], bound + [member("late", "pg")], groups=[gang("pg", 2)])
    r = solve(c)
    assert not r.groups["default/pg"].admitted
    assert r.pods["default/late"].reason == "0/1 nodes are available: 1 Insufficient cpu."


def test_a_pod_whose_priority_differs_from_its_group_fails_the_whole_group_with_a_scheduler_error():
    c = make_cluster(
        [node()], [member("p0", "pg"), member("p1", "pg", priority=5)], groups=[gang("pg", 2)]
    )
    r = solve(c)
    assert r.placements() == {}
    assert r.pods["default/p0"].reason.startswith(
        'pod group default/pg is unschedulable: SchedulerError: all pods in a pod group hierarchy should have the same priority as the root pod group\'s priority, got 5 ("p1") and 100 ("default/pg")'
    )
    assert r.greedy_trace.groups["default/pg"].status == "Error"
    assert r.greedy_trace.order == []


def test_a_failed_gang_gives_its_room_back_to_later_entities():
    """The gang (queued first) places 2 pods, fails on the third and reverts; the single pod
    queued after it then fits."""
    pods = [member(f"g{i}", "pg", cpu=2, t=i) for i in range(3)] + [
        make_pod("solo", requests={"cpu": 4 * CPU}, priority=100, created="2026-11-30T10:00:09Z")
    ]
    r = solve(make_cluster([node()], pods, groups=[gang("pg", 3)]))
    assert not r.groups["default/pg"].admitted
    assert r.placements() == {"default/solo": "node-1"}
    assert r.greedy_trace.order == ["default/g0", "default/g1", "default/g2", "default/solo"]


def test_higher_priority_entities_go_first():
    pods = [
        make_pod("low", requests={"cpu": 3 * CPU}, priority=1, created="2026-11-30T10:00:00Z"),
        make_pod("high", requests={"cpu": 3 * CPU}, priority=9, created="2026-11-30T10:00:05Z"),
    ]
    r = solve(make_cluster([node()], pods))
    assert r.placements() == {"default/high": "node-1"}
    assert r.greedy_trace.order == ["default/high", "default/low"]


def test_gated_pods_are_never_scheduled():
    c = make_cluster([node()], [make_pod("held", requests={"cpu": CPU})]).model_copy(
        update={"gated": {"default/held": "scheduling gates: x"}}
    )
    r = solve(c)
    assert r.placements() == {} and r.greedy_trace.order == []
    assert r.pods["default/held"].reason == "gated: scheduling gates: x"


def test_a_nominated_node_that_passes_filter_is_taken_without_scoring():
    pod = make_pod("p", requests={"cpu": CPU}).model_copy(update={"nominated_node_name": "node-2"})
    r = solve(make_cluster([node("node-1", cpu=8), node("node-2", cpu=2)], [pod]))
    assert r.placements() == {"default/p": "node-2"}
    assert (
        r.greedy_trace.pods["default/p"].evaluated_nodes == 1
        and r.greedy_trace.pods["default/p"].top == []
    )


def test_ties_go_to_the_lowest_snapshot_position_or_to_a_seeded_choice():
    nodes = [node(f"n{i}") for i in range(6)]
    c = make_cluster(nodes, [make_pod("p", requests={"cpu": CPU})])
    assert solve(c).placements() == {"default/p": "n0"}
    picks = {solve(c, tie_break="random", seed=s).placements()["default/p"] for s in range(12)}
    assert len(picks) > 1 and picks <= {f"n{i}" for i in range(6)}
    assert (
        solve(c, tie_break="random", seed=3).placements()
        == solve(c, tie_break="random", seed=3).placements()
    )
    trace = solve(c).greedy_trace.pods["default/p"]
    assert trace.tie_set == [f"n{i}" for i in range(6)] and trace.tie_count == 6


@pytest.mark.parametrize(
    ("percentage", "nodes", "want"),
    [
        (0, 50, 50),
        (0, 100, 100),
        (0, 1000, 420),
        (0, 5000, 500),
        (0, 20000, 1000),
        (30, 1000, 300),
        (5, 1000, 100),
        (100, 5000, 5000),
    ],
)
def test_num_feasible_nodes_to_find_follows_the_adaptive_formula(percentage, nodes, want):
    assert num_feasible_nodes_to_find(percentage, nodes) == want


def test_filtering_stops_after_enough_feasible_nodes_and_rotates_the_start_index():
    nodes = [node(f"n{i:03d}") for i in range(200)]
    pods = [
        make_pod(f"p{i}", requests={"cpu": CPU}, created=f"2026-11-30T10:00:0{i}Z")
        for i in range(3)
    ]
    c = make_cluster(nodes, pods, profile=SchedulerProfile(percentage_of_nodes_to_score=50))
    r = solve(c)
    t = r.greedy_trace.pods
    assert [t[f"default/p{i}"].evaluated_nodes for i in range(3)] == [100, 100, 100]
    # The first pod scores n000..n099 and ties on n000; the second starts at n100.
    assert [r.placements()[f"default/p{i}"] for i in range(3)] == ["n000", "n100", "n001"]


def test_node_tree_order_interleaves_zones():
    zl = "topology.kubernetes.io/zone"
    nodes = [
        node("a1", labels={zl: "a"}),
        node("a2", labels={zl: "a"}),
        node("b1", labels={zl: "b"}),
        node("a3", labels={zl: "a"}),
    ]
    c = make_cluster(nodes)
    assert [c.nodes[i].name for i in node_tree_order(c)] == ["a1", "b1", "a2", "a3"]


# ---- CompositePodGroup (spec §4.2, cpg_test.go @16457a8a on one 20-CPU node) -----------------
def cpg(name, min_group_count, policy="gang", parent=None):
    return CompositePodGroup(
        namespace="default",
        name=name,
        policy=policy,
        min_group_count=min_group_count if policy == "gang" else 1,
        priority=100,
        parent=parent,
    )


def _cpg_cluster(cpgs, groups, pods):
    c = make_cluster([node(cpu=20)], pods, groups=groups)
    return c.model_copy(update={"composite_pod_groups": {g.key: g for g in cpgs}})


def test_composite_min_group_count_admits_the_root_when_enough_children_fit():
    """cpg_test case 2: root gang 2 over pg1, pg2 (fit) and pg3 (pods 100, 1, 1 CPU; minCount 3)."""
    groups = [
        gang("pg1", 1, parent="root", creation_timestamp="2026-11-30T09:00:01Z"),
        gang("pg2", 1, parent="root", creation_timestamp="2026-11-30T09:00:02Z"),
        gang("pg3", 3, parent="root", creation_timestamp="2026-11-30T09:00:03Z"),
    ]
    pods = [
        member("a", "pg1"),
        member("b", "pg2"),
        member("c1", "pg3", cpu=100),
        member("c2", "pg3"),
        member("c3", "pg3"),
    ]
    r = solve(_cpg_cluster([cpg("root", 2)], groups, pods))
    assert sorted(r.placements()) == ["default/a", "default/b"]
    assert r.groups["default/pg1"].admitted and not r.groups["default/pg3"].admitted


def test_a_failing_composite_parent_overrides_its_successful_children():
    """cpg_test case 1 (sub3): gang 2 over pg6 (fits) and pg7 (does not): pg6 does not bind."""
    groups = [
        gang("pg6", 1, parent="sub3", creation_timestamp="2026-11-30T09:00:01Z"),
        gang("pg7", 1, parent="sub3", creation_timestamp="2026-11-30T09:00:02Z"),
    ]
    pods = [member("f", "pg6"), member("g", "pg7", cpu=100)]
    r = solve(_cpg_cluster([cpg("sub3", 2)], groups, pods))
    assert r.placements() == {}
    assert r.greedy_trace.groups["default/pg6"].status == "Unschedulable"
    assert r.greedy_trace.groups["default/sub3"].status == "Unschedulable"


def test_a_basic_composite_root_binds_whichever_child_fits():
    """cpg_test case 3: basic root with gang children pg1 (fits) and pg2 (does not)."""
    groups = [
        gang("pg1", 2, parent="root", creation_timestamp="2026-11-30T09:00:01Z"),
        gang("pg2", 2, parent="root", creation_timestamp="2026-11-30T09:00:02Z"),
    ]
    pods = [
        member("a1", "pg1"),
        member("a2", "pg1"),
        member("b1", "pg2", cpu=100),
        member("b2", "pg2"),
    ]
    r = solve(_cpg_cluster([cpg("root", 1, policy="basic")], groups, pods))
    assert sorted(r.placements()) == ["default/a1", "default/a2"]


def test_incremental_node_caches_give_the_same_run_as_recomputing_everything(monkeypatch):
    """NodeTable.node_array refreshes only the nodes assume / forget touched; a run with the cache
    forced to recompute every node each time must be identical (placements and trace)."""
    import random

    from gangplan.models.objects import (
        Affinity,
        LabelSelector,
        PodAffinityTerm,
        TopologySpreadConstraint,
    )
    from gangplan.solver.greedy.snapshot import NodeTable

    HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"

    rng = random.Random(5)
    nodes = [
        make_node(
            f"n{i}",
            cpu=rng.choice([2, 4, 8]) * CPU,
            memory=rng.choice([8, 16]) * GiB,
            extra={"nvidia.com/gpu": rng.choice([0, 4])},
            labels={HOST: f"n{i}", ZONE: f"z{i % 3}"},
        )
        for i in range(12)
    ]
    pods, groups = [], []
    for g in range(6):
        groups.append(gang(f"g{g}", rng.choice([1, 2, 3]), policy=rng.choice(["gang", "basic"])))
        for k in range(3):
            req = {"cpu": rng.choice([500, 1000, 2000]), "memory": rng.choice([1, 2]) * GiB}
            if rng.random() < 0.3:
                req["nvidia.com/gpu"] = rng.choice([1, 2])
            extra = {}
            if g % 3 == 1:
                extra["affinity"] = Affinity(
                    pod_anti_affinity_required=(
                        PodAffinityTerm(
                            label_selector=LabelSelector(match_labels={"app": "a"}),
                            topology_key=HOST,
                        ),
                    )
                )
            elif g % 3 == 2:
                extra["spread"] = [
                    TopologySpreadConstraint(
                        max_skew=1,
                        topology_key=ZONE,
                        when_unsatisfiable=rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
                        label_selector=LabelSelector(match_labels={"app": "s"}),
                    )
                ]
            labels = {"app": "a" if g % 3 == 1 else "s"}
            pods.append(
                make_pod(
                    f"g{g}-{k}",
                    group=f"g{g}",
                    requests=req,
                    priority=100,
                    labels=labels,
                    created=f"2026-11-30T10:{g:02d}:{k:02d}Z",
                    **extra,
                )
            )
    c = make_cluster(nodes, pods, groups=groups)
    cached = solve(c).model_copy(update={"wall_seconds": 0.0}).to_json()
    monkeypatch.setattr(NodeTable, "node_array", lambda self, key, compute: compute(self.all_nodes))
    fresh = solve(c).model_copy(update={"wall_seconds": 0.0}).to_json()
    assert cached == fresh
    order = json.loads(cached)["trace"]["order"]
    assert (
        "default/g1-0" in order and "default/g2-0" in order
    )  # affinity and spread pods were tried


@pytest.mark.parametrize(
    ("nominated_priority", "early_goes_to"),
    [(100, "node-2"), (5, "node-1")],
    ids=["an equal-priority nomination keeps its room", "a lower-priority nomination does not"],
)
def test_pods_nominated_to_a_node_reserve_room_against_pods_of_lower_or_equal_priority(
    nominated_priority, early_goes_to
):
    """RunFilterPluginsWithNominatedPods: a pending pod nominated to node-1 counts as running there
    while an earlier pod of lower or equal priority is filtered."""
    nom = make_pod(
        "nom",
        requests={"cpu": 7 * CPU},
        priority=nominated_priority,
        created="2026-11-30T10:00:05Z",
    ).model_copy(update={"nominated_node_name": "node-1"})
    early = make_pod(
        "early", requests={"cpu": 2 * CPU}, priority=100, created="2026-11-30T10:00:00Z"
    )
    r = solve(make_cluster([node("node-1", cpu=8), node("node-2", cpu=4)], [early, nom]))
    assert r.placements()["default/early"] == early_goes_to
    assert r.greedy_trace.order[0] == "default/early"


def test_a_pod_pinned_by_metadata_name_only_filters_its_node_and_reports_the_others_as_absent():
    """NodeAffinity PreFilterResult (matchFields metadata.name, as DaemonSet pods use): the other
    nodes are never filtered and show up as "didn't satisfy plugin(s) [NodeAffinity]"."""
    from gangplan.models.objects import Affinity, NodeSelectorTerm, Requirement

    pin = Affinity(
        node_required=(
            NodeSelectorTerm(
                match_fields=(Requirement(key="metadata.name", operator="In", values=("node-2",)),)
            ),
        )
    )
    pod = make_pod("ds", requests={"cpu": 3 * CPU}, affinity=pin)
    c = make_cluster([node("node-1"), node("node-2"), node("node-3")], [blocker(2, "node-2"), pod])
    r = solve(c, preemption=False)
    assert (
        r.pods["default/ds"].reason
        == "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )
    # With DefaultPreemption (the default profile) the PostFilter message follows: node-2 has no
    # lower-priority pod, the two absent nodes are UnschedulableAndUnresolvable.
    assert solve(c).pods["default/ds"].reason == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    )
    assert r.greedy_trace.pods["default/ds"].evaluated_nodes == 1


def test_pod_scores_at_step_refuses_pods_the_run_never_attempts_and_unknown_nodes():
    from gangplan.solver.greedy import pod_scores_at_step

    c = make_cluster(
        [node()], [member("p0", "pg"), member("p1", "pg", priority=5)], groups=[gang("pg", 2)]
    )
    with pytest.raises(ValueError, match="never attempted"):
        pod_scores_at_step(c, "default/p0", ["node-1"])
    with pytest.raises(KeyError):
        pod_scores_at_step(c, "default/p0", ["nope"])
    with pytest.raises(ValueError, match="not in the snapshot"):
        solve_greedy(c, fixed={"default/p0": "nope"})


def test_trace_lists_queue_entities_in_order():
    pods = [
        member("g0", "pg", t=3),
        member("g1", "pg", t=4),
        make_pod("solo", requests={"cpu": CPU}, priority=100, created="2026-11-30T10:00:01Z"),
    ]
    r = solve(make_cluster([node()], pods, groups=[gang("pg", 2)]))
    assert r.greedy_trace.entities == ["pod:default/solo", "default/pg"]


def test_a_placement_restricts_the_nodes_a_pod_may_take():
    """The hook a TAS placement wrapper uses (spec §3.3): only the placement's nodes are scanned."""
    import numpy as np

    from gangplan.solver.greedy.podgroup import WorkloadCycle
    from gangplan.solver.greedy.profile import build_profile
    from gangplan.solver.greedy.queue import entities
    from gangplan.solver.greedy.schedule_one import PodScheduler
    from gangplan.solver.greedy.snapshot import NodeTable
    from gangplan.solver.greedy.state import RunState

    c = make_cluster(
        [node("big", cpu=16), node("small", cpu=2)],
        [member(f"p{i}", "pg", t=i) for i in range(2)],
        groups=[gang("pg", 2)],
    )
    snap = NodeTable(c)
    sched = PodScheduler(snap, build_profile(c))
    sched.placement = np.array([snap.index["small"]])
    cycle = WorkloadCycle(RunState.start(c, snap, sched))
    cycle.run(entities(c))
    assert {k: snap.names[i] for k, i in cycle.state.placements.items()} == {
        "default/p0": "small",
        "default/p1": "small",
    }


def test_a_nominated_pod_counts_for_inter_pod_anti_affinity_too():
    """The with-nominated Filter pass adds the nominated pod to every plugin's state: a pod that
    must avoid app=x skips the node where an app=x pod is nominated."""
    from gangplan.models.objects import Affinity, LabelSelector, PodAffinityTerm

    host = "kubernetes.io/hostname"
    nodes = [
        node("node-1", cpu=8, labels={host: "node-1"}),
        node("node-2", cpu=4, labels={host: "node-2"}),
    ]
    guard = make_pod(
        "guard",
        labels={"app": "x"},
        requests={"cpu": CPU},
        priority=100,
        created="2026-11-30T10:00:05Z",
    ).model_copy(update={"nominated_node_name": "node-1"})
    avoid = Affinity(
        pod_anti_affinity_required=(
            PodAffinityTerm(
                label_selector=LabelSelector(match_labels={"app": "x"}), topology_key=host
            ),
        )
    )
    early = make_pod(
        "early", requests={"cpu": CPU}, priority=100, affinity=avoid, created="2026-11-30T10:00:00Z"
    )
    r = solve(make_cluster(nodes, [early, guard]))
    assert r.placements() == {"default/early": "node-2", "default/guard": "node-1"}


def test_fit_error_counts_each_reason_and_sorts_the_histogram_as_strings():
    """FitError.Error(): "0/N nodes are available: <count reason>, ... ." with the entries sorted by
    sort.Strings, so "10 ..." sorts before "2 ..." and a count's digits decide the order."""
    from gangplan.models.objects import Taint

    gpu = "nvidia.com/gpu"
    tainted = [
        node(
            f"t{i}",
            taints=[Taint(key="dedicated", value="infra", effect="NoSchedule")],
            extra={gpu: 8},
        )
        for i in range(2)
    ]
    small = [node(f"s{i}", extra={gpu: 1}) for i in range(3)]
    many = [node(f"m{i:02d}", cpu=1, extra={gpu: 8}) for i in range(10)]
    pod = make_pod("p", requests={"cpu": 2 * CPU, gpu: 4})
    r = solve(make_cluster(tainted + small + many, [pod]), preemption=False)
    assert (
        r.pods["default/p"].reason
        == "0/15 nodes are available: 10 Insufficient cpu, 2 node(s) had untolerated taint(s), 3 Insufficient nvidia.com/gpu."
    )
    assert r.greedy_trace.pods["default/p"].rejections == {
        "NodeResourcesFit": {"Insufficient cpu": 10, "Insufficient nvidia.com/gpu": 3},
        "TaintToleration": {"node(s) had untolerated taint(s)": 2},
    }
