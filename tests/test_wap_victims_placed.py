"""Rule V of issue 39: pods placed during the run are preemption victims, per version.

Upstream, every preemption lists its candidates from the pods of the scheduler snapshot's
``NodeInfo`` objects: ``newDomainForWorkloadPreemption`` / ``getCrossNodesVictims``
(``pkg/scheduler/framework/preemption/podgrouppreemption.go`` @00f22436be96,
``framework/preemption/types.go`` @06e67ba2130d) for workload-aware preemption (v1.36+), and
``SelectVictimsOnNode`` (``plugins/defaultpreemption/default_preemption.go``) for a single pod and
for v1.35's gang pods; a candidate's priority must be strictly below the preemptor's
(``isPreemptionAllowed``). A ``NodeInfo`` holds every pod the scheduler assumed or bound
(``cacheImpl.AssumePod`` / ``AddPod`` → ``NodeInfo.AddPod``, ``pkg/scheduler/backend/cache/cache.go``
@037891575693), so a pod placed earlier in the run is a candidate like a pod bound in the input.
All candidates are removed before the simulation, so a group whose required affinity needs one of
them finds that preemption cannot help.

The snapshots are hand-made (tests/fixtures/wap_victims_placed/, each file derives its outcome
from the code above). Every Result goes through the validator. A pending pod placed and then
evicted is in ``Result.victims``, placed nowhere, with a reason naming its node and the preemptor;
the objective's disruption tiers count only the snapshot's bound victims.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gangplan.io.loader import load_objects, load_snapshot
from gangplan.models.objective import VICTIM_PODS, snapshot_victims
from gangplan.models.result import Status
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.greedy.preemption import Preemption
from gangplan.solver.outcome import build_result
from gangplan.solver.validate import validate

HAND = Path(__file__).resolve().parent / "fixtures" / "wap_victims_placed"
VERSIONS = ["1.35", "1.36", "1.37"]
LOW = ["default/l1", "default/l2"]


def _solve(name: str, version: str, **kw):
    cluster = load_snapshot(HAND / name, kube_version=version)
    result = solve_greedy(cluster, **kw)
    assert [str(v) for v in validate(cluster, result)] == []
    return cluster, result


def _nodes(r) -> dict[str, str | None]:
    return {k: o.node for k, o in r.pods.items()}


@pytest.mark.parametrize("version", VERSIONS)
def test_a_gang_placed_earlier_is_evicted_by_a_later_higher_priority_gang(version: str) -> None:
    """high fails until anchor binds; low fills node1 before high's retry; the retry evicts low's
    pods, placed during the run (workload-aware preemption from v1.36, each gang pod's own
    DefaultPreemption at v1.35) and high binds beside anchor."""
    cluster, r = _solve("gang-evicts-gang-placed-earlier.yaml", version)
    assert sorted(r.victims) == LOW
    assert _nodes(r) == {
        "default/anchor": "node1",
        "default/h1": "node1",
        "default/h2": "node1",
        "default/l1": None,
        "default/l2": None,
    }
    assert r.groups["default/high"].admitted and not r.groups["default/low"].admitted
    assert r.groups["default/low"].placed == 0
    by = "pod:default/h" if version == "1.35" else "default/high"
    for k in LOW:
        assert r.pods[k].reason.startswith("placed on node node1, then evicted: a victim of the")
        assert by in r.pods[k].reason
    assert r.greedy_trace.pods["default/l1"].chosen == "node1"
    assert not r.greedy_trace.pods["default/l1"].kept
    if version == "1.35":  # one low pod for each gang pod's own preemption
        pre = r.greedy_trace.preemption
        assert sorted(pre["pod:default/h1"].victims + pre["pod:default/h2"].victims) == LOW
    else:
        t = r.greedy_trace.preemption["default/high"]
        assert t.status == "Success" and sorted(t.candidates) == ["pod:" + k for k in LOW]
        assert sorted(t.victims) == LOW
    # the disruption tiers count the snapshot's bound victims only: none here
    assert snapshot_victims(cluster, r.victims) == []
    assert VICTIM_PODS not in r.objective or r.objective[VICTIM_PODS] == 0


@pytest.mark.parametrize("version", VERSIONS)
def test_a_single_pod_preempts_a_pod_placed_earlier(version: str) -> None:
    _, r = _solve("pod-evicts-pod-placed-earlier.yaml", version)
    assert r.victims == ["default/low"]
    assert _nodes(r) == {"default/anchor": "node1", "default/high": "node1", "default/low": None}
    t = r.greedy_trace.preemption["pod:default/high"]
    assert t.status == "Success" and t.candidates == ["pod:default/low"]
    assert t.chosen == "node1" and t.victims == ["default/low"]
    (retry,) = r.greedy_trace.requeues
    assert retry.trigger == "AssignedPodAdd default/anchor (node1)" and retry.outcome == "Success"


@pytest.mark.parametrize("version", VERSIONS)
def test_a_group_whose_affinity_needs_a_candidate_finds_preemption_cannot_help(
    version: str,
) -> None:
    """anchor has low's priority: it is a candidate, removed with l1 and l2 before the simulation,
    so high's required affinity fails there; nothing is evicted (evicting l1 alone would fit)."""
    _, r = _solve("affinity-needs-a-candidate.yaml", version)
    assert r.victims == []
    assert not r.groups["default/high"].admitted and r.groups["default/low"].admitted
    if version == "1.35":  # node1 is no candidate of h1's DefaultPreemption, node2 not helpful
        t = r.greedy_trace.preemption["pod:default/h1"]
        assert "pod:default/anchor" in t.candidates
        assert t.nodes["node1"] == (
            "not a candidate: the pod does not fit even without lower-priority pods"
        )
        assert "1 node(s) didn't match pod affinity rules" in t.reason
    else:
        t = r.greedy_trace.preemption["default/high"]
        assert sorted(t.candidates) == ["pod:default/anchor", "pod:default/l1", "pod:default/l2"]
        assert t.status == "Unschedulable" and t.reason.startswith("preemption cannot help: ")
        assert "didn't match pod affinity rules" in t.reason


@pytest.mark.parametrize("version", ["1.36", "1.37"])
def test_terminating_victims_placed_in_the_run_are_not_deleted_twice(
    version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """watcher's binding retries high while l1 and l2 still terminate. v1.36 preempts again over
    what is present and chooses them again (deleted once); v1.37+ keeps its ongoing preemption."""
    chosen: list[list[str]] = []
    original = Preemption.preempt_group

    def spy(self, root, attempt, fitted=None):
        before = self.state.trace.preemption.get(root)
        why = original(self, root, attempt, fitted)
        after = self.state.trace.preemption.get(root)
        if why is None and after is not before:  # a preemption that selected victims
            chosen.append(sorted(after.victims))
        return why

    monkeypatch.setattr(Preemption, "preempt_group", spy)
    _, r = _solve("terminating-placed-victims-chosen-again.yaml", version)
    assert sorted(r.victims) == LOW and len(r.victims) == 2
    assert _nodes(r)["default/watcher"] == "node1"
    assert r.groups["default/high"].admitted
    assert chosen == ([LOW, LOW] if version == "1.36" else [LOW])
    attempts = [
        (q.attempt, q.outcome) for q in r.greedy_trace.requeues if q.entity == "default/high"
    ]
    assert attempts == [(2, "Unschedulable"), (3, "Unschedulable"), (4, "Success")]


def test_without_rule_v_the_gang_would_find_no_victim(monkeypatch: pytest.MonkeyPatch) -> None:
    """The outcome above is rule V's: with only the snapshot's bound pods as candidates (the old
    simplification, emulated by forgetting the run's placements' floor) high stays pending."""
    from gangplan.solver.greedy import state as state_mod

    monkeypatch.setattr(
        state_mod.RunState, "place", lambda self, pod, i: self.placements.__setitem__(pod.key, i)
    )
    _, r = _solve("gang-evicts-gang-placed-earlier.yaml", "1.37")
    assert r.victims == [] and not r.groups["default/high"].admitted
    t = r.greedy_trace.preemption["default/high"]
    assert t.reason == "No preemption victims found for incoming preemptor"


def test_the_objective_sees_a_pending_victim_as_a_pod_not_placed() -> None:
    """A Result that evicts a pending pod it placed is the same objective point as one that never
    placed it (what the exact model can express): same tiers, the pod simply not placed. A bound
    pod of priority 1 on node2 (which nobody needs) makes the disruption tiers exist."""
    objs = list(yaml.safe_load_all((HAND / "gang-evicts-gang-placed-earlier.yaml").read_text()))
    objs.append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "idle", "namespace": "default", "uid": "uid-idle"},
            "spec": {
                "priority": 1,
                "nodeName": "node2",
                "containers": [{"name": "c", "image": "image"}],
            },
            "status": {"phase": "Running"},
        }
    )
    cluster = load_objects(objs, source="<test>", kube_version="1.37")
    r = solve_greedy(cluster)
    assert validate(cluster, r) == [] and sorted(r.victims) == LOW
    assert r.objective[VICTIM_PODS] == 0 and r.objective["victims[p=1]"] == 0
    placements = r.placements()
    never = build_result(cluster, engine="t", status=Status.HEURISTIC, placements=placements)
    assert validate(cluster, never) == []
    assert r.objective == never.objective
