"""Which parser should read snapshots: the YAML and JSON candidates on one dump, and whether each
gives PyYAML's objects (issue 27 item 2).

A candidate must give exactly what ``yaml.load_all(text, Loader=gangplan.io.files._YamlLoader)``
gives (YAML 1.1 as PyYAML reads it, timestamps kept as strings): the ``sameOnDump`` column compares
on the measured dump, ``sameOnRepo`` on every YAML file under ``scenarios/`` and
``tests/fixtures/``, ``sameOnEdgeCases`` on YAML 1.1 scalars a hand-written file may hold (``yes``,
``on``, ``0777``, ``1:30``, ``1e3``, ``2026-11-30``, ``=``, ...), values and types compared.

Candidates (a missing package is a row saying so):

* ``pyyaml-csafe``: PyYAML's CSafeLoader, default constructor (the loader before issue 27).
* ``pyyaml-csafe-light``: CSafeLoader whose resolver remembers each plain scalar's tag, nodes
  composed by libyaml, objects built by one recursive function instead of the constructor's
  generators.
* ``libyaml-events``: :func:`gangplan.io.yamlfast.events_load_all`, dicts built from the C
  parser's events, each distinct plain scalar resolved and constructed once.
* ``libyaml-events-nogc``: the same with the garbage collector paused
  (:func:`gangplan.io.yamlfast.load_all`, what the loader uses).
* ``ruamel-c-safe``: ruamel.yaml ``typ="safe"`` on its C parser (ruamel.yaml.clib).
* ``ryaml`` and ``yaml-rs``: Rust bindings (YAML 1.2: ``yes`` is a string, ``1e3`` a float).
* ``rapidyaml-tree``: rapidyaml's C++ parse into its tree only (no Python objects: a floor), and
  ``rapidyaml-walk``: that tree walked into dicts with PyYAML's resolver.
* ``json`` / ``orjson``: the same objects as ``kubectl get -o json`` prints them (one List).

Run: ``python benchmarks/yaml_parsers.py [--yaml DUMP.yaml] [--repeat 3]``; without ``--yaml`` a
dump of :func:`load_time.kubectl_like` at 1,000 nodes and 10,000 bound pods is made in memory.
Writes ``benchmarks/results/yaml_parsers.csv``.

One run (the issue's inventory shape: 9,904 objects, 3.9 MB multi-document YAML, 9.3 MB JSON
List; best of 2 wall seconds, load average 2.2-2.6): pyyaml-csafe 9.61, pyyaml-csafe-light 2.55,
libyaml-events 2.00, libyaml-events-nogc 1.82 (5.3x, chosen), ruamel-c-safe 8.20 (disagrees on
2/97 repo files, 10/22 edge cases), ryaml 0.54 and yaml-rs 0.27 (YAML 1.2: disagree on 9-10 of 22
edge cases, yaml-rs on 53/97 repo files: rejected), rapidyaml-tree 0.09 (no Python objects),
rapidyaml-walk 2.59; json 0.09, orjson 0.05 (not worth a dependency). The JSON rows' sameOnDump
was False in that run only because the JSON file was a List and the YAML multi-document.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from results_csv import print_rows, write_csv  # benchmarks/results_csv.py

from gangplan.io import yamlfast
from gangplan.io.files import _YamlLoader

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).parent / "results" / "yaml_parsers.csv"
FIELDS = [
    "parser",
    "input",
    "bestSeconds",
    "medianSeconds",
    "speedup",
    "sameOnDump",
    "sameOnRepo",
    "sameOnEdgeCases",
    "loadAverage",
    "note",
]
EDGE = [
    "yes",
    "on",
    "OFF",
    "0777",
    "1_000",
    "0x1F",
    "1:30",
    "1e3",
    "1.5e3",
    ".5",
    "00",
    "09",
    "~",
    "Null",
    ".inf",
    "2026-11-30T10:00:00Z",
    "2026-11-30",
    "16Gi",
    "'8'",
    "8",
    "-1",
    "3.14",
]


# ---- candidates ---------------------------------------------------------------------------------
def pyyaml_default(text: str) -> list[Any]:
    return list(yaml.load_all(text, Loader=_YamlLoader))


class _LightLoader(_YamlLoader):  # type: ignore[misc,valid-type]
    """CSafeLoader with a remembered resolution per plain scalar."""

    _tags: dict[str, str] = {}

    def resolve(self, kind, value, implicit):  # noqa: ANN001, ANN201
        if kind is yaml.ScalarNode and implicit[0]:
            tag = self._tags.get(value)
            if tag is None:
                tag = self._tags[value] = super().resolve(kind, value, implicit)
            return tag
        return super().resolve(kind, value, implicit)


def pyyaml_light(text: str) -> list[Any]:
    loader = _LightLoader(text)
    cache: dict[tuple[str, str], Any] = {}
    strtag, maptag, seqtag = (
        "tag:yaml.org,2002:str",
        "tag:yaml.org,2002:map",
        "tag:yaml.org,2002:seq",
    )

    def build(node: yaml.Node) -> Any:
        tag = node.tag
        if tag == strtag:
            return node.value
        if tag == maptag:
            return {build(k): build(v) for k, v in node.value}
        if tag == seqtag:
            return [build(x) for x in node.value]
        if isinstance(node, yaml.ScalarNode) and tag in yamlfast._SCALAR_TAGS:
            key = (tag, node.value)
            if key not in cache:
                cache[key] = loader.yaml_constructors[tag](loader, node)
            return cache[key]
        raise yamlfast.Unsupported(tag)

    try:
        out = []
        while loader.check_node():
            out.append(build(loader.get_node()))
        return out
    finally:
        loader.dispose()


def libyaml_events(text: str) -> list[Any]:
    return yamlfast.events_load_all(text, _YamlLoader)


def libyaml_events_nogc(text: str) -> list[Any]:
    return yamlfast.load_all(text, _YamlLoader)


def ruamel_c_safe() -> Callable[[str], list[Any]]:
    from ruamel.yaml import YAML

    y = YAML(typ="safe", pure=False)
    return lambda text: list(y.load_all(text))


def ryaml_loads() -> Callable[[str], list[Any]]:
    import ryaml

    return ryaml.loads_all


def yaml_rs_loads() -> Callable[[str], list[Any]]:
    import yaml_rs

    def load(text: str) -> list[Any]:
        out = yaml_rs.loads(text)
        return out if text.count("\n---") else [out]  # one document: the object itself

    return load


def rapidyaml_tree() -> Callable[[str], Any]:
    import ryml

    return lambda text: ryml.parse_in_arena(text.encode())


def rapidyaml_walk() -> Callable[[str], list[Any]]:
    import ryml

    helper = _YamlLoader("")
    plain: dict[str, Any] = {}

    def scalar(raw: bytes, quoted: bool) -> Any:
        s = bytes(raw).decode()
        if quoted:
            return s
        if s not in plain:
            tag = helper.resolve(yaml.ScalarNode, s, (True, False))
            plain[s] = (
                s
                if tag == "tag:yaml.org,2002:str"
                else helper.yaml_constructors[tag](helper, yaml.ScalarNode(tag, s))
            )
        return plain[s]

    def load(text: str) -> list[Any]:
        t = ryml.parse_in_arena(text.encode())

        def walk(n: int) -> Any:
            if t.is_map(n):
                out, c = {}, t.first_child(n)
                while c != ryml.NONE:
                    out[scalar(t.key(c), t.is_key_quoted(c))] = walk(c)
                    c = t.next_sibling(c)
                return out
            if t.is_seq(n):
                out_l, c = [], t.first_child(n)
                while c != ryml.NONE:
                    out_l.append(walk(c))
                    c = t.next_sibling(c)
                return out_l
            if t.val_is_null(n):
                return None
            return scalar(t.val(n), t.is_val_quoted(n))

        root = t.root_id()
        if t.is_stream(root):
            docs, c = [], t.first_child(root)
            while c != ryml.NONE:
                docs.append(walk(c))
                c = t.next_sibling(c)
            return docs
        return [walk(root)]

    return load


def orjson_loads() -> Callable[[str], Any]:
    import orjson

    return orjson.loads


YAML_CANDIDATES: list[tuple[str, Callable[[], Callable[[str], Any]], str]] = [
    ("pyyaml-csafe", lambda: pyyaml_default, "the loader before issue 27"),
    ("pyyaml-csafe-light", lambda: pyyaml_light, "cached resolver, recursive builder"),
    ("libyaml-events", lambda: libyaml_events, "gangplan.io.yamlfast.events_load_all"),
    ("libyaml-events-nogc", lambda: libyaml_events_nogc, "gangplan.io.yamlfast.load_all: chosen"),
    ("ruamel-c-safe", ruamel_c_safe, "ruamel.yaml typ=safe, C parser"),
    ("ryaml", ryaml_loads, "Rust; YAML 1.2 scalars"),
    ("yaml-rs", yaml_rs_loads, "Rust; YAML 1.2 scalars"),
    ("rapidyaml-tree", rapidyaml_tree, "C++ tree only, no Python objects (a floor)"),
    ("rapidyaml-walk", rapidyaml_walk, "C++ tree walked in Python"),
]
JSON_CANDIDATES: list[tuple[str, Callable[[], Callable[[str], Any]], str]] = [
    ("json", lambda: json.loads, "standard library: chosen"),
    ("orjson", orjson_loads, "Rust"),
]


# ---- comparing -----------------------------------------------------------------------------------
def same(a: Any, b: Any) -> bool:
    """Equal values of the same types all the way down (``1 == True == 1.0`` would hide a difference)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b or (a != a and b != b)


def agrees(load: Callable[[str], Any], texts: list[str]) -> str:
    ok = 0
    for text in texts:
        try:
            ok += same(load(text), pyyaml_default(text))
        except Exception:  # noqa: BLE001 - a parser that refuses a valid file disagrees
            pass
    return f"{ok}/{len(texts)}"


def timed(load: Callable[[str], Any], text: str, repeat: int) -> tuple[list[float], Any]:
    times, out = [], None
    for _ in range(repeat):
        out = None
        gc.collect()
        t0 = time.perf_counter()
        out = load(text)
        times.append(time.perf_counter() - t0)
    return times, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--yaml", type=Path, help="a YAML dump (default: a generated one)")
    ap.add_argument(
        "--json", type=Path, help="the same objects as JSON (default: the YAML's, as one List)"
    )
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.yaml:
        text = args.yaml.read_text(encoding="utf-8")
        name = args.yaml.name
    else:
        sys.path.insert(0, str(Path(__file__).parent))
        from load_time import kubectl_like

        doc = {
            "apiVersion": "v1",
            "items": kubectl_like(1000, 10_000, 25),
            "kind": "List",
            "metadata": {"resourceVersion": ""},
        }
        text = yaml.dump(
            doc, Dumper=yaml.CSafeDumper, sort_keys=True, default_flow_style=False, width=1000
        )
        name = "kubectl_like(1000, 10000)"
    reference = pyyaml_default(text)
    json_text = (
        args.json.read_text(encoding="utf-8")
        if args.json
        else json.dumps(
            reference[0]
            if len(reference) == 1
            else {"apiVersion": "v1", "kind": "List", "items": reference},
            indent=4,
        )
    )
    repo = [
        p.read_text(encoding="utf-8")
        for base in (ROOT / "scenarios", ROOT / "tests" / "fixtures")
        for p in sorted(base.rglob("*"))
        if p.suffix in (".yaml", ".yml")
    ]
    edge = [f"a: {s}\nb: [{s}]\n{s}: 1\n" for s in EDGE]
    rows = []
    base = None
    for label, make, note in YAML_CANDIDATES + JSON_CANDIDATES:
        is_json = (label, make, note) in JSON_CANDIDATES
        row: dict[str, Any] = {
            "parser": label,
            "input": f"{name} as JSON" if is_json else name,
            "note": note,
        }
        try:
            load = make()
        except ImportError as e:
            rows.append(row | {"note": f"not installed ({e.name})"})
            continue
        times, out = timed(load, json_text if is_json else text, args.repeat)
        best = min(times)
        base = base or best
        row |= {
            "bestSeconds": round(best, 3),
            "medianSeconds": round(sorted(times)[len(times) // 2], 3),
            "speedup": round(base / best, 2),
            "loadAverage": round(os.getloadavg()[0], 2),
        }
        if label == "rapidyaml-tree":
            row |= {"sameOnDump": "n/a", "sameOnRepo": "n/a", "sameOnEdgeCases": "n/a"}
        elif is_json:
            want = (
                reference[0]
                if len(reference) == 1
                else {"apiVersion": "v1", "kind": "List", "items": reference}
            )
            row |= {"sameOnDump": same(out, want), "sameOnRepo": "n/a", "sameOnEdgeCases": "n/a"}
        else:
            row |= {
                "sameOnDump": same(out, reference),
                "sameOnRepo": agrees(load, repo),
                "sameOnEdgeCases": agrees(load, edge),
            }
        rows.append(row)
        print(f"{label}: {row.get('bestSeconds')} s", file=sys.stderr, flush=True)
    rows = [{f: r.get(f, "") for f in FIELDS} for r in rows]
    print_rows(rows, FIELDS)
    write_csv(OUT, rows, FIELDS)


if __name__ == "__main__":
    main()
