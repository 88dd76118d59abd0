"""What ``gangplan inspect`` reports: a JSON-ready summary of a Cluster."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from gangplan.models.cluster import Cluster
from gangplan.models.objects import CPU, MEMORY, PODS
from gangplan.models.quantity import format_quantity
from gangplan.models.version import VERSIONS
from gangplan.models.well_known import GPU_PRODUCT

GPU_MODEL_LABELS = (GPU_PRODUCT, "gangplan.io/gpu-model")


def _used_by_node(cluster: Cluster) -> dict[str, dict[str, int]]:
    used: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for p in cluster.bound_pods:
        u = used[p.node_name]  # type: ignore[index]
        for r, q in p.requests.items():
            u[r] += q
        u[PODS] += 1
    return used


def _fmt(resources: dict[str, int]) -> dict[str, str]:
    return {r: format_quantity(r, q) for r, q in resources.items()}


def node_shapes(cluster: Cluster) -> list[dict[str, Any]]:
    """Nodes grouped by allocatable and GPU model, largest group first."""
    shapes: Counter[tuple] = Counter()
    for n in cluster.nodes:
        model = next((n.labels[k] for k in GPU_MODEL_LABELS if k in n.labels), "")
        shapes[(tuple(sorted(n.allocatable.items())), model)] += 1
    out = []
    for (alloc, model), count in sorted(shapes.items(), key=lambda kv: (-kv[1], kv[0])):
        out.append({"count": count, "gpuModel": model or None, "allocatable": _fmt(dict(alloc))})
    return out


def topology_levels(cluster: Cluster) -> dict[str, Any]:
    """Levels of the domain tree with domain counts, and free capacity per domain where few."""
    from gangplan.topology import TopologyTree

    tree = TopologyTree.from_cluster(cluster)
    used = _used_by_node(cluster)
    levels = []
    for i, (key, count, missing) in enumerate(tree.domain_counts()):
        entry: dict[str, Any] = {"label": key, "domains": count, "nodesWithoutLabel": missing}
        if count <= 24:
            free: dict[str, dict[str, int]] = {}
            sizes: Counter[str] = Counter()
            for j, n in enumerate(cluster.nodes):
                d = tree.node_domain[i, j]
                if d < 0:
                    continue
                dom = tree.domains[i][d]
                sizes[dom] += 1
                f = free.setdefault(dom, defaultdict(int))
                for r, q in n.allocatable.items():
                    f[r] += max(0, q - used.get(n.name, {}).get(r, 0))
            entry["free"] = {dom: {"nodes": sizes[dom], **_fmt({r: q for r, q in f.items() if r != PODS})} for dom, f in free.items()}
        levels.append(entry)
    return {"source": tree.source, "levels": levels}


def summarize(cluster: Cluster) -> dict[str, Any]:
    used = _used_by_node(cluster)
    total: Counter[str] = Counter()
    in_use: Counter[str] = Counter()
    for n in cluster.nodes:
        total.update(n.allocatable)
        in_use.update({r: q for r, q in used.get(n.name, {}).items() if r in n.allocatable or r != PODS})
    resources = {}
    for r in cluster.resource_names:
        if total.get(r, 0) == 0 and in_use.get(r, 0) == 0:
            continue
        resources[r] = {
            "allocatable": format_quantity(r, total.get(r, 0)),
            "requested": format_quantity(r, in_use.get(r, 0)),
            "free": format_quantity(r, max(0, total.get(r, 0) - in_use.get(r, 0))),
        }
    groups = []
    pending_by_group: Counter[str] = Counter(p.group_key for p in cluster.pending_pods if p.group_key)
    for key in sorted(set(pending_by_group) | set(cluster.pod_groups)):
        g = cluster.pod_groups.get(key)
        members = cluster.groups.members(key)
        groups.append(
            {
                "group": key,
                "exists": g is not None,
                "policy": g.policy if g else None,
                "minCount": (g.min_count if g.policy == "gang" else 1) if g else None,
                "pods": len(members),
                "pending": pending_by_group.get(key, 0),
                "bound": sum(1 for p in members if p.node_name),
                "gated": sum(1 for p in members if p.key in cluster.gated),
                "priority": g.priority if g else None,
                "topologyKey": g.topology_key if g else None,
                "parent": g.parent if g else None,
                "requests": _request_summary(members),
            }
        )
    single = [p for p in cluster.pending_pods if p.group_key is None]
    ev = cluster.version_evidence
    return {
        "sources": list(cluster.sources),
        "counts": {
            "nodes": len(cluster.nodes),
            "unschedulableNodes": sum(1 for n in cluster.nodes if n.unschedulable),
            "taintedNodes": sum(1 for n in cluster.nodes if n.taints),
            "boundPods": len(cluster.bound_pods),
            "pendingPods": len(cluster.pending_pods),
            "gatedPods": len(cluster.gated),
            "podGroups": len(cluster.pod_groups),
            "compositePodGroups": len(cluster.composite_pod_groups),
            "priorityClasses": len(cluster.priority_classes),
            "podDisruptionBudgets": len(cluster.pdbs),
        },
        "skippedKinds": dict(cluster.skipped_kinds),
        "warnings": list(cluster.warnings),
        "translations": list(cluster.translations),
        "nodeShapes": node_shapes(cluster),
        "resources": resources,
        "topology": topology_levels(cluster),
        "pendingGroups": [g for g in groups if g["pending"] > 0],
        "singlePendingPods": len(single),
        "gated": dict(sorted(cluster.gated.items())),
        "profile": {
            "schedulerName": cluster.profile.scheduler_name,
            "source": cluster.profile.source,
            "percentageOfNodesToScore": cluster.profile.percentage_of_nodes_to_score,
            "fitStrategy": cluster.profile.fit_strategy,
            "fitResources": dict(cluster.profile.fit_resources),
            "scoreWeights": dict(cluster.profile.score_weights),
        },
        "kubeVersion": {
            "suggested": ev.suggested.value if ev.suggested else None,
            "kubelets": dict(ev.minors),
            "used": cluster.kube_version.value,
            "modelled": [v.value for v in VERSIONS],
            "apiVersions": dict(cluster.api_versions),
            "apiSuggested": ev.api_suggested.value if ev.api_suggested else None,
            "notServed": list(ev.not_served(cluster.kube_version)),
        },
    }


def _request_summary(pods) -> str:
    """Distinct request shapes of a group's pods, e.g. ``4x {cpu: 16, nvidia.com/gpu: 4}``."""
    shapes: Counter[tuple] = Counter(tuple(sorted(p.requests.items())) for p in pods)
    parts = []
    for shape, n in sorted(shapes.items(), key=lambda kv: (-kv[1], kv[0])):
        body = ", ".join(f"{r}: {format_quantity(r, q)}" for r, q in shape if r in (CPU, MEMORY) or "/" in r or r == "ephemeral-storage")
        parts.append(f"{n}x {{{body}}}")
    return "; ".join(parts)
