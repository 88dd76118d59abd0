"""The fill-mode packing bound (issue 22, item 4; :mod:`gangplan.replay.bound`, column generation
over per-node patterns) against the policies, on the FGD paper's workload.

``openb_node_list_gpu_node.csv`` (1,213 nodes, 6,212 GPUs) and ``openb_pod_list_default.csv``;
per seed the fill order (:func:`gangplan.replay.fill.fill_order`), one fill per policy
(unallocated GPU % at each arrived %, :func:`gangplan.replay.fill.discrete`), and the bound of
the jobs arrived up to each percent (:func:`gangplan.replay.bound.arrived_prefix`). The bound is
a lower bound on every policy's number at that percent; ``integer`` is the unallocated % of the
best integer packing of the generated patterns (an achievable placement of that multiset,
offline), so the optimum lies between ``bound`` and ``integer``. One pattern pool is shared by
every call (patterns fit a node whatever arrived), so later calls start warm: wall times depend
on the order (percent 100 for every seed first, then the others).

Run: ``python benchmarks/packing_bound.py [--seeds 42..51] [--percents 100,50,80,110,130]
[--policy fgd,bestfit,default] [--work-limit 200] [--pool FILE]``. Writes ``benchmarks/results/packing_bound.csv``
(one row per seed and percent, rewritten after every row, with wall times and the load average)
and prints the mean and sd over seeds per percent. ``GANGPLAN_DATA_DIR`` as the other benchmarks.
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import time
from pathlib import Path

from results_csv import print_rows, write_csv  # benchmarks/results_csv.py

from gangplan.replay.bound import arrived_prefix, packing_bound
from gangplan.replay.fill import capacity_milli, fill_order, run_fill
from gangplan.replay.policies import typical_pods
from gangplan.replay.run import parse_policies, parse_seeds, trace_shapes
from gangplan.replay.traces import read_nodes, read_trace

ROOT = Path(__file__).resolve().parent.parent
DATA = (
    Path(os.environ.get("GANGPLAN_DATA_DIR") or ROOT / "tests" / "data" / "traces")
    / "alibaba-gpu-v2023"
)


def mean_sd(v: list[float]) -> tuple[float, float]:
    m = sum(v) / len(v)
    return m, (math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="42..51")
    ap.add_argument("--percents", default="100,50,80,110,130")
    ap.add_argument("--policy", default="fgd,bestfit,default")
    ap.add_argument(
        "--work-limit",
        type=float,
        default=200.0,
        help="CP-SAT deterministic seconds per bound (then a bound with its gap)",
    )
    ap.add_argument("--out", default="packing_bound")
    ap.add_argument(
        "--pool",
        default="",
        help="a pickle of the pattern pool: read at start if it exists, written after every bound",
    )
    a = ap.parse_args()
    seeds, policies = parse_seeds(a.seeds), parse_policies(a.policy)
    percents = [int(x) for x in a.percents.split(",")]
    base = read_nodes(DATA / "openb_node_list_gpu_node.csv")
    trace = read_trace(DATA / "openb_pod_list_default.csv")
    typ = typical_pods(trace_shapes(trace.jobs))
    cap = capacity_milli(base)
    curves: dict[tuple[str, int], dict[str, float]] = {}
    fill_wall: dict[tuple[str, int], float] = {}
    pool: dict = {}
    if a.pool and Path(a.pool).exists():
        pool = pickle.loads(Path(a.pool).read_bytes())
    rows = []
    out = ROOT / "benchmarks" / "results" / f"{a.out}.csv"
    for k in percents:
        for seed in seeds:
            for policy in policies:
                if (policy, seed) not in curves:
                    t = time.perf_counter()
                    curves[policy, seed] = run_fill(
                        base, trace.jobs, policy, seed, typical=typ
                    ).unallocated_percent
                    fill_wall[policy, seed] = round(time.perf_counter() - t, 2)
            order, _ = fill_order(base, trace.jobs, seed)
            load = os.getloadavg()[0]
            t = time.perf_counter()
            b = packing_bound(
                base,
                arrived_prefix(order, cap, k),
                method="patterns",
                work_limit=a.work_limit,
                integer=True,
                pool=pool,
            )
            wall = time.perf_counter() - t
            row = {
                "seed": seed,
                "arrived_percent": k,
                "arrived_in_prefix": round(100 * b.arrived_milli / cap, 2),
                "bound": b.unallocated_percent,
                "status": b.status,
                "gap": b.gap_percent,
                "integer": b.integer_unallocated_percent,
                **{p: curves[p, seed][str(k)] for p in policies},
                "iterations": b.iterations,
                "columns": b.columns,
                "bound_wall_s": round(wall, 2),
                "fill_wall_s": ";".join(f"{p}={fill_wall[p, seed]}" for p in policies),
                "load": round(load, 2),
            }
            rows.append(row)
            write_csv(out, rows)
            if a.pool:
                Path(a.pool).write_bytes(pickle.dumps(pool))
            print(
                f"arrived {k:3d} % seed {seed}: bound {b.unallocated_percent:6.2f} ({b.status}, gap {b.gap_percent}) integer "
                f"{b.integer_unallocated_percent} | "
                + " ".join(f"{p} {curves[p, seed][str(k)]:.2f}" for p in policies)
                + f" | {wall:.1f} s, {b.iterations} rounds, load {load:.1f}",
                flush=True,
            )
    summary = []
    for k in percents:
        rs = [r for r in rows if r["arrived_percent"] == k]
        line = {"arrived_percent": k, "seeds": len(rs)}
        for name in ("bound", "integer", *policies):
            m, sd = mean_sd([float(r[name]) for r in rs])
            line[f"{name}_mean"], line[f"{name}_sd"] = round(m, 2), round(sd, 2)
        line["all_optimal"] = all(r["status"] == "optimal" for r in rs)
        summary.append(line)
    print()
    print_rows(summary, list(summary[0]))
    write_csv(ROOT / "benchmarks" / "results" / f"{a.out}_summary.csv", summary)
    print(f"wrote benchmarks/results/{a.out}.csv, {a.out}_summary.csv")


if __name__ == "__main__":
    main()
