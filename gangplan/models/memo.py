"""Views derived from a whole snapshot, computed once per :class:`~gangplan.models.cluster.Cluster`.

A diff of a 10,000-node snapshot computes the objective of a dozen Results and validates up to
seven on the same cluster; each pass over its 100,000 bound pods (their keys, groups, unit
priorities) took 0.1-0.4 s, although the answer depends on the cluster alone. A
:class:`ClusterMemo` keeps such an answer beside the cluster, as the project keeps every value
made of a model (:func:`~gangplan.models.base.kept_beside`): in the cluster's private ``_derived``
table, one entry per memo, so it lives and dies with the cluster (no module table keyed by
``id()``), and a copy of the cluster (another object, not the table's owner) makes its own.

Clusters are not changed once loaded (derived views such as ``cluster.bound_pods`` rely on that
too), so the kept answer stays right for the cluster's lifetime.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from gangplan.models.base import kept_beside

T = TypeVar("T")


class ClusterMemo(Generic[T]):
    """``memo(cluster)``: ``compute(cluster)``, computed once per cluster object and kept in its
    ``_derived`` table under this memo."""

    def __init__(self, compute: Callable[[object], T]) -> None:
        self._compute = compute

    def __call__(self, cluster: object) -> T:
        table: dict[ClusterMemo, object] = kept_beside(cluster, "_derived", lambda _: {})
        if self not in table:
            table[self] = self._compute(cluster)
        return table[self]  # type: ignore[return-value]


__all__ = ["ClusterMemo"]
