"""Kueue's admission against the optimum under the same quota (issue 42), on generated clusters.

Cases (built in memory, seeded):

* ``tas-N``: N nodes of 8 GPUs in racks of 8 (Kueue ``Topology`` rack / hostname), one TAS
  flavor; four team ClusterQueues in one cohort, each with a quarter of the GPUs as nominal quota;
  about 40 % of the GPUs already used by bound pods; per team ``N / 8`` suspended Jobs of 1-8 pods
  of 4 or 8 GPUs, each holding its pods in one rack (``podset-required-topology``).
* ``flavors-N``: the same without TAS, two pools (a100 / h100 node labels) as two flavors in that
  order in every ClusterQueue, jobs of 1-4 pods of 2, 4 or 8 GPUs.

Per case: the greedy run (Kueue's admission, then kube-scheduler) in seconds with its cycles,
Workloads admitted and running whole (every pod placed: what the objective counts), the exact
engine's status, Workloads admitted and running, whether the admission tiers are proven, the
diff's classification and its wall time. Prints a table and writes CSV (with the machine's load).

Run: ``python benchmarks/kueue_admission.py [--cases tas flavors] [--sizes 64 256 1024]
[--time-limit 10] [--seed 0] [--out CSV]``.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from pathlib import Path

from results_csv import write_csv  # benchmarks/results_csv.py

import gangplan as gp

OUT = Path(__file__).resolve().parent / "results" / "kueue_admission.csv"
GPU = "nvidia.com/gpu"
RACK = "cloud.example.com/rack"
TEAMS = ("ml", "cv", "nlp", "rl")


def _node(name: str, rack: str, pool: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, RACK: rack, "pool": pool},
        },
        "status": {"allocatable": {"cpu": "128", "memory": "2Ti", "pods": "110", GPU: "8"}},
    }


def _pod(name: str, node: str, gpus: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "creationTimestamp": "2026-11-01T00:00:00Z",
        },
        "spec": {
            "nodeName": node,
            "containers": [
                {
                    "name": "c",
                    "image": "x",
                    "resources": {"requests": {"cpu": "1"}, "limits": {GPU: str(gpus)}},
                }
            ],
        },
        "status": {"phase": "Running"},
    }


def _job(team: str, i: int, pods: int, gpus: int, minute: int, tas: bool) -> dict:
    template: dict = {
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "train",
                    "image": "x",
                    "resources": {
                        "requests": {"cpu": "4", "memory": "32Gi"},
                        "limits": {GPU: str(gpus)},
                    },
                }
            ],
        }
    }
    if tas:
        template["metadata"] = {"annotations": {"kueue.x-k8s.io/podset-required-topology": RACK}}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"{team}-{i}",
            "namespace": team,
            "creationTimestamp": f"2026-12-01T{minute // 60:02d}:{minute % 60:02d}:00Z",
            "labels": {"kueue.x-k8s.io/queue-name": "main"},
        },
        "spec": {"parallelism": pods, "completions": pods, "suspend": True, "template": template},
    }


def build(case: str, n: int, seed: int) -> list[dict]:
    rng = random.Random(seed * 1000 + n)
    tas = case == "tas"
    objs: list[dict] = []
    pools = ("a100", "h100")
    for i in range(n):
        pool = pools[0] if tas or i < n // 2 else pools[1]
        objs.append(_node(f"gpu-{i}", f"r{i // 8}", pool))
        used = rng.choice([0, 0, 4, 8, 8])
        if used:
            objs.append(_pod(f"busy-{i}", f"gpu-{i}", used))
    flavors = ["tas-gpu"] if tas else list(pools)
    for f in flavors:
        spec: dict = {"nodeLabels": {"pool": "a100" if tas else f}}
        if tas:
            spec["topologyName"] = "racks"
        objs.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ResourceFlavor",
                "metadata": {"name": f},
                "spec": spec,
            }
        )
    if tas:
        objs.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "Topology",
                "metadata": {"name": "racks"},
                "spec": {"levels": [{"nodeLabel": RACK}, {"nodeLabel": "kubernetes.io/hostname"}]},
            }
        )
    share = n * 8 // len(TEAMS)
    minute = 0
    for team in TEAMS:
        objs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": team}})
        per_flavor = share if tas else share // 2
        objs.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ClusterQueue",
                "metadata": {"name": team},
                "spec": {
                    "namespaceSelector": {},
                    "cohortName": "all",
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu", "memory", GPU],
                            "flavors": [
                                {
                                    "name": f,
                                    "resources": [
                                        {"name": "cpu", "nominalQuota": str(per_flavor * 16)},
                                        {"name": "memory", "nominalQuota": f"{per_flavor * 128}Gi"},
                                        {"name": GPU, "nominalQuota": str(per_flavor)},
                                    ],
                                }
                                for f in flavors
                            ],
                        }
                    ],
                },
            }
        )
        objs.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": "main", "namespace": team},
                "spec": {"clusterQueue": team},
            }
        )
        for i in range(max(2, n // 8)):
            minute += 1
            if tas:
                pods, gpus = rng.randint(1, 8), rng.choice([4, 8])
            else:
                pods, gpus = rng.randint(1, 4), rng.choice([2, 4, 8])
            objs.append(_job(team, i, pods, gpus, minute, tas))
    return objs


def run(case: str, n: int, seed: int, time_limit: float) -> dict:
    cluster = gp.load(build(case, n, seed))
    t0 = time.perf_counter()
    greedy = gp.solve(cluster, "greedy")
    greedy_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    d = gp.diff(cluster, greedy=greedy, time_limit=time_limit)
    diff_s = time.perf_counter() - t1
    assert gp.validate(cluster, d.greedy) == [] and gp.validate(cluster, d.optimal) == []
    k = d.kueue
    return {
        "case": f"{case}-{n}",
        "nodes": n,
        "workloads": k.workloads,
        "greedy_s": round(greedy_s, 2),
        "cycles": greedy.kueue.cycles,
        "kueue_admitted": k.greedy_admitted,
        "kueue_running": k.greedy_running,
        "optimal_admitted": k.optimal_admitted,
        "optimal_running": k.optimal_running,
        "admission_proven": bool(d.proof and d.proof.first_open is None)
        or bool(d.proof and not str(d.proof.first_open).startswith("admitted")),
        "exact_status": d.optimal_status,
        "classification": d.classification,
        "diff_s": round(diff_s + greedy_s, 2),
        "load": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", nargs="+", default=["tas", "flavors"])
    ap.add_argument("--sizes", nargs="+", type=int, default=[64, 256, 1024])
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args()
    rows = []
    for case in a.cases:
        for n in a.sizes:
            row = run(case, n, a.seed, a.time_limit)
            rows.append(row)
            print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    write_csv(a.out, rows)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
