"""``gangplan generate``: write a realistic topology-labelled snapshot (typer command function).

Registered in :mod:`gangplan.cli` with ``app.command()(generate)``. The shapes and their facts
are in :mod:`gangplan.bench.topology_shapes`. Bad input (unknown shape, utilisation outside
[0, 1], no nodes) exits 2 with the message, like every other command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from gangplan.bench.builders import to_cluster
from gangplan.bench.topology_shapes import SHAPES, generate_shape
from gangplan.cliutil import bad_input as _bad_input
from gangplan.io.errors import SnapshotError
from gangplan.io.writer import write_snapshot

_out = Console(highlight=False, soft_wrap=True)

DEFAULT_NODES = 144
DEFAULT_UTILISATION = 0.4
DEFAULT_GANGS = 32
"""Defaults chosen so a default draw shows the point: with 32 gangs of mixed sizes on 144 nodes
at 40 % load the free GPUs are oversubscribed and greedy usually admits fewer gangs than the
optimum (measured over seeds 0-11 with default `gangplan diff`: gb200-nvl72 11 of 12,
dgx-h100-superpod 12 of 12 greedy-suboptimal; at the old 8 gangs / 50 %: 0 of 24).
scheduler-perf-tas is upstream's throughput benchmark, identical 4-pod gangs of 100m pods: greedy
matches the optimum there at any load (0 of 12), by design of that benchmark."""


def generate(
    shape: Annotated[str, typer.Argument(help="Cluster shape: " + "; ".join(f"{k} ({v})" for k, v in SHAPES.items()) + ".")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Snapshot file to write (multi-document YAML).")],
    nodes: Annotated[int, typer.Option(help="Number of nodes (gb200-nvl72: rounded up to whole 18-node racks).")] = DEFAULT_NODES,
    utilisation: Annotated[float, typer.Option(help="Fraction of GPUs (cpu for scheduler-perf-tas) already used by bound pods.")] = DEFAULT_UTILISATION,
    seed: Annotated[int, typer.Option(help="Seed for the load and gang draws.")] = 0,
    gangs: Annotated[int, typer.Option(help="Pending topology-constrained gangs (the default oversubscribes the free GPUs, so gangs compete).")] = DEFAULT_GANGS,
    gang_size: Annotated[list[int] | None, typer.Option("--gang-size", help="Pods per gang to draw from (repeatable; shape default when omitted).")] = None,
    topology_key: Annotated[str | None, typer.Option("--topology-key", help="Label key every gang must stay inside (shape default when omitted).")] = None,
    unconstrained: Annotated[bool, typer.Option("--unconstrained", help="Generate gangs without a topology constraint.")] = False,
) -> None:
    """Generate a cluster with existing load and pending rack/NVLink-constrained gangs."""
    options = _options(shape, gang_size, topology_key, unconstrained)
    if nodes < 1:
        raise _bad_input("--nodes must be at least 1")
    try:
        objects = generate_shape(shape, nodes=nodes, utilisation=utilisation, seed=seed, gangs=gangs, **options)
    except ValueError as e:
        raise _bad_input(str(e)) from e
    header = f"gangplan generate {shape} --nodes {nodes} --utilisation {utilisation} --seed {seed} --gangs {gangs}"
    try:
        write_snapshot(objects, out, header=header)
    except SnapshotError as e:
        raise _bad_input(e) from None
    cluster = to_cluster(objects, source=str(out))
    _out.print(f"wrote {out}: {len(cluster.nodes)} nodes, {len(cluster.bound_pods)} bound pods, {len(cluster.pod_groups)} gangs, {len(cluster.pending_pods)} pending pods")


def _options(shape: str, gang_size: list[int] | None, topology_key: str | None, unconstrained: bool) -> dict:
    if shape not in SHAPES:
        raise _bad_input(f"unknown shape {shape!r}; use one of {', '.join(SHAPES)}")
    options: dict = {}
    if gang_size:
        if any(k < 1 for k in gang_size):
            raise _bad_input("--gang-size must be at least 1")
        if shape == "scheduler-perf-tas":
            if len(set(gang_size)) > 1:
                raise _bad_input("scheduler-perf-tas gangs all have one size: give --gang-size once")
            options["pods_per_gang"] = gang_size[0]
        else:
            options["gang_sizes"] = tuple(gang_size)
    if unconstrained:
        options["topology_key"] = None
    elif topology_key:
        options["topology_key"] = topology_key
    return options

