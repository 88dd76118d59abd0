"""Topology-aware gang scheduling at the upstream TAS benchmark shape: greedy and exact side by side.

The shape of ``test/integration/scheduler_perf/podgroup/tas`` (``templates/node.yaml`` @e423d6d5,
``schedulingConstraints.topology`` @4966917a): 5,000 default nodes (4 CPU, 32Gi, 110 pods) in
racks of 100 (50 racks, zones of 100), 750 gangs of 4 identical 100m / 100Mi pods, each gang
required to sit in one rack (``topology.kubernetes.io/rack``). Built in memory with
:func:`gangplan.bench.generators.scheduler_perf.scheduler_perf_gangs`.

The greedy engine runs KEP-5732's placement algorithm: every gang evaluates all 50 racks, scores
the feasible ones and keeps the best (upstream's ``ScoreAllPlacements`` setting). The same run also
schedules the same gangs without the rack constraint on the same nodes (``greedy-plain``), so the
TAS / plain throughput ratio is measured under the same load. The exact engine then solves the TAS
snapshot with the greedy result as a hint (``solve_exact(..., hint=greedy)``): status, time, gap to
its bound, the objective tiers, and its time over greedy's.

Where the greedy time goes (cProfile, 5,000 nodes x 750 gangs, ``top_k=0``):

* before (main @5fc57ab, 47 s, 63-79 pods/s): 150,000 pod cycles, one per pod per rack per gang
  (750 x 50 x 4); inside them, 45 % scoring (NodeResourcesFit and BalancedAllocation arrays
  refreshed per cycle), 25 % filtering, the rest FitError-free bookkeeping; plus generating the
  50 placements again for every gang (3 %) and PlacementBinPacking per placement (3 %).
* after (issue 15, 1.5 s, ~2,000 pods/s): the 49 racks a gang does not keep are *counted*
  (:mod:`gangplan.solver.greedy.placement_fast`: identical node-local pods, so each rack's outcome
  follows from per-node room), only the kept rack runs its 4 pod cycles (3,000 in all: ~48 % of
  the profile), PlacementBinPacking over all racks at once (13 %), counting 37,500 placements
  (11 %), the per-decision capacity arrays (9 %), Result assembly (5 %). Result JSON
  byte-identical to before.

Run: ``python benchmarks/topology_scaling.py [--quick] [--time-limit S]``. Prints a table and
writes ``benchmarks/results/topology_scaling.csv`` (``--quick``: 500 nodes / 75 gangs, written to
``topology_scaling_quick.csv``). Timing covers the engine call (trace and Result included, not
building the Cluster), on this machine's cores (exact: ``--workers``); the load average at the
start is printed and written with the rows.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from results_csv import write_csv  # benchmarks/results_csv.py

from gangplan.bench.generators.builders import to_cluster
from gangplan.bench.generators.scheduler_perf import scheduler_perf_gangs
from gangplan.models.well_known import RACK
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

SHAPES = [("5000Nodes_50Racks_750Gangs_3000Pods", 5000, 750, 4, 100)]
QUICK = [("500Nodes_5Racks_75Gangs_300Pods", 500, 75, 4, 100)]
OUT = Path(__file__).parent / "results" / "topology_scaling.csv"
QUICK_OUT = Path(__file__).parent / "results" / "topology_scaling_quick.csv"
FIELDS = [
    "shape",
    "engine",
    "pods",
    "groups",
    "admittedGroups",
    "placedPods",
    "seconds",
    "podsPerSecond",
    "ratio",
    "status",
    "gap",
    "objective",
    "violations",
    "load",
]


def _row(name: str, engine: str, cluster, result, seconds: float) -> dict:
    pods = len(cluster.pending_pods)
    placed = sum(1 for o in result.pods.values() if o.node and not o.nominated)
    return {
        "shape": name,
        "engine": engine,
        "pods": pods,
        "groups": len(cluster.pod_groups),
        "admittedGroups": sum(1 for g in result.groups.values() if g.admitted),
        "placedPods": placed,
        "seconds": round(seconds, 3),
        "podsPerSecond": round(pods / seconds, 1) if seconds > 0 else "",
        "status": result.status.value,
        "gap": "" if result.gap is None else round(result.gap, 6),
        "objective": ";".join(f"{k}={v:g}" for k, v in result.objective.items()),
        "violations": len(validate(cluster, result)),
    }


def measure(
    name: str, nodes: int, gangs: int, per: int, per_rack: int, *, time_limit: float, workers: int
) -> list[dict]:
    """Rows greedy (TAS), greedy-plain (same nodes and gangs, no rack constraint) and exact.
    ``ratio``: greedy TAS pods/s over greedy-plain pods/s; exact seconds over greedy seconds."""
    load = round(os.getloadavg()[0], 2)
    plain = to_cluster(
        scheduler_perf_gangs(nodes=nodes, gangs=gangs, pods_per_gang=per, nodes_per_rack=per_rack)
    )
    start = time.perf_counter()
    plain_result = solve_greedy(plain, top_k=0)
    plain_s = time.perf_counter() - start
    cluster = to_cluster(
        scheduler_perf_gangs(
            nodes=nodes, gangs=gangs, pods_per_gang=per, nodes_per_rack=per_rack, topology_key=RACK
        )
    )
    start = time.perf_counter()
    greedy = solve_greedy(cluster, top_k=0)
    greedy_s = time.perf_counter() - start
    start = time.perf_counter()
    exact = solve_exact(cluster, time_limit=time_limit, workers=workers, hint=greedy)
    exact_s = time.perf_counter() - start
    rows = [
        _row(name, "greedy", cluster, greedy, greedy_s),
        _row(name, "greedy-plain", plain, plain_result, plain_s),
        _row(name, "exact", cluster, exact, exact_s),
    ]
    rows[0]["ratio"] = f"{plain_s / greedy_s:.2f}x plain"
    rows[1]["ratio"] = "1.00x plain"
    rows[2]["ratio"] = f"{exact_s / greedy_s:.2f}x greedy time"
    for r in rows:
        r["load"] = load
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="500 nodes, 75 gangs (smoke test)")
    ap.add_argument(
        "--time-limit", type=float, default=120.0, help="exact engine: seconds per solve phase"
    )
    ap.add_argument("--workers", type=int, default=2, help="exact engine: CP-SAT workers")
    args = ap.parse_args()
    shapes, out = (QUICK, QUICK_OUT) if args.quick else (SHAPES, OUT)
    rows: list[dict] = []
    for shape in shapes:
        rows.extend(measure(*shape, time_limit=args.time_limit, workers=args.workers))
    write_csv(out, rows, FIELDS)
    cols = [
        "shape",
        "engine",
        "pods",
        "admittedGroups",
        "seconds",
        "podsPerSecond",
        "ratio",
        "status",
        "gap",
        "violations",
        "load",
    ]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r[c]) for c in cols))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
