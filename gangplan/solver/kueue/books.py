"""The admission pass's books: quota usage and TAS usage as the run admits Workloads, and the
nomination of a head through Kueue's flavor assigner (:mod:`.flavors`) with TAS (:mod:`.tas`).

Kueue's cache (kubernetes-sigs/kueue v0.19.2 ``pkg/cache/scheduler``) holds, per ClusterQueue,
the quota usage of admitted Workloads (:class:`gangplan.predicates.quota.QuotaUsage`) and, per
TAS flavor, the TAS usage of their topology assignments. The snapshot's admitted Workloads start
the books (their pods, bound, count in the TAS leaves as TAS usage,
:func:`gangplan.solver.kueue.tas.tas_leaves`); each admission of the run adds its quota usage
(:meth:`~gangplan.predicates.quota.QuotaTree.add`) and its assignment's usage per leaf domain.
``fits`` is ``fits`` in ``pkg/scheduler/scheduler.go``: the nominated usage still fits the quota
after the cycle's earlier admissions, and, for a TAS Workload, its placement is found again on the
leaves as they are now (``TASRecomputeAssignmentWithinSchedulingCycle``, on by default since
v0.17).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from gangplan.models.cluster import Cluster
from gangplan.models.kueue import (
    ClusterQueue,
    KueueState,
    KueueWorkload,
    PodSetAdmission,
    TopologyAssignment,
)
from gangplan.predicates.quota import FlavorResource, QuotaTree, QuotaUsage
from gangplan.solver.kueue import flavors as fa
from gangplan.solver.kueue import tas
from gangplan.solver.kueue.partial import podset_reducer_search


@dataclass
class Nomination:
    """A head's nomination: Kueue's Assignment and the TAS assignments found with it."""

    workload: KueueWorkload
    assignment: fa.Assignment
    topology: dict[str, TopologyAssignment] = field(default_factory=dict)
    tas_requests: dict[str, list[fa.TASRequest]] = field(default_factory=dict)

    @property
    def mode(self) -> str:
        return {fa.Mode.Fit: "Fit", fa.Mode.NoFit: "NoFit"}.get(
            self.assignment.representative_mode(), "Preempt"
        )

    @property
    def borrows(self) -> int:
        return self.assignment.borrowing

    @property
    def message(self) -> str:
        return self.assignment.message() or self.assignment.no_fit_reason

    @property
    def usage(self) -> dict[FlavorResource, int]:
        return dict(self.assignment.usage)

    def admissions(self) -> tuple[PodSetAdmission, ...]:
        out = []
        for ps in self.assignment.podsets:
            out.append(
                PodSetAdmission(
                    name=ps.name,
                    flavors={r: f.name for r, f in sorted(ps.flavors.items())},
                    resource_usage={r: q for r, q in sorted(ps.requests.items())},
                    count=ps.count,
                    topology_assignment=self.topology.get(ps.name),
                )
            )
        return tuple(out)


class Books:
    """Quota and TAS usage during one admission pass (see the module docstring)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.state: KueueState = cluster.kueue
        self.tree = QuotaTree.build(self.state)
        self.usage: QuotaUsage = self.tree.usage_from(self.state.admitted())
        self.levels = {t.name: t.levels for t in cluster.topologies}
        self.config = tas.default_tas_config(self.state.version)
        self._leaves: dict[str, tuple] = {}
        self._trees: dict[str, object] = {}
        """Flavor -> the TAS tree of its leaves (built once, cleared by every placement)."""
        self.tas_usage: dict[str, dict[str, dict[str, int]]] = {}
        """Flavor -> leaf domain id -> what this run's TAS admissions hold there."""

    @classmethod
    def of(cls, cluster: Cluster) -> Books:
        return cls(cluster)

    def _flavor_levels(self, flavor: str) -> tuple[str, ...]:
        f = self.state.flavors.get(flavor)
        return tuple(self.levels.get(f.topology_name, ())) if f and f.topology_name else ()

    def leaves(self, flavor: str) -> tuple:
        if flavor not in self._leaves:
            self._leaves[flavor] = tas.tas_leaves(
                self.cluster, self.state.flavors.get(flavor), self._flavor_levels(flavor)
            )
        return self._leaves[flavor]

    def _place(
        self, requests: Sequence[fa.TASRequest], flavor: str, simulate_empty: bool
    ) -> tas.TASResult:
        f = self.state.flavors.get(flavor)
        name = f.topology_name if f and f.topology_name else flavor
        tolerations = tuple(f.tolerations) if f else ()
        tree = self._trees.get(flavor)
        if tree is None:
            tree = tas.tas_snapshot(
                self.leaves(flavor),
                self._flavor_levels(flavor),
                self.config,
                topology_name=name,
                flavor_tolerations=tolerations,
            )
            self._trees[flavor] = tree
        podsets = [
            tas.TASPodSet(
                name=r.podset.name,
                count=r.count,
                requests=dict(r.podset.requests),
                topology_request=None if r.implied else r.podset.topology_request,
                node_selector=dict(r.podset.node_selector),
                node_affinity_required=r.podset.node_affinity,
                tolerations=tuple(r.podset.tolerations),
            )
            for r in requests
        ]
        return tas.assign(
            podsets,
            self.leaves(flavor),
            self._flavor_levels(flavor),
            self.config,
            topology_name=name,
            flavor_tolerations=tolerations,
            assumed_usage=None if simulate_empty else self.tas_usage.get(flavor),
            simulate_empty=simulate_empty,
            snapshot=tree,
        )

    def assign(self, wl: KueueWorkload, cq: ClusterQueue) -> Nomination:
        """Nominate ``wl`` (``getAssignments``) against the books as they are.

        Partial admission (``getInitialAssignments``, the PartialAdmission gate, on by default
        since v0.5): when the full counts do not fit and a PodSet has a ``minCount``, the
        largest reduced counts that fit (``PodSetReducer.Search``,
        :func:`~gangplan.solver.kueue.partial.podset_reducer_search`) are nominated instead.
        Kueue first keeps a full assignment that needs preemption when its preemptor finds
        targets; gangplan models no preemption, so a Preempt-mode assignment is reduced as one
        without targets is."""
        nom = self._assign(wl, cq, None)
        if nom.mode == "Fit":
            return nom
        if not any(ps.min_count is not None and ps.min_count < ps.count for ps in wl.podsets):
            return nom
        found: dict[tuple[int, ...], Nomination] = {}

        def fits(counts: list[int]) -> bool:
            n = self._assign(wl, cq, counts)
            if n.mode == "Fit":
                found[tuple(counts)] = n
            return n.mode == "Fit"

        counts = podset_reducer_search(wl.podsets, fits)
        return found[tuple(counts)] if counts is not None else nom

    def _assign(self, wl: KueueWorkload, cq: ClusterQueue, counts: list[int] | None) -> Nomination:
        found: dict[str, TopologyAssignment] = {}
        asked: dict[str, list[fa.TASRequest]] = {}

        def check(
            requests: Sequence[fa.TASRequest], flavor: str, simulate_empty: bool
        ) -> tuple[str, str] | None:
            res = self._place(requests, flavor, simulate_empty)
            if not res.ok:
                return (res.failed_podset or requests[0].podset.name, res.reason)
            if not simulate_empty:
                asked[flavor] = list(requests)
                found.update({k: v for k, v in res.assignments.items() if v is not None})
            return None

        a = fa.assign_flavors(
            wl,
            cq,
            self.tree,
            self.usage,
            self.state.flavors,
            counts=counts,
            tas_check=check,
            topology_levels=self.levels,
            version=self.state.version,
        )
        return Nomination(wl, a, found, asked)

    def fits(self, nom: Nomination, cq: ClusterQueue) -> bool:
        """Does the nomination still fit after the cycle's earlier admissions?"""
        ok, _, _ = self.tree.fits(cq.name, nom.usage, self.usage)
        if not ok:
            return False
        for flavor, requests in sorted(nom.tas_requests.items()):
            res = self._place(requests, flavor, False)
            if not res.ok:
                return False
            nom.topology.update({k: v for k, v in res.assignments.items() if v is not None})
        return True

    def recheck(self, wl: KueueWorkload) -> Nomination | None:
        """What Kueue would choose for the admitted ``wl`` now: its nomination against these
        books with its own quota and its pods' node usage taken off (the snapshot as it is, not
        as it was when Kueue admitted it). None when its ClusterQueue is unknown."""
        from gangplan.predicates.quota import workload_usage

        adm = wl.admission
        cq = self.state.cluster_queues.get(adm.cluster_queue) if adm else None
        if cq is None or cq.name not in self.tree.cluster_queues:
            return None
        usage, leaves, trees = self.usage, self._leaves, self._trees
        try:
            self.usage = self.tree.remove(usage.copy(), cq.name, workload_usage(wl))
            self._leaves = {f: self._without(wl, f) for f in self._tas_flavors(cq)}
            self._trees = {}
            return self.assign(wl, cq)
        finally:
            self.usage, self._leaves, self._trees = usage, leaves, trees

    def _tas_flavors(self, cq: ClusterQueue) -> list[str]:
        return [f for f in cq.flavor_names() if self._flavor_levels(f)]

    def _without(self, wl: KueueWorkload, flavor: str) -> tuple:
        """The flavor's leaves with ``wl``'s bound pods' usage taken off their nodes."""
        pods = self.cluster.pod_by_key
        off: dict[str, dict[str, int]] = {}
        for ps in wl.podsets:
            for key in ps.pods:
                p = pods.get(key)
                if p is None or p.node_name is None:
                    continue
                u = off.setdefault(p.node_name, {"pods": 0})
                u["pods"] += 1
                for r, q in p.requests.items():
                    u[r] = u.get(r, 0) + q
        out = []
        for leaf in self.leaves(flavor):
            sub = off.get(leaf.name)
            if sub is None:
                out.append(leaf)
                continue
            tas_pod = any(
                tas.is_tas_pod(pods[k].annotations)
                for ps in wl.podsets
                for k in ps.pods
                if k in pods and pods[k].node_name == leaf.name
            )
            field_name = "tas_usage" if tas_pod else "non_tas_usage"
            held = dict(getattr(leaf, field_name))
            for r, q in sub.items():
                held[r] = held.get(r, 0) - q
            out.append(replace(leaf, **{field_name: held}))
        return tuple(out)

    def to_reserve(self, nom: Nomination, cq: ClusterQueue) -> dict[FlavorResource, int]:
        """``quotaResourcesToReserve`` (``pkg/scheduler/scheduler.go``, v0.19.2) for a head that
        needs preemption: per flavor and resource, what it asks up to what its ClusterQueue's
        nominal quota leaves (not below 0), or, when it borrows, up to nominal quota plus
        borrowing limit minus what the ClusterQueue uses (all it asks without a limit)."""
        used = self.usage.of_cluster_queue(cq.name)
        out: dict[FlavorResource, int] = {}
        for fr, amount in nom.usage.items():
            flavor, resource = fr
            quota = next(
                (
                    f.quota(resource)
                    for g in cq.resource_groups
                    for f in g.flavors
                    if f.name == flavor
                ),
                None,
            )
            nominal = quota.nominal if quota else 0
            limit = quota.borrowing_limit if quota else None
            if nom.borrows > 0:
                out[fr] = (
                    amount if limit is None else min(amount, nominal + limit - used.get(fr, 0))
                )
            else:
                out[fr] = max(0, min(amount, nominal - used.get(fr, 0)))
        return out

    def reserve(self, nom: Nomination, cq: ClusterQueue) -> None:
        self.tree.add(self.usage, cq.name, nom.usage)
        for flavor, requests in nom.tas_requests.items():
            held = self.tas_usage.setdefault(flavor, {})
            for r in requests:
                ta = nom.topology.get(r.podset.name)
                if ta is None:
                    continue
                for d in ta.domains:
                    u = held.setdefault(tas.domain_id(d.values), {})
                    for res, q in r.podset.requests.items():
                        u[res] = u.get(res, 0) + q * d.count
                    u["pods"] = u.get("pods", 0) + d.count
