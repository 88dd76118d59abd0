"""Kueue's admission cycle (gangplan.solver.kueue.admit) against Kueue's own scheduler test table:
``TestSchedule`` in kubernetes-sigs/kueue ``pkg/scheduler/scheduler_test.go`` at v0.19.2, ported
case by case into tests/fixtures/upstream_kueue_schedule/schedule.yaml (written by ``port.py``
there; the objects as the API server holds them).

Each case runs what the Go test runs: the shared objects of the table (namespaces, flavors,
ClusterQueues, LocalQueues) and the case's own, then ONE scheduling cycle
(``scheduler.schedule(ctx)`` once: ``admit(cluster, max_cycles=1)``), and compares

* ``wantAssignments``: every Workload holding quota after the cycle (those admitted before it,
  as recorded, and those this cycle admitted), with its ClusterQueue and, per PodSet, its flavors
  (and count where the Go names one);
* ``wantLeft`` / ``wantInadmissibleLeft``: the Workloads left in each ClusterQueue's heap and
  parked as inadmissible (:attr:`Admission.queued`, :attr:`Admission.inadmissible`; compared as
  sets, as the Go's ``cmpDump`` sorts them);
* the QuotaReserved=False message ``wantWorkloads`` gives a pending Workload, against gangplan's
  reason for it (without the note gangplan adds where the ClusterQueue could preempt: "Kueue's
  preemption is not modelled").

The cases Kueue's table has and gangplan cannot run (preemption, admission checks, ...) are listed
in the fixture's ``left_out`` with the reason; ``table_names`` is the table's every case name as
the Go source has it, and every one is either ported or left out.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from gangplan.io.loader import load_snapshot
from gangplan.solver.kueue.admit import PREEMPTION_NOT_MODELLED, admit

FIXTURES = Path(__file__).parent / "fixtures" / "upstream_kueue_schedule"
TABLE = yaml.safe_load((FIXTURES / "schedule.yaml").read_text())
CASES = TABLE["cases"]
MIRROR = Path("/work/.mirror/kubernetes-sigs+kueue/repo")


def _run(tmp_path: Path, case: dict):
    path = tmp_path / "snapshot.yaml"
    path.write_text(yaml.safe_dump_all(TABLE["base"] + case["objects"], sort_keys=False))
    cluster = load_snapshot(path)
    return cluster, admit(cluster, max_cycles=1)


def _podsets(podsets, counts: dict[str, int]) -> list[dict]:
    """A recorded assignment without ``count`` is for the PodSet's count (``ptr.Deref(psa.Count,
    ps.Count)`` where Kueue reads one)."""
    return [
        {"name": p.name, "flavors": dict(p.flavors), "count": p.count or counts.get(p.name)}
        for p in podsets
    ]


def _assignments(cluster, adm) -> dict:
    """Every Workload holding quota after the cycle, as ``wantAssignments`` reads the cache."""
    out = {}
    for key, wl in cluster.kueue.workloads.items():
        if wl.admission is not None and not wl.finished:
            counts = {ps.name: ps.count for ps in wl.podsets}
            out[key] = (wl.admission.cluster_queue, _podsets(wl.admission.podsets, counts))
    for key, podsets in adm.admitted.items():
        o = adm.outcome.workloads[key]
        assert o.cycle == 1
        out[key] = (o.cluster_queue, _podsets(podsets, {}))
    return out


def _matches(want: dict, got: tuple) -> bool:
    cq, podsets = got
    if want["clusterQueue"] != cq or len(want["podSets"]) != len(podsets):
        return False
    for w, g in zip(want["podSets"], podsets, strict=True):
        if w["name"] != g["name"] or w["flavors"] != g["flavors"]:
            return False
        if "count" in w and w["count"] != g["count"]:
            return False
    return True


@pytest.mark.parametrize("case", CASES, ids=[f"L{c['line']}" for c in CASES])
def test_upstream_schedule(case: dict, tmp_path: Path) -> None:
    cluster, adm = _run(tmp_path, case)
    # every object read as Kueue reads it, no field left unread; a ClusterQueue's preemption
    # policy is named (not modelled), and none of these cases needs it
    assert all("spec.preemption" in w for w in cluster.warnings), cluster.warnings
    want = case["expect"]
    got = _assignments(cluster, adm)
    assert sorted(got) == sorted(want["assignments"]), case["name"]
    for key, w in want["assignments"].items():
        assert _matches(w, got[key]), (case["name"], key, got[key])
    assert {q: sorted(ks) for q, ks in adm.queued.items()} == {
        q: sorted(ks) for q, ks in want["left"].items()
    }, case["name"]
    assert {q: sorted(ks) for q, ks in adm.inadmissible.items()} == {
        q: sorted(ks) for q, ks in want["inadmissible"].items()
    }, case["name"]
    for key, message in want["messages"].items():
        o = adm.outcome.workloads[key]
        reason = (o.reason or "").removesuffix(f"; {PREEMPTION_NOT_MODELLED}")
        assert not o.admitted and reason == message, (case["name"], key, o.reason)


def test_ported_and_left_out_cover_the_table() -> None:
    names = [n["name"] for n in TABLE["table_names"]]
    ported = [c["name"] for c in CASES]
    left_out = [c["name"] for c in TABLE["left_out"]]
    assert len(names) == len(set(names)) == 65
    assert not set(ported) & set(left_out)
    assert sorted(ported + left_out) == sorted(names)
    assert all(c["reason"] for c in TABLE["left_out"])
    lines = {n["name"]: n["line"] for n in TABLE["table_names"]}
    assert all(lines[c["name"]] == c["line"] for c in CASES)
    assert len(ported) >= 25


def test_table_names_are_the_go_source_s() -> None:
    """``table_names`` against the Go file itself, read from the Kueue mirror when this machine
    has it, else against the names and lines ``port.py`` recorded from it (the same check, one
    step removed)."""
    src = TABLE["source"]
    if (MIRROR / "HEAD").exists():
        text = subprocess.run(
            ["git", "-C", str(MIRROR), "show", f"{src['tag']}:{src['file']}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        lines = text.splitlines()
    else:
        lines = []
        for n in TABLE["table_names"]:
            lines += [""] * (n["line"] - 1 - len(lines)) + ["\t\t" + _go_string(n["name"]) + ": {"]
        lines = ["func TestSchedule(t *testing.T) {", *lines[1:], "func TestEntryOrdering("]
    start = next(i for i, ln in enumerate(lines) if ln.startswith("func TestSchedule(t"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("func "))
    found = [
        {"name": ln[3:-4].replace('\\"', '"'), "line": i + 1}
        for i, ln in enumerate(lines[start:end], start)
        if ln.startswith('\t\t"') and ln.endswith('": {')
    ]
    assert found == TABLE["table_names"]


def _go_string(s: str) -> str:
    return '"' + s.replace('"', '\\"') + '"'


def test_one_cycle_leaves_the_rest_queued(tmp_path: Path) -> None:
    """``max_cycles`` stops after the first cycle: the next Workload of a ClusterQueue whose
    head was admitted is still queued, and a full run admits it in cycle 2."""
    case = next(c for c in CASES if c["name"] == "admit in different cohorts")
    extra = yaml.safe_load(
        """
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: Workload
        metadata: {name: second, namespace: sales, creationTimestamp: "2026-01-01T00:00:05Z"}
        spec:
          queueName: main
          podSets:
          - name: one
            count: 1
            template:
              spec:
                containers:
                - name: c
                  resources: {requests: {cpu: "1"}}
        """
    )
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump_all(TABLE["base"] + case["objects"] + [extra]))
    cluster = load_snapshot(path)
    one = admit(cluster, max_cycles=1)
    assert one.queued == {"sales": ["sales/second"]} and "sales/second" not in one.admitted
    assert "sales/second" not in one.outcome.workloads
    full = admit(cluster)
    assert full.outcome.workloads["sales/second"].cycle == 2 and full.queued == {}


def test_partial_admission_releases_only_the_admitted_pods(tmp_path: Path) -> None:
    """A Workload admitted partly (upstream case "partial admission single variable pod set": 25
    of 50 pods) has 25 pods released for kube-scheduler; the rest stay held."""
    case = next(c for c in CASES if c["name"] == "partial admission single variable pod set")
    cluster, adm = _run(tmp_path, case)
    (ps,) = adm.admitted["sales/new"]
    assert ps.count == 25
    wl = cluster.kueue.workloads["sales/new"]
    pods = set(wl.podsets[0].pods)
    assert len(pods) == 50 and pods <= set(cluster.gated)
    assert len(pods - set(adm.cluster.gated)) == 25


def test_partial_admission_validates_with_the_admitted_counts(tmp_path: Path) -> None:
    """The greedy engine on that case with a node: 25 pods placed, and the validator books the
    admitted 25 pods' quota (50 cpu, the ClusterQueue's nominal), not the PodSet's 50."""
    import gangplan as gp
    from gangplan.solver.validate import validate

    case = next(c for c in CASES if c["name"] == "partial admission single variable pod set")
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "200", "memory": "100Gi", "pods": "110"}},
    }
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump_all(TABLE["base"] + case["objects"] + [node]))
    cluster = load_snapshot(path)
    result = gp.solve(cluster, "greedy")
    assert result.kueue.workloads["sales/new"].admitted
    assert sum(1 for po in result.pods.values() if po.node) == 25
    assert validate(cluster, result) == []
