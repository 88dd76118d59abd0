"""Static eligibility: which nodes a pod class could ever use, before any variable exists.

Everything that depends only on the class and the bound state is decided here over whole node
vectors (numpy), so an ineligible (class, node) pair never becomes a variable. Each constraint
family gives its own mask (``Family.mask``, see :mod:`.family`; the node rules, which have no
model part, are :mod:`.noderules`), so :func:`gangplan.solver.exact.check_feasible` can name the
rule a forced placement breaks. Semantics are those of :mod:`gangplan.solver.validate`
(final-state checks); the per pod x node predicates are :mod:`gangplan.predicates`, shared with the
greedy engine and the validator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from gangplan.predicates import (
    blocked_by_unschedulable,
    first_untolerated_taint,
    node_matches_pod_selector,
)
from gangplan.solver.exact.bound import bound_pods
from gangplan.solver.exact.instance import NO_DOMAIN, Instance, PodClass, canonical
from gangplan.solver.exact.names import CAPACITY

Conditions = dict[int, set[int]]
"""Node -> evictable units that must all be evicted before the class may use the node."""


@dataclass
class Eligibility:
    masks: dict[str, np.ndarray]
    """Family -> bool per node (True: this family allows the node), in registry order."""
    eligible: np.ndarray
    fit: np.ndarray
    """Per node, how many pods of the class fit on the bound state alone (0 where ineligible)."""
    needs_evict: dict[int, frozenset[int]] = field(default_factory=dict)
    """Node -> evictable units that must all be evicted before the class may use it: every
    bound pod whose host port or anti-affinity blocks the class there is in those units
    (preemption only; the model adds ``count(class, node) <= ub * evict[u]``)."""

    def first_failing(self, node: int) -> str | None:
        for fam, m in self.masks.items():
            if not m[node]:
                return fam
        return None


class EligibilityCache:
    """Node-rule masks shared by classes with the same tolerations and node selectors."""

    def __init__(self, inst: Instance) -> None:
        self.inst = inst
        self.node_rules: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        bp = bound_pods(inst.cluster)
        self.anti_holders = [
            (q, t, inst.bound_node_of[key])
            for q, key in zip(bp.pods, bp.keys, strict=True)
            if key in inst.bound_node_of
            for t in q.affinity.pod_anti_affinity_required
        ]
        self.port_nodes = [
            i for i, pods in enumerate(inst.bound_on_node) if any(p.host_ports for p in pods)
        ]

    def node_masks(self, cls: PodClass) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        p = cls.rep
        key = canonical(
            (p.tolerations, p.model_dump(include={"node_selector"}), p.affinity.node_required or ())
        )
        if key not in self.node_rules:
            nodes = self.inst.cluster.nodes
            unsched = np.array(
                [not blocked_by_unschedulable(n, p.tolerations) for n in nodes], dtype=bool
            )
            taint = np.array(
                [first_untolerated_taint(n.taints, p.tolerations) is None for n in nodes],
                dtype=bool,
            )
            sel = np.array([node_matches_pod_selector(p, n) for n in nodes], dtype=bool)
            self.node_rules[key] = (unsched, taint, sel)
        return self.node_rules[key]


@dataclass(frozen=True)
class ClassView:
    """What a family's static mask reads: the class, the problem data, the shared node-rule
    masks, and how many of the class's pods fit per node on the bound state alone."""

    inst: Instance
    cache: EligibilityCache
    cls: PodClass
    fit: np.ndarray


Mask = Callable[[ClassView, Conditions], "np.ndarray | None"]
"""A family's static mask: bool per node (True: allowed), or None when the family says nothing
about the class. Nodes it allows only once evictable units go are recorded in the
:data:`Conditions` it is given (see :func:`block`)."""


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


def block(inst: Instance, mask: np.ndarray, cond: Conditions, nodes, blockers) -> None:
    """``blockers`` (bound pods) make ``nodes`` ineligible, unless every one of them is in an
    evictable unit: then the nodes stay eligible on condition that those units are evicted."""
    units = {inst.unit_of.get(q.key) for q in blockers}
    if None in units:
        mask[nodes] = False
        return
    for n in nodes.tolist():
        cond.setdefault(n, set()).update(units)


def has_labels(inst: Instance, keys: list[str]) -> np.ndarray | None:
    """Nodes carrying every key (None when there is no key)."""
    mask = None
    for k in keys:
        ids, _ = inst.domains(k)
        m = ids != NO_DOMAIN
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


def topology_poolable(inst: Instance, c: PodClass) -> bool:
    """Is the class's only topology rule its own PodGroup's (so its pods can share slots)?"""
    tops = group_topologies(inst, c)
    return len(tops) == 1 and c.group is not None and tops[0][1] == [c.group]


def leaves_under(inst: Instance, key: str) -> list[str]:
    """The model's leaf PodGroups at or below ``key`` (from the shared group forest)."""
    return [k for k in inst.cluster.groups.leaves(key) if k in inst.leaves]


def class_eligibility(
    inst: Instance,
    cache: EligibilityCache,
    cls: PodClass,
    masks: Sequence[tuple[str, Mask]],
    ignore: frozenset[str] = frozenset(),
) -> Eligibility:
    """Every family's mask (``masks``: (name, mask) in registry order); families in ``ignore`` do
    not restrict ``eligible`` (nor ``fit``, for capacity)."""
    fit = fit_counts(inst, request_vector(inst, cls))
    view = ClassView(inst=inst, cache=cache, cls=cls, fit=fit)
    found: dict[str, np.ndarray] = {}
    conds: dict[str, Conditions] = {}
    for name, mask_fn in masks:
        cond: Conditions = {}
        m = mask_fn(view, cond)
        if m is not None:
            found[name] = m
        if cond:
            conds[name] = cond
    eligible = np.ones(inst.n_nodes, dtype=bool)
    for fam, m in found.items():
        if fam not in ignore:
            eligible &= m
    if CAPACITY in ignore:
        fit = np.full(inst.n_nodes, cls.size, dtype=np.int64)
    needs: dict[int, set[int]] = {}
    for fam, cond in conds.items():
        if fam not in ignore:
            for n, us in cond.items():
                if eligible[n]:
                    needs.setdefault(n, set()).update(us)
    return Eligibility(
        masks=found,
        eligible=eligible,
        fit=np.where(eligible, fit, 0),
        needs_evict={n: frozenset(us) for n, us in sorted(needs.items())},
    )
