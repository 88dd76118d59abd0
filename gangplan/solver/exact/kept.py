"""The model of the last large exact run, kept for the diff that asked for it (issue 37).

On a 10,000-node cluster the model build takes 4-7 s (``trace.buildSeconds``), and a diff built
the same model again to check that the exact model accepts greedy's placement
(:func:`.check.check_feasible`). :func:`solve_exact` now keeps its :class:`KeptModel` (the Result,
the cluster and the model, with the number of constraints it had before the phases added theirs)
when the model is large (more than :data:`MIN_VARIABLES` variables); the diff takes it back with
:func:`take` (the same Result object and cluster, else None) and asks :func:`accepts`.

One model is kept per process, the last one (each large run replaces it, and :func:`take` drops
it): the memory it holds is what the run held anyway. Small models are never kept, so every
small diff (the goldens, the showcase) runs exactly as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ortools.sat.python import cp_model

from gangplan.models.cluster import Cluster
from gangplan.models.result import Result
from gangplan.solver.exact.budget import Budget
from gangplan.solver.exact.build import BuiltModel
from gangplan.solver.exact.start.hint import counts_from_placements, hint_values

MIN_VARIABLES = 20_000
"""Models with at most this many variables are not kept (building them again is cheap)."""
CHECK_UNITS = 5.0
"""Work limit (units) of the check (every variable fixed: a propagation, not a search)."""


@dataclass
class KeptModel:
    result: Result
    cluster: Cluster
    built: BuiltModel
    constraints: int
    """Constraints of the model before the phases added theirs (tier bounds and values)."""


_KEPT: list[KeptModel] = []


def keep(result: Result, cluster: Cluster, built: BuiltModel, constraints: int) -> None:
    """Keep ``built`` (large models only) as the model of ``result``; drop any older one."""
    _KEPT.clear()
    if len(built.model.proto.variables) > MIN_VARIABLES:
        _KEPT.append(KeptModel(result, cluster, built, constraints))


def take(result: Result, cluster: Cluster) -> KeptModel | None:
    """The kept model of ``result`` (the same object) on ``cluster``, removed from the store."""
    if _KEPT and _KEPT[0].result is result and _KEPT[0].cluster is cluster:
        return _KEPT.pop()
    _KEPT.clear()
    return None


def accepts(kept: KeptModel, placements: Mapping[str, str]) -> bool:
    """Does the kept model (without what the phases added) accept exactly ``placements`` (every
    other pending pod unplaced, nothing evicted)? False also when the placement cannot be
    represented, or the check did not finish: then the caller asks :func:`.check.check_feasible`,
    which also names the rule families that reject it. Only True is an answer."""
    em = kept.built.em
    counts, dropped = counts_from_placements(em, placements)
    if dropped:
        return False
    model = kept.built.model.clone()
    for ct in list(model.proto.constraints)[kept.constraints :]:
        ct.clear_linear()  # the phases add linear constraints only (solve.solve_phases)
    model.clear_objective()
    model.clear_hints()
    idx, val = hint_values(em, counts)
    model.proto.solution_hint.vars.extend(idx)
    model.proto.solution_hint.values.extend(val)
    solver = cp_model.CpSolver()
    p = solver.parameters
    p.num_workers = 1
    Budget(CHECK_UNITS).configure(p, CHECK_UNITS)
    p.fix_variables_to_their_hinted_value = True
    p.cp_model_presolve = False
    return solver.solve(model) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


__all__ = ["KeptModel", "accepts", "keep", "take"]
