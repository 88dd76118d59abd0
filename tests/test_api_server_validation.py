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
from pathlib import Path

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
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result


# (id, resources of container 0, field after "Pod/ml/train-0: ", rule words)
RESOURCE_ROWS = [
    ("gpu 8Gi request beside limit 8", '{requests: {nvidia.com/gpu: 8Gi}, limits: {nvidia.com/gpu: "8"}}',
     "spec.containers[0].resources.requests[nvidia.com/gpu]", "must be equal to nvidia.com/gpu limit of 8"),
    ("gpu 7.5", '{requests: {nvidia.com/gpu: "7.5"}, limits: {nvidia.com/gpu: "7.5"}}',
     "spec.containers[0].resources.limits[nvidia.com/gpu]", "must be an integer"),
    ("gpu 7.5 as a limit only", '{limits: {nvidia.com/gpu: 7.5}}',
     "spec.containers[0].resources.limits[nvidia.com/gpu]", "must be an integer"),
    ("gpu request 8 limit 4", '{requests: {nvidia.com/gpu: "8"}, limits: {nvidia.com/gpu: "4"}}',
     "spec.containers[0].resources.requests[nvidia.com/gpu]", "must be equal to nvidia.com/gpu limit of 4"),
    ("cpu request 8 limit 4", '{requests: {cpu: "8"}, limits: {cpu: "4"}}',
     "spec.containers[0].resources.requests[cpu]", "must be less than or equal to cpu limit of 4"),
    ("memory request above limit in other units", '{requests: {memory: 2Gi}, limits: {memory: 2000Mi}}',
     "spec.containers[0].resources.requests[memory]", "must be less than or equal to memory limit of 2000Mi"),
    ("gpu request without a limit", '{requests: {cpu: "1", nvidia.com/gpu: "8"}}',
     "spec.containers[0].resources.limits[nvidia.com/gpu]", "Limit must be set for non overcommitable resources"),
    ("hugepages request below its limit", '{requests: {memory: 1Gi, hugepages-2Mi: 2Mi}, limits: {hugepages-2Mi: 4Mi}}',
     "spec.containers[0].resources.requests[hugepages-2Mi]", "must be equal to hugepages-2Mi limit of 4Mi"),
    ("hugepages not a multiple of the page size", '{limits: {memory: 1Gi, hugepages-2Mi: 3Mi}}',
     "spec.containers[0].resources.limits[hugepages-2Mi]", "is not positive integer multiple of hugepages-2Mi"),
    ("hugepages without cpu or memory", '{limits: {hugepages-2Mi: 4Mi}}',
     "spec.containers[0].resources", "HugePages require cpu or memory"),
    ("an unprefixed unknown resource name", '{requests: {gpu: "1"}}',
     "spec.containers[0].resources.requests[gpu]", "must be a standard resource type or fully qualified"),
    ("a standard but non-container resource", '{requests: {pods: "1"}}',
     "spec.containers[0].resources.requests[pods]", "must be a standard resource for containers"),
]


@pytest.mark.parametrize(("resources", "field", "rule"), [r[1:] for r in RESOURCE_ROWS], ids=[r[0] for r in RESOURCE_ROWS])
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
        assert f"error: {path}: Pod/ml/train-0: {field}: " in result.stderr and rule in result.stderr


def test_init_containers_and_overhead_are_checked_too(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(docs(NODES, GANG, pod('{requests: {nvidia.com/gpu: "2"}}', init=True)))
    with pytest.raises(SnapshotError) as info:
        load_snapshot(path)
    assert info.value.field == "spec.initContainers[0].resources.limits[nvidia.com/gpu]"
    assert "Limit must be set" in info.value.message
    path.write_text(docs(NODES, GANG, pod('{requests: {cpu: "1"}}', extra='  overhead: {nvidia.com/gpu: "0.5"}')))
    with pytest.raises(SnapshotError) as info:
        load_snapshot(path)
    assert info.value.field == "spec.overhead[nvidia.com/gpu]" and "must be an integer" in info.value.message


@pytest.mark.parametrize("resources", [
    '{limits: {nvidia.com/gpu: "8"}}',                                   # the request defaults to the limit
    '{requests: {nvidia.com/gpu: 8}, limits: {nvidia.com/gpu: "8"}}',
    '{requests: {nvidia.com/gpu: "8000m"}, limits: {nvidia.com/gpu: "8"}}',  # equal quantities, other spelling
    '{requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: "1", memory: 1024Mi}}',
    '{requests: {cpu: "1", example.kubernetes.io/thing: "0.5"}}',         # native (kubernetes.io/): may overcommit
    '{requests: {memory: 1Gi, hugepages-2Mi: 4Mi}, limits: {hugepages-2Mi: 4Mi}}',
])
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


def api_server_accepts(name: str, request: tuple[str, Fraction] | None, limit: tuple[str, Fraction] | None) -> bool:
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
@given(name=st.sampled_from(NAMES), request=st.none() | quantities(), limit=st.none() | quantities())
def test_container_resource_decisions_agree_with_the_api_server_rules(name, request, limit):
    resources: dict = {}
    if request is not None:
        resources["requests"] = {name: request[0]}
    if limit is not None:
        resources["limits"] = {name: limit[0]}
    if name.startswith("hugepages-"):
        resources.setdefault("requests", {})["memory"] = "1Gi"
    node = {"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "1"}}}
    p = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": resources}]}}
    try:
        load_objects([node, p])
        accepted = True
    except SnapshotError as e:
        assert e.obj == "Pod/default/p" and e.field.startswith("spec.containers[0].resources")
        accepted = False
    assert accepted == api_server_accepts(name, request, limit), (resources, accepted)


def test_the_issue_table_gpu_rows_by_hand():
    assert not api_server_accepts("nvidia.com/gpu", ("8Gi", Fraction(8 * 2**30)), ("8", Fraction(8)))
    assert not api_server_accepts("nvidia.com/gpu", ("7.5", Fraction(15, 2)), ("7.5", Fraction(15, 2)))
    assert not api_server_accepts("cpu", ("8", Fraction(8)), ("4", Fraction(4)))
    assert api_server_accepts("nvidia.com/gpu", None, ("8", Fraction(8)))
