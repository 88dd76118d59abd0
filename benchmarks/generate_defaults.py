"""How often a default ``gangplan generate`` draw shows greedy losing (issue 14).

For each shape and seed: the snapshot ``gangplan generate SHAPE --seed N`` writes with every other
flag at its default (``gangplan.bench.generators.topology_shapes.DEFAULT_*``: 144 nodes, 40 % load, 32 gangs), then a diff
with ``gangplan diff``'s defaults. Both Results go through the validator. Prints one row per draw
and a count per shape; writes ``benchmarks/results/generate_defaults.csv``.

Run: ``python benchmarks/generate_defaults.py [--seeds 12]``.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from results_csv import write_csv  # benchmarks/results_csv.py

from gangplan.bench.generators.builders import to_cluster
from gangplan.bench.generators.topology_shapes import (
    DEFAULT_GANGS,
    DEFAULT_NODES,
    DEFAULT_UTILISATION,
    SHAPES,
    generate_shape,
)
from gangplan.solver.diff import GREEDY_SUBOPTIMAL, diff_snapshot
from gangplan.solver.validate import validate

OUT = Path(__file__).parent / "results" / "generate_defaults.csv"
FIELDS = [
    "shape",
    "seed",
    "classification",
    "greedyAdmitted",
    "optimalAdmitted",
    "groups",
    "decisiveKind",
    "decisiveGroup",
    "groupOutcomeDiffers",
    "seconds",
    "violations",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=12)
    args = ap.parse_args()
    rows, counts = [], {}
    for shape in SHAPES:
        counts[shape] = Counter()
        for seed in range(args.seeds):
            cluster = to_cluster(
                generate_shape(
                    shape,
                    nodes=DEFAULT_NODES,
                    utilisation=DEFAULT_UTILISATION,
                    seed=seed,
                    gangs=DEFAULT_GANGS,
                )
            )
            d = diff_snapshot(cluster, snapshot=f"{shape}-{seed}")
            s = d.decisive
            row = {
                "shape": shape,
                "seed": seed,
                "classification": d.classification,
                "greedyAdmitted": sum(g.greedy_admitted for g in d.groups),
                "optimalAdmitted": sum(g.optimal_admitted for g in d.groups),
                "groups": len(d.groups),
                "decisiveKind": s.kind if s else "",
                "decisiveGroup": (s.group or s.pod or "") if s else "",
                "groupOutcomeDiffers": s.group_outcome_differs if s else "",
                "seconds": round(d.seconds, 2),
                "violations": len(validate(cluster, d.greedy)) + len(validate(cluster, d.optimal)),
            }
            rows.append(row)
            counts[shape][d.classification] += 1
            print("  ".join(str(row[f]) for f in FIELDS), flush=True)
    print()
    for shape, c in counts.items():
        print(
            f"{shape}: {c[GREEDY_SUBOPTIMAL]} of {sum(c.values())} greedy-suboptimal  ({dict(sorted(c.items()))})"
        )
    write_csv(OUT, rows, FIELDS)


if __name__ == "__main__":
    main()
