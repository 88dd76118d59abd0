"""v1.35 gangs against upstream's own v1.35-era integration tables, end state by end state.

Sources (kubernetes/kubernetes, the v1alpha1 Workload / ``spec.workloadRef`` form of each file):

* ``test/integration/scheduler/gang/gang_test.go`` @ ``8a84988bd67138e9c3e40990ceb3c7ec4ef1e2ca``,
  ``TestGangScheduling``;
* ``test/integration/scheduler/podgroup/podgroup_test.go``, ``TestPodGroupScheduling``, its
  v1alpha1 form (stored version id 3885023338: ``workloadmanager.DefaultSchedulingTimeoutDuration``,
  ``WorkloadRef``; the index gave no commit for that version).

Both run one 4-cpu node, gangs of 1-cpu pods (``minCount`` 3), blockers of 1 or 2 cpu, and shorten
the Permit timeout to 5 s. A snapshot holds a step's state: the blocker bound, the Workload and the
pods created; the run's end state is the one upstream waits for. v1.35 holds a partial gang's pods
at Permit (``gangscheduling.go`` Permit, release-1.35: Wait with ``podGroupInfo.SchedulingTimeout()``,
``DefaultSchedulingTimeoutDuration = 5 * time.Minute`` in ``backend/workloadmanager/podgroupinfo.go``)
and rejects them at the timeout, so a gang that cannot reach ``minCount`` ends with nothing bound;
these are the end states gangplan must reach. Every Result goes through the validator.
"""

from __future__ import annotations

import pytest

from gangplan.io.loader import load_objects
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate
from tests.v1alpha1_objects import pod as _pod
from tests.v1alpha1_objects import workload


def _node() -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node", "labels": {"kubernetes.io/hostname": "node"}},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
    }


def _workload(name: str, gang: bool = True) -> dict:
    return workload(name, 3 if gang else None)


def _gang(names, workload="workload", prio=0, start=10):
    return [_pod(n, start + i, workload=workload, prio=prio) for i, n in enumerate(names)]


def _run(objs):
    cluster = load_objects(objs, kube_version="1.35")
    result = solve_greedy(cluster)
    assert validate(cluster, result) == []
    placed = {k.split("/")[1] for k in result.placements()}
    victims = sorted(k.split("/")[1] for k in result.victims)
    return cluster, result, placed, victims


CASES = {
    # gang_test.go @8a84988b
    "gang schedules when workload and resources are available": (
        [_workload("workload"), *_gang(["p1", "p2", "p3"])],
        {"p1", "p2", "p3"},
        [],
    ),
    "gang waits for quorum to start (p1, p2 only: gated at PreEnqueue)": (
        [_workload("workload"), *_gang(["p1", "p2"])],
        set(),
        [],
    ),
    "gang waits for workload, then for resources: Permit timeout due to resource blocker": (
        [_pod("blocker", 0, "2", node="node"), _workload("workload"), *_gang(["p1", "p2", "p3"])],
        set(),
        [],
    ),
    "gang waits for workload, then for resources: the blocker deleted, the entire gang scheduled": (
        [_workload("workload"), *_gang(["p1", "p2", "p3"])],
        {"p1", "p2", "p3"},
        [],
    ),
    # podgroup_test.go, v1alpha1 form
    "minCount is scheduled, but one pod from a gang remains unschedulable": (
        [
            _pod("small-blocker", 0, "1", prio=100, node="node"),
            _workload("workload"),
            *_gang(["p1", "p2", "p3", "p4"], prio=100),
        ],
        3,
        [],
    ),
    "two gangs competing for the same resources shouldn't deadlock": (
        [
            _workload("workload"),
            _workload("other-workload"),
            _pod("p1", 10, workload="workload", prio=100),
            _pod("other-p1", 11, workload="other-workload", prio=100),
            _pod("p2", 12, workload="workload", prio=100),
            _pod("other-p2", 13, workload="other-workload", prio=100),
            _pod("p3", 14, workload="workload", prio=100),
            _pod("other-p3", 15, workload="other-workload", prio=100),
        ],
        {"p1", "p2", "p3"},
        [],
    ),
    "gang schedules with preemption": (
        [
            _pod("low-priority-blocker", 0, "2", prio=10, node="node"),
            _workload("workload"),
            *_gang(["p1", "p2", "p3", "p4"], prio=100),
        ],
        {"p1", "p2", "p3", "p4"},
        ["low-priority-blocker"],
    ),
    "basic group waits for workload, part of it waits for resources": (
        [
            _pod("blocker", 0, "2", prio=100, node="node"),
            _workload("workload", gang=False),
            *_gang(["p1", "p2", "p3"], prio=100),
        ],
        {"p1", "p2"},
        [],
    ),
    "basic group schedules with preemption": (
        [
            _pod("low-priority-blocker", 0, "2", prio=10, node="node"),
            _workload("workload", gang=False),
            *_gang(["p1", "p2", "p3", "p4"], prio=100),
        ],
        {"p1", "p2", "p3", "p4"},
        ["low-priority-blocker"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_v135_gang_end_state_as_upstream_expects(case):
    objs, want, want_victims = CASES[case]
    _, result, placed, victims = _run([_node(), *objs])
    pending = {n for n in placed if not n.endswith("blocker")}
    if isinstance(want, int):  # any minCount of the gang's pods, the rest unschedulable
        assert len(pending) == want, (case, placed)
    else:
        assert pending == want, (case, placed)
    assert victims == want_victims, case
