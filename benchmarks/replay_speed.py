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

``--timed``: timed mode on the Philly trace instead (``philly-pollux/philly.csv``, every job of
each VC of 512 GPUs: b436b2, 6214e9, ee9e8c, 64 nodes x 8), one run per VC and policy (default
``default``): wall time, load, jobs, peak allocation, queueing delay (mean, p50, p99, p99.9,
max), JCT mean, GPU-seconds beside the trace's ``gpu_time``; the bar is 5 minutes per VC. With
``--shadow-vc VC`` also the ``shadow`` policy on that VC (``--epoch S``, ``--exact-time-limit``):
epochs, regret and the time the exact solves took. Writes ``benchmarks/results/replay_speed_timed.csv``.
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
from gangplan.replay.run import parse_policies, parse_seeds, trace_shapes
from gangplan.replay.traces import read_nodes, read_trace

ROOT = Path(__file__).resolve().parent.parent
DATA = (
    Path(os.environ.get("GANGPLAN_DATA_DIR") or ROOT / "tests" / "data" / "traces")
    / "alibaba-gpu-v2023"
)
PAPER = {
    "random": (13.70, 0.33),
    "dotprod": (9.38, 0.19),
    "clustering": (8.35, 0.61),
    "packing": (8.22, 0.53),
    "bestfit": (7.14, 0.14),
    "fgd": (4.77, 0.11),
}
"""Fig. 9(a): unallocated GPU % at 100 % arrived, mean (sample sd) over seeds 42..51."""


PHILLY = (
    Path(os.environ.get("GANGPLAN_DATA_DIR") or ROOT / "tests" / "data" / "traces")
    / "philly-pollux"
)
VCS_512 = ("b436b2", "6214e9", "ee9e8c")


def timed(a) -> None:
    import csv

    from gangplan.io.compressed import open_text
    from gangplan.replay.run import replay

    with open_text(PHILLY / "philly.csv") as f:
        gpu_time: dict[str, float] = {}
        for r in csv.DictReader(f):
            gpu_time[r["cluster"]] = gpu_time.get(r["cluster"], 0.0) + float(r["gpu_time"])
    rows = []
    runs = [(vc, p) for vc in a.vcs.split(",") for p in parse_policies(a.policy)]
    if a.shadow_vc:
        runs.append((a.shadow_vc, "shadow"))
    print(
        f"{'vc':<7} {'policy':<8} {'jobs':>5} {'gpus':>4} {'wall s':>7} {'load':>5} {'delayed':>7} {'mean s':>7} {'p50':>5} {'p99':>6} {'p99.9':>7} {'max':>7} {'jct mean':>9} {'gpu-s = gpu_time':>16} {'epochs':>6} {'regret':>6} {'at limit':>8}"
    )
    for vc, policy in runs:
        load = os.getloadavg()[0]
        t = time.perf_counter()
        out = replay(
            PHILLY / "philly.csv",
            None,
            mode="timed",
            vc=vc,
            policies=[policy],
            exact_time_limit=a.exact_time_limit,
            epoch=a.epoch,
        )
        wall = time.perf_counter() - t
        r, tr = out.summary.runs[0], out.timed[0]
        q = r.queueing_delay
        delayed = sum(1 for x in tr.records if x.start is not None and x.start > x.arrival)
        ok = abs(r.allocated_gpu_seconds - gpu_time[vc]) < 1e-6 * gpu_time[vc]
        row = {
            "vc": vc,
            "policy": policy,
            "jobs": r.jobs,
            "gpus": out.summary.capacity_gpus,
            "wall_s": round(wall, 2),
            "load": round(load, 2),
            "delayed_jobs": delayed,
            "delay_mean_s": q.mean,
            "delay_p50_s": q.p50,
            "delay_p99_s": q.p99,
            "delay_p999_s": q.p999,
            "delay_max_s": q.max,
            "jct_mean_s": r.jct.mean,
            "peak_allocated": r.allocated_gpus,
            "idle_gpu_hours": r.idle_gpu_hours,
            "allocated_gpu_seconds": r.allocated_gpu_seconds,
            "trace_gpu_time": gpu_time[vc],
            "unfinished": r.unfinished,
            "epochs": r.epochs,
            "regret_gpus_total": r.regret_gpus_total,
            "regret_jobs_total": r.regret_jobs_total,
            "regret_queue_gpus_total": r.regret_queue_gpus_total,
            "epochs_at_limit": r.epochs_at_limit,
            "gap_max": r.gap_max,
            "exact_wall_s": round(sum(e.wall_s for e in tr.shadow.records), 2)
            if tr.shadow
            else None,
        }
        rows.append(row)
        print(
            f"{vc:<7} {policy:<8} {r.jobs:>5} {out.summary.capacity_gpus:>4} {wall:>7.1f} {load:>5.1f} {delayed:>7} {q.mean:>7.1f} {q.p50:>5.0f} {q.p99:>6.0f} {q.p999:>7.0f} {q.max:>7.0f} {r.jct.mean:>9.0f} {str(ok):>16} "
            f"{r.epochs if r.epochs is not None else '-':>6} {r.regret_gpus_total if r.regret_gpus_total is not None else '-':>6} {r.epochs_at_limit if r.epochs_at_limit is not None else '-':>8}",
            flush=True,
        )
    out_csv = ROOT / "benchmarks" / "results" / (a.csv or "replay_speed_timed.csv")
    write_csv(out_csv, rows)
    print(f"\nwrote {out_csv.relative_to(ROOT) if out_csv.is_relative_to(ROOT) else out_csv}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--timed", action="store_true", help="timed mode on the Philly VCs of 512 GPUs")
    ap.add_argument("--vcs", default=",".join(VCS_512))
    ap.add_argument("--shadow-vc", default=None)
    ap.add_argument("--epoch", type=float, default=None)
    ap.add_argument("--exact-time-limit", type=float, default=2.0)
    ap.add_argument("--seeds", default="42..51")
    ap.add_argument(
        "--policy", default="default,mostallocated,bestfit,fgd,random,packing,dotprod,clustering"
    )
    ap.add_argument(
        "--csv", default=None, help="file name under benchmarks/results/ (default replay_speed.csv)"
    )
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.timed:
        if a.policy == ap.get_default("policy"):
            a.policy = "default"
        return timed(a)
    seeds = [42] if a.quick else parse_seeds(a.seeds)
    policies = ["default"] if a.quick else parse_policies(a.policy)
    base = read_nodes(DATA / "openb_node_list_gpu_node.csv")
    trace = read_trace(DATA / "openb_pod_list_default.csv")
    typ = typical_pods(trace_shapes(trace.jobs))
    rows = []
    print(
        f"{'policy':<14} {'seed':>4} {'jobs':>6} {'placed':>6} {'wall s':>7} {'unalloc@100':>11} {'load':>5}"
    )
    for policy in policies:
        for seed in seeds:
            load = os.getloadavg()[0]
            t = time.perf_counter()
            run = run_fill(base, trace.jobs, policy, seed, typical=typ)
            wall = time.perf_counter() - t
            u = run.unallocated_percent["100"]
            rows.append(
                {
                    "policy": policy,
                    "seed": seed,
                    "nodes": len(base.nodes),
                    "gpus": run.capacity_gpus,
                    "jobs": len(run.jobs),
                    "placed": sum(run.placed),
                    "wall_s": round(wall, 2),
                    "unallocated_at_100": u,
                    "load": round(load, 2),
                }
            )
            print(
                f"{policy:<14} {seed:>4} {len(run.jobs):>6} {sum(run.placed):>6} {wall:>7.1f} {u:>11.2f} {load:>5.1f}",
                flush=True,
            )
    print()
    print(f"{'policy':<14} {'mean':>6} {'sd':>5} {'paper mean':>10} {'paper sd':>8}")
    for policy in policies:
        v = [r["unallocated_at_100"] for r in rows if r["policy"] == policy]
        m = sum(v) / len(v)
        sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
        pm, psd = PAPER.get(policy, (None, None))
        print(
            f"{policy:<14} {m:>6.2f} {sd:>5.2f} {pm if pm is not None else '-':>10} {psd if psd is not None else '-':>8}"
        )
    out = (
        ROOT
        / "benchmarks"
        / "results"
        / (a.csv or ("replay_speed_quick.csv" if a.quick else "replay_speed.csv"))
    )
    write_csv(out, rows)
    print(f"\nwrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")


if __name__ == "__main__":
    main()
