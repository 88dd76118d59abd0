"""Independent validator: every hard rule, checked on the final state a Result describes.

It imports no engine. The final state is: bound pods, minus victims, plus every placed (or
nominated) pending pod. A victim may also be a pending pod that the Result places nowhere: the run
placed it and a later preemptor evicted it (rule V of issue 39); the Result does not say where it
was, so it is absent from the final state and never counted as a pod-affinity supporter. Victims are absent from it for capacity, anti-affinity, spread and host
ports; for required pod affinity (the one order-based rule) a victim may still count as an
existing pod supporting a pending pod, which may have been placed before the victim was evicted
(:mod:`gangplan.predicates.affinity_order`). Per pod x node checks come from :mod:`gangplan.predicates`, the same pure
functions the engines use, so "feasible" means one thing.

Rules (``Violation.rule``):

``result-shape``      unknown pods or nodes, gated pods placed, a pending pod missing, outcome counts
                      that disagree with the placements
``capacity``          a node's requests (per resource, and the pod count) exceed its allocatable
``unschedulable``     a pod on a ``spec.unschedulable`` node it does not tolerate
``taint``             an untolerated NoSchedule / NoExecute taint (PreferNoSchedule never blocks)
``node-selector``     nodeSelector or required node affinity not met
``host-port``         two pods on a node want the same host port
``dra``               the new pods' ResourceClaims (and KEP-5004 extended requests) on a node cannot
                      all be given distinct matching free devices, or a claim allocated in the
                      snapshot is not usable on the pod's node (:func:`gangplan.dra.capacity.check_node`;
                      with multi-node devices, nodes one after another, each without the devices
                      the others take, and a claim shared across nodes allocated once, usable on
                      all of them: :func:`gangplan.dra.capacity.check_nodes`);
                      the devices a Result names for a pod's claims are not on its node, not free,
                      do not match their request or are named twice, or a claim's named devices break
                      its matchAttribute / distinctAttribute constraints (:func:`gangplan.dra.results.check_named`)
``pod-affinity``      no order of the placed pending pods (bound pods first) passes kube-scheduler's
                      required podAffinity check for this pod at its turn: some term lacks an
                      earlier matching pod in its domain, and the first-pod rule (nothing earlier
                      matches on a node with a term's key, the pod matches its own terms) does not
                      apply; see :mod:`gangplan.predicates.affinity_order` for the definition
``pod-anti-affinity`` a required podAntiAffinity term violated, by the pod or by a pod already there
``topology-spread``   a DoNotSchedule constraint's skew exceeds maxSkew in every order the pods could
                      have been placed in
``group-validation``  pods placed under a hierarchy kube-scheduler's run-time validation refuses
``gang``              a PodGroup with newly placed pods but fewer than minCount on nodes (its pending
                      victims, placed by the run and evicted later, count as on nodes: they were when
                      it was admitted)
``composite``         a CompositePodGroup with newly placed pods but fewer than minGroupCount children
                      (counted the same way)
``topology``          a group's pods not inside one domain of its ``schedulingConstraints.topology`` key
``victim``            a victim that is neither a bound pod nor a pending pod the run may have placed
                      and evicted (rule V of issue 39: a pod a scheduling cycle attempts, not gated
                      nor terminating, that the Result places nowhere), whose priority is not
                      strictly lower than every group it made room for, or that leaves part of its
                      victim unit (a ``disruptionMode: all`` group) on the nodes: the units over the
                      bound pods and the pending victims, so a pending victim's unit takes every
                      bound pod of its group with it
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from gangplan.models.cluster import Cluster
from gangplan.models.memo import ClusterMemo
from gangplan.models.objects import NEVER, PODS, Node, Pod
from gangplan.models.result import Result
from gangplan.models.version import KubeVersion, workload_aware_preemption
from gangplan.predicates import (
    blocked_by_unschedulable,
    first_untolerated_taint,
    node_matches_pod_selector,
    ports_conflict,
    selector_matches,
    term_matches,
)
from gangplan.predicates.affinity_order import affinity_order

POD, NODE = "Pod", "Node"


@dataclass(frozen=True, order=True)
class Violation:
    """One violated rule. ``subject`` is what the text names (a pod key, ``Node/<name>``,
    ``PodGroup/<key>``, ``CompositePodGroup/<key>``, or a victim unit's key); ``kind`` and
    ``name`` say the same typed, for code that acts on the object (``name``: its key)."""

    rule: str
    subject: str
    message: str
    kind: str = POD
    """``Pod``, ``Node``, ``PodGroup`` or ``CompositePodGroup``."""
    name: str = ""
    """The object's key (``namespace/name``, a node's name); defaults to ``subject``."""

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", self.subject)

    @classmethod
    def on(cls, rule: str, kind: str, name: str, message: str) -> Violation:
        """A violation of a node or a group: the subject reads ``<kind>/<name>``."""
        return cls(rule, f"{kind}/{name}", message, kind, name)

    def __str__(self) -> str:
        return f"[{self.rule}] {self.subject}: {self.message}"


class _Bound:
    """Where the snapshot's bound pods are: what every validation of a Result on one cluster
    starts from (pod -> node, pod objects, node -> pods in snapshot order, the pods with
    required anti-affinity, the bound members of each PodGroup, the pending, bound and queued pod
    keys, the nodes by name). Read from the snapshot alone; never changed once made (a
    :class:`_State` copies what it changes)."""

    def __init__(self, cluster: Cluster) -> None:
        self.node_of: dict[str, str] = {}
        self.pods: dict[str, Pod] = {}
        self.on_node: dict[str, list[Pod]] = {}
        self.anti: list[Pod] = []
        for p in cluster.bound_pods:
            key, node = p.key, p.node_name
            self.node_of[key] = node  # type: ignore[assignment]
            self.pods[key] = p
            self.on_node.setdefault(node, []).append(p)  # type: ignore[arg-type]
            if p.affinity.pod_anti_affinity_required:
                self.anti.append(p)
        tree = cluster.groups
        self.grouped: list[tuple[str, str]] = [
            (key, g) for key, p in self.pods.items() if (g := p.group_key) in tree
        ]
        """(pod key, PodGroup key) of the bound pods in a PodGroup of the forest, in
        :attr:`node_of` order."""
        self.pending_keys = frozenset(p.key for p in cluster.pending_pods)
        self.bound_keys = frozenset(self.pods)
        self.queued_keys = frozenset(p.key for p in cluster.queued_pods)
        self.nodes: dict[str, Node] = {n.name: n for n in cluster.nodes}


_bound = ClusterMemo(_Bound)
"""The bound pods' layout of a cluster, made once per cluster (:class:`ClusterMemo`). A diff
validates up to seven Results on one cluster: on 100,000 bound pods the layout is about 0.35 s of
each."""


class _State:
    """The final state: node -> pods on it, and pod -> node."""

    def __init__(self, cluster: Cluster, result: Result) -> None:
        self.cluster = cluster
        victims = set(result.victims)
        self.victims = victims
        base = self.base = _bound(cluster)
        self.node_of: dict[str, str] = dict(base.node_of)
        self.pods: dict[str, Pod] = dict(base.pods)
        # The bound layout's lists are shared; a node's list is copied before it changes (a few
        # thousand nodes change, of 10,000 holding 100,000 bound pods on the largest shapes).
        on_node: dict[str, list[Pod]] = dict(base.on_node)
        for v in victims:
            n = self.node_of.pop(v, None)
            if n is not None:
                gone = self.pods.pop(v)
                on_node[n] = [q for q in on_node[n] if q is not gone]
                if not on_node[n]:
                    del on_node[n]
        self.new: set[str] = set()
        self.added: list[str] = []
        """The keys of :attr:`new` in :attr:`node_of` order (the Result's pod order)."""
        self.new_on: dict[str, list[Pod]] = {}
        """Node -> the Result's pods placed on it (in :attr:`added` order)."""
        copied: set[str] = set()
        for key, out in result.pods.items():
            p = cluster.pod_by_key.get(key)
            if (
                out.node is not None
                and p is not None
                and p.node_name is None
                and out.node in cluster.node_index
            ):
                self.node_of[key] = out.node
                self.pods[key] = p
                self.new.add(key)
                self.added.append(key)
                self.new_on.setdefault(out.node, []).append(p)
                if out.node not in copied:
                    copied.add(out.node)
                    on_node[out.node] = list(on_node.get(out.node, ()))
                on_node[out.node].append(p)
        self.on_node: dict[str, list[Pod]] = defaultdict(list, on_node)
        self.anti = [p for p in base.anti if p.key not in victims] + [
            self.pods[k] for k in self.added if self.pods[k].affinity.pod_anti_affinity_required
        ]
        """Pods on nodes with required anti-affinity, in :attr:`node_of` order."""
        self.nodes = base.nodes


def _shape(cluster: Cluster, result: Result) -> list[Violation]:
    out = []
    base = _bound(cluster)
    pending, bound = base.pending_keys, base.bound_keys
    for key, o in result.pods.items():
        if key not in pending:
            out.append(Violation("result-shape", key, "not a pending pod of the snapshot"))
        elif o.node is not None and o.node not in cluster.node_index:
            out.append(Violation("result-shape", key, f"placed on unknown node {o.node!r}"))
        elif o.node is not None and key in cluster.gated:
            out.append(
                Violation("result-shape", key, f"placed although gated ({cluster.gated[key]})")
            )
        elif o.node is not None and key in cluster.not_queued:
            out.append(
                Violation(
                    "result-shape",
                    key,
                    f"placed although no scheduling cycle attempts it ({cluster.not_queued[key]})",
                )
            )
    for key in sorted(pending - set(result.pods)):
        out.append(Violation("result-shape", key, "pending pod missing from the result"))
    queued = base.queued_keys
    for v in result.victims:
        if v in bound:
            continue
        if v not in queued:
            why = cluster.not_queued.get(v)
            out.append(
                Violation(
                    "victim",
                    v,
                    f"victim is a pending pod no scheduling cycle attempts ({why})"
                    if why
                    else "victim is neither a bound nor a pending pod of the snapshot",
                )
            )
        elif (o := result.pods.get(v)) is not None and o.node is not None:
            out.append(
                Violation(
                    "victim",
                    v,
                    f"victim is a pending pod the Result places (on {o.node}): an evicted pod is gone",
                )
            )
    return out


def _capacity(st: _State) -> list[Violation]:
    out = []
    touched = {st.node_of[k] for k in st.new}
    for name in sorted(touched, key=lambda n: st.cluster.node_index[n]):
        node = st.nodes[name]
        pods = st.on_node[name]
        used: dict[str, int] = defaultdict(int)
        for p in pods:
            for r, q in p.requests.items():
                used[r] += q
        served = (
            st.cluster.dra.mapped_on(node) if st.cluster.dra else ()
        )  # KEP-5004: checked by _dra
        # As NodeResourcesFit checks only what the incoming pod requests, a resource none of the
        # node's new pods asks for is not the Result's doing (a snapshot may hold bound pods that
        # overcommit a resource the node does not list).
        asked = {r for p in st.new_on[name] for r, q in p.requests.items() if q > 0}
        for r, q in sorted(used.items()):
            if r in served or r not in asked:
                continue
            if q > node.allocatable.get(r, 0) and q > 0:
                out.append(
                    Violation.on(
                        "capacity",
                        NODE,
                        name,
                        f"{r} requested {q} > allocatable {node.allocatable.get(r, 0)}",
                    )
                )
        if PODS in node.allocatable and len(pods) > node.allocatable[PODS]:
            out.append(
                Violation.on(
                    "capacity",
                    NODE,
                    name,
                    f"{len(pods)} pods > allocatable pods {node.allocatable[PODS]}",
                )
            )
    return out


def result_version(result: Result, cluster: Cluster) -> KubeVersion:
    """The release a Result reproduces: a greedy Result's ``params.kubeVersion``, else the cluster's."""
    version = result.options.kube_version if result.engine == "greedy" else None
    return KubeVersion(version) if version else cluster.kube_version


def _dra(st: _State, result: Result) -> list[Violation]:
    """DRA devices per node, checked with one joint allocation of the new pods' claims (with
    each claim's matchAttribute / distinctAttribute constraints, distinctAttribute as the
    Result's release knows it)."""
    version = result_version(result, st.cluster)
    dra = (
        st.cluster.dra.for_version(version) if st.cluster.dra else None
    )  # (device taints: the Result's release)
    if not dra:
        return []
    from gangplan.dra.capacity import check_node, check_nodes
    from gangplan.dra.rules import uses_dra
    from gangplan.models.version import dra_distinct_attribute

    distinct = dra_distinct_attribute(version)

    out = []
    touched = {st.node_of[k] for k in st.new}
    placed = []
    for name in sorted(touched, key=lambda n: st.cluster.node_index[n]):
        pods = [p for p in st.on_node[name] if p.key in st.new and uses_dra(dra, p)]
        if pods:
            placed.append((st.nodes[name], pods))
    if dra.multi_node:  # multi-node devices: one allocation takes them from every node they reach
        named = {
            k: tuple((c.claim, c.request, c.driver, c.pool, c.device) for c in o.claims)
            for k, o in result.pods.items()
            if o.claims
        }
        for subject, why in check_nodes(dra, placed, distinct, named):
            out.append(
                Violation.on("dra", NODE, subject, why)
                if subject in st.nodes
                else Violation("dra", subject, why)
            )
        return out
    for node, pods in placed:
        why = check_node(dra, node, pods, distinct)
        if why is not None:
            out.append(Violation.on("dra", NODE, node.name, why))
    # A claim shared by several new pods is allocated once: all of them on one node.
    where: dict[str, set[str]] = defaultdict(set)
    for key in st.new:
        for c in dra.pod_claims.get(key, ()):
            if dra.claims[c].allocated is None:
                where[c].add(st.node_of[key])
    for c, nodes in sorted(where.items()):
        if len(nodes) > 1:
            out.append(
                Violation(
                    "dra", c, f"claim shared by pods on several nodes ({', '.join(sorted(nodes))})"
                )
            )
    return out


def _named_devices(st: _State, result: Result) -> list[Violation]:
    """The devices the Result names for each pod's claims (``PodOutcome.claims``), when it names
    any: on the pod's node, free in the snapshot, matching their requests, distinct."""
    named = {
        k: tuple((c.claim, c.request, c.driver, c.pool, c.device) for c in o.claims)
        for k, o in result.pods.items()
        if o.claims
    }
    if not named:
        return []
    from gangplan.dra.results import check_named

    cluster = st.cluster.at_version(
        result_version(result, st.cluster)
    )  # (device taints: the Result's release)
    return [
        Violation("dra", subject, why) for subject, why in check_named(cluster, st.node_of, named)
    ]


def _node_rules(st: _State) -> list[Violation]:
    out = []
    for key in sorted(st.new):
        p, node = st.pods[key], st.nodes[st.node_of[key]]
        if blocked_by_unschedulable(node, p.tolerations):
            out.append(Violation("unschedulable", key, f"node {node.name} is unschedulable"))
        taint = first_untolerated_taint(node.taints, p.tolerations)
        if taint is not None:
            out.append(
                Violation(
                    "taint",
                    key,
                    f"node {node.name} has untolerated taint {taint.display()} ({taint.effect})",
                )
            )
        if not node_matches_pod_selector(p, node):
            out.append(
                Violation(
                    "node-selector",
                    key,
                    f"node {node.name} does not match nodeSelector / required node affinity",
                )
            )
        if p.host_ports:
            for q in st.on_node[node.name]:
                if q.key != key and any(
                    ports_conflict(a, b) for a in p.host_ports for b in q.host_ports
                ):
                    out.append(
                        Violation(
                            "host-port", key, f"host port conflict with {q.key} on node {node.name}"
                        )
                    )
                    break
    return out


def _same_domain(a: Node, b: Node, key: str) -> bool:
    return key in a.labels and key in b.labels and a.labels[key] == b.labels[key]


def _affinity(st: _State) -> list[Violation]:
    """Required inter-pod affinity and anti-affinity on the final state.

    Affinity is order-dependent upstream (``interpodaffinity/filtering.go`` satisfyPodAffinity):
    the final state is valid iff some order of the placed pending pods, bound pods first, passes
    kube-scheduler's check for each pod at its turn (every term has a matching pod already placed
    in the pod's domain of the term's key, or no placed pod matching all terms sits on a node with
    any of the keys and the pod matches its own terms). That definition, and its exact decision,
    live in :func:`gangplan.predicates.affinity_order.affinity_order`; each pod no order can place
    is named. Victims are evicted at some point of that order, so a pod may count a victim as its
    supporter (placed before the victim left; see the module docstring of
    :mod:`gangplan.predicates.affinity_order`). Anti-affinity needs no order: a pod violates it when another pod in the same domain
    of its term's key matches the term, or when it sits in the domain of another pod's term that
    matches it.
    """
    out = []
    ns = st.cluster.namespaces
    everyone = (
        [(st.pods[k], st.nodes[n]) for k, n in st.node_of.items()]
        if any(st.pods[k].affinity.pod_anti_affinity_required for k in st.new)
        else []  # read only for a new pod with required anti-affinity
    )
    anti_holders = [(p, st.nodes[st.node_of[p.key]]) for p in st.anti]
    if any(st.pods[k].affinity.pod_affinity_required for k in st.new):
        bound = [(st.pods[k], st.nodes[n]) for k, n in st.node_of.items() if k not in st.new]
        new = [(st.pods[k], st.nodes[st.node_of[k]]) for k in sorted(st.new)]
        gone = set(st.victims)
        victims = [
            (p, st.nodes[p.node_name])
            for p in st.cluster.bound_pods
            if p.key in gone and p.node_name in st.nodes
        ]
        plan = affinity_order(bound, new, ns, victims=victims)
        if not plan.feasible:
            note = " (undecided: the search for an order hit its budget)" if plan.undecided else ""
            out += [Violation("pod-affinity", key, why + note) for key, why in plan.blocked]
    for key in sorted(st.new):
        p, node = st.pods[key], st.nodes[st.node_of[key]]
        for t in p.affinity.pod_anti_affinity_required:
            for q, m in everyone:
                if (
                    q.key != key
                    and _same_domain(node, m, t.topology_key)
                    and term_matches(t, p.namespace, q, ns)
                ):
                    out.append(
                        Violation(
                            "pod-anti-affinity",
                            key,
                            f"{q.key} on node {m.name} matches its podAntiAffinity ({t.topology_key})",
                        )
                    )
                    break
        for q, m in anti_holders:
            if q.key == key:
                continue
            for t in q.affinity.pod_anti_affinity_required:
                if _same_domain(node, m, t.topology_key) and term_matches(t, q.namespace, p, ns):
                    out.append(
                        Violation(
                            "pod-anti-affinity",
                            key,
                            f"violates the podAntiAffinity of {q.key} on node {m.name} ({t.topology_key})",
                        )
                    )
                    break
    return out


def _spread_peers(p: Pod, q: Pod) -> bool:
    """Pods whose PodTopologySpread Filter sees the same constraints over the same nodes."""
    return (
        q.namespace == p.namespace
        and q.topology_spread == p.topology_spread
        and q.node_selector == p.node_selector
        and q.affinity.node_required == p.affinity.node_required
        and q.tolerations == p.tolerations
    )


def _spread(st: _State) -> list[Violation]:
    """DoNotSchedule spread, checked so that only certain violations are reported.

    Upstream checks each pod when it is placed (``podtopologyspread/filtering.go``, v1.35):
    ``matching pods in its domain + self - global minimum <= maxSkew``. The validator sees only
    the final state, not the order, so it checks a condition every order must meet: of a set of
    new pods with identical constraints in one domain, the last one placed already counted the
    others and the bound pods there, while the minimum then was at most the final minimum. New
    pods without the constraint may have arrived after it, so they only enter the minimum.
    """
    out = []
    for key in sorted(st.new):
        p, node = st.pods[key], st.nodes[st.node_of[key]]
        # Only nodes carrying every hard constraint's topology key are counted
        # (nodeLabelsMatchSpreadConstraints in calPreFilterState).
        hard_keys = [
            c.topology_key for c in p.topology_spread if c.when_unsatisfiable == "DoNotSchedule"
        ]
        for c in p.topology_spread:
            if c.when_unsatisfiable != "DoNotSchedule":
                continue
            if c.topology_key not in node.labels:
                out.append(
                    Violation(
                        "topology-spread", key, f"node {node.name} has no label {c.topology_key!r}"
                    )
                )
                continue
            mine_value = node.labels[c.topology_key]
            final: dict[str, int] = {}
            certain = 0
            for n in st.cluster.nodes:
                if any(k not in n.labels for k in hard_keys):
                    continue
                if c.node_affinity_policy == "Honor" and not node_matches_pod_selector(p, n):
                    continue
                if (
                    c.node_taints_policy == "Honor"
                    and first_untolerated_taint(n.taints, p.tolerations) is not None
                ):
                    continue
                v = n.labels[c.topology_key]
                final.setdefault(v, 0)
                for q in st.on_node.get(n.name, ()):
                    if (
                        q.namespace != p.namespace
                        or q.terminating
                        or not selector_matches(c.label_selector, q.labels)
                    ):
                        continue
                    final[v] += 1
                    if v == mine_value and (q.key not in st.new or _spread_peers(p, q)):
                        certain += 1
            if not final:
                continue
            lo = min(final.values())
            if c.min_domains is not None and len(final) < c.min_domains:
                lo = 0
            if certain - lo > c.max_skew:
                out.append(
                    Violation(
                        "topology-spread",
                        key,
                        f"skew {certain - lo} > maxSkew {c.max_skew} on {c.topology_key}={mine_value}",
                    )
                )
    return out


def _groups(st: _State, result: Result) -> list[Violation]:
    out = []
    tree = st.cluster.groups
    placed: dict[str, int] = defaultdict(int)
    newly: dict[str, int] = defaultdict(int)
    members: dict[str, list[str]] = defaultdict(list)  # placed pods per PodGroup, in node_of order
    grouped = st.base.grouped  # the bound ones left (the layout's list when no victim is bound)
    if not st.victims.isdisjoint(st.base.bound_keys):
        grouped = [kg for kg in grouped if kg[0] not in st.victims]
    added = [(k, g) for k in st.added if (g := st.pods[k].group_key) in tree]
    for key, g in grouped:
        placed[g] += 1
        members[g].append(key)
    for key, g in added:
        placed[g] += 1
        members[g].append(key)
        newly[g] += 1
    # A pending victim was placed by the run and evicted later (rule V of issue 39): its group
    # had it on a node when it was admitted, so the gang and composite rules count it.
    admitted_with = defaultdict(int, placed)
    for key in st.victims:
        p = st.cluster.pod_by_key.get(key)
        if p is not None and not p.bound and p.group_key in tree:
            admitted_with[p.group_key] += 1
            newly[p.group_key] += 1
    for root in tree.roots:
        why = tree.validation_error(root)
        if why is not None and any(newly[g] for g in tree.leaves(root)):
            out.append(
                Violation.on(
                    "group-validation",
                    tree.node(root).kind,
                    root,
                    f"pods placed although kube-scheduler refuses the hierarchy: {why}",
                )
            )
    for gkey in tree.leaf_keys:
        g = tree.node(gkey)
        if newly[gkey] and admitted_with[gkey] < g.need:
            out.append(
                Violation.on(
                    "gang",
                    "PodGroup",
                    gkey,
                    f"{admitted_with[gkey]} pods on nodes < minCount {g.need} although {newly[gkey]} were placed",
                )
            )
        outcome = result.groups.get(gkey)
        if outcome is not None:
            if outcome.placed != placed[gkey]:
                out.append(
                    Violation.on(
                        "result-shape",
                        "PodGroup",
                        gkey,
                        f"outcome says placed={outcome.placed}, placements give {placed[gkey]}",
                    )
                )
            if outcome.admitted and placed[gkey] < g.need:
                out.append(
                    Violation.on(
                        "result-shape",
                        "PodGroup",
                        gkey,
                        f"outcome says admitted with {placed[gkey]} < minCount {g.need} pods",
                    )
                )
        if g.topology_key:
            out.extend(_one_domain(st, "PodGroup", gkey, g.topology_key, members[gkey]))

    # Composite groups: a CPG with new pods below it needs minGroupCount satisfied children.
    for ckey in tree.composite_keys:
        cg = tree.node(ckey)
        leaves = set(cg.leaves)
        if any(newly[g] for g in leaves) and not tree.satisfied(ckey, admitted_with):
            out.append(
                Violation.on(
                    "composite",
                    "CompositePodGroup",
                    ckey,
                    f"fewer than minGroupCount {cg.need} children satisfied although pods were placed below it",
                )
            )
        if cg.topology_key:
            out.extend(
                _one_domain(
                    st,
                    "CompositePodGroup",
                    ckey,
                    cg.topology_key,
                    [k for k, g in grouped + added if g in leaves],
                )
            )
    return out


def _one_domain(
    st: _State, kind: str, group: str, key: str, pod_keys: list[str]
) -> list[Violation]:
    if not any(k in st.new for k in pod_keys):
        return []
    values = set()
    for k in pod_keys:
        node = st.nodes[st.node_of[k]]
        if key not in node.labels:
            return [
                Violation.on(
                    "topology",
                    kind,
                    group,
                    f"pod {k} is on node {node.name}, which has no label {key!r}",
                )
            ]
        values.add(node.labels[key])
    if len(values) > 1:
        return [
            Violation.on(
                "topology",
                kind,
                group,
                f"pods span {len(values)} domains of {key}: {', '.join(sorted(values))}",
            )
        ]
    return []


def _victims(st: _State, result: Result) -> list[Violation]:
    if not result.victims:
        return []
    c = st.cluster
    tree = c.groups
    preemptors = [tree.unit_priority(st.pods[k]) for k in st.new]
    if per_pod_preemption(result, c):
        # v1.35: a gang pod preempts on its own before its gang is known to fit, so victims can
        # be gone although the gang was not admitted: any queued pod that may preempt counts
        preemptors += [tree.unit_priority(p) for p in c.queued_pods if p.preemption_policy != NEVER]
    if not preemptors:
        return [
            Violation("victim", v, "evicted although no pod was placed")
            for v in sorted(result.victims)
        ]
    top = max(preemptors)
    out = []
    for v in sorted(result.victims):
        p = c.pod_by_key.get(v)
        if p is not None and tree.unit_priority(p) >= top:
            out.append(
                Violation(
                    "victim",
                    v,
                    f"priority {tree.unit_priority(p)} is not lower than the preemptor's {top}",
                )
            )
    gone = set(result.victims)
    # a pending victim (placed during the run, rule V) was on a node with the bound pods of its
    # unit: they left together (the units over the bound pods and the pending victims)
    pending = [p for p in c.pending_pods if p.key in gone]
    for u in tree.victim_units(list(c.bound_pods) + pending):
        keys = {p.key for p in u.pods}
        if keys & gone and not keys <= gone:
            kept = ", ".join(sorted(keys - gone))
            out.append(
                Violation(
                    "victim",
                    str(u.key),
                    f"{u.kind} unit (disruptionMode all) only partly evicted; kept: {kept}",
                    u.kind,
                    u.key.key,
                )
            )
    return out


def per_pod_preemption(result: Result, cluster: Cluster) -> bool:
    """Whether ``result`` comes from a kube-scheduler whose gang pods preempt one by one (v1.35,
    :func:`gangplan.models.version.workload_aware_preemption`): a greedy Result says its version in
    ``params.kubeVersion``, else the cluster's counts."""
    version = result.options.kube_version if result.engine == "greedy" else None
    return not workload_aware_preemption(KubeVersion(version) if version else cluster.kube_version)


def validate(cluster: Cluster, result: Result) -> list[Violation]:
    """Every violated hard rule of ``result`` on ``cluster``; empty when the result is valid.
    With Kueue objects and a Result that says what Kueue admits (``result.kueue``), the rules
    below are checked on the snapshot with those admissions injected, plus Kueue's own
    (quota, topology: :mod:`gangplan.solver.kueue.rules`)."""
    extra: list[Violation] = []
    if cluster.kueue is not None and result.kueue is not None:
        from gangplan.solver.kueue.rules import kube_rules_view, kueue_violations

        extra = [
            Violation(rule, subject, msg)
            for rule, subject, msg in kueue_violations(cluster, result)
        ]
        cluster = kube_rules_view(cluster, result)
    out = extra + _shape(cluster, result)
    st = _State(cluster, result)
    out += _capacity(st)
    out += _dra(st, result) + _named_devices(st, result)
    out += _node_rules(st)
    out += _affinity(st)
    out += _spread(st)
    out += _groups(st, result)
    out += _victims(st, result)
    return out
