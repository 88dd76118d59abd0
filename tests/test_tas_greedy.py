"""KEP-5732 placements in the greedy engine: generation, evaluation, scoring, choice, trace.

Numbers follow ``topology_placement.go`` and the placement scorers (kubernetes/kubernetes @008b3652); upstream behaviour cited in
gangplan/solver/greedy/placement.py. Nodes here offer cpu only (memory allocatable 0 is skipped
by every resource scorer), so PlacementBinPacking is the cpu fraction of the placement.
"""

from __future__ import annotations

import numpy as np
import pytest

from gangplan.models.cluster import Cluster
from gangplan.models.objects import CompositePodGroup, PodGroup, SchedulerProfile
from gangplan.models.result import Status
from gangplan.solver.greedy import placement_scores_at_step, pod_scores_at_step, solve_greedy
from gangplan.solver.greedy.framework import PlacementError
from gangplan.solver.greedy.plugins.noderesources.placement_bin_packing import bin_packing_score
from gangplan.solver.greedy.plugins.podgrouppodscount import pods_count_scores
from gangplan.solver.greedy.plugins.topologyaware import generate_placements
from gangplan.solver.greedy.profile import build_profile
from gangplan.solver.greedy.snapshot import NodeTable
from gangplan.solver.greedy.testing import make_cluster, make_node, make_pod
from gangplan.solver.validate import validate

RACK = "topology.kubernetes.io/rack"
BLOCK = "cloud.google.com/gce-topology-block"
CPU = 1000


def rack_node(name: str, rack: str | None, cpu: int = 2, block: str | None = None):
    labels = {} if rack is None else {RACK: rack}
    if block:
        labels[BLOCK] = block
    return make_node(name, cpu=cpu * CPU, labels=labels)


def gang_pods(group: str, n: int, cpu: int = 1, created: str = "2026-01-01T00:00:00Z"):
    return [
        make_pod(f"{group}-{i}", requests={"cpu": cpu * CPU}, group=group, created=created)
        for i in range(n)
    ]


def gang(
    name: str,
    n: int,
    key: str | None = RACK,
    *,
    policy: str = "gang",
    parent: str | None = None,
    created: str = "",
) -> PodGroup:
    return PodGroup(
        namespace="default",
        name=name,
        policy=policy,
        min_count=n if policy == "gang" else 1,
        topology_key=key,
        parent=parent,
        creation_timestamp=created,
    )


def solve_valid(cluster, **kw):
    r = solve_greedy(cluster, **kw)
    assert validate(cluster, r) == []
    return r


def placements_of(result, group: str = "default/pg") -> dict:
    return result.greedy_trace.groups[group].placements


# ---- the rack example of spec §3.3 ---------------------------------------------------------------
def rack_example():
    nodes = [
        rack_node("a1", "rack1"),
        rack_node("a2", "rack1"),
        rack_node("b1", "rack2"),
        rack_node("b2", "rack2"),
        rack_node("b3", "rack2"),
    ]
    pods = [make_pod("used", requests={"cpu": 2 * CPU}, node="b1")] + gang_pods("pg", 3)
    return make_cluster(nodes, pods, groups=[gang("pg", 3)])


def test_the_rack_example_scores_rack1_75_and_rack2_83_and_rack2_wins():
    r = solve_valid(rack_example())
    info = placements_of(r)
    by_name = {e.name: e for e in info.evaluated}
    assert by_name["rack1"].scores == {"PlacementBinPacking": 75, "PodGroupPodsCount": 100}
    assert by_name["rack2"].scores == {"PlacementBinPacking": 83, "PodGroupPodsCount": 100}
    assert (info.chosen, info.scored, by_name["rack2"].total) == ("rack2", True, 183)
    assert r.groups["default/pg"].domain == f"{RACK}=rack2"
    assert {r.pods[f"default/pg-{i}"].node for i in range(3)} <= {"b2", "b3"}


def test_the_trace_keeps_only_the_chosen_placements_pod_cycles():
    r = solve_valid(rack_example())
    assert r.greedy_trace.order == ["default/pg-0", "default/pg-1", "default/pg-2"]
    assert all(r.greedy_trace.pods[k].chosen in ("b2", "b3") for k in r.greedy_trace.order)
    assert r.greedy_trace.groups["default/pg"].progression == ["Wait", "Wait", "Success"]


def test_bin_packing_score_counts_existing_allocations_and_proposals_over_the_placement():
    c = rack_example()
    snap = NodeTable(c)
    pods = [p for p in c.pods if p.group_key]
    rack2 = np.array([2, 3, 4])
    assert (
        bin_packing_score(
            snap, {"cpu": 1, "memory": 1}, rack2, [(pods[0], 3), (pods[1], 4), (pods[2], 3)]
        )
        == 83
    )
    assert bin_packing_score(snap, {"cpu": 1}, np.array([0, 1]), [(p, 0) for p in pods]) == 75


def test_pods_count_normalises_to_the_best_placement():
    assert pods_count_scores([3, 4, 2]) == [75, 100, 50]
    with pytest.raises(PlacementError):
        pods_count_scores([0, 0])


@pytest.mark.parametrize(
    "weights, expected",
    [
        (
            {"NodeResourcesFit": 1, "PodGroupPodsCount": 1},
            [("PlacementBinPacking", 1), ("PodGroupPodsCount", 1)],
        ),
        ({"PlacementBinPacking": 3, "PodGroupPodsCount": 0}, [("PlacementBinPacking", 3)]),
        (
            {"PodGroupPodsCount": 2, "NodeResourcesFit": 1, "PlacementBinPacking": 4},
            [("PlacementBinPacking", 4), ("PodGroupPodsCount", 2)],
        ),
        ({}, []),
    ],
    ids=[
        "v1.36 name",
        "bin packing under its own name",
        "later entry wins, default order",
        "no placement scorers",
    ],
)
def test_placement_weights_come_from_the_profile(weights, expected):
    c = make_cluster([rack_node("n0", "r1")], profile=SchedulerProfile(placement_weights=weights))
    assert [(pl.name, w) for pl, w in build_profile(c).placement_scorers] == expected


def test_a_zero_pods_count_weight_leaves_bin_packing_alone():
    c = rack_example()
    c = make_cluster(
        c.nodes,
        c.pods,
        groups=c.pod_groups.values(),
        profile=SchedulerProfile(placement_weights={"NodeResourcesFit": 2, "PodGroupPodsCount": 0}),
    )
    by_name = {e.name: e for e in placements_of(solve_valid(c)).evaluated}
    assert by_name["rack2"].scores == {"PlacementBinPacking": 166}
    assert by_name["rack2"].total == 166


# ---- generation --------------------------------------------------------------------------------
def test_generation_gives_one_placement_per_label_value_in_first_seen_order_without_unlabelled_nodes():
    nodes = [
        rack_node("n0", "r2"),
        rack_node("n1", None),
        rack_node("n2", "r1"),
        rack_node("n3", "r2"),
    ]
    snap = NodeTable(make_cluster(nodes))
    got = generate_placements(snap, RACK, snap.all_nodes, [])
    assert [(p.name, p.nodes.tolist()) for p in got] == [("r2", [0, 3]), ("r1", [2])]


def test_generation_stays_inside_the_parent_placement():
    nodes = [rack_node("n0", "r1"), rack_node("n1", "r2"), rack_node("n2", "r2")]
    snap = NodeTable(make_cluster(nodes))
    got = generate_placements(snap, RACK, np.array([1]), [])
    assert [(p.name, p.nodes.tolist()) for p in got] == [("r2", [1])]


def test_generation_is_locked_to_the_domain_of_already_scheduled_pods():
    nodes = [rack_node("n0", "r1"), rack_node("n1", "r2"), rack_node("n2", "r2")]
    snap = NodeTable(make_cluster(nodes))
    got = generate_placements(snap, RACK, snap.all_nodes, [("default/x", 2)])
    assert [p.name for p in got] == ["r2"]


@pytest.mark.parametrize(
    "scheduled, message",
    [
        ([("default/a", 0), ("default/b", 1)], "more than 1 domain found for pod group: r1, r2"),
        ([("default/a", 2)], "no topology domain found for pod default/a"),
    ],
    ids=["scheduled pods in two racks", "a scheduled pod on a node without the label"],
)
def test_generation_errors_when_scheduled_pods_have_no_single_domain(scheduled, message):
    snap = NodeTable(
        make_cluster([rack_node("n0", "r1"), rack_node("n1", "r2"), rack_node("n2", None)])
    )
    with pytest.raises(PlacementError, match=message):
        generate_placements(snap, RACK, snap.all_nodes, scheduled)


def test_growth_is_locked_in_to_the_rack_of_a_bound_member_even_when_another_rack_scores_higher():
    nodes = [
        rack_node("a1", "rack1", cpu=4),
        rack_node("b1", "rack2", cpu=4),
        rack_node("b2", "rack2", cpu=4),
    ]
    pods = [make_pod("pg-bound", requests={"cpu": CPU}, group="pg", node="b1")] + gang_pods("pg", 2)
    r = solve_valid(make_cluster(nodes, pods, groups=[gang("pg", 3)]))
    info = placements_of(r)
    assert [e.name for e in info.evaluated] == ["rack2"]
    assert (info.chosen, info.scored) == ("rack2", False)
    assert {r.pods["default/pg-0"].node, r.pods["default/pg-1"].node} <= {"b1", "b2"}


def test_members_bound_in_two_racks_fail_the_group_with_an_error():
    nodes = [rack_node("a1", "rack1", cpu=4), rack_node("b1", "rack2", cpu=4)]
    pods = [
        make_pod("pg-x", requests={"cpu": CPU}, group="pg", node="a1"),
        make_pod("pg-y", requests={"cpu": CPU}, group="pg", node="b1"),
    ] + gang_pods("pg", 1)
    c = make_cluster(nodes, pods, groups=[gang("pg", 3)])
    r = solve_greedy(c)
    assert r.greedy_trace.groups["default/pg"].status == "Error"
    assert "more than 1 domain found for pod group: rack1, rack2" in r.pods["default/pg-0"].reason
    assert r.pods["default/pg-0"].node is None


def test_pods_never_land_on_nodes_without_the_topology_label():
    nodes = [
        rack_node("big", None, cpu=64),
        rack_node("a1", "rack1", cpu=2),
        rack_node("a2", "rack1", cpu=2),
    ]
    r = solve_valid(make_cluster(nodes, gang_pods("pg", 4), groups=[gang("pg", 4)]))
    assert {r.pods[f"default/pg-{i}"].node for i in range(4)} <= {"a1", "a2"}


# ---- feasibility and choice --------------------------------------------------------------------
def test_a_single_feasible_placement_is_chosen_without_scoring():
    nodes = [rack_node("a1", "rack1", cpu=1), rack_node("b1", "rack2", cpu=4)]
    r = solve_valid(make_cluster(nodes, gang_pods("pg", 3), groups=[gang("pg", 3)]))
    info = placements_of(r)
    assert (info.chosen, info.scored) == ("rack2", False)
    assert [(e.name, e.status, e.total) for e in info.evaluated] == [
        ("rack1", "Unschedulable", None),
        ("rack2", "Success", None),
    ]


def test_no_feasible_placement_reports_zero_of_n_placements_with_the_first_placements_status():
    nodes = [rack_node("a1", "rack1", cpu=2), rack_node("b1", "rack2", cpu=2)]
    r = solve_valid(make_cluster(nodes, gang_pods("pg", 3), groups=[gang("pg", 3)]))
    reason = r.groups["default/pg"].reason
    assert reason.startswith(
        "0/2 placements are available, reported placement status: pod group is unschedulable (topology.kubernetes.io/rack=rack1: PodGroup default/pg: minCount 3 not reached"
    )
    assert not r.groups["default/pg"].admitted
    assert all(r.pods[f"default/pg-{i}"].node is None for i in range(3))


def test_a_cluster_without_the_label_offers_zero_placements():
    r = solve_valid(
        make_cluster([rack_node("n", None, cpu=8)], gang_pods("pg", 2), groups=[gang("pg", 2)])
    )
    assert r.groups["default/pg"].reason.startswith("0/0 placements are available")


def test_pods_count_prefers_the_placement_that_fits_more_pods_of_a_basic_group():
    nodes = [rack_node("a1", "rack1", cpu=2), rack_node("b1", "rack2", cpu=4)]
    r = solve_valid(make_cluster(nodes, gang_pods("pg", 4), groups=[gang("pg", 4, policy="basic")]))
    by_name = {e.name: e for e in placements_of(r).evaluated}
    assert by_name["rack1"].scores == {"PlacementBinPacking": 100, "PodGroupPodsCount": 50}
    assert by_name["rack2"].scores == {"PlacementBinPacking": 100, "PodGroupPodsCount": 100}
    assert r.groups["default/pg"].placed == 4


def test_equal_totals_go_to_the_first_placement_in_snapshot_order():
    nodes = [rack_node("b1", "rack-b", cpu=4), rack_node("a1", "rack-a", cpu=4)]
    r = solve_valid(make_cluster(nodes, gang_pods("pg", 2), groups=[gang("pg", 2)]))
    assert (placements_of(r).chosen, placements_of(r).tie_count) == ("rack-b", 2)


def test_random_tie_break_is_seeded_and_reaches_every_tied_placement():
    nodes = [rack_node(f"n{i}", f"rack{i}", cpu=4) for i in range(4)]
    c = make_cluster(nodes, gang_pods("pg", 2), groups=[gang("pg", 2)])
    chosen = {
        seed: placements_of(solve_valid(c, tie_break="random", seed=seed)).chosen
        for seed in range(12)
    }
    assert chosen == {
        seed: placements_of(solve_greedy(c, tie_break="random", seed=seed)).chosen
        for seed in range(12)
    }
    assert len(set(chosen.values())) > 1


def test_a_nominated_placement_is_taken_without_evaluating_the_others():
    nodes = [rack_node("b1", "rack-b", cpu=4), rack_node("a1", "rack-a", cpu=4)]
    pods = gang_pods("pg", 2)
    pods[0] = pods[0].model_copy(update={"nominated_node_name": "a1"})
    r = solve_valid(make_cluster(nodes, pods, groups=[gang("pg", 2)]))
    info = placements_of(r)
    assert (info.nominated, info.chosen, [e.name for e in info.evaluated]) == (
        "rack-a",
        "rack-a",
        ["rack-a"],
    )


def test_groups_without_a_topology_key_keep_the_unconstrained_path():
    nodes = [rack_node("a1", "rack1", cpu=2), rack_node("b1", "rack2", cpu=2)]
    r = solve_valid(make_cluster(nodes, gang_pods("pg", 4), groups=[gang("pg", 4, key=None)]))
    assert r.groups["default/pg"].placed == 4
    assert r.greedy_trace.groups["default/pg"].placements is None


# ---- spec §7.4: greedy's placement choice blocks the next gang ----------------------------------
def seven_four(composite: bool):
    """One block; rack A1 holds 20 cpu with 15 used, rack A2 4 free. PG-1 3 pods, PG-2 5 pods."""
    nodes = [rack_node(f"a1-{i}", "A1", cpu=5, block="blk") for i in range(4)] + [
        rack_node("a2-0", "A2", cpu=4, block="blk")
    ]
    used = [make_pod(f"used-{i}", requests={"cpu": 5 * CPU}, node=f"a1-{i}") for i in range(3)]
    parent = "root" if composite else None
    groups = [
        gang("pg-1", 3, parent=parent, created="2026-01-01T00:00:00Z"),
        gang("pg-2", 5, parent=parent, created="2026-01-01T00:00:01Z"),
    ]
    pods = (
        used
        + gang_pods("pg-1", 3, created="2026-01-01T00:00:00Z")
        + gang_pods("pg-2", 5, created="2026-01-01T00:00:01Z")
    )
    c = make_cluster(nodes, pods, groups=groups)
    if composite:
        root = CompositePodGroup(
            namespace="default", name="root", policy="gang", min_group_count=2, topology_key=BLOCK
        )
        c = with_composites(c, root)
    return c


def with_composites(c, *composites):
    return Cluster(
        nodes=c.nodes,
        pods=c.pods,
        pod_groups=c.pod_groups,
        composite_pod_groups={g.key: g for g in composites},
        profile=c.profile,
    )


def test_standalone_gangs_first_takes_the_only_rack_the_second_fits():
    r = solve_valid(seven_four(False))
    by_name = {e.name: e for e in placements_of(r, "default/pg-1").evaluated}
    assert (
        by_name["A1"].scores["PlacementBinPacking"],
        by_name["A2"].scores["PlacementBinPacking"],
    ) == (90, 75)
    assert r.groups["default/pg-1"].domain == f"{RACK}=A1"
    assert not r.groups["default/pg-2"].admitted
    assert r.groups["default/pg-2"].reason.startswith("0/2 placements are available")


def test_placement_scores_at_step_names_the_score_that_chose_the_rack():
    got = placement_scores_at_step(seven_four(False), "default/pg-1", ["A1", "A2"])
    assert got["chosen"] == "A1"
    assert got["placements"]["A1"]["scores"] == {
        "PlacementBinPacking": 90,
        "PodGroupPodsCount": 100,
    }
    assert got["placements"]["A2"]["scores"] == {
        "PlacementBinPacking": 75,
        "PodGroupPodsCount": 100,
    }
    with pytest.raises(ValueError):
        placement_scores_at_step(seven_four(False), "default/nope")


def test_pod_scores_at_step_evaluates_the_pod_inside_the_placement_of_the_first_node():
    c = seven_four(False)
    got = pod_scores_at_step(c, "default/pg-1-0", ["a2-0", "a1-3"])
    assert got["a2-0"]["feasible"] is True
    assert "outside the placement" in got["a1-3"]["reason"]


def test_a_fixed_node_outside_the_placement_is_infeasible_there():
    r = solve_valid(seven_four(False), fixed={"default/pg-1-0": "a2-0"})
    assert r.groups["default/pg-1"].domain == f"{RACK}=A2"
    assert r.groups["default/pg-2"].domain == f"{RACK}=A1"


def test_the_composite_version_fails_without_backtracking_inside_the_block():
    c = seven_four(True)
    assert c.composite_pod_groups
    r = solve_valid(c)
    root = r.greedy_trace.groups["default/root"]
    assert root.placements.evaluated[0].name == "blk"
    assert root.reason.startswith("0/1 placements are available, first placement status")
    assert not r.groups["default/pg-1"].admitted and not r.groups["default/pg-2"].admitted


def test_the_kep_6012_block_example_succeeds_in_block_b_with_the_higher_scoring_racks():
    """block-A: A1 3 free, A2 5 free; block-B: B1 and B2 5 free each; two gangs of 5 per rack."""

    def racks(block, free):
        return [rack_node(f"{r}-n", r, cpu=f, block=block) for r, f in free]

    nodes = racks("block-A", [("A1", 3), ("A2", 5)]) + racks("block-B", [("B1", 5), ("B2", 5)])
    groups = [
        gang("pg-1", 5, parent="root", created="2026-01-01T00:00:00Z"),
        gang("pg-2", 5, parent="root", created="2026-01-01T00:00:01Z"),
    ]
    pods = gang_pods("pg-1", 5) + gang_pods("pg-2", 5)
    root = CompositePodGroup(
        namespace="default", name="root", policy="gang", min_group_count=2, topology_key=BLOCK
    )
    c = with_composites(make_cluster(nodes, pods, groups=groups), root)
    r = solve_valid(c)
    info = r.greedy_trace.groups["default/root"].placements
    assert [(e.name, e.status) for e in info.evaluated] == [
        ("block-A", "Unschedulable"),
        ("block-B", "Success"),
    ]
    assert info.chosen == "block-B"
    assert {r.groups["default/pg-1"].domain, r.groups["default/pg-2"].domain} == {
        f"{RACK}=B1",
        f"{RACK}=B2",
    }
    assert r.status == Status.HEURISTIC


def test_an_infeasible_nominated_placement_falls_back_to_scoring_the_others():
    nodes = [
        rack_node("b1", "rack-b", cpu=4),
        rack_node("a1", "rack-a", cpu=1),
        rack_node("c1", "rack-c", cpu=4),
    ]
    pods = gang_pods("pg", 2)
    pods[0] = pods[0].model_copy(update={"nominated_node_name": "a1"})
    r = solve_valid(make_cluster(nodes, pods, groups=[gang("pg", 2)]))
    info = placements_of(r)
    assert [(e.name, e.status) for e in info.evaluated] == [
        ("rack-a", "Unschedulable"),
        ("rack-b", "Success"),
        ("rack-c", "Success"),
    ]
    assert (info.scored, info.chosen) == (True, "rack-b")


def test_pod_scores_at_step_falls_back_to_the_first_attempt_when_no_placement_holds_the_node():
    nodes = [rack_node("a1", "rack1", cpu=4), rack_node("free", None, cpu=4)]
    got = pod_scores_at_step(
        make_cluster(nodes, gang_pods("pg", 2), groups=[gang("pg", 2)]),
        "default/pg-0",
        ["free", "a1"],
    )
    assert got["free"]["feasible"] is False and "outside the placement" in got["free"]["reason"]
    assert got["a1"]["feasible"] is True


def test_a_pod_fit_error_inside_a_placement_counts_only_the_placements_nodes():
    nodes = [
        rack_node("a1", "rack1", cpu=2),
        rack_node("a2", "rack1", cpu=2),
        rack_node("b1", "rack2", cpu=2),
    ]
    r = solve_valid(make_cluster(nodes, gang_pods("pg", 5), groups=[gang("pg", 5)]))
    assert (
        r.greedy_trace.pods["default/pg-4"].fit_error
        == "0/2 nodes are available: 2 Insufficient cpu."
    )
