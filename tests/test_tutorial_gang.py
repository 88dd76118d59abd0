"""The "Will my gang fit?" tutorial (issue 41): its gang YAML is a valid v1.37 job that gangplan
admits with ``--strict`` on a small 2-rack GPU cluster, it would not be without the GPU limits
(the API server's rule), and its capture command lists what the README's lists."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from typer.testing import CliRunner

from gangplan.cli import app

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "tutorials" / "will-my-gang-fit.md"
runner = CliRunner()


def _fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.S | re.M)


def _cluster(directory: Path) -> None:
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"gpu-{r}{i}",
                "labels": {
                    "kubernetes.io/hostname": f"gpu-{r}{i}",
                    "topology.kubernetes.io/rack": f"rack-{r}",
                },
            },
            "status": {
                "allocatable": {
                    "cpu": "96",
                    "memory": "1000Gi",
                    "pods": "110",
                    "nvidia.com/gpu": "8",
                }
            },
        }
        for r in "ab"
        for i in (1, 2, 3)
    ]
    (directory / "cluster.yaml").write_text(yaml.safe_dump_all(nodes))


def _gang() -> str:
    [body] = _fenced(PAGE.read_text(), "yaml")
    return body


def test_the_tutorial_gang_is_a_v137_workload_podgroup_and_pods_with_gpu_limits():
    docs = list(yaml.safe_load_all(_gang()))
    assert [(d["apiVersion"], d["kind"]) for d in docs] == [
        ("scheduling.k8s.io/v1beta1", "Workload"),
        ("scheduling.k8s.io/v1beta1", "PodGroup"),
        ("v1", "Pod"),
        ("v1", "Pod"),
    ]
    pg = docs[1]["spec"]
    assert pg["schedulingConstraints"]["topology"] == [{"key": "topology.kubernetes.io/rack"}]
    assert pg["workloadRef"] == {"workloadName": "train", "templateName": "workers"}
    for pod in docs[2:]:
        assert pod["spec"]["schedulingGroup"] == {"podGroupName": "train-workers"}
        res = pod["spec"]["containers"][0]["resources"]
        assert res["requests"]["nvidia.com/gpu"] == res["limits"]["nvidia.com/gpu"] == "8"


def test_the_tutorial_gang_is_admitted_in_one_rack_under_strict(tmp_path: Path):
    _cluster(tmp_path)
    (tmp_path / "job.yaml").write_text(_gang())
    res = runner.invoke(app, ["solve", str(tmp_path), "--strict"])
    assert res.exit_code == 0, res.output
    assert re.search(r"ml/train-workers\s+admitted 2 rack=rack-a", res.output), res.output


def test_without_the_gpu_limit_the_pod_is_refused(tmp_path: Path):
    _cluster(tmp_path)
    (tmp_path / "job.yaml").write_text(_gang().replace('      limits: {nvidia.com/gpu: "8"}\n', ""))
    res = runner.invoke(app, ["solve", str(tmp_path)])
    assert (
        res.exit_code == 2
        and "limits[nvidia.com/gpu]" in res.output
        and "Traceback" not in res.output
    ), res.output


def _kinds(text: str) -> list[str]:
    return [m.split(",") for m in re.findall(r"kubectl get -A -o yaml (\S+) >", text)][0]


def test_the_capture_command_lists_what_the_readme_lists():
    readme = (ROOT / "README.md").read_text()
    readme_capture = readme[readme.index("## Capture your cluster") :]
    assert _kinds(PAGE.read_text()) == _kinds(readme_capture)
