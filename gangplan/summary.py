"""What ``gangplan inspect`` reports: a Cluster's summary as one typed record,
:class:`~gangplan.models.documents.InspectDocument` (:func:`inspect_summary`), which the table
view reads by attribute and :func:`summarize` prints as ``inspect --json``."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from gangplan.models.cluster import Cluster
from gangplan.models.documents import (
    Counts,
    InspectDocument,
    KubeVersionSummary,
    KueueQueueRow,
    KueueQuotaRow,
    KueueSummary,
    NodeShape,
    PendingGroup,
    ProfileSummary,
    ResourceTotals,
    TopologyLevel,
    TopologySummary,
)
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


JSON_KEYS = (
    "sources",
    "counts",
    "skippedKinds",
    "warnings",
    "translations",
    "nodeShapes",
    "resources",
    "topology",
    "pendingGroups",
    "singlePendingPods",
    "gated",
    "profile",
    "kubeVersion",
    "fragmentation",
    "kueue",
)
"""The top-level keys of ``inspect --json`` in the order the command prints them (``kueue`` only
with Kueue objects)."""


def node_shapes(cluster: Cluster) -> list[NodeShape]:
    """Nodes grouped by allocatable and GPU model, largest group first."""
    shapes: Counter[tuple] = Counter()
    for n in cluster.nodes:
        model = next((n.labels[k] for k in GPU_MODEL_LABELS if k in n.labels), "")
        shapes[(tuple(sorted(n.allocatable.items())), model)] += 1
    return [
        NodeShape(count=count, gpu_model=model or None, allocatable=_fmt(dict(alloc)))
        for (alloc, model), count in sorted(shapes.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def topology_levels(cluster: Cluster, tree: Any = None) -> TopologySummary:
    """Levels of the domain tree with domain counts, and free capacity per domain where few
    (``tree``: the cluster's :class:`~gangplan.topology.TopologyTree` when the caller has it)."""
    from gangplan.topology import TopologyTree

    if tree is None:
        tree = TopologyTree.from_cluster(cluster)
    used = _used_by_node(cluster)
    levels = []
    for i, (key, count, missing) in enumerate(tree.domain_counts()):
        level = TopologyLevel(label=key, domains=count, nodes_without_label=missing)
        if count <= 24:
            level.free = _free_per_domain(cluster, tree, i, used)
        levels.append(level)
    return TopologySummary(source=tree.source, levels=levels)


def _free_per_domain(
    cluster: Cluster, tree: Any, level: int, used: dict[str, dict[str, int]]
) -> dict[str, dict[str, int | str]]:
    """Per domain of one tree level: its nodes and the capacity they have free."""
    free: dict[str, dict[str, int]] = {}
    sizes: Counter[str] = Counter()
    for j, n in enumerate(cluster.nodes):
        d = tree.node_domain[level, j]
        if d < 0:
            continue
        dom = tree.domains[level][d]
        sizes[dom] += 1
        f = free.setdefault(dom, defaultdict(int))
        for r, q in n.allocatable.items():
            f[r] += max(0, q - used.get(n.name, {}).get(r, 0))
    return {
        dom: {"nodes": sizes[dom], **_fmt({r: q for r, q in f.items() if r != PODS})}
        for dom, f in free.items()
    }


def _resources(cluster: Cluster) -> dict[str, ResourceTotals]:
    """Allocatable, requested (by bound pods) and free, per resource some node has or some pod uses."""
    used = _used_by_node(cluster)
    total: Counter[str] = Counter()
    in_use: Counter[str] = Counter()
    for n in cluster.nodes:
        total.update(n.allocatable)
        in_use.update(
            {r: q for r, q in used.get(n.name, {}).items() if r in n.allocatable or r != PODS}
        )
    resources = {}
    for r in cluster.resource_names:
        if total.get(r, 0) == 0 and in_use.get(r, 0) == 0:
            continue
        resources[r] = ResourceTotals(
            allocatable=format_quantity(r, total.get(r, 0)),
            requested=format_quantity(r, in_use.get(r, 0)),
            free=format_quantity(r, max(0, total.get(r, 0) - in_use.get(r, 0))),
        )
    return resources


def _pending_groups(cluster: Cluster) -> list[PendingGroup]:
    """Every PodGroup (object or name a pod gives) with pending pods, by key."""
    groups = []
    pending_by_group: Counter[str] = Counter(
        p.group_key for p in cluster.pending_pods if p.group_key
    )
    for key in sorted(set(pending_by_group) | set(cluster.pod_groups)):
        g = cluster.pod_groups.get(key)
        members = cluster.groups.members(key)
        groups.append(
            PendingGroup(
                group=key,
                exists=g is not None,
                policy=g.policy if g else None,
                min_count=(g.min_count if g.policy == "gang" else 1) if g else None,
                pods=len(members),
                pending=pending_by_group.get(key, 0),
                bound=sum(1 for p in members if p.node_name),
                gated=sum(1 for p in members if p.key in cluster.gated),
                priority=g.priority if g else None,
                topology_key=g.topology_key if g else None,
                parent=g.parent if g else None,
                requests=_request_summary(members),
            )
        )
    return [g for g in groups if g.pending > 0]


def _counts(cluster: Cluster) -> Counts:
    return Counts(
        nodes=len(cluster.nodes),
        unschedulable_nodes=sum(1 for n in cluster.nodes if n.unschedulable),
        tainted_nodes=sum(1 for n in cluster.nodes if n.taints),
        bound_pods=len(cluster.bound_pods),
        pending_pods=len(cluster.pending_pods),
        gated_pods=len(cluster.gated),
        pod_groups=len(cluster.pod_groups),
        composite_pod_groups=len(cluster.composite_pod_groups),
        priority_classes=len(cluster.priority_classes),
        pod_disruption_budgets=len(cluster.pdbs),
    )


def _profile(cluster: Cluster) -> ProfileSummary:
    p = cluster.profile
    return ProfileSummary(
        scheduler_name=p.scheduler_name,
        source=p.source,
        percentage_of_nodes_to_score=p.percentage_of_nodes_to_score,
        fit_strategy=p.fit_strategy,
        fit_resources=dict(p.fit_resources),
        score_weights=dict(p.score_weights),
    )


def _kube_version(cluster: Cluster) -> KubeVersionSummary:
    ev = cluster.version_evidence
    return KubeVersionSummary(
        suggested=ev.suggested.value if ev.suggested else None,
        kubelets=dict(ev.minors),
        used=cluster.kube_version.value,
        modelled=[v.value for v in VERSIONS],
        api_versions=dict(cluster.api_versions),
        api_suggested=ev.api_suggested.value if ev.api_suggested else None,
        not_served=list(ev.not_served(cluster.kube_version)),
    )


def inspect_summary(cluster: Cluster, *, fit: bool = False) -> InspectDocument:
    """What ``gangplan inspect`` shows of ``cluster``, as one typed record; ``fit`` (``inspect
    --fit``) runs the engines for the largest gang of each pending gang shape
    (:func:`gangplan.fragmentation.fragmentation`)."""
    from gangplan.fragmentation import fragmentation
    from gangplan.topology import TopologyTree

    tree = TopologyTree.from_cluster(cluster)
    return InspectDocument(
        sources=list(cluster.sources),
        counts=_counts(cluster),
        skipped_kinds=dict(cluster.skipped_kinds),
        warnings=list(cluster.warnings),
        translations=list(cluster.translations),
        node_shapes=node_shapes(cluster),
        resources=_resources(cluster),
        topology=topology_levels(cluster, tree),
        pending_groups=_pending_groups(cluster),
        single_pending_pods=sum(1 for p in cluster.pending_pods if p.group_key is None),
        gated=dict(sorted(cluster.gated.items())),
        profile=_profile(cluster),
        kube_version=_kube_version(cluster),
        fragmentation=fragmentation(cluster, fit=fit, tree=tree),
        kueue=kueue_summary(cluster),
    )


def kueue_summary(cluster: Cluster) -> KueueSummary | None:
    """The Kueue part of ``inspect``: each ClusterQueue's quota per flavor and resource with what
    the Workloads admitted before the snapshot use and what is still available (the quota rule of
    :mod:`gangplan.predicates.quota`), and its Workloads admitted and pending."""
    state = cluster.kueue
    if state is None:
        return None
    from gangplan.predicates.quota import QuotaTree

    tree = QuotaTree.build(state)
    usage = tree.usage_from(state.admitted())
    flavors = {}
    for name, f in sorted(state.flavors.items()):
        flavors[name] = dict(f.node_labels) | (
            {"topology": f.topology_name} if f.topology_name else {}
        )
    queues, quota = [], []
    lqs: dict[str, list[str]] = {}
    for key, lq in sorted(state.local_queues.items()):
        lqs.setdefault(lq.cluster_queue, []).append(key)
    for name, cq in sorted(state.cluster_queues.items()):
        wls = [
            w
            for w in state.workloads.values()
            if not w.finished and state.cluster_queue_of(w) is cq
        ]
        queues.append(
            KueueQueueRow(
                cluster_queue=name,
                strategy=cq.queueing_strategy,
                admitted=sum(1 for w in wls if w.admission is not None),
                pending=sum(1 for w in wls if w.admission is None),
                local_queues=lqs.get(name, []),
            )
        )
        used = usage.of_cluster_queue(name)
        for rg in cq.resource_groups:
            for fq in rg.flavors:
                for q in fq.resources:
                    quota.append(
                        KueueQuotaRow(
                            cluster_queue=name,
                            cohort=cq.cohort,
                            flavor=fq.name,
                            resource=q.name,
                            nominal=q.nominal,
                            borrowing_limit=q.borrowing_limit,
                            lending_limit=q.lending_limit,
                            used=used.get((fq.name, q.name), 0),
                            available=tree.available(name, fq.name, q.name, usage)
                            if name in tree.cluster_queues
                            else 0,
                        )
                    )
    return KueueSummary(version=state.version, flavors=flavors, queues=queues, quota=quota)


def inspect_json(summary: InspectDocument) -> dict[str, Any]:
    """``inspect --json`` of a summary: its keys in :data:`JSON_KEYS` order, a topology level's
    ``free`` only where the level has it (few domains)."""
    data = summary.dump()
    for level in data["topology"]["levels"]:
        if level["free"] is None:
            del level["free"]
    return {k: data[k] for k in JSON_KEYS if k in data}


def summarize(cluster: Cluster) -> dict[str, Any]:
    """``inspect --json`` of ``cluster`` (:func:`inspect_summary`, as :func:`inspect_json` prints it)."""
    return inspect_json(inspect_summary(cluster))


def _request_summary(pods) -> str:
    """Distinct request shapes of a group's pods, e.g. ``4x {cpu: 16, nvidia.com/gpu: 4}``."""
    shapes: Counter[tuple] = Counter(tuple(sorted(p.requests.items())) for p in pods)
    parts = []
    for shape, n in sorted(shapes.items(), key=lambda kv: (-kv[1], kv[0])):
        body = ", ".join(
            f"{r}: {format_quantity(r, q)}"
            for r, q in shape
            if r in (CPU, MEMORY) or "/" in r or r == "ephemeral-storage"
        )
        parts.append(f"{n}x {{{body}}}")
    return "; ".join(parts)


__all__ = [
    "JSON_KEYS",
    "inspect_json",
    "inspect_summary",
    "node_shapes",
    "summarize",
    "topology_levels",
]
