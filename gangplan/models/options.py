"""The options a Result was produced with, typed: ``Result.params`` read in one place.

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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


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


__all__ = ["RunOptions"]
