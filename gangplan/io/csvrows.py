"""Trace CSVs read row by row, every error naming file, line, row and column (the Alibaba node
importer and ``gangplan replay`` read their traces through :func:`csv_rows`)."""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator

from gangplan.io.compressed import open_text
from gangplan.io.errors import SnapshotError


def csv_rows(
    path: str | os.PathLike, columns: tuple[str, ...]
) -> Iterator[tuple[int, int, dict[str, str]]]:
    """(row number, line, row) for every data row of ``path`` (plain or compressed,
    :mod:`gangplan.io.compressed`); the header, its names stripped of spaces, must hold
    ``columns``, and every row must have as many fields as the header."""
    name = str(path)
    try:
        f = open_text(path)
    except OSError as e:
        raise SnapshotError(name, f"cannot read: {e.strerror or e}") from None
    with f:
        reader = csv.DictReader(f)
        try:
            header = [h.strip() for h in (reader.fieldnames or [])]
        except (csv.Error, UnicodeDecodeError) as e:
            raise SnapshotError(name, f"invalid CSV header: {e}", line=1) from None
        reader.fieldnames = header
        missing = [c for c in columns if c not in header]
        if missing:
            raise SnapshotError(
                name,
                f"missing column {missing[0]!r} (header is {','.join(header) or 'empty'})",
                line=1,
                field=missing[0],
            )
        row_no = 0
        try:
            for row in reader:
                row_no += 1
                if None in row or any(row.get(c) is None for c in columns):
                    raise SnapshotError(
                        name,
                        f"expected {len(header)} fields",
                        obj=f"row {row_no}",
                        line=reader.line_num,
                    )
                yield row_no, reader.line_num, row
        except (csv.Error, UnicodeDecodeError) as e:
            raise SnapshotError(
                name, f"invalid CSV: {e}", obj=f"row {row_no + 1}", line=reader.line_num
            ) from None


__all__ = ["csv_rows"]
