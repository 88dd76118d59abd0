"""Where the exact engine's time goes, the bounded tie-break, and the packed warm start.

* ``trace.timing`` accounts for the run: build, start (hint repair, first-fit and packed
  starts), model check, decision phases, tie-break, result; the parts add up to at most the wall
  time, and superseded merged solves are listed with their seconds.
* the tie-break phase never changes the status of proven decision tiers: skipped, or stopped
  unproven, the Result stays OPTIMAL with gap 0 and ``trace["tiebreak"]`` gives its own gap.
* the packed start (``gangplan.solver.exact.start.packing``) is valid and, on an overloaded cluster
  where queue order admits one big gang, admits the cheaper gangs instead.
"""

from __future__ import annotations

import pytest

from gangplan.bench.generators.builders import node_object, pod_group_object, pod_object, to_cluster
from gangplan.bench.generators.gpu_clusters import gpu_benchmark
from gangplan.models.result import Status
from gangplan.models.well_known import HOSTNAME
from gangplan.solver.exact import build_model, solve, solve_exact
from gangplan.solver.exact.start.hint import (
    complete_first_fit,
    empty_counts,
    entities_in_queue_order,
    placements_from_counts,
)
from gangplan.solver.exact.start.packing import packed_start
from gangplan.solver.outcome import build_result
from gangplan.solver.validate import validate

PARTS = ("build", "start", "model_check", "decision", "tiebreak", "result")


def test_the_trace_says_where_the_time_went():
    c = to_cluster(gpu_benchmark(200, 256, profile="busy", seed=1))
    r = solve_exact(c, time_limit=10.0, workers=2, seed=0)
    trace = r.exact_trace
    timing = trace.timing
    parts = [getattr(timing, k) for k in PARTS]
    assert all(v is not None and v >= 0 for v in parts)
    assert sum(parts) <= r.wall_seconds + 1e-3
    assert timing.total <= r.wall_seconds + 1e-3
    assert (
        timing.packing is not None
        and timing.packing <= timing.start + 1e-3
        and timing.packing_runs >= 1
    )
    phases = trace.phases + (trace.superseded or [])
    solves = {(p.phase, p.seconds) for p in phases if p.tier != "tiebreak"}
    assert sum(s for _, s in solves) <= timing.decision + 1e-3
    tb = trace.tiebreak
    assert tb.value == r.objective["tiebreak"] and tb.budget <= max(0.5, 0.2 * 10.0) + 1e-6
    assert tb.gap == pytest.approx(abs(tb.bound - tb.value) / max(1.0, abs(tb.bound)), abs=1e-6)
    again = type(r).from_json(r.to_json())  # the additive keys survive the typed round trip
    assert again.exact_trace.tiebreak == tb and again.exact_trace.timing == timing


def test_a_skipped_tie_break_leaves_the_decision_tiers_optimal(monkeypatch):
    monkeypatch.setattr(solve, "SKIP_TIEBREAK_SECONDS", 1e9)  # as if the decision tiers used it all
    c = to_cluster(gpu_benchmark(100, 64, profile="busy", seed=0))
    r = solve_exact(c, time_limit=10.0, workers=1, seed=0)
    assert r.status == Status.OPTIMAL and r.gap == 0.0
    tb = r.exact_trace.tiebreak
    assert tb.solved is False and tb.status == "FEASIBLE" and tb.seconds == 0.0
    assert tb.bound >= tb.value == r.objective["tiebreak"]
    assert [str(v) for v in validate(c, r)] == []


def test_an_unproven_tie_break_does_not_demote_proven_decision_tiers(monkeypatch):
    real = solve._solve_group

    def tiebreak_stops_early(em, group, out, units, workers, seed, budget):
        ok = real(em, group, out, units, workers, seed, budget)
        if group[0].name == "tiebreak":  # as if its time ran out 10 points short of its bound
            out.phases[-1].status = "FEASIBLE"
            out.phases[-1].bound = out.phases[-1].value + 10.0
        return ok

    monkeypatch.setattr(solve, "_solve_group", tiebreak_stops_early)
    c = to_cluster(gpu_benchmark(100, 64, profile="busy", seed=0))
    r = solve_exact(c, time_limit=10.0, workers=1, seed=0)
    assert r.status == Status.OPTIMAL and r.gap == 0.0
    tb = r.exact_trace.tiebreak
    assert tb.status == "FEASIBLE" and tb.bound == tb.value + 10
    assert tb.gap == pytest.approx(10 / max(1.0, tb.bound), abs=1e-6)
    assert r.bound["tiebreak"] == r.objective["tiebreak"] + 10
    assert all(p.status == "OPTIMAL" for p in r.exact_trace.phases if p.tier != "tiebreak")


def test_the_packed_start_admits_the_cheap_gangs_queue_order_blocks():
    # 4 nodes x 4 CPU. Queue order: one gang of 4 x 4 CPU (takes everything), then 4 gangs of 1 x 4 CPU.
    objs = [node_object(f"n{i}", cpu="4", labels={HOSTNAME: f"n{i}"}) for i in range(4)]
    objs.append(pod_group_object("big", min_count=4, priority=10, created=0))
    objs += [
        pod_object(f"big-{j}", group="big", requests={"cpu": "3"}, priority=10, created=1)
        for j in range(4)
    ]
    for g in range(3):
        objs.append(pod_group_object(f"small{g}", min_count=1, priority=10, created=2 + 2 * g))
        objs.append(
            pod_object(
                f"small{g}-0",
                group=f"small{g}",
                requests={"cpu": "2"},
                priority=10,
                created=3 + 2 * g,
            )
        )
    c = to_cluster(objs)
    built = build_model(c)
    em = built.em
    empty = empty_counts(em)
    first_fit = complete_first_fit(em, empty)
    packed, runs = packed_start(
        em, built.tiers, empty, entities_in_queue_order(em, empty.per_class)
    )
    admitted = built.tiers[0]
    assert admitted.value(first_fit) == 1 and admitted.value(packed) == 3 and runs >= 1
    result = build_result(
        c, engine="packed", status=Status.HEURISTIC, placements=placements_from_counts(em, packed)
    )
    assert [str(v) for v in validate(c, result)] == []
    assert solve_exact(c, time_limit=5.0, workers=1).objective["admitted[p=10]"] == 3
