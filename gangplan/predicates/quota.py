"""Kueue's quota rule: ClusterQueues, cohorts (implicit and ``Cohort`` objects), nominal quota,
borrowing and lending limits, written once for the greedy admission, the exact engine and the
validator (issue 42).

Reproduced from kubernetes-sigs/kueue at v0.19.2 (unchanged on ``main`` ff69552e79; the arithmetic
is the same since v0.17, v0.19 only moved it to saturating ``resources.Amount``):

* ``pkg/cache/scheduler/resource_node.go``: ``localQuota``, ``LocalAvailable``, ``available``,
  ``potentialAvailable``, ``addUsage`` / ``removeUsage``, ``updateCohortResourceNode`` /
  ``accumulateFromChild`` (the subtree quota) and ``QuantitiesFitInQuota``;
* ``pkg/cache/scheduler/resource.go`` (``createResourceQuotas``: one quota per flavor and
  resource), ``clusterqueue_snapshot.go`` (``Available`` clamps at 0, ``BorrowingWith``,
  ``Fits``), ``cohort_snapshot.go``;
* ``pkg/cache/hierarchy/cycle.go`` (a cohort whose ancestors loop is left out of the snapshot, and
  its ClusterQueues are inactive: ``snapshot.go``, ``skipInactiveCQReason``);
* ``pkg/scheduler/preemption/classical/hierarchical_preemption.go``
  (``FindHeightOfLowestSubtreeThatFits``, ``getNodeHeight``: the borrowing level the flavor
  assigner ranks flavors by);
* ``pkg/workload/workload.go`` (``totalRequestsFromAdmission``, ``podSetsCountsAfterReclaim``,
  ``FlavorResourceUsage``: what an admitted workload holds).

The tree. Every ClusterQueue and cohort is a node with, per (flavor, resource), its own quota
(nominal, borrowing limit, lending limit) and a *subtree quota*: a ClusterQueue's is its nominal
quota; a cohort's is its own nominal quota plus, for every child, the child's subtree quota minus
the child's *local quota* ``max(0, subtree - lendingLimit)`` (0 without a lending limit), the part
the child keeps to itself. *Usage* is kept per node as Kueue keeps it: a ClusterQueue's is what its
workloads hold; a cohort's is the sum over its children of ``max(0, usage - localQuota)``.

``available(cq)`` walks to the root: at the root ``subtree - usage``; below it, the node's unused
local quota plus what the parent has available, capped by the borrowing limit as
``subtree - localQuota - max(0, usage - localQuota) + borrowingLimit``. Kueue clamps the result
at 0 (``ClusterQueueSnapshot.Available``).

As linear caps (:meth:`QuotaTree.caps`). From a state where every cap holds, Kueue admits an
amount to a ClusterQueue iff afterwards, for the nodes on its path to the root,

* the root (a cohort, or a ClusterQueue without one) has ``usage <= subtree quota``, and
* every non-root node with a borrowing limit has ``usage <= subtree quota + borrowingLimit``,

where a cohort's usage is the nested ``sum(max(0, child usage - child localQuota))`` above. That
nested maximum is a maximum of linear functions of the ClusterQueues' usages, so each rule is a
finite family of caps "sum of the usage of these ClusterQueues <= value", one per choice, at every
lending-limited node, of whether its usage counts (without lending limits it is exactly one cap
per rule: the subtree's ClusterQueues). The exact engine may instead write the same rule with one
auxiliary variable per non-root node, ``stored_n >= usage_n - localQuota_n``, ``stored_n >= 0``,
``usage_cohort = sum(stored_child)`` (exact, because every rule bounds usage from above); see
:meth:`QuotaTree.node_params`. Where the caps and Kueue part:

* *over-admitted states* (a quota lowered, a ClusterQueue moved, an admitted workload that never
  fitted): Kueue checks only the admitting ClusterQueue's path, so it may admit while another
  subtree breaks a cap, and a broken cap on the path makes it refuse even an amount that fits in
  unused local quota (``available`` turns negative, then clamps to 0);
* *order*: the caps say which final usages are allowed; Kueue reaches one greedily, a workload at
  a time, and never undoes a choice (preemption is a separate step, not modelled here);
* *inactive ClusterQueues* (an unknown flavor, an inactive admission check, a cohort cycle)
  admit nothing, but the cache still counts the quota and usage of all but the cycle ones in
  their cohort (``snapshot.go`` clones the cohort's resource node): pass their names as
  ``inactive`` to :meth:`QuotaTree.build` to keep them out of ``admissible``.

Quantities are scheduler integers (cpu in millicores). Python integers do not overflow, so Kueue's
saturating ``Amount`` and its ``Unlimited`` sentinel (for quotas of 2^63 and more) are not needed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from gangplan.models.kueue import ClusterQueue, Cohort, KueueState, KueueWorkload, ResourceGroup

__all__ = [
    "FlavorResource",
    "NodeKey",
    "Quota",
    "QuotaCap",
    "QuotaNode",
    "QuotaTree",
    "QuotaUsage",
    "format_amount",
    "workload_usage",
]

FlavorResource = tuple[str, str]
"""(flavor, resource): Kueue's ``resources.FlavorResource``."""

NodeKind = Literal["ClusterQueue", "Cohort"]
NodeKey = tuple[NodeKind, str]
"""A node of the quota tree: a ClusterQueue and a Cohort may share a name."""

CQ: NodeKind = "ClusterQueue"
COHORT: NodeKind = "Cohort"


@dataclass(frozen=True)
class Quota:
    """One (flavor, resource) quota of a node (``pkg/cache/scheduler/resource.go``,
    ``ResourceQuota``). None: no limit."""

    nominal: int = 0
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(frozen=True)
class QuotaNode:
    """A ClusterQueue or cohort of the quota tree (``resourceNode`` with its hierarchy edges)."""

    kind: NodeKind
    name: str
    parent: str | None
    """The parent cohort's name; None at a root."""
    quotas: Mapping[FlavorResource, Quota]
    subtree_quota: Mapping[FlavorResource, int]
    child_cohorts: tuple[str, ...] = ()
    child_cluster_queues: tuple[str, ...] = ()

    @property
    def key(self) -> NodeKey:
        return (self.kind, self.name)

    def quota(self, fr: FlavorResource) -> Quota:
        return self.quotas.get(fr, _NO_QUOTA)

    def local_quota(self, fr: FlavorResource) -> int:
        """The capacity only this subtree sees: ``max(0, subtree - lendingLimit)``, 0 without a
        lending limit (``resourceNode.localQuota``)."""
        lending = self.quota(fr).lending_limit
        if lending is None:
            return 0
        return max(0, self.subtree_quota.get(fr, 0) - lending)


_NO_QUOTA = Quota()


@dataclass
class QuotaUsage:
    """Usage per node and (flavor, resource), as Kueue's ``resourceNode.Usage``: a ClusterQueue's
    is what it holds, a cohort's what its children hold beyond their local quota. Mutable; build
    it with :meth:`QuotaTree.usage_from` and change it with :meth:`QuotaTree.add` / ``remove``."""

    nodes: dict[NodeKey, dict[FlavorResource, int]] = field(default_factory=dict)

    def get(self, node: NodeKey, fr: FlavorResource) -> int:
        return self.nodes.get(node, {}).get(fr, 0)

    def of_cluster_queue(self, cq: str) -> dict[FlavorResource, int]:
        return dict(self.nodes.get((CQ, cq), {}))

    def copy(self) -> QuotaUsage:
        return QuotaUsage({k: dict(v) for k, v in self.nodes.items()})

    def _bump(self, node: NodeKey, fr: FlavorResource, delta: int) -> None:
        row = self.nodes.setdefault(node, {})
        row[fr] = row.get(fr, 0) + delta


@dataclass(frozen=True)
class QuotaCap:
    """``sum(usage of cluster_queues in flavor/resource) <= value``: one linear form of a rule at
    ``node`` (``rule`` "root": subtree quota; "borrowingLimit": subtree quota + borrowing limit)."""

    node: NodeKey
    flavor: str
    resource: str
    cluster_queues: tuple[str, ...]
    value: int
    rule: Literal["root", "borrowingLimit"]


@dataclass(frozen=True)
class NodeParams:
    """One node's numbers for one (flavor, resource), for the auxiliary-variable formulation."""

    node: NodeKey
    parent: NodeKey | None
    subtree_quota: int
    local_quota: int
    borrowing_limit: int | None


def _quotas(groups: Sequence[ResourceGroup]) -> dict[FlavorResource, Quota]:
    """``createResourceQuotas``: every (flavor, resource) a resource group lists."""
    out: dict[FlavorResource, Quota] = {}
    for g in groups:
        for f in g.flavors:
            for q in f.resources:
                out[(f.name, q.name)] = Quota(q.nominal, q.borrowing_limit, q.lending_limit)
    return out


def workload_usage(wl: KueueWorkload) -> dict[FlavorResource, int]:
    """What an admitted workload holds per (flavor, resource): its ``status.admission`` resource
    usage, scaled down to the pods not yet reclaimable (``totalRequestsFromAdmission``,
    ``podSetsCountsAfterReclaim``, ``FlavorResourceUsage`` in ``pkg/workload/workload.go``,
    v0.19.2). A resource with no flavor counts under flavor ``""``, as Kueue's does. Empty for a
    workload without admission."""
    out: dict[FlavorResource, int] = {}
    if wl.admission is None:
        return out
    counts = {ps.name: ps.count for ps in wl.podsets}
    reclaim = wl.reclaimable_pods
    for psa in wl.admission.podsets:
        total = counts.get(psa.name, 0)
        count = psa.count if psa.count is not None else total
        after = total - min(reclaim.get(psa.name, 0), total)
        for res, q in psa.resource_usage.items():
            if after < count:
                q = q // count * after if count else q  # Requests.Divide then Mul (Go: truncation)
            fr = (psa.flavors.get(res, ""), res)
            out[fr] = out.get(fr, 0) + q
    return out


class QuotaTree:
    """The cohort forest of a :class:`~gangplan.models.kueue.KueueState`, immutable; usage lives
    in a separate :class:`QuotaUsage` (as Kueue's snapshot clones only ``Usage``)."""

    def __init__(
        self,
        cluster_queues: dict[str, QuotaNode],
        cohorts: dict[str, QuotaNode],
        excluded: dict[str, str],
        inactive: frozenset[str],
    ) -> None:
        self.cluster_queues = cluster_queues
        self.cohorts = cohorts
        self.excluded = excluded
        """ClusterQueue or ``cohort:<name>`` -> why it is not in the tree (``HasCycle``)."""
        self.inactive = inactive

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def build(cls, state: KueueState, *, inactive: Iterable[str] = ()) -> QuotaTree:
        """The tree of ``state``: ``Cohort`` objects with their parents and quotas, plus the
        implicit cohorts (named by a ClusterQueue's ``cohort`` or a Cohort's ``parent`` only, no
        quota). A cohort on or under a parent cycle is left out with its ClusterQueues
        (``hierarchy.HasCycle``; ``snapshot.go`` skips them). Deterministic: children in name
        order."""
        return cls.from_objects(
            state.cluster_queues.values(), state.cohorts.values(), inactive=inactive
        )

    @classmethod
    def from_objects(
        cls,
        cluster_queues: Iterable[ClusterQueue],
        cohorts: Iterable[Cohort],
        *,
        inactive: Iterable[str] = (),
    ) -> QuotaTree:
        cq_list = sorted(cluster_queues, key=lambda c: c.name)
        objs = {c.name: c for c in cohorts}
        parent: dict[str, str | None] = {n: (c.parent or None) for n, c in objs.items()}
        for c in objs.values():
            if c.parent and c.parent not in parent:
                parent[c.parent] = None
        for cq in cq_list:
            if cq.cohort and cq.cohort not in parent:
                parent[cq.cohort] = None

        def has_cycle(name: str) -> bool:
            seen: set[str] = set()
            cur: str | None = name
            while cur is not None and parent.get(cur) is not None:
                if cur in seen:
                    return True
                seen.add(cur)
                cur = parent[cur]
            return False

        excluded: dict[str, str] = {}
        live = sorted(n for n in parent if not has_cycle(n))
        for n in sorted(set(parent) - set(live)):
            excluded[f"cohort:{n}"] = "HasCycle"
        kids_cohorts: dict[str, list[str]] = {n: [] for n in live}
        kids_cqs: dict[str, list[str]] = {n: [] for n in live}
        for n in live:
            p = parent[n]
            if p is not None:
                kids_cohorts[p].append(n)
        cq_nodes: dict[str, QuotaNode] = {}
        for cq in cq_list:
            if cq.cohort and cq.cohort not in kids_cqs:
                excluded[cq.name] = "HasCycle"
                continue
            if cq.cohort:
                kids_cqs[cq.cohort].append(cq.name)
            quotas = _quotas(cq.resource_groups)
            cq_nodes[cq.name] = QuotaNode(
                CQ,
                cq.name,
                cq.cohort or None,
                quotas,
                {fr: q.nominal for fr, q in quotas.items()},
            )
        cohort_nodes: dict[str, QuotaNode] = {}

        def build_cohort(name: str) -> QuotaNode:
            # updateCohortResourceNode / accumulateFromChild: own nominal + children's lendable.
            obj = objs.get(name)
            quotas = _quotas(obj.resource_groups) if obj else {}
            subtree = {fr: q.nominal for fr, q in quotas.items()}
            children = [build_cohort(c) for c in kids_cohorts[name]]
            children += [cq_nodes[c] for c in kids_cqs[name]]
            for child in children:
                for fr, q in child.subtree_quota.items():
                    subtree[fr] = subtree.get(fr, 0) + q - child.local_quota(fr)
            node = QuotaNode(
                COHORT,
                name,
                parent[name],
                quotas,
                subtree,
                tuple(kids_cohorts[name]),
                tuple(kids_cqs[name]),
            )
            cohort_nodes[name] = node
            return node

        for n in live:
            if parent[n] is None:
                build_cohort(n)
        return cls(cq_nodes, dict(sorted(cohort_nodes.items())), excluded, frozenset(inactive))

    # -- navigation --------------------------------------------------------------------------

    def node(self, key: NodeKey) -> QuotaNode:
        return self.cluster_queues[key[1]] if key[0] == CQ else self.cohorts[key[1]]

    def parent(self, node: QuotaNode) -> QuotaNode | None:
        return self.cohorts[node.parent] if node.parent is not None else None

    def path(self, cq: str) -> list[QuotaNode]:
        """The ClusterQueue, then its cohorts up to the root."""
        out = [self.cluster_queues[cq]]
        while (p := self.parent(out[-1])) is not None:
            out.append(p)
        return out

    def root(self, node: QuotaNode) -> QuotaNode:
        while (p := self.parent(node)) is not None:
            node = p
        return node

    def admissible(self, cq: str) -> bool:
        """In the tree and not named inactive."""
        return cq in self.cluster_queues and cq not in self.inactive

    def subtree_cluster_queues(self, node: QuotaNode) -> list[str]:
        if node.kind == CQ:
            return [node.name]
        out = list(node.child_cluster_queues)
        for c in node.child_cohorts:
            out += self.subtree_cluster_queues(self.cohorts[c])
        return out

    def height(self, cohort: QuotaNode) -> int:
        """Distance to the furthest leaf (``getNodeHeight``): 1 for a cohort with children, 0
        without, one more per level of child cohorts."""
        h = min(len(cohort.child_cohorts) + len(cohort.child_cluster_queues), 1)
        for c in cohort.child_cohorts:
            h = max(h, self.height(self.cohorts[c]) + 1)
        return h

    # -- usage -------------------------------------------------------------------------------

    def empty_usage(self) -> QuotaUsage:
        return QuotaUsage()

    def usage_from(self, workloads: Iterable[KueueWorkload]) -> QuotaUsage:
        """The usage of the admitted ``workloads`` (:func:`workload_usage`), each added to the
        ClusterQueue of its admission; a workload of a ClusterQueue not in the tree is skipped
        (Kueue's cache keeps no usage for it)."""
        usage = QuotaUsage()
        for wl in workloads:
            if wl.admission is None or wl.admission.cluster_queue not in self.cluster_queues:
                continue
            self.add(usage, wl.admission.cluster_queue, workload_usage(wl))
        return usage

    def add(self, usage: QuotaUsage, cq: str, amounts: Mapping[FlavorResource, int]) -> QuotaUsage:
        """Add ``amounts`` to ``cq`` and bubble what exceeds each node's unused local quota up to
        its parent (``addUsage``). Mutates and returns ``usage``."""
        for fr, val in amounts.items():
            node: QuotaNode | None = self.cluster_queues[cq]
            while node is not None:
                local_avail = self.local_available(node, fr, usage)
                usage._bump(node.key, fr, val)
                parent = self.parent(node)
                if parent is None or val <= local_avail:
                    break
                val -= local_avail
                node = parent
        return usage

    def remove(
        self, usage: QuotaUsage, cq: str, amounts: Mapping[FlavorResource, int]
    ) -> QuotaUsage:
        """Take ``amounts`` off ``cq`` and off what it stored in its parents (``removeUsage``)."""
        for fr, val in amounts.items():
            node: QuotaNode | None = self.cluster_queues[cq]
            while node is not None:
                stored = usage.get(node.key, fr) - node.local_quota(fr)
                usage._bump(node.key, fr, -val)
                parent = self.parent(node)
                if stored <= 0 or parent is None:
                    break
                val = min(val, stored)
                node = parent
        return usage

    # -- the arithmetic ----------------------------------------------------------------------

    def local_available(self, node: QuotaNode, fr: FlavorResource, usage: QuotaUsage) -> int:
        """Unused quota only this subtree sees (``LocalAvailable``)."""
        return max(0, node.local_quota(fr) - usage.get(node.key, fr))

    def _available(self, node: QuotaNode, fr: FlavorResource, usage: QuotaUsage) -> int:
        parent = self.parent(node)
        if parent is None:
            return node.subtree_quota.get(fr, 0) - usage.get(node.key, fr)
        parent_avail = self._available(parent, fr, usage)
        borrowing = node.quota(fr).borrowing_limit
        if borrowing is not None:
            lq = node.local_quota(fr)
            stored = node.subtree_quota.get(fr, 0) - lq
            used_in_parent = max(0, usage.get(node.key, fr) - lq)
            parent_avail = min(stored - used_in_parent + borrowing, parent_avail)
        return self.local_available(node, fr, usage) + parent_avail

    def available(self, cq: str, flavor: str, resource: str, usage: QuotaUsage) -> int:
        """What ``cq`` can still admit in (flavor, resource) without preemption, borrowing
        included, clamped at 0 (``ClusterQueueSnapshot.Available``)."""
        return max(0, self._available(self.cluster_queues[cq], (flavor, resource), usage))

    def raw_available(self, cq: str, flavor: str, resource: str, usage: QuotaUsage) -> int:
        """``available`` before the clamp: negative when the tree is over-admitted."""
        return self._available(self.cluster_queues[cq], (flavor, resource), usage)

    def _potential(self, node: QuotaNode, fr: FlavorResource) -> int:
        parent = self.parent(node)
        if parent is None:
            return node.subtree_quota.get(fr, 0)
        avail = node.local_quota(fr) + self._potential(parent, fr)
        borrowing = node.quota(fr).borrowing_limit
        if borrowing is not None:
            avail = min(node.subtree_quota.get(fr, 0) + borrowing, avail)
        return avail

    def potential_available(self, cq: str, flavor: str, resource: str) -> int:
        """The most ``cq`` could hold in (flavor, resource) with no usage anywhere, borrowing
        limits respected (``potentialAvailable``): beyond it, a request can never fit."""
        return self._potential(self.cluster_queues[cq], (flavor, resource))

    def borrowing_with(self, cq: str, fr: FlavorResource, val: int, usage: QuotaUsage) -> bool:
        """``nominal < usage + val`` (``ClusterQueueSnapshot.BorrowingWith``)."""
        node = self.cluster_queues[cq]
        return node.quota(fr).nominal < usage.get(node.key, fr) + val

    def lowest_subtree_height(
        self, cq: str, fr: FlavorResource, val: int, usage: QuotaUsage
    ) -> tuple[int, bool]:
        """``FindHeightOfLowestSubtreeThatFits``: the height of the lowest subtree holding
        ``val`` more of ``fr`` within its subtree quota (0: within the ClusterQueue's nominal
        quota; the whole tree's height if none does), and whether that subtree is smaller than
        the whole tree (reclaim within it may help)."""
        node = self.cluster_queues[cq]
        has_parent = node.parent is not None
        if not self.borrowing_with(cq, fr, val, usage) or not has_parent:
            return 0, has_parent
        remaining = val - self.local_available(node, fr, usage)
        tracking = self.parent(node)
        while tracking is not None:
            subtree = tracking.subtree_quota.get(fr, 0)
            if (
                not subtree < usage.get(tracking.key, fr) + remaining
            ):  # CohortSnapshot.BorrowingWith
                return self.height(tracking), tracking.parent is not None
            remaining -= self.local_available(tracking, fr, usage)
            tracking = self.parent(tracking)
        return self.height(self.root(node)), False

    def fits(
        self, cq: str, amounts: Mapping[FlavorResource, int], usage: QuotaUsage
    ) -> tuple[bool, bool, str]:
        """Whether ``amounts`` fit ``cq`` now (``ClusterQueueSnapshot.Fits``: each within
        :meth:`available`), whether that borrows (some amount passes the nominal quota), and
        the first failing (flavor, resource) as Kueue words it ("insufficient unused quota for
        cpu in flavor default, 1 more needed"), or "".
        """
        borrowing = False
        for fr in sorted(amounts):
            q = amounts[fr]
            if cq not in self.cluster_queues:
                return False, False, f"ClusterQueue {cq} is not in the quota tree"
            avail = self.available(cq, fr[0], fr[1], usage)
            if avail < q:
                more = format_amount(fr[1], q - avail)
                reason = (
                    f"insufficient unused quota for {fr[1]} in flavor {fr[0]}, {more} more needed"
                )
                return False, False, reason
            borrowing = borrowing or self.borrowing_with(cq, fr, q, usage)
        return True, borrowing, ""

    # -- linear form -------------------------------------------------------------------------

    def flavor_resources(self) -> list[FlavorResource]:
        frs: set[FlavorResource] = set()
        for n in (*self.cluster_queues.values(), *self.cohorts.values()):
            frs.update(n.subtree_quota)
        return sorted(frs)

    def node_params(self, fr: FlavorResource) -> list[NodeParams]:
        """Every node's subtree quota, local quota and borrowing limit for ``fr``, parents
        first: the data of the auxiliary-variable formulation in the module docstring."""
        out: list[NodeParams] = []

        def walk(node: QuotaNode) -> None:
            parent = self.parent(node)
            out.append(
                NodeParams(
                    node.key,
                    parent.key if parent else None,
                    node.subtree_quota.get(fr, 0),
                    node.local_quota(fr),
                    node.quota(fr).borrowing_limit,
                )
            )
            if node.kind == COHORT:
                for c in node.child_cohorts:
                    walk(self.cohorts[c])
                for c in node.child_cluster_queues:
                    walk(self.cluster_queues[c])

        for n in self.cohorts.values():
            if n.parent is None:
                walk(n)
        for n in self.cluster_queues.values():
            if n.parent is None:
                walk(n)
        return out

    def _pieces(self, node: QuotaNode, fr: FlavorResource, limit: int) -> dict[frozenset, int]:
        """``usage(node)`` as ``max over pieces of (sum of usage of S) - offset``: S -> the
        smallest offset."""
        if node.kind == CQ:
            return {frozenset([node.name]): 0}
        acc: dict[frozenset, int] = {frozenset(): 0}
        children = [self.cohorts[c] for c in node.child_cohorts]
        children += [self.cluster_queues[c] for c in node.child_cluster_queues]
        for child in children:
            lq = child.local_quota(fr)
            options = {s: off + lq for s, off in self._pieces(child, fr, limit).items()}
            if lq > 0:  # max(0, usage - lq): "does not count" is a piece of its own
                options[frozenset()] = min(options.get(frozenset(), 0), 0)
            nxt: dict[frozenset, int] = {}
            for s1, o1 in acc.items():
                for s2, o2 in options.items():
                    s = s1 | s2
                    o = o1 + o2
                    if s not in nxt or o < nxt[s]:
                        nxt[s] = o
            if len(nxt) > limit:
                raise ValueError(
                    f"{node.kind} {node.name}: more than {limit} caps for {fr}; use node_params "
                    "(one auxiliary variable per node) instead"
                )
            acc = nxt
        return acc

    def caps(
        self, cluster_queues: Iterable[str] | None = None, *, limit: int = 4096
    ) -> list[QuotaCap]:
        """Every rule of the tree as linear caps on ClusterQueue usage (module docstring), for
        the (flavor, resource) pairs any node has quota for. ``cluster_queues``: only rules on
        their paths. Trivial caps (no ClusterQueue, or a value no usage can break) are left out.
        Raises ValueError past ``limit`` caps for one rule (many lending-limited children)."""
        wanted = None if cluster_queues is None else set(cluster_queues)
        nodes: list[QuotaNode] = []
        if wanted is None:
            nodes = [*self.cohorts.values(), *self.cluster_queues.values()]
        else:
            seen: set[NodeKey] = set()
            for cq in sorted(wanted):
                for n in self.path(cq):
                    if n.key not in seen:
                        seen.add(n.key)
                        nodes.append(n)
        out: list[QuotaCap] = []
        for fr in self.flavor_resources():
            for node in nodes:
                if node.parent is None:
                    rule: Literal["root", "borrowingLimit"] = "root"
                    value = node.subtree_quota.get(fr, 0)
                else:
                    borrowing = node.quota(fr).borrowing_limit
                    if borrowing is None:
                        continue
                    rule = "borrowingLimit"
                    value = node.subtree_quota.get(fr, 0) + borrowing
                for s, off in sorted(
                    self._pieces(node, fr, limit).items(), key=lambda kv: sorted(kv[0])
                ):
                    if not s:
                        continue
                    out.append(
                        QuotaCap(node.key, fr[0], fr[1], tuple(sorted(s)), value + off, rule)
                    )
        return out

    def violated_caps(self, usage: QuotaUsage) -> list[QuotaCap]:
        """The caps ``usage`` breaks (the validator's check)."""
        out = []
        for cap in self.caps():
            fr = (cap.flavor, cap.resource)
            total = sum(usage.get((CQ, c), fr) for c in cap.cluster_queues)
            if total > cap.value:
                out.append(cap)
        return out


_BINARY_SUFFIXES = (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10))
_DECIMAL_SUFFIXES = ("", "k", "M", "G", "T", "P", "E")


def _decimal_si(value: int, exp10: int) -> str:
    """``Quantity.String()`` for DecimalSI: strip trailing zeros three at a time into the
    exponent (``k8s.io/apimachinery/pkg/api/resource`` ``AsCanonicalBytes``)."""
    if value == 0:
        return "0"
    while value % 10 == 0 and exp10 < 18:
        value //= 10
        exp10 += 1
    while exp10 % 3 != 0:
        value *= 10
        exp10 -= 1
    if exp10 < 0:
        return f"{value}{'m' if exp10 == -3 else 'u' if exp10 == -6 else 'n'}"
    return f"{value}{_DECIMAL_SUFFIXES[exp10 // 3]}"


def format_amount(resource: str, value: int) -> str:
    """A quantity as Kueue prints it in messages (``pkg/resources/resource_formatter.go``,
    v0.19.2, ``ResourceQuantity``): cpu as a milli DecimalSI quantity ("1", "500m", "2k"),
    memory, ephemeral-storage and ``hugepages-*`` in canonical BinarySI (a multiple of 1024 as
    "Ki"/"Mi"/..., anything else re-read as DecimalSI: "1k", "1500"), other resources DecimalSI.
    """
    if resource == "cpu":
        return _decimal_si(value, -3)
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        if abs(value) >= 1024:
            for suffix, shift in _BINARY_SUFFIXES:
                if value % (1 << shift) == 0:
                    return f"{value >> shift}{suffix}"
        return _decimal_si(value, 0)
    return _decimal_si(value, 0)
