"""Semantic versions of DRA ``version`` attributes and the Kubernetes CEL semver library.

What it mirrors (kubernetes/kubernetes master @2293553 and the DRA compiler @00faa5e):

* ``staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go`` ``getAttributeValue``: a
  device's ``version`` attribute reaches CEL as a ``Semver`` value, parsed with blang/semver v4
  ``semver.Parse`` (strict semver.org 2.0.0); the environment includes ``library.SemverLib``;
* ``staging/src/k8s.io/apiserver/pkg/cel/library/semverlib.go``: ``semver(string)``,
  ``semver(string, normalize)``, ``isSemver(string[, normalize])``, and on Semver values
  ``isGreaterThan``, ``isLessThan``, ``compareTo`` (blang ``Compare``), ``major()``, ``minor()``,
  ``patch()``; ``normalizeAndParse`` drops a leading ``v``, leading zeros, and fills a missing
  minor / patch with 0;
* ``apiservercel.Semver`` equality is blang ``EQ`` (``Compare == 0``: build metadata ignored).

cel-expr-python cannot carry an opaque Python value through CEL, so a Semver is passed as a
string in a private encoding (:func:`encode`: a tag led by the ASCII unit separator, then the version without its build
metadata), which makes ``==`` the same as blang's ``EQ``; the library's functions are declared
on strings and refuse any string not so encoded (a runtime error, as a missing overload is
upstream). Departures: comparing a Semver with a plain string with ``==`` is false here, an
error upstream; string functions applied to a Semver run on the encoding instead of failing to
type-check.

``matchAttribute`` compares version attributes as strings, as upstream's allocator does (semver
2.0.0 versions are in minimal form, so exact equality is string equality):
:class:`Semver` is a ``str`` holding the attribute as written.
"""

from __future__ import annotations

from dataclasses import dataclass

TAG = "\x1fsemver\x1f"
_ALNUM = set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")


class SemverError(ValueError):
    pass


@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()
    build: tuple[str, ...] = ()

    def core(self) -> str:
        """The version without build metadata (what equality and order read)."""
        s = f"{self.major}.{self.minor}.{self.patch}"
        return s + ("-" + ".".join(str(p) for p in self.pre) if self.pre else "")


def _number(part: str, what: str) -> int:
    if not part or not part.isascii() or not part.isdigit():
        raise SemverError(f"Invalid character(s) found in {what} number {part!r}")
    if len(part) > 1 and part[0] == "0":
        raise SemverError(f"{what.capitalize()} number must not contain leading zeroes {part!r}")
    value = int(part)
    if value >= 2**64:
        raise SemverError(f"{what} number {part!r} out of range")
    return value


def parse(text: str) -> Version:
    """blang/semver v4 ``Parse``: ``MAJOR.MINOR.PATCH[-PRE][+BUILD]``, strict."""
    if not text:
        raise SemverError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major, minor = _number(parts[0], "major"), _number(parts[1], "minor")
    rest = parts[2]
    build: tuple[str, ...] = ()
    pre: list[int | str] = []
    if "+" in rest:
        rest, b = rest.split("+", 1)
        build = tuple(b.split("."))
        for x in build:
            if not x or not set(x) <= _ALNUM:
                raise SemverError(f"Invalid character(s) found in build meta data {x!r}")
    if "-" in rest:
        rest, p = rest.split("-", 1)
        for x in p.split("."):
            if not x:
                raise SemverError("Prerelease is empty")
            if x.isascii() and x.isdigit():
                if len(x) > 1 and x[0] == "0":
                    raise SemverError(f"Version number must not contain leading zeroes {x!r}")
                pre.append(int(x))
            elif set(x) <= _ALNUM:
                pre.append(x)
            else:
                raise SemverError(f"Invalid character(s) found in prerelease {x!r}")
    return Version(major, minor, _number(rest, "patch"), tuple(pre), build)


def normalize_and_parse(text: str) -> Version:
    """``normalizeAndParse`` of semverlib.go."""
    s = text[1:] if text.startswith("v") else text
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            q = p.lstrip("0")
            if not q or q[0] not in "0123456789":
                q = "0" + q
            parts[i] = q
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return parse(".".join(parts))


def compare(a: Version, b: Version) -> int:
    """blang ``Version.Compare``: -1, 0 or 1; build metadata ignored."""
    for x, y in ((a.major, b.major), (a.minor, b.minor), (a.patch, b.patch)):
        if x != y:
            return 1 if x > y else -1
    if not a.pre and not b.pre:
        return 0
    if not a.pre:
        return 1
    if not b.pre:
        return -1
    for x, y in zip(a.pre, b.pre, strict=False):
        if x == y:
            continue
        if isinstance(x, int) and isinstance(y, int):
            return 1 if x > y else -1
        if isinstance(x, int):
            return -1
        if isinstance(y, int):
            return 1
        return 1 if x > y else -1
    if len(a.pre) == len(b.pre):
        return 0
    return -1 if len(a.pre) < len(b.pre) else 1


class Semver(str):
    """A ``version`` attribute: the string as written, with its parsed :attr:`version`."""

    version: Version

    def __new__(cls, text: str) -> Semver:
        obj = super().__new__(cls, text)
        obj.version = parse(text)
        return obj


def encode(v: Version) -> str:
    """The CEL string standing for a Semver value (module docstring)."""
    return TAG + v.core()


def decode(s: str) -> Version:
    if not isinstance(s, str) or not s.startswith(TAG):
        raise SemverError(f"no such overload: expected a semver value, got {s!r}")
    return parse(s[len(TAG) :])


__all__ = [
    "Semver",
    "SemverError",
    "Version",
    "compare",
    "decode",
    "encode",
    "normalize_and_parse",
    "parse",
]
