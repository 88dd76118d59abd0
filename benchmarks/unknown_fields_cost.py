"""What the unknown-field check (gangplan.io.schema) adds to loading a snapshot.

Loads each snapshot ``--repeat`` times with the check on and ``--repeat`` times with it off
(the internal switch ``gangplan.io.schema.ENABLED``), interleaved so that machine load hits both
alike, and prints the best and median wall time of each and their ratio (best on / best off);
also the time of the check alone (walking every object of the snapshot once, the table already
loaded), the objects checked, and ``checkAloneRatio`` = (best off + check alone) / best off: on a
shared machine the on/off ratio moves by several per cent from run to run, the check alone does not. Writes ``benchmarks/results/unknown_fields_cost.csv``. The
reference is the Alibaba showcase (1,213 real nodes, the trace's running pods, three gangs);
issue 25's target is a ratio of at most 1.10.

Run: ``python benchmarks/unknown_fields_cost.py [--repeat 5] [SNAPSHOT ...]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from results_csv import print_rows, write_csv  # benchmarks/results_csv.py

from gangplan.io import schema
from gangplan.io.loader import _objects, load_snapshot, read_documents, snapshot_files

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).parent / "results" / "unknown_fields_cost.csv"
REFERENCE = ROOT / "scenarios" / "showcase" / "alibaba-1213"
FIELDS = [
    "snapshot",
    "objects",
    "bestOffSeconds",
    "bestOnSeconds",
    "medianOffSeconds",
    "medianOnSeconds",
    "checkAloneSeconds",
    "ratio",
    "checkAloneRatio",
]


def _load(path: Path, enabled: bool) -> float:
    schema.ENABLED = enabled
    try:
        t0 = time.perf_counter()
        load_snapshot(path)
        return time.perf_counter() - t0
    finally:
        schema.ENABLED = True


def _check_alone(path: Path, repeat: int) -> tuple[int, float]:
    objs = [
        raw
        for f in snapshot_files(path)
        for i, d in enumerate(read_documents(f))
        for raw in _objects(str(f), d, i)
    ]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for raw in objs:
            schema.unknown_fields(raw)
            schema.unknown_kind(raw.get("kind"), raw.get("apiVersion"))
        best = min(best, time.perf_counter() - t0)
    return len(objs), best


def measure(path: Path, repeat: int) -> dict:
    schema.schema()  # the table is loaded once per process, as in a CLI run: not part of either time
    _load(path, True)  # warm-up (imports, file cache)
    off, on = [], []
    for _ in range(repeat):
        off.append(_load(path, False))
        on.append(_load(path, True))
    n, alone = _check_alone(path, repeat)
    return {
        "snapshot": str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path),
        "objects": n,
        "bestOffSeconds": round(min(off), 3),
        "bestOnSeconds": round(min(on), 3),
        "medianOffSeconds": round(statistics.median(off), 3),
        "medianOnSeconds": round(statistics.median(on), 3),
        "checkAloneSeconds": round(alone, 4),
        "ratio": round(min(on) / min(off), 3),
        "checkAloneRatio": round((min(off) + alone) / min(off), 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("snapshots", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    paths = [REFERENCE] + [p.resolve() for p in args.snapshots if p.resolve() != REFERENCE]
    rows = [measure(p, args.repeat) for p in paths]
    print_rows(rows, FIELDS)
    write_csv(OUT, rows, FIELDS)


if __name__ == "__main__":
    main()
