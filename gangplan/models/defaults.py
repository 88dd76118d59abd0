"""The engines' option defaults, written once: a default is changed here and nowhere else. The
options model (:mod:`gangplan.models.options`, which the CLI builds from its
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
"""The work limit of each probe of the decisive-step search, its feasibility pre-check and its exact solve together (``--probe-time-limit``)."""
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

# ---- replay (``gangplan replay``, :class:`gangplan.models.options.ReplayOptions`) ----------------------
REPLAY_MODE = "fill"
REPLAY_POLICIES = ("default",)
REPLAY_SEEDS = (42,)
"""The FGD paper's first seed (its Fig. 9(a) uses 42..51)."""
INFLATION_RATIO = 1.3
"""Fill mode tops the trace up until its jobs ask for this multiple of the GPUs (the paper's 130 %)."""
ARRIVAL_SCALE = 1.0
EPOCH_TIME_LIMIT = 2.0
"""Shadow / optimal: seconds of each epoch's exact solve (``--exact-time-limit``)."""
BOUND_METHOD = "lp"
BOUND_PERCENTS = tuple(range(10, 131, 10))
"""Fill: the arrived percents at which the packing bound is computed."""
BOUND_WORK_LIMIT = 60.0
"""Fill with ``--bound patterns``: CP-SAT deterministic seconds per bound's column generation."""
TIMESERIES_INTERVAL = 60.0
"""Timed mode: seconds between timeseries.csv rows."""

__all__ = [
    "ARRIVAL_SCALE",
    "BOUND_METHOD",
    "BOUND_PERCENTS",
    "BOUND_WORK_LIMIT",
    "EPOCH_TIME_LIMIT",
    "INFLATION_RATIO",
    "REPLAY_MODE",
    "REPLAY_POLICIES",
    "REPLAY_SEEDS",
    "TIMESERIES_INTERVAL",
    "ENGINE",
    "EXPLAIN",
    "OBJECTIVE",
    "PROBE_TIME_LIMIT",
    "SAMPLES",
    "SEED",
    "TIE_BREAK",
    "TIME_LIMIT",
    "WORKERS",
    "WORKERS_HELP",
]
