"""One greedy run's state, shared by its collaborators: the pod-group cycle (:mod:`.podgroup`),
the placement algorithm (:mod:`.placement_cycle`) and preemption (:mod:`.preemption`).

* :class:`AssumedPods`: the node table and the stack of pods assumed on it in this run, with
  ``checkpoint`` / ``rollback`` (upstream's assume / forget around a pod-group cycle);
* :class:`TraceRecorder`: the trace as the run writes it (pod cycles in order, group records,
  reasons), with ``mark`` / ``restore`` and ``take`` / ``apply`` of everything recorded since a
  mark: the one way a tentative evaluation (a placement, a preemption attempt, a leftover cycle)
  is undone or kept;
* :class:`RunObserver`: what a replay watches (``pod_scores_at_step``): called before every pod
  cycle, it may stop the run there instead of an exception unwinding it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from gangplan.models.trace import GroupCycle, PermitHold, PreemptionAttempt, Requeue
from gangplan.solver.greedy.queue import queued_pods

if TYPE_CHECKING:
    from gangplan.models.cluster import Cluster
    from gangplan.models.objects import Pod
    from gangplan.solver.greedy.schedule_one import PodResult, PodScheduler
    from gangplan.solver.greedy.snapshot import NodeTable

_MISSING: Any = object()


class AssumedPods:
    """Pods this run assumed on the node table, newest last."""

    def __init__(self, snap: NodeTable) -> None:
        self.snap = snap
        self.pods: list[Pod] = []

    def assume(self, pod: Pod, i: int) -> None:
        self.snap.assume(pod, i)
        self.pods.append(pod)

    def checkpoint(self) -> int:
        return len(self.pods)

    def rollback(self, checkpoint: int) -> None:
        """Forget every pod assumed since ``checkpoint``."""
        while len(self.pods) > checkpoint:
            self.snap.forget(self.pods.pop())

    def forget(self, pods: list[Pod]) -> None:
        """Forget ``pods`` wherever they are in the stack (v1.35: a gang's pods held at Permit,
        released at its timeout after other entities assumed theirs). Only between attempts:
        no checkpoint taken before them is rolled back to afterwards."""
        keys = {p.key for p in pods}
        self.pods = [p for p in self.pods if p.key not in keys]
        self.snap.forget_all(pods)

    def since(self, checkpoint: int) -> list[tuple[Pod, int]]:
        """(pod, node) of every pod assumed since ``checkpoint``, in order."""
        return [(p, self.snap.node_of[p.key]) for p in self.pods[checkpoint:]]


@dataclass(frozen=True)
class Mark:
    """A point of the trace to restore to or take from."""

    journal: int
    order: int


@dataclass
class Segment:
    """What was recorded after a mark (taken out by :meth:`TraceRecorder.take`): the pod cycles
    run, in order, and the final value of every table entry changed (``_MISSING``: removed)."""

    order: list[str]
    entries: dict[tuple[str, str], Any]


class TraceRecorder:
    """The greedy trace while the run writes it.

    Tables (``results``, ``groups``, ``group_reasons``, ``pod_reasons``) change only through
    :meth:`set` / :meth:`pop` and ``order`` only through :meth:`cycle` / :meth:`extend_order` /
    :meth:`cut_order` / :meth:`drop_cycles`, each journaled, so :meth:`restore` undoes everything
    since a :meth:`mark`. Records are replaced, never changed in place. ``preemption`` (one entry
    per entity, kept when its attempt is undone) and ``entities`` are not journaled.
    """

    def __init__(self) -> None:
        self.order: list[str] = []
        """Pod keys of the kept pod cycles, in the order they ran."""
        self.results: dict[str, PodResult] = {}
        """Pod key -> its latest kept cycle."""
        self.groups: dict[str, GroupCycle] = {}
        self.group_reasons: dict[str, str] = {}
        self.pod_reasons: dict[str, str] = {}
        self.entities: list[str] = []
        self.preemption: dict[str, PreemptionAttempt] = {}
        self.requeues: list[Requeue] = []
        self.permit_holds: list[PermitHold] = []
        self._journal: list[tuple] = []

    # ---- journaled changes -----------------------------------------------------------------
    def set(self, table: str, key: str, value: Any) -> None:
        t = getattr(self, table)
        self._journal.append(("set", table, key, t.get(key, _MISSING)))
        t[key] = value

    def pop(self, table: str, key: str) -> None:
        t = getattr(self, table)
        if key in t:
            self._journal.append(("set", table, key, t.pop(key)))

    def cycle(self, pod_key: str, r: PodResult) -> None:
        """Record one pod cycle."""
        results = self.results
        self._journal += (
            ("order", len(self.order)),
            ("set", "results", pod_key, results.get(pod_key, _MISSING)),
        )
        self.order.append(pod_key)
        results[pod_key] = r

    def extend_order(self, keys: list[str]) -> None:
        self._journal.append(("order", len(self.order)))
        self.order.extend(keys)

    def cut_order(self, mark: Mark) -> list[str]:
        """Take the cycles recorded since ``mark`` out of the order (their results stay)."""
        cut = self.order[mark.order :]
        self._journal.append(("replace", list(self.order)))
        del self.order[mark.order :]
        return cut

    def drop_cycles(self, before: Mark, keys: set[str]) -> None:
        """Remove the cycles of ``keys`` recorded before ``before`` (a later cycle replaced them)."""
        order, end = self.order, before.order
        if len(keys) > 16:
            self._journal.append(("replace", list(order)))
            order[:end] = [k for k in order[:end] if k not in keys]
            return
        at: list[int] = []
        for k in keys:  # list.index scans in C; a retried entity has a handful of pods
            i = -1
            while True:
                try:
                    i = order.index(k, i + 1, end)
                except ValueError:
                    break
                at.append(i)
        if not at:
            return
        self._journal.append(("replace", list(order)))
        for i in sorted(at, reverse=True):
            del order[i]

    def update_group(self, key: str, **fields: Any) -> GroupCycle:
        """The group's record with ``fields`` changed (created when absent)."""
        old = self.groups.get(key)
        new = GroupCycle(**fields) if old is None else replace(old, **fields)
        self.set("groups", key, new)
        return new

    # ---- marks -------------------------------------------------------------------------------
    def mark(self) -> Mark:
        return Mark(len(self._journal), len(self.order))

    def restore(self, mark: Mark) -> None:
        """Undo everything recorded since ``mark``."""
        journal = self._journal
        while len(journal) > mark.journal:
            entry = journal.pop()
            if entry[0] == "set":
                _, table, key, old = entry
                t = getattr(self, table)
                if old is _MISSING:
                    t.pop(key, None)
                else:
                    t[key] = old
            elif entry[0] == "order":
                del self.order[entry[1] :]
            else:
                self.order[:] = entry[1]

    def take(self, mark: Mark) -> Segment:
        """Undo everything recorded since ``mark`` and return it, to :meth:`apply` later. The pods
        whose cycles are taken have no result meanwhile (their earlier results were replaced)."""
        order = self.order[mark.order :]
        entries: dict[tuple[str, str], Any] = {}
        for entry in self._journal[mark.journal :]:
            if entry[0] == "set":
                _, table, key, _ = entry
                entries.setdefault((table, key), None)
            elif entry[0] == "replace":
                raise RuntimeError(
                    "take: the order was rewritten since the mark (only appends can be taken)"
                )
        for table, key in entries:
            entries[(table, key)] = getattr(self, table).get(key, _MISSING)
        self.restore(mark)
        for k in order:
            self.pop("results", k)
        return Segment(order, entries)

    def apply(self, seg: Segment) -> None:
        """Make a taken segment the run's own again."""
        self.extend_order(seg.order)
        for (table, key), value in seg.entries.items():
            if value is _MISSING:
                self.pop(table, key)
            else:
                self.set(table, key, value)

    def clear_journal(self) -> None:
        """Forget the journal (no mark before this point will be restored)."""
        self._journal.clear()


class RunObserver(Protocol):
    """Watches a run (a replay) from the inside."""

    def watches(self, pod: Pod) -> bool:
        """True when this pod's cycles must really run (not be counted, :mod:`.placement_fast`)."""
        ...

    def before_cycle(self, state: RunState, pod: Pod) -> bool:
        """Called just before each pod cycle; True stops the run there (every later cycle ends
        with an Error status at once and no further entity is scheduled)."""
        ...

    def after_cycle(self, state: RunState, pod: Pod, result: PodResult) -> None:
        """Called after each pod cycle the run recorded (``result`` is the recorded object: the
        trace keeps the result of the cycle whose outcome it shows)."""
        ...

    # Optional: ``settled(state) -> bool``, called after each queue entity's attempt once its
    # records are final (the trace's journal cleared); True stops the run there (what the observer
    # watches can no longer change). An observer without it sees the run to its end.


@dataclass
class PermitWait:
    """A v1.35 gang's pods waiting at Permit (GangScheduling returned Wait)."""

    root: str
    pods: list[Pod]
    """Held pods, in the order they were assumed."""
    since: float
    deadline: float
    changes: int
    """The run's bind / evict count when the hold began (a gang is not held again without a change)."""
    failed: list[str] = field(default_factory=list)
    """Entities whose attempts failed while the pods were held."""
    held_at: dict[str, float] = field(default_factory=dict)
    """Pod key -> when it reached Permit (its wait ends at the gang's deadline)."""


@dataclass
class RunState:
    """Everything one greedy run reads and changes, passed to each collaborator."""

    cluster: Cluster
    snap: NodeTable
    sched: PodScheduler
    assumed: AssumedPods
    trace: TraceRecorder
    queued: set[str]
    """Keys of the pods the run attempts (pending, not gated, not terminating)."""
    fixed: dict[str, str] = field(default_factory=dict)
    """Pod key -> node to force when it passes Filter (what-if replays)."""
    preemption: bool = False
    observer: RunObserver | None = None
    placements: dict[str, int] = field(default_factory=dict)
    """Pod key -> node position of every pod the run placed (or nominated) and did not evict
    since (:meth:`place`, :meth:`evicted`)."""
    placed_floor: int | None = None
    """The lowest unit priority of any pod the run placed (:meth:`place`; an eviction does not
    raise it, so it is a lower bound): no pod the run placed can be a victim of a preemptor of
    this priority or lower (rule V, :func:`~gangplan.solver.greedy.victims.victims_below`)."""
    victims: list[str] = field(default_factory=list)
    """Pods evicted, in the order their deletion completed (an asynchronous workload-aware
    preemption's victims join when they leave their nodes, :attr:`deleting`): bound pods of the
    snapshot, and pending pods the run placed and a later preemptor evicted (rule V)."""
    evicted_placed: dict[str, tuple[int, str]] = field(default_factory=dict)
    """Pending pod the run placed and then evicted (rule V of issue 39) -> (the node it left, the
    preempting entity): it is no longer in :attr:`placements` nor attempted again (its pod object
    is deleted), and its reason in the Result says so."""
    nominated: set[str] = field(default_factory=set)
    deleting: list[tuple[str, list[str]]] = field(default_factory=list)
    """Deletions issued by asynchronous workload-aware preemption (rule W of issue 39) and not
    completed: (preemptor root, victim pod keys); the victims stay on their nodes as terminating
    copies (:attr:`NodeTable.terminating`) until ``WorkloadCycle`` completes the deletion."""
    fitted: dict[str, int] | None = None
    """While a root's attempt runs: pod key -> the node each pod's cycle chose (v1.36 nominates
    the pods that fitted in the failed attempt before preemption)."""
    wap_nominations: list[tuple[Pod, int]] = field(default_factory=list)
    """Nominations of the current root's successful workload-aware preemption, set once its
    attempt ends (after its members leave the nominator)."""
    next_cycle: bool = False
    """True while a root's leftover pods get their next cycle (pods placed earlier in this run
    count as scheduled members)."""
    stopped: bool = False
    """Set when the observer stopped the run."""
    rejectors: set[str] | None = None
    """Plugins that rejected a pod during the current entity's attempt (its ``UnschedulablePlugins``)."""
    held: dict[str, PermitWait] = field(default_factory=dict)
    """v1.35: root gang -> its pods waiting at Permit (assumed on the node table, not in
    :attr:`placements`) until the quorum or the timeout (:mod:`.podgroup`)."""
    holding: str | None = None
    """While a v1.35 gang's attempt runs: its root, whose pods that passed Reserve are kept
    assumed when the gang fails (held at Permit) instead of being forgotten."""
    discard_failure: str | None = None
    """The root group of the current attempt when a failure of it is certain to leave no record:
    a retry (a retry that places nothing is undone, ``WorkloadCycle.run``) whose failure binds
    nothing (``Preemption.failure_binds_nothing``), in a run without an observer. A failed
    placement decision of that root may skip what only its records would show (the reported
    placement's pod cycles, :mod:`.placement_cycle`)."""

    def place(self, pod: Pod, i: int) -> None:
        """The run keeps ``pod`` on node ``i`` (bound, or nominated by default preemption)."""
        self.placements[pod.key] = i
        pr = self.cluster.groups.unit_priority(pod)
        if self.placed_floor is None or pr < self.placed_floor:
            self.placed_floor = pr

    def evicted(self, pods: list[Pod], node_of: dict[str, int], by: str) -> None:
        """``pods`` left their nodes as victims of ``by`` (their deletion completed, or default
        preemption evicted them at once): they join :attr:`victims`; those the run had placed
        (rule V) leave :attr:`placements`, :attr:`nominated` and the pods the run attempts."""
        for p in pods:
            self.victims.append(p.key)
            if p.key in self.placements:
                self.placements.pop(p.key)
                self.nominated.discard(p.key)
                self.queued.discard(p.key)
                self.evicted_placed[p.key] = (node_of[p.key], by)

    @classmethod
    def start(
        cls,
        cluster: Cluster,
        snap: NodeTable,
        sched: PodScheduler,
        *,
        fixed: dict[str, str] | None = None,
        preemption: bool = False,
        observer: RunObserver | None = None,
    ) -> RunState:
        """A fresh run over ``snap`` (which may already hold state, e.g. a replay's)."""
        return cls(
            cluster,
            snap,
            sched,
            AssumedPods(snap),
            TraceRecorder(),
            {p.key for p in queued_pods(cluster)},
            dict(fixed or {}),
            preemption,
            observer,
        )


__all__ = [
    "AssumedPods",
    "Mark",
    "PermitWait",
    "RunObserver",
    "RunState",
    "Segment",
    "TraceRecorder",
]
