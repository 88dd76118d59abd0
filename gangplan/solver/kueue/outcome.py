"""A Result with Kueue's admission in it (``Result.kueue``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gangplan.models.cluster import Cluster
from gangplan.models.result import PodOutcome, Result
from gangplan.solver.kueue.apply import kueue_pods

if TYPE_CHECKING:
    from gangplan.solver.kueue.admit import Admission

NOT_ADMITTED = "not admitted by Kueue"


def running_workloads(cluster: Cluster, placements, victims) -> set[str]:
    """Workloads (not finished) with every pod on a node after a run with ``placements`` and
    ``victims`` (:func:`gangplan.models.objective.kueue_incomplete`'s rule)."""
    from gangplan.models.objective import kueue_incomplete

    state = cluster.kueue
    incomplete = kueue_incomplete(cluster, placements, victims)
    gone = set(victims)
    pods = cluster.pod_by_key
    out = set()
    for key, wl in state.workloads.items():
        keys = [k for ps in wl.podsets for k in ps.pods if k in pods]
        if wl.finished or not keys or any(k in incomplete for k in keys):
            continue
        if all(k in placements or (pods[k].node_name and k not in gone) for k in keys):
            out.add(key)
    return out


def with_admission(result: Result, admission: Admission) -> Result:
    """``result`` (kube-scheduler's run on the admitted snapshot) with the admission pass: its
    document in ``kueue``, the Kueue release in ``params.kueueVersion``, and each pod of a
    Workload Kueue did not admit given Kueue's reason (``not admitted by Kueue: <message>``)."""
    outcome = admission.outcome.with_running(
        running_workloads(admission.cluster, result.placements(), result.victims)
    )
    owner = kueue_pods(admission.cluster.kueue)
    pods = dict(result.pods)
    for key, po in result.pods.items():
        wl = outcome.workloads.get(owner.get(key, ("", ""))[0])
        if wl is not None and not wl.admitted and po.node is None:
            pods[key] = PodOutcome(reason=f"{NOT_ADMITTED}: {wl.reason}")
    return result.model_copy(
        update={
            "kueue": outcome,
            "pods": pods,
            "params": {**result.params, "kueueVersion": outcome.version},
        }
    )
