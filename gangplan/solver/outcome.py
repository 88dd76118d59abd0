"""Build a Result from placements, the same way for every engine.

Both engines decide *where pods go* (and which pods are evicted); everything derived from that (the
per-group outcome, the placed counts, the domain, the shared objective tiers) is computed here, so
the two engines cannot disagree on bookkeeping.

The objective tiers (names, order, how each is computed) are defined once, in
:mod:`gangplan.models.objective`; this module puts them into ``Result.objective`` and re-exports
their names for its callers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from gangplan.dra.results import assign_devices
from gangplan.gcpause import gc_paused
from gangplan.models.cluster import Cluster
from gangplan.models.groups import EntityKey
from gangplan.models.objective import (
    ADMITTED_PREFIX,
    BROKEN_GROUPS,
    PDB_VIOLATIONS,
    PLACED,
    VICTIM_PODS,
    VICTIMS_PREFIX,
    admitted_entities,
    compare,
    disruption,
    group_placed_counts,
    is_cost,
    objective,
    pdb_violations,
    victim_priorities,
)
from gangplan.models.result import (
    ClaimDevice,
    CompositeOutcome,
    GroupOutcome,
    PodOutcome,
    Result,
    Status,
)
from gangplan.models.trace import ExactTrace, GreedyTrace


def entity_of(cluster: Cluster, pod_key: str) -> EntityKey:
    """The queue entity a pending pod belongs to (:meth:`GroupTree.entity_of`)."""
    return cluster.groups.entity_of(cluster.pod_by_key[pod_key])


def entity_priority(cluster: Cluster, entity: EntityKey) -> int:
    return cluster.groups.entity_priority(entity)


def _domain(cluster: Cluster, topology_key: str | None, nodes: Iterable[str]) -> str | None:
    if not topology_key:
        return None
    index, all_nodes = cluster.node_index, cluster.nodes
    values = sorted({all_nodes[index[n]].labels.get(topology_key, "") for n in nodes})
    if len(values) != 1 or values[0] == "":
        return None
    return f"{topology_key}={values[0]}"


def build_result(
    cluster: Cluster,
    *,
    engine: str,
    status: Status,
    placements: Mapping[str, str],
    pod_reasons: Mapping[str, str] | None = None,
    group_reasons: Mapping[str, str] | None = None,
    victims: Iterable[str] = (),
    nominated: Iterable[str] = (),
    extra_objective: Mapping[str, float] | None = None,
    bound: Mapping[str, float] | None = None,
    gap: float | None = None,
    wall_seconds: float = 0.0,
    params: Mapping[str, Any] | None = None,
    trace: GreedyTrace | ExactTrace | Mapping[str, Any] | None = None,
    snapshot: str | None = None,
    name_devices: bool = True,
) -> Result:
    """Assemble a Result. ``placements`` maps pending pod keys to nodes (nominations included);
    ``trace`` is the engine's trace model, or its JSON (validated into the engine's model).
    ``name_devices``: name the devices of the pods' DRA claims (``PodOutcome.claims``; off for the
    exact engine's intermediate checks, which only validate placements)."""
    pod_reasons = pod_reasons or {}
    group_reasons = group_reasons or {}
    victims = sorted(set(victims))
    nominated = set(nominated)
    pods: dict[str, PodOutcome] = {}
    with gc_paused():  # one outcome per pod, no cycles (gangplan.gcpause)
        devices = (
            assign_devices(cluster, placements) if name_devices else {}
        )  # DRA: the devices each claim gets (one allocator)
        for p in cluster.pending_pods:
            node = placements.get(p.key)
            if node is not None:
                claims = [
                    ClaimDevice(claim=c, request=r, driver=d, pool=pl, device=dev)
                    for c, r, d, pl, dev in devices.get(p.key, ())
                ]
                pods[p.key] = PodOutcome(
                    node=node, reason=None, nominated=p.key in nominated, claims=claims
                )
            else:
                reason = pod_reasons.get(p.key) or cluster.not_queued.get(p.key) or "not placed"
                pods[p.key] = PodOutcome(node=None, reason=reason)
    placed, newly = group_placed_counts(cluster, placements, victims)
    admitted = admitted_entities(cluster, placements, victims)
    tree = cluster.groups
    groups: dict[str, GroupOutcome] = {}
    pending_by_group: dict[str, int] = defaultdict(int)
    for p in cluster.pending_pods:
        if p.group_key:
            pending_by_group[p.group_key] += 1
    for gkey in sorted(pending_by_group):
        if gkey not in tree:  # a dangling reference: kube-scheduler gates its pods at PreEnqueue
            groups[gkey] = GroupOutcome(
                admitted=False,
                placed=0,
                min_count=0,
                pending=pending_by_group[gkey],
                reason=f"gated at PreEnqueue: waiting for pod group {gkey}, which is not in the snapshot",
            )
            continue
        g = tree.node(gkey)
        ok = (
            newly.get(gkey, 0) > 0
            and tree.node(g.root).entity in admitted
            and placed.get(gkey, 0) >= g.need
        )
        nodes = [placements[p.key] for p in g.members if p.key in placements]
        nodes += [p.node_name for p in g.members if p.node_name and p.key not in victims]
        reason = (
            None
            if ok
            else group_reasons.get(gkey) or _default_group_reason(cluster, gkey, newly.get(gkey, 0))
        )
        groups[gkey] = GroupOutcome(
            admitted=ok,
            placed=placed.get(gkey, 0),
            min_count=g.need,
            pending=pending_by_group[gkey],
            priority=g.priority,
            domain=_domain(cluster, g.topology_key, nodes) if nodes else None,
            reason=reason,
        )
    composites = composite_outcomes(cluster, placed, admitted, pending_by_group)
    obj = objective(cluster, placements, victims)
    if extra_objective:
        obj.update(extra_objective)
    return Result(
        engine=engine,
        status=status,
        snapshot=snapshot,
        pods=pods,
        groups=groups,
        composite_groups=composites,
        victims=victims,
        objective=obj,
        bound=dict(bound or {}),
        gap=gap,
        wall_seconds=round(wall_seconds, 6),
        params=dict(params or {}),
        trace=trace if isinstance(trace, GreedyTrace | ExactTrace) else dict(trace or {}),
        warnings=list(cluster.warnings) + list(cluster.version_warnings),
        translations=list(cluster.translations),
    )


def composite_outcomes(
    cluster: Cluster, placed: Mapping[str, int], admitted: set, pending_by_group: Mapping[str, int]
) -> dict[str, CompositeOutcome]:
    """One row per CompositePodGroup with a pending pod below it: the same rule the objective
    counts (:meth:`GroupTree.satisfied`, the root's admission)."""
    tree = cluster.groups
    admitted_roots = {e.key for e in admitted if not e.is_pod}
    out: dict[str, CompositeOutcome] = {}
    for key in sorted(k for k in tree.nodes if not tree.node(k).is_leaf and k not in tree.cycles):
        n = tree.node(key)  # a composite on (or into) a parent cycle holds its pods back: no row
        pending = sum(pending_by_group.get(leaf, 0) for leaf in n.leaves)
        if pending == 0:
            continue
        ok = tree.satisfied(key, placed) and n.root in admitted_roots
        out[key] = CompositeOutcome(
            admitted=ok,
            groups_admitted=sum(
                1 for c in n.children if c in tree.nodes and tree.satisfied(c, placed)
            ),
            need=n.need,
            children=len(n.children),
            placed=sum(placed.get(leaf, 0) for leaf in n.leaves),
            pending=pending,
            priority=n.priority,
            root=n.root == key,
        )
    return out


def _default_group_reason(cluster: Cluster, gkey: str, newly: int) -> str:
    members = cluster.groups.node(gkey).members
    gated = [p for p in members if p.key in cluster.gated]
    if gated:
        return f"gated: {cluster.gated[gated[0].key]}"
    if newly == 0:
        return "no pod placed"
    return "group rules not met"


__all__ = [
    "ADMITTED_PREFIX",
    "BROKEN_GROUPS",
    "PDB_VIOLATIONS",
    "PLACED",
    "VICTIMS_PREFIX",
    "VICTIM_PODS",
    "admitted_entities",
    "build_result",
    "compare",
    "composite_outcomes",
    "disruption",
    "entity_of",
    "entity_priority",
    "group_placed_counts",
    "is_cost",
    "objective",
    "pdb_violations",
    "victim_priorities",
]
