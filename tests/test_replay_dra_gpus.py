"""A ``--nodes`` snapshot whose GPUs are DRA devices (:mod:`gangplan.replay.dragpus`): before,
such a node had 0 replay GPUs and nothing said so."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io.errors import SnapshotError
from gangplan.models.well_known import GPU, GPU_PRODUCT
from gangplan.replay import replay
from gangplan.replay.traces import read_nodes, resident_objects

DATA = Path(__file__).parent / "data" / "replay"
FIXTURES = Path(__file__).parent / "fixtures" / "dra"
H100 = "NVIDIA-H100-80GB-HBM3"
JOBS = (
    "job,submit,duration,workers,cpu_milli,memory_mib,gpu,min_count,priority,required_topology_key,preferred_topology_key,gpu_model\n"
    f"a,0,100,1,1000,1024,5,1,0,,,{H100}\nb,0,100,1,1000,1024,1,1,0,,,\n"
)


def test_dra_gpus_become_the_nodes_gpus_and_the_running_pods_hold_theirs():
    c = read_nodes(DATA / "dra-gpus.yaml")
    [node] = c.nodes
    assert node.allocatable[GPU] == 7  # 8 devices, gpu-2 held by a claim of no pod in the snapshot
    assert node.labels[GPU_PRODUCT] == H100  # the driver's productName attribute
    [trainer] = c.pods
    assert (trainer.key, trainer.requests[GPU]) == ("ml/trainer", 2)
    assert any("2 are held by 1 bound pods, 1 by claims of no bound pod" in w for w in c.warnings)
    assert any("ml/queued" in w and "not replayed" in w for w in c.warnings)
    # what the exact epochs see of it: nvidia.com/gpu instead of its claim
    [pod] = [o for o in resident_objects(c) if o["kind"] == "Pod"]
    assert "resourceClaims" not in pod["spec"]
    assert pod["spec"]["containers"][0]["resources"]["requests"][GPU] == "2"


def test_a_timed_replay_on_dra_gpus_sees_five_free(tmp_path, checked):
    jobs = tmp_path / "jobs.csv"
    jobs.write_text(JOBS)
    out = replay(jobs, DATA / "dra-gpus.yaml", mode="timed", policies=["shadow"])
    [run] = out.timed
    assert run.capacity_gpus == 7
    a, b = run.records
    assert (a.start, b.start) == (0, 100)  # a takes 5 of the 5 free GPUs; b waits for it
    assert [r.regret_jobs for r in run.shadow.records] == [0, 0]
    # the epoch objective counts GPUs after jobs (shadow.EPOCH_OBJECTIVE): without that tier the
    # optimum at t=0 started b (1 GPU) in place of a (5) and reported a regret of -4 GPUs
    assert [(r.greedy_gpus, r.exact_gpus) for r in run.shadow.records] == [(5, 5), (1, 1)]
    for es in checked:
        resident = next(p for p in es.cluster.pods if p.key == "ml/trainer")
        assert resident.node_name == "h100-0" and resident.requests[GPU] == 2


def test_shared_devices_count_whole_and_other_drivers_are_named():
    c = read_nodes(FIXTURES / "shared-gpu-consumable-capacity.yaml")
    assert sum(n.allocatable.get(GPU, 0) for n in c.nodes) == 3
    assert [p.requests.get(GPU) for p in c.pods] == [1]  # half of gpu-1's device, held whole
    assert any(
        "shared through consumable capacity (shareID) count as held whole" in w for w in c.warnings
    )
    c = read_nodes(FIXTURES / "dranet-gpu-nic-pcie-root.yaml")
    assert sum(n.allocatable.get(GPU, 0) for n in c.nodes) == 9
    assert any("dra.net" in w and "not modelled" in w for w in c.warnings)


def test_gpu_class_errors_exit_2(tmp_path):
    jobs = tmp_path / "jobs.csv"
    jobs.write_text(JOBS)
    with pytest.raises(SnapshotError, match="no DeviceClass 'nope'"):
        read_nodes(DATA / "dra-gpus.yaml", gpu_class="nope")
    two = tmp_path / "two.yaml"
    text = (DATA / "dra-gpus.yaml").read_text()
    two.write_text(
        text
        + "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: any-gpu.example.com}\n"
        "spec:\n  selectors:\n  - cel: {expression: \"device.driver == 'gpu.nvidia.com'\"}\n"
    )
    runner = CliRunner()
    res = runner.invoke(app, ["replay", str(jobs), "--nodes", str(two), "--mode", "timed"])
    assert (
        res.exit_code == 2
        and "several DeviceClasses select GPU devices" in res.output
        and "--gpu-class" in res.output
    )
    res = runner.invoke(
        app,
        [
            "replay",
            str(jobs),
            "--nodes",
            str(two),
            "--mode",
            "timed",
            "--gpu-class",
            "gpu.nvidia.com",
        ],
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(
        app,
        [
            "replay",
            str(jobs),
            "--nodes",
            "unlimited",
            "--mode",
            "timed",
            "--gpu-class",
            "gpu.nvidia.com",
        ],
    )
    assert res.exit_code == 2 and "--gpu-class" in res.output


def test_a_podgroup_claim_is_held_by_the_groups_bound_pod(tmp_path):
    """KEP-5729: a PodGroup's claim is reserved for the PodGroup; its GPUs are held by the
    group's bound pod on the devices' node (not taken off the node as held by nobody)."""
    text = (DATA / "dra-gpus.yaml").read_text()
    text = text.replace(
        "reservedFor: [{resource: pods, name: trainer, uid: 5b1d0c3e-7a44-4d8e-9f61-0e2c7a9b1d44}]",
        "reservedFor: [{apiGroup: scheduling.k8s.io, resource: podgroups, name: team}]",
    )
    text = text.replace(
        "spec:\n  nodeName: h100-0\n",
        "spec:\n  nodeName: h100-0\n  schedulingGroup: {podGroupName: team}\n",
    )
    text += (
        "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: team, namespace: ml}\n"
        "spec:\n  schedulingPolicy: {gang: {minCount: 1}}\n  resourceClaims: [{name: gpus, resourceClaimName: trainer-gpus}]\n"
    )
    assert text.count("podgroups") == 1 and "podGroupName: team" in text
    snap = tmp_path / "nodes.yaml"
    snap.write_text(text)
    c = read_nodes(snap)
    [trainer] = c.pods
    assert trainer.requests[GPU] == 2 and c.nodes[0].allocatable[GPU] == 7


def test_one_device_shared_by_two_running_pods_is_held_once(tmp_path):
    """Two running pods hold shares (KEP-5075 shareID) of the same GPU: the device is held
    whole once, by the first claim's pod, not once per share."""
    text = (FIXTURES / "shared-gpu-consumable-capacity.yaml").read_text()
    extra = """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: running-quarter, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: shared-gpu.example.com
        capacity: {requests: {milli: "250"}}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.example.com, pool: gpu-1, device: gpu-0, shareID: 9a2d4e6f-1b3c-4d5e-8f7a-6b5c4d3e2f10, consumedCapacity: {milli: "250"}}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields: [{key: metadata.name, operator: In, values: [gpu-1]}]
  reservedFor: [{resource: pods, name: running-2}]
---
apiVersion: v1
kind: Pod
metadata: {name: running-2, namespace: default}
spec:
  nodeName: gpu-1
  containers: [{name: c, image: infer, resources: {requests: {cpu: "1"}}}]
  resourceClaims: [{name: gpu, resourceClaimName: running-quarter}]
"""
    snap = tmp_path / "nodes.yaml"
    snap.write_text(text + extra)
    c = read_nodes(snap)
    assert sorted((p.name, p.requests.get(GPU, 0)) for p in c.pods) == [
        ("running", 1),
        ("running-2", 0),
    ]
    assert any("1 GPU devices shared through consumable capacity" in w for w in c.warnings)
