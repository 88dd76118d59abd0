"""The ``optimal`` exact policy of a timed replay (issue 22, item 4b) and the bound with running
pods movable (item 4c).

* a hand case where FIFO greedy starts one job and the per-epoch optimum two;
* every epoch's exact Result passes the independent validator, and the run never holds more GPUs
  than a node has;
* a property test: at every epoch the jobs the optimal policy starts equal a brute force's
  maximum over subsets of the pending jobs (whole-GPU single pods, bin packing on the free GPUs);
* the movable bound: never below the fixed optimum, and above it where past placements
  fragmented the nodes;
* CLI: epochs.csv movable columns, summary fields, bad arguments exit 2.
"""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.models.cluster import Cluster
from gangplan.models.replay import ReplaySummary
from gangplan.replay import replay
from gangplan.replay.optimal import run_optimal
from gangplan.replay.shadow import Shadow, movable_bound, solve_epoch
from gangplan.replay.timed import run_timed
from gangplan.replay.traces import ReplayJob, philly_nodes
from gangplan.solver.validate import validate

runner = CliRunner()


def _job(name: str, submit: float, duration: float, gpu: int, workers: int = 1) -> ReplayJob:
    return ReplayJob(
        name=name,
        submit=submit,
        duration=duration,
        workers=workers,
        cpu_milli=1000,
        memory_mib=1024,
        gpu=gpu,
    )


def _cluster(n: int) -> Cluster:
    return Cluster(nodes=tuple(philly_nodes(n)))


def test_the_optimum_starts_the_two_small_jobs_fifo_greedy_blocks(checked):
    # one node of 8 GPUs held until 10; then x (6 GPUs) is first in line, y and z (4 each) after
    jobs = [_job("a", 0, 10, 8), _job("x", 1, 100, 6), _job("y", 2, 50, 4), _job("z", 3, 50, 4)]
    greedy = run_timed(_cluster(1), jobs, "default", 0, typical=[])
    assert [r.start for r in greedy.records] == [0, 10, 110, 110]
    tr = run_optimal(_cluster(1), jobs, 0, typical=[], shadow=Shadow(time_limit=5))
    assert [r.start for r in tr.records] == [0, 60, 10, 10]
    e = next(e for e in tr.shadow.records if e.time == 10)
    assert (e.greedy_jobs, e.exact_jobs, e.greedy_gpus, e.exact_gpus, e.status) == (
        1,
        2,
        6,
        8,
        "OPTIMAL",
    )
    assert len(checked) >= 1
    # the GPUs held never exceed the node's
    assert max(a for _, a, _ in tr.changes) <= 8


def _max_jobs(free: list[int], gpus: list[int]) -> int:
    """Brute force: the most single-pod jobs of ``gpus`` that fit the nodes' free GPUs."""
    best = 0
    n = len(gpus)
    for assign in itertools.product(range(len(free) + 1), repeat=n):  # len(free): not started
        used = [0] * len(free)
        for g, a in zip(gpus, assign, strict=True):
            if a < len(free):
                used[a] += g
        if all(u <= f for u, f in zip(used, free, strict=True)):
            best = max(best, sum(a < len(free) for a in assign))
    return best


class BruteChecked(Shadow):
    def record(self, rec, nodes, jobs, running, pending, placed, placer=None):
        free = [
            8 - sum(jobs[k].gpu for k, ns in running.items() for x in ns if x == n.name)
            for n in nodes
        ]
        assert rec.exact_jobs == _max_jobs(free, [jobs[k].gpu for k in pending]), (rec, free)
        assert len(placed) == rec.exact_jobs
        return super().record(rec, nodes, jobs, running, pending, placed, placer=placer)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.integers(1, 20), st.integers(1, 8)), min_size=1, max_size=6
    )
)
def test_each_epoch_starts_as_many_jobs_as_a_brute_force(checked, rows):
    jobs = [_job(f"j{i}", s, d, g) for i, (s, d, g) in enumerate(rows)]
    tr = run_optimal(_cluster(2), jobs, 0, typical=[], shadow=BruteChecked(time_limit=5))
    assert all(r.start is not None and r.start >= r.arrival for r in tr.records)
    assert all(e.status == "OPTIMAL" for e in tr.shadow.records)
    assert max(a for _, a, _ in tr.changes) <= 16


def test_movable_bound_sees_what_past_placements_fragmented():
    # two nodes, 4 GPUs used on each by two running single pods: a pending 8-GPU job cannot
    # start where they are, and could if they moved together
    nodes = tuple(philly_nodes(2))
    jobs = [_job("r0", 0, 100, 4), _job("r1", 0, 100, 4), _job("p", 1, 10, 8)]
    running = {0: [nodes[0].name], 1: [nodes[1].name]}
    fixed = solve_epoch(1.0, 0, nodes, jobs, running, [2], {}, time_limit=5, seed=0)
    assert validate(fixed.cluster, fixed.result) == []
    assert fixed.record.exact_jobs == 0
    mb = movable_bound(nodes, jobs, running, [2], {}, time_limit=5, seed=0)
    assert (mb.jobs, mb.jobs_bound, mb.gpus, mb.status) == (1, 1, 8, "OPTIMAL")
    # a gang running on both nodes keeps running (moved or not), so nothing more fits
    jobs2 = [_job("g", 0, 100, 4, workers=2), _job("p", 1, 10, 8), _job("q", 1, 10, 8)]
    mb2 = movable_bound(
        nodes, jobs2, {0: [nodes[0].name, nodes[1].name]}, [1, 2], {}, time_limit=5, seed=0
    )
    assert (mb2.jobs, mb2.jobs_bound) == (1, 1)


def _philly(tmp: Path, rows: int, nodes: int) -> Path:
    from gangplan.io.compressed import open_text

    src = (
        open_text(Path(__file__).parent / "data" / "traces" / "philly-pollux" / "philly.csv")
        .read()
        .splitlines()
    )
    keep = [line for line in src[1:] if line and line.rsplit(",", 1)[-1] == "b436b2"][:rows]
    (tmp / "philly.csv").write_text("\n".join([src[0], *keep]) + "\n")
    (tmp / "philly_vc.csv").write_text(f"vc,node num\nb436b2,{nodes}\n")
    return tmp / "philly.csv"


def test_optimal_on_an_oversubscribed_vc_with_the_movable_bound(tmp_path, checked):
    trace = _philly(tmp_path, 60, 2)
    out = replay(
        trace,
        None,
        mode="timed",
        vc="b436b2",
        policies=["default", "optimal"],
        arrival_scale=4,
        exact_time_limit=2,
        movable_bound=True,
    )
    greedy, opt = out.summary.runs
    assert opt.placed == greedy.placed == 60 and opt.unfinished == 0
    recs = out.timed[1].shadow.records
    assert opt.epochs == len(recs) > 10 and len(checked) > 0
    assert all(e.exact_jobs >= e.greedy_jobs for e in recs)
    assert all(
        e.movable_jobs_bound >= e.exact_jobs and e.movable_jobs_bound >= e.movable_jobs
        for e in recs
    )
    assert opt.movable_regret_jobs_total == sum(e.movable_jobs_bound - e.exact_jobs for e in recs)
    # the optimal run's own jobs: each started once, after arriving, for its duration
    for r in out.timed[1].records:
        assert r.start >= r.arrival and r.end == r.start + r.job.duration


def test_cli_optimal_outputs(tmp_path):
    trace = _philly(tmp_path, 30, 2)
    d = tmp_path / "out"
    res = runner.invoke(
        app,
        [
            "replay",
            str(trace),
            "--vc",
            "b436b2",
            "--mode",
            "timed",
            "--policy",
            "optimal",
            "--arrival-scale",
            "4",
            "--exact-time-limit",
            "1",
            "--movable-bound",
            "--export-epoch",
            "1",
            "--out",
            str(d),
            "--interval",
            "86400",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "epochs solved" in res.output and "running pods movable" in res.output
    doc = json.loads((d / "summary.json").read_text())
    ReplaySummary.model_validate(doc)
    run = doc["runs"][0]
    assert run["policy"] == "optimal" and run["movableRegretJobsTotal"] >= 0
    with open(d / "epochs.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == run["epochs"] and all(
        r["movable_status"] in ("OPTIMAL", "FEASIBLE") for r in rows
    )
    assert (d / "epoch-1.yaml").is_file()
    diff = runner.invoke(app, ["diff", str(d / "epoch-1.yaml"), "--time-limit", "5"])
    assert diff.exit_code in (0, 1), diff.output


@pytest.mark.parametrize(
    "args",
    [
        ["--mode", "fill", "--policy", "optimal"],
        ["--mode", "timed", "--policy", "optimal", "--epoch", "0"],
    ],
)
def test_bad_optimal_arguments_exit_2(tmp_path, args):
    trace = _philly(tmp_path, 5, 2)
    res = runner.invoke(app, ["replay", str(trace), "--vc", "b436b2", *args])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output


def test_optimal_accepts_shared_gpus():
    """GPU-sharing traces are no longer refused (issue 22 item 5: DRA consumable capacity,
    tests/test_replay_exact_sharing.py runs them)."""
    jobs = [
        ReplayJob(
            name="a",
            submit=0,
            duration=10,
            workers=1,
            cpu_milli=1000,
            memory_mib=1024,
            gpu=1,
            gpu_milli=500,
        )
    ]
    assert Shadow().check(jobs, "pods.csv", "optimal") is None
