"""A small JSON Schema (draft 2020-12) checker for the keywords gangplan's exported schemas use.

No validator package is a dependency of gangplan's dependencies, so the tests check documents
with this: ``type``, ``properties``, ``required``, ``additionalProperties``, ``items``, ``enum``,
``const``, ``anyOf``, ``oneOf``, ``allOf`` and local ``$ref`` (``#/$defs/...``). An unknown keyword
is an error, so a schema that grows a keyword this does not check cannot pass silently.
"""

from __future__ import annotations

from typing import Any

ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description", "default", "examples"}
CHECKED = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "allOf",
    "$ref",
}

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


class SchemaError(AssertionError):
    pass


def errors(schema: dict[str, Any], doc: Any) -> list[str]:
    """Every place ``doc`` breaks ``schema``, as ``path: problem``; empty when it conforms."""
    out: list[str] = []
    _check(schema, doc, schema, "$", out)
    return out


def check(schema: dict[str, Any], doc: Any) -> None:
    found = errors(schema, doc)
    if found:
        raise SchemaError("\n".join(found[:20]))


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any]:
    if not ref.startswith("#/"):
        raise SchemaError(f"only local $ref is supported: {ref}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def _check(
    s: dict[str, Any] | bool, v: Any, root: dict[str, Any], path: str, out: list[str]
) -> None:
    if s is True:
        return
    if s is False:
        out.append(f"{path}: no value is allowed here")
        return
    unknown = set(s) - ANNOTATIONS - CHECKED
    if unknown:
        raise SchemaError(
            f"{path}: schema keyword(s) this checker does not implement: {sorted(unknown)}"
        )
    if "$ref" in s:
        _check(_resolve(root, s["$ref"]), v, root, path, out)
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(_TYPES[t](v) for t in types):
            out.append(f"{path}: {type(v).__name__} {v!r:.60} is not of type {types}")
            return
    if "enum" in s and v not in s["enum"]:
        out.append(f"{path}: {v!r} is not one of {s['enum']}")
    if "const" in s and v != s["const"]:
        out.append(f"{path}: {v!r} is not {s['const']!r}")
    for key in ("anyOf", "oneOf"):
        if key in s:
            passing = [sub for sub in s[key] if not errors_of(sub, v, root, path)]
            if not passing or (key == "oneOf" and len(passing) > 1):
                out.append(f"{path}: matches {len(passing)} of the {key} alternatives")
    for sub in s.get("allOf", ()):
        _check(sub, v, root, path, out)
    if isinstance(v, dict):
        props = s.get("properties", {})
        for k in s.get("required", ()):
            if k not in v:
                out.append(f"{path}: missing required key {k!r}")
        extra = s.get("additionalProperties", True)
        for k, item in v.items():
            if k in props:
                _check(props[k], item, root, f"{path}.{k}", out)
            else:
                _check(extra, item, root, f"{path}.{k}", out)
    if isinstance(v, list) and "items" in s:
        for i, item in enumerate(v):
            _check(s["items"], item, root, f"{path}[{i}]", out)


def errors_of(s: dict[str, Any], v: Any, root: dict[str, Any], path: str) -> list[str]:
    out: list[str] = []
    _check(s, v, root, path, out)
    return out
