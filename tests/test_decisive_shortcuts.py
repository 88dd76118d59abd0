"""The decisive-step search's shortcuts (issue 27) answer what the long way answers.

* ``pod_scores_at_step(step="recorded", chosen=...)`` evaluates only the pod's cycles inside
  placements holding the node its kept cycle chose: the evidence equals the replay that evaluates
  every cycle.
* ``cannot_reach`` (a probe's feasibility pre-check with the optimum's admission tiers held) says
  True only where the full probe (``solve_exact`` with the prefix fixed) answers no.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplan.io.loader import load_snapshot
from gangplan.models.objective import compare
from gangplan.models.result import Status
from gangplan.solver.diff.classification import shared_tiers
from gangplan.solver.diff.decisive import candidate_choices, cannot_reach, greedy_choices
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import pod_scores_at_step, replay_options, solve_greedy
from gangplan.solver.greedy.schedule_one import PodScheduler
from gangplan.solver.validate import validate

SHOWCASE = Path(__file__).resolve().parent.parent / "scenarios" / "showcase"
CASES = ["tas-rack-no-backtracking.yaml", "two-gangs-compete.yaml", "tas-cpg-no-backtracking.yaml"]


def valid(cluster, r):
    assert not validate(cluster, r), validate(cluster, r)[:3]
    return r


@pytest.mark.parametrize("name", CASES)
def test_recorded_evidence_with_the_kept_node_equals_the_full_replay(
    name: str, monkeypatch
) -> None:
    cluster = load_snapshot(SHOWCASE / name)
    greedy = valid(cluster, solve_greedy(cluster))
    steps = greedy_choices(greedy)
    assert steps
    calls = {"full": 0, "fast": 0}
    explain = PodScheduler.explain
    side = ["full"]

    def counted(self, *args):
        calls[side[0]] += 1
        return explain(self, *args)

    monkeypatch.setattr(PodScheduler, "explain", counted)
    for pod, node in steps:
        others = [n.name for n in cluster.nodes if n.name != node][:1]
        side[0] = "full"
        full = pod_scores_at_step(
            cluster, pod, [node, *others], step="recorded", **replay_options(greedy)
        )
        side[0] = "fast"
        fast = pod_scores_at_step(
            cluster, pod, [node, *others], step="recorded", chosen=node, **replay_options(greedy)
        )
        assert fast == full, pod
    assert calls["fast"] <= calls["full"]
    if name.startswith("tas-"):  # the gangs are tried in more than one rack: fewer evaluations
        assert calls["fast"] < calls["full"]


@pytest.mark.parametrize("name", CASES)
def test_the_pre_check_says_no_only_where_the_full_probe_says_no(name: str) -> None:
    cluster = load_snapshot(SHOWCASE / name)
    greedy = valid(cluster, solve_greedy(cluster))
    optimal = valid(cluster, solve_exact(cluster, time_limit=10, workers=1, seed=0, hint=greedy))
    assert optimal.status == Status.OPTIMAL
    choices, _ = candidate_choices(cluster, greedy, optimal)
    decided = 0
    for k in range(1, len(choices) + 1):
        fixed = {pod: node for _, pod, node in choices[:k]}
        r = solve_exact(cluster, time_limit=10, workers=1, seed=0, fixed=fixed)
        agrees = (
            r.status in (Status.OPTIMAL, Status.FEASIBLE)
            and compare(
                shared_tiers(r.objective, optimal.objective),
                shared_tiers(optimal.objective, r.objective),
            )
            >= 0
        )
        if r.status in (Status.OPTIMAL, Status.FEASIBLE):
            valid(cluster, r)
        if cannot_reach(cluster, fixed, optimal, time_limit=10, workers=1, seed=0, preemption=None):
            decided += 1
            assert not agrees, (name, k)
    assert decided > 0  # every case here has a prefix no optimum shares


def _evidence_cases():
    from gangplan.bench.generators.builders import to_cluster
    from gangplan.bench.generators.small_snapshots import small_mixed, small_preemption

    for name in ("preempt-nvlink-clique.yaml", "preempt-all-mode-unit.yaml", *CASES):
        for version in ("1.35", "1.36", "1.37"):
            yield f"{name}@{version}", load_snapshot(SHOWCASE / name).at_version(version)
    for seed in range(8):
        yield f"small_preemption_{seed}", to_cluster(small_preemption(seed))
        yield f"small_mixed_{seed}", to_cluster(small_mixed(seed))


def test_recorded_evidence_stops_the_replay_once_the_kept_cycle_is_final(monkeypatch) -> None:
    """From v1.36 the replay stops after the entity that bound the pod (``settled``): the evidence
    of every step is what the replay to the end gives, and the early steps' replays run fewer
    cycles."""
    from gangplan.solver.greedy import evidence as ev
    from gangplan.solver.greedy.podgroup import WorkloadCycle

    cycles = {"n": 0}
    schedule_pod = WorkloadCycle.schedule_pod

    def counted(self, pod):
        cycles["n"] += 1
        return schedule_pod(self, pod)

    monkeypatch.setattr(WorkloadCycle, "schedule_pod", counted)
    settled = ev._ScoresBefore.settled
    shorter = compared = 0
    for label, cluster in _evidence_cases():
        greedy = valid(cluster, solve_greedy(cluster, preemption=True))
        for pod, node in greedy_choices(greedy)[:6]:
            if not greedy.greedy_trace.pods[pod].kept:
                continue
            others = [n.name for n in cluster.nodes if n.name != node][:2]
            args = dict(step="recorded", chosen=node, **replay_options(greedy))
            cycles["n"] = 0
            fast = pod_scores_at_step(cluster, pod, [node, *others], **args)
            n_fast = cycles["n"]
            monkeypatch.setattr(ev._ScoresBefore, "settled", lambda self, state: False)
            cycles["n"] = 0
            full = pod_scores_at_step(cluster, pod, [node, *others], **args)
            n_full = cycles["n"]
            monkeypatch.setattr(ev._ScoresBefore, "settled", settled)
            assert fast == full, (label, pod)
            assert n_fast <= n_full
            shorter += n_fast < n_full
            compared += 1
    assert compared > 50  # 77 when written
    assert shorter > compared // 4, (shorter, compared)  # 43 of 77 when written


@pytest.mark.parametrize("name", CASES)
def test_a_pre_check_that_decides_nothing_hands_its_model_to_the_probe(name: str) -> None:
    """The full probe after an undecided pre-check takes the pre-check's model (built once, not
    changed: the held tiers went into a copy) and answers exactly what a fresh build answers."""
    from gangplan.solver.exact import build as build_module

    cluster = load_snapshot(SHOWCASE / name)
    greedy = valid(cluster, solve_greedy(cluster))
    optimal = valid(cluster, solve_exact(cluster, time_limit=10, workers=1, seed=0, hint=greedy))
    choices, _ = candidate_choices(cluster, greedy, optimal)
    handed = 0
    for k in range(0, len(choices) + 1):  # k = 0: the optimum itself is the pre-check's answer
        fixed = {pod: node for _, pod, node in choices[:k]}
        build_module._HANDED.clear()
        fresh = solve_exact(cluster, time_limit=10, workers=1, seed=0, fixed=fixed, tiebreak=False)
        if cannot_reach(cluster, fixed, optimal, time_limit=10, workers=1, seed=0, preemption=None):
            assert not build_module._HANDED
            continue
        assert build_module._HANDED and build_module._HANDED[0][0] is cluster
        ready = build_module._HANDED[0][2]
        taken = solve_exact(cluster, time_limit=10, workers=1, seed=0, fixed=fixed, tiebreak=False)
        assert not build_module._HANDED  # taken by that build
        assert ready.em.model.proto.constraints  # the probe solved the handed-over model
        if taken.status in (Status.OPTIMAL, Status.FEASIBLE):
            valid(cluster, taken)
        assert taken.status == fresh.status and taken.objective == fresh.objective, (name, k)
        assert taken.placements() == fresh.placements(), (name, k)
        handed += 1
    build_module._HANDED.clear()
    assert handed > 0
