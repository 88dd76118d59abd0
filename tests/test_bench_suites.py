"""Bench suites and generator families: expansion, stable ids, determinism, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplan.bench.generators.builders import to_cluster
from gangplan.bench.generators.families import FAMILIES, build_family
from gangplan.bench.suites import Task, load_suite, task_id
from gangplan.io.errors import SnapshotError
from gangplan.io.writer import dump_snapshot
from gangplan.models.well_known import GPU

REPO = Path(__file__).resolve().parent.parent
SUITES = REPO / "scenarios" / "suites"
TRACE_FAMILIES = {"philly", "alibaba", "real-inventory"}
"""Families drawn from the real traces (the ``traces`` marker)."""

SUITE = """\
apiVersion: gangplan.io/v1alpha1
kind: BenchSuite
metadata: {name: tiny}
spec:
  timeLimit: 3
  families:
  - name: mix
    generator: mixed
    params: {nodes: 4, gangs: 2}
    grid: {utilisation: [0.2, 0.6], max_gang_size: [2, 4]}
    seeds: {start: 5, count: 2}
  - name: show
    directory: %s
"""


def test_a_suite_file_expands_every_grid_cell_and_seed_into_tasks_with_stable_ids(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tiny.yaml"
    path.write_text(SUITE % (REPO / "scenarios" / "showcase"))
    suite = load_suite(path)
    generated = [t for t in suite.tasks if t.family == "mix"]
    assert len(generated) == 2 * 2 * 2
    assert generated[0].id == "mix/gangs=2,max_gang_size=2,nodes=4,utilisation=0.2/seed=5"
    assert [t.seed for t in generated[:2]] == [5, 6]
    assert suite.time_limit == 3.0
    showcase = [t for t in suite.tasks if t.family == "show"]
    assert showcase and all(t.path and t.id.startswith("show/") for t in showcase)
    assert load_suite(path).tasks == suite.tasks


def test_task_ids_ignore_the_order_parameters_are_written_in() -> None:
    assert (
        task_id("f", {"b": 1, "a": [1, 2]}, 3)
        == task_id("f", {"a": [1, 2], "b": 1}, 3)
        == "f/a=[1,2],b=1/seed=3"
    )


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(f, marks=[pytest.mark.traces] if f in TRACE_FAMILIES else [])
        for f in sorted(FAMILIES)
    ],
)
def test_every_family_generates_the_same_bytes_for_the_same_seed_and_loads(name: str) -> None:
    small = {
        "mixed": {"nodes": 6, "gangs": 4},
        "gpu": {"nodes": 8, "pending_pods": 12},
        "philly": {"nodes": 6, "jobs": 5},
        "alibaba": {"nodes": 6, "gangs": 4},
        "scheduler-perf": {"nodes": 4, "gangs": 3},
        "real-inventory": {"jobs": 5},
        "huge": {"nodes": 20, "bound_pods": 100, "pending_pods": 10},
    }[name]
    a = dump_snapshot(build_family(name, small, 7))
    assert a == dump_snapshot(build_family(name, small, 7))
    cluster = to_cluster(build_family(name, small, 7))
    assert cluster.nodes and cluster.pending_pods


@pytest.mark.parametrize(
    "name",
    [
        "mixed",
        "gpu",
        pytest.param("philly", marks=pytest.mark.traces),
        pytest.param("alibaba", marks=pytest.mark.traces),
    ],
)
def test_random_families_draw_a_different_instance_for_another_seed(name: str) -> None:
    assert dump_snapshot(build_family(name, {}, 0)) != dump_snapshot(build_family(name, {}, 1))


@pytest.mark.traces
def test_philly_gangs_carry_the_real_job_gpu_totals_split_into_at_most_8_gpu_workers() -> None:
    cluster = to_cluster(
        build_family("philly", {"nodes": 32, "jobs": 40, "min_gpus": 12, "sampling": "uniform"}, 0)
    )
    totals = sorted(
        sum(p.requests[GPU] for p in members)
        for members in (cluster.groups.node(k).members for k in cluster.groups.leaf_keys)
    )
    assert totals and set(totals) <= {12, 16, 24, 32, 64, 128, 256}
    assert all(p.requests[GPU] <= 8 for p in cluster.pending_pods)


@pytest.mark.traces
def test_alibaba_nodes_come_from_the_real_inventory_with_their_gpu_model() -> None:
    cluster = to_cluster(build_family("alibaba", {"inventory": "openb", "nodes": 10}, 3))
    assert all(n.name.startswith("openb-node-") for n in cluster.nodes)
    assert {n.labels["nvidia.com/gpu.product"] for n in cluster.nodes} <= {
        "G1",
        "G2",
        "G3",
        "P100",
        "T4",
        "V100M16",
        "V100M32",
        "A10",
    }
    spot = to_cluster(build_family("alibaba", {"inventory": "spot", "nodes": 10}, 3))
    assert all(n.name.startswith("spot-") for n in spot.nodes)


def test_mixed_knobs_add_the_constraints_they_name() -> None:
    params = {
        "nodes": 8,
        "gangs": 12,
        "max_gang_size": 4,
        "gang_size_dist": "fixed",
        "hetero_fraction": 1.0,
        "anti_affinity_fraction": 1.0,
        "topology_fraction": 1.0,
        "priorities": 3,
    }
    cluster = to_cluster(build_family("mixed", params, 0))
    assert all(g.topology_key == "topology.kubernetes.io/rack" for g in cluster.pod_groups.values())
    assert all(p.affinity.pod_anti_affinity_required for p in cluster.pending_pods)
    assert (
        sum(1 for p in cluster.pending_pods if GPU not in p.requests) == 12
    )  # one launcher per gang
    assert len({g.priority for g in cluster.pod_groups.values()}) > 1


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ("families: [{name: x, generator: nope}]", "spec.families[0].generator"),
        (
            "families: [{name: x, generator: mixed, grid: {colour: [1]}}]",
            "spec.families[0].grid.colour",
        ),
        (
            "families: [{name: x, generator: mixed, params: {nodes: 4}, seeds: [a]}]",
            "spec.families[0].seeds",
        ),
        ("timeLimit: -1\n  families: [{name: x, generator: mixed}]", "spec.timeLimit"),
        ("families: []", "spec.families"),
        ("families: [{name: x, generator: mixed}, {name: x, generator: mixed}]", "spec.families"),
    ],
    ids=[
        "an unknown generator",
        "an unknown parameter",
        "a seed that is not an integer",
        "a negative time limit",
        "no family",
        "the same task twice",
    ],
)
def test_a_bad_suite_names_the_field_at_fault(tmp_path: Path, spec: str, field: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(f"apiVersion: gangplan.io/v1alpha1\nkind: BenchSuite\nspec:\n  {spec}\n")
    with pytest.raises(SnapshotError) as err:
        load_suite(path)
    assert err.value.field == field


def test_a_directory_is_a_suite_of_its_snapshots() -> None:
    suite = load_suite(REPO / "scenarios" / "showcase")
    assert len(suite.tasks) == len({t.id for t in suite.tasks}) >= 4
    assert isinstance(suite.tasks[0], Task)


@pytest.mark.parametrize("name", ["small.yaml", "large.yaml"])
def test_the_shipped_suites_load(name: str) -> None:
    suite = load_suite(SUITES / name)
    assert len(suite.tasks) >= (1000 if name == "large.yaml" else 30)


def test_the_default_data_dir_is_shared_data_beside_the_repository(monkeypatch) -> None:
    """Without $GANGPLAN_DATA_DIR the families read ``<repo>/../shared/data`` (the conftest sets
    the variable for the test run, so only this test sees the default)."""
    from pathlib import Path

    import gangplan
    from gangplan.bench.generators.families import data_dir

    monkeypatch.delenv("GANGPLAN_DATA_DIR", raising=False)
    assert data_dir() == Path(gangplan.__file__).resolve().parents[1].parent / "shared" / "data"
    assert data_dir("/elsewhere") == Path("/elsewhere")


@pytest.mark.parametrize("variant", ["gb200", "dgx"])
def test_the_huge_family_at_one_percent_scale_has_its_shape_and_greedy_places_it_validly(
    variant: str,
) -> None:
    from gangplan.solver.greedy import solve_greedy
    from gangplan.solver.validate import validate

    small = {"variant": variant, "nodes": 100, "bound_pods": 1000, "pending_pods": 50}
    objs = build_family("huge", small, 3)
    text = dump_snapshot(objs)
    assert text == dump_snapshot(build_family("huge", small, 3))
    assert "&id" not in text  # no shared dicts, so no YAML anchors (a kubectl dump has none)
    cluster = to_cluster(objs)
    bound = [o for o in objs if o["kind"] == "Pod" and o["spec"].get("nodeName")]
    assert len(bound) == 1000 and len(cluster.pending_pods) == 50
    assert len(cluster.nodes) == (108 if variant == "gb200" else 100)  # GB200: whole racks of 18
    gpus = sum(n.allocatable[GPU] for n in cluster.nodes)
    used = sum(int(o["spec"]["containers"][0]["resources"]["requests"].get(GPU, 0)) for o in bound)
    assert used == round(0.8 * gpus)
    assert all(
        set(o["metadata"]) == {"name", "namespace", "uid", "labels"} for o in bound
    )  # slim, as a dump's essentials
    groups = [o for o in objs if o["kind"] == "PodGroup"]
    keys = {g["spec"]["schedulingConstraints"]["topology"][0]["key"] for g in groups}
    assert len(keys) == 2 and all(
        2 <= g["spec"]["schedulingPolicy"]["gang"]["minCount"] <= 32 for g in groups
    )
    result = solve_greedy(cluster)
    assert [str(v) for v in validate(cluster, result)] == []
    assert any(p.node for p in result.pods.values())
