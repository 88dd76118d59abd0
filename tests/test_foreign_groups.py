"""Foreign group APIs (coscheduling, Volcano, KAI, Kueue) are translated into native groups.

Every file under ``tests/fixtures/foreign/`` is a project's own documentation example (source and
commit in its header) with its documented outcome as a ``# gangplan-expect:`` line. Each is loaded
(controllers expanded, foreign groups translated), both engines run, both results are validated,
and both must give the documented outcome.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io.loader import load_objects, load_snapshot
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

FOREIGN = Path(__file__).resolve().parent / "fixtures" / "foreign"
FIXTURES = sorted(p for p in FOREIGN.rglob("*.yaml"))
KAI_SNAPSHOT = FOREIGN / "kai" / "snapshot"
runner = CliRunner()


def _expect(path: Path) -> list[str]:
    line = next(ln for ln in path.read_text().splitlines() if ln.startswith("# gangplan-expect:"))
    return line.split(":", 1)[1].split()


def _select(cluster, placed: dict[str, str], what: str) -> list[str]:
    """The placed pods an expectation's ``same-domain(<what>)`` names."""
    if what == "all":
        return sorted(placed)
    out: list[str] = []
    for part in what.split(","):
        m = re.fullmatch(r"(.+)-(\d+)\.\.(\d+)", part)
        if m:  # a range of pod name suffixes: t0-0..3
            names = {f"-{m.group(1)}-{i}" for i in range(int(m.group(2)), int(m.group(3)) + 1)}
            out += [k for k in placed if any(k.endswith(n) for n in names)]
        else:  # a KAI subgroup
            out += [
                k
                for k in placed
                if cluster.pod_by_key[k].labels.get("kai.scheduler/subgroup-name") == part
            ]
    assert out, f"{what!r} selects no placed pod"
    return out


def _braces(pattern: str) -> set[str]:
    """``a-{0,1}-{1,2}`` -> the four names."""
    parts = re.split(r"\{([^}]*)\}", pattern)
    options = [[x] if i % 2 == 0 else x.split(",") for i, x in enumerate(parts)]
    return {"".join(c) for c in itertools.product(*options)}


def _check(cluster, result, expect: list[str]) -> None:
    placed = result.placements()
    nodes = {n.name: n for n in cluster.nodes}
    names: set[str] = set()
    for item in expect:
        if "=" not in item and names:  # more pod name patterns after pods=
            names |= _braces(item)
            continue
        key, _, value = item.partition("=")
        if key == "placed":
            assert len(placed) == int(value), (result.engine, placed)
        elif key == "pending":
            assert len(cluster.pending_pods) - len(placed) == int(value), result.engine
        elif key == "group":
            name, _, outcome = value.partition(":")
            g = next(v for k, v in result.groups.items() if k.endswith("/" + name))
            assert g.admitted is (outcome == "admitted"), (result.engine, g)
        elif key.startswith("same-domain"):
            m = re.fullmatch(r"same-domain(?:\((.+)\))?", key)
            pods = _select(cluster, placed, m.group(1) or "all")
            labels = value.strip("()").split(",")
            values = {tuple(nodes[placed[p]].labels.get(k) for k in labels) for p in pods}
            assert len(values) == 1 and None not in next(iter(values)), (result.engine, key, values)
        elif key in ("zone", "rack"):
            label = next(k for n in cluster.nodes for k in n.labels if k.endswith("/" + key))
            assert {nodes[n].labels[label] for n in placed.values()} == {value}, result.engine
        elif key == "whole-groups-only":
            for gkey, g in result.groups.items():
                assert g.placed in (0, len(cluster.groups.node(gkey).members)), (
                    result.engine,
                    gkey,
                    g,
                )
        elif key == "pods":
            names |= _braces(value)
        elif key == "levels":
            continue
        elif re.fullmatch(r"tier\d+", key):
            assert any(f"tier {key[4:]} -> {value}" in t for t in cluster.translations), (
                cluster.translations
            )
        else:
            raise AssertionError(f"unknown expectation {item!r}")
    if names:
        assert {p.name for p in cluster.pending_pods} == names


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_documentation_example_gives_its_documented_outcome_in_both_engines(path: Path) -> None:
    expect = _expect(path)
    cluster = load_snapshot(path)
    greedy = solve_greedy(cluster)
    exact = solve_exact(cluster, hint=greedy, time_limit=5, workers=1)
    assert validate(cluster, greedy) == [] and validate(cluster, exact) == []
    # with a ClusterQueue Kueue holds its jobs' pods until it admits them (issue 42); nothing else
    assert all(r.startswith("Kueue has not admitted") for r in cluster.gated.values())
    assert bool(cluster.gated) == (cluster.kueue is not None and bool(cluster.kueue.pending()))
    for result in (greedy, exact):
        _check(cluster, result, expect)
    # Translated kinds are no longer "not read".
    assert not any(
        "not read" in w
        and re.search(r"PodGroup|HyperNode|Topology \(kai|JobSet|LeaderWorkerSet|^Job", w)
        for w in cluster.warnings
    ), cluster.warnings


@pytest.mark.parametrize("name", ["snapshot.json", "snapshot.zip"])
def test_a_kai_snapshot_built_from_its_documented_format_loads(name: str) -> None:
    cluster = load_snapshot(KAI_SNAPSHOT / name)
    assert (len(cluster.nodes), len(cluster.pending_pods)) == (4, 5)
    assert sorted(cluster.pod_groups) == ["team-a/sample1-subgroup-a", "team-a/sample1-subgroup-b"]
    assert sorted(cluster.composite_pod_groups) == ["team-a/sample1"]
    assert cluster.composite_pod_groups["team-a/sample1"].min_group_count == 2
    assert [t.name for t in cluster.topologies] == ["cluster-topology"]
    assert cluster.priority_classes["inference"].value == 125
    assert {p.scheduler_name for p in cluster.pods} == {"default-scheduler"}
    assert any("Queue: 1 object (test)" in w for w in cluster.warnings)
    assert any(w.startswith("KAISchedulerConfiguration") for w in cluster.warnings)
    greedy = solve_greedy(cluster)
    exact = solve_exact(cluster, hint=greedy, time_limit=5, workers=1)
    assert validate(cluster, greedy) == [] and validate(cluster, exact) == []
    for result in (greedy, exact):
        placed = result.placements()
        assert len(placed) == 5
        racks = {
            sub: {
                cluster.nodes[cluster.node_index[n]].labels["topology/rack"]
                for k, n in placed.items()
                if cluster.pod_by_key[k].labels["kai.scheduler/subgroup-name"] == sub
            }
            for sub in ("subgroup-a", "subgroup-b")
        }
        # a rack holds four 3-CPU pods: a (2) and b (3) each on one rack, so on different racks
        assert (
            all(len(r) == 1 for r in racks.values()) and racks["subgroup-a"] != racks["subgroup-b"]
        )


def test_one_translation_line_per_kind_shown_as_notes_and_in_the_result_json() -> None:
    path = FOREIGN / "volcano" / "network-topology-job-tier1.yaml"
    res = runner.invoke(app, ["solve", str(path), "--json"])
    assert res.exit_code == 0, res.output
    result = json.loads(res.stdout)
    notes = [ln[len("note: ") :] for ln in res.stderr.splitlines() if ln.startswith("note: ")]
    assert notes == result["translations"] == list(load_snapshot(path).translations)
    assert [n.split(" (")[0] for n in notes] == [
        "read 3 HyperNode",
        "translated 1 PodGroup",
        "read schedulerName 'volcano' as the profile's",
    ]
    assert notes[0].endswith("tier 1 -> volcano.sh/hypernode, tier 2 -> volcano.sh/hypercluster")
    assert "minMember -> gang minCount" in notes[1] and "queue, minResources ignored" in notes[1]
    assert result["groups"]["default/network-topology-job-a1b2c3d4-0000-4000-8000-000000000001"][
        "domain"
    ] in ("volcano.sh/hypernode=hypernode0", "volcano.sh/hypernode=hypernode1")
    for cmd in (["inspect", str(path)], ["diff", str(path), "--time-limit", "2", "--workers", "1"]):
        res = runner.invoke(app, cmd)
        assert res.exit_code == 0, res.output
        assert [ln for ln in res.stderr.splitlines() if ln.startswith("note: ")] == [
            f"note: {n}" for n in notes
        ]


def test_a_native_snapshot_has_no_translations() -> None:
    res = runner.invoke(
        app,
        [
            "solve",
            str(Path(__file__).parent / "fixtures" / "api" / "v1alpha2-v1.36.yaml"),
            "--json",
        ],
    )
    assert res.exit_code == 0 and json.loads(res.stdout)["translations"] == []
    assert "note:" not in res.stderr


# ---- rules not covered by the documentation examples ----------------------------------------------
def _node(name: str, labels: dict | None = None, cpu: str = "4") -> dict:
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}},
    }


def _pod(
    name: str,
    *,
    labels: dict | None = None,
    annotations: dict | None = None,
    cpu: str = "1",
    **spec,
) -> dict:
    return {
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "labels": labels or {},
            "annotations": annotations or {},
        },
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], **spec},
    }


def test_coscheduling_pod_whose_podgroup_is_missing_waits_and_a_native_link_wins() -> None:
    c = load_objects(
        [
            _node("n1"),
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": "pg", "namespace": "ml"},
                "spec": {"minMember": 2, "minResources": {"cpu": "10"}},
            },
            _pod(
                "a",
                labels={"scheduling.x-k8s.io/pod-group": "pg"},
                schedulerName="scheduler-plugins-scheduler",
            ),
            _pod("b", labels={"scheduling.x-k8s.io/pod-group": "pg"}),
            _pod("lost", labels={"scheduling.x-k8s.io/pod-group": "gone"}),
        ]
    )
    assert c.pod_by_key["ml/a"].pod_group == c.pod_by_key["ml/b"].pod_group == "pg"
    assert c.pod_by_key["ml/a"].scheduler_name == "default-scheduler"
    assert c.pod_groups["ml/pg"].policy == "gang" and c.pod_groups["ml/pg"].min_count == 2
    assert "PodGroupNotFound" in c.gated["ml/lost"]
    assert any(
        w.startswith(
            "PodGroup (scheduling.x-k8s.io/v1alpha1) spec.minResources.cpu: 1 object (ml/pg)"
        )
        for w in c.warnings
    )
    assert any(
        t.startswith(
            "read schedulerName 'scheduler-plugins-scheduler' as the profile's ('default-scheduler') for 1 pods"
        )
        for t in c.translations
    )


def test_a_foreign_group_named_like_a_native_one_gets_a_suffix() -> None:
    c = load_objects(
        [
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": "pg", "namespace": "ml"},
                "spec": {"schedulingPolicy": {"basic": {}}},
            },
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": "pg", "namespace": "ml"},
                "spec": {"minMember": 1},
            },
            _pod("a", labels={"scheduling.x-k8s.io/pod-group": "pg"}),
        ]
    )
    assert sorted(c.pod_groups) == ["ml/pg", "ml/pg-coscheduling"]
    assert c.pod_by_key["ml/a"].pod_group == "pg-coscheduling"


def test_volcano_enforced_min_task_member_becomes_a_composite_over_task_gangs_with_the_group_priority() -> (
    None
):
    pg = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "job", "namespace": "ml"},
        "spec": {
            "minMember": 3,
            "minTaskMember": {"ps": 1, "worker": 2},
            "priorityClassName": "high",
            "queue": "q",
        },
    }
    pods = [
        _pod(
            f"{t}-{i}",
            annotations={"scheduling.k8s.io/group-name": "job", "volcano.sh/task-spec": t},
            schedulerName="volcano",
        )
        for t, n in (("ps", 1), ("worker", 3))
        for i in range(n)
    ]
    c = load_objects(
        [
            _node("n1"),
            {"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
            pg,
            *pods,
        ]
    )
    cpg = c.composite_pod_groups["ml/job"]
    assert (cpg.policy, cpg.min_group_count, cpg.priority) == ("gang", 2, 1000)
    assert {k: (g.min_count, g.parent, g.priority) for k, g in c.pod_groups.items()} == {
        "ml/job-ps": (1, "job", 1000),
        "ml/job-worker": (2, "job", 1000),
    }
    assert {p.pod_group for p in c.pods} == {"job-ps", "job-worker"} and {
        p.priority for p in c.pods
    } == {1000}
    greedy = solve_greedy(c)
    assert validate(c, greedy) == [] and len(greedy.placements()) == 4


def test_volcano_hypernodes_without_a_matching_label_get_a_synthesized_tier_label() -> None:
    hn = [
        {
            "apiVersion": "topology.volcano.sh/v1alpha1",
            "kind": "HyperNode",
            "metadata": {"name": f"s{i}"},
            "spec": {
                "tier": 1,
                "members": [
                    {"type": "Node", "selector": {"regexMatch": {"pattern": f"^rack{i}-"}}}
                ],
            },
        }
        for i in range(2)
    ]
    pg = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "job", "namespace": "ml"},
        "spec": {"minMember": 3, "networkTopology": {"mode": "hard", "highestTierAllowed": 1}},
    }
    nodes = [_node(f"rack{i}-n{j}", cpu="1") for i in range(2) for j in range(2)]
    pods = [_pod(f"p{i}", annotations={"scheduling.k8s.io/group-name": "job"}) for i in range(3)]
    c = load_objects([*nodes, *hn, pg, *pods])
    assert {n.name: n.labels.get("gangplan.io/volcano-tier-1") for n in c.nodes} == {
        "rack0-n0": "s0",
        "rack0-n1": "s0",
        "rack1-n0": "s1",
        "rack1-n1": "s1",
    }
    assert c.pod_groups["ml/job"].topology_key == "gangplan.io/volcano-tier-1"
    assert any("synthesized label gangplan.io/volcano-tier-1" in t for t in c.translations)
    greedy = solve_greedy(c)
    assert (
        validate(c, greedy) == [] and greedy.placements() == {}
    )  # 3 one-CPU pods, 2 CPU per HyperNode
    soft = load_objects(
        [
            *nodes,
            *hn,
            {
                **pg,
                "spec": {
                    **pg["spec"],
                    "networkTopology": {"mode": "soft", "highestTierAllowed": 1},
                },
            },
            *pods,
        ]
    )
    g = soft.pod_groups["ml/job"]
    assert (
        g.topology_key is None
        and g.annotations["gangplan.io/preferred-topology"] == "gangplan.io/volcano-tier-1"
    )
    assert len(solve_greedy(soft).placements()) == 3


def test_kai_pod_of_an_unknown_subgroup_waits_and_a_podgroup_without_subgroups_is_one_gang() -> (
    None
):
    pgs = [
        {
            "apiVersion": "scheduling.run.ai/v2alpha2",
            "kind": "PodGroup",
            "metadata": {"name": "a", "namespace": "ml"},
            "spec": {
                "minMember": 2,
                "topologyConstraint": {"topology": "t", "preferredTopologyLevel": "rack"},
            },
        },
        {
            "apiVersion": "scheduling.run.ai/v2alpha2",
            "kind": "PodGroup",
            "metadata": {"name": "b", "namespace": "ml"},
            "spec": {"subGroups": [{"name": "x", "minMember": 1}]},
        },
    ]
    pods = [
        _pod("a0", annotations={"pod-group-name": "a"}, schedulerName="kai-scheduler"),
        _pod("a1", annotations={"pod-group-name": "a"}),
        _pod(
            "b0", annotations={"pod-group-name": "b"}, labels={"kai.scheduler/subgroup-name": "y"}
        ),
        _pod("single", schedulerName="kai-scheduler"),
    ]
    c = load_objects([_node("n1", {"rack": "r1"}), *pgs, *pods])
    assert c.pod_groups["ml/a"].min_count == 2 and c.pod_groups["ml/a"].annotations == {
        "gangplan.io/preferred-topology": "rack"
    }
    assert "no leaf SubGroup 'y'" in c.gated["ml/b0"]
    assert (
        c.pod_by_key["ml/single"].scheduler_name == "default-scheduler"
        and c.pod_by_key["ml/single"].pod_group is None
    )
    assert any("1 pods without a group (single pods: KAI-Scheduler" in t for t in c.translations)
    assert any("Topology not in the snapshot" in w for w in c.warnings)


def test_kueue_pods_without_a_group_become_one_gang_per_podset() -> None:
    owner = [
        {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "u", "controller": True}
    ]
    pods = [
        _pod(f"p{i}", annotations={"kueue.x-k8s.io/podset-required-topology": "rack"})
        for i in range(3)
    ]
    for p in pods:
        p["metadata"]["ownerReferences"] = owner
    c = load_objects([_node("n1", {"rack": "r1"}), _node("n2", {"rack": "r2"}), *pods])
    g = c.pod_groups["ml/train-main"]
    assert (g.policy, g.min_count, g.topology_key) == ("gang", 3, "rack")
    assert {p.pod_group for p in c.pods} == {"train-main"}


def test_workload_controllers_without_pods_are_named_and_with_pods_are_not() -> None:
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "rs", "namespace": "ml"},
        "spec": {"replicas": 2},
    }
    owned = _pod("rs-abcde")
    owned["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "rs",
            "uid": "u",
            "controller": True,
        }
    ]
    lonely = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ml"},
        "spec": {"replicas": 3},
    }
    c = load_objects([_node("n1"), rs, owned, lonely])
    assert [w for w in c.warnings if "without pods" in w] == [
        "Deployment (apps/v1): 1 object (ml/web): not read: a Deployment without pods in the snapshot; gangplan does not expand it (only pods in the snapshot are scheduled)"
    ]
    assert c.skipped_kinds == {"Deployment": 1, "ReplicaSet": 1}


@pytest.mark.parametrize(
    "objs, where",
    [
        (
            [
                {
                    "apiVersion": "scheduling.run.ai/v2alpha2",
                    "kind": "PodGroup",
                    "metadata": {"name": "k", "namespace": "ml"},
                    "spec": {"subGroups": [{"name": "x", "parent": "nope"}]},
                }
            ],
            "<memory>: PodGroup/ml/k (scheduling.run.ai/v2alpha2): spec.subGroups[0].parent: names no subgroup of this PodGroup: 'nope'",
        ),
        (
            [
                {
                    "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                    "kind": "PodGroup",
                    "metadata": {"name": "c", "namespace": "ml"},
                    "spec": {"minMember": "four"},
                }
            ],
            "<memory>: PodGroup/ml/c (scheduling.x-k8s.io/v1alpha1): spec.minMember: expected an integer, got string 'four'",
        ),
        (
            [
                {
                    "apiVersion": "topology.volcano.sh/v1alpha1",
                    "kind": "HyperNode",
                    "metadata": {"name": "h1"},
                    "spec": {
                        "tier": 2,
                        "members": [
                            {"type": "HyperNode", "selector": {"exactMatch": {"name": "h1"}}}
                        ],
                    },
                },
                {
                    "apiVersion": "scheduling.volcano.sh/v1beta1",
                    "kind": "PodGroup",
                    "metadata": {"name": "v"},
                    "spec": {"networkTopology": {"highestTierAllowed": 2}},
                },
            ],
            "<memory>: HyperNode/h1: spec.members: HyperNode members form a cycle: h1 -> h1",
        ),
        (
            [
                {
                    "apiVersion": "scheduling.volcano.sh/v1beta1",
                    "kind": "PodGroup",
                    "metadata": {"name": "v"},
                    "spec": {"networkTopology": {"mode": "strict"}},
                },
                {
                    "apiVersion": "topology.volcano.sh/v1alpha1",
                    "kind": "HyperNode",
                    "metadata": {"name": "h"},
                    "spec": {"tier": 1},
                },
            ],
            "<memory>: PodGroup/default/v (scheduling.volcano.sh/v1beta1): spec.networkTopology.mode: must be one of hard, soft; got 'strict'",
        ),
    ],
)
def test_bad_foreign_objects_name_file_object_and_field(objs, where) -> None:
    from gangplan.io.errors import SnapshotError

    with pytest.raises(SnapshotError) as e:
        load_objects([_node("n1"), *objs])
    assert str(e.value) == where


def test_bad_kai_archives_exit_2_without_a_traceback(tmp_path: Path) -> None:
    import zipfile

    bad = tmp_path / "notzip.zip"
    bad.write_text("hello")
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("other.json", "{}")
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(broken, "w") as z:
        z.writestr("snapshot.json", '{"rawObjects": {"pods": [1]}}')
    for path, message in (
        (bad, "not a ZIP archive"),
        (empty, "no entry 'snapshot.json'"),
        (broken, "rawObjects.pods[0] is not an object"),
    ):
        res = runner.invoke(app, ["solve", str(path)])
        assert res.exit_code == 2, res.output
        assert str(path) in res.stderr and message in res.stderr and "Traceback" not in res.stderr
