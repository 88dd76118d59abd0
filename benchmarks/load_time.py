"""How long loading a snapshot takes (the time tests used to assert, measured here instead).

Loads each snapshot ``--repeat`` times in this process and prints the best and median wall time,
the node and pending-pod counts and the time per 1,000 objects; writes
``benchmarks/results/load_time.csv``. The Alibaba showcase (1,213 real nodes, the trace's running
pods and three gangs) is the reference: loading it was once a timed test ("under five seconds"),
which failed on a loaded machine. The ratio column is each snapshot's best time against the
showcase's best time in the same run.

Run: ``python benchmarks/load_time.py [--repeat 3] [SNAPSHOT ...]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from results_csv import print_rows, write_csv  # benchmarks/results_csv.py

from gangplan.io.loader import load_snapshot

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).parent / "results" / "load_time.csv"
REFERENCE = ROOT / "scenarios" / "showcase" / "alibaba-1213"
FIELDS = ["snapshot", "nodes", "pods", "pending", "bestSeconds", "medianSeconds", "secondsPer1000Objects", "ratioToShowcase"]


def measure(path: Path, repeat: int) -> dict:
    times = []
    cluster = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        cluster = load_snapshot(path)
        times.append(time.perf_counter() - t0)
    assert cluster is not None
    objects = len(cluster.nodes) + len(cluster.pods) + len(cluster.pod_groups)
    return {"snapshot": str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path), "nodes": len(cluster.nodes), "pods": len(cluster.pods),
            "pending": len(cluster.pending_pods), "bestSeconds": round(min(times), 3), "medianSeconds": round(statistics.median(times), 3),
            "secondsPer1000Objects": round(min(times) * 1000 / max(1, objects), 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("snapshots", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    paths = [REFERENCE] + [p.resolve() for p in args.snapshots if p.resolve() != REFERENCE]
    rows = [measure(p, args.repeat) for p in paths]
    ref = rows[0]["bestSeconds"] or 1e-9
    for r in rows:
        r["ratioToShowcase"] = round(r["bestSeconds"] / ref, 2)
    print_rows(rows, FIELDS)
    write_csv(OUT, rows, FIELDS)


if __name__ == "__main__":
    main()
