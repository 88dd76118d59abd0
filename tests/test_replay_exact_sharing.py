"""The exact timed-replay policies ``shadow`` and ``optimal`` on GPU-sharing traces (issue 22,
items 4 and 5): the epoch state written with DRA consumable capacity (KEP-5075,
:mod:`gangplan.replay.shadow` "GPU sharing").

* shadow, one node of 2 GPUs with a 600-milli pod running on each device: a pending whole GPU
  fails while two 400-milli pods fit, and the exact engine admits exactly those (running shares
  fixed on the devices the placer gave them);
* optimal, the same node empty and four shares 300, 300, 700, 700: first-fit greedy starts
  three, the optimum all four, each pod on the devices the exact engine named (the placer's own
  first fit would not hold them);
* an exported sharing epoch is a snapshot the loader reads and ``gangplan diff`` runs on;
* the relaxation repair: five shares no two devices hold (sum 2000 on 2 x 1000), the relaxed
  optimum admits five, the answer four (a brute force's maximum), FEASIBLE, validated;
* whole-GPU traces keep ``nvidia.com/gpu`` (no DRA objects);
* openb: the first 150 pods of the default trace on 24 nodes, ``--policy optimal``, every
  epoch OPTIMAL or FEASIBLE, never fewer jobs than greedy, every CP-SAT Result validated.

Every exact Result goes through the validator (:func:`gangplan.solver.validate.validate`).
"""

from __future__ import annotations

import csv
import itertools
import json
import lzma
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io.loader import load_snapshot
from gangplan.models.cluster import Cluster
from gangplan.models.objects import Node
from gangplan.models.well_known import GPU
from gangplan.replay.optimal import run_optimal
from gangplan.replay.shadow import DRIVER, Shadow, epoch_objects, solve_epoch
from gangplan.replay.timed import run_timed
from gangplan.replay.traces import ReplayJob
from gangplan.solver.validate import validate

runner = CliRunner()
DATA = Path(__file__).parent / "data" / "traces" / "alibaba-gpu-v2023"


def _node(name: str, gpus: int) -> Node:
    return Node(
        name=name,
        labels={"kubernetes.io/hostname": name},
        allocatable={"cpu": 32000, "memory": 64 << 30, "pods": 110, GPU: gpus},
    )


def _job(name: str, submit: float, duration: float, milli: int, gpu: int = 1) -> ReplayJob:
    return ReplayJob(
        name=name,
        submit=submit,
        duration=duration,
        workers=1,
        cpu_milli=1000,
        memory_mib=1024,
        gpu=gpu,
        gpu_milli=milli,
    )


def _one_node() -> Cluster:
    return Cluster(nodes=(_node("n0", 2),))


# a (600) and b (600) share nothing: first fit puts a on gpu-0, b on gpu-1 (400 left on each);
# at t=1 the whole GPU w fails, c and d (400 each) fit one per device
SHADOW_JOBS = [
    _job("a", 0, 100, 600),
    _job("b", 0, 100, 600),
    _job("w", 1, 10, 1000),
    _job("c", 1, 10, 400),
    _job("d", 1, 10, 400),
]


def test_shadow_fixes_running_shares_and_admits_the_two_that_fit(checked):
    sh = Shadow(time_limit=5)
    run = run_timed(_one_node(), SHADOW_JOBS, "default", 0, typical=[], shadow=sh)
    assert [r.start for r in run.records] == [0, 0, 100, 1, 1]
    at1 = next(es for es in checked if es.record.time == 1)
    rec = at1.record
    assert (rec.greedy_jobs, rec.exact_jobs, rec.greedy_gpus, rec.exact_gpus, rec.status) == (
        2,
        2,
        0.8,
        0.8,
        "OPTIMAL",
    )
    assert sorted(at1.placements) == [3, 4]  # c and d, not w
    # the running shares are where the placer put them, 600 milli on each device
    assert at1.cluster.dra.consumed == {
        (DRIVER, "n0", "gpu-0"): {(DRIVER, "milli"): 600},
        (DRIVER, "n0", "gpu-1"): {(DRIVER, "milli"): 600},
    }
    assert sorted(d for v in at1.devices.values() for d in v) == [(0,), (1,)]
    assert all(e.status == "OPTIMAL" for e in sh.records) and len(checked) == len(sh.records)


def test_optimal_packs_the_shares_first_fit_greedy_strands(checked):
    jobs = [
        _job("a", 0, 100, 300),
        _job("b", 0, 100, 300),
        _job("c", 0, 100, 700),
        _job("d", 0, 100, 700),
    ]
    greedy = run_timed(_one_node(), jobs, "default", 0, typical=[])
    assert [r.start for r in greedy.records] == [0, 0, 0, 100]  # a, b on gpu-0, c on gpu-1, d waits
    tr = run_optimal(_one_node(), jobs, 0, typical=[], shadow=Shadow(time_limit=5))
    assert [r.start for r in tr.records] == [0, 0, 0, 0]
    rec = tr.shadow.records[0]
    assert (
        rec.greedy_jobs,
        rec.exact_jobs,
        rec.greedy_gpus,
        rec.exact_gpus,
        rec.regret_jobs,
        rec.status,
    ) == (3, 4, 1.3, 2, 1, "OPTIMAL")
    assert len(checked) == 1
    # each device holds 300 + 700 (the exact engine's devices, not the placer's first fit)
    devs = checked[0].devices
    assert sorted((jobs[k].gpu_milli, d) for k, v in devs.items() for (d,) in v) in (
        [(300, 0), (300, 1), (700, 0), (700, 1)],
    )
    assert max(a for _, a, _ in tr.changes) == 2


def test_an_exported_sharing_epoch_loads_and_gangplan_diff_runs(tmp_path, checked):
    sh = Shadow(time_limit=5, export=(1, str(tmp_path)))
    run_timed(_one_node(), SHADOW_JOBS, "default", 0, typical=[], shadow=sh)
    path = tmp_path / "epoch-1.yaml"
    assert sh.exported == str(path)
    text = path.read_text()
    assert "allowMultipleAllocations: true" in text and "nvidia.com/gpu:" not in text
    snap = load_snapshot(path)
    assert snap.warnings == ()
    assert sorted(p.name for p in snap.pods if p.node_name is None) == ["j2-0", "j3-0", "j4-0"]
    diff = runner.invoke(app, ["diff", str(path), "--time-limit", "5"])
    assert diff.exit_code in (0, 1), diff.output


def _max_shares(free: list[int], asks: list[int]) -> int:
    best = 0
    for assign in itertools.product(range(len(free) + 1), repeat=len(asks)):
        used = [0] * len(free)
        for a, d in zip(asks, assign, strict=True):
            if d < len(free):
                used[d] += a
        if all(u <= f for u, f in zip(used, free, strict=True)):
            best = max(best, sum(d < len(free) for d in assign))
    return best


def test_the_relaxation_repair_gives_an_allocatable_answer():
    """450, 450, 450, 350, 300 (2000 milli) on 2 devices of 1000: the engine's capacity rows (a
    bin-packing relaxation, docs/explanation/dra.md) admit all five, which no allocation holds;
    the repaired answer admits four, the brute force's maximum, and is not called OPTIMAL."""
    asks = [450, 450, 450, 350, 300]
    jobs = [_job(f"s{i}", 0, 10, a) for i, a in enumerate(asks)]
    nodes = _one_node().nodes
    greedy = {0: ["n0"], 1: ["n0"], 2: ["n0"], 3: ["n0"]}  # first fit: 450+450 | 450+350, 300 fails
    es = solve_epoch(0.0, 0, nodes, jobs, {}, list(range(5)), greedy, time_limit=5, seed=0)
    assert validate(es.cluster, es.result) == []
    assert es.record.exact_jobs == _max_shares([1000, 1000], asks) == 4
    assert (
        es.record.repairs >= 1
        and es.record.status == "FEASIBLE"
        and es.record.gap == pytest.approx(0.2)
    )
    used = [0, 0]
    for k, v in es.devices.items():
        for (d,) in v:
            used[d] += asks[k]
    assert max(used) <= 1000


def test_whole_gpu_traces_keep_nvidia_gpu():
    jobs = [
        ReplayJob(name="a", submit=0, duration=1, workers=1, cpu_milli=1000, memory_mib=1024, gpu=2)
    ]
    objs = epoch_objects((_node("n0", 8),), jobs, {}, [0])
    assert not any(o["apiVersion"].startswith("resource.k8s.io") for o in objs)
    pod = next(o for o in objs if o["kind"] == "Pod")
    assert (
        pod["spec"]["containers"][0]["resources"]["requests"][GPU] == "2"
        and "resourceClaims" not in pod["spec"]
    )
    assert next(o for o in objs if o["kind"] == "Node")["status"]["allocatable"][GPU] == "8"


def _head(src: Path, dst: Path, rows: int) -> Path:
    with lzma.open(src, "rt") as f:
        lines = [next(f) for _ in range(rows + 1)]
    dst.write_text("".join(lines))
    return dst


def test_openb_optimal_timed_run_never_below_greedy(tmp_path, checked, capsys):
    pods = _head(DATA / "openb_pod_list_default.csv.xz", tmp_path / "pods.csv", 150)
    nodes = _head(DATA / "openb_node_list_gpu_node.csv.xz", tmp_path / "nodes.csv", 24)
    d = tmp_path / "out"
    t = time.perf_counter()
    res = runner.invoke(
        app,
        [
            "replay",
            str(pods),
            "--nodes",
            str(nodes),
            "--mode",
            "timed",
            "--policy",
            "optimal",
            "--arrival-scale",
            "1000",
            "--exact-time-limit",
            "2",
            "--out",
            str(d),
        ],
    )
    wall = time.perf_counter() - t
    assert res.exit_code == 0, res.output
    with open(d / "epochs.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(r["status"] in ("OPTIMAL", "FEASIBLE") for r in rows)
    assert all(int(r["exact_jobs"]) >= int(r["greedy_jobs"]) for r in rows)
    run = json.loads((d / "summary.json").read_text())["runs"][0]
    assert run["epochs"] == len(rows)
    fractional = sum(1 for r in csv.DictReader(pods.open()) if 0 < int(r["gpu_milli"]) < 1000)
    assert fractional > 0
    cpsat = len(checked)
    with capsys.disabled():
        print(
            f"\nopenb optimal: {len(rows)} epochs, {cpsat} CP-SAT epochs, {sum(int(r['regret_jobs']) for r in rows)} regret jobs, "
            f"{sum(e.record.repairs for e in checked)} repairs, {fractional} sharing pods, wall {wall:.1f} s"
        )
    assert cpsat >= 10
