"""The exact engine: one OR-tools CP-SAT model of the whole snapshot's placement.

Every queued entity (PodGroups, gang or basic, under CompositePodGroups or not, and single pods,
over ``Cluster.queued_pods``: pending, not gated, not being deleted) is decided jointly: which
groups are admitted and where each pod goes. Hard rules are the greedy's filters, with the final-state semantics of :mod:`gangplan.solver.validate`; the
objective is lexicographic (see :mod:`.objective`) and solved tier by tier (see :mod:`.solve`).

Build (:mod:`.build`): :mod:`.instance` (pod classes, group tree, bound state, evictable victim
units from :mod:`.victims`), then the constraint families of :mod:`.registry` (one module and one
:class:`.family.Family` record each, adding nothing when the snapshot does not use it): their
layouts, their static masks (:mod:`.eligibility`), :mod:`.variables` (shape slots / per-class
counts), their constraints in registry order (:mod:`.noderules`, :mod:`.capacity`, :mod:`.gang`,
:mod:`.preemption` with ``preemption=True``, :mod:`.topology`, :mod:`.ports`, :mod:`.affinity`,
:mod:`.spread`, :mod:`.locality`: preferred topology and network distance, beyond upstream),
then :mod:`.objective`. Warm starts live in :mod:`.start`, time splits in :mod:`.budget`;
:mod:`.engine` runs a solve and :mod:`.check` checks a given assignment.

Public API: :func:`solve_exact`, :func:`check_feasible`.
"""

from gangplan.solver.exact.build import build_model
from gangplan.solver.exact.check import check_feasible
from gangplan.solver.exact.engine import ENGINE, model_stats, solve_exact
from gangplan.solver.exact.objective import OBJECTIVES

__all__ = ["ENGINE", "OBJECTIVES", "build_model", "check_feasible", "model_stats", "solve_exact"]
