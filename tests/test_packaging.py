"""gangplan as a user installs it (issue 41): ``pip install .`` or a wheel from a package index must
carry every file the package reads at run time, and ``gangplan --version`` names the version.

An editable install (the README's and CI's ``pip install -e``) reads data files from the checkout,
so a file the wheel leaves out is invisible there: ``gangplan/io/schema/fields.json`` was missing
from every wheel and each ``solve``/``diff``/``gp.solve`` from site-packages failed. The fast tests
check the declaration in ``pyproject.toml``; the ``slow`` one builds the wheel and the sdist and
compares their file lists with the package's files. ``.ci/wheel-check`` does the whole round trip
(fresh venv outside the repository, showcase suite, a small replay) on every CI run.
"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gangplan
from gangplan.cli import app

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gangplan"


def _package_files() -> list[str]:
    """Files under gangplan/ (relative to the repository), minus caches: the tracked ones in a
    checkout, else what is on disk."""
    if (ROOT / ".git").exists():
        out = subprocess.run(
            ["git", "ls-files", "gangplan"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        return [f for f in out.splitlines() if f and (ROOT / f).is_file()]
    return [
        str(p.relative_to(ROOT))
        for p in PACKAGE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    ]


def _data_files() -> list[str]:
    """Every non-Python file of the package: each is read at run time (fields.json by
    gangplan.io.schema) or it would not be in the package."""
    return sorted(f for f in _package_files() if not f.endswith(".py"))


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as setuptools applies it to package data: ``*`` and ``?`` stay within a directory,
    ``**/`` spans any number of them."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out)


def _declared(path: str, package_data: dict[str, list[str]]) -> bool:
    """Whether ``[tool.setuptools.package-data]`` ships ``path``: a key names a package
    (``gangplan.io.schema``; ``*`` or ``""`` for every package) and its patterns are relative to
    that package's directory."""
    parts = path.split("/")
    ancestors = ["/".join(parts[:i]) for i in range(1, len(parts))]  # gangplan, gangplan/io, ...
    for key, patterns in package_data.items():
        dirs = ancestors if key in ("*", "") else [key.replace(".", "/")]
        for d in dirs:
            if d in ancestors:
                rel = path[len(d) + 1 :]
                if any(_glob_regex(p).fullmatch(rel) for p in patterns):
                    return True
    return False


def test_every_data_file_of_the_package_is_declared_as_package_data():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    package_data = setuptools.get("package-data", {})
    data = _data_files()
    assert "gangplan/io/schema/fields.json" in data  # the file the schema check reads
    missing = [f for f in data if not _declared(f, package_data)]
    assert missing == [], (
        f"not shipped in a wheel (add to [tool.setuptools.package-data] in pyproject.toml): {missing}"
    )


def test_the_schema_table_is_read_from_the_package_directory():
    """The one run-time read of a data file; if it moves, the declaration above must follow it."""
    from gangplan.io import schema

    assert schema._TABLE_PATH == PACKAGE / "io" / "schema" / "fields.json"
    assert schema._TABLE_PATH.is_file()


def test_version_option_prints_the_installed_version():
    r = CliRunner().invoke(app, ["--version"])
    assert r.exit_code == 0, r.output
    assert r.output == f"gangplan {importlib.metadata.version('gangplan')}\n"
    assert importlib.metadata.version("gangplan") == gangplan.__version__


def test_version_option_from_the_console_script():
    r = subprocess.run(
        [sys.executable, "-c", "from gangplan.cli import main; main()", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (r.returncode, r.stdout, r.stderr) == (0, f"gangplan {gangplan.__version__}\n", "")


def test_version_falls_back_to_the_package_version(monkeypatch):
    import gangplan.cli as cli

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert cli._version() == gangplan.__version__


@pytest.mark.slow
def test_wheel_and_sdist_carry_every_package_file(tmp_path):
    """Build the sdist from a copy of the tracked files, the wheel from that sdist (as pip does
    for an sdist on an index) and the wheel from the copy itself; each holds every package file."""
    src = tmp_path / "src"
    src.mkdir()
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    subprocess.run(
        ["tar", "-C", str(ROOT), "--null", "-T", "-", "-cf", str(tmp_path / "src.tar")],
        input=tracked,
        check=True,
    )
    subprocess.run(["tar", "-C", str(src), "-xf", str(tmp_path / "src.tar")], check=True)
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-c", f"import setuptools.build_meta as b; b.build_sdist({str(dist)!r})"],
        cwd=src,
        check=True,
        capture_output=True,
    )
    (sdist,) = dist.glob("gangplan-*.tar.gz")
    with tarfile.open(sdist) as t:
        top = t.getnames()[0].split("/", 1)[0]
        in_sdist = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
        t.extractall(tmp_path / "unpacked", filter="data")
    expected = set(_package_files())
    assert expected - in_sdist == set()
    for name, source in (("from-sdist", tmp_path / "unpacked" / top), ("from-tree", src)):
        out = tmp_path / name
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
            check=True,
            capture_output=True,
        )
        (whl,) = out.glob("gangplan-*.whl")
        in_wheel = {n for n in zipfile.ZipFile(whl).namelist() if n.startswith("gangplan/")}
        assert in_wheel == expected, (name, sorted(expected ^ in_wheel))
