"""What the ``gangplan`` commands share, without typer (the app, :mod:`gangplan.cli`, is the one
module that imports it): the consoles, loading a snapshot with its notes and warnings, the engine
options from the flags, reading a Result and writing files.

Bad input is raised, never printed here: a :class:`~gangplan.io.errors.SnapshotError` (naming the
file, object and field) or a :class:`BadInput`; the app prints ``error: <message>`` and exits 2.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, TypeVar

from rich.console import Console

from gangplan.io.errors import SnapshotError
from gangplan.models.options import BadOption, EngineOptions

err = Console(stderr=True, highlight=False, soft_wrap=True)


class BadInput(Exception):
    """Bad input that names no file (``--nodes must be at least 1``): the app prints
    ``error: <message>`` and exits 2."""


DEFAULT_WIDTH = 100
"""Tables fit this many columns unless COLUMNS says otherwise; ``-o wide`` lifts the limit."""
WIDE_WIDTH = 250


def width() -> int:
    try:
        return max(40, int(os.environ.get("COLUMNS") or DEFAULT_WIDTH))
    except ValueError:
        return DEFAULT_WIDTH


out = Console(highlight=False, width=width())


class Output(StrEnum):
    table = "table"
    wide = "wide"
    json = "json"


def console(output: Output) -> Console:
    """The stdout console: ``table`` fits the width (100 by default), ``wide`` shows everything."""
    if output == Output.wide:
        return Console(highlight=False, width=max(WIDE_WIDTH, width()), file=out.file)
    return Console(highlight=False, width=width(), file=out.file)


def spinner(enabled: bool):
    from gangplan.spinner import Spinner

    return Spinner(enabled)


def source(path: Path | str) -> str:
    """A snapshot path as messages and results name it: ``-`` (standard input) is ``<stdin>``."""
    from gangplan.io.loader import source_name

    return source_name(path)


Options = TypeVar("Options", bound=EngineOptions)


def engine_options(model: type[Options], **flags: Any) -> Options:
    """The engine options (:mod:`gangplan.models.options`) a command's flags give, ``--time-limit``
    as ``time_limit``; a value the model refuses is bad input naming the flag."""
    try:
        return model.of("gangplan", flags)
    except BadOption as e:
        raise SnapshotError(
            "<arguments>", e.problem, field="--" + e.option.replace("_", "-")
        ) from None


def load(
    path: Path,
    *,
    strict: bool = False,
    warn: bool = False,
    kube_version: str | None = None,
    nodes: bool = False,
    kueue_version: str | None = None,
):
    """Load a snapshot. ``warn`` prints the snapshot's warnings on stderr (and, when the Nodes'
    kubelets suggest another version than the one used, says so); ``strict`` makes any of them
    bad input; ``nodes``: a snapshot without a Node is bad input (nothing could be placed)."""
    from gangplan.io.loader import load_snapshot

    cluster = load_snapshot(path, kube_version=kube_version, require_nodes=nodes)
    if kueue_version is not None:
        from gangplan.solver.kueue import with_kueue_version

        try:
            cluster = with_kueue_version(cluster, kueue_version)
        except ValueError as e:
            raise SnapshotError("--kueue-version", str(e)) from None
    return checked(cluster, path, strict=strict, warn=warn)


def checked(cluster, path: Path | str, *, strict: bool, warn: bool):
    """``--strict`` refuses a loaded snapshot's warnings (bad input); ``warn`` prints them."""
    if strict and cluster.warnings:
        from gangplan.io.loader import is_dangling_warning
        from gangplan.io.schema import is_unknown_warning

        unknown = [w for w in cluster.warnings if is_unknown_warning(w)]
        dangling = [
            w for w in cluster.warnings if is_dangling_warning(w) and not is_unknown_warning(w)
        ]
        rest = [
            w for w in cluster.warnings if not is_unknown_warning(w) and not is_dangling_warning(w)
        ]
        parts = []
        if unknown:  # as the API server's strict field validation refuses them
            parts.append(
                f"--strict: {len(unknown)} unknown field(s), kind(s) or apiVersion(s):\n  "
                + "\n  ".join(unknown)
            )
        if dangling:
            parts.append(
                f"--strict: {len(dangling)} reference(s) to objects not in the snapshot:\n  "
                + "\n  ".join(dangling)
            )
        if rest:
            parts.append(
                f"--strict: {len(rest)} input(s) gangplan does not model:\n  " + "\n  ".join(rest)
            )
        raise SnapshotError(source(path), "\n".join(parts))
    for line in cluster.translations:
        err.print(f"note: {line}", markup=False)
    if warn:
        for line in cluster.warnings:
            err.print(f"warning: {line}", markup=False)
        for line in cluster.version_warnings:
            err.print(f"warning: {line}", markup=False)
    return cluster


FORMAT_WORDS = frozenset({"table", "wide", "json", "yaml", "yml"})


def out_file(path: Path, flag: str = "-o/--out") -> Path:
    """``generate`` and ``import``: ``-o`` is the file written (as ``--out``), not the output format
    it is in ``solve``/``diff``/``whatif``; a format word without a suffix (``-o json``) is refused
    rather than written to a file called ``json``."""
    if not path.suffix and path.name.lower() in FORMAT_WORDS and not path.parent.parts:
        raise SnapshotError(
            "<arguments>",
            f"{path.name!r}: here -o is the file to write (the same as --out), not the output format "
            f"it is in solve/diff/whatif; give a file name, e.g. -o cluster.yaml",
            field=flag,
        )
    return path


def write_with(path: Path, write: Callable[[IO[str]], object]) -> None:
    """``write(fp)`` into ``path`` (its directory made); an OS error is bad input."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w") as fp:
            write(fp)
    except OSError as e:
        raise SnapshotError(str(path), f"cannot write: {e.strerror or e}") from None


def read_result(path: Path):
    """A Result JSON written by ``solve --out``; unreadable or not a Result is bad input."""
    from pydantic import ValidationError

    from gangplan.models.result import Result

    try:
        return Result.from_json(path.read_text())
    except OSError as e:
        raise SnapshotError(str(path), f"cannot read: {e.strerror or e}") from None
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        raise SnapshotError(
            str(path), f"not a gangplan Result: {first['msg']}", field=loc or None
        ) from None
    except ValueError as e:
        raise SnapshotError(str(path), f"not a gangplan Result: {e}") from None


__all__ = [
    "DEFAULT_WIDTH",
    "FORMAT_WORDS",
    "WIDE_WIDTH",
    "BadInput",
    "Output",
    "checked",
    "console",
    "engine_options",
    "err",
    "load",
    "out",
    "out_file",
    "read_result",
    "source",
    "spinner",
    "width",
    "write_with",
]
