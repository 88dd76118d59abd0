"""No engine, validator or report module derives group structure on its own (issue 10).

Group structure (parents, children, leaves, roots, needs, entities, victim units, validation) comes
from one place, ``gangplan.models.groups`` (``cluster.groups``). This test reads the source of every
module under ``gangplan/solver/`` and the renderers and fails on the patterns that used to carry
private copies: direct reads of the raw group dictionaries, of ``minGroupCount`` / the policy / the
parent link of a raw group object, and entity ids built from ``"pod:"`` strings.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "gangplan"
MODULES = sorted((ROOT / "solver").rglob("*.py")) + [ROOT / "render.py", ROOT / "summary.py"]

# Modules allowed to read the raw group objects, and why.
RAW_READERS = {
    "solver/suite.py": "reads the gangplan.io/expect-* annotations of each PodGroup",
    "solver/exact/locality.py": "reads the gangplan.io/preferred-topology annotation of each PodGroup",
    "solver/greedy/testing.py": "builds Clusters for plugin table tests",
    "summary.py": "inspect prints every PodGroup object, pending or not",
    "solver/room/grow.py": "adds renamed copies of a PodGroup object (copies that fit)",
    "solver/room/suite.py": "reads the gangplan.io/expect-room* annotations of each PodGroup",
}
RAW = {"pod_groups", "composite_pod_groups"}
FORBIDDEN_ATTRS = {"min_group_count", "composite_children", "group_members", "group_min_count"}


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            out.add(id(body[0].value))
    return out


def _offences(path: Path) -> list[str]:
    rel = path.relative_to(ROOT).as_posix()
    tree = ast.parse(path.read_text())
    docs = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr in FORBIDDEN_ATTRS or (node.attr in RAW and rel not in RAW_READERS):
                out.append(f"{rel}:{node.lineno}: .{node.attr}")
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
        ):
            if node.value.startswith("pod:") or node.value == "parentCompositePodGroupName":
                out.append(f"{rel}:{node.lineno}: {node.value!r}")
    return out


def test_no_solver_or_report_module_reads_group_structure_outside_the_group_model() -> None:
    offences = [o for m in MODULES for o in _offences(m)]
    assert offences == []


def test_the_checker_sees_the_patterns_it_forbids(tmp_path: Path) -> None:
    bad = ROOT / "solver" / "_probe_for_test.py"
    try:
        bad.write_text(
            'def f(c, p):\n    """pod: a docstring is fine"""\n    return c.composite_pod_groups, f"pod:{p}", "pod:" + p\n'
        )
        assert [o.split(": ", 1)[1] for o in _offences(bad)] == [
            ".composite_pod_groups",
            "'pod:'",
            "'pod:'",
        ]
    finally:
        bad.unlink()
