"""Kueue through the CLI (issue 42): exit codes, JSON, ``why`` on a job, ``whatif`` on quota."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import gangplan as gp
from gangplan.cli import app
from gangplan.models.result import Result
from gangplan.solver.validate import validate

ROOT = Path(__file__).resolve().parent.parent
FLAVORS = str(ROOT / "scenarios" / "showcase" / "kueue-flavor-order-strands.yaml")
runner = CliRunner()


def test_diff_json_has_kueue_and_exit_3():
    res = runner.invoke(app, ["diff", FLAVORS, "--json"])
    assert res.exit_code == 3, res.output
    doc = json.loads(res.stdout)
    k = doc["kueue"]
    assert (k["greedyAdmitted"], k["optimalAdmitted"], k["workloads"]) == (1, 2, 2)
    assert k["onlyOptimal"] == ["research/job-big-d095d"]
    assert k["decisive"]["workload"] == "research/job-small-dd6c0"
    assert "a100" in k["decisive"]["greedy"] and "h100" in k["decisive"]["optimal"]
    assert doc["decisive"] is None  # kube-scheduler's step is not searched: Kueue decided
    cluster = gp.load(FLAVORS)
    for side in ("greedy", "optimal"):
        r = Result.model_validate(doc[side])
        assert r.kueue is not None and validate(cluster, r) == []


def test_solve_json_reports_the_quota_behind_a_pending_job():
    res = runner.invoke(app, ["solve", FLAVORS, "--json"])
    assert res.exit_code == 0, res.output
    w = json.loads(res.stdout)["kueue"]["workloads"]["research/job-big-d095d"]
    assert not w["admitted"]
    gpu = {q["flavor"]: q for q in w["quota"] if q["resource"] == "nvidia.com/gpu"}
    assert (gpu["a100"]["requested"], gpu["a100"]["available"], gpu["a100"]["used"]) == (16, 12, 4)
    assert (gpu["h100"]["most"], gpu["h100"]["borrowing"]) == (8, 8)


def test_why_takes_the_job():
    res = runner.invoke(app, ["why", FLAVORS, "research/big"])
    assert res.exit_code == 0, res.output
    out = " ".join(res.stdout.split())
    assert "Kueue: Workload research/job-big-d095d" in out
    assert "quota nvidia.com/gpu in flavor a100: asks 16, 12 available" in out


def test_whatif_quota_and_cohort_variants():
    res = runner.invoke(
        app,
        [
            "whatif",
            FLAVORS,
            "--quota",
            "research:a100:nvidia.com/gpu=+4",
            "--cohort",
            "research=shared",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    rows = {r["variant"]: r for r in json.loads(res.stdout)}
    assert rows["snapshot"]["kueuePending"] == ["research/job-big-d095d"]
    assert "kueuePending" not in rows["quota research:a100:nvidia.com/gpu=+4"]
    assert rows["quota research:a100:nvidia.com/gpu=+4"]["kueue"]["greedyAdmitted"] == 2
    assert rows["cohort research=shared"]["kueuePending"] == ["research/job-big-d095d"]


def test_whatif_quota_bad_input_is_named():
    res = runner.invoke(app, ["whatif", FLAVORS, "--quota", "nope:a100:nvidia.com/gpu=4"])
    assert res.exit_code == 2
    assert "--quota" in res.output and "no ClusterQueue 'nope'" in res.output
    res = runner.invoke(app, ["whatif", FLAVORS, "--quota", "research:a100=4"])
    assert res.exit_code == 2 and "CQ:FLAVOR:RESOURCE=QUANTITY" in res.output
    res = runner.invoke(app, ["whatif", FLAVORS, "--quota", "research:a100:nvidia.com/gpu=lots"])
    assert res.exit_code == 2 and "--quota" in res.output


def test_kueue_version_is_chosen_and_recorded():
    for version in ("0.17", "0.18.4", "main"):
        res = runner.invoke(app, ["solve", FLAVORS, "--kueue-version", version, "--json"])
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert doc["params"]["kueueVersion"] == version == doc["kueue"]["version"]
    res = runner.invoke(app, ["solve", FLAVORS, "--kueue-version", "0.5"])
    assert (
        res.exit_code == 2
        and "--kueue-version" in res.output
        and "0.17, 0.18, 0.19, main" in res.output
    )
    assert gp.load(FLAVORS, kueue_version="main").kueue.version == "main"


def test_inspect_shows_kueue_queues_and_quota():
    path = str(ROOT / "scenarios" / "showcase" / "kueue-borrowing-limit.yaml")
    res = runner.invoke(app, ["inspect", path, "--json"])
    assert res.exit_code == 0, res.output
    k = json.loads(res.stdout)["kueue"]
    assert [(q["clusterQueue"], q["admitted"], q["pending"]) for q in k["queues"]] == [
        ("team-a", 0, 1),
        ("team-b", 0, 0),
    ]
    gpu = {r["clusterQueue"]: r for r in k["quota"] if r["resource"] == "nvidia.com/gpu"}
    assert (
        gpu["team-a"]["nominal"],
        gpu["team-a"]["borrowingLimit"],
        gpu["team-a"]["available"],
    ) == (8, 4, 12)
    assert gpu["team-b"]["available"] == 24
    res = runner.invoke(
        app, ["inspect", str(ROOT / "scenarios" / "showcase" / "gang-fits.yaml"), "--json"]
    )
    assert "kueue" not in json.loads(res.stdout)
