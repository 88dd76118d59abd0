"""Typed access to raw Kubernetes objects that fails with file, object and field named.

Integers are checked against the range of their Go type and the range validation allows, in one
place (:func:`check_range`): ``Ctx.int32`` for the API's ``int32`` fields (counts, priorities,
weights, ports), ``Ctx.int`` for ``int64`` ones, and every resource quantity must fit an int64 in
the unit gangplan stores it in (millicores for cpu, whole units otherwise), as kube-scheduler holds
it (``framework.Resource``: ``MilliCPU int64``, ``Memory int64``, ``ScalarResources map[..]int64``).
A value outside is bad input, as the API server rejects it (a JSON number beyond int32 does not
decode into an int32 field) instead of reaching numpy or CP-SAT as an overflow.
"""

from __future__ import annotations

import re
from typing import Any

from gangplan.io.errors import SnapshotError
from gangplan.models.quantity import QuantityError, to_scheduler_int

_INT_RE = re.compile(r"[+-]?[0-9]{1,18}")

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def check_range(
    v: int, minimum: int | None, maximum: int | None, type_min: int, type_max: int, type_name: str
) -> str | None:
    """Why ``v`` is out of range, or None: first against its Go type, then against the bounds
    validation sets (``minimum`` / ``maximum``, inclusive).

    >>> check_range(2**31, 1, None, INT32_MIN, INT32_MAX, "int32")
    '2147483648 does not fit an int32 (-2147483648..2147483647)'
    >>> check_range(0, 1, 100, INT32_MIN, INT32_MAX, "int32"), check_range(5, 1, 100, INT32_MIN, INT32_MAX, "int32")
    ('must be in 1..100, got 0', None)
    """
    if not type_min <= v <= type_max:
        return f"{_short(v, quote=False)} does not fit an {type_name} ({type_min}..{type_max})"
    lo_bad = minimum is not None and v < minimum
    hi_bad = maximum is not None and v > maximum
    if not (lo_bad or hi_bad):
        return None
    if minimum is not None and maximum is not None:
        return (
            f"must be {minimum}, got {v}"
            if minimum == maximum
            else f"must be in {minimum}..{maximum}, got {v}"
        )
    return f"must be >= {minimum}, got {v}" if lo_bad else f"must be <= {maximum}, got {v}"


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    return {
        dict: "mapping",
        list: "list",
        str: "string",
        bool: "boolean",
        int: "integer",
        float: "number",
    }.get(type(v), type(v).__name__)


def _short(v: Any, *, quote: bool = True) -> str:
    """A value for a message, at most ~40 characters (huge numbers give their digit count)."""
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10**30:
        return f"{'-' if v < 0 else ''}{str(abs(v))[:6]}... ({len(str(abs(v)))} digits)"
    text = repr(v) if quote else str(v)
    return text if len(text) <= 40 else text[:37] + "..."


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
        if v.__class__ is str and (v or not required):  # the common case, first
            return v
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

    def int(
        self,
        v: Any,
        field: str,
        *,
        required: bool = False,
        default: int = 0,
        minimum: int | None = None,
        maximum: int | None = None,
        _type: tuple[int, int, str] = (INT64_MIN, INT64_MAX, "int64"),
    ) -> int:
        """An ``int64`` field (an integral float or a decimal string is read as its integer)."""
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
        problem = check_range(v, minimum, maximum, *_type)
        if problem:
            raise self.fail(field, problem)
        return v

    def int32(
        self,
        v: Any,
        field: str,
        *,
        required: bool = False,
        default: int = 0,
        minimum: int | None = None,
        maximum: int | None = None,
    ) -> int:
        """An ``int32`` field: counts, priorities, weights, ports."""
        return self.int(
            v,
            field,
            required=required,
            default=default,
            minimum=minimum,
            maximum=maximum,
            _type=(INT32_MIN, INT32_MAX, "int32"),
        )

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
        out = {}
        for k, val in m.items():
            if k.__class__ is str and val.__class__ is str:
                out[k] = val
            else:
                out[self.str(k, field)] = self.str(val, f"{field}.{k}")
        return out

    def str_list(self, v: Any, field: str) -> tuple[str, ...]:
        return tuple(self.str(x, f"{field}[{i}]") for i, x in enumerate(self.list(v, field)))

    def resources(self, v: Any, field: str) -> dict[str, int]:
        """A ResourceList: name -> quantity, converted to scheduler integers that fit an int64."""
        out: dict[str, int] = {}
        for name, q in self.map(v, field).items():
            name = self.str(name, field)
            try:
                amount = out[name] = to_scheduler_int(name, q)
            except QuantityError as e:
                raise self.fail(f"{field}.{name}", str(e)) from None
            if not INT64_MIN <= amount <= INT64_MAX:
                self.check_amount(amount, f"{field}.{name}", name, what=f"quantity {_short(q)}")
        return out

    def check_amount(self, amount: int, field: str, resource: str, *, what: str) -> None:
        """A resource amount in gangplan's unit (millicores for cpu) must fit an int64."""
        if check_range(amount, None, None, INT64_MIN, INT64_MAX, "int64"):
            unit = "millicores" if resource == "cpu" else "units"
            raise self.fail(
                field,
                f"{what} is out of range: {_short(amount, quote=False)} {unit} does not fit an int64 (at most {INT64_MAX} {unit})",
            )
