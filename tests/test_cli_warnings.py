"""solve / diff name every unmodelled input in a warning (stderr and JSON); --strict refuses them."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from gangplan.cli import app

DRA = Path(__file__).resolve().parent / "fixtures" / "upstream" / "jobset-was-dra.yaml"
CLEAN = Path(__file__).resolve().parent / "fixtures" / "api" / "v1alpha2-v1.36.yaml"
runner = CliRunner()  # click >= 8.2 keeps stderr apart (res.stderr)


def test_solve_prints_one_warning_line_per_kind_on_stderr_and_carries_them_in_the_json() -> None:
    res = runner.invoke(
        app, ["solve", str(DRA), "--json", "--kube-version", "1.36"]
    )  # the fixture's release
    assert res.exit_code == 0, res.output
    result = json.loads(res.stdout)
    # The ResourceClaimTemplate and the PodGroup's claims (KEP-5729) are read (gangplan.dra); the
    # Workload template's copy of the claims is not.
    assert len(result["warnings"]) == 1
    assert result["warnings"][0].startswith(
        "Workload spec.podGroupTemplates[].resourceClaims: 1 object (default/training-workload)"
    )
    assert [line for line in res.stderr.splitlines() if line.startswith("warning: ")] == [
        f"warning: {w}" for w in result["warnings"]
    ]


def test_a_release_mismatch_is_a_warning_too_but_not_bad_input_under_strict() -> None:
    """The fixture is v1.36 (scheduling.k8s.io/v1alpha2); reproducing v1.37 on it says so, on stderr
    and in the JSON, and --strict still refuses only the unmodelled input (1)."""
    res = runner.invoke(app, ["solve", str(DRA), "--json"])
    assert res.exit_code == 0, res.output
    warnings = json.loads(res.stdout)["warnings"]
    release = [w for w in warnings if "which kube-apiserver v1.37 does not serve" in w]
    assert (
        len(warnings) == 1 + len(release) and release and all("suggest v1.36" in w for w in release)
    )
    assert [line for line in res.stderr.splitlines() if line.startswith("warning: ")] == [
        f"warning: {w}" for w in warnings
    ]


def test_strict_turns_the_warnings_into_bad_input() -> None:
    for cmd in (
        ["solve", str(DRA), "--strict"],
        ["diff", str(DRA), "--strict", "--time-limit", "1"],
    ):
        res = runner.invoke(app, cmd)
        assert res.exit_code == 2, res.output
        assert "--strict: 1 input(s) gangplan does not model" in res.stderr
        assert "Workload spec.podGroupTemplates[].resourceClaims: 1 object" in res.stderr


def test_strict_accepts_a_snapshot_with_nothing_unmodelled() -> None:
    res = runner.invoke(
        app,
        ["diff", str(CLEAN), "--strict", "--json", "--time-limit", "2", "--kube-version", "1.36"],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["warnings"] == []


def test_inspect_lists_what_is_not_modelled() -> None:
    res = runner.invoke(app, ["inspect", str(DRA), "--json"])
    assert res.exit_code == 0
    assert len(json.loads(res.stdout)["warnings"]) == 1


def test_plugins_the_configuration_enables_that_gangplan_does_not_implement_are_named(
    tmp_path,
) -> None:
    """A KubeSchedulerConfiguration enabling an out-of-tree Filter/Score plugin and an unknown
    PlacementScore plugin: both engines run without them, and a warning names each set and plugin."""
    from gangplan.io.loader import load_snapshot

    snap = tmp_path / "s.yaml"
    snap.write_text("""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter: {enabled: [{name: NodeResourceTopologyMatch}]}
    score: {enabled: [{name: NodeResourceTopologyMatch, weight: 2}, {name: ImageLocality, weight: 3}]}
    placementScore: {enabled: [{name: MyPlacementScorer, weight: 1}]}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 2Gi, pods: "10"}}
""")
    warnings = load_snapshot(snap).warnings
    named = sorted(
        w.split(":")[0] + " " + w.split("(")[1].split(")")[0]
        for w in warnings
        if "not implemented by gangplan" in w
    )
    assert named == [
        "KubeSchedulerConfiguration profiles[].plugins.filter NodeResourceTopologyMatch",
        "KubeSchedulerConfiguration profiles[].plugins.placementScore MyPlacementScorer",
        "KubeSchedulerConfiguration profiles[].plugins.score NodeResourceTopologyMatch",
    ]
