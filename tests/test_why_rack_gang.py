"""``why`` on a rack-held gang (issue 41): a PodGroup with ``schedulingConstraints.topology`` on a
rack label (KEP-5732). ``why`` lists every placement (rack) tried for the pod's gang with its
verdict and score, says which one was chosen and why (the only feasible one, the highest total,
or the tie rule), and never prints ``chosen: <node>`` for a pod that was not placed in the end."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from gangplan.cli import app

RUN = CliRunner(env={"COLUMNS": "100"})

RACK = "topology.kubernetes.io/rack"


def _node(name: str, rack: str) -> str:
    return f"""apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels: {{kubernetes.io/hostname: {name}, {RACK}: {rack}}}
status:
  allocatable: {{cpu: "32", memory: 128Gi, pods: "110", nvidia.com/gpu: "8"}}
"""


def _busy(node: str, gpus: int, cpu: int = 1) -> str:
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: busy-{node}, namespace: other, creationTimestamp: "2026-11-30T08:00:00Z"}}
spec:
  nodeName: {node}
  containers: [{{name: w, resources: {{requests: {{cpu: "{cpu}", nvidia.com/gpu: "{gpus}"}}, limits: {{nvidia.com/gpu: "{gpus}"}}}}}}]
status: {{phase: Running}}
"""


def _gang(n: int, gpus: int = 8) -> list[str]:
    docs = [
        f"""apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {{name: train, namespace: ml, creationTimestamp: "2026-11-30T09:00:01Z"}}
spec:
  schedulingPolicy:
    gang: {{minCount: {n}}}
  schedulingConstraints:
    topology: [{{key: {RACK}}}]
"""
    ]
    for i in range(n):
        docs.append(f"""apiVersion: v1
kind: Pod
metadata: {{name: train-{i}, namespace: ml, creationTimestamp: "2026-11-30T09:00:01Z"}}
spec:
  schedulingGroup: {{podGroupName: train}}
  containers: [{{name: w, resources: {{requests: {{cpu: "1", nvidia.com/gpu: "{gpus}"}}, limits: {{nvidia.com/gpu: "{gpus}"}}}}}}]
""")
    return docs


NODES = [_node(f"gpu-a{i}", "rack-a") for i in (1, 2, 3)] + [
    _node(f"gpu-b{i}", "rack-b") for i in (1, 2, 3)
]


def _write(tmp_path: Path, name: str, docs: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("---\n".join(docs))
    return path


def _why(path: Path, pod: str, *extra: str) -> str:
    res = RUN.invoke(app, ["why", str(path), pod, *extra])
    assert res.exit_code == 0, res.output
    return res.stdout


def _flat(text: str) -> str:
    return " ".join(text.split())


def _placement(flat: str, rack: str) -> str:
    m = re.search(rf"placement {rack} \(3 nodes\): (.*?)(?= placement | chosen placement:)", flat)
    assert m, flat
    return m.group(1)


def test_a_rejected_gang_lists_every_rack_and_no_chosen_node(tmp_path):
    # a full node in each rack: 2 free 8-GPU nodes per rack, the gang needs 3
    path = _write(
        tmp_path, "rejected.yaml", NODES + [_busy("gpu-a1", 8), _busy("gpu-b1", 8)] + _gang(3)
    )
    out = _why(path, "ml/train-1")
    flat = _flat(out)
    assert (
        "placements tried for group ml/train (topology.kubernetes.io/rack): 2 evaluated of 2 generated"
        in flat
    )
    for rack in ("rack-a", "rack-b"):
        line = _placement(flat, rack)
        assert line.startswith(
            "Unschedulable: PodGroup ml/train: minCount 3 not reached (2 of 3 pods schedulable)"
        ), line
        assert "Insufficient nvidia.com/gpu" in line and "not scored (failed)" in line
    assert (
        "chosen placement: none; none of the 2 placement(s) held the whole gang, so the gang was rejected"
        in flat
    )
    # the pod's cycle picked a node in one rack's trial, but nothing was kept: never "chosen: <node>"
    assert not re.search(r"^\s*chosen: ", out, re.M), out
    assert re.search(
        r"not placed: its cycle in placement rack-[ab] picked gpu-[ab]\d, but the gang was rejected: no placement held it, so nothing was kept",
        flat,
    ), flat
    # solve --explain shares the code
    explained = RUN.invoke(app, ["solve", str(path), "--explain", "ml/train-1"])
    assert explained.exit_code == 0 and out in explained.stdout
    # and why --json carries the same lines
    doc = json.loads(RUN.invoke(app, ["why", str(path), "ml/train-1", "--json"]).stdout)
    assert doc["placements"][-1].startswith("chosen placement: none")
    assert len([line for line in doc["placements"] if line.startswith("placement rack-")]) == 2


def test_an_admitted_gang_takes_the_only_rack_that_holds_it(tmp_path):
    # rack-b has a full node: only rack-a holds 3 pods of 8 GPUs
    path = _write(tmp_path, "admitted.yaml", NODES + [_busy("gpu-b1", 8)] + _gang(3))
    out = _why(path, "ml/train-1")
    flat = _flat(out)
    assert (
        _placement(flat, "rack-a")
        == "feasible, 3 pod(s) proposed; not scored (the only feasible placement)"
    )
    b = _placement(flat, "rack-b")
    assert (
        b.startswith("Unschedulable: PodGroup ml/train: minCount 3 not reached")
        and "not scored (failed)" in b
    )
    assert "chosen placement: rack-a, the only feasible placement, chosen without scoring" in flat
    node = re.search(r"^  chosen: (gpu-a\d)$", out, re.M)
    assert node, out
    assert out.splitlines()[0] == f"ml/train-1: -> {node.group(1)}"
    assert "(its cycle in placement rack-a)" in flat


def test_the_highest_scored_rack_wins_and_says_by_how_much(tmp_path):
    # both racks hold 2 pods; rack-b is fuller (cpu), so PlacementBinPacking prefers it
    path = _write(tmp_path, "scored.yaml", NODES + [_busy("gpu-b1", 4, cpu=24)] + _gang(2))
    flat = _flat(_why(path, "ml/train-0"))
    a, b = _placement(flat, "rack-a"), _placement(flat, "rack-b")
    score = re.compile(
        r"feasible, 2 pod\(s\) proposed; score (\d+) \(PlacementBinPacking \d+, PodGroupPodsCount 100\)"
    )
    ta, tb = int(score.fullmatch(a).group(1)), int(score.fullmatch(b).group(1))
    assert tb > ta
    assert f"chosen placement: rack-b, the highest total score, {tb} (next: rack-a, {ta})" in flat


def test_a_tie_between_racks_names_the_tie_rule(tmp_path):
    path = _write(tmp_path, "tie.yaml", NODES + _gang(2))
    flat = _flat(_why(path, "ml/train-0"))
    assert _placement(flat, "rack-a") == _placement(flat, "rack-b")
    assert re.search(
        r"chosen placement: rack-a, a tie: rack-a, rack-b share the highest total score \d+; "
        r"the earliest in generation order wins \(--tie-break first\)",
        flat,
    ), flat
    seeded = _flat(_why(path, "ml/train-0", "--tie-break", "random", "--seed", "3"))
    assert re.search(
        r"chosen placement: rack-[ab], a tie: rack-a, rack-b share the highest total score \d+; "
        r"kube-scheduler picks one at random; here drawn from seed 3 \(--tie-break random\)",
        seeded,
    ), seeded
