"""The Alibaba GPU trace v2023 converter and the alibaba-1213 showcase snapshot."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gangplan.bench.generators.families import data_dir
from gangplan.cli import app
from gangplan.io.alibaba import (
    alibaba_nodes_to_objects,
    build_alibaba_showcase,
    instance_type,
    read_trace_nodes,
)
from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_snapshot
from gangplan.io.writer import write_snapshot
from gangplan.models.cluster import Cluster
from gangplan.models.result import Status
from gangplan.predicates import insufficient, node_matches_pod_selector
from gangplan.solver.outcome import build_result
from gangplan.solver.validate import validate

DATA = data_dir() / "alibaba-gpu-v2023"
NODE_CSV = DATA / "openb_node_list_gpu_node.csv"
POD_CSV = DATA / "openb_pod_list_default.csv"
SHOWCASE = Path(__file__).resolve().parent.parent / "scenarios" / "showcase" / "alibaba-1213"

CSV_HEADER = "sn,cpu_milli,memory_mib,gpu,model\n"


def write_csv(tmp_path: Path, body: str, header: str = CSV_HEADER) -> Path:
    path = tmp_path / "nodes.csv"
    path.write_text(header + body)
    return path


# ---- the node converter -------------------------------------------------------------------------
def test_a_gpu_node_row_becomes_a_labelled_node_with_gpu_allocatable(tmp_path):
    objs = alibaba_nodes_to_objects(write_csv(tmp_path, "openb-node-0001,96000,393216,8,G2\n"))
    assert objs == [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": "openb-node-0001",
                "labels": {
                    "kubernetes.io/hostname": "openb-node-0001",
                    "node.kubernetes.io/instance-type": "g2x8.96c.384gi",
                    "nvidia.com/gpu.product": "G2",
                    "nvidia.com/gpu.count": "8",
                },
            },
            "status": {
                "allocatable": {
                    "cpu": "96000m",
                    "memory": "393216Mi",
                    "pods": "110",
                    "nvidia.com/gpu": "8",
                }
            },
        }
    ]


def test_a_cpu_only_row_has_no_gpu_labels_or_resource(tmp_path):
    (obj,) = alibaba_nodes_to_objects(write_csv(tmp_path, "openb-node-0000,32000,262144,0,\n"))
    assert obj["metadata"]["labels"] == {
        "kubernetes.io/hostname": "openb-node-0000",
        "node.kubernetes.io/instance-type": "cpu.32c.256gi",
    }
    assert "nvidia.com/gpu" not in obj["status"]["allocatable"]


def test_the_gpu_resource_name_can_be_changed(tmp_path):
    (obj,) = alibaba_nodes_to_objects(
        write_csv(tmp_path, "n,8000,32768,1,V100M16\n"), gpu_resource="example.com/gpu"
    )
    assert obj["status"]["allocatable"]["example.com/gpu"] == "1"


def test_instance_type_keeps_odd_sizes_exact():
    from gangplan.io.alibaba import TraceNode

    assert instance_type(TraceNode("x", 82500, 344065, 8, "V100M16")) == "v100m16x8.82500m.344065mi"


BAD_CSV = [
    (
        "a missing column is named",
        "sn,cpu_milli,memory_mib,model\nn,1,1,G2\n",
        ":1: gpu: missing column 'gpu' (header is sn,cpu_milli,memory_mib,model)",
    ),
    (
        "a non-integer value names row and column",
        CSV_HEADER + "a,8000,32768,1,T4\nb,8000,lots,1,T4\n",
        ":3: row 2: memory_mib: expected a non-negative integer, got 'lots'",
    ),
    (
        "a negative value is not a non-negative integer",
        CSV_HEADER + "a,-8000,32768,1,T4\n",
        ":2: row 1: cpu_milli: expected a non-negative integer, got '-8000'",
    ),
    ("a short row is reported", CSV_HEADER + "a,8000,32768\n", ":2: row 1: expected 5 fields"),
    (
        "a duplicate node name is reported",
        CSV_HEADER + "a,1,1,0,\na,1,1,0,\n",
        ":3: row 2: sn: duplicate node 'a'",
    ),
    (
        "a GPU node without a model is reported",
        CSV_HEADER + "a,1,1,2,\n",
        ":2: row 1: model: a GPU node needs a model",
    ),
]


@pytest.mark.parametrize(
    ("content", "expected"), [c[1:] for c in BAD_CSV], ids=[c[0] for c in BAD_CSV]
)
def test_bad_csv_raises_snapshot_error_naming_file_row_and_column(tmp_path, content, expected):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(SnapshotError) as info:
        alibaba_nodes_to_objects(path)
    assert str(info.value) == str(path) + expected


@pytest.mark.traces
def test_the_gpu_node_list_converts_to_1213_nodes_with_the_readme_shapes():
    nodes = read_trace_nodes(NODE_CSV)
    assert len(nodes) == 1213
    shapes = Counter((n.model, n.gpu) for n in nodes)
    assert shapes[("G2", 8)] == 549 and shapes[("T4", 2)] == 387 and shapes[("A10", 1)] == 2
    assert sum(n.gpu for n in nodes) == 6212  # the README: 6212 GPUs in all


def test_write_snapshot_is_deterministic_and_loads_back(tmp_path):
    objs = alibaba_nodes_to_objects(write_csv(tmp_path, "a,8000,32768,1,T4\nb,96000,393216,8,G2\n"))
    write_snapshot(objs, tmp_path / "one.yaml", header="test header")
    write_snapshot(objs, tmp_path / "two.yaml", header="test header")
    assert (tmp_path / "one.yaml").read_bytes() == (tmp_path / "two.yaml").read_bytes()
    assert (tmp_path / "one.yaml").read_text().startswith("# test header\n")
    c = load_snapshot(tmp_path / "one.yaml")
    assert [(n.name, n.allocatable) for n in c.nodes] == [
        ("a", {"cpu": 8000, "memory": 32768 * 2**20, "pods": 110, "nvidia.com/gpu": 1}),
        ("b", {"cpu": 96000, "memory": 393216 * 2**20, "pods": 110, "nvidia.com/gpu": 8}),
    ]


def test_the_cli_import_command_writes_the_nodes(tmp_path):
    out = tmp_path / "nodes.yaml"
    result = CliRunner().invoke(
        app,
        [
            "import",
            "alibaba-nodes",
            str(write_csv(tmp_path, "a,8000,32768,1,T4\n")),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert [n.name for n in load_snapshot(out).nodes] == ["a"]


def test_the_cli_import_command_exits_2_on_a_bad_csv(tmp_path):
    path = write_csv(tmp_path, "a,8000,x,1,T4\n")
    result = CliRunner().invoke(
        app, ["import", "alibaba-nodes", str(path), "--out", str(tmp_path / "o.yaml")]
    )
    assert result.exit_code == 2
    assert (
        f"error: {path}:2: row 1: memory_mib: expected a non-negative integer, got 'x'"
        in result.stderr
    )


# ---- the showcase -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def showcase() -> Cluster:
    return load_snapshot(SHOWCASE)


@pytest.mark.traces
def test_the_committed_showcase_is_exactly_what_the_generator_writes(tmp_path):
    from gangplan.io.alibaba import SHOWCASE_EXPECTATIONS

    build_alibaba_showcase(
        tmp_path, node_csv=NODE_CSV, pod_csv=POD_CSV, expectations=SHOWCASE_EXPECTATIONS
    )
    for name in ("nodes.yaml", "running.yaml", "workload.yaml"):
        assert (tmp_path / name).read_bytes() == (SHOWCASE / name).read_bytes(), name


def test_the_showcase_loads_with_its_1213_nodes():
    """Its load time is measured by ``benchmarks/load_time.py``, not asserted here."""
    c = load_snapshot(SHOWCASE)
    assert len(c.nodes) == 1213


def test_the_showcase_holds_the_trace_running_pods_and_three_ungated_gangs(showcase):
    assert len(showcase.bound_pods) == 5193
    assert {k: g.min_count for k, g in showcase.pod_groups.items()} == {
        "ml/eval-t4": 8,
        "ml/finetune": 128,
        "ml/llm-pretrain": 64,
    }
    assert len(showcase.schedulable_pods) == 200 and showcase.gated == {}
    annotations = showcase.pod_groups["ml/llm-pretrain"].annotations
    assert (
        annotations["gangplan.io/expect-greedy"],
        annotations["gangplan.io/expect-optimal"],
    ) == ("rejected", "admitted")


def test_the_showcase_bound_pods_fit_their_nodes(showcase):
    used: dict[str, Counter] = {}
    for p in showcase.bound_pods:
        used.setdefault(p.node_name, Counter()).update(p.requests)
    for n in showcase.nodes:
        for r, q in used.get(n.name, Counter()).items():
            assert q <= n.allocatable.get(r, 0), (n.name, r)


def _first_fit(cluster: Cluster, order: list[str]) -> dict[str, str]:
    """Place the gangs in ``order`` first-fit on free capacity: a constructive feasibility proof."""
    free = {n.name: dict(n.allocatable) for n in cluster.nodes}
    for p in cluster.bound_pods:
        for r, q in p.requests.items():
            free[p.node_name][r] -= q
        free[p.node_name]["pods"] -= 1
    placements = {}
    for gkey in order:
        for p in cluster.groups.node(gkey).members:
            for n in cluster.nodes:
                f = free[n.name]
                if node_matches_pod_selector(p, n) and not insufficient(p.requests, f, f["pods"]):
                    for r, q in p.requests.items():
                        f[r] -= q
                    f["pods"] -= 1
                    placements[p.key] = n.name
                    break
    return placements


def test_a_placement_admitting_all_three_gangs_exists_so_the_optimum_admits_llm_pretrain(showcase):
    placements = _first_fit(showcase, ["ml/llm-pretrain", "ml/finetune", "ml/eval-t4"])
    result = build_result(showcase, engine="test", status=Status.HEURISTIC, placements=placements)
    assert validate(showcase, result) == []
    assert result.admitted_groups() == ["ml/eval-t4", "ml/finetune", "ml/llm-pretrain"]
    assert len({placements[f"ml/llm-pretrain-{i}"] for i in range(64)}) == 64


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=st.binary(max_size=200), keep_header=st.booleans())
def test_any_csv_bytes_convert_or_raise_snapshot_error(tmp_path, body, keep_header):
    path = tmp_path / "fuzz.csv"
    path.write_bytes((CSV_HEADER.encode() if keep_header else b"") + body)
    try:
        nodes = alibaba_nodes_to_objects(path)
    except SnapshotError as e:
        assert str(e).startswith(str(path))
    else:
        assert all(n["kind"] == "Node" for n in nodes)
