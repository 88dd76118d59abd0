"""``gangplan whatif``: the same diff on a snapshot and on variants of it, one row each.

Each variant is the snapshot with Kubernetes objects laid over it (:mod:`gangplan.io.overlay`:
a file or directory, or a shorthand: another scoring strategy, copies of a node, a drained node
or label). Every row is one :func:`gangplan.solver.diff.diff_snapshot` with the same options, so
the rows differ only by what the variant changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gangplan.io.loader import load_pairs
from gangplan.io.overlay import Layer, overlay
from gangplan.models.cluster import Cluster
from gangplan.models.documents import WhatIfRowDocument
from gangplan.models.result import Result
from gangplan.models.well_known import GPU
from gangplan.solver.diff import Diff, diff_snapshot

BASE = "snapshot"
"""The name of the first row: the snapshot as it is."""


@dataclass
class WhatIfRow:
    variant: str
    cluster: Cluster
    diff: Diff
    notes: list[str]

    def document(self) -> WhatIfRowDocument:
        d = self.diff
        step = d.decisive.kind if d.decisive is not None else None
        return WhatIfRowDocument(
            variant=self.variant,
            classification=d.classification,
            groups=len(d.groups),
            greedy_admitted=len(d.greedy.admitted_groups()),
            optimal_admitted=len(d.optimal.admitted_groups()),
            greedy_placed=len(d.greedy.placements()),
            optimal_placed=len(d.optimal.placements()),
            greedy_victims=len(d.greedy.victims),
            optimal_victims=len(d.optimal.victims),
            greedy_idle_gpus=idle_gpus(self.cluster, d.greedy),
            optimal_idle_gpus=idle_gpus(self.cluster, d.optimal),
            decisive=step,
            proven=d.proof.proven if d.proof is not None else None,
            advice=d.proof.advice if d.proof is not None else None,
            notes=list(self.notes),
            warnings=list(self.cluster.warnings) + list(self.cluster.version_warnings),
            kueue=d.kueue,
            kueue_pending=sorted(
                k
                for k, w in (d.greedy.kueue.workloads.items() if d.greedy.kueue else ())
                if not w.admitted
            ),
        )


def idle_gpus(cluster: Cluster, result: Result) -> int:
    """GPUs (``nvidia.com/gpu``) allocatable and unused once ``result`` is applied: placements
    added, victims removed."""
    frame = cluster.to_frame(result)
    column = f"{GPU}_free"
    return int(frame[column].sum()) if column in frame.columns else 0


def run_whatif(
    base: Layer,
    variants: list[Layer],
    *,
    sources: tuple[str, ...],
    kube_version: str | None = None,
    progress: Callable[[str], None] | None = None,
    check: Callable[[Cluster, str], None] | None = None,
    **diff_options,
) -> list[WhatIfRow]:
    """The diff of ``base`` and of each variant laid over it, in the order given. Every variant is
    loaded first (so bad input in any of them stops the run before a solve); ``check(cluster,
    name)`` sees each loaded cluster (the CLI's ``--strict``) and may raise."""
    loaded = []
    for layer in [Layer(BASE, base.objects, base.notes), *variants]:
        merged = layer if layer.name == BASE else overlay(base, layer)
        cluster = load_pairs(merged.objects, sources=sources, kube_version=kube_version)
        if check is not None:
            check(cluster, layer.name)
        loaded.append((layer, merged, cluster))
    rows = []
    for layer, merged, cluster in loaded:
        if progress is not None:
            progress(layer.name)
        d = diff_snapshot(
            cluster,
            snapshot=f"{sources[0]} [{layer.name}]",
            kube_version=kube_version,
            **diff_options,
        )
        rows.append(WhatIfRow(layer.name, cluster, d, merged.notes if layer.name != BASE else []))
    return rows


__all__ = ["BASE", "WhatIfRow", "idle_gpus", "run_whatif"]
