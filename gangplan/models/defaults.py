"""The engines' option defaults, written once (issue 38: ``time_limit=10.0`` was spelled in the
CLI twice, the API twice, the diff and the exact engine, and a changed default had to be changed
in each). The options model (:mod:`gangplan.models.options`, which the CLI builds from its
flags and :mod:`gangplan.api` from its keyword options), the CLI's flags,
:func:`gangplan.solver.diff.diff_snapshot` and :func:`gangplan.solver.exact.solve_exact` read
them from here."""

from __future__ import annotations

ENGINE = "greedy"
"""The engine ``gangplan.solve`` and ``gangplan solve`` run (``--engine``): kube-scheduler's cycle."""
TIME_LIMIT = 10.0
"""The exact engine's work limit, in units of deterministic work (``--time-limit``;
:class:`gangplan.solver.exact.budget.Budget`)."""
PROBE_TIME_LIMIT = 5.0
"""The work limit of each exact solve while searching the decisive step (``--probe-time-limit``)."""
WORKERS = 1
"""CP-SAT workers (``--workers``): one is deterministic and was the fastest on every measured case;
two or more run CP-SAT's deterministic parallel mode (issue 37)."""
WORKERS_HELP = "CP-SAT workers (1: single-threaded, the fastest measured; 2 or more: CP-SAT deterministic parallel mode)."
SEED = 0
TIE_BREAK = "first"
OBJECTIVE = "default"
"""The exact engine's objective after the admission tiers (``--objective``)."""
SAMPLES = 0
"""Extra greedy runs with random ties and pod orders a diff makes (``--samples``)."""
EXPLAIN = True
"""A diff searches the decisive greedy step when greedy is suboptimal."""

__all__ = ["ENGINE", "EXPLAIN", "OBJECTIVE", "PROBE_TIME_LIMIT", "SAMPLES", "SEED", "TIE_BREAK", "TIME_LIMIT", "WORKERS", "WORKERS_HELP"]
