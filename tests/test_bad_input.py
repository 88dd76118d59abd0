"""Bad input: exit code 2 and a message naming the file, the object and the field, never a traceback.

Each case runs through the CLI (``gangplan inspect FILE``) and through the library
(``load_snapshot`` raising :class:`SnapshotError`). A hypothesis test corrupts a valid snapshot
byte by byte: loading must then succeed or raise SnapshotError, nothing else.
"""

from __future__ import annotations

import functools
import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_snapshot

NODE = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
"""

GANG = """
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train, namespace: ml}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
"""


def pod(name: str = "p", *, ns: str = "default", spec: str = "", cpu: str = '"1"') -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}}}
spec:
  containers:
  - name: c
    resources: {{requests: {{cpu: {cpu}}}}}
{spec}"""


def docs(*parts: str) -> str:
    return "\n---\n".join(textwrap.dedent(p).strip("\n") for p in parts) + "\n"


# (sentence, file name, content, expected "<obj>: <field>: <message>" after "<file>: ")
CASES = [
    (
        "a YAML syntax error names the file and line",
        "s.yaml",
        "kind: Node\nmetadata: {name: n1\nstatus: {}\n",
        ":3: invalid YAML:",
    ),
    (
        "a JSON syntax error names the file and line",
        "s.json",
        '{\n  "kind": "Node",\n  "metadata": {"name": "n1",},\n  "status": {}\n}\n',
        ":3: invalid JSON:",
    ),
    (
        "a pod without containers names spec.containers",
        "s.yaml",
        "kind: Pod\nmetadata: {name: p, namespace: ml}\nspec: {nodeSelector: {a: b}}\n",
        ": Pod/ml/p: spec.containers: required field is missing",
    ),
    (
        "a pod without a spec names spec",
        "s.yaml",
        "kind: Pod\nmetadata: {name: p}\n",
        ": Pod/default/p: spec: required field is missing",
    ),
    (
        "a PodGroup without schedulingPolicy names the field",
        "s.yaml",
        "kind: PodGroup\nmetadata: {name: g, namespace: ml}\nspec: {}\n",
        ": PodGroup/ml/g: spec.schedulingPolicy: required field is missing",
    ),
    (
        "a PodGroup with both policies is rejected",
        "s.yaml",
        "kind: PodGroup\nmetadata: {name: g, namespace: ml}\nspec: {schedulingPolicy: {basic: {}, gang: {minCount: 2}}}\n",
        ": PodGroup/ml/g: spec.schedulingPolicy: must set exactly one of basic, gang",
    ),
    (
        "a Node without allocatable names status.allocatable",
        "s.yaml",
        "kind: Node\nmetadata: {name: n1}\nstatus: {}\n",
        ": Node/n1: status.allocatable: required field is missing (neither allocatable nor capacity is set)",
    ),
    (
        "an object without a name names metadata.name",
        "s.yaml",
        "kind: Node\nmetadata: {labels: {a: b}}\nstatus: {allocatable: {cpu: 1}}\n",
        ": Node/?: metadata.name: required field is missing",
    ),
    (
        "labels given as a list are a type error",
        "s.yaml",
        "kind: Node\nmetadata: {name: n1, labels: [a, b]}\nstatus: {allocatable: {cpu: 1}}\n",
        ": Node/n1: metadata.labels: expected a mapping, got list",
    ),
    (
        "minCount given as a word is a type error",
        "s.yaml",
        "kind: PodGroup\nmetadata: {name: g, namespace: ml}\nspec: {schedulingPolicy: {gang: {minCount: three}}}\n",
        ": PodGroup/ml/g: spec.schedulingPolicy.gang.minCount: expected an integer, got string 'three'",
    ),
    (
        "minCount zero is below the minimum",
        "s.yaml",
        "kind: PodGroup\nmetadata: {name: g, namespace: ml}\nspec: {schedulingPolicy: {gang: {minCount: 0}}}\n",
        ": PodGroup/ml/g: spec.schedulingPolicy.gang.minCount: must be >= 1, got 0",
    ),
    (
        "a negative request names the container field",
        "s.yaml",
        docs(pod(cpu='"-1"')),
        ": Pod/default/p: spec.containers[0].resources.requests.cpu: quantity '-1' is negative",
    ),
    (
        "an unparsable request names the container field",
        "s.yaml",
        docs(pod(cpu='"1.2.3"')),
        ": Pod/default/p: spec.containers[0].resources.requests.cpu: unable to parse quantity '1.2.3'",
    ),
    (
        "an unparsable allocatable names the node field",
        "s.yaml",
        "kind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {memory: 1 Gi}}\n",
        ": Node/n1: status.allocatable.memory: unable to parse quantity '1 Gi'",
    ),
    (
        "a duplicate object names the first definition",
        "s.yaml",
        docs(pod(), pod()),
        ": Pod/default/p: duplicate object (first defined in ",
    ),
    (
        "a PodGroup and a CompositePodGroup with one name are refused",
        "s.yaml",
        docs(
            "kind: CompositePodGroup\nmetadata: {name: a, namespace: ml}\nspec: {schedulingPolicy: {basic: {}}}\n",
            "kind: PodGroup\nmetadata: {name: a, namespace: ml}\nspec: {schedulingPolicy: {basic: {}}}\n",
        ),
        ": CompositePodGroup/ml/a: metadata.name: a PodGroup named ml/a exists too",
    ),
    (
        "a pod bound to an unknown node names spec.nodeName",
        "s.yaml",
        docs(NODE, pod(spec="  nodeName: ghost")),
        ": Pod/default/p: spec.nodeName: bound to node 'ghost', which is not in the snapshot",
    ),
    (
        "an unknown PriorityClass names spec.priorityClassName",
        "s.yaml",
        docs(pod(spec="  priorityClassName: missing")),
        ": Pod/default/p: spec.priorityClassName: PriorityClass 'missing' not found in the snapshot",
    ),
    (
        "a Gt requirement with a word value is rejected",
        "s.yaml",
        docs(
            pod(
                spec="  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: gpus, operator: Gt, values: [many]}]}]}}}"
            )
        ),
        ": Pod/default/p: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: operator Gt needs an integer, got 'many'",
    ),
    (
        "an unknown taint effect is rejected",
        "s.yaml",
        "kind: Node\nmetadata: {name: n1}\nspec: {taints: [{key: k, effect: Sometimes}]}\nstatus: {allocatable: {cpu: 1}}\n",
        ": Node/n1: spec.taints[0].effect: must be one of NoSchedule, PreferNoSchedule, NoExecute; got 'Sometimes'",
    ),
    (
        "a document that is a bare string is not an object",
        "s.yaml",
        "just some text\n",
        ": document 1 is a str, not a Kubernetes object",
    ),
    (
        "a document without kind names the kind field",
        "s.yaml",
        "metadata: {name: x}\n",
        ": kind: document 1 has no kind",
    ),
    (
        "a PDB with a malformed percentage names the field",
        "s.yaml",
        "kind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {minAvailable: 5%%, selector: {}}\n",
        ": PodDisruptionBudget/default/b: spec.minAvailable: expected a non-negative integer or percentage, got '5%%'",
    ),
    (
        "a percentageOfNodesToScore above 100 is rejected",
        "s.yaml",
        "kind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 101\n",
        ": KubeSchedulerConfiguration: percentageOfNodesToScore: must be in 0..100, got 101",
    ),
    (
        "a JSON integer past Python's conversion limit is a JSON error, not a crash",
        "s.json",
        '{"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": '
        + "1" * 5000
        + "}}}",
        ": invalid JSON: Exceeds the limit (4300 digits)",
    ),
    (
        "a doubled sign is not an integer (it once crashed int())",
        "s.yaml",
        "kind: PodGroup\nmetadata: {name: g, namespace: ml}\nspec: {schedulingPolicy: {gang: {minCount: '+-5'}}}\n",
        ": PodGroup/ml/g: spec.schedulingPolicy.gang.minCount: expected an integer, got string '+-5'",
    ),
    (
        "a GPU request given as a list is a type error",
        "s.yaml",
        docs(pod(cpu="[1]")),
        ": Pod/default/p: spec.containers[0].resources.requests.cpu: expected a quantity string or number, got list",
    ),
]


@pytest.fixture
def snapshot_path(tmp_path):
    def write(name: str, content: str) -> Path:
        path = tmp_path / name
        path.write_text(content)
        return path

    return write


@pytest.mark.parametrize(
    ("name", "content", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_load_snapshot_raises_snapshot_error_naming_file_object_and_field(
    snapshot_path, name, content, expected
):
    path = snapshot_path(name, content)
    with pytest.raises(SnapshotError) as info:
        load_snapshot(path)
    assert str(info.value).startswith(str(path) + expected)


@pytest.mark.parametrize(
    ("name", "content", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_cli_inspect_exits_2_with_the_message_and_no_traceback(
    snapshot_path, name, content, expected
):
    path = snapshot_path(name, content)
    result = CliRunner().invoke(app, ["inspect", str(path)])
    assert result.exit_code == 2, result.output
    text = result.stderr if result.stderr else result.output
    assert f"error: {path}{expected}" in text
    assert "Traceback" not in result.output + result.stderr


def test_cli_inspect_on_a_missing_path_exits_2(tmp_path):
    result = CliRunner().invoke(app, ["inspect", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2
    assert f"error: {tmp_path / 'nope.yaml'}: no such file or directory" in result.stderr


def test_cli_inspect_on_an_empty_directory_exits_2(tmp_path):
    result = CliRunner().invoke(app, ["inspect", str(tmp_path)])
    assert result.exit_code == 2
    assert "directory holds no .yaml, .yml or .json file" in result.stderr


def test_the_error_names_the_file_inside_a_directory_snapshot(tmp_path):
    (tmp_path / "a.yaml").write_text(NODE)
    (tmp_path / "b.yaml").write_text(textwrap.dedent(pod(cpu='"-2"')))
    with pytest.raises(SnapshotError) as info:
        load_snapshot(tmp_path)
    assert info.value.file == str(tmp_path / "b.yaml")
    assert info.value.obj == "Pod/default/p"
    assert info.value.field == "spec.containers[0].resources.requests.cpu"


# ---- corruption fuzzing -------------------------------------------------------------------------
VALID = docs(
    """
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    percentageOfNodesToScore: 50
    profiles:
    - plugins: {score: {disabled: [{name: ImageLocality}]}}
      pluginConfig:
      - {name: NodeResourcesFit, args: {scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 1}]}}}
    """,
    """
    kind: Topology
    metadata: {name: t}
    spec: {levels: [{nodeLabel: zone}, {nodeLabel: kubernetes.io/hostname}]}
    """,
    """
    kind: PriorityClass
    metadata: {name: high}
    value: 100
    """,
    """
    kind: Node
    metadata: {name: n1, labels: {zone: a, kubernetes.io/hostname: n1, gpus: "8"}}
    spec: {taints: [{key: gpu, value: "true", effect: NoSchedule}]}
    status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "8"}}
    """,
    """
    kind: Node
    metadata: {name: n2, labels: {zone: b, kubernetes.io/hostname: n2}}
    status: {capacity: {cpu: 4500m, memory: 16G}}
    """,
    """
    kind: CompositePodGroup
    metadata: {name: top, namespace: ml}
    spec: {schedulingPolicy: {gang: {minGroupCount: 1}}, schedulingConstraints: {topology: [{key: zone}]}}
    """,
    """
    kind: PodGroup
    metadata: {name: train, namespace: ml}
    spec: {parentCompositePodGroupName: top, priorityClassName: high, schedulingPolicy: {gang: {minCount: 2}}}
    """,
    """
    kind: Pod
    metadata: {name: w0, namespace: ml, labels: {app: w}}
    spec:
      schedulingGroup: {podGroupName: train}
      tolerations: [{key: gpu, operator: Exists}]
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms: [{matchExpressions: [{key: gpus, operator: Gt, values: ["4"]}]}]
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {labelSelector: {matchLabels: {app: w}}, topologyKey: kubernetes.io/hostname}
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: w}}}
      initContainers:
      - {name: init, resources: {requests: {cpu: "2"}}}
      containers:
      - name: c
        ports: [{containerPort: 80, hostPort: 8080}]
        resources: {requests: {cpu: "1", memory: 1Gi}, limits: {nvidia.com/gpu: "4"}}
    """,
    """
    kind: Pod
    metadata: {name: w1, namespace: ml, labels: {app: w}, creationTimestamp: 2026-11-30T10:00:00Z}
    spec:
      nodeName: n1
      priority: 5
      schedulingGroup: {podGroupName: train}
      containers: [{name: c, resources: {requests: {cpu: 500m}}}]
    """,
    """
    kind: PodDisruptionBudget
    metadata: {name: pdb, namespace: ml}
    spec: {maxUnavailable: 50%, selector: {matchLabels: {app: w}}}
    """,
)


def test_the_fuzzing_seed_snapshot_is_valid(tmp_path):
    path = tmp_path / "seed.yaml"
    path.write_text(VALID)
    c = load_snapshot(path)
    assert len(c.nodes) == 2 and len(c.pods) == 2 and c.gated == {}


@functools.cache
def _seed_json() -> str:
    import yaml

    return json.dumps(list(yaml.safe_load_all(VALID)), indent=1, default=str)


def _corrupt(data: bytes, edits: list[tuple[str, int, int]], cut: int | None) -> bytes:
    buf = bytearray(data)
    for op, pos, byte in edits:
        if not buf:
            break
        i = pos % len(buf)
        if op == "flip":
            buf[i] ^= 1 << (byte % 8)
        elif op == "set":
            buf[i] = byte
        elif op == "insert":
            buf.insert(i, byte)
        else:
            del buf[i]
    if cut is not None and buf:
        del buf[cut % len(buf) :]
    return bytes(buf)


EDITS = st.lists(
    st.tuples(
        st.sampled_from(["flip", "set", "insert", "delete"]),
        st.integers(min_value=0, max_value=10**6),
        st.integers(min_value=0, max_value=255),
    ),
    min_size=1,
    max_size=6,
)


@pytest.mark.parametrize("suffix", [".yaml", ".json"], ids=["a YAML seed", "a JSON seed"])
@settings(
    max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(edits=EDITS, cut=st.none() | st.integers(min_value=0, max_value=10**6))
def test_byte_corruptions_never_escape_as_anything_but_snapshot_error(tmp_path, suffix, edits, cut):
    seed = (VALID if suffix == ".yaml" else _seed_json()).encode()
    path = tmp_path / f"corrupt{suffix}"
    path.write_bytes(_corrupt(seed, edits, cut))
    try:
        load_snapshot(path)
    except SnapshotError as e:
        assert str(e).startswith(str(path))


@functools.cache
def _seed_objects() -> tuple[list, list[tuple]]:
    """The seed's objects and the path of every value in them."""
    objects = json.loads(_seed_json())

    def walk(x, pre):
        yield pre
        items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()
        for k, v in items:
            yield from walk(v, (*pre, k))

    return objects, [p for p in walk(objects, ()) if p]


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.sampled_from(["", "1", "-1", "x", "*", "Always", "Gt", "0.0.0.0", "5%", "1.2.3"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["", "name", "key", "kind", "a"]), inner, max_size=3)
    ),
    max_leaves=5,
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    edits=st.lists(
        st.tuples(st.integers(min_value=0), JSON_VALUES, st.booleans()), min_size=1, max_size=3
    )
)
def test_values_of_the_wrong_type_anywhere_raise_snapshot_error(tmp_path, edits):
    objects, paths = _seed_objects()
    doc = json.loads(json.dumps(objects))
    for index, value, delete in edits:
        *parents, last = paths[index % len(paths)]
        target = doc
        try:
            for k in parents:
                target = target[k]
            if delete and isinstance(target, dict):
                target.pop(last, None)
            else:
                target[last] = value
        except (KeyError, IndexError, TypeError):
            continue
    path = tmp_path / "typed.json"
    path.write_text(json.dumps(doc))
    try:
        load_snapshot(path)
    except SnapshotError as e:
        assert str(e).startswith(str(path))
