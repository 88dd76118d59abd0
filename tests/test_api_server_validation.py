"""Issue 41: hand-written jobs checked as the API server checks them.

Each row of the issue's table on a small hand-written snapshot: the message names the file, the
object, the field and the rule; the CLI exits 2 (``solve`` and ``diff``), never a traceback.
A hypothesis test compares gangplan's accept/refuse decision on container resources with a small
re-statement of the API server's rules written here (not gangplan's code).
"""

from __future__ import annotations

import gzip
import json
import math
import textwrap
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_objects, load_snapshot

NODES = """
apiVersion: v1
kind: Node
metadata: {name: gpu-a1, labels: {kubernetes.io/hostname: gpu-a1, topology.kubernetes.io/rack: a}}
status: {allocatable: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8", hugepages-2Mi: 1Gi}}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-b1, labels: {kubernetes.io/hostname: gpu-b1, topology.kubernetes.io/rack: b}}
status: {allocatable: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8", hugepages-2Mi: 1Gi}}
"""

GANG = """
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train, namespace: ml}
spec:
  schedulingPolicy: {gang: {minCount: 1}}
"""


def pod(resources: str, *, name: str = "train-0", extra: str = "", init: bool = False) -> str:
    containers = "initContainers" if init else "containers"
    more = "\n  containers: [{name: main, resources: {requests: {cpu: '1'}}}]" if init else ""
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: ml}}
spec:
  schedulingGroup: {{podGroupName: train}}
  {containers}:
  - name: trainer
    resources: {resources}{more}
{extra}"""


def docs(*parts: str) -> str:
    return "\n---\n".join(textwrap.dedent(p).strip("\n") for p in parts) + "\n"


def run(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output + (result.stderr or "")
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    return result


# (id, resources of container 0, field after "Pod/ml/train-0: ", rule words)
RESOURCE_ROWS = [
    (
        "gpu 8Gi request beside limit 8",
        '{requests: {nvidia.com/gpu: 8Gi}, limits: {nvidia.com/gpu: "8"}}',
        "spec.containers[0].resources.requests[nvidia.com/gpu]",
        "must be equal to nvidia.com/gpu limit of 8",
    ),
    (
        "gpu 7.5",
        '{requests: {nvidia.com/gpu: "7.5"}, limits: {nvidia.com/gpu: "7.5"}}',
        "spec.containers[0].resources.limits[nvidia.com/gpu]",
        "must be an integer",
    ),
    (
        "gpu 7.5 as a limit only",
        "{limits: {nvidia.com/gpu: 7.5}}",
        "spec.containers[0].resources.limits[nvidia.com/gpu]",
        "must be an integer",
    ),
    (
        "gpu request 8 limit 4",
        '{requests: {nvidia.com/gpu: "8"}, limits: {nvidia.com/gpu: "4"}}',
        "spec.containers[0].resources.requests[nvidia.com/gpu]",
        "must be equal to nvidia.com/gpu limit of 4",
    ),
    (
        "cpu request 8 limit 4",
        '{requests: {cpu: "8"}, limits: {cpu: "4"}}',
        "spec.containers[0].resources.requests[cpu]",
        "must be less than or equal to cpu limit of 4",
    ),
    (
        "memory request above limit in other units",
        "{requests: {memory: 2Gi}, limits: {memory: 2000Mi}}",
        "spec.containers[0].resources.requests[memory]",
        "must be less than or equal to memory limit of 2000Mi",
    ),
    (
        "gpu request without a limit",
        '{requests: {cpu: "1", nvidia.com/gpu: "8"}}',
        "spec.containers[0].resources.limits[nvidia.com/gpu]",
        "Limit must be set for non overcommitable resources",
    ),
    (
        "hugepages request below its limit",
        "{requests: {memory: 1Gi, hugepages-2Mi: 2Mi}, limits: {hugepages-2Mi: 4Mi}}",
        "spec.containers[0].resources.requests[hugepages-2Mi]",
        "must be equal to hugepages-2Mi limit of 4Mi",
    ),
    (
        "hugepages not a multiple of the page size",
        "{limits: {memory: 1Gi, hugepages-2Mi: 3Mi}}",
        "spec.containers[0].resources.limits[hugepages-2Mi]",
        "is not positive integer multiple of hugepages-2Mi",
    ),
    (
        "hugepages without cpu or memory",
        "{limits: {hugepages-2Mi: 4Mi}}",
        "spec.containers[0].resources",
        "HugePages require cpu or memory",
    ),
    (
        "an unprefixed unknown resource name",
        '{requests: {gpu: "1"}}',
        "spec.containers[0].resources.requests[gpu]",
        "must be a standard resource type or fully qualified",
    ),
    (
        "a standard but non-container resource",
        '{requests: {pods: "1"}}',
        "spec.containers[0].resources.requests[pods]",
        "must be a standard resource for containers",
    ),
]


@pytest.mark.parametrize(
    ("resources", "field", "rule"),
    [r[1:] for r in RESOURCE_ROWS],
    ids=[r[0] for r in RESOURCE_ROWS],
)
def test_container_resources_the_api_server_refuses_are_bad_input(tmp_path, resources, field, rule):
    path = tmp_path / "job.yaml"
    path.write_text(docs(NODES, GANG, pod(resources)))
    with pytest.raises(SnapshotError) as info:
        load_snapshot(path)
    e = info.value
    assert (e.file, e.obj, e.field) == (str(path), "Pod/ml/train-0", field)
    assert rule in e.message and "API server refuses" in e.message
    for command in ("solve", "diff"):
        result = run(command, str(path))  # not only under --strict: the API server refuses the pod
        assert result.exit_code == 2, (command, result.output)
        assert (
            f"error: {path}: Pod/ml/train-0: {field}: " in result.stderr and rule in result.stderr
        )


def test_init_containers_and_overhead_are_checked_too(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(docs(NODES, GANG, pod('{requests: {nvidia.com/gpu: "2"}}', init=True)))
    with pytest.raises(SnapshotError) as info:
        load_snapshot(path)
    assert info.value.field == "spec.initContainers[0].resources.limits[nvidia.com/gpu]"
    assert "Limit must be set" in info.value.message
    path.write_text(
        docs(
            NODES, GANG, pod('{requests: {cpu: "1"}}', extra='  overhead: {nvidia.com/gpu: "0.5"}')
        )
    )
    with pytest.raises(SnapshotError) as info:
        load_snapshot(path)
    assert (
        info.value.field == "spec.overhead[nvidia.com/gpu]"
        and "must be an integer" in info.value.message
    )


@pytest.mark.parametrize(
    "resources",
    [
        '{limits: {nvidia.com/gpu: "8"}}',  # the request defaults to the limit
        '{requests: {nvidia.com/gpu: 8}, limits: {nvidia.com/gpu: "8"}}',
        '{requests: {nvidia.com/gpu: "8000m"}, limits: {nvidia.com/gpu: "8"}}',  # equal quantities, other spelling
        '{requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: "1", memory: 1024Mi}}',
        '{requests: {cpu: "1", example.kubernetes.io/thing: "0.5"}}',  # native (kubernetes.io/): may overcommit
        "{requests: {memory: 1Gi, hugepages-2Mi: 4Mi}, limits: {hugepages-2Mi: 4Mi}}",
    ],
)
def test_valid_requirements_still_load(tmp_path, resources):
    path = tmp_path / "job.yaml"
    path.write_text(docs(NODES, GANG, pod(resources)))
    load_snapshot(path)


# ---- hypothesis: gangplan against a re-statement of the API server's rules --------------------------
UNITS = {"": 1, "m": Fraction(1, 1000), "k": 1000, "M": 10**6, "Ki": 1024, "Mi": 2**20, "Gi": 2**30}
NAMES = ["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu", "example.com/foo", "hugepages-2Mi"]


@st.composite
def quantities(draw):
    whole = draw(st.integers(0, 20))
    frac = draw(st.sampled_from(["", ".5", ".25", ".001", ".9999", ".0"]))
    unit = draw(st.sampled_from(list(UNITS)))
    sign = draw(st.sampled_from(["", "", "", "-"]))
    text = f"{sign}{whole}{frac}{unit}"
    value = (Fraction(f"{whole}{frac}") if frac else Fraction(whole)) * UNITS[unit]
    return text, -value if sign else value


def api_server_accepts(
    name: str, request: tuple[str, Fraction] | None, limit: tuple[str, Fraction] | None
) -> bool:
    """The rules of validateResourceRequirements / ValidateResourceQuantityValue /
    IsOvercommitAllowed (kubernetes pkg/apis/core/validation, helper), stated again for one name."""
    extended = "/" in name and "kubernetes.io/" not in name
    no_overcommit = extended or name.startswith("hugepages-")
    for q in (request, limit):
        if q is None:
            continue
        v = q[1]
        if v < 0:
            return False
        if extended and math.ceil(v * 1000) % 1000:
            return False
        if name.startswith("hugepages-") and math.ceil(v) % (2 * 2**20):
            return False
    if request is None:
        return True
    if limit is None:
        return not no_overcommit
    return request[1] == limit[1] if no_overcommit else request[1] <= limit[1]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(NAMES), request=st.none() | quantities(), limit=st.none() | quantities()
)
def test_container_resource_decisions_agree_with_the_api_server_rules(name, request, limit):
    resources: dict = {}
    if request is not None:
        resources["requests"] = {name: request[0]}
    if limit is not None:
        resources["limits"] = {name: limit[0]}
    if name.startswith("hugepages-"):
        resources.setdefault("requests", {})["memory"] = "1Gi"
    node = {"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "1"}}}
    p = {
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "resources": resources}]},
    }
    try:
        load_objects([node, p])
        accepted = True
    except SnapshotError as e:
        assert e.obj == "Pod/default/p" and e.field.startswith("spec.containers[0].resources")
        accepted = False
    assert accepted == api_server_accepts(name, request, limit), (resources, accepted)


def test_the_issue_table_gpu_rows_by_hand():
    assert not api_server_accepts(
        "nvidia.com/gpu", ("8Gi", Fraction(8 * 2**30)), ("8", Fraction(8))
    )
    assert not api_server_accepts(
        "nvidia.com/gpu", ("7.5", Fraction(15, 2)), ("7.5", Fraction(15, 2))
    )
    assert not api_server_accepts("cpu", ("8", Fraction(8)), ("4", Fraction(4)))
    assert api_server_accepts("nvidia.com/gpu", None, ("8", Fraction(8)))


# ---- a topology key no node carries -------------------------------------------------------------
RACKED = """
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train, namespace: ml}
spec:
  schedulingPolicy: {gang: {minCount: 1}}
  schedulingConstraints: {topology: [{key: topology.kubernetes.io/racks}]}
"""


def test_a_topology_key_no_node_carries_is_named_with_the_closest_label_and_strict_refuses_it(
    tmp_path,
):
    path = tmp_path / "job.yaml"
    path.write_text(docs(NODES, RACKED, pod('{requests: {cpu: "1"}}')))
    cluster = load_snapshot(path)
    [warning] = [w for w in cluster.warnings if "topology key" in w]
    assert warning.startswith(
        'PodGroup/ml/train: spec.schedulingConstraints.topology[0].key: topology key "topology.kubernetes.io/racks" '
        'is not a label of any node in the snapshot, did you mean "topology.kubernetes.io/rack"?'
    )
    result = run("solve", str(path))
    assert result.exit_code != 2 and "topology.kubernetes.io/racks" in result.stderr
    for command in ("solve", "diff"):
        result = run(command, "--strict", str(path))
        assert result.exit_code == 2, (command, result.output)
        assert "PodGroup/ml/train: spec.schedulingConstraints.topology[0].key" in result.stderr
        assert 'did you mean "topology.kubernetes.io/rack"' in result.stderr


def test_the_right_topology_key_gives_no_warning(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(docs(NODES, RACKED.replace("racks", "rack"), pod('{requests: {cpu: "1"}}')))
    assert not [w for w in load_snapshot(path).warnings if "topology key" in w]


def test_a_kueue_required_topology_annotation_no_node_carries_is_named(tmp_path):
    path = tmp_path / "job.yaml"
    kueue = pod('{requests: {cpu: "1"}}', name="w-0").replace(
        "spec:\n  schedulingGroup: {podGroupName: train}\n", "spec:\n"
    )
    kueue = kueue.replace(
        "metadata: {name: w-0, namespace: ml}",
        "metadata:\n  name: w-0\n  namespace: ml\n  labels: {kueue.x-k8s.io/queue-name: q}\n"
        "  annotations: {kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/racks, "
        "kueue.x-k8s.io/workload: wl, kueue.x-k8s.io/podset: main}",
    )
    path.write_text(docs(NODES, kueue))
    cluster = load_snapshot(path)
    lines = [w for w in cluster.warnings if "topology key" in w]
    assert (
        lines
        and "topology.kubernetes.io/racks" in lines[0]
        and 'did you mean "topology.kubernetes.io/rack"' in lines[0]
    ), cluster.warnings
    assert "kueue.x-k8s.io/podset-required-topology" in lines[0] or "PodGroup/" in lines[0]
    assert run("solve", "--strict", str(path)).exit_code == 2


# ---- empty snapshots ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "content", ["", "\n", "---\n", "# only a comment\n", "[]\n", "kind: List\nitems: []\n"]
)
def test_an_empty_snapshot_file_is_bad_input(tmp_path, content):
    path = tmp_path / "snap.yaml"
    path.write_text(content)
    with pytest.raises(SnapshotError) as info:
        load_snapshot(path)
    assert info.value.file == str(path) and "no objects (no nodes)" in info.value.message
    for command in ("solve", "diff"):
        result = run(command, str(path))
        assert result.exit_code == 2 and f"error: {path}: no objects (no nodes)" in result.stderr


def test_a_directory_of_empty_files_is_bad_input(tmp_path):
    (tmp_path / "a.yaml").write_text("")
    (tmp_path / "b.json").write_text("[]")
    result = run("solve", str(tmp_path))
    assert result.exit_code == 2 and f"error: {tmp_path}: no objects (no nodes)" in result.stderr


def test_objects_without_a_node_load_unless_nodes_are_required(tmp_path):
    path = tmp_path / "snap.yaml"
    path.write_text(docs(GANG, pod('{requests: {cpu: "1"}}')))
    assert load_snapshot(path).nodes == ()  # as public API examples without nodes load
    with pytest.raises(SnapshotError) as info:
        load_snapshot(path, require_nodes=True)
    assert info.value.file == str(path) and info.value.message.startswith(
        "no nodes: the snapshot holds 2 objects but no Node"
    )


# ---- directory snapshots: empty, compressed and skipped files ---------------------------------------
def test_a_directory_names_its_empty_and_skipped_files_and_reads_gz(tmp_path):
    (tmp_path / "nodes.yaml").write_text(docs(NODES))
    (tmp_path / "empty.yaml").write_text("")
    with gzip.open(tmp_path / "job.yaml.gz", "wt") as f:
        f.write(docs(GANG, pod('{requests: {cpu: "1"}}')))
    with gzip.open(tmp_path / "more.json.gz", "wt") as f:
        f.write(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "train-1", "namespace": "ml"},
                    "spec": {
                        "schedulingGroup": {"podGroupName": "train"},
                        "containers": [{"name": "c"}],
                    },
                }
            )
        )
    (tmp_path / "dump.bin").write_bytes(b"\x00\x01binary")
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "README.md").write_text("# about this snapshot")
    cluster = load_snapshot(tmp_path)
    assert {p.key for p in cluster.pods} == {"ml/train-0", "ml/train-1"}
    assert str(tmp_path / "job.yaml.gz") in cluster.sources
    notes = "\n".join(cluster.warnings)
    assert f"{tmp_path / 'empty.yaml'}: empty" in notes
    assert (
        f"{tmp_path / 'dump.bin'}: skipped: not a snapshot file" in notes
        and "a .bin is not read" in notes
    )
    assert f"{tmp_path / 'notes.txt'}: skipped" in notes and "README" not in notes
    result = run("solve", str(tmp_path))
    assert result.exit_code in (0, 1, 3), result.output
    assert f"warning: {tmp_path / 'dump.bin'}: skipped" in result.stderr


def test_a_corrupt_gz_is_bad_input_naming_the_file(tmp_path):
    (tmp_path / "nodes.yaml").write_text(docs(NODES))
    (tmp_path / "job.yaml.gz").write_bytes(b"not gzip at all")
    result = run("solve", str(tmp_path))
    assert (
        result.exit_code == 2
        and f"error: {tmp_path / 'job.yaml.gz'}: not a readable gzip file" in result.stderr
    )


def test_a_single_gz_file_is_read(tmp_path):
    path = tmp_path / "snap.yaml.gz"
    with gzip.open(path, "wt") as f:
        f.write(docs(NODES, GANG, pod('{requests: {cpu: "1"}}')))
    assert len(load_snapshot(path).nodes) == 2
