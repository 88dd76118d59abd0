"""The scheduling framework's vocabulary: status codes, cycle state, score helpers, FitError,
and the pod-group side: placements, the group a placement plugin is asked about, the progress
PlacementFeasible judges.

Mirrors ``pkg/scheduler/framework/interface.go`` (status codes, ``MaxNodeScore``; ``Placement``,
``PodGroupInfo``, ``PlacementProgress`` of ``staging/src/k8s.io/kube-scheduler/framework`` in
v1.36 / master),
``pkg/scheduler/framework/types.go`` (``FitError.Error``) and
``pkg/scheduler/framework/plugins/helper/normalize_score.go`` (``DefaultNormalizeScore``) of
kubernetes/kubernetes v1.36. Extension points a batch simulator does not need (queue events,
queueing hints, Reserve/Permit/Bind, extenders, metrics, parallelism) are left out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from gangplan.models.groups import GroupNode
    from gangplan.models.objects import Pod

MAX_NODE_SCORE = 100
NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"


class Code(IntEnum):
    """``fwk.Code``: a closed set. Only ``Unschedulable`` nodes are preemption candidates."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def label(self) -> str:
        return _CODE_LABELS[self]


_CODE_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


@dataclass(frozen=True)
class Status:
    """``fwk.Status``: a code, its reasons, and the plugin that returned it."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def ok(self) -> bool:
        return self.code == Code.SUCCESS

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        return Status(self.code, self.reasons, plugin)


SUCCESS = Status()
SKIP = Status(Code.SKIP)


def unschedulable(*reasons: str, unresolvable: bool = False) -> Status:
    code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
    return Status(code, tuple(reasons))


class CycleState(dict):
    """``CycleState``: per-pod data a plugin's PreFilter/PreScore computes once and Filter/Score
    read back, keyed by plugin name. ``skip_filter`` holds the plugins whose PreFilter returned
    Skip, as the framework records them (a PreScore Skip only drops the plugin from that pod's
    scoring, see ``PodScheduler.prioritize``)."""

    def __init__(self) -> None:
        super().__init__()
        self.skip_filter: set[str] = set()
        self.node_subset: set[int] | None = None
        """``PreFilterResult.NodeNames`` merged over plugins (None: all nodes)."""
        self.subset_plugins: list[str] = []
        self.nominated_statuses: dict[int, Status] = {}
        """Nodes that failed only with their nominated pods added, and why."""

    def restrict(self, plugin: str, nodes: set[int]) -> None:
        """``PreFilterResult.Merge``: intersect a plugin's node set into the cycle's."""
        self.node_subset = set(nodes) if self.node_subset is None else self.node_subset & nodes
        self.subset_plugins.append(plugin)


def go_div(a: int, b: int) -> int:
    """Go's integer division: truncation toward zero (Python's ``//`` floors)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def go_div_array(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """Elementwise Go integer division on int64 arrays (truncation toward zero)."""
    q = np.abs(a) // np.abs(b)
    return np.where((a >= 0) == (np.asarray(b) >= 0), q, -q)


def default_normalize_score(
    scores: np.ndarray, reverse: bool, max_priority: int = MAX_NODE_SCORE
) -> np.ndarray:
    """``helper.DefaultNormalizeScore``: scale to 0..max by the maximum (reversed if asked).

    >>> default_normalize_score(np.array([0, 1, 2]), reverse=True).tolist()
    [100, 50, 0]
    """
    scores = np.asarray(scores, dtype=np.int64)
    max_count = int(scores.max(initial=0))
    if max_count == 0:
        return np.full_like(scores, max_priority) if reverse else scores.copy()
    out = go_div_array(max_priority * scores, max_count)
    return max_priority - out if reverse else out


@dataclass
class Diagnosis:
    """``framework.Diagnosis``: node -> failing status, the status of nodes a PreFilterResult left
    out (``NodeToStatus.AbsentNodesStatus``), and the PreFilter message if any."""

    node_to_status: dict[str, Status] = field(default_factory=dict)
    absent_nodes_status: Status | None = None
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


def absent_nodes_reason(plugins: list[str]) -> str:
    """The status upstream gives nodes outside a PreFilterResult (``findNodesThatFitPod``)."""
    return f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(set(plugins)))}]"


def fit_error_message(num_all_nodes: int, diagnosis: Diagnosis) -> str:
    """``FitError.Error()``: "0/N nodes are available: <count reason, ...>." with the histogram of
    every reason of every failing node, sorted as strings (``sort.Strings``), as upstream."""
    if diagnosis.pre_filter_msg:
        return fit_error_text(
            num_all_nodes,
            Counter(),
            pre_filter_msg=diagnosis.pre_filter_msg,
            post_filter_msg=diagnosis.post_filter_msg,
        )
    hist = reason_histogram(diagnosis.node_to_status.values())
    absent = num_all_nodes - len(diagnosis.node_to_status)
    if diagnosis.absent_nodes_status is not None and absent > 0:
        for r in diagnosis.absent_nodes_status.reasons:
            hist[r] += absent
    return fit_error_text(num_all_nodes, hist, post_filter_msg=diagnosis.post_filter_msg)


def fit_error_text(
    num_all_nodes: int, hist: Counter, *, pre_filter_msg: str = "", post_filter_msg: str = ""
) -> str:
    """The text of ``FitError.Error()`` from the histogram of every reason of every failing node
    (absent nodes included): what :func:`fit_error_message` prints, for callers that count reasons
    without building a status per node."""
    msg = NO_NODE_AVAILABLE_MSG.format(num_all_nodes) + ":"
    if pre_filter_msg:
        msg += f" {pre_filter_msg}."
    else:
        parts = sorted(f"{n} {r}" for r, n in hist.items() if n)
        if parts:
            msg += f" {', '.join(parts)}."
    if post_filter_msg:
        msg += f" {post_filter_msg}."
    return msg


def reason_histogram(statuses: Iterable[Status]) -> Counter:
    hist: Counter = Counter()
    for st in statuses:
        hist.update(st.reasons)
    return hist


# ---- pod groups and placements (KEP-4671 / KEP-5732) ------------------------------------------
@dataclass(frozen=True)
class Placement:
    """``fwk.Placement``: a candidate node set for a pod group.

    ``name`` is what the generating plugin calls it (the topology label value for
    TopologyPlacementGenerator, "" for the parent placement); merged placements join their parts'
    names with "/" as upstream does. ``nodes`` are snapshot positions, ascending."""

    name: str
    nodes: np.ndarray
    key: str | None = None
    """The label key a topology placement stands for (None for the parent and merged ones)."""
    parts: tuple[Placement, ...] = ()
    """The per-plugin placements a merged placement intersects, in plugin order."""

    @property
    def label(self) -> str:
        """``key=value`` as Result domains are written, the parts' labels joined by "/" for a
        merged placement, ``<parent placement>`` for no constraint."""
        if self.parts:
            return "/".join(p.label for p in self.parts)
        return f"{self.key}={self.name}" if self.key else "<parent placement>"


class PlacementError(Exception):
    """A placement plugin returned an Error status (e.g. GeneratePlacements found the group's
    scheduled pods in several domains); the group fails with ``SchedulerError: <message>``."""


class PodGroupInfo:
    """``fwk.PodGroupInfo`` with its ``PodGroupState``: the group a placement plugin is asked
    about, read against the run's node state of the placement decision (every evaluation is
    reverted, so the state is the same when the placements are scored)."""

    def __init__(self, group: GroupNode, members: tuple[Pod, ...], node_of: dict[str, int]) -> None:
        self.group = group
        self._members = members
        self._node_of = node_of

    @property
    def key(self) -> str:
        return self.group.key

    @cached_property
    def scheduled(self) -> list[tuple[str, int]]:
        """(pod key, node position) of every pod of the group (every leaf under a composite)
        that is bound or assumed: upstream's ``PodGroupState.ScheduledPods``."""
        return [(p.key, self._node_of[p.key]) for p in self._members if p.key in self._node_of]


@dataclass(frozen=True)
class PlacementProgress:
    """``framework.PlacementProgress``: what PlacementFeasible sees after each pod (child group
    for a CompositePodGroup) of a placement's evaluation, and once before the first."""

    scheduled: int
    remaining: int
