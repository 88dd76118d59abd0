"""Replay outputs before and after a refactor: the same bytes, at no more wall time (issue 38).

Runs ``gangplan replay`` (the CLI, one process per case) on a fixed set of cases that together
drive every path of the replay: fill on the openb GPU nodes (paper policies and the default
profile), timed on a Philly VC (the README's b436b2 run), timed with two priorities (preemption),
timed with rack-held gangs (the KEP-5732 placement algorithm), and the exact policies
(``shadow``, ``optimal``) on the first openb pods (GPU sharing, exact epochs). Each case writes
its ``--out`` directory under ``DIR/<case>``; the script prints the wall time and the sha256 of
``summary.json``, ``jobs.csv``, ``timeseries.csv`` and ``epochs.csv`` per case, and with
``--compare OTHER`` whether each output file is byte-identical (``epochs.csv`` without its measured
``wall_s`` column) to the same case's in ``OTHER`` (a run of another checkout) and the wall-time
ratio.

Run: ``[PYTHONPATH=CHECKOUT] python benchmarks/replay_identity.py DIR [--compare OTHER] [--cases a,b]``. Writes
``benchmarks/results/replay_identity.csv`` (or ``--csv NAME``).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import lzma
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results_csv import write_csv  # benchmarks/results_csv.py

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("GANGPLAN_DATA_DIR") or ROOT / "tests" / "data" / "traces")
OPENB = DATA / "alibaba-gpu-v2023"
PHILLY = DATA / "philly-pollux"
COMPARED = ("summary.json", "jobs.csv", "timeseries.csv", "epochs.csv")


def derived_inputs(work: Path) -> dict[str, Path]:
    """Inputs derived from the traces (written once into ``work``): Philly b436b2 as a jobs.csv
    with priorities 0 / 10 drawn from seed 7, the same held to one rack of 8 nodes, its 64 nodes
    as a snapshot labelled by rack, and the first 150 openb pods with 24 openb GPU nodes."""
    work.mkdir(parents=True, exist_ok=True)
    out = {
        "prio": work / "b436b2-prio.csv",
        "rack": work / "b436b2-rack.csv",
        "racks": work / "racks.yaml",
        "pods150": work / "openb-150.csv",
        "nodes24": work / "openb-24.csv",
    }
    if all(p.exists() for p in out.values()):
        return out
    rng = random.Random(7)
    with lzma.open(PHILLY / "philly.csv.xz", "rt") as f:
        rows = [r for r in csv.DictReader(f) if r["cluster"] == "b436b2"]
    t0 = min(r["timestamp"] for r in rows)
    from datetime import datetime

    def seconds(ts: str) -> float:
        return (datetime.fromisoformat(ts) - datetime.fromisoformat(t0)).total_seconds()

    head = [
        "job",
        "submit",
        "duration",
        "workers",
        "cpu_milli",
        "memory_mib",
        "gpu",
        "priority",
        "required_topology_key",
    ]
    with open(out["prio"], "w", newline="") as fp, open(out["rack"], "w", newline="") as fr:
        wp, wr = csv.writer(fp), csv.writer(fr)
        wp.writerow(head)
        wr.writerow(head)
        for k, r in enumerate(rows[:2500]):
            g = int(r["num_gpus"])
            workers, per = (math.ceil(g / 8), min(g, 8)) if g else (1, 0)
            base = [
                f"j{k}",
                seconds(r["timestamp"]),
                float(r["duration"]),
                workers,
                1000,
                1024,
                per,
            ]
            wp.writerow(base + [rng.choice((0, 10)), ""])
            wr.writerow(base + [0, "rack" if workers > 1 else ""])
    nodes = []
    for i in range(64):
        nodes.append(f"""- apiVersion: v1
  kind: Node
  metadata: {{name: n{i:02d}, labels: {{rack: r{i // 8}, kubernetes.io/hostname: n{i:02d}}}}}
  status:
    allocatable: {{cpu: "64", memory: 512Gi, nvidia.com/gpu: "8", pods: "110"}}""")
    out["racks"].write_text("apiVersion: v1\nkind: List\nitems:\n" + "\n".join(nodes) + "\n")
    with lzma.open(OPENB / "openb_pod_list_default.csv.xz", "rt") as f:
        lines = f.read().splitlines()
    out["pods150"].write_text("\n".join(lines[:151]) + "\n")
    with lzma.open(OPENB / "openb_node_list_gpu_node.csv.xz", "rt") as f:
        lines = f.read().splitlines()
    out["nodes24"].write_text("\n".join(lines[:25]) + "\n")
    return out


def cases(inp: dict[str, Path]) -> dict[str, list[str]]:
    openb_nodes, openb_pods, philly = (
        str(OPENB / "openb_node_list_gpu_node.csv"),
        str(OPENB / "openb_pod_list_default.csv"),
        str(PHILLY / "philly.csv"),
    )
    return {
        "fill-paper": [
            openb_pods,
            "--nodes",
            openb_nodes,
            "--policy",
            "default,fgd,bestfit,random",
            "--seeds",
            "42",
            "--bound",
            "none",
        ],
        "timed-b436b2": [philly, "--vc", "b436b2", "--mode", "timed"],
        "timed-prio": [
            str(inp["prio"]),
            "--nodes",
            str(inp["racks"]),
            "--mode",
            "timed",
            "--arrival-scale",
            "2",
        ],
        "timed-rack": [
            str(inp["rack"]),
            "--nodes",
            str(inp["racks"]),
            "--mode",
            "timed",
            "--policy",
            "default,fgd",
            "--arrival-scale",
            "2",
        ],
        "exact-share": [
            str(inp["pods150"]),
            "--nodes",
            str(inp["nodes24"]),
            "--mode",
            "timed",
            "--policy",
            "shadow,optimal",
        ],
    }


def content(path: Path) -> bytes:
    """The file's bytes; for ``epochs.csv`` without its ``wall_s`` column (each exact solve's
    measured time: the only field that may differ between two runs)."""
    data = path.read_bytes()
    if path.name != "epochs.csv":
        return data
    rows = list(csv.reader(data.decode().splitlines()))
    drop = rows[0].index("wall_s") if rows and "wall_s" in rows[0] else -1
    return "\n".join(",".join(c for k, c in enumerate(r) if k != drop) for r in rows).encode()


def digest(path: Path) -> str:
    return hashlib.sha256(content(path)).hexdigest()[:12] if path.exists() else "-"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", type=Path)
    ap.add_argument("--compare", type=Path)
    ap.add_argument("--cases", default="")
    ap.add_argument("--csv", default="replay_identity.csv")
    a = ap.parse_args()
    inp = derived_inputs(
        Path(tempfile.gettempdir()) / "gangplan-replay-identity"
    )  # one path for every run: summaries name it
    todo = cases(inp)
    names = a.cases.split(",") if a.cases else list(todo)
    load = os.getloadavg()[0]
    print(
        f"load average {load:.2f} at start; gangplan from {subprocess.run([sys.executable, '-c', 'import gangplan; print(gangplan.__file__)'], capture_output=True, text=True).stdout.strip()}"
    )
    rows = []
    for name in names:
        out = a.dir / name
        t = time.perf_counter()
        p = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from gangplan.cli import main; sys.argv[0] = 'gangplan'; main()",
                "replay",
                *todo[name],
                "--out",
                str(out),
            ],
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - t
        if p.returncode != 0:
            print(f"{name}: exit {p.returncode}\n{p.stderr[-2000:]}")
        (out / "wall.txt").write_text(f"{wall:.3f}\n")
        row = {"case": name, "exit": p.returncode, "wall_s": round(wall, 2)}
        for f in COMPARED:
            row[f] = digest(out / f)
        if a.compare:
            other = a.compare / name
            same = all(
                (out / f).exists() == (other / f).exists()
                and (not (out / f).exists() or content(out / f) == content(other / f))
                for f in COMPARED
            )
            base = (
                float((other / "wall.txt").read_text())
                if (other / "wall.txt").exists()
                else math.nan
            )
            row["identical"] = same
            row["base_wall_s"] = round(base, 2)
            row["ratio"] = round(wall / base, 3) if base == base else math.nan
        rows.append(row)
        print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    out_csv = ROOT / "benchmarks" / "results" / a.csv
    write_csv(out_csv, rows)
    print(f"wrote {out_csv.relative_to(ROOT)}; load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
