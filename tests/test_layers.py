"""Layering: typer commands live in the CLI layer only, and the bench modules import one way.

Both read the source (every ``import`` statement, the ones inside functions too, since a lazy
import is how a cycle hides), so they fail as soon as a library module imports typer or a bench
module imports one that imports it back.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "gangplan"


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at module level or inside a function."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)  # `from pkg import module`
    return out


def _graph(paths: list[Path], root: Path = ROOT) -> nx.DiGraph:
    names = {_module_name(p, root): p for p in paths}
    g = nx.DiGraph()
    g.add_nodes_from(names)
    for name, path in names.items():
        g.add_edges_from((name, m) for m in _imports(path) if m in names and m != name)
    return g


def test_only_the_cli_module_imports_typer():
    users = sorted(
        _module_name(p)
        for p in PACKAGE.rglob("*.py")
        if any(m == "typer" or m.startswith("typer.") for m in _imports(p))
    )
    # the app, the shared flags, and the commands declared in their own modules
    assert users == [
        "gangplan.cli",
        "gangplan.cli_bench",
        "gangplan.cli_options",
        "gangplan.cli_replay",
        "gangplan.cli_room",
    ]


def test_the_bench_modules_have_no_import_cycle_even_through_lazy_imports():
    g = _graph(sorted((PACKAGE / "bench").glob("*.py")))
    assert {
        ("gangplan.bench.runner", "gangplan.bench.executors"),
        ("gangplan.bench.executors", "gangplan.bench.worker"),
    } <= set(g.edges)
    assert list(nx.simple_cycles(g)) == []


def test_the_cycle_check_sees_a_lazy_import(tmp_path):
    (tmp_path / "gangplan").mkdir()
    (tmp_path / "gangplan" / "a.py").write_text("import gangplan.b\n")
    (tmp_path / "gangplan" / "b.py").write_text("def f():\n    from gangplan.a import x\n")
    g = _graph(sorted((tmp_path / "gangplan").glob("*.py")), root=tmp_path)
    assert [sorted(c) for c in nx.simple_cycles(g)] == [["gangplan.a", "gangplan.b"]]


def test_models_is_the_ground_floor():
    """Issue 38: ``gangplan.models`` imports nothing of gangplan above it (it did: the objective
    read PDB selectors through ``gangplan.predicates``)."""
    above = sorted(
        {
            (_module_name(p), m)
            for p in (PACKAGE / "models").rglob("*.py")
            for m in _imports(p)
            if m.startswith("gangplan.") and not m.startswith("gangplan.models")
        }
    )
    assert above == []


def test_the_device_rules_import_no_loader_and_no_engine():
    """Issue 38: ``gangplan.dra`` (the device model and rules) and ``gangplan.io`` imported each
    other; the DRA loaders now live in ``gangplan.io`` (``dra_parse``, ``dra_build``)."""
    up = sorted(
        {
            (_module_name(p), m)
            for p in (PACKAGE / "dra").rglob("*.py")
            for m in _imports(p)
            if m.startswith(("gangplan.io", "gangplan.solver", "gangplan.cli", "gangplan.api"))
        }
    )
    assert up == []


def test_the_engine_defaults_are_written_once():
    """Issue 38: the default work limit, probe limit and workers live in gangplan.models.defaults;
    the CLI, the API, the diff and the exact engine read them (no literal 10.0 / 5.0 left there)."""
    import re

    for rel in ("cli.py", "api.py", "solver/diff/run.py", "solver/exact/engine.py"):
        text = (PACKAGE / rel).read_text()
        assert not re.search(r"time_limit[^\n]*= (10|5)\.0\b", text), rel
        assert "defaults as D" in text, rel


def test_no_table_keyed_by_id():
    """Issue 38: results passed through dicts keyed by ``id()`` outlive their objects (and an id is
    reused once they die); a value that belongs to an object is held beside it
    (``gangplan.models.base.Beside``) or passed on explicitly."""
    import re

    found = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in sorted(PACKAGE.rglob("*.py"))
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\b_[A-Z][A-Z_]*(\[|\.get\(|\.pop\()id\(", line)
    ]
    assert found == []


def _greedy_modules() -> set[str]:
    greedy = PACKAGE / "solver" / "greedy"
    return {_module_name(p) for p in greedy.rglob("*.py")} - {"gangplan.solver.greedy"}


def test_only_the_greedy_package_imports_its_modules():
    """Issue 38: replay drove the greedy engine from the inside (ten internals, its own gang loop,
    the global registry changed at run time). Outside ``gangplan/solver/greedy`` a module imports
    the package's public names (``from gangplan.solver.greedy import GreedySession``), never one
    of its modules; replay is a client of :class:`GreedySession` like any other."""
    inner = _greedy_modules()
    assert (
        "gangplan.solver.greedy.session" in inner and "gangplan.solver.greedy.schedule_one" in inner
    )
    found = sorted(
        {
            (_module_name(p), m)
            for p in PACKAGE.rglob("*.py")
            if not p.is_relative_to(PACKAGE / "solver" / "greedy")
            for m in _imports(p)
            if m in inner
        }
    )
    assert found == []
    replay = {
        m
        for p in (PACKAGE / "replay").rglob("*.py")
        for m in _imports(p)
        if m.startswith("gangplan.solver.greedy")
    }
    assert "gangplan.solver.greedy" in replay
