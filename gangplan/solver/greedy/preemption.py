"""Preemption for the greedy engine (opt-in, ``solve_greedy(..., preemption=True)``).

Two PostFilter paths, as kube-scheduler v1.37 runs them:

* **Workload-aware preemption** (KEP-5710) for a root group whose cycle ended
  Unschedulable. Mirrors ``PodGroupEvaluator.selectVictimsOnDomain`` of
  ``pkg/scheduler/framework/preemption/podgrouppreemption.go`` (kubernetes/kubernetes, version
  00f22436be9627b0d57b18d24da0017217f4e5a0) and ``MoreImportantVictim`` /
  ``FilterVictimsWithPDBViolation`` of ``util.go`` (version 1d54bff3606e44a9d5178698816fc8af340e85a9):
  the domain is the whole cluster; every lower-priority victim unit is removed, the pod-group
  algorithm (TAS placements included) runs once on the emptied snapshot, and the units are added
  back one at a time (PDB-violating first, each list in importance order), kept when every
  proposed assignment still passes Filter. The units that do not fit back are the victims.
* **Default preemption** for a single pod (no group), mirroring ``preemption.go``
  (``Evaluator.Preempt``, ``SelectVictimsOnNode``, ``pickOneNodeForPreemption``): the nodes whose
  filter status was Unschedulable are dry-run one by one and the best candidate is picked.

Victim units (``WorkloadPortion``): a pod with no ``disruptionMode: all`` ancestor is its own
unit (rank 1 without a group, 2 inside one); otherwise the unit is keyed by its highest ``all``
ancestor (rank 2 for a PodGroup, 3 for a CompositePodGroup) and holds every pod on a node of every
leaf PodGroup under it. A unit's priority is its root group's, else the pod's own.

The candidates are every pod on a node whose unit priority is strictly lower than the
preemptor's (rule V of issue 39, :func:`victims_below`), the same at every version: workload-aware
preemption lists the pods of every ``NodeInfo`` of the scheduler's snapshot
(``newDomainForWorkloadPreemption`` in ``framework/preemption/podgrouppreemption.go`` @00f22436,
``getCrossNodesVictims`` in ``framework/preemption/types.go`` @06e67ba2) and keeps those with
``victim.Priority() < preemptor.Priority()`` (``isPreemptionAllowed``); default preemption's
``SelectVictimsOnNode`` (``plugins/defaultpreemption/default_preemption.go``, v1.35 onwards) takes
the lower-priority pods of ``nodeInfo.GetPods()``. A ``NodeInfo`` holds the pods bound in the
cluster, the pods the scheduler assumed or bound since (``cacheImpl.AssumePod`` / ``AddPod`` →
``addPod`` → ``NodeInfo.AddPod``, ``pkg/scheduler/backend/cache/cache.go`` @03789157) and pods
being deleted until their deletion completes. So the candidates are: the snapshot's bound pods;
the pending pods the run placed earlier (:attr:`RunState.placements`: bound, or assumed on the
node default preemption nominated); victims still terminating (chosen again, they are not
deleted twice). Every candidate is removed before the simulation (a group whose required
affinity needs a lower-priority pod finds that "preemption cannot help"). A pod the run placed
that a later preemption evicts leaves :attr:`RunState.placements` and the pods the run attempts
(its object is deleted): ``Result.victims`` names it, and its ``PodOutcome`` is not placed, with
the reason "placed on node N, then evicted: a victim of the preemption by E"
(:meth:`RunState.evicted`). Pods assumed by the preemptor's own attempt are not candidates (not
yet kept in :attr:`RunState.placements`); upstream they are in the ``NodeInfo`` too, but they
belong to the preemptor's own group, whose pods share its priority.

Workload-aware preemption is asynchronous (rule W of issue 39, v1.36+,
:func:`~gangplan.models.version.async_workload_preemption`), on the run's virtual clock
(:mod:`.scheduling_queue`):

* (a) A successful preemption places nothing of the group in that cycle: the simulation's
  assignments are thrown away with its trace records (``BackupSnapshot`` / ``restoreFn``); the
  group fails with "pod group is waiting for preemption to complete" and goes back to the queue.
  Its victims get their delete call (``RunState.deleting``) and stay on their nodes as terminating
  pods (``NodeTable.terminating``: requests, labels and affinity terms count; PodTopologySpread
  skips them, as ``countPodsMatchSelector`` skips pods being deleted).
* (b) Nominations: v1.36 the pods that fitted in the failed attempt before preemption, to the node
  they fitted on; v1.37+ the simulation's assignments, and lower-priority nominations on those
  nodes are cleared (:func:`~gangplan.models.version.wap_nominates_simulation`). A nomination is
  held against pods of no higher priority by Filter (``RunFilterPluginsWithNominatedPods``) and
  makes the pod try its nominated node alone first (``evaluateNominatedNode``).
* (c) Every other entity in the queue runs before the group's retry, as the queue orders them
  (v1.36: the group's pods back off and are popped when activeQ drains; v1.37+: any event moves
  the group), and sees the victims still there.
* (d) The group's next attempt still sees the victims. If it fails, v1.36 preempts again over
  what is present now (victims still terminating are candidates; those chosen again are not
  deleted twice); v1.37+ returns Success with the current nominations and chooses no new victim
  while its victims are terminating ("ongoing preemption on nominated nodes").
* (e) The deletion completes right after that next attempt, or as soon as no entity can be tried
  before it (``WorkloadCycle._complete_deletions``): the victims leave their nodes, join
  ``Result.victims`` and send ``Pod/Delete`` events, which retry the group. Upstream the window
  is the victims' grace period (30 s by default) against a backoff of 1-10 s, so the group's
  retry normally falls inside it; the model gives it exactly one retry there.

Simplifications:

* Default preemption (a single pod, and v1.35's gang pods) is still immediate: its victims leave
  the snapshot at once, and the preemptor is assumed on its nominated node (reported with
  ``PodOutcome.nominated``), seen as such by every later entity, and so a candidate victim of a
  later higher-priority preemptor (rule V) where upstream it is only nominated until its victims
  are gone (``test_v136_leftovers_of_a_placed_gang_wait_behind_activeq``: same placements, the
  nominated pod reported as a victim).
* A PodGroup root that succeeded with queued pods left over (a basic group, or extras past
  minCount) gets the leftovers' next cycle at once (not in v1.36, whose leftovers wait in
  backoffQ), so that workload-aware preemption can run for them; when that cycle places nothing
  its records are undone, except its ``trace["preemption"]`` entry and the advanced scan start
  index. CompositePodGroup roots do not get this second cycle.
* A single pod that preempts keeps its failing Filter evidence in ``trace["pods"]``; its
  ``chosen`` is the nominated node.
* Nominations a pod's own cycle clears: gangplan takes every pod of a group out of the nominator
  after its attempt, except those a successful preemption nominates; when the group finally fails,
  v1.36 clears the nominations of the pods that fitted (the others keep theirs), v1.37+ those the
  run set.
* Candidate nodes of default preemption are scanned from offset 0 in snapshot position order
  (upstream starts at a random offset), and the final tie goes to the lowest node position
  (upstream: the first of a Go map, effectively random).
* A single pod whose PreFilter failed gets no candidate node (upstream may still try every node
  when that status is only Unschedulable).
* "Terminating because of scheduler preemption" (the ongoing-preemption check) is read as
  "terminating" (the snapshot has no DisruptionTarget condition): a preemptor whose nominated node
  holds a lower-priority terminating pod is not eligible, as in ``preemptorEligibleToPreemptOthers``
  (single pods; groups from v1.37, v1.36 has no such check for groups).
* Reprieve re-runs PreFilter on the current snapshot instead of updating the cycle states with the
  ``AddPod`` / ``RemovePod`` extensions (the same state, computed from scratch). Reserve plugins
  are modelled by assuming the preemptor pod.

Trace (``Result.trace.preemption[entity]``, only with ``preemption=True``:
:class:`~gangplan.models.trace.WorkloadPreemption` / :class:`~gangplan.models.trace.PodPreemption`)::

    {"kind": "workload" | "pod", "priority": int, "policy": str,
     "status": "Success" | "Unschedulable" | "UnschedulableAndUnresolvable", "reason": str | null,
     "candidates": [unit keys, importance order], "order": [violating units, then the others],
     "violating": {unit: violating pods}, "reprieved": [unit keys], "victims": [pod keys],
     "pdbViolations": int, "nominated": {pod: node},
     # default preemption only:
     # ("order" / "violating" / "reprieved" stay empty: per node, see "nodes")
     "nodes": {node: {"victims": [pod keys], "pdbViolations": int} | "not a candidate: ..."},
     "chosen": node | null}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from gangplan.models.groups import EntityKey, VictimUnit
from gangplan.models.objects import NEVER, Pod
from gangplan.models.preemption import pick_key
from gangplan.models.preemption import pick_one_node as choose_node
from gangplan.models.trace import NodeVictims, PodPreemption, WorkloadPreemption
from gangplan.models.version import (
    placement_groups_preempt,
    rerun_reprieve,
    wap_nominates_simulation,
    workload_aware_preemption,
)
from gangplan.solver.greedy.framework import (
    Code,
    CycleState,
    Diagnosis,
    Status,
    absent_nodes_reason,
    fit_error_message,
    fit_error_text,
)
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.victims import (  # noqa: F401 (victim_units: re-exported)
    classify_pdb,
    importance,
    start_time,
    victim_units,
    victims_below,
)

if TYPE_CHECKING:
    from gangplan.solver.greedy.placement_cycle import GroupRun
    from gangplan.solver.greedy.schedule_one import PodResult
    from gangplan.solver.greedy.state import Mark, RunState

MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100
NOT_HELPFUL = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("Preemption is not helpful for scheduling",)
)
NO_VICTIMS = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("No preemption victims found for incoming pod",)
)
"""Per-node statuses of ``Evaluator.Preempt``'s FitError (``preemption.go``): a node whose Filter
status was UnschedulableAndUnresolvable, and a candidate node without lower-priority pods
(``SelectVictimsOnNode``)."""
NODE_LOCAL_FILTERS = frozenset(
    {
        names.NODE_UNSCHEDULABLE,
        names.NODE_NAME,
        names.TAINT_TOLERATION,
        names.NODE_AFFINITY,
        names.NODE_PORTS,
        names.NODE_RESOURCES_FIT,
    }
)
"""Filter plugins whose PreFilter reads only the pod and whose Filter verdict on node ``i`` reads
only the pod, the node object and what is on node ``i`` (its pods, requests, host ports): a pod
added to or removed from another node cannot change it."""
CROSS_NODE_FILTERS = frozenset({names.INTER_POD_AFFINITY, names.POD_TOPOLOGY_SPREAD})
"""Filter plugins that count pods on other nodes, but only for a pod with required pod
(anti-)affinity terms or DoNotSchedule spread constraints, and (InterPodAffinity) for existing
pods with required anti-affinity terms: see :meth:`Preemption._local_reprieve`."""


class Preemption:
    """PostFilter on a run's state, a collaborator of
    :class:`~gangplan.solver.greedy.podgroup.WorkloadCycle`: ``schedule_group(root)`` runs the
    pod-group algorithm (placements included) of a root group on the current node state."""

    def __init__(self, state: RunState, schedule_group: Callable[[str], GroupRun]) -> None:
        self.state = state
        self.schedule_group = schedule_group
        self._keys: dict[int, tuple[VictimUnit, tuple]] = {}

    def importance(self, u: VictimUnit) -> tuple:
        """:func:`importance` of ``u``, computed once per unit object (a unit is immutable, and
        the run's units are built once, see :func:`victim_units`; the entry holds the unit, so
        its id is not reused while cached)."""
        got = self._keys.get(id(u))
        if got is None or got[0] is not u:
            got = self._keys[id(u)] = (u, importance(u, self.state.cluster.kube_version))
        return got[1]

    # ---- shared ------------------------------------------------------------------------------
    def fits(self, pod: Pod, i: int) -> bool:
        """PreFilter on the current snapshot, then Filter with nominated pods on node ``i``."""
        return self.fit_status(pod, i) is None

    def fit_status(self, pod: Pod, i: int) -> Status | None:
        """None when ``pod`` passes PreFilter and Filter (with nominated pods) on node ``i``, else
        the failing status (``RunFilterPluginsWithNominatedPods``)."""
        sched = self.state.sched
        cs = CycleState()
        pre = sched.pre_filter(cs, pod)
        if pre is not None:
            return pre
        if cs.node_subset is not None and i not in cs.node_subset:
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (absent_nodes_reason(cs.subset_plugins),)
            )
        ok, failed_by = sched.run_filters(cs, pod, np.array([i], dtype=np.int64))
        if ok[0]:
            return None
        return next(
            iter(
                sched.node_statuses(
                    cs, pod, {k: np.array([i]) for k, v in failed_by.items() if len(v)}
                ).values()
            )
        )

    def _remove(self, unit: VictimUnit) -> None:
        for p in unit.pods:
            self.state.snap.forget(p)

    def _home(self, p: Pod) -> int:
        """The node a candidate victim is on (also while a dry run has it removed): a bound pod's
        ``spec.nodeName``, else the node the run placed it on (rule V)."""
        if p.bound:
            return self.state.snap.index[p.node_name]  # type: ignore[index]
        return self.state.placements[p.key]

    def _restore(self, unit: VictimUnit) -> None:
        snap = self.state.snap
        for p in unit.pods:
            snap.assume(p, self._home(p))

    def _ongoing(self, pods: list[Pod], priority: int) -> bool:
        """A lower-priority terminating pod on a preemptor pod's nominated node."""
        snap, tree = self.state.snap, self.state.cluster.groups
        for pod in pods:
            i = snap.index.get(pod.nominated_node_name or "")
            if i is not None and any(
                q.terminating and tree.unit_priority(q) < priority for q in snap.pods_on[i]
            ):
                return True
        return False

    def _actuate(
        self, victims: list[VictimUnit], nominated: list[tuple[Pod, int]], priority: int, by: str
    ) -> None:
        """Victims leave the snapshot (already removed by the caller; those the run placed leave
        its placements, :meth:`RunState.evicted`); the preemptor's pods (entity ``by``) are
        nominated, and lower-priority nominations on those nodes are cleared."""
        st = self.state
        pods = [p for u in victims for p in u.pods]
        st.evicted(pods, {p.key: self._home(p) for p in pods}, by)
        for pod, i in nominated:
            st.nominated.add(pod.key)
            for k, q in list(st.snap.nominated.get(i, {}).items()):
                if q.priority < priority:
                    st.snap.nominated[i].pop(k)
            if i in st.snap.nominated and not st.snap.nominated[i]:
                del st.snap.nominated[i]

    # ---- workload-aware preemption -----------------------------------------------------------
    def preempt_group(
        self, root: str, attempt: Mark, fitted: list[tuple[Pod, int]] | None = None
    ) -> str | None:
        """WAP for ``root`` after its cycle (recorded since ``attempt``) failed and was reverted.
        Returns None when preemption succeeded, else the reason.

        On success nothing of the group is placed (rule W of issue 39,
        :func:`~gangplan.models.version.async_workload_preemption`): the victims get their delete
        call (:attr:`RunState.deleting`) and stay on their nodes as terminating pods, and the
        group's pods are nominated (:attr:`RunState.wap_nominations`): v1.36 to the nodes they
        fitted on in the failed attempt (``fitted``), v1.37+ to the simulation's nodes."""
        st = self.state
        tree = st.cluster.groups
        group = tree.node(root)
        version = st.cluster.kube_version
        simulated = wap_nominates_simulation(version)
        pods = [p for p in tree.members(root) if p.key in st.queued]
        policy = tree.preemption_policy(group.entity)
        if simulated and self._ineligible(root) is None and any(r == root for r, _ in st.deleting):
            # PodGroupEvaluator.Preempt: Success with the current nominations, no new victims
            # (the trace keeps the preemption that chose the victims)
            snap = st.snap
            current = [(p, snap.nominated_node(p)) for p in pods]
            st.wap_nominations = [(p, i) for p, i in current if i is not None]
            return None
        trace = WorkloadPreemption(
            priority=group.priority, policy=policy, status=Code.UNSCHEDULABLE.label
        )
        st.trace.preemption[root] = trace
        ineligible = self._ineligible(root)
        if ineligible is not None:
            return _fail(trace, ineligible)
        if simulated and self._ongoing(pods, group.priority):
            return _fail(trace, "not eligible due to a terminating pod on the nominated node.")
        units = sorted(victims_below(st, group.priority), key=self.importance)
        trace.candidates = [str(u.key) for u in units]
        if not units:
            return _fail(
                trace,
                "No preemption victims found for incoming preemptor",
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            )
        # The failed attempt's pod cycles leave the order (its group records stay while this
        # attempt runs); they come back when preemption cannot help.
        failed_cycles = st.trace.cut_order(attempt)
        retry = st.trace.mark()
        st.snap.forget_all([p for u in units for p in u.pods])
        checkpoint = st.assumed.checkpoint()
        tied_before, st.sched.tied = st.sched.tied, False  # the simulation's own ties, below
        run = self.schedule_group(root)
        if run.status != Code.SUCCESS or run.new == 0:
            st.sched.tied = tied_before or st.sched.tied
            st.assumed.rollback(checkpoint)
            st.trace.restore(retry)
            st.trace.extend_order(failed_cycles)
            snap = st.snap
            snap.assume_all([(p, self._home(p)) for u in units for p in u.pods])
            return _fail(trace, f"preemption cannot help: {run.reason or run.status.label}")
        assignments = st.assumed.since(checkpoint)
        st.assumed.rollback(checkpoint)
        if rerun_reprieve(version):
            evicted, assignments = self._reprieve_rerun(root, units, assignments, trace)
        else:
            evicted = self._reprieve(units, assignments, trace)
        trace.simulation_tied = st.sched.tied
        st.sched.tied = tied_before or st.sched.tied
        # BackupSnapshot's restoreFn: the simulation leaves nothing behind; the victims stay on
        # their nodes, terminating, until their deletion completes.
        st.trace.restore(retry)
        st.trace.extend_order(failed_cycles)
        for u in evicted:
            self._restore(u)
        snap = st.snap
        issued = {k for _, keys in st.deleting for k in keys}
        new = [p for u in evicted for p in u.pods if p.key not in issued]
        snap.mark_terminating(new)
        if new:
            st.deleting.append((root, [p.key for p in new]))
        nominations = list(assignments) if simulated else list(fitted or [])
        if simulated:
            for _, i in nominations:  # the nominator drops lower-priority nominations there
                for k, q in list(snap.nominated.get(i, {}).items()):
                    if q.priority < group.priority:
                        snap.clear_nomination(q)
                        snap.nnn[k] = None
        st.wap_nominations = nominations
        trace.status = Code.SUCCESS.label
        trace.nominated = {p.key: snap.names[i] for p, i in nominations}
        return None

    def _ineligible(self, root: str) -> str | None:
        """Why workload-aware preemption never tries ``root`` (None: it may)."""
        st = self.state
        tree = st.cluster.groups
        group = tree.node(root)
        if not placement_groups_preempt(st.cluster.kube_version) and any(
            tree.node(g).topology_key for g in tree.leaves(root)
        ):
            # v1.36 runWorkloadAwarePreemption (schedule_one_podgroup.go, kubernetes#137606;
            # lifted in v1.37 by kubernetes#140683)
            return "workload aware preemption is not supported for pod groups with scheduling constraints"
        if tree.preemption_policy(group.entity) == NEVER:
            return "not eligible due to preemptionPolicy=Never."
        return None

    def failure_binds_nothing(self, root: str) -> bool:
        """True when a failed cycle of ``root`` now cannot end with any pod placed: preemption is
        off, runs per pod only inside pod cycles (before v1.36, so not here), or workload-aware
        preemption would give up before running the group again (ineligible, or no pod on a node
        below the group's priority, :func:`victims_below`). Neither the node table's bound pods nor
        the run's kept placements change while the group's cycle runs (its own pods are assumed
        and forgotten), so this holds for the whole attempt."""
        st = self.state
        if not st.preemption:
            return True
        if not workload_aware_preemption(st.cluster.kube_version):
            return False
        return self._ineligible(root) is not None or not victims_below(
            st, st.cluster.groups.node(root).priority
        )

    def _reprieve(
        self, units: list[VictimUnit], assignments: list[tuple[Pod, int]], trace: WorkloadPreemption
    ) -> list[VictimUnit]:
        """Add units back (violating first, importance order); keep those with which every
        assignment still passes Filter. Returns the evicted units, in importance order.

        When :meth:`_local_reprieve` holds, a unit's check re-runs Filter only for the assignments
        on the unit's nodes (the answer is the same, see there); else every assignment is checked,
        as upstream does. A unit with no assignment on its nodes is then kept without a check, and
        its pods go back in one batch just before the next check (or the end): every check, and
        the final state, see the same pods in the same order as one restore per unit gives."""
        bad, good, counts = classify_pdb(units, self.state.cluster.pdbs)
        trace.order = [str(u.key) for u in bad + good]
        trace.violating = dict(counts)
        evicted: list[VictimUnit] = []
        local = self._local_reprieve(assignments)
        snap = self.state.snap
        pending: list[tuple[Pod, int]] = []
        for u in bad + good:
            if local and not any(p.affinity.pod_anti_affinity_required for p in u.pods):
                on = {self._home(p) for p in u.pods}
                todo = [a for a in assignments if a[1] in on]
                if not todo:
                    pending.extend((p, self._home(p)) for p in u.pods)
                    trace.reprieved.append(str(u.key))
                    continue
            else:
                todo = assignments
            snap.assume_all(pending)
            pending.clear()
            self._restore(u)
            if self._assignments_fit(todo):
                trace.reprieved.append(str(u.key))
                continue
            self._remove(u)
            evicted.append(u)
            trace.pdb_violations += counts.get(str(u.key), 0)
        snap.assume_all(pending)
        evicted.sort(key=self.importance)
        trace.victims = [p.key for u in evicted for p in u.pods]
        return evicted

    def _reprieve_rerun(
        self,
        root: str,
        units: list[VictimUnit],
        assignments: list[tuple[Pod, int]],
        trace: WorkloadPreemption,
    ) -> tuple[list[VictimUnit], list[tuple[Pod, int]]]:
        """v1.36's reprieve (``PodGroupEvaluator``, ``framework/preemption/podgrouppreemption.go``
        release-1.36): add a unit back (violating units first, each part in importance order) and
        run the whole pod-group algorithm again, so the group's pods may move; the unit is spared
        when the group still succeeds, with at least as many pods as the best run so far. Returns
        the evicted units (importance order) and the assignments of the last successful run."""
        st = self.state
        bad, good, counts = classify_pdb(units, st.cluster.pdbs)
        trace.order = [str(u.key) for u in bad + good]
        trace.violating = dict(counts)
        evicted: list[VictimUnit] = []
        best = len(assignments)
        for u in bad + good:
            self._restore(u)
            mark = st.trace.mark()
            checkpoint = st.assumed.checkpoint()
            run = self.schedule_group(root)
            got = st.assumed.since(checkpoint)
            st.assumed.rollback(checkpoint)
            if run.status == Code.SUCCESS and run.new > 0 and len(got) >= best:
                st.trace.cut_order(mark)
                trace.reprieved.append(str(u.key))
                assignments, best = got, len(got)
                continue
            st.trace.restore(mark)
            self._remove(u)
            evicted.append(u)
            trace.pdb_violations += counts.get(str(u.key), 0)
        evicted.sort(key=self.importance)
        trace.victims = [p.key for u in evicted for p in u.pods]
        return evicted, assignments

    def _local_reprieve(self, assignments: list[tuple[Pod, int]]) -> bool:
        """Whether a reprieve check may skip the assignments away from the restored unit.

        Claim: let S be a node state in which every assignment passes Filter (each with the
        earlier ones assumed, as :meth:`_assignments_fit` checks), and u a unit without required
        anti-affinity terms whose pods sit on the nodes N. If every Filter plugin is node-local
        (:data:`NODE_LOCAL_FILTERS`) or cross-node (:data:`CROSS_NODE_FILTERS`), and no assigned pod
        has required pod (anti-)affinity terms or DoNotSchedule spread constraints, then all
        assignments pass in S + u exactly when those on N pass (with the earlier ones on N assumed).

        Why: for such a pod PodTopologySpread skips, and InterPodAffinity reads only the existing
        pods with required anti-affinity terms (neither u's nor the other assignments' pods are
        among them); the node-local plugins read node ``i`` only (nominated pods on ``i`` included,
        and ``snap.nominated`` does not change during the reprieve). So an assignment on a node
        outside N sees in S + u what it saw in S, where it passed; one on a node of N sees the
        same as when only the assignments on N are assumed. The state S always exists: it is the
        emptied snapshot checked here up front (falling back to the full check when that fails),
        and each step either keeps u (all pass in S + u, the next S) or removes u again (back to
        S). Upstream's loop therefore keeps and evicts the very same units; only Filter calls whose
        answer is known are skipped."""
        filters = {pl.name for pl in self.state.sched.profile.filters}
        if not filters <= NODE_LOCAL_FILTERS | CROSS_NODE_FILTERS:
            return False
        for pod, _ in assignments:
            aff = pod.affinity
            if (
                aff.pod_affinity_required
                or aff.pod_anti_affinity_required
                or any(c.when_unsatisfiable == "DoNotSchedule" for c in pod.topology_spread)
            ):
                return False
        return self._assignments_fit(assignments)

    def _assignments_fit(self, assignments: list[tuple[Pod, int]]) -> bool:
        snap = self.state.snap
        added: list[Pod] = []
        try:
            for pod, i in assignments:
                if not self.fits(pod, i):
                    return False
                snap.assume(pod, i)
                added.append(pod)
            return True
        finally:
            for pod in reversed(added):
                snap.forget(pod)

    # ---- default (single-pod) preemption -----------------------------------------------------
    def preempt_single(self, pod: Pod, r: PodResult) -> int | None:
        """Default preemption for a single pod whose cycle failed: the chosen node (the pod is
        assumed there and the victims removed), or None."""
        st = self.state
        snap = st.snap
        trace = PodPreemption(
            priority=pod.priority, policy=pod.preemption_policy, status=Code.UNSCHEDULABLE.label
        )
        st.trace.preemption[str(EntityKey.pod(pod.key))] = trace
        if pod.preemption_policy == NEVER:
            _fail(trace, "not eligible due to preemptionPolicy=Never.")
            return None
        if self._ongoing([pod], pod.priority):
            _fail(trace, "not eligible due to a terminating pod on the nominated node.")
            return None
        potential = _potential_nodes(r)
        if not potential:
            _fail(trace, _no_candidates_error(snap.n, 0), Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
            return None
        units = sorted(victims_below(st, pod.priority), key=self.importance)
        trace.candidates = [str(u.key) for u in units]
        if not units:  # SelectVictimsOnNode finds no lower-priority pod on any potential node
            names = snap.names
            for i in potential:
                trace.nodes[names[i]] = NO_LOWER_PRIORITY
            _fail(trace, _no_candidates_error(snap.n, len(potential)))
            return None
        # Per node, why preemption cannot help there (the FitError of Evaluator.Preempt).
        helps = set(potential)
        statuses = {snap.names[i]: NOT_HELPFUL for i in range(snap.n) if i not in helps}
        want = min(
            max(
                len(potential) * MIN_CANDIDATE_NODES_PERCENTAGE // 100, MIN_CANDIDATE_NODES_ABSOLUTE
            ),
            len(potential),
        )
        candidates: list[tuple[int, list[VictimUnit], int]] = []
        non_violating = 0
        for i in potential:
            got = self._dry_run(pod, i, units, trace, statuses)
            if got is not None:
                candidates.append((i, *got))
                non_violating += got[1] == 0
                if non_violating > 0 and len(candidates) >= want:
                    break
        if not candidates:
            _fail(trace, fit_error_message(snap.n, Diagnosis(node_to_status=statuses)))
            return None
        node, evicted, violations = pick_one_node(candidates)
        for u in evicted:
            self._remove(u)
        self._actuate(evicted, [(pod, node)], pod.priority, str(EntityKey.pod(pod.key)))
        trace.status, trace.chosen = Code.SUCCESS.label, snap.names[node]
        trace.victims, trace.pdb_violations = [p.key for u in evicted for p in u.pods], violations
        trace.nominated = {pod.key: snap.names[node]}
        return node

    def _dry_run(
        self,
        pod: Pod,
        i: int,
        units: list[VictimUnit],
        trace: PodPreemption,
        statuses: dict[str, Status],
    ) -> tuple[list[VictimUnit], int] | None:
        """``SelectVictimsOnNode``: the units to evict on node ``i`` and the PDB violations, or
        None when the pod does not fit even with every lower-priority unit there removed (the
        node's status goes to ``statuses``)."""
        snap = self.state.snap
        name = snap.names[i]
        here = sorted(
            (u for u in units if any(snap.node_of.get(p.key) == i for p in u.pods)),
            key=self.importance,
        )
        if not here:
            trace.nodes[name] = NO_LOWER_PRIORITY
            statuses[name] = NO_VICTIMS
            return None
        for u in here:
            self._remove(u)
        try:
            st = self.fit_status(pod, i)
            if st is not None:
                trace.nodes[name] = (
                    "not a candidate: the pod does not fit even without lower-priority pods"
                )
                statuses[name] = st
                return None
            bad, good, counts = classify_pdb(here, self.state.cluster.pdbs)
            evicted, violations = [], 0
            kept: list[VictimUnit] = []
            for u in bad + good:
                self._restore(u)
                if self.fits(pod, i):
                    kept.append(u)
                    continue
                self._remove(u)
                evicted.append(u)
                violations += counts.get(str(u.key), 0)
            for u in kept:
                self._remove(u)
        finally:
            for u in here:
                self._restore(u)
        evicted.sort(key=self.importance)
        trace.nodes[name] = NodeVictims(
            victims=[p.key for u in evicted for p in u.pods], pdb_violations=violations
        )
        return evicted, violations


def _fail(
    trace: WorkloadPreemption | PodPreemption, reason: str, code: Code = Code.UNSCHEDULABLE
) -> str:
    trace.status, trace.reason = code.label, reason
    return reason


NO_LOWER_PRIORITY = "not a candidate: no lower-priority pods on the node"


def _no_candidates_error(n: int, potential: int) -> str:
    """``Evaluator.Preempt``'s FitError when no node yields a candidate because none has a
    lower-priority pod: ``potential`` nodes with NO_VICTIMS, the rest NOT_HELPFUL (the text
    :func:`fit_error_message` gives over those statuses, from two counts)."""
    hist = Counter()
    for st, k in ((NO_VICTIMS, potential), (NOT_HELPFUL, n - potential)):
        for reason in st.reasons:
            hist[reason] += k
    return fit_error_text(n, hist)


def _potential_nodes(r) -> list[int]:
    """``nodesWherePreemptionMightHelp``: the failing nodes whose Filter status is Unschedulable
    (not UnschedulableAndUnresolvable), in index order. Read from the cycle's vectorised reasons
    (:attr:`PodResult.resolvable`) without building a status per node (10,000 nodes: the statuses
    were 80 % of a run whose single pods could preempt nobody); VERIFY compares with the statuses."""
    from gangplan.solver.greedy import placement_fast

    if r.resolvable is not None:
        got = r.resolvable.tolist()
        if placement_fast.VERIFY:
            want = sorted(i for i, s in r.node_statuses.items() if s.code == Code.UNSCHEDULABLE)
            assert got == want, (r.pod.key, got[:10], want[:10])
        return got
    return sorted(i for i, s in r.node_statuses.items() if s.code == Code.UNSCHEDULABLE)


def pick_one_node(
    candidates: list[tuple[int, list[VictimUnit], int]],
) -> tuple[int, list[VictimUnit], int]:
    """``pickOneNodeForPreemption`` over (node position, evicted units, PDB violations) in node
    order (:func:`gangplan.models.preemption.pick_one_node`, the one implementation the diff
    explains too)."""
    return choose_node(
        candidates,
        key=lambda c: pick_key([(u.priority, start_time(p)) for u in c[1] for p in u.pods], c[2]),
    )


__all__ = [
    "Preemption",
    "VictimUnit",
    "classify_pdb",
    "importance",
    "pick_one_node",
    "victim_units",
]
