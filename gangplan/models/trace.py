"""The engines' traces (``Result.trace``) as typed models: the greedy's evidence per pod cycle,
group and placement decision, and the exact engine's model size, hint use and solve phases.

``Result.trace`` is one of :class:`GreedyTrace`, :class:`ExactTrace` or :class:`EmptyTrace`,
chosen by ``Result.engine`` (:func:`trace_for_engine`). The JSON keys and their order are part
of the Result contract (a model's field order is its key order): a key that only appears in some
traces (``preemption``, a group's ``placements``, the hint's ``violations``, ...)
is a field that is left out of the JSON while it is None. Keys follow the Result's convention
(camelCase, only ever added); keys that hold data (pod keys, plugin names, node names, label
values) keep the data's spelling.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer
from pydantic.alias_generators import to_camel

Number = int | float
"""A value the engines wrote as an int or a float: kept as written (``2`` stays ``2``)."""


def _absent(value: Any) -> bool:
    return value is None


def optional_key() -> Any:
    """A field for a key the JSON holds only when it has a value (left out while None)."""
    return Field(None, exclude_if=_absent)


class _Trace(BaseModel):
    model_config = ConfigDict(
        extra="forbid", alias_generator=to_camel, populate_by_name=True, validate_assignment=False
    )


# ---- greedy --------------------------------------------------------------------------------------
_CONFIG = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)


# The records the run writes per pod cycle, placement and group are slotted dataclasses, not
# BaseModels: the engine builds them with the right types (no validation pass each, which cost the
# greedy several percent of its throughput); JSON read back (``Result.from_json``) is validated.
@dataclass(slots=True)
class ScoredNode:
    """One of the best-scored nodes of a pod cycle (``top``)."""

    __pydantic_config__ = _CONFIG
    node: str
    total: int
    scores: dict[str, int] = field(default_factory=dict)
    """Weighted score per Score plugin."""


@dataclass(slots=True)
class PodCycle:
    """One pod's scheduling cycle: the evidence behind its choice (``trace.pods[pod]``)."""

    __pydantic_config__ = _CONFIG
    feasible_nodes: int = 0
    evaluated_nodes: int = 0
    rejections: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per Filter plugin, per reason, how many nodes it rejected."""
    top: list[ScoredNode] = field(default_factory=list)
    """The ``top_k`` best-scored nodes (empty when the pod was not scored)."""
    chosen: str | None = None
    kept: bool = False
    """The choice survived its group (the pod is placed there in the Result)."""
    tie_set: list[str] = field(default_factory=list)
    """Nodes with the best total, lowest snapshot positions first, at most 100."""
    tie_count: int = 0
    fit_error: str | None = None


@dataclass(slots=True)
class EvaluatedPlacement:
    """One topology placement a group was tried in (KEP-5732 ``evaluatePlacement``); a dataclass
    for the same reason as :class:`PodCycle` (one per placement of every decision)."""

    __pydantic_config__ = _CONFIG
    name: str
    """The label value of the domain."""
    nodes: int
    status: str
    reason: str | None = None
    assigned: int = 0
    """Pods the group proposed in it."""
    scores: dict[str, int] = field(default_factory=dict)
    """Weighted score per PlacementScore plugin (scored placements only)."""
    total: int | None = None


TraceLevel = Literal["none", "summary", "full"]
"""How much of the trace a printed Result or diff holds (``--trace``): ``full`` everything the run
recorded; ``summary`` (the CLI's default) the same except that a placement decision lists only its
chosen placement, the runner-up (the best-scored other feasible placement) and, when none was
feasible, the reported one; ``none`` no trace. Without a level (the Python API's ``to_json()``)
the trace is full."""

TRACE_LEVELS: tuple[str, ...] = ("none", "summary", "full")


def check_trace_level(level: str | None) -> str:
    """``level`` (None: ``full``), or ``ValueError`` naming the levels."""
    if level is None:
        return "full"
    if level not in TRACE_LEVELS:
        raise ValueError(f"unknown trace level {level!r}; use one of {', '.join(TRACE_LEVELS)}")
    return level


def trace_level(info: Any) -> str:
    """The trace level a serialisation was asked for (``context={"trace": level}``), else full."""
    ctx = getattr(info, "context", None)
    return ctx.get("trace", "full") if isinstance(ctx, dict) else "full"


@dataclass
class PlacementDecision:
    """A topology-constrained group's placement decision (``trace.groups[group].placements``).

    Placements whose outcome the greedy counted and that failed are not built while the engine
    runs (a decision can hold hundreds of them): they are *deferred*, kept as positions and a
    function that builds their entry, and :meth:`entries` builds them in order when something
    reads them (a full trace, :meth:`placement`). Not slotted, unlike the per-pod records: it
    carries that deferred part beside its fields."""

    __pydantic_config__ = _CONFIG
    key: str | None
    """The topology label key (None when only a PlacementGenerate plugin without one constrains
    the group)."""
    parent: str | None = None
    """The parent placement (``key=value``) it was generated in, None at the top."""
    generated: int = 0
    evaluated: list[EvaluatedPlacement] = field(default_factory=list)
    """Every placement evaluated, in evaluation order (with ``--trace summary``: the chosen, the
    runner-up and the reported placement only)."""
    nominated: str | None = None
    """The placement evaluated first for its nominated pods, if any."""
    scored: bool = False
    tie_count: int = 0
    chosen: str | None = None

    def defer(self, positions: list[int], build: Any) -> None:
        """Entries at ``positions`` of the full evaluation order (ascending) are ``build(j)`` for
        the ``j``-th of them; :attr:`evaluated` holds the others, in order."""
        object.__setattr__(self, "_deferred", (positions, build) if positions else None)

    def entries(self) -> list[EvaluatedPlacement]:
        """Every evaluated placement, in order (builds the deferred ones, once)."""
        deferred = self.__dict__.get("_deferred")
        if deferred is not None:
            positions, build = deferred
            known = iter(self.evaluated)
            slots = set(positions)
            total = len(self.evaluated) + len(positions)
            j = 0
            out: list[EvaluatedPlacement] = []
            for i in range(total):
                if i in slots:
                    out.append(build(j))
                    j += 1
                else:
                    out.append(next(known))
            self.evaluated = out
            object.__setattr__(self, "_deferred", None)
        return self.evaluated

    def placement(self, name: str) -> EvaluatedPlacement | None:
        found = next((e for e in self.evaluated if e.name == name), None)
        return (
            found
            if found is not None
            else next((e for e in self.entries() if e.name == name), None)
        )

    def summary(self) -> list[EvaluatedPlacement]:
        """The entries ``--trace summary`` keeps: the chosen placement, the runner-up and, when
        none was chosen, the reported (first evaluated) one. Deferred entries are failed counted
        placements, never one of these, except the first when nothing was feasible (which the
        engine builds)."""
        keep: set[str] = set()
        if self.chosen is not None:
            keep.add(self.chosen)
        elif self.evaluated:
            keep.add(self.evaluated[0].name)  # the reported placement (the engine builds it)
        others = [e for e in self.evaluated if e.status == "Success" and e.name != self.chosen]
        if others:
            keep.add(max(others, key=lambda e: -1 if e.total is None else e.total).name)
        return [e for e in self.evaluated if e.name in keep]

    @field_serializer("evaluated", mode="plain")
    def _serialize_evaluated(
        self, value: list[EvaluatedPlacement], info: Any
    ) -> list[EvaluatedPlacement]:
        return self.summary() if trace_level(info) == "summary" else self.entries()


class MemberOrder(_Trace):
    """How a PodGroup's pods were ordered when that order has a random part (v1.36: the pods gated
    until the quorum leave the unschedulable pool in Go map order, :mod:`gangplan.solver.greedy.queue`)."""

    rule: str
    """``quorum-first``: the pod that completed the quorum, then the gated pods as drawn, then later arrivals."""
    quorum_pod: str
    drawn: list[str] = Field(default_factory=list)
    """The pods gated before the quorum, in the order drawn from the seed."""
    seed: int = 0


@dataclass(slots=True)
class GroupCycle:
    """One group's PlacementFeasible run (``trace.groups[group]``); replaced, not changed, while
    the run records it (``TraceRecorder.update_group``)."""

    __pydantic_config__ = _CONFIG
    progression: list[str] = field(default_factory=list)
    """PlacementFeasible after each pod (each child for a CompositePodGroup)."""
    status: str = ""
    reason: str | None = None
    placements: Annotated[PlacementDecision | None, Field(exclude_if=_absent)] = None
    """Only for groups with ``schedulingConstraints.topology``."""
    member_order: Annotated[MemberOrder | None, Field(exclude_if=_absent)] = None
    """Only when the version's pod order had a random part that was drawn from the seed."""


class NodeVictims(_Trace):
    """Default preemption's dry run on one candidate node."""

    victims: list[str] = Field(default_factory=list)
    pdb_violations: int = 0


class _PreemptionBase(_Trace):
    kind: str
    priority: int = 0
    policy: str = ""
    status: str = ""
    reason: str | None = None
    candidates: list[str] = Field(default_factory=list)
    """Lower-priority victim units, most important first."""
    order: list[str] = Field(default_factory=list)
    """The order units were put back in: PDB-violating ones first (workload-aware preemption)."""
    violating: dict[str, int] = Field(default_factory=dict)
    reprieved: list[str] = Field(default_factory=list)
    victims: list[str] = Field(default_factory=list)
    pdb_violations: int = 0
    nominated: dict[str, str] = Field(default_factory=dict)
    """Pod -> the node it was nominated to."""


class WorkloadPreemption(_PreemptionBase):
    """Workload-aware preemption (KEP-5710) for a root group."""

    kind: Literal["workload"] = "workload"
    simulation_tied: Annotated[bool, Field(exclude_if=lambda v: not v)] = False
    """A successful preemption whose simulation (the group's algorithm on the snapshot without
    the candidates, and v1.36's reprieve re-runs) broke a score tie between nodes or placements:
    kube-scheduler draws it at random, and another draw can choose other nodes and so other
    victims (``diff --samples K`` gives the odds). Serialized only when true."""


class PodPreemption(_PreemptionBase):
    """Default preemption for a single pod."""

    kind: Literal["pod"] = "pod"
    nodes: dict[str, NodeVictims | str] = Field(default_factory=dict)
    """Per node tried: the dry run's victims, or why it is not a candidate."""
    chosen: str | None = None


PreemptionAttempt = WorkloadPreemption | PodPreemption
"""By ``kind`` (a plain union: each member admits only its own ``kind``)."""


class Requeue(_Trace):
    """A later attempt of an entity that failed, after an event of the run moved it out of the
    unschedulable pool (:mod:`gangplan.solver.greedy.scheduling_queue`)."""

    entity: str
    attempt: int
    """2 for the first retry."""
    at: float
    """Virtual seconds since the run began (attempts take no time; backoff and the flush do)."""
    trigger: str
    """The event whose queueing hint moved it (``AssignedPodAdd ns/pod (node)``), or the flush."""
    placed: int = 0
    outcome: str = ""
    """``Success``, ``Partial`` (some pods placed, some left) or ``Unschedulable``."""


class PermitHold(_Trace):
    """v1.35: a gang's pods waiting at Permit for the gang's quorum while other entities were
    scheduled around them (:func:`gangplan.models.version.permit_hold`, :mod:`gangplan.solver.greedy.podgroup`)."""

    entity: str
    """The gang (its root group key)."""
    pods: dict[str, str]
    """Pod -> the node it held (assumed there, not bound), in the order the pods were assumed;
    what no other entity could use meanwhile."""
    since: float
    """Virtual seconds when its first pod reached Permit (the deadline's start)."""
    deadline: float
    """``since`` + 300 s (``DefaultSchedulingTimeoutDuration``)."""
    until: float
    """When the hold ended: the deadline, or the retry that completed the quorum."""
    outcome: str
    """``quorum`` (every held pod bound with the pods that completed it) or ``timeout`` (every
    held pod forgotten, an ``AssignedPodDelete`` event to every other entity)."""
    failed_meanwhile: list[str] = Field(default_factory=list)
    """Entities (``entities`` spelling) whose attempts failed while the pods were held: the ones
    the held pods may have blocked."""


class GreedyTrace(_Trace):
    """The greedy engine's trace (see :mod:`gangplan.solver.greedy`)."""

    order: list[str] = Field(default_factory=list)
    """Pod keys in the order their (kept) cycles ran."""
    entities: list[str] = Field(default_factory=list)
    """Queue entities in order: root group keys, ``pod:<key>`` for single pods."""
    pods: dict[str, PodCycle] = Field(default_factory=dict)
    groups: dict[str, GroupCycle] = Field(default_factory=dict)
    preemption: dict[str, PreemptionAttempt] | None = optional_key()
    """Per entity, its PostFilter run; only when the run had preemption on."""
    requeues: list[Requeue] | None = optional_key()
    """Later attempts of failed entities, in order; only when the run made one."""
    permit_holds: list[PermitHold] | None = optional_key()
    """v1.35: gangs whose pods waited at Permit, in the order the holds ended; only when a gang
    was held."""

    def chosen_steps(self) -> list[tuple[str, str]]:
        """(pod, node) for every successful pod choice, in scheduling order (reverted ones too)."""
        out = []
        for key in self.order:
            t = self.pods.get(key)
            if t is not None and t.chosen:
                out.append((key, t.chosen))
        return out


# ---- exact ---------------------------------------------------------------------------------------
class ModelStats(_Trace):
    variables: int
    constraints: int
    classes: int
    private_classes: int
    shapes: int


class HintUse(_Trace):
    """How the starting solution was found (``trace.hint``)."""

    used: bool = False
    engine: str | None = optional_key()
    """The hint's engine, when a hint was given."""
    placed: int | None = optional_key()
    dropped: int | None = optional_key()
    violations: list[str] | None = optional_key()
    """The first validator complaints the hint repair acted on (at most 5)."""
    rejected: str | None = optional_key()
    first_fit: int | str | None = optional_key()
    """Pods first-fit added to the start, or why that completion was rejected."""
    start: str | None = optional_key()
    model_rejected: str | None = optional_key()
    retried: str | None = optional_key()


class _Timing(_Trace):
    def rounded(self) -> Any:
        """A copy with every part rounded to 4 decimals (as the JSON holds them)."""
        return self.model_copy(update={k: round(v, 4) for k, v in self if v is not None})


class PhaseTiming(_Timing):
    """Where a solve's seconds went (``SolvePhase.timing``); a part is left out while None."""

    budget: float | None = optional_key()
    """The work the solve was given, in units of deterministic time (CP-SAT's
    ``max_deterministic_time``; :class:`gangplan.solver.exact.budget.Budget`)."""
    hint: float | None = optional_key()
    """Complete hint from the incumbent."""
    solver: float | None = optional_key()
    """CP-SAT's wall time, presolve included."""
    decode: float | None = optional_key()
    """Counts from the response."""
    top_up: float | None = optional_key()
    """The top-up packing after the phase (:func:`gangplan.solver.exact.solve.topped_up`)."""
    work: float | None = optional_key()
    """The deterministic work the solve spent (CP-SAT's ``deterministic_time``): the same on any
    machine, unlike the seconds."""


class ExactTiming(_Timing):
    """Where the exact engine's wall time went (``ExactTrace.timing``), in the run's order; a
    part is left out while None (an INFEASIBLE ``fixed`` has only ``build``, ``result``, ``total``)."""

    build: float
    start: float | None = optional_key()
    """Hint repair, first-fit and packed starts."""
    model_check: float | None = optional_key()
    """The model accepts the start."""
    packing: float | None = optional_key()
    """The packed start's share of ``start``."""
    packing_runs: int | None = optional_key()
    """How many orders the packing tried within its share of the work (the same on any machine)."""
    class_packing: float | None = optional_key()
    """The class-level start's share of ``start`` (:mod:`gangplan.solver.exact.start.classpack`), when tried."""
    retried: float | None = optional_key()
    """The first solve's decision and tie-break seconds, when the hint bound made it infeasible."""
    decision: float | None = optional_key()
    """Every decision phase, superseded merged solves included."""
    tiebreak: float | None = optional_key()
    result: float | None = optional_key()
    """Decoding: pods from counts, reasons, victims."""
    total: float | None = optional_key()
    work: float | None = optional_key()
    """The deterministic work the whole run spent, in units (starts, checks and phases; the
    work limit is ``params.timeLimit``)."""


class SolvePhase(_Trace):
    """One tier's CP-SAT solve."""

    tier: str
    phase: int
    status: str
    value: Number
    bound: Number | None = None
    seconds: float
    timing: PhaseTiming = Field(default_factory=PhaseTiming)
    """Where the seconds went: ``budget``, ``hint``, ``solver``, ``decode``, ``topUp``."""


class TiebreakReport(_Trace):
    """The tie-break phase on its own (``trace.tiebreak``): it never changes the Result's status
    or gap, which are the decision tiers'."""

    status: str
    value: Number
    bound: Number | None = None
    gap: float | None = None
    """Relative gap of the tie-break tier (None without a bound)."""
    seconds: float
    budget: float
    solved: bool | None = optional_key()
    """False when the decision tiers left it no time: the value is their solution's, unsolved."""


class ClosestToGreedy(_Trace):
    """Set by the diff on the optimum it reports (``diff.closest_optimum``)."""

    fixed_choices: int = 0
    probe_status: str = ""
    why: str = ""


class ExactTrace(_Trace):
    """The exact engine's trace (see :func:`gangplan.solver.exact.solve_exact`)."""

    model: ModelStats
    build_seconds: float
    infeasible: list[str] | None = optional_key()
    """Why the fixed placements cannot hold (no solve took place)."""
    hint: HintUse | None = optional_key()
    start_seconds: float | None = optional_key()
    phases: list[SolvePhase] | None = optional_key()
    superseded: list[SolvePhase] | None = optional_key()
    """Merged solves that did not prove every tier they held (then solved tier by tier)."""
    timing: ExactTiming | None = optional_key()
    """Where the wall time went (:class:`ExactTiming`)."""
    tiebreak: TiebreakReport | None = optional_key()
    closest_to_greedy: ClosestToGreedy | None = optional_key()


class EmptyTrace(_Trace):
    """No trace (``Result.to_json(with_trace=False)``, or a Result built without one)."""


ENGINE_TRACES: dict[str, type[_Trace]] = {"greedy": GreedyTrace, "exact": ExactTrace}


Trace = GreedyTrace | ExactTrace | EmptyTrace | dict[str, Any]
"""``Result.trace``, chosen by ``Result.engine``: ``Result`` validates a raw dict with
:func:`trace_for_engine` (so the union never guesses from the keys); an engine gangplan does not
know keeps its trace as a free JSON object. The JSON Schema lists the four as ``anyOf``."""


def trace_for_engine(engine: str, data: Any) -> Any:
    """The trace model for a Result of ``engine`` from its raw JSON value (a model passes as is)."""
    if isinstance(data, BaseModel) or not isinstance(data, dict):
        return data
    if not data:
        return EmptyTrace()
    model = ENGINE_TRACES.get(engine)
    return data if model is None else model.model_validate(data)


__all__ = [
    "ClosestToGreedy",
    "EmptyTrace",
    "EvaluatedPlacement",
    "ExactTiming",
    "ExactTrace",
    "GreedyTrace",
    "GroupCycle",
    "HintUse",
    "ModelStats",
    "NodeVictims",
    "PermitHold",
    "PhaseTiming",
    "PlacementDecision",
    "PodCycle",
    "PodPreemption",
    "PreemptionAttempt",
    "ScoredNode",
    "SolvePhase",
    "TiebreakReport",
    "Trace",
    "WorkloadPreemption",
    "trace_for_engine",
]
