"""Fill-mode replay (issue 22) on the FGD paper's cluster: speed and the Fig. 9(a) numbers.

``openb_node_list_gpu_node.csv`` (1,213 nodes, 6,212 GPUs) and ``openb_pod_list_default.csv``
(8,152 pods, topped up with clones to 1.3 x the GPUs), one fill per policy and seed, on one core.
Prints per run the wall time and the unallocated GPU % at 100 % arrived, then per policy the mean
and standard deviation over the seeds beside the paper's means (Fig. 9(a), the simulator's
``experiments/analysis/expected_results/analysis_allo_discrete.csv``, seeds 42..51).

The paper shares GPUs by milli; this slice gives a GPU-sharing pod a whole GPU (see the
summary's caveats), so the numbers are **not** expected to match: the comparison is reported as
it comes out.

Run: ``python benchmarks/replay_speed.py [--seeds 42..51] [--policy default,mostallocated,bestfit,fgd,random,packing] [--csv NAME]``
(``--quick``: seed 42, the default profile). Writes ``benchmarks/results/replay_speed.csv``
(``replay_speed_quick.csv`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

from results_csv import write_csv  # benchmarks/results_csv.py

from gangplan.replay.fill import run_fill
from gangplan.replay.policies import typical_pods
from gangplan.replay.run import parse_policies, parse_seeds
from gangplan.replay.traces import read_nodes, read_trace

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("GANGPLAN_DATA_DIR") or ROOT / "tests" / "data" / "traces") / "alibaba-gpu-v2023"
PAPER = {"random": (13.70, 0.33), "dotprod": (9.38, 0.19), "clustering": (8.35, 0.61), "packing": (8.22, 0.53), "bestfit": (7.14, 0.14), "fgd": (4.77, 0.11)}
"""Fig. 9(a): unallocated GPU % at 100 % arrived, mean (sample sd) over seeds 42..51."""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="42..51")
    ap.add_argument("--policy", default="default,mostallocated,bestfit,fgd,random,packing,dotprod,clustering")
    ap.add_argument("--csv", default=None, help="file name under benchmarks/results/ (default replay_speed.csv)")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    seeds = [42] if a.quick else parse_seeds(a.seeds)
    policies = ["default"] if a.quick else parse_policies(a.policy)
    base = read_nodes(DATA / "openb_node_list_gpu_node.csv")
    trace = read_trace(DATA / "openb_pod_list_default.csv")
    typ = typical_pods([(j.cpu_milli, j.gpu, j.gpu_milli if j.gpu else 0, j.gpu_models) for j in trace.jobs])
    rows = []
    print(f"{'policy':<14} {'seed':>4} {'jobs':>6} {'placed':>6} {'wall s':>7} {'unalloc@100':>11} {'load':>5}")
    for policy in policies:
        for seed in seeds:
            load = os.getloadavg()[0]
            t = time.perf_counter()
            run = run_fill(base, trace.jobs, policy, seed, typical=typ)
            wall = time.perf_counter() - t
            u = run.unallocated_percent["100"]
            rows.append({"policy": policy, "seed": seed, "nodes": len(base.nodes), "gpus": run.capacity_gpus, "jobs": len(run.jobs), "placed": sum(run.placed), "wall_s": round(wall, 2), "unallocated_at_100": u, "load": round(load, 2)})
            print(f"{policy:<14} {seed:>4} {len(run.jobs):>6} {sum(run.placed):>6} {wall:>7.1f} {u:>11.2f} {load:>5.1f}", flush=True)
    print()
    print(f"{'policy':<14} {'mean':>6} {'sd':>5} {'paper mean':>10} {'paper sd':>8}")
    for policy in policies:
        v = [r["unallocated_at_100"] for r in rows if r["policy"] == policy]
        m = sum(v) / len(v)
        sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
        pm, psd = PAPER.get(policy, (None, None))
        print(f"{policy:<14} {m:>6.2f} {sd:>5.2f} {pm if pm is not None else '-':>10} {psd if psd is not None else '-':>8}")
    out = ROOT / "benchmarks" / "results" / (a.csv or ("replay_speed_quick.csv" if a.quick else "replay_speed.csv"))
    write_csv(out, rows)
    print(f"\nwrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
