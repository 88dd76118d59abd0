"""Shared fixtures (write a snapshot text to a temporary file and load it) and the real-trace data.

Tests marked ``traces`` read third-party traces. They look in ``$GANGPLAN_DATA_DIR`` if set, else in
``../shared/data`` beside the clone if it holds every file they read, else in the compressed copies
the repository ships (``tests/data/traces``, sources and licences in its README), so a fresh clone
passes its own tests. The choice is made here, before any test module is imported, by setting
``GANGPLAN_DATA_DIR`` for this process and the CLI subprocesses it starts. The run's header says
which folder was used; when a file is missing there, each test that reads it is skipped with one
reason naming the files and ``GANGPLAN_DATA_DIR``.

Property tests (hypothesis) draw the same examples on every run (the ``deterministic`` profile:
``derandomize``, no example database), so a CI run's verdict does not depend on the draw; set
``HYPOTHESIS_PROFILE=explore`` to search with fresh random examples (and a database) instead.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

from gangplan.bench.generators.families import data_dir
from gangplan.io.compressed import resolve
from gangplan.io.loader import load_snapshot
from gangplan.models.cluster import Cluster

settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))

TRACE_FILES = (
    "philly-pollux/philly.csv",
    "alibaba-gpu-v2023/openb_node_list_gpu_node.csv",
    "alibaba-gpu-v2023/openb_node_list_all_node.csv",
    "alibaba-gpu-v2023/openb_pod_list_default.csv",
    "alibaba-gpu-v2023/openb_pod_list_multigpu50.csv",
    "alibaba-spot-gpu-v2026/node_info_df.csv",
    "alibaba-pai-v2020/pai_machine_spec.csv",
)
"""What the ``traces`` tests read, relative to the data directory (all shipped in ``tests/data/traces``)."""

BUNDLED = Path(__file__).resolve().parent / "data" / "traces"
"""The repository's xz copies of :data:`TRACE_FILES`."""


def missing_traces(folder: Path | None = None) -> list[str]:
    base = data_dir() if folder is None else folder
    return [f for f in TRACE_FILES if not resolve(base / f).is_file()]


if not os.environ.get("GANGPLAN_DATA_DIR") and missing_traces():
    os.environ["GANGPLAN_DATA_DIR"] = str(BUNDLED)


def pytest_report_header(config: pytest.Config) -> str:
    missing = missing_traces()
    where = "the repository's copies" if data_dir() == BUNDLED else "the full traces"
    if not missing:
        return f"real traces: {data_dir()} ({where}, all {len(TRACE_FILES)} files found)"
    return (
        f"real traces: MISSING in {data_dir()}: {', '.join(missing)}; tests marked `traces` are skipped "
        "(set GANGPLAN_DATA_DIR to a folder holding them)"
    )


def pytest_collection_finish(session: pytest.Session) -> None:
    """Say it before the first test too (the default ``-q`` hides the header)."""
    missing = missing_traces()
    needing = sum(1 for item in session.items if item.get_closest_marker("traces") is not None)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if missing and needing and reporter is not None:
        reporter.write_line(
            f"data missing: {needing} tests marked `traces` will be skipped; {pytest_report_header(session.config)}",
            yellow=True,
        )


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("traces") is not None:
        missing = missing_traces()
        if missing:
            pytest.skip(
                f"needs trace files {', '.join(missing)}, not in {data_dir()}: set GANGPLAN_DATA_DIR to a folder holding them"
            )


@pytest.fixture
def write_text(tmp_path: Path) -> Callable[..., Path]:
    """Write dedented ``text`` to ``tmp_path/name`` and return the path."""

    def write(text: str, name: str = "snapshot.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    return write


@pytest.fixture
def load_text(write_text: Callable[..., Path]) -> Callable[..., Cluster]:
    """Load a snapshot given as YAML or JSON text."""

    def load(text: str, name: str = "snapshot.yaml") -> Cluster:
        return load_snapshot(write_text(text, name))

    return load


@pytest.fixture(scope="session")
def dgx32():
    """The issue's case: ``gangplan generate dgx-h100-superpod --gangs 32 --utilisation 0.4`` and
    its diff with default options, computed once for the tests that read it."""
    from gangplan.bench.generators.builders import to_cluster
    from gangplan.bench.generators.topology_shapes import generate_shape
    from gangplan.solver.diff import diff_snapshot

    cluster = to_cluster(
        generate_shape("dgx-h100-superpod", nodes=144, utilisation=0.4, seed=0, gangs=32),
        source="dgx.yaml",
    )
    return cluster, diff_snapshot(cluster, snapshot="dgx.yaml")


@pytest.fixture
def checked(monkeypatch):
    """Every exact epoch solve of the replay's ``shadow`` and ``optimal`` policies through the
    validator; the solves, in order."""
    import gangplan.replay.optimal as optimal_mod
    import gangplan.replay.shadow as shadow_mod
    from gangplan.solver.validate import validate

    seen = []
    real = shadow_mod.solve_epoch

    def wrapped(*a, **kw):
        es = real(*a, **kw)
        assert validate(es.cluster, es.result) == []
        seen.append(es)
        return es

    monkeypatch.setattr(optimal_mod, "solve_epoch", wrapped)
    monkeypatch.setattr(shadow_mod, "solve_epoch", wrapped)
    return seen
