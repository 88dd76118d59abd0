"""Greedy vs the per-epoch optimum over a whole Philly VC (issue 22, "Must show": timed mode).

One VC of the Philly trace (``philly-pollux/philly.csv``; default b436b2: 64 nodes x 8 = 512 GPUs,
7,423 jobs, 755 GPUs of demand at peak), every job, at each ``--arrival-scale`` (1: the trace's
own times; k > 1 compresses inter-arrival times, so the VC is more over-subscribed). Per scale,
three runs on the same jobs:

* ``default``: kube-scheduler's default profile through its queue (:mod:`gangplan.replay.timed`);
* ``optimal``: the per-epoch exact optimum starts the jobs (:mod:`gangplan.replay.optimal`: no
  queue, running pods fixed, at most ``--exact-time-limit`` s per CP-SAT epoch);
* with ``--movable-bound``, the optimal run also solves each epoch with running pods movable.

Printed and written per run: wall time, machine load, jobs placed, queueing delay (mean, p50, p99,
max), JCT mean and p99, makespan, idle GPU-hours, GPU-hours idle while a job was pending, epochs,
epochs CP-SAT solved (the others were proven by counting: greedy started every candidate),
epochs at the limit, the optimum's extra job starts over greedy from the same states, and the
movable bound's extra starts.

Run: ``python benchmarks/replay_optimal.py [--vc b436b2] [--scales 1,2,4] [--exact-time-limit 2] [--movable-bound]``.
Writes ``benchmarks/results/replay_optimal.csv`` (``--csv NAME``).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from results_csv import write_csv  # benchmarks/results_csv.py

from gangplan.replay.run import replay

ROOT = Path(__file__).resolve().parent.parent
PHILLY = (
    Path(os.environ.get("GANGPLAN_DATA_DIR") or ROOT / "tests" / "data" / "traces")
    / "philly-pollux"
)
FIELDS = [
    "vc",
    "arrival_scale",
    "policy",
    "wall_s",
    "load",
    "jobs",
    "placed",
    "delay_mean_s",
    "delay_p50_s",
    "delay_p99_s",
    "delay_max_s",
    "jct_mean_s",
    "jct_p99_s",
    "makespan_s",
    "idle_gpu_hours",
    "idle_gpu_hours_while_pending",
    "epochs",
    "epochs_cpsat",
    "epochs_at_limit",
    "extra_starts_vs_greedy",
    "movable_extra_starts_bound",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vc", default="b436b2")
    ap.add_argument("--scales", default="1,2,4")
    ap.add_argument("--exact-time-limit", type=float, default=2.0)
    ap.add_argument("--movable-bound", action="store_true")
    ap.add_argument("--csv", default="replay_optimal")
    a = ap.parse_args()
    trace = PHILLY / "philly.csv"
    rows = []
    for scale in [float(s) for s in a.scales.split(",")]:
        for policy in ("default", "optimal"):
            t = time.perf_counter()
            out = replay(
                trace,
                None,
                mode="timed",
                vc=a.vc,
                policies=[policy],
                arrival_scale=scale,
                exact_time_limit=a.exact_time_limit,
                movable_bound=a.movable_bound and policy == "optimal",
            )
            wall = time.perf_counter() - t
            r = out.summary.runs[0]
            recs = out.timed[0].shadow.records if out.timed[0].shadow is not None else []
            d, j = r.queueing_delay, r.jct
            row = {
                "vc": a.vc,
                "arrival_scale": scale,
                "policy": policy,
                "wall_s": round(wall, 1),
                "load": round(os.getloadavg()[0], 2),
                "jobs": r.jobs,
                "placed": r.placed,
                "delay_mean_s": round(d.mean, 1),
                "delay_p50_s": round(d.p50, 1),
                "delay_p99_s": round(d.p99, 1),
                "delay_max_s": round(d.max, 1),
                "jct_mean_s": round(j.mean, 1),
                "jct_p99_s": round(j.p99, 1),
                "makespan_s": round(r.makespan),
                "idle_gpu_hours": round(r.idle_gpu_hours, 1),
                "idle_gpu_hours_while_pending": round(r.idle_gpu_hours_while_pending, 1),
                "epochs": len(recs) if recs else "",
                "epochs_cpsat": sum(1 for e in recs if e.wall_s > 0) if recs else "",
                "epochs_at_limit": r.epochs_at_limit if recs else "",
                "extra_starts_vs_greedy": r.regret_jobs_total if recs else "",
                "movable_extra_starts_bound": r.movable_regret_jobs_total
                if r.movable_regret_jobs_total is not None
                else "",
            }
            rows.append(row)
            print("  ".join(f"{k}={row[k]}" for k in FIELDS), flush=True)
    path = write_csv(ROOT / "benchmarks" / "results" / f"{a.csv}.csv", rows, FIELDS)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
