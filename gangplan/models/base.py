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


__all__ = ["Beside", "Document", "beside"]
