"""The rendered documentation site (issue 41): built with ``mkdocs build --strict`` as
``tests/test_docs.py`` builds it, then read as HTML.

* No page shows a literal ``\\|``: Python-Markdown's tables extension keeps the backslash of
  ``\\|`` inside a code span (GitHub drops it), so a pipe in a table's code span is written
  ``<code>a&#124;b</code>``, which both render as ``a|b``.
* The site has an install page, in the navigation.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip(
        "mkdocs", reason="the docs tools come with the test extra: pip install -e '.[test]'"
    )
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


PENDING = ("reference/cli/index.html", "reference/json/index.html")
"""The reference pages (their code spans with a pipe written as <code>..</code> with &#124;, and
[ ] < > as entities), checked by a test of their own."""


def _backslash_pipes(site: Path) -> dict[str, int]:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 20
    return {
        str(p.relative_to(site)): p.read_text().count("\\|")
        for p in pages
        if "\\|" in p.read_text()
    }


def test_no_rendered_page_shows_a_backslash_pipe(site: Path):
    bad = {k: v for k, v in _backslash_pipes(site).items() if k not in PENDING}
    assert not bad, (
        f"literal \\| in the rendered HTML (write <code>a&#124;b</code> in a table cell): {bad}"
    )


def test_the_cli_and_json_references_show_no_backslash_pipe(site: Path):
    bad = {k: v for k, v in _backslash_pipes(site).items() if k in PENDING}
    assert not bad, bad


def test_the_site_has_an_install_page_in_its_navigation(site: Path):
    page = (site / "install" / "index.html").read_text()
    assert "pip install ." in page and "Python 3.11" in page and "kubectl-gangplan" in page
    assert 'href="install/"' in (site / "index.html").read_text()
