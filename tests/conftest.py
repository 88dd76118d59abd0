"""Shared fixtures: write a snapshot text to a temporary file and load it."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from gangplan.io.loader import load_snapshot
from gangplan.models.cluster import Cluster


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
    from gangplan.bench.builders import to_cluster
    from gangplan.bench.topology_shapes import generate_shape
    from gangplan.solver.diff import diff_snapshot

    cluster = to_cluster(generate_shape("dgx-h100-superpod", nodes=144, utilisation=0.4, seed=0, gangs=32), source="dgx.yaml")
    return cluster, diff_snapshot(cluster, snapshot="dgx.yaml")
