"""Kueue's topology-aware scheduling (TAS) placement, per Kueue release (issue 42).

Kueue assigns every pod of a TAS PodSet a topology domain before it admits a workload; this
module answers, for one ResourceFlavor's nodes, where Kueue would put the PodSets of one workload
or the reason it gives when they do not fit. It re-states kubernetes-sigs/kueue
``pkg/cache/scheduler/tas_flavor_snapshot.go`` (``FindTopologyAssignmentsForFlavor``,
``findTopologyAssignment``), ``tas_balanced_placement.go``, ``tas_topology_tree.go``,
``tas_flavor.go`` / ``tas_nodes_cache.go`` / ``tas_non_tas_pod_cache.go`` (what capacity is free)
and the feature gates of ``pkg/features/kube_features.go``, at v0.19.2 (c3785e52) and ``main``
(ff69552e, 2026-08-22), with the defaults of v0.17.8 and v0.18.6.

Use::

    leaves = tas_leaves(cluster, flavor, levels)
    result = assign(podsets, leaves, levels, config=default_tas_config("0.19"))
    result.assignments["main"]  # TopologyAssignment, or result.reason

Which algorithm (KEP-2724's matrix as the code implements it):

* ``TASProfileMixed`` on (default since v0.15): an *unconstrained* PodSet (the
  ``podset-unconstrained-topology`` annotation, the implicit TAS of a TAS-only ClusterQueue, or a
  slice-only request) is placed LeastFreeCapacity (fullest domains first); every other PodSet
  BestFit (fewest domains, the last one the tightest fit). Off: BestFit for all.
* ``TASBalancedPlacement`` (alpha, off in every release here): a *preferred* PodSet is first
  tried spread evenly (:mod:`.tas_balanced`), falling back to BestFit.
* ``TASMultiLayerTopology`` (beta on from v0.19): more than one slice layer.
* ``TASRespectNodeAffinityPreferred`` (alpha, off): preferred node affinity ranks domains first.

What is not reproduced: the node-replacement path for unhealthy nodes, elastic workload slices,
the scheduler-library simulator (``SchedulerLibraryIntegration``, alpha off), ``PodSetUpdates``
from admission checks, and the cross-flavor aggregated usage of ``TASHandleOverlappingFlavors``
(pass the other flavors' assumed usage as ``assumed_usage``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from gangplan.models.kueue import (
    ResourceFlavor,
    TopologyAssignment,
    TopologyDomainAssignment,
    TopologyRequest,
)
from gangplan.models.objects import NodeSelectorTerm, PreferredSchedulingTerm, Toleration
from gangplan.solver.kueue.tas_balanced import apply_balanced, find_best_domains_for_balanced
from gangplan.solver.kueue.tas_snapshot import (
    HOSTNAME,
    ExclusionStats,
    Gates,
    Leaf,
    Params,
    PodRequirements,
    TASSnapshot,
    domain_id,
)

__all__ = [
    "HOSTNAME",
    "KUEUE_VERSIONS",
    "Leaf",
    "TASConfig",
    "TASPodSet",
    "TASProfile",
    "TASResult",
    "assign",
    "default_tas_config",
    "is_tas_pod",
    "tas_leaves",
]

KUEUE_VERSIONS = ("0.17", "0.18", "0.19", "main")
"""The releases whose TAS placement is modelled (v0.17.8, v0.18.6, v0.19.2, main ff69552e)."""

REQUIRED_ANNOTATION = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_ANNOTATION = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED_ANNOTATION = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE_ANNOTATION = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_CONSTRAINTS_ANNOTATION = "kueue.x-k8s.io/podset-slice-required-topology-constraints"


class TASProfile(StrEnum):
    """How Kueue orders domains: ``BestFit`` for every PodSet (``TASProfileMixed`` off), or
    ``Mixed``: LeastFreeCapacity for unconstrained PodSets, BestFit for the rest."""

    BEST_FIT = "BestFit"
    MIXED = "Mixed"


@dataclass(frozen=True)
class TASConfig:
    """The algorithm choice: the profile, the optional modes, and the release whose code runs."""

    profile: TASProfile = TASProfile.MIXED
    balanced: bool = False
    """``TASBalancedPlacement``: spread preferred PodSets evenly first."""
    multi_layer: bool = True
    """``TASMultiLayerTopology``: without it a request with more than one slice layer fails
    (upstream's webhook rejects it before admission)."""
    respect_node_affinity_preferred: bool = False
    version: str = "0.19"

    def gates(self) -> Gates:
        return Gates(
            profile_mixed=self.profile is TASProfile.MIXED,
            balanced_placement=self.balanced,
            respect_node_affinity_preferred=self.respect_node_affinity_preferred
            and self.version != "0.17",
            prioritize_leader_domain=self.version != "0.17",
        )


# name -> default per release, from pkg/features/kube_features.go at v0.17.8, v0.18.6, v0.19.2, main
_GATE_DEFAULTS: dict[str, dict[str, bool]] = {
    "TASProfileMixed": {"0.17": True, "0.18": True, "0.19": True, "main": True},
    "TASBalancedPlacement": {"0.17": False, "0.18": False, "0.19": False, "main": False},
    "TASMultiLayerTopology": {"0.17": False, "0.18": False, "0.19": True, "main": True},
    "TASRespectNodeAffinityPreferred": {
        "0.17": False,
        "0.18": False,
        "0.19": False,
        "main": False,
    },
}


_NO_EFFECT_GATES = frozenset(
    {
        "TASHandleOverlappingFlavors",
        "TASCacheNodeMatchResults",
        "TASCachingRemainingResources",
        "TASCacheTopologyTree",
        "VectorizedResourceRequests",
    }
)
"""Gates that change how Kueue caches or aggregates, not where this placement puts pods (the
cross-flavor usage of TASHandleOverlappingFlavors is :func:`assign`'s ``assumed_usage``)."""


def normalise_version(version: str) -> str:
    """``v0.19.2`` / ``0.19`` / ``main`` -> one of :data:`KUEUE_VERSIONS`."""
    v = version.strip().lstrip("v")
    if v == "main":
        return v
    major_minor = ".".join(v.split(".")[:2])
    if major_minor not in KUEUE_VERSIONS:
        raise ValueError(f"Kueue version {version!r} is not modelled (one of {KUEUE_VERSIONS})")
    return major_minor


def default_tas_config(version: str = "0.19", gates: Mapping[str, bool] | None = None) -> TASConfig:
    """Kueue's algorithm for a release with its default feature gates, overridden by ``gates``
    (``--feature-gates`` names, e.g. ``{"TASBalancedPlacement": True}``)."""
    v = normalise_version(version)
    on = {name: per[v] for name, per in _GATE_DEFAULTS.items()}
    for name, value in (gates or {}).items():
        if name in _NO_EFFECT_GATES:
            continue
        if name not in on:
            raise ValueError(f"unknown TAS feature gate {name!r} (known: {sorted(on)})")
        on[name] = bool(value)
    return TASConfig(
        profile=TASProfile.MIXED if on["TASProfileMixed"] else TASProfile.BEST_FIT,
        balanced=on["TASBalancedPlacement"],
        multi_layer=on["TASMultiLayerTopology"],
        respect_node_affinity_preferred=on["TASRespectNodeAffinityPreferred"],
        version=v,
    )


@dataclass(frozen=True)
class TASPodSet:
    """One PodSet to place (``TASPodSetRequests``): ``count`` pods of ``requests`` each.

    ``topology_request`` None means Kueue's *implied* TAS (a TAS-only ClusterQueue and no
    annotation): unconstrained at the lowest level. A PodSet group (leader + workers placed
    together) is two PodSets with the same ``topology_request.podset_group``; the one with the
    larger count are the workers (ties: the first), the leader has one pod."""

    name: str
    count: int
    requests: Mapping[str, int]
    topology_request: TopologyRequest | None = None
    node_selector: Mapping[str, str] = field(default_factory=dict)
    node_affinity_required: tuple[NodeSelectorTerm, ...] | None = None
    node_affinity_preferred: tuple[PreferredSchedulingTerm, ...] = ()
    tolerations: tuple[Toleration, ...] = ()


@dataclass(frozen=True)
class TASResult:
    """Per PodSet its assignment; on failure the reason Kueue gives and the PodSet it names.

    As upstream's ``FindTopologyAssignmentsForFlavor``: PodSets are placed group by group in
    order; the first group that fails stops the run, its PodSets map to None, later PodSets are
    absent."""

    assignments: dict[str, TopologyAssignment | None]
    reason: str = ""
    failed_podset: str | None = None
    errors: tuple[str, ...] = ()
    """Upstream's ``errCodeAssumptionsViolated`` logs: the descent ran out of domains and an
    assignment holds fewer pods than its PodSet (a Kueue defect reproduced as is; seen with a
    leader on v0.17, whose code lacks ``prioritizeLeaderDomain``)."""

    @property
    def ok(self) -> bool:
        return not self.reason


def slice_constraints(tr: TopologyRequest | None) -> tuple[tuple[str, int], ...]:
    """``utiltas.PodSetSliceRequiredTopologyConstraints``: the multi-layer list, else the single
    ``podset-slice-required-topology`` with its size (0 when absent)."""
    if tr is None:
        return ()
    if tr.slice_constraints:
        return tuple(tr.slice_constraints)
    if tr.slice_required is None:
        return ()
    return ((tr.slice_required, tr.slice_size or 0),)


def _level_key(s: TASSnapshot, tr: TopologyRequest | None) -> str | None:
    """``levelKey`` + ``levelKeyWithImpliedFallback``."""
    if tr is None:
        return s.levels[-1]
    if tr.required is not None:
        return tr.required
    if tr.preferred is not None:
        return tr.preferred
    if slice_constraints(tr):
        return s.levels[0]
    if tr.unconstrained:
        return s.levels[-1]
    return None


def _is_unconstrained(tr: TopologyRequest | None) -> bool:
    if tr is None:
        return True
    slice_only = tr.required is None and tr.preferred is None and bool(slice_constraints(tr))
    return tr.unconstrained or slice_only


def _size_at_level(
    s: TASSnapshot, constraints: tuple[tuple[str, int], ...], size: int, slice_level: int
) -> tuple[dict[int, int], str]:
    """``buildSliceSizeAtLevel``: the inner slice layers' sizes per level."""
    out: dict[int, int] = {}
    prev_size, prev_level = size, slice_level
    for key, layer_size in constraints[1:]:
        lvl = s.resolve_level(key)
        if lvl is None:
            return {}, f"no requested topology level for additional slice layer: {key}"
        if lvl <= prev_level:
            return {}, (
                f"additional slice layer topology {key} must be at a lower level than "
                f"{s.levels[prev_level]}"
            )
        if layer_size == 0 or prev_size % layer_size != 0:
            return {}, (
                f"additional slice layer size {layer_size} must evenly divide parent layer "
                f"size {prev_size}"
            )
        for i in range(prev_level + 1, lvl + 1):
            out[i] = layer_size
        prev_size, prev_level = layer_size, lvl
    return out, ""


def _with_pod(requests: Mapping[str, int]) -> dict[str, int]:
    out = dict(requests)
    out["pods"] = out.get("pods", 0) + 1
    return out


def find_topology_assignment(
    s: TASSnapshot,
    workers: TASPodSet,
    leader: TASPodSet | None,
    assumed: Mapping[str, Mapping[str, int]],
    config: TASConfig,
    simulate_empty: bool = False,
) -> tuple[dict[str, TopologyAssignment], str]:
    """``findTopologyAssignment``: phase 1 counts what fits per domain, phase 2 picks the level
    and domains, then descends level by level to the leaves."""
    tr = workers.topology_request
    constraints = slice_constraints(tr)
    if len(constraints) > 1 and not config.multi_layer:
        return {}, (
            "multi-layer slice constraints need the TASMultiLayerTopology feature gate "
            f"(off by default in Kueue v{config.version})"
        )
    p = Params(count=workers.count)
    requests = _with_pod(workers.requests)
    leader_requests = _with_pod(leader.requests) if leader is not None else None
    if leader is not None:
        p.leader_count = 1
    if constraints:
        if constraints[0][1] <= 0:
            return {}, "slice topology requested, but slice size not provided"
        p.slice_size = constraints[0][1]
    p.required = tr is not None and tr.required is not None
    p.unconstrained = _is_unconstrained(tr)
    key = _level_key(s, tr)
    if key is None:
        return {}, "topology level not specified"
    lvl = s.resolve_level(key)
    if lvl is None:
        return {}, f"no requested topology level: {key}"
    p.requested_level = lvl
    slice_key = constraints[0][0] if constraints else s.levels[-1]
    slvl = s.resolve_level(slice_key)
    if slvl is None:
        return {}, f"no requested topology level for slices: {slice_key}"
    p.slice_level = slvl
    if p.requested_level > p.slice_level:
        return {}, f"podset slice topology {slice_key} is above the podset topology {key}"
    p.slice_size_at_level, reason = _size_at_level(s, constraints, p.slice_size, p.slice_level)
    if reason:
        return {}, reason
    if p.slice_size_at_level:
        p.multi_layer = constraints
    req = PodRequirements(
        tolerations=tuple(workers.tolerations),
        node_selector=dict(workers.node_selector),
        affinity_required=workers.node_affinity_required,
        affinity_preferred=tuple(workers.node_affinity_preferred),
    )
    stats = ExclusionStats()
    s.fill_in_counts(req, requests, leader_requests, assumed, p, stats, simulate_empty)

    fit: list = []
    fit_level = 0
    balanced = False
    if s.gates.balanced_placement and not p.required and not p.unconstrained:
        fit, threshold = find_best_domains_for_balanced(s, p)
        balanced = threshold > 0
        if balanced:
            fit, fit_level, reason = apply_balanced(s, p, threshold, fit)
            if reason:
                balanced = False  # upstream: falls back to best fit
    if not balanced:
        fit_level, fit, reason = s.find_level_with_fit_domains(p.requested_level, p, stats)
        if reason:
            return {}, reason
    fit = s.update_counts_to_minimum(
        fit, p.count, p.leader_count, p.slice_size, p.unconstrained, True
    )
    cur = fit_level
    last = len(s.levels) - 1
    while cur < min(last, p.slice_level) and not balanced:
        lower = s.sorted_domains(s.lower_level_domains(fit), p.unconstrained)
        fit = s.update_counts_to_minimum(
            lower, p.count, p.leader_count, p.slice_size, p.unconstrained, True
        )
        cur += 1
    while cur < last:
        size_here = p.slice_size
        if cur >= p.slice_level:
            size_here = p.slice_size_at_level.get(cur + 1, 1)
        new_fit = []
        for d in fit:
            lower = s.sorted_domains(d.children, p.unconstrained)
            if size_here > 1:
                for c in lower:
                    c.slice_count = c.pod_count // size_here
                    c.slice_count_wl = c.pod_count_wl // size_here
            new_fit += s.update_counts_to_minimum(
                lower, d.pod_count, d.leader_count, size_here, p.unconstrained, size_here > 1
            )
        fit = new_fit
        cur += 1

    out: dict[str, TopologyAssignment] = {}
    if leader is not None:
        leader_domains, worker_domains = [], []
        for d in fit:
            if d.leader_count > 0:
                c = d.shallow_clone()
                c.pod_count = d.leader_count
                leader_domains.append(c)
            if d.pod_count > 0:
                worker_domains.append(d)
        out[leader.name] = _assignment(s, leader_domains)
        fit = worker_domains
    out[workers.name] = _assignment(s, fit)
    return out, ""


def _assignment(s: TASSnapshot, domains: list) -> TopologyAssignment:
    levels, doms = s.build_assignment(domains)
    return TopologyAssignment(
        levels=levels,
        domains=tuple(TopologyDomainAssignment(values=v, count=c) for v, c in doms),
    )


def _leader_and_workers(group: list[TASPodSet]) -> tuple[TASPodSet | None, TASPodSet]:
    """``findLeaderAndWorkers``: the second PodSet leads unless it has more pods."""
    workers, leader = group[0], None
    if len(group) > 1:
        leader = group[1]
        if leader.count > workers.count:
            leader, workers = group[0], group[1]
    return leader, workers


def assign(
    podsets: Sequence[TASPodSet],
    leaves: Iterable[Leaf],
    levels: Sequence[str],
    config: TASConfig | None = None,
    *,
    topology_name: str = "default",
    flavor_tolerations: Sequence[Toleration] = (),
    assumed_usage: Mapping[str, Mapping[str, int]] | None = None,
    simulate_empty: bool = False,
    snapshot: TASSnapshot | None = None,
) -> TASResult:
    """``FindTopologyAssignmentsForFlavor``: place the PodSets of one workload on one flavor.

    PodSets sharing ``topology_request.podset_group`` are one group (keyed by the group name, the
    others by their position), groups are placed in order of first appearance, and each group's
    pods count as used for the next (``assumedUsage``). ``assumed_usage`` seeds it (leaf domain
    ID -> usage, ``pods`` included). ``simulate_empty`` ignores TAS usage (upstream's preemption
    probe). ``snapshot``: the tree of these leaves built before (:func:`tas_snapshot`), reused:
    every placement starts by clearing its counts (``fill_in_counts``), so one tree serves every
    workload placed on the same leaves and their usage (the caller's own cache, as Kueue's
    ``TASFlavorSnapshot`` lives for one scheduling cycle)."""
    config = config or default_tas_config()
    s = snapshot or TASSnapshot(
        topology_name, tuple(levels), leaves, tuple(flavor_tolerations), config.gates()
    )
    s.violations.clear()  # a reused tree reports this placement's logs only
    assumed: dict[str, dict[str, int]] = {k: dict(v) for k, v in (assumed_usage or {}).items()}
    groups: dict[str, list[TASPodSet]] = {}
    for i, ps in enumerate(podsets):
        tr = ps.topology_request
        key = tr.podset_group if tr is not None and tr.podset_group else str(i)
        groups.setdefault(key, []).append(ps)
    result: dict[str, TopologyAssignment | None] = {}
    for group in groups.values():
        leader, workers = _leader_and_workers(group)
        found, reason = find_topology_assignment(
            s, workers, leader, assumed, config, simulate_empty
        )
        for ps in group:
            result[ps.name] = found.get(ps.name)
        if reason:
            return TASResult(result, reason, workers.name, tuple(s.violations))
        for ps in group:
            ta = found.get(ps.name)
            if ta is None:
                continue
            for d in ta.domains:
                did = domain_id(d.values)
                usage = assumed.setdefault(did, {})
                for r, q in ps.requests.items():
                    usage[r] = usage.get(r, 0) + q * d.count
                usage["pods"] = usage.get("pods", 0) + d.count
    return TASResult(result, errors=tuple(s.violations))


def tas_snapshot(
    leaves: Iterable[Leaf],
    levels: Sequence[str],
    config: TASConfig | None = None,
    *,
    topology_name: str = "default",
    flavor_tolerations: Sequence[Toleration] = (),
) -> TASSnapshot:
    """The tree :func:`assign` builds, for reuse across its calls on the same leaves."""
    config = config or default_tas_config()
    return TASSnapshot(
        topology_name, tuple(levels), leaves, tuple(flavor_tolerations), config.gates()
    )


def with_topology(ps: TASPodSet, **changes: object) -> TASPodSet:
    """A copy of ``ps`` with ``topology_request`` fields replaced."""
    tr = ps.topology_request or TopologyRequest()
    return replace(ps, topology_request=tr.model_copy(update=changes))


# -- leaves from a gangplan Cluster -------------------------------------------------------------


def is_tas_pod(annotations: Mapping[str, str]) -> bool:
    """``utiltas.IsTAS``: a pod Kueue placed with TAS carries one of the topology annotations;
    its usage is TAS usage (from its workload's assignment), not non-TAS usage."""
    return any(
        a in annotations
        for a in (
            REQUIRED_ANNOTATION,
            PREFERRED_ANNOTATION,
            SLICE_ANNOTATION,
            SLICE_CONSTRAINTS_ANNOTATION,
            UNCONSTRAINED_ANNOTATION,
        )
    )


def tas_leaves(
    cluster: object,
    flavor: ResourceFlavor | None,
    levels: Sequence[str],
    used_by_tas: Mapping[str, Mapping[str, int]] | None = None,
) -> tuple[Leaf, ...]:
    """The leaves Kueue's TAS cache holds for ``flavor`` (a gangplan ``Cluster``'s nodes).

    * Dropped, as ``nodesCache.sync``: ``spec.unschedulable`` nodes (and NotReady ones, which a
      gangplan Node cannot express: the loader keeps no conditions).
    * Dropped, as ``NodeMatchesFlavor``: nodes without every label of ``flavor.node_labels`` or
      without a label for every level.
    * Kept: tainted nodes; taints are checked per PodSet against the PodSet's tolerations plus
      the flavor's (:func:`assign`'s ``flavor_tolerations``), only when the lowest level is the
      hostname, as upstream.
    * Non-TAS usage: the requests of bound, non-terminated pods without a TAS annotation
      (:func:`is_tas_pod`) plus one ``pods`` each (``nonTasUsageCache.addNodeUsage``).
    * TAS usage: ``used_by_tas`` (node name -> usage with ``pods``), what the admitted TAS
      workloads' assignments hold; None: the bound TAS pods' requests plus one pod each.
    """
    non_tas: dict[str, dict[str, int]] = {}
    tas: dict[str, dict[str, int]] = {}
    for pod in cluster.bound_pods:  # type: ignore[attr-defined]
        if pod.phase in ("Succeeded", "Failed") or not pod.node_name:
            continue
        if is_tas_pod(pod.annotations):
            if used_by_tas is not None:
                continue
            u = tas.setdefault(pod.node_name, {})
        else:
            u = non_tas.setdefault(pod.node_name, {})
        u["pods"] = u.get("pods", 0) + 1
        for r, q in pod.requests.items():
            u[r] = u.get(r, 0) + q
    if used_by_tas is not None:
        tas = {k: dict(v) for k, v in used_by_tas.items()}
    out = []
    for node in cluster.nodes:  # type: ignore[attr-defined]
        if node.unschedulable:
            continue
        if flavor is not None and not flavor.selects(node.labels):
            continue
        if any(level not in node.labels for level in levels):
            continue
        out.append(
            Leaf(
                name=node.name,
                labels=dict(node.labels),
                allocatable=dict(node.allocatable),
                non_tas_usage=non_tas.get(node.name, {}),
                tas_usage=tas.get(node.name, {}),
                taints=tuple(node.taints),
            )
        )
    return tuple(out)
