"""The Kubernetes objects gangplan reads, reduced to the fields placement depends on.

These are *normalised* views built by :mod:`gangplan.io.loader`: quantities are already scheduler
integers (cpu in millicores, memory and storage in bytes), a pod's request is already the effective
request (max of containers and init containers, plus overhead), priorities are already resolved from
PriorityClasses. Field names follow the Kubernetes API in snake_case.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Resources = dict[str, int]
"""Resource name -> scheduler integer (cpu in millicores, memory/ephemeral-storage in bytes)."""

CPU, MEMORY, PODS, EPHEMERAL = "cpu", "memory", "pods", "ephemeral-storage"
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
"""A container's cpu / memory as scoring counts it when it requests none
(``pkg/scheduler/util/pod_resources.go``, ``GetNonzeroRequests``: 100m, 200Mi; v1.35-v1.37)."""

PreemptionPolicy = Literal["PreemptLowerPriority", "Never"]
"""core/v1 ``PreemptionPolicy`` (pods, PriorityClasses, PodGroups): the one vocabulary."""
PREEMPT_LOWER_PRIORITY: PreemptionPolicy = "PreemptLowerPriority"
NEVER: PreemptionPolicy = "Never"
PREEMPTION_POLICIES: tuple[PreemptionPolicy, ...] = (PREEMPT_LOWER_PRIORITY, NEVER)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Taint(_Frozen):
    key: str
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]

    def display(self) -> str:
        """The taint as upstream prints it in FitError messages: ``{key: value}``."""
        return f"{{{self.key}: {self.value}}}"


class Toleration(_Frozen):
    key: str = ""
    operator: Literal["Exists", "Equal"] = "Equal"
    value: str = ""
    effect: str = ""  # "" tolerates every effect


class Requirement(_Frozen):
    """A NodeSelectorRequirement or LabelSelectorRequirement."""

    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    values: tuple[str, ...] = ()


class NodeSelectorTerm(_Frozen):
    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()


class PreferredSchedulingTerm(_Frozen):
    weight: int
    preference: NodeSelectorTerm


class LabelSelector(_Frozen):
    """A metav1.LabelSelector. ``None`` where a selector is optional means "matches nothing"."""

    match_labels: dict[str, str] = Field(default_factory=dict)
    match_expressions: tuple[Requirement, ...] = ()


class PodAffinityTerm(_Frozen):
    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    topology_key: str


class WeightedPodAffinityTerm(_Frozen):
    weight: int
    term: PodAffinityTerm


class Affinity(_Frozen):
    node_required: tuple[NodeSelectorTerm, ...] | None = None  # None: no required node affinity
    node_preferred: tuple[PreferredSchedulingTerm, ...] = ()
    pod_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    pod_anti_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_anti_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()

    @property
    def has_pod_terms(self) -> bool:
        return bool(
            self.pod_affinity_required
            or self.pod_affinity_preferred
            or self.pod_anti_affinity_required
            or self.pod_anti_affinity_preferred
        )


class TopologySpreadConstraint(_Frozen):
    max_skew: int
    topology_key: str
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"]
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: Literal["Honor", "Ignore"] = "Honor"
    node_taints_policy: Literal["Honor", "Ignore"] = "Ignore"


class HostPort(_Frozen):
    port: int
    protocol: str = "TCP"
    host_ip: str = "0.0.0.0"


class Node(_Frozen):
    name: str
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    allocatable: Resources = Field(default_factory=dict)
    images: dict[str, int] = Field(default_factory=dict)  # image name -> size in bytes
    kubelet_version: str = ""
    """``status.nodeInfo.kubeletVersion`` (``v1.36.2``), what ``inspect`` reads the cluster's version from."""
    source: str = ""


class Pod(_Frozen):
    namespace: str
    name: str
    uid: str = ""
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    creation_timestamp: str = ""
    node_name: str | None = None
    requests: Resources = Field(default_factory=dict)
    """Effective request used by Filter (NodeResourcesFit) and the capacity rule."""
    nonzero_requests: Resources = Field(default_factory=dict)
    """cpu/memory with upstream's non-zero defaults (100m, 200Mi) per container, used by scoring."""
    node_selector: dict[str, str] = Field(default_factory=dict)
    affinity: Affinity = Field(default_factory=Affinity)
    tolerations: tuple[Toleration, ...] = ()
    priority: int = 0
    priority_class_name: str = ""
    scheduler_name: str = "default-scheduler"
    preemption_policy: PreemptionPolicy = PREEMPT_LOWER_PRIORITY
    host_ports: tuple[HostPort, ...] = ()
    topology_spread: tuple[TopologySpreadConstraint, ...] = ()
    pod_group: str | None = None  # PodGroup name in the pod's namespace
    workload_ref: tuple[str, str, str] | None = None
    """v1.35 (``scheduling.k8s.io/v1alpha1``) ``spec.workloadRef``: (Workload name, podGroup,
    podGroupReplicaKey). The loader turns it into ``pod_group`` (see :mod:`gangplan.io.v1alpha1`)."""
    scheduling_gates: tuple[str, ...] = ()
    phase: str = "Pending"
    start_time: str | None = None
    nominated_node_name: str | None = None
    terminating: bool = False
    images: tuple[str, ...] = ()
    owner_kind: str | None = None
    source: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def group_key(self) -> str | None:
        return f"{self.namespace}/{self.pod_group}" if self.pod_group else None

    @property
    def bound(self) -> bool:
        return self.node_name is not None


class GroupClaim(_Frozen):
    """One ``PodGroup.spec.resourceClaims`` entry (KEP-5729, ``k8s.io/api`` ``scheduling``
    ``PodGroupResourceClaim``: v1alpha2 in v1.36, v1alpha3 / v1beta1 in v1.37; gate
    DRAWorkloadResourceClaims): one ResourceClaim for the whole group, named directly or made from
    a template. A pod of the group uses it by a ``spec.resourceClaims`` entry with the same name
    and the same claim or template."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None
    generated: str | None = None
    """The claim made from the template, when ``status.resourceClaimStatuses`` names it."""


class PodGroup(_Frozen):
    namespace: str
    name: str
    uid: str = ""
    policy: Literal["basic", "gang"] = "basic"
    min_count: int = 1
    """Gang minCount; 1 for basic groups (upstream's PlacementFeasible uses M = 1)."""
    disruption_mode: Literal["single", "all"] = "single"
    priority: int = 0
    priority_class_name: str = ""
    preemption_policy: PreemptionPolicy | None = None
    topology_key: str | None = None
    parent: str | None = None  # CompositePodGroup name in the same namespace
    workload_ref: str | None = None
    creation_timestamp: str = ""
    annotations: dict[str, str] = Field(default_factory=dict)
    api_version: str = ""
    """The apiVersion it was read from; ``scheduling.k8s.io/v1alpha1`` for a v1.35 gang synthesized
    from a Workload's ``spec.podGroups`` (v1.35 has no PodGroup object and no group validation)."""
    source: str = ""
    resource_claims: tuple[GroupClaim, ...] = ()
    """``spec.resourceClaims``: claims shared by every pod of the group (:class:`GroupClaim`)."""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class CompositePodGroup(_Frozen):
    namespace: str
    name: str
    uid: str = ""
    policy: Literal["basic", "gang"] = "basic"
    min_group_count: int = 1
    disruption_mode: Literal["single", "all"] = "single"
    priority: int = 0
    priority_class_name: str = ""
    preemption_policy: PreemptionPolicy | None = None
    topology_key: str | None = None
    parent: str | None = None
    workload_ref: str | None = None
    creation_timestamp: str = ""
    source: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class Workload(_Frozen):
    namespace: str
    name: str
    pod_group_templates: tuple[str, ...] = ()
    composite_pod_group_templates: tuple[str, ...] = ()
    pod_groups_v1alpha1: dict[str, tuple[str, int]] = Field(default_factory=dict)
    """v1.35 ``spec.podGroups[]``: name -> (policy, minCount; 1 for basic)."""
    source: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class PriorityClass(_Frozen):
    name: str
    value: int
    global_default: bool = False
    preemption_policy: PreemptionPolicy = PREEMPT_LOWER_PRIORITY
    source: str = ""


class PodDisruptionBudget(_Frozen):
    namespace: str
    name: str
    selector: LabelSelector | None = None
    min_available: str | None = None
    max_unavailable: str | None = None
    disruptions_allowed: int = 0
    disrupted_pods: tuple[str, ...] = ()
    source: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class Namespace(_Frozen):
    name: str
    labels: dict[str, str] = Field(default_factory=dict)


class TopologyLevels(_Frozen):
    """A Kueue ``Topology``: node label keys ordered from the coarsest level to the finest."""

    name: str
    levels: tuple[str, ...]
    source: str = ""


FitStrategy = Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]


class UtilizationShapePoint(_Frozen):
    utilization: int
    score: int


DEFAULT_SCORE_WEIGHTS: dict[str, int] = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "NodeResourcesFit": 1,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
}
"""Score weights of the default profile (``pkg/scheduler/apis/config/v1/default_plugins.go``)."""

DEFAULT_FILTER_PLUGINS: tuple[str, ...] = (
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "PodTopologySpread",
    "InterPodAffinity",
)

DEFAULT_PLACEMENT_WEIGHTS: dict[str, int] = {"PlacementBinPacking": 1, "PodGroupPodsCount": 1}
"""``placementScore`` of the default profile, in the order the trace lists the scores: equal
weights (public docs ``topology-aware-scheduling.md`` @015c39bd: "By default, the
NodeResourcesFit and PodGroupPodsCount plugins are configured with equal weights")."""

DEFAULT_PLACEMENT_GENERATE_PLUGINS: tuple[str, ...] = ("TopologyPlacementGenerator",)
"""``placementGenerate`` of the default profile (feature gate TopologyAwareWorkloadScheduling on)."""

PLACEMENT_PLUGIN_ALIASES: dict[str, str] = {
    "NodeResourcesFit": "PlacementBinPacking",
    "TopologyPlacement": "TopologyPlacementGenerator",
}
"""Names the v1.36 documentation gives the placement plugins, mapped to the plugin that does the
work: in v1.36 NodeResourcesFit itself implemented PlacementScore (master splits it out as
PlacementBinPacking, ``placement_bin_packing.go`` @128a49b7) and the docs call the generator
TopologyPlacement (``names.TopologyPlacementGenerator`` in code). ``placementScore`` and
``placementGenerate`` entries are read through this map, so either name configures one plugin."""

DEFAULT_POST_FILTER_PLUGINS: tuple[str, ...] = ("DefaultPreemption",)
"""PostFilter of the default profile (``default_plugins.go``): DefaultPreemption, which with the
GenericWorkload feature also runs workload-aware preemption (KEP-5710) for pod groups."""


class SchedulerProfile(_Frozen):
    """The first profile of a KubeSchedulerConfiguration, or upstream's defaults."""

    scheduler_name: str = "default-scheduler"
    percentage_of_nodes_to_score: int = 0  # 0 = adaptive
    filter_plugins: tuple[str, ...] = DEFAULT_FILTER_PLUGINS
    score_weights: dict[str, int] = Field(default_factory=lambda: dict(DEFAULT_SCORE_WEIGHTS))
    fit_strategy: FitStrategy = "LeastAllocated"
    fit_resources: dict[str, int] = Field(default_factory=lambda: {CPU: 1, MEMORY: 1})
    balanced_resources: dict[str, int] = Field(default_factory=lambda: {CPU: 1, MEMORY: 1})
    requested_to_capacity_shape: tuple[UtilizationShapePoint, ...] = ()
    placement_weights: dict[str, int] = Field(
        default_factory=lambda: dict(DEFAULT_PLACEMENT_WEIGHTS)
    )
    """``placementScore``: plugin -> weight, in order (an alias of :data:`PLACEMENT_PLUGIN_ALIASES`
    counts as its plugin; a later entry for the same plugin wins)."""
    placement_generate_plugins: tuple[str, ...] = DEFAULT_PLACEMENT_GENERATE_PLUGINS
    """``placementGenerate``: the PlacementGenerate plugins, in order (several are merged)."""
    post_filter_plugins: tuple[str, ...] = DEFAULT_POST_FILTER_PLUGINS
    source: str = "defaults"

    @property
    def preemption(self) -> bool:
        """Whether the profile preempts: DefaultPreemption is enabled at PostFilter."""
        return "DefaultPreemption" in self.post_filter_plugins

    def resolve_preemption(self, override: bool | None) -> tuple[bool, str]:
        """(preemption on?, where that came from): an explicit flag wins, else the profile."""
        if override is not None:
            return override, "flag"
        return self.preemption, "profile" if self.source != "defaults" else "default profile"
