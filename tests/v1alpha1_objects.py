"""v1.35-era objects for tests: the ``scheduling.k8s.io/v1alpha1`` Workload (one pod group ``pg``)
and pods that join it through ``spec.workloadRef`` (the only group API v1.35 serves)."""

from __future__ import annotations

NS = "default"


def workload(name: str, min_count: int | None = 3) -> dict:
    """A Workload with one pod group ``pg``: a gang of ``min_count``, or basic when None."""
    policy = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"podGroups": [{"name": "pg", "policy": policy}]},
    }


def pod(
    name: str,
    second: int,
    cpu: str = "1",
    *,
    workload: str | None = None,
    prio: int = 0,
    node: str | None = None,
    on: str | None = None,
    never: bool = False,
) -> dict:
    """A pod created ``second`` seconds into the minute: bound to ``node`` (Running) or pending,
    in ``workload``'s group ``pg``, held to the node labelled ``n: on``, ``preemptionPolicy:
    Never`` with ``never``."""
    spec: dict = {
        "priority": prio,
        "containers": [{"name": "c", "image": "image", "resources": {"requests": {"cpu": cpu}}}],
    }
    if workload:
        spec["workloadRef"] = {"name": workload, "podGroup": "pg"}
    if node:
        spec["nodeName"] = node
    if on:
        spec["nodeSelector"] = {"n": on}
    if never:
        spec["preemptionPolicy"] = "Never"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "creationTimestamp": f"2026-01-01T00:00:{second:02d}Z",
        },
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }
