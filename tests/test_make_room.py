"""make-room (issue 40): the cheapest moves / evictions that admit a pending gang, checked by
the greedy engine, against a brute force on small clusters."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gangplan.bench.generators.builders import (
    node_object,
    pod_group_object,
    pod_object,
    to_cluster,
)
from gangplan.models.room import RoomWeights
from gangplan.solver.room import TargetError, make_room, resolve_targets
from gangplan.solver.room.verify import check_plan

GPU = "nvidia.com/gpu"
W = RoomWeights()


def _node(i: int, gpus: int = 8, **labels):
    return node_object(
        f"n{i}",
        cpu="64",
        memory="512Gi",
        gpus=gpus,
        labels={"kubernetes.io/hostname": f"n{i}", **labels},
    )


def _running(name, node, gpus=1, owner=("ReplicaSet", "web-1"), **kw):
    return pod_object(name, requests={"cpu": "1", GPU: gpus}, node_name=node, owner=owner, **kw)


def _gang(name, pods, gpus, priority=None, **kw):
    objs = [pod_group_object(name, min_count=pods, priority=priority, **kw)]
    objs += [
        pod_object(f"{name}-{j}", requests={"cpu": "4", GPU: gpus}, group=name, priority=priority)
        for j in range(pods)
    ]
    return objs


def test_the_fewest_pods_move_and_kube_scheduler_then_admits_the_gang() -> None:
    objs = [_node(i) for i in range(3)]
    for k, node in enumerate(["n0", "n0", "n1", "n1", "n2", "n2", "n2"]):
        objs.append(_running(f"web-{k}", node))
    objs += _gang("train", 2, 8)
    doc = make_room(to_cluster(objs), time_limit=5)
    assert doc.targets == ["default/train"]
    assert doc.proven and doc.verified
    plan = doc.optimal
    assert sorted(m.pod for m in plan.moves) == [f"default/web-{k}" for k in range(4)]
    assert plan.cordon == ["n0", "n1"] and all(m.to == "n2" for m in plan.moves)
    assert plan.cost.moves == 4 and plan.cost.groups == 0 and plan.cost.gpus == 4
    assert plan.check.moved_running == 4 and plan.check.targets_admitted == ["default/train"]
    assert not plan.check.violations
    assert doc.baseline.found and doc.baseline.cost.total >= plan.cost.total


def test_bare_and_daemonset_pods_never_move() -> None:
    objs = [_node(i) for i in range(2)]
    objs += [
        _running("bare", "n0", owner=None),
        _running("ds", "n0", owner=("DaemonSet", "dcgm")),
        _running("web", "n1"),
    ]
    objs += _gang("train", 1, 8)
    doc = make_room(to_cluster(objs), time_limit=5)
    assert doc.not_movable == {
        "a DaemonSet pod: it comes back on the same node": 1,
        "a bare pod: nothing re-creates it": 1,
    }
    assert [m.pod for m in doc.optimal.moves] == ["default/web"]
    assert doc.optimal.cordon == ["n1"] and doc.verified


def test_no_plan_is_proven_when_nothing_may_move() -> None:
    objs = [_node(0), _running("bare", "n0", owner=None)]
    objs += _gang("train", 1, 8)
    doc = make_room(to_cluster(objs), time_limit=5)
    assert doc.proven and not doc.optimal.found and not doc.verified
    assert doc.optimal.moves == [] and "proved" in doc.notes[0]


def test_evictions_need_evict_and_a_lower_priority() -> None:
    # n0: a bare priority-1 pod (only evictable); n1: a priority-100 web pod (movable, to n2).
    objs = [_node(i) for i in range(3)]
    objs += [
        _running("low", "n0", owner=None, priority=1),
        _running("web", "n1", priority=100),
        _running("pinned", "n2", owner=None, priority=100),
    ]
    objs += _gang("train", 2, 8, priority=100)
    cluster = to_cluster(objs)
    without = make_room(cluster, time_limit=5)
    assert without.targets == ["default/train"]  # kube-scheduler's own preemption is not enough
    assert without.proven and not without.optimal.found
    with_ = make_room(cluster, evict=True, time_limit=5)
    plan = with_.optimal
    assert plan.found and plan.evictions == ["default/low"]
    assert [(m.pod, m.to) for m in plan.moves] == [("default/web", "n2")]
    assert plan.cost.evictions == 1 and plan.cost.moves == 1 and with_.verified


def test_a_pdb_holds_the_pods_it_protects() -> None:
    objs = [_node(i) for i in range(3)]
    objs += [_running("a-0", "n0", labels={"app": "a"}), _running("b-0", "n1", labels={"app": "b"})]
    objs += [_running(f"b-{k}", "n1", labels={"app": "b"}) for k in (1, 2)]
    objs.append(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "a", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "a"}}},
            "status": {"disruptionsAllowed": 0},
        }
    )
    objs += [_node(2)][:0]
    objs += _gang("train", 1, 8)
    # n2 is free: nothing has to move at all, so the gang would fit; take n2 away with a pod.
    objs.append(_running("c-0", "n2", gpus=8, owner=None))
    doc = make_room(to_cluster(objs), time_limit=5)
    assert doc.proven and doc.optimal.found
    assert {m.pod for m in doc.optimal.moves} == {"default/b-0", "default/b-1", "default/b-2"}


def test_an_all_mode_gang_moves_whole() -> None:
    objs = [_node(i) for i in range(3)]
    objs.append(pod_group_object("infer", min_count=2))
    objs[-1]["spec"]["disruptionMode"] = {"all": {}}
    objs += [
        pod_object(
            f"infer-{k}",
            requests={"cpu": "1", GPU: 1},
            node_name=n,
            group="infer",
            owner=("Job", "infer"),
        )
        for k, n in enumerate(["n0", "n1"])
    ]
    objs += [_running("web-0", "n1"), _running("web-1", "n2"), _running("web-2", "n2")]
    objs += _gang("train", 1, 8)
    doc = make_room(to_cluster(objs), time_limit=5)
    plan = doc.optimal
    assert doc.proven and plan.found
    moved = sorted(m.pod for m in plan.moves)
    # Emptying n0 costs the whole infer group (2 pods, a group disrupted); n1 the group and web-0;
    # n2 two single pods: cheapest.
    assert moved == ["default/web-1", "default/web-2"] and plan.cost.groups == 0


def test_targets_resolve_by_name_and_bad_names_are_refused() -> None:
    objs = [_node(0)] + _gang("train", 1, 8) + [_running("web", "n0")]
    cluster = to_cluster(objs)
    from gangplan.solver.greedy import solve_greedy

    greedy = solve_greedy(cluster)
    assert resolve_targets(cluster, ["train"], greedy) == ["default/train"]
    assert resolve_targets(cluster, ["default/train-0"], greedy) == ["default/train"]
    with pytest.raises(TargetError, match="no PodGroup"):
        resolve_targets(cluster, ["nope"], greedy)


def test_the_check_fails_a_plan_that_leaves_a_moved_pod_nowhere() -> None:
    objs = [_node(0), _node(1, gpus=1)]
    objs += [_running("web-0", "n0"), _running("web-1", "n0")]
    objs += _gang("train", 1, 8)
    cluster = to_cluster(objs)
    check = check_plan(
        cluster,
        targets=["default/train"],
        moved=["default/web-0", "default/web-1"],
        evicted=[],
        cordoned=["n0"],
    )
    assert not check.verified and check.moved_pending == ["default/web-1"]


# ---- brute force ------------------------------------------------------------------------------
def _brute_min_cost(
    nodes: list[int], running: list[tuple[int, int]], gang: tuple[int, int]
) -> int | None:
    """Fewest-cost set of moved pods (each pod: (node, gpus), all movable single pods) such that
    the gang's pods (count, gpus each) fit on nodes that no moved pod lands on, and every moved pod
    fits elsewhere; None when no set works."""
    pods, gpus = gang
    best = None
    n = len(running)
    for size in range(n + 1):
        for moved in itertools.combinations(range(n), size):
            cost = W.cost(groups=0, moves=size, evictions=0, gpus=sum(running[i][1] for i in moved))
            if best is not None and cost >= best:
                continue
            free = list(nodes)
            for i, (node, g) in enumerate(running):
                if i not in moved:
                    free[node] -= g
            for assign in itertools.product(range(len(nodes)), repeat=pods):
                left = list(free)
                for node in assign:
                    left[node] -= gpus
                if min(left) < 0:
                    continue
                fenced = set(assign)
                if _pack([running[i][1] for i in moved], left, fenced):
                    best = cost
                    break
    return best


def _pack(items: list[int], free: list[int], fenced: set[int]) -> bool:
    open_ = [k for k in range(len(free)) if k not in fenced]
    for assign in itertools.product(open_, repeat=len(items)):
        left = list(free)
        for g, node in zip(items, assign, strict=True):
            left[node] -= g
        if min(left) >= 0:
            return True
    return not items


@settings(max_examples=25, deadline=None)
@given(
    layout=st.lists(
        st.lists(st.integers(1, 4), max_size=3).filter(lambda pods: sum(pods) <= 8),
        min_size=2,
        max_size=3,
    ),
    gang=st.tuples(st.integers(1, 2), st.sampled_from([4, 8])),
)
def test_the_plan_costs_no_more_than_any_other(layout, gang) -> None:
    objs = [_node(i) for i in range(len(layout))]
    running = []
    for i, pods in enumerate(layout):
        for k, g in enumerate(pods):
            objs.append(_running(f"w-{i}-{k}", f"n{i}", gpus=g))
            running.append((i, g))
    objs += _gang("train", *gang)
    cluster = to_cluster(objs)
    from gangplan.solver.greedy import solve_greedy

    if solve_greedy(cluster).groups["default/train"].admitted:
        return  # nothing to do: make-room has no target
    doc = make_room(cluster, time_limit=5)
    want = _brute_min_cost([8] * len(layout), running, gang)
    assert doc.proven
    if want is None:
        assert not doc.optimal.found
        return
    assert doc.optimal.found and doc.optimal.cost.total == want
    assert doc.verified, doc.optimal.check
    assert doc.baseline.cost.total >= want or not doc.baseline.found


def test_every_make_room_scenario_meets_its_expectations() -> None:
    from pathlib import Path

    from gangplan.solver.room.suite import run_room_suite

    folder = Path(__file__).resolve().parent.parent / "scenarios" / "make-room"
    rows = run_room_suite(folder, time_limit=5)
    assert len(rows) >= 7
    for row in rows:
        assert row.ok and row.expectations >= 2, (row.scenario, row.error, row.failures)
        assert row.doc.optimal.check is None or not row.doc.optimal.check.violations


def test_the_cli_prints_the_plan_and_exits_by_whether_it_works(tmp_path) -> None:
    import json
    from pathlib import Path

    from typer.testing import CliRunner

    from gangplan.cli import app

    folder = Path(__file__).resolve().parent.parent / "scenarios" / "make-room"
    runner = CliRunner()
    ok = runner.invoke(app, ["make-room", str(folder / "fragmented-8gpu.yaml"), "--json"])
    assert ok.exit_code == 0, ok.output
    doc = json.loads(ok.stdout)
    assert doc["verified"] and doc["proven"] and len(doc["optimal"]["moves"]) == 4
    assert {"pod", "from", "to"} <= set(doc["optimal"]["moves"][0])
    assert doc["nodesToAdd"][0]["count"] == 2 and "baseline" in doc
    plan = tmp_path / "room.yaml"
    shown = runner.invoke(
        app, ["make-room", str(folder / "fragmented-8gpu.yaml"), "--plan", str(plan)]
    )
    assert shown.exit_code == 0 and "proven cheapest" in shown.stdout
    script = (tmp_path / "room.sh").read_text()
    assert script.index("kubectl cordon") < script.index("/eviction") < script.index("uncordon")
    assert "kubectl wait --for=condition=Ready pod -l app=infer -n serve" in script
    assert plan.read_text().count("kind: Eviction") == 4
    none = runner.invoke(app, ["make-room", str(folder / "bare-pods-need-nodes.yaml")])
    assert none.exit_code == 3 and "no plan" in none.stdout
    bad = runner.invoke(app, ["make-room", str(folder / "fragmented-8gpu.yaml"), "nope"])
    assert bad.exit_code == 2 and "nope" in bad.output
    weight = runner.invoke(
        app, ["make-room", str(folder / "fragmented-8gpu.yaml"), "--weight", "moves=x"]
    )
    assert weight.exit_code == 2 and "whole number" in weight.output
    suite = runner.invoke(app, ["make-room", "--suite", str(folder)])
    assert suite.exit_code == 0 and "7 of 7 scenarios" in suite.stdout


def test_the_check_refuses_evictions_a_pdb_forbids() -> None:
    objs = [_node(0), _node(1)]
    objs += [_running("db-0", "n0", labels={"app": "db"}, owner=("StatefulSet", "db"))]
    objs.append(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "db", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "db"}}},
            "status": {"disruptionsAllowed": 0},
        }
    )
    objs += _gang("train", 1, 8)
    cluster = to_cluster(objs)
    check = check_plan(
        cluster, targets=["default/train"], moved=["default/db-0"], evicted=[], cordoned=["n0"]
    )
    assert not check.verified and "PodDisruptionBudget" in check.violations[0]


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    nodes=st.integers(2, 4),
    gang_pods=st.integers(1, 2),
)
def test_the_cost_floor_never_cuts_the_optimum(seed, nodes, gang_pods) -> None:
    """The floor (solver/exact/room.py) only speeds up the proof: with it and without it the
    proven optimal cost is the same, on random clusters with all-mode gangs and single pods."""
    import random

    import gangplan.solver.exact.room as room_family

    rng = random.Random(seed)
    objs = [_node(i) for i in range(nodes + 1)]
    free = {f"n{i}": 8 for i in range(nodes + 1)}
    for g in range(nodes):
        pg = pod_group_object(f"ray-{g}", min_count=2)
        if rng.random() < 0.5:
            pg["spec"]["disruptionMode"] = {"all": {}}
        objs.append(pg)
        for k in range(2):
            node = rng.choice([n for n, f in free.items() if f >= 2])
            free[node] -= 2
            objs.append(
                pod_object(
                    f"ray-{g}-{k}",
                    requests={"cpu": "1", GPU: 2},
                    node_name=node,
                    group=f"ray-{g}",
                    owner=("Job", f"ray-{g}"),
                )
            )
    for k in range(rng.randint(0, 4)):
        node = rng.choice([n for n, f in free.items() if f >= 1])
        free[node] -= 1
        objs.append(_running(f"web-{k}", node))
    objs += _gang("train", gang_pods, 8)
    cluster = to_cluster(objs)
    with_floor = make_room(cluster, ["train"], add_nodes=False, time_limit=5)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(room_family, "_cost_floor", lambda *a, **k: None)
        without = make_room(cluster, ["train"], add_nodes=False, time_limit=5)
    assert with_floor.proven and without.proven
    assert with_floor.optimal.found == without.optimal.found
    assert with_floor.optimal.cost.total == without.optimal.cost.total


def test_a_pod_on_a_cordoned_node_stays_where_it_runs() -> None:
    # n0 is cordoned: its pod stays (the model could not let it stay); n1's pod moves to n2.
    objs = [
        node_object("n0", cpu="64", memory="512Gi", gpus=8, unschedulable=True),
        _node(1),
        _node(2),
    ]
    objs += [_running("web-0", "n0"), _running("web-1", "n1"), _running("web-2", "n2")]
    objs += _gang("train", 1, 8)
    doc = make_room(to_cluster(objs), time_limit=5)
    assert doc.not_movable == {
        "its node no longer admits it (cordoned or tainted): it stays where it runs": 1
    }
    assert doc.verified and len(doc.optimal.moves) == 1
    assert doc.optimal.moves[0].pod in {"default/web-1", "default/web-2"}


def test_pending_work_kube_scheduler_places_first_keeps_its_room() -> None:
    # `other` (priority 10) takes n1 before the gang; the plan must empty n0, moving web to n2.
    objs = [_node(0), _node(1), _node(2)]
    objs += [_running("web-0", "n0"), _running("web-1", "n0")]
    objs.append(_running("held", "n2", gpus=4, owner=None))
    objs.append(pod_object("other", requests={"cpu": "4", GPU: 8}, priority=10, created=30))
    objs += _gang("train", 1, 8)
    doc = make_room(to_cluster(objs), time_limit=5)
    assert doc.targets == ["default/train"]
    assert doc.proven and doc.verified
    assert sorted((m.pod, m.to) for m in doc.optimal.moves) == [
        ("default/web-0", "n2"),
        ("default/web-1", "n2"),
    ]
    assert doc.optimal.cordon == ["n0"]


def test_samples_replay_the_plan_with_random_ties() -> None:
    from pathlib import Path

    import gangplan as gp

    folder = Path(__file__).resolve().parent.parent / "scenarios" / "make-room"
    doc = gp.make_room(gp.load(folder / "fragmented-8gpu.yaml"), samples=6, add_nodes=False)
    check = doc.optimal.check
    assert check.ties == "first" and check.draws == 6 and check.draws_working == 6
    plain = gp.make_room(gp.load(folder / "fragmented-8gpu.yaml"), add_nodes=False)
    assert plain.optimal.check.draws == 0
