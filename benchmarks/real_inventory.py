"""A real inventory at full size: the Alibaba spot-GPU v2026 nodes with Philly-sized jobs, greedy,
exact and the whole diff.

Instance (built in memory from ``../shared/data`` or ``$GANGPLAN_DATA_DIR``, with the bench
family helpers of :mod:`gangplan.bench.generators.families`, so nodes, load and gangs are the ones the
``alibaba`` and ``philly`` families make):

* **Nodes**: all 4,278 rows of ``alibaba-spot-gpu-v2026/node_info_df.csv`` (``_inventory("spot")``:
  vCPUs as cpu, 8 GiB memory per vCPU, the GPU count as ``nvidia.com/gpu``, the model as the
  ``nvidia.com/gpu.product`` label). Listed by model and GPU count (the groups in order of first
  appearance, file order inside a group), so that racks of 8 consecutive nodes
  (``topology.kubernetes.io/rack``) hold identical servers except where one group ends; zones
  (``topology.kubernetes.io/zone``) are 8 racks. That gives 535 racks in 67 zones.
* **Existing load**: ``_nodes_with_usage``: each node runs one bound pod using Binomial(GPUs, U)
  of its GPUs (U = 0.6 or 0.8) and half that share of its CPU and memory, at a priority above
  every pending job (so the bench measures placement, not preemption).
* **Pending jobs**: a window of consecutive Philly jobs (``philly-pollux/philly.csv`` in submit
  order, seeded start), each split into workers of at most 8 GPUs (``_split_gpus``: 16 GPUs = 2 x
  8, 12 = 2 x 6) with 12 cpu and 96Gi per GPU. A job of one worker is a basic PodGroup; a job of
  several workers is an all-or-nothing gang, confined to one rack when it has at most 8 workers
  (``schedulingConstraints.topology`` on the rack label), unconstrained above (the 128-GPU jobs).
  Jobs arrive one second apart, so queue order is submit order.

Per cell (jobs x load, each in a fresh process so ``ru_maxrss`` is that cell's peak): the greedy
engine (``solve_greedy``), the exact engine with the greedy result as hint (``solve_exact``,
``--time-limit`` per phase), and the whole ``gangplan diff`` (``diff_snapshot``: both engines
again, the feasibility check, the classification and, for a suboptimal greedy, the decisive-step
search); printed with the exact / greedy time ratio of the same run and written to
``benchmarks/results/real_inventory.csv``.

Where the time goes, 1,000 jobs at 80 % load (load average 0.6-0.9):

* before (main @5fc57ab): greedy 6.3 s, of it (cProfile) 52 % the FitError of the 3,283 failed pod
  cycles (one status per node, 338,000 ``filter_one`` calls) and 36 % regrouping the 4,278 bound
  pods into victim units for each of the 79 workload-aware preemption attempts; the whole diff
  23.1 s: the exact engine 2.4 s, 11 decisive-step probes 13.9 s, three greedy runs (the diff's
  and two replays for the decisive step's evidence) most of the rest.
* after (issue 15): greedy 0.7-0.8 s (FitErrors counted per plugin and reason, victim units
  computed once per run, the rack gangs' placements counted), identical Result; the whole diff
  13.0 s, of it 11.8 s in the exact engine: the optimum 1.2 s and 11 probes of 0.4-1.2 s each
  (model build 0.2-0.3 s, start 0.1-0.25 s, solve 0.03-0.65 s). The decisive-step search
  (``gangplan.solver.diff.find_decisive_step``, one exact solve per probe) is what stands
  between this cell and a 10 s diff; where greedy is optimal the diff takes 0.8-5.5 s.

* issue 27 (main @70cf912; the same cell, now with 1,579 pending pods, decisive step #1 after
  one probe): the whole diff 24-27 s -> 7.7-8.5 s wall at load 3.7-4.0 (16.8 -> 4.7 s CPU), the
  same classification and decisive step. The evidence replay evaluated the rack gang's pod on
  every node before each of its 535 per-rack cycles (22 s); it now evaluates only its cycles in a
  placement holding the node the kept cycle chose. A probe the optimum does not already answer
  first runs a feasibility solve with the optimum's admission tiers held; INFEASIBLE is the
  probe's no without its optimisation and tie-break. Other cells, same run, before -> after
  (load 3.6-5): 2,000 jobs at 80 % 42.4 -> 23.1 s (23.1 -> 9.8 s CPU), 1,000 at 60 % 29.8 ->
  18.4 s (21.3 -> 10.8 s CPU), 200 at 80 % 29.1 -> 3.7 s (13.7 -> 1.5 s CPU); each a decisive
  step #1, unchanged.

Run: ``python benchmarks/real_inventory.py [--jobs 200 1000 2000] [--load 0.6 0.8] [--seed 0]
[--time-limit 10] [--greedy-only]`` (``--greedy-only``: the greedy columns alone).
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import time
from pathlib import Path

import isolate  # benchmarks/isolate.py
from results_csv import write_csv  # benchmarks/results_csv.py

from gangplan.bench.generators.builders import seeded_rng, to_cluster
from gangplan.bench.generators.families import (
    _STREAM_PHILLY,
    _inventory,
    _nodes_with_usage,
    _read_csv,
    data_dir_path,
    philly_jobs,
)

OUT = Path(__file__).resolve().parent / "results" / "real_inventory.csv"
NODES_PER_RACK, RACKS_PER_ZONE, GPUS_PER_WORKER, MAX_RACK_GANG = 8, 8, 8, 8


def inventory_snapshot(
    jobs: int, utilisation: float, seed: int = 0, data_dir: str | None = None
) -> list[dict]:
    """The objects of one instance (see the module docstring)."""
    shapes = _inventory("spot", data_dir)
    groups: dict[tuple[str, int], list] = {}
    for s in shapes:
        groups.setdefault((s.model, s.gpus), []).append(s)
    ordered = [s for g in groups.values() for s in g]
    out = _nodes_with_usage(ordered, utilisation, seed, NODES_PER_RACK, RACKS_PER_ZONE)
    trace = _read_csv(str(data_dir_path(data_dir, "philly-pollux", "philly.csv")))
    rows = trace[trace["num_gpus"] >= 1].sort_values(["timestamp"], kind="stable")
    rng = seeded_rng(seed, _STREAM_PHILLY)
    start = int(rng.integers(0, len(rows) - jobs + 1))
    return out + philly_jobs(
        [int(x) for x in rows.iloc[start : start + jobs]["num_gpus"]],
        GPUS_PER_WORKER,
        MAX_RACK_GANG,
    )


def run_cell(
    jobs: int, load: float, seed: int, time_limit: float, workers: int, greedy_only: bool = False
) -> dict:
    from gangplan.solver.diff import diff_snapshot
    from gangplan.solver.exact import solve_exact
    from gangplan.solver.greedy import solve_greedy
    from gangplan.solver.validate import validate

    load_avg = round(os.getloadavg()[0], 2)
    t0 = time.perf_counter()
    cluster = to_cluster(inventory_snapshot(jobs, load, seed))
    build_s = time.perf_counter() - t0
    gc.collect()  # the instance build's garbage is not the engine's (a full collection walks the heap)
    t0 = time.perf_counter()
    greedy = solve_greedy(cluster)
    greedy_s = time.perf_counter() - t0
    pods = len(cluster.pending_pods)
    if greedy_only:
        return {
            "nodes": len(cluster.nodes),
            "jobs": jobs,
            "load": load,
            "seed": seed,
            "pods": pods,
            "gangs": sum(1 for g in cluster.pod_groups.values() if g.min_count > 1),
            "rackGangs": sum(1 for g in cluster.pod_groups.values() if g.topology_key),
            "build_s": round(build_s, 2),
            "greedy_s": round(greedy_s, 3),
            "greedy_pods_per_s": round(pods / greedy_s, 1),
            "valid": not validate(cluster, greedy),
            "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "load_avg": load_avg,
        }
    t0 = time.perf_counter()
    exact = solve_exact(cluster, time_limit=time_limit, workers=workers, seed=seed, hint=greedy)
    exact_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    d = diff_snapshot(cluster, time_limit=time_limit, workers=workers, seed=seed)
    diff_s = time.perf_counter() - t0
    first = next(iter(exact.objective))
    return {
        "nodes": len(cluster.nodes),
        "jobs": jobs,
        "load": load,
        "seed": seed,
        "pods": pods,
        "gangs": sum(1 for g in cluster.pod_groups.values() if g.min_count > 1),
        "rackGangs": sum(1 for g in cluster.pod_groups.values() if g.topology_key),
        "build_s": round(build_s, 2),
        "greedy_s": round(greedy_s, 3),
        "greedy_pods_per_s": round(pods / greedy_s, 1),
        "greedy_admitted": greedy.objective.get(first, 0),
        "exact_admitted": exact.objective.get(first, 0),
        "exact_s": round(exact_s, 3),
        "exact_status": exact.status.value,
        "gap": exact.gap,
        "exact_over_greedy": round(exact_s / greedy_s, 2),
        "phases": " ".join(
            f"{p.tier}:{p.status[0]}{p.seconds:.1f}s" for p in exact.exact_trace.phases or []
        ),
        "diff_s": round(diff_s, 3),
        "classification": d.classification,
        "decisive_probes": d.decisive.probes if d.decisive else 0,
        "valid": not validate(cluster, greedy) and not validate(cluster, exact),
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "load_avg": load_avg,
    }


def run_isolated(*args) -> dict:
    """One cell in a fresh process (its own peak memory); a crashed cell becomes an error row."""
    return isolate.run_isolated(
        run_cell,
        args,
        lambda code: {
            "jobs": args[0],
            "load": args[1],
            "exact_status": f"error (exit code {code})",
        },
    )


COLUMNS = [
    "nodes",
    "jobs",
    "load",
    "pods",
    "gangs",
    "rackGangs",
    "greedy_s",
    "greedy_pods_per_s",
    "greedy_admitted",
    "exact_admitted",
    "exact_s",
    "exact_status",
    "gap",
    "exact_over_greedy",
    "diff_s",
    "classification",
    "decisive_probes",
    "peak_mb",
    "valid",
    "load_avg",
    "build_s",
    "seed",
    "phases",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, nargs="*", default=[200, 1000, 2000])
    ap.add_argument("--load", type=float, nargs="*", default=[0.6, 0.8])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--time-limit", type=float, default=10.0, help="exact engine: seconds per solve phase"
    )
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--greedy-only",
        action="store_true",
        help="the greedy engine only (no exact solve, no diff)",
    )
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    rows = []
    shown = COLUMNS[:-3]
    print(" | ".join(shown), flush=True)
    for jobs in args.jobs:
        for load in args.load:
            row = run_isolated(
                jobs, load, args.seed, args.time_limit, args.workers, args.greedy_only
            )
            rows.append(row)
            print(" | ".join(str(row.get(c, "")) for c in shown), flush=True)
    write_csv(args.out, rows, COLUMNS, ignore_extra=True)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
