"""Views derived from a whole snapshot, computed once per :class:`~gangplan.models.cluster.Cluster`.

A diff of a 10,000-node snapshot computes the objective of a dozen Results and validates up to
seven on the same cluster; each pass over its 100,000 bound pods (their keys, groups, unit
priorities) took 0.1-0.4 s, although the answer depends on the cluster alone. A
:class:`ClusterMemo` keeps such an answer beside the cluster it was computed from, under a weak
reference: it goes when the cluster goes, so nothing outlives the run that made it, and it is never
put on the pydantic models themselves (``model_copy(update=...)`` would carry a stale value to the
copy; a copy is another object, so it gets its own entry here).

Clusters are not changed once loaded (derived views such as ``cluster.bound_pods`` rely on that
too), so the kept answer stays right for the cluster's lifetime.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class ClusterMemo(Generic[T]):
    """``memo(cluster)``: ``compute(cluster)``, computed once per live cluster object."""

    def __init__(self, compute: Callable[[object], T]) -> None:
        self._compute = compute
        self._kept: dict[int, tuple[weakref.ref, T]] = {}

    def __call__(self, cluster: object) -> T:
        key = id(cluster)
        hit = self._kept.get(key)
        if hit is not None and hit[0]() is cluster:
            return hit[1]
        value = self._compute(cluster)
        self._kept[key] = (weakref.ref(cluster, self._forget(key)), value)
        return value

    def _forget(self, key: int) -> Callable[[weakref.ref], None]:
        """The callback dropping ``key``'s entry when its cluster goes (only that entry: a later
        cluster that got the same id has a new reference)."""

        def forget(ref: weakref.ref) -> None:
            hit = self._kept.get(key)
            if hit is not None and hit[0] is ref:
                del self._kept[key]

        return forget

    def clear(self) -> None:
        self._kept.clear()


__all__ = ["ClusterMemo"]
