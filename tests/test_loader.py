"""Loading snapshots: every accepted input shape and every normalisation the loader applies."""

from __future__ import annotations

import json

import pytest

from gangplan.io.loader import load_snapshot

GI = 2**30
MI = 2**20

NODES = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "8"}}
"""


def pod_doc(name: str, spec: str = "", *, ns: str = "default", extra_meta: str = "") -> str:
    """A Pod document; ``spec`` holds extra spec lines indented by two spaces."""
    return f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}{extra_meta}}}
spec:
  containers:
  - name: c
    resources: {{requests: {{cpu: 100m}}}}
{spec}"""


# ---- input shapes -------------------------------------------------------------------------------
def test_multi_document_yaml_loads_every_document_in_order(load_text):
    c = load_text(NODES + pod_doc("p1") + pod_doc("p2"))
    assert [n.name for n in c.nodes] == ["n1", "n2"]
    assert [p.key for p in c.pods] == ["default/p1", "default/p2"]
    assert c.nodes[1].allocatable == {
        "cpu": 16000,
        "memory": 64 * GI,
        "pods": 110,
        "nvidia.com/gpu": 8,
    }


def test_a_json_file_with_one_object_loads(load_text):
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "j1"},
        "status": {"allocatable": {"cpu": "2", "memory": "4Gi"}},
    }
    c = load_text(json.dumps(node), "snap.json")
    assert [n.name for n in c.nodes] == ["j1"]
    assert c.nodes[0].allocatable["cpu"] == 2000


def test_a_json_array_of_objects_loads(load_text):
    docs = [
        {"kind": "Node", "metadata": {"name": "a"}, "status": {"allocatable": {"cpu": 1}}},
        {"kind": "Node", "metadata": {"name": "b"}, "status": {"allocatable": {"cpu": 2}}},
    ]
    c = load_text(json.dumps(docs), "snap.json")
    assert [n.allocatable["cpu"] for n in c.nodes] == [1000, 2000]


def test_kind_list_items_are_flattened_and_typed_lists_default_the_item_kind(load_text):
    c = load_text("""
        apiVersion: v1
        kind: List
        items:
        - {kind: Node, metadata: {name: a}, status: {allocatable: {cpu: "1"}}}
        ---
        apiVersion: v1
        kind: NodeList
        items:
        - {metadata: {name: b}, status: {allocatable: {cpu: "2"}}}
    """)
    assert [n.name for n in c.nodes] == ["a", "b"]


def test_a_directory_loads_every_yaml_and_json_file_sorted_and_skips_hidden_files(tmp_path):
    (tmp_path / "b-pods.yaml").write_text(pod_doc("p1"))
    (tmp_path / "a-nodes.yml").write_text(NODES)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.json").write_text(
        json.dumps({"kind": "Namespace", "metadata": {"name": "ml", "labels": {"team": "x"}}})
    )
    (tmp_path / ".hidden.yaml").write_text("not: [valid")
    (tmp_path / "notes.txt").write_text("ignored")
    c = load_snapshot(tmp_path)
    assert [p.rsplit("/", 1)[-1] for p in c.sources] == ["a-nodes.yml", "b-pods.yaml", "c.json"]
    assert len(c.nodes) == 2 and len(c.pods) == 1
    assert c.namespaces["ml"].labels == {"team": "x"}


def test_the_kube_scheduler_simulator_export_loads_its_top_level_lists(load_text):
    export = {
        "nodes": [
            {
                "metadata": {"name": "sim-1"},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
            }
        ],
        "pods": [
            {
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {
                    "priorityClassName": "high",
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                },
            },
        ],
        "priorityClasses": [{"metadata": {"name": "high"}, "value": 1000}],
        "schedulerConfig": {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "percentageOfNodesToScore": 30,
        },
        "pvs": [],
        "storageClasses": [],
    }
    c = load_text(json.dumps(export), "export.json")
    assert [n.name for n in c.nodes] == ["sim-1"]
    assert c.pods[0].priority == 1000
    assert c.profile.percentage_of_nodes_to_score == 30


# ---- pod requests -------------------------------------------------------------------------------
REQUEST_CASES = [
    (
        "containers are summed",
        """
  containers:
  - {name: a, resources: {requests: {cpu: "1", memory: 1Gi}}}
  - {name: b, resources: {requests: {cpu: 500m, memory: 512Mi}}}""",
        {"cpu": 1500, "memory": GI + 512 * MI},
    ),
    (
        "the largest init container wins over a smaller sum",
        """
  initContainers:
  - {name: i1, resources: {requests: {cpu: "4"}}}
  - {name: i2, resources: {requests: {cpu: "2", memory: 8Gi}}}
  containers:
  - {name: a, resources: {requests: {cpu: "1", memory: 1Gi}}}
  - {name: b, resources: {requests: {cpu: "2", memory: 1Gi}}}""",
        {"cpu": 4000, "memory": 8 * GI},
    ),
    (
        "overhead is added after the max",
        """
  overhead: {cpu: 250m, memory: 64Mi}
  initContainers:
  - {name: i1, resources: {requests: {cpu: "4"}}}
  containers:
  - {name: a, resources: {requests: {cpu: "1", memory: 1Gi}}}""",
        {"cpu": 4250, "memory": GI + 64 * MI},
    ),
    (
        "a sidecar init container adds to the sum and to every later init container",
        """
  initContainers:
  - {name: sidecar, restartPolicy: Always, resources: {requests: {cpu: "1"}}}
  - {name: setup, resources: {requests: {cpu: "2"}}}
  containers:
  - {name: a, resources: {requests: {cpu: "1"}}}""",
        {"cpu": 3000},
    ),
    (
        "a sidecar started after a big init container does not raise that init container",
        """
  initContainers:
  - {name: setup, resources: {requests: {cpu: "3"}}}
  - {name: sidecar, restartPolicy: Always, resources: {requests: {cpu: "1"}}}
  containers:
  - {name: a, resources: {requests: {cpu: "1"}}}""",
        {"cpu": 3000},
    ),
    (
        "a limit without a request becomes the request",
        """
  containers:
  - {name: a, resources: {limits: {cpu: "2", nvidia.com/gpu: "4"}, requests: {memory: 1Gi}}}""",
        {"cpu": 2000, "memory": GI, "nvidia.com/gpu": 4},
    ),
    (
        "an explicit request is kept even when the limit is larger",
        """
  containers:
  - {name: a, resources: {limits: {cpu: "4"}, requests: {cpu: "1"}}}""",
        {"cpu": 1000},
    ),
    (
        "a container without resources requests nothing",
        """
  containers:
  - {name: a}""",
        {},
    ),
]


@pytest.mark.parametrize(
    ("spec", "expected"), [c[1:] for c in REQUEST_CASES], ids=[c[0] for c in REQUEST_CASES]
)
def test_pod_effective_request(load_text, spec, expected):
    c = load_text(f"""
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:{spec}
""")
    assert c.pods[0].requests == expected


def test_nonzero_requests_default_each_container_to_100m_and_200mi(load_text):
    c = load_text("""
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - {name: a}
          - {name: b, resources: {requests: {cpu: "1"}}}
    """)
    assert c.pods[0].nonzero_requests == {"cpu": 1100, "memory": 400 * MI}


def test_host_ports_default_to_tcp_on_every_address(load_text):
    c = load_text("""
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - name: a
            ports: [{containerPort: 80, hostPort: 8080}, {containerPort: 53, hostPort: 53, protocol: UDP, hostIP: 10.0.0.1}, {containerPort: 9}]
    """)
    assert [(h.port, h.protocol, h.host_ip) for h in c.pods[0].host_ports] == [
        (8080, "TCP", "0.0.0.0"),
        (53, "UDP", "10.0.0.1"),
    ]


# ---- priority -----------------------------------------------------------------------------------
PRIORITY_CLASSES = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: everyone}
value: 7
globalDefault: true
"""


def test_priority_comes_from_spec_then_class_then_global_default(load_text):
    c = load_text(
        PRIORITY_CLASSES
        + pod_doc("explicit", "  priority: 42\n  priorityClassName: high")
        + pod_doc("by-class", "  priorityClassName: high")
        + pod_doc("by-default")
    )
    assert {p.name: p.priority for p in c.pods} == {
        "explicit": 42,
        "by-class": 1000,
        "by-default": 7,
    }


def test_priority_is_zero_without_any_class(load_text):
    c = load_text(pod_doc("plain"))
    assert c.pods[0].priority == 0


def test_pod_group_priority_resolves_from_its_class(load_text):
    c = load_text(
        PRIORITY_CLASSES
        + """
---
kind: PodGroup
metadata: {name: g, namespace: ml}
spec: {priorityClassName: high, schedulingPolicy: {gang: {minCount: 1}}}
"""
        + pod_doc("p", "  schedulingGroup: {podGroupName: g}", ns="ml")
    )
    assert c.pod_groups["ml/g"].priority == 1000


# ---- groups and gating --------------------------------------------------------------------------
GANG = """
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train, namespace: ml}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
"""


def member(name: str, group: str = "train", ns: str = "ml") -> str:
    return pod_doc(name, f"  schedulingGroup: {{podGroupName: {group}}}", ns=ns)


def test_group_membership_comes_from_spec_scheduling_group(load_text):
    c = load_text(NODES + GANG + member("w0") + member("w1") + pod_doc("loner", ns="ml"))
    assert [p.key for p in c.groups.node("ml/train").members] == ["ml/w0", "ml/w1"]
    assert c.pod_groups["ml/train"].min_count == 2 and c.pod_groups["ml/train"].policy == "gang"
    assert c.pod_by_key["ml/loner"].group_key is None
    assert c.gated == {}


def test_a_pod_whose_pod_group_is_missing_is_gated(load_text):
    c = load_text(member("w0", group="nowhere"))
    assert c.gated == {"ml/w0": "waiting for pod group ml/nowhere"}
    assert c.schedulable_pods == ()


def test_a_gang_with_fewer_pods_than_min_count_is_gated(load_text):
    c = load_text(GANG + member("w0"))
    assert c.gated == {
        "ml/w0": "waiting for gang quorum: PodGroup ml/train has 1 of minCount 2 pods"
    }


def test_a_pod_group_whose_parent_composite_is_missing_is_gated(load_text):
    c = load_text(
        """
kind: PodGroup
metadata: {name: leaf, namespace: ml}
spec: {parentCompositePodGroupName: top, schedulingPolicy: {basic: {}}}
"""
        + member("w0", group="leaf")
    )
    assert c.gated == {"ml/w0": "waiting for CompositePodGroup ml/top"}


def test_a_composite_with_too_few_ready_children_gates_its_pods(load_text):
    c = load_text(
        """
kind: CompositePodGroup
metadata: {name: top, namespace: ml}
spec: {schedulingPolicy: {gang: {minGroupCount: 2}}}
---
kind: PodGroup
metadata: {name: a, namespace: ml}
spec: {parentCompositePodGroupName: top, schedulingPolicy: {gang: {minCount: 1}}}
---
kind: PodGroup
metadata: {name: b, namespace: ml}
spec: {parentCompositePodGroupName: top, schedulingPolicy: {gang: {minCount: 2}}}
"""
        + member("a0", group="a")
        + member("b0", group="b")
    )
    reason = "waiting for CompositePodGroup ml/top: 1 of minGroupCount 2 children ready"
    assert c.gated == {"ml/a0": reason, "ml/b0": reason}
    assert c.groups.node("ml/top").children == ("ml/a", "ml/b")
    assert c.groups.root_of("ml/b") == "ml/top"


def test_scheduling_gates_gate_a_pod(load_text):
    c = load_text(pod_doc("p", "  schedulingGates: [{name: example.com/quota}, {name: other}]"))
    assert c.gated == {"default/p": "scheduling gates: example.com/quota, other"}


def test_a_bound_pod_is_never_gated_and_counts_toward_quorum(load_text):
    c = load_text(
        NODES + GANG + member("w0").replace("spec:\n", "spec:\n  nodeName: n1\n", 1) + member("w1")
    )
    assert c.pod_by_key["ml/w0"].node_name == "n1"
    assert c.gated == {}
    assert [p.key for p in c.schedulable_pods] == ["ml/w1"]


# ---- skipping and leniency ----------------------------------------------------------------------
def test_unknown_kinds_and_terminated_pods_are_skipped_and_counted(load_text):
    c = load_text(
        NODES
        + """
---
kind: Service
metadata: {name: s1}
---
kind: Service
metadata: {name: s2}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
"""
        + pod_doc("done", extra_meta="").replace("spec:", "status: {phase: Succeeded}\nspec:")
    )
    assert c.skipped_kinds == {"Deployment": 1, "Pod (terminated)": 1, "Service": 2}
    assert c.pods == ()


def test_same_named_kinds_of_other_api_groups_are_skipped_and_counted(load_text):
    # scheduling.x-k8s.io/v1alpha1 is translated (tests/test_foreign_groups.py); another version of
    # that group is a different API: skipped, counted and warned about.
    c = load_text("""
        apiVersion: scheduling.x-k8s.io/v1alpha2
        kind: PodGroup
        metadata: {name: coscheduling-style, namespace: ml}
        spec: {minMember: 4}
        ---
        apiVersion: scheduling.k8s.io/v1beta1
        kind: PodGroup
        metadata: {name: ours, namespace: ml}
        spec: {schedulingPolicy: {gang: {minCount: 1}}}
        ---
        kind: PodGroup
        metadata: {name: no-api-version, namespace: ml}
        spec: {schedulingPolicy: {basic: {}}}
    """)
    assert sorted(c.pod_groups) == ["ml/no-api-version", "ml/ours"]
    assert c.skipped_kinds == {"PodGroup (scheduling.x-k8s.io/v1alpha2)": 1}
    assert any(
        w.startswith(
            "PodGroup (scheduling.x-k8s.io/v1alpha2): 1 object (coscheduling-style): not read"
        )
        for w in c.warnings
    )


def test_unknown_fields_are_ignored(load_text):
    c = load_text("""
        kind: Pod
        metadata: {name: p, someday: field, labels: {app: x}}
        spec:
          futureField: {nested: true}
          containers:
          - {name: a, futureContainerField: 1, resources: {requests: {cpu: "1"}, futureResourceField: x}}
        futureTopLevel: [1, 2]
    """)
    assert c.pods[0].requests == {"cpu": 1000} and c.pods[0].labels == {"app": "x"}


def test_unquoted_timestamps_stay_the_strings_they_were_written_as(load_text):
    c = load_text("""
        kind: Pod
        metadata: {name: p, creationTimestamp: 2026-11-30T10:00:00Z}
        spec: {containers: [{name: a}]}
    """)
    assert c.pods[0].creation_timestamp == "2026-11-30T10:00:00Z"


def test_node_allocatable_falls_back_to_capacity(load_text):
    c = load_text("""
        kind: Node
        metadata: {name: n}
        status: {capacity: {cpu: "4", memory: 1Gi}}
    """)
    assert c.nodes[0].allocatable == {"cpu": 4000, "memory": GI}


def test_node_taints_and_unschedulable_are_read(load_text):
    c = load_text("""
        kind: Node
        metadata: {name: n}
        spec:
          unschedulable: true
          taints: [{key: gpu, value: "true", effect: NoSchedule}, {key: soft, effect: PreferNoSchedule}]
        status: {allocatable: {cpu: "4"}}
    """)
    n = c.nodes[0]
    assert n.unschedulable is True
    assert [(t.key, t.value, t.effect) for t in n.taints] == [
        ("gpu", "true", "NoSchedule"),
        ("soft", "", "PreferNoSchedule"),
    ]


# ---- scheduler configuration --------------------------------------------------------------------
def test_scheduler_configuration_is_parsed(load_text):
    c = load_text("""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 40
profiles:
- schedulerName: gang-scheduler
  plugins:
    score:
      enabled: [{name: NodeAffinity, weight: 5}]
      disabled: [{name: ImageLocality}]
    filter:
      disabled: [{name: NodePorts}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: nvidia.com/gpu, weight: 3}]
""")
    prof = c.profile
    assert prof.scheduler_name == "gang-scheduler"
    assert prof.percentage_of_nodes_to_score == 40
    assert prof.score_weights["NodeAffinity"] == 5
    assert "ImageLocality" not in prof.score_weights
    assert prof.score_weights["TaintToleration"] == 3
    assert "NodePorts" not in prof.filter_plugins and "NodeResourcesFit" in prof.filter_plugins
    assert prof.fit_strategy == "MostAllocated"
    assert prof.fit_resources == {"cpu": 1, "nvidia.com/gpu": 3}


def test_a_profile_percentage_overrides_the_top_level_one(load_text):
    c = load_text("""
        kind: KubeSchedulerConfiguration
        percentageOfNodesToScore: 40
        profiles: [{schedulerName: default-scheduler, percentageOfNodesToScore: 70}]
    """)
    assert c.profile.percentage_of_nodes_to_score == 70


def test_disabling_every_score_plugin_with_a_star_empties_the_weights(load_text):
    c = load_text("""
        kind: KubeSchedulerConfiguration
        profiles:
        - plugins:
            score:
              disabled: [{name: "*"}]
              enabled: [{name: NodeResourcesFit, weight: 2}]
    """)
    assert c.profile.score_weights == {"NodeResourcesFit": 2}


def test_without_a_configuration_the_default_profile_applies(load_text):
    c = load_text(NODES)
    assert c.profile.source == "defaults"
    assert c.profile.fit_strategy == "LeastAllocated"
    assert c.profile.score_weights["TaintToleration"] == 3


# ---- Kueue topology and PDBs --------------------------------------------------------------------
def test_kueue_topology_levels_are_read_coarse_to_fine(load_text):
    c = load_text("""
        apiVersion: kueue.x-k8s.io/v1beta1
        kind: Topology
        metadata: {name: default}
        spec:
          levels:
          - nodeLabel: cloud.provider.com/topology-block
          - nodeLabel: cloud.provider.com/topology-rack
          - nodeLabel: kubernetes.io/hostname
    """)
    assert c.topology_levels() == (
        "cloud.provider.com/topology-block",
        "cloud.provider.com/topology-rack",
        "kubernetes.io/hostname",
    )


PDB_PODS = NODES + "".join(
    pod_doc(f"web-{i}", "  nodeName: n1" if i < 3 else "", extra_meta=", labels: {app: web}")
    for i in range(4)
)


@pytest.mark.parametrize(
    ("spec", "allowed"),
    [
        ("minAvailable: 2", 1),
        ("minAvailable: 50%", 1),
        ("maxUnavailable: 1", 0),
        ("maxUnavailable: 50%", 1),
        ("minAvailable: 0", 3),
    ],
    ids=[
        "minAvailable 2 of 3 healthy allows 1",
        "minAvailable 50 percent of 4 rounds up to 2 and allows 1",
        "maxUnavailable 1 of 4 expected needs 3 healthy and allows 0",
        "maxUnavailable 50 percent of 4 needs 2 healthy and allows 1",
        "minAvailable 0 allows every healthy pod",
    ],
)
def test_pdb_disruptions_allowed_is_computed_when_status_is_absent(load_text, spec, allowed):
    c = load_text(
        PDB_PODS
        + f"""
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: web}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  {spec}
"""
    )
    assert c.pdbs[0].disruptions_allowed == allowed


def test_pdb_status_is_kept_when_given(load_text):
    c = load_text(
        PDB_PODS
        + """
---
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 0, selector: {matchLabels: {app: web}}}
status: {disruptionsAllowed: 0}
"""
    )
    assert c.pdbs[0].disruptions_allowed == 0


def test_the_showcase_snapshots_all_load():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "scenarios" / "showcase"
    files = sorted(root.glob("*.yaml"))
    assert files
    for f in files:
        c = load_snapshot(f)
        assert c.nodes and c.pending_pods, f
