"""The class-level start (:mod:`gangplan.solver.exact.start.classpack`): on small busy GPU draws it is a
valid placement the model accepts, never worse on the decision tiers than the packed start it is
hinted with, and (the level model being exact for these one-dimensional divisible requests) it
reaches the exact engine's proven decision-tier optimum; instances it does not model get None."""

from __future__ import annotations

import pytest

from gangplan.bench.generators.builders import to_cluster
from gangplan.bench.generators.gpu_clusters import gpu_benchmark
from gangplan.models.result import Status
from gangplan.solver.exact import build_model, solve_exact
from gangplan.solver.exact.objective import TIEBREAK
from gangplan.solver.exact.start.check import model_accepts
from gangplan.solver.exact.start.classpack import _mip_groups, _unit_sizes, level_start
from gangplan.solver.exact.start.hint import (
    default_incumbent,
    entities_in_queue_order,
    placements_from_counts,
)
from gangplan.solver.exact.start.packing import packed_start
from gangplan.solver.outcome import build_result
from gangplan.solver.validate import validate

DRAWS = [(40, 64, 0), (40, 64, 1), (60, 128, 2), (100, 256, 3)]


def _decision(built, counts) -> list[int]:
    return [t.value(counts) for t in built.tiers if t.name != TIEBREAK]


@pytest.mark.parametrize(("nodes", "pods", "seed"), DRAWS)
def test_class_start_is_valid_accepted_and_not_worse_than_packed(
    nodes: int, pods: int, seed: int
) -> None:
    cluster = to_cluster(gpu_benchmark(nodes, pods, profile="busy", seed=seed))
    built = build_model(cluster)
    base = default_incumbent(built.em)
    entities = entities_in_queue_order(built.em, base.per_class)
    packed, _ = packed_start(built.em, built.tiers, base, entities, seconds=0.5)
    found = level_start(built, base, entities, packed, seconds=10.0)
    assert found is not None
    result = build_result(
        cluster,
        engine="hint",
        status=Status.HEURISTIC,
        placements=placements_from_counts(built.em, found),
    )
    assert validate(cluster, result) == []
    assert model_accepts(built, found)
    assert _decision(built, found) >= _decision(built, packed)
    exact = solve_exact(cluster, time_limit=20.0, workers=1, seed=0)
    assert validate(cluster, exact) == []
    if exact.status == Status.OPTIMAL:
        assert _decision(built, found) == [
            exact.objective[t.name] for t in built.tiers if t.name != TIEBREAK
        ]


def test_requests_that_are_not_divisible_multiples_get_no_class_start() -> None:
    cluster = to_cluster(gpu_benchmark(40, 64, profile="busy", seed=0))
    built = build_model(cluster)
    em = built.em
    classes = list(range(len(built.inst.classes)))
    unit = _unit_sizes(em, classes)
    assert unit is not None
    u, sizes = unit
    assert all((em.req[c] == u * g).all() for c, g in sizes.items())
    three = next(c for c in classes if sizes[c] == 1)
    em.req[three] = em.req[three] * 3  # 3 units next to 2, 4, 8: not divisible
    assert _unit_sizes(em, classes) is None


@pytest.mark.parametrize(("nodes", "pods", "seed"), DRAWS)
def test_lean_class_start_is_valid_accepted_and_not_worse_than_packed(
    nodes: int, pods: int, seed: int
) -> None:
    """The engine's lean start (lower admission tiers only, LP-skipped when it cannot beat the
    packed start): None, or a valid placement the model accepts, never worse than the packed one."""
    cluster = to_cluster(gpu_benchmark(nodes, pods, profile="busy", seed=seed))
    built = build_model(cluster)
    base = default_incumbent(built.em)
    entities = entities_in_queue_order(built.em, base.per_class)
    packed, _ = packed_start(built.em, built.tiers, base, entities, seconds=0.5)
    found = level_start(built, base, entities, packed, seconds=5.0, lean=True)
    if found is None:
        return
    result = build_result(
        cluster,
        engine="hint",
        status=Status.HEURISTIC,
        placements=placements_from_counts(built.em, found),
    )
    assert validate(cluster, result) == []
    assert model_accepts(built, found)
    assert _decision(built, found)[0] >= _decision(built, packed)[0]


def test_lean_groups_leave_the_top_tier_to_the_floor_row() -> None:
    # four tiers: three priorities' admissions, then placed
    assert _mip_groups(4, 0, lean=False) == [[0], [1, 2, 3]]
    assert _mip_groups(4, 5, lean=True) == [[1, 2]]
    assert _mip_groups(4, 0, lean=True) == [[0], [1, 2]]
    assert _mip_groups(2, 5, lean=True) == [[1]]
    assert _mip_groups(1, 5, lean=True) == [[0]]


def test_packing_continued_from_a_restart_index_and_stopped_at_a_target() -> None:
    """``packed_start(first=k)`` packs only restarts k.. (no plain order) and ``stop`` ends the
    restarts as soon as the best satisfies it; every result is a valid placement."""
    cluster = to_cluster(gpu_benchmark(60, 128, profile="busy", seed=2))
    built = build_model(cluster)
    base = default_incumbent(built.em)
    entities = entities_in_queue_order(built.em, base.per_class)
    top = built.tiers[0]
    plain, runs = packed_start(built.em, built.tiers, base, entities, seconds=30.0, restarts=0)
    assert runs == 1
    cont, runs = packed_start(
        built.em, built.tiers, base, entities, seconds=30.0, restarts=3, first=5
    )
    assert runs == 3
    stopped, runs = packed_start(
        built.em,
        built.tiers,
        base,
        entities,
        seconds=30.0,
        restarts=3,
        first=5,
        stop=lambda c: top.value(c) >= 1,
    )
    assert top.value(base) == 0 and top.value(stopped) >= 1
    assert runs == 1  # the first restart's result already satisfies the target
    for counts in (plain, cont, stopped):
        result = build_result(
            cluster,
            engine="hint",
            status=Status.HEURISTIC,
            placements=placements_from_counts(built.em, counts),
        )
        assert validate(cluster, result) == []
        assert model_accepts(built, counts)
