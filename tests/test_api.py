"""The public Python API (issue 24, build 1): ``import gangplan as gp``; load, solve, diff,
validate, the DataFrames, the reprs, examples/quickstart.py and docs/python-api.md.

Every engine Result a test makes goes through gp.validate, which must find nothing."""

from __future__ import annotations

import contextlib
import io
import os
import re
import runpy
from pathlib import Path

import pytest

import gangplan as gp

ROOT = Path(__file__).resolve().parent.parent
GB200 = ROOT / "scenarios" / "showcase" / "tas-nvl72-fragmentation.yaml"

PUBLIC = {
    "load",
    "solve",
    "diff",
    "validate",
    "Cluster",
    "Result",
    "Diff",
    "Violation",
    "SnapshotError",
    "SolveOptions",
    "DiffOptions",
    "GreedySession",
    "make_room",
    "RoomOptions",
    "RoomDocument",
    "RoomWeights",
}


def _valid(cluster, *results):
    for r in results:
        assert gp.validate(cluster, r) == [], r


@pytest.fixture(scope="module")
def gb200():
    cluster = gp.load(GB200)
    greedy = gp.solve(cluster)
    optimal = gp.solve(cluster, engine="exact", time_limit=10, workers=1, hint=greedy)
    _valid(cluster, greedy, optimal)
    return cluster, greedy, optimal


def test_all_lists_exactly_the_public_names_and_each_resolves() -> None:
    assert set(gp.__all__) == PUBLIC and len(gp.__all__) == len(PUBLIC)
    ns: dict = {}
    exec("from gangplan import *", ns)
    assert PUBLIC <= set(ns)
    from gangplan.models.cluster import Cluster
    from gangplan.models.result import Result
    from gangplan.solver.diff import Diff

    assert gp.Cluster is Cluster and gp.Result is Result and gp.Diff is Diff
    assert set(gp.__all__) <= set(dir(gp))
    with pytest.raises(AttributeError):
        gp.solve_greedy  # noqa: B018


def test_load_takes_a_path_a_directory_or_objects(tmp_path) -> None:
    cluster = gp.load(GB200)
    assert isinstance(cluster, gp.Cluster) and len(cluster.nodes) == 36
    assert (
        repr(cluster)
        == f"<Cluster {GB200}: 36 nodes, 28 bound pods, 12 pending pods in 2 groups, kube-scheduler v1.37>"
    )
    (tmp_path / "snap").mkdir()
    (tmp_path / "snap" / "a.yaml").write_text(GB200.read_text())
    assert len(gp.load(str(tmp_path / "snap")).nodes) == 36
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
    }
    small = gp.load([node], kube_version="1.36")
    assert small.kube_version.value == "1.36" and [n.name for n in small.nodes] == ["n1"]
    assert len(gp.load(node).nodes) == 1
    with pytest.raises(TypeError):
        gp.load(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kube_version"):
        gp.load(GB200, kube_version="1.20")
    with pytest.raises(gp.SnapshotError):
        gp.load(tmp_path / "missing.yaml")


def test_load_strict_refuses_what_gangplan_does_not_model() -> None:
    objs = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
        },
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "q", "namespace": "default"},
            "spec": {"hard": {"pods": "1"}},
        },
    ]
    cluster = gp.load(objs)
    if not cluster.warnings:
        pytest.skip("the loader models every input of this snapshot")
    with pytest.raises(gp.SnapshotError, match="strict"):
        gp.load(objs, strict=True)


def test_solve_runs_both_engines_with_typed_options(gb200) -> None:
    cluster, greedy, optimal = gb200
    assert greedy.engine == "greedy" and optimal.engine == "exact"
    assert repr(greedy) == "<Result greedy: 1/2 groups admitted, 4/12 pods placed, 0 victims>"
    assert (
        repr(optimal) == "<Result exact OPTIMAL: 2/2 groups admitted, 12/12 pods placed, 0 victims>"
    )
    assert str(greedy) == repr(greedy)
    again = gp.solve(
        cluster, "exact", time_limit=5, workers=1, seed=3, objective="gpus", preemption=False
    )
    random_ties = gp.solve(cluster, tie_break="random", seed=7, kube_version="1.36")
    _valid(cluster, again, random_ties)
    assert (
        again.params["seed"] == 3
        and again.params["objective"] == "gpus"
        and again.params["preemption"] is False
    )
    assert (
        random_ties.params["tieBreak"] == "random" and random_ties.params["kubeVersion"] == "1.36"
    )


def test_solve_refuses_unknown_options_naming_them_and_the_valid_ones(gb200) -> None:
    cluster = gb200[0]
    with pytest.raises(TypeError) as e:
        gp.solve(cluster, engine="exact", time_limt=5)
    msg = str(e.value)
    assert "'time_limt'" in msg and "did you mean 'time_limit'" in msg
    for name in (
        "time_limit",
        "workers",
        "seed",
        "tie_break",
        "objective",
        "preemption",
        "kube_version",
        "hint",
    ):
        assert name in msg
    with pytest.raises(TypeError, match="'workers' must be an int"):
        gp.solve(cluster, workers="2")
    with pytest.raises(TypeError, match="'time_limit'"):
        gp.solve(cluster, time_limit=True)
    with pytest.raises(ValueError, match="'tie_break'"):
        gp.solve(cluster, tie_break="last")
    with pytest.raises(ValueError, match="'time_limit' must be positive"):
        gp.solve(cluster, time_limit=0)
    with pytest.raises(ValueError, match="engine"):
        gp.solve(cluster, engine="ilp")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Cluster"):
        gp.solve(str(GB200))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unknown option 'probe_time_limit'"):
        gp.solve(cluster, probe_time_limit=1)


def test_diff_reuses_the_results_it_is_given(gb200, monkeypatch) -> None:
    cluster, greedy, optimal = gb200
    import gangplan.solver.exact as exact
    import gangplan.solver.greedy as greedy_engine

    def no_solve(*_a, **_k):
        raise AssertionError("diff solved again although it was given both Results")

    monkeypatch.setattr(greedy_engine, "solve_greedy", no_solve)
    monkeypatch.setattr(exact, "solve_exact", no_solve)
    d = gp.diff(cluster, greedy=greedy, optimal=optimal, explain=False)
    assert d.greedy is greedy and d.optimal is optimal
    assert d.classification == "greedy-suboptimal" and d.exit_code == 3 and d.decisive is None
    assert d.to_dict(with_results=False)["classification"] == d.classification


def test_diff_attributes_mirror_the_diff_json(gb200) -> None:
    cluster, greedy, optimal = gb200
    d = gp.diff(cluster, greedy=greedy, optimal=optimal, workers=1)
    _valid(cluster, d.greedy, d.optimal)
    doc = d.to_dict(with_results=False)
    assert d.classification == doc["classification"] == "greedy-suboptimal"
    assert d.kube_version == doc["kubeVersion"] == "1.37" and d.warnings == doc["warnings"]
    assert (
        [g.group for g in d.groups]
        == [g["group"] for g in doc["groups"]]
        == ["ml/eval", "ml/train"]
    )
    assert d.decisive is not None and d.decisive.pod == doc["decisive"]["pod"] == "ml/eval-0"
    assert repr(d).startswith(
        "<Diff greedy-suboptimal: greedy 1/2 groups admitted, 4 pods placed, 0 victims; optimal 2/2, 12 pods"
    )
    assert d.optimal.to_frame()["admitted"].all()


def test_diff_solves_only_what_it_is_not_given(gb200) -> None:
    cluster, greedy, _ = gb200
    d = gp.diff(cluster, greedy=greedy, time_limit=5, workers=1, explain=False)
    assert d.greedy is greedy and d.optimal.engine == "exact"
    _valid(cluster, d.optimal)
    fresh = gp.diff(cluster, time_limit=5, workers=1, explain=False)
    _valid(cluster, fresh.greedy, fresh.optimal)
    assert fresh.classification == d.classification == "greedy-suboptimal"


def test_diff_refuses_results_that_contradict_its_options(gb200) -> None:
    cluster, greedy, optimal = gb200
    with pytest.raises(ValueError, match="kube_version"):
        gp.diff(cluster, greedy=greedy, kube_version="1.36", explain=False)
    with pytest.raises(ValueError, match="preemption"):
        gp.diff(cluster, greedy=greedy, preemption=False, explain=False)
    with pytest.raises(ValueError, match="exact engine"):
        gp.diff(cluster, greedy=greedy, optimal=greedy)
    with pytest.raises(ValueError, match="greedy engine"):
        gp.diff(cluster, greedy=optimal)
    with pytest.raises(TypeError, match="unknown option 'objective'"):
        gp.diff(cluster, greedy=greedy, objective="gpus")
    no_preemption = gp.solve(cluster, preemption=False)
    _valid(cluster, no_preemption)
    with pytest.raises(ValueError, match="preemption"):
        gp.diff(cluster, greedy=no_preemption, optimal=optimal)


def test_the_terminating_pod_reproducer_diffs_identical_through_the_api() -> None:
    import yaml

    from tests.test_rules_layer import TERMINATING_YAML

    cluster = gp.load(list(yaml.safe_load_all(TERMINATING_YAML)))
    d = gp.diff(cluster, workers=1, time_limit=5)
    _valid(cluster, d.greedy, d.optimal)
    assert d.classification == "identical" and d.exit_code == 0


def test_result_frame_has_one_row_per_pending_pod_with_topology_domains(gb200) -> None:
    cluster, greedy, optimal = gb200
    f = greedy.to_frame()
    assert list(f.columns[:9]) == [
        "namespace",
        "pod",
        "group",
        "engine",
        "node",
        "admitted",
        "nominated",
        "priority",
        "reason",
    ]
    assert list(f.columns[9:]) == list(cluster.topology_levels())
    assert len(f) == len(cluster.pending_pods) == 12
    assert set(f["engine"]) == {"greedy"}
    evals = f[f["group"] == "ml/eval"]
    assert evals["admitted"].all() and set(evals["nvidia.com/gpu.clique"]) == {"nvl72-a.0"}
    trains = f[f["group"] == "ml/train"]
    assert (
        not trains["admitted"].any()
        and trains["node"].isna().all()
        and trains["reason"].notna().all()
    )
    o = optimal.to_frame()
    assert set(o[o["group"] == "ml/eval"]["nvidia.com/gpu.clique"]) == {"nvl72-b.0"}
    read_back = gp.Result.from_json(greedy.to_json())
    with pytest.raises(ValueError, match="to_frame\\(cluster\\)"):
        read_back.to_frame()
    assert read_back.to_frame(cluster).equals(f)


def test_diff_frame_has_one_row_per_group(gb200) -> None:
    cluster, greedy, optimal = gb200
    f = gp.diff(cluster, greedy=greedy, optimal=optimal, explain=False).to_frame()
    assert list(f["group"]) == ["ml/eval", "ml/train"]
    row = f.set_index("group").loc["ml/train"]
    assert (
        not row["greedy_admitted"]
        and row["optimal_admitted"]
        and row["optimal_placed"] == 8
        and row["differs"]
    )


def test_cluster_frame_has_free_and_used_resources_per_node(gb200) -> None:
    cluster, greedy, optimal = gb200
    f = cluster.to_frame()
    assert len(f) == 36 and f["node"].tolist() == [n.name for n in cluster.nodes]
    assert (f["cpu_allocatable"] - f["cpu_used"] == f["cpu_free"]).all()
    assert f.groupby("nvidia.com/gpu.clique")["nvidia.com/gpu_free"].sum().to_dict() == {
        "nvl72-a.0": 32,
        "nvl72-b.0": 36,
    }
    after = cluster.to_frame(optimal)
    assert after["placed_pods"].sum() == 12 and after["victims"].sum() == 0
    assert after["nvidia.com/gpu_free"].sum() == 68 - sum(
        p.requests.get("nvidia.com/gpu", 0) for p in cluster.pending_pods
    )


def test_validate_returns_violations(gb200) -> None:
    cluster, greedy, _ = gb200
    broken = greedy.model_copy(
        update={"pods": {**greedy.pods, "ml/train-0": greedy.pods["ml/eval-0"]}}
    )
    violations = gp.validate(cluster, broken)
    assert violations and all(isinstance(v, gp.Violation) for v in violations)
    assert {v.rule for v in violations} >= {"capacity"}


def _run_quiet(fn):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn()
    return out.getvalue()


def test_the_quickstart_example_runs() -> None:
    path = ROOT / "examples" / "quickstart.py"
    assert len(path.read_text().splitlines()) < 20
    out = _run_quiet(lambda: runpy.run_path(str(path), run_name="__main__"))
    assert "<Diff greedy-suboptimal" in out and "nvl72-b.0" in out and "greedy_admitted" in out


def test_the_python_blocks_of_the_api_doc_run_as_written(monkeypatch) -> None:
    text = (ROOT / "docs" / "python-api.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 6
    monkeypatch.chdir(ROOT)
    ns: dict = {}

    def run():
        for i, block in enumerate(blocks):
            exec(compile(block, f"docs/python-api.md block {i + 1}", "exec"), ns)

    out = _run_quiet(run)
    # the outputs the doc shows in comments are the ones printed
    for expected in re.findall(r"^# (<.*>)$", text, re.M):
        assert expected in out, expected
    assert os.fspath(ROOT)  # ran from the repository root
    _valid(ns["cluster"], ns["greedy"], ns["optimal"], ns["d"].greedy, ns["d"].optimal)
