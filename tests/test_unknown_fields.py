"""Unknown fields, kinds and apiVersions are named in warnings (issue 25 item 1), from a table
generated from the upstream Go types (gangplan/io/schema/fields.json); --strict refuses them."""

from __future__ import annotations

import copy
import json
import random
from functools import lru_cache
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io import schema
from gangplan.io.loader import _objects, load_objects, load_snapshot, read_documents
from gangplan.io.schema import unknown_fields, unknown_kind

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {
        "allocatable": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8", "pods": "110"}
    },
}


def _pod(name: str, spec_extra: dict | None = None, container_extra: dict | None = None) -> dict:
    container = {
        "name": "c",
        "image": "x",
        "resources": {"requests": {"nvidia.com/gpu": "8"}, "limits": {"nvidia.com/gpu": "8"}},
        **(container_extra or {}),
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [container], **(spec_extra or {})},
    }


def _write(tmp_path: Path, objs: list[dict], name: str = "snap.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    return p


def _unknown(cluster) -> list[str]:
    return [w for w in cluster.warnings if schema.is_unknown_warning(w)]


# ---- the misspellings of the issue -----------------------------------------------------------
def test_requets_in_a_pod_is_named_with_file_object_path_and_suggestion(tmp_path: Path) -> None:
    pod = _pod("train-0")
    pod["spec"]["containers"][0]["resources"] = {"requets": {"nvidia.com/gpu": "8"}}
    p = _write(tmp_path, [NODE, pod])
    c = load_snapshot(p)
    assert _unknown(c) == [
        f'{p}: Pod/default/train-0: unknown field "spec.containers[0].resources.requets", did you mean "requests"?'
    ]
    assert c.warnings[0] == _unknown(c)[0]  # first, before the aggregated notes


def test_node_selecter_and_toleration_are_named(tmp_path: Path) -> None:
    pod = _pod(
        "p", {"nodeSelecter": {"pool": "a"}, "toleration": [{"key": "gpu", "operator": "Exists"}]}
    )
    p = _write(tmp_path, [NODE, pod])
    assert _unknown(load_snapshot(p)) == [
        f'{p}: Pod/default/p: unknown field "spec.nodeSelecter", did you mean "nodeSelector"?',
        f'{p}: Pod/default/p: unknown field "spec.toleration", did you mean "tolerations"?',
    ]


def test_scoring_stratgy_in_plugin_args_is_named(tmp_path: Path) -> None:
    ksc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "apiVersion": "kubescheduler.config.k8s.io/v1",
                            "kind": "NodeResourcesFitArgs",
                            "scoringStratgy": {"type": "MostAllocated"},
                        },
                    }
                ],
            }
        ],
    }
    p = _write(tmp_path, [NODE, ksc])
    assert _unknown(load_snapshot(p)) == [
        f'{p}: KubeSchedulerConfiguration: unknown field "profiles[0].pluginConfig[0].args.scoringStratgy", did you mean "scoringStrategy"?'
    ]


def test_a_misspelled_profile_field_is_named_too() -> None:
    ksc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugin": {}}],
    }
    assert [m for _, m in unknown_fields(ksc)] == [
        'unknown field "profiles[0].plugin", did you mean "plugins"?'
    ]


def test_misspelled_api_group_of_a_pod_group_is_named(tmp_path: Path) -> None:
    pg = {
        "apiVersion": "schedulng.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": "train"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
    }
    p = _write(tmp_path, [NODE, pg])
    assert _unknown(load_snapshot(p)) == [
        f'{p}: PodGroup/default/train: no matches for kind "PodGroup" in version "schedulng.k8s.io/v1alpha2", did you mean apiVersion "scheduling.k8s.io/v1alpha2"?'
    ]


def test_a_node_under_apps_v1_is_named(tmp_path: Path) -> None:
    p = _write(tmp_path, [NODE, {**NODE, "apiVersion": "apps/v1", "metadata": {"name": "n2"}}])
    assert _unknown(load_snapshot(p)) == [
        f'{p}: Node/n2: no matches for kind "Node" in version "apps/v1" (Node is served by apiVersion "v1")'
    ]


def test_kinds_and_versions_that_resemble_nothing_known_are_left_alone() -> None:
    assert unknown_kind("Job", "batch.volcano.sh/v1alpha1") is None  # Volcano's Job, not batch/v1's
    assert unknown_kind("ReplicaSet", "apps/v1") is None
    assert (
        unknown_kind("PodGroup", "scheduling.x-k8s.io/v1beta1") is None
    )  # a known group: its own warning says "not read"
    assert unknown_kind("RayJob", "ray.io/v1") is None
    assert (
        unknown_kind("Pdo", "v1")
        == 'no matches for kind "Pdo" in version "v1", did you mean kind "Pod"?'
    )
    assert (
        unknown_kind("PodGroup", "scheduling.volcano.sh/v1alpha1") is None
    )  # a CRD may serve versions the table lacks


def test_a_core_v1_or_v2_pod_is_named() -> None:
    assert (
        unknown_kind("Pod", "core/v1")
        == 'no matches for kind "Pod" in version "core/v1", did you mean apiVersion "v1"?'
    )
    assert (
        unknown_kind("Pod", "v2")
        == 'no matches for kind "Pod" in version "v2" (Pod is served by apiVersion "v1")'
    )
    assert (
        unknown_kind("Job", "batch/v1beta1")
        == 'no matches for kind "Job" in version "batch/v1beta1" (Job is served by apiVersion "batch/v1")'
    )


def test_status_and_server_set_metadata_are_allowed() -> None:
    pod = _pod("p")
    pod["metadata"].update(
        {
            "uid": "u",
            "resourceVersion": "1",
            "generation": 2,
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "managedFields": [
                {
                    "manager": "kubectl",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:anything": {}}},
                    "time": "2026-01-01T00:00:00Z",
                }
            ],
            "labels": {"any/key": "v"},
            "annotations": {"whatever": "x"},
        }
    )
    pod["status"] = {"phase": "Pending", "someFutureStatusField": {"x": 1}}
    assert unknown_fields(pod) == []


def test_many_objects_with_the_same_typo_are_counted_after_a_few(tmp_path: Path) -> None:
    pods = [_pod(f"p{i}", {"nodeSelecter": {}}) for i in range(12)]
    p = _write(tmp_path, [NODE, *pods])
    lines = _unknown(load_snapshot(p))
    assert (
        len(lines) == 6
        and lines[-1]
        == f'{p}: 7 more objects: unknown field "spec.nodeSelecter", did you mean "nodeSelector"?'
    )


def test_without_api_version_the_kinds_own_version_is_used() -> None:
    pod = _pod("p", {"nodeSelecter": {}})
    del pod["apiVersion"]
    assert [path for path, _ in unknown_fields(pod)] == ["spec.nodeSelecter"]
    # A v1alpha2 PodGroup written without apiVersion is not flagged for v1alpha2-only fields.
    pg = {
        "kind": "PodGroup",
        "metadata": {"name": "g"},
        "spec": {
            "podGroupTemplateRef": {"workload": {"workloadName": "w", "podGroupTemplateName": "t"}},
            "schedulingPolicy": {"gang": {"minCount": 1}},
        },
    }
    assert unknown_fields(pg) == [] or all(
        not p.startswith("spec.schedulingPolicy") for p, _ in unknown_fields(pg)
    )


def test_bench_suite_fields_are_checked(tmp_path: Path) -> None:
    from gangplan.bench.suites import load_suite

    p = tmp_path / "suite.yaml"
    p.write_text(
        "apiVersion: gangplan.io/v1alpha1\nkind: BenchSuite\nmetadata: {name: s}\nspec:\n  timelimit: 2\n"
        "  families:\n  - {name: f, generator: mixed, params: {nodes: 4}, seeds: [0]}\n"
    )
    assert load_suite(p).warnings == (
        f'{p}: BenchSuite/s: unknown field "spec.timelimit", did you mean "timeLimit"?',
    )


def test_in_memory_objects_are_checked_only_when_asked() -> None:
    objs = [NODE, _pod("p", {"nodeSelecter": {}})]
    assert _unknown(load_objects(objs)) == []
    assert _unknown(load_objects(objs, check_fields=True)) == [
        '<memory>: Pod/default/p: unknown field "spec.nodeSelecter", did you mean "nodeSelector"?'
    ]


def test_the_internal_switch_turns_the_check_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = _write(tmp_path, [NODE, _pod("p", {"nodeSelecter": {}})])
    monkeypatch.setattr(schema, "ENABLED", False)
    assert _unknown(load_snapshot(p)) == []


# ---- --strict ----------------------------------------------------------------------------------
def test_strict_exits_2_naming_file_object_and_field_without_a_traceback(tmp_path: Path) -> None:
    pod = _pod("train-0")
    pod["spec"]["containers"][0]["resources"] = {"requets": {"nvidia.com/gpu": "8"}}
    p = _write(tmp_path, [NODE, pod])
    res = runner.invoke(app, ["solve", str(p), "--strict"])
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert "Traceback" not in res.output
    assert str(p) in res.stderr and "Pod/default/train-0" in res.stderr
    assert (
        'unknown field "spec.containers[0].resources.requets", did you mean "requests"?'
        in res.stderr
    )
    # Without --strict the run goes on, and the warning is on stderr and in the Result.
    res = runner.invoke(app, ["solve", str(p), "--json"])
    assert res.exit_code == 0, res.output
    assert any(
        'unknown field "spec.containers[0].resources.requets"' in w
        for w in json.loads(res.stdout)["warnings"]
    )
    assert "warning: " in res.stderr and "requets" in res.stderr


def test_strict_exits_2_for_diff_too(tmp_path: Path) -> None:
    p = _write(tmp_path, [NODE, _pod("p", {"toleration": []})])
    res = runner.invoke(app, ["diff", str(p), "--strict", "--time-limit", "1"])
    assert res.exit_code == 2, res.output
    assert 'unknown field "spec.toleration"' in res.stderr


# ---- derived from the table: every kind, every field --------------------------------------------
S = schema.schema()
KINDS = sorted((api, kind) for api, kinds in S.kinds.items() for kind in kinds)


def test_the_table_names_its_upstream_sources_and_every_kind_gangplan_reads() -> None:
    table = json.loads((ROOT / "gangplan" / "io" / "schema" / "fields.json").read_text())
    assert {s["repo"] for s in table["sources"]} >= {
        "kubernetes/api",
        "kubernetes/apimachinery",
        "kubernetes/kube-scheduler",
    }
    assert all(len(s["commit"]) == 40 for s in table["sources"])
    for api, kind in [
        ("v1", "Pod"),
        ("v1", "Node"),
        ("policy/v1", "PodDisruptionBudget"),
        ("scheduling.k8s.io/v1", "PriorityClass"),
        ("scheduling.k8s.io/v1alpha1", "Workload"),
        ("scheduling.k8s.io/v1alpha2", "PodGroup"),
        ("scheduling.k8s.io/v1alpha3", "CompositePodGroup"),
        ("scheduling.k8s.io/v1beta1", "PodGroup"),
        ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration"),
        ("scheduling.x-k8s.io/v1alpha1", "PodGroup"),
        ("scheduling.volcano.sh/v1beta1", "PodGroup"),
        ("scheduling.run.ai/v2alpha2", "PodGroup"),
        ("gangplan.io/v1alpha1", "BenchSuite"),
    ]:
        assert kind in S.kinds[api], (api, kind)


@pytest.mark.parametrize(("api", "kind"), KINDS)
def test_every_top_level_spec_field_of_every_kind_renamed_is_named(api: str, kind: str) -> None:
    spec_t = S.types[S.kinds[api][kind]].get("spec")
    fields = sorted(S.types[spec_t]) if isinstance(spec_t, str) else []
    for f in fields:
        wrong = f + "x" if f + "x" not in S.types[spec_t] else f + "zz"
        obj = {"apiVersion": api, "kind": kind, "spec": {wrong: 1}}
        assert [p for p, _ in unknown_fields(obj)] == [f"spec.{wrong}"], (api, kind, f)
        obj["spec"] = {f: None}
        assert unknown_fields(obj) == []


def _rename(name: str, rnd: random.Random, known: set[str]) -> str:
    """A misspelling of ``name`` that is not a field of the same type."""
    for _ in range(50):
        i = rnd.randrange(len(name) + 1)
        op = rnd.choice(("drop", "swap", "insert", "case"))
        if op == "drop" and len(name) > 1 and i < len(name):
            cand = name[:i] + name[i + 1 :]
        elif op == "swap" and i + 1 < len(name):
            cand = name[:i] + name[i + 1] + name[i] + name[i + 2 :]
        elif op == "case" and i < len(name):
            cand = name[:i] + name[i].swapcase() + name[i + 1 :]
        else:
            cand = name[:i] + rnd.choice("aeiouxz") + name[i:]
        if cand and cand not in known:
            return cand
    return name + "Typo"


@st.composite
def _table_path(draw):
    """A kind and a path of known fields down its type tree, drawn from the generated table."""
    api, kind = draw(st.sampled_from(KINDS))
    tid = S.kinds[api][kind]
    keys: list[str] = []
    types = [tid]
    for _ in range(draw(st.integers(1, 7))):
        fields = sorted(
            k
            for k in S.types[tid]
            if not (len(keys) == 0 and k in ("status", "apiVersion", "kind"))
        )
        if not fields:
            break
        k = draw(st.sampled_from(fields))
        keys.append(k)
        ft = S.types[tid][k]
        if not isinstance(ft, str) or ft.startswith("!") or ft.startswith("*"):
            break
        tid = ft
        types.append(tid)
    return api, kind, keys, types


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_table_path(), st.randoms(use_true_random=False), st.booleans())
def test_fuzz_renaming_a_field_drawn_from_the_table_names_exactly_that_path(
    drawn, rnd, as_list
) -> None:
    api, kind, keys, types = drawn
    wrong = _rename(keys[-1], rnd, set(S.types[types[len(keys) - 1]]))
    obj: dict = {"apiVersion": api, "kind": kind}
    if "metadata" in S.types[types[0]]:
        obj["metadata"] = {"name": "o"}
    node, path = obj, []
    for depth, k in enumerate(keys[:-1]):
        child: dict = {}
        if as_list and depth > 0:  # lists are transparent: items carry the element type's fields
            node[k] = [child]
            path.append(f"{k}[0]")
        else:
            node[k] = child
            path.append(k)
        node = child
    node[wrong] = "x"
    path.append(wrong)
    found = unknown_fields(obj)
    assert [p for p, _ in found] == [".".join(path).replace(".[", "[")]
    assert found[0][1].startswith(f'unknown field "{".".join(path)}"')


def _valid_objects() -> list[tuple[str, dict]]:
    out = []
    for f in sorted((ROOT / "tests" / "fixtures").rglob("*.yaml")) + sorted(
        (ROOT / "tests" / "fixtures").rglob("*.json")
    ):
        try:
            docs = read_documents(f)
            for i, d in enumerate(docs):
                out += [(str(f), o) for o in _objects(str(f), d, i)]
        except Exception:  # noqa: BLE001 - bad-input fixtures are not valid objects
            continue
    return out


@lru_cache(maxsize=1)
def _checkable_objects() -> list[tuple[str, dict]]:
    """The fixtures' objects of a kind the table holds and without unknown fields."""
    return [
        (f, o)
        for f, o in _valid_objects()
        if S.type_of(str(o.get("kind")), str(o.get("apiVersion"))) and not unknown_fields(o)
    ]


def _known_paths(value, tid: str, prefix: list) -> list[tuple[list, str]]:
    """(path as keys/indices, the type that defines its last key) of every field present."""
    out = []
    if isinstance(value, list):
        for i, item in enumerate(value):
            out += _known_paths(item, tid, [*prefix, i])
        return out
    if not isinstance(value, dict) or tid not in S.types:
        return out
    for k, v in value.items():
        if not prefix and k in ("status", "apiVersion", "kind"):
            continue
        ft = S.types[tid].get(k)
        out.append(([*prefix, k], tid))
        if isinstance(ft, str) and not ft.startswith(("*", "!")) and v is not None:
            out += _known_paths(v, ft, [*prefix, k])
    return out


@settings(max_examples=300, deadline=None)
@given(st.data(), st.randoms(use_true_random=False))
def test_fuzz_renaming_a_field_of_a_valid_fixture_object_names_exactly_that_path(data, rnd) -> None:
    objects = _checkable_objects()
    assert len(objects) > 100
    file, obj = objects[data.draw(st.integers(0, len(objects) - 1))]
    paths = _known_paths(obj, S.type_of(obj["kind"], obj["apiVersion"]), [])
    keys, tid = rnd.choice(paths)
    obj = copy.deepcopy(obj)
    parent = obj
    for k in keys[:-1]:
        parent = parent[k]
    wrong = _rename(keys[-1], rnd, set(S.types[tid]))
    parent[wrong] = parent.pop(keys[-1])
    expect = "".join(
        f"[{k}]" if isinstance(k, int) else f".{k}" for k in [*keys[:-1], wrong]
    ).lstrip(".")
    assert [p for p, _ in unknown_fields(obj)] == [expect], file


# ---- valid inputs produce none -------------------------------------------------------------------
# Upstream documentation spells the KAI SubGroup list `subgroups`; the CRD field is `subGroups`
# (the fixtures say so in their header, and gangplan reads it with its own warning).
KNOWN_UPSTREAM_TYPOS = {
    ("multilevel-sample1.yaml", 'unknown field "spec.subgroups", did you mean "subGroups"?'),
    ("multilevel-sample2.yaml", 'unknown field "spec.subgroups", did you mean "subGroups"?'),
}


def test_every_fixture_and_scenario_has_no_unknown_field() -> None:
    found = []
    files = [
        f
        for root in ("tests/fixtures", "scenarios")
        for f in sorted((ROOT / root).rglob("*"))
        if f.is_file() and f.suffix in (".yaml", ".yml", ".json", ".zip")
    ]
    assert len(files) > 50
    for f in files:
        try:
            docs = read_documents(f)
        except Exception:  # noqa: BLE001 - a deliberately broken file
            continue
        for i, d in enumerate(docs):
            try:
                objs = _objects(str(f), d, i)
            except Exception:  # noqa: BLE001
                continue
            for o in objs:
                for _, message in unknown_fields(o):
                    if (f.name, message) not in KNOWN_UPSTREAM_TYPOS:
                        found.append(f"{f.relative_to(ROOT)}: {message}")
                wrong = unknown_kind(o.get("kind"), o.get("apiVersion"))
                if wrong:
                    found.append(f"{f.relative_to(ROOT)}: {wrong}")
    assert found == []
