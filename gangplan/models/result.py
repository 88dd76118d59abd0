"""The engine-neutral Result: what both engines write and everything downstream reads.

Its JSON (camelCase keys) is a public interface. Keys are only ever added, never renamed. See the
docs/reference/json.md, "The Result JSON"; ``gangplan schema result`` prints the JSON Schema.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import IO, TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator
from pydantic.alias_generators import to_camel

from gangplan.models.base import Beside, beside
from gangplan.models.options import RunOptions
from gangplan.models.trace import (
    EmptyTrace,
    ExactTrace,
    GreedyTrace,
    Trace,
    check_trace_level,
    trace_for_engine,
)

if TYPE_CHECKING:
    from gangplan.models.cluster import Cluster

RESULT_SCHEMA_VERSION = 1


class Status(StrEnum):
    HEURISTIC = "HEURISTIC"  # greedy: a placement with no optimality claim
    OPTIMAL = "OPTIMAL"  # exact: proven optimal
    FEASIBLE = "FEASIBLE"  # exact: a solution, not proven optimal (see bound / gap)
    INFEASIBLE = "INFEASIBLE"  # exact: the model has no solution (should not happen: placing nothing is valid)
    UNKNOWN = "UNKNOWN"  # exact: no solution found within the limits


class _Model(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )


def _empty(v: Any) -> bool:
    return not v


class ClaimDevice(_Model):
    """One device a pod's ResourceClaim got (``status.allocation.devices.results[]`` of the claim
    kube-scheduler would write; docs/explanation/dra.md)."""

    claim: str
    """The ResourceClaim's name, in the pod's namespace (a template claim: the one the
    resourceclaim controller would create; KEP-5004 extended resources: ``<pod>-extended-resources``)."""
    request: str
    """The claim's request (an extended-resource claim: the resource name)."""
    driver: str
    pool: str
    device: str


class PodOutcome(_Model):
    """Where one pending pod goes. ``node`` is None when it is not placed; ``reason`` says why."""

    node: str | None = None
    reason: str | None = None
    nominated: bool = False
    """True when the node is a nomination that waits for victims to leave (preemption)."""
    claims: list[ClaimDevice] = Field(default_factory=list, exclude_if=_empty)
    """The devices the pod's unallocated ResourceClaims get on ``node``, in claim then request
    order (absent when the pod allocates none)."""


class GroupOutcome(_Model):
    """The outcome of one PodGroup that had pending pods."""

    admitted: bool
    placed: int
    """The group's pods on nodes after the run, already bound ones included."""
    min_count: int
    pending: int = 0
    """How many of its pods were pending before the run (gated ones included)."""
    priority: int = 0
    domain: str | None = None
    """The topology domain the group was placed in (``key=value``), when it has a constraint."""
    reason: str | None = None


class CompositeOutcome(_Model):
    """The outcome of one CompositePodGroup with pending pods below it: what the objective counts
    for a root (it is admitted as a whole), and for any composite how many of its children hold."""

    admitted: bool
    """Its rule holds (``minGroupCount`` children scheduled) and its root was admitted in the run."""
    groups_admitted: int
    """Children (PodGroups or CompositePodGroups) whose own rule holds after the run."""
    need: int = Field(alias="minGroupCount")
    """What the composite needs of its children: ``minGroupCount``, 1 for a basic policy (the
    group model's ``need``)."""
    children: int
    placed: int
    """Pods of its subtree on nodes after the run, already bound ones included."""
    pending: int = 0
    priority: int = 0
    root: bool = False


class PodSetOutcome(_Model):
    """What Kueue assigned one PodSet of an admitted Workload."""

    name: str
    count: int
    flavors: dict[str, str] = Field(default_factory=dict)
    """Resource -> ResourceFlavor."""
    topology: list[dict[str, Any]] = Field(default_factory=list, exclude_if=_empty)
    """The TAS assignment: ``{"values": [...one per level...], "count": n}`` per domain (levels in
    :attr:`KueueWorkloadOutcome.levels`); absent for a flavor without a Topology."""


class QuotaLine(_Model):
    """One (flavor, resource) a pending Workload asks of its ClusterQueue, after the pass: the
    numbers behind Kueue's quota message (what it would take to admit it)."""

    flavor: str
    resource: str
    requested: int
    """The Workload's request: every pod of the PodSets that ask for the resource."""
    nominal: int
    """The ClusterQueue's nominal quota."""
    used: int
    """What the ClusterQueue's admitted Workloads hold (the run's admissions included)."""
    available: int
    """What it can still admit, cohort borrowing included (Kueue's ``Available``)."""
    most: int
    """The most it could ever hold, every other Workload gone, within its borrowing limit."""
    borrowing: int
    """How much of the request would come from the cohort: ``max(0, used + requested - nominal)``."""


class KueueWorkloadOutcome(_Model):
    """One Kueue Workload: admitted by the run (or already before it), or why not, in Kueue's
    words (the message Kueue writes to the Workload's ``QuotaReserved`` condition)."""

    cluster_queue: str | None = None
    local_queue: str = ""
    admitted: bool
    recorded: bool = False
    """Admitted before the run (``status.admission`` in the snapshot): it holds its quota."""
    running: bool = False
    """Every pod of it is on a node after the run: it runs whole (what the objective counts)."""
    cycle: int | None = None
    """The admission cycle that admitted it (1 = the first), None when not admitted by the run."""
    borrows: bool = False
    """Its quota in some flavor comes from the cohort (beyond the ClusterQueue's nominal quota)."""
    priority: int = 0
    pods: int = 0
    podsets: list[PodSetOutcome] = Field(default_factory=list, alias="podSets")
    levels: list[str] = Field(default_factory=list, exclude_if=_empty)
    reason: str | None = None
    recheck: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """For a Workload admitted before the snapshot: what gangplan's Kueue would choose for it
    now (its own quota and pods taken off, the rest as the snapshot has it) against what Kueue
    recorded: ``same``, or what differs in words (absent for the others)."""
    quota: list[QuotaLine] = Field(default_factory=list, exclude_if=_empty)
    """For a pending Workload: per flavor and resource of its ClusterQueue it asks for, the
    quota numbers after the pass (absent when not pending or without a ClusterQueue)."""


class KueueOutcome(_Model):
    """The admission layer's part of a Result (absent without Kueue objects in the snapshot)."""

    version: str
    """The Kueue release whose admission was reproduced (greedy) or whose rules were applied."""
    workloads: dict[str, KueueWorkloadOutcome] = Field(default_factory=dict)
    """Every Kueue Workload not finished, keyed ``namespace/name``, admitted ones included."""
    cycles: int = 0
    ties: list[str] = Field(default_factory=list, exclude_if=_empty)
    """Where Kueue's order is random and it mattered: Workloads of equal priority and creation
    time, without UIDs to order them (Kueue's queue) or heads of different ClusterQueues that
    tie in one cycle (Kueue sorts them with an unstable sort over a map's order), of which one
    was admitted and the other not. gangplan takes them by name; Kueue may take the other first
    (absent when none)."""

    def admitted(self) -> list[str]:
        return sorted(k for k, w in self.workloads.items() if w.admitted)

    def with_running(self, running: set[str]) -> KueueOutcome:
        """A copy with ``running`` set on the Workloads named."""
        return self.model_copy(
            update={
                "workloads": {
                    k: w.model_copy(update={"running": k in running})
                    for k, w in self.workloads.items()
                }
            }
        )


class Result(_Model):
    """One engine run on one snapshot."""

    _snapshot: Beside | None = PrivateAttr(default=None)
    """The Cluster the Result was computed on (:func:`attach_cluster`)."""

    schema_version: int = RESULT_SCHEMA_VERSION
    engine: str
    status: Status
    snapshot: str | None = None
    pods: dict[str, PodOutcome] = Field(default_factory=dict)
    """Every pending pod of the snapshot, keyed ``namespace/name``."""
    groups: dict[str, GroupOutcome] = Field(default_factory=dict)
    """Every PodGroup with at least one pending pod, keyed ``namespace/name``."""
    composite_groups: dict[str, CompositeOutcome] = Field(default_factory=dict, exclude_if=_empty)
    """Every CompositePodGroup with a pending pod below it (absent when there is none)."""
    victims: list[str] = Field(default_factory=list)
    """Pods evicted to make room, sorted: bound pods of the snapshot, and (greedy) pending pods the
    run placed and a later preemptor evicted (rule V of issue 39; such a pod is placed nowhere in
    ``pods`` and the disruption tiers do not count it, :func:`~gangplan.models.objective.snapshot_victims`)."""
    objective: dict[str, float] = Field(default_factory=dict)
    """Objective value per lexicographic tier, highest tier first (insertion order)."""
    bound: dict[str, float] = Field(default_factory=dict)
    """Best proven bound per tier (exact engine); empty for greedy."""
    gap: float | None = None
    """Relative gap of the first tier not proven optimal; 0.0 when optimal, None for greedy."""
    wall_seconds: float = 0.0
    params: dict[str, Any] = Field(default_factory=dict)
    trace: Trace = Field(default_factory=EmptyTrace)
    """The engine's evidence: :class:`~gangplan.models.trace.GreedyTrace` or
    :class:`~gangplan.models.trace.ExactTrace` by ``engine``, ``{}`` when there is none."""
    warnings: list[str] = Field(default_factory=list)
    """Snapshot inputs that can change scheduling but were not modelled, one line per kind (or
    kind and field) with counts (``Cluster.warnings``)."""
    translations: list[str] = Field(default_factory=list)
    """What the loader translated into the native model (foreign group APIs, expanded Jobs /
    JobSets / LeaderWorkerSets), one line per kind (``Cluster.translations``); ``[]`` when none."""
    kueue: KueueOutcome | None = Field(default=None, exclude_if=lambda v: v is None)
    """Kueue's admission (issue 42): which Workloads hold quota, with which flavors and topology
    domains, and why the others wait; absent when the snapshot has no ClusterQueue."""

    @model_validator(mode="before")
    @classmethod
    def _trace_by_engine(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("trace"), dict):
            data = {**data, "trace": trace_for_engine(str(data.get("engine", "")), data["trace"])}
        return data

    # ---- convenience -----------------------------------------------------------------------
    @property
    def greedy_trace(self) -> GreedyTrace:
        """The greedy trace (empty when the Result carries none); a TypeError for another engine's."""
        if isinstance(self.trace, GreedyTrace):
            return self.trace
        if isinstance(self.trace, EmptyTrace):
            return GreedyTrace()
        raise TypeError(f"a {self.engine} Result has no greedy trace")

    @property
    def exact_trace(self) -> ExactTrace | None:
        """The exact engine's trace, None when the Result carries none; a TypeError for another engine's."""
        if isinstance(self.trace, ExactTrace):
            return self.trace
        if isinstance(self.trace, EmptyTrace):
            return None
        raise TypeError(f"a {self.engine} Result has no exact trace")

    @property
    def options(self) -> RunOptions:
        """The options the run was produced with, typed (``params`` read once,
        :class:`~gangplan.models.options.RunOptions`)."""
        return RunOptions.of(self.engine, self.params)

    def placements(self) -> dict[str, str]:
        """Pod key -> node for every placed pending pod."""
        return {k: o.node for k, o in self.pods.items() if o.node is not None}

    def admitted_groups(self) -> list[str]:
        return sorted(k for k, g in self.groups.items() if g.admitted)

    def __repr__(self) -> str:
        groups = (
            f"{len(self.admitted_groups())}/{len(self.groups)} groups admitted, "
            if self.groups
            else ""
        )
        status = "" if self.status == Status.HEURISTIC else f" {self.status.value}"
        return (
            f"<Result {self.engine}{status}: {groups}{len(self.placements())}/{len(self.pods)} pods placed, "
            f"{len(self.victims)} victims>"
        )

    __str__ = __repr__

    def to_frame(self, cluster: Cluster | None = None) -> Any:
        """A pandas DataFrame, one row per pending pod of the snapshot: ``namespace``, ``pod``,
        ``group`` (its PodGroup key, None for a single pod), ``engine``, ``node`` (None when not
        placed), ``admitted`` (the group's outcome; a single pod: placed), ``nominated``,
        ``priority``, ``reason`` (why not placed), then the node's domain at each topology level
        (:meth:`Cluster.frame_levels`). ``cluster``: the snapshot the Result was computed on;
        Results made by ``gangplan.solve`` or ``gangplan.diff`` remember it (:func:`attach_cluster`)."""
        import pandas as pd

        cluster = cluster if cluster is not None else beside(self._snapshot)
        if cluster is None:
            raise ValueError(
                "this Result does not know its snapshot (it was not made by gangplan.solve or gangplan.diff, "
                "e.g. it was read from JSON): pass the Cluster it was computed on, result.to_frame(cluster)"
            )
        levels = cluster.frame_levels()
        nodes = {n.name: n for n in cluster.nodes}
        rows = []
        for p in cluster.pending_pods:
            o = self.pods.get(p.key)
            node = o.node if o is not None else None
            g = self.groups.get(p.group_key) if p.group_key else None
            labels = nodes[node].labels if node in nodes else {}
            rows.append(
                {
                    "namespace": p.namespace,
                    "pod": p.name,
                    "group": p.group_key,
                    "engine": self.engine,
                    "node": node,
                    "admitted": g.admitted if g is not None else node is not None,
                    "nominated": bool(o and o.nominated),
                    "priority": p.priority,
                    "reason": o.reason if o is not None else None,
                    **{level: labels.get(level) for level in levels},
                }
            )
        columns = [
            "namespace",
            "pod",
            "group",
            "engine",
            "node",
            "admitted",
            "nominated",
            "priority",
            "reason",
            *levels,
        ]
        return pd.DataFrame(rows, columns=columns)

    def to_dict(self, *, trace: str | None = None) -> dict[str, Any]:
        """The Result JSON as a dict, with the trace at ``trace`` (:data:`~gangplan.models.trace.TRACE_LEVELS`:
        ``none``, ``summary`` or ``full``; None: full)."""
        level = check_trace_level(trace)
        data = self.model_dump(mode="json", by_alias=True, context={"trace": level})
        if level == "none":
            data["trace"] = {}
        return data

    def to_json(
        self, *, indent: int | None = 2, with_trace: bool = True, trace: str | None = None
    ) -> str:
        """The Result JSON (``with_trace=False`` is ``trace="none"``; the default is the full trace)."""
        return (
            json.dumps(
                self.to_dict(trace=trace if with_trace else "none"), indent=indent, sort_keys=False
            )
            + "\n"
        )

    def write_json(self, fp: IO[str], *, trace: str | None = None, indent: int | None = 2) -> None:
        """:meth:`to_json` written to ``fp`` as it is encoded (no second copy of a large document)."""
        json.dump(self.to_dict(trace=trace), fp, indent=indent)
        fp.write("\n")

    @classmethod
    def from_json(cls, text: str) -> Result:
        return cls.model_validate_json(text)


def attach_cluster(result: Result, cluster: Cluster) -> Result:
    """Remember that ``result`` was computed on ``cluster`` (``gangplan.solve`` and
    ``gangplan.diff`` do), so ``result.to_frame()`` needs no argument; copies of the Result
    (``model_copy``) remember it too. Kept beside the Result (:class:`~gangplan.models.base.Beside`), not in it: its
    fields, JSON and equality stay as the engine wrote them, and nothing outlives the Result."""
    result._snapshot = Beside(cluster)
    return result


def result_json_schema() -> dict[str, Any]:
    """The JSON Schema of the Result, generated from the model."""
    return Result.model_json_schema(by_alias=True, mode="serialization")
