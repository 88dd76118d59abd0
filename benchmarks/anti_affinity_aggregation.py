"""Aggregated anti-affine gangs (gangplan.solver.exact.aggregation) against the per-node model.

Shape: the bench ``mixed`` family (:func:`gangplan.bench.generators.families.mixed_family`) with every gang of
2+ pods anti-affine to its own pods per hostname (``anti_affinity_fraction=1``, no affinity),
gangs of 1-4 pods asking 1 or 2 GPUs, GPU racks of 4 nodes at 50 % use, two priorities; many
gangs are identical but for their ``job`` label, i.e. symmetric.

Per cell and mode (``on``: pooled with per-node caps; ``off``: ``aggregation.ENABLED = False``,
one private class per gang with per-node counts): model size (variables, constraints, private
classes), build time, exact wall time, status, gap and the decision tiers, plus the same-run ratio
of the exact time off over on; the two modes' decision tiers must agree when both are proven.
The greedy Result is the hint in both modes, as ``gangplan diff`` does.

Run: ``python benchmarks/anti_affinity_aggregation.py [--time-limit 20]``; prints a table and
writes ``benchmarks/results/anti_affinity_aggregation.csv``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from results_csv import write_csv  # benchmarks/results_csv.py

from gangplan.bench.generators.builders import to_cluster
from gangplan.bench.generators.families import FAMILIES
from gangplan.solver.exact import aggregation, build_model, solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

OUT = Path(__file__).resolve().parent / "results" / "anti_affinity_aggregation.csv"
CELLS = [(64, 48), (256, 192), (512, 384)]
FIELDS = [
    "nodes",
    "gangs",
    "mode",
    "variables",
    "constraints",
    "private",
    "build_s",
    "exact_s",
    "status",
    "gap",
    "decision",
    "valid",
    "off_over_on",
    "load",
]


def snapshot(nodes: int, gangs: int, seed: int) -> list[dict]:
    fam = FAMILIES["mixed"]
    params = dict(fam.defaults)
    params.update(
        nodes=nodes,
        gangs=gangs,
        anti_affinity_fraction=1.0,
        affinity_fraction=0.0,
        max_gang_size=4,
        gpus_per_pod=[1, 2],
        utilisation=0.5,
        priorities=2,
    )
    return fam.build(seed=seed, **params)


def run(nodes: int, gangs: int, seed: int, time_limit: float) -> list[dict]:
    cluster = to_cluster(snapshot(nodes, gangs, seed))
    hint = solve_greedy(cluster)
    rows = []
    for mode in ("on", "off"):
        aggregation.ENABLED = mode == "on"
        try:
            t0 = time.perf_counter()
            em = build_model(cluster).em
            build_s = time.perf_counter() - t0
            r = solve_exact(cluster, time_limit=time_limit, workers=2, seed=seed, hint=hint)
        finally:
            aggregation.ENABLED = True
        rows.append(
            {
                "nodes": nodes,
                "gangs": gangs,
                "mode": mode,
                "variables": len(em.model.proto.variables),
                "constraints": len(em.model.proto.constraints),
                "private": sum(em.private),
                "build_s": round(build_s, 2),
                "exact_s": round(r.wall_seconds, 2),
                "status": r.status.value,
                "gap": r.gap,
                "decision": " ".join(
                    f"{k}={v:g}" for k, v in r.objective.items() if k != "tiebreak"
                ),
                "valid": not validate(cluster, r),
                "load": round(os.getloadavg()[0], 2),
            }
        )
    on, off = rows
    ratio = round(off["exact_s"] / on["exact_s"], 2) if on["exact_s"] else ""
    for row in rows:
        row["off_over_on"] = ratio
    if on["status"] == off["status"] == "OPTIMAL" and on["decision"] != off["decision"]:
        raise SystemExit(
            f"aggregation changed the optimum at {nodes} x {gangs}: {on['decision']} != {off['decision']}"
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    rows = []
    for nodes, gangs in CELLS:
        for row in run(nodes, gangs, args.seed, args.time_limit):
            rows.append(row)
            print(" | ".join(f"{k}={row[k]}" for k in FIELDS), flush=True)
    write_csv(args.out, rows, FIELDS)


if __name__ == "__main__":
    main()
