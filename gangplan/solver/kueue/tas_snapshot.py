"""Kueue's TAS flavor snapshot: the domain tree and the placement of one PodSet (with its leader).

A line-by-line re-statement in Python of kubernetes-sigs/kueue ``pkg/cache/scheduler/``
``tas_flavor_snapshot.go`` (``findTopologyAssignment`` and what it calls), ``tas_topology_tree.go``
and ``tas_balanced_placement.go`` at v0.19.2 (c3785e52); ``main`` (ff69552e, 2026-08-22) has the
same algorithm (its diff to v0.19.2 in these files only renames the feasibility checker).
Written from reading that code, not translated mechanically; the names of the Go functions are
kept so the two can be read side by side.

What holds here:

* The tree is built from leaves (:class:`Leaf`): one per node, or per distinct level-value path
  when the lowest level is not ``kubernetes.io/hostname`` (then the nodes' allocatable is summed
  and no per-node filter applies, as upstream).
* Free capacity of a leaf = allocatable - non-TAS usage - TAS usage - usage assumed for the
  PodSets already placed in this call; a pod needs its requests plus ``pods: 1``.
* Where Go iterates a map (``domainsPerLevel``, ``leaves``, a parent's children, built from map
  order) the order is random upstream; every such place here uses the domains sorted by their
  level values. Upstream sorts those sequences with total orders before any decision depends on
  them, so the result does not depend on that choice.
* Not reproduced: node replacement for unhealthy nodes (``findReplacementAssignment``), elastic
  workload slices (``handleElasticWorkload``), the scheduler-library simulator, PodSetUpdates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from gangplan.models.objects import (
    Node,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
)
from gangplan.models.well_known import HOSTNAME
from gangplan.predicates.labels import node_matches_terms, node_selector_term_matches
from gangplan.predicates.taints import first_untolerated_taint

MAX_INT32 = 2**31 - 1


def domain_id(values: Iterable[str]) -> str:
    """``utiltas.DomainID``: the level values joined with a comma."""
    return ",".join(values)


def count_in(requests: Mapping[str, int], capacity: Mapping[str, int]) -> tuple[int, str]:
    """``resources.CountInWithLimitingResource``: how many times ``requests`` fit in ``capacity``
    and the limiting resource (ties to the alphabetically first); a resource the capacity lacks
    fits 0 times, a zero request never limits, a negative remainder counts as 0."""
    result: int | None = None
    limiting = ""
    for name, value in requests.items():
        cap = capacity.get(name, 0)
        count = MAX_INT32 if value == 0 else max(0, min(cap // value if cap >= 0 else 0, MAX_INT32))
        if result is None or count < result or (count == result and name < limiting):
            result, limiting = count, name
    return (result or 0), limiting


def _sub(a: dict[str, int], b: Mapping[str, int]) -> None:
    for k, v in b.items():
        a[k] = a.get(k, 0) - v


def taint_string(t: Taint) -> str:
    """``corev1.Taint.ToString``."""
    if not t.effect:
        return t.key if not t.value else f"{t.key}={t.value}:"
    return f"{t.key}:{t.effect}" if not t.value else f"{t.key}={t.value}:{t.effect}"


@dataclass(frozen=True)
class Leaf:
    """One node as Kueue's TAS flavor cache holds it (``nodesCache`` + ``nonTasUsageCache`` +
    ``TASFlavorCache.usage``): labels, taints, allocatable, the usage of bound pods not managed
    by TAS and the usage of TAS workloads already admitted (both with their ``pods`` count).
    Quantities are scheduler integers."""

    name: str
    labels: Mapping[str, str]
    allocatable: Mapping[str, int]
    non_tas_usage: Mapping[str, int] = field(default_factory=dict)
    tas_usage: Mapping[str, int] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()


@dataclass(frozen=True)
class PodRequirements:
    """``simulator.PodRequirements`` plus the per-run inputs of ``findTopologyAssignment``."""

    tolerations: tuple[Toleration, ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    affinity_required: tuple[NodeSelectorTerm, ...] | None = None
    affinity_preferred: tuple[PreferredSchedulingTerm, ...] = ()


class Domain:
    """``domain`` + its ``domainState`` (the mutable per-run counts live on the object)."""

    __slots__ = (
        "id",
        "values",
        "parent",
        "children",
        "leaf",
        "pod_count",
        "slice_count",
        "pod_count_wl",
        "slice_count_wl",
        "leader_count",
        "affinity",
    )

    def __init__(self, id_: str, values: tuple[str, ...]) -> None:
        self.id = id_
        self.values = values
        self.parent: Domain | None = None
        self.children: list[Domain] = []
        self.leaf: LeafState | None = None
        self.clear()

    def clear(self) -> None:
        self.pod_count = 0
        self.slice_count = 0
        self.pod_count_wl = 0
        self.slice_count_wl = 0
        self.leader_count = 0
        self.affinity = 0

    def shallow_clone(self) -> Domain:
        """``shallowCloneWithState``: same place in the tree, own copy of the state."""
        c = Domain(self.id, self.values)
        c.parent, c.children, c.leaf = self.parent, self.children, self.leaf
        for a in ("pod_count", "slice_count", "pod_count_wl", "slice_count_wl"):
            setattr(c, a, getattr(self, a))
        c.leader_count, c.affinity = self.leader_count, self.affinity
        return c

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<Domain {self.id} pods={self.pod_count} slices={self.slice_count}>"


@dataclass
class LeafState:
    """``leafDomain`` + ``leafCapacity``: free capacity (allocatable - non-TAS usage), TAS usage,
    the node when the lowest level is the hostname."""

    free: dict[str, int]
    tas_usage: dict[str, int]
    node: Node | None
    taints: tuple[Taint, ...]


@dataclass
class ExclusionStats:
    """``tasExclusionStats``: why nodes were left out, appended to a not-fit message."""

    total_nodes: int = 0
    node_selector: int = 0
    affinity: int = 0
    topology_domain: int = 0
    taints: dict[str, int] = field(default_factory=dict)
    resources: dict[str, int] = field(default_factory=dict)

    def has_exclusions(self) -> bool:
        return bool(
            self.node_selector
            or self.affinity
            or self.taints
            or self.topology_domain
            or self.resources
        )

    def format_reasons(self) -> str:
        reasons = []
        if self.node_selector:
            reasons.append(f"nodeSelector: {self.node_selector}")
        if self.affinity:
            reasons.append(f"affinity: {self.affinity}")
        if self.topology_domain:
            reasons.append(f"topologyDomain: {self.topology_domain}")
        for t in sorted(self.taints):
            reasons.append(f"taint {_go_quote(t)}: {self.taints[t]}")
        for r in sorted(self.resources):
            reasons.append(f"resource {_go_quote(r)}: {self.resources[r]}")
        return ", ".join(sorted(reasons))


def _go_quote(s: str) -> str:
    """Go's ``%q`` for the printable ASCII strings Kubernetes names are."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass
class Params:
    """``topologyAssignmentParameters``."""

    count: int
    slice_size: int = 1
    leader_count: int = 0
    requested_level: int = 0
    slice_level: int = 0
    required: bool = False
    unconstrained: bool = False
    slice_size_at_level: dict[int, int] = field(default_factory=dict)
    multi_layer: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Gates:
    """The feature gates ``findTopologyAssignment`` reads (see :mod:`.tas` for defaults)."""

    profile_mixed: bool = True
    balanced_placement: bool = False
    respect_node_affinity_preferred: bool = False
    prioritize_leader_domain: bool = True
    """``prioritizeLeaderDomain`` exists from v0.18 (not a gate: a code difference)."""


class TASSnapshot:
    """``TASFlavorSnapshot`` built from leaves (``newTopologyTree`` + ``newTASFlavorSnapshot``)."""

    def __init__(
        self,
        topology_name: str,
        levels: tuple[str, ...],
        leaves: Iterable[Leaf],
        flavor_tolerations: tuple[Toleration, ...] = (),
        gates: Gates = Gates(),
    ) -> None:
        self.topology_name = topology_name
        self.levels = tuple(levels)
        self.gates = gates
        self.flavor_tolerations = flavor_tolerations
        self.violations: list[str] = []
        """Upstream's ``errCodeAssumptionsViolated`` error logs, in order."""
        self.lowest_is_node = bool(levels) and levels[-1] == HOSTNAME
        self.per_level: list[dict[str, Domain]] = [{} for _ in levels]
        self.leaves: dict[str, Domain] = {}
        for leaf in leaves:
            self._add_node(leaf)
        for d in sorted(self.leaves.values(), key=lambda d: d.values):
            self.per_level[len(d.values) - 1][d.id] = d
            self._link(d)
        for lvl in self.per_level:
            for d in lvl.values():
                d.children.sort(key=lambda c: c.values)
        self.roots = sorted(self.per_level[0].values(), key=lambda d: d.values) if levels else []
        self.all_domains = [d for lvl in self.per_level for d in lvl.values()]

    # -- tree (tas_topology_tree.go) ------------------------------------------------------------

    def _add_node(self, leaf: Leaf) -> None:
        values = tuple(leaf.labels.get(k, "") for k in self.levels)
        did = leaf.labels.get(HOSTNAME, "") if self.lowest_is_node else domain_id(values)
        d = self.leaves.get(did)
        if d is None:
            d = Domain(did, values)
            node = None
            if self.lowest_is_node:
                node = Node(name=leaf.name, labels=dict(leaf.labels), taints=leaf.taints)
            d.leaf = LeafState(free={}, tas_usage={}, node=node, taints=leaf.taints)
            self.leaves[did] = d
        assert d.leaf is not None
        for k, v in leaf.allocatable.items():
            d.leaf.free[k] = d.leaf.free.get(k, 0) + v
        _sub(d.leaf.free, leaf.non_tas_usage)
        for k, v in leaf.tas_usage.items():
            d.leaf.tas_usage[k] = d.leaf.tas_usage.get(k, 0) + v

    def _link(self, d: Domain) -> None:
        if len(d.values) == 1:
            return
        pvalues = d.values[:-1]
        pid = domain_id(pvalues)
        level = self.per_level[len(pvalues) - 1]
        parent = level.get(pid)
        if parent is None:
            parent = Domain(pid, pvalues)
            level[pid] = parent
            self._link(parent)
        d.parent = parent
        parent.children.append(d)

    def sorted_level(self, idx: int) -> list[Domain]:
        """``maps.Values(domainsPerLevel[idx])`` in a fixed order (level values)."""
        return sorted(self.per_level[idx].values(), key=lambda d: d.values)

    def resolve_level(self, key: str) -> int | None:
        return self.levels.index(key) if key in self.levels else None

    # -- sorting --------------------------------------------------------------------------------

    def use_lfc(self, unconstrained: bool) -> bool:
        """``useLeastFreeCapacityAlgorithm``: unconstrained with TASProfileMixed (KEP-2724)."""
        return unconstrained and self.gates.profile_mixed

    def sorted_domains(self, domains: Iterable[Domain], unconstrained: bool) -> list[Domain]:
        """``sortedDomains``: affinity score desc (gate), sliceCount desc (asc for
        LeastFreeCapacity), podCount asc, level values asc."""
        lfc = self.use_lfc(unconstrained)
        aff = self.gates.respect_node_affinity_preferred

        def key(d: Domain) -> tuple:
            return (
                -d.affinity if aff else 0,
                d.slice_count if lfc else -d.slice_count,
                d.pod_count,
                d.values,
            )

        return sorted(domains, key=key)

    def sorted_domains_with_leader(
        self, domains: Iterable[Domain], unconstrained: bool
    ) -> list[Domain]:
        """``sortedDomainsWithLeader``: leaderCount desc first, then as :meth:`sorted_domains`
        on the with-leader counts."""
        lfc = self.use_lfc(unconstrained)
        aff = self.gates.respect_node_affinity_preferred

        def key(d: Domain) -> tuple:
            return (
                -d.leader_count,
                -d.affinity if aff else 0,
                d.slice_count_wl if lfc else -d.slice_count_wl,
                d.pod_count_wl,
                d.values,
            )

        return sorted(domains, key=key)

    # -- phase 1: fillInCounts --------------------------------------------------------------------

    def fill_in_counts(
        self,
        req: PodRequirements,
        requests: Mapping[str, int],
        leader_requests: Mapping[str, int] | None,
        assumed: Mapping[str, Mapping[str, int]],
        params: Params,
        stats: ExclusionStats,
        simulate_empty: bool = False,
    ) -> None:
        for d in self.all_domains:
            d.clear()
        leaves = sorted(self.leaves.values(), key=lambda d: d.values)
        if self.lowest_is_node:
            feasible = self._find_feasible(leaves, req, stats)
        else:
            stats.total_nodes += len(leaves)
            feasible = leaves
        for d in feasible:
            self._fill_leaf(d, requests, leader_requests, assumed, stats, simulate_empty)
        for root in self.roots:
            self.fill_in_counts_helper(
                root,
                params.slice_size,
                params.slice_level,
                0,
                params.slice_size_at_level,
                params.leader_count > 0,
            )

    def _find_feasible(
        self, leaves: list[Domain], req: PodRequirements, stats: ExclusionStats
    ) -> list[Domain]:
        """``defaultChecker.FindFeasibleNodes`` (scheduling_simulator_default.go): untolerated
        NoSchedule/NoExecute taint, then nodeSelector, then required node affinity; the
        preferred-affinity score with TASRespectNodeAffinityPreferred."""
        tolerations = tuple(req.tolerations) + tuple(self.flavor_tolerations)
        out = []
        for d in leaves:
            stats.total_nodes += 1
            assert d.leaf is not None and d.leaf.node is not None
            node = d.leaf.node
            taint = first_untolerated_taint(node.taints, tolerations)
            if taint is not None:
                s = taint_string(taint)
                stats.taints[s] = stats.taints.get(s, 0) + 1
                continue
            if any(node.labels.get(k) != v for k, v in req.node_selector.items()):
                stats.node_selector += 1
                continue
            if req.affinity_required is not None and not node_matches_terms(
                req.affinity_required, node
            ):
                stats.affinity += 1
                continue
            if self.gates.respect_node_affinity_preferred and req.affinity_preferred:
                d.affinity = sum(
                    t.weight
                    for t in req.affinity_preferred
                    if node_selector_term_matches(t.preference, node)
                )
            out.append(d)
        return out

    def _fill_leaf(
        self,
        d: Domain,
        requests: Mapping[str, int],
        leader_requests: Mapping[str, int] | None,
        assumed: Mapping[str, Mapping[str, int]],
        stats: ExclusionStats,
        simulate_empty: bool,
    ) -> None:
        """``fillLeafCounts``."""
        assert d.leaf is not None
        remaining = dict(d.leaf.free)
        if not simulate_empty:
            _sub(remaining, d.leaf.tas_usage)
        if d.id in assumed:
            _sub(remaining, assumed[d.id])
        d.pod_count, limiting = count_in(requests, remaining)
        if d.pod_count == 0 and limiting:
            stats.resources[limiting] = stats.resources.get(limiting, 0) + 1
        d.leader_count = 0
        if leader_requests is not None and count_in(leader_requests, remaining)[0] > 0:
            d.leader_count = 1
            _sub(remaining, leader_requests)
        d.pod_count_wl = count_in(requests, remaining)[0]

    def fill_in_counts_helper(
        self,
        d: Domain,
        slice_size: int,
        slice_level: int,
        level: int,
        size_at_level: Mapping[int, int] | None,
        leader_required: bool,
    ) -> None:
        """``fillInCountsHelper``: roll pod / slice / leader counts up the tree."""
        if not d.children:
            if level == slice_level:
                d.slice_count = d.pod_count // slice_size
                d.slice_count_wl = d.pod_count_wl // slice_size
            return
        children_cap = 0
        slice_cap = 0
        has_contrib = False
        min_pod_diff = MAX_INT32
        min_slice_diff = MAX_INT32
        leader = 0
        affinity = 0
        inner = (size_at_level or {}).get(level + 1)
        for c in d.children:
            self.fill_in_counts_helper(
                c, slice_size, slice_level, level + 1, size_at_level, leader_required
            )
            pc, pcw = c.pod_count, c.pod_count_wl
            if inner is not None:
                pc = (c.pod_count // inner) * inner
                pcw = (c.pod_count_wl // inner) * inner
            children_cap += pc
            slice_cap += c.slice_count
            if not leader_required or c.leader_count > 0:
                has_contrib = True
                min_pod_diff = min(pc - pcw, min_pod_diff)
                min_slice_diff = min(c.slice_count - c.slice_count_wl, min_slice_diff)
            leader = max(c.leader_count, leader)
            affinity += c.affinity
        d.pod_count = children_cap
        slice_wl = 0
        if has_contrib:
            d.pod_count_wl = children_cap - min_pod_diff
            slice_wl = slice_cap - min_slice_diff
        else:
            d.pod_count_wl = 0
        d.leader_count = leader
        d.affinity = affinity
        if level == slice_level:
            slice_cap = d.pod_count // slice_size
            slice_wl = d.pod_count_wl // slice_size
        d.slice_count = slice_cap
        d.slice_count_wl = slice_wl

    # -- best fit helpers ------------------------------------------------------------------------

    def top_affinity_tier(self, candidates: list[Domain]) -> list[Domain]:
        """``topAffinityTierDomains``."""
        if not self.gates.respect_node_affinity_preferred or not candidates:
            return candidates
        score = candidates[0].affinity
        for i, c in enumerate(candidates):
            if c.affinity != score:
                return candidates[:i]
        return candidates

    def find_best_fit_by(
        self, domains: list[Domain], needed: int, count: Callable[[Domain], int], leaders: int
    ) -> Domain:
        """``findBestFitDomainBy``: the first domain with the smallest count >= needed."""
        candidates = self.top_affinity_tier(domains)
        best, best_count, found = candidates[0], MAX_INT32, False
        for d in candidates:
            if d.leader_count < leaders:
                continue
            c = count(d)
            if c >= needed and c < best_count:
                best, best_count, found = d, c, True
        return best if found else candidates[0]

    def find_best_fit(self, domains: list[Domain], count: int, leaders: int) -> Domain:
        fn = (lambda d: d.pod_count_wl) if leaders > 0 else (lambda d: d.pod_count)
        return self.find_best_fit_by(domains, count, fn, leaders)

    def find_best_fit_slices(self, domains: list[Domain], slices: int, leaders: int) -> Domain:
        fn = (lambda d: d.slice_count_wl) if leaders > 0 else (lambda d: d.slice_count)
        return self.find_best_fit_by(domains, slices, fn, leaders)

    # -- phase 2a: findLevelWithFitDomains -------------------------------------------------------

    def find_level_with_fit_domains(
        self, level: int, p: Params, stats: ExclusionStats
    ) -> tuple[int, list[Domain], str]:
        level_domains = self.sorted_level(level)
        if not level_domains:
            return 0, [], f"no topology domains at level: {self.levels[level]}"
        sd = self.sorted_domains_with_leader(level_domains, p.unconstrained)
        top = sd[0]
        slice_count = p.count // p.slice_size
        best_fit = not self.use_lfc(p.unconstrained)
        if best_fit and top.slice_count_wl >= slice_count and top.leader_count >= p.leader_count:
            top = self.find_best_fit_slices(sd, slice_count, p.leader_count)

        def not_fit(fit: int, total: int) -> str:
            if p.multi_layer:
                return self.multi_layer_not_fit_message(level, p.count, p.multi_layer, stats)
            return self.not_fit_message(fit, total, p.slice_size, stats)

        if self.use_lfc(p.unconstrained):
            for cand in sd:
                cap = cand.slice_count
                if p.leader_count > 0:
                    if cand.leader_count < p.leader_count:
                        continue
                    cap = cand.slice_count_wl
                if cap >= slice_count:
                    return level, [cand], ""
            if p.required:
                return 0, [], not_fit(sd[-1].pod_count, slice_count)
        if top.slice_count_wl < slice_count or top.leader_count < p.leader_count:
            if p.required:
                if self.gates.respect_node_affinity_preferred:
                    for i in range(1, len(sd)):
                        d = sd[i]
                        if d.slice_count_wl >= slice_count and d.leader_count >= p.leader_count:
                            best = self.find_best_fit_slices(sd[i:], slice_count, p.leader_count)
                            return level, [best], ""
                return 0, [], not_fit(top.slice_count, slice_count)
            if level > 0 and not p.unconstrained:
                return self.find_level_with_fit_domains(level - 1, p, stats)
            results: list[Domain] = []
            rem_slices = slice_count
            rem_leaders = p.leader_count
            sd = self.prioritize_leader_domain(sd, p.count, p.leader_count, p.slice_size, True)
            idx = 0
            while rem_leaders > 0 and idx < len(sd) and sd[idx].leader_count > 0:
                d = sd[idx]
                if best_fit and sd[idx].slice_count_wl >= rem_slices:
                    d = self.find_best_fit_slices(sd[idx:], rem_slices, rem_leaders)
                results.append(d)
                rem_leaders -= d.leader_count
                rem_slices -= d.slice_count_wl
                idx += 1
            if rem_leaders > 0:
                return 0, [], not_fit(p.leader_count - rem_leaders, slice_count)
            sd = self.sorted_domains(sd[idx:], p.unconstrained)
            i = 0
            while rem_slices > 0 and i < len(sd):
                d = sd[i]
                if best_fit and sd[i].slice_count >= rem_slices:
                    d = self.find_best_fit_slices(sd[i:], rem_slices, 0)
                results.append(d)
                rem_slices -= d.slice_count
                i += 1
            if rem_slices > 0:
                return 0, [], not_fit(slice_count - rem_slices, slice_count)
            return level, results, ""
        return level, [top], ""

    # -- phase 2b: updateCountsToMinimumGeneric ------------------------------------------------

    def prioritize_leader_domain(
        self, domains: list[Domain], count: int, leaders: int, slice_size: int, slices: bool
    ) -> list[Domain]:
        """``prioritizeLeaderDomain`` (v0.18+): move to the front the first leader-capable domain
        whose leader penalty leaves enough total capacity."""
        if not self.gates.prioritize_leader_domain or leaders == 0 or len(domains) < 2:
            return domains
        required = count
        if slices:
            required //= slice_size
            available = sum(d.slice_count for d in domains)
        else:
            available = sum(d.pod_count for d in domains)
        for i, d in enumerate(domains):
            if d.leader_count < leaders:
                continue
            penalty = d.slice_count - d.slice_count_wl if slices else d.pod_count - d.pod_count_wl
            if available - penalty < required:
                continue
            if i == 0:
                return domains
            return [d] + domains[:i] + domains[i + 1 :]
        return domains

    def _consume_with_leaders(
        self,
        d: Domain,
        remaining_domains: list[Domain],
        rem: list[int],
        unconstrained: bool,
        slice_size: int,
        slices: bool,
    ) -> tuple[Domain, bool]:
        """``consumeWithLeadersGeneric``; ``rem`` is [remaining primary, remaining leaders]."""
        wl_attr, prim_attr = (
            ("slice_count_wl", "slice_count") if slices else ("pod_count_wl", "pod_count")
        )
        if (
            not self.use_lfc(unconstrained)
            and getattr(d, wl_attr) >= rem[0]
            and d.leader_count >= rem[1]
        ):
            if slices:
                d = self.find_best_fit_slices(remaining_domains, rem[0], rem[1])
            else:
                d = self.find_best_fit(remaining_domains, rem[0], rem[1])
        if getattr(d, wl_attr) >= rem[0] and d.leader_count >= rem[1]:
            setattr(d, prim_attr, rem[0])
            d.leader_count = rem[1]
            d.pod_count = rem[0] * slice_size
            return d, True
        if getattr(d, wl_attr) > rem[0]:
            setattr(d, wl_attr, rem[0])
        if d.leader_count > rem[1]:
            d.leader_count = rem[1]
        with_leader = getattr(d, wl_attr)
        setattr(d, prim_attr, with_leader)
        d.pod_count = with_leader * slice_size
        rem[1] -= d.leader_count
        rem[0] -= with_leader
        return d, False

    def update_counts_to_minimum(
        self,
        domains: list[Domain],
        count: int,
        leaders: int,
        slice_size: int,
        unconstrained: bool,
        slices: bool,
    ) -> list[Domain]:
        """``updateCountsToMinimumGeneric``: take domains in order until the count is met, the
        last one chosen by best fit (unless LeastFreeCapacity)."""
        domains = self.prioritize_leader_domain(domains, count, leaders, slice_size, slices)
        result: list[Domain] = []
        rem = [count // slice_size if slices else count, leaders]
        best_fit = not self.use_lfc(unconstrained)
        for i, dom in enumerate(domains):
            if rem[1] > 0:
                d, done = self._consume_with_leaders(
                    dom, domains[i:], rem, unconstrained, slice_size if slices else 1, slices
                )
                result.append(d)
                if done:
                    return result
                continue
            if slices:
                if best_fit and dom.slice_count >= rem[0]:
                    dom = self.find_best_fit_slices(domains[i:], rem[0], 0)
                dom.leader_count = 0
                if dom.slice_count >= rem[0]:
                    dom.pod_count = rem[0] * slice_size
                    dom.slice_count = rem[0]
                    result.append(dom)
                    return result
                dom.pod_count = dom.slice_count * slice_size
                rem[0] -= dom.slice_count
                result.append(dom)
                continue
            if best_fit and dom.pod_count >= rem[0]:
                dom = self.find_best_fit(domains[i:], rem[0], 0)
            dom.leader_count = 0
            if dom.pod_count >= rem[0]:
                dom.pod_count = rem[0]
                result.append(dom)
                return result
            rem[0] -= dom.pod_count
            result.append(dom)
        # upstream logs errCodeAssumptionsViolated and returns nil: the descent then continues
        # with no domains and the PodSet gets an assignment short of its count
        self.violations.append(
            f"code assumptions violated: unexpected remainingCount {rem[0]} "
            f"(remainingLeaderCount {rem[1]}, count {count}, leaderCount {leaders}, "
            f"sliceSize {slice_size})"
        )
        return []

    # -- messages ------------------------------------------------------------------------------

    def not_fit_message(self, fit: int, total: int, slice_size: int, stats: ExclusionStats) -> str:
        """``notFitMessage``."""
        unit = "pod" if slice_size == 1 else "slice"
        name = _go_quote(self.topology_name)
        if fit == 0:
            msg = f"topology {name} doesn't allow to fit any of {total} {unit}(s)"
        else:
            msg = f"topology {name} allows to fit only {fit} out of {total} {unit}(s)"
        if stats.has_exclusions():
            msg += f". Total nodes: {stats.total_nodes}; excluded: {stats.format_reasons()}"
        return msg

    def _count_slices_in_subtree(self, d: Domain, cur: int, target: int, size: int) -> int:
        if cur == target:
            return d.pod_count // size
        return sum(self._count_slices_in_subtree(c, cur + 1, target, size) for c in d.children)

    def multi_layer_not_fit_message(
        self,
        level: int,
        count: int,
        constraints: tuple[tuple[str, int], ...],
        stats: ExclusionStats,
    ) -> str:
        """``multiLayerNotFitMessage``: the best domain at the level (most slices, then the
        smallest ID) and per layer how many slices fit in it."""
        msg = f"topology {_go_quote(self.topology_name)} doesn't allow to fit"
        best: Domain | None = None
        for d in self.per_level[level].values():
            if (
                best is None
                or d.slice_count > best.slice_count
                or (d.slice_count == best.slice_count and d.id < best.id)
            ):
                best = d
        if best is None:
            return msg
        for key, size in constraints:
            target = self.resolve_level(key)
            if target is None:
                continue
            fit = self._count_slices_in_subtree(best, level, target, size)
            msg += f"; {fit}/{count // size} slice(s) fit on level {key}"
        if stats.has_exclusions():
            msg += f". Total nodes: {stats.total_nodes}; excluded: {stats.format_reasons()}"
        return msg

    # -- assignment ----------------------------------------------------------------------------

    def build_assignment(self, domains: list[Domain]) -> tuple[tuple[str, ...], list]:
        """``buildAssignment``: domains sorted by level values; only the hostname level when it is
        the lowest level, else every level; domains with 0 pods dropped."""
        ordered = sorted(domains, key=lambda d: d.values)
        start = len(self.levels) - 1 if self.lowest_is_node else 0
        return self.levels[start:], [
            (d.values[start:], d.pod_count) for d in ordered if d.pod_count != 0
        ]

    def lower_level_domains(self, domains: list[Domain]) -> list[Domain]:
        return [c for d in domains for c in d.children]
