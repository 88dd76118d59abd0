"""The one way the benchmark scripts write their CSV under ``benchmarks/results/`` (imported as a
sibling module, like :mod:`isolate`, when a script runs as ``python benchmarks/NAME.py``)."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any


def print_rows(rows: Sequence[Mapping[str, Any]], fields: Sequence[str]) -> None:
    """The table on stdout: a header line, then one line per row, columns two spaces apart."""
    print("  ".join(fields))
    for r in rows:
        print("  ".join(str(r[f]) for f in fields))


def write_csv(
    path: Path,
    rows: Sequence[Mapping[str, Any]],
    fields: Iterable[str] | None = None,
    *,
    ignore_extra: bool = False,
) -> Path:
    """Write ``rows`` with a header (``fields``, default the first row's keys); columns a row has
    beyond ``fields`` raise unless ``ignore_extra``. Creates the folder; returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    names = list(fields) if fields is not None else list(rows[0]) if rows else []
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=names, extrasaction="ignore" if ignore_extra else "raise")
        w.writeheader()
        w.writerows(rows)
    return path
