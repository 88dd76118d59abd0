"""Run-time hierarchy validation as kube-scheduler does it, per version, in both engines.

v1.37 and the development code (``--kube-version 1.38``) run ``validatePodGroup``'s checks
(priorities, preemption policies, schedulerName: master after kubernetes#141930); v1.35 / v1.36
none (:func:`gangplan.models.version.hierarchy_checks`): each such case is also checked to be
accepted by v1.36.

The structural cases (B1-B5) mirror ``test/integration/scheduler/podgroup/hierarchy_validation_test.go``
@45f0bf0f, the proof of concept of the open kubernetes#142004 that no release or master carries
(docs/upstream-hierarchy-validation.md §6): each is refused by those rules
(``validate_hierarchies(checks="full")``) and scheduled by ``--kube-version 1.38``, as master's
``cpg_test.go`` @16457a8a and ``cpg_tas_test.go`` @1361a25a expect of such trees. The older
queue-loop version @d6947b57 (A1-A2: cycles and missing parents, held back in the queue) and
``cpg_test.go`` cases follow, as restated in docs/upstream-hierarchy-validation.md §3. Setup as
upstream: one node of 10 CPU, one pod ``<pg>-pod-0`` of 1 CPU per leaf, priority 100 everywhere.

Every case runs the greedy engine, the exact engine and the validator: an invalid hierarchy places
nothing in either engine (SchedulerError for the greedy's pods), the rest of the snapshot is
scheduled, and the diff calls the two engines identical.
"""

from __future__ import annotations

import pytest

from gangplan.io.loader import load_objects
from gangplan.models.hierarchy import validate_hierarchies
from gangplan.models.objects import SchedulerProfile
from gangplan.solver.diff import diff_snapshot
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

NS = "hv"


def cpg(name, *, parent=None, gang=None, mode=None, workload="wl", priority=100):
    spec = {
        "schedulingPolicy": {"gang": {"minGroupCount": gang}} if gang else {"basic": {}},
        "priority": priority,
        "workloadRef": {"workloadName": workload, "templateName": f"{name}-t"},
    }
    if parent:
        spec["parentCompositePodGroupName"] = parent
    if mode:
        spec["disruptionMode"] = {mode: {}}
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "CompositePodGroup",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }


def pg(name, *, parent=None, gang=None, mode=None, workload="wl", priority=100, policy=None):
    obj = cpg(name, parent=parent, mode=mode, workload=workload, priority=priority)
    obj.update(apiVersion="scheduling.k8s.io/v1beta1", kind="PodGroup")
    obj["spec"]["schedulingPolicy"] = {"gang": {"minCount": gang}} if gang else {"basic": {}}
    if policy:
        obj["spec"]["preemptionPolicy"] = policy
    return obj


def pods(group, n=1, *, cpu="1", priority=100, policy=None, scheduler=None, start=0):
    out = []
    for i in range(start, start + n):
        spec = {
            "schedulingGroup": {"podGroupName": group},
            "priority": priority,
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
        }
        if policy:
            spec["preemptionPolicy"] = policy
        if scheduler:
            spec["schedulerName"] = scheduler
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{group}-pod-{i}",
                    "namespace": NS,
                    "creationTimestamp": f"2026-11-30T10:00:0{i}Z",
                },
                "spec": spec,
            }
        )
    return out


def node(name="node1", cpu="10"):
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"}},
    }


DEV = "1.38"


def run(objs, version=DEV):
    """Both engines and the validator; returns (cluster, greedy, exact)."""
    c = load_objects(objs, kube_version=version)
    greedy = solve_greedy(c)
    exact = solve_exact(c, hint=greedy, time_limit=5.0, workers=1)
    assert validate(c, greedy) == [] and validate(c, exact) == []
    return c, greedy, exact


def assert_refused(objs, root, message, *, others_placed=(), version=DEV, accepted_by=None):
    """Refused by ``version`` (and later); accepted by the release ``accepted_by`` (the newest one
    without that check), whose run places the hierarchy's pods when they fit."""
    c, greedy, exact = run(objs, version)
    assert c.groups.validation_error(f"{NS}/{root}") == message
    if accepted_by is not None:
        older = load_objects(objs, kube_version=accepted_by)
        assert older.groups.validation_error(f"{NS}/{root}") is None
        assert validate(older, solve_greedy(older)) == []
    refused = [p.key for p in c.groups.members(f"{NS}/{root}") if not p.bound]
    for key in refused:
        assert greedy.pods[key].node is None and exact.pods[key].node is None
        assert f"SchedulerError: {message}" in greedy.pods[key].reason
        assert f"SchedulerError: {message}" in exact.pods[key].reason
    assert sorted(greedy.placements()) == sorted(exact.placements()) == sorted(others_placed)
    assert diff_snapshot(c, time_limit=5.0, workers=1).classification == "identical"
    return c, greedy


# ---- hierarchy_validation_test.go @45f0bf0f (version B: the unmerged kubernetes#142004) -------------------
def poc_error(c, root):
    """What the proof of concept @45f0bf0f would say of ``root`` (``checks="full"``)."""
    queued = {p.key for p in c.pending_pods}
    return validate_hierarchies(c.groups, queued, SchedulerProfile(), checks="full").get(
        f"{NS}/{root}"
    )


def assert_poc_refuses_and_dev_schedules(objs, root, message, *, placed=True):
    """The POC rules refuse the tree with ``message``; ``--kube-version 1.38`` (master's checks)
    and v1.37 accept it, and both engines place its pods (one node of ample CPU). ``placed=False``
    for the depth cases, where master's queue-side bound of 4 hops (not modelled here, see
    docs/upstream-hierarchy-validation.md §2.1) is what decides."""
    for version in ("1.37", DEV):
        c, greedy, exact = run(objs, version)
        assert poc_error(c, root) == message
        assert c.groups.validation_error(f"{NS}/{root}") is None
        if placed:
            pending = sorted(p.key for p in c.groups.members(f"{NS}/{root}") if not p.bound)
            assert sorted(greedy.placements()) == sorted(exact.placements()) == pending
    return c, greedy


def test_b1_pod_group_hierarchy_exceeding_workload_max_tree_depth_fails_only_the_poc_validation():
    objs = [
        node(),
        cpg("cpg-root"),
        cpg("cpg1", parent="cpg-root"),
        cpg("cpg2", parent="cpg1"),
        cpg("cpg3", parent="cpg2"),
        pg("pg1", parent="cpg3"),
        *pods("pg1"),
    ]
    assert_poc_refuses_and_dev_schedules(
        objs,
        "cpg-root",
        f'hierarchy depth exceeds maximum allowed depth 4 at "{NS}/cpg3"',
        placed=False,
    )


def test_b2_composite_pod_group_at_depth_4_fails_only_the_poc_validation():
    objs = [
        node(),
        cpg("cpg-root"),
        cpg("cpg1", parent="cpg-root"),
        cpg("cpg2", parent="cpg1"),
        cpg("cpg3", parent="cpg2"),
        pg("pg1", parent="cpg-root"),
        *pods("pg1"),
    ]
    assert_poc_refuses_and_dev_schedules(
        objs,
        "cpg-root",
        f'hierarchy depth exceeds maximum allowed depth 4 at "{NS}/cpg3"',
        placed=False,
    )


def test_b3_pod_group_hierarchy_referencing_multiple_distinct_workloads_fails_only_the_poc_validation():
    objs = [
        node(),
        cpg("cpg-root", workload="wl-1"),
        pg("pg1", parent="cpg-root", workload="wl-2"),
        *pods("pg1"),
    ]
    assert_poc_refuses_and_dev_schedules(
        objs,
        "cpg-root",
        f'pod group workload does not match root workload, got: "wl-2" ("{NS}/pg1") and "wl-1" ("{NS}/cpg-root")',
    )


def test_b4_gang_parent_composite_pod_group_with_basic_child_group_fails_only_the_poc_validation():
    objs = [node(), cpg("cpg-root", gang=1), pg("pg1", parent="cpg-root"), *pods("pg1")]
    assert_poc_refuses_and_dev_schedules(
        objs, "cpg-root", f'gang parent "{NS}/cpg-root" cannot have basic child "{NS}/pg1"'
    )


def test_b5_parent_with_all_disruption_mode_and_child_with_single_disruption_mode_fails_only_the_poc_validation():
    objs = [
        node(),
        cpg("cpg-root", mode="all"),
        pg("pg1", parent="cpg-root", mode="single"),
        *pods("pg1"),
    ]
    assert_poc_refuses_and_dev_schedules(
        objs,
        "cpg-root",
        f'parent "{NS}/cpg-root" with All disruption mode cannot have child "{NS}/pg1" with Single disruption mode',
    )


def test_an_invalid_hierarchy_leaves_the_rest_of_the_snapshot_scheduled():
    objs = [
        node(),
        cpg("cpg-root", gang=1),
        pg("pg1", parent="cpg-root", gang=1, priority=50),
        *pods("pg1"),
        pg("other", gang=1),
        *pods("other"),
    ]
    assert_refused(
        objs,
        "cpg-root",
        "all pod groups in a hierarchy should have the same priority as the root pod group's "
        f'priority, got 50 ("{NS}/pg1") and 100 ("{NS}/cpg-root")',
        others_placed=[f"{NS}/other-pod-0"],
        accepted_by="1.36",
    )


# ---- the older queue-loop version @d6947b57: cycles and missing parents --------------------------------
def test_a1_incomplete_pod_group_hierarchy_with_cycle_holds_its_pods_and_schedules_after_breaking_the_cycle():
    objs = [
        node(),
        cpg("cpg1", parent="cpg2"),
        cpg("cpg2", parent="cpg1"),
        pg("pg1", parent="cpg1"),
        *pods("pg1"),
        pg("other"),
        *pods("other"),
    ]
    c, greedy, exact = run(objs)
    assert c.gated[f"{NS}/pg1-pod-0"].startswith(
        "waiting for an incomplete hierarchy: parent links form a cycle"
    )
    assert greedy.placements() == exact.placements() == {f"{NS}/other-pod-0": "node1"}
    objs[2] = cpg("cpg2")  # re-created without a parent
    _, greedy, _ = run(objs)
    assert greedy.pods[f"{NS}/pg1-pod-0"].node == "node1"


def test_a2_incomplete_pod_group_hierarchy_with_missing_parent_holds_its_pods_and_schedules_after_the_parent_is_created():
    objs = [node(), cpg("cpg1", parent="cpg-root"), pg("pg1", parent="cpg1"), *pods("pg1")]
    c, greedy, _ = run(objs)
    assert c.gated[f"{NS}/pg1-pod-0"] == f"waiting for CompositePodGroup {NS}/cpg-root"
    assert greedy.placements() == {}
    _, greedy, _ = run([*objs, cpg("cpg-root")])
    assert greedy.pods[f"{NS}/pg1-pod-0"].node == "node1"


# ---- validatePodGroup checks C, D, G, H, I (v1.37; the development code keeps them) ----------------------
def test_a_child_group_priority_other_than_the_roots_fails_validation():
    objs = [
        node(),
        cpg("cpg-root"),
        pg("pg1", parent="cpg-root", priority=50),
        *pods("pg1", priority=100),
    ]
    assert_refused(
        objs,
        "cpg-root",
        "all pod groups in a hierarchy should have the same priority as the root pod group's "
        f'priority, got 50 ("{NS}/pg1") and 100 ("{NS}/cpg-root")',
        version="1.37",
        accepted_by="1.36",
    )


def test_cpg_hierarchy_validation_mismatched_priority_fails_every_pod():
    # cpg_test.go TestCPGHierarchyValidationMismatchedPriority: groups at 100, pods at 50.
    objs = [
        node("node1", "20"),
        cpg("cpg-root"),
        pg("pg1", parent="cpg-root"),
        pg("pg2", parent="cpg-root"),
        *pods("pg1", 2, priority=50),
        *pods("pg2", 2, priority=50),
    ]
    assert_refused(
        objs,
        "cpg-root",
        "all pods in a pod group hierarchy should have the same priority as the root pod "
        f'group\'s priority, got 50 ("pg1-pod-0") and 100 ("{NS}/cpg-root")',
        version="1.37",
        accepted_by="1.36",
    )


def test_a_gang_whose_pods_have_different_preemption_policies_is_refused_by_both_engines():
    # Was: greedy SchedulerError, exact admitted, diff "greedy-suboptimal" (issue 10 reproducer 1).
    objs = [node(), pg("g", gang=2), *pods("g", 1), *pods("g", 1, policy="Never", start=1)]
    assert_refused(
        objs,
        "g",
        "all pods in a pod group hierarchy should have the same preemption policy as the root pod "
        f'group\'s preemption policy, got Never ("g-pod-1") and PreemptLowerPriority ("{NS}/g")',
        version="1.37",
        accepted_by="1.36",
    )


def test_a_gang_whose_pods_all_name_another_scheduler_is_left_to_it_by_both_engines():
    # Was: greedy placed it, exact rejected it, diff "model-mismatch" (issue 10 reproducer 2).
    c, greedy, exact = run([node(), pg("g", gang=2), *pods("g", 2, scheduler="other")])
    assert set(c.gated.values()) == {
        "schedulerName 'other' is not served by profile 'default-scheduler'"
    }
    assert greedy.placements() == exact.placements() == {}
    assert diff_snapshot(c, time_limit=5.0, workers=1).classification == "identical"


def test_a_bound_member_of_another_scheduler_fails_the_schedulername_check():
    bound = pods("g", 1, scheduler="other")[0]
    bound["metadata"]["name"] = "g-old"
    bound["spec"]["nodeName"] = "node1"
    objs = [node(), pg("g", gang=2), *pods("g", 1), bound]
    assert_refused(
        objs,
        "g",
        "all pods in a pod group hierarchy should have the same .spec.schedulerName set, got: "
        '"other" ("g-old") and "default-scheduler" ("g-pod-0")',
        version="1.37",
        accepted_by="1.36",
    )


# ---- cpg_test.go cases ---------------------------------------------------------------------------------------
def test_cpg_gang_with_basic_children_schedules_as_cpg_test_expects_at_every_version_with_cpgs():
    # cpg_test.go @16457a8a TestCPGGangWithBasicChildren: pg1, pg2 scheduled, pg3 (10-CPU pods) not.
    objs = [
        node("node1", "8"),
        cpg("cpg-root", gang=2),
        pg("pg1", parent="cpg-root"),
        pg("pg2", parent="cpg-root"),
        pg("pg3", parent="cpg-root"),
        *pods("pg1", 3),
        *pods("pg2", 3),
        *pods("pg3", 3, cpu="10"),
    ]
    for version in ("1.37", DEV):
        c, greedy, exact = run(objs, version)
        assert c.groups.validation_error(f"{NS}/cpg-root") is None
        assert (
            poc_error(c, "cpg-root")
            == f'gang parent "{NS}/cpg-root" cannot have basic child "{NS}/pg1"'
        )
        placed = {k.split("/")[1].rsplit("-pod-", 1)[0] for k in greedy.placements()}
        assert placed == {"pg1", "pg2"}
        assert sorted(greedy.placements()) == sorted(exact.placements())


@pytest.mark.parametrize(
    ("name", "objs", "placed"),
    [
        (
            "TestCPGBasicWithGangChildren",
            [
                node("node1", "20"),
                cpg("cpg-root"),
                pg("pg1", parent="cpg-root", gang=3),
                pg("pg2", parent="cpg-root", gang=3),
                *pods("pg1", 3),
                *pods("pg2", 2),
                *pods("pg2", 1, cpu="100", start=2),
            ],
            {"pg1"},
        ),
        (
            "TestCPGBasicWithBasicChildren",
            [
                node("node1", "20"),
                cpg("cpg-root"),
                pg("pg1", parent="cpg-root"),
                pg("pg2", parent="cpg-root"),
                *pods("pg1", 2),
                *pods("pg2", 2),
            ],
            {"pg1", "pg2"},
        ),
        (
            "TestCPGBasicWithUnschedulableBasicChildren",
            [
                node("node1", "20"),
                cpg("cpg-root"),
                pg("pg1", parent="cpg-root"),
                pg("pg2", parent="cpg-root"),
                *pods("pg1", 2, cpu="50"),
                *pods("pg2", 2, cpu="50"),
            ],
            set(),
        ),
    ],
)
def test_valid_cpg_test_hierarchies_schedule_as_upstream(name, objs, placed):
    c, greedy, exact = run(objs)
    assert all(c.groups.validation_error(r) is None for r in c.groups.roots), name
    assert {k.split("/")[1] for k, g in greedy.groups.items() if g.admitted} == placed
    assert greedy.admitted_groups() == exact.admitted_groups()


# ---- property: random hierarchies, valid and invalid ---------------------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def forests(draw):
    """Up to 7 groups in one namespace, parents drawn among earlier composites (chains up to depth
    5), random policies, disruption modes, workload names, priorities and pod policies; ample CPU."""
    n = draw(st.integers(2, 7))
    objs, composites, leaves = [node("node1", "64")], [], []
    for i in range(n):
        composite = draw(st.booleans()) and i < n - 1
        parent = draw(st.sampled_from([None, *composites])) if composites else None
        kw = dict(
            parent=parent,
            mode=draw(st.sampled_from([None, "single", "all"])),
            workload=draw(st.sampled_from(["wl", "wl", "wl", "other"])),
            priority=draw(st.sampled_from([100, 100, 100, 50])),
        )
        if composite:
            objs.append(cpg(f"c{i}", gang=draw(st.sampled_from([None, 1, 2])), **kw))
            composites.append(f"c{i}")
        else:
            size = draw(st.integers(1, 2))
            objs.append(pg(f"g{i}", gang=draw(st.sampled_from([None, size])), **kw))
            for j in range(size):
                objs += pods(
                    f"g{i}",
                    1,
                    start=j,
                    priority=draw(st.sampled_from([100, 100, 100, 50])),
                    policy=draw(st.sampled_from([None, None, None, "Never"])),
                )
            leaves.append(f"g{i}")
    return objs


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(forests())
def test_greedy_exact_and_validator_agree_on_which_hierarchies_may_be_admitted(objs):
    from gangplan.models.result import Status
    from gangplan.solver.outcome import admitted_entities, build_result

    c, greedy, exact = run(objs)
    tree = c.groups
    invalid = {r for r in tree.roots if tree.validation_error(r) is not None}
    queued_roots = {
        tree.entity_of(p).key
        for p in c.pending_pods
        if p.key not in c.gated and p.group_key in tree
    }
    got_greedy = {e.key for e in admitted_entities(c, greedy.placements())}
    got_exact = {e.key for e in admitted_entities(c, exact.placements())}
    assert not (got_greedy | got_exact) & invalid
    # Ample capacity: every valid root the queue holds is admitted by both engines.
    assert got_greedy == got_exact == queued_roots - invalid
    # The validator refuses any placement of an invalid hierarchy's queued pods.
    for root in invalid & queued_roots:
        forced = {
            p.key: "node1"
            for p in tree.members(root)
            if p.key in {q.key for q in c.pending_pods} and p.key not in c.gated
        }
        result = build_result(c, engine="test", status=Status.HEURISTIC, placements=forced)
        assert "group-validation" in {v.rule for v in validate(c, result)}
    for key in invalid & queued_roots:
        for p in tree.members(key):
            if p.key in greedy.pods and p.key not in c.gated:
                assert (
                    greedy.pods[p.key].reason.endswith(tree.validation_error(key))
                    or "SchedulerError" in greedy.pods[p.key].reason
                )
