"""Nothing a run leaves behind (Result JSON, results databases, CSV, scratch YAML) is committed at
the repository's root, and no database is committed anywhere: a stray ``yaml`` Result sat at the
root for several rounds before anyone noticed."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ALLOWED_AT_ROOT = {
    ".ci",
    ".gitignore",
    "README.md",
    "pyproject.toml",
    "mkdocs.yml",
    "LICENSE",
    "benchmarks",
    "docs",
    "examples",
    "gangplan",
    "scenarios",
    "tests",
}
"""What belongs at the root: the package, its tests, data, docs and build files."""

ARTEFACT_SUFFIXES = (".db", ".sqlite", ".sqlite3", ".pyc")


def _committed() -> list[str]:
    """Files in the index, or on disk (minus caches and ignored build output) outside a checkout."""
    if (ROOT / ".git").exists():
        out = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        return [line for line in out.splitlines() if line]
    skip = {
        ".git",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".benchmarks",
        "__pycache__",
        "report",
        "site",
        "build",
        "dist",
    }
    return [
        str(p.relative_to(ROOT))
        for p in ROOT.rglob("*")
        if p.is_file()
        and not (set(p.relative_to(ROOT).parts) & skip)
        and not p.parts[-2].endswith(".egg-info")
    ]


def test_only_the_package_its_tests_data_and_docs_sit_at_the_root():
    top = {f.split("/", 1)[0] for f in _committed()}
    assert top - ALLOWED_AT_ROOT == set(), (
        f"unexpected at the repository root: {sorted(top - ALLOWED_AT_ROOT)}"
    )


def test_no_results_database_is_committed():
    found = [f for f in _committed() if f.endswith(ARTEFACT_SUFFIXES)]
    assert found == []
