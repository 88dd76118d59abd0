"""Topology-aware gang scheduling at the upstream TAS benchmark shape: greedy and exact side by side.

The shape of ``test/integration/scheduler_perf/podgroup/tas`` (``templates/node.yaml`` @e423d6d5,
``schedulingConstraints.topology`` @4966917a): 5,000 default nodes (4 CPU, 32Gi, 110 pods) in
racks of 100 (50 racks, zones of 100), 750 gangs of 4 identical 100m / 100Mi pods, each gang
required to sit in one rack (``topology.kubernetes.io/rack``). Built in memory with
:func:`gangplan.bench.generators.scheduler_perf_gangs`.

The greedy engine runs KEP-5732's placement algorithm: every gang evaluates all 50 racks (200 pod
cycles per gang), scores the feasible ones and keeps the best. The exact engine then solves the
same snapshot with the greedy result as a hint (``solve_exact(..., hint=greedy)``): status, time,
gap to its bound, and the objective tiers of both.

Run: ``python benchmarks/topology_scaling.py [--quick] [--time-limit S]``. Prints a table and
writes ``benchmarks/results/topology_scaling.csv`` (``--quick``: 500 nodes / 75 gangs, written to
``topology_scaling_quick.csv``). Timing covers the engine call (trace and Result included, not
building the Cluster), on this machine's cores (exact: ``--workers``).
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

from gangplan.bench.generators import RACK, scheduler_perf_gangs, to_cluster
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

SHAPES = [("5000Nodes_50Racks_750Gangs_3000Pods", 5000, 750, 4, 100)]
QUICK = [("500Nodes_5Racks_75Gangs_300Pods", 500, 75, 4, 100)]
OUT = Path(__file__).parent / "results" / "topology_scaling.csv"
QUICK_OUT = Path(__file__).parent / "results" / "topology_scaling_quick.csv"
FIELDS = ["shape", "engine", "pods", "groups", "admittedGroups", "placedPods", "seconds", "podsPerSecond", "status", "gap", "objective", "violations"]


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


def measure(name: str, nodes: int, gangs: int, per: int, per_rack: int, *, time_limit: float, workers: int) -> list[dict]:
    cluster = to_cluster(scheduler_perf_gangs(nodes=nodes, gangs=gangs, pods_per_gang=per, nodes_per_rack=per_rack, topology_key=RACK))
    start = time.perf_counter()
    greedy = solve_greedy(cluster, top_k=0)
    greedy_s = time.perf_counter() - start
    start = time.perf_counter()
    exact = solve_exact(cluster, time_limit=time_limit, workers=workers, hint=greedy)
    exact_s = time.perf_counter() - start
    return [_row(name, "greedy", cluster, greedy, greedy_s), _row(name, "exact", cluster, exact, exact_s)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="500 nodes, 75 gangs (smoke test)")
    ap.add_argument("--time-limit", type=float, default=120.0, help="exact engine: seconds per solve phase")
    ap.add_argument("--workers", type=int, default=2, help="exact engine: CP-SAT workers")
    args = ap.parse_args()
    shapes, out = (QUICK, QUICK_OUT) if args.quick else (SHAPES, OUT)
    rows: list[dict] = []
    for shape in shapes:
        rows.extend(measure(*shape, time_limit=args.time_limit, workers=args.workers))
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    cols = ["shape", "engine", "pods", "admittedGroups", "seconds", "podsPerSecond", "status", "gap", "violations"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r[c]) for c in cols))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
