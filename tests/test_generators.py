"""The shared instance generators and hypothesis strategies: they load, are deterministic, have the
sizes they promise, and describe states the validator accepts when nothing is placed."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest
from hypothesis import HealthCheck, given, settings

from gangplan.bench.generators.builders import pod_group_object, pod_object, to_cluster
from gangplan.bench.generators.gpu_clusters import (
    RUNNING_PRIORITY,
    gpu_benchmark,
    gpu_cluster,
    gpu_gangs,
)
from gangplan.bench.generators.scheduler_perf import (
    scheduler_perf_composite,
    scheduler_perf_gang_preemption,
    scheduler_perf_gang_preemption_podgroups,
    scheduler_perf_gangs,
)
from gangplan.bench.generators.small_snapshots import small_mixed
from gangplan.io.loader import load_objects, load_snapshot
from gangplan.io.writer import dump_snapshot, write_snapshot
from gangplan.models.cluster import Cluster
from gangplan.models.result import Status
from gangplan.models.well_known import GPU, GPU_PRODUCT, RACK, ZONE
from gangplan.solver.outcome import build_result
from gangplan.solver.validate import validate
from tests.strategies import small_clusters, small_snapshots


def _used(cluster: Cluster) -> dict[str, Counter]:
    used: dict[str, Counter] = defaultdict(Counter)
    for p in cluster.bound_pods:
        used[p.node_name].update(p.requests)
        used[p.node_name]["pods"] += 1
    return used


def _respects_capacity(cluster: Cluster) -> bool:
    used = _used(cluster)
    nodes = {n.name: n for n in cluster.nodes}
    return all(
        q <= nodes[name].allocatable.get(r, 0)
        for name, u in used.items()
        for r, q in u.items()
        if q > 0
    )


def _without_source(objs) -> list:
    return [o.model_copy(update={"source": ""}) for o in objs]


def _empty_result_violations(cluster: Cluster) -> list:
    result = build_result(cluster, engine="none", status=Status.HEURISTIC, placements={})
    return validate(cluster, result)


# ---- scheduler_perf shapes ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("nodes", "gangs", "per_gang", "policy"),
    [(10, 3, 3, "gang"), (100, 10, 3, "basic"), (50, 7, 4, "gang")],
    ids=["the 10Nodes_3Gangs integration shape", "the basic-policy control", "four pods per gang"],
)
def test_scheduler_perf_gangs_has_the_upstream_shape(nodes, gangs, per_gang, policy):
    c = to_cluster(scheduler_perf_gangs(nodes, gangs, per_gang, policy))
    assert len(c.nodes) == nodes and len(c.pod_groups) == gangs
    assert len(c.pending_pods) == gangs * per_gang and not c.bound_pods and not c.gated
    assert all(n.allocatable == {"cpu": 4000, "memory": 32 * 2**30, "pods": 110} for n in c.nodes)
    assert all(p.requests == {"cpu": 100, "memory": 100 * 2**20} for p in c.pods)
    assert {g.policy for g in c.pod_groups.values()} == {policy}
    assert all(len(m) == per_gang for m in (c.groups.node(k).members for k in c.groups.leaf_keys))
    # Member i belongs to group i div podsPerGroup, in creation order.
    assert [p.pod_group for p in c.pods] == [
        sorted(c.pod_groups)[i // per_gang].split("/")[1] for i in range(gangs * per_gang)
    ]


def test_scheduler_perf_tas_shape_labels_zones_of_100_and_racks_and_constrains_groups():
    c = to_cluster(
        scheduler_perf_gangs(
            250, 5, 4, nodes_per_rack=50, topology_key=RACK, percentage_of_nodes_to_score=30
        )
    )
    assert c.profile.percentage_of_nodes_to_score == 30
    assert c.nodes[199].labels[ZONE] == "zone-1" and c.nodes[200].labels[ZONE] == "zone-2"
    assert c.nodes[149].labels[RACK] == "rack-2" and c.nodes[150].labels[RACK] == "rack-3"
    assert {g.topology_key for g in c.pod_groups.values()} == {RACK}


def test_scheduler_perf_without_sampling_knob_keeps_the_adaptive_default():
    assert to_cluster(scheduler_perf_gangs(5, 1, 3)).profile.percentage_of_nodes_to_score == 0


def test_scheduler_perf_composite_nests_groups_under_composites_with_zone_and_rack_constraints():
    c = to_cluster(scheduler_perf_composite(250, 3, 2, 4, topology=True))
    assert len(c.composite_pod_groups) == 3 and len(c.pod_groups) == 6 and len(c.pending_pods) == 24
    assert all(
        cg.min_group_count == 2 and cg.topology_key == ZONE
        for cg in c.composite_pod_groups.values()
    )
    assert all(
        g.min_count == 4 and g.topology_key == RACK and g.parent for g in c.pod_groups.values()
    )
    assert c.nodes[99].labels[RACK] == "rack-0" and c.nodes[100].labels[RACK] == "rack-1"
    assert not c.gated


def test_gang_preemption_basic_fills_every_node_with_ten_fillers_of_distinct_host_ports():
    c = to_cluster(scheduler_perf_gang_preemption(nodes=10, fillers=100, gangs=2, pods_per_gang=5))
    per_node = defaultdict(list)
    for p in c.bound_pods:
        per_node[p.node_name].append(p.host_ports[0].port)
    assert len(per_node) == 10 and all(
        sorted(v) == list(range(8000, 8010)) for v in per_node.values()
    )
    assert max(p.priority for p in c.bound_pods) < min(p.priority for p in c.pending_pods) == 10000
    assert len(c.pending_pods) == 10 and {p.requests["cpu"] for p in c.pending_pods} == {3970}
    assert _respects_capacity(c) and _empty_result_violations(c) == []


def test_gang_preemption_podgroups_binds_one_pod_of_each_low_gang_per_node():
    c = to_cluster(
        scheduler_perf_gang_preemption_podgroups(
            nodes=10, low_gangs=5, high_gangs=2, pods_per_gang=10
        )
    )
    per_node = defaultdict(set)
    for p in c.bound_pods:
        per_node[p.node_name].add(p.pod_group)
    assert all(len(v) == 5 for v in per_node.values()) and len(per_node) == 10
    assert {p.priority for p in c.bound_pods} == {1000} and {
        p.priority for p in c.pending_pods
    } == {9999999}
    assert _respects_capacity(c) and _empty_result_violations(c) == []


# ---- GPU clusters ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("profile", "full", "partly", "idle"),
    [("mixed", 30, 35, 35), ("busy", 70, 20, 10)],
    ids=["mixed is 30% full, 35% partly used, 35% idle", "busy is 70/20/10"],
)
def test_gpu_cluster_realises_the_utilisation_profile_with_bound_pods(profile, full, partly, idle):
    c = to_cluster(gpu_cluster(100, profile=profile, seed=3))
    used = _used(c)
    gpus = [used[n.name][GPU] for n in c.nodes]
    assert (sum(g == 8 for g in gpus), sum(0 < g < 8 for g in gpus), sum(g == 0 for g in gpus)) == (
        full,
        partly,
        idle,
    )
    assert _respects_capacity(c)
    assert all(p.priority == RUNNING_PRIORITY for p in c.bound_pods)


def test_gpu_cluster_has_racks_of_16_in_zones_of_8_racks_with_one_gpu_type_per_rack():
    c = to_cluster(gpu_cluster(300, seed=1))
    racks = Counter(n.labels[RACK] for n in c.nodes)
    assert racks["rack-0"] == 16 and len(racks) == 19
    assert {n.labels[ZONE] for n in c.nodes if n.labels[RACK] == "rack-8"} == {"zone-1"}
    by_rack = defaultdict(set)
    for n in c.nodes:
        by_rack[n.labels[RACK]].add(n.labels[GPU_PRODUCT])
    assert all(len(t) == 1 for t in by_rack.values())
    assert {t for ts in by_rack.values() for t in ts} == {"H100", "A100"}


@pytest.mark.parametrize("total", [1, 64, 512], ids=["one pod", "64 pods", "512 pods"])
def test_gpu_gangs_total_exactly_the_requested_pods_as_identical_all_or_nothing_gangs(total):
    c = to_cluster(gpu_gangs(total, seed=5))
    assert len(c.pending_pods) == total and not c.gated
    for key, members in ((k, c.groups.node(k).members) for k in c.groups.leaf_keys):
        g = c.pod_groups[key]
        assert g.policy == "gang" and g.min_count == len(members) <= 32
        assert len({tuple(sorted(p.requests.items())) for p in members}) == 1
        assert members[0].requests[GPU] in (1, 2, 4, 8)
        assert {p.priority for p in members} == {g.priority} and g.priority in (10, 50, 100)


def test_gpu_gangs_mix_rack_constraints_and_gpu_type_selectors():
    c = to_cluster(gpu_gangs(2048, seed=0))
    multi = [g for k, g in c.pod_groups.items() if len(c.groups.node(k).members) > 1]
    racked = sum(1 for g in multi if g.topology_key == RACK)
    assert 0.35 < racked / len(multi) < 0.65
    assert all(
        g.topology_key is None
        for k, g in c.pod_groups.items()
        if len(c.groups.node(k).members) == 1
    )
    selecting = {p.group_key for p in c.pods if p.node_selector}
    assert 0.1 < len(selecting) / len(c.pod_groups) < 0.3
    assert 150 < len(c.pod_groups) < 320  # ~230 gangs for 2,048 pods, as in the lab grid


def test_gpu_gangs_queue_order_is_gang_order():
    c = to_cluster(gpu_gangs(100, seed=2))
    stamps = [g.creation_timestamp for g in c.pod_groups.values()]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)


def test_gpu_benchmark_cell_loads_with_nothing_gated_and_nothing_placed_is_valid():
    c = to_cluster(gpu_benchmark(100, 512, profile="busy", seed=4))
    assert len(c.nodes) == 100 and len(c.pending_pods) == 512 and not c.gated
    assert _empty_result_violations(c) == []


# ---- determinism and output ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda s: gpu_benchmark(50, 64, seed=s),
        lambda s: gpu_benchmark(50, 64, profile="busy", seed=s),
        lambda s: scheduler_perf_gangs(20, 4, 3, nodes_per_rack=10, topology_key=RACK),
    ],
    ids=["mixed GPU cell", "busy GPU cell", "scheduler_perf TAS shape"],
)
def test_same_seed_gives_the_same_bytes(make):
    assert dump_snapshot(make(7)) == dump_snapshot(make(7))


def test_different_seeds_give_different_gpu_instances():
    assert dump_snapshot(gpu_benchmark(50, 64, seed=1)) != dump_snapshot(
        gpu_benchmark(50, 64, seed=2)
    )


def test_write_snapshot_round_trips_through_the_file_loader(tmp_path):
    objects = gpu_benchmark(20, 16, seed=9)
    path = tmp_path / "cell.yaml"
    write_snapshot(objects, path, header="generated\nby test")
    text = path.read_text()
    assert text.startswith("# generated\n# by test\n")
    from_file, in_memory = load_snapshot(path), to_cluster(objects)
    for kind in ("nodes", "pods"):
        assert _without_source(getattr(from_file, kind)) == _without_source(
            getattr(in_memory, kind)
        )
    assert _without_source(from_file.pod_groups.values()) == _without_source(
        in_memory.pod_groups.values()
    )


def test_load_objects_gates_a_gang_below_quorum_like_the_file_loader():
    objects = [
        pod_group_object("g", min_count=3),
        pod_object("a", group="g", requests={"cpu": "1"}),
        pod_object("b", group="g", requests={"cpu": "1"}),
    ]
    c = load_objects(objects)
    assert set(c.gated) == {"default/a", "default/b"}
    assert "2 of minCount 3" in c.gated["default/a"]


# ---- small mixed snapshots -----------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(20))
def test_seeded_small_mixed_snapshots_load_respect_capacity_and_are_valid_when_nothing_is_placed(
    seed,
):
    c = to_cluster(small_mixed(seed))
    assert 2 <= len(c.nodes) <= 6 and 1 <= len(c.pod_groups) <= 3 and not c.gated
    assert _respects_capacity(c) and _empty_result_violations(c) == []


def test_seeded_small_mixed_snapshots_are_reproducible_and_vary_with_the_seed():
    assert dump_snapshot(small_mixed(11)) == dump_snapshot(small_mixed(11))
    assert len({dump_snapshot(small_mixed(s)) for s in range(10)}) == 10


def test_small_mixed_limits_bound_the_instance():
    c = to_cluster(small_mixed(3, max_nodes=2, max_groups=1, max_group_size=1, max_singles=0))
    assert len(c.nodes) == 2 and len(c.pod_groups) == 1 and len(c.pending_pods) == 1


# ---- hypothesis strategies -----------------------------------------------------------------------
_FAST = settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


@_FAST
@given(small_snapshots())
def test_small_snapshots_have_the_promised_sizes(objects):
    kinds = Counter(o["kind"] for o in objects)
    assert 2 <= kinds["Node"] <= 6
    assert kinds["PodGroup"] in range(1, 4)
    c = load_objects(objects)
    for key, members in ((k, c.groups.node(k).members) for k in c.groups.leaf_keys):
        assert len(members) in range(1, 5)
        g = c.pod_groups[key]
        assert g.policy == "basic" or 1 <= g.min_count <= len(members)
        assert {p.priority for p in members} == {g.priority}


@_FAST
@given(small_clusters())
def test_small_clusters_bound_pods_respect_capacity(cluster):
    assert _respects_capacity(cluster)


@_FAST
@given(small_clusters())
def test_small_clusters_are_valid_when_nothing_is_placed(cluster):
    assert _empty_result_violations(cluster) == []
    assert all(cluster.groups.group_of(p) is not None for p in cluster.pending_pods if p.pod_group)
