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
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

from gangplan.models.base import Document
from gangplan.models.replay import ReplaySummary
from gangplan.models.result import PodOutcome, Result, result_json_schema
from gangplan.models.room import RoomDocument
from gangplan.models.trace import PodCycle

if TYPE_CHECKING:
    from gangplan.models.groups import VictimUnit

SCHEMA_BASE = "https://gangplan.io/schemas"
DIFF_SCHEMA_VERSION = 1


_Doc = Document
"""(:class:`gangplan.models.base.Document`, the one base of the printed documents.)"""


# ---- diff ------------------------------------------------------------------------------------
class GroupDiff(_Doc):
    """One PodGroup with pending pods: its outcome in each engine."""

    group: str
    min_count: int
    greedy_admitted: bool
    optimal_admitted: bool
    greedy_placed: int
    optimal_placed: int
    greedy_domain: str | None = None
    optimal_domain: str | None = None
    greedy_reason: str | None = None
    optimal_reason: str | None = None
    priority: int = 0
    differs: bool = False
    """Admission, placed count or domain differ between the engines."""


class SinglePodDiff(_Doc):
    """A pending pod outside any PodGroup: its node, or the reason it has none, per engine."""

    pod: str
    greedy_node: str | None = None
    optimal_node: str | None = None
    greedy_reason: str | None = None
    optimal_reason: str | None = None
    priority: int = 0
    differs: bool = False


class GroupUse(_Doc):
    """The capacity a group's placed pods take in one engine's result."""

    group: str
    pods: int
    nodes: list[str] = Field(default_factory=list)
    domain: str | None = None
    requests: dict[str, str] = Field(default_factory=dict)
    """Resource -> total request of the placed pods (Kubernetes quantity)."""


class Admission(_Doc):
    """Which groups each engine admits (PodGroup keys, each list sorted)."""

    greedy: list[str] = Field(default_factory=list)
    optimal: list[str] = Field(default_factory=list)
    only_greedy: list[str] = Field(default_factory=list)
    only_optimal: list[str] = Field(default_factory=list)
    first_given_up: GroupUse | None = None
    """The first group, in greedy's queue order, that greedy admits and the optimum does not,
    with the capacity it takes in greedy's result."""


class VictimRow(_Doc):
    """The printed row of one victim unit (the unit itself is defined once, as the rules'
    :class:`gangplan.models.groups.VictimUnit`): pods evicted together, a pod alone or every
    scheduled pod under the highest ``disruptionMode: all`` group (KEP-5710). Its JSON Schema
    keeps the title ``VictimUnit``."""

    model_config = ConfigDict(title="VictimUnit")

    unit: str
    """``namespace/name`` of the pod, or of the group whose pods go together."""
    kind: Literal["Pod", "PodGroup", "CompositePodGroup"] = "Pod"
    priority: int
    pods: list[str]

    @classmethod
    def of(cls, unit: VictimUnit) -> VictimRow:
        """The printed form of the rules' unit: ``kind`` is ``Pod`` for a pod evicted alone (inside a
        ``disruptionMode: single`` group too), else the kind of the group whose pods go together."""
        return cls(
            unit=unit.key.key,
            kind="Pod" if unit.key.is_pod else str(unit.key.kind),
            priority=unit.priority,
            pods=sorted(p.key for p in unit.pods),
        )


class EngineSide(_Doc):
    """One engine's result in numbers, and what it disrupts."""

    status: str
    admitted_groups: int
    placed_pods: int
    single_pods_placed: int
    victims: list[VictimRow] = Field(default_factory=list)
    victims_by_priority: dict[str, int] = Field(default_factory=dict)
    """Priority (as a string key) -> evicted pods, highest priority first."""
    pdb_violations: int = 0
    """Per PodDisruptionBudget, evicted matching pods beyond ``disruptionsAllowed``, summed (the
    ``pdbViolations`` tier)."""
    broken_groups: list[str] = Field(default_factory=list)
    """Gangs (and ``disruptionMode: all`` groups) that lose at least one pod (what the
    ``brokenGroups`` tier counts)."""


class Engines(_Doc):
    greedy: EngineSide
    optimal: EngineSide


class _Evidence(_Doc):
    """A typed evidence record that also reads as a mapping, by JSON key or field name
    (``step.placement["misledBy"]``, ``.get("total")``, ``"total" in node``): both ways of
    reading it are part of the Python API."""

    def _field(self, key: str) -> str:
        fields = type(self).model_fields
        if key in fields:
            return key
        for name, f in fields.items():
            if f.alias == key:
                return name
        raise KeyError(key)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._field(key))

    def __contains__(self, key: object) -> bool:
        try:
            self._field(str(key))
        except KeyError:
            return False
        return True

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default


class NodeEvidence(_Evidence):
    """One node evaluated for the decisive pod just before its cycle
    (:func:`gangplan.solver.greedy.pod_scores_at_step`): feasible or why not, and its weighted
    score per plugin, normalised over every node feasible at that step."""

    feasible: bool
    reason: str | None
    scores: dict[str, int]
    total: int


class NoEvidence(_Evidence):
    """No node evidence (``{}``): the node was not evaluated, or there is no such node. False in
    a boolean test, as an empty mapping is."""

    def __bool__(self) -> bool:
        return False


class PlacementEvaluation(_Evidence):
    """One topology domain as greedy's placement algorithm evaluated it (``NotEvaluated`` when it
    was not generated, or the nominated placement won first)."""

    nodes: int | None = None
    status: str
    reason: str | None
    assigned: int
    scores: dict[str, int]
    total: int | None


class PlacementEvidence(_Evidence):
    """Why greedy put a topology-constrained group where it did
    (:func:`gangplan.solver.greedy.placement_evidence`): the first group up the CompositePodGroup
    chain whose key separates greedy's node from the optimum's, the two domains (label values),
    greedy's decision there, and the placement plugin that favoured greedy's domain the most."""

    group: str
    key: str
    greedy: str | None
    optimal: str | None
    chosen: str | None
    scored: bool
    tie_count: int
    generated: int
    placements: dict[str, PlacementEvaluation]
    misled_by: str | None


class PreemptionUnit(_Evidence):
    """A victim unit in the preemption evidence: ``unit`` is the unit's entity (``pod:<key>`` for
    a pod alone), ``name`` its key, ``kind`` the rules' unit kind
    (:class:`gangplan.models.groups.VictimUnit`: ``PodGroup`` for a member of a Single-mode group)."""

    unit: str
    name: str
    kind: str
    priority: int
    pods: list[str]

    @classmethod
    def of(cls, unit: VictimUnit) -> PreemptionUnit:
        return cls(
            unit=str(unit.key),
            name=unit.key.key,
            kind=unit.kind,
            priority=unit.priority,
            pods=[q.key for q in unit.pods],
        )


class PreemptionEvidence(_Evidence):
    """Greedy's victim choice for the decisive pod's entity against the optimum's: ``path``
    ``workload`` (workload-aware preemption) or ``pod`` (default preemption), greedy's nominated
    ``nodes`` and ``victims``, the ``criterion`` that picked them (for default preemption,
    upstream's ``pickOneNodeForPreemption`` criterion that separated greedy's node from the
    optimum's), and the optimum's nodes and victims."""

    entity: str
    path: str
    nodes: list[str]
    victims: list[PreemptionUnit]
    pdb_violations: int
    criterion: str
    optimal_nodes: list[str]
    optimal_victims: list[PreemptionUnit]


class DecisiveStep(_Doc):
    """The earliest greedy choice no optimal placement shares, or why the difference is admission.

    ``kind``: ``placement`` (the optimum that agrees with every earlier choice puts ``pod`` on
    ``optimalNode``, or leaves it out while admitting its group: ``optimalNode`` null), or
    ``admission`` (it leaves ``pod``'s group out: the difference is which groups get admitted;
    also used, with ``pod`` null, when every candidate choice is shared by an optimum). ``groupOutcomeDiffers`` says whether ``group`` (the pod itself for a single pod)
    ends differently in greedy's result and in that optimum; ``why`` explains the step in words,
    and always when the group's outcome does not differ.
    """

    kind: Literal["placement", "admission"] = "placement"
    step: int | None = None
    """1-based index of the choice among greedy's successful pod choices (scheduling order)."""
    pod: str | None = None
    group: str | None = None
    greedy_node: str | None = None
    optimal_node: str | None = None
    group_outcome_differs: bool = False
    why: str | None = None
    greedy_scores: NodeEvidence | NoEvidence = Field(default_factory=NoEvidence)
    """Greedy's node evaluated just before the decisive pod's cycle (``{}`` when not evaluated)."""
    optimal_scores: NodeEvidence | NoEvidence = Field(default_factory=NoEvidence)
    """The optimum's node evaluated at the same moment (``{}`` when the optimum leaves the pod out)."""
    failed_pod: str | None = None
    failed_reason: str | None = None
    probes: int = 0
    unproven_probes: int = 0
    """Probes that answered "no" without a proof (their solve ended below the optimum but not
    proven below it, within ``--probe-time-limit``): with any, the step found may come earlier
    than the true one; a larger ``--probe-time-limit`` decides them."""
    candidates: int = 0
    """Greedy choices searched: those kept in greedy's result or of a group the optimum admits."""
    skipped: int = 0
    """Tentative choices of groups greedy reverted and the optimum does not admit (not searched)."""
    placement: PlacementEvidence | None = None
    """For a topology-constrained group: the two domains, their placement scores and the
    placement plugin that favoured greedy's domain (``misledBy``)."""
    preemption: PreemptionEvidence | None = None
    """When greedy's preemption chose victims the optimum does not
    (:func:`gangplan.solver.diff.evidence.preemption_evidence`)."""


class TierProof(_Doc):
    """One objective tier of the exact engine's answer: what was found, the best bound, and
    whether the tier is proven (every tier solved before it proven too)."""

    tier: str
    optimal: float
    """The value of the best placement found (costs: the cost)."""
    bound: float | None = None
    """The best bound the solver proved (costs: the lowest cost possible); None when none was."""
    greedy: float | None = None
    """Greedy's value of the tier; None for the exact engine's own tiers (``gpus``,
    ``topology``, ``spread``, ``tiebreak``), which the verdict does not compare."""
    proven: bool
    """The value is optimal given the tiers above it, and they are proven."""
    compared: bool
    """The verdict compares this tier (greedy carries it)."""


class OptimalProof(_Doc):
    """What the exact engine proved, tier by tier (``diff --json`` ``optimalProof``): a verdict
    that greedy does as well as any placement (``identical``, ``tie-break``, ``equivalent``)
    needs every compared tier proven; otherwise it is ``unproven``."""

    proven: bool
    """Every tier the verdict compares is proven."""
    open_tiers: list[str] = Field(default_factory=list)
    """Compared tiers not proven, highest first."""
    first_open: str | None = None
    might_gain: float | None = None
    """At ``firstOpen``: how much better than greedy a placement might still be there (the bound
    minus greedy's value; for a cost, greedy's value minus the bound)."""
    stopped_by: Literal["proof", "work-limit", "wall-clock", "no-solution"] = "proof"
    """What ended the exact search: every decision tier proven (``proof``), the deterministic
    work limit (``work-limit``), the wall-clock cap (``wall-clock``: the answer may differ on
    another machine or under another load), or nothing found at all (``no-solution``)."""
    advice: str | None = None
    """What to do when a tier is open, in words (also printed by the table)."""
    tiers: list[TierProof] = Field(default_factory=list)


class SamplesDocument(_Doc):
    """``diff --samples K`` / ``solve --samples K``: K greedy runs with seeded random ties (and, in
    v1.36, seeded gang pod orders); how often each root group is admitted and each single pod placed."""

    runs: int
    seeds: list[int]
    """First and last seed."""
    tie_break: str = "random"
    kube_version: str
    admitted: dict[str, int]
    placed: dict[str, int] = Field(default_factory=dict)
    reaches_optimum: int | None = None
    """Runs whose objective equals the optimum's (diff only)."""


class DiffDocument(_Doc):
    """``gangplan diff --json``."""

    schema_version: int = DIFF_SCHEMA_VERSION
    snapshot: str
    classification: Literal[
        "identical",
        "tie-break",
        "equivalent",
        "greedy-suboptimal",
        "greedy-suboptimal-sometimes",
        "model-mismatch",
        "unproven",
    ]
    optimal_status: str
    gap: float | None = None
    seconds: float
    greedy_objective: dict[str, float]
    optimal_objective: dict[str, float]
    problems: list[str] = Field(default_factory=list)
    groups: list[GroupDiff] = Field(default_factory=list)
    single_pods: list[SinglePodDiff] = Field(default_factory=list)
    admission: Admission = Field(default_factory=Admission)
    engines: Engines
    decisive: DecisiveStep | None = None
    warnings: list[str] = Field(default_factory=list)
    """Inputs of the snapshot gangplan does not model (``Cluster.warnings``), as in the Results."""
    kube_version: str | None = None
    """The kube-scheduler version the greedy run reproduced."""
    samples: SamplesDocument | None = None
    """With ``--samples K``: how often greedy admits each group over random ties and pod orders."""
    optimal_proof: OptimalProof | None = None
    """What the exact engine proved, per tier (:class:`OptimalProof`)."""
    greedy: Result | None = None
    """The greedy Result (absent in ``diff --suite`` rows)."""
    optimal: Result | None = None
    """The exact Result (absent in ``diff --suite`` rows)."""


class SuiteRowDocument(_Doc):
    """One scenario of ``gangplan diff --suite DIR --json``."""

    scenario: str
    error: str | None = None
    expectations: int = 0
    failures: list[str] = Field(default_factory=list)
    seconds: float = 0.0
    diff: DiffDocument | None = None

    def dump(self, **kw: Any) -> dict[str, Any]:
        """The row as printed: its diff's keys without ``greedy`` and ``optimal`` (``diff --json``
        holds the Results; a suite row never does)."""
        return super().dump(exclude={"diff": {"greedy", "optimal"}}, **kw)


class SuiteDocument(RootModel[list[SuiteRowDocument]]):
    pass


# ---- whatif -----------------------------------------------------------------------------------
class WhatIfRowDocument(_Doc):
    """One variant of ``gangplan whatif --json``: the snapshot (``variant`` "snapshot") or a
    variant laid over it, diffed with the same options."""

    variant: str
    classification: str
    groups: int
    """PodGroups with pending pods (the diff's group rows)."""
    greedy_admitted: int
    optimal_admitted: int
    greedy_placed: int
    optimal_placed: int
    greedy_victims: int
    optimal_victims: int
    greedy_idle_gpus: int
    """``nvidia.com/gpu`` allocatable and unused after greedy's placements and evictions."""
    optimal_idle_gpus: int
    decisive: Literal["placement", "admission"] | None = None
    """The kind of the diff's decisive step; null when greedy matches the optimum."""
    proven: bool | None = None
    """Every tier the diff compares is proven (the diff's ``optimalProof.proven``)."""
    advice: str | None = None
    """When not proven: the open tier in words and what to do (``optimalProof.advice``)."""
    notes: list[str] = Field(default_factory=list)
    """What the variant changed beyond its objects (evicted pods)."""
    warnings: list[str] = Field(default_factory=list)
    """The loaded variant's warnings (inputs not modelled, unknown fields, version hints)."""


class WhatIfDocument(RootModel[list[WhatIfRowDocument]]):
    pass


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
    """``None`` when no pod is pending."""
    gangs: list[GangShapeFit]
    fit: bool
    """Whether the engines ran (``inspect --fit``)."""


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
    "DecisiveStep",
    "DiffDocument",
    "EngineSide",
    "Engines",
    "GroupDiff",
    "GroupUse",
    "InspectDocument",
    "NoEvidence",
    "NodeEvidence",
    "PlacementEvaluation",
    "PlacementEvidence",
    "PreemptionEvidence",
    "PreemptionUnit",
    "SCHEMAS",
    "SinglePodDiff",
    "SuiteRowDocument",
    "VictimRow",
    "ViolationDocument",
    "WhatIfDocument",
    "WhatIfRowDocument",
    "WhyDocument",
    "json_schema",
    "schema_id",
]
