"""Trace files read plain or compressed: ``X.csv`` that is absent is read from ``X.csv.xz`` or
``X.csv.gz``, and a path that ends in ``.xz`` / ``.gz`` / ``.bz2`` is decompressed on the fly.

The repository ships the traces its default tests read as ``.xz`` copies
(``tests/data/traces/README.md``); users may keep their own traces compressed the same way.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from pathlib import Path
from typing import IO

SUFFIXES = (".xz", ".gz", ".bz2")
"""Compressed forms tried, in order, when a plain file is absent."""

_OPENERS = {".xz": lzma.open, ".gz": gzip.open, ".bz2": bz2.open}


def resolve(path: str | os.PathLike) -> Path:
    """``path`` if it exists, else its first compressed sibling that exists, else ``path``
    unchanged (so the caller's "not found" names the file the user asked for).

    >>> resolve("/nonexistent/x.csv").name
    'x.csv'
    """
    p = Path(path)
    if p.exists():
        return p
    for suffix in SUFFIXES:
        c = p.with_name(p.name + suffix)
        if c.is_file():
            return c
    return p


def open_text(path: str | os.PathLike, encoding: str = "utf-8") -> IO[str]:
    """Open ``path`` (after :func:`resolve`) for reading text, decompressing by suffix. Raises
    ``OSError`` as ``open`` does."""
    p = resolve(path)
    opener = _OPENERS.get(p.suffix)
    if opener is None:
        return open(p, newline="", encoding=encoding)
    return opener(p, "rt", newline="", encoding=encoding)  # type: ignore[operator]


__all__ = ["SUFFIXES", "open_text", "resolve"]
