"""A Result with Kueue's admission in it (``Result.kueue``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gangplan.models.objective import kueue_running
from gangplan.models.result import PodOutcome, Result

if TYPE_CHECKING:
    from gangplan.solver.kueue.admit import Admission

NOT_ADMITTED = "not admitted by Kueue"


def with_admission(result: Result, admission: Admission) -> Result:
    """``result`` (kube-scheduler's run on the admitted snapshot) with the admission pass: its
    document in ``kueue``, the Kueue release in ``params.kueueVersion``, and each pod of a
    Workload Kueue did not admit given Kueue's reason (``not admitted by Kueue: <message>``)."""
    outcome = admission.outcome.with_running(
        kueue_running(admission.cluster, result.placements(), result.victims)
    )
    owner = admission.cluster.kueue.pod_owners()
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
