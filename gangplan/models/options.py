"""The options of a run, typed: what is asked of an engine, and what a Result records.

:class:`SolveOptions` and :class:`DiffOptions` are the one options model from a flag to a run:
the CLI builds them from its flags, :func:`gangplan.solve` / :func:`gangplan.diff` from their
keyword options (``--time-limit`` -> ``time_limit``), and the engines read them. Each field is
written once, on :class:`EngineOptions` or the one command that has it, with its default from
:mod:`gangplan.models.defaults`; :meth:`EngineOptions.of` reads keyword options and says what is
wrong with one in the words of the function that took it.

``Result.params`` is the JSON record of the flags an engine ran with (camelCase keys, part of the
Result contract, ``docs/reference/json.md``); :class:`RunOptions` is its typed reading, so no
caller reads ``params`` by string key. One meaning for ``fixed``, whatever the engine wrote:
:attr:`RunOptions.fixed_count` is how many pods were forced onto nodes, and
:attr:`RunOptions.fixed` the forced placements where the Result records them (greedy: the
mapping, which a replay needs; exact: the count only).

>>> o = RunOptions.of("greedy", {"tieBreak": "first", "seed": 0, "fixed": {"ml/a": "n1"}})
>>> o.fixed_count, dict(o.fixed), o.tie_break
(1, {'ml/a': 'n1'}, 'first')
>>> RunOptions.of("exact", {"timeLimit": 5, "fixed": 3}).fixed_count
3
>>> SolveOptions.of("solve", {"time_limit": 5, "kube_version": "v1.36"}).kube_version
'1.36'
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from gangplan.models import defaults as D
from gangplan.models.version import NEWEST, KubeVersion

Engine = Literal["greedy", "exact"]
TieBreak = Literal["first", "random"]
Objective = Literal["default", "gpus", "compact"]
ENGINES: tuple[str, ...] = get_args(Engine)
"""``greedy``: what kube-scheduler does; ``exact``: the CP-SAT optimum."""
TIE_BREAKS: tuple[str, ...] = get_args(TieBreak)
OBJECTIVES: tuple[str, ...] = get_args(Objective)


@dataclass(frozen=True)
class RunOptions:
    """One run's options; ``None`` where the engine does not record the option."""

    engine: str
    kube_version: str | None = None
    """greedy: the kube-scheduler version reproduced (``kubeVersion``)."""
    tie_break: str | None = None
    seed: int | None = None
    top_k: int | None = None
    time_limit: float | None = None
    workers: int | None = None
    objective: str | None = None
    preemption: bool | None = None
    preemption_from: str | None = None
    """Where ``preemption`` came from: ``flag`` or ``profile``."""
    fixed: Mapping[str, str | None] | None = None
    """Pod key -> the node it was forced onto (``None``: forced to stay unplaced), where recorded."""
    fixed_count: int = 0
    """How many pods were forced (``params.fixed``: greedy's mapping, exact's count)."""
    stopped_by: str | None = None
    """exact: what ended a search that did not prove every decision tier (``params.stoppedBy``:
    ``work-limit`` or ``wall-clock``); None when everything was proven or not recorded."""

    @classmethod
    def of(cls, engine: str, params: Mapping[str, Any]) -> RunOptions:
        fixed = params.get("fixed")
        mapping = dict(fixed) if isinstance(fixed, Mapping) else None
        return cls(
            engine=engine,
            kube_version=params.get("kubeVersion"),
            tie_break=params.get("tieBreak"),
            seed=params.get("seed"),
            top_k=params.get("topK"),
            time_limit=params.get("timeLimit"),
            workers=params.get("workers"),
            objective=params.get("objective"),
            preemption=None if params.get("preemption") is None else bool(params["preemption"]),
            preemption_from=params.get("preemptionFrom"),
            fixed=mapping,
            fixed_count=len(mapping) if mapping is not None else int(fixed or 0),
            stopped_by=params.get("stoppedBy"),
        )


class BadOption(Exception):
    """A keyword option with a value its model refuses (:meth:`EngineOptions.of`): a
    :class:`BadOptionType` (a TypeError) or a :class:`BadOptionValue` (a ValueError), naming the
    function, the ``option`` and the ``problem`` (``must be positive, not 0``)."""

    def __init__(self, func: str, option: str, problem: str) -> None:
        super().__init__(f"{func}() option {option!r} {problem}")
        self.option = option
        self.problem = problem


class BadOptionType(BadOption, TypeError):
    pass


class BadOptionValue(BadOption, ValueError):
    pass


_WANT = {
    "float_type": "a number of seconds",
    "int_type": "an int",
    "string_type": f"a version string such as {NEWEST.value!r}, or None",
}
"""What a keyword option of the wrong type must be, by pydantic's error type (booleans and
choices depend on the field: :meth:`EngineOptions._problem`)."""


class EngineOptions(BaseModel):
    """The options every engine run takes (the flags ``solve``, ``diff`` and ``whatif`` share).
    Strict: ``"2"`` is no int and ``True`` no number of seconds."""

    model_config = ConfigDict(
        strict=True, extra="forbid", frozen=True, use_attribute_docstrings=True
    )

    time_limit: float = Field(D.TIME_LIMIT, gt=0)
    """exact: the work limit, in units of deterministic work of about a second each
    (``--time-limit``, default 10): the same answer on an idle and a busy machine."""
    wall_limit: float | None = Field(None, gt=0)
    """exact: the wall-clock cap in seconds, a safety net (``--wall-limit``; None: 3 x
    ``time_limit`` + 10); when it stops a search, the Result says so (``params.stoppedBy``)."""
    workers: int = Field(D.WORKERS, ge=1)
    """exact: CP-SAT workers (``--workers``, default 1: single-threaded, deterministic and the
    fastest on the measured cases; 2 or more run CP-SAT's deterministic parallel mode)."""
    seed: int = D.SEED
    """Seed for every random choice: CP-SAT, ``tie_break="random"`` (``--seed``, default 0)."""
    tie_break: TieBreak = D.TIE_BREAK
    """greedy: ties go to the first node in snapshot order, or a seeded random one (``--tie-break``)."""
    preemption: bool | None = None
    """Whether the engine may evict lower-priority pods; None: as the scheduler profile (``--preemption/--no-preemption``)."""
    kube_version: str | None = None
    """The kube-scheduler version to reproduce, "1.35" .. "1.38" (a leading ``v`` is dropped);
    None: the Cluster's (``--kube-version``)."""

    @field_validator("kube_version")
    @classmethod
    def _known_version(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return KubeVersion(value.removeprefix("v")).value
        except ValueError:
            raise ValueError(f"must be one of {', '.join(v.value for v in KubeVersion)}") from None

    @classmethod
    def of(cls, func: str, given: Mapping[str, Any]) -> Self:
        """The options ``given`` as keyword arguments to ``func`` (which names itself in the
        errors), the rest at their defaults. An unknown option or a value of the wrong type is a
        TypeError, a value out of range or not among the choices a ValueError (for a bad value:
        a :class:`BadOption`); each names the option and the value."""
        unknown = [k for k in given if k not in cls.model_fields]
        if unknown:
            close = difflib.get_close_matches(unknown[0], list(cls.model_fields), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TypeError(
                f"{func}() got an unknown option {unknown[0]!r}{hint}; valid options: {', '.join(cls.model_fields)}"
            )
        try:
            return cls(**given)
        except ValidationError as e:
            raise cls._problem(func, e.errors()[0]) from None

    @classmethod
    def _problem(cls, func: str, error: Any) -> BadOption:
        name, value, kind = error["loc"][0], error["input"], error["type"]
        field = cls.model_fields[name]
        got = f"not {type(value).__name__} {value!r}"
        if kind == "literal_error":
            choices = ", ".join(map(repr, get_args(field.annotation)))
            if not isinstance(value, str):
                return BadOptionType(func, name, f"must be one of {choices}, {got}")
            return BadOptionValue(func, name, f"must be one of {choices}, not {value!r}")
        if kind == "greater_than":
            return BadOptionValue(func, name, f"must be positive, not {value!r}")
        if kind == "greater_than_equal":
            return BadOptionValue(
                func, name, f"must be at least {error['ctx']['ge']}, not {value!r}"
            )
        if kind == "value_error":
            return BadOptionValue(func, name, f"{error['ctx']['error']}, not {value!r}")
        want = (
            ("True, False or None" if field.default is None else "True or False")
            if kind == "bool_type"
            else _WANT.get(kind, error["msg"])
        )
        return BadOptionType(func, name, f"must be {want}, {got}")


class SolveOptions(EngineOptions):
    """Keyword options of :func:`gangplan.solve` (the ``gangplan solve`` flags)."""

    objective: Objective = D.OBJECTIVE
    """exact: the objective after the admission tiers (``--objective``)."""
    hint: Any = None
    """exact: a Result whose placement seeds the search; None: a greedy run, as the CLI does.
    (:func:`gangplan.solve` checks that it is a Result: this module cannot name the class, as
    :mod:`gangplan.models.result` imports it.)"""


class DiffOptions(EngineOptions):
    """Keyword options of :func:`gangplan.diff` (the ``gangplan diff`` and ``whatif`` flags)."""

    probe_time_limit: float = Field(D.PROBE_TIME_LIMIT, gt=0)
    """The work limit of each probe of the decisive-step search, its feasibility pre-check and its exact solve together (``--probe-time-limit``, default 5)."""
    samples: int = Field(D.SAMPLES, ge=0)
    """Also run greedy this many times with random ties and pod orders (``--samples``, default 0)."""
    explain: bool = D.EXPLAIN
    """Search the decisive greedy step when greedy is suboptimal (default True)."""


class RoomOptions(EngineOptions):
    """Keyword options of :func:`gangplan.make_room` (the ``gangplan make-room`` flags; what
    ``tie_break`` and ``preemption`` mean for the greedy runs of the check)."""

    evict: bool = False
    """Lower-priority running work may be stopped for good (``--evict``), as preemption would."""
    weights: Any = None
    """A :class:`gangplan.models.room.RoomWeights` (``--weight NAME=VALUE``); None: the defaults."""
    like: str | None = None
    """Nodes to add copy this node (``--like NODE``); None: the largest node classes."""
    add_nodes: bool = True
    """Also answer with the fewest nodes to add (``--add-nodes/--no-add-nodes``)."""
    copies: int = Field(0, ge=0)
    """Also count how many of this many copies of each target fit now (``--copies N``)."""
    samples: int = Field(0, ge=0)
    """Also replay the plan this many times with seeded random score ties (``--samples K``)."""


class ReplayOptions(BaseModel):
    """The options of one replay (``gangplan replay`` flags, :func:`gangplan.replay.replay`),
    written once with their defaults (:mod:`gangplan.models.defaults`). The model holds values;
    :func:`gangplan.replay.replay` checks them and names a bad one by its flag (exit 2 in the CLI)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: str = D.REPLAY_MODE
    """``fill`` (the FGD paper's experiment) or ``timed`` (a discrete-event clock)."""
    policies: tuple[str, ...] = D.REPLAY_POLICIES
    seeds: tuple[int, ...] = D.REPLAY_SEEDS
    vc: str | None = None
    """Philly: keep this VC's jobs and size the cluster from ``philly_vc.csv``."""
    arrival_scale: float = D.ARRIVAL_SCALE
    ratio: float = D.INFLATION_RATIO
    exact_time_limit: float = D.EPOCH_TIME_LIMIT
    epoch: float | None = None
    export_epoch: tuple[int, str] | None = None
    """(N, DIR): write epoch N's state to ``DIR/epoch-N.yaml``."""
    bound: bool | str = D.BOUND_METHOD
    """Fill: ``lp``, ``patterns`` or ``none`` (True / False: ``lp`` / ``none``)."""
    movable_bound: bool = False
    bound_percents: tuple[int, ...] = D.BOUND_PERCENTS
    bound_work_limit: float = D.BOUND_WORK_LIMIT
    checkpoint: str | None = None
    """DIR: each finished run is saved to ``DIR/runs``."""
    resume: bool = False
    gpu_class: str | None = None


__all__ = [
    "ENGINES",
    "OBJECTIVES",
    "TIE_BREAKS",
    "BadOption",
    "BadOptionType",
    "BadOptionValue",
    "DiffOptions",
    "Engine",
    "EngineOptions",
    "Objective",
    "ReplayOptions",
    "RunOptions",
    "SolveOptions",
    "TieBreak",
]
