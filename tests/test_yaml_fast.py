"""The loader's YAML fast path (gangplan.io.yamlfast) gives PyYAML's objects, exactly.

Every YAML file under scenarios/ and tests/fixtures/ is read both ways and compared value by
value and type by type (``1 == True == 1.0`` would hide a difference); YAML 1.1 edge cases are
compared one by one; what the fast path does not build falls back to the full loader.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
import yaml

from gangplan.io import yamlfast
from gangplan.io.errors import SnapshotError
from gangplan.io.files import _YamlLoader, read_documents

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(
    p
    for base in (ROOT / "scenarios", ROOT / "tests" / "fixtures")
    for p in base.rglob("*")
    if p.suffix in (".yaml", ".yml")
)


def _same(a, b, where: str = "") -> None:
    assert type(a) is type(b), f"{where}: {a!r} ({type(a).__name__}) != {b!r} ({type(b).__name__})"
    if isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b or (a != a and b != b), where  # nan


def test_there_are_files_to_compare():
    assert len(FILES) > 50


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_fast_path_builds_what_pyyaml_builds(path: Path):
    text = path.read_text(encoding="utf-8")
    _same(
        yamlfast.events_load_all(text, _YamlLoader),
        list(yaml.load_all(text, Loader=_YamlLoader)),
        path.name,
    )


# YAML 1.1 as PyYAML resolves it (kubectl quotes what would be read otherwise; hand-written files may not).
EDGE = [
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "true",
    "False",
    "0777",
    "0o17",
    "1_000",
    "0x1F",
    "0b101",
    "1:30",
    "190:20:30",
    "1e3",
    "1.5e3",
    "6.8523015e+5",
    ".5",
    "1.",
    "+1",
    "-0",
    "00",
    "09",
    "~",
    "null",
    "Null",
    "",
    ".inf",
    "-.Inf",
    ".NaN",
    "2026-11-30T10:00:00Z",
    "2026-11-30",
    "16Gi",
    "100m",
    "'8'",
    '"true"',
    "! 12",
    "!!str 12",
    "8",
    "-1",
    "12345678901234567890123",
    "3.14",
    "a b",
    "é",
]


@pytest.mark.parametrize("scalar", EDGE)
def test_scalars_resolve_as_yaml_1_1(scalar: str):
    text = f"a: {scalar}\nb: [{scalar}]\n{scalar or 'x'}: 1\n---\n{scalar}\n"
    try:
        expected = list(yaml.load_all(text, Loader=_YamlLoader))
    except yaml.YAMLError:
        pytest.skip("not valid YAML in every position")
    _same(yamlfast.load_all(text, _YamlLoader), expected, scalar)


@pytest.mark.parametrize(
    "text",
    [
        "a: &x {b: 1}\nc: *x\n",  # anchors and aliases: the objects are shared
        "base: &b {cpu: 1}\npod:\n  <<: *b\n  mem: 2\n",  # merge key
        "a: !!int '3'\n",  # explicit tag
        "a: !!set {x, y}\n",
        "=: 1\n",  # the value key, read as a string key
    ],
)
def test_what_the_fast_path_does_not_build_goes_to_pyyaml(text: str):
    with pytest.raises(yamlfast.Unsupported):
        yamlfast.events_load_all(text, _YamlLoader)
    _same(yamlfast.load_all(text, _YamlLoader), list(yaml.load_all(text, Loader=_YamlLoader)))


@pytest.mark.parametrize(
    "text", ["a: =\n", "? [1, 2]\n: x\n", "a: b: c\n", "a: [1, 2\n", "- a\nb: c\n"]
)
def test_errors_are_pyyaml_s_with_its_line(tmp_path: Path, text: str):
    with pytest.raises(yaml.YAMLError) as expected:
        list(yaml.load_all(text, Loader=_YamlLoader))
    with pytest.raises(type(expected.value)) as got:
        yamlfast.load_all(text, _YamlLoader)
    assert str(got.value) == str(expected.value)
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(SnapshotError) as e:
        read_documents(f)
    assert "invalid YAML" in str(e.value)
    assert gc.isenabled()


def test_garbage_collection_is_restored():
    gc.disable()
    try:
        yamlfast.load_all("a: 1\n", _YamlLoader)
        assert not gc.isenabled()
    finally:
        gc.enable()
    yamlfast.load_all("a: &x 1\nb: *x\n", _YamlLoader)  # the fallback too
    assert gc.isenabled()


def test_json_lists_read_as_yaml_ones(tmp_path: Path):
    """kubectl's ``-o json`` (a ``kind: List`` with items) and ``-o yaml`` give the same objects."""
    import json

    items = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n0", "labels": {"a": "b"}},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi"}},
        }
    ]
    doc = {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}
    (tmp_path / "dump").write_text(json.dumps(doc, indent=4))
    (tmp_path / "dump.yaml").write_text(yaml.safe_dump(doc))
    assert read_documents(tmp_path / "dump") == read_documents(tmp_path / "dump.yaml") == [doc]
