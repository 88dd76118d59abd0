"""The flags the ``gangplan`` commands share, each spelled once as an ``Annotated`` alias (or, where
the commands word its help differently, as a function of that help): :mod:`gangplan.cli` and the
command modules (:mod:`~gangplan.cli_replay`, :mod:`~gangplan.cli_bench`) declare a parameter as
``strict: Strict = False``. With the exit codes and the bad-input exit, this is the typer side of
what the commands share; :mod:`gangplan.cli_common` is the typer-free side.

A default stays on the parameter (``= D.TIME_LIMIT``), where typer reads it; the values come from
:mod:`gangplan.models.defaults`.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from gangplan.cli_common import err
from gangplan.io.errors import SnapshotError
from gangplan.models import defaults as D
from gangplan.models.options import ENGINES, OBJECTIVES, TIE_BREAKS
from gangplan.models.version import DEVELOPMENT, NEWEST, KubeVersion

EXIT_VIOLATIONS = 1
"""``validate``: a rule is violated; ``diff --suite``: an expectation is not met."""
EXIT_FAILURES = 1
"""``bench``: a snapshot in the database failed (error, timeout or crashed)."""
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 70


def bad_input(e: SnapshotError | str) -> typer.Exit:
    """Print ``error: <message>`` on stderr and return the Exit(2) to raise."""
    err.print(Text.assemble(("error: ", "bold red"), str(e)))
    return typer.Exit(EXIT_BAD_INPUT)


def kv(v: KubeVersion | None) -> str | None:
    """``--kube-version`` as the options take it: the version string, or None for the newest."""
    return v.value if v is not None else None


# ---- help texts --------------------------------------------------------------------------------
KUBE_VERSION_HELP = (
    "The kube-scheduler version greedy reproduces (scores, pod order, preemption, hierarchy validation differ; docs/explanation/greedy-fidelity.md); "
    f"{DEVELOPMENT.value} is the development code after v{NEWEST.value}. Default: the newest release."
)
PREEMPTION_HELP = (
    "Whether both engines may evict lower-priority pods (greedy: DefaultPreemption and workload-aware "
    "preemption, KEP-5710; exact: minimum-disruption victims). Default: as kube-scheduler's profile."
)
TIME_LIMIT_HELP = (
    "Exact engine: the work limit, in units of deterministic work (CP-SAT's deterministic time, "
    "about a second each): the same answer on an idle or a busy machine."
)
WALL_LIMIT_HELP = (
    "Exact engine: the wall-clock cap in seconds, a safety net; the output says when it, "
    "not the work limit, stopped a search (then a rerun may differ)."
)
PROBE_TIME_LIMIT_HELP = "Work limit (units) of each probe of the decisive-step search (its feasibility pre-check and its exact solve together)."
SNAPSHOT_HELP = "Snapshot file or directory; - reads it from standard input (kubectl get ... -o yaml | gangplan diff -)."
STRICT_HELP = "Treat inputs that can change scheduling but are not modelled (see the warnings) as bad input (exit 2)."
TRACE_HELP = (
    "How much of the greedy trace the JSON holds: summary keeps, of each placement decision, the chosen placement, "
    "the runner-up and the reported one; full every placement evaluated (large on clusters with many domains); none no trace."
)
SEED_HELP = "Seed for CP-SAT and --tie-break random."
TIE_BREAK_HELP = "Greedy ties: snapshot order or seeded random."
TIE_BREAK_LONG_HELP = "Greedy ties: first node in snapshot order, or seeded random."


# ---- choices -----------------------------------------------------------------------------------
Engine = StrEnum("Engine", {e: e for e in ENGINES})
TieBreak = StrEnum("TieBreak", {t: t for t in TIE_BREAKS})
Objective = StrEnum("Objective", {o: o for o in OBJECTIVES})


class TraceOpt(StrEnum):
    none = "none"
    summary = "summary"
    full = "full"


class Strategy(StrEnum):
    LeastAllocated = "LeastAllocated"
    MostAllocated = "MostAllocated"


# ---- options whose help the commands word differently: the help is the argument ---------------
def kube_version_option(help: str = KUBE_VERSION_HELP) -> Any:
    return typer.Option("--kube-version", help=help, show_default=NEWEST.value)


def time_limit_option(*, min: float | None = None) -> Any:
    return typer.Option("--time-limit", help=TIME_LIMIT_HELP, min=min)


def probe_time_limit_option(*, min: float | None = None) -> Any:
    return typer.Option("--probe-time-limit", help=PROBE_TIME_LIMIT_HELP, min=min)


def workers_option(help: str = D.WORKERS_HELP) -> Any:
    return typer.Option("--workers", help=help, min=1)


def seed_option(help: str = SEED_HELP) -> Any:
    return typer.Option("--seed", help=help)


def tie_break_option(help: str = TIE_BREAK_HELP) -> Any:
    return typer.Option("--tie-break", help=help)


def json_flag(help: str) -> Any:
    return typer.Option("--json", help=help)


def output_option(help: str) -> Any:
    return typer.Option("--output", "-o", help=help)


def out_option(help: str, *, short: bool = True) -> Any:
    """``--out``: the file (or directory) written; ``-o`` too, except where ``-o`` is the format."""
    return typer.Option("--out", "-o", help=help) if short else typer.Option("--out", help=help)


# ---- the shared flags --------------------------------------------------------------------------
SnapshotArg = Annotated[Path, typer.Argument(help=SNAPSHOT_HELP)]
OptionalSnapshotArg = Annotated[Path | None, typer.Argument(help=SNAPSHOT_HELP)]
KubeVersionOpt = Annotated[KubeVersion | None, kube_version_option()]
KueueVersionOpt = Annotated[
    str | None,
    typer.Option(
        "--kueue-version",
        help="With Kueue objects in the snapshot: the Kueue release whose admission is reproduced (0.17, 0.18, 0.19, main, or a patch such as 0.18.4).",
        show_default="0.19",
    ),
]
Strict = Annotated[bool, typer.Option("--strict", help=STRICT_HELP)]
Preemption = Annotated[
    bool | None,
    typer.Option(
        "--preemption/--no-preemption",
        help=PREEMPTION_HELP,
        show_default="as the profile: on unless DefaultPreemption is disabled",
    ),
]
TimeLimit = Annotated[float, time_limit_option(min=0.01)]
WallLimit = Annotated[
    float | None,
    typer.Option(
        "--wall-limit", help=WALL_LIMIT_HELP, min=0.01, show_default="3 x --time-limit + 10"
    ),
]
ProbeTimeLimit = Annotated[float, probe_time_limit_option(min=0.01)]
Workers = Annotated[int, workers_option()]
Seed = Annotated[int, seed_option()]
TieBreakOpt = Annotated[TieBreak, tie_break_option()]
TieBreakLongOpt = Annotated[TieBreak, tie_break_option(TIE_BREAK_LONG_HELP)]
EngineOpt = Annotated[
    Engine,
    typer.Option("--engine", help="greedy: kube-scheduler's cycle; exact: the CP-SAT optimum."),
]
ObjectiveOpt = Annotated[
    Objective,
    typer.Option("--objective", help="Exact engine objective after the admission tiers."),
]
Trace = Annotated[TraceOpt, typer.Option("--trace", help=TRACE_HELP)]

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_FAILURES",
    "EXIT_INTERNAL",
    "EXIT_VIOLATIONS",
    "KUBE_VERSION_HELP",
    "PREEMPTION_HELP",
    "PROBE_TIME_LIMIT_HELP",
    "SEED_HELP",
    "SNAPSHOT_HELP",
    "STRICT_HELP",
    "TIE_BREAK_HELP",
    "TIE_BREAK_LONG_HELP",
    "TIME_LIMIT_HELP",
    "TRACE_HELP",
    "WALL_LIMIT_HELP",
    "Engine",
    "EngineOpt",
    "KubeVersionOpt",
    "KueueVersionOpt",
    "Objective",
    "ObjectiveOpt",
    "OptionalSnapshotArg",
    "Preemption",
    "ProbeTimeLimit",
    "Seed",
    "SnapshotArg",
    "Strategy",
    "Strict",
    "TieBreak",
    "TieBreakLongOpt",
    "TieBreakOpt",
    "TimeLimit",
    "Trace",
    "TraceOpt",
    "WallLimit",
    "Workers",
    "bad_input",
    "json_flag",
    "kube_version_option",
    "kv",
    "out_option",
    "output_option",
    "probe_time_limit_option",
    "seed_option",
    "tie_break_option",
    "time_limit_option",
    "workers_option",
]
