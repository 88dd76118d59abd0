"""Timed replay of rack-constrained gangs: what the workload cycle's placement algorithm costs the
replay, with and without reusing unchanged placements' evaluations (issue 22).

Every job of a Philly VC (``philly-pollux/philly.csv``, ``--vc``, default b436b2: 64 nodes x 8
GPUs, 7,423 jobs) on its nodes split into racks of ``--rack-size`` nodes (label ``rack``); every
gang of more than one worker requires one rack (``required_topology_key=rack``), so each of its
attempts generates one placement per rack, evaluates every one that may hold it and scores the
feasible ones (:mod:`gangplan.replay.engine`). One run per policy and reuse setting
(``GreedySession.reuse_evaluations``): wall time, placement attempts of keyed gangs, evaluations
reused, mean and p99 queueing delay. With ``first`` ties (the paper policies) reuse must not
change any record; under ``default`` (random ties, drawn from the seed) it changes which draws
are made, so its numbers may move within the spread over seeds.

Run: ``python benchmarks/replay_topology.py [--vc b436b2] [--rack-size 8] [--policy default,fgd] [--arrival-scale K] [--worker-gpus W]``
(``--worker-gpus 1``: a job of g GPUs becomes g one-GPU workers in one rack, a stress test).
Writes ``benchmarks/results/replay_topology.csv``.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import time
from pathlib import Path

from results_csv import write_csv  # benchmarks/results_csv.py

from gangplan.models.cluster import Cluster
from gangplan.replay.policies import typical_pods
from gangplan.replay.run import load_inputs, trace_shapes
from gangplan.replay.timed import run_timed
from gangplan.solver.greedy import GreedySession

ROOT = Path(__file__).resolve().parent.parent
PHILLY = (
    Path(os.environ.get("GANGPLAN_DATA_DIR") or ROOT / "tests" / "data" / "traces")
    / "philly-pollux"
)


def racked(vc: str, rack_size: int, worker_gpus: int) -> tuple[Cluster, list]:
    """The VC's nodes with a ``rack`` label; its jobs re-split into workers of at most
    ``worker_gpus`` GPUs (8: the trace's own split), every gang of more than one held to a rack."""
    trace, base, _ = load_inputs(PHILLY / "philly.csv", None, vc=vc)
    nodes = tuple(
        n.model_copy(update={"labels": {**n.labels, "rack": f"rack-{i // rack_size}"}})
        for i, n in enumerate(base.nodes)
    )
    jobs = []
    for j in trace.jobs:
        g = j.gpus
        w = (
            max(1, math.ceil(g / worker_gpus))
            if g % max(1, math.ceil(g / worker_gpus)) == 0
            else j.workers
        )
        if w != j.workers:
            j = dataclasses.replace(j, workers=w, min_count=w, gpu=g // w)
        jobs.append(dataclasses.replace(j, required_topology_key="rack") if j.gang > 1 else j)
    return base.model_copy(update={"nodes": nodes}), jobs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vc", default="b436b2")
    ap.add_argument("--rack-size", type=int, default=8)
    ap.add_argument("--policy", default="default,fgd")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--arrival-scale", type=float, default=1.0)
    ap.add_argument(
        "--worker-gpus",
        type=int,
        default=8,
        help="split jobs into workers of at most this many GPUs (8: the trace's split)",
    )
    a = ap.parse_args()
    base, jobs = racked(a.vc, a.rack_size, a.worker_gpus)
    keyed = sum(1 for j in jobs if j.required_topology_key)
    typical = typical_pods(trace_shapes(jobs))
    rows = []
    print(
        f"{a.vc}: {len(base.nodes)} nodes in racks of {a.rack_size}, {len(jobs)} jobs, {keyed} gangs held to one rack, arrival scale {a.arrival_scale:g}"
    )
    print(
        f"{'policy':<10} {'reuse':>5} {'wall s':>8} {'attempts':>9} {'reused':>8} {'mean delay s':>13} {'p99 delay s':>12}"
    )
    for policy in a.policy.split(","):
        records = {}
        for reuse in (False, True):
            GreedySession.reuse_evaluations = reuse
            attempts = {"n": 0, "reused": 0}
            real = GreedySession.place_group

            def counting(self, group, pods, real=real, attempts=attempts, **kw):
                keyed = bool(group.topology_key)
                before = self.reused
                try:
                    return real(self, group, pods, **kw)
                finally:
                    attempts["n"] += keyed
                    attempts["reused"] += self.reused - before

            GreedySession.place_group = counting
            try:
                t = time.perf_counter()
                run = run_timed(
                    base, jobs, policy, a.seed, typical=typical, arrival_scale=a.arrival_scale
                )
                wall = time.perf_counter() - t
            finally:
                GreedySession.place_group = real
                GreedySession.reuse_evaluations = True
            delays = sorted(r.start - r.arrival for r in run.records if r.start is not None)
            mean = sum(delays) / len(delays)
            p99 = delays[min(len(delays) - 1, int(0.99 * len(delays)))]
            records[reuse] = [(r.start, r.end) for r in run.records]
            print(
                f"{policy:<10} {str(reuse):>5} {wall:>8.1f} {attempts['n']:>9} {attempts['reused']:>8} {mean:>13.1f} {p99:>12.0f}"
            )
            rows.append(
                {
                    "vc": a.vc,
                    "rack_size": a.rack_size,
                    "arrival_scale": a.arrival_scale,
                    "worker_gpus": a.worker_gpus,
                    "policy": policy,
                    "reuse": reuse,
                    "wall_s": round(wall, 2),
                    "keyed_attempts": attempts["n"],
                    "reused_evaluations": attempts["reused"],
                    "mean_delay_s": round(mean, 1),
                    "p99_delay_s": p99,
                    "jobs": len(jobs),
                    "keyed_jobs": keyed,
                }
            )
        same = records[False] == records[True]
        print(f"{policy:<10} records with and without reuse {'identical' if same else 'differ'}")
        for r in rows[-2:]:
            r["identical_records"] = same
    out = ROOT / "benchmarks" / "results" / "replay_topology.csv"
    write_csv(out, rows)
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
