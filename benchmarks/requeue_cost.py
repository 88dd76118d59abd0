"""What the scheduling queue's retries cost the greedy engine (issue 21, cause 3).

Each row runs the greedy cycle (``run_cycle``: the cycles, not the Result assembly) on one snapshot
twice in the same process: one pass over the queue (``requeue=False``, gangplan before the queue)
and with the scheduling queue (retries after events, the 5-minute flush; the default). It prints
the time of both, their ratio, the retries and how many changed an outcome (entities admitted by
the queue that one pass rejected), and writes ``benchmarks/results/requeue_cost.csv``.

Shapes: the ``generate`` families (GB200 NVL72, DGX H100 SuperPOD, scheduler_perf TAS) loaded
enough that gangs fail, so the flush retries them, and the showcase's Alibaba snapshot.

Run: ``python benchmarks/requeue_cost.py [--repeat 3]`` (best of ``--repeat`` per mode).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from results_csv import write_csv  # benchmarks/results_csv.py

from gangplan.bench.generators.builders import to_cluster
from gangplan.bench.generators.topology_shapes import generate_shape
from gangplan.io.loader import load_snapshot
from gangplan.solver.greedy import run_cycle

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "requeue_cost.csv"

CASES = [
    (
        "gb200-nvl72 144n u0.6 g16",
        lambda: to_cluster(
            generate_shape("gb200-nvl72", nodes=144, utilisation=0.6, seed=0, gangs=16)
        ),
    ),
    (
        "gb200-nvl72 576n u0.7 g64",
        lambda: to_cluster(
            generate_shape("gb200-nvl72", nodes=576, utilisation=0.7, seed=0, gangs=64)
        ),
    ),
    (
        "dgx-h100-superpod 128n u0.4 g32",
        lambda: to_cluster(
            generate_shape("dgx-h100-superpod", nodes=128, utilisation=0.4, seed=0, gangs=32)
        ),
    ),
    (
        "dgx-h100-superpod 512n u0.8 g64",
        lambda: to_cluster(
            generate_shape("dgx-h100-superpod", nodes=512, utilisation=0.8, seed=0, gangs=64)
        ),
    ),
    (
        "scheduler-perf-tas 2000n u0.85 g400",
        lambda: to_cluster(
            generate_shape("scheduler-perf-tas", nodes=2000, utilisation=0.85, seed=0, gangs=400)
        ),
    ),
    (
        "showcase alibaba-1213",
        lambda: load_snapshot(ROOT / "scenarios" / "showcase" / "alibaba-1213"),
    ),
]


def _time(cluster, requeue: bool, repeat: int):
    best, cycle = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        cycle = run_cycle(cluster, top_k=0, requeue=requeue)
        best = min(best, time.perf_counter() - t0)
    return best, cycle.state


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = []
    header = f"{'case':38} {'pass s':>8} {'queue s':>8} {'ratio':>6} {'retries':>8} {'helped':>7} {'load':>5}"
    print(header)
    for name, build in CASES:
        cluster = build()
        load = os.getloadavg()[0]
        one, st1 = _time(cluster, False, args.repeat)
        queued, st2 = _time(cluster, True, args.repeat)
        retries = len(st2.trace.requeues)
        placed1, placed2 = set(st1.placements), set(st2.placements)
        helped = len({r.entity for r in st2.trace.requeues if r.placed})
        row = {
            "case": name,
            "one_pass_s": round(one, 3),
            "queue_s": round(queued, 3),
            "ratio": round(queued / one, 2),
            "retries": retries,
            "retries_placing": helped,
            "pods_placed_one_pass": len(placed1),
            "pods_placed_queue": len(placed2),
            "load": round(load, 2),
        }
        rows.append(row)
        print(
            f"{name:38} {one:8.3f} {queued:8.3f} {queued / one:6.2f} {retries:8d} {helped:7d} {load:5.2f}"
        )
    write_csv(OUT, rows)
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
