"""Kueue's flavor assignment as data (kubernetes-sigs/kueue v0.19.2
``pkg/scheduler/flavorassigner/flavorassigner.go``: ``FlavorAssignmentMode``, ``Assignment``,
``PodSetAssignment``, ``FlavorAssignment``, the preemption oracle's query, the TAS request, the
QuotaReserved reasons), apart from the assigner that fills it (:mod:`.flavors`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Literal

from gangplan.models.kueue import KueuePodSet, KueueWorkload
from gangplan.predicates.quota import FlavorResource, QuotaTree, QuotaUsage

# Workload QuotaReserved reasons (apis/kueue/v1beta2/workload_types.go), by severity.
NO_MATCHING_FLAVOR = "NoMatchingFlavor"
EXCEEDS_MAX_QUOTA = "ExceedsMaxQuota"
WAITING_FOR_QUOTA = "WaitingForQuota"
TOPOLOGY_PLACEMENT_FAILED = "TopologyPlacementFailed"
_SEVERITY = {
    TOPOLOGY_PLACEMENT_FAILED: 1,
    WAITING_FOR_QUOTA: 2,
    EXCEEDS_MAX_QUOTA: 3,
    NO_MATCHING_FLAVOR: 4,
}


def _most_severe(a: str, b: str) -> str:
    return a if _SEVERITY.get(a, 0) >= _SEVERITY.get(b, 0) else b


class Mode(IntEnum):
    """``FlavorAssignmentMode``, lowest preference first."""

    NoFit = 0
    Preempt = 1
    DeferredFit = 2
    Fit = 3

    def __str__(self) -> str:
        return self.name


# preemptionMode (granular, internal to the assigner)
_NO_FIT, _NO_CANDIDATES, _PREEMPT, _RECLAIM, _FIT = range(5)
_POSSIBILITY = {"NoCandidates": _NO_CANDIDATES, "Preempt": _PREEMPT, "Reclaim": _RECLAIM}
_POSSIBILITY_NAME = {v: k for k, v in _POSSIBILITY.items()}
_WORST = (_NO_FIT, 1 << 62)
_BEST = (_FIT, 0)


def _assignment_mode(pm: int) -> Mode:
    return Mode.NoFit if pm == _NO_FIT else Mode.Fit if pm == _FIT else Mode.Preempt


PreemptionPossibility = Literal["NoCandidates", "Preempt", "Reclaim"]


@dataclass(frozen=True)
class OracleQuery:
    """What Kueue's ``SimulatePreemption`` is asked: can ``quantity`` of (flavor, resource) be
    made available to the workload's ClusterQueue by preemption."""

    tree: QuotaTree
    usage: QuotaUsage
    cluster_queue: str
    workload: KueueWorkload
    flavor: str
    resource: str
    quantity: int


PreemptionOracle = Callable[[OracleQuery], tuple[PreemptionPossibility, int]]


def no_candidates_oracle(q: OracleQuery) -> tuple[PreemptionPossibility, int]:
    """Nothing can be preempted: Kueue's oracle without candidates answers NoCandidates and the
    borrowing height of the quota as it is."""
    fr = (q.flavor, q.resource)
    return "NoCandidates", q.tree.lowest_subtree_height(q.cluster_queue, fr, q.quantity, q.usage)[0]


@dataclass(frozen=True)
class TASRequest:
    """One PodSet for the TAS placement (``TASPodSetRequests``): its pods (``count``) on
    ``flavor``; ``implied``: TAS only because the ClusterQueue has only TAS flavors."""

    podset: KueuePodSet
    count: int
    flavor: str
    implied: bool
    group: str | None


TASCheck = Callable[[Sequence[TASRequest], str, bool], "tuple[str, str] | None"]


@dataclass(frozen=True)
class FlavorAssignment:
    name: str
    mode: Mode
    tried_flavor_idx: int = -1
    borrow: int = 0


@dataclass(frozen=True)
class FlavorAttempt:
    """``FlavorAssignmentAttempt``: one flavor tried for a PodSet, its worst outcome over the
    requested resources."""

    flavor: str
    mode: Mode
    borrow: int = 0
    preemption_possibility: str | None = None
    reasons: tuple[str, ...] = ()
    no_fit_reason: str = ""


@dataclass
class PodSetAssignment:
    name: str
    flavors: dict[str, FlavorAssignment]
    """Resource -> flavor; empty: no flavor (NoFit)."""
    reasons: list[str]
    error: str | None
    requests: dict[str, int]
    """The PodSet's total requests (all its pods), ``pods`` included when the ClusterQueue has
    quota for it."""
    count: int
    attempts: tuple[FlavorAttempt, ...] = ()

    @property
    def fits(self) -> bool:
        return self.error is None and not self.reasons

    def representative_mode(self) -> Mode:
        if self.fits:
            return Mode.Fit
        if self.error is not None or not self.flavors:
            return Mode.NoFit
        return min(f.mode for f in self.flavors.values())

    def message(self) -> str:
        """``Status.Message``: the reasons sorted, joined with ", "."""
        return self.error if self.error is not None else ", ".join(sorted(self.reasons))

    def _set_mode(self, mode: Mode) -> None:
        self.flavors = {r: _replace_mode(f, mode) for r, f in self.flavors.items()}


def _replace_mode(f: FlavorAssignment, mode: Mode) -> FlavorAssignment:
    return FlavorAssignment(f.name, mode, f.tried_flavor_idx, f.borrow)


@dataclass
class Assignment:
    """Kueue's ``Assignment``: per PodSet the flavors and status, the borrowing level (height of
    the lowest cohort subtree that fits, 0: none), and the quota usage it would add."""

    podsets: list[PodSetAssignment] = field(default_factory=list)
    borrowing: int = 0
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    no_fit_reason: str = ""
    _mode: Mode | None = None

    def representative_mode(self) -> Mode:
        """The worst PodSet mode; NoFit without PodSets."""
        if not self.podsets:
            return Mode.NoFit
        if self._mode is not None:
            return self._mode
        return min(ps.representative_mode() for ps in self.podsets)

    @property
    def requires_borrowing(self) -> bool:
        return self.borrowing > 0

    def message(self) -> str:
        """``Assignment.Message``: "couldn't assign flavors to pod set NAME: REASONS" per PodSet
        that does not fit, joined with "; "."""
        parts = []
        for ps in self.podsets:
            if ps.fits:
                continue
            if ps.error is not None:
                return f"failed to assign flavors to pod set {ps.name}: {ps.error}"
            parts.append(f"couldn't assign flavors to pod set {ps.name}: {ps.message()}")
        return "; ".join(parts)

    def flavors_by_podset(self) -> dict[str, dict[str, str]]:
        return {ps.name: {r: f.name for r, f in ps.flavors.items()} for ps in self.podsets}

    def next_start_flavors(self) -> dict[tuple[int, str], int]:
        """``LastState`` for the next cycle (``AssignmentClusterQueueState.
        NextFlavorToTryForPodSetResource``, ``pkg/workload/workload.go``): the flavor index after
        the last one tried, per (position of the PodSet in this assignment, resource); pass it as
        ``start_flavor`` while the ClusterQueue's quota is unchanged. Kueue looks it up by the
        first PodSet index of a group, which is the position only without PodSet groups; this
        keeps that."""
        return {
            (i, r): f.tried_flavor_idx + 1
            for i, ps in enumerate(self.podsets)
            for r, f in ps.flavors.items()
        }

    def _append(self, requests: Mapping[str, int], ps: PodSetAssignment) -> None:
        self.podsets.append(ps)
        for res, f in ps.flavors.items():
            self.borrowing = max(self.borrowing, f.borrow)
            fr = (f.name, res)
            self.usage[fr] = self.usage.get(fr, 0) + requests.get(res, 0)

    def _update_mode(self, podset: str, mode: Mode) -> None:
        for ps in self.podsets:
            if ps.name == podset:
                ps._set_mode(mode)
                self._mode = mode
