"""Dangling references (issue 25 item 2): a pod that names a pod group the snapshot does not hold
stays Pending, gated at PreEnqueue as kube-scheduler keeps it, is listed under its group name in
the tables and the Result, with a warning that suggests the closest name; ``--strict`` exits 2."""

from __future__ import annotations

from typer.testing import CliRunner

import gangplan as gp
from gangplan.cli import app

SNAPSHOT = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train, namespace: ml}
spec:
  schedulingPolicy: {gang: {minCount: 1}}
---
apiVersion: v1
kind: Pod
metadata: {name: w-0, namespace: ml}
spec:
  schedulingGroup: {podGroupName: trian}
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
"""

RUN = CliRunner(env={"COLUMNS": "100"})


def test_a_misspelled_pod_group_keeps_the_pod_pending_listed_under_its_group(write_text):
    path = write_text(SNAPSHOT)
    cluster = gp.load(path)
    warning = 'Pod/ml/w-0: its pod group ml/trian is not in the snapshot, did you mean "train"?'
    assert any(w.startswith(warning) for w in cluster.warnings)
    assert cluster.gated["ml/w-0"] == "waiting for pod group ml/trian"
    for engine in ("greedy", "exact"):
        r = gp.solve(cluster, engine=engine)
        assert gp.validate(cluster, r) == []
        row = r.groups["ml/trian"]
        assert (row.admitted, row.placed, row.pending) == (False, 0, 1)
        assert row.reason.startswith("gated at PreEnqueue: waiting for pod group ml/trian")
        assert r.pods["ml/w-0"].node is None
        assert any(w.startswith(warning) for w in r.warnings)
    solved = RUN.invoke(app, ["solve", str(path)])
    assert (
        solved.exit_code == 0
        and "ml/trian" in solved.stdout
        and "gated at PreEnqueue" in solved.stdout
    )
    assert warning in solved.stderr
    diffed = RUN.invoke(app, ["diff", str(path)])
    assert diffed.exit_code == 0 and "ml/trian" in diffed.stdout


def test_strict_refuses_a_dangling_reference(write_text):
    path = write_text(SNAPSHOT)
    for command in ("solve", "diff"):
        out = RUN.invoke(app, [command, str(path), "--strict"])
        assert out.exit_code == 2, out.output
        assert (
            "reference(s) to objects not in the snapshot" in out.stderr
            and 'did you mean "train"' in out.stderr
        )


def test_a_pod_group_under_a_misspelled_apiversion_leaves_its_pods_listed(write_text):
    path = write_text(
        SNAPSHOT.replace("podGroupName: trian", "podGroupName: train").replace(
            "scheduling.k8s.io/v1beta1", "schedulng.k8s.io/v1beta1"
        )
    )
    out = RUN.invoke(app, ["solve", str(path)])
    assert out.exit_code == 0, out.output
    assert "ml/train" in out.stdout and "gated at PreEnqueue" in out.stdout
    assert 'did you mean apiVersion "scheduling.k8s.io/v1beta1"' in out.stderr


def test_a_missing_priority_class_is_bad_input_with_the_closest_name(write_text):
    path = write_text(
        SNAPSHOT.replace(
            "  schedulingGroup: {podGroupName: trian}\n", "  priorityClassName: hihg\n"
        )
        + """---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""
    )
    out = RUN.invoke(app, ["solve", str(path)])
    assert out.exit_code == 2
    assert (
        "Pod/ml/w-0: spec.priorityClassName: PriorityClass 'hihg' not found in the snapshot, did you mean \"high\"?"
        in out.stderr
    )
