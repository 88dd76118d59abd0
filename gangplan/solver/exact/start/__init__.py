"""Warm starts of the exact engine: complete solutions the solve begins from, never proofs.

Each start is a heuristic whose output the independent validator and the model itself
(:func:`.check.model_accepts`) accept before it seeds a solve, so the search stays exact:

* :mod:`.hint`: a given Result (the greedy's) repaired until the validator blames nothing, else
  the queue-order first fit (:func:`.hint.complete_first_fit`); the counts <-> placements
  conversions every start shares;
* :mod:`.packing`: the entities the first start leaves out, cheapest first, packed best fit with
  seeded restarts;
* :mod:`.classpack`: a class-level model of the decision tiers (pods per type and pool), decoded
  largest first.

The engine reads one function, :func:`warm_start`; the solve's phases reuse the counts
conversions and the packer (:func:`.packing.packed_start`) to top up their solutions.
"""

from __future__ import annotations

import time

from gangplan.models.result import Result
from gangplan.models.trace import ExactTiming, HintUse
from gangplan.solver.exact.budget import Budget, class_budget, pack_seconds
from gangplan.solver.exact.build import BuiltModel
from gangplan.solver.exact.start.check import model_accepts
from gangplan.solver.exact.start.classpack import class_start
from gangplan.solver.exact.start.hint import (
    default_incumbent,
    placements_from_counts,
    starting_solution,
)
from gangplan.solver.exact.start.packing import improved_start
from gangplan.solver.exact.variables import Counts

__all__ = ["default_incumbent", "model_accepts", "placements_from_counts", "warm_start"]


def warm_start(
    built: BuiltModel,
    hint: Result | None,
    *,
    budget: Budget,
    workers: int,
    seed: int,
    timing: ExactTiming,
) -> tuple[Counts | None, HintUse]:
    """The best start for a solve within ``budget`` (:class:`..budget.Budget`): the repaired
    ``hint`` (or first fit), improved by the packed start, then by the class-level start when
    nothing is forced; one the model rejects is replaced by placing nothing. ``timing`` gets
    ``start``, ``modelCheck``, ``packing`` / ``packingRuns`` and ``classPacking``; the returned
    :class:`HintUse` says which start won and why any was dropped. Each start's share is of the
    budget's work limit, and what it spends is charged to it (:func:`..budget.pack_seconds`,
    :func:`..budget.class_budget`), so the start is the same on any machine."""
    t1 = time.perf_counter()
    time_limit = budget.work
    incumbent, info = starting_solution(built, hint)
    incumbent = improved_start(
        built, incumbent, info, timing, seconds=pack_seconds(time_limit), budget=budget
    )
    if (
        default_incumbent(built.em) is not None
    ):  # nothing forced: the class-level start may do better
        t3 = time.perf_counter()
        seconds = class_budget(time_limit, budget.used)
        better = class_start(
            built,
            incumbent,
            seconds=seconds,
            workers=workers,
            seed=seed,
            first_restart=max(0, (timing.packing_runs or 1) - 1),
            budget=budget,
        )
        timing.class_packing = round(time.perf_counter() - t3, 4)
        if better is not None:
            incumbent, info.start = better, "class-level packing"
    t2 = time.perf_counter()
    placed_any = incumbent is not None and (incumbent.evicted or any(incumbent.per_class))
    if placed_any and not model_accepts(built, incumbent, budget=budget):
        # The validator accepted it but the model does not: never return it. Start from placing
        # nothing instead (or, with forced pods, from no solution at all).
        info.model_rejected = "the starting solution violates the model; dropped"
        info.used = False
        incumbent = default_incumbent(built.em)
    timing.start, timing.model_check = t2 - t1, time.perf_counter() - t2
    return incumbent, info
