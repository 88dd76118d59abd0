"""The documentation builds and its code runs.

* ``mkdocs build --strict`` (warnings are errors: a broken link, a page outside the nav, a
  docstring mkdocstrings cannot read) succeeds on the repository's ``mkdocs.yml``.
* Every fenced code block in ``README.md`` and ``docs/`` says what it is, and what can run, runs:

  ``python``   executed, the blocks of one page in order in one namespace (as a notebook);
  ``console``  each ``$ command`` line is run by bash, in one scratch directory per page that sees
               the repository's ``scenarios/`` and ``examples/``; it must exit 0, or the code its
               ``# exit N`` comment names; a line whose comment starts with ``slow`` runs in the
               ``slow`` suite; the lines without ``$`` are output, not checked (timings move);
  ``yaml``     a snapshot or a KubeSchedulerConfiguration: every document loads; a what-if
               variant (objects annotated ``gangplan.io/remove``) loads laid over the GB200 showcase;
  ``json``     parses;
  ``text``     output, pseudo-code, layouts: not run;
  ``shell``    commands that need a real cluster or an install (kubectl, pip): not run, and so
               they may not hold a ``gangplan`` command (that belongs in ``console``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from gangplan.io import overlay
from gangplan.io.loader import load_objects, load_pairs

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
LANGUAGES = {"python", "console", "yaml", "json", "text", "shell"}
FENCE = re.compile(r"^```([A-Za-z]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
EXIT = re.compile(r"#\s*exit (\d+)")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    language: str
    body: str

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    return [
        Block(page, text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2))
        for m in FENCE.finditer(text)
    ]


def commands(block: Block) -> list[tuple[str, int, bool]]:
    """(command, expected exit code, slow) for each ``$`` line of a console block."""
    out = []
    for line in block.body.splitlines():
        if not line.startswith("$ "):
            continue
        command = line[2:]
        comment = command.split("#", 1)[1].strip() if "#" in command else ""
        m = EXIT.search(command)
        out.append((command, int(m.group(1)) if m else 0, comment.startswith("slow")))
    return out


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def test_the_documentation_builds_with_warnings_as_errors(tmp_path: Path):
    pytest.importorskip(
        "mkdocs", reason="the docs tools come with the test extra: pip install -e '.[test]'"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "tutorials" / "why-pending" / "index.html").is_file()


def test_every_code_block_says_what_it_is():
    unlabelled = [b.where() for p in PAGES for b in blocks(p) if b.language not in LANGUAGES]
    assert unlabelled == [], f"label these fences with one of {sorted(LANGUAGES)}"


def test_shell_blocks_hold_no_gangplan_command():
    """gangplan commands shown to a reader are run (``console``); ``shell`` is for kubectl and pip."""
    found = [
        b.where()
        for p in PAGES
        for b in blocks(p)
        if b.language == "shell"
        and any(line.lstrip().startswith("gangplan ") for line in b.body.splitlines())
    ]
    assert found == []


def test_the_cli_reference_is_what_the_parser_generates():
    from gangplan.cli_reference import reference

    assert reference() in (ROOT / "docs" / "reference" / "cli.md").read_text(), (
        "run: python -m gangplan.cli_reference"
    )


def test_the_schema_files_in_the_docs_are_what_gangplan_schema_prints():
    from gangplan.models.documents import SCHEMAS, json_schema

    folder = ROOT / "docs" / "reference" / "schemas"
    assert sorted(p.name for p in folder.glob("*.schema.json")) == sorted(
        f"{n}.schema.json" for n in SCHEMAS
    )
    for name in SCHEMAS:
        assert json.loads((folder / f"{name}.schema.json").read_text()) == json_schema(name), (
            f"gangplan schema {name} > docs/reference/schemas/{name}.schema.json"
        )


def test_the_readme_is_a_front_door():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) < 300
    first_screen = "\n".join(lines[:40])
    for story, command in (
        ("Will my gang fit?", "gangplan diff"),
        ("Why is it Pending?", "gangplan why"),
        ("What if?", "gangplan whatif"),
    ):
        assert story in first_screen and command in first_screen, story
    assert "pip install -e . && gangplan diff --suite scenarios/showcase" in first_screen
    assert "pip install -e '.[test]' && python -m pytest" in first_screen


def _scratch(tmp_path: Path) -> Path:
    """A directory that sees the repository's inputs but keeps what the commands write."""
    for name in ("scenarios", "examples", "tests", "docs"):
        (tmp_path / name).symlink_to(ROOT / name)
    bindir = tmp_path / ".bin"
    bindir.mkdir()
    launcher = bindir / "gangplan"
    launcher.write_text(
        f"#!/bin/sh\nexec {sys.executable} -c 'from gangplan.cli import main; main()' \"$@\"\n"
    )
    launcher.chmod(0o755)
    return bindir


def _run_console(page: Path, tmp_path: Path, slow: bool) -> None:
    bindir = _scratch(tmp_path)
    env = {
        **os.environ,
        "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "COLUMNS": "100",
    }
    ran = 0
    for b in blocks(page):
        if b.language != "console":
            continue
        for command, expected, is_slow in commands(b):
            if is_slow != slow:
                continue
            proc = subprocess.run(
                ["bash", "-c", command],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
            assert proc.returncode == expected, (
                f"{b.where()}: `{command}` exited {proc.returncode}, expected {expected}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
            )
            assert "Traceback" not in proc.stderr, f"{b.where()}: {proc.stderr}"
            ran += 1
    assert ran > 0


def _pages_with(language: str, slow: bool | None = None) -> list[Path]:
    out = []
    for p in PAGES:
        bs = [b for b in blocks(p) if b.language == language]
        if language == "console":
            bs = [b for b in bs if any(s == slow for _, _, s in commands(b))]
        if bs:
            out.append(p)
    return out


@pytest.mark.parametrize("page", _pages_with("console", slow=False), ids=_page_id)
def test_console_commands_run_with_the_documented_exit_codes(page: Path, tmp_path: Path):
    _run_console(page, tmp_path, slow=False)


@pytest.mark.slow
@pytest.mark.parametrize("page", _pages_with("console", slow=True), ids=_page_id)
def test_slow_console_commands_run_with_the_documented_exit_codes(page: Path, tmp_path: Path):
    _run_console(page, tmp_path, slow=True)


@pytest.mark.parametrize("page", _pages_with("python"), ids=_page_id)
def test_python_blocks_run_in_order(page: Path, tmp_path: Path, monkeypatch, capsys):
    """From the repository root (the paths in the examples are relative to it)."""
    monkeypatch.chdir(ROOT)
    namespace: dict = {"__name__": "__docs__"}
    for b in blocks(page):
        if b.language == "python":
            try:
                exec(compile(b.body, b.where(), "exec"), namespace)  # noqa: S102 - the docs' own examples
            except Exception as e:  # noqa: BLE001 - name the block
                raise AssertionError(f"{b.where()}: {type(e).__name__}: {e}") from e
    capsys.readouterr()


@pytest.mark.parametrize("page", _pages_with("yaml"), ids=_page_id)
def test_yaml_blocks_load_as_snapshots(page: Path):
    for b in blocks(page):
        if b.language != "yaml":
            continue
        docs = [d for d in yaml.safe_load_all(b.body) if d is not None]
        assert docs and all(
            isinstance(d, dict) and "apiVersion" in d and "kind" in d for d in docs
        ), b.where()
        if any(
            overlay.REMOVE_ANNOTATION in ((d.get("metadata") or {}).get("annotations") or {})
            for d in docs
        ):
            # a what-if variant (the docs' examples are variants of the GB200 showcase)
            base = overlay.read_layer(
                ROOT / "scenarios" / "showcase" / "tas-nvl72-fragmentation.yaml"
            )
            merged = overlay.overlay(base, overlay.Layer("docs", [(b.where(), d) for d in docs]))
            load_pairs(merged.objects, sources=(b.where(),))
        else:
            load_objects(docs, source=b.where())


def test_json_blocks_parse():
    for page in PAGES:
        for b in blocks(page):
            if b.language == "json":
                json.loads(b.body)


def test_the_readme_picture_is_rendered_by_the_script_beside_it():
    svg = (ROOT / "docs" / "img" / "gb200-diff.svg").read_text()
    assert svg.startswith("<svg") and "greedy-suboptimal" in svg.replace("&#160;", " ")
