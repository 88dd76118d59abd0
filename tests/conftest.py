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
