"""The Python API, re-exported by ``gangplan`` (``import gangplan as gp``): load, solve, diff,
validate; whatif and suite, what ``gangplan whatif`` and ``gangplan diff --suite`` run; and
make_room, what ``gangplan make-room`` answers. The
options are the CLI's flags as keyword arguments (``--time-limit`` -> ``time_limit``), read by
one model (:mod:`gangplan.models.options`: :class:`SolveOptions`, :class:`DiffOptions`); the
``gangplan`` command runs every engine through these functions. docs/python-api.md describes
them and what the API promises."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gangplan.models import defaults as D
from gangplan.models.options import (
    ENGINES,
    BadOptionType,
    DiffOptions,
    Engine,
    EngineOptions,
    RoomOptions,
    SolveOptions,
)
from gangplan.models.result import Result
from gangplan.models.result import attach_cluster as attach

if TYPE_CHECKING:
    from gangplan.io.overlay import Layer
    from gangplan.models.cluster import Cluster
    from gangplan.models.room import RoomDocument
    from gangplan.solver.diff import Diff
    from gangplan.solver.suite import SuiteRow
    from gangplan.solver.validate import Violation
    from gangplan.solver.whatif import WhatIfRow

Progress = Callable[[str], None]
"""Called with a short description before each long step (the CLI's spinner shows it)."""


def load(
    path_or_objects: str | os.PathLike | Iterable[Mapping[str, Any]],
    *,
    kube_version: str | None = None,
    strict: bool = False,
    kueue_version: str | None = None,
) -> Cluster:
    """A snapshot as a :class:`Cluster`: a file or directory of ``kubectl get -o yaml`` /
    JSON output, or Kubernetes objects already in memory (a list of dicts, as YAML gives them).

    ``kube_version``: the kube-scheduler version the engines reproduce ("1.35" .. "1.38"; default
    the newest release). ``kueue_version``: with Kueue objects, the Kueue release whose admission
    is reproduced ("0.17", "0.18", "0.19", "main" or a patch of one; default "0.19"). ``strict``: inputs that can change scheduling but are not modelled
    (``Cluster.warnings``) raise instead. Bad input raises :class:`SnapshotError` naming the
    file, object and field."""
    from gangplan.io.errors import SnapshotError
    from gangplan.io.loader import load_objects, load_snapshot

    kv = EngineOptions.of("load", {"kube_version": kube_version}).kube_version
    if isinstance(path_or_objects, str | os.PathLike):
        cluster = load_snapshot(path_or_objects, kube_version=kv)
        source = os.fspath(path_or_objects)
    elif isinstance(path_or_objects, Mapping):
        cluster, source = load_objects([dict(path_or_objects)], kube_version=kv), "<memory>"
    elif isinstance(path_or_objects, Iterable) and not isinstance(path_or_objects, bytes):
        objects = list(path_or_objects)
        if not all(isinstance(o, Mapping) for o in objects):
            raise TypeError("load() takes a path, or Kubernetes objects as dicts")
        cluster, source = load_objects([dict(o) for o in objects], kube_version=kv), "<memory>"
    else:
        raise TypeError(
            f"load() takes a path, or Kubernetes objects as dicts, not {type(path_or_objects).__name__}"
        )
    if kueue_version is not None:
        from gangplan.solver.kueue import with_kueue_version

        cluster = with_kueue_version(cluster, kueue_version)
    if strict and cluster.warnings:
        lines = "\n  ".join(cluster.warnings)
        raise SnapshotError(
            str(source),
            f"strict: {len(cluster.warnings)} input(s) gangplan does not model:\n  {lines}",
        )
    return cluster


def _snapshot_name(cluster: Cluster) -> str | None:
    return cluster.sources[0] if len(cluster.sources) == 1 else None


def solve(
    cluster: Cluster,
    engine: Engine = D.ENGINE,
    *,
    snapshot: str | None = None,
    progress: Progress | None = None,
    **options: Any,
) -> Result:
    """Place the pending pods of ``cluster`` with one engine: ``"greedy"`` (what kube-scheduler
    does) or ``"exact"`` (the CP-SAT optimum; seeded by a greedy run unless ``hint`` is given).
    Options (:class:`SolveOptions`): ``time_limit``, ``wall_limit``, ``workers``, ``seed``,
    ``tie_break``, ``objective``, ``preemption``, ``kube_version``, ``hint``; an option the
    engine does not read is ignored, an unknown one is a TypeError.

    ``snapshot``: the name the Result gives its snapshot (default: the cluster's one source
    file); ``progress``: called before each engine runs (:data:`Progress`)."""
    from gangplan.models.cluster import Cluster

    if not isinstance(cluster, Cluster):
        raise TypeError(f"solve() takes a Cluster (gangplan.load), not {type(cluster).__name__}")
    if engine not in ENGINES:
        raise ValueError(f"solve() engine must be 'greedy' or 'exact', not {engine!r}")
    o = SolveOptions.of("solve", options)
    if o.hint is not None and not isinstance(o.hint, Result):
        raise BadOptionType(
            "solve", "hint", f"must be a Result or None, not {type(o.hint).__name__} {o.hint!r}"
        )
    cluster = cluster.at_version(o.kube_version)
    name = snapshot if snapshot is not None else _snapshot_name(cluster)
    hint = o.hint
    if engine == "greedy" or hint is None:
        from gangplan.solver.greedy import solve_greedy

        if progress:
            progress("greedy: kube-scheduler's cycle")
        hint = solve_greedy(
            cluster, tie_break=o.tie_break, seed=o.seed, snapshot=name, preemption=o.preemption
        )
        if engine == "greedy":
            return attach(hint, cluster)
    from gangplan.solver.exact import solve_exact

    if progress:
        progress(f"exact: CP-SAT, tier by tier (up to {o.time_limit:g} s per tier)")
    result = solve_exact(
        cluster,
        time_limit=o.time_limit,
        wall_limit=o.wall_limit,
        workers=o.workers,
        seed=o.seed,
        objective=o.objective,
        hint=hint,
        snapshot=name,
        preemption=o.preemption,
    )
    return attach(result, cluster)


def diff(
    cluster: Cluster,
    greedy: Result | None = None,
    optimal: Result | None = None,
    *,
    snapshot: str | None = None,
    progress: Progress | None = None,
    **options: Any,
) -> Diff:
    """Greedy against the optimum on ``cluster``: the classification, per-group outcomes and the
    decisive greedy step (what ``gangplan diff`` prints; the attributes mirror its JSON).

    ``greedy`` / ``optimal``: Results of :func:`solve` on this cluster to compare instead of
    solving again (the decisive step's probes still run). Options (:class:`DiffOptions`) that a
    given Result records (``kube_version``, ``preemption``, ``tie_break``, ``seed``) default to
    its values; an explicit option that contradicts it is a ValueError. ``snapshot`` and
    ``progress`` as for :func:`solve`."""
    from gangplan.models.cluster import Cluster
    from gangplan.solver.diff import diff_snapshot

    if not isinstance(cluster, Cluster):
        raise TypeError(f"diff() takes a Cluster (gangplan.load), not {type(cluster).__name__}")
    for label, r, engine in (("greedy", greedy, "greedy"), ("optimal", optimal, "exact")):
        if r is not None and not isinstance(r, Result):
            raise TypeError(f"diff() {label}= takes a Result, not {type(r).__name__}")
        if r is not None and r.engine != engine:
            raise ValueError(
                f"diff() {label}= takes a Result of the {engine} engine, not a {r.engine} one"
            )
    o = _as_recorded(DiffOptions.of("diff", options), options, greedy, optimal)
    cluster = cluster.at_version(o.kube_version)
    name = snapshot if snapshot is not None else _snapshot_name(cluster) or ""
    d = diff_snapshot(
        cluster, snapshot=name, greedy=greedy, optimal=optimal, progress=progress, **dict(o)
    )
    attach(d.greedy, cluster)
    attach(d.optimal, cluster)
    return d


def _as_recorded(
    o: DiffOptions, given: Mapping[str, Any], greedy: Result | None, optimal: Result | None
) -> DiffOptions:
    """``o`` with the options the given Results ran with; an option ``given`` explicitly that
    contradicts them is a ValueError."""
    recorded: dict[str, Any] = {}
    if greedy is not None:
        g = greedy.options
        recorded = {
            "kube_version": g.kube_version,
            "preemption": g.preemption,
            "tie_break": g.tie_break,
            "seed": g.seed,
        }
    if optimal is not None:
        op = optimal.options.preemption
        if (
            "preemption" in recorded
            and recorded["preemption"] is not None
            and op is not None
            and op != recorded["preemption"]
        ):
            raise ValueError(
                f"diff(): greedy= ran with preemption={recorded['preemption']}, optimal= with preemption={op}"
            )
        recorded.setdefault("preemption", op)
        recorded.setdefault("seed", optimal.options.seed)
    update = {}
    for name, value in recorded.items():
        if value is None:
            continue
        if given.get(name) is not None and getattr(o, name) != value:
            raise ValueError(
                f"diff() option {name}={getattr(o, name)!r} contradicts the given Result, which ran with {name}={value!r}"
            )
        update[name] = value
    return o.model_copy(update=update)


def whatif(
    base: Layer,
    variants: Sequence[Layer],
    *,
    sources: tuple[str, ...],
    progress: Progress | None = None,
    check: Callable[[Cluster, str], None] | None = None,
    **options: Any,
) -> list[WhatIfRow]:
    """The diff of the snapshot ``base`` and of each variant laid over it (``gangplan whatif``;
    layers from :mod:`gangplan.io.overlay`), in order, one row each. ``sources``: the snapshot's
    and the variants' names; ``check(cluster, variant)`` sees each loaded cluster before any
    solve and may raise; ``progress`` gets each variant's name. Options: :class:`DiffOptions`."""
    from gangplan.solver.whatif import run_whatif

    o = DiffOptions.of("whatif", options)
    rows = run_whatif(
        base, list(variants), sources=sources, progress=progress, check=check, **dict(o)
    )
    for row in rows:
        attach(row.diff.greedy, row.cluster)
        attach(row.diff.optimal, row.cluster)
    return rows


def suite(
    directory: str | os.PathLike,
    *,
    entries: Sequence[Path] | None = None,
    progress: Progress | None = None,
    **options: Any,
) -> list[SuiteRow]:
    """``gangplan diff --suite``: the diff of every scenario of ``directory`` (or of the given
    ``entries`` of it) with its ``gangplan.io/expect-*`` annotations checked, one row each.
    Options: :class:`DiffOptions`; a scenario expecting ``sometimes`` is sampled when
    ``samples`` is 0."""
    from gangplan.solver.suite import run_suite

    o = DiffOptions.of("suite", options)
    return run_suite(
        directory,
        entries=list(entries) if entries is not None else None,
        progress=progress,
        **dict(o),
    )


def make_room(
    cluster: Cluster,
    targets: Sequence[str] | None = None,
    *,
    snapshot: str | None = None,
    **options: Any,
) -> RoomDocument:
    """What it takes to admit ``targets`` (PodGroup / CompositePodGroup names or pending pods;
    default: every pending group kube-scheduler leaves pending): the cheapest moves (and with
    ``evict=True`` evictions) found by the exact engine, a greedy baseline beside it, both checked
    by kube-scheduler's cycle, and the fewest nodes to add (what ``gangplan make-room`` prints;
    :class:`gangplan.models.room.RoomDocument`). Options: :class:`RoomOptions`. A target that is
    no pending group of the snapshot is a ValueError."""
    from gangplan.models.cluster import Cluster
    from gangplan.models.room import RoomWeights
    from gangplan.solver.room import make_room as run

    if not isinstance(cluster, Cluster):
        raise TypeError(
            f"make_room() takes a Cluster (gangplan.load), not {type(cluster).__name__}"
        )
    o = RoomOptions.of("make_room", options)
    if o.weights is not None and not isinstance(o.weights, RoomWeights):
        raise BadOptionType(
            "make_room",
            "weights",
            f"must be a RoomWeights or None, not {type(o.weights).__name__} {o.weights!r}",
        )
    cluster = cluster.at_version(o.kube_version)
    return run(
        cluster,
        list(targets) if targets else None,
        evict=o.evict,
        weights=o.weights,
        time_limit=o.time_limit,
        wall_limit=o.wall_limit,
        workers=o.workers,
        seed=o.seed,
        snapshot=snapshot if snapshot is not None else _snapshot_name(cluster),
        like=o.like,
        add_nodes=o.add_nodes,
        copies=o.copies,
        samples=o.samples,
    )


def validate(cluster: Cluster, result: Result) -> list[Violation]:
    """Every hard rule ``result`` breaks on ``cluster`` (capacity, filters, gangs, topology,
    victims, ...); ``[]`` when it is valid."""
    from gangplan.solver.validate import validate as run_validate

    return run_validate(cluster, result)


__all__ = [
    "DiffOptions",
    "RoomOptions",
    "Progress",
    "SolveOptions",
    "diff",
    "load",
    "make_room",
    "solve",
    "suite",
    "validate",
    "whatif",
]
