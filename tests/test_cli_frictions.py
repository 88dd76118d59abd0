"""Small things a newcomer trips on: a closed pipe (``gangplan ... | head``) ends quietly with 0,
and names in tables are printed whole however narrow the terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from gangplan.cli import app

LONG_GROUP = "llama-3-70b-pretraining-run-2026-11-30-attempt-17-with-long-suffix"
LONG_SNAPSHOT = f"""
apiVersion: v1
kind: Node
metadata: {{name: n1, labels: {{kubernetes.io/hostname: n1}}}}
status: {{allocatable: {{cpu: "8", memory: 16Gi, pods: "110"}}}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {{name: {LONG_GROUP}, namespace: ml-research-team}}
spec:
  schedulingPolicy: {{gang: {{minCount: 2}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: single-pod-with-a-rather-long-name-that-does-not-fit-anywhere-0123456789, namespace: ml-research-team}}
spec:
  containers: [{{name: c, resources: {{requests: {{cpu: "16"}}}}}}]
""" + "".join(
    f"""---
apiVersion: v1
kind: Pod
metadata: {{name: w-{i}, namespace: ml-research-team}}
spec:
  schedulingGroup: {{podGroupName: {LONG_GROUP}}}
  containers: [{{name: c, resources: {{requests: {{cpu: "6"}}}}}}]
"""
    for i in range(2)
)


def test_a_closed_pipe_ends_quietly_with_exit_0(tmp_path: Path, write_text):
    """The reader is gone before the first write (its end of the pipe is closed up front, so the
    test does not race): each write fails with EPIPE, which click alone turns into exit 1."""
    path = write_text(LONG_SNAPSHOT)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for extra in ([], ["--json"], ["-o", "wide"]):
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            proc = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "from gangplan.cli import main; main()",
                    "solve",
                    str(path),
                    *extra,
                ],
                stdout=write_end,
                stderr=subprocess.PIPE,
                env=env,
                timeout=300,
            )
        finally:
            os.close(write_end)
        stderr = proc.stderr.decode()
        assert proc.returncode == 0, (extra, stderr)
        assert "Traceback" not in stderr and "error" not in stderr.lower(), (extra, stderr)


def test_names_are_printed_whole_in_a_100_column_table(write_text):
    path = write_text(LONG_SNAPSHOT)
    runner = CliRunner(env={"COLUMNS": "100"})
    for command in (["solve", str(path)], ["diff", str(path)], ["inspect", str(path)]):
        result = runner.invoke(app, command)
        assert result.exit_code in (0, 3), result.output
        assert f"ml-research-team/{LONG_GROUP}" in result.stdout, (command, result.stdout)
    solved = runner.invoke(app, ["solve", str(path)]).stdout
    assert (
        "ml-research-team/single-pod-with-a-rather-long-name-that-does-not-fit-anywhere-0123456789"
        in solved
    )
