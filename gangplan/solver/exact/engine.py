"""The exact engine's entry point :func:`solve_exact`: build the model (:mod:`.build`), take a
warm start (:mod:`.start`), solve the tiers (:mod:`.solve`) and decode the Result."""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable

from gangplan.dra.capacity_rows import view_rows
from gangplan.gcpause import gc_paused
from gangplan.models import defaults as D
from gangplan.models.cluster import Cluster
from gangplan.models.result import Result, Status
from gangplan.models.room import RoomSpec
from gangplan.models.trace import ExactTiming, ExactTrace, ModelStats
from gangplan.solver.exact.budget import BUILD_VARIABLES_PER_UNIT, Budget
from gangplan.solver.exact.build import BuiltModel, build_model
from gangplan.solver.exact.domain_bound import tightened
from gangplan.solver.exact.domain_mip import proven_at_start
from gangplan.solver.exact.domain_start import domain_start
from gangplan.solver.exact.kept import keep
from gangplan.solver.exact.locality import SPREAD, TOPOLOGY
from gangplan.solver.exact.objective import GPUS, TIEBREAK
from gangplan.solver.exact.preemption import disruption_report, nominated_pods, victims_of
from gangplan.solver.exact.room import MAKE_ROOM
from gangplan.solver.exact.solve import solve_phases
from gangplan.solver.exact.start import default_incumbent, placements_from_counts, warm_start
from gangplan.solver.exact.variables import Counts
from gangplan.solver.outcome import build_result

ENGINE = "exact"


def _gc_paused(fn: Callable[..., Result]) -> Callable[..., Result]:
    """``fn`` run with the cyclic collector paused (:mod:`gangplan.gcpause`): every collection
    that lands in a run walks the model's many objects, and finds little to free (what is cyclic
    waits for the first collection after the run). Issue 37, 10,000-node GB200, load ~3.7: the
    model build took 4.3-5.4 s with collections, 2.5-3.1 s without. The answer is the same."""

    @functools.wraps(fn)
    def run(*args, **kwargs) -> Result:
        with gc_paused():
            return fn(*args, **kwargs)

    return run


def _kueue_opened(fn: Callable[..., Result]) -> Callable[..., Result]:
    """``fn``'s Result with its ``kueue`` part read off its placement when the snapshot has Kueue
    objects (:func:`gangplan.solver.kueue.derive.outcome_of`); the model itself answers the
    question Kueue's admission poses (:func:`.build.build_model` opens the snapshot:
    :func:`gangplan.solver.kueue.apply.opened_view`; :mod:`.quota` decides admission)."""

    @functools.wraps(fn)
    def run(cluster: Cluster, *args, **kwargs) -> Result:
        if cluster.kueue is None:
            return fn(cluster, *args, **kwargs)
        from gangplan.solver.kueue.apply import opened_view
        from gangplan.solver.kueue.derive import with_derived_admission

        return with_derived_admission(fn(cluster, *args, **kwargs), opened_view(cluster))

    return run


@_kueue_opened
@_gc_paused
def solve_exact(
    cluster: Cluster,
    *,
    time_limit: float = D.TIME_LIMIT,
    wall_limit: float | None = None,
    workers: int = D.WORKERS,
    seed: int = 0,
    objective: str = "default",
    hint: Result | None = None,
    fixed: dict[str, str | None] | None = None,
    snapshot: str | None = None,
    preemption: bool | None = None,
    tiebreak: bool = True,
    room: RoomSpec | None = None,
) -> Result:
    """The optimum placement (or the best found within ``time_limit``, with its bound).

    ``time_limit`` is a work limit: units of deterministic work (CP-SAT's deterministic time,
    whose unit is meant to be about a second, and the starts' counted operations at fixed rates:
    :class:`.budget.Budget`), so the same snapshot and options give the same Result on an idle
    and on a busy machine. ``wall_limit`` (default ``3 * time_limit + 10`` seconds) is the
    safety net: when the wall clock, not the work, stops an unproven search, ``params.stoppedBy``
    says ``wall-clock`` (the answer may then differ from run to run); ``work-limit`` otherwise.

    ``hint`` (e.g. the greedy Result) seeds every phase as a complete hint; the entities the
    independent validator blames are dropped first, and the rest is also a lower bound (it is
    feasible), so the answer is never worse than the hint's valid part. ``fixed`` forces pods
    onto nodes (``None``: the pod stays unplaced); a forced placement that is valid on its own
    becomes the starting solution.

    ``status``: OPTIMAL when every decision tier (admitted per priority, gpus, placed, and the
    locality tiers topology / spread when the snapshot or ``objective="compact"`` asks for them) is proven,
    FEASIBLE with ``gap`` (relative, of the first unproven tier) otherwise, INFEASIBLE only when
    ``fixed`` cannot hold, UNKNOWN when no solution was found in time. The tie-break tier is
    reported (objective, bound, trace) but never demotes a proven optimum. ``Result.bound`` has
    every tier's bound; ``trace`` the model size, build time, hint use and every phase.

    Where the time went (``trace``, additive): ``timing`` splits the wall time into ``build``,
    ``start`` (hint repair, first-fit and packed starts; ``packing`` of it, ``packingRuns``
    orders tried), ``modelCheck`` (the model accepts the start), ``decision`` (every decision
    phase, superseded merged solves included), ``tiebreak``, ``result`` (decoding) and ``total``;
    ``superseded`` lists merged solves whose tiers were then solved one by one; ``tiebreak`` has
    the tie-break phase's status, value, bound, relative gap, seconds and budget (``solved: false``
    when the decision tiers left it no time).

    Deterministic for a given seed with ``workers=1`` when every phase proves optimality within
    the limit; with 2 workers the tier values of proven phases are reproducible, the placement
    among equal optima may not be (see :mod:`.solve`).

    ``tiebreak`` False: no tie-break phase (its tier is reported on the decision tiers' solution,
    unsolved): for callers that read the decision tiers only, such as the decisive step's probes.

    ``preemption`` (``None``: as the profile, on unless DefaultPreemption is disabled; ``False``:
    nothing is evicted) lets the model evict lower-priority
    bound pods (:mod:`.preemption`): victims go to ``Result.victims``, pods placed on a node a
    victim left are reported ``nominated``, and the disruption tiers (``pdbViolations``,
    ``victims[p=P]``, minimised, right after ``placed``) join the objective with the total
    ``victims``. A hint's victims are used when they are whole evictable units.

    On large models the top admission tier's upper bound may come from a relaxation pooled per
    topology domain (:mod:`.domain_bound`, issue 37); ``params.domainBound`` then records it, and
    a phase reaching it is proven by it. Its LP solution, rounded and packed (:mod:`.domain_start`),
    replaces the start when it is better (``trace.hint.start`` says ``domain LP start``) where the
    start is short of that bound; ``params.domainBound.start`` is then the top tier's value of the
    start the phases begin from.

    ``room`` (:class:`~gangplan.models.room.RoomSpec`): the make-room objective (:mod:`.room`) on a
    cluster marked for it (:mod:`gangplan.solver.room`): the targets admitted, then the cheapest
    moves and evictions; ``objective`` is then ``"make-room"``.
    """
    t0 = time.perf_counter()
    budget = Budget(time_limit, wall_limit)
    given: tuple[object, ...] = ()
    if room is not None:
        objective, given = MAKE_ROOM, (room,)
    params = {"timeLimit": time_limit, "workers": workers, "seed": seed, "objective": objective}
    if fixed:
        params["fixed"] = len(fixed)
    preemption, params["preemptionFrom"] = cluster.profile.resolve_preemption(preemption)
    params["preemption"] = preemption
    built = build_model(
        cluster, fixed=fixed, objective=objective, preemption=preemption, given=given
    )
    budget.charge(len(built.em.model.proto.variables) / BUILD_VARIABLES_PER_UNIT)
    build_seconds = time.perf_counter() - t0
    trace = ExactTrace(model=model_stats(built), build_seconds=round(build_seconds, 4))
    if built.inst.fixed_errors:
        trace.infeasible = list(built.inst.fixed_errors)
        return _result(built, "INFEASIBLE", None, [], t0, params, trace, snapshot)
    t1 = time.perf_counter()
    timing = ExactTiming(build=build_seconds)
    incumbent, trace.hint = warm_start(
        built, hint, budget=budget, workers=workers, seed=seed, timing=timing
    )
    trace.start_seconds = round(time.perf_counter() - t1, 4)
    domain = tightened(built, incumbent, budget)
    if domain is not None:
        params["domainBound"] = domain.record()
        if incumbent is not None and built.tiers[0].value(incumbent) < domain.bound:
            t2 = time.perf_counter()
            found = domain_start(built, domain, incumbent, budget=budget)
            if found is not None:
                incumbent, trace.hint.start = found, "domain LP start"
            params["domainBound"]["start"] = built.tiers[0].value(incumbent)
            check = proven_at_start(built, domain, built.tiers[0].value(incumbent), budget)
            if check is not None:  # the start proven optimal at the tier by whole counts
                params["domainBound"]["integral"] = check.record()
            trace.start_seconds = round(trace.start_seconds + time.perf_counter() - t2, 4)
    before_phases = len(built.model.proto.constraints)
    outcome = solve_phases(
        built,
        budget=budget,
        workers=workers,
        seed=seed,
        incumbent=incumbent,
        tiebreak_phase=tiebreak,
    )
    if outcome.status == "INFEASIBLE" and incumbent is not None and hint is not None:
        # The trusted hint's bound contradicted the model: never let a hint make the answer fail.
        trace.hint.retried = "hint bound made the model infeasible; solved again without it"
        first = outcome
        built = build_model(
            cluster, fixed=fixed, objective=objective, preemption=preemption, given=given
        )
        outcome = solve_phases(
            built,
            budget=budget,
            workers=workers,
            seed=seed,
            incumbent=default_incumbent(built.em),
            tiebreak_phase=tiebreak,
        )
        timing.retried = sum(first.seconds.get(k, 0.0) for k in ("decision", "tiebreak"))
        before_phases = -1  # (the model rebuilt: nothing is kept)
    trace.phases = [p.to_trace() for p in outcome.phases]
    if outcome.superseded:
        trace.superseded = [p.to_trace() for p in outcome.superseded]
    timing.decision = outcome.seconds.get("decision", 0.0)
    timing.tiebreak = outcome.seconds.get("tiebreak", 0.0)
    trace.timing = timing
    trace.tiebreak = outcome.tiebreak()
    timing.work = budget.used
    params["wallLimit"] = budget.wall
    if outcome.status != "OPTIMAL":
        params["stoppedBy"] = "wall-clock" if budget.wall_hit else "work-limit"
    result = _result(
        built, outcome.status, outcome.counts, outcome.phases, t0, params, trace, snapshot
    )
    if before_phases >= 0 and not fixed:
        keep(result, cluster, built, before_phases)  # for the diff that asked (kept.py)
    return result


def model_stats(built: BuiltModel) -> ModelStats:
    em = built.em
    proto = em.model.proto
    return ModelStats(
        variables=len(proto.variables),
        constraints=len(proto.constraints),
        classes=len(em.inst.classes),
        private_classes=sum(em.private),
        shapes=len(em.shapes),
    )


_STATUS = {
    "OPTIMAL": Status.OPTIMAL,
    "FEASIBLE": Status.FEASIBLE,
    "INFEASIBLE": Status.INFEASIBLE,
    "UNKNOWN": Status.UNKNOWN,
}


def _result(
    built: BuiltModel,
    status: str,
    counts: Counts | None,
    phases,
    t0: float,
    params,
    trace: ExactTrace,
    snapshot,
) -> Result:
    em, inst = built.em, built.inst
    t_decode = time.perf_counter()
    rows = view_rows(inst.cluster)
    if rows is not None and rows.restricted:  # what the model leaves out (the proof reads it)
        params = {**params, "restrictedModel": list(rows.restricted)}
    placements = placements_from_counts(em, counts) if counts is not None else {}
    pod_reasons = dict(inst.excluded)
    why = {
        "OPTIMAL": "not placed in the optimum",
        "FEASIBLE": "not placed in the best solution found",
        "INFEASIBLE": "no solution: the fixed placements cannot all hold",
        "UNKNOWN": "no solution found within the time limit",
    }[status]
    for c in inst.classes:
        for p in c.pods:
            if p.key not in placements:
                pod_reasons[p.key] = why
    group_reasons = {}
    for p in inst.cluster.pending_pods:
        if (
            p.group_key
            and p.key in inst.excluded
            and inst.excluded[p.key].startswith("SchedulerError")
        ):
            group_reasons[p.group_key] = inst.excluded[p.key]
    extra = {
        ph.tier: float(ph.value) for ph in phases if ph.tier in (GPUS, TOPOLOGY, SPREAD, TIEBREAK)
    }
    bound = {ph.tier: float(ph.bound) for ph in phases if math.isfinite(ph.bound)}
    victims: list[str] = []
    nominated: set[str] = set()
    if em.evict:
        evicted = counts.evicted if counts is not None else frozenset()
        victims = victims_of(em, evicted)
        nominated = nominated_pods(em, placements, evicted)
        # The disruption tiers' values come from the victims (outcome.disruption), as for greedy;
        # their bounds from the phases, as costs.
        _, cost_bounds = disruption_report(built.tiers, phases)
        bound.update(cost_bounds)
    timing = trace.timing or ExactTiming(build=trace.build_seconds)
    timing.result = time.perf_counter() - t_decode  # pods from counts, reasons, victims
    timing.total = time.perf_counter() - t0
    trace.timing = timing.rounded()
    result = build_result(
        inst.cluster,
        engine=ENGINE,
        status=_STATUS[status],
        placements=placements,
        victims=victims,
        nominated=nominated,
        pod_reasons=pod_reasons,
        group_reasons=group_reasons,
        extra_objective=extra,
        bound=bound,
        gap=_gap(phases, status),
        wall_seconds=time.perf_counter() - t0,
        params=params,
        trace=trace,
        snapshot=snapshot,
    )
    order = [ph.tier for ph in phases]
    rank = _tier_rank(list(result.objective), order)
    return result.model_copy(
        update={"objective": _ranked(result.objective, rank), "bound": _ranked(result.bound, rank)}
    )


def _tier_rank(keys: list[str], solved: list[str]) -> dict[str, tuple[int, int]]:
    """Where each objective tier goes: solved tiers in the order they were solved (highest first;
    ``gpus`` lands before ``placed``), every other tier right after the solved tier it follows in
    the Result's own order (e.g. ``pdbViolations`` when no PDB made it a phase). ``objective`` and
    ``bound`` are both listed in this order, so their tiers line up and :func:`compare` reads them
    highest first."""
    phase = {t: i for i, t in enumerate(solved)}
    rank, last = {}, -1
    for k in keys:
        if k in phase:
            last = phase[k]
            rank[k] = (last, 0)
        else:
            rank[k] = (last, 1)
    return rank


def _ranked(values: dict[str, float], rank: dict[str, tuple[int, int]]) -> dict[str, float]:
    end = (len(rank) + 1, 0)
    return dict(
        sorted(values.items(), key=lambda kv: rank.get(kv[0], end))
    )  # stable: ties keep their order


def _gap(phases, status: str) -> float | None:
    """Relative gap of the first decision tier not proven optimal (the tie-break does not count)."""
    if status in ("INFEASIBLE", "UNKNOWN"):
        return None
    for ph in phases:
        if ph.status != "OPTIMAL" and ph.tier != TIEBREAK:
            return abs(ph.bound - ph.value) / max(1.0, abs(ph.bound))
    return 0.0
