"""How the exact engine splits its time limit between the decision tiers solved one at a time
(:mod:`.solve`) and the class-level warm start that solves its own tiers (:mod:`.start.classpack`):
one rule, read by both."""

from __future__ import annotations

import time

LATER_TIER_SHARE = 0.1
"""Per-tier budget of the one-at-a-time decision phases: what is left, minus this share of the
limit for each later decision tier (at least an even split of what is left). A tier that is not
proven leaves every later tier unproven too, and the higher tiers are where the time goes (busy
1,000 x 2,048: an even split gave the second tier ~1.8 s, while it often needs 2-4 s to find the
optimum its bound already shows); time a tier does not use rolls over to the next."""


def tier_budget(rest: float, later: int, time_limit: float) -> float:
    """The time of one tier solved alone: what is left (``rest``) minus ``LATER_TIER_SHARE`` of
    ``time_limit`` for each of the ``later`` tiers still to solve, at least an even split."""
    return max(rest / (later + 1), rest - later * LATER_TIER_SHARE * time_limit)


PACK_SHARE, MAX_PACK_SECONDS = 0.1, 3.0
"""What a solve with a time limit gives the packed start (:mod:`.start.packing`): this share of
it, at most this many seconds. Issue 27: 0.15 -> 0.1 (1.5 -> 1.0 s at 10 s; the restarts past the
first few rarely improve the decision tiers, and the phases need the time)."""
CLASS_SHARE, MAX_CLASS_SECONDS = 0.35, 6.0
"""What a solve with a time limit gives the class-level start (:mod:`.start.classpack`): this
share, at most this many seconds. Issue 27: the start is lean now (the lower
admission tiers only, skipped when their LP bound shows the packed start cannot be beaten, more
packing orders before HiGHS), so it uses this only where it may help (busy 1,000 x 2,048: 0.15-0.3
s in seed 2; seed 0 1.6 s, more orders reach 54; seed 1 2.9 s at load ~2, where HiGHS finds 39 / 7,
the optimum, but fails within 3.5-4.7 s at load ~4)."""


def pack_seconds(time_limit: float) -> float:
    return min(MAX_PACK_SECONDS, PACK_SHARE * time_limit)


def class_seconds(time_limit: float) -> float:
    return min(MAX_CLASS_SECONDS, CLASS_SHARE * time_limit)


DECISION_RESERVE = 0.5
"""Share of the time limit the starts leave the decision tiers in any case: the class-level start
gets what its share allows only while build, first-fit and packed start (slower on a loaded
machine: busy 1,000 x 2,048 at load ~5, 2.5 s before the class start instead of ~1.5) leave this
much (:func:`class_budget`)."""


def class_budget(time_limit: float, spent: float) -> float:
    """The class-level start's seconds when ``spent`` seconds of ``time_limit`` are gone."""
    return max(0.0, min(class_seconds(time_limit), (1.0 - DECISION_RESERVE) * time_limit - spent))


# ---- the deterministic budget ----------------------------------------------------------------
WALL_FACTOR, WALL_SLACK = 3.0, 10.0
"""The default wall-clock cap of a solve with a work limit of W units: ``WALL_FACTOR * W +
WALL_SLACK`` seconds. A safety net only: on this project's 2-core machines a unit took 0.4-1.5 s
of wall time, idle to loaded, so the work limit ends the search long before the cap unless the
machine is far busier than that."""

NODE_VISITS_PER_UNIT = 4_000_000
"""How the Python starts count their work: one unit per this many (pod class, node) visits of the
packer (about a second of its time on this project's machines, like a unit of CP-SAT's
deterministic time)."""
SIMPLEX_ITERATIONS_PER_UNIT = 50_000
"""HiGHS's work in the class-level start: one unit per this many simplex iterations."""
BUILD_VARIABLES_PER_UNIT = 60_000
"""The model build, charged by its size: one unit per this many CP-SAT variables (about a second
of building on this project's machines)."""
HIGHS_NODES_PER_UNIT = 400
"""HiGHS's branch-and-bound nodes per unit of a class-level MIP's share (its deterministic limit)."""


class Budget:
    """What one exact run may spend: ``work`` units of deterministic work and a wall-clock cap.

    Every decision of the engine (how much each start, phase and probe gets, when a heuristic
    stops) reads only the work spent so far, never the clock, so the same input and options give
    the same answer on an idle or a busy machine. The work is CP-SAT's deterministic time (its
    ``deterministic_time``, whose unit is meant to be close to a second) for every solve, and for
    the Python starts and HiGHS counted operations converted at the fixed rates above. The wall
    clock only cuts a run short when the machine is too slow for the work limit (``wall``
    seconds); that is recorded (:attr:`wall_hit`) and reported, because such an answer may differ
    from run to run.

    ``sub(units)`` hands a step a share: a child whose spending is also the parent's."""

    def __init__(
        self, work: float, wall: float | None = None, *, parent: Budget | None = None
    ) -> None:
        self.work = max(0.0, float(work))
        self.used = 0.0
        self.parent = parent
        if parent is None:
            self.wall = default_wall(self.work) if wall is None else float(wall)
            self.t0 = time.perf_counter()
            self._wall_hit = False

    @property
    def root(self) -> Budget:
        b = self
        while b.parent is not None:
            b = b.parent
        return b

    def left(self) -> float:
        """Units still to spend (a child: also within what its parent has left)."""
        own = max(0.0, self.work - self.used)
        return own if self.parent is None else min(own, self.parent.left())

    def charge(self, units: float) -> None:
        units = max(0.0, float(units))
        b: Budget | None = self
        while b is not None:
            b.used += units
            b = b.parent

    def sub(self, units: float) -> Budget:
        return Budget(min(max(0.0, units), self.left()), parent=self)

    def wall_left(self) -> float:
        root = self.root
        return root.wall - (time.perf_counter() - root.t0)

    def out_of_wall(self) -> bool:
        """The wall-clock cap has passed (recorded: the run is no longer reproducible)."""
        if self.wall_left() <= 0.0:
            self.root._wall_hit = True
            return True
        return False

    def exhausted(self) -> bool:
        return self.left() <= 0.0 or self.out_of_wall()

    @property
    def wall_hit(self) -> bool:
        return self.root._wall_hit

    def note_wall(self) -> None:
        self.root._wall_hit = True

    def configure(self, params, units: float, *, capped: bool = True) -> None:
        """CP-SAT parameters for a solve of ``units`` (``capped``: at most what is left): its
        deterministic time limit, and the wall cap's remaining seconds as its time limit (the
        safety net)."""
        if capped:
            units = min(units, self.left())
        params.max_deterministic_time = max(MIN_SOLVE_UNITS, units)
        params.max_time_in_seconds = max(MIN_SOLVE_SECONDS, self.wall_left())

    def after(self, solver, status_proved: bool) -> float:
        """Charge a finished CP-SAT solve; note the wall cap when it, not the work, stopped an
        unfinished search. Returns the units charged."""
        units = float(solver.response_proto.deterministic_time)
        self.charge(units)
        if not status_proved and self.wall_left() <= MIN_SOLVE_SECONDS:
            self.note_wall()
        return units


DETERMINISTIC_PARALLEL: dict[str, object] = {"interleave_search": True, "interleave_batch_size": 2}
"""With more than one worker: CP-SAT's deterministic parallel mode (``interleave_search``: the
subsolvers' work is cut into batches that run on the workers and are merged in a fixed order, so
the search no longer depends on which thread is faster). Without it two workers race and the
answer among equal optima, or where an unfinished search stops, depends on the machine's load
(issue 37: the same 5,000-node diff said ``equivalent`` at one load and OPTIMAL at another).
Measured on busy 1,000 x 2,048 (seeds 0-1, 10 units, load ~0.5): the default batch (3 tasks per
worker) took 9.6-9.8 s, a batch of 2 tasks 6.0-7.9 s (decision phases 0.1-0.7 s each), all
proven; the racing portfolio 5.4-7.3 s, with other placements on a rerun."""


def configure_solver(
    params, budget: Budget, units: float, *, workers: int, seed: int, capped: bool = True
) -> None:
    """Every CP-SAT solve of the exact engine: ``workers`` (deterministic when more than one),
    ``seed``, ``units`` of deterministic time within ``budget`` and its wall-clock cap."""
    params.num_workers = max(1, workers)
    params.random_seed = seed
    budget.configure(params, units, capped=capped)
    if workers >= 2:
        for name, value in DETERMINISTIC_PARALLEL.items():
            setattr(params, name, value)


MIN_SOLVE_UNITS = 0.05
"""The least deterministic time a CP-SAT solve is given (a solve of nothing still needs a little)."""
MIN_SOLVE_SECONDS = 0.05


def default_wall(work: float) -> float:
    return WALL_FACTOR * work + WALL_SLACK


class Meter:
    """The work of a Python heuristic, counted in node visits and charged to a budget as it goes.
    ``done()`` when its share is spent (deterministic) or the wall cap has passed (recorded)."""

    def __init__(self, budget: Budget | None, units: float) -> None:
        self.budget = budget
        self.cap = max(0.0, units)
        self.visits = 0

    @property
    def units(self) -> float:
        return self.visits / NODE_VISITS_PER_UNIT

    def tick(self, visits: int) -> None:
        self.visits += int(visits)
        if self.budget is not None:
            self.budget.charge(visits / NODE_VISITS_PER_UNIT)

    def done(self) -> bool:
        if self.units >= self.cap:
            return True
        return self.budget is not None and self.budget.out_of_wall()
