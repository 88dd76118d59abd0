"""Kueue's partial admission: the largest PodSet counts between ``minCount`` and ``count`` whose
flavor assignment fits (``pkg/scheduler/podset_reducer.go`` ``PodSetReducer.Search`` and
``Scheduler.getInitialAssignments``, kubernetes-sigs/kueue v0.19.2), over the flavor assigner of
:mod:`.flavors`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from gangplan.models.kueue import ClusterQueue, KueuePodSet, KueueWorkload, ResourceFlavor
from gangplan.predicates.quota import QuotaTree, QuotaUsage
from gangplan.solver.kueue.assignment import Assignment, Mode
from gangplan.solver.kueue.flavors import assign_flavors


def podset_reducer_search(
    podsets: Sequence[KueuePodSet], fits: Callable[[list[int]], bool]
) -> list[int] | None:
    """``PodSetReducer.Search``: the largest counts between ``min_count`` and ``count`` that
    ``fits``, by binary search over one shared fraction of every PodSet's reducible pods (Go's
    ``sort.Search``); None when nothing is reducible or nothing fits."""
    full = [ps.count for ps in podsets]
    deltas = [ps.count - (ps.min_count if ps.min_count is not None else ps.count) for ps in podsets]
    total = sum(deltas)
    if total == 0:
        return None

    def sizes(i: int) -> list[int]:
        return [f - d * i // total for f, d in zip(full, deltas, strict=True)]

    last_good: tuple[int, list[int]] | None = None
    lo, hi = 0, total + 1
    while lo < hi:
        mid = (lo + hi) // 2
        cur = sizes(mid)
        if fits(cur):
            last_good = (mid, cur)
            hi = mid
        else:
            lo = mid + 1
    if last_good is not None and last_good[0] == lo:
        return last_good[1]
    return None


def assign_with_partial_admission(
    wl: KueueWorkload,
    cq: ClusterQueue,
    tree: QuotaTree,
    usage: QuotaUsage,
    flavors: Mapping[str, ResourceFlavor],
    *,
    has_preemption_targets: Callable[[Assignment], bool] = lambda a: False,
    **kwargs,
) -> Assignment:
    """``Scheduler.getInitialAssignments`` without the preemptor: the full assignment if it
    fits (or needs preemption and ``has_preemption_targets``), else, for a workload with a
    PodSet ``min_count``, the largest reduced counts that do (:func:`podset_reducer_search`),
    else the full assignment."""
    full = assign_flavors(wl, cq, tree, usage, flavors, **kwargs)
    mode = full.representative_mode()
    if mode == Mode.Fit or (mode == Mode.Preempt and has_preemption_targets(full)):
        return full
    if not any(ps.min_count is not None and ps.min_count < ps.count for ps in wl.podsets):
        return full
    found: dict[tuple[int, ...], Assignment] = {}

    def fits(counts: list[int]) -> bool:
        a = assign_flavors(wl, cq, tree, usage, flavors, counts=counts, **kwargs)
        m = a.representative_mode()
        ok = m == Mode.Fit or (m == Mode.Preempt and has_preemption_targets(a))
        if ok:
            found[tuple(counts)] = a
        return ok

    counts = podset_reducer_search(wl.podsets, fits)
    return found[tuple(counts)] if counts is not None else full
