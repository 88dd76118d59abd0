"""The documents of ``gangplan diff`` and ``gangplan whatif`` (:mod:`gangplan.models.documents`
lists every printed document and re-exports these): the diff's rows per group and single pod,
each engine's side, the decisive step with its evidence, the exact engine's proof per tier,
greedy's samples, a suite row, and one whatif variant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field, RootModel

from gangplan.models.base import Document as _Doc
from gangplan.models.result import Result

if TYPE_CHECKING:
    from gangplan.models.groups import VictimUnit

DIFF_SCHEMA_VERSION = 1


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
    stopped_by: Literal["proof", "work-limit", "wall-clock", "no-solution", "restricted-model"] = (
        "proof"
    )
    """What ended the exact search: every decision tier proven (``proof``), the deterministic
    work limit (``work-limit``), the wall-clock cap (``wall-clock``: the answer may differ on
    another machine or under another load), or nothing found at all (``no-solution``); or
    ``restricted-model`` (added): the exact model leaves part of the snapshot out (devices it does
    not offer), so whatever it proved holds for less than the snapshot and no tier is proven."""
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


class KueueStep(_Doc):
    """The first of Kueue's admission choices the optimum makes otherwise (issue 42)."""

    workload: str
    cycle: int | None = None
    greedy: str
    """What Kueue did with it: ``admitted: flavors ...; domain ...`` or ``refused: <message>``."""
    optimal: str
    """What the optimum does with it."""
    refused: list[str] = Field(default_factory=list)
    """Workloads the optimum admits and Kueue refused, with Kueue's message."""


class KueueDiff(_Doc):
    """Kueue's admission against the optimum's, per Workload (absent without Kueue objects)."""

    version: str
    workloads: int
    greedy_admitted: int
    optimal_admitted: int
    only_greedy: list[str] = Field(default_factory=list)
    only_optimal: list[str] = Field(default_factory=list)
    other_flavor: list[str] = Field(default_factory=list)
    """Admitted by both, with other flavors or domains."""
    decisive: KueueStep | None = None
    greedy_running: int = 0
    """Workloads with every pod on a node after the greedy run (Kueue admits by quota; kube-
    scheduler may then place only part of a Workload)."""
    optimal_running: int = 0


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
    kueue: KueueDiff | None = Field(default=None, exclude_if=lambda v: v is None)
    """Kueue's admission against the optimum's (issue 42; absent without Kueue objects)."""


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
    kueue: KueueDiff | None = Field(default=None, exclude_if=lambda v: v is None)
    """With Kueue objects: Kueue's admission against the optimum's in this variant (the
    diff's ``kueue``; issue 42)."""
    kueue_pending: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)
    """Workloads Kueue leaves pending in this variant (absent when none)."""


class WhatIfDocument(RootModel[list[WhatIfRowDocument]]):
    pass


__all__ = [
    "Admission",
    "DIFF_SCHEMA_VERSION",
    "DecisiveStep",
    "DiffDocument",
    "EngineSide",
    "Engines",
    "GroupDiff",
    "GroupUse",
    "NoEvidence",
    "NodeEvidence",
    "OptimalProof",
    "PlacementEvaluation",
    "PlacementEvidence",
    "PreemptionEvidence",
    "PreemptionUnit",
    "SamplesDocument",
    "SinglePodDiff",
    "SuiteDocument",
    "SuiteRowDocument",
    "TierProof",
    "VictimRow",
    "WhatIfDocument",
    "WhatIfRowDocument",
]
