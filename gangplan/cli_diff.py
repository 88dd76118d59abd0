"""What ``gangplan diff`` (one snapshot, or ``--suite DIR``) and ``gangplan whatif`` do besides
their flags (those are in :mod:`gangplan.cli`): run the diffs through :mod:`gangplan.api`
(:func:`~gangplan.api.diff`, :func:`~gangplan.api.suite`, :func:`~gangplan.api.whatif`), write
``--plan``, print. Each returns the command's exit code."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gangplan.cli_common import Output, checked, console, err, load, source, spinner
from gangplan.io.errors import SnapshotError
from gangplan.models.options import DiffOptions


def diff_one(
    snapshot: Path,
    options: DiffOptions,
    *,
    plan: Path | None,
    nominate: bool,
    strict: bool,
    output: Output,
    as_json: bool,
    trace: str,
    kueue_version: str | None = None,
) -> int:
    """``gangplan diff SNAPSHOT``: the diff printed (and ``--plan`` written); its exit code."""
    from gangplan import api
    from gangplan.render import render_diff

    if nominate and plan is None:
        raise SnapshotError(
            "<arguments>", "--nominate only changes what --plan writes: give --plan plan.yaml too"
        )
    cluster = load(
        snapshot,
        strict=strict,
        warn=True,
        kube_version=options.kube_version,
        kueue_version=kueue_version,
    )
    with spinner(not as_json) as sp:
        d = api.diff(cluster, snapshot=source(snapshot), progress=sp.update, **dict(options))
    written = None
    if plan is not None:
        from gangplan.io.plan import script_path, write_plan

        try:
            written = write_plan(d.optimal, plan, nominate=nominate, cluster=cluster)
        except OSError as e:
            raise SnapshotError(str(plan), f"cannot write: {e.strerror or e}") from None
    if as_json:
        json.dump(d.to_dict(trace=trace), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        shown = console(output)
        render_diff(shown, d, wide=output == Output.wide)
        if written is not None:
            sh = script_path(plan)
            steps = (
                f"{len(written.evictions)} eviction(s) first, then " if written.evictions else ""
            )
            what = (
                f"{len(written.nominations)} nomination(s)"
                if nominate
                else f"{len(written.bindings)} Binding(s) in {plan}"
            )
            shown.print(
                f"\nplan: {sh}: {steps}{what}; apply with: bash {sh}", markup=False, soft_wrap=True
            )
    return d.exit_code


def diff_suite(directory: Path, options: DiffOptions, *, output: Output, as_json: bool) -> int:
    """``gangplan diff --suite DIR``: a row per scenario, printed; the suite's exit code."""
    from gangplan import api
    from gangplan.render import render_suite
    from gangplan.solver.suite import suite_entries, suite_exit_code

    entries = suite_entries(directory)
    with spinner(not as_json) as sp:
        rows = api.suite(directory, entries=entries, progress=sp.update, **dict(options))
    if as_json:
        sys.stdout.write(json.dumps([r.document().dump() for r in rows], indent=2) + "\n")
    else:
        render_suite(
            console(output), rows, title=directory.resolve().name, wide=output == Output.wide
        )
    return suite_exit_code(rows)


def whatif_layers(
    snapshot: Path,
    variants: list[Path],
    *,
    scoring: list[str],
    add_nodes: int | None,
    like: str | None,
    drain: list[str],
    quota: list[str] = (),
    cohort: list[str] = (),
):
    """``(base, layers)``: the snapshot and the variants ``whatif`` lays over it (files or
    directories, then ``--scoring``, ``--add-nodes N --like NODE``, ``--drain``, ``--quota`` and
    ``--cohort``, in that order)."""
    from gangplan.io import overlay as ov

    if (add_nodes is None) != (like is None):
        raise SnapshotError("<arguments>", "--add-nodes N and --like NODE go together")
    base = ov.read_layer(snapshot)
    layers = [ov.read_layer(v, name=source(v) if v.name == "-" else v.name) for v in variants]
    layers += [ov.scoring(base, s) for s in scoring]
    if add_nodes is not None and like is not None:
        layers.append(ov.add_nodes(base, add_nodes, like))
    layers += [ov.drain(base, t) for t in drain]
    layers += [ov.quota(base, q) for q in quota]
    layers += [ov.cohort(base, c) for c in cohort]
    if not layers:
        raise SnapshotError(
            "<arguments>",
            "no variant: give VARIANT files or directories, --scoring, --add-nodes N --like NODE, --drain, --quota or --cohort",
        )
    return base, layers


def whatif(
    snapshot: Path,
    variants: list[Path],
    base,
    layers,
    options: DiffOptions,
    *,
    strict: bool,
    output: Output,
    as_json: bool,
) -> int:
    """``gangplan whatif``: a row per variant, its warnings once each on stderr; exit 4 if a
    variant's diff is a model mismatch, else 5 if one is unproven, else 0."""
    from gangplan import api
    from gangplan.render import render_whatif

    sources = tuple(source(p) for p in (snapshot, *variants))
    check = (
        (lambda cluster, name: checked(cluster, name, strict=True, warn=False)) if strict else None
    )
    with spinner(not as_json) as sp:
        rows = api.whatif(
            base,
            layers,
            sources=sources,
            progress=lambda name: sp.update(f"variant {name}"),
            check=check,
            **dict(options),
        )
    docs = [r.document() for r in rows]
    seen: set[str] = set()
    for d in docs:
        for line in d.warnings:
            if line not in seen:
                seen.add(line)
                err.print(
                    f"warning: {line}" + ("" if d.variant == "snapshot" else f" [{d.variant}]"),
                    markup=False,
                )
    if as_json:
        sys.stdout.write(json.dumps([d.dump() for d in docs], indent=2) + "\n")
    else:
        render_whatif(console(output), docs, title=source(snapshot), wide=output == Output.wide)
    codes = {r.diff.exit_code for r in rows}
    return 4 if 4 in codes else 5 if 5 in codes else 0


__all__ = ["diff_one", "diff_suite", "whatif", "whatif_layers"]
