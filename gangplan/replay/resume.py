"""Resume a killed replay from its ``--out DIR`` (issue 22: "a killed replay can be resumed from
DIR without losing finished seeds").

Each finished (policy, seed) run is written to ``DIR/runs/<policy>-<seed>.json`` as soon as it
finishes (a temporary file in the same directory, then ``os.replace``: a kill leaves either the
whole file or none). The file holds everything the outputs are built from: a fill run's job
order (names; the jobs themselves are rebuilt by :func:`gangplan.replay.fill.fill_order`, which
is deterministic in the seed, and checked name by name), its placed flags and its arrived /
allocated samples; a timed run's per-job arrival, start, end, attempts and evictions, its (time, allocated,
pending) changes and a shadow run's epoch records. Floats go through JSON's shortest
round-trip ``repr``, so a resumed run's outputs are byte-identical to an uninterrupted run's.

Each file carries the run's **fingerprint**: a SHA-256 over the trace file's bytes, the nodes
(a file's bytes, a directory's files by relative name and bytes, or the label ``unlimited`` /
``philly VC``), Philly's ``philly_vc.csv`` when ``--vc`` sizes the cluster, the mode and every
flag that changes a run (``--vc``, ``--arrival-scale``, the inflation ratio, ``--epoch``,
``--exact-time-limit``, ``--export-epoch``), gangplan's version and a SHA-256 of its own source
files (``gangplan/**/*.py``, 9 ms: a changed engine between the kill and the resume would mix two
behaviours in one output). ``--resume`` refuses
(exit 2) a DIR holding runs with another fingerprint; the policies and seeds are not in it, so
a resume may add seeds or policies to the finished ones.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from gangplan import __version__
from gangplan.io.compressed import resolve
from gangplan.io.errors import SnapshotError
from gangplan.models.cluster import Cluster
from gangplan.replay.fill import FillRun, fill_order
from gangplan.replay.shadow import EpochRecord, Shadow
from gangplan.replay.timed import JobRecord, TimedRun
from gangplan.replay.traces import ReplayJob

RUNS = "runs"
FORMAT = 1


def _hash_path(h: Any, path: Path) -> None:
    if path.is_dir():
        for p in sorted(q for q in path.rglob("*") if q.is_file()):
            h.update(str(p.relative_to(path)).encode() + b"\0")
            h.update(p.read_bytes())
            h.update(b"\0")
    elif path.is_file():
        h.update(path.read_bytes())
    else:
        h.update(b"label:" + str(path).encode())


def code_hash() -> str:
    """SHA-256 of gangplan's source files (relative names and bytes)."""
    import gangplan

    root = Path(gangplan.__file__).parent
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def fingerprint(
    trace_path: str | os.PathLike,
    nodes: str | os.PathLike | None,
    *,
    vc: str | None,
    flags: dict[str, Any],
) -> str:
    """SHA-256 hex of the inputs and flags that determine every run (module docstring)."""
    h = hashlib.sha256()
    h.update(f"gangplan {__version__} {code_hash()} replay-runs {FORMAT}\n".encode())
    h.update(json.dumps({"vc": vc, **flags}, sort_keys=True).encode() + b"\n")
    _hash_path(h, resolve(trace_path))
    h.update(b"\nnodes\n")
    if nodes is None or str(nodes) == "unlimited":
        h.update(f"label:{nodes}".encode())
    else:
        _hash_path(h, resolve(nodes))
    if vc is not None:
        h.update(b"\nvc\n")
        _hash_path(h, resolve(Path(trace_path).with_name("philly_vc.csv")))
    return h.hexdigest()


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def fill_record(fr: FillRun) -> dict[str, Any]:
    d = {f.name: getattr(fr, f.name) for f in dataclasses.fields(fr) if f.name != "jobs"}
    d["placed"] = [int(p) for p in fr.placed]
    d["job_names"] = [j.name for j in fr.jobs]
    return d


def timed_record(tr: TimedRun) -> dict[str, Any]:
    d: dict[str, Any] = {
        "policy": tr.policy,
        "seed": tr.seed,
        "capacity_gpus": tr.capacity_gpus,
        "records": [[r.arrival, r.start, r.end, r.attempts, r.evictions] for r in tr.records],
        "changes": [list(c) for c in tr.changes],
        "unplaceable": tr.unplaceable,
    }
    extra = {
        f.name: getattr(tr, f.name)
        for f in dataclasses.fields(tr)
        if f.name not in d and f.name not in ("shadow",)
    }
    d.update(extra)
    sh = tr.shadow
    if sh is not None:
        d["shadow"] = {
            "time_limit": sh.time_limit,
            "epoch": sh.epoch,
            "seed": sh.seed,
            "export": list(sh.export) if sh.export else None,
            "movable": sh.movable,
            "exported": sh.exported,
            "records": [dataclasses.asdict(e) for e in sh.records],
        }
    return d


class RunStore:
    """``DIR/runs``: the finished runs of one replay. ``resume=False`` starts afresh (removes the
    run files a previous replay left); ``resume=True`` refuses files of another fingerprint."""

    def __init__(self, directory: str | os.PathLike, fp: str, *, resume: bool) -> None:
        self.dir = Path(directory) / RUNS
        self.fp = fp
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise SnapshotError(str(self.dir), f"cannot create: {e.strerror or e}") from None
        self.saved: list[str] = []
        self.resumed: list[str] = []
        for p in sorted(self.dir.glob("*.json")):
            if not resume:
                p.unlink()
                continue
            try:
                got = json.loads(p.read_text(encoding="utf-8")).get("fingerprint")
            except (OSError, ValueError, AttributeError):
                raise SnapshotError(
                    str(p), "not a replay run file; remove it to resume", field="--resume"
                ) from None
            if got != fp:
                raise SnapshotError(
                    str(p),
                    "this run was made from other inputs or flags (trace, nodes, mode, --vc, --arrival-scale, --epoch, "
                    "--exact-time-limit, --export-epoch or gangplan's version or code differ); rerun without --resume to start afresh, "
                    "or use another --out",
                    field="--resume",
                )

    def path(self, policy: str, seed: int) -> Path:
        return self.dir / f"{policy}-{seed}.json"

    def _load(self, policy: str, seed: int, mode: str) -> dict[str, Any] | None:
        p = self.path(policy, seed)
        if not p.is_file():
            return None
        d = json.loads(p.read_text(encoding="utf-8"))
        if (
            d.get("mode") != mode
            or d.get("run", {}).get("policy") != policy
            or d["run"].get("seed") != seed
        ):
            raise SnapshotError(
                str(p), f"expected the {mode} run of {policy} seed {seed}", field="--resume"
            )
        self.resumed.append(f"{policy} seed {seed}")
        return d["run"]

    def save(self, mode: str, run: FillRun | TimedRun) -> Path:
        rec = fill_record(run) if isinstance(run, FillRun) else timed_record(run)  # type: ignore[arg-type]
        p = self.path(run.policy, run.seed)
        text = (
            json.dumps(
                {"fingerprint": self.fp, "gangplan": __version__, "mode": mode, "run": rec},
                separators=(",", ":"),
            )
            + "\n"
        )
        try:
            _write_atomic(p, text)
        except OSError as e:
            raise SnapshotError(str(p), f"cannot write: {e.strerror or e}") from None
        self.saved.append(f"{run.policy} seed {run.seed}")
        return p

    def load_fill(
        self, policy: str, seed: int, cluster: Cluster, jobs: list[ReplayJob], ratio: float
    ) -> FillRun | None:
        d = self._load(policy, seed, "fill")
        if d is None:
            return None
        todo, _ = fill_order(cluster, jobs, seed, ratio)
        if [j.name for j in todo] != d["job_names"]:
            raise SnapshotError(
                str(self.path(policy, seed)),
                "its job order is not this trace's fill order",
                field="--resume",
            )
        kw = {k: v for k, v in d.items() if k != "job_names"}
        kw["placed"] = [bool(p) for p in kw["placed"]]
        return FillRun(jobs=todo, **kw)

    def load_timed(self, policy: str, seed: int, jobs: list[ReplayJob]) -> TimedRun | None:
        d = self._load(policy, seed, "timed")
        if d is None:
            return None
        recs = d.pop("records")
        if len(recs) != len(jobs):
            raise SnapshotError(
                str(self.path(policy, seed)),
                f"{len(recs)} job records, the trace has {len(jobs)}",
                field="--resume",
            )
        sh = d.pop("shadow", None)
        d["changes"] = [tuple(c) for c in d["changes"]]
        d["frag"] = [tuple(c) for c in d.get("frag", [])]
        tr = TimedRun(
            records=[JobRecord(j, *rec) for j, rec in zip(jobs, recs, strict=True)], **d
        )  # (a checkpoint before evictions: 4 fields)
        if sh is not None:
            shadow = Shadow(
                time_limit=sh["time_limit"],
                epoch=sh["epoch"],
                seed=sh["seed"],
                export=tuple(sh["export"]) if sh["export"] else None,  # type: ignore[arg-type]
                movable=sh.get("movable", False),
            )
            shadow.records = [EpochRecord(**e) for e in sh["records"]]
            shadow.exported = sh["exported"]
            tr.shadow = shadow
        return tr


__all__ = ["RUNS", "RunStore", "fingerprint"]
