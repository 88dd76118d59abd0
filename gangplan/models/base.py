"""The base of gangplan's printed JSON documents (diff, suite, bench, inspect, violations,
whatif, replay): camelCase keys, unknown keys refused, ``dump()`` as the JSON gives it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class Document(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    def dump(self, **kw: Any) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, **kw)


class Beside:
    """A value a model holds beside its fields, in a private attribute (a Result's Cluster, a
    Cluster's DRA capacity view): it lives and dies with the model that holds it (no module table
    keyed by ``id()``), is shared rather than deep-copied by ``model_copy(deep=True)``, and is
    equal to anything, so the model's ``==`` still compares its fields only."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __copy__(self) -> Beside:
        return self

    def __deepcopy__(self, memo: dict) -> Beside:
        return self

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]


def beside(holder: Beside | None) -> Any:
    """The value in ``holder`` (None when there is none)."""
    return holder.value if holder is not None else None


def kept_beside(owner: Any, attr: str, make: Any) -> Any:
    """``make(owner)``, made once and kept beside ``owner`` in its private attribute ``attr`` as
    ``Beside((owner, value))``: a copy of ``owner`` (which shares the holder) is not its owner and
    makes its own."""
    held = getattr(owner, attr)
    if held is not None and held.value[0] is owner:
        return held.value[1]
    value = make(owner)
    setattr(owner, attr, Beside((owner, value)))
    return value


TIME_KEYS = frozenset({"seconds", "timing", "budget"})
"""Keys of the printed documents that hold time (with every key ending in ``Seconds``)."""


def without_time(doc: Any) -> Any:
    """A JSON document without what is time (:data:`TIME_KEYS` and every ``...Seconds`` key, at
    any depth): what must be byte-identical between two runs of the same input and options."""
    if isinstance(doc, dict):
        return {
            k: without_time(v)
            for k, v in doc.items()
            if k not in TIME_KEYS and not k.endswith("Seconds")
        }
    if isinstance(doc, list):
        return [without_time(v) for v in doc]
    return doc


__all__ = ["TIME_KEYS", "Beside", "Document", "beside", "without_time"]
