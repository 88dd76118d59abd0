"""make-room (issue 40): the optimal plan beside the greedy baseline, on the shapes KAI-Scheduler's
reclaim design notes ask about and on 1,000 / 5,000-node GPU clusters.

Cases (every one built in memory, seeded):

* ``full-N``: KAI's full-node shape, at the target's priority (so kube-scheduler cannot preempt):
  N nodes of 8 GPUs, each packed with eight 1-GPU pods of a Deployment, and two spare nodes with 4
  GPUs free each; an 8-GPU pod is pending. Every N needs exactly 8 moves (one node's pods into the
  spare room), a sanity check.
* ``interleaved-N``: every node holds four bare pods of priority 1..5 (only evictable) and four
  movable pods of the target's priority, so kube-scheduler's preemption can empty no node;
  ``--evict``: 4 evictions and 4 moves.
* ``mixed-N``: movable pods of 1, 2 and 4 GPUs (a random mix per node, each node full), spare
  room of 4 + 2 + 2 GPUs: the cheapest node is one whose pods pack into that room, not always the
  one with the fewest pods.
* ``cascade-N``: 4-pod gangs of 2-GPU pods (``disruptionMode: all``, a Job each) shuffled over
  the nodes, four spare nodes with 4 GPUs free: emptying a node re-creates every gang on it
  whole, and all of their pods need room.
* ``frag-N``: N nodes of 8 GPUs in racks of 8, 1-GPU pods of Deployments (movable, same priority)
  on 60 % of the GPUs spread so that no node is free; a rack-held gang of 4 x 8 GPUs is pending at
  the same priority (moves only).

Per case: the optimal plan's pods moved / evicted and groups disrupted, whether it is proven and
verified by the greedy check, the baseline's counts, and the seconds of make-room (the optimal
plan, the baseline and both checks; no nodes-to-add search). Prints a table and writes CSV.

Run: ``python benchmarks/make_room.py [--cases full interleaved mixed cascade frag] [--sizes 2 4 ...]
[--frag-sizes 1000 5000] [--time-limit 10] [--out CSV]``.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from pathlib import Path

from results_csv import write_csv  # benchmarks/results_csv.py

from gangplan.bench.generators.builders import (
    node_object,
    pod_group_object,
    pod_object,
    to_cluster,
)
from gangplan.solver.room import make_room

OUT = Path(__file__).resolve().parent / "results" / "make_room.csv"
GPU = "nvidia.com/gpu"
RACK = "topology.kubernetes.io/rack"


def _node(i: int, rack: str | None = None):
    labels = {"kubernetes.io/hostname": f"gpu-{i}"}
    if rack:
        labels[RACK] = rack
    return node_object(f"gpu-{i}", cpu="128", memory="2048Gi", gpus=8, labels=labels)


def _pod(name, node, gpus, priority=1, owner=None, group=None, ns="work"):
    return pod_object(
        name,
        namespace=ns,
        requests={"cpu": "1", GPU: gpus},
        node_name=node,
        priority=priority,
        owner=owner,
        group=group,
    )


def _target(gpus=8, pods=1, priority=100, rack=False):
    objs = [
        pod_group_object(
            "target",
            namespace="ml",
            min_count=pods,
            priority=priority,
            topology_key=RACK if rack else None,
        )
    ]
    objs += [
        pod_object(
            f"target-{j}",
            namespace="ml",
            requests={"cpu": "4", GPU: gpus},
            group="target",
            priority=priority,
        )
        for j in range(pods)
    ]
    return objs


def _spare(objs, n, free=(4, 4)):
    """Spare nodes after the N full ones: node ``n + j`` has ``free[j]`` GPUs free (the rest held
    by a bare pod of the target's priority, which nothing moves)."""
    for j, f in enumerate(free):
        objs.append(_node(n + j))
        objs.append(_pod(f"spare-{j}", f"gpu-{n + j}", 8 - f, priority=100))


def build(case: str, n: int, seed: int = 0):
    rng = random.Random(seed * 1000 + n)
    objs = [_node(i, rack=f"rack-{i // 8}" if case == "frag" else None) for i in range(n)]
    rs = ("ReplicaSet", "serve")
    if case == "full":
        for i in range(n):
            objs += [_pod(f"p-{i}-{k}", f"gpu-{i}", 1, priority=100, owner=rs) for k in range(8)]
        _spare(objs, n)
        objs += _target()
    elif case == "interleaved":
        for i in range(n):
            for k in range(8):
                if k % 2:
                    objs.append(_pod(f"p-{i}-{k}", f"gpu-{i}", 1, priority=100, owner=rs))
                else:
                    objs.append(_pod(f"p-{i}-{k}", f"gpu-{i}", 1, priority=rng.randint(1, 5)))
        _spare(objs, n)
        objs += _target()
    elif case == "mixed":
        for i in range(n):
            left, k = 8, 0
            while left:
                g = rng.choice([s for s in (1, 2, 4) if s <= left])
                objs.append(_pod(f"p-{i}-{k}", f"gpu-{i}", g, priority=100, owner=rs))
                left, k = left - g, k + 1
        _spare(objs, n, free=(4, 2, 2))
        objs += _target()
    elif case == "cascade":
        gangs = n  # four 2-GPU pods each, four 2-GPU slots per node
        for g in range(gangs):
            pg = pod_group_object(f"ray-{g}", namespace="work", min_count=4, priority=100)
            pg["spec"]["disruptionMode"] = {"all": {}}
            objs.append(pg)
        slots = [i for i in range(n) for _ in range(4)]  # four 2-GPU slots per node
        rng.shuffle(slots)
        for k, i in enumerate(slots):
            g = k // 4
            objs.append(
                _pod(
                    f"ray-{g}-{k % 4}",
                    f"gpu-{i}",
                    2,
                    priority=100,
                    group=f"ray-{g}",
                    owner=("Job", f"ray-{g}"),
                )
            )
        _spare(objs, n, free=(4, 4, 4, 4))
        objs += _target()
    elif case == "frag":
        used = int(0.6 * 8 * n)
        per = [0] * n
        for k in range(used):
            i = k % n if k < n else rng.randrange(n)
            while per[i] >= 8:
                i = rng.randrange(n)
            per[i] += 1
            objs.append(
                _pod(f"web-{k}", f"gpu-{i}", 1, priority=100, owner=("ReplicaSet", f"web-{k % 50}"))
            )
        objs += _target(pods=4, priority=100, rack=True)
    return to_cluster(objs, source=f"<{case}-{n}>")


def run(case: str, n: int, time_limit: float) -> dict:
    cluster = build(case, n)
    t0 = time.perf_counter()
    doc = make_room(
        cluster, ["ml/target"], evict=case == "interleaved", add_nodes=False, time_limit=time_limit
    )
    seconds = time.perf_counter() - t0
    o, b = doc.optimal, doc.baseline
    return {
        "case": case,
        "nodes": n,
        "running_pods": len(cluster.bound_pods),
        "optimal_found": o.found,
        "optimal_moves": len(o.moves),
        "optimal_evictions": len(o.evictions),
        "optimal_groups": o.cost.groups,
        "proven": doc.proven,
        "verified": doc.verified,
        "baseline_found": b.found,
        "baseline_moves": len(b.moves),
        "baseline_evictions": len(b.evictions),
        "baseline_groups": b.cost.groups,
        "seconds": round(seconds, 2),
        "load": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--cases", nargs="+", default=["full", "interleaved", "mixed", "cascade", "frag"]
    )
    ap.add_argument("--sizes", nargs="+", type=int, default=[2, 4, 8, 16, 32, 64, 128])
    ap.add_argument("--frag-sizes", nargs="+", type=int, default=[1000, 5000])
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    rows = []
    head = f"{'case':<12}{'nodes':>6}{'opt mv/ev/grp':>15}{'proven':>8}{'works':>7}{'base mv/ev/grp':>16}{'s':>8}"
    print(head)
    for case in args.cases:
        for n in args.frag_sizes if case == "frag" else args.sizes:
            if case == "cascade" and n < 4:
                continue
            r = run(case, n, args.time_limit)
            rows.append(r)
            opt = (
                f"{r['optimal_moves']}/{r['optimal_evictions']}/{r['optimal_groups']}"
                if r["optimal_found"]
                else "none"
            )
            base = (
                f"{r['baseline_moves']}/{r['baseline_evictions']}/{r['baseline_groups']}"
                if r["baseline_found"]
                else "none"
            )
            print(
                f"{case:<12}{n:>6}{opt:>15}{str(r['proven']):>8}{str(r['verified']):>7}{base:>16}{r['seconds']:>8}",
                flush=True,
            )
    write_csv(args.out, rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
