"""Default preemption's node choice, ``pickOneNodeForPreemption``: the one implementation the
greedy engine runs and the diff explains.

Mirrors ``pickOneNodeForPreemption`` of ``pkg/scheduler/framework/preemption/preemption.go``
(kubernetes/kubernetes v1.37): a candidate node without victims wins at once; otherwise the
score functions below run in order, each keeping the nodes with the best score, until one node is
left; the remaining tie goes to the first candidate (gangplan: the lowest node position; upstream:
the first of a Go map). A victim's priority is its unit's (:meth:`GroupTree.unit_priority`,
KEP-5710 ``getPodPriority``); upstream reads the pod's priority, which is the same for pods
outside groups.

>>> a = pick_key([(5, None)], 0)
>>> b = pick_key([(5, None), (0, None)], 0)
>>> deciding_criterion(a, b)
'lowest sum of victim priorities (each + 2^31)'
>>> pick_one_node([("n1", b), ("n2", a)], key=lambda c: c[1])[0]
'n2'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TypeVar

PRIORITY_OFFSET = 2**31
"""``math.MaxInt32 + 1``, added to every victim's priority in the sum, "so that a node with a few
pods with negative priority is not picked over a node with a smaller number of pods with the same
negative priority" (preemption.go): more victims at an equal plain sum lose on the sum."""
FAR_FUTURE = datetime(9999, 12, 31, tzinfo=UTC)
"""The start time of a victim that has not started (no ``status.startTime``)."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

PICK_CRITERIA: tuple[str, ...] = (
    "fewest PDB violations",
    "lowest highest-victim priority",
    "lowest sum of victim priorities (each + 2^31)",
    "fewest victims",
    "latest start among the highest-priority victims",
)
"""The criteria of ``pickOneNodeForPreemption``, in upstream's order (``minNumPDBViolatingScoreFunc``,
``minHighestPriorityScoreFunc``, ``minSumPrioritiesScoreFunc``, ``minNumPodsScoreFunc``,
``latestStartTimeScoreFunc``)."""


@dataclass(frozen=True)
class PickKey:
    """One candidate node's values on :data:`PICK_CRITERIA` (victims non-empty)."""

    pdb_violations: int
    highest_priority: int
    priority_sum: int
    """Sum over the victims of ``priority + 2^31``."""
    victims: int
    earliest_start: datetime
    """The earliest start time among the highest-priority victims (``GetEarliestPodStartTime``)."""

    def order(self) -> tuple[int, int, int, int, int]:
        """Smaller is better on every position (the start time negated: later wins)."""
        return (
            self.pdb_violations,
            self.highest_priority,
            self.priority_sum,
            self.victims,
            -((self.earliest_start - _EPOCH) // timedelta(microseconds=1)),
        )

    def values(self) -> tuple:
        return (
            self.pdb_violations,
            self.highest_priority,
            self.priority_sum,
            self.victims,
            self.earliest_start,
        )

    def describe(self, criterion: int) -> str:
        """This node's value on criterion ``criterion`` (an index into :data:`PICK_CRITERIA`), for people."""
        if criterion == 2:
            plain = self.priority_sum - self.victims * PRIORITY_OFFSET
            return f"{plain} + {self.victims} x 2^31"
        if criterion == 4:
            return (
                "not started"
                if self.earliest_start == FAR_FUTURE
                else self.earliest_start.isoformat().replace("+00:00", "Z")
            )
        return str(self.values()[criterion])


def pick_key(victims: Iterable[tuple[int, datetime | None]], pdb_violations: int) -> PickKey:
    """The key of a candidate node from its victims as (priority, start time or None) and its PDB violations."""
    vs = [(pr, start or FAR_FUTURE) for pr, start in victims]
    top = max((pr for pr, _ in vs), default=0)
    return PickKey(
        pdb_violations=pdb_violations,
        highest_priority=top,
        priority_sum=sum(pr + PRIORITY_OFFSET for pr, _ in vs),
        victims=len(vs),
        earliest_start=min((s for pr, s in vs if pr == top), default=FAR_FUTURE),
    )


T = TypeVar("T")


def pick_one_node(candidates: Sequence[T], *, key: Callable[[T], PickKey]) -> T:
    """``pickOneNodeForPreemption`` over ``candidates`` in node order: the first without victims,
    else the best on :data:`PICK_CRITERIA` in order, ties to the earliest candidate."""
    keys = [key(c) for c in candidates]
    for c, k in zip(candidates, keys, strict=True):
        if k.victims == 0:
            return c
    best = min(range(len(candidates)), key=lambda i: (keys[i].order(), i))
    return candidates[best]


def deciding_criterion(winner: PickKey, other: PickKey) -> str | None:
    """The first criterion on which ``winner`` and ``other`` differ (None: equal on all, the node
    order decides)."""
    i = deciding_index(winner, other)
    return PICK_CRITERIA[i] if i is not None else None


def deciding_index(winner: PickKey, other: PickKey) -> int | None:
    """Index into :data:`PICK_CRITERIA` of the first criterion on which the two keys differ."""
    for i, (x, y) in enumerate(zip(winner.order(), other.order(), strict=True)):
        if x != y:
            return i
    return None


__all__ = [
    "FAR_FUTURE",
    "PICK_CRITERIA",
    "PRIORITY_OFFSET",
    "PickKey",
    "deciding_criterion",
    "deciding_index",
    "pick_key",
    "pick_one_node",
]
