"""The objective tiers: their names, their order and how each is computed, written once.

Both engines, the validator's callers, the Result assembly (:mod:`gangplan.solver.outcome`), the
diff and the greedy sampler read this module; the exact engine builds one CP-SAT expression per
tier named here (:mod:`gangplan.solver.exact.objective`, :mod:`gangplan.solver.exact.preemption`).

Tiers, highest first (``Result.objective`` keeps this order):

``admitted[p=<priority>]``  entities admitted at each priority, highest priority first. An entity is
                            a root group (a PodGroup without parent, or a root CompositePodGroup) or a
                            single pod without a group. A higher priority always dominates a lower one.
                            With Kueue, an entity with a pod of a Workload that does not run whole
                            does not count (:func:`kueue_incomplete`).
``placed``                  pending pods placed (extra pods past minCount included)

The disruption tiers follow when the snapshot holds potential victims (bound pods whose unit
priority is below the highest pending entity's), for every engine alike, as *costs* (lower is
better, :func:`is_cost`), computed from the victims of ``Result.victims`` that are bound in the
snapshot (:func:`snapshot_victims`). A pending pod the greedy run placed and a later preemptor
evicted (rule V of issue 39) is also in ``Result.victims``, but the tiers see it as what it ends
as, a pending pod not placed: the Result is the same point of the objective as one that never
placed it (the exact model, which never evicts a pending pod, can reach that point).

``pdbViolations``           per PodDisruptionBudget, evicted matching pods (not already in
                            ``status.disruptedPods``) beyond ``status.disruptionsAllowed``
``victims[p=<priority>]``   victim pods at each unit priority, highest priority first (one victim
                            of a higher priority costs more than any number of lower ones)
``brokenGroups``            gangs (and ``disruptionMode: all`` groups) that lose at least one pod
                            (:meth:`GroupTree.broken_groups`)
``victims``                 victim pods in all

Engines may append lower tiers of their own (the exact engine's ``gpus``, ``topology``,
``spread`` and ``tiebreak``), which :func:`compare` ignores unless both results carry them.

>>> admitted_tier(100), victims_tier(0), is_cost(victims_tier(0)), is_cost(PLACED)
('admitted[p=100]', 'victims[p=0]', True, False)
>>> compare({PLACED: 2.0, VICTIM_PODS: 1.0}, {PLACED: 2.0, VICTIM_PODS: 0.0})
-1
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gangplan.models.cluster import Cluster
from gangplan.models.groups import EntityKey
from gangplan.models.labels import selector_matches
from gangplan.models.memo import ClusterMemo
from gangplan.models.objects import Pod, PodDisruptionBudget

ADMITTED_PREFIX = "admitted[p="
PLACED = "placed"
PDB_VIOLATIONS = "pdbViolations"
VICTIMS_PREFIX = "victims[p="
BROKEN_GROUPS = "brokenGroups"
VICTIM_PODS = "victims"


def admitted_tier(priority: int) -> str:
    """The name of the tier counting entities admitted at ``priority``."""
    return f"{ADMITTED_PREFIX}{priority}]"


def victims_tier(priority: int) -> str:
    """The name of the cost tier counting victim pods of unit priority ``priority``."""
    return f"{VICTIMS_PREFIX}{priority}]"


def is_cost(tier: str) -> bool:
    """Disruption tiers are costs: lower is better."""
    return tier in (PDB_VIOLATIONS, BROKEN_GROUPS, VICTIM_PODS) or tier.startswith(VICTIMS_PREFIX)


def compare(a: Mapping[str, float], b: Mapping[str, float]) -> int:
    """Lexicographic comparison of two objectives over the tiers both carry: -1, 0 or 1 (1: ``a``
    is better). Cost tiers (:func:`is_cost`) count lower as better."""
    keys = [k for k in a if k in b]
    for k in keys:
        if a[k] != b[k]:
            better = a[k] < b[k] if is_cost(k) else a[k] > b[k]
            return 1 if better else -1
    return 0


# ---- what every Result on one snapshot shares ---------------------------------------------------
@dataclass(frozen=True)
class _Snapshot:
    """What the tiers read of the snapshot alone, computed once per cluster (:data:`_SNAPSHOT`):
    a diff computes the objective of a dozen Results on one snapshot, and each pass over 100,000
    bound pods (their keys and groups, formatted per call) took 0.1-0.4 s."""

    bound_members: tuple[tuple[str, str], ...]
    """(pod key, PodGroup key) of every bound pod in a PodGroup of the forest, in snapshot order."""
    bound_counts: dict[str, int]
    """PodGroup key -> its bound pods (the counts ``bound_members`` adds up to, in the same order)."""
    pending_group: dict[str, str | None]
    """Pending pod key -> its PodGroup of the forest, or None."""
    pending_entity: dict[str, EntityKey]
    """Pending pod key -> its queue entity (:meth:`GroupTree.entity_of`)."""
    admitted_priorities: tuple[int, ...]
    victim_priorities: tuple[int, ...]

    @classmethod
    def of(cls, cluster: Cluster) -> _Snapshot:
        tree = cluster.groups
        members = []
        for p in cluster.bound_pods:
            g = p.group_key
            if g in tree:
                members.append((p.key, g))
        counts: dict[str, int] = {}
        for _, g in members:
            counts[g] = counts.get(g, 0) + 1
        pending_group: dict[str, str | None] = {}
        pending_entity: dict[str, EntityKey] = {}
        prios: set[int] = set()
        for p in cluster.pending_pods:
            g = p.group_key
            ent = tree.entity_of(p)
            pending_group[p.key] = g if g in tree else None
            pending_entity[p.key] = ent
            prios.add(tree.entity_priority(ent))
        victim_prios: set[int] = set()
        if prios:
            top = max(prios)
            victim_prios = {pr for p in cluster.bound_pods if (pr := tree.unit_priority(p)) < top}
        return cls(
            bound_members=tuple(members),
            bound_counts=counts,
            pending_group=pending_group,
            pending_entity=pending_entity,
            admitted_priorities=tuple(sorted(prios, reverse=True)),
            victim_priorities=tuple(sorted(victim_prios, reverse=True)),
        )


_SNAPSHOT: ClusterMemo[_Snapshot] = ClusterMemo(_Snapshot.of)


def _entity_of(cluster: Cluster, snap: _Snapshot, key: str) -> EntityKey:
    """The queue entity of the pod ``key`` (a pending pod's from the kept map)."""
    ent = snap.pending_entity.get(key)
    return ent if ent is not None else cluster.groups.entity_of(cluster.pod_by_key[key])


# ---- the admission tiers ------------------------------------------------------------------------
def admitted_priorities(cluster: Cluster) -> list[int]:
    """The priorities of the ``admitted[p=P]`` tiers: every pending entity's, highest first."""
    return list(_SNAPSHOT(cluster).admitted_priorities)


def group_placed_counts(
    cluster: Cluster, placements: Mapping[str, str], victims: Iterable[str] = ()
) -> tuple[dict[str, int], dict[str, int]]:
    """PodGroup key -> pods on nodes after the run, and -> pods newly placed.

    Every Result and every probe of a diff counts the snapshot's bound pods (100,000 on a
    10,000-node snapshot): their members and counts are made once per cluster (``_SNAPSHOT``),
    and walked pod by pod only when there are victims to leave out."""
    gone = set(victims)
    tree = cluster.groups
    snap = _SNAPSHOT(cluster)
    placed: dict[str, int] = defaultdict(int)
    newly: dict[str, int] = defaultdict(int)
    if gone:
        for key, g in snap.bound_members:
            if key not in gone:
                placed[g] += 1
    else:  # the bound pods' counts as they are (the same keys in the same order)
        placed.update(snap.bound_counts)
    pending = snap.pending_group
    for key in placements:
        if key in pending:
            g = pending[key]
        else:
            g = cluster.pod_by_key[key].group_key
            g = g if g in tree else None
        if g is not None:
            placed[g] += 1
            newly[g] += 1
    return placed, newly


def kueue_running(
    cluster: Cluster, placements: Mapping[str, str], victims: Iterable[str] = ()
) -> set[str]:
    """The Kueue Workloads (not finished) with every pod of the snapshot on a node after a run
    with ``placements`` and ``victims``: they run whole (issue 42). Empty without Kueue objects."""
    state = cluster.kueue
    if state is None:
        return set()
    gone = set(victims)
    pods = cluster.pod_by_key
    out: set[str] = set()
    for wl in state.workloads.values():
        keys = [k for ps in wl.podsets for k in ps.pods if k in pods]
        if wl.finished or not keys:
            continue
        if all(k in placements or (pods[k].node_name is not None and k not in gone) for k in keys):
            out.add(wl.key)
    return out


def kueue_incomplete(
    cluster: Cluster, placements: Mapping[str, str], victims: Iterable[str] = ()
) -> set[str]:
    """Pod keys of the Kueue Workloads with a pending pod that do not run whole after the run
    (:func:`kueue_running`): a job Kueue admits reserves quota for all its pods, and it runs only
    when all of them do; empty without Kueue objects."""
    state = cluster.kueue
    if state is None:
        return set()
    running = kueue_running(cluster, placements, victims)
    pods = cluster.pod_by_key
    out: set[str] = set()
    for wl in state.workloads.values():
        if wl.finished or wl.key in running:
            continue
        keys = [k for ps in wl.podsets for k in ps.pods if k in pods]
        if any(pods[k].node_name is None for k in keys):
            out.update(keys)
    return out


def admitted_entities(
    cluster: Cluster, placements: Mapping[str, str], victims: Iterable[str] = ()
) -> set[EntityKey]:
    """Entities with at least one newly placed pod whose group rules hold (root Success). With
    Kueue, an entity holding a pod of a Workload that does not run whole is not admitted
    (:func:`kueue_incomplete`)."""
    placed, _ = group_placed_counts(cluster, placements, victims)
    tree = cluster.groups
    snap = _SNAPSHOT(cluster)
    incomplete = kueue_incomplete(cluster, placements, victims)
    held = {_entity_of(cluster, snap, k) for k in incomplete}
    out = set()
    for key in placements:
        ent = _entity_of(cluster, snap, key)
        if ent in held:
            continue
        if ent.is_pod or tree.satisfied(ent.key, placed):
            out.add(ent)
    return out


def objective(
    cluster: Cluster, placements: Mapping[str, str], victims: Iterable[str] = ()
) -> dict[str, float]:
    """The shared objective tiers (see the module docstring)."""
    victims = list(victims)
    tree = cluster.groups
    prios = admitted_priorities(cluster)
    counts: dict[int, int] = {pr: 0 for pr in prios}
    for ent in admitted_entities(cluster, placements, victims):
        counts[tree.entity_priority(ent)] += 1
    out: dict[str, float] = {admitted_tier(pr): float(counts[pr]) for pr in prios}
    out[PLACED] = float(len(placements))
    out.update(disruption(cluster, victims))
    return out


# ---- the disruption tiers -----------------------------------------------------------------------
def victim_priorities(cluster: Cluster) -> list[int]:
    """Unit priorities of the bound pods a pending entity could evict (strictly lower than the
    highest pending entity priority), highest first; empty when nothing could be a victim."""
    return list(_SNAPSHOT(cluster).victim_priorities)


def snapshot_victims(cluster: Cluster, victims: Iterable[str]) -> list[Pod]:
    """The victims bound in the snapshot, sorted by key: the evictions that cost disruption and
    that the exact model can express. ``Result.victims`` may also name pending pods the greedy run
    placed and then evicted (rule V of issue 39); those end as pending pods not placed."""
    by_key = cluster.pod_by_key
    return [by_key[k] for k in sorted(set(victims)) if k in by_key and by_key[k].bound]


def disruption(cluster: Cluster, victims: Iterable[str]) -> dict[str, float]:
    """The disruption tiers (costs) of evicting ``victims`` (those bound in the snapshot,
    :func:`snapshot_victims`); empty without potential victims."""
    prios = victim_priorities(cluster)
    if not prios:
        return {}
    tree = cluster.groups
    gone = snapshot_victims(cluster, victims)
    out: dict[str, float] = {PDB_VIOLATIONS: float(pdb_violations(cluster, gone))}
    for pr in prios:
        out[victims_tier(pr)] = float(sum(1 for p in gone if tree.unit_priority(p) == pr))
    out[BROKEN_GROUPS] = float(len(tree.broken_groups(gone)))
    out[VICTIM_PODS] = float(len(gone))
    return out


def pdb_counts(pdb: PodDisruptionBudget, pod: Pod) -> bool:
    """Evicting ``pod`` uses one of ``pdb``'s disruptions: the pod is in the PDB's namespace, its
    selector matches the pod, and the pod is not already in ``status.disruptedPods``."""
    return (
        pod.namespace == pdb.namespace
        and pod.name not in pdb.disrupted_pods
        and selector_matches(pdb.selector, pod.labels)
    )


def pdb_violations(cluster: Cluster, gone: Iterable[Pod]) -> int:
    """Per PDB, evicted matching pods (:func:`pdb_counts`) beyond ``status.disruptionsAllowed``,
    summed."""
    gone = list(gone)
    return sum(
        max(0, sum(1 for p in gone if pdb_counts(pdb, p)) - pdb.disruptions_allowed)
        for pdb in cluster.pdbs
    )


__all__ = [
    "ADMITTED_PREFIX",
    "BROKEN_GROUPS",
    "PDB_VIOLATIONS",
    "PLACED",
    "VICTIMS_PREFIX",
    "VICTIM_PODS",
    "admitted_entities",
    "kueue_incomplete",
    "kueue_running",
    "admitted_priorities",
    "admitted_tier",
    "compare",
    "disruption",
    "group_placed_counts",
    "is_cost",
    "objective",
    "pdb_counts",
    "pdb_violations",
    "snapshot_victims",
    "victim_priorities",
    "victims_tier",
]
