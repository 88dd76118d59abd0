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


__all__ = ["Document"]
