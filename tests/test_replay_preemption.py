"""Preemption in timed mode (issue 22 item 3, "preemption as the profile says";
:mod:`gangplan.replay.timed`).

* one 8-GPU node: a high-priority job evicts the running low one and starts at that instant; the
  low one restarts after it, its JCT from its first arrival;
* a gang preemptor evicts two single-pod jobs, one per node;
* equal priorities never preempt (the engine is not even run), nor does a profile whose
  KubeSchedulerConfiguration disables DefaultPreemption;
* every PostFilter run's Result passes the independent validator on the state it ran on;
* ``replay()``: ``preemptions`` / ``evictedJobs`` in ``runs[]``, ``evictions`` at the end of
  ``jobs.csv``, and both kept across ``--resume``.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from gangplan.models.cluster import Cluster
from gangplan.models.version import KubeVersion
from gangplan.models.well_known import GPU
from gangplan.replay import replay, write_outputs
from gangplan.replay.policies import policy_from_file
from gangplan.replay.timed import Preemption, run_timed
from gangplan.replay.traces import ReplayJob
from gangplan.solver.greedy.testing import make_cluster, make_node
from gangplan.solver.validate import validate

GI = 2**30
VERSIONS = [KubeVersion.V1_35, KubeVersion.V1_36, KubeVersion.V1_37]


def _job(name, submit, duration, workers=1, gpu=8, priority=0):
    return ReplayJob(
        name=name,
        submit=submit,
        duration=duration,
        workers=workers,
        cpu_milli=1000,
        memory_mib=1024,
        gpu=gpu,
        priority=priority,
    )


def _nodes(n: int, version: KubeVersion = KubeVersion.V1_37) -> Cluster:
    c = make_cluster(
        [make_node(f"n{i}", cpu=64000, memory=512 * GI, extra={GPU: 8}) for i in range(n)]
    )
    return c.model_copy(update={"kube_version": version})


def _run(cluster, jobs, policy="default"):
    """run_timed, every PostFilter Result through the validator on the state it ran on."""
    seen: list[tuple[float, int, Preemption]] = []

    def check(now, k, pr):
        assert validate(pr.cluster, pr.result) == [], (now, k)
        assert pr.cluster.kube_version == cluster.kube_version
        seen.append((now, k, pr))

    return run_timed(cluster, jobs, policy, 0, typical=[], on_preempt=check), seen


@pytest.mark.parametrize("version", VERSIONS)
def test_a_high_priority_job_evicts_the_low_one_and_starts_at_once(version):
    tr, seen = _run(_nodes(1, version), [_job("low", 0, 100), _job("high", 10, 50, priority=10)])
    low, high = tr.records
    assert (high.start, high.end, high.evictions) == (10, 60, 0)
    # evicted at 10, back in the queue; restarts when high leaves, with its full 100 s again
    assert (low.start, low.end, low.evictions) == (60, 160, 1)
    assert low.end - low.arrival == 160  # JCT from its first arrival
    assert tr.preemptions == 1
    [(now, k, pr)] = seen
    assert (now, k, pr.victims, pr.foreign) == (10, 1, [0], [])
    assert pr.result.victims == ["replay/j0-0"]
    o = pr.result.pods["replay/j1-0"]
    assert (o.node, o.nominated) == ("n0", True)
    # the cluster never held both: allocated GPUs stay 8 through the preemption instant
    assert [(t, a) for t, a, _ in tr.changes] == [(0, 8), (10, 8), (60, 8), (160, 0)]


@pytest.mark.parametrize("version", VERSIONS)
def test_a_gang_preemptor_evicts_two_single_pod_jobs(version):
    jobs = [_job("a", 0, 100), _job("b", 0, 100), _job("gang", 5, 30, workers=2, priority=10)]
    tr, seen = _run(_nodes(2, version), jobs)
    a, b, gang = tr.records
    assert (gang.start, gang.end) == (5, 35)
    assert (a.evictions, b.evictions, a.start, b.start) == (1, 1, 35, 35)
    assert tr.preemptions == 1
    [(_, k, pr)] = seen
    assert k == 2 and pr.victims == [0, 1]
    assert sorted(pr.result.victims) == ["replay/j0-0", "replay/j1-0"]
    assert sorted(o.node for key, o in pr.result.pods.items() if key.startswith("replay/j2-")) == [
        "n0",
        "n1",
    ]


def test_only_the_victims_needed_are_evicted_and_a_lower_job_waits():
    # two 4-GPU low jobs on one node; an 4-GPU high job needs one of them gone, not both
    jobs = [
        _job("a", 0, 100, gpu=4),
        _job("b", 0, 200, gpu=4),
        _job("high", 10, 50, gpu=4, priority=10),
    ]
    tr, seen = _run(_nodes(1), jobs)
    a, b, high = tr.records
    assert high.start == 10 and tr.preemptions == 1
    assert a.evictions + b.evictions == 1
    evicted = a if a.evictions else b
    assert evicted.start == 60  # high leaves at 60


def test_equal_priorities_never_preempt_and_never_run_the_engine():
    tr, seen = _run(_nodes(1), [_job("low", 0, 100, priority=5), _job("high", 10, 50, priority=5)])
    low, high = tr.records
    assert (low.start, high.start, tr.preemptions, low.evictions) == (0, 100, 0, 0)
    assert seen == []


def test_a_lower_priority_arrival_never_preempts_a_higher_running_job():
    tr, seen = _run(_nodes(1), [_job("high", 0, 100, priority=10), _job("low", 10, 50)])
    assert [r.start for r in tr.records] == [0, 100] and seen == [] and tr.preemptions == 0


def test_a_profile_without_default_preemption_never_preempts(tmp_path):
    path = tmp_path / "no-preemption.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n    postFilter:\n      disabled:\n      - name: DefaultPreemption\n"
    )
    pol = policy_from_file(str(path))
    assert not pol.profile.preemption
    tr, seen = _run(_nodes(1), [_job("low", 0, 100), _job("high", 10, 50, priority=10)], pol)
    low, high = tr.records
    assert (low.start, high.start, tr.preemptions, low.evictions) == (0, 100, 0, 0)
    assert seen == []


def test_a_gpu_sharing_trace_runs_without_preemption_and_says_so():
    jobs = [
        _job("low", 0, 100),
        ReplayJob(
            name="high",
            submit=10,
            duration=50,
            workers=1,
            cpu_milli=1000,
            memory_mib=1024,
            gpu=1,
            gpu_milli=500,
            priority=10,
        ),
        _job("high2", 10, 50, priority=10),
    ]
    tr, seen = _run(_nodes(1), jobs)
    assert tr.preemptions == 0 and seen == []
    assert any("preemption off" in n for n in tr.notes)


def _trace(tmp: Path) -> tuple[Path, Path]:
    rows = [
        "job,submit,duration,workers,cpu_milli,memory_mib,gpu,priority",
        "low,0,100,1,1000,1024,8,0",
        "high,10,50,1,1000,1024,8,10",
    ]
    (tmp / "jobs.csv").write_text("\n".join(rows) + "\n")
    (tmp / "nodes.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n0\nstatus:\n  allocatable:\n    cpu: '64'\n    memory: 512Gi\n    pods: '110'\n    nvidia.com/gpu: '8'\n"
    )
    return tmp / "jobs.csv", tmp / "nodes.yaml"


def test_replay_reports_preemptions_and_evictions_and_resume_keeps_them(tmp_path):
    trace, nodes = _trace(tmp_path)
    out_dir = tmp_path / "out"
    out = replay(trace, nodes, mode="timed", policies=["default"], seeds=[0], checkpoint=out_dir)
    write_outputs(out, out_dir, report=False)
    [run] = out.summary.runs
    assert (run.preemptions, run.evicted_jobs) == (1, 1)
    doc = json.loads((out_dir / "summary.json").read_text())
    assert (doc["runs"][0]["preemptions"], doc["runs"][0]["evictedJobs"]) == (1, 1)
    assert any("preemption as the profile says" in c for c in out.summary.caveats)
    with open(out_dir / "jobs.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0])[-2:] == ["attempts", "evictions"]
    assert {r["job"]: (r["start"], r["end"], r["jct"], r["evictions"]) for r in rows} == {
        "low": ("60", "160", "160", "1"),
        "high": ("10", "60", "50", "0"),
    }
    # resumed from the saved run: the same records, evictions included
    again = replay(
        trace, nodes, mode="timed", policies=["default"], seeds=[0], checkpoint=out_dir, resume=True
    )
    assert [r.evictions for r in again.timed[0].records] == [1, 0]
    assert again.summary.runs == out.summary.runs


@pytest.mark.parametrize("version", VERSIONS)
def test_one_victim_pod_evicts_its_whole_gang(version):
    # a 2-worker low gang over both nodes; a high single pod needs one node: the gang's other
    # worker goes too (its job is released whole) and the gang restarts when both nodes are free
    jobs = [_job("gang", 0, 100, workers=2), _job("high", 10, 50, priority=10)]
    tr, seen = _run(_nodes(2, version), jobs)
    gang, high = tr.records
    [(_, _, pr)] = seen
    assert len(pr.result.victims) == 1 and pr.victims == [0]
    assert (high.start, gang.evictions, gang.start, gang.end) == (10, 1, 60, 160)
    # while high ran alone, 8 of 16 GPUs were allocated
    assert [(t, a) for t, a, _ in tr.changes] == [(0, 16), (10, 8), (60, 16), (160, 0)]


def test_the_cli_summary_names_the_preemptions(tmp_path):
    from typer.testing import CliRunner

    from gangplan.cli import app

    trace, nodes = _trace(tmp_path)
    res = CliRunner().invoke(
        app, ["replay", str(trace), "--nodes", str(nodes), "--mode", "timed", "--seeds", "0"]
    )
    assert res.exit_code == 0, res.output
    run = replay(trace, nodes, mode="timed", policies=["default"], seeds=[0]).summary.runs[0]
    assert (
        run.preemptions
        and f"default seed 0: {run.preemptions} preemptions evicted {run.evicted_jobs} jobs"
        in res.output
    )


def _same(a, b, what):
    """Two model sequences equal in every field but ``source`` (where the object was read)."""
    strip = [x.model_copy(update={"source": ""}) for x in a]
    other = [x.model_copy(update={"source": ""}) for x in b]
    assert strip == other, what


@pytest.mark.parametrize("with_resident", [False, True])
def test_the_epoch_and_preemption_states_are_the_cluster_the_loader_makes_of_the_epoch_objects(
    tmp_path, with_resident
):
    """Issue 38: the states of preemption runs and exact epochs are built from models
    (shadow.epoch_cluster), no longer written as Kubernetes objects and parsed at every event. At
    every preemption and every epoch of a seeded ``shadow`` run (gangs with a rack key, GPU
    models, priorities 0 / 5 / 10, and with a ``--nodes`` snapshot's resident pod and
    PriorityClass) the model-built Cluster equals what the loader makes of epoch_objects, field by
    field (each object's source, the loader's warnings and API-version counts aside), and the run
    both preempts and solves epochs."""
    import random

    from gangplan.io.loader import load_objects
    from gangplan.replay import shadow as shadow_mod
    from gangplan.replay import timed as timed_mod
    from gangplan.replay.shadow import Shadow, epoch_objects
    from gangplan.replay.traces import read_nodes
    from tests.test_replay_resident import NODES

    rng = random.Random(5)
    if with_resident:
        (tmp_path / "nodes.yaml").write_text(
            NODES
            + "".join(
                f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: r{i}, labels: {{rack: r{i // 2}, nvidia.com/gpu.product: {'A100' if i % 2 else 'V100'}}}}}\n"
                f'status: {{allocatable: {{cpu: "32", memory: 128Gi, pods: "110", nvidia.com/gpu: "8"}}}}\n'
                for i in range(4)
            )
        )
        base = read_nodes(tmp_path / "nodes.yaml")
    else:
        base = make_cluster(
            [
                make_node(
                    f"r{i}",
                    cpu=32000,
                    memory=128 * GI,
                    extra={GPU: 8},
                    labels={
                        "rack": f"r{i // 2}",
                        "nvidia.com/gpu.product": "A100" if i % 2 else "V100",
                    },
                )
                for i in range(6)
            ]
        )
    jobs = [
        ReplayJob(
            name=f"x{j}",
            submit=j * 7.0,
            duration=rng.choice([30, 60, 200]),
            workers=w,
            cpu_milli=rng.choice([0, 1000]),
            memory_mib=rng.choice([0, 2048]),
            gpu=rng.choice([2, 4, 8]),
            priority=rng.choice([0, 5, 10]),
            required_topology_key="rack" if w > 1 and rng.random() < 0.5 else "",
            gpu_models=("A100",) if rng.random() < 0.2 else (),
        )
        for j in range(60)
        for w in [rng.choice([1, 1, 2])]
    ]
    seen: list[str] = []
    real = shadow_mod.epoch_cluster

    def spy(
        nodes,
        jobs_,
        running,
        pending,
        *,
        source,
        avoid=None,
        placer=None,
        devices=None,
        kube_version=None,
        profile=None,
    ):
        got = real(
            nodes,
            jobs_,
            running,
            pending,
            source=source,
            avoid=avoid,
            placer=placer,
            devices=devices,
            kube_version=kube_version,
            profile=profile,
        )
        loaded = load_objects(
            epoch_objects(nodes, jobs_, running, pending, devices, avoid, placer=placer),
            source,
            kube_version=kube_version,
        )
        _same(got.nodes, loaded.nodes, "nodes")
        _same(got.pods, loaded.pods, "pods")
        _same(list(got.pod_groups.values()), list(loaded.pod_groups.values()), "pod groups")
        _same(list(got.pdbs), list(loaded.pdbs), "pdbs")
        _same(
            list(got.priority_classes.values()),
            list(loaded.priority_classes.values()),
            "priority classes",
        )
        assert (got.namespaces, got.workloads, got.composite_pod_groups, got.kube_version) == (
            loaded.namespaces,
            loaded.workloads,
            loaded.composite_pod_groups,
            loaded.kube_version,
        )
        seen.append(source.split()[0])
        return got

    shadow_mod.epoch_cluster = timed_mod.epoch_cluster = spy
    try:
        run = run_timed(
            base,
            jobs,
            "default",
            3,
            typical=[],
            shadow=Shadow(time_limit=1.0, movable=True),
            on_preempt=lambda now, k, pr: (
                validate(pr.cluster, pr.result) == [] or pytest.fail(str(now))
            ),
        )
    finally:
        shadow_mod.epoch_cluster = timed_mod.epoch_cluster = real
    assert run.preemptions >= 3 and seen.count("<preemption") >= run.preemptions
    assert seen.count("<epoch") >= 10 and seen.count("<movable") >= 10
