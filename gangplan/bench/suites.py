"""Bench suites: what to run, as a list of tasks with stable ids.

A suite is either a directory of snapshots (each top-level file or subdirectory is one task, as in
``gangplan diff --suite``) or a suite file::

    apiVersion: gangplan.io/v1alpha1
    kind: BenchSuite
    metadata: {name: small}
    spec:
      timeLimit: 2.0        # seconds per exact solve phase (the CLI's --time-limit overrides it)
      taskTimeout: 60       # wall seconds per snapshot, all engines together (default 5 x timeLimit + 30)
      explain: false        # also search the decisive greedy step of suboptimal snapshots
      families:
      - name: mixed-small   # how the report groups the tasks
        generator: mixed    # a family of gangplan.bench.generators.families
        params: {nodes: 16} # fixed parameters
        grid: {utilisation: [0.3, 0.6], gangs: [6, 10]}   # every combination
        seeds: [0, 1]       # or {count: 5} or {start: 10, count: 5}
      - name: showcase
        directory: ../showcase   # a directory of snapshots, relative to this file

A task's id is ``family/key=value,.../seed=N`` over all its parameters in key order (or
``family/entry`` for a snapshot file), so it names the same instance on every machine and run;
``--resume`` relies on that.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gangplan.bench.generators.families import FAMILIES, build_family
from gangplan.io.errors import SnapshotError
from gangplan.models.cluster import Cluster

SUITE_API = "gangplan.io/v1alpha1"
SUITE_KIND = "BenchSuite"


@dataclass(frozen=True)
class Task:
    """One snapshot to run: generated (``generator`` + ``params`` + ``seed``) or read (``path``)."""

    id: str
    family: str
    seed: int = 0
    generator: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    path: str | None = None

    def objects(self) -> list[dict[str, Any]]:
        if self.generator is None:
            raise ValueError(f"task {self.id} is a snapshot file, not generated")
        return build_family(self.generator, self.params, self.seed)

    def build(self) -> Cluster:
        """The Cluster of this task (generation is deterministic per seed)."""
        if self.path is not None:
            from gangplan.io.loader import load_snapshot

            return load_snapshot(self.path)
        from gangplan.bench.generators.builders import to_cluster

        return to_cluster(self.objects(), source=self.id)


@dataclass(frozen=True)
class Suite:
    name: str
    source: str
    tasks: tuple[Task, ...]
    time_limit: float | None = None
    task_timeout: float | None = None
    explain: bool = False
    warnings: tuple[str, ...] = ()
    """Unknown fields of a suite file (``FILE: BenchSuite/NAME: unknown field "spec.x"``, gangplan.io.schema)."""


def _fmt(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def task_id(family: str, params: Mapping[str, Any], seed: int) -> str:
    """``family/k1=v1,k2=v2/seed=N`` with keys sorted: stable across runs and machines."""
    body = ",".join(f"{k}={_fmt(params[k])}" for k in sorted(params))
    return f"{family}/{body or '-'}/seed={seed}"


def load_suite(path: str | Path) -> Suite:
    """Read a suite directory or suite file; bad input raises SnapshotError naming the field."""
    p = Path(path)
    if p.is_dir():
        return _directory_suite(p, p.name)
    if not p.is_file():
        raise SnapshotError(str(p), "no such suite file or directory")
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise SnapshotError(str(p), f"cannot read: {e}") from None
    except yaml.YAMLError as e:
        raise SnapshotError(str(p), f"invalid YAML: {e}") from None
    return _file_suite(p, doc)


def _directory_suite(d: Path, family: str) -> Suite:
    from gangplan.solver.suite import suite_entries

    tasks = tuple(
        Task(id=f"{family}/{e.name}", family=family, path=str(e)) for e in suite_entries(d)
    )
    return Suite(name=d.name, source=str(d), tasks=tasks)


def _number(src: str, obj: str, field_: str, value: Any, *, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or (positive and value <= 0):
        raise SnapshotError(src, f"must be a positive number, got {value!r}", obj=obj, field=field_)
    return float(value)


def _file_suite(p: Path, doc: Any) -> Suite:
    src = str(p)
    if not isinstance(doc, dict) or doc.get("kind") != SUITE_KIND:
        raise SnapshotError(
            src,
            f"not a suite: expected kind: {SUITE_KIND} (or give a directory of snapshots)",
            field="kind",
        )
    name = str((doc.get("metadata") or {}).get("name") or p.stem)
    obj = f"{SUITE_KIND}/{name}"
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        raise SnapshotError(src, "missing or not a mapping", obj=obj, field="spec")
    time_limit = (
        _number(src, obj, "spec.timeLimit", spec["timeLimit"]) if "timeLimit" in spec else None
    )
    task_timeout = (
        _number(src, obj, "spec.taskTimeout", spec["taskTimeout"])
        if "taskTimeout" in spec
        else None
    )
    families = spec.get("families")
    if not isinstance(families, list) or not families:
        raise SnapshotError(src, "must be a non-empty list", obj=obj, field="spec.families")
    tasks: list[Task] = []
    for i, fam in enumerate(families):
        tasks += _expand(p, obj, f"spec.families[{i}]", fam)
    seen: set[str] = set()
    for t in tasks:
        if t.id in seen:
            raise SnapshotError(
                src,
                f"task {t.id} appears twice (repeat a family under another name or change its grid)",
                obj=obj,
                field="spec.families",
            )
        seen.add(t.id)
    return Suite(
        name=name,
        source=src,
        tasks=tuple(tasks),
        time_limit=time_limit,
        task_timeout=task_timeout,
        explain=bool(spec.get("explain", False)),
        warnings=_unknown_fields(src, obj, doc),
    )


def _unknown_fields(src: str, obj: str, doc: dict) -> tuple[str, ...]:
    """The suite file's fields its type does not define (gangplan.io.schema, like snapshot objects)."""
    from gangplan.io import schema

    if not schema.ENABLED:
        return ()
    found = schema.unknown_fields(
        doc if doc.get("apiVersion") else {**doc, "apiVersion": SUITE_API}
    )
    wrong = schema.unknown_kind(doc.get("kind"), doc.get("apiVersion"))
    return tuple(f"{src}: {obj}: {message}" for _, message in found) + (
        (f"{src}: {obj}: {wrong}",) if wrong else ()
    )


def _seeds(src: str, obj: str, where: str, value: Any) -> list[int]:
    if value is None:
        return [0]
    if isinstance(value, dict) and isinstance(value.get("count"), int) and value["count"] > 0:
        start = value.get("start", 0)
        if isinstance(start, int) and not isinstance(start, bool):
            return list(range(start, start + value["count"]))
    if (
        isinstance(value, list)
        and value
        and all(isinstance(s, int) and not isinstance(s, bool) for s in value)
    ):
        return list(value)
    raise SnapshotError(
        src, "seeds must be a list of integers or {start, count}", obj=obj, field=f"{where}.seeds"
    )


def _expand(p: Path, obj: str, where: str, fam: Any) -> list[Task]:
    src = str(p)
    if not isinstance(fam, dict) or not isinstance(fam.get("name"), str) or not fam["name"]:
        raise SnapshotError(src, "each family needs a name", obj=obj, field=f"{where}.name")
    name = fam["name"]
    if "/" in name:
        raise SnapshotError(src, "a family name cannot contain '/'", obj=obj, field=f"{where}.name")
    if "directory" in fam:
        d = (p.parent / str(fam["directory"])).resolve()
        try:
            return list(_directory_suite(d, name).tasks)
        except SnapshotError as e:
            raise SnapshotError(
                src, f"{e.file}: {e.message}", obj=obj, field=f"{where}.directory"
            ) from None
    gen = fam.get("generator")
    if gen not in FAMILIES:
        raise SnapshotError(
            src,
            f"unknown generator {gen!r}; known: {', '.join(sorted(FAMILIES))}",
            obj=obj,
            field=f"{where}.generator",
        )
    params = fam.get("params") or {}
    grid = fam.get("grid") or {}
    if not isinstance(params, dict):
        raise SnapshotError(src, "must be a mapping", obj=obj, field=f"{where}.params")
    if not isinstance(grid, dict) or any(not isinstance(v, list) or not v for v in grid.values()):
        raise SnapshotError(
            src,
            "must map each parameter to a non-empty list of values",
            obj=obj,
            field=f"{where}.grid",
        )
    known = FAMILIES[gen].defaults
    for key in list(params) + list(grid):
        if key not in known:
            section = "params" if key in params else "grid"
            raise SnapshotError(
                src,
                f"generator {gen!r} has no parameter {key!r}; it takes: {', '.join(sorted(known))}",
                obj=obj,
                field=f"{where}.{section}.{key}",
            )
    seeds = _seeds(src, obj, where, fam.get("seeds"))
    keys = list(grid)
    tasks = []
    for values in itertools.product(*(grid[k] for k in keys)):
        cell = {**params, **dict(zip(keys, values, strict=True))}
        for seed in seeds:
            tasks.append(
                Task(
                    id=task_id(name, cell, seed), family=name, seed=seed, generator=gen, params=cell
                )
            )
    return tasks


__all__ = ["SUITE_API", "SUITE_KIND", "Suite", "Task", "load_suite", "task_id"]
