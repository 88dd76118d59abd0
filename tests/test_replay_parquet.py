"""``gangplan replay --parquet``: timeseries.parquet / jobs.parquet hold exactly the CSVs' tables
(issue 22: "Parquet with the pandas extra"); without pyarrow, exit 2 naming the extra. pyarrow
is in the test extra, so this is not skipped in CI."""

from __future__ import annotations

import builtins
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from gangplan.cli import app

DATA = Path(__file__).parent / "data" / "replay"
JOBS, NODES = DATA / "jobs.csv", DATA / "nodes.yaml"
runner = CliRunner()


@pytest.mark.parametrize("mode", ["fill", "timed"])
def test_parquet_tables_equal_the_csvs(tmp_path, mode):
    out = tmp_path / "out"
    r = runner.invoke(
        app,
        [
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
            "--parquet",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "timeseries.parquet, jobs.parquet" in r.output
    for t in ("timeseries", "jobs"):
        pq = pd.read_parquet(out / f"{t}.parquet")
        csv = pd.read_csv(out / f"{t}.csv", dtype={"policy": str, "job": str})
        pd.testing.assert_frame_equal(pq, csv)
        assert len(pq) > 0 and set(pq["policy"]) == {"default", "fgd"}
    jobs = pd.read_parquet(out / "jobs.parquet")
    assert jobs["seed"].dtype == "int64" and pd.api.types.is_string_dtype(jobs["job"])
    # deterministic bytes
    again = tmp_path / "again"
    runner.invoke(
        app,
        [
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
            str(again),
            "--parquet",
        ],
    )
    assert (again / "jobs.parquet").read_bytes() == (out / "jobs.parquet").read_bytes()


def test_parquet_without_pyarrow_exits_2_naming_the_extra(tmp_path, monkeypatch):
    real = builtins.__import__

    def no_pyarrow(name, *a, **kw):
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError("No module named 'pyarrow'")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    r = runner.invoke(
        app, ["replay", str(JOBS), "--nodes", str(NODES), "--out", str(tmp_path / "o"), "--parquet"]
    )
    assert r.exit_code == 2 and "gangplan[parquet]" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "o").exists()  # refused before the replay ran
    r = runner.invoke(app, ["replay", str(JOBS), "--nodes", str(NODES), "--parquet"])
    assert r.exit_code == 2 and "--parquet needs --out" in r.output
