"""What the golden tests share: the golden file text of a document and the first place two
documents differ (for a failure message that names the changed field)."""

from __future__ import annotations

import json
from typing import Any


def dump(doc: dict[str, Any]) -> str:
    """The golden text: indented JSON, keys in the document's order, one final newline."""
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def first_difference(a: Any, b: Any, path: str = "") -> str:
    """The path of the first value that differs between ``a`` and ``b``, with both values (or
    their types, key lists or lengths where those differ)."""
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{path}: keys {list(a)[:10]} != {list(b)[:10]}"
        for k in a:
            if a[k] != b[k]:
                return first_difference(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
    return f"{path}: {a!r} != {b!r}"
