"""Resume a killed replay from --out DIR (issue 22 must-show: "a killed replay can be resumed
from DIR without losing finished seeds", :mod:`gangplan.replay.resume`).

A replay is interrupted (Ctrl-C: a KeyboardInterrupt raised inside the third run), exits 130
naming the runs it saved, and ``--resume`` runs only the unfinished ones; every output file is
byte-identical to an uninterrupted replay's. The placements themselves are the ones the
uninterrupted replay makes (whose fill and timed runs the validator checks in
test_replay_gpushare / test_replay_timed); here only that nothing is lost or changed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gangplan.replay.run as run_mod
from gangplan.cli import app

DATA = Path(__file__).parent / "data" / "replay"
JOBS, NODES = DATA / "jobs.csv", DATA / "nodes.yaml"
OUTPUTS = ("summary.json", "timeseries.csv", "jobs.csv", "report.html")
runner = CliRunner()


def _args(mode: str, out: Path, *extra: str) -> list[str]:
    return [
        "replay",
        str(JOBS),
        "--nodes",
        str(NODES),
        "--mode",
        mode,
        "--policy",
        "default,fgd",
        "--seeds",
        "1,2",
        "--out",
        str(out),
        *extra,
    ]


def _counting(monkeypatch, name: str, stop_at: int | None = None) -> list[tuple[str, int]]:
    """Wrap run_fill / run_timed: record (policy, seed) of each call; raise KeyboardInterrupt
    in call ``stop_at`` (1-based) after the run's first progress tick, as Ctrl-C mid-run would."""
    real = getattr(run_mod, name)
    calls: list[tuple[str, int]] = []

    def wrapped(base, jobs, policy, seed, **kw):
        calls.append((policy if isinstance(policy, str) else policy.name, seed))
        if stop_at is not None and len(calls) == stop_at:
            tick = kw["progress"]

            def boom(n):
                tick(n)
                raise KeyboardInterrupt

            kw["progress"] = boom
        return real(base, jobs, policy, seed, **kw)

    monkeypatch.setattr(run_mod, name, wrapped)
    return calls


@pytest.mark.parametrize("mode,fn", [("fill", "run_fill"), ("timed", "run_timed")])
def test_a_killed_replay_resumes_to_byte_identical_outputs(tmp_path, monkeypatch, mode, fn):
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    r = runner.invoke(app, _args(mode, whole))
    assert r.exit_code == 0, r.output

    with monkeypatch.context() as m:
        _counting(m, fn, stop_at=3)
        r = runner.invoke(app, _args(mode, killed))
    assert r.exit_code == 130, r.output
    assert "Traceback" not in r.output
    assert (
        "2 finished run(s) saved" in r.output
        and "default-1, default-2" in r.output
        and "--resume" in r.output
    )
    assert sorted(p.name for p in (killed / "runs").iterdir()) == [
        "default-1.json",
        "default-2.json",
    ]  # no temp file left
    assert not (killed / "summary.json").exists()

    with monkeypatch.context() as m:
        calls = _counting(m, fn)
        r = runner.invoke(app, _args(mode, killed, "--resume"))
    assert r.exit_code == 0, r.output
    assert calls == [("fgd", 1), ("fgd", 2)]  # the finished seeds are not run again
    for name in OUTPUTS:
        assert (killed / name).read_bytes() == (whole / name).read_bytes(), name
    # every run of the uninterrupted replay was checkpointed the same way
    assert sorted(p.name for p in (whole / "runs").iterdir()) == sorted(
        p.name for p in (killed / "runs").iterdir()
    )


def test_resume_refuses_runs_of_other_inputs_or_flags(tmp_path):
    out = tmp_path / "out"
    assert runner.invoke(app, _args("timed", out)).exit_code == 0
    r = runner.invoke(app, _args("timed", out, "--resume", "--arrival-scale", "2"))
    assert r.exit_code == 2 and "other inputs or flags" in r.output and "Traceback" not in r.output
    other = tmp_path / "jobs.csv"
    other.write_text(JOBS.read_text().replace("7200", "7201", 1))
    r = runner.invoke(app, ["replay", str(other), *_args("timed", out, "--resume")[2:]])
    assert r.exit_code == 2 and "other inputs or flags" in r.output
    # a fresh replay (no --resume) into the same DIR starts afresh and replaces the run files
    r = runner.invoke(app, _args("timed", out, "--arrival-scale", "2"))
    assert r.exit_code == 0
    doc = json.loads((out / "runs" / "fgd-2.json").read_text())
    assert (
        doc["mode"] == "timed" and doc["run"]["policy"] == "fgd" and len(doc["fingerprint"]) == 64
    )


def test_resume_needs_out_and_interrupt_without_out_says_nothing_was_saved(monkeypatch):
    r = runner.invoke(app, ["replay", str(JOBS), "--nodes", str(NODES), "--resume"])
    assert r.exit_code == 2 and "--resume needs --out" in r.output
    _counting(monkeypatch, "run_fill", stop_at=1)
    r = runner.invoke(app, ["replay", str(JOBS), "--nodes", str(NODES)])
    assert r.exit_code == 130 and "nothing saved" in r.output


def test_a_shadow_run_reads_back_with_its_epochs(tmp_path, monkeypatch):
    """The shadow run's epoch records (wall times included, so no rerun could reproduce them)
    come back from DIR/runs: every output, epochs.csv too, is the same bytes."""
    src = Path(__file__).parent / "data" / "traces" / "philly-pollux" / "philly.csv"
    from gangplan.io.compressed import open_text

    lines = open_text(src).read().splitlines()
    keep = [line for line in lines[1:] if line and line.rsplit(",", 1)[-1] == "b436b2"][:30]
    trace = tmp_path / "philly.csv"
    trace.write_text("\n".join([lines[0], *keep]) + "\n")
    (tmp_path / "philly_vc.csv").write_text("vc,node num\nb436b2,2\n")
    out = tmp_path / "out"
    args = [
        "replay",
        str(trace),
        "--vc",
        "b436b2",
        "--mode",
        "timed",
        "--policy",
        "shadow",
        "--arrival-scale",
        "4",
        "--exact-time-limit",
        "1",
        "--export-epoch",
        "1",
        "--out",
        str(out),
        "--interval",
        "86400",
    ]
    assert runner.invoke(app, args).exit_code == 0
    names = ("summary.json", "timeseries.csv", "jobs.csv", "epochs.csv", "report.html")
    before = {n: (out / n).read_bytes() for n in names}
    calls = _counting(monkeypatch, "run_timed")
    r = runner.invoke(app, [*args, "--resume"])
    assert r.exit_code == 0, r.output
    assert calls == []
    assert {n: (out / n).read_bytes() for n in names} == before


def test_resume_refuses_runs_of_another_gangplan_code(tmp_path, monkeypatch):
    import gangplan.replay.resume as resume

    out = tmp_path / "out"
    assert runner.invoke(app, _args("fill", out)).exit_code == 0
    monkeypatch.setattr(resume, "code_hash", lambda: "0" * 64)
    r = runner.invoke(app, _args("fill", out, "--resume"))
    assert r.exit_code == 2 and "version or code" in r.output
