"""Build a Result from placements, the same way for every engine.

Both engines decide *where pods go* (and which pods are evicted); everything derived from that (the
per-group outcome, the placed counts, the domain, the shared objective tiers) is computed here, so
the two engines cannot disagree on bookkeeping.

Objective tiers, highest first (``Result.objective`` keeps this order):

``admitted[p=<priority>]``  entities admitted at each priority, highest priority first. An entity is
                            a root group (a PodGroup without parent, or a root CompositePodGroup) or a
                            single pod without a group. A higher priority always dominates a lower one.
``placed``                  pending pods placed (extra pods past minCount included)

The disruption tiers follow when the snapshot holds potential victims (bound pods whose unit
priority is below the highest pending entity's), for every engine alike, as *costs* (lower is
better, :data:`COST_TIERS`), computed from ``Result.victims``:

``pdbViolations``           per PodDisruptionBudget, evicted matching pods (not already in
                            ``status.disruptedPods``) beyond ``status.disruptionsAllowed``
``victims[p=<priority>]``   victim pods at each unit priority, highest priority first (one victim
                            of a higher priority costs more than any number of lower ones)
``brokenGroups``            gangs (and ``disruptionMode: all`` groups) that lose at least one pod
``victims``                 victim pods in all

Engines may append lower tiers of their own (the exact engine's tie-break), which :func:`compare`
ignores unless both results carry them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from gangplan.models.cluster import Cluster
from gangplan.models.groups import EntityKey
from gangplan.models.result import CompositeOutcome, GroupOutcome, PodOutcome, Result, Status
from gangplan.models.trace import ExactTrace, GreedyTrace

ADMITTED_PREFIX = "admitted[p="
PLACED = "placed"
PDB_VIOLATIONS = "pdbViolations"
VICTIMS_PREFIX = "victims[p="
BROKEN_GROUPS = "brokenGroups"
VICTIM_PODS = "victims"


def is_cost(tier: str) -> bool:
    """Disruption tiers are costs: lower is better."""
    return tier in (PDB_VIOLATIONS, BROKEN_GROUPS, VICTIM_PODS) or tier.startswith(VICTIMS_PREFIX)


def entity_of(cluster: Cluster, pod_key: str) -> EntityKey:
    """The queue entity a pending pod belongs to (:meth:`GroupTree.entity_of`)."""
    return cluster.groups.entity_of(cluster.pod_by_key[pod_key])


def entity_priority(cluster: Cluster, entity: EntityKey) -> int:
    return cluster.groups.entity_priority(entity)


def group_placed_counts(cluster: Cluster, placements: Mapping[str, str], victims: Iterable[str] = ()) -> tuple[dict[str, int], dict[str, int]]:
    """PodGroup key -> pods on nodes after the run, and -> pods newly placed."""
    gone = set(victims)
    tree = cluster.groups
    placed: dict[str, int] = defaultdict(int)
    newly: dict[str, int] = defaultdict(int)
    for p in cluster.bound_pods:
        if p.group_key in tree and p.key not in gone:
            placed[p.group_key] += 1
    for key in placements:
        g = cluster.pod_by_key[key].group_key
        if g in tree:
            placed[g] += 1
            newly[g] += 1
    return placed, newly


def admitted_entities(cluster: Cluster, placements: Mapping[str, str], victims: Iterable[str] = ()) -> set[EntityKey]:
    """Entities with at least one newly placed pod whose group rules hold (root Success)."""
    placed, _ = group_placed_counts(cluster, placements, victims)
    tree = cluster.groups
    out = set()
    for key in placements:
        ent = entity_of(cluster, key)
        if ent.is_pod or tree.satisfied(ent.key, placed):
            out.add(ent)
    return out


def objective(cluster: Cluster, placements: Mapping[str, str], victims: Iterable[str] = ()) -> dict[str, float]:
    """The shared objective tiers (see the module docstring)."""
    victims = list(victims)
    prios = sorted({entity_priority(cluster, entity_of(cluster, p.key)) for p in cluster.pending_pods}, reverse=True)
    counts: dict[int, int] = {pr: 0 for pr in prios}
    for ent in admitted_entities(cluster, placements, victims):
        counts[entity_priority(cluster, ent)] += 1
    out: dict[str, float] = {f"{ADMITTED_PREFIX}{pr}]": float(counts[pr]) for pr in prios}
    out[PLACED] = float(len(placements))
    out.update(disruption(cluster, victims))
    return out


def victim_priorities(cluster: Cluster) -> list[int]:
    """Unit priorities of the bound pods a pending entity could evict (strictly lower than the
    highest pending entity priority), highest first; empty when nothing could be a victim."""
    tree = cluster.groups
    pending = [tree.entity_priority(tree.entity_of(p)) for p in cluster.pending_pods]
    if not pending:
        return []
    top = max(pending)
    return sorted({pr for p in cluster.bound_pods if (pr := tree.unit_priority(p)) < top}, reverse=True)


def disruption(cluster: Cluster, victims: Iterable[str]) -> dict[str, float]:
    """The disruption tiers (costs) of evicting ``victims``; empty without potential victims."""
    prios = victim_priorities(cluster)
    if not prios:
        return {}
    tree = cluster.groups
    gone = [cluster.pod_by_key[k] for k in sorted(set(victims)) if k in cluster.pod_by_key]
    out: dict[str, float] = {PDB_VIOLATIONS: float(pdb_violations(cluster, gone))}
    for pr in prios:
        out[f"{VICTIMS_PREFIX}{pr}]"] = float(sum(1 for p in gone if tree.unit_priority(p) == pr))
    out[BROKEN_GROUPS] = float(len(tree.broken_groups(gone)))
    out[VICTIM_PODS] = float(len(gone))
    return out


def pdb_violations(cluster: Cluster, gone: Iterable) -> int:
    """Per PDB, evicted matching pods beyond ``status.disruptionsAllowed`` (pods already listed in
    ``status.disruptedPods`` do not count again), summed."""
    from gangplan.predicates import selector_matches

    gone = list(gone)
    total = 0
    for pdb in cluster.pdbs:
        hit = sum(1 for p in gone if p.namespace == pdb.namespace and p.name not in pdb.disrupted_pods
                  and pdb.selector is not None and selector_matches(pdb.selector, p.labels))
        total += max(0, hit - pdb.disruptions_allowed)
    return total


def compare(a: Mapping[str, float], b: Mapping[str, float]) -> int:
    """Lexicographic comparison of two objectives over the tiers both carry: -1, 0 or 1 (1: ``a``
    is better). Cost tiers (:func:`is_cost`) count lower as better."""
    keys = [k for k in a if k in b]
    for k in keys:
        if a[k] != b[k]:
            better = a[k] < b[k] if is_cost(k) else a[k] > b[k]
            return 1 if better else -1
    return 0


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
) -> Result:
    """Assemble a Result. ``placements`` maps pending pod keys to nodes (nominations included);
    ``trace`` is the engine's trace model, or its JSON (validated into the engine's model)."""
    pod_reasons = pod_reasons or {}
    group_reasons = group_reasons or {}
    victims = sorted(set(victims))
    nominated = set(nominated)
    pods: dict[str, PodOutcome] = {}
    for p in cluster.pending_pods:
        node = placements.get(p.key)
        if node is not None:
            pods[p.key] = PodOutcome(node=node, reason=None, nominated=p.key in nominated)
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
            groups[gkey] = GroupOutcome(admitted=False, placed=0, min_count=0, pending=pending_by_group[gkey],
                                        reason=f"gated at PreEnqueue: waiting for pod group {gkey}, which is not in the snapshot")
            continue
        g = tree.node(gkey)
        ok = newly.get(gkey, 0) > 0 and tree.node(g.root).entity in admitted and placed.get(gkey, 0) >= g.need
        nodes = [placements[p.key] for p in g.members if p.key in placements]
        nodes += [p.node_name for p in g.members if p.node_name and p.key not in victims]
        reason = None if ok else group_reasons.get(gkey) or _default_group_reason(cluster, gkey, newly.get(gkey, 0))
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


def composite_outcomes(cluster: Cluster, placed: Mapping[str, int], admitted: set, pending_by_group: Mapping[str, int]) -> dict[str, CompositeOutcome]:
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
            groups_admitted=sum(1 for c in n.children if c in tree.nodes and tree.satisfied(c, placed)),
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
