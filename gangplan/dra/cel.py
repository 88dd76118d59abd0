"""CEL device selectors with Kubernetes semantics, evaluated by cel-expr-python (the CEL C++
implementation; ``staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go`` is what it
stands in for).

* ``device.driver``, ``device.attributes[domain].name``, ``device.capacity[domain].name``;
  unqualified attribute names belong to the driver's domain (the parser files them there);
* an unknown domain is an empty map (the domains an expression names are added empty);
* a missing key or any runtime error is an error for the whole allocation
  (:class:`CelError`), not "no match", as the allocator reports it;
* compiled expressions are cached, and each (expression, device) is evaluated once.
"""

from __future__ import annotations

import re
from functools import lru_cache

from gangplan.dra.model import Device
from gangplan.dra.semver import (
    Semver,
    SemverError,
    compare,
    decode,
    encode,
    normalize_and_parse,
    parse,
)


class CelError(Exception):
    """A selector that does not compile or fails at runtime (the allocation fails)."""


try:  # pragma: no branch
    from cel_expr_python import cel as _cel
    from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

    AVAILABLE = True
except ImportError:  # pragma: no cover
    _cel = None
    AVAILABLE = False

_DOMAIN_RE = re.compile(r"device\s*\.\s*(attributes|capacity)\s*\[\s*(['\"])([^'\"]+)\2\s*\]")


def _quantity(text: str) -> int:
    from gangplan.models.quantity import to_scheduler_int

    return to_scheduler_int("dra-capacity", text)


def _compare(a: int, b: int) -> int:
    return (a > b) - (a < b)


def _semver(text: str, normalize: bool = False) -> str:
    try:
        return encode(normalize_and_parse(text) if normalize else parse(text))
    except SemverError as e:
        raise ValueError(str(e)) from None


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        normalize_and_parse(text) if normalize else parse(text)
    except SemverError:
        return False
    return True


def _sv_compare(a: str, b: str) -> int:
    try:
        return compare(decode(a), decode(b))
    except SemverError as e:
        raise ValueError(str(e)) from None


def _sv_part(name: str):
    def impl(a: str) -> int:
        try:
            return getattr(decode(a), name)
        except SemverError as e:
            raise ValueError(str(e)) from None

    return impl


@lru_cache(maxsize=1)
def _env():
    """The environment: ``device`` plus the Kubernetes quantity library's ``quantity()``,
    ``compareTo``, ``isGreaterThan``, ``isLessThan`` (k8s.io/apiserver/pkg/cel/library/
    quantity.go) over capacities, which are passed as the integers gangplan reads them into,
    and the semver library (``semverlib.go``: :mod:`gangplan.dra.semver`, Semver values as
    encoded strings)."""
    t = _cel.Type
    fns = [
        _cel.FunctionDecl(
            "quantity", [_cel.Overload("quantity_string", t.INT, [t.STRING], impl=_quantity)]
        ),
        _cel.FunctionDecl(
            "compareTo",
            [
                _cel.Overload(
                    "int_compareTo_int", t.INT, [t.INT, t.INT], is_member=True, impl=_compare
                ),
                _cel.Overload(
                    "semver_compare_to",
                    t.INT,
                    [t.STRING, t.STRING],
                    is_member=True,
                    impl=_sv_compare,
                ),
            ],
        ),
        _cel.FunctionDecl(
            "isGreaterThan",
            [
                _cel.Overload(
                    "int_isGreaterThan_int",
                    t.BOOL,
                    [t.INT, t.INT],
                    is_member=True,
                    impl=lambda a, b: a > b,
                ),
                _cel.Overload(
                    "semver_is_greater_than",
                    t.BOOL,
                    [t.STRING, t.STRING],
                    is_member=True,
                    impl=lambda a, b: _sv_compare(a, b) == 1,
                ),
            ],
        ),
        _cel.FunctionDecl(
            "isLessThan",
            [
                _cel.Overload(
                    "int_isLessThan_int",
                    t.BOOL,
                    [t.INT, t.INT],
                    is_member=True,
                    impl=lambda a, b: a < b,
                ),
                _cel.Overload(
                    "semver_is_less_than",
                    t.BOOL,
                    [t.STRING, t.STRING],
                    is_member=True,
                    impl=lambda a, b: _sv_compare(a, b) == -1,
                ),
            ],
        ),
        _cel.FunctionDecl(
            "semver",
            [
                _cel.Overload("string_to_semver", t.STRING, [t.STRING], impl=_semver),
                _cel.Overload("string_bool_to_semver", t.STRING, [t.STRING, t.BOOL], impl=_semver),
            ],
        ),
        _cel.FunctionDecl(
            "isSemver",
            [
                _cel.Overload("is_semver_string", t.BOOL, [t.STRING], impl=_is_semver),
                _cel.Overload("is_semver_string_bool", t.BOOL, [t.STRING, t.BOOL], impl=_is_semver),
            ],
        ),
        *(
            _cel.FunctionDecl(
                n,
                [_cel.Overload(f"semver_{n}", t.INT, [t.STRING], is_member=True, impl=_sv_part(n))],
            )
            for n in ("major", "minor", "patch")
        ),
    ]
    return _cel.NewEnv(
        variables={"device": t.DYN},
        functions=fns,
        extensions=[
            ext_strings.ExtStrings(),
            ext_bindings.ExtBindings(),
            ext_optional.ExtOptional(),
        ],
    )


@lru_cache(maxsize=4096)
def compile_expression(expr: str):
    """The compiled program and the (map, domain) pairs it names (cached)."""
    if not AVAILABLE:
        raise CelError("CEL is not available (cel-expr-python is not installed)")
    try:
        program = _env().compile(expr)
    except Exception as e:  # noqa: BLE001 - the library raises plain exceptions
        raise CelError(f"compilation failed: {e}") from None
    return program, tuple((m.group(1), m.group(3)) for m in _DOMAIN_RE.finditer(expr))


_ACCESS_RE = re.compile(
    r"device\s*\.\s*(?:(driver)\b|(attributes|capacity)\s*\[\s*(['\"])([^'\"]+)\3\s*\]\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)\b(?!\s*\())"
)
_DEVICE_RE = re.compile(r"\bdevice\b")
_MISSING = object()
_BY_VALUES: dict[tuple, bool | str] = {}
"""(expression, the values it reads) -> result: devices that agree on what a selector reads share
one evaluation (a pure function of those values), e.g. the same GPU model on a thousand nodes."""


@lru_cache(maxsize=4096)
def _reads(expr: str) -> tuple[tuple[str, ...], ...] | None:
    """Every use of ``device`` in ``expr`` as ``("driver",)`` or ``(map, domain, name)`` when each
    one is a plain ``device.driver`` / ``device.attributes['d'].name`` / ``device.capacity['d'].name``
    read; None when ``device`` is used any other way (then only the per-device cache applies)."""
    found = list(_ACCESS_RE.finditer(expr))
    if len(found) != len(_DEVICE_RE.findall(expr)):
        return None
    return tuple(("driver",) if m.group(1) else (m.group(2), m.group(4), m.group(5)) for m in found)


def _values_key(expr: str, device: Device) -> tuple | None:
    reads = _reads(expr)
    if reads is None:
        return None
    vals = []
    for r in reads:
        v = (
            device.driver
            if r[0] == "driver"
            else getattr(device, r[0]).get(r[1], {}).get(r[2], _MISSING)
        )
        vals.append((type(v), v))  # 1 and True are equal in Python, not in CEL
    key = (expr, tuple(vals))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def evaluate(expr: str, device: Device) -> bool:
    """``expr`` on ``device``: True / False, or :class:`CelError` (once per (expression, device),
    and once per (expression, values it reads) when it reads only plain fields)."""
    cache = device.__dict__.setdefault(
        "_cel", {}
    )  # per device object: results never leak between snapshots
    got = cache.get(expr)
    if got is None:
        key = _values_key(expr, device)
        got = _BY_VALUES.get(key) if key is not None else None
        if got is None:
            got = _evaluate(expr, device)
            if key is not None:
                if len(_BY_VALUES) > 100_000:
                    _BY_VALUES.clear()
                _BY_VALUES[key] = got
        cache[expr] = got
    if isinstance(got, str):
        raise CelError(got)
    return got


def _evaluate(expr: str, device: Device) -> bool | str:
    try:
        program, domains = compile_expression(expr)
    except CelError as e:
        return str(e)
    value = device.cel_value()
    attrs = value["attributes"]
    if any(isinstance(v, Semver) for d in attrs.values() for v in d.values()):
        value = {
            **value,
            "attributes": {
                dom: {k: encode(v.version) if isinstance(v, Semver) else v for k, v in d.items()}
                for dom, d in attrs.items()
            },
        }
    for m, domain in domains:
        if domain not in value[m]:
            value = {**value, m: {**value[m], domain: {}}}
    try:
        out = program.eval(data={"device": value})
        plain = out.plain_value()
    except Exception as e:  # noqa: BLE001
        return f"CEL runtime error: {e}"
    if out.type().name() == "ERROR" or not isinstance(plain, bool):
        return (
            f"CEL runtime error: {plain}"
            if out.type().name() == "ERROR"
            else f"expression must return bool, got {out.type().name()}"
        )
    return plain


def check(expr: str) -> str | None:
    """Why ``expr`` cannot be used (does not compile), or None."""
    try:
        compile_expression(expr)
    except CelError as e:
        return str(e)
    return None
