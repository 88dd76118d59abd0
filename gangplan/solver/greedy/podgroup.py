"""The workload scheduling cycle: one queue entity (a single pod or a root group) at a time.

Mirrors ``scheduleOnePodGroup`` and the pod-group algorithm (``pkg/scheduler/schedule_one_podgroup.go``,
kubernetes/kubernetes @f07ca119) and GangScheduling's ``PlacementFeasible``
(``pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go`` @61c7fad9), v1.37-era:

* Validation of the whole hierarchy (:meth:`GroupTree.validation_error`, which mirrors
  ``validatePodGroupHierarchy``, see :mod:`gangplan.models.hierarchy`). A violation fails every
  member with a SchedulerError, without scheduling anything.
* Leaf PodGroup: PlacementFeasible before the first pod, then each pod in member order runs the
  per-pod cycle (no per-pod preemption) and, when placed, is assumed so later pods see it. After
  each pod PlacementFeasible is asked again: Unschedulable (``remaining + scheduled < M``) stops
  at once; Success does not stop (extra pods past minCount are placed greedily). A final Wait
  becomes Unschedulable; anything but Success reverts every pod the group assumed.
* CompositePodGroup: the same counting over children (``M = minGroupCount``, 1 for basic),
  children in creationTimestamp order, no backtracking; a failing parent reverts its successful
  children too. Without TopologyAwareWorkloadScheduling constraints there is one implicit
  placement holding every node, so no placement scoring takes place.
* The root succeeds only if at least one pod was newly placed anywhere in it.

* Placements (KEP-5732, ``schedule_one_podgroup.go``): a group with ``schedulingConstraints.topology``
  (PodGroup or CompositePodGroup) runs the algorithm above once per topology domain inside its
  parent's placement and keeps the best feasible one: :mod:`.placement_cycle` (the algorithm) and
  :mod:`.placement` (generation and scoring). Children of a CompositePodGroup are evaluated inside
  the parent placement under evaluation.

* Preemption (PostFilter) is opt-in (``preemption=True``): workload-aware preemption for a root
  group that ends Unschedulable, default preemption for a single pod (:mod:`.preemption`).

Not reproduced: ``PercentageOfPlacementsToScore`` (not found in upstream code either).
"""

from __future__ import annotations

from gangplan.models.groups import EntityKey
from gangplan.models.objects import Pod
from gangplan.models.trace import PermitHold, Requeue
from gangplan.models.version import (
    group_pods_backoff_only,
    permit_hold,
    stale_affinity_lists,
    wap_nominates_simulation,
    workload_aware_preemption,
)
from gangplan.solver.greedy.framework import Code, Status
from gangplan.solver.greedy.placement_cycle import (
    SCHEDULER_ERROR,
    GroupRun,
    PlacementAlgorithm,
    propagate_failure,
    record_group,
)
from gangplan.solver.greedy.plugins.gangscheduling import placement_feasible
from gangplan.solver.greedy.preemption import Preemption
from gangplan.solver.greedy.queue import Entity, member_order
from gangplan.solver.greedy.schedule_one import PodResult, leaf_reason, pod_failure
from gangplan.solver.greedy.scheduling_queue import (
    ASSIGNED_POD_ADD,
    POD_DELETE,
    ClusterEvent,
    QueueingHints,
    SchedulingQueue,
)
from gangplan.solver.greedy.state import PermitWait, RunState

STOPPED = "the run was stopped by its observer"
PERMIT_TIMEOUT = 300.0
"""``DefaultSchedulingTimeoutDuration = 5 * time.Minute`` (``pkg/scheduler/backend/workloadmanager/
podgroupinfo.go``, release-1.35): how long a v1.35 gang's pods wait at Permit for the quorum."""
PERMIT_WAIT = "waiting for minCount pods from a gang to be waiting on permit"
"""GangScheduling's Permit status while the quorum is not met (``gangscheduling.go``, release-1.35)."""
WAITING_ON_PREEMPTION = "pod group is waiting for preemption to complete"
"""The reason of a group whose workload-aware preemption succeeded (``podGroupSchedulingDefaultAlgorithm``'s
status text for a group waiting on preemption, ``schedule_one_podgroup.go``)."""


class WorkloadCycle:
    """Runs every entity in queue order on one :class:`~.state.RunState`: the pod-group cycle
    itself, with the placement algorithm and preemption as collaborators on the same state."""

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.placement = PlacementAlgorithm(state, self.schedule_in_placement, self.leaf_inputs)
        self.preemption = Preemption(state, self.schedule_group)
        self.q: SchedulingQueue | None = None
        """The run's queue (its clock dates a v1.35 Permit hold)."""
        self.changes = 0
        """Pods bound or evicted so far in the run (not counting v1.35 Permit releases)."""
        self.hold_changes: dict[str, int] = {}
        """Root gang -> :attr:`changes` when its last Permit hold began (v1.35)."""

    # ---- entities ----------------------------------------------------------------------------
    def run(self, queue: list[Entity], *, requeue: bool = True) -> None:
        """Every entity through the scheduling queue (:mod:`.scheduling_queue`): first in
        PrioritySort order, then again whenever an event of the run (pods bound, pods evicted) may
        make a failed one schedulable, until no entity can change state. ``requeue=False``: one
        pass, no retries (``benchmarks/requeue_cost.py`` compares the two)."""
        st = self.state
        sizes = {e.key: len(self._queued_pods(e.key)) for e in queue}
        q = SchedulingQueue.of(
            st.cluster, queue, sizes, QueueingHints(st.cluster, self._queued_pods)
        )
        names = st.snap.names
        self.q, self.changes, self.hold_changes = q, 0, {}
        hold = permit_hold(st.cluster.kube_version)
        while not st.stopped:
            qe = q.pop(min((h.deadline for h in st.held.values()), default=None))
            if qe is None:
                if st.held:  # v1.35: the earliest Permit timeout comes before anything else
                    self._permit_timeout(q)
                    continue
                if st.deleting:  # nothing left to try before the victims are gone (rule W, e)
                    self._complete_deletions(q, list(st.deleting))
                    continue
                break
            key = qe.key
            issued = list(st.deleting)
            pods = self._queued_pods(key)
            before = {p.key for p in pods if p.key in st.placements}
            waiting = st.held.get(key.key) if not key.is_pod else None
            n_held = len(waiting.pods) if waiting is not None else 0
            st.holding = key.key if hold and self._gang_root(key) else None
            victims = len(st.victims)
            st.rejectors = set()
            st.sched.tied, st.sched.tie_shift = False, qe.tie_retries
            mark = st.trace.mark()
            if qe.attempts == 1:
                st.trace.entities.append(str(key))
                self._attempt(key)
            else:
                discard = (
                    not key.is_pod
                    and not hold  # v1.35: a failed retry may hold more pods at Permit
                    and st.observer is None
                    and self.preemption.failure_binds_nothing(key.key)
                )
                st.discard_failure = key.key if discard else None
                # v1.35: pods held at Permit count as scheduled members of the retry
                held_keys = {p.key for p in waiting.pods} if waiting is not None else set()
                try:
                    self._retry(key, pods, before | held_keys)
                finally:
                    st.discard_failure = None
            st.holding = None
            now_held = st.held.get(key.key) if not key.is_pod else None
            newly_held = now_held is not None and len(now_held.pods) > n_held
            bound = [p for p in pods if p.key in st.placements and p.key not in before]
            if qe.attempts > 1 and not bound and not newly_held and not st.stopped:
                st.trace.restore(
                    mark
                )  # a retry that places nothing leaves the first attempt's records
            st.trace.clear_journal()
            st.sched.tie_shift = 0
            qe.tied = st.sched.tied
            left = [p for p in pods if p.key not in st.placements]
            if qe.attempts > 1:
                st.trace.requeues.append(
                    Requeue(
                        entity=str(key),
                        attempt=qe.attempts,
                        at=q.clock,
                        trigger=qe.trigger or "",
                        placed=len(bound),
                        outcome="Success"
                        if bound and not left
                        else ("Partial" if bound else "Unschedulable"),
                    )
                )
            if left and requeue:
                q.failed(qe, st.rejectors)
            if left:
                for h in st.held.values():  # the entities pods held at Permit may have blocked
                    if h.root != key.key and str(key) not in h.failed:
                        h.failed.append(str(key))
            by_key, gone = st.cluster.pod_by_key, st.evicted_placed
            for k in st.victims[victims:]:
                victim = by_key[k]
                self.changes += 1
                where = victim.node_name or (names[gone[k][0]] if k in gone else "")
                q.event(ClusterEvent(POD_DELETE, victim, where))
            for p in bound:
                self.changes += 1
                q.event(ClusterEvent(ASSIGNED_POD_ADD, p, names[st.placements[p.key]]))
            if not key.is_pod:  # the preemptor's retry came while its victims were still there
                self._complete_deletions(q, [d for d in issued if d[0] == key.key])
            settled = getattr(st.observer, "settled", None)  # optional (RunObserver)
            if settled is not None and settled(st):
                st.stopped = True
        if st.deleting and not st.stopped:
            self._complete_deletions(None, list(st.deleting))
        st.rejectors = None

    # ---- v1.35: Permit ------------------------------------------------------------------------
    def _gang_root(self, key: EntityKey) -> bool:
        """A root gang PodGroup: the entities whose pods GangScheduling's Permit makes wait."""
        tree = self.state.cluster.groups
        return not key.is_pod and tree.is_leaf(key.key) and tree.node(key.key).gang

    def _hold_or_forget(self, root: str, checkpoint: int) -> None:
        """A failed attempt of ``root``: v1.35 keeps its pods that passed Reserve assumed, waiting at
        Permit (:func:`gangplan.models.version.permit_hold`): GangScheduling's Permit returns Wait
        with ``SchedulingTimeout()`` while fewer than ``minCount`` are assumed or bound, and the
        scheduler goes on with other pods. The deadline is set at the gang's first Permit (the
        attempt's virtual time) and kept by later ones until it passes. Anything else, and a gang
        that would be held again when nothing was bound or evicted since its last hold began
        (upstream would wait the same 5 minutes over the same cluster, again and again), forgets
        them at once as the pod-group cycle does."""
        st = self.state
        new = [p for p, _ in st.assumed.since(checkpoint)]
        h = st.held.get(root)
        group = st.cluster.groups.node(root)
        quorum = sum(1 for p in group.members if p.bound or p.key in st.placements) >= group.need
        if (
            st.holding != root
            or quorum  # leftovers after the quorum pass Permit at once
            or not new
            or (h is None and self.hold_changes.get(root) == self.changes)
        ):
            st.assumed.rollback(checkpoint)
            return
        assert self.q is not None  # st.holding is only set inside run()
        clock = self.q.clock
        if h is None:
            h = st.held[root] = PermitWait(root, [], clock, clock + PERMIT_TIMEOUT, self.changes)
            self.hold_changes[root] = self.changes
        for p in new:
            h.pods.append(p)
            h.held_at[p.key] = clock

    def _permit_allowed(self, root: str) -> None:
        """The quorum is met (``Permit``: every waiting mate is allowed): the held pods bind with
        the pods that completed it."""
        st = self.state
        h = st.held.pop(root, None)
        if h is None:
            return
        names = st.snap.names
        for p in h.pods:
            st.place(p, st.snap.node_of[p.key])
            st.trace.pop("pod_reasons", p.key)
        clock = self.q.clock if self.q is not None else h.since
        st.trace.permit_holds.append(self._hold_record(h, clock, "quorum", names))

    def _hold_record(self, h: PermitWait, until: float, outcome: str, names) -> PermitHold:
        st = self.state
        return PermitHold(
            entity=h.root,
            pods={p.key: names[st.snap.node_of[p.key]] for p in h.pods},
            since=h.since,
            deadline=h.deadline,
            until=until,
            outcome=outcome,
            failed_meanwhile=list(h.failed),
        )

    def _permit_timeout(self, q: SchedulingQueue) -> None:
        """The earliest Permit deadline: its gang's waiting pods are rejected ("rejected due to
        timeout after waiting <d> at plugin GangScheduling", ``framework/runtime/waiting_pods_map.go``),
        unreserved and forgotten, each forget an ``AssignedPodDelete`` event for every other entity
        (``handleBindingCycleError``, ``schedule_one.go``, release-1.35: the pre-check skips the
        forgotten pod; here the whole gang, see :meth:`SchedulingQueue.event`). The gang stays in
        the unschedulable pool, retried by the events its failed pods' plugins wait for."""
        st, tr, tree = self.state, self.state.trace, self.state.cluster.groups
        h = min(st.held.values(), key=lambda w: (w.deadline, w.since))
        del st.held[h.root]
        q.clock = max(q.clock, h.deadline)
        names = st.snap.names
        tr.permit_holds.append(self._hold_record(h, q.clock, "timeout", names))
        where = {p.key: names[st.snap.node_of[p.key]] for p in h.pods}
        st.assumed.forget(h.pods)
        for p in h.pods:
            waited = _go_duration(h.deadline - h.held_at[p.key])
            tr.set(
                "pod_reasons",
                p.key,
                f"{PERMIT_WAIT}: rejected due to timeout after waiting {waited} at plugin GangScheduling",
            )
        note = (
            f"{len(h.pods)} pods held at Permit from {h.since:g} s ({PERMIT_WAIT}), rejected at "
            f"the timeout ({h.deadline:g} s)"
        )
        for g in tree.leaves(h.root):
            old = tr.group_reasons.get(g)
            tr.set("group_reasons", g, f"{old}; {note}" if old else note)
        entity = tree.node(h.root).entity
        q.permit_rejected(entity)
        for p in h.pods:
            q.event(ClusterEvent(POD_DELETE, p, where[p.key]), exclude=entity)

    def _complete_deletions(
        self, q: SchedulingQueue | None, done: list[tuple[str, list[str]]]
    ) -> None:
        """The deletions ``done`` complete (rule W of issue 39, step e): their victims leave their
        nodes, join ``victims`` and each sends a ``Pod/Delete`` event to the queue."""
        st = self.state
        if not done:
            return
        st.deleting = [d for d in st.deleting if all(d is not x for x in done)]
        by_key, names = st.cluster.pod_by_key, st.snap.names
        evicted = set(st.victims)
        for root, keys in done:
            for pod, i in st.snap.remove_terminating(keys):
                if pod.key in evicted:
                    continue
                evicted.add(pod.key)
                victim = by_key[pod.key]
                st.evicted([victim], {pod.key: i}, root)
                if q is not None:
                    q.event(ClusterEvent(POD_DELETE, victim, names[i]))

    def _queued_pods(self, key: EntityKey) -> list[Pod]:
        """The pending pods the run attempts for an entity."""
        st = self.state
        if key.is_pod:
            return [st.cluster.pod_by_key[key.key]]
        return [p for p in st.cluster.groups.members(key.key) if p.key in st.queued]

    def _attempt(self, key: EntityKey) -> None:
        if key.is_pod:
            self.schedule_single(self.state.cluster.pod_by_key[key.key])
        else:
            self.schedule_root(key.key)

    def _retry(self, key: EntityKey, pods: list[Pod], placed: set[str]) -> None:
        """A later attempt of an entity that failed: its pods' old cycles and reasons go (the new
        attempt gives its own); pods it already placed count as scheduled members (next cycle)."""
        st, tr = self.state, self.state.trace
        # the new attempt's cycles replace the failed pods' (the placed ones keep theirs)
        tr.drop_cycles(tr.mark(), {p.key for p in pods if p.key not in placed})
        for p in pods:
            tr.pop("pod_reasons", p.key)
        if not key.is_pod:
            for g in st.cluster.groups.leaves(key.key):
                tr.pop("group_reasons", g)
        if not placed:
            self._attempt(key)
            return
        queued = st.queued
        st.queued, st.next_cycle = queued - placed, True
        st.wap_nominations = []
        try:
            self._schedule_root(key.key)
        finally:
            st.queued, st.next_cycle = queued, False
        self._settle_nominations(key.key)

    def schedule_single(self, pod: Pod) -> None:
        st = self.state
        r = self.schedule_pod(pod)
        post_filter = None
        if (
            r.node is None
            and st.preemption
            and r.fit_error
            and r.status.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        ):
            node = self.preemption.preempt_single(pod, r)
            if node is not None:
                r.node, r.status, r.fit_error = node, Status(), None
            else:
                post_filter = st.trace.preemption[str(EntityKey.pod(pod.key))].reason
        if r.node is not None:
            st.assumed.assume(pod, r.node)
            st.place(pod, r.node)
        else:
            # FitError.Error() with the PostFilter message: "<filter reasons>. preemption: ..."
            st.trace.set(
                "pod_reasons",
                pod.key,
                pod_failure(r) + (f" preemption: {post_filter}" if post_filter else ""),
            )

    def schedule_root(self, root: str) -> None:
        st = self.state
        st.wap_nominations = []
        self._schedule_root(root)
        if st.preemption and not group_pods_backoff_only(st.cluster.kube_version):
            self._next_cycle(
                root
            )  # v1.36: the leftovers wait in backoffQ behind activeQ (their retry)
        self._settle_nominations(root)

    def _settle_nominations(self, root: str) -> None:
        """After a root's attempt every queued member leaves the nominator (bound, or failed),
        except the pods a successful workload-aware preemption nominated (rule W)."""
        st = self.state
        for p in st.cluster.groups.members(root):
            st.snap.clear_nomination(p)
        for p, i in st.wap_nominations:
            if p.key not in st.placements:
                st.snap.nominate(p, i)
        st.wap_nominations = []

    def _schedule_root(self, root: str) -> None:
        st, tr, tree = self.state, self.state.trace, self.state.cluster.groups
        checkpoint = st.assumed.checkpoint()
        invalid = tree.validation_error(root)
        if invalid is not None:
            self._fail_root(root, f"{SCHEDULER_ERROR}: {invalid}", Code.ERROR)
            return
        attempt = tr.mark()
        stale = stale_affinity_lists(st.cluster.kube_version)
        frozen = st.snap.freeze_affinity_lists() if stale else None
        outer = st.fitted is None
        if outer:
            st.fitted = {}
        try:
            run = self.schedule_group(root)
            fitted = st.fitted
        finally:
            if stale:
                st.snap.affinity_lists = frozen
            if outer:
                st.fitted = None
        if run.status == Code.SUCCESS and run.new == 0:
            run = GroupRun(
                Code.UNSCHEDULABLE,
                0,
                run.reason or "no new pod could be placed (minimum already met by bound pods)",
            )
            self.record_group(root, run)
        if run.status != Code.SUCCESS:
            if run.status == Code.UNSCHEDULABLE and st.holding == root:
                self._hold_or_forget(root, checkpoint)  # v1.35: waiting at Permit
            else:
                st.assumed.rollback(checkpoint)
            reason = run.reason or run.status.label
            wap = (
                st.preemption
                and run.status == Code.UNSCHEDULABLE
                and workload_aware_preemption(st.cluster.kube_version)
            )
            if wap and stale:  # BackupSnapshot rebuilds the lists once, before the simulation
                frozen = st.snap.freeze_affinity_lists()
            by_key = st.cluster.pod_by_key
            before = [(by_key[k], i) for k, i in (fitted or {}).items()]
            try:
                why = self.preemption.preempt_group(root, attempt, before) if wap else reason
            finally:
                if wap and stale:
                    st.snap.affinity_lists = frozen
            waiting = why is None
            if waiting:  # the group waits on its preemption: nothing of it is placed (rule W)
                why = WAITING_ON_PREEMPTION
            elif wap and not wap_nominates_simulation(st.cluster.kube_version):
                # v1.36, a final failure: the pods that fitted lose their nomination (ModeOverride
                # with no node), the others keep theirs (ModeNoop)
                for pod, _ in before:
                    st.snap.nominate(pod, None)
            elif wap:  # newer code: an Unschedulable group's pods have their nominations cleared
                for pod in tree.members(root):
                    if pod.key in st.queued and pod.key in st.snap.nnn:
                        st.snap.nominate(pod, None)
            if why is not None:
                self._fail_root(
                    root, reason if why is reason else f"{reason}; preemption: {why}", run.status
                )
                if why is not reason:
                    for g in tree.leaves(root):
                        if "; preemption: " not in tr.group_reasons.get(g, ""):
                            tr.set(
                                "group_reasons",
                                g,
                                f"{tr.group_reasons.get(g, reason)}; preemption: {why}",
                            )
                return
        for pod, node in st.assumed.since(checkpoint):
            st.place(pod, node)
        if root in st.held:
            self._permit_allowed(root)
        for g in tree.leaves(root):
            reason = tr.group_reasons.get(g) or f"PodGroup {g} was not attempted"
            for p in tree.node(g).members:
                if p.key in st.queued and p.key not in st.placements:
                    tr.set("pod_reasons", p.key, self._dropped_reason(p, g, reason))

    def _next_cycle(self, root: str) -> None:
        """With preemption on, a PodGroup root that succeeded with queued pods left over gets their
        next cycle at once (upstream: the leftovers return to the queue; when that cycle is
        Unschedulable, workload-aware preemption runs for them). When it places
        nothing, every record of it is undone (its preemption trace entry stays)."""
        st, tr = self.state, self.state.trace
        if not st.cluster.groups.is_leaf(root):
            return
        members = st.cluster.groups.node(root).members
        placed = {p.key for p in members if p.key in st.placements}
        left = [p for p in members if p.key in st.queued and p.key not in placed]
        if not placed or not left:
            return
        mark = tr.mark()
        queued = st.queued
        st.queued, st.next_cycle = queued - placed, True
        try:
            self._schedule_root(root)
        finally:
            st.queued, st.next_cycle = queued, False
        now = {p.key for p in left if p.key in st.placements}
        if not now:
            tr.restore(mark)
            return
        tr.drop_cycles(mark, now)
        for k in sorted(now):
            tr.pop("pod_reasons", k)

    def _fail_root(self, root: str, reason: str, code: Code) -> None:
        st, tr, tree = self.state, self.state.trace, self.state.cluster.groups
        for g in tree.leaves(root):
            if g not in tr.group_reasons:
                tr.set("group_reasons", g, reason)
            t = tr.groups.get(g)
            if t is None:
                tr.update_group(g, progression=[], status=code.label, reason=reason)
            elif t.status == Code.SUCCESS.label:
                tr.update_group(g, status=code.label, reason=f"root {root} failed: {reason}")
            for p in tree.node(g).members:
                if p.key in st.queued and p.key not in tr.pod_reasons:
                    tr.set("pod_reasons", p.key, self._dropped_reason(p, g, reason))
        if root not in tr.groups:
            tr.update_group(root, progression=[], status=code.label, reason=reason)

    def _dropped_reason(self, pod: Pod, group: str, reason: str) -> str:
        r = self.state.trace.results.get(pod.key)
        if r is not None and r.node is None:
            return pod_failure(r)
        return f"pod group {group} is unschedulable: {reason}"

    # ---- groups ------------------------------------------------------------------------------
    def schedule_group(self, key: str) -> GroupRun:
        """One node of the hierarchy: through its placements when a PlacementGenerate plugin
        constrains it (without one its single placement is the parent's, which needs no wrapper)."""
        return self.placement.schedule_placements(key)

    def schedule_in_placement(self, key: str) -> GroupRun:
        """The pod-group algorithm (leaf) or the recursive one (composite) in the current placement."""
        if self.state.cluster.groups.is_leaf(key):
            return self.schedule_leaf(key)
        return self.schedule_composite(key)

    def leaf_inputs(self, key: str) -> tuple[list[Pod], int, int]:
        """A leaf group's queued pods in member order, its minCount and its already scheduled
        pods (bound ones, and in a next cycle the ones this run placed)."""
        st = self.state
        group = st.cluster.groups.node(key)
        members = group.members
        pods, drawn = member_order(
            [p for p in members if p.key in st.queued],
            group,
            cluster=st.cluster,
            seed=st.sched.seed,
        )
        if drawn is not None:
            st.trace.update_group(key, member_order=drawn)
        before = sum(1 for p in members if p.bound)
        if st.next_cycle:
            before += sum(1 for p in members if not p.bound and p.key in st.snap.node_of)
        return pods, group.need, before

    def schedule_leaf(self, key: str) -> GroupRun:
        st = self.state
        pods, minimum, before = self.leaf_inputs(key)
        checkpoint = st.assumed.checkpoint()
        failures: list[PodResult] = []

        per_pod = st.preemption and not workload_aware_preemption(st.cluster.kube_version)

        def attempt(pod):
            r = self.schedule_pod(pod)
            if (
                r.node is None
                and per_pod
                and r.fit_error
                and r.status.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
            ):
                # v1.35: the gang pod's own PostFilter (DefaultPreemption); its victims stay
                # evicted even if the gang fails later (they are gone before Permit decides)
                node = self.preemption.preempt_single(pod, r)
                if node is not None:
                    r.node, r.status, r.fit_error = node, Status(), None
            if r.node is None:
                failures.append(r)
                return None if r.status.code == Code.ERROR else (False, 0)
            st.assumed.assume(pod, r.node)
            return True, 1

        # v1.35: every pod of the gang has its own cycle (no PlacementFeasible to stop early)
        exhaust = permit_hold(st.cluster.kube_version)
        status, scheduled, new, progression = until_feasible(
            pods, before, minimum, attempt, st.sched.profile.feasible, exhaust=exhaust
        )
        reason = None
        if status != Code.SUCCESS:
            if not (status == Code.UNSCHEDULABLE and st.holding == key):
                st.assumed.rollback(checkpoint)  # else held at Permit (``_hold_or_forget``)
            new = 0
            reason = leaf_reason(key, minimum, before, scheduled, len(pods), failures)
        run = GroupRun(status, new, reason)
        self.record_group(key, run, progression)
        return run

    def schedule_composite(self, key: str) -> GroupRun:
        st = self.state
        group = st.cluster.groups.node(key)
        minimum = group.need
        children = list(group.children)
        checkpoint = st.assumed.checkpoint()
        failed: list[str] = []

        def attempt(child):
            run = self.schedule_group(child)
            if run.status != Code.SUCCESS and run.status != Code.ERROR:
                failed.append(child)
            return None if run.status == Code.ERROR else (run.status == Code.SUCCESS, run.new)

        status, scheduled, new, progression = until_feasible(
            children, 0, minimum, attempt, st.sched.profile.feasible
        )
        reason = None
        if status != Code.SUCCESS:
            st.assumed.rollback(checkpoint)
            new = 0
            reason = (
                f"CompositePodGroup {key}: {scheduled} of minGroupCount {minimum} child groups schedulable"
                + (f" (failed: {', '.join(failed)})" if failed else "")
            )
            propagate_failure(st, key, reason)
        run = GroupRun(status, new, reason)
        self.record_group(key, run, progression)
        return run

    def record_group(self, key: str, run: GroupRun, progression: list[str] | None = None) -> None:
        record_group(self.state, key, run, progression)

    # ---- pods --------------------------------------------------------------------------------
    def schedule_pod(self, pod: Pod) -> PodResult:
        st = self.state
        if st.observer is not None and not st.stopped and st.observer.before_cycle(st, pod):
            st.stopped = True
        if st.stopped:
            return PodResult(pod=pod, status=Status(Code.ERROR, (STOPPED,)))
        r = st.sched.schedule(pod)
        if st.fitted is not None and r.node is not None:
            st.fitted[pod.key] = r.node
        if st.rejectors is not None:
            st.rejectors.update(r.rejections)
        if pod.key in st.fixed:
            self._apply_fixed(pod, r)
        st.trace.cycle(pod.key, r)
        if st.observer is not None:
            st.observer.after_cycle(st, pod, r)
        return r

    def _apply_fixed(self, pod: Pod, r: PodResult) -> None:
        """Force the pod onto its fixed node when that node passes Filter (a what-if replay);
        a fixed node outside the placement under evaluation is infeasible there."""
        st = self.state
        name = st.fixed[pod.key]
        i = st.snap.index.get(name)
        got = (
            st.sched.explain(pod, [i])[i]
            if i is not None
            else {"feasible": False, "reason": "no such node"}
        )
        if got["feasible"]:
            r.node, r.fit_error, r.status = i, None, Status()
        else:
            r.node = None
            r.fit_error = f"fixed node {name} is infeasible: {got['reason']}"
            r.status = Status(Code.UNSCHEDULABLE, (r.fit_error,))


def until_feasible(
    items, scheduled: int, minimum: int, attempt, feasible=placement_feasible, *, exhaust=False
) -> tuple[Code, int, int, list[str]]:
    """The PlacementFeasible loop shared by leaf groups (items are pods) and composite groups
    (items are child groups), as ``schedule_one_podgroup.go`` does.

    ``attempt(item)`` returns None on an Error, else ``(succeeded, newly placed pods)``. The loop
    stops as soon as minCount (minGroupCount) can no longer be reached, continues past Success to
    place extra items greedily, and turns a final Wait into Unschedulable. Returns the status,
    the scheduled count, the newly placed pods and the status after each item. ``feasible``: the
    profile's PlacementFeasible (``Profile.feasible``; GangScheduling's rule by default).
    ``exhaust``: every item is attempted even once minCount is out of reach (v1.35, whose gang
    pods each have their own cycle and no PlacementFeasible).
    """
    remaining, new = len(items), 0
    status = feasible(remaining, scheduled, minimum)
    progression: list[str] = []
    if status == Code.UNSCHEDULABLE:
        return status, scheduled, new, progression
    for item in items:
        outcome = attempt(item)
        if outcome is None:
            return Code.ERROR, scheduled, new, progression
        ok, added = outcome
        remaining -= 1
        if ok:
            scheduled, new = scheduled + 1, new + added
        status = feasible(remaining, scheduled, minimum)
        progression.append(status.label)
        if status == Code.UNSCHEDULABLE and not exhaust:
            break
    return (Code.UNSCHEDULABLE if status == Code.WAIT else status), scheduled, new, progression


def _go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String()`` for whole seconds (``5m0s``, ``45s``, ``1h0m0s``)."""
    if seconds != int(seconds):
        return f"{seconds:g}s"
    total = int(seconds)
    h, rest = divmod(total, 3600)
    m, sec = divmod(rest, 60)
    if h:
        return f"{h}h{m}m{sec}s"
    if m:
        return f"{m}m{sec}s"
    return f"{sec}s"
