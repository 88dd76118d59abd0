"""Fill mode's fragmentation and stranded GPUs (:mod:`gangplan.replay.frag`; the FGD simulator's
``pkg/utils/frag.go`` NodeGpuShareFragAmount and ``analysis.go`` ClusterGpuFragReport), and the
unrounded milli counts of summary.json. Placements go through the validator."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from gangplan.models.cluster import Cluster
from gangplan.models.replay import ReplaySummary
from gangplan.models.result import PodOutcome, Result, Status
from gangplan.models.well_known import GPU, GPU_PRODUCT
from gangplan.replay import replay, write_outputs
from gangplan.replay.engine import Placer
from gangplan.replay.frag import FragMeter, at_arrived
from gangplan.replay.policies import TypicalPod, typical_pods
from gangplan.replay.run import trace_shapes
from gangplan.replay.traces import ReplayJob, read_nodes, read_trace
from gangplan.solver.greedy.testing import make_cluster, make_node
from gangplan.solver.validate import validate

DATA = Path(__file__).parent / "data" / "replay"
GI = 2**30


def _validate(placer: Placer) -> None:
    pods = [p for ps in placer.pods.values() for p in ps]
    cluster = Cluster(nodes=placer.cluster.nodes, pods=tuple(pods))
    node_of = {k: placer.snap.names[i] for k, (i, *_rest) in placer.devices.held.items()}
    assert (
        validate(
            cluster,
            Result(
                engine="greedy",
                status=Status.HEURISTIC,
                pods={p.key: PodOutcome(node=node_of[p.key]) for p in pods},
            ),
        )
        == []
    )


def _brute(placer: Placer, typical: list[TypicalPod]) -> tuple[float, int]:
    """frag.go's definition, node by node and typical pod by typical pod."""
    dev = placer.devices
    total_freq = sum(t.freq for t in typical)
    frag = 0.0
    stranded = 0
    for i, node in enumerate(placer.cluster.nodes):
        free = [int(x) for x in dev.free[i, : dev.count[i]]]
        left = sum(free)
        cpu = int(dev.cpu_left(np.array([i]))[0])
        model = node.labels.get(GPU_PRODUCT)
        any_fit = False
        for t in typical:
            p = t.freq / total_freq
            if t.gpu == 0 or t.gpu_milli == 0:
                frag += p * left  # XL / XR: every idle milli
                continue
            fits = (
                sum(f >= t.gpu_milli for f in free) >= t.gpu
                and cpu >= t.cpu_milli
                and (not t.models or model in t.models)
            )
            if fits:  # Q3: only the devices short of t's milli
                any_fit = True
                frag += p * sum(f for f in free if f < t.gpu_milli)
            else:
                frag += p * left
        if not any_fit:
            stranded += left
    return frag, stranded


def test_a_hand_computed_state():
    nodes = [
        make_node("a", cpu=32000, memory=64 * GI, labels={GPU_PRODUCT: "T4"}, extra={GPU: 2}),
        make_node("b", cpu=500, memory=64 * GI, labels={GPU_PRODUCT: "T4"}, extra={GPU: 1}),
    ]
    typical = [TypicalPod(1000, 1, 500, (), 0.5), TypicalPod(1000, 1, 1000, (), 0.5)]
    placer = Placer(make_cluster(nodes), "default", seed=0, typical=typical)
    meter = FragMeter(placer.devices, typical)
    assert meter.sample() == (
        1000.0,
        1000,
        3000,
    )  # a fits both; b (cpu 500) fits neither: all its 1000 milli
    job = ReplayJob(
        name="s",
        submit=0,
        duration=1,
        workers=1,
        cpu_milli=1000,
        memory_mib=1024,
        gpu=1,
        gpu_milli=300,
    )
    assert placer.place(job, "j0")
    _validate(placer)
    # a: free 700 + 1000; the 500-milli pod fits with no short device, the whole GPU leaves the 700 short
    frag, stranded, idle = meter.sample()
    assert (frag, stranded, idle) == (0.5 * 700 + 1000.0, 1000, 2700)
    assert (frag, stranded) == _brute(placer, typical)


@pytest.mark.parametrize("policy", ["fgd", "default"])
def test_the_meter_follows_every_job_of_a_fill_and_equals_fgds_f(policy):
    cluster = read_nodes(DATA / "nodes.yaml")
    jobs = read_trace(DATA / "jobs.csv").jobs
    typical = typical_pods(trace_shapes(jobs))
    placer = Placer(cluster, policy, seed=3, typical=typical)
    meter = FragMeter(placer.devices, typical)
    for k, j in enumerate(jobs):
        placer.place(j, f"j{k}")
        frag, stranded, idle = meter.sample()
        bf, bs = _brute(placer, typical)
        assert frag == pytest.approx(bf) and stranded == bs
        assert 0 <= stranded <= idle and 0 <= frag <= idle + 1e-6
        if placer.fgd is not None:  # the scorer's own F, summed over nodes
            dev = placer.devices
            idx = np.arange(dev.snap.n)
            assert frag == pytest.approx(
                float(
                    placer.fgd.frag(
                        dev, dev.free[idx], dev.cpu_left(idx), dev.model_codes[idx]
                    ).sum()
                )
            )
    _validate(placer)


def test_at_arrived_reads_the_last_sample_at_or_below_k():
    # capacity 1000 milli; samples at arrived 0, 15 and 25 %
    got = at_arrived([0, 150, 250], [1.0, 2.0, 3.0], 1000, 30)
    assert got[9] == 1.0 and got[14] == 2.0 and got[24] == 3.0 and got[29] == 3.0


def test_fill_outputs_carry_fragmentation_stranded_and_milli(tmp_path):
    out = replay(DATA / "jobs.csv", DATA / "nodes.yaml", policies=["fgd", "default"], seeds=[1])
    write_outputs(out, tmp_path, report=False)
    doc = json.loads((tmp_path / "summary.json").read_text())
    ReplaySummary.model_validate(doc)
    for r, fr in zip(doc["runs"], out.fill, strict=True):
        assert (
            r["requestedGpuMilli"] == fr.arrived[-1]
            and r["requestedGpus"] == fr.arrived[-1] // 1000
        )
        assert (
            r["allocatedGpuMilli"] == fr.allocated[-1]
            and r["allocatedGpus"] == fr.allocated[-1] // 1000
        )
        idle = fr.capacity_milli - fr.allocated[-1]
        assert r["fragGpuMilli"] == pytest.approx(fr.frag[-1])
        assert r["fragmentationRatePercent"] == pytest.approx(100 * fr.frag[-1] / idle)
        assert r["fragmentationPercent"] == pytest.approx(100 * fr.frag[-1] / fr.capacity_milli)
        assert 0 <= r["strandedGpuMilli"] <= idle
    rows = list(csv.DictReader((tmp_path / "timeseries.csv").open()))
    assert list(rows[0]) == [
        "policy",
        "seed",
        "arrived_percent",
        "unallocated_percent",
        "frag_gpus",
        "fragmentation_rate_percent",
        "stranded_gpus",
    ]
    for row in rows:
        assert 0 <= float(row["fragmentation_rate_percent"]) <= 100 + 1e-6
        assert (
            0 <= float(row["stranded_gpus"]) <= float(row["frag_gpus"]) + 1e-6 <= 64 + 1e-6
        )  # a stranded GPU is a fragment for every typical pod


def test_timed_summary_counts_milli_and_flushes(tmp_path):
    out = replay(DATA / "jobs.csv", DATA / "nodes.yaml", mode="timed", policies=["default"])
    r = out.summary.runs[0]
    assert r.requested_gpu_milli == sum(
        j.gpu_milli_total for j in read_trace(DATA / "jobs.csv").jobs
    )
    assert (
        r.allocated_gpu_milli == r.allocated_gpus * 1000
        and r.unschedulable_flushes == out.timed[0].flushed > 0
    )
