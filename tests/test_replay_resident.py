"""Pods a ``--nodes`` snapshot binds stay for the whole replay (issue 22 item 1): the greedy
placer sees them, and so must every exact epoch (``shadow``, ``optimal``, the movable bound) and
every preemption run, which are written as Kubernetes objects
(:func:`gangplan.replay.shadow.epoch_objects`). Before they were, an exact epoch saw the resident
pod's GPUs as free: ``shadow`` reported a regret no placement could recover, and ``optimal``
stopped with an internal error when its answer used them. Every exact epoch goes through the
validator (the ``checked`` fixture)."""

from __future__ import annotations

import json

from gangplan.io.loader import load_snapshot
from gangplan.replay import replay, write_outputs

NODES = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch}
value: 5
---
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "32", memory: 128Gi, pods: "110", nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "32", memory: 128Gi, pods: "110", nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Pod
metadata: {name: resident, namespace: infra}
spec:
  nodeName: n0
  priorityClassName: batch
  containers: [{name: c, image: x, resources: {requests: {cpu: "1", nvidia.com/gpu: "8"}, limits: {nvidia.com/gpu: "8"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: waiting, namespace: infra}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""

WHOLE = "job,submit,duration,workers,cpu_milli,memory_mib,gpu,priority\na,0,100,1,1000,1024,8,0\nb,0,100,1,1000,1024,8,0\n"
SHARED = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
    "p0,1000,1024,1,500,,LS,Running,0,100,0\np1,1000,1024,1,500,,LS,Running,0,100,0\n"
    "p2,1000,1024,8,1000,,LS,Running,0,100,0\np3,1000,1024,1,600,,LS,Running,0,100,0\n"
)


def _files(tmp_path, trace: str, name: str = "jobs.csv"):
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(NODES)
    jobs = tmp_path / name
    jobs.write_text(trace)
    return jobs, nodes


def test_shadow_sees_the_resident_pod_and_exports_it(tmp_path, checked):
    jobs, nodes = _files(tmp_path, WHOLE)
    out = replay(
        jobs, nodes, mode="timed", policies=["shadow"], export_epoch=(0, str(tmp_path / "epochs"))
    )
    [run] = out.timed
    assert [(r.start, r.end) for r in run.records] == [
        (0, 100),
        (100, 200),
    ]  # one 8-GPU node is the resident's
    assert run.shadow is not None and [r.regret_gpus for r in run.shadow.records] == [0, 0]
    assert len(checked) == 2
    for es in checked:  # the exact engine's state holds the resident pod, bound where it is
        resident = next(p for p in es.cluster.pods if p.key == "infra/resident")
        assert resident.node_name == "n0" and resident.priority == 5
    exported = load_snapshot(tmp_path / "epochs" / "epoch-0.yaml")
    assert {p.key: p.node_name for p in exported.pods if p.namespace == "infra"} == {
        "infra/resident": "n0"
    }
    assert any(
        "1 pending pods of the snapshot are not replayed" in c and "infra/waiting" in c
        for c in out.summary.caveats
    )


def test_optimal_runs_beside_the_resident_pod(tmp_path, checked):
    jobs, nodes = _files(tmp_path, WHOLE)
    out = replay(jobs, nodes, mode="timed", policies=["optimal"], movable_bound=True)
    [run] = out.timed
    assert sorted((r.start, r.end) for r in run.records) == [
        (0, 100),
        (100, 200),
    ]  # never both at once
    assert checked and all(es.result.pods for es in checked)
    # with running pods movable still one job at t=0: the resident pod is not a replay job, it stays
    assert [(r.time, r.movable_jobs, r.movable_status) for r in run.shadow.records][0] == (
        0,
        1,
        "OPTIMAL",
    )
    write_outputs(out, tmp_path / "o", interval=60)
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["runs"][0]["unfinished"] == 0


def test_shared_gpu_epochs_give_the_resident_pod_whole_devices(tmp_path, checked):
    jobs, nodes = _files(tmp_path, SHARED, "openb_pod_list_small.csv")
    out = replay(jobs, nodes, mode="timed", policies=["shadow"])
    [run] = out.timed
    assert run.shadow is not None and all(r.regret_gpus == 0 for r in run.shadow.records)
    es = checked[0]
    consumed = {dev: cap for dev, cap in es.cluster.dra.consumed.items() if dev[1] == "n0"}
    assert sorted(dev[2] for dev in consumed) == [
        f"gpu-{d}" for d in range(8)
    ]  # n0's 8 devices, used up by the resident pod
    resident = next(p for p in es.cluster.pods if p.key == "infra/resident")
    assert "nvidia.com/gpu" not in resident.requests  # its GPUs are the claim's now


def test_a_resident_victim_is_named_and_never_evicted(tmp_path):
    """A job of priority 10 finds both nodes full: n0 by the resident pod (priority 5), n1 by a
    replay job of priority 0. The engine's PostFilter (on the state with the resident pod in it)
    takes the replay job, the cheaper victim by priority; the resident pod is never evicted."""
    from gangplan.replay.timed import Preemption, run_timed
    from gangplan.replay.traces import read_nodes, read_trace
    from gangplan.solver.validate import validate

    trace = "job,submit,duration,workers,cpu_milli,memory_mib,gpu,priority\nlow,0,100,1,1000,1024,8,0\nhigh,10,50,1,1000,1024,8,10\n"
    jobs, nodes = _files(tmp_path, trace)
    seen: list[Preemption] = []

    def check(now, k, pr):
        assert validate(pr.cluster, pr.result) == []
        assert any(p.key == "infra/resident" and p.node_name == "n0" for p in pr.cluster.pods)
        seen.append(pr)

    run = run_timed(
        read_nodes(nodes), read_trace(jobs).jobs, "default", 0, typical=[], on_preempt=check
    )
    low, high = run.records
    assert (high.start, low.evictions) == (10, 1)
    [pr] = seen
    assert pr.victims == [0] and pr.foreign == []


def test_a_preemption_that_would_evict_the_resident_pod_is_not_applied(tmp_path):
    """Now the replay job has priority 7, above the resident pod's 5: the engine's cheapest victim
    is the resident pod, which the replay does not own. The preemption is not applied, and said."""
    from gangplan.replay.timed import run_timed
    from gangplan.replay.traces import read_nodes, read_trace

    trace = "job,submit,duration,workers,cpu_milli,memory_mib,gpu,priority\nlow,0,100,1,1000,1024,8,7\nhigh,10,50,1,1000,1024,8,10\n"
    jobs, nodes = _files(tmp_path, trace)
    seen = []
    run = run_timed(
        read_nodes(nodes),
        read_trace(jobs).jobs,
        "default",
        0,
        typical=[],
        on_preempt=lambda now, k, pr: seen.append(pr),
    )
    low, high = run.records
    assert [pr.foreign for pr in seen][:1] == [["infra/resident"]]
    assert (low.evictions, high.start) == (0, 100)  # high waits for low to finish
    assert any("not applied" in n and "infra/resident" in n for n in run.notes)
