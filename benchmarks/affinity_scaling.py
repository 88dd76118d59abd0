"""Required pod affinity in the exact engine: model size and time on affinity-heavy snapshots.

Two shapes, both built in memory and seeded:

* ``mixed``: the bench ``mixed`` family (:func:`gangplan.bench.generators.families.mixed_family`): GPU racks
  of 4 nodes at 50 % utilisation, every gang of 2+ pods with required pod affinity to its own pods
  per rack (``affinity_fraction=1``), 30 % heterogeneous gangs (a CPU launcher plus workers of two
  GPU sizes: several classes that all match each other), 30 % with hostname anti-affinity.
* ``layered``: zones of racks of 4 nodes; each job is a gang of one ``head`` (self-affine on
  ``job`` per zone) and workers affine to their job on both the zone *and* the rack (two terms on
  two keys), plus every other job's ``sidecar`` single pod affine to the head's role on hostname.
  This exercises the general (levelled) support formulation, where pods of several classes
  support each other across domains.

Per cell: greedy time and objective; exact model size (variables, constraints), build time,
solve time (the phases), wall time of the whole exact run, status, objective; how many violations
the validator finds in both results. The exact engine gets
the greedy result as its hint, as ``gangplan diff`` does.

Run: ``python benchmarks/affinity_scaling.py [--time-limit 30] [--out FILE]``; prints a table and
writes ``benchmarks/results/affinity_scaling.csv``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from results_csv import write_csv  # benchmarks/results_csv.py

from gangplan.bench.generators.builders import node_object, pod_group_object, pod_object, to_cluster
from gangplan.bench.generators.families import FAMILIES
from gangplan.models.well_known import HOSTNAME, RACK, ZONE
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

OUT = Path(__file__).resolve().parent / "results" / "affinity_scaling.csv"
FIELDS = [
    "shape",
    "nodes",
    "pods",
    "greedy_s",
    "greedy_objective",
    "variables",
    "constraints",
    "build_s",
    "solve_s",
    "exact_s",
    "status",
    "gap",
    "exact_objective",
    "violations",
]


def mixed(nodes: int, gangs: int, seed: int) -> list[dict]:
    fam = FAMILIES["mixed"]
    params = dict(fam.defaults)
    params.update(
        nodes=nodes,
        gangs=gangs,
        affinity_fraction=1.0,
        hetero_fraction=0.3,
        anti_affinity_fraction=0.3,
        utilisation=0.5,
        max_gang_size=8,
    )
    return fam.build(seed=seed, **params)


def _term(labels: dict[str, str], key: str) -> dict:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key}


def layered(nodes: int, jobs: int, seed: int) -> list[dict]:
    """Zones of 4 racks of 4 nodes (4 or 6 CPUs, alternately); per job a gang of a head and 3
    workers (2 CPUs each), and for every other job a 1-CPU sidecar single pod; about as much
    demand as capacity."""
    del seed  # deterministic shape
    out: list[dict] = []
    for i in range(nodes):
        rack, zone = i // 4, i // 16
        out.append(
            node_object(
                f"n{i:04d}",
                cpu="4" if i % 2 else "6",
                labels={HOSTNAME: f"n{i:04d}", ZONE: f"z{zone}", RACK: f"z{zone}-r{rack}"},
            )
        )
    for j in range(jobs):
        job = f"job{j:03d}"
        out.append(pod_group_object(job, min_count=4, priority=10, created=2 * j))
        head_aff = {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [_term({"job": job}, ZONE)]
            }
        }
        worker_aff = {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    _term({"job": job}, ZONE),
                    _term({"job": job}, RACK),
                ]
            }
        }
        out.append(
            pod_object(
                f"{job}-head",
                group=job,
                requests={"cpu": "2"},
                labels={"job": job, "role": "head"},
                priority=10,
                affinity=head_aff,
                created=2 * j + 1,
            )
        )
        for w in range(3):
            out.append(
                pod_object(
                    f"{job}-w{w}",
                    group=job,
                    requests={"cpu": "2"},
                    labels={"job": job, "role": "worker"},
                    priority=10,
                    affinity=worker_aff,
                    created=2 * j + 1,
                )
            )
        if j % 2:
            side_aff = {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        _term({"job": job, "role": "head"}, HOSTNAME)
                    ]
                }
            }
            out.append(
                pod_object(
                    f"{job}-sidecar",
                    requests={"cpu": "1"},
                    labels={"role": "sidecar"},
                    priority=0,
                    affinity=side_aff,
                    created=2 * j + 1,
                )
            )
    return out


CELLS = [
    ("mixed", 32, 24, mixed),
    ("mixed", 128, 96, mixed),
    ("mixed", 512, 384, mixed),
    ("layered", 64, 40, layered),
    ("layered", 256, 160, layered),
]


def measure(
    shape: str, nodes: int, size: int, build, *, time_limit: float, workers: int, seed: int
) -> dict:
    cluster = to_cluster(build(nodes, size, seed))
    t0 = time.perf_counter()
    greedy = solve_greedy(cluster)
    greedy_s = time.perf_counter() - t0
    exact = solve_exact(cluster, time_limit=time_limit, workers=workers, seed=seed, hint=greedy)
    trace = exact.exact_trace
    # Tiers solved in one merged phase report that phase's seconds each: count every phase once.
    solve_s = sum({p.phase: p.seconds for p in trace.phases or []}.values())
    violations = len(validate(cluster, greedy)) + len(validate(cluster, exact))

    def fmt(obj):
        return ";".join(
            f"{k}={v:g}" for k, v in obj.items() if k.startswith("admitted") or k == "placed"
        )

    return {
        "shape": shape,
        "nodes": nodes,
        "pods": len(cluster.pending_pods),
        "greedy_s": round(greedy_s, 3),
        "greedy_objective": fmt(greedy.objective),
        "variables": trace.model.variables,
        "constraints": trace.model.constraints,
        "build_s": trace.build_seconds,
        "solve_s": round(solve_s, 3),
        "exact_s": round(exact.wall_seconds, 3),
        "status": exact.status.value,
        "gap": "" if exact.gap is None else round(exact.gap, 6),
        "exact_objective": fmt(exact.objective),
        "violations": violations,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    rows = []
    for shape, nodes, size, build in CELLS:
        row = measure(
            shape,
            nodes,
            size,
            build,
            time_limit=args.time_limit,
            workers=args.workers,
            seed=args.seed,
        )
        rows.append(row)
        print("  ".join(f"{k}={row[k]}" for k in FIELDS), flush=True)
    write_csv(args.out, rows, FIELDS)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
