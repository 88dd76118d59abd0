"""Kueue's admission objects, reduced to what admission depends on (issue 42).

Kueue (kubernetes-sigs/kueue) sits in front of kube-scheduler: a job is *suspended* until Kueue
admits its Workload into a ClusterQueue, which reserves quota per ResourceFlavor and resource and,
for topology-aware scheduling (TAS), assigns every pod a topology domain; only then are its pods
created / ungated, and kube-scheduler binds them inside the flavor's nodes and the assigned domains.

These are *normalised* views built by the loader (:mod:`gangplan.io.kueue_objects`,
:mod:`gangplan.io.kueue_workloads`), read from the
``kueue.x-k8s.io`` ``v1beta1`` and ``v1beta2`` APIs (v1beta2 is the storage version from Kueue
v0.15; the two differ only in names this model hides: ``spec.cohort`` / ``spec.cohortName``,
``whenCanBorrow: Borrow`` / ``MayStopSearch``, a
topology assignment as ``domains`` / as compressed ``slices``). Quantities are scheduler integers as
everywhere in gangplan (cpu in millicores, memory in bytes, other resources in their unit).

Sources: kubernetes-sigs/kueue ``apis/kueue/v1beta2/{clusterqueue,cohort,localqueue,
resourceflavor,workload}_types.go`` and ``apis/kueue/v1beta1/`` at v0.19.2 (and the defaults in
``apis/kueue/v1beta2/defaults.go``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gangplan.models.objects import LabelSelector, Resources, Taint, Toleration

KUEUE_VERSIONS = ("0.17", "0.18", "0.19", "main")
"""The Kueue releases whose admission is reproduced (``main``: ff69552e79, 2026-08-22)."""
DEFAULT_KUEUE_VERSION = "0.19"

QueueingStrategy = Literal["StrictFIFO", "BestEffortFIFO"]
FungibilityPolicy = Literal["MayStopSearch", "TryNextFlavor"]
KueuePreemptionPolicy = Literal["Never", "Any", "LowerPriority", "LowerOrNewerEqualPriority"]

KUEUE_GROUP = "kueue.x-k8s.io"
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
"""The label (or, before v0.5, annotation) a job, JobSet or pod carries to be managed by Kueue."""
TAS_LABEL = "kueue.x-k8s.io/tas"
WORKLOAD_ANNOTATION = "kueue.x-k8s.io/workload"
PODSET_LABEL = "kueue.x-k8s.io/podset"
TOPOLOGY_GATE = "kueue.x-k8s.io/topology"
ADMISSION_GATE = "kueue.x-k8s.io/admission"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ResourceQuota(_Frozen):
    """One resource's quota in one flavor of a ClusterQueue or Cohort."""

    name: str
    nominal: int = 0
    borrowing_limit: int | None = None
    """None: unlimited borrowing from the cohort (only meaningful with a cohort)."""
    lending_limit: int | None = None
    """None: everything not used may be lent to the cohort."""


class FlavorQuotas(_Frozen):
    name: str
    resources: tuple[ResourceQuota, ...] = ()

    def quota(self, resource: str) -> ResourceQuota | None:
        return next((q for q in self.resources if q.name == resource), None)


class ResourceGroup(_Frozen):
    """Resources that are assigned a flavor together: the flavors are tried in order."""

    covered_resources: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...] = ()


class ResourceFlavor(_Frozen):
    name: str
    node_labels: dict[str, str] = Field(default_factory=dict)
    node_taints: tuple[Taint, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    topology_name: str | None = None
    """A Kueue Topology: the flavor is a TAS flavor, its pods are assigned domains."""
    source: str = ""

    def selects(self, labels: Mapping[str, str]) -> bool:
        """Does a node with ``labels`` belong to the flavor (it carries every ``nodeLabels``
        entry; Kueue's ``NodeMatchesFlavor``)? The one rule for the injected nodeSelector, the TAS
        leaves, the exact engine's flavor nodes and the reading of a placement."""
        return all(labels.get(k) == v for k, v in self.node_labels.items())


class FlavorFungibility(_Frozen):
    """Whether to try the next flavor when the current one needs borrowing or preemption
    (``v1beta2`` defaults: both ``MayStopSearch``-like stop on borrow, ``TryNextFlavor`` on
    preempt; ``preference`` only with both ``TryNextFlavor``)."""

    when_can_borrow: FungibilityPolicy = "MayStopSearch"
    when_can_preempt: FungibilityPolicy = "TryNextFlavor"
    preference: Literal["BorrowingOverPreemption", "PreemptionOverBorrowing"] | None = None


class BorrowWithinCohort(_Frozen):
    policy: Literal["Never", "LowerPriority"] = "Never"
    max_priority_threshold: int | None = None


class KueuePreemption(_Frozen):
    reclaim_within_cohort: KueuePreemptionPolicy = "Never"
    borrow_within_cohort: BorrowWithinCohort | None = None
    within_cluster_queue: KueuePreemptionPolicy = "Never"

    @property
    def enabled(self) -> bool:
        return (
            self.reclaim_within_cohort != "Never"
            or self.within_cluster_queue != "Never"
            or (
                self.borrow_within_cohort is not None
                and self.borrow_within_cohort.policy != "Never"
            )
        )


class ClusterQueue(_Frozen):
    name: str
    cohort: str | None = None
    resource_groups: tuple[ResourceGroup, ...] = ()
    queueing_strategy: QueueingStrategy = "BestEffortFIFO"
    namespace_selector: LabelSelector | None = None
    """None: no namespace may submit (Kueue's nil selector); ``{}``: every namespace."""
    flavor_fungibility: FlavorFungibility = Field(default_factory=FlavorFungibility)
    preemption: KueuePreemption = Field(default_factory=KueuePreemption)
    admission_checks: tuple[str, ...] = ()
    """Named, not modelled: a workload that needs them is reported as waiting for them."""
    stop_policy: Literal["None", "Hold", "HoldAndDrain"] = "None"
    api_version: str = ""
    source: str = ""

    def flavor_names(self) -> tuple[str, ...]:
        return tuple(f.name for g in self.resource_groups for f in g.flavors)

    def group_of(self, resource: str) -> ResourceGroup | None:
        return next((g for g in self.resource_groups if resource in g.covered_resources), None)


class Cohort(_Frozen):
    """A ``Cohort`` object (hierarchical cohorts, Kueue v0.11+): a parent and quota of its own. A
    cohort named only by ClusterQueues has neither."""

    name: str
    parent: str | None = None
    resource_groups: tuple[ResourceGroup, ...] = ()
    source: str = ""


class LocalQueue(_Frozen):
    namespace: str
    name: str
    cluster_queue: str
    stop_policy: Literal["None", "Hold", "HoldAndDrain"] = "None"
    source: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class TopologyRequest(_Frozen):
    """``PodSet.topologyRequest`` (or the job's ``kueue.x-k8s.io/podset-*`` annotations)."""

    required: str | None = None
    preferred: str | None = None
    unconstrained: bool = False
    slice_required: str | None = None
    slice_size: int | None = None
    slice_constraints: tuple[tuple[str, int], ...] = ()
    """Multi-layer slices (``podsetSliceRequiredTopologyConstraints``): (level, size), outer first."""
    podset_group: str | None = None
    pod_index_label: str | None = None
    sub_group_index_label: str | None = None
    sub_group_count: int | None = None


class KueuePodSet(_Frozen):
    """One PodSet of a Workload: ``count`` pods made from one template."""

    name: str
    count: int
    min_count: int | None = None
    """Partial admission: Kueue may admit between ``min_count`` and ``count`` pods."""
    requests: Resources = Field(default_factory=dict)
    """One pod's effective request (as the loader computes it for pods, overhead included)."""
    node_selector: dict[str, str] = Field(default_factory=dict)
    node_affinity: tuple | None = None
    """The template's required node affinity terms (:class:`~gangplan.models.objects.NodeSelectorTerm`),
    None without any: Kueue skips a flavor whose nodeLabels contradict them."""
    tolerations: tuple[Toleration, ...] = ()
    topology_request: TopologyRequest | None = None
    pods: tuple[str, ...] = ()
    """The snapshot's pod keys of this PodSet (pending ones held until admission, bound ones of
    an admitted workload), in snapshot order; may be fewer than ``count`` (a suspended job's pods
    are synthesized by the loader)."""


def domain_path(
    labels: Mapping[str, str], levels: tuple[str, ...], level: str
) -> tuple[str, ...] | None:
    """A node's domain at ``level`` of a Kueue Topology with ``levels``: the path of its label
    values from the top level down to ``level`` (Kueue's tree: two racks with the same label in two
    blocks are two domains); None when the node lacks one of those labels. A level the Topology
    does not list is its plain label value."""
    keys = levels[: levels.index(level) + 1] if level in levels else (level,)
    values = tuple(labels.get(k) for k in keys)
    return None if None in values else values  # type: ignore[return-value]


class TopologyDomainAssignment(_Frozen):
    values: tuple[str, ...]
    """One value per level of :attr:`TopologyAssignment.levels`."""
    count: int


class TopologyAssignment(_Frozen):
    levels: tuple[str, ...]
    domains: tuple[TopologyDomainAssignment, ...] = ()


class PodSetAdmission(_Frozen):
    name: str
    flavors: dict[str, str] = Field(default_factory=dict)
    """Resource -> flavor name."""
    resource_usage: Resources = Field(default_factory=dict)
    count: int | None = None
    topology_assignment: TopologyAssignment | None = None


class KueueAdmission(_Frozen):
    cluster_queue: str
    podsets: tuple[PodSetAdmission, ...] = ()


class KueueWorkload(_Frozen):
    """A Kueue ``Workload`` (read, or made by the loader for a job that carries the queue-name
    label and has none, as Kueue's job reconciler would)."""

    namespace: str
    name: str
    queue_name: str = ""
    priority: int = 0
    priority_class: str = ""
    creation_timestamp: str = ""
    podsets: tuple[KueuePodSet, ...] = ()
    admission: KueueAdmission | None = None
    """``status.admission`` with the QuotaReserved condition true: the workload holds quota."""
    reclaimable_pods: dict[str, int] = Field(default_factory=dict)
    """``status.reclaimablePods``: PodSet name -> pods that finished and no longer hold quota
    (Kueue's ReclaimablePods, GA in v0.17; ``pkg/workload/workload.go``,
    ``podSetsCountsAfterReclaim``)."""
    active: bool = True
    finished: bool = False
    owner: str | None = None
    """``Kind/name`` of the job it stands for."""
    synthesized: bool = False
    uid: str = ""
    """``metadata.uid`` of a Workload object (Kueue's last tie-break in queue order); empty for
    one gangplan made: Kueue would give it a random one."""
    annotations: dict[str, str] = Field(default_factory=dict)
    """The Workload object's annotations, or for a synthesized one its job's (where a scenario's
    ``gangplan.io/expect-kueue*`` expectations live)."""
    source: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def total_requests(self) -> Resources:
        out: dict[str, int] = {}
        for ps in self.podsets:
            for r, q in ps.requests.items():
                out[r] = out.get(r, 0) + q * ps.count
        return out


class KueueState(_Frozen):
    """Every Kueue object of a snapshot (``Cluster.kueue``; None when the snapshot has none)."""

    flavors: dict[str, ResourceFlavor] = Field(default_factory=dict)
    cluster_queues: dict[str, ClusterQueue] = Field(default_factory=dict)
    cohorts: dict[str, Cohort] = Field(default_factory=dict)
    local_queues: dict[str, LocalQueue] = Field(default_factory=dict)
    """``namespace/name`` -> LocalQueue."""
    workloads: dict[str, KueueWorkload] = Field(default_factory=dict)
    """``namespace/name`` -> Workload, in snapshot order."""
    workload_priority_classes: dict[str, int] = Field(default_factory=dict)
    """``WorkloadPriorityClass`` name -> value (a job's ``kueue.x-k8s.io/priority-class`` label
    names one; the loader has already resolved each workload's ``priority`` from it)."""
    version: str = DEFAULT_KUEUE_VERSION
    """The Kueue release whose admission is reproduced (one of :data:`KUEUE_VERSIONS`, or a patch
    release of one, ``0.18.4``: the flavor assigner tells some patches apart)."""

    def pod_owners(self) -> dict[str, tuple[str, str]]:
        """Pod key -> (Workload key, PodSet name) for every pod of a Workload."""
        return {
            k: (w.key, ps.name)
            for w in self.workloads.values()
            for ps in w.podsets
            for k in ps.pods
        }

    def cluster_queue_of(self, wl: KueueWorkload) -> ClusterQueue | None:
        lq = self.local_queues.get(f"{wl.namespace}/{wl.queue_name}")
        return self.cluster_queues.get(lq.cluster_queue) if lq else None

    def pending(self) -> tuple[KueueWorkload, ...]:
        return tuple(w for w in self.workloads.values() if w.admission is None and not w.finished)

    def admitted(self) -> tuple[KueueWorkload, ...]:
        return tuple(
            w for w in self.workloads.values() if w.admission is not None and not w.finished
        )
