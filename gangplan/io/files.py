"""Reading snapshot files into Kubernetes objects: files and directories (``.gz`` too, and
standard input as ``-``), YAML and JSON documents (timestamps kept as strings, as Kubernetes reads
YAML through JSON), and each document flattened into its objects (``kind: List``, a simulator
export's lists, a KAI snapshot). The loader (:mod:`gangplan.io.loader`) builds the Cluster from
what this module reads."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from gangplan.io import kai_snapshot, yamlfast
from gangplan.io.errors import SnapshotError

try:  # libyaml is ~10x faster on large dumps; fall back to the pure-Python loader.
    _BaseYamlLoader = yaml.CSafeLoader  # type: ignore[attr-defined]
except AttributeError:  # pragma: no cover
    _BaseYamlLoader = yaml.SafeLoader


class _YamlLoader(_BaseYamlLoader):  # type: ignore[misc,valid-type]
    """Safe loading, except that timestamps stay strings.

    Kubernetes reads YAML through JSON (sigs.k8s.io/yaml), so an unquoted
    ``creationTimestamp: 2026-11-30T10:00:00Z`` is the string it was written as, not a datetime.
    """


_YamlLoader.add_constructor(
    "tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node)
)

SNAPSHOT_SUFFIXES = (".yaml", ".yml", ".json")
SIMULATOR_KEYS = {
    "nodes": "Node",
    "pods": "Pod",
    "priorityClasses": "PriorityClass",
    "schedulerConfig": "KubeSchedulerConfiguration",
    "namespaces": "Namespace",
    "podGroups": "PodGroup",
    "compositePodGroups": "CompositePodGroup",
    "workloads": "Workload",
    "podDisruptionBudgets": "PodDisruptionBudget",
    "pdbs": "PodDisruptionBudget",
    "topologies": "Topology",
}
_SIMULATOR_IGNORED = {
    "pvs",
    "pvcs",
    "storageClasses",
    "persistentVolumes",
    "persistentVolumeClaims",
}
SIMULATOR_DRA_KEYS = {
    "resourceClaims": "ResourceClaim",
    "resourceClaimTemplates": "ResourceClaimTemplate",
    "deviceClasses": "DeviceClass",
    "resourceSlices": "ResourceSlice",
}
"""DRA lists of a simulator export: read as ``resource.k8s.io/v1`` when an item names no apiVersion."""


# ---- reading files ----------------------------------------------------------------------------
GZIP_SUFFIXES = tuple(s + ".gz" for s in SNAPSHOT_SUFFIXES)
"""Compressed snapshot files read in a directory (and as a single file): ``snapshot.yaml.gz``."""
_QUIET_FILES = {"README", "README.md", "README.txt", "LICENSE", "NOTICE"}
"""Files a snapshot directory may hold beside its objects without a note."""


STDIN = "-"
"""The snapshot path that means standard input (``kubectl get ... -o yaml | gangplan diff -``)."""
STDIN_NAME = "<stdin>"
"""How messages and results name a snapshot read from standard input."""
_stdin_read: tuple[object, bytes] | None = None


def is_stdin(path: str | os.PathLike) -> bool:
    """Whether ``path`` is ``-`` (standard input)."""
    return os.fspath(path) == STDIN


def source_name(path: str | os.PathLike) -> str:
    """``path`` as messages name it: ``<stdin>`` for ``-``."""
    return STDIN_NAME if is_stdin(path) else str(path)


def _stdin_bytes() -> bytes:
    """Standard input's bytes, read once per stream (a command that reads ``-`` twice, such as
    ``whatif - -``, sees the same snapshot). A terminal is refused rather than waited on."""
    global _stdin_read
    stream = sys.stdin
    if _stdin_read is not None and _stdin_read[0] is stream:
        return _stdin_read[1]
    if stream is None:
        raise SnapshotError(STDIN_NAME, "cannot read: there is no standard input")
    try:
        if stream.isatty():
            raise SnapshotError(
                STDIN_NAME,
                "'-' reads the snapshot from standard input, which is a terminal: "
                "pipe one in (kubectl get nodes,pods,podgroups -A -o yaml | gangplan diff -)",
            )
        buf = getattr(stream, "buffer", None)
        data = buf.read() if buf is not None else stream.read().encode("utf-8")
    except (OSError, ValueError) as e:
        raise SnapshotError(
            STDIN_NAME, f"cannot read: {getattr(e, 'strerror', None) or e}"
        ) from None
    _stdin_read = (stream, data)
    return data


def _is_snapshot_file(f: Path) -> bool:
    name = f.name.lower()
    return f.suffix.lower() in SNAPSHOT_SUFFIXES or name.endswith(GZIP_SUFFIXES)


def skipped_files(path: str | os.PathLike) -> list[str]:
    """Notes naming the files of a snapshot directory that are not read (a ``.bin`` or ``.txt``
    beside the cluster), with the reason. Hidden files and READMEs are passed over silently; a
    ``.zip`` is read only when named itself."""
    p = Path(path)
    if not p.is_dir():
        return []
    out = []
    for f in sorted(p.rglob("*")):
        if (
            not f.is_file()
            or _is_snapshot_file(f)
            or f.name.startswith(".")
            or any(part.startswith(".") for part in f.relative_to(p).parts[:-1])
        ):
            continue
        if f.name in _QUIET_FILES or f.suffix.lower() == ".md":
            continue
        out.append(
            f"{f}: skipped: not a snapshot file (gangplan reads .yaml, .yml and .json files, and their .gz; "
            f"a {f.suffix or 'file without a suffix'} is not read)"
        )
    return out


def snapshot_files(path: str | os.PathLike) -> list[Path]:
    """The files of a snapshot: the file itself, or every YAML/JSON file (plain or ``.gz``) under a
    directory, sorted; ``-`` is standard input, named ``<stdin>``."""
    if is_stdin(path):
        return [Path(STDIN_NAME)]
    p = Path(path)
    if p.is_dir():
        files = sorted(
            f
            for f in p.rglob("*")
            if f.is_file() and _is_snapshot_file(f) and not f.name.startswith(".")
        )
        if not files:
            raise SnapshotError(
                str(p), "directory holds no .yaml, .yml or .json file (plain or .gz)"
            )
        return files
    if not p.exists():
        raise SnapshotError(str(p), "no such file or directory")
    return [p]


def read_documents(path: Path) -> list[Any]:
    """Parse one file into its documents, with syntax errors reported at file:line. ``<stdin>``
    (what :func:`snapshot_files` makes of ``-``) is standard input: YAML or JSON, gzip-compressed
    or not."""
    name = str(path)
    stdin = name in (STDIN_NAME, STDIN) and not path.exists()
    if path.suffix.lower() == ".zip" and not stdin:
        return [kai_snapshot.read_zip(path)]
    try:
        data = _stdin_bytes() if stdin else path.read_bytes()
    except OSError as e:
        raise SnapshotError(name, f"cannot read: {e.strerror or e}") from None
    if stdin:
        name = STDIN_NAME
        if data[:2] == b"\x1f\x8b":
            path = Path(STDIN_NAME + ".gz")
    if path.name.lower().endswith(".gz"):
        import gzip
        import zlib

        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise SnapshotError(name, f"not a readable gzip file: {e}") from None
        path = path.with_name(
            path.name[:-3]
        )  # the suffix of what it holds decides JSON or YAML below
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise SnapshotError(name, f"not UTF-8 text (byte {e.start})", line=line) from None
    if path.suffix.lower() == ".json" or text.lstrip().startswith(("{", "[")):
        try:
            return [json.loads(text)]
        except json.JSONDecodeError as e:
            if path.suffix.lower() == ".json":
                raise SnapshotError(
                    name, f"invalid JSON: {e.msg} (column {e.colno})", line=e.lineno
                ) from None
            # YAML flow style also starts with "{": let the YAML parser have a go.
        except RecursionError:
            raise SnapshotError(name, "invalid JSON: nesting too deep") from None
        except ValueError as e:  # e.g. an integer longer than Python's conversion limit
            raise SnapshotError(name, f"invalid JSON: {e}") from None
    try:
        # Built from libyaml events (same objects); on anything unusual or wrong, PyYAML's full
        # loader reads the text again and raises its error, at its line.
        return yamlfast.load_all(text, _YamlLoader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else None
        msg = " ".join(str(x) for x in (e.context, e.problem) if x)
        raise SnapshotError(name, f"invalid YAML: {msg}", line=line) from None
    except yaml.YAMLError as e:
        raise SnapshotError(name, f"invalid YAML: {e}") from None
    except (RecursionError, ValueError, TypeError, OverflowError) as e:
        raise SnapshotError(name, f"invalid YAML: {type(e).__name__}: {e}") from None


def _objects(file: str, doc: Any, index: int) -> list[dict]:
    """Flatten a document into Kubernetes objects (List items, simulator exports, arrays)."""
    if doc is None:
        return []
    if isinstance(doc, list):
        out = []
        for i, d in enumerate(doc):
            out.extend(_objects(file, d, index * 1000 + i))
        return out
    if not isinstance(doc, dict):
        raise SnapshotError(
            file, f"document {index + 1} is a {type(doc).__name__}, not a Kubernetes object"
        )
    kind = doc.get("kind")
    if kind is None and kai_snapshot.is_kai_snapshot(doc):
        return kai_snapshot.objects(file, doc)
    if kind is None:
        keys = set(doc) & (set(SIMULATOR_KEYS) | _SIMULATOR_IGNORED | set(SIMULATOR_DRA_KEYS))
        if keys:
            out = []
            for key, k in {**SIMULATOR_KEYS, **SIMULATOR_DRA_KEYS}.items():
                val = doc.get(key)
                if val is None:
                    continue
                items = val if isinstance(val, list) else [val]
                for i, item in enumerate(items):
                    if not isinstance(item, dict):
                        raise SnapshotError(
                            file,
                            f"simulator export: {key}[{i}] is not an object",
                            field=f"{key}[{i}]",
                        )
                    if "kind" in item and not isinstance(item["kind"], str):
                        raise SnapshotError(
                            file,
                            f"simulator export: {key}[{i}]: kind is not a string",
                            field=f"{key}[{i}].kind",
                        )
                    if key in SIMULATOR_DRA_KEYS and "apiVersion" not in item:
                        item = {"apiVersion": "resource.k8s.io/v1", **item}
                    out.append({"kind": k, **item} if "kind" not in item else item)
            return out
        raise SnapshotError(file, f"document {index + 1} has no kind", field="kind")
    if not isinstance(kind, str):
        raise SnapshotError(file, f"document {index + 1}: kind is not a string", field="kind")
    if kind.endswith("List") and "items" in doc:
        items = doc.get("items") or []
        if not isinstance(items, list):
            raise SnapshotError(file, f"{kind}: items is not a list", field="items")
        out = []
        item_kind = kind[: -len("List")] if kind != "List" else None
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise SnapshotError(
                    file, f"{kind}: items[{i}] is not an object", field=f"items[{i}]"
                )
            if item_kind and "kind" not in item:
                item = {"kind": item_kind, **item}
            out.extend(_objects(file, item, i))
        return out
    return [doc]


def _ref(kind: str, raw: dict, namespaced: bool) -> str:
    meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
    name = meta.get("name", "?")
    if namespaced:
        return f"{kind}/{meta.get('namespace') or 'default'}/{name}"
    return f"{kind}/{name}"
