"""The scheduling queue (issue 21, cause 3: requeueing): activeQ / backoffQ / unschedulable pool,
queueing hints, backoff and the 5-minute flush, after ``pkg/scheduler/backend/queue/
scheduling_queue.go`` and ``backoff_queue.go`` (release-1.36; v1.37's entity queue) and the plugins'
``EventsToRegister``. Engine results go through the validator."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from gangplan.io.loader import load_objects
from gangplan.models.groups import EntityKey
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.greedy.queue import Entity
from gangplan.solver.greedy.scheduling_queue import (
    ASSIGNED_POD_ADD,
    MAX_IN_UNSCHEDULABLE,
    POD_DELETE,
    ClusterEvent,
    QueueingHints,
    SchedulingQueue,
)
from gangplan.solver.greedy.testing import make_cluster, make_node, make_pod
from gangplan.solver.validate import validate

T0 = datetime(2026, 1, 1)


def _entity(name: str, priority: int = 0, position: int = 0, group: bool = False) -> Entity:
    key = _group_key(name) if group else EntityKey.pod(f"default/{name}")
    return Entity(key, priority, T0, position)


def _group_key(name: str) -> EntityKey:
    from gangplan.models.groups import EntityKind

    return EntityKey(EntityKind.POD_GROUP, f"default/{name}")


def _queue(entities, hint=lambda qe, ev: True, version="1.37", sizes=None):
    cluster = make_cluster([make_node("n1", cpu=1000)]).at_version(version)
    return SchedulingQueue.of(cluster, entities, sizes or {}, hint)


def _event(kind=ASSIGNED_POD_ADD, name="x"):
    return ClusterEvent(kind, make_pod(name, node="n1"), "n1")


# ---- calculateBackoffDuration ------------------------------------------------------------------------
def test_calculateBackoffDuration_doubles_from_one_second_to_ten():
    q = _queue([_entity("a")])
    qe = q.pop()
    got = []
    for _ in range(6):
        q.failed(qe, {"NodeResourcesFit"})
        got.append(q.backoff_duration(qe))
    assert got == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


@pytest.mark.parametrize(("version", "cap"), [("1.36", 10.0), ("1.37", 20.0)])
def test_v137_group_backoff_is_capped_at_ten_seconds_times_the_square_root_of_its_size(
    version, cap
):
    q = _queue([_entity("g", group=True)], version=version, sizes={_group_key("g"): 4})
    qe = q.pop()
    for _ in range(8):
        q.failed(qe, {"NodeResourcesFit"})
    assert q.backoff_duration(qe) == cap


# ---- PriorityQueue: activeQ, pool, hints, flush ------------------------------------------------------------
def test_activeQ_pops_by_priority_then_queue_time():
    q = _queue([_entity("low", 0, 0), _entity("high", 10, 1), _entity("low2", 0, 2)])
    assert [q.pop().key.key for _ in range(3)] == ["default/high", "default/low", "default/low2"]
    assert q.pop() is None  # nothing failed: no entity can change state


def test_a_failed_entity_waits_in_the_pool_until_a_hint_says_queue_then_backs_off():
    q = _queue([_entity("a")], hint=lambda qe, ev: ev.pod.name == "match")
    qe = q.pop()
    q.failed(qe, {"InterPodAffinity"})
    q.event(_event(name="other"))
    assert qe.key in q.unschedulable  # QueueSkip
    q.event(_event(name="match"))
    assert qe.key not in q.unschedulable and qe.trigger == "AssignedPodAdd default/match (n1)"
    again = q.pop()  # backoffQ: the clock moves to its expiry (1 s) first
    assert again is qe and qe.attempts == 2 and q.clock == 1.0


def test_flushUnschedulablePodsLeftover_retries_after_five_minutes_only_when_the_cluster_changed():
    q = _queue([_entity("a"), _entity("b", position=1)], hint=lambda qe, ev: False)
    a = q.pop()
    q.failed(a, {"NodeAffinity"})
    b = q.pop()
    q.failed(b, {"NodeAffinity"})
    assert q.pop() is None  # no event since either attempt: nothing can change
    q.event(_event())
    got = q.pop()
    assert got is a and q.clock >= MAX_IN_UNSCHEDULABLE and q.clock % 30 == 0
    assert got.trigger == "flushed after 5 minutes in the unschedulable pool"


def test_an_attempt_without_a_rejecting_plugin_moves_on_any_event():
    cluster = make_cluster([make_node("n1", cpu=1000)])
    hint = QueueingHints(cluster, lambda key: [make_pod("p")])
    q = SchedulingQueue.of(cluster, [_entity("p")], {}, hint)
    qe = q.pop()
    q.failed(qe, set())
    q.event(_event(POD_DELETE))
    assert qe.key not in q.unschedulable


@pytest.mark.parametrize(
    ("plugin", "kind", "queue"),
    [
        ("NodeResourcesFit", ASSIGNED_POD_ADD, False),
        ("NodeResourcesFit", POD_DELETE, True),
        ("TaintToleration", POD_DELETE, False),
        ("NodeAffinity", ASSIGNED_POD_ADD, False),
    ],
)
def test_plugin_queueing_hints_for_pod_events(plugin, kind, queue):
    cluster = make_cluster([make_node("n1", cpu=1000)]).at_version("1.36")
    pod = make_pod("p")
    hint = QueueingHints(cluster, lambda key: [pod])
    q = SchedulingQueue.of(cluster, [_entity("p")], {}, hint)
    qe = q.pop()
    q.failed(qe, {plugin})
    assert hint(qe, _event(kind)) is queue


# ---- end to end: a gang admitted once the pods it needs land ---------------------------------------------------
def _affinity_snapshot() -> list[dict]:
    """A gang of two web pods needs a db pod on its node (required podAffinity, hostname). The gang
    completes its quorum before the db pod is created, so it is attempted first and fails (no db pod
    yet, and it does not match its own term). The db pod then binds: InterPodAffinity's hint for
    AssignedPodAdd queues the gang, and its retry is admitted."""
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }
    gang = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
    }
    term = {
        "labelSelector": {"matchLabels": {"app": "db"}},
        "topologyKey": "kubernetes.io/hostname",
    }

    def pod(name, second, labels, group=None, affinity=None):
        spec = {
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]
        }
        if group:
            spec["schedulingGroup"] = {"podGroupName": group}
        if affinity:
            spec["affinity"] = {
                "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [affinity]}
            }
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": "default",
                "labels": labels,
                "creationTimestamp": f"2026-11-30T10:00:{second:02d}Z",
            },
            "spec": spec,
        }

    return [
        node,
        gang,
        pod("web-0", 0, {"app": "web"}, "web", term),
        pod("web-1", 1, {"app": "web"}, "web", term),
        pod("db", 5, {"app": "db"}),
    ]


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_AssignedPodAdd_requeues_a_gang_whose_affinity_the_new_pod_satisfies(version):
    cluster = load_objects(_affinity_snapshot(), kube_version=version)
    r = solve_greedy(cluster)
    assert validate(cluster, r) == []
    assert r.groups["default/web"].admitted and r.pods["default/db"].node == "n1"
    rq = r.greedy_trace.requeues
    assert (
        rq is not None
        and rq[0].entity == "default/web"
        and rq[0].attempt == 2
        and rq[0].outcome == "Success"
    )
    # v1.36 requeues a group's pods by backoff alone (issue 39, rule Q): the retry comes when activeQ
    # drains, after the db pod, without asking the InterPodAffinity hint
    assert rq[0].trigger.startswith(
        "backoff (v1.36" if version == "1.36" else "AssignedPodAdd default/db"
    )
    assert r.greedy_trace.entities == [
        "default/web",
        "pod:default/db",
    ]  # first attempts, in queue order
    assert r.pods["default/web-0"].reason is None


def test_a_retry_that_cannot_help_ends_at_the_flush_and_the_run_stops():
    """A pod rejected by NodeAffinity (node events only) is skipped by the hints; another pod binds
    after it, so the 5-minute flush retries it once, it fails again, and nothing else can change."""
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }
    picky = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "picky",
            "namespace": "default",
            "creationTimestamp": "2026-11-30T10:00:00Z",
        },
        "spec": {
            "nodeSelector": {"pool": "gpu"},
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        },
    }
    other = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "other",
            "namespace": "default",
            "creationTimestamp": "2026-11-30T10:00:01Z",
        },
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
    }
    cluster = load_objects([node, picky, other])
    r = solve_greedy(cluster)
    assert validate(cluster, r) == []
    assert (
        r.pods["default/picky"].node is None
        and "didn't match Pod's node affinity/selector" in r.pods["default/picky"].reason
    )
    (rq,) = r.greedy_trace.requeues
    assert (
        rq.entity == "pod:default/picky"
        and rq.outcome == "Unschedulable"
        and rq.at >= MAX_IN_UNSCHEDULABLE
    )
    again = json.loads(solve_greedy(cluster).to_json())
    first = json.loads(r.to_json())
    again.pop("wallSeconds"), first.pop("wallSeconds")
    assert again == first  # same input, same run


def _leftover_snapshot() -> list[dict]:
    """n1 has 3 cpu; a bound pod ``low`` (priority 0) holds 1. The gang ``g`` (priority 10,
    minCount 2, three pods of 1 cpu) places two and leaves one; the single pod ``p`` (priority 5,
    1 cpu) is queued after it."""
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
        "status": {"allocatable": {"cpu": "3", "memory": "32Gi", "pods": "110"}},
    }
    gang = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "priority": 10},
    }

    def pod(name, second, priority, group=None, node_name=None):
        spec = {
            "priority": priority,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
        }
        if group:
            spec["schedulingGroup"] = {"podGroupName": group}
        if node_name:
            spec["nodeName"] = node_name
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": "default",
                "creationTimestamp": f"2026-11-30T10:00:{second:02d}Z",
            },
            "spec": spec,
            **(
                {"status": {"phase": "Running", "startTime": "2026-11-30T09:00:00Z"}}
                if node_name
                else {}
            ),
        }

    return [
        node,
        gang,
        pod("low", 0, 0, node_name="n1"),
        *(pod(f"g-{i}", 1 + i, 10, "g") for i in range(3)),
        pod("p", 9, 5),
    ]


@pytest.mark.parametrize("version", ["1.36", "1.37"])
def test_v136_leftovers_of_a_placed_gang_wait_behind_activeq(version):
    """Issue 39, rule Q (a): v1.36 sends the gang's leftover pod to backoffQ, so the single pod ``p``
    (in activeQ) goes first and evicts ``low`` for itself; the leftover's retry then finds n1 full,
    and its workload-aware preemption evicts ``p`` (rule V: a pod placed during the run is a
    candidate), so ``g-2`` binds once ``p`` is gone. Upstream ``p`` would only be nominated while
    ``low`` terminates and ``g-2`` (higher priority, ignoring that nomination) would bind first:
    the same placements; gangplan's default preemption is immediate, so ``p`` counts as placed
    and shows as a victim. v1.37 runs the leftover's next cycle at once: its workload-aware
    preemption evicts ``low`` for ``g-2``, and ``p`` finds no room."""
    cluster = load_objects(_leftover_snapshot(), kube_version=version)
    r = solve_greedy(cluster, preemption=True)
    assert validate(cluster, r) == []
    placed = {k: o.node for k, o in r.pods.items() if o.node is not None}
    assert placed == {"default/g-0": "n1", "default/g-1": "n1", "default/g-2": "n1"}
    if version == "1.36":
        assert r.victims == ["default/low", "default/p"]
        assert r.pods["default/p"].reason.startswith("placed on node n1, then evicted")
        assert [(q.entity, q.trigger, q.outcome) for q in r.greedy_trace.requeues] == [
            (
                "default/g",
                "backoff (v1.36: a pod group's pods are requeued by backoff alone)",
                "Unschedulable",
            ),
            ("default/g", "PodDelete default/p (n1)", "Success"),
        ]
    else:
        assert r.victims == ["default/low"]


def test_v136_retries_a_failed_group_when_activeq_drains_without_a_hint():
    """Issue 39, rule Q (b): the gang fails on NodeResourcesFit; a pod bound after it
    (AssignedPodAdd) never helps NodeResourcesFit, so v1.35's hints leave the gang's pods waiting
    (the flush retries them after 5 minutes); v1.36 retries the group as soon as activeQ drains, by
    backoff alone, and once more would repeat the same cycle, so the run stops."""
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "2", "memory": "32Gi", "pods": "110"}},
    }
    gang = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}},
    }
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": n,
                "namespace": "default",
                "creationTimestamp": f"2026-11-30T10:00:0{k}Z",
            },
            "spec": {
                **({"schedulingGroup": {"podGroupName": "g"}} if n != "solo" else {}),
                "containers": [
                    {"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
                ],
            },
        }
        for k, n in enumerate(["g-0", "g-1", "g-2", "solo"])
    ]
    cluster = load_objects([node, gang, *pods], kube_version="1.36")
    r = solve_greedy(cluster)
    assert validate(cluster, r) == []
    assert r.pods["default/solo"].node == "n1" and not r.groups["default/g"].admitted
    assert [
        (q.entity, q.attempt, q.outcome, q.trigger.split(" (")[0]) for q in r.greedy_trace.requeues
    ] == [("default/g", 2, "Unschedulable", "backoff")]


def _tie_snapshot() -> list[dict]:
    """Two equal nodes. The gang ``g`` (minCount 2): ``z`` fits both (a tie), ``y`` may only run on
    n1 (nodeSelector) and not beside ``z`` (required anti-affinity, hostname). v1.36 tries ``z``
    first (it completes the quorum): on n1 (the lowest of the tie) ``y`` has nowhere to go; on n2
    both fit."""
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
            "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
        }
        for n in ("n1", "n2")
    ]
    gang = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
    }

    def pod(name, labels, extra=None):
        spec = {
            "schedulingGroup": {"podGroupName": "g"},
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
            **(extra or {}),
        }
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": "default",
                "labels": labels,
                "creationTimestamp": "2026-11-30T10:00:00Z",
            },
            "spec": spec,
        }

    away = {
        "nodeSelector": {"kubernetes.io/hostname": "n1"},
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": "z"}},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        },
    }
    return [*nodes, gang, pod("y", {"app": "y"}, away), pod("z", {"app": "z"})]


@pytest.mark.parametrize("tie_break", ["first", "random"])
def test_v136_retries_a_group_whose_failure_hung_on_a_tie(tie_break, monkeypatch):
    """Issue 39, rule R: v1.36 retries the failed group whenever activeQ drains and breaks the tie
    anew, so it is admitted without any change of the cluster; the requeue record says the outcome
    depended on a tie. Without tie retries the same run keeps the first attempt's failure (under
    ``first`` ties; under ``random`` in the seeds whose first draw is n1)."""
    cluster = load_objects(_tie_snapshot(), kube_version="1.36")
    seeds = range(8) if tie_break == "random" else [0]
    retried = 0
    for seed in seeds:
        r = solve_greedy(cluster, tie_break=tie_break, seed=seed)
        assert validate(cluster, r) == []
        assert r.groups["default/g"].admitted, seed
        assert r.pods["default/z"].node == "n2" and r.pods["default/y"].node == "n1"
        retries = [q for q in r.greedy_trace.requeues or [] if q.trigger.startswith("tie retry")]
        if retries:  # under random ties a first draw of n2 needs none
            retried += 1
            assert retries[-1].outcome == "Success" and all(
                q.entity == "default/g" for q in retries
            )
    assert retried == len(seeds) if tie_break == "first" else 0 < retried < len(seeds)
    monkeypatch.setattr("gangplan.solver.greedy.scheduling_queue.TIE_RETRIES", 0)
    outcomes = {
        solve_greedy(cluster, tie_break=tie_break, seed=seed).groups["default/g"].admitted
        for seed in seeds
    }
    assert outcomes == ({False} if tie_break == "first" else {False, True})


def test_tie_retries_stop_at_their_cap_when_no_choice_helps():
    """A tie that no alternative resolves (``y`` fits nowhere at all) is retried TIE_RETRIES times,
    then the group waits like any failed group and the run ends."""
    from gangplan.solver.greedy.scheduling_queue import TIE_RETRIES

    objects = _tie_snapshot()
    objects[3]["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "nowhere"}
    cluster = load_objects(objects, kube_version="1.36")
    r = solve_greedy(cluster, tie_break="first")
    assert validate(cluster, r) == [] and not r.groups["default/g"].admitted
    retries = [q for q in r.greedy_trace.requeues or [] if q.trigger.startswith("tie retry")]
    assert len(retries) <= TIE_RETRIES
