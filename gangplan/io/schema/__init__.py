"""Unknown fields, kinds and apiVersions, as the API server's strict field validation finds them.

The known fields of each kind come from ``fields.json``, generated from the upstream Go type
definitions by :mod:`gangplan.io.schema.generate` (never edited by hand). :func:`unknown_fields`
walks a raw object once against the type of its ``apiVersion`` and kind and returns kubectl's
wording, ``unknown field "spec.containers[0].resources.requets"``, with the closest valid name.
``status`` and every ``metadata`` field the server sets (managedFields, uid, resourceVersion, ...)
are allowed; map-valued fields (labels, annotations, requests, nodeSelector) accept any key.

:func:`unknown_kind` names a kind or apiVersion that looks like a known one: a misspelled group
(``schedulng.k8s.io/v1alpha2``), or a known kind under a built-in group that does not serve it
(a Node in ``apps/v1``).

``ENABLED`` is the internal switch the loader consults (benchmarks/unknown_fields_cost.py turns
it off to measure what the check costs).
"""

from __future__ import annotations

import difflib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

ENABLED = True
"""Internal switch: the loader runs the unknown-field check only while this is true."""

_TABLE_PATH = Path(__file__).with_name("fields.json")


class Schema:
    """The generated table, loaded once (:func:`schema`)."""

    def __init__(self, table: dict[str, Any]) -> None:
        self.kinds: dict[str, dict[str, str]] = table["kinds"]
        self.types: dict[str, dict[str, Any]] = table["types"]
        self.builtin: dict[str, list[str]] = table["builtin"]
        self.sources: list[dict[str, Any]] = table["sources"]
        self.by_kind: dict[str, list[str]] = {}
        """kind -> apiVersions that serve it (the table's, then the built-in ones)."""
        for api, kinds in list(self.kinds.items()) + list(self.builtin.items()):
            for kind in kinds:
                apis = self.by_kind.setdefault(kind, [])
                if api not in apis:
                    apis.append(api)
        self.groups = {_group(a) for a in list(self.kinds) + list(self.builtin)}
        """API groups the table or Kubernetes serves: a known group is not a misspelling."""
        self.builtin_groups = {_group(a) for a in self.builtin}
        self._fields = {t: tuple(f) for t, f in self.types.items()}

    def type_of(self, kind: str, api_version: str) -> str | None:
        return self.kinds.get(api_version, {}).get(kind)

    def closest(self, name: str, type_id: str) -> str | None:
        m = difflib.get_close_matches(name, self._fields.get(type_id, ()), n=1, cutoff=0.6)
        return m[0] if m else None


@lru_cache(maxsize=1)
def schema() -> Schema:
    return Schema(json.loads(_TABLE_PATH.read_text(encoding="utf-8")))


def _walk(s: Schema, value: Any, tid: str, path: str, out: list[tuple[str, str | None]]) -> None:
    if isinstance(value, list):
        for i, item in enumerate(value):
            _walk(s, item, tid, f"{path}[{i}]", out)
        return
    if not isinstance(value, dict):
        return
    fields = s.types.get(tid)
    if fields is None:
        return
    for key, v in value.items():
        ft = fields.get(key, None) if isinstance(key, str) else None
        if ft is None:
            if key in fields:  # pragma: no cover - the table holds no nulls
                continue
            out.append((f"{path}.{key}" if path else str(key), s.closest(str(key), tid)))
            continue
        if ft == 0 or v is None:
            continue
        sub = f"{path}.{key}" if path else key
        if ft[0] == "*":
            if isinstance(v, dict):
                for mk, mv in v.items():
                    _walk(s, mv, ft[1:], f"{sub}.{mk}", out)
        elif ft[0] == "!":  # PluginConfig.args: the <name>Args type of the plugin it configures
            name = value.get("name")
            args = f"{ft.split(':', 1)[1]}.{name}Args" if isinstance(name, str) else ""
            if args in s.types:
                _walk(s, v, args, sub, out)
        else:
            _walk(s, v, ft, sub, out)


def _message(path: str, suggestion: str | None) -> str:
    text = f'unknown field "{path}"'
    return f'{text}, did you mean "{suggestion}"?' if suggestion else text


def unknown_fields(raw: dict[str, Any]) -> list[tuple[str, str]]:
    """(field path, message) of every field of ``raw`` its type does not define, in kubectl's
    wording. An object whose kind and apiVersion the table does not hold gives none (see
    :func:`unknown_kind`); without ``apiVersion`` the kind's version that knows the most fields
    is used."""
    s = schema()
    kind, api = raw.get("kind"), raw.get("apiVersion")
    if not isinstance(kind, str):
        return []
    if isinstance(api, str) and api:
        tid = s.type_of(kind, api)
        if tid is None:
            return []
        candidates = [tid]
    else:
        candidates = [
            s.kinds[a][kind] for a in s.by_kind.get(kind, ()) if kind in s.kinds.get(a, {})
        ]
    best: list[tuple[str, str | None]] | None = None
    for tid in candidates:
        out: list[tuple[str, str | None]] = []
        for key, v in raw.items():
            if key == "status":
                continue
            ft = s.types[tid].get(key) if isinstance(key, str) else None
            if ft is None:
                out.append((str(key), s.closest(str(key), tid)))
            elif ft != 0 and v is not None:
                _walk(s, v, ft, key, out)
        if best is None or len(out) < len(best):
            best = out
        if not out:
            break
    return [(p, _message(p, sug)) for p, sug in best or []]


def _group(api: str) -> str:
    return api.rsplit("/", 1)[0] if "/" in api else ""


def unknown_kind(kind: Any, api_version: Any) -> str | None:
    """A message when ``kind`` / ``apiVersion`` look like a known pair but are not one: a misspelled
    apiVersion of a known kind, a known kind under a built-in group that does not serve it, or a
    misspelled kind of a known apiVersion. None for a pair the table or Kubernetes serves, and for
    anything that does not resemble one (another project's API)."""
    if not isinstance(kind, str) or not isinstance(api_version, str) or not api_version:
        return None
    s = schema()
    if kind in s.kinds.get(api_version, ()) or kind in s.builtin.get(api_version, ()):
        return None
    known = s.by_kind.get(kind)
    served = api_version in s.kinds or api_version in s.builtin
    if known:
        close = difflib.get_close_matches(api_version, known, n=1, cutoff=0.75)
        if (
            close
            and _group(close[0]) != _group(api_version)
            and _group(api_version) not in s.groups
        ):
            return f'no matches for kind "{kind}" in version "{api_version}", did you mean apiVersion "{close[0]}"?'
        group, version = _group(api_version), api_version.rsplit("/", 1)[-1]
        # Only Kubernetes' own groups are known in every version; a CRD may serve versions the table lacks.
        same_group = [a for a in known if _group(a) == group] if group in s.builtin_groups else []
        if (
            group not in s.groups
        ):  # "core/v1": an unknown group with the version of a built-in kind's
            builtin = [
                a for a in known if a.rsplit("/", 1)[-1] == version and kind in s.builtin.get(a, ())
            ]
            if builtin:
                return f'no matches for kind "{kind}" in version "{api_version}", did you mean apiVersion "{builtin[0]}"?'
        if served or same_group:  # a group that does not serve the kind, or not in that version
            alts = ", ".join(
                f'"{a}"' for a in (same_group or known)
            )  # every one (issue 41: a [:3] cut hid v1beta1)
            return f'no matches for kind "{kind}" in version "{api_version}" ({kind} is served by apiVersion {alts})'
        return None
    if served:
        kinds = list(s.kinds.get(api_version, {})) + list(s.builtin.get(api_version, ()))
        close = difflib.get_close_matches(kind, kinds, n=1, cutoff=0.6)
        if close:
            return f'no matches for kind "{kind}" in version "{api_version}", did you mean kind "{close[0]}"?'
    return None


def is_unknown_warning(line: str) -> bool:
    """Is this warning of ``Cluster.warnings`` one of the loader's unknown-field/kind ones?"""
    return ': unknown field "' in line or ': no matches for kind "' in line


__all__ = ["ENABLED", "is_unknown_warning", "schema", "unknown_fields", "unknown_kind"]
