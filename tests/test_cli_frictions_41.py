"""Issue 41, the newcomer's CLI frictions: pipes and kubectl (a snapshot on standard input, the
``kubectl-gangplan`` plugin), help text, ``generate -o``, the flags some commands lacked, and the
lists and names the human output shortened."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from typer.testing import CliRunner

from gangplan.cli import app

# A kubectl List, as `kubectl get nodes,pods -A -o yaml` prints it: two nodes, one pending pod.
LIST_YAML = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
  status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
- apiVersion: v1
  kind: Node
  metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
  status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: p1, namespace: default}
  spec:
    containers: [{name: c, resources: {requests: {cpu: "2"}}}]
"""


def _run(args: list[str], stdin: str | bytes | None = None, env: dict | None = None):
    return CliRunner().invoke(app, args, input=stdin, env=env)


def _as_json_list() -> str:
    import yaml

    return json.dumps(yaml.safe_load(LIST_YAML))


# ---- 1. a snapshot on standard input ------------------------------------------------------------
def test_every_snapshot_command_reads_dash_as_standard_input(tmp_path: Path) -> None:
    for args in (
        ["inspect", "-"],
        ["solve", "-"],
        ["why", "-", "p1"],
        ["diff", "-", "--time-limit", "2"],
        ["expand", "-"],
        ["whatif", "-", "--drain", "n1", "--time-limit", "2"],
    ):
        res = _run(args, LIST_YAML)
        assert res.exit_code == 0, (args, res.output)
        assert "no such file" not in res.output
    res = _run(["inspect", "-"], LIST_YAML)
    assert "<stdin>" in res.stdout  # the summary names its source
    res = _run(["diff", "-", "--json", "--time-limit", "2"], LIST_YAML)
    assert json.loads(res.stdout)["snapshot"] == "<stdin>"


def test_standard_input_may_be_json_or_gzip_and_validate_reads_it(tmp_path: Path) -> None:
    res = _run(["solve", "-", "--json"], _as_json_list())
    assert res.exit_code == 0, res.output
    result = tmp_path / "result.json"
    result.write_text(res.stdout)
    res = _run(["validate", "-", str(result)], gzip.compress(LIST_YAML.encode()))
    assert res.exit_code == 0, res.output
    assert "valid" in res.stdout


def test_errors_on_standard_input_name_stdin() -> None:
    res = _run(["solve", "-"], "apiVersion: v1\nkind: Node\nmetadata: {name: n1\n")
    assert res.exit_code == 2
    assert "<stdin>" in res.stderr and "invalid YAML" in res.stderr
    res = _run(["diff", "-"], "")
    assert res.exit_code == 2
    assert "<stdin>" in res.stderr and "no objects" in res.stderr
    res = _run(["why", "-", "nope"], LIST_YAML)
    assert res.exit_code == 2
    assert "<stdin>" in res.stderr and "not a pending pod" in res.stderr
    res = _run(
        ["solve", "-", "--strict"], LIST_YAML.replace("resources:", "resourcez: {}, resources:")
    )
    assert res.exit_code == 2
    assert "<stdin>" in res.stderr and "Traceback" not in res.output


def test_a_terminal_on_standard_input_is_refused_not_waited_on(monkeypatch) -> None:
    import io
    import sys

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    from gangplan.io.errors import SnapshotError
    from gangplan.io.loader import load_snapshot

    monkeypatch.setattr(sys, "stdin", Tty(""))
    try:
        load_snapshot("-")
    except SnapshotError as e:
        assert "<stdin>" in str(e) and "terminal" in str(e)
    else:
        raise AssertionError("a terminal on stdin was read")


# ---- 2. the kubectl plugin ---------------------------------------------------------------------
def test_kubectl_gangplan_is_a_console_script_of_the_same_main(monkeypatch, capsys) -> None:
    import sys
    import tomllib

    import pytest

    from gangplan import cli

    scripts = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())[
        "project"
    ]["scripts"]
    assert scripts["kubectl-gangplan"] == scripts["gangplan"] == "gangplan.cli:main"
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/kubectl-gangplan", "diff", "--help"])
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as e:
        cli.main()
    assert e.value.code == 0
    assert "Usage: kubectl gangplan diff" in capsys.readouterr().out


# ---- 3. help text ------------------------------------------------------------------------------
def _leaf_commands():
    from gangplan.cli import command_tree

    def walk(group, prefix):
        for name, cmd in sorted(group.commands.items()):
            if hasattr(cmd, "commands"):
                yield from walk(cmd, [*prefix, name])
            else:
                yield [*prefix, name]

    return list(walk(command_tree(), []))


def test_help_shows_no_type_after_a_flag_and_is_not_squeezed_at_80_columns() -> None:
    import re

    for cmd in _leaf_commands():
        res = _run([*cmd, "--help"], env={"COLUMNS": "80"})
        assert res.exit_code == 0, (cmd, res.output)
        text = res.stdout
        assert "<bool>" not in text, cmd
        assert max(len(line) for line in text.splitlines()) <= 80, cmd
        # The help text starts at most 34 columns in (click's layout: 46 or more columns of it).
        starts = [
            m.start(2)
            for line in text.splitlines()
            if (m := re.match(r"^(  -\S.*?\S)  +(\S)", line))
        ]
        assert starts and max(starts) <= 34, (cmd, max(starts or [0]))
    text = _run(["solve", "--help"], env={"COLUMNS": "80"}).stdout
    assert re.search(r"^  --strict  +Treat inputs", text, re.M), text  # a flag: no metavar
    assert re.search(r"^  --json  +Print the Result", text, re.M)
    # `--strict true` is refused as an extra argument, not taken as a value.
    res = _run(["solve", "--strict", "true", "x.yaml"])
    assert res.exit_code == 2 and "unexpected extra argument" in res.output


# ---- 4. generate -o ----------------------------------------------------------------------------
def test_generate_o_is_the_file_and_a_format_word_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = _run(["generate", "gb200-nvl72", "-o", "json", "--nodes", "18", "--gangs", "2"])
    assert res.exit_code == 2
    assert "here -o is the file to write" in res.stderr and "solve/diff/whatif" in res.stderr
    assert not (tmp_path / "json").exists()
    res = _run(["generate", "gb200-nvl72", "-o", "cluster.yaml", "--nodes", "18", "--gangs", "2"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "cluster.yaml").is_file()
    res = _run(["import", "alibaba-nodes", "nodes.csv", "-o", "yaml"])
    assert res.exit_code == 2 and "here -o is the file to write" in res.stderr


# ---- 5. flags the commands lacked ---------------------------------------------------------------
def test_inspect_strict_refuses_what_it_would_warn_about() -> None:
    typo = LIST_YAML.replace("resources:", "resourcez: {}, resources:")
    assert _run(["inspect", "-"], typo).exit_code == 0
    res = _run(["inspect", "-", "--strict"], typo)
    assert res.exit_code == 2 and "--strict" in res.stderr and "resourcez" in res.stderr
    assert _run(["inspect", "-", "--strict"], LIST_YAML).exit_code == 0


def test_why_json_holds_the_outcome_and_the_cycle() -> None:
    big = LIST_YAML.replace('cpu: "2"', 'cpu: "16"')
    res = _run(["why", "-", "p1", "--json"], big)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert (
        doc["pod"] == "default/p1" and doc["snapshot"] == "<stdin>" and doc["kubeVersion"] == "1.37"
    )
    assert doc["outcome"]["node"] is None and "Insufficient cpu" in doc["outcome"]["reason"]
    assert doc["cycle"]["evaluatedNodes"] == 2 and doc["cycle"]["feasibleNodes"] == 0
    assert doc["cycle"]["rejections"] == {"NodeResourcesFit": {"Insufficient cpu": 2}}
    assert _run(["why", "-", "p1", "--json", "--kube-version", "1.36"], big).exit_code == 0


def test_validate_and_expand_take_kube_version(tmp_path: Path) -> None:
    res = _run(["solve", "-", "--json", "--kube-version", "1.36"], LIST_YAML)
    result = tmp_path / "r.json"
    result.write_text(res.stdout)
    for v in ("1.35", "1.36", "1.37", "1.38"):
        res = _run(["validate", "-", str(result), "--kube-version", v], LIST_YAML)
        assert res.exit_code == 0, (v, res.output)
        assert _run(["expand", "-", "--kube-version", v], LIST_YAML).exit_code == 0
    res = _run(["expand", "-", "--kube-version", "1.34"], LIST_YAML)
    assert res.exit_code == 2 and "--kube-version" in res.output


# ---- 6. the apiVersion hint ---------------------------------------------------------------------
def test_the_workload_api_version_hint_names_every_accepted_version() -> None:
    workload = (
        LIST_YAML
        + """\
- apiVersion: scheduling.k8s.io/v2
  kind: Workload
  metadata: {name: w, namespace: default}
  spec: {}
"""
    )
    res = _run(["inspect", "-", "--strict"], workload)
    assert res.exit_code == 2
    text = " ".join(res.stderr.split())
    for v in ("v1alpha1", "v1alpha2", "v1alpha3", "v1beta1"):
        assert f'"scheduling.k8s.io/{v}"' in text, (v, text)


# ---- 7. lists never hide just one name ----------------------------------------------------------
GANG_ON_3 = (
    "".join(
        f"""---
apiVersion: v1
kind: Node
metadata: {{name: gpu-b{i}, labels: {{kubernetes.io/hostname: gpu-b{i}}}}}
status: {{allocatable: {{cpu: "8", memory: 16Gi, pods: "110"}}}}
"""
        for i in (1, 2, 3)
    )
    + """---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: g, namespace: default}
spec:
  schedulingPolicy: {gang: {minCount: 3}}
"""
    + "".join(
        f"""---
apiVersion: v1
kind: Pod
metadata: {{name: w-{i}, namespace: default}}
spec:
  schedulingGroup: {{podGroupName: g}}
  containers: [{{name: c, resources: {{requests: {{cpu: "6"}}}}}}]
"""
        for i in range(3)
    )
)


def test_a_list_is_never_shortened_to_hide_one_name() -> None:
    from gangplan.render import _names, _short

    assert _short(["gpu-b1", "gpu-b2", "gpu-b3"], 2) == "gpu-b1, gpu-b2, gpu-b3"
    assert _short(list("abcd"), 2) == "a, b, ... (+2)"
    assert _names(list("abcde")) == "a, b, c, d, e"
    assert _names(list("abcdef")) == "a, b, c, d (+2)"
    res = _run(["solve", "-"], GANG_ON_3, env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    assert "gpu-b1, gpu-b2, gpu-b3" in res.stdout and "(+1)" not in res.stdout


# ---- 8. inspect prints node names whole -------------------------------------------------------------
def test_inspect_folds_long_node_names_instead_of_cutting_them() -> None:
    names = [
        f"gpu-node-{r}-very-long-hostname-for-a-dgx-h100-{i:02d}.cluster.internal.example.com"
        for r in ("a", "b")
        for i in range(2)
    ]
    text = "".join(
        f"""---
apiVersion: v1
kind: Node
metadata: {{name: {n}, labels: {{kubernetes.io/hostname: {n}, topology.kubernetes.io/rack: rack-{n[9]}-superpod-row-07}}}}
status: {{allocatable: {{cpu: "8", memory: 16Gi, pods: "110"}}}}
"""
        for n in names
    )
    for columns in ("80", "100"):
        res = _run(["inspect", "-"], text, env={"COLUMNS": columns})
        assert res.exit_code == 0, res.output
        lines = res.stdout.splitlines()
        assert max(len(line) for line in lines) <= int(columns)
        start = next(i for i, line in enumerate(lines) if line.startswith("Topology levels"))
        table = [line for line in lines[start:] if line.startswith("│")]
        table = table[: next((i for i, line in enumerate(table) if "└" in line), len(table))]
        last = "".join(line.rstrip("│ ").rsplit("│", 1)[-1] for line in table).replace(" ", "")
        labels = "".join(line.split("│")[1] for line in table).replace(" ", "")
        for n in names:
            assert n in last, (columns, n, res.stdout)
        assert "topology.kubernetes.io/rack" in labels and "kubernetes.io/hostname" in labels
        assert "…" not in "\n".join(table)


# ---- 9. the drain note counts running pods only -------------------------------------------------
def test_drain_counts_only_running_pods_as_evicted() -> None:
    bound = (
        LIST_YAML
        + """\
- apiVersion: v1
  kind: Pod
  metadata: {name: running, namespace: default}
  spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: done, namespace: default}
  spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
  status: {phase: Succeeded}
- apiVersion: v1
  kind: Pod
  metadata: {name: failed, namespace: default}
  spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
  status: {phase: Failed}
"""
    )
    res = _run(["whatif", "-", "--drain", "n1", "--time-limit", "2", "-o", "wide"], bound)
    assert res.exit_code == 0, res.output
    assert "1 node(s) cordoned, 1 bound pod(s) evicted" in " ".join(res.stdout.split()), res.stdout
