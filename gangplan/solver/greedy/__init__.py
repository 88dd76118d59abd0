"""The greedy engine: a faithful Python reproduction of kube-scheduler's workload (PodGroup)
scheduling cycle (KEP-4671), per-pod Filter / Score included.

The public entry points are this package's names: :func:`solve_greedy` (a batch run and its
Result), :class:`GreedySession` (one cluster loaded once and changed pod by pod: add, assume,
forget, the pod-group cycle for one gang; what replay and simulators drive), the plugin API
(:class:`Plugin`, :class:`Registry`, the in-tree :data:`REGISTRY`, the framework's
:class:`Status` / :class:`Code` / :class:`CycleState` and the :class:`NodeTable` plugins read),
and the decisive-step evidence functions. Nothing outside this package imports its modules.

Layout, following ``pkg/scheduler``: :mod:`.session` (the incremental entry point), :mod:`.engine` (the run and its Result), :mod:`.evidence` (a diff's decisive-step evidence),
:mod:`.framework` (status codes, cycle state, FitError),
:mod:`.plugins` (one module per upstream plugin), :mod:`.profile` (default plugins and weights),
:mod:`.snapshot` (the node state as numpy arrays), :mod:`.schedule_one` (one pod's cycle),
:mod:`.queue` (entity and member order), :mod:`.podgroup` (the pod-group cycle),
:mod:`.placement_cycle` and :mod:`.placement` (KEP-5732 topology placements: generation,
evaluation, PlacementBinPacking / PodGroupPodsCount scoring), :mod:`.placement_fast` (placements
of identical node-local gangs counted instead of evaluated, with the same outcome).

``Result.trace`` (JSON, deterministic)::

    {"order": [pod keys in the order their cycles ran],
     "entities": [queue entities in order: root group keys, "pod:<key>" for single pods],
     "pods": {pod: {"feasibleNodes", "evaluatedNodes",
                    "rejections": {plugin: {reason: nodes}},
                    "top": [{"node", "total", "scores": {plugin: weighted score}}],  # top_k best
                    "chosen": node | null, "kept": placement survived its group,
                    "tieSet": [nodes with the best total, lowest positions, at most 100],
                    "tieCount": int, "fitError": FitError text | null}},
     "groups": {group: {"progression": [PlacementFeasible after each pod (child for a CPG)],
                        "status": "Success" | "Unschedulable" | "Error", "reason": str | null,
                        # only for groups with schedulingConstraints.topology (KEP-5732):
                        "placements": {"key": label key, "parent": "key=value" | null,
                                       "generated": int, "nominated": value | null,
                                       "evaluated": [{"name": label value, "nodes": int,
                                                      "status", "reason", "assigned": int,
                                                      "scores": {"PlacementBinPacking",
                                                                 "PodGroupPodsCount"}: weighted,
                                                      "total": int | null}],
                                       "scored": bool, "tieCount": int,
                                       "chosen": value | null}}}}

With ``solve_greedy(..., preemption=True)`` the trace also has ``"preemption": {entity: ...}``
(see :mod:`.preemption`) and ``params`` has ``"preemption": true``; without it neither key exists.

For a topology-constrained group each pod is tried once per placement; ``order`` and ``pods`` keep
only the cycles of the chosen placement (of the reported, first-evaluated one when none was
feasible), and ``progression`` is that placement's.

A pod chosen as the only feasible node (or its nominated node) has an empty ``top``: upstream
does not score it either.
"""

from gangplan.solver.greedy.engine import (
    ENGINE,
    build_trace,
    replay_options,
    run_cycle,
    solve_greedy,
)
from gangplan.solver.greedy.evidence import (
    placement_decision,
    placement_evidence,
    placement_scores_at_step,
    pod_scores_at_step,
)
from gangplan.solver.greedy.framework import SUCCESS, Code, CycleState, Status
from gangplan.solver.greedy.plugins import REGISTRY, Plugin, Registry
from gangplan.solver.greedy.plugins.base import constant_reason
from gangplan.solver.greedy.samples import Samples, sample_greedy
from gangplan.solver.greedy.scheduling_queue import (
    FLUSH_INTERVAL,
    INITIAL_BACKOFF,
    MAX_BACKOFF,
    MAX_IN_UNSCHEDULABLE,
)
from gangplan.solver.greedy.session import GreedySession, GroupOutcome
from gangplan.solver.greedy.snapshot import NodeTable

__all__ = [
    "ENGINE",
    "FLUSH_INTERVAL",
    "INITIAL_BACKOFF",
    "MAX_BACKOFF",
    "MAX_IN_UNSCHEDULABLE",
    "REGISTRY",
    "SUCCESS",
    "Code",
    "CycleState",
    "GreedySession",
    "GroupOutcome",
    "NodeTable",
    "Plugin",
    "Registry",
    "Samples",
    "Status",
    "build_trace",
    "constant_reason",
    "placement_decision",
    "placement_evidence",
    "placement_scores_at_step",
    "pod_scores_at_step",
    "replay_options",
    "run_cycle",
    "sample_greedy",
    "solve_greedy",
]
