"""``gangplan generate`` and the topology shapes: deterministic, sized from the facts, loadable."""

from __future__ import annotations

from collections import Counter

import pytest
from typer.testing import CliRunner

from gangplan.bench.generators.builders import to_cluster
from gangplan.bench.generators.topology_shapes import (
    dgx_h100_superpod,
    gb200_nvl72,
    generate_shape,
    scheduler_perf_tas,
    used_units,
)
from gangplan.cli import app
from gangplan.io.loader import load_snapshot
from gangplan.models.well_known import (
    GCE_BLOCK,
    GCE_SUBBLOCK,
    GPU,
    GPU_CLIQUE,
    RACK,
    TOPOGRAPH_BLOCK,
    ZONE,
)
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate
from gangplan.topology import TopologyTree

runner = CliRunner()


def used_gpus(cluster) -> int:
    return sum(p.requests.get(GPU, 0) for p in cluster.bound_pods)


def test_the_same_arguments_write_the_same_bytes_and_another_seed_does_not(tmp_path):
    paths = [tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "c.yaml"]
    for path, seed in zip(paths, (3, 3, 4), strict=True):
        r = runner.invoke(
            app,
            [
                "generate",
                "gb200-nvl72",
                "--out",
                str(path),
                "--nodes",
                "72",
                "--seed",
                str(seed),
                "--gangs",
                "4",
            ],
        )
        assert r.exit_code == 0, r.output
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert paths[0].read_bytes() != paths[2].read_bytes()
    assert "wrote" in r.output and "72 nodes" in r.output


def test_a_written_snapshot_loads_and_greedy_places_it_validly(tmp_path):
    path = tmp_path / "dgx.yaml"
    r = runner.invoke(
        app,
        [
            "generate",
            "dgx-h100-superpod",
            "-o",
            str(path),
            "--nodes",
            "64",
            "--utilisation",
            "0.25",
            "--gangs",
            "6",
        ],
    )
    assert r.exit_code == 0, r.output
    cluster = load_snapshot(path)
    assert len(cluster.nodes) == 64 and len(cluster.pod_groups) == 6
    result = solve_greedy(cluster)
    assert validate(cluster, result) == []
    assert any(g.admitted for g in result.groups.values())


@pytest.mark.parametrize(
    "args, message",
    [
        (["nope", "-o", "x.yaml"], "unknown shape 'nope'"),
        (
            ["gb200-nvl72", "-o", "x.yaml", "--utilisation", "1.5"],
            "utilisation must be within [0, 1]",
        ),
        (["gb200-nvl72", "-o", "x.yaml", "--nodes", "0"], "--nodes must be at least 1"),
        (
            ["scheduler-perf-tas", "-o", "x.yaml", "--gang-size", "2", "--gang-size", "3"],
            "one size",
        ),
    ],
    ids=[
        "an unknown shape",
        "utilisation above one",
        "no nodes",
        "two gang sizes for the perf shape",
    ],
)
def test_bad_input_exits_2_with_the_reason(tmp_path, args, message):
    args = [a if a != "x.yaml" else str(tmp_path / a) for a in args]
    r = runner.invoke(app, ["generate", *args])
    assert r.exit_code == 2
    assert message in r.output.replace("\n", "")


def test_gang_size_and_unconstrained_options_reach_the_pod_groups(tmp_path):
    path = tmp_path / "g.yaml"
    r = runner.invoke(
        app,
        [
            "generate",
            "gb200-nvl72",
            "-o",
            str(path),
            "--nodes",
            "36",
            "--gangs",
            "3",
            "--gang-size",
            "5",
            "--unconstrained",
        ],
    )
    assert r.exit_code == 0, r.output
    c = load_snapshot(path)
    assert {g.min_count for g in c.pod_groups.values()} == {5}
    assert {g.topology_key for g in c.pod_groups.values()} == {None}


# ---- the shapes ---------------------------------------------------------------------------------
def test_gb200_racks_are_18_nodes_of_4_gpus_one_nvlink_clique_each_and_8_racks_per_block():
    c = to_cluster(gb200_nvl72(racks=16, utilisation=0.0, gangs=0))
    tree = TopologyTree.from_cluster(c)
    assert tree.levels == (GCE_BLOCK, GCE_SUBBLOCK, GPU_CLIQUE, "kubernetes.io/hostname")
    assert tree.source == "Topology/gb200-nvl72"
    assert Counter(n.labels[GPU_CLIQUE] for n in c.nodes).most_common(1)[0][1] == 18
    assert len({n.labels[GPU_CLIQUE] for n in c.nodes}) == 16
    assert len({n.labels[GCE_BLOCK] for n in c.nodes}) == 2
    assert {n.allocatable[GPU] for n in c.nodes} == {4}


def test_gb200_cliques_can_split_a_rack_into_partitions():
    c = to_cluster(gb200_nvl72(racks=2, cliques_per_rack=2, utilisation=0.0, gangs=0))
    assert sorted(Counter(n.labels[GPU_CLIQUE] for n in c.nodes).values()) == [9, 9, 9, 9]
    with pytest.raises(ValueError):
        gb200_nvl72(racks=1, cliques_per_rack=4)


def test_dgx_superpod_units_are_32_nodes_of_8_gpus_and_gangs_stay_in_one_unit():
    c = to_cluster(dgx_h100_superpod(nodes=128, utilisation=0.0, gangs=5))
    assert sorted(Counter(n.labels[TOPOGRAPH_BLOCK] for n in c.nodes).values()) == [32, 32, 32, 32]
    assert {n.allocatable[GPU] for n in c.nodes} == {8}
    assert {g.topology_key for g in c.pod_groups.values()} == {TOPOGRAPH_BLOCK}


@pytest.mark.parametrize(
    "nodes, zone_size", [(5000, 1000), (500, 100)], ids=["zones of 1000", "zones of 100"]
)
def test_scheduler_perf_tas_has_racks_of_100_inside_zones(nodes, zone_size):
    objs = generate_shape("scheduler-perf-tas", nodes=nodes, utilisation=0.0, seed=0, gangs=2)
    c = to_cluster(objs)
    assert set(Counter(n.labels[RACK] for n in c.nodes).values()) == {100}
    assert set(Counter(n.labels[ZONE] for n in c.nodes).values()) == {zone_size}
    assert {p.requests["cpu"] for p in c.pending_pods} == {100}
    assert {g.min_count for g in c.pod_groups.values()} == {4}


@pytest.mark.parametrize(
    "utilisation", [0.0, 0.3, 0.5, 1.0], ids=["idle", "30 percent", "half", "full"]
)
def test_existing_load_uses_exactly_the_requested_share_of_gpus(utilisation):
    c = to_cluster(gb200_nvl72(racks=4, utilisation=utilisation, gangs=0, seed=7))
    assert used_gpus(c) == round(utilisation * 4 * 18 * 4)
    assert validate(c, solve_greedy(c)) == []


def test_load_fragments_some_nodes_and_leaves_others_idle():
    used = used_units(200, 8, 0.5, seed=2)
    kinds = Counter("full" if u == 8 else "idle" if u == 0 else "partial" for u in used)
    assert kinds["full"] > 0 and kinds["partial"] > 0 and kinds["idle"] > 0


def test_cpu_load_for_the_perf_shape_is_in_whole_cores():
    c = to_cluster(scheduler_perf_tas(nodes=200, nodes_per_zone=100, utilisation=0.5, gangs=0))
    assert sum(p.requests["cpu"] for p in c.bound_pods) == 400 * 1000


def test_generate_dra_writes_the_slices_nvidias_driver_publishes_and_both_engines_keep_one_channel_pod_per_node(
    tmp_path,
):
    from gangplan.solver.exact import solve_exact

    out = tmp_path / "gb200-dra.yaml"
    res = runner.invoke(
        app,
        [
            "generate",
            "gb200-nvl72",
            "--dra",
            "--nodes",
            "18",
            "--gangs",
            "4",
            "--gang-size",
            "4",
            "--utilisation",
            "0.3",
            "-o",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    docs = [d for d in __import__("yaml").safe_load_all(out.read_text()) if d]
    kinds = Counter(d["kind"] for d in docs)
    assert (
        kinds["ResourceSlice"] == 2 * 18
        and kinds["DeviceClass"] == 3
        and kinds["ResourceClaimTemplate"] == 4
    )
    assert {d["metadata"]["name"] for d in docs if d["kind"] == "DeviceClass"} == {
        "gpu.nvidia.com",
        "compute-domain-default-channel.nvidia.com",
        "compute-domain-daemon.nvidia.com",
    }
    gpu = next(
        d for d in docs if d["kind"] == "ResourceSlice" and d["spec"]["driver"] == "gpu.nvidia.com"
    )
    assert [x["name"] for x in gpu["spec"]["devices"]] == ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]
    dev = gpu["spec"]["devices"][0]
    assert {"type", "uuid", "productName", "brand", "architecture"} <= set(
        dev["attributes"]
    ) and set(dev["capacity"]) == {"memory"}
    assert dev["attributes"]["type"] == {"string": "gpu"} and dev["attributes"]["uuid"][
        "string"
    ].startswith("GPU-")
    cd = next(
        d
        for d in docs
        if d["kind"] == "ResourceSlice" and d["spec"]["driver"] == "compute-domain.nvidia.com"
    )
    assert [x["name"] for x in cd["spec"]["devices"]] == ["channel-0", "daemon-0"]
    cluster = load_snapshot(out)
    assert all(GPU not in n.allocatable for n in cluster.nodes)
    assert not [
        w for w in cluster.warnings if "no allocated ResourceClaim" in w
    ]  # bound pods hold their GPUs
    assert all(p.key in cluster.dra.pod_claims for p in cluster.pending_pods)
    for r in (solve_greedy(cluster), solve_exact(cluster, time_limit=10, workers=1)):
        assert validate(cluster, r) == []
        nodes = [o.node for o in r.pods.values() if o.node]
        assert len(nodes) == len(set(nodes)), f"{r.engine}: two ComputeDomain pods on one node"
        assert all(
            any(c.device == "channel-0" for c in o.claims) for o in r.pods.values() if o.node
        )


def test_generate_dra_refuses_a_shape_without_gpus(tmp_path):
    res = runner.invoke(
        app,
        [
            "generate",
            "scheduler-perf-tas",
            "--dra",
            "--nodes",
            "100",
            "-o",
            str(tmp_path / "x.yaml"),
        ],
    )
    assert res.exit_code == 2 and "--dra needs a GPU shape" in res.output
