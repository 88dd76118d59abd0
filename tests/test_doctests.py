"""Every doctest in the package runs in the default test command (one test per module that has
examples), so a docstring's example cannot rot."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import gangplan


def _modules_with_examples() -> list[str]:
    out = []
    finder = doctest.DocTestFinder()
    for info in pkgutil.walk_packages(gangplan.__path__, "gangplan."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        if any(t.examples for t in finder.find(module)):
            out.append(info.name)
    return sorted(out)


MODULES = _modules_with_examples()


def test_the_package_has_doctests():
    assert len(MODULES) >= 10


@pytest.mark.parametrize("name", MODULES)
def test_doctests_pass(name: str, monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(Path(gangplan.__file__).resolve().parents[1])
    result = doctest.testmod(
        importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
