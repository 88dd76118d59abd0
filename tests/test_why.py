"""Explanations a person can act on (issue 25 item 3): the default table names the taint or the
selector entry behind a rejection within 100 columns, ``--explain`` / ``gangplan why`` place a
gang pod in its gang's cycle and never say "not evaluated" of a pod that was."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

import gangplan as gp
from gangplan.cli import app
from gangplan.solver.blockers import details

ROOT = Path(__file__).resolve().parents[1]
WHY = ROOT / "scenarios" / "tutorials" / "why-pending.yaml"
DRIVER = ROOT / "scenarios" / "showcase" / "driver-without-selector.yaml"

RUN = CliRunner(env={"COLUMNS": "100"})


def test_the_default_table_names_the_taint_within_100_columns():
    out = RUN.invoke(app, ["solve", str(WHY)])
    assert out.exit_code == 0, out.output
    row = next(line for line in out.stdout.splitlines() if line.startswith("ml/train"))
    assert len(row) <= 100 and "0/2 nodes: taint nvidia.com/gpu=present:NoSchedule" in row


def test_the_blockers_come_from_the_same_predicates_as_the_rejection():
    cluster = gp.load(WHY)
    result = gp.solve(cluster)
    assert gp.validate(cluster, result) == []
    assert details(cluster, cluster.pod_by_key["ml/train-0"]) == {
        "node(s) had untolerated taint(s)": "taint nvidia.com/gpu=present:NoSchedule"
    }
    driver = gp.load(DRIVER)
    assert gp.validate(driver, gp.solve(driver)) == []
    found = details(driver, driver.pod_by_key["ray/worker-1"])
    assert found["node(s) didn't match Pod's node affinity/selector"].startswith(
        "needs pool=gpu on 1 of 3"
    )


def test_why_places_each_gang_pod_in_its_gangs_cycle():
    first = RUN.invoke(app, ["why", str(WHY), "train-0"])
    assert first.exit_code == 0, first.output
    flat = " ".join(first.stdout.split())
    assert "evaluated as pod 1 of 2 in the gang's cycle" in flat
    assert (
        "rejected by TaintToleration: 2 x node(s) had untolerated taint(s) (taint nvidia.com/gpu=present:NoSchedule)"
        in flat
    )
    second = RUN.invoke(app, ["why", str(WHY), "ml/train-1"])
    assert second.exit_code == 0, second.output
    text = " ".join(second.stdout.split())
    assert (
        "not evaluated: the gang's cycle stopped after ml/train-0 failed (0/2 nodes: taint nvidia.com/gpu=present:NoSchedule)"
        in text
    )
    assert "gated, or its group failed validation" not in text
    # the short form says what solve --explain says
    explained = RUN.invoke(app, ["solve", str(WHY), "--explain", "ml/train-1"])
    assert second.stdout in explained.stdout


def test_why_names_the_gate_of_a_gated_pod(write_text):
    path = write_text("""
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: held, namespace: ml}
spec:
  schedulingGates: [{name: example.com/quota}]
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
""")
    out = RUN.invoke(app, ["why", str(path), "held"])
    assert out.exit_code == 0, out.output
    assert "not evaluated: gated at PreEnqueue" in out.stdout and "example.com/quota" in out.stdout


def test_why_refuses_a_pod_that_is_not_pending_naming_the_argument():
    out = RUN.invoke(app, ["why", str(WHY), "nope"])
    assert out.exit_code == 2 and "POD: 'nope' is not a pending pod" in out.stderr


def test_the_diff_says_when_the_decisive_choice_was_a_random_tie():
    """The gang's node is a tie between two equal nodes, broken inside workload-aware preemption's
    simulation; the pod binds later on its nominated node (rule W of issue 39), so the binding
    cycle has no tie: the note names the simulation's (``simulationTied``), and the samples say
    how often the draw reaches the optimum. (A decisive tie that the binding cycle itself breaks
    is named: test_honest_verdicts.py.)"""
    from gangplan.render import tie_note

    path = ROOT / "scenarios" / "showcase" / "preempt-one-gang-not-five.yaml"
    cluster = gp.load(path)
    d = gp.diff(cluster, samples=10)
    assert gp.validate(cluster, d.greedy) == [] and gp.validate(cluster, d.optimal) == []
    assert d.samples is not None and 0 < d.samples.reaches_target < d.samples.runs
    note = tie_note(d)
    assert note == (
        "a tie inside the workload-aware preemption for ml/train, whose simulation chose the "
        "nodes and so the victims: kube-scheduler breaks it at random; greedy reaches the optimum "
        f"in {d.samples.reaches_target} of 10 runs"
    )
    out = RUN.invoke(app, ["diff", str(path), "--samples", "10"])
    text = " ".join(out.stdout.split())
    assert "a tie among 2 nodes" not in text
    assert "the decisive choice was " + note in text
    assert f"optimum in {d.samples.reaches_target}/10" in text
    # a decisive choice that was no tie says nothing of the kind
    gb200 = gp.load(ROOT / "scenarios" / "showcase" / "tas-nvl72-fragmentation.yaml")
    assert tie_note(gp.diff(gb200)) is None
