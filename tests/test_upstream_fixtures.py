"""Public examples nobody on this project wrote load and give their documented outcome.

Every file under ``tests/fixtures/upstream/`` is a copy of a kubernetes.io, JobSet or scheduler_perf
example (source path and commit in its header, the documented outcome beside it, the table in its
README). Both engines run on each with the default profile (preemption on, as kube-scheduler's); both
results go through the validator; the greedy engine must
give the documented outcome, and the exact engine may never be lexicographically worse.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_objects, load_snapshot, read_documents
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.outcome import compare
from gangplan.solver.validate import validate

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "upstream"

# fixture -> ({group: pods on nodes after the run}, victims, pending pods placed,
#             pending pods gated, a fragment every warning list must contain or None)
DOCUMENTED = {
    # The JobSet is expanded (gangplan.io.expand): its 6 pods join the user's PodGroup; no node.
    "jobset-was-dra": (
        {"default/training-workers": 0},
        0,
        0,
        0,
        "podGroupTemplates[].resourceClaims",
    ),
    # These JobSets already have their pods in the snapshot: not expanded again, nothing unread.
    "jobset-was-gang-scheduling": ({"default/js-abc-workers-def": 0}, 0, 0, 0, None),
    "jobset-was-preemption": ({"default/hp-abc-workers-def": 4}, 4, 4, 0, None),
    "jobset-was-preemption-v1alpha3-pr1250": ({"default/hp-abc-workers-def": 4}, 4, 4, 0, None),
    "jobset-was-tas": ({"default/js-abc-workers-def": 4}, 0, 4, 0, None),
    "k8sio-compositepodgroup-api-hierarchy": ({"default/workers-a-0": 0}, 0, 0, 1, None),
    "k8sio-podgroup-api-how-it-fits": ({"default/training-worker-0": 0}, 0, 0, 1, None),
    "k8sio-podgroup-api-standalone": ({}, 0, 0, 0, None),
    "k8sio-tas-podgroup-rack": ({"default/example-podgroup": 4}, 0, 4, 0, None),
    "k8sio-v135-blog-workload-gang-of-4": (
        {"some-ns/training-job-workload-workers": 4},
        0,
        4,
        0,
        None,
    ),
    "k8sio-v135-workload-reference-replica-keys": (
        {
            "some-ns/training-job-workload-workers-0": 2,
            "some-ns/training-job-workload-workers-1": 0,
        },
        0,
        2,
        0,
        None,
    ),
    "k8sio-v136-blog-workload-podgroup": ({"some-ns/training-job-workers-pg": 0}, 0, 0, 1, None),
    "k8sio-v136-workload-api-training-job": ({}, 0, 0, 0, None),
    "k8sio-v137-workload-api-gang-of-gangs": ({}, 0, 0, 0, None),
    "k8sio-v137-workload-api-training-job": ({}, 0, 0, 0, None),
    "perf-cpg-gang-10nodes-3cpgs": (
        {f"cpg-gang-ns-0/gang-group-{i}": 3 for i in range(6)},
        0,
        18,
        0,
        None,
    ),
    "perf-cpg-preemption-cpg-2nodes": (
        {"cpg-preempt-0/gang-group-0": 1, "cpg-preempt-0/gang-group-1": 1},
        4,
        2,
        0,
        None,
    ),
    "perf-cpg-tas-10nodes-3cpgs": (
        {f"cpg-tas-ns-0/gang-group-{i}": 3 for i in range(6)},
        0,
        18,
        0,
        None,
    ),
    "perf-gangscheduling-10nodes-3gangs": (
        {f"gang-0/gang-{i}": 3 for i in range(3)},
        0,
        9,
        0,
        None,
    ),
    "perf-preemption-podgroup-disruption-all": ({}, 4, 1, 0, None),
    "perf-preemption-podgroup-disruption-single": ({}, 2, 1, 0, None),
    "served-v1beta1-podgroup": ({}, 0, 0, 0, None),
}


def test_every_fixture_has_a_documented_outcome_and_a_source_header() -> None:
    files = {f.stem for f in FIXTURES.glob("*.yaml")}
    assert files == set(DOCUMENTED) | {"k8sio-disruption-priority-podgroup"}
    readme = (FIXTURES / "README.md").read_text()
    for f in FIXTURES.glob("*.yaml"):
        head = f.read_text().split("\n", 12)
        assert any(line.startswith("# source:") for line in head), f.name
        assert f"`{f.name}`" in readme, f.name


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_the_example_gives_its_documented_outcome_in_both_engines(name: str) -> None:
    groups, victims, placed, gated, warning = DOCUMENTED[name]
    cluster = load_snapshot(FIXTURES / f"{name}.yaml")
    # The default profile: DefaultPreemption (and workload-aware preemption) on, as upstream.
    greedy = solve_greedy(cluster)
    exact = solve_exact(cluster, hint=greedy, time_limit=5.0, workers=1)
    assert validate(cluster, greedy) == [] and validate(cluster, exact) == []
    assert {k: g.placed for k, g in greedy.groups.items()} == groups
    assert (len(greedy.victims), len(greedy.placements()), len(cluster.gated)) == (
        victims,
        placed,
        gated,
    )
    assert compare(exact.objective, greedy.objective) >= 0
    if warning is None:
        assert cluster.warnings == ()
    else:
        assert any(warning in w for w in cluster.warnings), cluster.warnings
        assert greedy.warnings == list(cluster.warnings) + list(cluster.version_warnings)


def test_the_docs_disruption_example_lacks_the_required_scheduling_policy() -> None:
    # As published on kubernetes.io it has no spec.schedulingPolicy, which the API requires.
    with pytest.raises(
        SnapshotError,
        match=r"PodGroup/ns-1/job-1: spec.schedulingPolicy: required field is missing",
    ):
        load_snapshot(FIXTURES / "k8sio-disruption-priority-podgroup.yaml")


def test_a_v135_gang_of_four_with_room_for_three_places_none_as_v135_does() -> None:
    # The v1.35 blog gang (Workload v1alpha1 + spec.workloadRef) on 3 CPUs instead of 4: v1.35 holds
    # three pods at Permit and, after the timeout, binds none; gangplan's cycle places none.
    docs = [d for d in read_documents(FIXTURES / "k8sio-v135-blog-workload-gang-of-4.yaml") if d]
    nodes = [d for d in docs if d["kind"] == "Node"]
    nodes[-1]["status"]["allocatable"]["cpu"] = "1"
    nodes[-1]["status"]["capacity"]["cpu"] = "1"
    cluster = load_objects(docs)
    greedy = solve_greedy(cluster)
    exact = solve_exact(cluster, hint=greedy, time_limit=5.0, workers=1)
    assert validate(cluster, greedy) == [] and validate(cluster, exact) == []
    assert greedy.placements() == {} and exact.placements() == {}
    assert not greedy.groups["some-ns/training-job-workload-workers"].admitted
    assert "minCount 4 not reached" in greedy.groups["some-ns/training-job-workload-workers"].reason


def test_a_v135_pod_whose_workload_is_missing_waits_in_pre_enqueue() -> None:
    docs = [
        d
        for d in read_documents(FIXTURES / "k8sio-v135-blog-workload-gang-of-4.yaml")
        if d and d["kind"] != "Workload"
    ]
    cluster = load_objects(docs)
    assert set(cluster.gated.values()) == {"waiting for Workload some-ns/training-job-workload"}
    assert solve_greedy(cluster).placements() == {}


def test_a_served_v1beta1_podgroup_reads_the_defaulted_disruption_mode_union() -> None:
    text = (FIXTURES / "served-v1beta1-podgroup.yaml").read_text()
    raw = next(d for d in yaml.safe_load_all(text) if d and d.get("kind") == "PodGroup")
    assert raw["spec"]["disruptionMode"] == {"single": {}}
    cluster = load_snapshot(FIXTURES / "served-v1beta1-podgroup.yaml")
    (group,) = cluster.pod_groups.values()
    assert group.disruption_mode == "single"
    raw["spec"]["disruptionMode"] = {"all": {}}
    assert load_objects([raw]).pod_groups[group.key].disruption_mode == "all"
