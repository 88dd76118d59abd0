"""Every served version of the group APIs, read as an API server serves it.

The fixtures under ``tests/fixtures/api/`` are written from the k8s.io/api type definitions of each
release (header of each file; facts in docs/upstream-api-shapes.md): v1alpha1 (v1.35), v1alpha2
(v1.36), v1alpha3 and v1beta1 (v1.37), with both ``disruptionMode`` forms and both template
reference forms.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplan.bench.generators.builders import node_object, pod_object
from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_objects, load_snapshot
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

API = Path(__file__).resolve().parent / "fixtures" / "api"


def _both(cluster):
    greedy = solve_greedy(cluster)
    exact = solve_exact(cluster, hint=greedy, time_limit=5.0, workers=1)
    assert validate(cluster, greedy) == [] and validate(cluster, exact) == []
    return greedy, exact


def test_v1alpha1_workload_pod_groups_and_pod_workload_refs_make_one_gang_per_replica_key() -> None:
    c = load_snapshot(API / "v1alpha1-v1.35.yaml")
    assert sorted(c.pod_groups) == ["ml/train-driver", "ml/train-workers-0", "ml/train-workers-1"]
    w0 = c.pod_groups["ml/train-workers-0"]
    assert (w0.policy, w0.min_count, w0.workload_ref, w0.api_version) == (
        "gang",
        2,
        "train",
        "scheduling.k8s.io/v1alpha1",
    )
    assert c.pod_groups["ml/train-driver"].policy == "basic"
    assert [p.name for p in c.groups.node("ml/train-workers-1").members] == ["w0-r1", "w1-r1"]
    greedy, exact = _both(c)
    # 3 CPUs: replica 0 (quorum first) takes 2, replica 1 cannot have both of its pods, the driver fits.
    assert {k: g.admitted for k, g in greedy.groups.items()} == {
        "ml/train-driver": True,
        "ml/train-workers-0": True,
        "ml/train-workers-1": False,
    }
    assert exact.objective["admitted[p=0]"] == greedy.objective["admitted[p=0]"] == 2


def test_v1alpha2_template_ref_union_null_and_disruption_strings() -> None:
    c = load_snapshot(API / "v1alpha2-v1.36.yaml")
    workers, standalone = c.pod_groups["ml/workers"], c.pod_groups["ml/standalone"]
    assert (workers.workload_ref, workers.disruption_mode, workers.priority) == (
        "train",
        "all",
        1000,
    )
    assert (standalone.workload_ref, standalone.disruption_mode, standalone.policy) == (
        None,
        "single",
        "basic",
    )
    assert c.workloads["ml/train"].pod_group_templates == ("workers",)
    greedy, _ = _both(c)
    assert greedy.admitted_groups() == ["ml/standalone", "ml/workers"]


def test_v1beta1_and_v1alpha3_unions_workload_ref_composites_and_resource_claims() -> None:
    c = load_snapshot(API / "v1beta1-v1alpha3-v1.37.yaml")
    a, single = c.pod_groups["ml/a"], c.pod_groups["ml/single"]
    job = c.composite_pod_groups["ml/job"]
    assert (a.workload_ref, a.disruption_mode, a.parent, a.preemption_policy) == (
        "train",
        "all",
        "job",
        "PreemptLowerPriority",
    )
    assert single.disruption_mode == "single"
    assert (job.min_group_count, job.disruption_mode, job.topology_key, job.workload_ref) == (
        2,
        "all",
        "topology.kubernetes.io/zone",
        "train",
    )
    assert c.workloads["ml/train"].composite_pod_group_templates == ("job",)
    assert c.workloads["ml/train"].pod_group_templates == ("a", "b")
    # KEP-5729 group claims are read (gangplan.io.dra_build); no pod of ml/a uses it, so nothing changes.
    assert [(g.name, g.resource_claim_template_name) for g in a.resource_claims] == [
        ("gpus", "gpu-claim")
    ]
    assert c.warnings == ()
    assert c.groups.validation_error("ml/job") is None
    greedy, exact = _both(c)
    assert greedy.admitted_groups() == exact.admitted_groups() == ["ml/a", "ml/b", "ml/single"]
    assert greedy.warnings == list(c.warnings)


def _pg(spec: dict, version: str = "v1beta1", name: str = "g") -> dict:
    return {
        "apiVersion": f"scheduling.k8s.io/{version}",
        "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": {"schedulingPolicy": {"basic": {}}, **spec},
    }


@pytest.mark.parametrize(
    ("raw", "mode"),
    [
        ({"single": {}}, "single"),
        ({"all": {}}, "all"),
        ("Pod", "single"),
        ("PodGroup", "all"),
        (None, "single"),
    ],
)
def test_both_disruption_mode_spellings_are_read(raw, mode) -> None:
    spec = {} if raw is None else {"disruptionMode": raw}
    assert load_objects([_pg(spec)]).pod_groups["default/g"].disruption_mode == mode


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"single": {}, "all": {}}, "exactly one of single, all must be set; got all, single"),
        ({}, "exactly one of single, all must be set; got none"),
        ("Gang", "must be one of Pod, PodGroup (v1alpha2)"),
    ],
)
def test_a_bad_disruption_mode_names_the_field(raw, field) -> None:
    with pytest.raises(
        SnapshotError,
        match=r"PodGroup/default/g: spec.disruptionMode: "
        + field.replace("(", r"\(").replace(")", r"\)"),
    ):
        load_objects([_pg({"disruptionMode": raw})])


@pytest.mark.parametrize(
    "ref",
    [
        {"workloadRef": {"workloadName": "w", "templateName": "t"}},
        {"podGroupTemplateRef": {"workload": {"workloadName": "w", "podGroupTemplateName": "t"}}},
    ],
)
def test_both_template_reference_shapes_name_the_workload(ref) -> None:
    assert load_objects([_pg(ref)]).pod_groups["default/g"].workload_ref == "w"


def test_a_template_reference_missing_its_workload_name_names_the_path_the_user_wrote() -> None:
    with pytest.raises(
        SnapshotError,
        match=r"spec.podGroupTemplateRef.workload.workloadName: required field is missing",
    ):
        load_objects([_pg({"podGroupTemplateRef": {"workload": {"podGroupTemplateName": "t"}}})])


def test_a_basic_group_with_disruption_mode_all_is_accepted_and_evicted_as_one_unit() -> None:
    # The newest API accepts it (workload-aware preemption evicts a basic group with mode all whole).
    objs = [
        node_object("n1", cpu="2"),
        _pg({"disruptionMode": {"all": {}}, "priority": 0}, name="low"),
        pod_object("l0", group="low", node_name="n1", requests={"cpu": "1"}),
        pod_object("l1", group="low", node_name="n1", requests={"cpu": "1"}),
        pod_object("hi", priority=100, requests={"cpu": "1"}),
    ]
    c = load_objects(objs)
    units = c.groups.victim_units(c.bound_pods)
    assert [(str(u.key), [p.name for p in u.pods]) for u in units] == [
        ("default/low", ["l0", "l1"])
    ]
    greedy = solve_greedy(c, preemption=True)
    assert validate(c, greedy) == []
    assert greedy.victims == ["default/l0", "default/l1"]


def test_unreadable_versions_and_other_api_groups_are_warnings_not_silence() -> None:
    objs = [
        _pg({}, version="v2"),
        {
            "apiVersion": "scheduling.x-k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "cosched"},
            "spec": {"minMember": 4},
        },
    ]
    c = load_objects(objs)
    assert c.pod_groups == {}
    assert c.warnings == (
        "PodGroup (scheduling.k8s.io/v2): 1 object (g): not read: an API version gangplan cannot read",
        "PodGroup (scheduling.x-k8s.io/v1beta1): 1 object (cosched): not read: a scheduler-plugins object (ElasticQuota, or a PodGroup version other than v1alpha1): quota is not modelled, the object is not read",
    )
    # The served coscheduling version is translated instead (tests/test_foreign_groups.py).
    objs[1] = {**objs[1], "apiVersion": "scheduling.x-k8s.io/v1alpha1"}
    c = load_objects(objs)
    assert c.pod_groups["default/cosched"].min_count == 4 and len(c.warnings) == 1


def test_unknown_policy_members_and_spec_fields_are_named_in_warnings() -> None:
    c = load_objects(
        [_pg({"schedulingPolicy": {"gang": {"minCount": 2}, "elastic": {}}, "futureField": 1})]
    )
    assert c.pod_groups["default/g"].min_count == 2
    assert c.warnings == (
        "PodGroup spec.futureField: 1 object (default/g): unknown field: not read",
        "PodGroup spec.schedulingPolicy.elastic: 1 object (default/g): unknown scheduling policy 'elastic': not modelled",
    )
