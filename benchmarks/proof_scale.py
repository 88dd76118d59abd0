"""Proofs at the sizes GPU clusters have (issue 37): the whole ``gangplan diff`` at the default work
limit, what it proved, how long it took, and whether its bytes stay the same under load.

Cases (each built in memory, deterministic per seed):

* ``gb200-5k``: ``gangplan generate gb200-nvl72 --nodes 5000 --gangs 200`` (5,004 nodes, NVLink
  domains of 18, 200 domain-held gangs);
* ``dgx-5k``: ``gangplan generate dgx-h100-superpod --nodes 5000`` (block-held gangs);
* ``inventory``: the real 4,278-node Alibaba spot inventory in 535 racks of 8 with 1,000
  Philly-sized jobs at 80 % load, rack-held up to 8 workers (``benchmarks/real_inventory.py``; needs
  the traces: ``../shared/data`` or ``$GANGPLAN_DATA_DIR``);
* ``huge-gb200``, ``huge-dgx``: 10,000 nodes, 100,000 bound pods, 5,000 pending pods in rack and
  block gangs (:mod:`gangplan.bench.generators.huge_clusters`);
* ``busy-N-S``: the exact engine's scaling cell (``benchmarks/exact_scaling.py``): N nodes, 2,048
  pending GPU pods, the busy profile, seed S;
* ``showcase``: the showcase suite (``diff --suite scenarios/showcase``), every row's JSON hashed;
* ``het-S``: the random heterogeneous family (:mod:`gangplan.bench.generators.heterogeneous`, seed
  S: 250-400 nodes, 100-150 gangs of launchers and GPU or CPU workers, 40 % rack-held).

Per case and round: the diff's classification, whether every admission tier is proven
(``admission``: proven / open: the first open tier and how much it might still gain), the exact
status, the whole diff's wall seconds, the exact run's work units and wall seconds, a hash of the
diff JSON without its timing fields (``bytes``: equal across rounds and loads when the output is
deterministic), and the machine's load. ``--burn N`` starts N CPU-bound processes for the run
(issue 37 asks for one and for two).

Run: ``python benchmarks/proof_scale.py [--cases gb200-5k dgx-5k inventory huge-gb200 huge-dgx]
[--het 0 1 ... 9] [--rounds 3] [--burn 1] [--time-limit 10] [--no-explain] [--out CSV]``
(``--no-explain``: no decisive step; what is proven is the exact run's either way).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Any

from results_csv import write_csv  # benchmarks/results_csv.py

from gangplan.bench.generators.builders import to_cluster
from gangplan.models.base import without_time

OUT = Path(__file__).resolve().parent / "results" / "proof_scale.csv"


def build(case: str):
    if case in ("gb200-5k", "dgx-5k"):
        from gangplan.bench.generators.topology_shapes import (
            DEFAULT_GANGS,
            DEFAULT_UTILISATION,
            generate_shape,
        )

        shape = "gb200-nvl72" if case == "gb200-5k" else "dgx-h100-superpod"
        gangs = 200 if case == "gb200-5k" else DEFAULT_GANGS
        return to_cluster(
            generate_shape(shape, nodes=5000, utilisation=DEFAULT_UTILISATION, seed=0, gangs=gangs)
        )
    if case == "inventory":
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from real_inventory import inventory_snapshot

        return to_cluster(inventory_snapshot(1000, 0.8, 0))
    if case.startswith("huge-"):
        from gangplan.bench.generators.huge_clusters import huge_cluster

        return to_cluster(huge_cluster(seed=0, variant=case.removeprefix("huge-")))
    if case.startswith("busy-"):
        from gangplan.bench.generators.gpu_clusters import gpu_benchmark

        nodes, seed = case.removeprefix("busy-").split("-")
        return to_cluster(gpu_benchmark(int(nodes), 2048, profile="busy", seed=int(seed)))
    if case.startswith("het-"):
        from gangplan.bench.generators.heterogeneous import heterogeneous_cluster

        seed = int(case.removeprefix("het-"))
        return to_cluster(heterogeneous_cluster(*het_size(seed), seed=seed))
    raise SystemExit(f"unknown case {case}")


def het_size(seed: int) -> tuple[int, int]:
    """Nodes (250-400) and gangs (100-150) of the heterogeneous instance of ``seed``."""
    return 250 + (seed * 37) % 151, 100 + (seed * 13) % 51


def run_showcase(time_limit: float, rnd: int) -> dict[str, Any]:
    """The showcase suite as ``diff --suite`` runs it: the rows' JSON hashed together."""
    from gangplan.solver.suite import run_suite, suite_exit_code

    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    rows = run_suite(
        Path(__file__).resolve().parent.parent / "scenarios" / "showcase", time_limit=time_limit
    )
    secs = time.perf_counter() - t0
    docs = [
        {
            "scenario": r.scenario,
            "failures": r.failures,
            "diff": r.diff.to_dict(trace="summary") if r.diff else None,
        }
        for r in rows
    ]
    digest = hashlib.sha1(json.dumps(without_time(docs), sort_keys=True).encode()).hexdigest()[:12]
    unproven = sum(1 for r in rows if r.unproven)
    return {
        "case": "showcase",
        "round": rnd,
        "nodes": "",
        "pending": "",
        "classification": f"exit {suite_exit_code(rows)}",
        "exact_status": "",
        "admission": f"{unproven} unproven",
        "greedy_top": "",
        "exact_top": "",
        "diff_s": round(secs, 2),
        "exact_s": "",
        "exact_work": None,
        "stopped_by": "",
        "bytes": digest,
        "load": round((load0 + os.getloadavg()[0]) / 2, 2),
    }


def run_case(case: str, time_limit: float, rnd: int, explain: bool = True) -> dict[str, Any]:
    from gangplan.solver.diff import diff_snapshot

    if case == "showcase":
        return run_showcase(time_limit, rnd)
    cluster = build(case)
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    d = diff_snapshot(cluster, snapshot=case, time_limit=time_limit, explain=explain)
    secs = time.perf_counter() - t0
    doc = d.to_dict(trace="summary")
    digest = hashlib.sha1(json.dumps(without_time(doc), sort_keys=True).encode()).hexdigest()[:12]
    admission = [t for t in d.proof.tiers if t.compared and t.tier.startswith("admitted[")]
    open_adm = [t for t in admission if not t.proven]
    timing = d.optimal.exact_trace.timing if d.optimal.exact_trace else None
    first = admission[0].tier if admission else None
    return {
        "case": case,
        "round": rnd,
        "nodes": len(cluster.nodes),
        "pending": len(cluster.pending_pods),
        "classification": d.classification,
        "exact_status": d.optimal.status.value,
        "admission": "proven"
        if not open_adm
        else f"open {open_adm[0].tier} +{d.proof.might_gain:g}",
        "greedy_top": d.greedy.objective.get(first) if first else None,
        "exact_top": d.optimal.objective.get(first) if first else None,
        # exact_s: the main exact run's wall time (closest_optimum keeps it); exact_work: the work of
        # the run whose placement the diff reports (with a decisive step: the agreeing probe's)
        "diff_s": round(secs, 2),
        "exact_s": round(d.optimal.wall_seconds, 2),
        "exact_work": round(timing.work, 2) if timing and timing.work else None,
        "stopped_by": d.proof.stopped_by,
        "bytes": digest,
        "load": round((load0 + os.getloadavg()[0]) / 2, 2),
    }


def _burn(stop) -> None:
    x = 0
    while not stop.is_set():
        x = (x * 1103515245 + 12345) % 2**31


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--cases", nargs="*", default=["gb200-5k", "dgx-5k", "inventory", "huge-gb200", "huge-dgx"]
    )
    ap.add_argument("--het", nargs="*", type=int, default=[], help="heterogeneous seeds")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--burn", type=int, default=0, help="CPU-bound processes running meanwhile")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument(
        "--no-explain",
        action="store_true",
        help="skip the decisive step (the proof is the exact run's)",
    )
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    stop = multiprocessing.Event()
    burners = [
        multiprocessing.Process(target=_burn, args=(stop,), daemon=True) for _ in range(args.burn)
    ]
    for b in burners:
        b.start()
    rows = []
    try:
        cases = list(args.cases) + [f"het-{s}" for s in args.het]
        for rnd in range(args.rounds):
            for case in cases:
                row = run_case(case, args.time_limit, rnd, not args.no_explain) | {
                    "burn": args.burn,
                    "time_limit": args.time_limit,
                }
                rows.append(row)
                print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    finally:
        stop.set()
        for b in burners:
            b.join(timeout=5)
    write_csv(args.out, rows)
    print(
        f"\n{'case':12} {'round':>5} {'class':18} {'admission':24} {'diff s':>7} {'exact s':>7} {'work':>6} {'bytes':12} {'load':>5}"
    )
    for r in rows:
        print(
            f"{r['case']:12} {r['round']:>5} {r['classification']:18} {r['admission']:24} {r['diff_s']:>7} {r['exact_s']:>7} "
            f"{r['exact_work'] or 0:>6} {r['bytes']:12} {r['load']:>5}"
        )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
