"""What it takes to admit pending groups (``gangplan make-room``, issue 40): the rules both the
exact model and the greedy baseline read, written once.

**Which running pods may move.** A pod moves when its controller re-creates it after an eviction:
its first ``metadata.ownerReferences`` entry names a ReplicaSet (a Deployment's pods), a Job (also
a JobSet's pods, whose owner is the JobSet's child Job), a JobSet, a LeaderWorkerSet or a
StatefulSet (a LeaderWorkerSet's pods are owned by its StatefulSets). A bare pod (no owner) is
gone once evicted, a DaemonSet's pod comes back on the same node: neither moves. A pod being
deleted, or one not running on a node of the snapshot, stays where it is.

**What a plan costs.** In the order a person weighs it, after the targets admitted: running
groups disrupted (a PodGroup or CompositePodGroup root losing a pod; a pod outside any group
counts as a pod only), pods moved, pods evicted (stopped for good: ``--evict`` only, lower priority than a
target, as kube-scheduler's preemption would), GPUs (``nvidia.com/gpu``) of running work
interrupted. :class:`RoomWeights` holds the weights of one cost; the defaults keep the order
lexicographic for the sizes make-room is built for (fewer than 1,000 pods moved or evicted and
10,000 GPUs interrupted per plan).

**Marks on the cluster a make-room model reads.** The exact engine sees a make-room question as
an ordinary snapshot: each movable pod is made pending again with :data:`MOVED_FROM` naming the
node it runs on, the groups to admit carry :data:`TARGET`, and every other pending pod is held
back with the :data:`HOLD_GATE` scheduling gate (the model makes room for the targets only).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from gangplan.models.objects import Pod

MOVED_FROM = "gangplan.io/moved-from"
"""Annotation of a running pod made pending for make-room: the node it runs on."""
TARGET = "gangplan.io/make-room-target"
"""Annotation (value ``"true"``) of the pods of a group make-room must admit."""
HOLD_GATE = "gangplan.io/make-room-hold"
"""Scheduling gate make-room puts on pending pods that are not targets."""

MOVABLE_OWNERS = ("ReplicaSet", "Job", "JobSet", "LeaderWorkerSet", "StatefulSet")
"""Owner kinds whose controllers re-create an evicted pod (it may move)."""


def why_not_movable(pod: Pod, known_nodes: set[str] | frozenset[str]) -> str | None:
    """Why running ``pod`` cannot move (None: it may)."""
    if pod.node_name is None or pod.node_name not in known_nodes:
        return "not running on a node of the snapshot"
    if pod.terminating:
        return "being deleted"
    if pod.owner_kind is None:
        return "a bare pod: nothing re-creates it"
    if pod.owner_kind == "DaemonSet":
        return "a DaemonSet pod: it comes back on the same node"
    if pod.owner_kind not in MOVABLE_OWNERS:
        return f"owned by a {pod.owner_kind}, which gangplan does not know to re-create it"
    return None


class RoomWeights(BaseModel):
    """Weights of a plan's cost (lower is better); settable per run (``--weight name=value``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    groups: int = Field(1_000_000, ge=0)
    """Per running group disrupted (a root PodGroup / CompositePodGroup losing any pod)."""
    moves: int = Field(10_000, ge=0)
    """Per pod moved (evicted and re-created elsewhere by its controller)."""
    evictions: int = Field(10_000, ge=0)
    """Per pod evicted for good (``--evict``)."""
    gpus: int = Field(1, ge=0)
    """Per ``nvidia.com/gpu`` of a moved or evicted pod."""

    def cost(self, *, groups: int, moves: int, evictions: int, gpus: int) -> int:
        return (
            self.groups * groups
            + self.moves * moves
            + self.evictions * evictions
            + self.gpus * gpus
        )


class RoomSpec(BaseModel):
    """What the exact engine's make-room objective needs beside the marked cluster
    (:func:`gangplan.solver.exact.solve_exact` ``room=``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    weights: RoomWeights = Field(default_factory=RoomWeights)
    evict: bool = False
    """Lower-priority running work may be stopped for good (moved pods of a lower priority than
    every target may then stay unplaced, and unmovable ones are evicted as preemption does)."""


class _Doc(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class Move(_Doc):
    """A running pod evicted and re-created by its controller elsewhere."""

    pod: str
    from_: str = Field(alias="from")
    to: str
    """Where the plan puts it; the greedy check says where kube-scheduler re-creates it."""


class RoomCost(_Doc):
    """A plan's cost, per part and weighted (:class:`RoomWeights`)."""

    groups: int = 0
    moves: int = 0
    evictions: int = 0
    gpus: int = 0
    total: int = 0


class RoomCheck(_Doc):
    """The greedy replay of a plan (:mod:`gangplan.solver.room.verify`)."""

    verified: bool
    targets_admitted: list[str] = Field(default_factory=list, alias="targetsAdmitted")
    targets_pending: list[str] = Field(default_factory=list, alias="targetsPending")
    moved_running: int = Field(0, alias="movedRunning")
    moved_pending: list[str] = Field(default_factory=list, alias="movedPending")
    landed: dict[str, str] = Field(default_factory=dict)
    """Moved pod -> the node kube-scheduler re-created it on."""
    preempted: list[str] = Field(default_factory=list)
    """Pods kube-scheduler's own preemption evicted during the replay (not in the plan)."""
    violations: list[str] = Field(default_factory=list)
    ties: str = "first"
    """How the replay broke kube-scheduler's score ties: ``first`` (snapshot order: one of the
    outcomes upstream's random choice can give)."""
    draws: int = 0
    """``--samples K``: replays run again with seeded random ties (upstream draws them at random)."""
    draws_working: int = Field(0, alias="drawsWorking")
    """How many of those replays the plan works in."""


class RoomPlan(_Doc):
    """One plan: what it changes, what it costs, and whether kube-scheduler then admits the
    targets."""

    found: bool
    """A plan admitting every target was found (by this method)."""
    targets_admitted: list[str] = Field(default_factory=list, alias="targetsAdmitted")
    cordon: list[str] = Field(default_factory=list)
    """Nodes the targets take, cordoned while the moved pods are re-created."""
    moves: list[Move] = Field(default_factory=list)
    evictions: list[str] = Field(default_factory=list)
    cost: RoomCost = Field(default_factory=RoomCost)
    check: RoomCheck | None = None
    """The greedy replay (None when no plan was found)."""


class NodesToAdd(_Doc):
    """Nodes of one shape already in the snapshot that would admit the targets unchanged."""

    shape: str
    """A node of the snapshot the new ones copy (labels, taints, allocatable)."""
    count: int
    domain: dict[str, str] = Field(default_factory=dict)
    """Topology labels the new nodes must carry (the domain they go into)."""
    proven: bool = False
    """Fewer nodes of this shape are proven not to admit the targets."""


class CopiesThatFit(_Doc):
    """How many copies of a target fit on the cluster as it runs now (nothing moved or evicted)."""

    target: str
    offered: int
    greedy: int
    """Copies kube-scheduler's cycle admits."""
    optimal: int
    """Copies the exact engine admits (the most, when ``proven``)."""
    proven: bool


class RoomDocument(_Doc):
    """``gangplan make-room --json``: the optimal plan, the greedy baseline beside it, and how
    sure the optimum is."""

    snapshot: str | None = None
    kube_version: str = Field(alias="kubeVersion")
    targets: list[str]
    weights: RoomWeights
    evict: bool
    verified: bool
    """The optimal plan was found and passes the greedy check."""
    proven: bool
    """The exact engine proved the plan's tiers (targets admitted, then the cost) optimal."""
    status: str
    """The exact engine's status (OPTIMAL, FEASIBLE, ...)."""
    bound: int | None = None
    """The lowest cost the exact engine could not rule out (equal to the cost when proven)."""
    optimal: RoomPlan
    baseline: RoomPlan
    """The greedy heuristic's plan (:mod:`gangplan.solver.room.baseline`)."""
    nodes_to_add: list[NodesToAdd] = Field(default_factory=list, alias="nodesToAdd")
    """With nothing moved: the fewest new nodes per shape (``--like``) that admit the targets."""
    copies_that_fit: list[CopiesThatFit] = Field(default_factory=list, alias="copiesThatFit")
    """``--copies N``: per target, how many copies fit now."""
    not_movable: dict[str, int] = Field(default_factory=dict, alias="notMovable")
    """Why running pods stay where they are -> how many."""
    notes: list[str] = Field(default_factory=list)


__all__ = [
    "HOLD_GATE",
    "MOVABLE_OWNERS",
    "MOVED_FROM",
    "TARGET",
    "CopiesThatFit",
    "Move",
    "NodesToAdd",
    "RoomCheck",
    "RoomCost",
    "RoomDocument",
    "RoomPlan",
    "RoomSpec",
    "RoomWeights",
    "why_not_movable",
]
