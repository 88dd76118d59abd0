"""Which ClusterQueue may admit a Workload at all: the checks Kueue makes before it nominates
one (kubernetes-sigs/kueue v0.19.2 ``pkg/scheduler/scheduler.go`` ``nominate`` and
``pkg/workload/admissibility.go`` ``ValidateAdmissibility``; ``pkg/cache/queue/manager.go`` for
a missing LocalQueue / ClusterQueue; ``StopPolicy`` Hold / HoldAndDrain). Written once: the greedy
admission, the exact engine's quota family and the reading of a placement all ask it."""

from __future__ import annotations

from gangplan.models.cluster import Cluster
from gangplan.models.kueue import ClusterQueue, KueueState, KueueWorkload
from gangplan.models.labels import selector_matches

NAMESPACE_MISMATCH = "workload namespace doesn't match ClusterQueue selector"
"""``workload.ErrNamespaceMismatch`` (``pkg/workload/resources.go``, v0.19.2), word for word."""


def queue_check(
    cluster: Cluster, state: KueueState, wl: KueueWorkload
) -> tuple[ClusterQueue | None, str | None]:
    """(the ClusterQueue, None) when Kueue may nominate ``wl``; else (its ClusterQueue or None,
    why not, in Kueue's words)."""
    if not wl.active:
        return None, "The workload is deactivated"
    lq = state.local_queues.get(f"{wl.namespace}/{wl.queue_name}")
    if lq is None:
        return None, f"LocalQueue {wl.queue_name} doesn't exist"
    cq = state.cluster_queues.get(lq.cluster_queue)
    if cq is None:
        return None, f"ClusterQueue {lq.cluster_queue} doesn't exist"
    if cq.stop_policy != "None":
        return cq, f"ClusterQueue {cq.name} is inactive"
    if lq.stop_policy != "None":
        return cq, f"LocalQueue {lq.name} is stopped"
    ns = cluster.namespaces.get(wl.namespace)
    if not selector_matches(cq.namespace_selector, ns.labels if ns else {}):
        return cq, NAMESPACE_MISMATCH
    return cq, None
