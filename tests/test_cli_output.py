"""CLI output details: ``--explain`` resolved before solving, the spinner only on a terminal, suite
titles from the directory, ``-o`` choices."""

from __future__ import annotations

import io
import shutil
import time
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

import gangplan.cli as cli
from gangplan.cli import app
from gangplan.spinner import Spinner

ROOT = Path(__file__).resolve().parent.parent
SHOWCASE = ROOT / "scenarios" / "showcase"
runner = CliRunner()


def test_explain_takes_a_bare_pod_name_when_it_is_unique() -> None:
    res = runner.invoke(
        app,
        ["solve", str(SHOWCASE / "driver-without-selector.yaml"), "--explain", "worker-1"],
        env={"COLUMNS": "100"},
    )
    assert res.exit_code == 0, res.output
    assert "ray/worker-1: not placed (0/3 nodes are available" in res.stdout
    assert (
        "rejected by NodeAffinity: 1 x node(s) didn't match Pod's node affinity/selector"
        in res.stdout
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "ray/workr-1",
            "'ray/workr-1' is not a pending pod of the snapshot (give namespace/name); did you mean ray/worker-1",
        ),
        ("drivr", "did you mean ray/driver"),
        ("nothing-like-it", "the snapshot has 3 pending pod(s), e.g. ray/driver"),
    ],
    ids=["a typo", "a near bare name", "no close match"],
)
def test_an_unknown_explain_pod_is_bad_input_before_any_solve(
    name: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(*a, **k):
        raise AssertionError("solved before checking --explain")

    monkeypatch.setattr(cli, "run_engine", never)
    res = runner.invoke(
        app,
        [
            "solve",
            str(SHOWCASE / "driver-without-selector.yaml"),
            "--explain",
            name,
            "--engine",
            "exact",
        ],
    )
    assert res.exit_code == 2
    text = " ".join(res.output.split())
    assert "driver-without-selector.yaml: --explain:" in text and message in text
    assert "Traceback" not in res.output


NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
"""


def test_an_ambiguous_bare_name_lists_the_candidates(tmp_path: Path) -> None:
    pod = "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: web, namespace: {ns}}}\nspec: {{containers: [{{name: c}}]}}\n"
    snap = tmp_path / "s.yaml"
    snap.write_text(NODE + pod.format(ns="a") + pod.format(ns="b"))
    res = runner.invoke(app, ["solve", str(snap), "--explain", "web"])
    assert res.exit_code == 2 and "ambiguous: a/web, b/web" in " ".join(res.output.split())
    assert runner.invoke(app, ["solve", str(snap), "--explain", "b/web"]).exit_code == 0


def test_explain_of_a_bound_pod_says_it_is_bound(write_text) -> None:
    snap = write_text("""\
        apiVersion: v1
        kind: Node
        metadata: {name: n1}
        status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: old, namespace: default}
        spec: {nodeName: n1, containers: [{name: c}]}
        """)
    res = runner.invoke(app, ["solve", str(snap), "--explain", "default/old"])
    assert (
        res.exit_code == 2
        and "Pod/default/old: --explain: pod default/old is bound to node n1, not pending"
        in " ".join(res.output.split())
    )


def test_the_suite_title_is_the_directory_name(tmp_path: Path) -> None:
    suite = tmp_path / "my-scenarios"
    suite.mkdir()
    shutil.copy(SHOWCASE / "gang-fits.yaml", suite / "gang-fits.yaml")
    res = runner.invoke(app, ["diff", "--suite", str(suite)], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0].startswith(
        "my-scenarios: greedy (kube-scheduler) vs optimal (CP-SAT)"
    )
    assert "Showcase" not in res.stdout and res.stderr == ""


def test_no_spinner_when_stderr_is_not_a_terminal_or_the_output_is_json() -> None:
    for args in (
        ["diff", str(SHOWCASE / "design-card-a100.yaml")],
        ["diff", str(SHOWCASE / "design-card-a100.yaml"), "--json"],
        ["solve", str(SHOWCASE / "design-card-a100.yaml"), "--engine", "exact", "-o", "json"],
    ):
        res = runner.invoke(app, args)
        assert res.exit_code in (0, 3) and res.stderr == ""
    assert Spinner(True, stream=io.StringIO()).enabled is False  # a pipe or a file: never


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_spinner_appears_on_a_terminal_only_after_the_delay_and_is_gone_after() -> None:
    quick = _Tty()
    with Spinner(True, delay=0.5, console=Console(file=quick, force_terminal=True, width=80)) as sp:
        sp.update("greedy")
    assert not sp.shown and quick.getvalue() == ""
    slow = _Tty()
    with Spinner(True, delay=0.05, console=Console(file=slow, force_terminal=True, width=80)) as sp:
        sp.update("exact: CP-SAT")
        deadline = time.monotonic() + 5
        while not sp.shown and time.monotonic() < deadline:
            time.sleep(0.01)
        sp.update("decisive step: exact probe 1")
        time.sleep(0.2)
    assert sp.shown and "decisive step: exact probe 1" in slow.getvalue()
    assert (
        Spinner(False, console=Console(file=_Tty(), force_terminal=True)).enabled is False
    )  # --json


def test_output_wide_is_accepted_by_solve_and_diff_and_a_bad_choice_exits_2() -> None:
    assert (
        runner.invoke(app, ["solve", str(SHOWCASE / "gang-fits.yaml"), "-o", "wide"]).exit_code == 0
    )
    assert (
        runner.invoke(app, ["diff", str(SHOWCASE / "gang-fits.yaml"), "--output", "wide"]).exit_code
        == 0
    )
    res = runner.invoke(app, ["solve", str(SHOWCASE / "gang-fits.yaml"), "-o", "yaml"])
    assert res.exit_code == 2 and "yaml" in res.output
