"""Opt-in preemption of the greedy engine (``solve_greedy(..., preemption=True)``).

Workload-aware preemption follows the unit cases of
``pkg/scheduler/framework/preemption/podgrouppreemption_test.go`` @075d179b (spec §6.4 cases 1-7,
where a node's capacity is a pod count) and the integration cases of
``test/integration/scheduler/podgroup/podgroup_test.go`` @008b3652 (spec §6.1 cases 6, 9, 10, 11,
snapshots under scenarios/upstream-preemption/). Default single-pod preemption follows spec §2.4.
Every Result goes through validate().
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gangplan.io.loader import load_snapshot
from gangplan.models.cluster import Cluster
from gangplan.models.groups import EntityKey, VictimUnit
from gangplan.models.objects import LabelSelector, Pod, PodDisruptionBudget, PodGroup
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.greedy.preemption import classify_pdb, importance
from gangplan.solver.greedy.testing import make_node, make_pod
from gangplan.solver.suite import EXPECT_GREEDY, EXPECT_PLACED
from gangplan.solver.validate import validate

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios" / "upstream-preemption"
EXPECT_VICTIMS = "gangplan.io/expect-victims"
LOW, MID, HIGH = 10, 20, 30


def victim(
    name: str,
    node: str,
    priority: int,
    *,
    uid: str | None = None,
    labels: dict[str, str] | None = None,
    group: str | None = None,
    start: str | None = None,
    cpu: int = 0,
) -> Pod:
    p = make_pod(
        name,
        node=node,
        priority=priority,
        labels=labels,
        group=group,
        requests={"cpu": cpu} if cpu else None,
    )
    return p.model_copy(update={"uid": uid or f"uid-{name}", "start_time": start})


def preemptor_group(
    name: str = "pre", priority: int = HIGH, pods: int = 1, *, policy: str | None = None
) -> tuple[PodGroup, list[Pod]]:
    g = PodGroup(
        namespace="default",
        name=name,
        policy="gang",
        min_count=pods,
        priority=priority,
        preemption_policy=policy,
    )
    members = [
        make_pod(f"{name}-{i}", priority=priority, group=name, created=f"2026-11-30T10:00:0{i}Z")
        for i in range(pods)
    ]
    if policy is not None:  # Priority admission gives pods and group the class's policy: they agree
        members = [p.model_copy(update={"preemption_policy": policy}) for p in members]
    return g, members


def cluster(nodes, pods, groups=(), pdbs=()) -> Cluster:
    return Cluster(
        nodes=tuple(nodes),
        pods=tuple(pods),
        pod_groups={g.key: g for g in groups},
        pdbs=tuple(pdbs),
    )


def pdb(name: str, app: str, allowed: int = 0) -> PodDisruptionBudget:
    return PodDisruptionBudget(
        namespace="default",
        name=name,
        selector=LabelSelector(match_labels={"app": app}),
        disruptions_allowed=allowed,
    )


def solve(c: Cluster):
    r = solve_greedy(c, preemption=True)
    assert validate(c, r) == []
    return r


def wap_case(name: str):
    """The §6.4 unit cases: (cluster, expected victims), the preemptor a one-pod group."""
    g, pre = preemptor_group()
    if name == "single lower-priority pod":
        return cluster([make_node("node1", pods=1)], [victim("p1", "node1", LOW), *pre], [g]), [
            "default/p1"
        ]
    if name == "prefer lower priority":
        pods = [victim("p1", "node1", LOW), victim("p2", "node1", MID), victim("p3", "node1", HIGH)]
        return cluster([make_node("node1", pods=2)], [*pods, *pre], [g]), [
            "default/p1",
            "default/p2",
        ]
    if name == "fewest victims":
        pods = [victim(f"p{i}", "node1", LOW, uid=f"v{i}") for i in (4, 2, 3, 1)]
        return cluster([make_node("node1", pods=3)], [*pods, *pre], [g]), [
            "default/p3",
            "default/p4",
        ]
    if name == "pdb prefer non-violating":
        pods = [
            victim("victim-pdb", "node1", LOW, labels={"app": "guarded"}, uid="z"),
            victim("victim-no-pdb", "node1", LOW, uid="a"),
        ]
        return cluster(
            [make_node("node1", pods=2)], [*pods, *pre], [g], [pdb("budget", "guarded")]
        ), ["default/victim-no-pdb"]
    if name == "pdb beats priority":
        pods = [
            victim("victim-pdb", "node1", LOW, labels={"app": "guarded"}),
            victim("victim-no-pdb", "node1", MID),
        ]
        return cluster(
            [make_node("node1", pods=2)], [*pods, *pre], [g], [pdb("budget", "guarded")]
        ), ["default/victim-no-pdb"]
    if name == "pdb inside a single-mode group":
        single = PodGroup(
            namespace="default", name="single", policy="gang", min_count=1, priority=LOW
        )
        pods = [
            victim("victim-pdb", "node1", LOW, labels={"app": "guarded"}, group="single", uid="z"),
            victim("victim-no-pdb", "node1", LOW, uid="a"),
        ]
        return cluster(
            [make_node("node1", pods=2)], [*pods, *pre], [g, single], [pdb("budget", "guarded")]
        ), ["default/victim-no-pdb"]
    if name == "all-mode group across two nodes":
        whole = PodGroup(
            namespace="default",
            name="pg1",
            policy="gang",
            min_count=2,
            priority=LOW,
            disruption_mode="all",
        )
        pods = [victim("p1", "node1", LOW, group="pg1"), victim("p2", "node2", LOW, group="pg1")]
        return cluster(
            [make_node("node1", pods=1), make_node("node2", pods=1)], [*pods, *pre], [g, whole]
        ), ["default/p1", "default/p2"]
    raise KeyError(name)


WAP_CASES = [
    "single lower-priority pod",
    "prefer lower priority",
    "fewest victims",
    "pdb prefer non-violating",
    "pdb beats priority",
    "pdb inside a single-mode group",
    "all-mode group across two nodes",
]


@pytest.mark.parametrize("name", WAP_CASES)
def test_workload_aware_preemption_picks_the_upstream_victims(name: str) -> None:
    c, expected = wap_case(name)
    r = solve(c)
    assert r.victims == expected
    # Rule W (issue 39): the group waits on its preemption and binds in a later cycle, once the
    # victims are gone; it is placed, not reported on a nomination
    assert r.pods["default/pre-0"].node is not None and not r.pods["default/pre-0"].nominated
    assert r.greedy_trace.requeues[-1].trigger.startswith("PodDelete ")
    assert r.groups["default/pre"].admitted
    assert r.greedy_trace.preemption["default/pre"].status == "Success"


@pytest.mark.parametrize("name", WAP_CASES)
def test_with_preemption_off_the_same_cluster_evicts_nothing(name: str) -> None:
    c, _ = wap_case(name)
    r = solve_greedy(c, preemption=False)
    assert validate(c, r) == []
    assert r.victims == [] and not r.groups["default/pre"].admitted
    assert (
        r.greedy_trace.preemption is None
        and "preemption" not in json.loads(r.to_json())["trace"]
        and (r.params["preemption"], r.params["preemptionFrom"]) == (False, "flag")
    )


@pytest.mark.parametrize("name", ["single lower-priority pod", "all-mode group across two nodes"])
def test_preemption_is_on_by_default_as_in_the_default_profile(name: str) -> None:
    c, _ = wap_case(name)
    default, explicit = solve_greedy(c), solve_greedy(c, preemption=True)
    assert default.victims == explicit.victims != []
    assert (default.params["preemption"], default.params["preemptionFrom"]) == (
        True,
        "default profile",
    )


def test_the_fewest_victims_case_reprieves_in_uid_order() -> None:
    c, _ = wap_case("fewest victims")
    t = solve(c).greedy_trace.preemption["default/pre"]
    assert t.order == ["pod:default/p1", "pod:default/p2", "pod:default/p3", "pod:default/p4"]
    assert t.reprieved == ["pod:default/p1", "pod:default/p2"]


def test_the_pdb_case_tries_the_violating_unit_first_and_reprieves_it() -> None:
    c, _ = wap_case("pdb beats priority")
    t = solve(c).greedy_trace.preemption["default/pre"]
    assert t.order == ["pod:default/victim-pdb", "pod:default/victim-no-pdb"]
    assert t.violating == {"pod:default/victim-pdb": 1} and t.pdb_violations == 0


def test_an_all_mode_unit_counts_as_one_victim_holding_both_pods() -> None:
    c, _ = wap_case("all-mode group across two nodes")
    t = solve(c).greedy_trace.preemption["default/pre"]
    assert t.candidates == ["default/pg1"] and t.victims == ["default/p1", "default/p2"]


def test_a_preemption_policy_of_never_evicts_nothing() -> None:
    g, pre = preemptor_group(policy="Never")
    c = cluster([make_node("node1", pods=1)], [victim("p1", "node1", LOW), *pre], [g])
    r = solve(c)
    assert r.victims == [] and r.pods["default/pre-0"].node is None
    assert (
        r.greedy_trace.preemption["default/pre"].reason
        == "not eligible due to preemptionPolicy=Never."
    )
    assert "preemption: not eligible" in r.groups["default/pre"].reason


def test_equal_priority_pods_are_never_victims() -> None:
    g, pre = preemptor_group()
    c = cluster([make_node("node1", pods=1)], [victim("p1", "node1", HIGH), *pre], [g])
    r = solve(c)
    assert r.victims == [] and r.pods["default/pre-0"].node is None
    assert r.greedy_trace.preemption["default/pre"].status == "UnschedulableAndUnresolvable"


def test_a_gang_that_cannot_fit_even_on_the_emptied_cluster_evicts_nothing() -> None:
    g, pre = preemptor_group(pods=3)
    c = cluster([make_node("node1", pods=2)], [victim("p1", "node1", LOW), *pre], [g])
    r = solve(c)
    assert r.victims == [] and all(r.pods[p.key].node is None for p in pre)
    assert r.greedy_trace.preemption["default/pre"].reason.startswith("preemption cannot help")


def test_freed_resources_are_seen_by_later_entities_and_victims_are_not_reused() -> None:
    g, pre = preemptor_group(pods=1)
    later = make_pod("later", priority=LOW - 5)
    c = cluster(
        [make_node("node1", pods=2)],
        [victim("p1", "node1", LOW), victim("p2", "node1", LOW), *pre, later],
        [g],
    )
    r = solve(c)
    # pre takes one slot freed from p1/p2 (p1 reprieved, uid order); "later" has a lower priority
    # than everything on the node, so it neither fits nor preempts.
    assert r.victims == ["default/p2"] and r.pods["default/later"].node is None
    assert r.greedy_trace.preemption["pod:default/later"].status == "Unschedulable"


def test_classify_pdb_consumes_budgets_in_the_given_order() -> None:
    pods = [victim(f"p{i}", "n", LOW, labels={"app": "a"}) for i in range(3)]
    units = [VictimUnit(EntityKey.pod(p.key), "Pod", (p,), LOW) for p in pods]
    bad, good, counts = classify_pdb(units, (pdb("b", "a", allowed=2),))
    assert [str(u.key) for u in good] == ["pod:default/p0", "pod:default/p1"]
    assert [str(u.key) for u in bad] == ["pod:default/p2"] and counts == {"pod:default/p2": 1}


# ---- default single-pod preemption (spec §2.4) ---------------------------------------------------
def single_case(name: str):
    pod = make_pod("pod", priority=HIGH)
    nodes = [make_node("node1", pods=1), make_node("node2", pods=1)]
    if name == "prefers the node whose highest victim priority is lowest":
        return (
            cluster(nodes, [victim("mid", "node1", MID), victim("low", "node2", LOW), pod]),
            "node2",
            ["default/low"],
        )
    if name == "prefers a node without PDB violations over a lower priority":
        pods = [victim("guarded", "node1", LOW, labels={"app": "g"}), victim("mid", "node2", MID)]
        return cluster(nodes, [*pods, pod], pdbs=[pdb("b", "g")]), "node2", ["default/mid"]
    if name == "prefers fewer victims through the priority sum":
        big = make_pod("pod", priority=HIGH, requests={"cpu": 2000})
        nodes = [make_node("node1", cpu=2000), make_node("node2", cpu=2000)]
        pods = [
            victim("a", "node1", LOW, cpu=1000),
            victim("b", "node1", LOW, cpu=1000),
            victim("c", "node2", LOW, cpu=2000),
        ]
        return cluster(nodes, [*pods, big]), "node2", ["default/c"]
    if name == "prefers the node whose victims started last":
        pods = [
            victim("old", "node1", LOW, start="2026-01-01T00:00:00Z"),
            victim("new", "node2", LOW, start="2026-06-01T00:00:00Z"),
        ]
        return cluster(nodes, [*pods, pod]), "node2", ["default/new"]
    if name == "breaks a full tie by the lowest node position":
        return (
            cluster(nodes, [victim("x", "node1", LOW), victim("y", "node2", LOW), pod]),
            "node1",
            ["default/x"],
        )
    raise KeyError(name)


@pytest.mark.parametrize(
    "name",
    [
        "prefers the node whose highest victim priority is lowest",
        "prefers a node without PDB violations over a lower priority",
        "prefers fewer victims through the priority sum",
        "prefers the node whose victims started last",
        "breaks a full tie by the lowest node position",
    ],
)
def test_default_preemption_picks_one_node_like_upstream(name: str) -> None:
    c, node, victims = single_case(name)
    r = solve(c)
    assert r.pods["default/pod"].node == node and r.pods["default/pod"].nominated
    assert r.victims == victims
    assert r.greedy_trace.preemption["pod:default/pod"].chosen == node


def test_default_preemption_skips_unresolvable_nodes() -> None:
    pod = make_pod("pod", priority=HIGH, node_selector={"pool": "b"})
    c = cluster(
        [make_node("node1", pods=1), make_node("node2", pods=1, labels={"pool": "b"})],
        [victim("a", "node1", LOW), victim("b", "node2", MID), pod],
    )
    r = solve(c)
    assert r.pods["default/pod"].node == "node2" and r.victims == ["default/b"]
    assert list(r.greedy_trace.preemption["pod:default/pod"].nodes) == ["node2"]


def test_a_single_pod_with_policy_never_does_not_preempt() -> None:
    pod = make_pod("pod", priority=HIGH).model_copy(update={"preemption_policy": "Never"})
    c = cluster([make_node("node1", pods=1)], [victim("a", "node1", LOW), pod])
    r = solve(c)
    assert r.victims == [] and r.pods["default/pod"].node is None


# ---- upstream integration snapshots --------------------------------------------------------------
SNAPSHOTS = sorted(SCENARIOS.glob("*.yaml"))


@pytest.mark.parametrize("path", SNAPSHOTS, ids=lambda p: p.stem)
def test_the_upstream_preemption_scenarios_reproduce_the_upstream_outcome(path: Path) -> None:
    c = load_snapshot(path)
    r = solve(c)
    checked = 0
    for key, g in sorted(c.pod_groups.items()):
        if EXPECT_GREEDY in g.annotations:
            assert ("admitted" if r.groups[key].admitted else "rejected") == g.annotations[
                EXPECT_GREEDY
            ]
            assert r.groups[key].placed == int(g.annotations[EXPECT_PLACED])
            assert r.victims == sorted(g.annotations[EXPECT_VICTIMS].split(","))
            checked += 1
    assert checked == 1


@pytest.mark.parametrize("path", SNAPSHOTS, ids=lambda p: p.stem)
def test_the_upstream_preemption_scenarios_with_preemption_off_evict_nothing(path: Path) -> None:
    c = load_snapshot(path)
    r = solve_greedy(c, preemption=False)
    assert validate(c, r) == [] and r.victims == []
    assert not any(o.nominated for o in r.pods.values())
    for key, g in r.groups.items():
        # a gang stays unschedulable; the basic group of case 9 binds only what fits (2 of 4)
        assert g.placed == (2 if c.pod_groups[key].policy == "basic" else 0)


def test_case_11_reprieves_the_low_pods_and_evicts_the_very_low_ones() -> None:
    r = solve(load_snapshot(SCENARIOS / "podgroup-11-partial-wap.yaml"))
    t = r.greedy_trace.preemption["podgroup-test/mid"]
    assert t.reprieved == ["pod:podgroup-test/low1", "pod:podgroup-test/low2"]
    assert t.victims == ["podgroup-test/very-low1", "podgroup-test/very-low2"]


def test_case_9_preempts_in_the_leftover_pods_next_cycle() -> None:
    """The leftovers' cycle preempts the blocker; they bind in the cycle after its deletion
    (rule W of issue 39), so nothing is left on a nomination."""
    r = solve(load_snapshot(SCENARIOS / "podgroup-09-basic-with-preemption.yaml"))
    assert r.victims == ["podgroup-test/blocker"]
    assert not any(o.nominated for o in r.pods.values())
    assert all(r.pods[f"podgroup-test/p{i}"].node == "node" for i in range(1, 5))
    assert r.greedy_trace.requeues[-1].trigger == "PodDelete podgroup-test/blocker (node)"
    assert r.greedy_trace.order == [
        "podgroup-test/p1",
        "podgroup-test/p2",
        "podgroup-test/p3",
        "podgroup-test/p4",
    ]


def test_preemption_results_are_deterministic() -> None:
    c = load_snapshot(SCENARIOS / "podgroup-11-partial-wap.yaml")
    a, b = solve_greedy(c, preemption=True), solve_greedy(c, preemption=True)
    assert a.model_dump(exclude={"wall_seconds"}) == b.model_dump(exclude={"wall_seconds"})


# ---- hierarchy, topology and eligibility ---------------------------------------------------------
def test_an_all_mode_composite_is_one_unit_of_rank_three_over_all_its_leaves() -> None:
    from gangplan.models.objects import CompositePodGroup
    from gangplan.solver.greedy.preemption import victim_units
    from gangplan.solver.greedy.snapshot import NodeTable

    cpg = CompositePodGroup(
        namespace="default",
        name="job",
        policy="gang",
        min_group_count=2,
        priority=LOW,
        disruption_mode="all",
    )
    leaves = [
        PodGroup(
            namespace="default", name=n, policy="gang", min_count=1, priority=LOW, parent="job"
        )
        for n in ("a", "b")
    ]
    pods = [
        victim("a0", "node1", LOW, group="a"),
        victim("b0", "node2", LOW, group="b"),
        victim("solo", "node2", LOW),
    ]
    c = Cluster(
        nodes=(make_node("node1"), make_node("node2")),
        pods=tuple(pods),
        pod_groups={g.key: g for g in leaves},
        composite_pod_groups={cpg.key: cpg},
    )
    units = sorted(victim_units(c, NodeTable(c)), key=importance)
    assert [(str(u.key), u.kind, [p.name for p in u.pods]) for u in units] == [
        ("default/job", "CompositePodGroup", ["a0", "b0"]),
        ("pod:default/solo", "Pod", ["solo"]),
    ]


def test_a_topology_constrained_group_preempts_inside_the_one_placement_that_can_hold_it() -> None:
    g = PodGroup(
        namespace="default",
        name="pre",
        policy="gang",
        min_count=2,
        priority=HIGH,
        topology_key="zone",
    )
    pre = [make_pod(f"pre-{i}", priority=HIGH, group="pre") for i in range(2)]
    nodes = [make_node(f"{z}{i}", pods=1, labels={"zone": z}) for z in ("a", "b") for i in (1, 2)]
    pods = [
        victim("low-a1", "a1", LOW),
        victim("low-a2", "a2", LOW),
        victim("low-b1", "b1", LOW),
        victim("high-b2", "b2", HIGH),
    ]
    c = cluster(nodes, [*pods, *pre], [g])
    r = solve(c)
    assert r.victims == ["default/low-a1", "default/low-a2"]
    assert {r.pods[p.key].node for p in pre} == {"a1", "a2"} and r.groups[
        "default/pre"
    ].domain == "zone=a"
    assert r.greedy_trace.groups["default/pre"].placements.chosen == "a"


def test_an_ongoing_preemption_on_the_nominated_node_blocks_a_new_one() -> None:
    g, pre = preemptor_group()
    pre = [p.model_copy(update={"nominated_node_name": "node1"}) for p in pre]
    dying = victim("dying", "node1", LOW).model_copy(update={"terminating": True})
    c = cluster(
        [make_node("node1", pods=1), make_node("node2", pods=1)],
        [dying, victim("p2", "node2", LOW), *pre],
        [g],
    )
    r = solve(c)
    assert r.victims == [] and r.pods["default/pre-0"].node is None
    assert (
        r.greedy_trace.preemption["default/pre"].reason
        == "not eligible due to a terminating pod on the nominated node."
    )


@pytest.mark.parametrize("seed", range(4))
def test_the_local_reprieve_check_keeps_and_evicts_what_the_full_check_does(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Preemption._local_reprieve`` skips the Filter re-runs of assignments away from the
    restored unit; with it switched off (every assignment re-checked per unit, as upstream does)
    the Result JSON is byte-identical, on preemptible draws with and without pod (anti-)affinity
    and spread constraints."""
    from gangplan.bench.generators.builders import preemptible_load, to_cluster
    from gangplan.bench.generators.families import build_family
    from gangplan.bench.generators.gpu_clusters import gpu_benchmark
    from gangplan.solver.greedy.preemption import Preemption

    gpu = preemptible_load(gpu_benchmark(120, 300, profile="busy", seed=10 + seed), seed, share=0.4)
    mixed = preemptible_load(
        build_family(
            "mixed",
            {
                "nodes": 40,
                "gangs": 16,
                "hetero_fraction": 0.3,
                "affinity_fraction": 0.4,
                "anti_affinity_fraction": 0.4,
                "topology_fraction": 0.3,
                "spread_fraction": 0.4,
                "selector_fraction": 0.3,
                "priorities": 2,
                "utilisation": 0.8,
            },
            10 + seed,
        ),
        seed,
        share=0.5,
    )
    calls: list[bool] = []
    orig = Preemption._local_reprieve
    monkeypatch.setattr(
        Preemption, "_local_reprieve", lambda self, a: calls.append(orig(self, a)) or calls[-1]
    )
    for objs in (gpu, mixed):
        cluster = to_cluster(objs)
        fast = solve_greedy(cluster)
        monkeypatch.setattr(Preemption, "_local_reprieve", lambda self, a: False)
        full = solve_greedy(cluster)
        monkeypatch.setattr(
            Preemption, "_local_reprieve", lambda self, a: calls.append(orig(self, a)) or calls[-1]
        )
        assert validate(cluster, fast) == []
        assert fast.victims, "the draw must preempt for the comparison to mean anything"
        a, b = json.loads(fast.to_json()), json.loads(full.to_json())
        a["wallSeconds"] = b["wallSeconds"] = 0.0
        assert a == b
    assert any(calls), (
        f"the local check must have been taken at least once ({len(calls)} reprieve checks, all full)"
    )


def test_batch_forget_and_assume_leave_the_node_table_as_one_by_one_calls_do() -> None:
    """``NodeTable.forget_all`` / ``assume_all`` (the removal of every candidate unit before the
    emptied-snapshot run, and its undo) against :meth:`forget` / :meth:`assume` pod by pod, on a
    snapshot with host ports, (anti-)affinity pods and several pods per node."""
    from gangplan.bench.generators.builders import to_cluster
    from gangplan.solver.greedy.snapshot import NodeTable
    from tests.draws import corners

    cluster = to_cluster(corners(1))

    def state(t: NodeTable) -> tuple:
        return (
            t.requested.tolist(),
            t.free.tolist(),
            t.nonzero.tolist(),
            t.pod_count.tolist(),
            t.bound_on_nodes,
            [[p.key for p in on] for on in t.pods_on],
            [list(ps) for ps in t.ports_on],
            dict(t.node_of),
            list(t.changes),
            list(t.anti_affinity_pods),
            list(t.affinity_pods),
        )

    batch, single = NodeTable(cluster), NodeTable(cluster)
    gone = [p for k, p in enumerate(cluster.bound_pods) if k % 3 != 1]
    assert any(p.host_ports for p in gone) and any(
        p.affinity.pod_anti_affinity_required for p in gone
    )
    batch.forget_all(gone)
    for p in gone:
        single.forget(p)
    assert state(batch) == state(single)
    back = [(p, batch.index[p.node_name]) for p in reversed(gone)]
    batch.assume_all(back)
    for p, i in back:
        single.assume(p, i)
    assert state(batch) == state(single)
    assert state(batch)[:5] == state(NodeTable(cluster))[:5]


@pytest.mark.parametrize(
    ("draw", "seed"), [(d, s) for d in ("preemption", "mixed") for s in range(40)]
)
def test_preemption_candidates_from_the_vectorised_reasons_equal_the_per_node_statuses(
    draw, seed, monkeypatch
) -> None:
    """Default preemption's potential nodes (``nodesWherePreemptionMightHelp``) are read from the
    cycle's vectorised Filter reasons; under VERIFY every such read is compared with the status
    built per node (an assertion inside), on small random snapshots where preemption matters
    (21 single-pod preemption attempts over the 80 draws)."""
    from gangplan.bench.generators.builders import to_cluster
    from gangplan.bench.generators.small_snapshots import small_mixed, small_preemption
    from gangplan.solver.greedy import placement_fast

    cluster = to_cluster((small_preemption if draw == "preemption" else small_mixed)(seed))
    monkeypatch.setattr(placement_fast, "VERIFY", True)
    verified = solve_greedy(cluster, preemption=True)
    monkeypatch.setattr(placement_fast, "VERIFY", False)
    plain = solve_greedy(cluster, preemption=True)
    assert validate(cluster, plain) == []
    assert plain.placements() == verified.placements() and plain.victims == verified.victims
