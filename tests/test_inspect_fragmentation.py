"""``inspect``'s fragmentation section (gangplan/fragmentation.py) on a snapshot small enough to
work out by hand, the FGD rule against the replay's meter on the same state, and the engines'
largest gangs through the validator."""

from __future__ import annotations

import json

import pytest

from gangplan.fragmentation import fragmentation, gang_fits
from gangplan.models.objects import PodGroup, Taint
from gangplan.models.well_known import GPU, GPU_PRODUCT, HOSTNAME, RACK
from gangplan.replay.engine import Placer
from gangplan.replay.frag import FragMeter
from gangplan.replay.policies import TypicalPod
from gangplan.replay.traces import ReplayJob
from gangplan.solver.greedy.testing import make_cluster, make_node, make_pod
from gangplan.solver.validate import validate
from gangplan.summary import inspect_json, inspect_summary

GI = 2**30


def _nodes(taint_n2: bool = False):
    def node(name, rack, gpus, taints=()):
        return make_node(
            name,
            cpu=32000,
            memory=256 * GI,
            extra={GPU: gpus},
            labels={RACK: rack, HOSTNAME: name, GPU_PRODUCT: "H100"},
            taints=taints,
        )

    t = (Taint(key="maintenance", effect="NoSchedule"),) if taint_n2 else ()
    return [node("n1", "r1", 8), node("n2", "r1", 8, t), node("n3", "r2", 8), node("n4", "r2", 4)]


def _cluster(taint_n2: bool = False):
    """r1: n1 (8 GPUs, 6 held: 2 free), n2 (8, idle); r2: n3 (8, 7 held: 1 free), n4 (4, idle).
    Pending: gang g4 (2 x 4 GPUs, rack), gang g2 (3 x 2 GPUs, rack), and one 1-GPU pod asking
    for an A100 (no node has one)."""
    req = lambda g: {"cpu": 1000, "memory": GI, GPU: g}  # noqa: E731
    bound = [
        make_pod("b1", requests=req(6), node="n1"),
        make_pod("b3", requests=req(7), node="n3"),
    ]
    pending = [make_pod(f"g4-{i}", requests=req(4), group="g4") for i in range(2)]
    pending += [make_pod(f"g2-{i}", requests=req(2), group="g2") for i in range(3)]
    pending.append(make_pod("a100", requests=req(1), node_selector={GPU_PRODUCT: "A100"}))
    groups = [
        PodGroup(namespace="default", name="g4", policy="gang", min_count=2, topology_key=RACK),
        PodGroup(namespace="default", name="g2", policy="gang", min_count=3, topology_key=RACK),
    ]
    return make_cluster(_nodes(taint_n2), bound + pending, groups=groups)


def test_totals_mix_and_fgd_by_hand():
    f = fragmentation(_cluster())
    # free: n1 2 + n2 8 + n3 1 + n4 4; idle nodes n2, n4
    assert (f.gpus, f.free, f.idle_nodes, f.free_on_idle_nodes) == (28, 15, 2, 12)
    assert [(m.gpus, m.pods, m.share, m.models) for m in f.mix] == [
        (2, 3, 0.5, []),
        (4, 2, 0.3333, []),
        (1, 1, 0.1667, ["A100"]),
    ]
    # whole GPUs: a shape that fits a node leaves no fragment there (no partly free device);
    # one that does not fit (or may not use the model) makes every idle GPU fragment.
    # n1 (2 free): 4-GPU no (2/6), 2-GPU yes, A100 no (1/6): 2000 * 3/6 = 1000 milli
    # n2 (8 free): only the A100 pod: 8000 / 6 = 1333.3;  n3 (1 free): none fits: 1000
    # n4 (4 free): only the A100 pod: 4000 / 6 = 666.7;   total 4000 milli = 4 GPUs
    d = f.fgd
    assert (d.idle_gpus, d.fragment_gpus, d.stranded_gpus) == (15.0, 4.0, 1.0)
    assert (d.fragmentation_rate, d.fragment_share) == (26.67, 14.29)  # 4 / 15, 4 / 28
    (racks,) = f.levels
    assert racks.label == RACK and racks.nodes_without_label == 0
    rows = {r.domain: r for r in racks.domains}
    assert [r.domain for r in racks.domains] == ["r1", "r2"]  # most free first
    r1, r2 = rows["r1"], rows["r2"]
    assert (r1.nodes, r1.gpus, r1.free, r1.idle_nodes, r1.free_on_idle_nodes) == (2, 16, 10, 1, 8)
    assert (r2.nodes, r2.gpus, r2.free, r2.idle_nodes, r2.free_on_idle_nodes) == (2, 12, 5, 1, 4)
    assert (r1.fragment_gpus, r1.stranded_gpus) == (2.333, 0.0)
    assert (r2.fragment_gpus, r2.stranded_gpus) == (1.667, 1.0)


def _check_runs(fits) -> None:
    for f in fits:
        for trial, result in f.runs:
            assert validate(trial, result) == [], (f.row, result.engine)


def test_largest_gang_by_hand_and_through_the_validator():
    fits = gang_fits(_cluster(), fit=True)
    rows = [(f.row.pods, f.row.request[GPU], f.row.groups) for f in fits]
    assert rows == [(2, "4", ["default/g4"]), (3, "2", ["default/g2"])]
    # 4-GPU pods per node: n1 0, n2 2, n3 0, n4 1 -> r1 2, r2 1; 2-GPU: n1 1, n2 4, n4 2 -> r1 5
    assert [(f.row.bound, f.row.greedy, f.row.exact, f.row.proven) for f in fits] == [
        (2, 2, 2, True),
        (5, 5, 5, True),
    ]
    _check_runs(fits)
    assert all(len(f.runs) >= 2 for f in fits)  # the exact solve and the bisection's greedy runs


def test_the_engines_see_what_the_resource_bound_does_not():
    """n2 tainted: the bound still counts it; kube-scheduler and the optimum do not."""
    fits = gang_fits(_cluster(taint_n2=True), fit=True)
    # 4-GPU: r1 only n1 (0), r2 n4 (1): 1 < minCount 2; 2-GPU: r1 n1 (1), r2 n4 (2): 2 < 3
    assert [(f.row.bound, f.row.greedy, f.row.exact, f.row.proven) for f in fits] == [
        (2, 1, 1, True),
        (5, 2, 2, True),
    ]
    _check_runs(fits)


def test_without_fit_only_the_bound_and_no_engine_runs():
    fits = gang_fits(_cluster(), fit=False)
    assert [(f.row.bound, f.row.greedy, f.row.exact, f.runs) for f in fits] == [
        (2, None, None, []),
        (5, None, None, []),
    ]


def test_shapes_differing_only_in_min_count_share_one_computation():
    c = _cluster()
    extra = PodGroup(namespace="default", name="g4b", policy="gang", min_count=3, topology_key=RACK)
    pods = [
        make_pod(f"g4b-{i}", requests={"cpu": 1000, "memory": GI, GPU: 4}, group="g4b")
        for i in range(3)
    ]
    c = c.model_copy(
        update={"pods": (*c.pods, *pods), "pod_groups": {**c.pod_groups, extra.key: extra}}
    )
    fits = gang_fits(c, fit=True)
    assert [(f.row.pods, f.row.groups, f.row.greedy) for f in fits] == [
        (3, ["default/g4b"], 2),
        (2, ["default/g4"], 2),
        (3, ["default/g2"], 5),
    ]
    assert [len(f.runs) > 0 for f in fits] == [True, False, True]  # g4's answer is g4b's
    _check_runs(fits)


def test_no_pending_pod_no_mix():
    c = _cluster()
    c = c.model_copy(update={"pods": tuple(p for p in c.pods if p.node_name)})
    f = fragmentation(c)
    assert (f.mix, f.fgd, f.gangs) == ([], None, [])
    assert all(r.fragment_gpus is None for r in f.levels[0].domains)


def test_inspect_json_carries_the_section_deterministically():
    c = _cluster()
    a = json.dumps(inspect_json(inspect_summary(c, fit=True)))
    b = json.dumps(inspect_json(inspect_summary(c, fit=True)))
    assert a == b
    doc = json.loads(a)
    assert list(doc)[-1] == "fragmentation" and doc["fragmentation"]["fit"] is True
    assert doc["fragmentation"]["fgd"]["fragmentGpus"] == 4.0


@pytest.mark.parametrize("policy", ["default", "fgd"])
def test_inspect_and_the_replay_meter_agree_on_one_state(policy):
    """The replay fills the hand-made nodes with whole-GPU jobs; the same state as a snapshot
    (the placed pods bound, nvidia.com/gpu requests) measured by inspect gives the meter's
    fragment and stranded GPUs, the mix being the snapshot's pending pods."""
    nodes = _nodes()
    mix = [(1000, 2, 3, ()), (1000, 4, 2, ()), (1000, 1, 1, ("A100",))]  # cpu, GPUs, pods, models
    typical = [TypicalPod(cpu, g, 1000, models, n / 6) for cpu, g, n, models in mix]
    placer = Placer(make_cluster(nodes), policy, seed=1, typical=typical)
    meter = FragMeter(placer.devices, typical)
    bound = []
    for k, g in enumerate([6, 3, 1, 7, 2]):
        job = ReplayJob(
            name=f"j{k}", submit=0, duration=1, workers=1, cpu_milli=2000, memory_mib=1024, gpu=g
        )
        assert placer.place(job, f"j{k}")
        (pod,) = placer.pods[f"j{k}"]
        node = placer.snap.names[placer.devices.held[pod.key][0]]
        bound.append(
            make_pod(f"j{k}", requests={"cpu": 2000, "memory": 1024 * 2**20, GPU: g}, node=node)
        )
    frag, stranded, idle = meter.sample()
    pending = [
        make_pod(
            f"p{g}-{i}",
            requests={"cpu": cpu, GPU: g},
            node_selector={GPU_PRODUCT: models[0]} if models else None,
        )
        for cpu, g, n, models in mix
        for i in range(n)
    ]
    f = fragmentation(make_cluster(nodes, bound + pending))
    assert (f.fgd.idle_gpus, f.fgd.fragment_gpus, f.fgd.stranded_gpus) == (
        idle / 1000,
        round(frag / 1000, 3),
        stranded / 1000,
    )
    assert sorted((m.gpus, m.pods) for m in f.mix) == sorted((g, n) for _, g, n, _ in mix)
    # free GPUs per node after the fill: default [2, 5, 1, 1], fgd [0, 4, 1, 4]: a node with one
    # free GPU takes no 2- or 4-GPU pod and no A100 pod, so its GPU is stranded
    assert stranded == {"default": 2000, "fgd": 1000}[policy]


def test_gpus_served_by_a_dra_driver_do_not_bound_the_gang():
    """KEP-5004: the nodes list no nvidia.com/gpu, a DeviceClass serves it; the bound leaves it
    out and the engines count the devices (solve admits ml/llm, 3 x 4 GPUs, and not ml/big,
    2 x 8 GPUs: two 8-GPU nodes, one of them half used)."""
    from pathlib import Path

    from gangplan.io import load_snapshot

    path = Path(__file__).parent.parent / "scenarios/showcase/h100-dra-extended-resource.yaml"
    fits = gang_fits(load_snapshot(path), fit=True)
    assert [(f.row.groups, f.row.pods, f.row.greedy, f.row.exact, f.row.proven) for f in fits] == [
        (["ml/big"], 2, 1, 1, True),
        (["ml/llm"], 3, 3, 3, True),
    ]
    assert all(f.row.bound >= f.row.exact for f in fits)
    _check_runs(fits)


def test_the_table_view_reads_the_section():
    from rich.console import Console

    from gangplan.render import render_summary

    console = Console(record=True, width=140)
    render_summary(console, inspect_summary(_cluster(taint_n2=True), fit=True))
    text = console.export_text()
    assert "28 allocatable, 15 free, 12 of them on 2 idle nodes" in text
    assert "fragment 4 GPUs (26.67 % of the 15 idle, 14.29 % of all), stranded 1 GPUs" in text
    assert "GPUs per topology.kubernetes.io/rack (2 domains, most free first)" in text
    # bound (n2 counted), greedy, exact: neither gang fits with n2 tainted
    rows = [
        [c.strip() for c in line.strip("│ ").split("│")]
        for line in text.splitlines()
        if line.startswith("│ 2 x {") or line.startswith("│ 3 x {")
    ]
    assert rows == [
        ["2 x {cpu: 1, nvidia.com/gpu: 4}", RACK, "1", "2", "1", "1 proven", "no"],
        ["3 x {cpu: 1, nvidia.com/gpu: 2}", RACK, "1", "5", "2", "2 proven", "no"],
    ]
