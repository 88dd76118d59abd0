"""Parquet copies of ``timeseries.csv``, ``jobs.csv`` and ``epochs.csv`` (issue 22: "Parquet with
the pandas extra"), written by pandas through pyarrow.

pyarrow is an optional extra (``pip install 'gangplan[parquet]'``): pandas is a dependency of
gangplan, but writes Parquet only through pyarrow (or fastparquet), which is not. Each Parquet
file is the CSV read back by pandas: the same rows and columns, numbers typed (int64 where every
value is an integer, float64 else, a blank cell is null), ``policy``, ``job`` and ``status``
strings; so a reader gets one schema whichever file it opens.
"""

from __future__ import annotations

import io
from pathlib import Path

from gangplan.io.errors import SnapshotError

TABLES = ("timeseries", "jobs", "epochs")
STRINGS = {"policy": str, "job": str, "status": str}
INSTALL = "pip install 'gangplan[parquet]'"


def require_pyarrow() -> None:
    """SnapshotError (exit 2) naming the extra when pyarrow is not installed."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise SnapshotError(
            "<arguments>",
            f"Parquet output needs pyarrow, which is not installed: {INSTALL}",
            field="--parquet",
        ) from None


def parquet_bytes(csv_text: str) -> bytes:
    """One CSV table (header first) as Parquet bytes (snappy, no index)."""
    import pandas as pd

    require_pyarrow()
    frame = pd.read_csv(io.StringIO(csv_text), dtype=STRINGS)
    buf = io.BytesIO()
    frame.to_parquet(buf, engine="pyarrow", index=False)
    return buf.getvalue()


def write_parquet(directory: Path, files: dict[str, str]) -> list[Path]:
    """``NAME.parquet`` beside each ``NAME.csv`` of :data:`TABLES` among ``files`` (name -> text)."""
    written = []
    for t in TABLES:
        text = files.get(f"{t}.csv")
        if text is None:
            continue
        p = directory / f"{t}.parquet"
        try:
            p.write_bytes(parquet_bytes(text))
        except OSError as e:
            raise SnapshotError(str(p), f"cannot write: {e.strerror or e}") from None
        written.append(p)
    return written


__all__ = ["INSTALL", "TABLES", "parquet_bytes", "require_pyarrow", "write_parquet"]
