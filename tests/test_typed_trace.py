"""Typed traces (``gangplan.models.trace``): every trace JSON goes JSON -> model -> JSON unchanged,
the trace model follows the engine, a replay is watched by an observer (no exception unwinds the
run), and the decisive step's greedy evidence comes from greedy's own run, preemption included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gangplan.io.loader import load_snapshot
from gangplan.models.result import Result
from gangplan.models.trace import (
    EmptyTrace,
    ExactTiming,
    ExactTrace,
    GreedyTrace,
    HintUse,
    ModelStats,
    PhaseTiming,
    PodPreemption,
    SolvePhase,
    WorkloadPreemption,
)
from gangplan.solver.diff import GREEDY_SUBOPTIMAL, diff_snapshot
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import (
    build_trace,
    pod_scores_at_step,
    replay_options,
    run_cycle,
    solve_greedy,
)
from gangplan.solver.validate import validate

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
SHOWCASE = ROOT / "scenarios" / "showcase"


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json")), ids=lambda p: p.stem)
def test_every_golden_greedy_result_round_trips_byte_for_byte(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))["result"]
    r = Result.model_validate(doc)
    assert isinstance(r.trace, GreedyTrace)
    assert r.to_json() == json.dumps(doc, indent=2) + "\n"


@pytest.mark.parametrize(
    "name", ["preempt-all-mode-unit.yaml", "tas-cpg-no-backtracking.yaml", "design-card-a100.yaml"]
)
def test_greedy_and_exact_results_round_trip_through_their_trace_models(name: str) -> None:
    cluster = load_snapshot(SHOWCASE / name)
    greedy = solve_greedy(cluster)
    exact = solve_exact(cluster, time_limit=5.0, workers=1, hint=greedy)
    assert validate(cluster, greedy) == [] and validate(cluster, exact) == []
    assert isinstance(greedy.trace, GreedyTrace) and isinstance(exact.trace, ExactTrace)
    for r in (greedy, exact):
        text = r.to_json()
        again = Result.from_json(text)
        assert again == r and again.to_json() == text
        bare = Result.from_json(r.to_json(with_trace=False))
        assert isinstance(bare.trace, EmptyTrace) and json.loads(bare.to_json())["trace"] == {}
    hint = exact.exact_trace.hint
    assert hint is not None and hint.used and hint.engine == "greedy"
    assert (
        "violations" not in json.loads(exact.to_json())["trace"]["hint"]
    )  # an absent key stays absent


def test_the_exact_engine_builds_its_trace_typed_with_the_timing_keys_in_run_order() -> None:
    # The goldens drop every timing, so the timing JSON's keys and their order are checked here.
    cluster = load_snapshot(SHOWCASE / "design-card-a100.yaml")
    r = solve_exact(cluster, time_limit=5.0, workers=1, hint=solve_greedy(cluster))
    assert validate(cluster, r) == []
    trace = r.exact_trace
    assert isinstance(trace.model, ModelStats) and isinstance(trace.hint, HintUse)
    assert isinstance(trace.timing, ExactTiming) and all(
        isinstance(p, SolvePhase) for p in trace.phases
    )
    assert all(isinstance(p.timing, PhaseTiming) for p in trace.phases)
    doc = json.loads(r.to_json())["trace"]
    assert list(doc["timing"]) == [
        "build",
        "start",
        "modelCheck",
        "packing",
        "packingRuns",
        "classPacking",
        "decision",
        "tiebreak",
        "result",
        "total",
        "work",
    ]
    assert isinstance(doc["timing"]["packingRuns"], int) and isinstance(
        doc["timing"]["packing"], float
    )
    solved = [p["timing"] for p in doc["phases"] if p["timing"].get("solver") is not None]
    assert solved and all(list(t)[:2] == ["budget", "hint"] and "solver" in t for t in solved)
    assert all(
        list(t) == sorted(t, key=["budget", "hint", "solver", "decode", "topUp", "work"].index)
        for t in solved
    )
    assert (
        trace.tiebreak is None or "solved" not in doc["tiebreak"]
    )  # only a skipped tie-break says so
    pod = cluster.pending_pods[0].key
    bad = solve_exact(cluster, time_limit=5.0, workers=1, fixed={pod: "nowhere"})
    bad_doc = json.loads(bad.to_json())["trace"]
    assert bad.status.value == "INFEASIBLE" and bad_doc["infeasible"] and "phases" not in bad_doc
    assert list(bad_doc["timing"]) == ["build", "result", "total"]
    assert Result.from_json(bad.to_json()).to_json() == bad.to_json()


def test_the_trace_follows_the_engine_and_an_unknown_engine_keeps_a_free_object() -> None:
    cluster = load_snapshot(SHOWCASE / "preempt-one-gang-not-five.yaml")
    data = json.loads(solve_greedy(cluster).to_json())
    attempts = Result.model_validate(data).greedy_trace.preemption
    assert attempts and all(
        isinstance(a, WorkloadPreemption | PodPreemption) for a in attempts.values()
    )
    with pytest.raises(ValueError):  # a greedy trace must have the greedy keys, no others
        Result.model_validate({**data, "trace": {**data["trace"], "steps": 3}})
    other = Result.model_validate({**data, "engine": "mine", "trace": {"steps": [1, 2]}})
    assert other.trace == {"steps": [1, 2]} and json.loads(other.to_json())["trace"] == {
        "steps": [1, 2]
    }
    with pytest.raises(TypeError):
        other.greedy_trace  # noqa: B018


class StopAt:
    """Stops the run just before ``key``'s first cycle; records every cycle it saw."""

    def __init__(self, key: str) -> None:
        self.key, self.seen, self.done = key, [], []

    def watches(self, pod) -> bool:
        return pod.key == self.key

    def before_cycle(self, state, pod) -> bool:
        self.seen.append(pod.key)
        return pod.key == self.key

    def after_cycle(self, state, pod, result) -> None:
        self.done.append(pod.key)


def test_an_observer_stops_the_run_before_the_pod_without_an_exception() -> None:
    cluster = load_snapshot(SHOWCASE / "two-gangs-compete.yaml")
    full = solve_greedy(cluster, preemption=False).greedy_trace
    assert full.entities == ["team-a/small", "team-b/large"] and full.order[2] == "team-b/large-0"
    stop = StopAt("team-b/large-0")
    st = run_cycle(cluster, preemption=False, observer=stop).state
    assert st.stopped
    assert (
        stop.seen == full.order[:3] and stop.done == full.order[:2]
    )  # the stopped cycle never ran
    assert st.trace.order == full.order[:2] and "team-b/large-0" not in st.trace.results
    assert set(st.placements) == {
        "team-a/small-0",
        "team-a/small-1",
    }  # what ran before the stop stands
    # stopped in the first entity: no later entity is scheduled
    first = StopAt(full.order[0])
    st = run_cycle(cluster, preemption=False, observer=first).state
    assert (
        st.stopped
        and st.trace.entities == full.entities[:1]
        and st.trace.order == []
        and st.placements == {}
    )
    assert first.seen == [full.order[0]] and first.done == []


def test_an_observer_that_never_stops_leaves_the_run_as_it_is() -> None:
    cluster = load_snapshot(SHOWCASE / "tas-rack-binpacking-blocks.yaml")
    watch = StopAt("nobody/none")
    st = run_cycle(cluster, observer=watch).state
    assert not st.stopped and watch.done == watch.seen
    assert build_trace(st) == solve_greedy(cluster).greedy_trace


def test_a_replay_runs_with_the_options_of_the_result_it_explains() -> None:
    cluster = load_snapshot(SHOWCASE / "preempt-nvlink-clique.yaml")
    r = solve_greedy(cluster, tie_break="random", seed=4, top_k=2, preemption=True)
    assert replay_options(r) == {
        "tie_break": "random",
        "seed": 4,
        "top_k": 2,
        "preemption": True,
        "kube_version": "1.37",
    }
    assert replay_options(solve_greedy(cluster, preemption=False))["preemption"] is False


def test_a_preemption_decisive_step_shows_the_cycle_that_ran_with_the_victims_gone() -> None:
    """Greedy places the NVLink gang on clique-a only after workload-aware preemption removed the
    batch pods there: its first cycle saw clique-a full. The decisive step's scores are those of
    the cycle whose choice greedy kept (victims removed), not of that first cycle."""
    cluster = load_snapshot(SHOWCASE / "preempt-nvlink-clique.yaml")
    d = diff_snapshot(cluster, time_limit=10.0, probe_time_limit=5.0, workers=1, preemption=True)
    assert d.classification == GREEDY_SUBOPTIMAL
    step = d.decisive
    assert step is not None and step.pod and step.greedy_node and step.preemption is not None
    assert step.preemption.path == "workload" and step.greedy_node in step.preemption.nodes
    assert step.greedy_scores.feasible is True and step.greedy_scores.total > 0
    kept = pod_scores_at_step(
        cluster, step.pod, [step.greedy_node], step="recorded", **replay_options(d.greedy)
    )
    assert step.greedy_scores.dump() == kept[step.greedy_node]
    first = pod_scores_at_step(cluster, step.pod, [step.greedy_node], preemption=True)
    assert first[step.greedy_node]["feasible"] is False  # before eviction: no room there
    assert "Insufficient" in first[step.greedy_node]["reason"]
    assert (
        solve_greedy(cluster, preemption=False).pods[step.pod].node is None
    )  # without eviction: never placed
    # the placement evidence is greedy's own (the run with eviction), read from its Result: the
    # binding cycle after the preemption (rule W of issue 39) tries the placement its nominations
    # point to first and keeps it, so that is the one it evaluated
    decision = d.greedy.greedy_trace.groups[step.placement.group].placements
    assert step.placement.chosen == decision.chosen == decision.nominated
    evaluated = {e.name: e.total for e in decision.evaluated}
    assert list(evaluated) == [decision.chosen]
    assert {n: p.total for n, p in step.placement.placements.items() if n in evaluated} == evaluated
