"""Reading Kueue's objects as Kueue does (issue 42): gangplan.io.kueue_objects,
gangplan.io.kueue_workload_parse, gangplan.io.kueue_workloads.

Inputs: Kueue's public examples (tests/fixtures/kueue/, copied from kubernetes-sigs/kueue v0.19.2,
see its README) and small snapshots written here. Workload names are checked against Kueue's own
unit test ``TestGenerateWorkloadNameWithExtra`` (``pkg/controller/jobframework/workload_names_test.go``
at v0.19.2, 8eab68778fc1b52affe165fdf5af29d1e9b4f3cb).
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io import schema
from gangplan.io.errors import SnapshotError
from gangplan.io.kueue_workloads import workload_name
from gangplan.io.loader import load_snapshot
from gangplan.models.kueue import TopologyDomainAssignment
from gangplan.models.objects import LabelSelector, Taint

FIX = Path(__file__).parent / "fixtures" / "kueue"
CPU = 1000  # millicores


def _docs(*parts: str) -> str:
    return "\n---\n".join(textwrap.dedent(p).strip("\n") for p in parts) + "\n"


def _load(tmp_path: Path, *parts: str, name: str = "s.yaml"):
    f = tmp_path / name
    f.write_text(_docs(*parts))
    return load_snapshot(f)


def _dir(tmp_path: Path, *files: str) -> Path:
    d = tmp_path / "snap"
    d.mkdir(exist_ok=True)
    for rel in files:
        shutil.copy(FIX / rel, d / rel.replace("/", "_"))
    return d


def _unknown(cluster) -> list[str]:
    return [w for w in cluster.warnings if schema.is_unknown_warning(w)]


SETUP = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 9}
      - {name: memory, nominalQuota: 36Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
"""

NODE = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
"""


# ---- Kueue's public examples ---------------------------------------------------------------------
EXAMPLES = sorted(
    str(p.relative_to(FIX))
    for p in FIX.rglob("*.yaml")
    if p.name not in ("kueue-pod.yaml", "kueue-pod-group.yaml", "minimal-cq.yaml")
)


@pytest.mark.parametrize("rel", EXAMPLES)
def test_every_public_example_loads_without_unknown_field_warnings(rel: str) -> None:
    cluster = load_snapshot(FIX / rel)
    assert _unknown(cluster) == []


def test_single_clusterqueue_setup_reads_quota_selector_and_queue() -> None:
    k = load_snapshot(FIX / "admin/single-clusterqueue-setup.yaml").kueue
    cq = k.cluster_queues["cluster-queue"]
    assert cq.namespace_selector == LabelSelector()  # {}: every namespace
    assert cq.queueing_strategy == "BestEffortFIFO"  # the CRD default
    assert cq.flavor_fungibility.when_can_borrow == "MayStopSearch"
    assert cq.flavor_fungibility.when_can_preempt == "TryNextFlavor"
    assert not cq.preemption.enabled and cq.stop_policy == "None" and cq.cohort is None
    (group,) = cq.resource_groups
    assert group.covered_resources == ("cpu", "memory")
    (fq,) = group.flavors
    assert fq.name == "default-flavor"
    assert fq.quota("cpu").nominal == 9 * CPU and fq.quota("memory").nominal == 36 * 2**30
    assert fq.quota("cpu").borrowing_limit is None and fq.quota("cpu").lending_limit is None
    assert k.local_queues["default/user-queue"].cluster_queue == "cluster-queue"
    assert set(k.flavors) == {"default-flavor"} and k.workloads == {}


def test_a_snapshot_with_only_the_setup_has_no_workload_and_no_warning() -> None:
    cluster = load_snapshot(FIX / "getting-started/quick-start-setup.yaml")
    assert cluster.kueue is not None and cluster.warnings == ()
    assert any(t.startswith("read Kueue") for t in cluster.translations)


def test_resource_flavor_taints_tolerations_and_topology() -> None:
    spot = load_snapshot(_dir_single("admin/resource-flavor-taints.yaml")).kueue.flavors["spot"]
    assert spot.node_labels == {"instance-type": "spot"}
    assert spot.node_taints == (Taint(key="spot", value="true", effect="NoSchedule"),)
    k = load_snapshot(FIX / "tas/sample-queues.yaml").kueue
    tas = k.flavors["tas-flavor"]
    assert tas.topology_name == "default"
    assert tas.node_labels == {"cloud.provider.com/node-group": "tas-group"}
    tol = load_snapshot(_dir_single("admin/resource-flavor-tolerations.yaml")).kueue.flavors["spot"]
    assert [t.key for t in tol.tolerations] == ["spot-taint"]


_SINGLE_CQ = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: only}
spec: {}
"""


def _dir_single(rel: str) -> Path:
    """A flavor example beside an empty ClusterQueue (a snapshot without one does not read Kueue)."""
    import tempfile

    d = Path(tempfile.mkdtemp())
    shutil.copy(FIX / rel, d / "flavor.yaml")
    (d / "cq.yaml").write_text(textwrap.dedent(_SINGLE_CQ))
    return d


def test_kueueviz_examples_read_cohorts_priority_classes_and_queues(tmp_path: Path) -> None:
    cluster = load_snapshot(FIX / "kueueviz")
    k = cluster.kueue
    assert _unknown(cluster) == []
    assert k.cohorts["research"].parent == "organization"
    assert k.cohorts["engineering"].parent == "organization"
    assert k.cohorts["organization"].parent is None
    assert len(k.cluster_queues) == 4 and len(k.local_queues) == 3
    assert set(k.workload_priority_classes) == {
        "human-critical",
        "business-impacting",
        "long-term-research",
    }
    # the Job of 03-agi-job.yaml is suspended with the queue label: its Workload is made
    (wl,) = k.workloads.values()
    assert wl.synthesized and wl.owner.startswith("Job/agi-")
    label = "kueue.x-k8s.io/priority-class"
    raw = (FIX / "kueueviz/03-agi-job.yaml").read_text()
    if label in raw:
        cls = raw.split(label + ":", 1)[1].split()[0].strip("\"'")
        assert wl.priority == k.workload_priority_classes[cls] and wl.priority_class == cls


def test_the_admission_check_and_multikueue_examples_are_named_in_warnings() -> None:
    warnings = load_snapshot(FIX / "multikueue/multikueue-setup.yaml").warnings
    assert any(
        w.startswith("ClusterQueue spec.admissionChecksStrategy: 1 object") for w in warnings
    )
    assert any(w.startswith("MultiKueueConfig: 1 object") and "MultiKueue" in w for w in warnings)
    prov = load_snapshot(FIX / "provisioning/provisioning-setup.yaml")
    assert prov.kueue.cluster_queues["cluster-queue"].admission_checks == ("sample-prov",)
    assert any(w.startswith("ProvisioningRequestConfig: 1 object") for w in prov.warnings)


def test_the_minimal_cq_example_is_refused_as_kueue_refuses_it() -> None:
    with pytest.raises(SnapshotError) as e:
        load_snapshot(FIX / "admin/minimal-cq.yaml")
    assert str(e.value).endswith(
        "minimal-cq.yaml: ClusterQueue/cluster-queue-2: "
        'spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]: Unsupported value: "default-flavor"'
    )


def test_the_pod_examples_become_a_pod_workload_and_a_pod_group_workload(tmp_path: Path) -> None:
    d = _dir(
        tmp_path,
        "admin/single-clusterqueue-setup.yaml",
        "pods-kueue/kueue-pod-named.yaml",
        "pods-kueue/kueue-pod-group-named.yaml",
    )
    cluster = load_snapshot(d)
    assert _unknown(cluster) == []
    k = cluster.kueue
    single = k.workloads[
        "default/" + workload_name("kueue-sleep-x7k2p", _uid("Pod", "kueue-sleep-x7k2p"), "", "Pod")
    ]
    assert single.podsets[0].count == 1 and single.podsets[0].pods == ("default/kueue-sleep-x7k2p",)
    group = k.workloads["default/sample-group"]  # a pod group's Workload is the group's name
    (ps,) = group.podsets  # leader and worker have the same shape: one role
    assert ps.count == 2 and ps.requests == {"cpu": 3 * CPU}
    assert set(ps.pods) == {"default/sample-leader-4bq9t", "default/sample-worker-m2z8d"}
    for key in ("default/kueue-sleep-x7k2p", "default/sample-leader-4bq9t"):
        assert cluster.gated[key].startswith("Kueue has not admitted Workload default/")


def _uid(kind: str, name: str) -> str:
    from gangplan.io.expand.naming import deterministic_uid

    return deterministic_uid(kind, "default", name)


# ---- jobs: synthesized Workloads ------------------------------------------------------------------
def test_workload_names_equal_kueues_unit_test() -> None:
    # TestGenerateWorkloadNameWithExtra, "short name, no extra (ShortWorkloadNames=false)"
    assert workload_name("name", "uid", "batch", "Job") == "job-name-ef3a1"
    # "long owner name truncated (ShortWorkloadNames=false)"
    long = (
        "marketing-campaign-autumn-2024-region-north-america-department-digital-strategy-sub-"
        "department-social-media-engagement-tracker-and-analytics-dashboard-v2-final-revision-by-"
        "engineering-team-lead-senior-architect-validation-checked-approved-by-legal-and-ops-dept"
    )
    assert workload_name(long, "uid", "batch", "Job") == (
        "job-marketing-campaign-autumn-2024-region-north-america-department-digital-strategy-sub-"
        "department-social-media-engagement-tracker-and-analytics-dashboard-v2-final-revision-by-"
        "engineering-team-lead-senior-architect-validation-checked-approved-by-l-218b8"
    )


def test_a_suspended_kueue_job_gets_its_workload_and_pods_held(tmp_path: Path) -> None:
    cluster = _load(
        tmp_path,
        SETUP,
        NODE,
        """
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: train
          namespace: default
          uid: 0b6b7b7e-1111-2222-3333-444455556666
          labels: {kueue.x-k8s.io/queue-name: lq}
          annotations: {kueue.x-k8s.io/job-min-parallelism: "2"}
        spec:
          suspend: true
          parallelism: 4
          completions: 3
          template:
            metadata:
              annotations: {kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/zone}
            spec:
              restartPolicy: Never
              containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
        """,
    )
    name = workload_name("train", "0b6b7b7e-1111-2222-3333-444455556666", "batch", "Job")
    wl = cluster.kueue.workloads[f"default/{name}"]
    assert wl.synthesized and wl.owner == "Job/train" and wl.queue_name == "lq"
    assert wl.annotations == {"kueue.x-k8s.io/job-min-parallelism": "2"}  # the Job's
    (ps,) = wl.podsets
    assert (ps.name, ps.count, ps.min_count, ps.requests) == ("main", 3, 2, {"cpu": CPU})
    assert ps.topology_request.required == "topology.kubernetes.io/zone"
    assert ps.topology_request.pod_index_label == "batch.kubernetes.io/job-completion-index"
    assert len(ps.pods) == 3  # expanded as the Job controller creates them once admitted
    assert all(
        cluster.gated[k] == f"Kueue has not admitted Workload default/{name} (LocalQueue lq)"
        for k in ps.pods
    )
    assert cluster.warnings == ()  # "suspended by Kueue" is no loss: Kueue's admission is read
    # with a ClusterQueue, the TAS annotation is Kueue's: no gang PodGroup is made from it
    assert not any("Kueue TAS PodSet" in t for t in cluster.translations)
    assert all(g.topology_key is None for g in cluster.pod_groups.values())


def test_without_a_clusterqueue_the_tas_annotations_still_make_a_gang() -> None:
    cluster = load_snapshot(FIX / "tas/sample-job-required.yaml")
    assert cluster.kueue is None and cluster.gated == {}
    assert any("Kueue TAS PodSet" in t for t in cluster.translations)
    (g,) = cluster.pod_groups.values()  # the Job controller's group, made a gang of the PodSet
    assert (g.policy, g.min_count, g.topology_key) == (
        "gang",
        10,
        "cloud.provider.com/topology-rack",
    )


def test_with_the_tas_queues_the_tas_examples_are_kueues(tmp_path: Path) -> None:
    d = _dir(
        tmp_path,
        "tas/sample-queues.yaml",
        "tas/sample-job-required.yaml",
        "tas/sample-job-preferred.yaml",
    )
    cluster = load_snapshot(d)
    assert _unknown(cluster) == [] and cluster.warnings == ()
    reqs = {
        ("required" if "required" in w.owner else "preferred"): w.podsets[0].topology_request
        for w in cluster.kueue.workloads.values()
    }
    assert reqs["required"].required == "cloud.provider.com/topology-rack"
    assert reqs["preferred"].preferred == "cloud.provider.com/topology-block"
    assert not any("Kueue TAS PodSet" in t for t in cluster.translations)
    assert len(cluster.gated) == 50
    assert all(g.topology_key is None for g in cluster.pod_groups.values())


def test_a_kueue_jobset_gets_one_podset_per_replicated_job(tmp_path: Path) -> None:
    d = _dir(tmp_path, "admin/single-clusterqueue-setup.yaml", "jobs/sample-jobset.yaml")
    cluster = load_snapshot(d)
    (wl,) = cluster.kueue.workloads.values()
    assert wl.owner.startswith("JobSet/sleep-job") and wl.name.startswith("jobset-sleep-job")
    assert [(ps.name, ps.count, len(ps.pods)) for ps in wl.podsets] == [
        ("workers", 1, 1),
        ("driver", 1, 1),
    ]
    tr = wl.podsets[0].topology_request
    assert (tr.sub_group_index_label, tr.sub_group_count) == ("jobset.sigs.k8s.io/job-index", 1)
    assert all(k in cluster.gated for ps in wl.podsets for k in ps.pods)


def test_partial_admission_reads_min_parallelism(tmp_path: Path) -> None:
    d = _dir(
        tmp_path, "admin/single-clusterqueue-setup.yaml", "jobs/sample-job-partial-admission.yaml"
    )
    (wl,) = load_snapshot(d).kueue.workloads.values()
    assert (wl.podsets[0].count, wl.podsets[0].min_count) == (20, 5)


# ---- Workload objects --------------------------------------------------------------------------
def _workload(version: str, *, status: str = "", extra_spec: str = "", owner: str = "") -> str:
    cls = (
        "priorityClassName: high\n  priority: 100"
        if version == "v1beta1"
        else "priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: high}\n  priority: 100"
    )
    return f"""
apiVersion: kueue.x-k8s.io/{version}
kind: Workload
metadata:
  name: wl
  namespace: default
  creationTimestamp: "2026-01-01T00:00:00Z"
{owner}spec:
  queueName: lq
  {cls}
{extra_spec}  podSets:
  - name: workers
    count: 2
    template:
      spec:
        containers: [{{name: c, image: x, resources: {{requests: {{cpu: 500m}}}}}}]
{status}"""


ADMITTED_V1BETA1 = """status:
  conditions:
  - {type: QuotaReserved, status: "True", reason: QuotaReserved, message: ok, lastTransitionTime: "2026-01-01T00:00:01Z"}
  admission:
    clusterQueue: cq
    podSetAssignments:
    - name: workers
      count: 2
      flavors: {cpu: default-flavor}
      resourceUsage: {cpu: "1"}
      topologyAssignment:
        levels: [cloud.provider.com/topology-block, cloud.provider.com/topology-rack]
        domains:
        - {values: [block-1, rack-1], count: 1}
        - {values: [block-1, rack-2], count: 1}
"""

ADMITTED_V1BETA2 = """status:
  conditions:
  - {type: QuotaReserved, status: "True", reason: QuotaReserved, message: ok, lastTransitionTime: "2026-01-01T00:00:01Z"}
  admission:
    clusterQueue: cq
    podSetAssignments:
    - name: workers
      count: 2
      flavors: {cpu: default-flavor}
      resourceUsage: {cpu: "1"}
      topologyAssignment:
        levels: [cloud.provider.com/topology-block, cloud.provider.com/topology-rack]
        slices:
        - domainCount: 2
          valuesPerLevel:
          - universal: block-1
          - individual: {prefix: rack-, roots: ["1", "2"]}
          podCounts: {universal: 1}
"""

WPC = """
apiVersion: kueue.x-k8s.io/{v}
kind: WorkloadPriorityClass
metadata: {{name: high}}
value: 100
"""


def _v1beta1_setup() -> str:
    return """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: root}
spec: {}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: team}
spec: {parentName: root}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  cohort: team
  namespaceSelector: {}
  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: Preempt}
  admissionChecks: [check-a]
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 9, borrowingLimit: "2", lendingLimit: "1"}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
"""


def _v1beta2_setup() -> str:
    return """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: root}
spec: {}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: team}
spec: {parentName: root}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  cohortName: team
  namespaceSelector: {}
  flavorFungibility: {whenCanBorrow: MayStopSearch, whenCanPreempt: MayStopSearch}
  admissionChecksStrategy:
    admissionChecks: [{name: check-a}]
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 9, borrowingLimit: "2", lendingLimit: "1"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
"""


def _comparable(state) -> dict:
    out = state.model_dump()
    for cq in out["cluster_queues"].values():
        cq["api_version"] = ""
    for table in ("flavors", "cluster_queues", "cohorts", "local_queues", "workloads"):
        for obj in out[table].values():
            obj["source"] = ""
    return out


def test_v1beta1_and_v1beta2_spellings_give_the_same_state(tmp_path: Path) -> None:
    a = _load(
        tmp_path,
        _v1beta1_setup(),
        WPC.format(v="v1beta1"),
        _workload("v1beta1", status=ADMITTED_V1BETA1),
        name="a.yaml",
    )
    b = _load(
        tmp_path,
        _v1beta2_setup(),
        WPC.format(v="v1beta2"),
        _workload("v1beta2", status=ADMITTED_V1BETA2),
        name="b.yaml",
    )
    assert _unknown(a) == [] and _unknown(b) == []
    assert _comparable(a.kueue) == _comparable(b.kueue)
    cq = b.kueue.cluster_queues["cq"]
    assert cq.cohort == "team" and cq.admission_checks == ("check-a",)
    assert cq.flavor_fungibility.when_can_borrow == "MayStopSearch"
    assert cq.flavor_fungibility.when_can_preempt == "MayStopSearch"  # Preempt converts to it
    q = cq.resource_groups[0].flavors[0].quota("cpu")
    assert (q.nominal, q.borrowing_limit, q.lending_limit) == (9 * CPU, 2 * CPU, 1 * CPU)
    assert b.kueue.cohorts["team"].parent == "root"
    wl = b.kueue.workloads["default/wl"]
    assert wl.admission.cluster_queue == "cq" and wl.priority == 100 and wl.priority_class == "high"
    ta = wl.admission.podsets[0].topology_assignment
    assert ta.domains == (
        TopologyDomainAssignment(values=("block-1", "rack-1"), count=1),
        TopologyDomainAssignment(values=("block-1", "rack-2"), count=1),
    )


def test_a_workload_without_its_job_gets_count_pending_pods(tmp_path: Path) -> None:
    cluster = _load(tmp_path, SETUP, NODE, WPC.format(v="v1beta2"), _workload("v1beta2"))
    wl = cluster.kueue.workloads["default/wl"]
    assert wl.admission is None and not wl.synthesized
    (ps,) = wl.podsets
    assert ps.pods == ("default/wl-workers-0", "default/wl-workers-1")
    assert ps.requests == {"cpu": 500}
    assert (
        cluster.gated["default/wl-workers-0"]
        == "Kueue has not admitted Workload default/wl (LocalQueue lq)"
    )
    assert any("2 pending pods made from Workload templates" in t for t in cluster.translations)


def test_the_pods_of_an_admitted_workload_are_not_held(tmp_path: Path) -> None:
    cluster = _load(
        tmp_path,
        SETUP,
        NODE,
        WPC.format(v="v1beta2"),
        _workload("v1beta2", status=ADMITTED_V1BETA2),
    )
    wl = cluster.kueue.workloads["default/wl"]
    assert wl.admission is not None and len(wl.podsets[0].pods) == 2
    assert cluster.gated == {}
    assert cluster.kueue.admitted() == (wl,) and cluster.kueue.pending() == ()


def test_a_finished_workload_is_neither_pending_nor_admitted(tmp_path: Path) -> None:
    status = ADMITTED_V1BETA2.replace(
        "  conditions:\n",
        '  conditions:\n  - {type: Finished, status: "True", reason: Succeeded, message: done, lastTransitionTime: "2026-01-01T00:00:02Z"}\n',
    )
    k = _load(tmp_path, SETUP, WPC.format(v="v1beta2"), _workload("v1beta2", status=status)).kueue
    assert k.workloads["default/wl"].finished and k.pending() == () and k.admitted() == ()
    assert k.workloads["default/wl"].podsets[0].pods == ()  # no pods are made for it


def test_a_workload_of_a_job_in_the_snapshot_uses_the_jobs_pods(tmp_path: Path) -> None:
    owner = "  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: train, uid: u1, controller: true}]\n"
    job = """
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: default, uid: u1, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  suspend: true
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]
"""
    cluster = _load(
        tmp_path, SETUP, WPC.format(v="v1beta2"), _workload("v1beta2", owner=owner), job
    )
    k = cluster.kueue
    assert list(k.workloads) == ["default/wl"]  # no second Workload is made for the Job
    pods = k.workloads["default/wl"].podsets[0].pods
    assert len(pods) == 2 and all(p.startswith("default/train-") for p in pods)


# ---- gating reasons ------------------------------------------------------------------------------
def _pod(name: str, queue: str, ns: str = "default") -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}, labels: {{kueue.x-k8s.io/queue-name: {queue}}}}}
spec:
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1"}}}}}}]
"""


def test_gating_reasons_name_kueues_own_words(tmp_path: Path) -> None:
    inactive_lq = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: stopped, namespace: default}
spec: {clusterQueue: cq, stopPolicy: Hold}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: orphan, namespace: default}
spec: {clusterQueue: nowhere}
"""
    cluster = _load(
        tmp_path,
        SETUP,
        NODE,
        inactive_lq,
        _pod("a", "missing"),
        _pod("b", "stopped"),
        _pod("c", "orphan"),
        _pod("d", "lq"),
    )
    uid = {n: _uid("Pod", n) for n in "abcd"}
    wl = {n: "default/" + workload_name(n, uid[n], "", "Pod") for n in "abcd"}
    assert cluster.gated == {
        "default/a": f"Kueue has not admitted Workload {wl['a']} (LocalQueue missing): LocalQueue missing doesn't exist",
        "default/b": f"Kueue has not admitted Workload {wl['b']} (LocalQueue stopped): LocalQueue stopped is inactive",
        "default/c": f"Kueue has not admitted Workload {wl['c']} (LocalQueue orphan): ClusterQueue nowhere doesn't exist",
        "default/d": f"Kueue has not admitted Workload {wl['d']} (LocalQueue lq)",
    }


def test_an_incomplete_pod_group_is_held_with_kueues_reason(tmp_path: Path) -> None:
    pod = """
apiVersion: v1
kind: Pod
metadata:
  name: leader
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/pod-group-name: g}
  annotations: {kueue.x-k8s.io/pod-group-total-count: "2"}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""
    cluster = _load(tmp_path, SETUP, pod)
    assert cluster.gated == {
        "default/leader": "Kueue cannot create the Workload of pod group default/g: 'g' group has fewer runnable pods than expected"
    }
    assert cluster.kueue.workloads == {}


def test_a_deactivated_workload_says_so(tmp_path: Path) -> None:
    cluster = _load(
        tmp_path,
        SETUP,
        WPC.format(v="v1beta2"),
        _workload("v1beta2", extra_spec="  active: false\n"),
    )
    assert cluster.gated["default/wl-workers-0"].endswith(": The workload is deactivated")


# ---- bad input -----------------------------------------------------------------------------------
def _cq(spec: str, version: str = "v1beta2") -> str:
    return f"""
apiVersion: kueue.x-k8s.io/{version}
kind: ClusterQueue
metadata: {{name: cq}}
spec:
{textwrap.indent(textwrap.dedent(spec).strip(), "  ")}
"""


def _flavors(n: int) -> str:
    return "\n".join(
        f"    - name: f{i}\n      resources: [{{name: cpu, nominalQuota: 1}}]" for i in range(n)
    )


RECLAIM = """  reclaimablePods: [{name: workers, count: %d}]
"""

BAD = [
    (
        "a flavor quota naming a resource not in coveredResources (webhook)",
        _cq("""
        resourceGroups:
        - coveredResources: [cpu]
          flavors:
          - name: f
            resources: [{name: memory, nominalQuota: 1Gi}]
        """),
        'ClusterQueue/cq: spec.resourceGroups[0].flavors[0].resources[0].name: Invalid value: "memory": must match the name in coveredResources',
    ),
    (
        "a flavor listing fewer resources than covered (CEL on ResourceGroup)",
        _cq("""
        resourceGroups:
        - coveredResources: [cpu, memory]
          flavors:
          - name: f
            resources: [{name: cpu, nominalQuota: 1}]
        """),
        'ClusterQueue/cq: spec.resourceGroups[0]: Invalid value: "object": flavors must have the same number of resources as the coveredResources',
    ),
    (
        "more than 64 flavors in a resource group (schema MaxItems)",
        _cq(
            "resourceGroups:\n- coveredResources: [cpu]\n  flavors:\n"
            + _flavors(65).replace("\n    ", "\n  ").replace("    - ", "  - ", 1)
        ),
        "ClusterQueue/cq: spec.resourceGroups[0].flavors: Too many: 65: must have at most 64 items",
    ),
    (
        "more than 16 resource groups (schema MaxItems)",
        _cq(
            "resourceGroups:\n"
            + "\n".join(
                f"- coveredResources: [r{i}.io/x]\n  flavors: [{{name: f{i}, resources: [{{name: r{i}.io/x, nominalQuota: 1}}]}}]"
                for i in range(17)
            )
        ),
        "ClusterQueue/cq: spec.resourceGroups: Too many: 17: must have at most 16 items",
    ),
    (
        "a borrowingLimit without a cohort (CEL on ClusterQueueSpec)",
        _cq("""
        resourceGroups:
        - coveredResources: [cpu]
          flavors:
          - name: f
            resources: [{name: cpu, nominalQuota: 1, borrowingLimit: 1}]
        """),
        'ClusterQueue/cq: spec: Invalid value: "object": borrowingLimit must be nil when cohort is empty',
    ),
    (
        "a v1beta1 borrowingLimit without a cohort",
        _cq(
            """
        resourceGroups:
        - coveredResources: [cpu]
          flavors:
          - name: f
            resources: [{name: cpu, nominalQuota: 1, borrowingLimit: 1}]
        """,
            "v1beta1",
        ),
        'ClusterQueue/cq: spec: Invalid value: "object": borrowingLimit must be nil when cohort is empty',
    ),
    (
        "a lendingLimit without a cohort (webhook)",
        _cq("""
        resourceGroups:
        - coveredResources: [cpu]
          flavors:
          - name: f
            resources: [{name: cpu, nominalQuota: 1, lendingLimit: 1}]
        """),
        'ClusterQueue/cq: spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: "1": must be nil when cohort is empty',
    ),
    (
        "a lendingLimit above the nominal quota (webhook)",
        _cq("""
        cohortName: c
        resourceGroups:
        - coveredResources: [cpu]
          flavors:
          - name: f
            resources: [{name: cpu, nominalQuota: 1, lendingLimit: 2}]
        """),
        'ClusterQueue/cq: spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: "2": must be less than or equal to the nominalQuota',
    ),
    (
        "a negative nominal quota (webhook)",
        _cq("""
        resourceGroups:
        - coveredResources: [cpu]
          flavors:
          - name: f
            resources: [{name: cpu, nominalQuota: "-1"}]
        """),
        'ClusterQueue/cq: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: "-1": must be greater than or equal to 0',
    ),
    (
        "a flavor listed twice (webhook)",
        _cq("""
        resourceGroups:
        - coveredResources: [cpu]
          flavors:
          - {name: f, resources: [{name: cpu, nominalQuota: 1}]}
        - coveredResources: [memory]
          flavors:
          - {name: f, resources: [{name: memory, nominalQuota: 1}]}
        """),
        'ClusterQueue/cq: spec.resourceGroups[1].flavors[0].name: Duplicate value: "f"',
    ),
    (
        "a resource covered twice (webhook)",
        _cq("""
        resourceGroups:
        - coveredResources: [cpu]
          flavors:
          - {name: f, resources: [{name: cpu, nominalQuota: 1}]}
        - coveredResources: [cpu]
          flavors:
          - {name: g, resources: [{name: cpu, nominalQuota: 1}]}
        """),
        'ClusterQueue/cq: spec.resourceGroups[1].coveredResources[0]: Duplicate value: "cpu"',
    ),
    (
        "an unknown queueing strategy (schema enum)",
        _cq("queueingStrategy: FIFO"),
        'ClusterQueue/cq: spec.queueingStrategy: Unsupported value: "FIFO": supported values: "StrictFIFO", "BestEffortFIFO"',
    ),
    (
        "v1beta2 has no whenCanBorrow: Borrow (schema enum)",
        _cq("flavorFungibility: {whenCanBorrow: Borrow}"),
        'ClusterQueue/cq: spec.flavorFungibility.whenCanBorrow: Unsupported value: "Borrow": supported values: "MayStopSearch", "TryNextFlavor"',
    ),
    (
        "a preference without TryNextFlavor on both (CEL on FlavorFungibility)",
        _cq("flavorFungibility: {preference: BorrowingOverPreemption}"),
        'ClusterQueue/cq: spec.flavorFungibility: Invalid value: "object": preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor',
    ),
    (
        "borrowWithinCohort without reclaimWithinCohort (CEL on ClusterQueuePreemption)",
        _cq("preemption: {borrowWithinCohort: {policy: LowerPriority}}"),
        'ClusterQueue/cq: spec.preemption: Invalid value: "object": reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never',
    ),
    (
        "a Workload with 19 podSets (schema MaxItems)",
        """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec: {}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w, namespace: default}
spec:
  podSets:
"""
        + "\n".join(
            f"  - {{name: p{i}, count: 1, template: {{spec: {{containers: [{{name: c, image: x}}]}}}}}}"
            for i in range(19)
        ),
        "Workload/default/w: spec.podSets: Too many: 19: must have at most 18 items",
    ),
    (
        "a Workload podSet with minCount above count (CEL on PodSet)",
        """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec: {}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w, namespace: default}
spec:
  podSets:
  - {name: main, count: 2, minCount: 3, template: {spec: {containers: [{name: c, image: x}]}}}
""",
        'Workload/default/w: spec.podSets[0]: Invalid value: "object": minCount should be positive and less or equal to count',
    ),
    (
        "a Workload reserving quota without admission (webhook)",
        """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec: {}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w, namespace: default}
spec:
  podSets:
  - {name: main, count: 1, template: {spec: {containers: [{name: c, image: x}]}}}
status:
  conditions: [{type: QuotaReserved, status: "True"}]
""",
        "Workload/default/w: status.admission: Required value: must be set while the QuotaReserved condition is true",
    ),
    (
        "a reclaimable count above the podSet's (webhook)",
        SETUP
        + "---\n"
        + WPC.format(v="v1beta2")
        + "---\n"
        + _workload("v1beta2", status=ADMITTED_V1BETA2 + RECLAIM % 3),
        "Workload/default/wl: status.reclaimablePods[workers].count: Invalid value: 3: should be less or equal to 2",
    ),
    (
        "a ResourceFlavor with a topology but no node labels (CEL)",
        _cq("{}")
        + "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\nspec: {topologyName: t}\n",
        'ResourceFlavor/f: spec: Invalid value: "object": at least one nodeLabel is required when topology is set',
    ),
    (
        "a Job with two topology annotations (Kueue's job webhook)",
        _cq("{}")
        + """---
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: default, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  suspend: true
  template:
    metadata:
      annotations:
        kueue.x-k8s.io/podset-required-topology: rack
        kueue.x-k8s.io/podset-preferred-topology: block
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x}]
""",
        'Job/default/j: spec.template.metadata.annotations: Invalid value: must not contain more than one topology annotation: ["kueue.x-k8s.io/podset-required-topology", "kueue.x-k8s.io/podset-preferred-topology", "kueue.x-k8s.io/podset-unconstrained-topology"]',
    ),
    (
        "a slice size without the slice topology (Kueue's job webhook)",
        _cq("{}")
        + """---
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: default, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  suspend: true
  template:
    metadata:
      annotations: {kueue.x-k8s.io/podset-slice-size: "2"}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x}]
""",
        "Job/default/j: spec.template.metadata.annotations[kueue.x-k8s.io/podset-slice-size]: Forbidden: may not be set when 'kueue.x-k8s.io/podset-slice-required-topology' is not specified",
    ),
]


@pytest.mark.parametrize("sentence,content,expected", BAD, ids=[c[0] for c in BAD])
def test_bad_kueue_input_gets_the_api_servers_answer(
    tmp_path: Path, sentence: str, content: str, expected: str
) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(content)
    with pytest.raises(SnapshotError) as e:
        load_snapshot(f)
    assert str(e.value) == f"{f}: {expected}", sentence


def test_bad_kueue_input_exits_2_on_the_command_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(BAD[0][1])
    result = CliRunner().invoke(app, ["inspect", str(f)])
    assert result.exit_code == 2
    assert "must match the name in coveredResources" in result.output


def test_duplicate_kueue_objects_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match=r"ClusterQueue/cq: duplicate object"):
        _load(tmp_path, _cq("{}"), _cq("{}"))


def test_unused_features_are_named_once_per_kind_and_field(tmp_path: Path) -> None:
    fs = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %s}
spec: {fairSharing: {weight: "2"}}
"""
    cluster = _load(tmp_path, fs % "a", fs % "b")
    lines = [w for w in cluster.warnings if "fairSharing" in w]
    assert lines == [
        "ClusterQueue spec.fairSharing: 2 objects (a, b): fair sharing is not modelled: gangplan admits by Kueue's classical order"
    ]


def test_without_a_clusterqueue_kueue_objects_stay_not_read(tmp_path: Path) -> None:
    cluster = load_snapshot(FIX / "kueueviz/02-local-queues.yaml")
    assert cluster.kueue is None and cluster.gated == {}
    assert cluster.warnings == (
        "LocalQueue: 3 objects (emergency-queue, llm-model-queue, agi-model-queue): not read: a Kueue object: quota, admission and ResourceFlavor node labels are not modelled",
    )
    assert cluster.skipped_kinds == {"LocalQueue": 3}


def test_a_clusterqueue_missing_its_flavor_or_topology_is_inactive(tmp_path: Path) -> None:
    cq = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: tas, resources: [{name: cpu, nominalQuota: 9}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
"""
    flavor = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: tas}
spec: {nodeLabels: {pool: a}, topologyName: racks}
"""
    why = "Kueue has not admitted Workload default/{} (LocalQueue lq): ClusterQueue cq is inactive"
    uid = _uid("Pod", "p")
    name = workload_name("p", uid, "", "Pod")
    for parts in ((cq, _pod("p", "lq")), (cq, flavor, _pod("p", "lq"))):
        cluster = _load(tmp_path, *parts)
        assert cluster.gated == {"default/p": why.format(name)}
    topology = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: racks}
spec: {levels: [{nodeLabel: rack}]}
"""
    cluster = _load(tmp_path, cq, flavor, topology, _pod("p", "lq"))
    assert cluster.gated == {
        "default/p": f"Kueue has not admitted Workload default/{name} (LocalQueue lq)"
    }


def test_a_kueue_jobsets_suspended_jobs_in_the_snapshot_get_their_pods(tmp_path: Path) -> None:
    jobset = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: default, uid: js-uid, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  suspend: true
  replicatedJobs:
  - name: Workers
    replicas: 1
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          spec:
            restartPolicy: Never
            containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: js-workers-0
  namespace: default
  ownerReferences: [{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: js, uid: js-uid, controller: true}]
spec:
  suspend: true
  parallelism: 2
  completions: 2
  completionMode: Indexed
  template:
    metadata:
      labels: {jobset.sigs.k8s.io/jobset-name: js, jobset.sigs.k8s.io/replicatedjob-name: Workers}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""
    cluster = _load(tmp_path, SETUP, jobset)
    (wl,) = cluster.kueue.workloads.values()
    assert wl.name == workload_name("js", "js-uid", "jobset.x-k8s.io", "JobSet")
    (ps,) = wl.podsets
    assert ps.name == "workers" and ps.count == 2  # NewPodSetReference lowercases the name
    assert len(ps.pods) == 2 and all(k in cluster.gated for k in ps.pods)


def test_a_job_without_the_label_goes_to_the_namespaces_default_local_queue(tmp_path: Path) -> None:
    default_lq = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: default, namespace: default}
spec: {clusterQueue: cq}
"""
    job = """
apiVersion: batch/v1
kind: Job
metadata: {name: plain, namespace: %s, uid: plain-uid}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""
    cluster = _load(tmp_path, SETUP, default_lq, job % "default")
    (wl,) = cluster.kueue.workloads.values()
    assert wl.queue_name == "default" and wl.name == workload_name(
        "plain", "plain-uid", "batch", "Job"
    )
    assert all(k in cluster.gated for k in wl.podsets[0].pods)
    assert any("ApplyDefaultLocalQueue" in t for t in cluster.translations)
    # no LocalQueue named default in the Job's namespace: Kueue leaves the Job alone
    other = _load(tmp_path, SETUP, default_lq, job % "other", name="o.yaml")
    assert other.kueue.workloads == {} and other.gated == {}


def test_a_workload_keeps_its_annotations_and_reclaimable_pods(tmp_path: Path) -> None:
    wl = _workload("v1beta2", status=ADMITTED_V1BETA2 + RECLAIM % 1).replace(
        "  namespace: default\n", "  namespace: default\n  annotations: {team: ml}\n", 1
    )
    k = _load(tmp_path, SETUP, WPC.format(v="v1beta2"), wl).kueue
    w = k.workloads["default/wl"]
    assert w.annotations == {"team": "ml"} and w.reclaimable_pods == {"workers": 1}


# ---- pod group roles -----------------------------------------------------------------------------
def test_role_hashes_equal_kueues_unit_tests() -> None:
    """``pkg/controller/jobs/pod/pod_controller_test.go`` at v0.19.2: ``basePodWrapper`` (one
    container requesting cpu 1, no priority) has role ``dc85db45``; with memory 1Gi too,
    ``4ebdd4a6``. ``pod_webhook_test.go``: ``MakePod`` (an empty, non-nil requests map) has
    ``a9f06f3a``, checked on the JSON it hashes."""
    import hashlib

    from gangplan.io.kueue_role_hash import canonical_quantity, go_json, role_hash

    base = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    assert role_hash(base, None) == "dc85db45"
    both = {"cpu": "1000m", "memory": "1024Mi"}  # written otherwise, the same canonical quantities
    assert (
        role_hash({"spec": {"containers": [{"name": "c", "resources": {"requests": both}}]}}, None)
        == "4ebdd4a6"
    )
    empty = {
        "spec": {
            "affinity": None,
            "containers": [{"ports": None, "resources": {"requests": {}}}],
            "initContainers": None,
            "nodeSelector": None,
            "overhead": None,
            "priority": None,
            "resourceClaims": None,
            "runtimeClassName": None,
            "tolerations": None,
            "topologySpreadConstraints": None,
        }
    }
    assert hashlib.sha256(go_json(empty).encode()).hexdigest()[:8] == "a9f06f3a"
    annotated = {"metadata": {"annotations": {"kueue.x-k8s.io/role-hash": "cafe0001"}}, **base}
    assert role_hash(annotated, None) == "cafe0001"  # what the webhook wrote wins
    assert [canonical_quantity(q) for q in ("0.5", "2000", "0.5Gi", 3)] == [
        "500m",
        "2k",
        "512Mi",
        "3",
    ]


def test_a_pod_group_with_two_shapes_has_two_podsets_sorted_by_role(tmp_path: Path) -> None:
    def member(name: str, cpu: str) -> str:
        return f"""
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: default
  labels: {{kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/pod-group-name: g}}
  annotations: {{kueue.x-k8s.io/pod-group-total-count: "3"}}
spec:
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""

    cluster = _load(tmp_path, SETUP, member("leader", "2"), member("w1", "1"), member("w2", "1"))
    wl = cluster.kueue.workloads["default/g"]
    assert [ps.name for ps in wl.podsets] == sorted(ps.name for ps in wl.podsets)
    by_count = {ps.count: ps for ps in wl.podsets}
    assert set(by_count[2].pods) == {"default/w1", "default/w2"}
    assert by_count[1].pods == ("default/leader",)
    assert by_count[1].requests == {"cpu": 2 * CPU}
