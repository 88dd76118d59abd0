"""Static eligibility: which nodes a pod class could ever use, before any variable exists.

Everything that depends only on the class and the bound state is decided here over whole node
vectors (numpy), so an ineligible (class, node) pair never becomes a variable. Each family gives
its own mask, so :func:`gangplan.solver.exact.check_feasible` can name the rule a forced placement
breaks. Semantics are those of :mod:`gangplan.solver.validate` (final-state checks); the per pod x
node predicates are :mod:`gangplan.predicates`, shared with the greedy engine and the validator.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gangplan.predicates import (
    blocked_by_unschedulable,
    first_untolerated_taint,
    node_matches_pod_selector,
    ports_conflict,
    term_matches,
)
from gangplan.solver.exact.instance import NO_DOMAIN, Instance, PodClass, canonical

STATIC_FAMILIES = ("fixed", "unschedulable", "taint", "node-selector", "capacity", "host-port",
                   "pod-anti-affinity", "pod-affinity", "topology-spread", "topology")


@dataclass
class Eligibility:
    masks: dict[str, np.ndarray]
    """Family -> bool per node (True: this family allows the node)."""
    eligible: np.ndarray
    fit: np.ndarray
    """Per node, how many pods of the class fit on the bound state alone (0 where ineligible)."""
    needs_evict: dict[int, frozenset[int]] = field(default_factory=dict)
    """Node -> evictable units that must all be evicted before the class may use it: every
    bound pod whose host port or anti-affinity blocks the class there is in those units
    (preemption only; the model adds ``count(class, node) <= ub * evict[u]``)."""

    def first_failing(self, node: int) -> str | None:
        for fam in STATIC_FAMILIES:
            m = self.masks.get(fam)
            if m is not None and not m[node]:
                return fam
        return None


class EligibilityCache:
    """Node-rule masks shared by classes with the same tolerations and node selectors."""

    def __init__(self, inst: Instance) -> None:
        self.inst = inst
        self.node_rules: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        c = inst.cluster
        self.anti_holders = [(q, t, inst.bound_node_of[q.key])
                             for q in c.bound_pods if q.key in inst.bound_node_of
                             for t in q.affinity.pod_anti_affinity_required]
        self.port_nodes = [i for i, pods in enumerate(inst.bound_on_node) if any(p.host_ports for p in pods)]

    def node_masks(self, cls: PodClass) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        p = cls.rep
        key = canonical((p.tolerations, p.model_dump(include={"node_selector"}), p.affinity.node_required or ()))
        if key not in self.node_rules:
            nodes = self.inst.cluster.nodes
            unsched = np.array([not blocked_by_unschedulable(n, p.tolerations) for n in nodes], dtype=bool)
            taint = np.array([first_untolerated_taint(n.taints, p.tolerations) is None for n in nodes], dtype=bool)
            sel = np.array([node_matches_pod_selector(p, n) for n in nodes], dtype=bool)
            self.node_rules[key] = (unsched, taint, sel)
        return self.node_rules[key]


def request_vector(inst: Instance, cls: PodClass) -> np.ndarray:
    return np.array([cls.rep.requests.get(r, 0) for r in inst.resources], dtype=np.int64)


def fit_counts(inst: Instance, req: np.ndarray) -> np.ndarray:
    """How many pods with request ``req`` fit on each node's free capacity (pod slots included)."""
    free, free_pods = inst.free, inst.free_pods
    if inst.evict_room is not None:  # preemption: what the evictable units could free counts too
        free, free_pods = free + inst.evict_room, free_pods + inst.evict_slots
    fit = free_pods.copy()
    for r in np.nonzero(req > 0)[0]:
        fit = np.minimum(fit, np.maximum(free[:, r], -1) // req[r])
    fit = np.maximum(fit, 0)
    fit[inst.blocked] = 0
    return fit


def _domain_mask(inst: Instance, key: str, bad_domains: set[int]) -> np.ndarray:
    ids, _ = inst.domains(key)
    if not bad_domains:
        return np.ones(inst.n_nodes, dtype=bool)
    return ~np.isin(ids, np.fromiter(bad_domains, dtype=np.int64))


def _block(inst: Instance, mask: np.ndarray, cond: dict[int, set[int]], nodes, blockers) -> None:
    """``blockers`` (bound pods) make ``nodes`` ineligible, unless every one of them is in an
    evictable unit: then the nodes stay eligible on condition that those units are evicted."""
    units = {inst.unit_of.get(q.key) for q in blockers}
    if None in units:
        mask[nodes] = False
        return
    for n in nodes.tolist():
        cond.setdefault(n, set()).update(units)


def _anti_affinity_mask(inst: Instance, cache: EligibilityCache, cls: PodClass,
                        cond: dict[int, set[int]]) -> np.ndarray | None:
    """The class's own anti-affinity against bound pods, and bound pods' anti-affinity against it;
    blockers in evictable units only condition the nodes (``cond``, see :func:`_block`)."""
    p, ns = cls.rep, inst.cluster.namespaces
    mask = None
    for t in p.affinity.pod_anti_affinity_required:
        ids, _ = inst.domains(t.topology_key)
        blockers: dict[int, list] = {}
        for i, pods in enumerate(inst.bound_on_node):
            if ids[i] != NO_DOMAIN:
                hit = [q for q in pods if term_matches(t, p.namespace, q, ns)]
                if hit:
                    blockers.setdefault(int(ids[i]), []).extend(hit)
        m = np.ones(inst.n_nodes, dtype=bool)
        for d, qs in sorted(blockers.items()):
            _block(inst, m, cond, np.flatnonzero(ids == d), qs)
        mask = m if mask is None else mask & m
    for q, t, node in cache.anti_holders:
        ids, _ = inst.domains(t.topology_key)
        if ids[node] != NO_DOMAIN and term_matches(t, q.namespace, p, ns):
            m = np.ones(inst.n_nodes, dtype=bool)
            _block(inst, m, cond, np.flatnonzero(ids == ids[node]), [q])
            mask = m if mask is None else mask & m
    return mask


def _ports_mask(inst: Instance, cache: EligibilityCache, cls: PodClass, cond: dict[int, set[int]]) -> np.ndarray | None:
    if not cls.rep.host_ports:
        return None
    mask = np.ones(inst.n_nodes, dtype=bool)
    for i in cache.port_nodes:
        hit = [q for q in inst.bound_on_node[i] if any(ports_conflict(a, b) for a in cls.rep.host_ports for b in q.host_ports)]
        if hit:
            _block(inst, mask, cond, np.array([i]), hit)
    return mask


def _has_labels(inst: Instance, keys: list[str]) -> np.ndarray | None:
    mask = None
    for k in keys:
        ids, _ = inst.domains(k)
        m = ids != NO_DOMAIN
        mask = m if mask is None else mask & m
    return mask


def _topology_mask(inst: Instance, cls: PodClass) -> np.ndarray | None:
    """Group topology constraints: nodes with the key, inside the domain bound members already use."""
    mask = None
    for key, leaves in group_topologies(inst, cls):
        ids, _ = inst.domains(key)
        m = ids != NO_DOMAIN
        doms = set()
        for leaf in leaves:
            for q in inst.cluster.groups.node(leaf).members:
                if q.key in inst.bound_node_of:
                    doms.add(int(ids[inst.bound_node_of[q.key]]))
        if NO_DOMAIN in doms or len(doms) > 1:
            m = np.zeros(inst.n_nodes, dtype=bool)
        elif doms:
            m = ids == next(iter(doms))
        mask = m if mask is None else mask & m
    return mask


def group_topologies(inst: Instance, cls: PodClass) -> list[tuple[str, list[str]]]:
    """(topology key, leaf PodGroups under the constrained group) for every constrained ancestor."""
    out = []
    if cls.group is None or cls.group not in inst.leaves:
        return out
    tree = inst.cluster.groups
    for key in tree.ancestors(cls.group):
        topology_key = tree.node(key).topology_key
        if topology_key:
            out.append((topology_key, leaves_under(inst, key)))
    return out


def leaves_under(inst: Instance, key: str) -> list[str]:
    """The model's leaf PodGroups at or below ``key`` (from the shared group forest)."""
    return [k for k in inst.cluster.groups.leaves(key) if k in inst.leaves]


def class_eligibility(inst: Instance, cache: EligibilityCache, cls: PodClass,
                      ignore: frozenset[str] = frozenset()) -> Eligibility:
    """Every family's mask; families in ``ignore`` do not restrict ``eligible`` (nor ``fit``)."""
    p = cls.rep
    unsched, taint, sel = cache.node_masks(cls)
    fit = fit_counts(inst, request_vector(inst, cls))
    masks: dict[str, np.ndarray] = {"unschedulable": unsched, "taint": taint, "node-selector": sel, "capacity": fit > 0}
    if cls.fixed_node is not None:
        m = np.zeros(inst.n_nodes, dtype=bool)
        m[cls.fixed_node] = True
        masks["fixed"] = m
    port_cond: dict[int, set[int]] = {}
    anti_cond: dict[int, set[int]] = {}
    optional = {
        "host-port": _ports_mask(inst, cache, cls, port_cond),
        "pod-anti-affinity": _anti_affinity_mask(inst, cache, cls, anti_cond),
        "pod-affinity": _has_labels(inst, [t.topology_key for t in p.affinity.pod_affinity_required]),
        "topology-spread": _has_labels(inst, [c.topology_key for c in p.topology_spread if c.when_unsatisfiable == "DoNotSchedule"]),
        "topology": _topology_mask(inst, cls),
    }
    masks.update({k: m for k, m in optional.items() if m is not None})
    eligible = np.ones(inst.n_nodes, dtype=bool)
    for fam, m in masks.items():
        if fam not in ignore:
            eligible &= m
    if "capacity" in ignore:
        fit = np.full(inst.n_nodes, cls.size, dtype=np.int64)
    needs: dict[int, set[int]] = {}
    for fam, cond in (("host-port", port_cond), ("pod-anti-affinity", anti_cond)):
        if fam not in ignore:
            for n, us in cond.items():
                if eligible[n]:
                    needs.setdefault(n, set()).update(us)
    return Eligibility(masks=masks, eligible=eligible, fit=np.where(eligible, fit, 0),
                       needs_evict={n: frozenset(us) for n, us in sorted(needs.items())})
