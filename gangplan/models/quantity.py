"""Kubernetes resource quantities, parsed exactly.

Mirrors the grammar of ``k8s.io/apimachinery/pkg/api/resource/quantity.go`` (v0.35)::

    <quantity>        ::= <signedNumber><suffix>
    <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
    <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
    <decimalSI>       ::= m | "" | k | M | G | T | P | E
    <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>

Values are kept as :class:`fractions.Fraction`, so nothing is lost to floating point. Conversion to
the integers the scheduler works with rounds *up*, as ``Quantity.Value()`` and
``Quantity.MilliValue()`` do: cpu becomes millicores, everything else whole units (bytes, GPUs).
Whether the result fits the int64 kube-scheduler keeps it in is checked where a snapshot is read
(:meth:`gangplan.io.fields.Ctx.resources`), so the file, object and field can be named.

>>> parse_quantity("100m")
Fraction(1, 10)
>>> to_scheduler_int("cpu", "1.5"), to_scheduler_int("memory", "2Gi")
(1500, 2147483648)
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

__all__ = [
    "QuantityError",
    "add_resources",
    "format_quantity",
    "max_resources",
    "parse_quantity",
    "to_scheduler_int",
]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
# A number: optional sign, then digits with an optional fraction, or a bare fraction (".5").
# Upstream's parseQuantityString reads a missing integer part as 0, so "." and "-.G" are 0
# (TestParseQuantityString in quantity_test.go); a sign alone is not a number.
_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]*)"
_QUANTITY_RE = re.compile(
    rf"^(?P<num>{_NUMBER})(?:(?P<exp>[eE][+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$"
)


_MAX_DIGITS = 1000


class QuantityError(ValueError):
    """A string or number that is not a valid Kubernetes quantity."""


def parse_quantity(value: str | int | float) -> Fraction:
    """Parse a quantity into an exact fraction of base units.

    Integers and floats (as YAML gives them for ``cpu: 2`` or ``cpu: 0.5``) are accepted; a float is
    read through its shortest decimal representation, as YAML wrote it.

    >>> parse_quantity("1e3"), parse_quantity("500M"), parse_quantity(0.1)
    (Fraction(1000, 1), Fraction(500000000, 1), Fraction(1, 10))
    """
    if isinstance(value, bool):
        raise QuantityError(f"expected a quantity, got boolean {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"quantity {value!r} is not finite")
        return Fraction(repr(value))
    if not isinstance(value, str):
        raise QuantityError(f"expected a quantity string or number, got {type(value).__name__}")
    return _parse_text(value)


@lru_cache(maxsize=8192)
def _parse_text(value: str) -> Fraction:
    """:func:`parse_quantity` of a string, once per distinct string (a snapshot repeats a few
    dozen quantities thousands of times; a Fraction is immutable, an error is raised each time)."""
    text = value.strip()
    m = _QUANTITY_RE.fullmatch(text)
    if not m:
        raise QuantityError(f"unable to parse quantity {value!r}")
    if len(m.group("num")) > _MAX_DIGITS:
        # Far beyond int64 (upstream's range), and past Python's int-from-text limit.
        raise QuantityError(f"quantity {value[:20]!r}... has more than {_MAX_DIGITS} digits")
    num = m.group("num")
    number = Fraction(num) if any(ch.isdigit() for ch in num) else Fraction(0)
    if m.group("exp"):
        exponent = int(m.group("exp")[1:])
        if abs(exponent) > 64:
            raise QuantityError(f"quantity {value!r} has an out-of-range exponent")
        return number * Fraction(10) ** exponent
    suffix = m.group("suffix") or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    return number * _DECIMAL[suffix]


def to_scheduler_int(resource: str, value: str | int | float) -> int:
    """The integer kube-scheduler uses for ``resource``: millicores for cpu, units otherwise.

    Rounds up like ``Quantity.MilliValue()`` / ``Quantity.Value()``. Negative values raise.

    >>> to_scheduler_int("cpu", "100m"), to_scheduler_int("memory", "500M"), to_scheduler_int("cpu", "0.0001")
    (100, 500000000, 1)
    """
    kind = type(value)
    if kind is str:
        key = (resource == "cpu", value)
        hit = _SCHEDULER_INTS.get(key)
        if hit is not None:
            return hit
    elif (
        kind is int
    ):  # cpu: 2, nvidia.com/gpu: 8 (a bool is not an int here: parse_quantity refuses it)
        if value < 0:
            raise QuantityError(f"quantity {value!r} is negative")
        return value * 1000 if resource == "cpu" else value
    q = parse_quantity(value)
    if q < 0:
        raise QuantityError(f"quantity {value!r} is negative")
    if resource == "cpu":
        q = q * 1000
    out = math.ceil(q)
    if kind is str:
        if len(_SCHEDULER_INTS) >= _CACHE_SIZE:
            _SCHEDULER_INTS.clear()
        _SCHEDULER_INTS[key] = out
    return out


_CACHE_SIZE = 8192
_SCHEDULER_INTS: dict[tuple[bool, str], int] = {}
"""(is cpu, quantity string) -> :func:`to_scheduler_int`: the string is parsed once per snapshot
(the table is emptied when full; only valid quantities are kept)."""


def format_quantity(resource: str, amount: int) -> str:
    """Render a scheduler integer back as a short, exact Kubernetes quantity string.

    >>> format_quantity("cpu", 1500), format_quantity("memory", 2 * 2**30), format_quantity("nvidia.com/gpu", 8)
    ('1500m', '2Gi', '8')
    """
    if resource == "cpu":
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    if amount > 0:
        for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
            if amount % _BINARY[suffix] == 0:
                return f"{amount // _BINARY[suffix]}{suffix}"
    return str(amount)


def add_resources(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    """``a + b`` per resource name (a pod's containers summed, ``resource.PodRequests``)."""
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def max_resources(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    """The larger of ``a`` and ``b`` per resource name (init containers against the rest)."""
    out = dict(a)
    for k, v in b.items():
        out[k] = max(out.get(k, 0), v)
    return out
