"""Quickstart: the GB200 showcase, both engines, a diff that reuses their Results, two DataFrames."""

from pathlib import Path

import gangplan as gp

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "scenarios/showcase/tas-nvl72-fragmentation.yaml"

cluster = gp.load(SNAPSHOT)
greedy = gp.solve(cluster, engine="greedy")
optimal = gp.solve(cluster, engine="exact", time_limit=10, hint=greedy)
d = gp.diff(cluster, greedy=greedy, optimal=optimal)  # compares, does not solve again
print(cluster, greedy, optimal, d, sep="\n")
cols = ["group", "greedy_admitted", "optimal_admitted", "greedy_domain", "optimal_domain"]
print(d.to_frame()[cols].to_string())
cols = ["pod", "group", "node", "admitted", "nvidia.com/gpu.clique"]
print(d.optimal.to_frame()[cols].to_string())
