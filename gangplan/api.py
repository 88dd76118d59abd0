"""The Python API, re-exported by ``gangplan`` (``import gangplan as gp``): load, solve, diff,
validate. The options are the CLI's flags as keyword arguments (``--time-limit`` ->
``time_limit``); docs/python-api.md describes them and what the API promises."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from gangplan.models import defaults as D
from gangplan.models.result import attach_cluster as attach

if TYPE_CHECKING:
    from typing import Unpack

    from gangplan.models.cluster import Cluster
    from gangplan.models.result import Result
    from gangplan.solver.diff import Diff
    from gangplan.solver.validate import Violation

ENGINES = ("greedy", "exact")
TIE_BREAKS = ("first", "random")
OBJECTIVES = ("default", "gpus", "compact")


class SolveOptions(TypedDict, total=False):
    """Keyword options of :func:`solve` (the ``gangplan solve`` flags)."""

    time_limit: float
    """exact: the work limit, in units of deterministic work of about a second each
    (``--time-limit``, default 10): the same answer on an idle and a busy machine."""
    wall_limit: float | None
    """exact: the wall-clock cap in seconds, a safety net (``--wall-limit``; None: 3 x
    ``time_limit`` + 10); when it stops a search, the Result says so (``params.stoppedBy``)."""
    workers: int
    """exact: CP-SAT workers (``--workers``, default 1: single-threaded, deterministic and the
    fastest on the measured cases; 2 or more run CP-SAT's deterministic parallel mode)."""
    seed: int
    """Seed for every random choice: CP-SAT, ``tie_break="random"`` (``--seed``, default 0)."""
    tie_break: Literal["first", "random"]
    """greedy: ties go to the first node in snapshot order, or a seeded random one (``--tie-break``)."""
    objective: Literal["default", "gpus", "compact"]
    """exact: the objective after the admission tiers (``--objective``)."""
    preemption: bool | None
    """Whether the engine may evict lower-priority pods; None: as the scheduler profile (``--preemption/--no-preemption``)."""
    kube_version: str | None
    """The kube-scheduler version to reproduce, "1.35" .. "1.38"; None: the Cluster's (``--kube-version``)."""
    hint: Result | None
    """exact: a Result whose placement seeds the search; None: a greedy run, as the CLI does."""


class DiffOptions(TypedDict, total=False):
    """Keyword options of :func:`diff` (the ``gangplan diff`` flags)."""

    time_limit: float
    """The exact engine's work limit (``--time-limit``, default 10; see :class:`SolveOptions`)."""
    wall_limit: float | None
    """The exact engine's wall-clock cap in seconds (``--wall-limit``; None: 3 x ``time_limit`` + 10)."""
    probe_time_limit: float
    """The work limit of each exact solve while searching the decisive step (``--probe-time-limit``, default 5)."""
    workers: int
    seed: int
    tie_break: Literal["first", "random"]
    preemption: bool | None
    kube_version: str | None
    samples: int
    """Also run greedy this many times with random ties and pod orders (``--samples``, default 0)."""
    explain: bool
    """Search the decisive greedy step when greedy is suboptimal (default True)."""


_SOLVE_DEFAULTS: dict[str, Any] = {"time_limit": D.TIME_LIMIT, "wall_limit": None, "workers": D.WORKERS, "seed": D.SEED, "tie_break": D.TIE_BREAK, "objective": "default",
                                   "preemption": None, "kube_version": None, "hint": None}
_DIFF_DEFAULTS: dict[str, Any] = {"time_limit": D.TIME_LIMIT, "wall_limit": None, "probe_time_limit": D.PROBE_TIME_LIMIT, "workers": D.WORKERS,
                                  "seed": D.SEED, "tie_break": D.TIE_BREAK,
                                  "preemption": None, "kube_version": None, "samples": 0, "explain": True}


def _check(func: str, given: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``defaults`` updated with ``given``; an unknown option or a wrong type is a TypeError,
    a value out of range a ValueError, each naming the option."""
    from gangplan.models.result import Result
    from gangplan.models.version import KubeVersion

    unknown = [k for k in given if k not in defaults]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(defaults), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise TypeError(f"{func}() got an unknown option {unknown[0]!r}{hint}; valid options: {', '.join(defaults)}")
    out = dict(defaults)
    for name, value in given.items():
        def bad(want: str, name: str = name, value: Any = value) -> TypeError:
            return TypeError(f"{func}() option {name!r} must be {want}, not {type(value).__name__} {value!r}")

        if name == "wall_limit" and value is None:
            pass
        elif name in ("time_limit", "probe_time_limit", "wall_limit"):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise bad("a number of seconds")
            if not value > 0:
                raise ValueError(f"{func}() option {name!r} must be positive, not {value!r}")
            value = float(value)
        elif name in ("workers", "seed", "samples"):
            if isinstance(value, bool) or not isinstance(value, int):
                raise bad("an int")
            least = {"workers": 1, "samples": 0}.get(name)
            if least is not None and value < least:
                raise ValueError(f"{func}() option {name!r} must be at least {least}, not {value!r}")
        elif name in ("tie_break", "objective"):
            choices = TIE_BREAKS if name == "tie_break" else OBJECTIVES
            if not isinstance(value, str):
                raise bad(f"one of {', '.join(map(repr, choices))}")
            if value not in choices:
                raise ValueError(f"{func}() option {name!r} must be one of {', '.join(map(repr, choices))}, not {value!r}")
        elif name == "preemption":
            if value is not None and not isinstance(value, bool):
                raise bad("True, False or None")
        elif name == "explain":
            if not isinstance(value, bool):
                raise bad("True or False")
        elif name == "kube_version":
            if value is not None:
                if not isinstance(value, str):
                    raise bad("a version string such as '1.37', or None")
                try:
                    value = KubeVersion(value.removeprefix("v")).value
                except ValueError:
                    raise ValueError(f"{func}() option 'kube_version' must be one of {', '.join(v.value for v in KubeVersion)}, not {value!r}") from None
        elif name == "hint":
            if value is not None and not isinstance(value, Result):
                raise bad("a Result or None")
        out[name] = value
    return out


def load(path_or_objects: str | os.PathLike | Iterable[Mapping[str, Any]], *, kube_version: str | None = None, strict: bool = False) -> Cluster:
    """A snapshot as a :class:`Cluster`: a file or directory of ``kubectl get -o yaml`` /
    JSON output, or Kubernetes objects already in memory (a list of dicts, as YAML gives them).

    ``kube_version``: the kube-scheduler version the engines reproduce ("1.35" .. "1.38"; default
    the newest release). ``strict``: inputs that can change scheduling but are not modelled
    (``Cluster.warnings``) raise instead. Bad input raises :class:`SnapshotError` naming the
    file, object and field."""
    from gangplan.io.errors import SnapshotError
    from gangplan.io.loader import load_objects, load_snapshot

    kv = _check("load", {"kube_version": kube_version}, {"kube_version": None})["kube_version"]
    if isinstance(path_or_objects, str | os.PathLike):
        cluster = load_snapshot(path_or_objects, kube_version=kv)
        source = os.fspath(path_or_objects)
    elif isinstance(path_or_objects, Mapping):
        cluster, source = load_objects([dict(path_or_objects)], kube_version=kv), "<memory>"
    elif isinstance(path_or_objects, Iterable) and not isinstance(path_or_objects, bytes):
        objects = list(path_or_objects)
        if not all(isinstance(o, Mapping) for o in objects):
            raise TypeError("load() takes a path, or Kubernetes objects as dicts")
        cluster, source = load_objects([dict(o) for o in objects], kube_version=kv), "<memory>"
    else:
        raise TypeError(f"load() takes a path, or Kubernetes objects as dicts, not {type(path_or_objects).__name__}")
    if strict and cluster.warnings:
        lines = "\n  ".join(cluster.warnings)
        raise SnapshotError(str(source), f"strict: {len(cluster.warnings)} input(s) gangplan does not model:\n  {lines}")
    return cluster


def _snapshot_name(cluster: Cluster) -> str | None:
    return cluster.sources[0] if len(cluster.sources) == 1 else None


def solve(cluster: Cluster, engine: Literal["greedy", "exact"] = "greedy", **options: Unpack[SolveOptions]) -> Result:
    """Place the pending pods of ``cluster`` with one engine: ``"greedy"`` (what kube-scheduler
    does) or ``"exact"`` (the CP-SAT optimum; seeded by a greedy run unless ``hint`` is given).
    Options (:class:`SolveOptions`): ``time_limit``, ``workers``, ``seed``, ``tie_break``,
    ``objective``, ``preemption``, ``kube_version``, ``hint``; an option the engine does not
    read is ignored, an unknown one is a TypeError."""
    from gangplan.models.cluster import Cluster

    if not isinstance(cluster, Cluster):
        raise TypeError(f"solve() takes a Cluster (gangplan.load), not {type(cluster).__name__}")
    if engine not in ENGINES:
        raise ValueError(f"solve() engine must be 'greedy' or 'exact', not {engine!r}")
    o = _check("solve", options, _SOLVE_DEFAULTS)
    cluster = cluster.at_version(o["kube_version"])
    name = _snapshot_name(cluster)
    from gangplan.solver.greedy import solve_greedy

    if engine == "greedy":
        result = solve_greedy(cluster, tie_break=o["tie_break"], seed=o["seed"], snapshot=name, preemption=o["preemption"])
    else:
        from gangplan.solver.exact import solve_exact

        hint = o["hint"] or solve_greedy(cluster, tie_break=o["tie_break"], seed=o["seed"], snapshot=name, preemption=o["preemption"])
        result = solve_exact(cluster, time_limit=o["time_limit"], wall_limit=o["wall_limit"], workers=o["workers"], seed=o["seed"], objective=o["objective"],
                             hint=hint, snapshot=name, preemption=o["preemption"])
    return attach(result, cluster)


def diff(cluster: Cluster, greedy: Result | None = None, optimal: Result | None = None, **options: Unpack[DiffOptions]) -> Diff:
    """Greedy against the optimum on ``cluster``: the classification, per-group outcomes and the
    decisive greedy step (what ``gangplan diff`` prints; the attributes mirror its JSON).

    ``greedy`` / ``optimal``: Results of :func:`solve` on this cluster to compare instead of
    solving again (the decisive step's probes still run). Options (:class:`DiffOptions`) that a
    given Result records (``kube_version``, ``preemption``, ``tie_break``, ``seed``) default to
    its values; an explicit option that contradicts it is a ValueError."""
    from gangplan.models.cluster import Cluster
    from gangplan.models.result import Result
    from gangplan.solver.diff import diff_snapshot

    if not isinstance(cluster, Cluster):
        raise TypeError(f"diff() takes a Cluster (gangplan.load), not {type(cluster).__name__}")
    for label, r, engine in (("greedy", greedy, "greedy"), ("optimal", optimal, "exact")):
        if r is not None and not isinstance(r, Result):
            raise TypeError(f"diff() {label}= takes a Result, not {type(r).__name__}")
        if r is not None and r.engine != engine:
            raise ValueError(f"diff() {label}= takes a Result of the {engine} engine, not a {r.engine} one")
    o = _check("diff", options, _DIFF_DEFAULTS)
    recorded = {}
    if greedy is not None:
        g = greedy.options
        recorded = {"kube_version": g.kube_version, "preemption": g.preemption, "tie_break": g.tie_break, "seed": g.seed}
    if optimal is not None:
        op = optimal.options.preemption
        if "preemption" in recorded and recorded["preemption"] is not None and op is not None and op != recorded["preemption"]:
            raise ValueError(f"diff(): greedy= ran with preemption={recorded['preemption']}, optimal= with preemption={op}")
        recorded.setdefault("preemption", op)
        recorded.setdefault("seed", optimal.options.seed)
    for name, value in recorded.items():
        if value is None:
            continue
        if name in options and options[name] is not None and o[name] != value:  # type: ignore[literal-required]
            raise ValueError(f"diff() option {name}={o[name]!r} contradicts the given Result, which ran with {name}={value!r}")
        o[name] = value
    cluster = cluster.at_version(o["kube_version"])
    name = _snapshot_name(cluster) or ""
    d = diff_snapshot(cluster, snapshot=name, greedy=greedy, optimal=optimal, **{k: o[k] for k in _DIFF_DEFAULTS})
    attach(d.greedy, cluster)
    attach(d.optimal, cluster)
    return d


def validate(cluster: Cluster, result: Result) -> list[Violation]:
    """Every hard rule ``result`` breaks on ``cluster`` (capacity, filters, gangs, topology,
    victims, ...); ``[]`` when it is valid."""
    from gangplan.solver.validate import validate as run_validate

    return run_validate(cluster, result)


__all__ = ["DiffOptions", "SolveOptions", "diff", "load", "solve", "validate"]
