"""kube-scheduler's scheduling queue on a virtual clock: activeQ, backoffQ, the unschedulable pool,
queueing hints, backoff and the periodic flush, over the queue's entities (single pods and root
groups). One component for every run that has a clock: a snapshot run (:mod:`.podgroup`) and a
trace replay.

Mirrors ``pkg/scheduler/backend/queue/scheduling_queue.go``, ``backoff_queue.go`` and
``active_queue.go`` (kubernetes/kubernetes release-1.36 and the v1.37 entity queue, kubernetes#138567),
and the plugins' ``EventsToRegister`` / queueing hints:

* **activeQ** pops in PrioritySort order (higher priority, then the earlier queue timestamp; an
  entity's timestamp is reset to "now" each time an attempt fails, ``AddUnschedulablePodIfNotPresent``).
* **A failed attempt** goes to the unschedulable pool, remembering the plugins that rejected it
  (``UnschedulablePlugins``); its unschedulable count grows by one. An attempt without any
  rejecting plugin (an error, or a group failing on its own count) backs off instead.
* **Events** a run produces, a pod bound (``AssignedPodAdd``) or a pod evicted (``Pod/Delete``;
  for workload-aware preemption, when the deletion completes: after the preemptor's next attempt,
  or once nothing else can run, rule W of issue 39, :mod:`.preemption`), are offered to every
  entity in the pool. The entity moves when a hint of one of its rejecting
  plugins says Queue (:class:`QueueingHints`): to backoffQ while its backoff lasts, else to activeQ.
  v1.37 requeues a failed pod group as a whole without consulting hints (its failed members are
  merged back and the group goes to backoff, ``AddAttemptedPodGroupIfNeeded``): any event moves it.
  v1.36 sends a failed group's pods to backoffQ without the pool or hints
  (``determineSchedulingHintForInFlightPod``, :func:`gangplan.models.version.group_pods_backoff_only`):
  it is retried when activeQ drains (the head of backoffQ is popped at once then,
  ``SchedulerPopFromBackoffQ``), after every entity queued before, whatever happened meanwhile.
* **Backoff**: ``1 s * 2^(count - 1)``, at most 10 s (v1.37 groups: ``10 s * sqrt(size)``); an
  entity leaves backoffQ when it expires (the 1 s ``flushBackoffQCompleted`` tick).
* **Flush**: every 30 s, entities that stayed 5 minutes in the pool move out whatever the hints
  said (``flushUnschedulablePodsLeftover``).
* **Stopping rule** (a snapshot run has no clock to wait on): attempts take no time, and an
  entity is only tried again when the cluster changed since its last attempt (an event arrived
  after it). Retrying on an unchanged cluster repeats the same cycle on the same input (the seed
  fixes the pod order), so the run stops when activeQ and backoffQ are empty and no entity in the
  pool has seen an event since its last attempt: no entity can change state (a v1.36 group at the
  head of backoffQ that saw no event since its last attempt would repeat it: it waits for one,
  as in the pool, and any event moves it).
* **Tie retries** (v1.36, rule R of issue 39): upstream breaks equal scores anew in every cycle
  (``prioritizeNodes``' per-node ``Randomizer``, ``findBestPlacement``'s per placement), and a
  v1.36 group is retried whenever activeQ drains, so a group whose failure hangs on how a tie was
  broken is retried until a draw succeeds. A failed v1.36 group whose attempt broke a tie is
  retried with no event, up to :data:`TIE_RETRIES` times: ``--tie-break random`` draws again;
  ``first`` takes, on retry k, the tied candidate k places after the lowest (cyclically) at every
  tie of the attempt (``PodScheduler.tie_shift``), a fixed order of alternatives. The trace's
  requeue record names it (``tie retry k``): the outcome depended on the ties. Not modelled: other
  versions redraw too, at the 5-minute flush; ``diff --samples`` gives the odds of one attempt.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gangplan.models.cluster import Cluster
from gangplan.models.groups import EntityKey
from gangplan.models.objects import Pod
from gangplan.models.version import group_pods_backoff_only, groups_requeue_without_hints
from gangplan.predicates.labels import selector_matches
from gangplan.predicates.podaffinity import matches_all_terms, term_matches
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.queue import Entity

INITIAL_BACKOFF = 1.0
"""``DefaultPodInitialBackoffDuration``."""
MAX_BACKOFF = 10.0
"""``DefaultPodMaxBackoffDuration``."""
TIE_RETRIES = 8
"""At most this many retries of a v1.36 group whose failed attempt broke a tie, with no event
between them (rule R below)."""
MAX_IN_UNSCHEDULABLE = 300.0
"""``DefaultPodMaxInUnschedulablePodsDuration``: 5 minutes."""
FLUSH_INTERVAL = 30.0
"""``flushUnschedulablePodsLeftover`` runs every 30 s."""

ASSIGNED_POD_ADD = "AssignedPodAdd"
POD_DELETE = "PodDelete"


@dataclass(frozen=True)
class ClusterEvent:
    """An event a run produces: ``pod`` bound to ``node`` (``AssignedPodAdd``) or evicted from it."""

    kind: str
    pod: Pod
    node: str
    seq: int = 0

    def __str__(self) -> str:
        return f"{self.kind} {self.pod.key} ({self.node})"


@dataclass
class QueuedEntity:
    """An entity in the queue (``QueuedPodInfo`` / ``QueuedPodGroupInfo``)."""

    entity: Entity
    size: int
    """Pending pods in it (the v1.37 group backoff grows with its square root)."""
    timestamp: tuple[float, int] = (0.0, 0)
    """(virtual seconds, sequence): when it was added or last failed; the sequence orders events of one instant."""
    attempts: int = 0
    unschedulable_count: int = 0
    rejectors: frozenset[str] = frozenset()
    """Plugins that rejected a pod of its last attempt (``UnschedulablePlugins``)."""
    last_event: int = 0
    """Events seen when its last attempt began."""
    backoff_expiry: float = 0.0
    trigger: str | None = None
    """The event that moved it out of the pool, for the trace."""
    tied: bool = False
    """Its last attempt made a choice among equal best candidates (a pod's node or a placement)."""
    tie_retries: int = 0
    """Retries made because its failure may have hung on such a choice (v1.36, rule R)."""

    @property
    def key(self) -> EntityKey:
        return self.entity.key

    def sort_key(self) -> tuple:
        return (-self.entity.priority, self.timestamp, self.entity.position)


@dataclass
class SchedulingQueue:
    cluster: Cluster
    hint: Callable[[QueuedEntity, ClusterEvent], bool]
    clock: float = 0.0
    _seq: int = 0
    events: int = 0
    active: list[tuple] = field(default_factory=list)
    backoff: list[tuple] = field(default_factory=list)
    unschedulable: dict[EntityKey, QueuedEntity] = field(default_factory=dict)
    add_watch: dict[EntityKey, QueuedEntity] = field(default_factory=dict)
    """The entities of the pool an ``AssignedPodAdd`` may move (all of them without :class:`QueueingHints`)."""

    @classmethod
    def of(
        cls,
        cluster: Cluster,
        entities: Iterable[Entity],
        sizes: dict[EntityKey, int],
        hint: Callable[[QueuedEntity, ClusterEvent], bool],
    ) -> SchedulingQueue:
        q = cls(cluster, hint)
        for e in entities:
            q._push_active(QueuedEntity(e, sizes.get(e.key, 1), timestamp=q._now()))
        return q

    # ---- clock ---------------------------------------------------------------------------------
    def _now(self) -> tuple[float, int]:
        self._seq += 1
        return (self.clock, self._seq)

    def _push_active(self, qe: QueuedEntity) -> None:
        heapq.heappush(self.active, (qe.sort_key(), id(qe), qe))

    def _push_backoff(self, qe: QueuedEntity) -> None:
        heapq.heappush(self.backoff, ((qe.backoff_expiry, *qe.sort_key()), id(qe), qe))

    def backoff_duration(self, qe: QueuedEntity) -> float:
        """``calculateBackoffDuration``: 1 s doubling per unschedulable attempt, at most 10 s
        (v1.37 groups of more than one pod: the maximum times the square root of their size)."""
        if qe.unschedulable_count <= 0:
            return 0.0
        cap = MAX_BACKOFF
        if (
            not qe.key.is_pod
            and qe.size > 1
            and groups_requeue_without_hints(self.cluster.kube_version)
        ):
            cap = MAX_BACKOFF * math.sqrt(qe.size)
        return min(INITIAL_BACKOFF * 2 ** (qe.unschedulable_count - 1), cap)

    # ---- pop ---------------------------------------------------------------------------------
    def pop(self, deadline: float | None = None) -> QueuedEntity | None:
        """The next entity to attempt, advancing the clock through backoff expiries and flushes;
        None when no entity can change state (module docstring), or when ``deadline`` (virtual
        seconds: v1.35's Permit timeout of a gang whose pods are held, :mod:`.podgroup`) comes
        first: nothing in activeQ, and the next backoff expiry or flush tick is at or after it.
        The clock then stays where it is; the caller moves it to the deadline. At the deadline
        itself the timeout goes first."""
        while True:
            self._flush_backoff()
            if self.active:
                qe = heapq.heappop(self.active)[2]
                qe.attempts += 1
                qe.last_event = self.events
                return qe
            if self.backoff:
                head = self.backoff[0][2]
                if self._backoff_only(head) and head.last_event >= self.events:
                    heapq.heappop(self.backoff)
                    if head.tied and head.tie_retries < TIE_RETRIES:  # rule R: other tie choices
                        head.tie_retries += 1
                        head.trigger = f"tie retry {head.tie_retries} (v1.36: a failed group is retried whenever activeQ drains, and its last attempt broke a tie)"
                        self._push_active(head)
                        continue
                    self._park(
                        head
                    )  # nothing changed since its last attempt: it waits for an event
                    continue
                tick = math.ceil(self.backoff[0][0][0])  # the 1 s backoff tick
                if deadline is not None and max(self.clock, tick) >= deadline:
                    return None
                self.clock = max(self.clock, tick)
                continue
            if not self._flush_unschedulable(deadline):
                return None

    def _flush_backoff(self) -> None:
        while self.backoff and self.backoff[0][0][0] <= self.clock:
            qe = heapq.heappop(self.backoff)[2]
            self._push_active(qe)

    def _flush_unschedulable(self, deadline: float | None = None) -> bool:
        """``flushUnschedulablePodsLeftover`` at its next tick that finds a candidate: entities 5
        minutes in the pool that saw an event since their last attempt go back (module docstring).
        False, the clock unchanged, when that tick is at or after ``deadline``."""
        stale = [qe for qe in self.unschedulable.values() if qe.last_event < self.events]
        if not stale:
            return False
        due = min(qe.timestamp[0] for qe in stale) + MAX_IN_UNSCHEDULABLE
        tick = max(self.clock, math.ceil(due / FLUSH_INTERVAL) * FLUSH_INTERVAL)
        if deadline is not None and tick >= deadline:
            return False
        self.clock = tick
        for qe in stale:
            if qe.timestamp[0] + MAX_IN_UNSCHEDULABLE <= self.clock:
                self._leave_pool(qe.key)
                qe.trigger = "flushed after 5 minutes in the unschedulable pool"
                self._requeue(qe)
        return True

    # ---- outcomes ----------------------------------------------------------------------------
    def failed(self, qe: QueuedEntity, rejectors: Iterable[str]) -> None:
        """``AddUnschedulablePodIfNotPresent``: back to the pool (or to backoff without a rejector)."""
        qe.rejectors = frozenset(rejectors)
        qe.unschedulable_count += 1
        qe.timestamp = self._now()
        qe.backoff_expiry = qe.timestamp[0] + self.backoff_duration(qe)
        qe.trigger = None
        if self._backoff_only(qe):
            qe.trigger = "backoff (v1.36: a pod group's pods are requeued by backoff alone)"
            self._push_backoff(qe)
            return
        self._park(qe)

    def permit_rejected(self, key: EntityKey) -> None:
        """v1.35: the gang's pods held at Permit were rejected at its timeout and went back
        through ``AddUnschedulableIfNotPresent``: its queue time is now (the 5-minute flush counts
        from it). Its place (the pool, or backoffQ / activeQ if an event already moved it) stays."""
        qe = self.unschedulable.get(key)
        if qe is not None:
            qe.timestamp = self._now()

    def _backoff_only(self, qe: QueuedEntity) -> bool:
        return not qe.key.is_pod and group_pods_backoff_only(self.cluster.kube_version)

    def _park(self, qe: QueuedEntity) -> None:
        """Into the unschedulable pool (and the watch list of the events that may move it)."""
        self.unschedulable[qe.key] = qe
        watches = getattr(self.hint, "watches_adds", None)
        if watches is None or watches(qe):
            self.add_watch[qe.key] = qe

    def event(self, ev: ClusterEvent, exclude: EntityKey | None = None) -> None:
        """``MoveAllToActiveOrBackoffQueue`` for one event: entities in the pool whose hint says
        Queue move out (``AssignedPodAdded`` asks only the entities a bound pod can move,
        as upstream pre-filters to those with cross-topology terms).

        ``exclude``: the entity the event is no news to (v1.35: a gang whose own held pods are
        forgotten at its Permit timeout; upstream's ``handleBindingCycleError`` pre-check skips
        the forgotten pod itself). It is not moved, and when it had seen every earlier event it
        counts this one as seen too, so the 5-minute flush does not retry it for its own release
        (:mod:`.podgroup`)."""
        self.events += 1
        if exclude is not None:
            own = self.unschedulable.get(exclude)
            if own is not None and own.last_event >= self.events - 1:
                own.last_event = self.events
        pool = self.add_watch if ev.kind == ASSIGNED_POD_ADD else self.unschedulable
        for key, qe in list(pool.items()):
            if key == exclude:
                continue
            if self.hint(qe, ev):
                self._leave_pool(key)
                qe.trigger = str(ev)
                self._requeue(qe)

    def _leave_pool(self, key: EntityKey) -> None:
        del self.unschedulable[key]
        self.add_watch.pop(key, None)

    def _requeue(self, qe: QueuedEntity) -> None:
        """``requeueEntityWithQueueingStrategy``: backoffQ while backing off, else activeQ."""
        if qe.backoff_expiry > self.clock:
            self._push_backoff(qe)
        else:
            self._push_active(qe)


# ---- queueing hints --------------------------------------------------------------------------------
class QueueingHints:
    """The hints for a run's failed entities and the events it produces: Queue when any rejecting
    plugin's hint for any of the entity's pending pods says Queue (``isEntityWorthRequeuing``
    takes the strongest member). An entity that failed without a rejecting plugin, and a v1.37
    group (requeued without hints), move on any event.

    :meth:`watches_adds` tells which entities an ``AssignedPodAdd`` can move at all (only
    InterPodAffinity, PodTopologySpread and GangScheduling react to a bound pod), so a run that
    binds many pods does not ask every waiting entity about each of them."""

    ADD_PLUGINS = frozenset(
        {names.INTER_POD_AFFINITY, names.POD_TOPOLOGY_SPREAD, names.GANG_SCHEDULING}
    )

    def __init__(self, cluster: Cluster, members: Callable[[EntityKey], list[Pod]]) -> None:
        self.cluster = cluster
        self.members = members
        self.groups_without_hints = groups_requeue_without_hints(
            cluster.kube_version
        ) or group_pods_backoff_only(cluster.kube_version)

    def any_event(self, qe: QueuedEntity) -> bool:
        return not qe.rejectors or (self.groups_without_hints and not qe.key.is_pod)

    def watches_adds(self, qe: QueuedEntity) -> bool:
        return self.any_event(qe) or bool(qe.rejectors & self.ADD_PLUGINS)

    def __call__(self, qe: QueuedEntity, ev: ClusterEvent) -> bool:
        if self.any_event(qe):
            return True
        pods = self.members(qe.key)
        return any(
            _plugin_hint(self.cluster, plugin, pod, ev) for plugin in qe.rejectors for pod in pods
        )


def _plugin_hint(cluster: Cluster, plugin: str, pod: Pod, ev: ClusterEvent) -> bool:
    """One plugin's ``QueueingHintFn`` for the pod events a run produces."""
    other = ev.pod
    if plugin == names.NODE_RESOURCES_FIT:
        # isSchedulableAfterPodEvent: a deleted scheduled pod frees resources; an added one never helps
        return ev.kind == POD_DELETE
    if plugin == names.NODE_PORTS:
        # isSchedulableAfterPodDeleted: the deleted pod held one of the ports the pod wants
        return ev.kind == POD_DELETE and any(
            a.port == b.port and a.protocol == b.protocol
            for a in pod.host_ports
            for b in other.host_ports
        )
    if plugin == names.INTER_POD_AFFINITY:
        # isSchedulableAfterPodChange: an added pod matching the pod's required affinity terms, or a
        # deleted pod that matched its anti-affinity (or whose anti-affinity matched it)
        aff = pod.affinity
        ns = cluster.namespaces
        if ev.kind == ASSIGNED_POD_ADD:
            terms = aff.pod_affinity_required
            return bool(terms) and matches_all_terms(terms, pod.namespace, other, ns)
        return any(
            term_matches(t, pod.namespace, other, ns) for t in aff.pod_anti_affinity_required
        ) or any(
            term_matches(t, other.namespace, pod, ns)
            for t in other.affinity.pod_anti_affinity_required
        )
    if plugin == names.POD_TOPOLOGY_SPREAD:
        # isSchedulableAfterPodChange: a scheduled pod of the namespace that a constraint counts
        return other.namespace == pod.namespace and any(
            c.when_unsatisfiable == "DoNotSchedule"
            and c.label_selector is not None
            and selector_matches(c.label_selector, other.labels)
            for c in pod.topology_spread
        )
    if plugin == names.GANG_SCHEDULING:
        return (
            ev.kind == ASSIGNED_POD_ADD
            and other.group_key is not None
            and other.group_key == pod.group_key
        )
    # TaintToleration, NodeAffinity, NodeUnschedulable, NodeName, ...: node events only
    return False
