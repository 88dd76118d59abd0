"""The fill-mode packing bound (issue 22, item 4; gangplan/replay/bound.py): column generation over
per-node patterns. On tiny clusters the best packing is found by enumeration and the bound must
not exceed it in allocated milli (equal where the pattern LP is integral); on a small seeded fill
no policy's unallocated % (placements checked by the validator and the device books) goes below
the bound at any arrived percent."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gangplan.models.cluster import Cluster
from gangplan.models.result import PodOutcome, Result, Status
from gangplan.models.well_known import GPU, GPU_PRODUCT
from gangplan.replay.bound import arrived_prefix, packing_bound
from gangplan.replay.engine import Placer
from gangplan.replay.fill import capacity_milli, discrete, fill_order
from gangplan.replay.policies import typical_pods
from gangplan.replay.run import trace_shapes
from gangplan.replay.traces import MIB, ReplayJob
from gangplan.solver.greedy.testing import make_node
from gangplan.solver.validate import validate

GI = 2**30


def node(
    name: str, gpus: int, cpu: int = 32000, mem_gi: int = 64, model: str = "T4", pods: int = 110
):
    return make_node(
        name, cpu=cpu, memory=mem_gi * GI, pods=pods, extra={GPU: gpus}, labels={GPU_PRODUCT: model}
    )


def job(
    name: str,
    count: int,
    milli: int = 1000,
    cpu: int = 1000,
    mem_mib: int = 1024,
    models: tuple[str, ...] = (),
) -> ReplayJob:
    return ReplayJob(
        name=name,
        submit=0,
        duration=1,
        workers=1,
        cpu_milli=cpu,
        memory_mib=mem_mib,
        gpu=count,
        gpu_milli=milli if count else 0,
        gpu_models=models,
    )


def fits_node(n, pods: list[ReplayJob]) -> bool:
    """One node holds ``pods``: cpu, memory, pod slots, model, and some assignment of every pod's
    GPU requests to distinct devices with at most 1000 milli per device (enumerated)."""
    a = n.allocatable
    if (
        sum(p.cpu_milli for p in pods) > a["cpu"]
        or sum(p.memory_mib * MIB for p in pods) > a["memory"]
        or len(pods) > a["pods"]
    ):
        return False
    if any(p.gpu_models and n.labels[GPU_PRODUCT] not in p.gpu_models for p in pods):
        return False
    g = a[GPU]
    if any(p.gpu > g for p in pods):
        return False

    def place(i: int, load: tuple[int, ...]) -> bool:
        if i == len(pods):
            return True
        p = pods[i]
        for devs in itertools.combinations(range(g), p.gpu):
            if all(load[d] + p.gpu_milli <= 1000 for d in devs):
                nxt = list(load)
                for d in devs:
                    nxt[d] += p.gpu_milli
                if place(i + 1, tuple(nxt)):
                    return True
        return False

    return place(0, (0,) * g)


def brute_force(base: Cluster, jobs: list[ReplayJob]) -> int:
    """The most GPU milli any placement of a subset of ``jobs`` allocates (every pod to a node or
    to none)."""
    best = 0
    gpu_jobs = [j for j in jobs if j.gpu]
    for choice in itertools.product(range(len(base.nodes) + 1), repeat=len(gpu_jobs)):
        per = [
            [j for j, c in zip(gpu_jobs, choice, strict=True) if c == k]
            for k in range(len(base.nodes))
        ]
        total = sum(
            j.gpu_milli_total for j, c in zip(gpu_jobs, choice, strict=True) if c < len(base.nodes)
        )
        if total > best and all(fits_node(n, ps) for n, ps in zip(base.nodes, per, strict=True)):
            best = total
    return best


CASES = [
    # shares that pack 2 + 1 on a node's two devices only if split 700 | 300 + 600 ...
    (
        Cluster(nodes=(node("a", 2), node("b", 1))),
        [job("s1", 1, 700), job("s2", 1, 600), job("s3", 1, 300), job("s4", 1, 600), job("w", 1)],
    ),
    # cpu binds before the GPUs: 3 cores per node, each pod 2 cores
    (
        Cluster(nodes=(node("a", 2, cpu=3000), node("b", 2, cpu=3000))),
        [job(f"p{i}", 1, 500, cpu=2000) for i in range(4)],
    ),
    # a 2-GPU pod and shares above 500 competing for devices; a model constraint
    (
        Cluster(nodes=(node("a", 2), node("b", 2, model="V100"))),
        [
            job("w2", 2),
            job("s1", 1, 600),
            job("s2", 1, 600),
            job("v", 1, 900, models=("V100",)),
            job("t", 1, 400, models=("T4",)),
        ],
    ),
    # pod slots and memory: 2 pods per node, a 40 GiB pod twice on a 64 GiB node
    (
        Cluster(nodes=(node("a", 2, pods=2), node("b", 1, mem_gi=64))),
        [
            job("m1", 1, 300, mem_mib=40 * 1024),
            job("m2", 1, 300, mem_mib=40 * 1024),
            job("x", 1, 200),
            job("y", 1, 200),
            job("z", 1, 900),
        ],
    ),
    # shares of several devices (2 x 400) beside a 700 share
    (
        Cluster(nodes=(node("a", 2),)),
        [job("d", 2, 400), job("e", 1, 700), job("f", 1, 600), job("g", 1, 300)],
    ),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_bound_is_at_least_the_best_packing_found_by_enumeration(case):
    base, jobs = CASES[case]
    b = packing_bound(base, jobs, method="patterns", integer=True)
    best = brute_force(base, jobs)
    assert b.capacity_milli == capacity_milli(base)
    assert b.allocatable_milli >= best - 1e-6
    # the integer packing of the generated patterns is a real placement: at most the enumeration's best
    assert b.integer_milli is not None and b.integer_milli <= best
    assert b.unallocated_percent <= 100 * (b.capacity_milli - best) / b.capacity_milli + 1e-9
    assert b.status == "optimal" and b.gap_percent == pytest.approx(0, abs=1e-3)


def test_hand_made_cases_where_the_pattern_lp_is_integral():
    # case 0: a holds {700, 300} and {600}, b the whole GPU: every pod but one 600 share, 2600
    base, jobs = CASES[0]
    assert brute_force(base, jobs) == 2600
    assert packing_bound(base, jobs, method="patterns").allocatable_milli == pytest.approx(2600)
    # case 1: one 2-core pod per node (3 cores): 1000 of 4000; the aggregated LP said 1500
    base, jobs = CASES[1]
    b = packing_bound(base, jobs, method="patterns")
    assert brute_force(base, jobs) == 1000 and b.allocatable_milli == pytest.approx(1000)
    assert b.unallocated_percent == 75.0
    # case 4: one node of 2 devices: {400, 600} and {400, 300}: 1700 of the 2300 arrived
    base, jobs = CASES[4]
    assert (
        brute_force(base, jobs)
        == packing_bound(base, jobs, method="patterns").allocatable_milli
        == 1700
    )


def test_cpu_per_node_binds_where_the_aggregated_lp_did_not():
    """Two 1-GPU nodes of 3 cores, five 400 shares of 1.5 cores: two per node (cpu), 1600 of
    2000; the class's totals (6 cores, 2000 milli) would allow 1600 too, but by splitting pods."""
    base = Cluster(nodes=(node("a", 1, cpu=3000), node("b", 1, cpu=3000)))
    jobs = [job(f"p{i}", 1, 400, cpu=1500) for i in range(5)]
    b = packing_bound(base, jobs, method="patterns")
    best = brute_force(base, jobs)
    assert best == 1600 and b.allocatable_milli >= best
    assert b.allocatable_milli <= 2000


def test_arrived_prefix_covers_every_sample_the_metric_reads():
    # capacity 2000: ratios 50, 100, 150; at 100 the jobs up to 100 %
    js = [job("x", 1), job("y", 1), job("z", 1)]
    assert arrived_prefix(js, 2000, 100) == js[:2]
    # capacity 1000 and 1-GPU jobs: ratios 100, 200, 300; no sample rounds to 150, so the metric
    # reads 149..151 (none) and then the last at or below; at 199 it averages 198..200: job y
    assert arrived_prefix(js, 1000, 199) == js[:2]
    assert arrived_prefix(js, 1000, 100) == js[:1]


def check_devices(placer: Placer) -> None:
    dev = placer.devices
    used = np.zeros_like(dev.free)
    for i, devices, milli, _ in dev.held.values():
        for d in devices:
            used[i, d] += milli
    cols = np.arange(dev.width)[None, :] < dev.count[:, None]
    assert (dev.free >= 0).all() and (dev.free == np.where(cols, 1000 - used, 0)).all()


def validate_placer(placer: Placer) -> None:
    pods = [p for ps in placer.pods.values() for p in ps]
    cluster = Cluster(nodes=placer.cluster.nodes, pods=tuple(pods))
    node_of = {k: placer.snap.names[i] for k, (i, *_rest) in placer.devices.held.items()}
    result = Result(
        engine="greedy",
        status=Status.HEURISTIC,
        pods={p.key: PodOutcome(node=node_of[p.key]) for p in pods},
    )
    assert validate(cluster, result) == []
    check_devices(placer)


def small_trace(n: int, seed: int) -> list[ReplayJob]:
    rng = np.random.default_rng(seed)
    shapes = [
        (1, 1000, 8000),
        (1, 810, 11000),
        (1, 470, 4000),
        (1, 320, 3000),
        (2, 1000, 16000),
        (1, 650, 6000),
        (1, 230, 2000),
        (4, 1000, 30000),
    ]
    out = []
    for i in range(n):
        g, m, cpu = shapes[int(rng.integers(len(shapes)))]
        out.append(job(f"j{i:03d}", g, m, cpu=cpu, mem_mib=cpu // 1000 * 4096))
    return out


@pytest.mark.parametrize("policy", ["fgd", "bestfit", "default", "random"])
def test_no_policy_goes_below_the_bound_on_a_seeded_fill(policy):
    base = Cluster(
        nodes=(
            *(node(f"g{i}", 8, cpu=64000, mem_gi=256) for i in range(3)),
            *(node(f"t{i}", 2, cpu=24000, mem_gi=96) for i in range(3)),
        )
    )
    jobs = small_trace(60, 5)
    cap = capacity_milli(base)
    order, nodes = fill_order(base, jobs, 11)
    placer = Placer(
        base, policy, seed=11, typical=typical_pods(trace_shapes(jobs)), node_order=nodes
    )
    arrived, used, total = [0], [placer.allocated_milli], 0
    for k, j in enumerate(order):
        total += j.gpu_milli_total
        placer.place(j, f"j{k}")
        arrived.append(total)
        used.append(placer.allocated_milli)
    validate_placer(placer)
    curve = discrete(arrived, used, cap)
    pool: dict = {}
    prev = None
    for k in (50, 80, 100, 110, 130):
        b = packing_bound(base, arrived_prefix(order, cap, k), method="patterns", pool=pool)
        assert b.status == "optimal"
        assert b.unallocated_percent <= curve[str(k)] + 1e-9, (k, b, curve[str(k)])
        # every pattern meets the per-node rows the aggregated LP sums over a class: never looser
        assert (
            b.allocatable_milli
            <= packing_bound(base, arrived_prefix(order, cap, k)).allocatable_milli + 1e-3
        )
        if prev is not None:  # more arrived never lowers what a packing can allocate
            assert b.allocatable_milli >= prev - 1e-6
        prev = b.allocatable_milli


def test_a_stopped_generation_still_reports_a_bound_with_its_gap():
    """With no work allowed beyond one round the master's duals give the Lagrangian bound: at
    least the converged LP (so still a bound on every packing), its gap to the master reported."""
    base = Cluster(
        nodes=(
            *(node(f"g{i}", 8, cpu=64000, mem_gi=256) for i in range(3)),
            *(node(f"t{i}", 2, cpu=24000, mem_gi=96) for i in range(3)),
        )
    )
    jobs = small_trace(60, 5)
    cap = capacity_milli(base)
    order, _ = fill_order(base, jobs, 11)
    arrived = arrived_prefix(order, cap, 110)
    full = packing_bound(base, arrived, method="patterns")
    cut = packing_bound(base, arrived, method="patterns", work_limit=0.0, pricing_limit=0.01)
    assert full.status == "optimal" and full.gap_percent == pytest.approx(0, abs=1e-3)
    assert cut.allocatable_milli >= full.allocatable_milli - 1e-3
    assert cut.master_milli is not None and cut.master_milli <= full.allocatable_milli + 1e-3
    if cut.status == "limit":
        assert cut.gap_percent is not None and cut.gap_percent >= 0
