"""v1.35's Permit hold (issue 39): a gang short of ``minCount`` keeps its assumed pods on their nodes
while every other queued entity runs, until its quorum or the 5-minute timeout.

Upstream (release-1.35): ``pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go`` (the
v1alpha1 ``spec.workloadRef`` form) Reserve / Permit / Unreserve: Permit returns Wait with
``podGroupInfo.SchedulingTimeout()`` while fewer than minCount of the gang are assumed or bound, and
the pod completing the quorum allows every waiting mate; ``backend/workloadmanager/podgroupinfo.go``
``DefaultSchedulingTimeoutDuration = 5 * time.Minute`` (deadline at the gang's first Permit, renewed
once passed); ``framework/runtime/waiting_pods_map.go`` ("rejected due to timeout after waiting %v at
plugin %v"); ``schedule_one.go`` ``handleBindingCycleError`` (Unreserve, ForgetPod, an
``AssignedPodDelete`` event for every other pod). Each snapshot's v1.35 outcome below is derived from
that code step by step (in the comments); every Result goes through the validator.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import gangplan.solver.greedy.podgroup as podgroup
from gangplan.io.loader import load_objects
from gangplan.models.groups import EntityKey
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.greedy.queue import Entity
from gangplan.solver.greedy.scheduling_queue import (
    POD_DELETE,
    ClusterEvent,
    QueuedEntity,
    SchedulingQueue,
)
from gangplan.solver.validate import validate
from tests.v1alpha1_objects import NS, pod, workload

TIMEOUT = "rejected due to timeout after waiting 5m0s at plugin GangScheduling"


def _node(name: str, cpu: str = "4") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "n": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}},
    }


def _gang(name: str, min_count: int) -> dict:
    return workload(name, min_count)


def _pod(name, second, cpu, *, gang=None, prio=0, node=None, on=None, never=False) -> dict:
    return pod(name, second, cpu, workload=gang, prio=prio, node=node, on=on, never=never)


def _run(objs, version="1.35", preemption=False):
    cluster = load_objects(objs, kube_version=version)
    result = solve_greedy(cluster, preemption=preemption)
    assert validate(cluster, result) == []
    return result


def _placed(result) -> dict[str, str]:
    return {k.split("/")[1]: n for k, n in result.placements().items()}


def _holds(result) -> list[tuple]:
    return [
        (h.entity, {k.split("/")[1]: n for k, n in h.pods.items()}, h.since, h.until, h.outcome)
        for h in result.greedy_trace.permit_holds or []
    ]


def _requeues(result) -> list[tuple]:
    return [(q.entity, q.at, q.trigger, q.outcome) for q in result.greedy_trace.requeues or []]


# ---- gang_test.go @8a84988b, "Permit timeout due to resource blocker", as the trace shows it -------
def test_a_gang_short_of_its_quorum_holds_its_pods_until_the_timeout():
    # 4-cpu node, a 2-cpu blocker: p1 and p2 pass Reserve and wait at Permit (2 < minCount 3) from
    # t=0; p3 fails Filter. Nothing else can run: at the deadline (300 s) both are rejected.
    objs = [
        _node("node"),
        _pod("blocker", 0, "2", node="node"),
        _gang("workload", 3),
        *[_pod(f"p{i}", 10 + i, "1", gang="workload") for i in (1, 2, 3)],
    ]
    r = _run(objs)
    assert _placed(r) == {}
    assert _holds(r) == [
        ("default/workload-pg", {"p1": "node", "p2": "node"}, 0.0, 300.0, "timeout")
    ]
    for p in ("p1", "p2"):
        assert r.pods[f"{NS}/{p}"].reason.endswith(TIMEOUT)
    assert "Insufficient cpu" in r.pods[f"{NS}/p3"].reason
    assert "2 pods held at Permit from 0 s" in r.groups["default/workload-pg"].reason
    # v1.36+ revert the gang in its pod-group cycle: no hold
    assert _run(objs, "1.36").greedy_trace.permit_holds is None
    assert _run(objs, "1.37").greedy_trace.permit_holds is None


# ---- two half-placed gangs deadlock until the first timeout ----------------------------------------
DEADLOCK = [
    _node("n1"),
    _gang("a", 2),
    _gang("b", 2),
    _pod("a1", 1, "2", gang="a"),
    _pod("a2", 2, "3", gang="a"),
    _pod("b1", 3, "2", gang="b"),
    _pod("b2", 4, "2", gang="b"),
]


def test_two_half_placed_gangs_wait_for_the_first_timeout():
    # t=0: a1 waits at Permit on n1 (2 of 4 cpu), a2 (3 cpu) fails; b1 takes the last 2 cpu and
    # waits, b2 fails: each gang's held pod blocks the other. Nothing can run before a's deadline:
    # at 300 s a1 is forgotten, its AssignedPodDelete moves b (NodeResourcesFit: a deleted pod frees
    # room), whose retry counts the held b1 and places b2: the quorum, both bound at 300 s. a, left
    # in the pool, is flushed 5 minutes after its rejection and fails (n1 full): nothing held.
    r = _run(DEADLOCK)
    assert _placed(r) == {"b1": "n1", "b2": "n1"}
    assert _holds(r) == [
        ("default/a-pg", {"a1": "n1"}, 0.0, 300.0, "timeout"),
        ("default/b-pg", {"b1": "n1"}, 0.0, 300.0, "quorum"),
    ]
    assert r.greedy_trace.permit_holds[0].failed_meanwhile == ["default/b-pg"]
    rq = _requeues(r)
    assert rq[0] == ("default/b-pg", 300.0, "PodDelete default/a1 (n1)", "Success")
    assert [q[0] for q in rq[1:]] == ["default/a-pg"]  # the flush's retry, nothing placed
    assert rq[1][3] == "Unschedulable" and rq[1][1] == 600.0
    assert r.pods[f"{NS}/a1"].reason.endswith(TIMEOUT)
    # v1.37 reverts a at once: b is placed in its first attempt, nothing waits
    r37 = _run(DEADLOCK, "1.37")
    assert _placed(r37) == {"b1": "n1", "b2": "n1"}
    assert all(q[0] != "default/b-pg" for q in _requeues(r37))


def test_two_gangs_that_can_never_complete_are_held_once_each():
    # As above, but b2 needs 3 cpu too: at 300 s a's release moves b (b2 still does not fit), then
    # b's own deadline releases b1 and moves a, whose retry would hold a1 again over a cluster in
    # which nothing was bound or evicted since its first hold: upstream would repeat the same
    # 5 minutes forever; gangplan forgets at once and the run ends with nothing placed.
    objs = [*DEADLOCK[:-1], _pod("b2", 4, "3", gang="b")]
    r = _run(objs)
    assert _placed(r) == {}
    assert [(h[0], h[4], h[3]) for h in _holds(r)] == [
        ("default/a-pg", "timeout", 300.0),
        ("default/b-pg", "timeout", 300.0),
    ]
    assert [(q[0], q[2]) for q in _requeues(r)] == [
        ("default/b-pg", "PodDelete default/a1 (n1)"),
        ("default/a-pg", "PodDelete default/b1 (n1)"),
    ]


# ---- a held gang completes later, after another entity frees room ----------------------------------
LATER = [
    _node("n1"),
    _node("n2"),
    _pod("v", 0, "4", node="n2"),  # priority 0, fills n2
    _gang("a", 2),
    _pod("a1", 1, "2", gang="a", prio=10, on="n1", never=True),
    _pod("a2", 2, "2", gang="a", prio=10, on="n2", never=True),
    _pod("s", 3, "4", prio=8, never=True),
    _pod("p", 4, "1", prio=5, on="n2"),
]


def test_a_held_gang_completes_its_quorum_after_another_entity_frees_room(monkeypatch):
    # PrioritySort: a (10), s (8), p (5). a1 waits at Permit on n1; a2 fails (n2 full, Never).
    # s (4 cpu) finds n1 with 2 free (a1 held) and n2 full: Unschedulable (Never). p preempts v on
    # n2 (DefaultPreemption) and lands there; v's Pod/Delete moves a and s. a's retry counts the
    # held a1 and places a2 on n2 (3 free): the quorum, both bound at 1 s (the backoff). s fails.
    r = _run(LATER, preemption=True)
    assert _placed(r) == {"a1": "n1", "a2": "n2", "p": "n2"}
    assert r.victims == [f"{NS}/v"]
    assert _holds(r) == [("default/a-pg", {"a1": "n1"}, 0.0, 1.0, "quorum")]
    assert r.greedy_trace.permit_holds[0].failed_meanwhile == ["pod:default/s"]
    assert ("default/a-pg", 1.0, "PodDelete default/v (n2)", "Success") in _requeues(r)
    # without the hold (the pod-group cycle's revert) s takes n1 first and a never fits again
    monkeypatch.setattr(podgroup, "permit_hold", lambda v: False)
    r0 = _run(LATER, preemption=True)
    assert _placed(r0) == {"s": "n1", "p": "n2"}


# ---- per-pod DefaultPreemption victims stay evicted when the hold times out ------------------------
def test_victims_of_a_held_gang_stay_evicted_and_the_blocked_pod_runs_after_the_timeout():
    # g1 waits on n1 (2 of 4 cpu taken by l); g2 fails, its own DefaultPreemption evicts l (prio 0)
    # and g2 waits on n1 too; g3 (8 cpu) fails for good. q (2 cpu) finds n1 full of held pods and has
    # no lower-priority victim (held pods are not bound): Unschedulable. At 300 s g1 and g2 are
    # forgotten; q runs on n1; l stays evicted. The flush retries g 5 minutes after its rejection:
    # q's bind changed the cluster, so g1 waits once more on n1 (600 s), and g2's own
    # DefaultPreemption now evicts q: a pod bound during the run is a candidate like any other
    # (rule V; SelectVictimsOnNode takes every lower-priority pod of the NodeInfo). g3 still cannot
    # fit, so the gang times out again at 900 s: v1.35 evicts for a gang that never runs.
    objs = [
        _node("n1"),
        _pod("l", 0, "2", node="n1"),
        _gang("g", 3),
        _pod("g1", 1, "2", gang="g", prio=10),
        _pod("g2", 2, "2", gang="g", prio=10),
        _pod("g3", 3, "8", gang="g", prio=10),
        _pod("q", 4, "2", prio=5),
    ]
    r = _run(objs, preemption=True)
    assert _placed(r) == {}
    assert r.victims == [f"{NS}/l", f"{NS}/q"]
    assert r.pods[f"{NS}/q"].reason.startswith("placed on node n1, then evicted")
    assert _holds(r) == [
        ("default/g-pg", {"g1": "n1", "g2": "n1"}, 0.0, 300.0, "timeout"),
        ("default/g-pg", {"g1": "n1", "g2": "n1"}, 600.0, 900.0, "timeout"),
    ]
    assert ("pod:default/q", 300.0, "PodDelete default/g1 (n1)", "Success") in _requeues(r)
    assert ("default/g-pg", 604.0, "PodDelete default/q (n1)", "Unschedulable") in _requeues(r)


# ---- the queue's two additions -------------------------------------------------------------------
def _queued(name: str) -> QueuedEntity:
    key = EntityKey.pod(f"{NS}/{name}")
    return QueuedEntity(Entity(key, 0, datetime(2026, 1, 1, tzinfo=UTC), 0), 1)


def _queue() -> SchedulingQueue:
    cluster = load_objects([_node("n1"), _pod("x", 0, "1")], kube_version="1.35")
    return SchedulingQueue.of(cluster, [], {}, lambda qe, ev: True)


def test_pop_stops_before_a_deadline_without_moving_the_clock():
    q = _queue()
    qe = _queued("b")
    qe.unschedulable_count, qe.backoff_expiry = 1, 5.0
    q._push_backoff(qe)
    assert q.pop(deadline=5.0) is None and q.clock == 0.0  # at the deadline the timeout goes first
    assert q.pop(deadline=6.0) is qe and q.clock == 5.0


def test_an_excluded_entity_is_not_moved_and_counts_the_event_as_seen():
    q = _queue()
    pod = q.cluster.pod_by_key[f"{NS}/x"]
    own, other = _queued("own"), _queued("other")
    q.unschedulable[own.key], q.unschedulable[other.key] = own, other
    q.event(ClusterEvent(POD_DELETE, pod, "n1"), exclude=own.key)
    assert own.key in q.unschedulable and own.last_event == q.events
    assert other.key not in q.unschedulable


@pytest.mark.parametrize("version", ["1.36", "1.37", "1.38"])
def test_only_v135_holds(version):
    assert _run(DEADLOCK, version).greedy_trace.permit_holds is None


def test_why_tells_a_held_pods_wait_at_permit():
    """``why`` / ``solve --explain`` (explain_context) read trace.permitHolds: the node held, from
    when to when, how it ended and who failed meanwhile; nothing at v1.37."""
    from gangplan.render_trace import explain_context

    cluster = load_objects(DEADLOCK, kube_version="1.35")
    r = solve_greedy(cluster)
    a1 = [line for line in explain_context(r, cluster, f"{NS}/a1") if "Permit" in line]
    assert a1 == [
        "waited at Permit on n1 for gang default/a-pg's quorum from 0 s to 300 s (assumed, not "
        "bound): the 300 s Permit timeout released it (the pod forgotten, the node freed)"
    ]
    assert any(
        "meanwhile failed" in line and "default/b-pg" in line
        for line in explain_context(r, cluster, f"{NS}/a1")
    )
    b1 = [line for line in explain_context(r, cluster, f"{NS}/b1") if "Permit" in line]
    assert b1 and b1[0].endswith("the gang's quorum was reached and its pods bound")
    assert not any("Permit" in line for line in explain_context(r, cluster, f"{NS}/b2"))
    c37 = load_objects(DEADLOCK, kube_version="1.37")
    assert not any("Permit" in line for line in explain_context(solve_greedy(c37), c37, f"{NS}/a1"))
