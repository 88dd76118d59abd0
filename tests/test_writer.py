"""One YAML writer (``gangplan/io/writer.py``) and one home for label keys (``models/well_known.py``).

Every command that writes Kubernetes YAML goes through :func:`dump_snapshot`, so their files share
one style (block, as ``kubectl get -o yaml``), read back into the objects written, and give the
same bytes for the same objects. Structural checks keep it that way: no other module dumps YAML,
no module outside ``well_known.py`` spells a well-known label key.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from gangplan.bench.generators.builders import node_object, pod_object
from gangplan.bench.generators.topology_shapes import generate_shape
from gangplan.cli import app
from gangplan.io.alibaba import alibaba_nodes_to_objects
from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_with_expansion
from gangplan.io.writer import comment_block, dump_snapshot, write_snapshot
from gangplan.models import well_known

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "gangplan"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _objects() -> list[dict]:
    long = "x " * 150  # longer than any default line width: must not be folded
    node = node_object("n1", gpus=8, labels={well_known.HOSTNAME: "n1", well_known.ZONE: "z1"})
    pod = pod_object(
        "p1", requests={"cpu": "1", well_known.GPU: "2"}, labels={"note": long.strip()}, created=3
    )
    return [node, pod]


def test_the_writer_uses_block_style_and_keeps_key_order():
    text = dump_snapshot(_objects())
    assert text.startswith(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels:\n    kubernetes.io/hostname: n1\n"
    )
    assert "{" not in text and "\n---\n" in text
    assert all(len(line) < 1000 for line in text.splitlines())
    assert any(len(line) > 200 for line in text.splitlines())  # the long label stayed on one line


def test_the_writer_round_trips_and_is_deterministic():
    objs = _objects()
    assert list(yaml.safe_load_all(dump_snapshot(objs))) == objs
    assert dump_snapshot(objs) == dump_snapshot(_objects())


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, ""),
        ("", ""),
        ("one", "# one\n"),
        ("two\n\nparagraphs", "# two\n#\n# paragraphs\n"),
    ],
    ids=["no header", "an empty header", "one line", "an empty line becomes a bare #"],
)
def test_a_header_becomes_leading_comments(header, expected):
    assert comment_block(header) == expected
    assert dump_snapshot([], header) == expected


def test_write_snapshot_creates_directories_and_names_a_file_it_cannot_write(tmp_path):
    path = tmp_path / "a" / "b" / "snap.yaml"
    write_snapshot(_objects(), path, header="made by a test")
    assert path.read_text() == "# made by a test\n" + dump_snapshot(_objects())
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(SnapshotError) as e:
        write_snapshot(_objects(), blocked / "snap.yaml")
    assert str(e.value).startswith(f"{blocked / 'snap.yaml'}: cannot write")


def test_import_alibaba_nodes_writes_what_the_writer_writes(tmp_path):
    csv = tmp_path / "nodes.csv"
    csv.write_text("sn,cpu_milli,memory_mib,gpu,model\na,8000,32768,1,T4\nb,96000,393216,8,G2\n")
    out = tmp_path / "nodes.yaml"
    result = CliRunner().invoke(app, ["import", "alibaba-nodes", str(csv), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text() == dump_snapshot(alibaba_nodes_to_objects(csv))


def test_expand_prints_what_the_writer_writes():
    path = FIXTURES / "foreign" / "jobset" / "tas-rack.yaml"
    result = CliRunner().invoke(app, ["expand", str(path)])
    assert result.exit_code == 0, result.output
    _, objects = load_with_expansion(path)
    assert objects and result.stdout == dump_snapshot(objects)


def test_generate_writes_what_the_writer_writes(tmp_path):
    out = tmp_path / "gen.yaml"
    args = [
        "generate",
        "scheduler-perf-tas",
        "--nodes",
        "20",
        "--gangs",
        "3",
        "--seed",
        "4",
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    header = "gangplan generate scheduler-perf-tas --nodes 20 --utilisation 0.4 --seed 4 --gangs 3"
    objects = generate_shape("scheduler-perf-tas", nodes=20, utilisation=0.4, seed=4, gangs=3)
    assert out.read_text() == dump_snapshot(objects, header)


def test_generate_exits_2_naming_a_file_it_cannot_write(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("")
    result = CliRunner().invoke(
        app, ["generate", "scheduler-perf-tas", "--nodes", "4", "--out", str(blocked / "x.yaml")]
    )
    assert result.exit_code == 2
    assert f"{blocked / 'x.yaml'}: cannot write" in result.stderr


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(), filename=str(p))) for p in sorted(PACKAGE.rglob("*.py"))]


def test_no_module_but_the_writer_dumps_yaml():
    dumpers = {"dump", "dump_all", "safe_dump", "safe_dump_all"}
    found = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in dumpers
                and isinstance(node.value, ast.Name)
                and node.value.id == "yaml"
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found and all(f.startswith("gangplan/io/writer.py:") for f in found), found


def test_only_well_known_spells_the_label_keys():
    keys = {getattr(well_known, name) for name in well_known.__all__}
    spelled: dict[str, set[str]] = {}
    for path, tree in _modules():
        if path.name == "well_known.py":
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value in keys
            ):
                spelled.setdefault(str(path.relative_to(ROOT)), set()).add(node.value)
    assert spelled == {}
