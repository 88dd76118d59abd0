"""gangplan replay (issue 22): fill and timed modes, the FGD paper's scorers, outputs,
determinism and bad input. Small clusters and traces cut from tests/data/traces. GPU sharing by
milli and the scorers on per-device state: tests/test_replay_gpushare.py."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io.compressed import open_text
from gangplan.io.errors import SnapshotError
from gangplan.models.documents import json_schema
from gangplan.models.objects import SchedulerProfile
from gangplan.models.replay import ReplaySummary
from gangplan.models.well_known import GPU, GPU_PRODUCT
from gangplan.replay import replay, write_outputs
from gangplan.replay.engine import Placer
from gangplan.replay.fill import discrete, run_fill
from gangplan.replay.gpushare import GPU_SHARE, request_annotations
from gangplan.replay.policies import (
    BEST_FIT,
    FGD,
    PACKING,
    RANDOM,
    REPLAY_REGISTRY,
    TypicalPod,
    typical_pods,
)
from gangplan.replay.run import trace_shapes
from gangplan.replay.traces import philly_gang, read_nodes, read_trace
from gangplan.solver.greedy.plugins import REGISTRY
from gangplan.solver.greedy.testing import make_cluster, make_node, make_pod, score_with

TRACES = Path(__file__).parent / "data" / "traces"
OPENB = TRACES / "alibaba-gpu-v2023"
PHILLY = TRACES / "philly-pollux"
runner = CliRunner()


def _head(src: Path, dst: Path, rows: int, keep=lambda r: True) -> Path:
    with open_text(src) as f:
        reader = csv.reader(f)
        header = next(reader)
        out = [header]
        for r in reader:
            if keep(dict(zip(header, r, strict=True))):
                out.append(r)
            if len(out) > rows:
                break
    with dst.open("w", newline="") as f:
        csv.writer(f).writerows(out)
    return dst


@pytest.fixture(scope="module")
def small_openb(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("openb")
    nodes = _head(
        OPENB / "openb_node_list_gpu_node.csv",
        d / "nodes.csv",
        60,
        keep=lambda r: int(r["gpu"]) > 0,
    )
    pods = _head(OPENB / "openb_pod_list_default.csv", d / "pods.csv", 300)
    return nodes, pods


# ---- fill mode --------------------------------------------------------------------------------
@pytest.mark.parametrize("policy", ["default", "mostallocated", "bestfit", "fgd"])
def test_fill_never_allocates_beyond_capacity_and_unallocated_only_falls(small_openb, policy):
    nodes, pods = small_openb
    base, trace = read_nodes(nodes), read_trace(pods)
    run = run_fill(base, trace.jobs, policy, 7, typical=typical_pods(trace_shapes(trace.jobs)))
    cap = run.capacity_milli
    assert run.capacity_gpus == sum(n.allocatable.get(GPU, 0) for n in base.nodes) > 0
    # topped up to 1.3 x capacity (in milli): every job arrives once; tuneUpPods appends clones
    # while the total plus the drawn clone's *per-GPU* milli stays within the target, so the last
    # clone passed that test and the draw after it failed it (a GPU's milli is at most 1000)
    target = 1.3 * cap
    total = sum(j.gpu_milli_total for j in run.jobs)
    assert run.arrived[-1] == total
    clones = sorted(
        (j for j in run.jobs if "-tuned-" in j.name), key=lambda j: int(j.name.rsplit("-", 1)[1])
    )
    assert clones, "the 300-pod head is below the target: the list must be topped up"
    last = clones[-1]
    assert total - last.gpu_milli_total + last.gpu_milli <= target < total + 1000
    assert any(j.fractional for j in run.jobs)
    assert all(a <= cap for a in run.allocated)
    assert all(
        a <= r for a, r in zip(run.allocated, run.arrived, strict=True)
    )  # never more than arrived
    assert all(
        x <= y for x, y in zip(run.allocated, run.allocated[1:], strict=False)
    )  # nothing leaves
    curve = [run.unallocated_percent[str(k)] for k in range(1, 131)]
    assert list(run.unallocated_percent) == [str(k) for k in range(1, 131)]
    assert all(x >= y for x, y in zip(curve, curve[1:], strict=False))  # monotone non-increasing
    # a sample at arrived k % (rounded) has allocated at most k + 0.5 %; k without samples
    # reads those of k +- 1
    assert all(
        u >= max(0.0, 100 - k - 1.5) - 1e-9 for k, u in zip(range(1, 131), curve, strict=True)
    )
    assert sum(run.placed) > 0


def test_discrete_averages_the_samples_of_each_rounded_arrived_percent():
    """merge_alloc_discrete.py: samples grouped by round(arrived %); the mean allocation of the
    group (or of k +- 1 when k has none), 100 minus it; a k with neither reads the last sample
    at or below k %."""
    got = discrete([0, 10, 14, 20, 30], [0, 10, 12, 20, 25], 1000, top=5)
    # arrived % 0, 1, 1.4 -> 1, 2, 3; allocated % 0, 1, 1.2, 2, 2.5
    assert got == {"1": 98.9, "2": 98.0, "3": 97.5, "4": 97.5, "5": 97.5}


def test_fill_output_is_deterministic_and_matches_the_schema(small_openb, tmp_path):
    nodes, pods = small_openb
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        write_outputs(replay(pods, nodes, policies=["fgd", "default"], seeds=[1, 2]), d)
    for name in ("summary.json", "timeseries.csv", "jobs.csv", "report.html"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
    page = (a / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 1 and "Unallocated GPU %" in page
    doc = json.loads((a / "summary.json").read_text())
    ReplaySummary.model_validate(doc)
    assert json_schema("replay")["$id"].endswith("replay-v1.json")
    assert set(doc["policies"]) == {"fgd", "default"}
    mean = doc["policies"]["fgd"]["unallocatedPercentMean"]
    assert list(mean) == [str(k) for k in range(1, 131)]
    runs = [r for r in doc["runs"] if r["policy"] == "fgd"]
    assert [r["seed"] for r in runs] == [1, 2]
    assert math.isclose(
        mean["100"],
        (runs[0]["unallocatedPercent"]["100"] + runs[1]["unallocatedPercent"]["100"]) / 2,
        abs_tol=1e-5,
    )
    assert any(c.startswith("GPU sharing:") for c in doc["caveats"])
    # the packing bound: at every arrived percent no policy leaves fewer GPUs unallocated
    bound = doc["packingBoundUnallocatedPercent"]
    assert list(bound) == [str(k) for k in range(10, 131, 10)]
    for p in doc["policies"].values():
        assert all(bound[k] <= p["unallocatedPercentMean"][k] + 1e-6 for k in bound)
    assert bound["10"] > bound["130"] >= 0


# ---- the FGD paper's scorers ------------------------------------------------------------------
def test_the_paper_scorers_are_in_the_replay_registry_and_the_in_tree_one_never_changes():
    """Issue 38: the registry is a parameter of the profile (NewFramework(registry, profile)),
    never a global changed at run time."""
    before = dict(REGISTRY)
    assert BEST_FIT not in REGISTRY and FGD not in REGISTRY and GPU_SHARE not in REGISTRY
    assert REPLAY_REGISTRY[BEST_FIT].name == BEST_FIT and REPLAY_REGISTRY[FGD].name == FGD
    assert {n: c for n, c in REPLAY_REGISTRY.items() if n in REGISTRY} == REGISTRY
    nodes = [make_node(f"n{i}", cpu=64000, memory=2**38, extra={GPU: 4}) for i in range(2)]
    placer = Placer(make_cluster(nodes), "fgd", seed=0, typical=[])
    assert [pl.name for pl, _ in placer.session.profile.scorers] == [FGD]
    assert GPU_SHARE in [pl.name for pl in placer.session.profile.filters]
    assert [pl.name for pl in placer.session.profile.reservers] == [GPU_SHARE]
    assert dict(REGISTRY) == before
    # the in-tree registry cannot build the paper's profile: the names are left out
    from gangplan.solver.greedy.profile import build_profile

    assert [pl.name for pl, _ in build_profile(placer.cluster).scorers] == []


def gpu_pod(name: str, count: int, milli: int = 1000, **kw):
    """A pending pod asking ``count`` GPU devices of ``milli`` each (gangplan.replay.gpushare)."""
    return make_pod(name, **kw).model_copy(
        update={"annotations": request_annotations(count, milli)}
    )


def test_bestfit_prefers_the_tightest_node():
    nodes = [
        make_node(f"n{i}", cpu=64000, memory=2**38, extra={GPU: g}) for i, g in enumerate((8, 2, 4))
    ]
    c = make_cluster(nodes, profile=SchedulerProfile(score_weights={BEST_FIT: 1}))
    got = score_with(BEST_FIT, c, gpu_pod("p", 2, requests={"cpu": 4000}), registry=REPLAY_REGISTRY)
    assert got["n1"] == 100 and got["n0"] == 0 and 0 < got["n2"] < 100


def test_fgd_keeps_the_hole_the_typical_pods_need():
    """Typical pods are all 4-GPU: a 1-GPU pod on a 5-GPU node leaves a 4-GPU hole (no new
    fragment), on a 4-GPU node it breaks the only hole (all of the node's GPUs become fragment)."""
    nodes = [
        make_node("five", cpu=64000, memory=2**38, extra={GPU: 5}, labels={GPU_PRODUCT: "V100"}),
        make_node("four", cpu=64000, memory=2**38, extra={GPU: 4}, labels={GPU_PRODUCT: "V100"}),
    ]
    c = make_cluster(nodes, profile=SchedulerProfile(score_weights={FGD: 1}))
    REPLAY_REGISTRY[FGD].typical = [TypicalPod(1000, 4, 1000, (), 1.0)]
    try:
        got = score_with(FGD, c, gpu_pod("p", 1, requests={"cpu": 1000}), registry=REPLAY_REGISTRY)
    finally:
        REPLAY_REGISTRY[FGD].typical = []
    # five: F goes 0 -> 0 (score sigmoid(0) = 50); four: F goes 0 -> 3000 milli (sigmoid(-3))
    assert got == {"five": 50, "four": int(100 / (1 + np.exp(3)))}


def test_typical_pods_keep_the_most_popular_shapes_up_to_95_percent():
    """GetTypicalPods with the experiment's typicalPodsConfig: CPU pods count, one kind at a
    time until 95 % of the pods are covered; equal counts ordered by cpu, milli, GPUs, model,
    larger first; frequencies renormalised over the kinds kept."""
    shapes = (
        [(100, 0, 0, ())] * 100
        + [(1000, 1, 500, ())] * 50
        + [(2000, 2, 1000, ())] * 30
        + [(k, 1, 1000, ()) for k in range(1, 21)]
    )
    typ = typical_pods(shapes)  # 200 pods: 95 % = 190 = 100 + 50 + 30 + 10 singletons
    assert math.isclose(sum(t.freq for t in typ), 1.0)
    assert len(typ) == 13
    assert typ[0] == TypicalPod(100, 0, 0, (), pytest.approx(100 / 190)) and typ[1] == TypicalPod(
        1000, 1, 500, (), pytest.approx(50 / 190)
    )
    assert [t.cpu_milli for t in typ[3:]] == list(range(20, 10, -1))  # ties: larger cpu first


# ---- timed mode -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_philly(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("philly")
    return _head(
        PHILLY / "philly.csv", d / "philly.csv", 400, keep=lambda r: r["cluster"] == "b436b2"
    )


def test_philly_gangs():
    assert [philly_gang(g) for g in (1, 2, 8, 16, 24, 128)] == [
        (1, 1),
        (1, 2),
        (1, 8),
        (2, 8),
        (3, 8),
        (16, 8),
    ]


def test_timed_with_unlimited_capacity_has_no_delay_and_jct_is_duration(small_philly):
    out = replay(small_philly, "unlimited", mode="timed", policies=["default"])
    run = out.summary.runs[0]
    assert run.failed == 0 and run.unfinished == 0
    assert run.queueing_delay.mean == run.queueing_delay.p99 == 0
    recs = out.timed[0].records
    assert all(r.start == r.arrival and r.end - r.start == r.job.duration for r in recs)
    with open_text(small_philly) as f:
        gpu_time = sum(float(r["gpu_time"]) for r in csv.DictReader(f))
    assert run.allocated_gpu_seconds == pytest.approx(gpu_time)


def test_timed_on_a_small_vc_makes_gangs_wait_and_keeps_them_whole(small_philly, tmp_path):
    vc = tmp_path / "philly_vc.csv"
    vc.write_text("vc,node num\nb436b2,2\n")
    trace = tmp_path / "philly.csv"
    trace.write_bytes(small_philly.read_bytes())
    out = replay(
        trace, None, mode="timed", vc="b436b2", policies=["default", "fgd"], arrival_scale=4
    )
    assert out.summary.capacity_gpus == 16
    for tr, run in zip(out.timed, out.summary.runs, strict=True):
        assert max(a for _, a, _ in tr.changes) <= 16
        assert run.queueing_delay.p99 > 0
        assert all(r.start is None or r.start >= r.arrival for r in tr.records)
        assert run.idle_gpu_hours >= 0 and 0 < run.gpu_utilisation_mean <= 1
        # a job too large for the VC never starts; all others do
        big = [r for r in tr.records if r.job.gpus > 16]
        assert all(r.start is None for r in big) and run.failed == len(big)


def test_timed_outputs_are_deterministic(small_philly, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        res = runner.invoke(
            app,
            [
                "replay",
                str(small_philly),
                "--nodes",
                "unlimited",
                "--mode",
                "timed",
                "--out",
                str(d),
                "--interval",
                "3600",
            ],
        )
        assert res.exit_code == 0, res.output
    for name in ("summary.json", "timeseries.csv", "jobs.csv", "report.html"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
    page = (a / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 2 and "CDF of queueing delay" in page


def test_jobs_csv_with_a_required_topology_key(tmp_path):
    nodes = tmp_path / "nodes.yaml"
    docs = []
    for i in range(4):
        docs.append(
            f"apiVersion: v1\nkind: Node\nmetadata:\n  name: n{i}\n  labels:\n    rack: r{i // 2}\n"
            f"status:\n  allocatable:\n    cpu: '32'\n    memory: 128Gi\n    pods: '110'\n    nvidia.com/gpu: '8'\n"
        )
    nodes.write_text("---\n".join(docs))
    jobs = tmp_path / "jobs.csv"
    jobs.write_text(
        "job,submit,duration,workers,cpu_milli,memory_mib,gpu,min_count,priority,required_topology_key\n"
        "a,0,100,1,1000,1024,4,1,0,\n"
        "b,0,100,2,1000,1024,8,2,0,rack\n"
        "c,10,50,2,1000,1024,4,2,5,rack\n"
    )
    out = replay(jobs, nodes, mode="timed", policies=["default"])
    recs = {r.job.name: r for r in out.timed[0].records}
    assert recs["b"].start == 0 and recs["a"].start == 0
    assert recs["c"].start == 10  # the rack with a's node still holds 4 + 4 GPUs
    assert out.summary.runs[0].unfinished == 0


# ---- bad input --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, where",
    [
        (
            "job,submit,duration,workers,cpu_milli,memory_mib,gpu\na,0,10,1,100,100,1\nb,5,-3,1,100,100,1\n",
            ["jobs.csv:3", "row 2", "duration"],
        ),
        (
            "job,submit,duration,workers,cpu_milli,memory_mib,gpu\na,0,10,1,x,100,1\n",
            ["jobs.csv:2", "row 1", "cpu_milli"],
        ),
        (
            "job,submit,duration,workers,cpu_milli,gpu\na,0,10,1,100,1\n",
            ["jobs.csv", "memory_mib", "missing column"],
        ),
        (
            "job,submit,duration,workers,cpu_milli,memory_mib,gpu\na,0,10,1,100,100\n",
            ["jobs.csv:2", "row 1"],
        ),
    ],
)
def test_bad_input_exits_2_naming_file_row_and_column(tmp_path, text, where):
    jobs = tmp_path / "jobs.csv"
    jobs.write_text(text)
    res = runner.invoke(app, ["replay", str(jobs), "--nodes", "unlimited", "--mode", "timed"])
    assert res.exit_code == 2, res.output
    for w in where:
        assert w in res.output


def test_bad_arguments_exit_2(small_philly):
    for args in (["--policy", "nope"], ["--seeds", "9..1"], ["--mode", "later"]):
        res = runner.invoke(app, ["replay", str(small_philly), "--nodes", "unlimited", *args])
        assert res.exit_code == 2, res.output
    with pytest.raises(SnapshotError, match="--vc applies to the Philly trace only"):
        read_trace(OPENB / "openb_pod_list_default.csv", vc="x")


def test_packing_prefers_used_nodes_and_random_picks_one_node():
    nodes = [make_node(f"n{i}", cpu=64000, memory=2**38, extra={GPU: 8}) for i in range(3)]
    used = make_pod(
        "used", requests={"cpu": 1000, GPU: 4}, node="n1"
    )  # a bound pod holds devices 0-3
    c = make_cluster(nodes, [used])
    got = score_with(PACKING, c, gpu_pod("p", 2, requests={"cpu": 1000}), registry=REPLAY_REGISTRY)
    assert got == {
        "n0": 25,
        "n1": 48,
        "n2": 25,
    }  # free node: max(33 - 8, 8); used node: max(50 - 2, 33)
    got = score_with(RANDOM, c, make_pod("p", requests={"cpu": 1000}), registry=REPLAY_REGISTRY)
    assert sorted(got.values()) == [0, 0, 100]


@pytest.mark.parametrize("policy", ["random", "packing"])
def test_the_other_paper_policies_fill(small_openb, policy):
    nodes, pods = small_openb
    doc = replay(pods, nodes, policies=[policy], seeds=[3]).summary
    curve = doc.policies[policy].unallocated_percent_mean
    assert 0 <= curve["100"] <= 100 and curve["130"] <= curve["100"]


def test_cli_pattern_bound_is_at_most_every_policy_and_at_least_the_lp(small_openb, tmp_path):
    nodes, pods = small_openb
    d = tmp_path / "out"
    res = runner.invoke(
        app,
        [
            "replay",
            str(pods),
            "--nodes",
            str(nodes),
            "--policy",
            "fgd,default",
            "--seeds",
            "1",
            "--bound",
            "patterns",
            "--bound-percents",
            "90,100,130",
            # 5 units, not the default 60: the 100 % point stops on its work limit either way (gap
            # 0.94 here, 0.77 at 60), and a stopped column generation is still a bound; the test
            # took 143 s at the default (deterministic work: the same values every run)
            "--bound-work-limit",
            "5",
            "--out",
            str(d),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "packing bound (patterns): no placement leaves under" in res.output
    doc = json.loads((d / "summary.json").read_text())
    ReplaySummary.model_validate(doc)
    assert doc["packingBoundMethod"] == "patterns" and list(
        doc["packingBoundUnallocatedPercent"]
    ) == ["90", "100", "130"]
    assert all(g >= 0 for g in doc["packingBoundGapPercent"].values())
    lp = replay(
        pods, nodes, policies=["default"], seeds=[1], bound="lp", bound_percents=(90, 100, 130)
    ).summary
    assert lp.packing_bound_method == "lp" and lp.packing_bound_gap_percent is None
    for k, b in doc["packingBoundUnallocatedPercent"].items():
        assert (
            b >= lp.packing_bound_unallocated_percent[k] - 1e-6
        )  # the pattern bound is never looser
        for p in doc["policies"].values():
            assert b <= p["unallocatedPercentMean"][k] + 1e-6
    none = replay(pods, nodes, policies=["default"], seeds=[1], bound="none").summary
    assert none.packing_bound_unallocated_percent is None and none.packing_bound_method is None


@pytest.mark.parametrize(
    "args",
    [
        ["--bound", "exact"],
        ["--bound-percents", "0,100"],
        ["--bound-percents", "x"],
        ["--bound-work-limit", "0"],
    ],
)
def test_bad_bound_arguments_exit_2(small_openb, args):
    nodes, pods = small_openb
    res = runner.invoke(app, ["replay", str(pods), "--nodes", str(nodes), *args])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output


def test_replay_options_are_one_model_the_cli_and_the_api_share(tmp_path):
    """Issue 38: replay() took 19 parameters and the CLI repeated them with their defaults; now one
    model (ReplayOptions) with its defaults in models.defaults. Keyword options and options= give
    the same run; both at once is refused; the CLI's flag defaults are the model's."""
    from gangplan.models import defaults as D
    from gangplan.models.options import ReplayOptions

    trace = tmp_path / "jobs.csv"
    trace.write_text(
        "job,submit,duration,workers,cpu_milli,memory_mib,gpu\na,0,10,1,1000,1024,8\nb,1,10,2,1000,1024,8\n"
    )
    by_kw = replay(trace, "unlimited", mode="timed", seeds=[1])
    by_model = replay(trace, "unlimited", options=ReplayOptions(mode="timed", seeds=(1,)))
    assert by_kw.summary.model_dump() == by_model.summary.model_dump()
    with pytest.raises(TypeError, match="not both"):
        replay(trace, "unlimited", options=ReplayOptions(), mode="timed")
    o = ReplayOptions()
    assert (o.seeds, o.policies, o.bound_percents, o.exact_time_limit) == (
        D.REPLAY_SEEDS,
        D.REPLAY_POLICIES,
        D.BOUND_PERCENTS,
        D.EPOCH_TIME_LIMIT,
    )
    import inspect

    from gangplan.cli import replay as cli_replay

    params = inspect.signature(cli_replay).parameters
    assert (
        params["seeds"].default == ",".join(map(str, o.seeds))
        and params["exact_time_limit"].default == o.exact_time_limit
    )
    assert (
        params["bound_percents"].default == ",".join(map(str, o.bound_percents))
        and params["bound_work_limit"].default == o.bound_work_limit
    )
