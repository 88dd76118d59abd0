"""The immutable, engine-neutral snapshot both engines read."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from gangplan.models.base import Beside
from gangplan.models.groups import GroupTree, gate
from gangplan.models.hierarchy import validated
from gangplan.models.objects import (
    CompositePodGroup,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PriorityClass,
    SchedulerProfile,
    TopologyLevels,
    Workload,
)
from gangplan.models.version import (
    NEWEST,
    KubeVersion,
    VersionEvidence,
    hierarchy_checks,
    topology_constraints_read,
    version_evidence,
)

TERMINATING_REASON = "pod is being deleted (skipped, as upstream skips terminating pods)"
"""Why a pending pod with ``metadata.deletionTimestamp`` is not placed (:attr:`Cluster.not_queued`)."""


class Cluster(BaseModel):
    """Every object of a snapshot, normalised. Nothing here changes after loading.

    ``pods`` holds bound pods (``node_name`` set, not terminated) and pending pods, in snapshot
    order. ``gated`` maps a pending pod key to the reason the scheduler would not even queue it
    (missing PodGroup, gang quorum not reached, scheduling gates); gated pods are still in ``pods``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    _dra_view: Beside | None = PrivateAttr(default=None)
    """(this Cluster, the DRA capacity view made of it: :func:`gangplan.dra.capacity.capacity_view`),
    cached beside it: it dies with the snapshot; a copy (which shares the holder) is not its owner."""
    _dra_rows: Beside | None = PrivateAttr(default=None)
    """On a capacity view: (the view, its :class:`gangplan.dra.capacity.CapacityRows`)."""
    _dra_source: Beside | None = PrivateAttr(default=None)
    """On a capacity view: (the view, the snapshot it was made of)."""
    _kueue_admission: Beside | None = PrivateAttr(default=None)
    """(this Cluster, Kueue's admission pass on it: :func:`gangplan.solver.kueue.admission_of`),
    made once and read by every greedy run and probe of the snapshot."""
    _kueue_opened: Beside | None = PrivateAttr(default=None)
    """(this Cluster, the question the exact engine answers under Kueue:
    :func:`gangplan.solver.kueue.apply.opened_view`)."""
    _topology_tree: Beside | None = PrivateAttr(default=None)
    """(this Cluster, its topology tree), built once by the exact engine's Instance
    (:attr:`gangplan.solver.exact.instance.Instance.tree`) and read by every probe of a diff."""
    _greedy_nodes: Beside | None = PrivateAttr(default=None)
    """(this Cluster, the greedy node table's starting state:
    :class:`gangplan.solver.greedy.snapshot.NodeTableStart`), made by the first greedy session on
    the snapshot and copied by every later one (a diff's run and its decisive step's replay)."""

    _derived: Beside | None = PrivateAttr(default=None)
    """(this Cluster, {memo: value}): the snapshot-wide views of
    :class:`gangplan.models.memo.ClusterMemo` (the objective's bound counts, the exact engine's
    bound pods and victim units, the validator's bound layout), each made once."""

    _groups_as_read: tuple[dict, dict] | None = PrivateAttr(default=None)
    """The PodGroups and CompositePodGroups as the snapshot has them, when ``pod_groups`` /
    ``composite_pod_groups`` hold what this release sees instead (v1.35 reads no
    ``schedulingConstraints.topology``: :func:`~gangplan.models.version.topology_constraints_read`);
    None when the two are the same. :meth:`at_version` starts from these."""

    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    pod_groups: dict[str, PodGroup] = Field(default_factory=dict)
    composite_pod_groups: dict[str, CompositePodGroup] = Field(default_factory=dict)
    workloads: dict[str, Workload] = Field(default_factory=dict)
    priority_classes: dict[str, PriorityClass] = Field(default_factory=dict)
    pdbs: tuple[PodDisruptionBudget, ...] = ()
    namespaces: dict[str, Namespace] = Field(default_factory=dict)
    profile: SchedulerProfile = Field(default_factory=SchedulerProfile)
    topologies: tuple[TopologyLevels, ...] = ()
    gated: dict[str, str] = Field(default_factory=dict)
    skipped_kinds: dict[str, int] = Field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    """Objects and fields that can change scheduling but gangplan does not model, one line per
    kind (or kind and field) with counts; ``--strict`` turns them into bad input."""
    translations: tuple[str, ...] = ()
    """What the loader translated or synthesized (foreign group APIs into native groups, Jobs,
    JobSets and LeaderWorkerSets into their pods), one line per kind (:mod:`gangplan.io.foreign`)."""
    sources: tuple[str, ...] = ()
    api_versions: dict[str, int] = Field(default_factory=dict)
    """``Kind apiVersion`` -> objects, for the scheduling.k8s.io kinds, and ``Pod spec.workloadRef`` /
    ``Pod spec.schedulingGroup`` (how pods join groups): what tells the release a snapshot came from."""
    kube_version: KubeVersion = NEWEST
    """The Kubernetes minor version whose kube-scheduler the engines reproduce
    (:mod:`gangplan.models.version`); the newest unless the loader or a run is told otherwise."""
    dra: Any = None
    """The snapshot's Dynamic Resource Allocation objects (:class:`gangplan.dra.DraState`), or None
    without any (then no DRA rule applies)."""
    kueue: Any = None
    """The snapshot's Kueue admission objects (:class:`gangplan.models.kueue.KueueState`), or None
    without a ClusterQueue (then no Kueue rule applies and kube-scheduler alone is reproduced)."""

    @model_validator(mode="after")
    def _as_the_release_reads_them(self) -> Cluster:
        """A snapshot made for a release that does not read a group field (v1.35: no
        ``schedulingConstraints.topology``) holds its groups without it, and keeps them as read in
        ``_groups_as_read`` (:func:`groups_seen_by`); every engine, the validator and the loader's
        views then see what that release sees."""
        seen = groups_seen_by(self.kube_version, self.pod_groups, self.composite_pod_groups)
        if seen[0] is not self.pod_groups:
            self._groups_as_read = (self.pod_groups, self.composite_pod_groups)
            object.__setattr__(self, "pod_groups", seen[0])
            object.__setattr__(self, "composite_pod_groups", seen[1])
        return self

    def at_version(self, version: KubeVersion | str | None) -> Cluster:
        """This snapshot as kube-scheduler ``version`` sees it (itself when None or the same).
        The derived views are kept, except the group forest when the two versions validate
        hierarchies differently (:func:`gangplan.models.version.hierarchy_checks`)."""
        if version is None or KubeVersion(version) == self.kube_version:
            return self
        new = KubeVersion(version)
        update: dict[str, Any] = {"kube_version": new}
        if self.dra:  # KEP-5055: which device taints the allocator checks depends on the release
            update["dra"] = self.dra.for_version(new)
        read = self._groups_as_read or (self.pod_groups, self.composite_pod_groups)
        seen = groups_seen_by(new, *read)
        regrouped = seen[0] is not self.pod_groups or seen[1] is not self.composite_pod_groups
        if regrouped:  # the release reads other group fields: every derived view is recomputed
            update["pod_groups"], update["composite_pod_groups"] = seen
        copy = BaseModel.model_copy(self, update=update)
        copy._groups_as_read = read if seen[0] is not read[0] else None
        keep_groups = hierarchy_checks(new) == hierarchy_checks(self.kube_version)
        for name, value in type(self).__dict__.items():
            if (
                isinstance(value, cached_property)
                and name in self.__dict__
                and name != "version_warnings"
                and not regrouped
                and (keep_groups or name != "groups")
            ):
                copy.__dict__[name] = self.__dict__[name]
            elif isinstance(value, cached_property):
                copy.__dict__.pop(
                    name, None
                )  # (model_copy copies the instance dict: recomputed for the new release)
        return copy

    @cached_property
    def version_warnings(self) -> tuple[str, ...]:
        """Where the snapshot says it comes from another release than the one reproduced (the
        kubelets, or scheduling objects the release does not serve). They join ``warnings`` in
        Results and on stderr; ``--strict`` does not refuse them (the input is read in full)."""
        ev, used = self.version_evidence, self.kube_version
        out = []
        if ev.differs_from(used):
            out.append(
                f"reproducing kube-scheduler v{used}, but the Nodes suggest v{ev.suggested} ({ev.describe()}); choose with --kube-version"
            )
        for line in ev.not_served(used):
            out.append(
                f"{line}; read anyway (v{used}); "
                + (
                    f"the snapshot's scheduling objects suggest v{ev.api_suggested}"
                    if ev.api_suggested
                    else "no release serves all of the snapshot's scheduling objects"
                )
            )
        if self._groups_as_read is not None:
            pgs, cpgs = self._groups_as_read
            n = sum(1 for g in pgs.values() if g.topology_key) + sum(
                1 for g in cpgs.values() if g.topology_key
            )
            out.append(
                f"{n} group(s) with spec.schedulingConstraints.topology: kube-scheduler v{used} has "
                "no topology-aware workload scheduling (TopologyAwareWorkloadScheduling is new in "
                "v1.36), so the constraint is not applied (by either engine or the validator)"
            )
        if self.dra:
            out.extend(self.dra.version_notes(used))
        return tuple(out)

    @cached_property
    def version_evidence(self) -> VersionEvidence:
        """The version the Nodes' kubelets suggest (``inspect``; ``solve`` warns when it differs)."""
        return version_evidence(
            (n.kubelet_version for n in self.nodes if n.kubelet_version), self.api_versions
        )

    # ---- lookups -------------------------------------------------------------------------
    @cached_property
    def node_index(self) -> dict[str, int]:
        """Node name -> position in the snapshot (the default tie-break order)."""
        return {n.name: i for i, n in enumerate(self.nodes)}

    @cached_property
    def pod_by_key(self) -> dict[str, Pod]:
        return {p.key: p for p in self.pods}

    @cached_property
    def bound_pods(self) -> tuple[Pod, ...]:
        return tuple(p for p in self.pods if p.node_name is not None)

    @cached_property
    def pending_pods(self) -> tuple[Pod, ...]:
        """Every pod without a node, gated ones included."""
        return tuple(p for p in self.pods if p.node_name is None)

    @cached_property
    def schedulable_pods(self) -> tuple[Pod, ...]:
        """Pending pods that pass PreEnqueue (not gated); terminating ones included, see
        :attr:`queued_pods` for the pods a scheduling cycle attempts."""
        return tuple(p for p in self.pending_pods if p.key not in self.gated)

    # ---- which pending pods are attempted: the one rule both engines and the validator read ----
    @cached_property
    def not_queued(self) -> dict[str, str]:
        """Pending pod key -> why no scheduling cycle attempts it, for every pending pod that is
        not attempted: ``gated: ...`` (scheduling gates, another scheduler's ``schedulerName``,
        GangScheduling's PreEnqueue: :func:`gangplan.models.groups.gate`) or being deleted
        (``metadata.deletionTimestamp`` set: ``skipPodSchedule`` in
        ``pkg/scheduler/schedule_one.go`` skips it when it is popped). Greedy leaves these pods
        out, the exact engine does not place them, and the validator rejects a placement of one."""
        out: dict[str, str] = {}
        for p in self.pending_pods:
            if p.key in self.gated:
                out[p.key] = f"gated: {self.gated[p.key]}"
            elif p.terminating:
                out[p.key] = TERMINATING_REASON
        return out

    @cached_property
    def queued_pods(self) -> tuple[Pod, ...]:
        """Pending pods a scheduling cycle attempts (not in :attr:`not_queued`), in snapshot order."""
        skip = self.not_queued
        return tuple(p for p in self.pending_pods if p.key not in skip)

    @cached_property
    def groups(self) -> GroupTree:
        """The group forest (:mod:`gangplan.models.groups`): the one place group structure,
        entities, victim units and hierarchy validation come from."""
        return self.validated_groups(
            GroupTree.build(self.pods, self.pod_groups, self.composite_pod_groups)
        )

    def validated_groups(self, structure: GroupTree) -> GroupTree:
        """:attr:`groups` from a forest already built of this snapshot's pods and groups (the
        loader's, which gated the pods with it): validated for the pods the scheduler queues."""
        queued = {p.key for p in self.pending_pods if p.key not in self.gated}
        return validated(structure, queued, self.profile, self.kube_version)

    def with_pods(
        self,
        pods: Iterable[Pod],
        *,
        held: Mapping[str, str] | None = None,
        released: Iterable[str] = (),
    ) -> Cluster:
        """This snapshot with ``pods`` in place of its own: the gates recomputed for the new pods
        (scheduling gates, another scheduler, GangScheduling's PreEnqueue: :func:`gate`), the
        loader's other holds kept for pending pods except ``released`` ones, and ``held`` (pod
        key -> reason) added. The one way a question is rewritten as another snapshot
        (make-room's marked snapshot, Kueue's admitted and opened views)."""
        pods = tuple(pods)
        tree = GroupTree.build(pods, self.pod_groups, self.composite_pod_groups)
        pending = {p.key for p in pods if p.node_name is None}
        release = set(released)
        gated = {
            **{k: v for k, v in self.gated.items() if k in pending and k not in release},
            **gate(pods, tree, self.profile),
            **(held or {}),
        }
        return self.model_copy(update={"pods": pods, "gated": gated})

    def model_copy(self, *, update: dict | None = None, deep: bool = False) -> Cluster:
        """A copy with ``update`` applied; derived (cached) views are rebuilt, never copied."""
        copy = super().model_copy(update=update, deep=deep)
        for name, value in type(self).__dict__.items():
            if isinstance(value, cached_property):
                copy.__dict__.pop(name, None)
        return copy

    @cached_property
    def resource_names(self) -> tuple[str, ...]:
        """Every resource any node offers or any pod requests, cpu and memory first."""
        names: set[str] = set()
        for n in self.nodes:
            names.update(n.allocatable)
        for p in self.pods:
            names.update(p.requests)
        head = [
            r
            for r in ("cpu", "memory", "pods", "ephemeral-storage")
            if r in names or r in ("cpu", "memory", "pods")
        ]
        return tuple(head + sorted(names - set(head)))

    def __repr__(self) -> str:
        where = (
            self.sources[0]
            if len(self.sources) == 1
            else f"{len(self.sources)} files"
            if self.sources
            else "in memory"
        )
        groups = len({g for p in self.pending_pods if (g := p.group_key)})
        return (
            f"<Cluster {where}: {len(self.nodes)} nodes, {len(self.bound_pods)} bound pods, {len(self.pending_pods)} pending pods "
            f"in {groups} groups, kube-scheduler v{self.kube_version.value}>"
        )

    __str__ = __repr__

    def frame_levels(self) -> tuple[str, ...]:
        """The node label keys the DataFrames show a domain for: the levels of the snapshot's
        Kueue Topology, else the topology keys of its groups' constraints (broadest first:
        fewest domains)."""
        if self.topologies:
            return tuple(self.topology_levels())
        keys = {n.topology_key for n in self.groups.nodes.values() if n.topology_key}
        domains = {
            k: len({node.labels[k] for node in self.nodes if k in node.labels}) for k in keys
        }
        return tuple(sorted((k for k in keys if domains[k]), key=lambda k: (domains[k], k)))

    def to_frame(self, result: Any = None) -> Any:
        """A pandas DataFrame, one row per node: ``node``, its domain at each topology level
        (:meth:`frame_levels`), ``unschedulable``, ``bound_pods``, then per resource
        ``<r>_allocatable``, ``<r>_used`` (the bound pods' requests) and ``<r>_free``; cpu in
        cores, every other resource in its integer unit (bytes, devices, pod slots). With a
        ``result`` (a Result of this snapshot): the state after it (its placements added, its
        victims removed) and ``placed_pods`` / ``victims`` columns."""
        import pandas as pd

        victims = set(result.victims) if result is not None else set()
        placements = result.placements() if result is not None else {}
        used: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        count: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))

        def add(pod: Pod, node: str, what: str) -> None:
            count[node][what] += 1
            for r, q in pod.requests.items():
                used[node][r] += q
            if "pods" not in pod.requests:
                used[node]["pods"] += 1

        for p in self.bound_pods:
            node = p.node_name or ""
            if p.key in victims:
                count[node]["victims"] += 1
            else:
                add(p, node, "bound_pods")
        for key, node in placements.items():
            add(self.pod_by_key[key], node, "placed_pods")
        levels = self.frame_levels()
        rows = []
        for n in self.nodes:
            row: dict[str, Any] = {
                "node": n.name,
                **{level: n.labels.get(level) for level in levels},
            }
            row["unschedulable"] = n.unschedulable
            for what in (
                ("bound_pods", "placed_pods", "victims") if result is not None else ("bound_pods",)
            ):
                row[what] = count[n.name][what]
            for r in self.resource_names:
                alloc, u = n.allocatable.get(r, 0), used[n.name][r]
                for what, value in (("allocatable", alloc), ("used", u), ("free", alloc - u)):
                    row[f"{r}_{what}"] = (
                        value / 1000 if r == "cpu" else value
                    )  # cpu: millicores -> cores
            rows.append(row)
        return pd.DataFrame(rows)

    def topology_levels(self) -> tuple[str, ...]:
        """The levels of the first Kueue Topology in the snapshot, or ``()``."""
        return self.topologies[0].levels if self.topologies else ()


def groups_seen_by(
    v: KubeVersion, pod_groups: dict[str, PodGroup], composites: dict[str, CompositePodGroup]
) -> tuple[dict[str, PodGroup], dict[str, CompositePodGroup]]:
    """The snapshot's groups as release ``v`` reads them: the same dicts where it reads every
    field gangplan models, else copies without what it does not read (v1.35: no
    ``schedulingConstraints.topology``, :func:`~gangplan.models.version.topology_constraints_read`)."""
    if topology_constraints_read(v) or not (
        any(g.topology_key for g in pod_groups.values())
        or any(g.topology_key for g in composites.values())
    ):
        return pod_groups, composites
    return (
        {
            k: g.model_copy(update={"topology_key": None}) if g.topology_key else g
            for k, g in pod_groups.items()
        },
        {
            k: g.model_copy(update={"topology_key": None}) if g.topology_key else g
            for k, g in composites.items()
        },
    )
