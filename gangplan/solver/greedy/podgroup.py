"""The workload scheduling cycle: one queue entity (a single pod or a root group) at a time.

Mirrors ``scheduleOnePodGroup`` (``pkg/scheduler/schedule_one_podgroup.go``, version id
55585698688), the pod-group algorithm (id 61488082464) and GangScheduling's
``PlacementFeasible`` (``plugins/gangscheduling/gangscheduling.go``, id 55730559477), as written
down in spec §1.4-1.6 and §4.2 (kubernetes/kubernetes v1.37-era):

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

* Placements (KEP-5732, spec §3.3 and §4.2): a group with ``schedulingConstraints.topology``
  (PodGroup or CompositePodGroup) runs the algorithm above once per topology domain inside its
  parent's placement and keeps the best feasible one: :mod:`.placement_cycle` (the algorithm) and
  :mod:`.placement` (generation and scoring). Children of a CompositePodGroup are evaluated inside
  the parent placement under evaluation.

* Preemption (PostFilter) is opt-in (``preemption=True``): workload-aware preemption for a root
  group that ends Unschedulable, default preemption for a single pod (:mod:`.preemption`).

Not reproduced: ``PercentageOfPlacementsToScore`` (not found in upstream code either).
"""

from __future__ import annotations

import numpy as np

from gangplan.models.cluster import Cluster
from gangplan.models.groups import EntityKey
from gangplan.models.objects import Pod
from gangplan.solver.greedy.framework import Code, Status
from gangplan.solver.greedy.placement_cycle import SCHEDULER_ERROR, GroupRun, PlacementAlgorithm
from gangplan.solver.greedy.plugins.gangscheduling import placement_feasible
from gangplan.solver.greedy.preemption import Preemption
from gangplan.solver.greedy.queue import Entity, member_order, queued_pods
from gangplan.solver.greedy.schedule_one import PodResult, PodScheduler
from gangplan.solver.greedy.snapshot import NodeTable


class StopBefore(Exception):
    """Raised to stop a replay just before a given pod's cycle (see ``pod_scores_at_step``)."""

    def __init__(self, pod: Pod, placement: np.ndarray | None = None, placement_name: str | None = None) -> None:
        super().__init__(pod.key)
        self.pod = pod
        self.placement = placement
        """The placement under evaluation when the run stopped (placement wrappers unwind)."""
        self.placement_name = placement_name


class WorkloadCycle(PlacementAlgorithm, Preemption):
    """Runs every entity in queue order against one :class:`NodeTable`, recording the trace."""

    def __init__(self, cluster: Cluster, snap: NodeTable, scheduler: PodScheduler, *, fixed: dict[str, str] | None = None, stop_before: str | None = None, stop_node: int | None = None, preemption: bool = False) -> None:
        self.cluster = cluster
        self.preemption = preemption
        """Run PostFilter (preemption) for entities that end Unschedulable."""
        self.victims: list[str] = []
        self.nominated: set[str] = set()
        self.preemption_trace: dict[str, dict] = {}
        self._next_cycle_running = False
        """True while a root's leftover pods get their next cycle (pods placed in this run count
        as scheduled members)."""
        self.snap = snap
        self.sched = scheduler
        self.fixed = dict(fixed or {})
        self.stop_before = stop_before
        self.stop_node = stop_node
        """With ``stop_before``: stop only in a placement holding this node position."""
        self.queued = {p.key for p in queued_pods(cluster)}
        self.assumed: list[Pod] = []
        self.placements: dict[str, int] = {}
        self.results: dict[str, PodResult] = {}
        self.order: list[str] = []
        self.pod_reasons: dict[str, str] = {}
        self.group_reasons: dict[str, str] = {}
        self.group_trace: dict[str, dict] = {}
        self.entity_order: list[str] = []

    # ---- entities ----------------------------------------------------------------------------
    def run(self, queue: list[Entity]) -> None:
        for entity in queue:
            self.entity_order.append(str(entity.key))
            if entity.key.is_pod:
                self.schedule_single(self.cluster.pod_by_key[entity.key.key])
            else:
                self.schedule_root(entity.key.key)

    def schedule_single(self, pod: Pod) -> None:
        r = self.schedule_pod(pod)
        post_filter = None
        if r.node is None and self.preemption and r.fit_error and r.status.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
            node = self.preempt_single(pod, r)
            if node is not None:
                r = self._nominated_result(r, node)
            else:
                post_filter = self.preemption_trace[str(EntityKey.pod(pod.key))]["reason"]
        if r.node is not None:
            self.assume(pod, r.node)
            self.placements[pod.key] = r.node
        else:
            # FitError.Error() with the PostFilter message: "<filter reasons>. preemption: ..."
            self.pod_reasons[pod.key] = _pod_failure(r) + (f" preemption: {post_filter}" if post_filter else "")

    def schedule_root(self, root: str) -> None:
        self._schedule_root(root)
        if self.preemption:
            self._next_cycle(root)
        # Every queued member now leaves the nominator: bound, or failed with its NNN cleared.
        for p in self.cluster.groups.members(root):
            self.snap.clear_nomination(p)

    def _schedule_root(self, root: str) -> None:
        checkpoint = len(self.assumed)
        invalid = self.cluster.groups.validation_error(root)
        if invalid is not None:
            self._fail_root(root, f"{SCHEDULER_ERROR}: {invalid}", Code.ERROR)
            return
        order_mark = len(self.order)
        run = self.schedule_group(root)
        if run.status == Code.SUCCESS and run.new == 0:
            run = GroupRun(Code.UNSCHEDULABLE, 0, run.reason or "no new pod could be placed (minimum already met by bound pods)")
            self._set_trace(root, run)
        if run.status != Code.SUCCESS:
            self.revert(checkpoint)
            reason = run.reason or run.status.label
            why = self.preempt_group(root, order_mark) if self.preemption and run.status == Code.UNSCHEDULABLE else reason
            if why is not None:  # None: workload-aware preemption nominated the group's pods
                self._fail_root(root, reason if why is reason else f"{reason}; preemption: {why}", run.status)
                if why is not reason:
                    for g in self.cluster.groups.leaves(root):
                        if "; preemption: " not in self.group_reasons.get(g, ""):
                            self.group_reasons[g] = f"{self.group_reasons.get(g, reason)}; preemption: {why}"
                return
        for pod in self.assumed[checkpoint:]:
            self.placements[pod.key] = self.snap.node_of[pod.key]
        for g in self.cluster.groups.leaves(root):
            reason = self.group_reasons.get(g) or f"PodGroup {g} was not attempted"
            for p in self.cluster.groups.node(g).members:
                if p.key in self.queued and p.key not in self.placements:
                    self.pod_reasons[p.key] = self._dropped_reason(p, g, reason)

    def _next_cycle(self, root: str) -> None:
        """With preemption on, a PodGroup root that succeeded with queued pods left over gets their
        next cycle at once (upstream: the leftovers return to the queue; when that cycle is
        Unschedulable, workload-aware preemption runs for them, spec §6.1 case 9). When it places
        nothing, every record of it is undone (its preemption trace entry stays)."""
        if not self.cluster.groups.is_leaf(root):
            return
        members = self.cluster.groups.node(root).members
        placed = {p.key for p in members if p.key in self.placements}
        left = [p for p in members if p.key in self.queued and p.key not in placed and not p.terminating]
        if not placed or not left:
            return
        mark = len(self.order)
        saved = (self._trace_state(root), {p.key: self.results.get(p.key) for p in left}, {p.key: self.pod_reasons.get(p.key) for p in left})
        queued = self.queued
        self.queued, self._next_cycle_running = queued - placed, True
        try:
            self._schedule_root(root)
        finally:
            self.queued, self._next_cycle_running = queued, False
        now = {p.key for p in left if p.key in self.placements}
        if now:
            self.order[:mark] = [k for k in self.order[:mark] if k not in now]
            for k in now:
                self.pod_reasons.pop(k, None)
            return
        del self.order[mark:]
        self._restore_trace_state(saved[0])
        for k, r in saved[1].items():
            if r is None:
                self.results.pop(k, None)
            else:
                self.results[k] = r
        for k, why in saved[2].items():
            if why is None:
                self.pod_reasons.pop(k, None)
            else:
                self.pod_reasons[k] = why

    def _fail_root(self, root: str, reason: str, code: Code) -> None:
        for g in self.cluster.groups.leaves(root):
            self.group_reasons.setdefault(g, reason)
            t = self.group_trace.setdefault(g, {"progression": [], "status": code.label, "reason": reason})
            if t["status"] == Code.SUCCESS.label:
                t.update(status=code.label, reason=f"root {root} failed: {reason}")
            for p in self.cluster.groups.node(g).members:
                if p.key in self.queued and p.key not in self.pod_reasons:
                    self.pod_reasons[p.key] = self._dropped_reason(p, g, reason)
        if root not in self.group_trace:
            self.group_trace[root] = {"progression": [], "status": code.label, "reason": reason}

    def _nominated_result(self, r: PodResult, node: int) -> PodResult:
        """The pod's cycle result once default preemption nominated ``node``."""
        r.node, r.status, r.fit_error = node, Status(), None
        return r

    def _dropped_reason(self, pod: Pod, group: str, reason: str) -> str:
        r = self.results.get(pod.key)
        if r is not None and r.node is None:
            return _pod_failure(r)
        return f"pod group {group} is unschedulable: {reason}"

    # ---- groups ------------------------------------------------------------------------------
    def schedule_group(self, key: str) -> GroupRun:
        """One node of the hierarchy: through its placements when a PlacementGenerate plugin
        constrains it (without one its single placement is the parent's, which needs no wrapper)."""
        return self.schedule_placements(key)

    def schedule_in_placement(self, key: str) -> GroupRun:
        """The pod-group algorithm (leaf) or the recursive one (composite) in the current placement."""
        if self.cluster.groups.is_leaf(key):
            return self.schedule_leaf(key)
        return self.schedule_composite(key)

    def leaf_inputs(self, key: str) -> tuple[list[Pod], int, int]:
        """A leaf group's queued pods in member order, its minCount and its already scheduled
        pods (bound ones, and in a next cycle the ones this run placed)."""
        group = self.cluster.groups.node(key)
        members = group.members
        pods = member_order([p for p in members if p.key in self.queued])
        before = sum(1 for p in members if p.bound)
        if self._next_cycle_running:
            before += sum(1 for p in members if not p.bound and p.key in self.snap.node_of)
        return pods, group.need, before

    def schedule_leaf(self, key: str) -> GroupRun:
        pods, minimum, before = self.leaf_inputs(key)
        checkpoint = len(self.assumed)
        failures: list[PodResult] = []

        def attempt(pod):
            r = self.schedule_pod(pod)
            if r.node is None:
                failures.append(r)
                return None if r.status.code == Code.ERROR else (False, 0)
            self.assume(pod, r.node)
            return True, 1

        status, scheduled, new, progression = until_feasible(pods, before, minimum, attempt, self.sched.profile.feasible)
        reason = None
        if status != Code.SUCCESS:
            self.revert(checkpoint)
            new = 0
            reason = leaf_reason(key, minimum, before, scheduled, len(pods), failures)
        run = GroupRun(status, new, reason)
        self._set_trace(key, run, progression)
        return run

    def schedule_composite(self, key: str) -> GroupRun:
        group = self.cluster.groups.node(key)
        minimum = group.need
        children = list(group.children)
        checkpoint = len(self.assumed)
        failed: list[str] = []

        def attempt(child):
            run = self.schedule_group(child)
            if run.status != Code.SUCCESS and run.status != Code.ERROR:
                failed.append(child)
            return None if run.status == Code.ERROR else (run.status == Code.SUCCESS, run.new)

        status, scheduled, new, progression = until_feasible(children, 0, minimum, attempt, self.sched.profile.feasible)
        reason = None
        if status != Code.SUCCESS:
            self.revert(checkpoint)
            new = 0
            reason = f"CompositePodGroup {key}: {scheduled} of minGroupCount {minimum} child groups schedulable" + (f" (failed: {', '.join(failed)})" if failed else "")
            self._propagate_failure(key, reason)
        run = GroupRun(status, new, reason)
        self._set_trace(key, run, progression)
        return run

    def _propagate_failure(self, key: str, reason: str) -> None:
        """A failing parent overrides its successful children: none of their pods bind."""
        for g in self.cluster.groups.leaves(key):
            t = self.group_trace.get(g)
            if t is not None and t["status"] == Code.SUCCESS.label:
                t.update(status=Code.UNSCHEDULABLE.label, reason=f"parent failed: {reason}")
                self.group_reasons[g] = f"parent failed: {reason}"

    def _set_trace(self, key: str, run: GroupRun, progression: list[str] | None = None) -> None:
        t = self.group_trace.setdefault(key, {"progression": [], "status": "", "reason": None})
        if progression is not None:
            t["progression"] = progression
        t["status"] = run.status.label
        t["reason"] = run.reason
        if run.reason and run.status != Code.SUCCESS:
            self.group_reasons[key] = run.reason

    # ---- pods --------------------------------------------------------------------------------
    def schedule_pod(self, pod: Pod) -> PodResult:
        if pod.key == self.stop_before and self._stop_here():
            raise StopBefore(pod, self.sched.placement, self.sched.placement_name)
        r = self.sched.schedule(pod)
        if pod.key in self.fixed:
            self._apply_fixed(pod, r)
        self.results[pod.key] = r
        self.order.append(pod.key)
        return r

    def _stop_here(self) -> bool:
        placement = self.sched.placement
        return self.stop_node is None or placement is None or bool((placement == self.stop_node).any())

    def _apply_fixed(self, pod: Pod, r: PodResult) -> None:
        """Force the pod onto its fixed node when that node passes Filter (a what-if replay);
        a fixed node outside the placement under evaluation is infeasible there."""
        name = self.fixed[pod.key]
        i = self.snap.index.get(name)
        got = self.sched.explain(pod, [i])[i] if i is not None else {"feasible": False, "reason": "no such node"}
        if got["feasible"]:
            r.node, r.fit_error, r.status = i, None, Status()
        else:
            r.node = None
            r.fit_error = f"fixed node {name} is infeasible: {got['reason']}"
            r.status = Status(Code.UNSCHEDULABLE, (r.fit_error,))

    def assume(self, pod: Pod, i: int) -> None:
        self.snap.assume(pod, i)
        self.assumed.append(pod)

    def revert(self, checkpoint: int) -> None:
        while len(self.assumed) > checkpoint:
            self.snap.forget(self.assumed.pop())


def _pod_failure(r: PodResult) -> str:
    return r.fit_error or r.status.message() or r.status.code.label


def leaf_reason(key: str, minimum: int, before: int, scheduled: int, queued: int, failures: list[PodResult]) -> str:
    head = f"PodGroup {key}: minCount {minimum} not reached ({scheduled} of {minimum} pods schedulable"
    head += f", {before} already bound)" if before else ")"
    if queued + before < minimum:
        return f"PodGroup {key}: only {queued + before} pods for minCount {minimum}"
    if failures:
        first = failures[0]
        return f"{head}; {first.pod.key}: {_pod_failure(first)}"
    return head


def until_feasible(items, scheduled: int, minimum: int, attempt, feasible=placement_feasible) -> tuple[Code, int, int, list[str]]:
    """The PlacementFeasible loop shared by leaf groups (items are pods) and composite groups
    (items are child groups), spec §1.5 and §4.2 (``schedule_one_podgroup.go``).

    ``attempt(item)`` returns None on an Error, else ``(succeeded, newly placed pods)``. The loop
    stops as soon as minCount (minGroupCount) can no longer be reached, continues past Success to
    place extra items greedily, and turns a final Wait into Unschedulable. Returns the status,
    the scheduled count, the newly placed pods and the status after each item. ``feasible``: the
    profile's PlacementFeasible (``Profile.feasible``; GangScheduling's rule by default).
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
        if status == Code.UNSCHEDULABLE:
            break
    return (Code.UNSCHEDULABLE if status == Code.WAIT else status), scheduled, new, progression
