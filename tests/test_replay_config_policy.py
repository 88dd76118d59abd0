"""Replay policies given as a KubeSchedulerConfiguration file (issue 22, item 4: "the greedy with
any KubeSchedulerConfiguration ... or a configuration file").

* a file with the built-in ``mostallocated`` profile replays byte for byte like it;
* public configurations (kubernetes.io's MostAllocated example, an EKS bin-packing scheduler)
  load, run in both modes, and name what the replay cannot score;
* the policy's name is the file's stem; bad files exit 2 naming file and field; a changed file
  is a changed input for ``--resume``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.replay import replay, write_outputs
from gangplan.replay.policies import policy_from_file

runner = CliRunner()
HERE = Path(__file__).parent
FIX = HERE / "fixtures" / "scheduler-config"
BINPACK = HERE / "data" / "replay" / "binpack-cpu-mem.yaml"
JOBS = HERE / "data" / "replay" / "jobs.csv"
NODES = HERE / "data" / "replay" / "nodes.yaml"


def _strip(doc: dict, name: str) -> dict:
    doc = json.loads(json.dumps(doc).replace(f'"{name}"', '"P"'))
    doc["caveats"] = [c for c in doc["caveats"] if not c.startswith("policy ")]
    return doc


@pytest.mark.parametrize("mode", ["fill", "timed"])
def test_a_file_with_the_mostallocated_profile_replays_like_the_builtin(tmp_path, mode):
    a, b = tmp_path / "a", tmp_path / "b"
    write_outputs(
        replay(JOBS, NODES, mode=mode, policies=["mostallocated"], seeds=[1, 2], bound=False), a
    )
    out = replay(JOBS, NODES, mode=mode, policies=[str(BINPACK)], seeds=[1, 2], bound=False)
    write_outputs(out, b)
    assert list(out.summary.policies) == ["binpack-cpu-mem"]
    assert any("KubeSchedulerConfiguration" in c for c in out.summary.caveats)
    da, db = (
        json.loads((a / "summary.json").read_text()),
        json.loads((b / "summary.json").read_text()),
    )
    assert _strip(da, "mostallocated") == _strip(db, "binpack-cpu-mem")
    jobs_a = (a / "jobs.csv").read_text().replace("mostallocated,", "P,")
    assert jobs_a == (b / "jobs.csv").read_text().replace("binpack-cpu-mem,", "P,")


def test_public_configurations_load_and_name_what_the_replay_cannot_score():
    k8s = policy_from_file(str(FIX / "k8sio-mostallocated.yaml"))
    assert (k8s.name, k8s.profile.fit_strategy, k8s.selection, k8s.tie_break) == (
        "k8sio-mostallocated",
        "MostAllocated",
        "first",
        "random",
    )
    assert any("intel.com/bar, intel.com/foo" in w for w in k8s.warnings)
    eks = policy_from_file(str(FIX / "eks-mostallocated-gpu.yaml"))
    assert (
        "NodeResourcesBalancedAllocation" not in eks.profile.score_weights
        and "PodTopologySpread" not in eks.profile.score_weights
    )
    assert eks.profile.filter_plugins[-1] == "GpuShare"
    assert any("nvidia.com/gpu" in w for w in eks.warnings)
    out = replay(
        JOBS,
        NODES,
        mode="timed",
        policies=["default", str(FIX / "eks-mostallocated-gpu.yaml")],
        seeds=[3],
    )
    runs = {r.policy: r for r in out.summary.runs}
    assert (
        set(runs) == {"default", "eks-mostallocated-gpu"}
        and runs["eks-mostallocated-gpu"].placed == runs["default"].placed
    )
    assert any(
        c.startswith("policy eks-mostallocated-gpu: NodeResourcesFit scores nvidia.com/gpu")
        for c in out.summary.caveats
    )


def test_a_paper_scorer_named_in_a_file_chooses_its_gpus_as_that_policy(tmp_path):
    f = tmp_path / "fgd-only.yaml"
    f.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    score:\n"
        "      disabled:\n      - name: '*'\n      enabled:\n      - name: FGDFragmentation\n        weight: 1\n"
    )
    p = policy_from_file(str(f))
    assert p.selection == "fgd" and p.profile.score_weights == {"FGDFragmentation": 1}
    assert not any("not implemented" in w for w in p.warnings)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- percentageOfNodesToScore: 101\n",
            "percentageOfNodesToScore",
        ),
        (
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n"
            "    args:\n      scoringStrategy:\n        type: MostAlocated\n",
            "scoringStrategy.type",
        ),
        (
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: n0\nstatus:\n  allocatable:\n    cpu: '8'\n",
            "one KubeSchedulerConfiguration",
        ),
    ],
)
def test_bad_policy_files_exit_2_naming_file_and_field(tmp_path, text, where):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    res = runner.invoke(app, ["replay", str(JOBS), "--nodes", str(NODES), "--policy", str(f)])
    assert res.exit_code == 2, res.output
    assert "bad.yaml" in res.output and where in res.output and "Traceback" not in res.output


def test_missing_file_and_name_clash_exit_2(tmp_path):
    res = runner.invoke(
        app, ["replay", str(JOBS), "--nodes", str(NODES), "--policy", str(tmp_path / "nope.yaml")]
    )
    assert res.exit_code == 2 and "neither a built-in policy" in res.output
    clash = tmp_path / "fgd.yaml"
    clash.write_text(BINPACK.read_text())
    res = runner.invoke(app, ["replay", str(JOBS), "--nodes", str(NODES), "--policy", str(clash)])
    assert res.exit_code == 2 and "already taken" in res.output


def test_a_changed_policy_file_is_a_changed_input_for_resume(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text(BINPACK.read_text())
    d = tmp_path / "out"
    args = [
        "replay",
        str(JOBS),
        "--nodes",
        str(NODES),
        "--mode",
        "timed",
        "--policy",
        str(f),
        "--out",
        str(d),
    ]
    assert runner.invoke(app, args).exit_code == 0
    assert runner.invoke(app, [*args, "--resume"]).exit_code == 0
    f.write_text(
        BINPACK.read_text().replace(
            "weight: 1\n        - name: memory", "weight: 2\n        - name: memory"
        )
    )
    res = runner.invoke(app, [*args, "--resume"])
    assert res.exit_code == 2, res.output
