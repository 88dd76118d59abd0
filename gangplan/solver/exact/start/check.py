"""The model's own check of a complete start: every start (a repaired hint, the packed and
class-level starts, a solve's topped-up solution) passes it before it seeds a solve."""

from __future__ import annotations

from ortools.sat.python import cp_model

from gangplan.solver.exact.budget import Budget
from gangplan.solver.exact.build import BuiltModel
from gangplan.solver.exact.start.hint import set_hint
from gangplan.solver.exact.variables import Counts

CHECK_SECONDS = 30.0
"""The wall-clock seconds a check may take whatever the run's cap has left."""


def model_accepts(
    em: BuiltModel, counts: Counts, *, time_limit: float = 30.0, budget: Budget | None = None
) -> bool:
    """Does the model itself accept this complete assignment? Every variable is fixed to its
    hinted value (``fix_variables_to_their_hinted_value``), so this is a check, not a search
    (under a second on the 243,000-variable affinity benchmark model). The starting solution
    passed the validator; this guards against the model disagreeing (a bug), so a placement the
    model rejects never becomes the answer. A check that does not finish counts as a rejection.
    ``time_limit``: units of deterministic work; what it spends is charged to ``budget``, whose
    wall-clock cap is its safety net."""
    set_hint(em, counts)
    solver = cp_model.CpSolver()
    p = solver.parameters
    p.num_workers = 1
    checked = budget if budget is not None else Budget(time_limit)
    checked.configure(p, time_limit, capped=False)  # a check, whatever is left of the budget
    # Nor cut by the wall-clock cap: a valid start rejected because the clock ran out would make
    # the answer worse than the start (it has its own limit, and fixing every variable is quick).
    p.max_time_in_seconds = max(p.max_time_in_seconds, CHECK_SECONDS)
    p.fix_variables_to_their_hinted_value = True
    p.cp_model_presolve = False  # nothing to simplify: every variable is fixed
    status = solver.solve(em.model)
    em.model.clear_hints()
    ok = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    checked.after(solver, ok or status == cp_model.INFEASIBLE)
    return ok
