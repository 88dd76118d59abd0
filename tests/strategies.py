"""Hypothesis strategies for small random snapshots, shared by every engine's property tests.

``small_snapshots()`` draws a list of Kubernetes object dicts (the snapshot format) and
``small_clusters()`` loads one into a :class:`Cluster`. What a draw holds is described once, in
:func:`gangplan.bench.generators.small_snapshots.small_mixed_snapshot` (2-6 nodes with random cpu / memory / GPUs,
zone / rack / GPU-type labels, taints, cordons; bound pods within capacity; 1-3 gang or basic
PodGroups of 1-4 pods with mixed requests and one constraint kind among members: nodeSelector,
tolerations, required pod affinity / anti-affinity by hostname or zone, a host port, a DoNotSchedule
spread; 0-2 single pods; pods at their group's priority; nothing gated). Here its random choices come
from hypothesis, so a failing example shrinks to fewer nodes, groups and constraints; the same
description drawn from a numpy seed is :func:`gangplan.bench.generators.small_snapshots.small_mixed`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from gangplan.bench.generators.small_snapshots import SMALL_CONSTRAINTS, small_mixed_snapshot
from gangplan.io.loader import load_objects
from gangplan.models.cluster import Cluster

Obj = dict[str, Any]
CONSTRAINTS = SMALL_CONSTRAINTS


class _DrawChooser:
    """A :class:`gangplan.bench.generators.small_snapshots.Chooser` over hypothesis's ``draw``."""

    def __init__(self, draw: st.DrawFn) -> None:
        self._draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return self._draw(st.integers(lo, hi))

    def pick(self, options: Sequence[Any]) -> Any:
        return self._draw(st.sampled_from(options))


@st.composite
def small_snapshots(
    draw: st.DrawFn,
    max_nodes: int = 6,
    max_groups: int = 3,
    max_group_size: int = 4,
    max_singles: int = 2,
) -> list[Obj]:
    """A small random snapshot as a list of object dicts: nodes, bound pods, groups, single pods."""
    return small_mixed_snapshot(
        _DrawChooser(draw),
        max_nodes=max_nodes,
        max_groups=max_groups,
        max_group_size=max_group_size,
        max_singles=max_singles,
    )


def small_clusters(**limits: int) -> st.SearchStrategy[Cluster]:
    """:func:`small_snapshots` loaded into a Cluster (``source`` is ``<hypothesis>``)."""
    return small_snapshots(**limits).map(
        lambda objects: load_objects(objects, source="<hypothesis>")
    )


__all__ = ["CONSTRAINTS", "small_clusters", "small_snapshots"]
