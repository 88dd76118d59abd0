"""KAI-Scheduler segments: the ``kai.scheduler/segment-*`` pod annotations, split as KAI's pod grouper
splits them.

Sources (kai-scheduler/KAI-Scheduler @ d5bc503a146317e51037d89775d77172c6d12f71, 2026-08-07; the
NVIDIA/KAI-Scheduler snapshot @ 72de64fc has the same PyTorchJob splitting but no ``minSubGroup``
in the types):

* ``pkg/podgrouper/podgrouper/plugins/constants/constants.go``: the annotation keys
  ``kai.scheduler/segment-size``, ``kai.scheduler/segment-topology-required-placement``,
  ``kai.scheduler/segment-topology-preferred-placement`` and ``kai.scheduler/topology``.
* ``pkg/podgrouper/podgrouper/plugins/kubeflow/pytorch/pytorch_grouper.go``
  (``buildWorkerSubGroups``, ``getPodSegmentIndex``, ``getSegmentSize``,
  ``getSegmentTopologyConstraints``): the Worker replica of a PyTorchJob with ``R`` replicas and
  segment size ``S`` (a positive integer, read from the pod's annotation first, then from the
  Worker template) becomes a SubGroup ``worker`` with ``minSubGroup = ceil(R / S)`` over leaf
  SubGroups ``worker-<i>``; a pod goes to segment ``replica-index / S`` (label
  ``training.kubeflow.org/replica-index``; only pods whose ``training.kubeflow.org/replica-type``
  is ``worker``); segment ``i`` has ``minMember = S``, the last one ``R mod S`` when that is not 0,
  and ``0`` (elastic) for the segments at or after ``ceil(workerMin / S)``, where ``workerMin`` is
  the job's minimum less its masters. Every segment carries the same topology constraint: the
  Topology named by ``kai.scheduler/topology`` (pod, Worker template, then the job) with the
  segment's required / preferred level; without a Topology name the segments are still made, with
  no constraint. At most 10000 segments (``maxAllowedSegmentation``).
* ``pkg/podgrouper/podgrouper/plugins/leaderworkerset/lws_grouper.go``: LeaderWorkerSet segments
  (``segment-<i>`` leaves, the leader folded into the first segment or kept apart by
  ``subGroupPolicyType``). Not reproduced here (the leader's placement depends on the LWS object).
* ``docs/topology/segments.md``, ``docs/developer/designs/segmented-subgroups/README.md``: the
  user guide and design (the design's ``kai.scheduler/pod-index-label`` and Job index label are not
  in the code at that commit).

gangplan reads a snapshot, not the PyTorchJob: ``R`` is the highest replica index among the pods
plus one (pods missing from the snapshot leave their segment short, as KAI would wait for them),
and ``workerMin`` is the minimum of the group the pods are in.
"""

from __future__ import annotations

from dataclasses import dataclass

from gangplan.models.objects import Pod

SEGMENT_SIZE = "kai.scheduler/segment-size"
SEGMENT_REQUIRED = "kai.scheduler/segment-topology-required-placement"
SEGMENT_PREFERRED = "kai.scheduler/segment-topology-preferred-placement"
TOPOLOGY = "kai.scheduler/topology"
REPLICA_INDEX = "training.kubeflow.org/replica-index"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
LWS_WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
MAX_SEGMENTS = 10000


@dataclass(frozen=True)
class Segment:
    index: int
    min_member: int
    """KAI's ``minMember`` of the segment SubGroup; 0 for an elastic segment."""
    pods: tuple[str, ...]
    """Keys of the snapshot's pods in this segment."""


@dataclass(frozen=True)
class SegmentPlan:
    size: int
    replicas: int
    segments: tuple[Segment, ...]
    topology: str | None
    """The Topology name (``kai.scheduler/topology`` of the pods, else the PodGroup's)."""
    required: str | None
    preferred: str | None

    @property
    def spans(self) -> int:
        """How many segments hold a pod of the snapshot."""
        return sum(1 for s in self.segments if s.pods)


def _int(value: str) -> int | None:
    try:
        return int(value.strip())
    except ValueError:
        return None


def plan(
    pods: list[tuple[str, Pod]], group_min: int, fallback_topology: str | None
) -> tuple[SegmentPlan | None, str | None]:
    """The segments KAI's pod grouper makes of ``pods`` (one group's pods, snapshot order).

    Returns ``(None, None)`` when no pod carries ``kai.scheduler/segment-size``, ``(None, why)``
    when they do but the split cannot be reproduced (``why`` says what is missing), else
    ``(plan, None)``.
    """
    asking = [(k, p) for k, p in pods if SEGMENT_SIZE in p.annotations]
    if not asking:
        return None, None
    sizes = {p.annotations[SEGMENT_SIZE] for _, p in asking}
    if len(sizes) > 1:
        return None, f"the pods disagree on {SEGMENT_SIZE} ({', '.join(sorted(sizes))})"
    raw = sizes.pop()
    size = _int(raw)
    if size is None or size <= 0:
        return (
            None,
            f"{SEGMENT_SIZE} {raw!r} is not a positive integer (KAI's pod grouper refuses it)",
        )
    if any(LWS_WORKER_INDEX in p.labels and REPLICA_INDEX not in p.labels for _, p in asking):
        return (
            None,
            "LeaderWorkerSet segments (the leader's place depends on the LWS subGroupPolicyType) are not translated",
        )
    if len(asking) != len(pods):
        return None, (
            f"only {len(asking)} of the group's {len(pods)} pods carry {SEGMENT_SIZE} (KAI segments one replica "
            f"type, the PyTorchJob Worker, whose pods are a leaf SubGroup of their own)"
        )
    index: dict[str, int] = {}
    for k, p in asking:
        kind = p.labels.get(REPLICA_TYPE)
        if kind is not None and kind != "worker":
            return (
                None,
                f"pod {k} has {REPLICA_TYPE}={kind!r}: KAI segments only the Worker replica",
            )
        i = _int(p.labels.get(REPLICA_INDEX, ""))
        if i is None or i < 0:
            return (
                None,
                f"pod {k} has no usable {REPLICA_INDEX} label (KAI's pod grouper fails on it)",
            )
        index[k] = i
    replicas = max(max(index.values()) + 1, len(asking))
    count = -(-replicas // size)
    if count > MAX_SEGMENTS:
        return None, f"{count} segments exceed KAI's maximum of {MAX_SEGMENTS}"
    partial = replicas % size
    mandatory = -(-max(group_min, 0) // size)
    segments = []
    for i in range(count):
        need = size
        if i >= mandatory:
            need = 0
        elif partial and i == count - 1:
            need = partial
        segments.append(Segment(i, need, tuple(k for k, _ in asking if index[k] // size == i)))
    first = asking[0][1].annotations
    topology = first.get(TOPOLOGY) or fallback_topology or None
    required = first.get(SEGMENT_REQUIRED) or None
    preferred = first.get(SEGMENT_PREFERRED) or None
    return SegmentPlan(size, replicas, tuple(segments), topology, required, preferred), None
