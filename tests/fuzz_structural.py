"""Structural fuzzing of snapshots through the CLI (issue 17), shared by the default and slow runs.

A *mutant* is a snapshot built from one of the scenarios or public-example fixtures with one to
three structural mutations: a field deleted or set to null, a value of the wrong type, a huge or
negative number (2**63, 2**64, 9.999e+29, ...), a malformed or out-of-range quantity, an object
duplicated or renamed, a reference (node, group, class, workload) left dangling, or a numeric field
injected where the base has none. Each mutant runs through ``inspect``, ``solve`` (greedy, and exact
with a small time limit), ``diff`` and ``validate`` in-process, and :func:`check_mutant` returns what
happened to each command so the caller can assert the property: exit 0 or 2 (``diff`` also 3, greedy
suboptimal, and 5, unproven: an honest answer where the budget or the model does not decide), never an internal error, and every Result of an exit-0 run passes ``validate``.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io.errors import SnapshotError
from gangplan.io.loader import _objects, read_documents, snapshot_files

ROOT = Path(__file__).resolve().parent.parent
BASE_DIRS = (ROOT / "scenarios", ROOT / "tests" / "fixtures")

# Numbers at and beyond the edges of int32 / int64 and of the ranges validation allows.
# (Mid-sized counts such as 65536 are left out: a valid Job of that parallelism is just slow.)
EDGE_NUMBERS: tuple[Any, ...] = (
    2**63,
    2**64,
    2**63 - 1,
    -(2**63) - 1,
    2**31,
    2**31 - 1,
    -(2**31) - 1,
    -1,
    0,
    101,
    1_000_000_001,
    2_000_000_000,
    2_000_001_001,
    9.999e29,
    -9.999e29,
    1e300,
    1.5,
)
PORT_NUMBERS: tuple[Any, ...] = (65536, 65535, 0, -1, 2**31)
PORT_KEYS = ("hostPort", "containerPort")
BAD_QUANTITIES: tuple[Any, ...] = (
    "18446744073709551616",
    "9223372036854775808",
    2**64,
    9223372036854775808,
    "9.999e+29",
    9.999e29,
    "1e19",
    "8Ei",
    "9223372036854775807",
    "9223372036854775807m",
    "9223372036854776k",
    "-1",
    "1.2.3",
    "12Zi",
    "",
    "0x10",
    "1e-70",
    "NaN",
    ".",
    "+",
    "1e64",
    "1e65",
    "Infinity",
)
WRONG_TYPES: tuple[Any, ...] = ("x", [], {}, True, 1.5, -7, {"a": 1}, ["x"])
NUMERIC_KEYS = (
    "minDomains",
    "maxSkew",
    "priority",
    "hostPort",
    "containerPort",
    "sizeBytes",
    "weight",
    "minCount",
    "minGroupCount",
    "value",
    "percentageOfNodesToScore",
    "utilization",
    "score",
    "disruptionsAllowed",
)
REF_KEYS = (
    "nodeName",
    "podGroupName",
    "priorityClassName",
    "parentCompositePodGroupName",
    "workloadName",
    "podGroupTemplateName",
    "templateName",
    "podGroup",
    "name",
)
RESOURCE_MAPS = ("requests", "limits", "allocatable", "capacity", "overhead", "minResources")
OPS = (
    "delete",
    "null",
    "wrong_type",
    "number",
    "quantity",
    "inject",
    "duplicate",
    "rename",
    "dangle",
)


def _flatten(path: Path) -> list[dict] | None:
    """The objects of a snapshot file or directory, or None when it cannot be read as one."""
    objs: list[dict] = []
    try:
        for f in snapshot_files(path):
            for i, doc in enumerate(read_documents(f)):
                objs.extend(_objects(str(f), doc, i))
    except SnapshotError:
        return None
    return objs or None


def base_snapshots(max_bytes: int | None) -> list[tuple[str, list[dict]]]:
    """(name, objects) of every scenario and fixture snapshot (a directory of files counts once),
    smaller than ``max_bytes`` in total when given. Suite definitions are not snapshots."""
    out = []
    for base in BASE_DIRS:
        for p in sorted(base.rglob("*")):
            if (
                "suites" in p.parts
                or p.name.startswith(".")
                or p.suffix.lower() not in (".yaml", ".yml", ".json", ".zip")
            ):
                continue
            if p.parent.name in ("alibaba-1213", "snapshot") or p.suffix.lower() == ".zip":
                continue  # directory snapshots are added whole below; the KAI zip holds snapshot.json
            size = p.stat().st_size
            if max_bytes is not None and size > max_bytes:
                continue
            objs = _flatten(p)
            if objs:
                out.append((str(p.relative_to(ROOT)), objs))
    for d in (ROOT / "scenarios" / "showcase" / "alibaba-1213",):
        size = sum(f.stat().st_size for f in d.iterdir())
        if max_bytes is None or size <= max_bytes:
            objs = _flatten(d)
            if objs:
                out.append((str(d.relative_to(ROOT)), objs))
    return out


def _positions(node: Any, path: tuple = ()) -> list[tuple]:
    """Every (path to a container, key or index) below ``node``."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append(path + (k,))
            out.extend(_positions(v, path + (k,)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append(path + (i,))
            out.extend(_positions(v, path + (i,)))
    return out


def _get(root: Any, path: tuple) -> Any:
    for k in path:
        root = root[k]
    return root


def _numeric(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int | float):
        return True
    return isinstance(v, str) and v[:1].isdigit()


@st.composite
def mutants(draw, bases: list[tuple[str, list[dict]]]) -> tuple[str, list[str], list[dict]]:
    """(base name, mutation descriptions, mutated objects)."""
    name, objs = draw(st.sampled_from(bases))
    objs = copy.deepcopy(objs)
    done = []
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(OPS))
        pos = _positions(objs)
        if op in ("duplicate", "rename"):
            i = draw(st.integers(0, len(objs) - 1))
            if op == "duplicate":
                objs.append(copy.deepcopy(objs[i]))
            elif isinstance(objs[i], dict) and isinstance(objs[i].get("metadata"), dict):
                objs[i]["metadata"]["name"] = draw(
                    st.sampled_from(("renamed", "", "x" * 300, "a/b"))
                )
            done.append(f"{op} object {i}")
            continue
        if op == "number":
            pos = [p for p in pos if _numeric(_get(objs, p))] or pos
            if draw(st.booleans()) and any(p[-1] in PORT_KEYS for p in pos):
                op, pos = "port", [p for p in pos if p[-1] in PORT_KEYS]
        elif op == "quantity":
            pos = [p for p in pos if len(p) >= 2 and p[-2] in RESOURCE_MAPS] or pos
        elif op == "dangle":
            pos = [p for p in pos if p[-1] in REF_KEYS and isinstance(_get(objs, p), str)] or pos
        elif op == "inject":
            pos = [p for p in pos if isinstance(_get(objs, p), dict)]
            if not pos:
                continue
        elif op == "delete":
            pos = [p for p in pos if isinstance(_get(objs, p[:-1]), dict)]
        if not pos:
            continue
        p = draw(st.sampled_from(pos))
        parent = _get(objs, p[:-1])
        if op == "delete":
            del parent[p[-1]]
            done.append(f"delete {p}")
            continue
        if op == "inject":
            key, value = draw(st.sampled_from(NUMERIC_KEYS)), draw(st.sampled_from(EDGE_NUMBERS))
            _get(objs, p)[key] = value
            done.append(f"inject {p + (key,)} = {value!r}")
            continue
        value = {
            "null": lambda: None,
            "wrong_type": lambda: draw(st.sampled_from(WRONG_TYPES)),
            "number": lambda: draw(st.sampled_from(EDGE_NUMBERS)),
            "port": lambda: draw(st.sampled_from(PORT_NUMBERS)),
            "quantity": lambda: draw(st.sampled_from(BAD_QUANTITIES)),
            "dangle": lambda: "missing-" + draw(st.sampled_from(("a", "node", "group"))),
        }[op]()
        parent[p[-1]] = copy.deepcopy(value)
        done.append(f"{op} {p} = {value!r}")
    return name, done, objs


@dataclass
class Outcome:
    """What one mutant did: (command, exit code) per run, and any problems found."""

    runs: list[tuple[str, int]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


_runner = CliRunner()
ALLOWED = {
    "inspect": {0, 2},
    "solve-greedy": {0, 2},
    "solve-exact": {0, 2},
    "diff": {0, 2, 3, 5},
    "validate": {0},
}
"""Exit codes each command may end with on a mutant (validate runs only on exit-0 Results, so 0)."""


def _invoke(out: Outcome, name: str, args: list[str], snap: Path) -> tuple[int, str]:
    res = _runner.invoke(app, args)
    code = res.exit_code
    exc = res.exception
    text = res.output
    if exc is not None and not isinstance(exc, SystemExit):
        # main() maps a SnapshotError escaping a command to 2 and anything else to 70.
        code = 2 if isinstance(exc, SnapshotError) else 70
    if code == 70 and exc is not None:
        out.problems.append(f"{name}: internal error {type(exc).__name__}: {exc}"[:400])
    elif code not in ALLOWED[name]:
        out.problems.append(f"{name}: exit {code}: {text[-400:]}")
    if "Traceback" in text:
        out.problems.append(f"{name}: printed a traceback")
    if code == 2 and str(snap) not in text and name != "validate":
        out.problems.append(f"{name}: exit 2 without naming the file: {text[-300:]}")
    out.runs.append((name, code))
    return code, res.stdout


def check_mutant(objs: list[dict], tmp: Path, *, time_limit: float = 0.3) -> Outcome:
    """Run every command on ``objs`` (written as a JSON array under ``tmp``)."""
    out = Outcome()
    snap = tmp / "snapshot.json"
    snap.write_text(json.dumps(objs))
    s = str(snap)
    tl = str(time_limit)
    _invoke(out, "inspect", ["inspect", s, "--json"], snap)
    results = []
    for engine in ("greedy", "exact"):
        res_path = tmp / f"{engine}.json"
        res_path.unlink(missing_ok=True)
        code, _ = _invoke(
            out,
            f"solve-{engine}",
            ["solve", s, "--engine", engine, "--time-limit", tl, "--out", str(res_path), "--json"],
            snap,
        )
        if code == 0:
            results.append(res_path)
    code, stdout = _invoke(
        out, "diff", ["diff", s, "--time-limit", tl, "--probe-time-limit", tl, "--json"], snap
    )
    if code in (0, 3):
        doc = json.loads(stdout)
        for side in ("greedy", "optimal"):
            if isinstance(doc.get(side), dict):
                p = tmp / f"diff-{side}.json"
                p.write_text(json.dumps(doc[side]))
                results.append(p)
    for r in results:
        _invoke(out, "validate", ["validate", s, str(r)], snap)
    return out


def histogram(outcomes: list[Outcome]) -> Counter:
    """(command, exit code) -> count over many mutants."""
    return Counter(run for o in outcomes for run in o.runs)
