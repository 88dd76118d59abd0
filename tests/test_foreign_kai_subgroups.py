"""KAI-Scheduler ``minSubGroup``, nullable ``minMember`` and segments (issue 39, last item).

What KAI does is read from kai-scheduler/KAI-Scheduler @ d5bc503a146317e51037d89775d77172c6d12f71
(see ``gangplan/io/foreign/kai.py`` and ``kai_segments.py``); the fixtures are in
``tests/fixtures/foreign/kai/`` (their README names sources). The documented outcomes of the
fixtures are also checked by ``tests/test_foreign_groups.py``; here: the translated objects, both
engines with every Result validated, and the warnings.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gangplan.io.loader import load_objects, load_snapshot
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

KAI = Path(__file__).resolve().parent / "fixtures" / "foreign" / "kai"
API = "scheduling.run.ai/v2alpha2"
RACK = "cloud.provider.com/topology-rack"


def _both(cluster):
    greedy = solve_greedy(cluster)
    exact = solve_exact(cluster, hint=greedy, time_limit=5, workers=1)
    assert validate(cluster, greedy) == [] and validate(cluster, exact) == []
    return greedy, exact


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _node(name: str, labels: dict | None = None, cpu: str = "4", memory: str = "16Gi") -> dict:
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
    }


def _pod(
    name: str,
    group: str,
    *,
    sub: str | None = None,
    labels: dict | None = None,
    annotations: dict | None = None,
) -> dict:
    return {
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "labels": {**({"kai.scheduler/subgroup-name": sub} if sub else {}), **(labels or {})},
            "annotations": {**({"pod-group-name": group} if group else {}), **(annotations or {})},
        },
        "spec": {
            "schedulerName": "kai-scheduler",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        },
    }


def _pg(name: str, **spec) -> dict:
    return {
        "apiVersion": API,
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": spec,
    }


def _tree(cluster) -> dict[str, tuple]:
    """Every translated group: key -> (kind, minimum, parent, topology key)."""
    out = {
        k: ("PodGroup", g.min_count, g.parent, g.topology_key)
        for k, g in cluster.pod_groups.items()
    }
    out |= {
        k: ("Composite", g.min_group_count, g.parent, g.topology_key)
        for k, g in cluster.composite_pod_groups.items()
    }
    return out


def _warned(cluster, *parts: str) -> bool:
    return any(all(p in w for p in parts) for w in cluster.warnings)


# ---- minSubGroup ---------------------------------------------------------------------------------
def test_min_subgroup_3_of_4_admits_three_whole_replicas_in_both_engines() -> None:
    c = load_snapshot(KAI / "min-subgroups-inference.yaml")
    assert _tree(c) == {
        "default/inference-service": ("Composite", 3, None, None),
        **{
            f"default/inference-service-prefill-{i}": ("PodGroup", 8, "inference-service", None)
            for i in range(4)
        },
    }
    for result in _both(c):
        placed = result.placements()
        per_replica = sorted(sum(1 for k in placed if f"prefill-{i}-" in k) for i in range(4))
        assert per_replica == [0, 8, 8, 8], (result.engine, per_replica)
        assert result.composite_groups["default/inference-service"].admitted, result.engine


def test_min_subgroup_unset_or_equal_to_the_children_needs_every_child() -> None:
    c = load_snapshot(KAI / "min-subgroups-two-level.yaml")
    assert _tree(c) == {
        "default/training-job": ("Composite", 2, None, None),
        "default/training-job-decode": ("Composite", 2, "training-job", None),
        "default/training-job-prefill": ("Composite", 2, "training-job", None),
        "default/training-job-decode-leaders": ("PodGroup", 1, "training-job-decode", None),
        "default/training-job-decode-workers": ("PodGroup", 4, "training-job-decode", None),
        "default/training-job-prefill-leaders": ("PodGroup", 1, "training-job-prefill", None),
        "default/training-job-prefill-workers": ("PodGroup", 4, "training-job-prefill", None),
    }
    # one more CPU (10 for the 10 required pods): everything is placed
    docs = [d for d in _docs(KAI / "min-subgroups-two-level.yaml") if d["kind"] != "Node"]
    c = load_objects([*docs, _node("node-0", cpu="5"), _node("node-1", cpu="5")])
    for result in _both(c):
        assert (
            len(result.placements()) == 10
            and result.composite_groups["default/training-job"].admitted
        )


def test_min_subgroup_1_admits_one_child_when_both_do_not_fit() -> None:
    docs = _docs(KAI / "multi-topology-min-subgroup.yaml")
    pg = next(d for d in docs if d["kind"] == "PodGroup")
    pg["spec"]["minSubGroup"] = 1
    for n in (
        d for d in docs if d["kind"] == "Node"
    ):  # 12 GPUs left, all in rack-1 / zone-a: room for one SubGroup of 3
        name = n["metadata"]["name"]
        n["status"]["allocatable"]["nvidia.com/gpu"] = (
            "0" if "zone-b" in name else "4" if name.endswith("node-2") else "8"
        )
    c = load_objects(docs)
    assert c.composite_pod_groups["default/multi-topology-pipeline"].min_group_count == 1
    for result in _both(c):
        placed = result.placements()
        jobs = {k.split("-job-")[0] for k in placed}
        assert len(placed) == 3 and len(jobs) == 1, (result.engine, placed)
        assert result.composite_groups["default/multi-topology-pipeline"].admitted
    pg["spec"]["minSubGroup"] = 2
    strict = load_objects(docs)
    for result in _both(strict):
        assert result.placements() == {}, result.engine


# ---- segments ------------------------------------------------------------------------------------
def test_segment_annotations_split_the_worker_leaf_into_rack_gangs_of_four() -> None:
    c = load_snapshot(KAI / "segments-pytorch-rack.yaml")
    assert _tree(c) == {
        "default/pg-pytorch-tp4": ("Composite", 2, None, None),
        "default/pg-pytorch-tp4-master": ("PodGroup", 1, "pg-pytorch-tp4", None),
        "default/pg-pytorch-tp4-worker": ("Composite", 4, "pg-pytorch-tp4", None),
        **{
            f"default/pg-pytorch-tp4-worker-{i}": ("PodGroup", 4, "pg-pytorch-tp4-worker", RACK)
            for i in range(4)
        },
    }
    assert {p.name: p.pod_group for p in c.pods if "worker" in p.name} == {
        f"pytorch-tp4-worker-{i}": f"pg-pytorch-tp4-worker-{i // 4}" for i in range(16)
    }
    assert any(
        "4 of the PodGroups are segments of kai.scheduler/segment-size" in t for t in c.translations
    )
    nodes = {n.name: n for n in c.nodes}
    for result in _both(c):
        placed = result.placements()
        assert len(placed) == 17
        for s in range(4):
            racks = {
                nodes[placed[f"default/pytorch-tp4-worker-{i}"]].labels[RACK]
                for i in range(4 * s, 4 * s + 4)
            }
            assert len(racks) == 1, (result.engine, s, racks)


def test_the_pod_groupers_own_segmented_podgroup_gives_the_same_native_tree() -> None:
    """KAI's pod grouper writes the segments itself (SubGroup worker with minSubGroup 4 over worker-0..3,
    pods labelled with their segment); gangplan must not split those leaves again."""
    docs = _docs(KAI / "segments-pytorch-rack.yaml")
    pg = next(d for d in docs if d["kind"] == "PodGroup")
    constraint = {"topology": "cluster-topology", "requiredTopologyLevel": RACK}
    pg["spec"]["subGroups"] = [
        {"name": "master", "minMember": 1},
        {"name": "worker", "minSubGroup": 4},
        *(
            {
                "name": f"worker-{i}",
                "parent": "worker",
                "minMember": 4,
                "topologyConstraint": constraint,
            }
            for i in range(4)
        ),
    ]
    for d in docs:
        if d["kind"] == "Pod" and "worker" in d["metadata"]["name"]:
            d["metadata"]["labels"]["kai.scheduler/subgroup-name"] = (
                f"worker-{int(d['metadata']['labels']['training.kubeflow.org/replica-index']) // 4}"
            )
    c = load_objects(docs)
    assert _tree(c) == _tree(load_snapshot(KAI / "segments-pytorch-rack.yaml"))
    assert not any("segments of" in t for t in c.translations)
    assert len(solve_greedy(c).placements()) == 17


def _workers(
    n: int, size: str | None = "4", group: str = "job", extra: dict | None = None
) -> list[dict]:
    ann = {
        "kai.scheduler/topology": "cluster-topology",
        "kai.scheduler/segment-topology-required-placement": RACK,
        **(extra or {}),
    }
    if size is not None:
        ann["kai.scheduler/segment-size"] = size
    return [
        _pod(
            f"w-{i}",
            group,
            sub="worker",
            annotations=ann,
            labels={
                "training.kubeflow.org/replica-type": "worker",
                "training.kubeflow.org/replica-index": str(i),
            },
        )
        for i in range(n)
    ]


TOPOLOGY = {
    "apiVersion": "kai.scheduler/v1alpha1",
    "kind": "Topology",
    "metadata": {"name": "cluster-topology"},
    "spec": {
        "levels": [
            {"nodeLabel": "topology.kubernetes.io/zone"},
            {"nodeLabel": RACK},
            {"nodeLabel": "kubernetes.io/hostname"},
        ]
    },
}


def _racks(zones: int = 1, racks: int = 2, cpu: str = "2") -> list[dict]:
    return [
        _node(
            f"z{z}-r{r}-n{n}", {"topology.kubernetes.io/zone": f"z{z}", RACK: f"z{z}-r{r}"}, cpu=cpu
        )
        for z in range(zones)
        for r in range(racks)
        for n in range(2)
    ]


def test_a_partial_last_segment_needs_the_remainder_as_kai_sizes_it() -> None:
    # pytorch_grouper_test.go TestGetPodGroupMetadata_Segments_5Workers_2PerSegment: 5 workers, size 2 -> 2, 2, 1
    c = load_objects(
        [
            *_racks(),
            TOPOLOGY,
            _pg("job", subGroups=[{"name": "worker", "minMember": 5}]),
            *_workers(5, "2"),
        ]
    )
    assert {k: v[1] for k, v in _tree(c).items()} == {
        "ml/job": 1,
        "ml/job-worker": 3,
        "ml/job-worker-0": 2,
        "ml/job-worker-1": 2,
        "ml/job-worker-2": 1,
    }
    for result in _both(c):
        assert len(result.placements()) == 5


def test_elastic_segments_past_the_minimum_are_read_as_one_pod_with_a_warning() -> None:
    # docs/topology/segments.md "Elasticity": minMember 12, 20 replicas, size 4 -> segments 0-2 need 4, 3-4 are elastic
    c = load_objects(
        [
            *_racks(racks=5),
            TOPOLOGY,
            _pg("job", subGroups=[{"name": "worker", "minMember": 12}]),
            *_workers(20),
        ]
    )
    assert [c.pod_groups[f"ml/job-worker-{i}"].min_count for i in range(5)] == [4, 4, 4, 1, 1]
    assert c.composite_pod_groups["ml/job-worker"].min_group_count == 5
    assert not _warned(c, "spec.subGroups[].minMember: 1 object (ml/job)")
    assert _warned(
        c,
        "pods' annotation kai.scheduler/segment-size",
        "ml/job",
        "elastic segments 3, 4",
        "read as 1",
    )
    for result in _both(c):
        assert len(result.placements()) == 20


def test_zone_of_the_podgroup_and_rack_of_the_segments_as_in_the_multi_level_example() -> None:
    # docs/topology/segments.md "PyTorchJob — Multi-Level (Zone + Rack)": the job in one zone, segments of 4 on one rack
    tc = {"topology": "cluster-topology", "requiredTopologyLevel": "topology.kubernetes.io/zone"}
    c = load_objects(
        [
            *_racks(zones=2, racks=2),
            TOPOLOGY,
            _pg("job", minMember=8, topologyConstraint=tc),
            *_workers(8),
        ]
    )
    assert _tree(c) == {
        "ml/job": ("Composite", 2, None, "topology.kubernetes.io/zone"),
        "ml/job-0": ("PodGroup", 4, "job", RACK),
        "ml/job-1": ("PodGroup", 4, "job", RACK),
    }
    nodes = {n.name: n for n in c.nodes}
    for result in _both(c):
        placed = result.placements()
        assert len(placed) == 8
        assert len({nodes[n].labels["topology.kubernetes.io/zone"] for n in placed.values()}) == 1
        for s in range(2):
            assert (
                len({nodes[placed[f"ml/w-{i}"]].labels[RACK] for i in range(4 * s, 4 * s + 4)}) == 1
            )


def test_all_pods_in_one_segment_give_the_leaf_the_segment_topology() -> None:
    c = load_objects([*_racks(), TOPOLOGY, _pg("job", minMember=3), *_workers(3)])
    assert _tree(c) == {"ml/job": ("PodGroup", 3, None, RACK)}
    for result in _both(c):
        assert len(result.placements()) == 3


# ---- what cannot be said natively: warnings naming object and field --------------------------------
@pytest.mark.parametrize(
    "spec, tree, fragments",
    [
        (
            dict(
                minMember=2,
                minSubGroup=1,
                subGroups=[{"name": "a", "minMember": 1}, {"name": "b", "minMember": 1}],
            ),
            {"ml/g": ("Composite", 1, None, None)},
            ["spec.minSubGroup: 1 object (ml/g)", "set together with spec.minMember"],
        ),
        (
            dict(minSubGroup=2),
            {"ml/g": ("PodGroup", 1, None, None)},
            ["spec.minSubGroup: 1 object (ml/g)", "without subGroups: not used"],
        ),
        (
            dict(
                minSubGroup=0,
                subGroups=[{"name": "a", "minMember": 1}, {"name": "b", "minMember": 1}],
            ),
            {"ml/g": ("Composite", 1, None, None)},
            ["spec.minSubGroup: 1 object (ml/g)", "no gang requirement", "read as 1"],
        ),
        (
            dict(
                minSubGroup=3,
                subGroups=[{"name": "a", "minMember": 1}, {"name": "b", "minMember": 1}],
            ),
            {"ml/g": ("Composite", 3, None, None)},
            ["spec.minSubGroup: 1 object (ml/g)", "exceeds the 2 direct children"],
        ),
        (
            dict(
                subGroups=[
                    {"name": "a", "minMember": 1, "minSubGroup": 1},
                    {"name": "b", "minMember": 1},
                ]
            ),
            {"ml/g-a": ("PodGroup", 1, "g", None)},
            ["spec.subGroups[].minSubGroup: 1 object (ml/g)", "on a leaf SubGroup: not used"],
        ),
        (
            dict(subGroups=[{"name": "a"}, {"name": "b", "minMember": 1}]),
            {"ml/g-a": ("PodGroup", 1, "g", None)},
            [
                "spec.subGroups[].minMember: 1 object (ml/g)",
                "missing on a leaf SubGroup",
                "reads 0",
            ],
        ),
        (
            dict(subGroups=[{"name": "a", "minMember": 0}, {"name": "b", "minMember": 1}]),
            {"ml/g-a": ("PodGroup", 1, "g", None)},
            [
                "spec.subGroups[].minMember: 1 object (ml/g)",
                "satisfied with no pod placed",
                "read as 1",
            ],
        ),
        (
            dict(
                subGroups=[
                    {"name": "m", "minMember": 2},
                    {"name": "a", "parent": "m", "minMember": 1},
                    {"name": "b", "parent": "m", "minMember": 1},
                ]
            ),
            {"ml/g-m": ("Composite", 2, "g", None)},
            ["spec.subGroups[].minMember: 1 object (ml/g)", "not used on a SubGroup with children"],
        ),
    ],
)
def test_kai_fields_without_a_native_equivalent_are_warned_about(spec, tree, fragments) -> None:
    subs = [
        s["name"]
        for s in spec.get("subGroups", [])
        if not any(t.get("parent") == s["name"] for t in spec["subGroups"])
    ]
    pods = [_pod(f"{s or 'p'}-{i}", "g", sub=s) for s in (subs or [None]) for i in range(2)]
    c = load_objects([_node("n1"), _pg("g", **spec), *pods])
    assert {k: v for k, v in _tree(c).items() if k in tree} == tree
    assert _warned(c, "PodGroup (scheduling.run.ai/v2alpha2)", *fragments), c.warnings
    for result in _both(c):
        assert (
            result.placements() == {}
            if "exceeds" in fragments[1]
            else len(result.placements()) == len(pods)
        )


def test_a_podgroup_without_subgroups_and_min_member_0_is_basic_without_a_warning() -> None:
    c = load_objects(
        [_node("n1", cpu="1"), _pg("g", minMember=0), *(_pod(f"p{i}", "g") for i in range(3))]
    )
    g = c.pod_groups["ml/g"]
    assert (g.policy, g.min_count) == ("basic", 1) and not _warned(c, "ml/g")
    for result in _both(c):
        assert len(result.placements()) == 1  # pod by pod: one fits


@pytest.mark.parametrize(
    "pods, fragment",
    [
        (_workers(8, "four"), "'four' is not a positive integer"),
        (_workers(8, "0"), "'0' is not a positive integer"),
        (_workers(4) + [_pod("m-0", "job", sub="worker")], "only 4 of the group's 5 pods carry"),
        (
            [
                _pod(
                    f"l-{i}",
                    "job",
                    sub="worker",
                    annotations={"kai.scheduler/segment-size": "2"},
                    labels={"leaderworkerset.sigs.k8s.io/worker-index": str(i)},
                )
                for i in range(4)
            ],
            "LeaderWorkerSet segments",
        ),
        (
            [
                _pod(f"x-{i}", "job", sub="worker", annotations={"kai.scheduler/segment-size": "2"})
                for i in range(4)
            ],
            "no usable training.kubeflow.org/replica-index",
        ),
        (
            [
                _pod(
                    f"x-{i}",
                    "job",
                    sub="worker",
                    annotations={"kai.scheduler/segment-size": "2"},
                    labels={
                        "training.kubeflow.org/replica-type": "master",
                        "training.kubeflow.org/replica-index": str(i),
                    },
                )
                for i in range(4)
            ],
            "KAI segments only the Worker replica",
        ),
    ],
)
def test_segment_annotations_kai_would_not_split_are_warned_about_and_the_leaf_stays_whole(
    pods, fragment
) -> None:
    c = load_objects(
        [
            *_racks(racks=3),
            TOPOLOGY,
            _pg("job", subGroups=[{"name": "worker", "minMember": len(pods)}]),
            *pods,
        ]
    )
    assert (
        c.pod_groups["ml/job-worker"].min_count == len(pods)
        and "ml/job-worker" not in c.composite_pod_groups
    )
    assert _warned(
        c,
        "spec.subGroups[] pods' annotation kai.scheduler/segment-size: 1 object (ml/job)",
        "not split into segments",
        fragment,
    ), c.warnings
    for result in _both(c):
        assert len(result.placements()) == len(pods)


def test_segment_topology_that_cannot_be_resolved_is_warned_about() -> None:
    # no Topology object: the level is read as a plain node label
    c = load_objects([*_racks(), _pg("job", minMember=8), *_workers(8)])
    assert c.pod_groups["ml/job-0"].topology_key == RACK
    assert _warned(
        c,
        "spec pods' annotation kai.scheduler/segment-size: 1 object (ml/job)",
        "Topology 'cluster-topology' not in the snapshot",
    )
    # no kai.scheduler/topology at all: KAI makes the segments without a constraint
    pods = _workers(8)
    for p in pods:
        del p["metadata"]["annotations"]["kai.scheduler/topology"]
    c = load_objects([*_racks(), TOPOLOGY, _pg("job", minMember=8), *pods])
    assert c.pod_groups["ml/job-0"].topology_key is None and c.pod_groups["ml/job-0"].min_count == 4
    assert _warned(
        c,
        "spec pods' annotation kai.scheduler/segment-size: 1 object (ml/job)",
        "no kai.scheduler/topology",
    )
    for result in _both(c):
        assert len(result.placements()) == 8


def test_segment_pods_without_a_kai_podgroup_are_named_in_a_warning() -> None:
    c = load_objects([*_racks(), TOPOLOGY, *_workers(4, group="")])
    assert _warned(
        c,
        "Pod metadata.annotations[kai.scheduler/segment-size]: 4 objects",
        "ml/w-0",
        "not translated",
    )
    assert all(p.pod_group is None for p in c.pods)
    for result in _both(c):
        assert len(result.placements()) == 4


def test_segment_annotations_of_an_expanded_leaderworkerset_are_named_in_a_warning() -> None:
    # docs/topology/segments.md "LeaderWorkerSet — LeaderWorker Policy", with the segment size as an annotation:
    # gangplan expands the LWS into pods but does not reproduce KAI's pod grouper, so nothing is split
    template = {
        "spec": {
            "schedulerName": "kai-scheduler",
            "containers": [{"name": "w", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
        }
    }
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "lws-segmented", "namespace": "ml"},
        "spec": {
            "replicas": 1,
            "leaderWorkerTemplate": {
                "size": 5,
                "leaderTemplate": template,
                "workerTemplate": {
                    **template,
                    "metadata": {
                        "annotations": {
                            "kai.scheduler/topology": "cluster-topology",
                            "kai.scheduler/segment-size": "2",
                            "kai.scheduler/segment-topology-required-placement": RACK,
                        }
                    },
                },
            },
        },
    }
    c = load_objects([*_racks(), TOPOLOGY, lws])
    assert _warned(
        c,
        "Pod metadata.annotations[kai.scheduler/segment-size]: 4 objects",
        "ml/lws-segmented-0-1",
        "does not reproduce the pod grouper",
    )
    for result in _both(c):
        assert len(result.placements()) == 5
