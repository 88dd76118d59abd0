"""No import cycles anywhere in the gangplan package (issue 16, item 4).

Every module's imports are read statically (``ast``), wherever they are written: at the top, or
inside a function (a lazy import that only hides a cycle is still a cycle). An edge goes to the
module named by ``import X`` / ``from X import ...`` and, for ``from X import name`` where
``X.name`` is a submodule, to that submodule instead of to ``X``'s ``__init__`` (Python loads
the parent package first anyway; the parent is only a dependency when a name defined in it is
imported). Imports under ``if TYPE_CHECKING:`` count too (issue 24): they never run, but a
type-only cycle still ties two modules together and usually hides a type that lives in the wrong
one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "gangplan"


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    out = {}
    for f in sorted(package.rglob("*.py")):
        parts = list(f.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def import_graph(modules: dict[str, Path]) -> nx.DiGraph:
    graph = nx.DiGraph()
    for name, path in modules.items():
        graph.add_node(name)
        tree = ast.parse(path.read_text(), filename=str(path))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules:
                        graph.add_edge(name, alias.name)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                subs = [f"{source}.{a.name}" for a in node.names if f"{source}.{a.name}" in modules]
                for sub in subs:
                    graph.add_edge(name, sub)
                if len(subs) < len(node.names) and source in modules:
                    graph.add_edge(name, source)
    return graph


def cycles(graph: nx.DiGraph) -> list[list[str]]:
    return sorted(sorted(c) for c in nx.simple_cycles(graph))


def test_no_import_cycles_in_the_package():
    assert [" -> ".join(c) for c in cycles(import_graph(module_files()))] == []


def test_the_walk_sees_lazy_and_type_checking_imports(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import f\n")
    (pkg / "b.py").write_text("def f():\n    from pkg import a\n    return a\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import x\n"
    )
    (pkg / "d.py").write_text("from . import c\n")
    graph = import_graph(module_files(pkg))
    assert cycles(graph) == [["pkg.a", "pkg.b"]]
    assert graph.has_edge("pkg.c", "pkg.a")  # type-only: still an arrow
    assert graph.has_edge("pkg.d", "pkg.c") and not graph.has_edge("pkg.d", "pkg")
