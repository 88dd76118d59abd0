"""The one YAML writer for Kubernetes objects: snapshots, expansions, plans.

Every file gangplan writes as Kubernetes YAML (``gangplan generate``, ``gangplan expand``,
``gangplan import alibaba-nodes``, the Alibaba showcase, ``plan.yaml`` of ``diff --plan``) comes
from :func:`dump_snapshot`: multi-document YAML in block style, as ``kubectl get -o yaml`` prints
it, keys in insertion order, long strings never folded (``width=1000``), so the same objects give
the same bytes and a file reads back into the same dicts.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from gangplan.io.errors import SnapshotError

try:  # libyaml dumps large instances ~10x faster; output is identical for these plain objects.
    _Dumper = yaml.CSafeDumper  # type: ignore[attr-defined]
except AttributeError:  # pragma: no cover
    _Dumper = yaml.SafeDumper


def comment_block(header: str | None) -> str:
    """``header`` as leading ``#`` comment lines (an empty line becomes a bare ``#``).

    >>> comment_block("two\\n\\nlines")
    '# two\\n#\\n# lines\\n'
    """
    return "".join(f"# {line}\n" if line else "#\n" for line in (header or "").splitlines())


def dump_snapshot(objects: Iterable[dict[str, Any]], header: str | None = None) -> str:
    """Multi-document YAML for ``objects`` in order (``""`` for none), ``header`` as comments."""
    text = yaml.dump_all(
        list(objects), Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000
    )
    return comment_block(header) + text


def write_snapshot(
    objects: Iterable[dict[str, Any]], path: str | os.PathLike, header: str | None = None
) -> None:
    """Write :func:`dump_snapshot` to ``path`` (parent directories created); a file that cannot
    be written is a :class:`SnapshotError` naming it."""
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "w", encoding="utf-8", newline="\n") as f:
            f.write(dump_snapshot(objects, header))
    except OSError as e:
        raise SnapshotError(str(p), f"cannot write: {e.strerror or e}") from None


__all__ = ["comment_block", "dump_snapshot", "write_snapshot"]
