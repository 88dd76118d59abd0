"""What multi-node ResourceSlices (network-attached devices, issue 23) cost both engines.

Two clusters of ``--nodes`` nodes in racks of 8 (label ``rack``) with the same number of GPUs:
``local``, every node publishing 8 GPUs in a node-local slice; ``network``, every node 6, and each
rack a pool of 16 network-attached GPUs in a slice whose ``nodeSelector`` is the rack label (the
``many-network-attached-devices`` shape of upstream's allocator tests, at scale). Pending pods ask
for 1 or 2 GPUs (alternately, one claim each from a template), ``--fill`` of the GPUs in all. In
the network variant the greedy engine replays every assumed pod's allocation in assume order (a
network-attached GPU one node takes is gone from the others), and the exact engine borrows
network-attached GPUs per node from each rack's group once
(:func:`gangplan.solver.exact.capacity.add_multi_node_rows`).

Measured per variant: load (``load_objects``), greedy (``solve_greedy``), exact (``solve_exact``,
2 workers, ``--time-limit``) and validation wall time, best of ``--repeat``; pods placed; every
Result validated. Writes ``benchmarks/results/dra_multi_node.csv``; prints the table and the load
average.

Measured 2026-12-03 (2 shared cores, load average 1.3-1.6, best of 2 for 1,000 nodes, one run
else), every Result validated, seconds local -> network (ratio):

* 1,000 nodes, 8,000 GPUs, 4,800 pods: greedy 1.81 -> 1.94 (1.07x), exact 3.64 -> 5.53 (1.5x),
  validation 0.35 -> 0.63; all 4,800 placed by both engines in both variants.
* 200 nodes, 960 pods: greedy 0.32 -> 0.54, exact 0.40 -> 0.63; ``--fill 1.1`` (1,173 pods):
  greedy 0.60 -> 0.76, exact 0.80 -> 1.75, 1,068 placed by greedy and 1,093 by the exact engine in
  both variants.

Before the greedy engine's global replay kept one live state with undo (it copied the set of
devices in use at every pod) and redid only the nodes a changed device reaches, greedy took 8.4 s
on 1,000 nodes (4.6x); before the validator's node-by-node pass precomputed the devices named
elsewhere, validation took 5.3 s.
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from pathlib import Path

from results_csv import print_rows, write_csv  # benchmarks/results_csv.py

from gangplan.io.loader import load_objects
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

OUT = Path(__file__).parent / "results" / "dra_multi_node.csv"
FIELDS = [
    "variant",
    "nodes",
    "gpus",
    "pendingPods",
    "loadSeconds",
    "greedySeconds",
    "exactSeconds",
    "validateSeconds",
    "greedyPlaced",
    "exactPlaced",
    "exactStatus",
    "loadAverage",
]
DRIVER = "gpu.example.com"
RACK = 8


def objects(nodes: int, fill: float, network: bool) -> list[dict]:
    objs: list[dict] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        }
    ]
    for k in (1, 2):
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": f"gpu-{k}", "namespace": "default"},
                "spec": {
                    "spec": {
                        "devices": {
                            "requests": [
                                {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": k}}
                            ]
                        }
                    }
                },
            }
        )
    local = 6 if network else 8
    for i in range(nodes):
        n = f"node-{i:04d}"
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": n, "labels": {"rack": f"rack-{i // RACK:03d}"}},
                "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}},
            }
        )
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{n}-gpus"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": n,
                    "pool": {"name": n, "generation": 0, "resourceSliceCount": 1},
                    "devices": [{"name": f"gpu-{j}"} for j in range(local)],
                },
            }
        )
    if network:
        for r in range((nodes + RACK - 1) // RACK):
            members = min(RACK, nodes - r * RACK)
            objs.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceSlice",
                    "metadata": {"name": f"rack-{r:03d}-fabric"},
                    "spec": {
                        "driver": DRIVER,
                        "pool": {"name": f"rack-{r:03d}", "generation": 0, "resourceSliceCount": 1},
                        "nodeSelector": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {
                                            "key": "rack",
                                            "operator": "In",
                                            "values": [f"rack-{r:03d}"],
                                        }
                                    ]
                                }
                            ]
                        },
                        "devices": [{"name": f"fabric-{j}"} for j in range(2 * members)],
                    },
                }
            )
    total = 8 * nodes
    pods = int(fill * total / 1.5)
    for k in range(pods):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"pod-{k:05d}", "namespace": "default"},
                "spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                    "resourceClaims": [
                        {"name": "gpu", "resourceClaimTemplateName": f"gpu-{1 + k % 2}"}
                    ],
                },
            }
        )
    return objs


def measure(nodes: int, fill: float, repeat: int, time_limit: float) -> list[dict]:
    best: dict[str, dict] = {}
    for _ in range(repeat):
        for variant in ("local", "network"):
            objs = objects(nodes, fill, variant == "network")
            gc.collect()
            t = time.perf_counter()
            c = load_objects(objs)
            load = time.perf_counter() - t
            t = time.perf_counter()
            g = solve_greedy(c)
            greedy = time.perf_counter() - t
            t = time.perf_counter()
            e = solve_exact(c, time_limit=time_limit, workers=2)
            exact = time.perf_counter() - t
            t = time.perf_counter()
            bad = validate(c, g) + validate(c, e)
            check = time.perf_counter() - t
            if bad:
                raise SystemExit(f"{variant}: the validator refuses a Result: {bad[:3]}")
            row = {
                "variant": variant,
                "nodes": nodes,
                "gpus": 8 * nodes,
                "pendingPods": len(c.pending_pods),
                "loadSeconds": round(load, 2),
                "greedySeconds": round(greedy, 2),
                "exactSeconds": round(exact, 2),
                "validateSeconds": round(check, 2),
                "greedyPlaced": sum(o.node is not None for o in g.pods.values()),
                "exactPlaced": sum(o.node is not None for o in e.pods.values()),
                "exactStatus": e.status,
                "loadAverage": round(os.getloadavg()[0], 1),
            }
            old = best.get(variant)
            if (
                old is None
                or row["greedySeconds"] + row["exactSeconds"]
                < old["greedySeconds"] + old["exactSeconds"]
            ):
                best[variant] = row
    return [best["local"], best["network"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--fill", type=float, default=0.9, help="pending GPUs asked for / GPUs")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--time-limit", type=float, default=60.0)
    args = ap.parse_args()
    rows = measure(args.nodes, args.fill, args.repeat, args.time_limit)
    print_rows(rows, FIELDS)
    write_csv(OUT, rows, FIELDS)


if __name__ == "__main__":
    main()
