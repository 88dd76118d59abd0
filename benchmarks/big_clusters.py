"""Issue 27's shape, end to end through the files users give: load, greedy, the whole diff and the
JSON it prints, beside the plain 5,000-node greedy rate of the same run.

Instance: the ``real-inventory`` bench family (:func:`gangplan.bench.generators.families.real_inventory_family`:
all 4,278 Alibaba spot-GPU v2026 nodes in racks of 8, one bound pod per node at 80 % of its GPUs,
1,000 Philly-sized jobs whose gangs of 2-8 workers must stay in one rack), written as multi-document
YAML and as ``kubectl get -o json``-style JSON to a temporary directory, then per step, in this
process:

* ``load_yaml_s`` / ``load_json_s``: :func:`gangplan.io.loader.load_snapshot` of each file;
* ``greedy_s`` and ``greedy_pods_per_s``: :func:`gangplan.solver.greedy.solve_greedy` (trace
  included), and ``plain_pods_per_s``: the same engine on upstream's scheduler_perf gang shape
  (5,000 nodes, 1,000 gangs of 3), ``ratio`` the first over the second;
* ``diff_s``: :func:`gangplan.solver.diff.diff_snapshot` (both engines, classification and, when
  greedy is suboptimal, the decisive-step search), ``diff_json_mb`` and ``diff_json_full_mb``: the
  ``diff --json`` document at the default ``--trace summary`` and at ``--trace full``;
* ``peak_mb``: ``ru_maxrss`` of the process at the end.

Issue 27's targets on this shape: greedy >= 1,000 pods/s and >= 0.5x the plain rate, whole diff
under 10 s and 1 GB, load under 2 s, diff JSON under 5 MB.

One run (main @7448a67, load average 0.7 at the start and about 2 throughout: the test suite ran
on the other core): YAML 4.2 MB; load 3.4 s (YAML), 2.6 s (JSON: parsing is 0.09 s of it, the
rest is the loader's object building); greedy 3.35 s = 471 pods/s against 845 pods/s on the plain
shape, ratio 0.56; whole diff 65.9 s (greedy-suboptimal: most of it the decisive-step probes, one
exact solve each), diff JSON 4.1 MB at ``--trace summary`` and 78.2 MB at ``full``; peak 838 MB.

Later run (main @0b7182a, ``--repeat 3``, load average 2.3 rising to 2.9 with three other agents'
jobs): load 0.84 s (YAML), 0.58 s (JSON); greedy 1.27 s wall, 0.84 s CPU = 1,244 pods/s (1,880 per
CPU second) against 1,980 pods/s plain, ratio 0.63 (0.65 in CPU time); whole diff 26.8 s, diff
JSON 4.1 / 78.2 MB, peak 884 MB. On that machine the same script's greedy step gave, main @ab7705e
against @0b7182a, alternating, best of 3 at load 2.9: 1.26 s CPU (1,255 pods/s per CPU second,
ratio 0.47-0.49) against 0.87-0.90 s CPU (1,750-1,820, ratio 0.62-0.67); the Result with its full
trace was byte-identical between the two. Where the greedy time goes now (cProfile, 0.9 s): the
first attempts of the 356 rack gangs 0.25 s (0.7 ms each, of it 0.2 ms the full evaluation of the
reported rack, whose pod cycles the trace keeps), the 644 single-pod groups' first cycles 0.28 s
(the plain per-pod path: Filter, FitError over 4,278 nodes, scoring), the 657 retries after bind
events 0.22 s (0.3-0.4 ms each, counted), the rest the queue, preemption checks, the trace and
Result; a generation-2 garbage collection, when one falls in the run, adds 0.1-0.14 s. Met at that
load: greedy >= 1,000 pods/s, ratio >= 0.5, load < 2 s, JSON < 5 MB, memory < 1 GB; not met: the
whole diff under 10 s.

The whole diff (issue 27, main @70cf912; ``diff_cpu_s``, ``decisive_step`` and
``decisive_probes`` are the new columns): at load 5.0-5.3 (four agents' jobs on the 2 cores)
10.4 s wall, 5.6 s CPU, peak 866 MB (the process: two loads, the plain shape and the 78 MB full
JSON; a diff alone in a fresh process peaks at 341-344 MB), decisive step #1 (philly/job-000-0 on
spot-0951, admission) after 1 probe. Before/after in one process (``diff_snapshot`` with the
defaults, alternating, load 3.7-4.0): 24.4-27.4 s wall / 16.8 s CPU before, 7.7-8.5 s wall /
4.7-4.8 s CPU after, same classification and decisive step; at load 2: 17.9-21.5 s before, 5.4-5.7 s
after. Where the 17 s went (cProfile): 22.5 s of the profiled 29 s was the decisive step's
evidence replay (``pod_scores_at_step(step="recorded")``) evaluating the rack gang's pod against
all 4,278 nodes before each of its 535 per-rack cycles (2.26 million ``NodeResourcesFit``
``filter_one`` calls) to keep the one cycle the trace keeps; it now evaluates only cycles inside a
placement holding the node the kept cycle chose (1 evaluation). The one probe (P(1): is there an
optimum with the pod on greedy's node?) was a full ``solve_exact`` (build 0.45 s, decision 0.5 s,
tie-break 0.35 s); it is now decided by a feasibility solve of the same model with the proven
optimum's admission and placed tiers held (INFEASIBLE: the answer no, exactly what the full probe
gives). What the diff's CPU time is now (about 5 s at load 2): greedy 1.0 s, the exact solve of
the snapshot 2.1-2.6 s (two CP-SAT workers), the feasibility check of greedy's placement 0.12 s,
the probe's pre-check 0.6 s, the evidence replay (one more greedy run with an observer) 1.1 s,
the validator and the document the rest; one to three generation-2 garbage collections (0.4-0.7 s)
fall in it. Met at load <= 4: under 10 s and 1 GB; not at load 5 (10.4 s wall for 5.6 s CPU).

Run: ``python benchmarks/big_clusters.py [--jobs 1000] [--utilisation 0.8] [--seed 0]
[--time-limit 10] [--repeat 3] [--skip-diff]``; writes ``benchmarks/results/big_clusters.csv``.
Needs the real traces (``$GANGPLAN_DATA_DIR``, ``../shared/data`` or the repository's compressed
copies).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import tempfile
import time
from pathlib import Path

from results_csv import print_rows, write_csv  # benchmarks/results_csv.py

from gangplan.bench.generators.builders import to_cluster
from gangplan.bench.generators.families import build_family
from gangplan.bench.generators.scheduler_perf import scheduler_perf_gangs
from gangplan.io.loader import load_snapshot
from gangplan.io.writer import write_snapshot
from gangplan.solver.diff import diff_snapshot
from gangplan.solver.greedy import solve_greedy

OUT = Path(__file__).resolve().parent / "results" / "big_clusters.csv"
FIELDS = [
    "shape",
    "nodes",
    "pending",
    "yaml_mb",
    "load_yaml_s",
    "load_json_s",
    "greedy_s",
    "greedy_pods_per_s",
    "plain_pods_per_s",
    "ratio",
    "greedy_cpu_s",
    "plain_cpu_s",
    "ratio_cpu",
    "repeat",
    "diff_s",
    "diff_cpu_s",
    "classification",
    "decisive_step",
    "decisive_probes",
    "diff_json_mb",
    "diff_json_full_mb",
    "peak_mb",
    "load_avg",
    "load_avg_end",
]


def timed(f):
    """``f()`` with its wall time; the garbage of the steps before is collected first, so that
    a step does not pay for another step's cyclic garbage (Python's generation-2 collection
    walks the whole heap: about 0.1 s here once the loads have run)."""
    gc.collect()
    t0 = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t0


def timed_cpu(f, out: list | None = None) -> tuple[float, float]:
    """Wall and process CPU seconds of ``f()`` (as :func:`timed`; ``out`` gets its value)."""
    gc.collect()
    w, c = time.perf_counter(), time.process_time()
    got = f()
    if out is not None:
        out.append(got)
    return time.perf_counter() - w, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--utilisation", type=float, default=0.8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="greedy and plain runs, alternating; the best of each is reported",
    )
    ap.add_argument(
        "--skip-diff", action="store_true", help="load and greedy only (no diff, no diff JSON)"
    )
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    load_avg = round(os.getloadavg()[0], 2)
    objects = build_family(
        "real-inventory", {"jobs": args.jobs, "utilisation": args.utilisation}, args.seed
    )
    with tempfile.TemporaryDirectory() as tmp:
        yaml_path, json_path = Path(tmp) / "inventory.yaml", Path(tmp) / "inventory.json"
        write_snapshot(
            objects, yaml_path, header=f"real-inventory jobs={args.jobs} seed={args.seed}"
        )
        json_path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
        cluster, load_yaml = timed(lambda: load_snapshot(yaml_path))
        _, load_json = timed(lambda: load_snapshot(json_path))
        yaml_mb = yaml_path.stat().st_size / 2**20
    pending = len(cluster.pending_pods)
    plain = to_cluster(scheduler_perf_gangs(nodes=5000, gangs=1000, pods_per_gang=3))
    runs = [
        (timed_cpu(lambda: solve_greedy(cluster)), timed_cpu(lambda: solve_greedy(plain, top_k=0)))
        for _ in range(max(args.repeat, 1))
    ]
    greedy_s, greedy_cpu = min(r[0][0] for r in runs), min(r[0][1] for r in runs)
    plain_s, plain_cpu = min(r[1][0] for r in runs), min(r[1][1] for r in runs)
    plain_rate = len(plain.pending_pods) / plain_s
    row = {
        "shape": f"real-inventory jobs={args.jobs} u={args.utilisation} seed={args.seed}",
        "nodes": len(cluster.nodes),
        "pending": pending,
        "yaml_mb": round(yaml_mb, 1),
        "load_yaml_s": round(load_yaml, 2),
        "load_json_s": round(load_json, 2),
        "greedy_s": round(greedy_s, 2),
        "greedy_pods_per_s": round(pending / greedy_s),
        "plain_pods_per_s": round(plain_rate),
        "ratio": round(pending / greedy_s / plain_rate, 2),
        "greedy_cpu_s": round(greedy_cpu, 2),
        "plain_cpu_s": round(plain_cpu, 2),
        "ratio_cpu": round((pending / greedy_cpu) / (len(plain.pending_pods) / plain_cpu), 2),
        "repeat": len(runs),
    }
    row |= dict.fromkeys(
        [
            "diff_s",
            "diff_cpu_s",
            "classification",
            "decisive_step",
            "decisive_probes",
            "diff_json_mb",
            "diff_json_full_mb",
        ],
        "",
    )
    if not args.skip_diff:
        got: list = []
        diff_s, diff_cpu = timed_cpu(
            lambda: diff_snapshot(cluster, time_limit=args.time_limit, seed=args.seed), got
        )
        d = got[0]
        summary = json.dumps(d.to_dict(trace="summary"), indent=2)
        full = json.dumps(d.to_dict(trace="full"), indent=2)
        step = d.decisive
        row |= {
            "diff_s": round(diff_s, 1),
            "diff_cpu_s": round(diff_cpu, 1),
            "classification": d.classification,
            "decisive_step": ""
            if step is None
            else f"#{step.step} {step.pod} ({step.kind})"
            if step.step
            else f"({step.kind})",
            "decisive_probes": "" if step is None else step.probes,
            "diff_json_mb": round(len(summary) / 2**20, 1),
            "diff_json_full_mb": round(len(full) / 2**20, 1),
        }
    row |= {
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "load_avg": load_avg,
        "load_avg_end": round(os.getloadavg()[0], 2),
    }
    print_rows([row], FIELDS)
    write_csv(args.out, [row], FIELDS)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
