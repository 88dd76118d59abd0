"""Typed access to raw Kubernetes objects that fails with file, object and field named."""

from __future__ import annotations

import re
from typing import Any

from gangplan.io.errors import SnapshotError
from gangplan.models.quantity import QuantityError, to_scheduler_int

_INT_RE = re.compile(r"[+-]?[0-9]{1,18}")


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    return {dict: "mapping", list: "list", str: "string", bool: "boolean", int: "integer", float: "number"}.get(
        type(v), type(v).__name__
    )


class Ctx:
    """Where an object came from; every accessor raises :class:`SnapshotError` naming the field."""

    __slots__ = ("file", "obj", "notes")

    def __init__(self, file: str, obj: str) -> None:
        self.file = file
        self.obj = obj
        self.notes: list[tuple[str, str]] = []
        """(field, message) of what was read but is not used (the loader turns them into warnings)."""

    def note(self, field: str, message: str) -> None:
        """Record a field gangplan reads but does not model (never silently dropped)."""
        self.notes.append((field, message))

    def fail(self, field: str | None, message: str) -> SnapshotError:
        return SnapshotError(self.file, message, obj=self.obj, field=field)

    # ---- structural --------------------------------------------------------------------------
    def map(self, v: Any, field: str, *, required: bool = False) -> dict:
        if v is None:
            if required:
                raise self.fail(field, "required field is missing")
            return {}
        if not isinstance(v, dict):
            raise self.fail(field, f"expected a mapping, got {_type_name(v)}")
        return v

    def list(self, v: Any, field: str, *, required: bool = False) -> list:
        if v is None:
            if required:
                raise self.fail(field, "required field is missing")
            return []
        if not isinstance(v, list):
            raise self.fail(field, f"expected a list, got {_type_name(v)}")
        return v

    def maps(self, v: Any, field: str, *, required: bool = False) -> list[tuple[str, dict]]:
        """A list of mappings, with the field path of each item."""
        out = []
        for i, item in enumerate(self.list(v, field, required=required)):
            out.append((f"{field}[{i}]", self.map(item, f"{field}[{i}]", required=True)))
        return out

    # ---- scalars -----------------------------------------------------------------------------
    def str(self, v: Any, field: str, *, required: bool = False, default: str = "") -> str:
        if v is None:
            if required:
                raise self.fail(field, "required field is missing")
            return default
        if isinstance(v, bool) or not isinstance(v, str | int | float):
            raise self.fail(field, f"expected a string, got {_type_name(v)}")
        if required and isinstance(v, str) and v == "":
            raise self.fail(field, "required field is empty")
        return str(v)

    def opt_str(self, v: Any, field: str) -> str | None:
        return None if v is None else self.str(v, field)

    def int(self, v: Any, field: str, *, required: bool = False, default: int = 0, minimum: int | None = None) -> int:
        if v is None:
            if required:
                raise self.fail(field, "required field is missing")
            return default
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            elif isinstance(v, str) and _INT_RE.fullmatch(v.strip()):
                v = int(v)
            else:
                raise self.fail(field, f"expected an integer, got {_type_name(v)} {v!r}")
        if minimum is not None and v < minimum:
            raise self.fail(field, f"must be >= {minimum}, got {v}")
        return v

    def bool(self, v: Any, field: str, *, default: bool = False) -> bool:
        if v is None:
            return default
        if not isinstance(v, bool):
            raise self.fail(field, f"expected a boolean, got {_type_name(v)} {v!r}")
        return v

    def enum(self, v: Any, field: str, allowed: tuple[str, ...], *, default: str) -> str:
        s = self.str(v, field, default=default)
        if s not in allowed:
            raise self.fail(field, f"must be one of {', '.join(allowed)}; got {s!r}")
        return s

    def str_map(self, v: Any, field: str) -> dict[str, str]:
        m = self.map(v, field)
        return {self.str(k, field): self.str(val, f"{field}.{k}") for k, val in m.items()}

    def str_list(self, v: Any, field: str) -> tuple[str, ...]:
        return tuple(self.str(x, f"{field}[{i}]") for i, x in enumerate(self.list(v, field)))

    def resources(self, v: Any, field: str) -> dict[str, int]:
        """A ResourceList: name -> quantity, converted to scheduler integers."""
        out: dict[str, int] = {}
        for name, q in self.map(v, field).items():
            name = self.str(name, field)
            try:
                out[name] = to_scheduler_int(name, q)
            except QuantityError as e:
                raise self.fail(f"{field}.{name}", str(e)) from None
        return out
