"""The JSON documents gangplan prints besides the Result, as pydantic models with their schemas.

One naming convention everywhere: camelCase keys, as Kubernetes and the Result. Keys are a public
interface, only ever added from here on (docs/reference/json.md, "JSON contracts"); ``gangplan schema NAME`` prints
each schema with its ``$id``:

========== ================================================ =====================================
name       printed by                                       model
========== ================================================ =====================================
result     ``solve --json`` / ``--out``                     :class:`gangplan.models.result.Result`
diff       ``diff --json``                                  :class:`DiffDocument`
suite      ``diff --suite DIR --json``                      a list of :class:`SuiteRowDocument`
bench-row  ``bench --json`` (one per snapshot in the db)    a list of :class:`BenchRow`
inspect    ``inspect --json``                               :class:`InspectDocument`
violations ``validate --json``                              a list of :class:`ViolationDocument`
why        ``why --json``                                   :class:`WhyDocument`
========== ================================================ =====================================

Keys that hold data rather than names keep the data's spelling: objective tiers
(``admitted[p=100]``), plugin names, resource names, ``namespace/name`` keys, and a bench task's
generator parameters (as written in the suite file).

The diff and whatif documents are defined in :mod:`gangplan.models.diff_documents` and importable
from here, as every document is.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, RootModel

from gangplan.models.base import Document
from gangplan.models.diff_documents import (
    DIFF_SCHEMA_VERSION,
    Admission,
    DecisiveStep,
    DiffDocument,
    Engines,
    EngineSide,
    GroupDiff,
    GroupUse,
    NodeEvidence,
    NoEvidence,
    OptimalProof,
    PlacementEvaluation,
    PlacementEvidence,
    PreemptionEvidence,
    PreemptionUnit,
    SamplesDocument,
    SinglePodDiff,
    SuiteDocument,
    SuiteRowDocument,
    TierProof,
    VictimRow,
    WhatIfDocument,
    WhatIfRowDocument,
)
from gangplan.models.replay import ReplaySummary
from gangplan.models.result import PodOutcome, Result, result_json_schema
from gangplan.models.room import RoomDocument
from gangplan.models.trace import PodCycle

SCHEMA_BASE = "https://gangplan.io/schemas"


_Doc = Document
"""(:class:`gangplan.models.base.Document`, the one base of the printed documents.)"""


# ---- bench ------------------------------------------------------------------------------------
class BenchRun(_Doc):
    engine: str
    status: str
    objective: dict[str, float]
    admitted_groups: int
    groups: int
    placed_pods: int
    pending_pods: int
    placed_gpus: int
    victims: int
    gap: float | None = None
    violations: int
    wall_seconds: float


class BenchDiff(_Doc):
    classification: str
    gap: float | None = None
    problems: int
    first_problem: str | None = None
    decisive_step: int | None = None
    decisive_pod: str | None = None
    seconds: float


class BenchRow(_Doc):
    """One snapshot of a results database (``gangplan bench --json``): its task, the engine runs
    that finished, and the diff."""

    task_id: str
    family: str
    generator: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    seed: int
    status: Literal["ok", "error", "timeout", "crashed"]
    error: str | None = None
    nodes: int | None = None
    pending_pods: int | None = None
    groups: int | None = None
    gpus: int | None = None
    free_gpus: int | None = None
    time_limit: float | None = None
    wall_seconds: float | None = None
    finished_at: float | None = None
    runs: list[BenchRun] = Field(default_factory=list)
    diff: BenchDiff | None = None


class BenchRows(RootModel[list[BenchRow]]):
    pass


# ---- inspect / validate -----------------------------------------------------------------------
class NodeShape(_Doc):
    count: int
    gpu_model: str | None = None
    allocatable: dict[str, str]


class ResourceTotals(_Doc):
    allocatable: str
    requested: str
    free: str


class TopologyLevel(_Doc):
    label: str
    domains: int
    nodes_without_label: int
    free: dict[str, dict[str, int | str]] | None = None


class TopologySummary(_Doc):
    source: str
    levels: list[TopologyLevel]


class PendingGroup(_Doc):
    group: str
    exists: bool
    policy: str | None = None
    min_count: int | None = None
    pods: int
    pending: int
    bound: int
    gated: int
    priority: int | None = None
    topology_key: str | None = None
    parent: str | None = None
    requests: str


class Counts(_Doc):
    nodes: int
    unschedulable_nodes: int
    tainted_nodes: int
    bound_pods: int
    pending_pods: int
    gated_pods: int
    pod_groups: int
    composite_pod_groups: int
    priority_classes: int
    pod_disruption_budgets: int


class ProfileSummary(_Doc):
    scheduler_name: str
    source: str
    percentage_of_nodes_to_score: int | float | None = None
    fit_strategy: str
    fit_resources: dict[str, int]
    score_weights: dict[str, int]


class KubeVersionSummary(_Doc):
    """What the Nodes' kubelets say about the cluster's version, and the version a run would use."""

    suggested: str | None = None
    kubelets: dict[str, int]
    used: str
    modelled: list[str]
    api_versions: dict[str, int] = Field(default_factory=dict)
    """``Kind apiVersion`` -> objects of the scheduling kinds, and the pods' group link fields."""
    api_suggested: str | None = None
    """The newest release that serves every scheduling object of the snapshot."""
    not_served: list[str] = Field(default_factory=list)
    """What of the snapshot the reproduced release does not serve."""


class DomainGpus(_Doc):
    """One topology domain in ``inspect``'s fragmentation section (GPUs: whole ``nvidia.com/gpu``)."""

    domain: str
    """The domain id: its label values root to leaf joined by ``/`` (:mod:`gangplan.topology`)."""
    nodes: int
    gpus: int
    """GPUs allocatable on its nodes."""
    free: int
    """GPUs no bound pod requests."""
    idle_nodes: int
    """Its nodes with GPUs, every one free."""
    free_on_idle_nodes: int
    """The free GPUs on those nodes."""
    fragment_gpus: float | None = None
    """FGD fragment of its nodes against the pending mix (``None``: no pending pod)."""
    stranded_gpus: float | None = None
    """Free GPUs of its nodes that no GPU shape of the pending mix fits."""


class FragmentationLevel(_Doc):
    label: str
    nodes_without_label: int
    domains: list[DomainGpus]
    """Every domain of the level, the most free GPUs first."""


class PendingShape(_Doc):
    """One shape of the pending pods (the FGD simulator's ``PodResource``) and how many have it."""

    cpu: str
    """The non-zero cpu request (100m when none)."""
    gpus: int
    gpu_milli: int
    """Milli of each GPU (1000: whole GPUs; 0 without GPU)."""
    models: list[str] = Field(default_factory=list)
    """GPU models the pods accept (``nvidia.com/gpu.product``); empty: any."""
    pods: int
    share: float
    """Its pods over every pending pod: the shape's frequency in the mix."""


class FgdMeasure(_Doc):
    """The FGD fragmentation of the cluster against the pending mix (hkust-adsl/
    kubernetes-scheduler-simulator @29a1e4c ``pkg/utils/frag.go``, ``analysis.go``)."""

    idle_gpus: float
    fragment_gpus: float
    """Expected idle GPUs the next pod drawn from the mix could not use, summed over nodes."""
    fragmentation_rate: float
    """100 x fragment / idle (the simulator's ``Frag ratio``)."""
    fragment_share: float
    """100 x fragment / allocatable GPUs."""
    stranded_gpus: float
    """Idle GPUs on nodes no GPU shape of the mix fits."""


class GangShapeFit(_Doc):
    """A pending gang shape and the largest gang of it that fits now."""

    pods: int
    """The gang's minCount."""
    request: dict[str, str]
    """Each pod's request."""
    topology_key: str | None = None
    groups: list[str]
    """The pending gang PodGroups of this shape (the first one's pod is copied)."""
    bound: int
    """The most such pods one domain of the key holds by free allocatable alone."""
    cap: int | None = None
    """With ``--fit``: the trial gang's size (``bound`` capped)."""
    greedy: int | None = None
    """With ``--fit``: the largest gang (minCount = pods) kube-scheduler admits now."""
    exact: int | None = None
    """With ``--fit``: the exact engine's most pods of one gang in one domain."""
    proven: bool | None = None
    """With ``--fit``: ``exact`` is proven the maximum."""
    note: str | None = None
    """Why the engines did not run for this shape."""


class Fragmentation(_Doc):
    """``inspect``'s "how fragmented is the cluster" (:mod:`gangplan.fragmentation`)."""

    gpus: int
    free: int
    idle_nodes: int
    free_on_idle_nodes: int
    levels: list[FragmentationLevel]
    mix: list[PendingShape]
    fgd: FgdMeasure | None = None
    """``None`` when no pod is pending, or when a node claims more than 4,096 GPUs (FGD's
    per-device model is not built for it)."""
    gangs: list[GangShapeFit]
    fit: bool
    """Whether the engines ran (``inspect --fit``)."""


class KueueQuotaRow(_Doc):
    """One ClusterQueue's quota of one flavor and resource, with what its admitted Workloads use."""

    cluster_queue: str
    cohort: str | None = None
    flavor: str
    resource: str
    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None
    used: int
    """What the Workloads admitted before the snapshot hold (``status.admission``)."""
    available: int
    """What it can still admit now, cohort borrowing included (Kueue's ``Available``)."""


class KueueQueueRow(_Doc):
    cluster_queue: str
    strategy: str
    admitted: int
    pending: int
    local_queues: list[str] = Field(default_factory=list)


class KueueSummary(_Doc):
    """``inspect``'s Kueue part (issue 42): the queues and their quota as the snapshot has them."""

    version: str
    flavors: dict[str, dict[str, str]] = Field(default_factory=dict)
    """Flavor -> its node labels (with ``topology`` for a TAS flavor's Topology)."""
    queues: list[KueueQueueRow] = Field(default_factory=list)
    quota: list[KueueQuotaRow] = Field(default_factory=list)


class InspectDocument(_Doc):
    """``gangplan inspect --json``."""

    sources: list[str]
    counts: Counts
    skipped_kinds: dict[str, int]
    node_shapes: list[NodeShape]
    resources: dict[str, ResourceTotals]
    topology: TopologySummary
    pending_groups: list[PendingGroup]
    single_pending_pods: int
    gated: dict[str, str]
    profile: ProfileSummary
    warnings: list[str] = Field(default_factory=list)
    """Inputs that can change scheduling but gangplan does not model."""
    translations: list[str] = Field(default_factory=list)
    """Foreign group APIs and workload controllers read as native groups, one line per kind."""
    kube_version: KubeVersionSummary | None = None
    """The kube-scheduler version a run would reproduce and the one the kubelets suggest."""
    fragmentation: Fragmentation | None = None
    """How fragmented the cluster is: free GPUs per domain, FGD fragmentation against the
    pending mix, the largest gang of each pending shape that fits now."""
    kueue: KueueSummary | None = Field(default=None, exclude_if=lambda v: v is None)
    """With Kueue objects (absent otherwise): flavors, queues and their quota."""


class ViolationDocument(_Doc):
    rule: str
    subject: str
    message: str
    kind: str = "Pod"
    """What ``subject`` names: ``Pod``, ``Node``, ``PodGroup`` or ``CompositePodGroup``."""
    name: str = ""
    """That object's key (``namespace/name``; a node's name): ``subject`` without the kind."""


class Violations(RootModel[list[ViolationDocument]]):
    pass


class WhyDocument(_Doc):
    """``gangplan why SNAPSHOT POD --json``: what ``why`` prints, as data."""

    pod: str
    snapshot: str
    kube_version: str
    """The kube-scheduler release the greedy run reproduced."""
    outcome: PodOutcome | None = None
    """The pod's entry of the Result (``pods[pod]``); null for a pod that was not pending."""
    context: list[str] = Field(default_factory=list)
    """Its group's record and where the pod's cycle ran in it, as ``why`` prints them."""
    cycle: PodCycle | None = None
    """The pod's entry of the Result's greedy trace (``trace.pods[pod]``), null when its cycle never ran."""
    details: dict[str, str] = Field(default_factory=dict)
    """Upstream reason -> what blocked the pod behind it (the most frequent cause, on how many nodes)."""
    placements: list[str] = Field(default_factory=list)
    """For a pod of a topology-constrained group: every placement tried, its verdict and score, and the one chosen and why."""


# ---- schemas ----------------------------------------------------------------------------------
SCHEMAS: dict[str, tuple[type[BaseModel], str]] = {
    "result": (Result, "gangplan solve --json / --out: one engine's Result"),
    "diff": (DiffDocument, "gangplan diff --json"),
    "suite": (SuiteDocument, "gangplan diff --suite DIR --json"),
    "bench-row": (BenchRows, "gangplan bench --json: every snapshot of the results database"),
    "inspect": (InspectDocument, "gangplan inspect --json"),
    "violations": (Violations, "gangplan validate --json"),
    "whatif": (WhatIfDocument, "gangplan whatif --json: one row per variant"),
    "replay": (ReplaySummary, "gangplan replay --out DIR: DIR/summary.json"),
    "why": (WhyDocument, "gangplan why SNAPSHOT POD --json"),
    "make-room": (RoomDocument, "gangplan make-room --json"),
}


def schema_id(name: str) -> str:
    return f"{SCHEMA_BASE}/{name}-v1.json"


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12, from the pydantic model) of document ``name``, with ``$id``."""
    if name not in SCHEMAS:
        raise KeyError(name)
    model, what = SCHEMAS[name]
    schema = (
        result_json_schema()
        if model is Result
        else model.model_json_schema(by_alias=True, mode="serialization")
    )
    out = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": schema_id(name)}
    out.update(schema)
    out.setdefault("description", what)
    return out


__all__ = [
    "Admission",
    "BenchDiff",
    "BenchRow",
    "BenchRun",
    "DIFF_SCHEMA_VERSION",
    "DecisiveStep",
    "DiffDocument",
    "EngineSide",
    "Engines",
    "GroupDiff",
    "GroupUse",
    "InspectDocument",
    "NoEvidence",
    "NodeEvidence",
    "OptimalProof",
    "PlacementEvaluation",
    "PlacementEvidence",
    "PreemptionEvidence",
    "PreemptionUnit",
    "SCHEMAS",
    "SamplesDocument",
    "SinglePodDiff",
    "SuiteDocument",
    "SuiteRowDocument",
    "TierProof",
    "VictimRow",
    "ViolationDocument",
    "WhatIfDocument",
    "WhatIfRowDocument",
    "WhyDocument",
    "json_schema",
    "schema_id",
]
