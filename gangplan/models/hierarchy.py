"""Run-time validation of a group hierarchy, as kube-scheduler does it before a workload cycle.

Mirrors ``validatePodGroup`` / ``validatePodGroupHierarchy`` in
``pkg/scheduler/schedule_one_podgroup.go`` (master after kubernetes#141930; gangplan runs the
same checks for v1.37), restated in ``docs/upstream-hierarchy-validation.md`` §2.3 and §6. The rules run as a pre-order walk from the
root (depth 1), children in queue order, and the first failing check wins; the letters are the
ones of that document:

for every group but the root:
C. its priority differs from the root's;
D. its preemption policy differs from the root's (gate ``PodGroupPreemptionPolicy``, on here);
for every pod of a leaf, queued pods first, then already scheduled ones:
G. its schedulerName differs from the first queued pod's;
H. its priority differs from the root group's;
I. its preemption policy differs from the root group's;
J. finally, no profile serves the schedulerName.

The structural checks A (a CompositePodGroup at depth ``WorkloadMaxTreeDepth``), B (a
``workloadRef`` workload name other than the root's), E (a gang parent with a basic child) and F
(an ``all`` parent with a ``single`` child) are ``validatePodGroupHierarchy`` /
``validatePodGroupSubtree`` at kubernetes commit 45f0bf0fa76b: the proof of concept of the open
kubernetes#142004, which no release or master carries (the newest master tests,
``cpg_tas_test.go`` @1361a25a, ``cpg_test.go`` @16457a8a and ``podgrouppreemption_test.go``,
schedule trees those checks refuse). They are kept behind ``checks="full"`` of
:func:`validate_hierarchies` for the day it merges; no :class:`KubeVersion` selects them.

Any failure is SchedulerError-type: none of the hierarchy's pods is scheduled, every group of it
gets the message, and the rest of the snapshot is scheduled. A missing parent or a cycle is not a
validation error upstream: the queue holds such pods back (``incompletePodGroupPods``), so they
are gated (:func:`gangplan.models.groups.gate`), not failed.

Per version (:func:`gangplan.models.version.hierarchy_checks`): v1.35 and v1.36 run no such
validation; v1.37 and the development code (``--kube-version 1.38``) run C, D and G-J.

Used through :meth:`GroupTree.validation_error` by the greedy engine, the exact engine and the
validator alike.
"""

from __future__ import annotations

from dataclasses import replace

from gangplan.models.groups import GroupNode, GroupTree
from gangplan.models.objects import Pod, SchedulerProfile
from gangplan.models.version import NEWEST, KubeVersion, hierarchy_checks

WORKLOAD_MAX_TREE_DEPTH = 4
V1ALPHA1 = "scheduling.k8s.io/v1alpha1"


def validate_hierarchies(
    tree: GroupTree,
    queued: set[str],
    profile: SchedulerProfile,
    version: KubeVersion = NEWEST,
    checks: str | None = None,
) -> dict[str, str]:
    """Root key -> the first failed check of its hierarchy, for every root kube-scheduler would
    attempt (roots whose pods are all held back, e.g. on a cycle, are not validated), with the
    checks ``version`` runs, or with ``checks`` when given (``none``, ``pods``, or ``full``: the
    unmerged kubernetes#142004 proof of concept @45f0bf0f, which no version runs)."""
    out: dict[str, str] = {}
    if checks is None:
        checks = hierarchy_checks(version)
    if checks == "none":
        return out
    for root in tree.roots:
        if root in tree.cycles or getattr(tree.node(root).obj, "api_version", "") == V1ALPHA1:
            continue  # held back by the queue; v1.35 gangs have no group validation
        pods = tree.members(root)
        first = next((p for p in pods if p.key in queued), None)
        if first is None:
            continue  # nothing queued: no cycle runs
        why = _Walk(tree, root, first, queued, structural=checks == "full").visit(root, None, 1)
        if why is None and first.scheduler_name != profile.scheduler_name:
            why = f"profile not found for scheduler name {first.scheduler_name!r}"
        if why is not None:
            out[root] = why
    return out


def validated(
    tree: GroupTree,
    queued: set[str] | None = None,
    profile: SchedulerProfile | None = None,
    version: KubeVersion | None = None,
) -> GroupTree:
    """``tree`` with the hierarchy validation of ``queued`` pods (default: every pending pod)
    under ``profile`` and ``version`` in ``errors``; the structure is shared."""
    if queued is None:
        queued = {p.key for p in tree.pods.values() if p.node_name is None}
    out = replace(tree, errors={})
    object.__setattr__(
        out,
        "errors",
        validate_hierarchies(out, queued, profile or SchedulerProfile(), version or NEWEST),
    )
    return out


class _Walk:
    def __init__(
        self, tree: GroupTree, root: str, first: Pod, queued: set[str], *, structural: bool = True
    ) -> None:
        self.tree = tree
        self.queued = queued
        self.structural = structural
        """Checks A, B, E and F (kubernetes#142004 @45f0bf0f, unmerged; ``checks="full"``)."""
        r = tree.node(root)
        self.root = r
        self.first = first
        self.policy = r.preemption_policy

    def visit(self, key: str, parent: GroupNode | None, depth: int) -> str | None:
        g = self.tree.node(key)
        r = self.root
        structural = self.structural
        if structural and not g.is_leaf and depth >= WORKLOAD_MAX_TREE_DEPTH:
            return f'hierarchy depth exceeds maximum allowed depth {WORKLOAD_MAX_TREE_DEPTH} at "{key}"'
        if parent is not None:
            mine, theirs = g.obj.workload_ref or "", r.obj.workload_ref or ""
            if structural and mine != theirs:
                return f'pod group workload does not match root workload, got: "{mine}" ("{key}") and "{theirs}" ("{r.key}")'
            if g.priority != r.priority:
                return (
                    f"all pod groups in a hierarchy should have the same priority as the root pod group's "
                    f'priority, got {g.priority} ("{key}") and {r.priority} ("{r.key}")'
                )
            if g.preemption_policy != self.policy:
                return (
                    f"all pod groups in a hierarchy should have the same preemption policy as the root pod "
                    f'group\'s preemption policy, got {g.preemption_policy} ("{key}") and {self.policy} ("{r.key}")'
                )
            if structural and parent.gang and not g.gang:
                return f'gang parent "{parent.key}" cannot have basic child "{key}"'
            if structural and parent.disruption_mode == "all" and g.disruption_mode == "single":
                return f'parent "{parent.key}" with All disruption mode cannot have child "{key}" with Single disruption mode'
        if not g.is_leaf:
            for child in g.children:
                why = self.visit(child, g, depth + 1)
                if why is not None:
                    return why
            return None
        return self._pods(g)

    def _pods(self, g: GroupNode) -> str | None:
        first, r = self.first, self.root
        queued = [p for p in g.members if p.key in self.queued]
        scheduled = [p for p in g.members if p.bound]
        for p in queued + scheduled:
            if p.scheduler_name != first.scheduler_name:
                return (
                    f"all pods in a pod group hierarchy should have the same .spec.schedulerName set, got: "
                    f'"{p.scheduler_name}" ("{p.name}") and "{first.scheduler_name}" ("{first.name}")'
                )
            if p.priority != r.priority:
                return (
                    f"all pods in a pod group hierarchy should have the same priority as the root pod group's "
                    f'priority, got {p.priority} ("{p.name}") and {r.priority} ("{r.key}")'
                )
            if p.preemption_policy != self.policy:
                return (
                    f"all pods in a pod group hierarchy should have the same preemption policy as the root pod "
                    f'group\'s preemption policy, got {p.preemption_policy} ("{p.name}") and {self.policy} ("{r.key}")'
                )
        return None
