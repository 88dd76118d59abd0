"""Opt-in eviction in the exact engine (``solve_exact(..., preemption=True)``).

The exact engine must admit what the greedy's upstream preemption admits (scenarios/upstream-
preemption/, the integration cases of ``test/integration/scheduler/podgroup/podgroup_test.go``
@008b3652, and the unit cases of tests/test_greedy_preemption.py), never with more victims, and
accept the greedy's placement with its victims. Every Result goes through validate().
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplan.bench.generators.builders import to_cluster
from gangplan.bench.generators.small_snapshots import small_mixed
from gangplan.io.loader import load_snapshot
from gangplan.models.cluster import Cluster
from gangplan.models.objects import (
    Affinity,
    LabelSelector,
    PodAffinityTerm,
    PodDisruptionBudget,
    PodGroup,
)
from gangplan.models.result import Result, Status
from gangplan.solver.diff import IDENTICAL, diff_snapshot
from gangplan.solver.exact import build_model, check_feasible, solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.greedy.testing import make_node, make_pod
from gangplan.solver.outcome import compare
from gangplan.solver.validate import validate
from tests.test_greedy_preemption import WAP_CASES, wap_case

SCENARIOS = sorted(
    (Path(__file__).resolve().parent.parent / "scenarios" / "upstream-preemption").glob("*.yaml")
)
EXPECT_VICTIMS = "gangplan.io/expect-victims"
LOW, MID, HIGH = 10, 20, 30


def exact(c: Cluster, **kw) -> Result:
    r = solve_exact(c, preemption=True, time_limit=5.0, workers=1, **kw)
    assert [str(v) for v in validate(c, r)] == []
    return r


def greedy(c: Cluster) -> Result:
    r = solve_greedy(c, preemption=True)
    assert [str(v) for v in validate(c, r)] == []
    return r


def accepts(c: Cluster, r: Result) -> bool:
    verdict = check_feasible(c, r.placements(), r.victims)
    return verdict is True or verdict == []


def cluster(nodes, pods, groups=(), pdbs=()) -> Cluster:
    return Cluster(
        nodes=tuple(nodes),
        pods=tuple(pods),
        pod_groups={g.key: g for g in groups},
        pdbs=tuple(pdbs),
    )


def bound(
    name: str, node: str, priority: int, *, cpu: int = 1000, labels=None, group: str | None = None
):
    return make_pod(
        name, node=node, priority=priority, labels=labels, group=group, requests={"cpu": cpu}
    )


def pending(name: str, priority: int, *, cpu: int = 1000, group: str | None = None):
    return make_pod(name, priority=priority, group=group, requests={"cpu": cpu})


def expected_victims(c: Cluster) -> list[str]:
    notes = [
        g.annotations.get(EXPECT_VICTIMS)
        for g in c.pod_groups.values()
        if g.annotations.get(EXPECT_VICTIMS)
    ]
    return sorted(k.strip() for n in notes for k in n.split(","))


# ---- the upstream scenarios ------------------------------------------------------------------
@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_on_the_upstream_preemption_scenarios_exact_admits_what_greedy_admits_with_no_more_victims(
    path,
):
    c = load_snapshot(path)
    g = greedy(c)
    assert g.victims == expected_victims(c)
    for hint in (g, None):
        r = exact(c, hint=hint)
        assert r.status == Status.OPTIMAL
        assert r.admitted_groups() == g.admitted_groups()
        assert len(r.victims) <= len(g.victims)
        assert compare(r.objective, g.objective) == 0
        assert all(
            r.pods[k].nominated
            for k in r.placements()
            if r.placements()[k] in {p.node_name for p in c.bound_pods if p.key in r.victims}
        )
    assert accepts(c, g)


@pytest.mark.parametrize("name", WAP_CASES)
def test_on_the_greedy_unit_cases_exact_evicts_as_many_pods_of_each_priority_as_upstream(name):
    # Ties among equally important victims (uid order upstream) may go either way; the number of
    # victims per priority, the PDB outcome and the admission must match.
    c, upstream = wap_case(name)
    r = exact(c, hint=greedy(c))
    prio = {p.key: p.priority for p in c.pods}
    assert r.groups["default/pre"].admitted and r.pods["default/pre-0"].nominated
    assert sorted(prio[k] for k in r.victims) == sorted(prio[k] for k in upstream)
    assert r.objective.get("pdbViolations", 0.0) == 0.0


# ---- disruption criteria ---------------------------------------------------------------------
@pytest.mark.parametrize("guarded_node", ["n1", "n2"])
def test_a_victim_protected_by_a_pdb_is_spared_when_an_unprotected_one_frees_the_same_room(
    guarded_node,
):
    free_node = "n2" if guarded_node == "n1" else "n1"
    pods = [
        bound("guarded", guarded_node, LOW, labels={"app": "db"}),
        bound("plain", free_node, LOW),
        pending("urgent", HIGH),
    ]
    budget = PodDisruptionBudget(
        namespace="default",
        name="db",
        selector=LabelSelector(match_labels={"app": "db"}),
        disruptions_allowed=0,
    )
    c = cluster([make_node("n1", cpu=1000), make_node("n2", cpu=1000)], pods, pdbs=[budget])
    r = exact(c)
    assert r.victims == ["default/plain"]
    assert r.pods["default/urgent"].node == free_node and r.pods["default/urgent"].nominated
    assert r.objective["pdbViolations"] == 0.0 and r.objective["victims"] == 1.0


def test_a_pdb_with_budget_left_costs_nothing_and_only_the_excess_counts():
    pods = [bound(f"db-{i}", f"n{i}", LOW, labels={"app": "db"}) for i in range(3)]
    pods += [pending(f"urgent-{i}", HIGH) for i in range(3)]
    budget = PodDisruptionBudget(
        namespace="default",
        name="db",
        selector=LabelSelector(match_labels={"app": "db"}),
        disruptions_allowed=1,
    )
    c = cluster([make_node(f"n{i}", cpu=1000) for i in range(3)], pods, pdbs=[budget])
    r = exact(c)
    assert len(r.victims) == 3 and r.objective["placed"] == 3.0
    assert r.objective["pdbViolations"] == 2.0


def test_two_low_priority_victims_are_cheaper_than_one_of_middle_priority():
    pods = [
        bound("low-a", "n1", LOW, cpu=500),
        bound("low-b", "n1", LOW, cpu=500),
        bound("mid", "n2", MID),
        pending("urgent", HIGH),
    ]
    c = cluster([make_node("n1", cpu=1000), make_node("n2", cpu=1000)], pods)
    r = exact(c)
    assert r.victims == ["default/low-a", "default/low-b"]
    assert r.objective["victims[p=20]"] == 0.0 and r.objective["victims[p=10]"] == 2.0


def test_fewer_victims_win_among_victims_of_one_priority():
    pods = [
        bound("small-a", "n1", LOW, cpu=500),
        bound("small-b", "n1", LOW, cpu=500),
        bound("big", "n2", LOW),
        pending("urgent", HIGH),
    ]
    c = cluster([make_node("n1", cpu=1000), make_node("n2", cpu=1000)], pods)
    assert exact(c).victims == ["default/big"]


def test_an_all_mode_group_is_evicted_whole_even_when_one_pod_would_free_enough():
    whole = PodGroup(
        namespace="default",
        name="job",
        policy="gang",
        min_count=2,
        priority=LOW,
        disruption_mode="all",
    )
    pods = [
        bound("job-0", "n1", LOW, group="job"),
        bound("job-1", "n2", LOW, group="job"),
        pending("urgent", HIGH),
    ]
    c = cluster([make_node("n1", cpu=1000), make_node("n2", cpu=1000)], pods, [whole])
    r = exact(c)
    assert r.victims == ["default/job-0", "default/job-1"]
    assert r.objective["victims[p=10]"] == 2.0
    single = cluster(c.nodes, pods, [whole.model_copy(update={"disruption_mode": "single"})])
    assert len(exact(single).victims) == 1


def test_leftover_room_from_a_needed_victim_may_go_to_a_lower_priority_pod():
    # urgent (HIGH, 1 CPU) needs the victim's 2 CPU gone; the freed CPU it leaves is then used by
    # filler (LOW), as upstream's later cycles would. filler alone could not justify the eviction.
    pods = [
        bound("victim", "n1", LOW, cpu=2000),
        bound("keeper", "n1", 40, cpu=1000),
        pending("urgent", HIGH),
        pending("filler", LOW),
    ]
    c = cluster([make_node("n1", cpu=3000)], pods)
    r = exact(c)
    assert r.victims == ["default/victim"] and r.objective["placed"] == 2.0
    alone = cluster(c.nodes, [p for p in pods if p.name != "urgent"])
    r = exact(alone)
    assert r.victims == [] and r.pods["default/filler"].node is None


# ---- when nothing may be evicted -------------------------------------------------------------
@pytest.mark.parametrize("case", ["equal priority", "higher priority", "preemptionPolicy Never"])
def test_no_eviction_when_the_pending_pod_may_not_preempt_the_bound_one(case):
    prio = {"equal priority": HIGH, "higher priority": 40, "preemptionPolicy Never": LOW}[case]
    p = pending("urgent", HIGH)
    if case == "preemptionPolicy Never":
        p = p.model_copy(update={"preemption_policy": "Never"})
    c = cluster([make_node("n1", cpu=1000)], [bound("holder", "n1", prio), p])
    r = exact(c)
    assert r.victims == [] and r.pods["default/urgent"].node is None
    assert build_model(c, preemption=True).inst.units == []


def test_units_whose_pods_carry_or_meet_inter_pod_terms_are_evicted_like_any_other():
    # Upstream's SelectVictimsOnNode (preemption.go) never spares a pod for other pods' terms:
    # evicting either one-CPU pod places the urgent pod, as greedy does.
    term = PodAffinityTerm(
        label_selector=LabelSelector(match_labels={"app": "web"}),
        topology_key="kubernetes.io/hostname",
    )
    web = bound("web", "n1", LOW, labels={"app": "web"})
    other = bound("other", "n2", LOW).model_copy(
        update={"affinity": Affinity(pod_anti_affinity_required=(term,))}
    )
    c = cluster(
        [
            make_node("n1", cpu=1000, labels={"kubernetes.io/hostname": "n1"}),
            make_node("n2", cpu=1000, labels={"kubernetes.io/hostname": "n2"}),
        ],
        [web, other, pending("urgent", HIGH)],
    )
    g, r = greedy(c), exact(c)
    assert len(r.victims) == 1 and r.pods["default/urgent"].node is not None
    assert compare(r.objective, g.objective) >= 0


def test_with_preemption_off_nothing_is_evicted_and_every_disruption_tier_is_zero():
    c = cluster([make_node("n1", cpu=1000)], [bound("holder", "n1", LOW), pending("urgent", HIGH)])
    r = solve_exact(c, time_limit=5.0, workers=1, preemption=False)
    assert validate(c, r) == []
    assert r.victims == [] and r.pods["default/urgent"].node is None
    # The disruption tiers are shared by both engines (costs from Result.victims): all zero here.
    assert {
        k: v
        for k, v in r.objective.items()
        if k.startswith("victims") or k in ("pdbViolations", "brokenGroups")
    } == {"pdbViolations": 0.0, "victims[p=10]": 0.0, "brokenGroups": 0.0, "victims": 0.0}
    assert (r.params["preemption"], r.params["preemptionFrom"]) == (False, "flag")
    assert build_model(c).em.evict == [] and build_model(c).inst.units == []


def test_check_feasible_accepts_the_greedy_result_with_its_victims_and_rejects_it_without():
    c = load_snapshot(SCENARIOS[0])
    g = greedy(c)
    assert g.victims and accepts(c, g)
    assert check_feasible(c, g.placements(), ()) is not True


def test_diff_with_preemption_runs_both_engines_with_eviction():
    c = load_snapshot(SCENARIOS[0])
    d = diff_snapshot(c, time_limit=5.0, workers=1, explain=False, preemption=True)
    assert d.problems == []
    assert d.greedy.victims == d.optimal.victims == ["podgroup-test/blocker"]
    assert d.classification == IDENTICAL


# ---- random snapshots ------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(40))
def test_on_random_snapshots_both_engines_evict_validly_and_exact_is_never_worse(seed):
    c = to_cluster(small_mixed(seed))
    g = greedy(c)
    r = exact(c, hint=g)
    assert accepts(c, g)
    assert compare(r.objective, g.objective) >= 0, (r.objective, g.objective)
    if compare(r.objective, g.objective) == 0:
        assert len(r.victims) <= len(g.victims)
