"""The exact engine with preemption on, on the exact-scaling shapes with preemptible load.

Shapes: :func:`gangplan.bench.generators.gpu_clusters.gpu_benchmark` (the exact_scaling.py grid: GPU nodes in
racks of 16, the "busy" usage profile, gangs of 1..32 pods with GPU selectors, rack-confined gangs,
three priorities), and then the bound pods of 30 % of the nodes (a seeded choice) moved to a
PriorityClass below every pending gang (``preemptible``, value 0), so the pending gangs may evict
them. Per cell, greedy and exact run with preemption on (the default profile) and off, and the
table shows time, status, gap of the decision tiers, admitted entities and victims; the ratio
column is exact-on time over exact-off time, measured in the same run.

Run: ``python benchmarks/preemption_scaling.py [--seed 0] [--time-limit 10] [--cells 100x64,1000x512]
[--greedy-only]``. Writes ``benchmarks/results/preemption_scaling.csv`` (``--greedy-only``: greedy
on / off only, with pods/s, to ``preemption_scaling_greedy.csv``).

Where the greedy time with preemption on went (cProfile, seed 0; wall times of one plain run at
load 1.8-1.9, before and after in the same session):

* Before (1,000 x 2,048: 3.3 s on / 0.4 s off; 5,000 x 2,048: 22.8 s on / 1.3 s off): ~90 % in
  the reprieve loop of workload-aware preemption (``Preemption._reprieve``). Per successful WAP
  every lower-priority unit of the cluster (~150 at 1,000 nodes, ~1,900 at 5,000) is restored and
  *all* proposed assignments (up to 32 pods) re-run PreFilter + Filter: at 5,000 x 2,048, 37
  successful WAPs made 52,794 ``_assignments_fit`` calls and 461,644 single-node Filter runs
  (``run_filters`` 30 s of 52 s profiled), the rest was the group algorithm on the emptied
  snapshot (~0.8 s), removing / restoring the units (~1.6 s profiled) and the importance sort.
* After (1,000 x 2,048: 0.8 s on / 0.4 s off; 5,000 x 2,048: 3.05 s on / 1.45 s off): the
  reprieve re-runs Filter only for the assignments on the restored unit's nodes when every filter
  is node-local or inert for the gang (``Preemption._local_reprieve`` proves it outcome-neutral;
  otherwise every assignment is checked as before), and a unit with no assignment on its nodes
  goes back without a check, batched; the candidate units leave and come back through
  ``NodeTable.forget_all`` / ``assume_all``; importance keys are computed once per unit. What is
  left of the on/off gap at 5,000 x 2,048 (profiled 4.8 s, of which WAP 2.7 s): the group
  algorithm on the emptied snapshot per failed gang (0.65 s: it is upstream's algorithm and its
  reason strings go to the trace, so it is never skipped), the reprieve's restores (0.8 s) and
  the removal of ~1,900 units per WAP (0.7 s). Every Result is byte-identical (greedy goldens,
  including the ``draw__preemptible_*`` draws recorded before this work).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from results_csv import write_csv  # benchmarks/results_csv.py

from gangplan.bench.generators.builders import PREEMPTIBLE_CLASS, preemptible_load, to_cluster
from gangplan.bench.generators.gpu_clusters import gpu_benchmark
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

RESULTS = Path(__file__).resolve().parent / "results" / "preemption_scaling.csv"
PREEMPTIBLE = PREEMPTIBLE_CLASS


def preemptible_shape(nodes: int, pending: int, *, seed: int, share: float = 0.3) -> list[dict]:
    return preemptible_load(gpu_benchmark(nodes, pending, profile="busy", seed=seed), seed, share)


def run_cell(
    nodes: int, pending: int, *, seed: int, time_limit: float, greedy_only: bool = False
) -> dict:
    cluster = to_cluster(preemptible_shape(nodes, pending, seed=seed))
    row: dict = {"nodes": nodes, "pending": pending, "load": round(os.getloadavg()[0], 2)}
    for mode, flag in (("on", True), ("off", False)):
        t0 = time.perf_counter()
        g = solve_greedy(cluster, preemption=flag)
        t1 = time.perf_counter()
        assert validate(cluster, g) == [], mode
        adm = lambda r: int(sum(v for k, v in r.objective.items() if k.startswith("admitted")))  # noqa: E731
        placed = sum(1 for o in g.pods.values() if o.node is not None)
        row.update(
            {
                f"greedy_{mode}_s": round(t1 - t0, 2),
                f"greedy_{mode}_pods_per_s": round(pending / max(t1 - t0, 1e-3)),
                f"greedy_{mode}_placed": placed,
                f"greedy_{mode}_admitted": adm(g),
                f"greedy_{mode}_victims": len(g.victims),
            }
        )
        if greedy_only:
            continue
        t1 = time.perf_counter()
        e = solve_exact(cluster, hint=g, time_limit=time_limit, preemption=flag)
        t2 = time.perf_counter()
        assert validate(cluster, e) == [], mode
        row.update(
            {
                f"exact_{mode}_s": round(t2 - t1, 2),
                f"exact_{mode}_status": e.status.value,
                f"exact_{mode}_gap": e.gap,
                f"exact_{mode}_admitted": adm(e),
                f"exact_{mode}_victims": len(e.victims),
            }
        )
    if not greedy_only:
        row["exact_on_over_off"] = round(row["exact_on_s"] / max(row["exact_off_s"], 1e-3), 2)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--cells", default="100x64,100x512,1000x512,1000x2048,5000x2048")
    ap.add_argument(
        "--greedy-only",
        action="store_true",
        help="time the greedy engine only (no CP-SAT); writes preemption_scaling_greedy.csv",
    )
    args = ap.parse_args()
    rows = []
    for cell in args.cells.split(","):
        n, p = (int(x) for x in cell.split("x"))
        row = run_cell(
            n, p, seed=args.seed, time_limit=args.time_limit, greedy_only=args.greedy_only
        )
        rows.append(row)
        print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    out = RESULTS.with_name("preemption_scaling_greedy.csv") if args.greedy_only else RESULTS
    write_csv(out, rows)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
