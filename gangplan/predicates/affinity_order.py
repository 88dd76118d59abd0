"""Required pod affinity on a final placement: the one definition, and its exact decision.

kube-scheduler checks a pod's required podAffinity when the pod is placed, against the pods
already there: ``satisfyPodAffinity`` in
``pkg/scheduler/framework/plugins/interpodaffinity/filtering.go`` (kubernetes/kubernetes v1.36;
the logic is the same at commit 53f1b9d6f8de259644c05a25aa7ac8c6a67258e2, read for this module).
PreFilter fills ``affinityCounts[(key, value)]`` with the existing pods that match *all* of the
pod's required terms, once per term whose topology key their node carries. Filter passes a node
when it carries every term's key and

* every term has ``affinityCounts[(term key, node's value)] > 0``; or
* (the first-pod rule) ``len(affinityCounts) == 0`` (no existing pod matching all terms sits on
  any node carrying any term's key) and the pod matches all its own terms.

**Definition.** A final placement (bound pods minus victims, plus the placed pending pods) is
feasible for required pod affinity iff *some order* of the placed pending pods, all bound pods
first, passes that check for every pending pod at its turn, the pods placed before it being the
existing ones. Pods of different entities may interleave in the order.

**Victims** (preemption) are absent from the final state for capacity, anti-affinity, spread and
host ports, but each victim is evicted at *some point* of that order: the pending pods placed
before its eviction count it as an existing pod (it may support their terms, and it switches off
the first-pod rule for terms it matches), those placed after do not. Upstream allows exactly
this: required affinity is IgnoredDuringExecution, and preemption never looks at other pods'
affinity to spare a supporter (``SelectVictimsOnNode`` in
``pkg/scheduler/framework/preemption/preemption.go`` and the victim selection of
``podgrouppreemption.go`` only re-run the preemptor's own filters), so a pod placed while its
supporter ran keeps running when a later preemptor evicts the supporter. (Anti-affinity needs no
order: a violation in the final state fails whichever of the two pods came second, through its
own terms or through ``satisfyExistingPodsAntiAffinity``; so the validator checks it on the final
state.)

**Decision** (:func:`affinity_order`), exact, in two steps:

1. Normal form. A pod that passes by the first-pod rule ("first pod") can be moved earlier in a
   valid order without breaking anything: it only needs the pods matching it to come later, and
   an earlier pod only helps the others' first branch. So if any order works, one works that
   places the first pods ``U`` before every other pending pod, in an order where ``u`` precedes
   ``v`` whenever ``v`` is counted by ``u``'s terms (``v`` matches all of ``u``'s terms on a node
   carrying one of their keys): that relation must be acyclic on ``U``. After ``U`` come the pods
   without required affinity, then the rest, each once every term has a matching pod placed
   before it in its domain: a monotone closure.
2. Search for ``U``: the closure from ``U`` must reach every pod. Only pods the closure does not
   reach yet can help (a reached pod adds nothing as a seed). A candidate matches its own terms
   and no bound pod is counted by its terms. Candidates on no cycle of the counting relation are
   taken at once (they never block another first pod); otherwise the search branches (take the
   candidate, or rule out it and every interchangeable pod: same labels, namespace, terms and
   node label values for every affinity key). Tiny in practice (a self-affine gang branches once
   per domain); ``budget`` caps the search, and an undecided placement is reported as such.
3. Victims. When no pod that could pass by the first-pod rule (it matches its own terms) has terms
   a victim matches, keeping every victim until all pending pods are placed dominates every other
   eviction time (a victim then only adds support), so steps 1-2 with the victims as bound pods
   decide exactly. Otherwise three orders are tried, each a real order of the definition: victims
   kept to the end; victims gone before the first pending pod; and victims kept while the pods
   reachable by support alone are placed (the closure from no first pods), then evicted, then
   steps 1-2 for the rest with those pods existing. The placement passes when one of them does;
   this is sound (never accepts a placement no order realises) and exact whenever no first-pod
   candidate's terms match a victim.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gangplan.models.objects import Namespace, Node, Pod
from gangplan.predicates.podaffinity import matches_all_terms

SEARCH_BUDGET = 20_000
"""Closures the search for the first pods may compute before it gives up (never reached in the
test suites and benchmarks; an undecided placement is reported, not guessed)."""


@dataclass(frozen=True)
class AffinityPlan:
    """The outcome of :func:`affinity_order`."""

    feasible: bool
    first_pods: tuple[str, ...] = ()
    """Pending pods that pass by the first-pod rule, in the order they go (before all others)."""
    order: tuple[str, ...] = ()
    """A complete order of the placed pending pods that passes (empty when infeasible)."""
    blocked: tuple[tuple[str, str], ...] = ()
    """(pod key, why) for the pods no order places, from the best attempt found."""
    undecided: bool = False
    """True when the search hit its budget (``blocked`` then names what was left)."""


@dataclass
class _Group:
    """Pods with the same required affinity terms in the same namespace share their matching set."""

    terms: tuple
    keys: tuple[str, ...]
    """Distinct topology keys of the terms, in term order."""
    namespace: str
    matching: list[int] = field(default_factory=list)
    """Indices of every pod on a node (bound or new) matching all terms."""
    counted: list[int] = field(default_factory=list)
    """Those whose node carries one of the keys (what ``affinityCounts`` holds)."""
    bound_counted: int | None = None
    """A counted bound pod (then the first-pod rule is off for the whole group)."""


class _Problem:
    def __init__(
        self,
        bound: Sequence[tuple[Pod, Node]],
        new: Sequence[tuple[Pod, Node]],
        namespaces: Mapping[str, Namespace] | None,
    ) -> None:
        ns = dict(namespaces or {})
        self.pods = [p for p, _ in bound] + [p for p, _ in new]
        self.nodes = [n for _, n in bound] + [n for _, n in new]
        self.n_bound = len(bound)
        self.groups: list[_Group] = []
        self.group_of: dict[int, int] = {}
        index: dict[tuple, int] = {}
        for i in range(self.n_bound, len(self.pods)):
            terms = self.pods[i].affinity.pod_affinity_required
            if not terms:
                continue
            gkey = (self.pods[i].namespace, tuple(t.model_dump_json() for t in terms))
            if gkey not in index:
                index[gkey] = len(self.groups)
                self.groups.append(
                    _Group(
                        terms=terms,
                        keys=tuple(dict.fromkeys(t.topology_key for t in terms)),
                        namespace=self.pods[i].namespace,
                    )
                )
            self.group_of[i] = index[gkey]
        self.matched_by: list[list[int]] = [[] for _ in self.pods]
        """Per pod, the groups whose terms it matches all of."""
        for g, grp in enumerate(self.groups):
            for i, p in enumerate(self.pods):
                if matches_all_terms(grp.terms, grp.namespace, p, ns):
                    grp.matching.append(i)
                    self.matched_by[i].append(g)
                    if any(k in self.nodes[i].labels for k in grp.keys):
                        grp.counted.append(i)
                        if i < self.n_bound and grp.bound_counted is None:
                            grp.bound_counted = i
        self.self_match = {i: i in set(self.groups[g].matching) for i, g in self.group_of.items()}
        self.missing_key: dict[int, str] = {}
        for i, g in self.group_of.items():
            lacking = [k for k in self.groups[g].keys if k not in self.nodes[i].labels]
            if lacking:
                self.missing_key[i] = lacking[0]
        # Pods the search must place in order: new pods with terms whose node has every key.
        self.holders = [i for i in sorted(self.group_of) if i not in self.missing_key]
        self.needs = {
            i: [
                (t.topology_key, self.nodes[i].labels[t.topology_key])
                for t in self.groups[self.group_of[i]].terms
            ]
            for i in self.holders
        }
        # Everything else is present from the start: bound pods, pods without terms, and pods
        # that can never pass (reported on their own).
        holder_set = set(self.holders)
        self.base: dict[tuple[int, str, str], int] = defaultdict(int)
        for i in range(len(self.pods)):
            if i not in holder_set:
                self._count(self.base, i)
        self.candidates = [
            i
            for i in self.holders
            if self.self_match[i] and self.groups[self.group_of[i]].bound_counted is None
        ]
        cand_set = set(self.candidates)
        self.r_out: dict[int, list[int]] = {
            u: [v for v in self.groups[self.group_of[u]].counted if v != u and v in cand_set]
            for u in self.candidates
        }
        """u -> candidates v that u's terms count: if both are first pods, u goes before v."""
        keys = sorted({k for g in self.groups for k in g.keys})
        self.eq = {
            i: (
                self.group_of[i],
                self.pods[i].namespace,
                tuple(sorted(self.pods[i].labels.items())),
                tuple(self.nodes[i].labels.get(k) for k in keys),
            )
            for i in self.candidates
        }

    def _count(self, active: dict[tuple[int, str, str], int], i: int) -> list[tuple[int, str, str]]:
        """Add pod ``i`` to the per-(group, key, value) counts; returns the entries it made non-zero."""
        woke = []
        labels = self.nodes[i].labels
        for g in self.matched_by[i]:
            for k in self.groups[g].keys:
                if k in labels:
                    entry = (g, k, labels[k])
                    active[entry] += 1
                    if active[entry] == 1:
                        woke.append(entry)
        return woke

    def components(self) -> list[list[int]]:
        """Holders split into groups that never interact: a holder is tied to every holder its
        terms match (bound pods and pods without terms are there from the start, so they tie
        nothing). The first pods of each part can be chosen on their own."""
        parent = {i: i for i in self.holders}

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for i in self.holders:
            for j in self.groups[self.group_of[i]].matching:
                if j in parent:
                    a, b = root(i), root(j)
                    if a != b:
                        parent[max(a, b)] = min(a, b)
        parts: dict[int, list[int]] = defaultdict(list)
        for i in self.holders:
            parts[root(i)].append(i)
        return [parts[r] for r in sorted(parts)]

    def closure(self, firsts: Sequence[int], holders: Sequence[int] | None = None) -> list[int]:
        """Holders (of ``holders``, default all) in the order the monotone closure from the first
        pods places them (firsts first)."""
        holders = self.holders if holders is None else holders
        active = defaultdict(int, self.base)
        placed = list(firsts)
        done = set(firsts)
        for u in firsts:
            self._count(active, u)
        waiting: dict[tuple[int, str, str], list[int]] = defaultdict(list)
        missing: dict[int, int] = {}
        queue: list[int] = []
        for i in holders:
            if i in done:
                continue
            g = self.group_of[i]
            need = {(g, k, v) for k, v in self.needs[i]}
            unmet = [e for e in need if active.get(e, 0) <= 0]
            if not unmet:
                queue.append(i)
                continue
            missing[i] = len(unmet)
            for e in unmet:
                waiting[e].append(i)
        while queue:
            i = queue.pop(0)
            if i in done:
                continue
            done.add(i)
            placed.append(i)
            for e in self._count(active, i):
                for j in waiting.pop(e, ()):
                    if j in done:
                        continue
                    missing[j] -= 1
                    if missing[j] == 0:
                        queue.append(j)
        return placed

    def acyclic_with(self, firsts: Sequence[int], v: int) -> bool:
        """Does adding ``v`` to the first pods keep the 'goes before' relation acyclic?"""
        members = set(firsts) | {v}
        state: dict[int, int] = {}

        def visit(u: int) -> bool:
            state[u] = 1
            for w in self.r_out[u]:
                if w not in members:
                    continue
                if state.get(w) == 1 or (w not in state and not visit(w)):
                    return False
            state[u] = 2
            return True

        return all(visit(u) for u in members if u not in state)

    def topological(self, firsts: Sequence[int]) -> list[int]:
        members = set(firsts)
        indeg = {u: 0 for u in firsts}
        for u in firsts:
            for w in self.r_out[u]:
                if w in members:
                    indeg[w] += 1
        out, ready = [], [u for u in firsts if indeg[u] == 0]
        while ready:
            u = ready.pop(0)
            out.append(u)
            for w in self.r_out[u]:
                if w in members:
                    indeg[w] -= 1
                    if indeg[w] == 0:
                        ready.append(w)
        return out

    def on_cycles(self, nodes: list[int]) -> set[int]:
        """The members of ``nodes`` that lie on a cycle of the relation restricted to ``nodes``."""
        members = set(nodes)
        index: dict[int, int] = {}
        low: dict[int, int] = {}
        stack: list[int] = []
        on_stack: set[int] = set()
        out: set[int] = set()
        counter = [0]

        def strong(v: int) -> None:  # Tarjan; the sets here are tiny
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on_stack.add(v)
            for w in self.r_out[v]:
                if w not in members:
                    continue
                if w not in index:
                    strong(w)
                    low[v] = min(low[v], low[w])
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.update(comp)

        for v in nodes:
            if v not in index:
                strong(v)
        return out


def affinity_order(
    bound: Sequence[tuple[Pod, Node]],
    new: Sequence[tuple[Pod, Node]],
    namespaces: Mapping[str, Namespace] | None = None,
    *,
    victims: Sequence[tuple[Pod, Node]] = (),
    budget: int = SEARCH_BUDGET,
) -> AffinityPlan:
    """Decide the definition above for the pods ``new`` placed on top of ``bound`` (see module doc).

    ``bound``: (pod, node) of every pod still running (victims removed); ``victims``: (pod, node)
    of every victim, evicted at some point of the order (step 3 of the module doc); ``new``:
    (pod, node) of every placed pending pod. Returns a passing order with its first pods, or the
    pods that cannot go, each with the reason.
    """
    if not victims:
        return _decide(bound, new, namespaces, budget)
    bound, victims = list(bound), list(victims)
    kept = _decide(bound + victims, new, namespaces, budget)
    if kept.feasible or not _victims_can_hurt(bound, victims, new, namespaces):
        return kept
    gone = _decide(bound, new, namespaces, budget)
    if gone.feasible:
        return gone
    pb = _Problem(bound + victims, new, namespaces)
    early = [i for i in pb.closure([]) if i >= pb.n_bound]
    if early:
        early_set = set(early)
        first = [(pb.pods[i], pb.nodes[i]) for i in early]
        rest = [(p, n) for j, (p, n) in enumerate(new) if pb.n_bound + j not in early_set]
        later = _decide(bound + first, rest, namespaces, budget)
        if later.feasible:
            free = [pb.pods[i].key for i in range(pb.n_bound, len(pb.pods)) if i not in pb.group_of]
            rest_order = [k for k in later.order if k not in set(free)]
            order = free + [pb.pods[i].key for i in early] + rest_order
            return AffinityPlan(feasible=True, first_pods=later.first_pods, order=tuple(order))
    return kept


def _victims_can_hurt(bound, victims, new, namespaces) -> bool:
    """Does a victim match every term of a new pod that matches its own terms (a possible first
    pod)? Only then can keeping a victim switch off a first-pod rule (module doc, step 3)."""
    ns = dict(namespaces or {})
    for p, _ in new:
        terms = p.affinity.pod_affinity_required
        if (
            terms
            and matches_all_terms(terms, p.namespace, p, ns)
            and any(matches_all_terms(terms, p.namespace, v, ns) for v, _ in victims)
        ):
            return True
    return False


def _decide(
    bound: Sequence[tuple[Pod, Node]],
    new: Sequence[tuple[Pod, Node]],
    namespaces: Mapping[str, Namespace] | None,
    budget: int,
) -> AffinityPlan:
    pb = _Problem(bound, new, namespaces)
    key = lambda i: pb.pods[i].key  # noqa: E731
    static = tuple(
        (key(i), f"node {pb.nodes[i].name} has no label {k!r}")
        for i, k in sorted(pb.missing_key.items(), key=lambda kv: key(kv[0]))
    )
    free = [i for i in range(pb.n_bound, len(pb.pods)) if i not in pb.group_of]
    spent = [0]
    firsts: list[int] = []
    rest: list[int] = []
    blocked: list[tuple[int, list[int]]] = []
    for part in pb.components():
        found, best = _search(pb, part, spent, budget)
        if found is not None:
            firsts += found
            rest += [i for i in pb.closure(pb.topological(found), part) if i not in set(found)]
        else:
            tried, placed = best
            firsts += tried
            blocked += [(i, tried) for i in part if i not in set(placed)]
    ordered = pb.topological(firsts)
    if not static and not blocked:
        order = [key(i) for i in ordered] + [key(i) for i in free] + [key(i) for i in rest]
        return AffinityPlan(
            feasible=True, first_pods=tuple(key(i) for i in ordered), order=tuple(order)
        )
    why = static + tuple(
        (key(i), _why(pb, i, tried)) for i, tried in sorted(blocked, key=lambda b: key(b[0]))
    )
    return AffinityPlan(
        feasible=False,
        first_pods=tuple(key(i) for i in ordered),
        blocked=why,
        undecided=spent[0] >= budget,
    )


def _search(pb: _Problem, part: list[int], spent: list[int], budget: int):
    """First pods that let the closure reach every holder of ``part``, or None; and the best
    attempt (first pods, what they placed) for the report."""
    candidates = [v for v in pb.candidates if v in set(part)]
    best: list = [([], []), -1]

    def attempt(firsts: list[int]) -> list[int]:
        spent[0] += 1
        placed = pb.closure(firsts, part)
        if len(placed) > best[1]:
            best[0], best[1] = (list(firsts), placed), len(placed)
        return placed

    def search(firsts: list[int], excluded: frozenset) -> list[int] | None:
        while True:
            if spent[0] >= budget:
                return None
            reached = attempt(firsts)
            if len(reached) == len(part):
                return firsts
            seen = set(reached)
            live = [
                v
                for v in candidates
                if v not in seen and pb.eq[v] not in excluded and pb.acyclic_with(firsts, v)
            ]
            if not live:
                return None
            tied = pb.on_cycles(list(firsts) + live)
            safe = [v for v in live if v not in tied]
            if not safe:
                break
            firsts = firsts + safe  # on no cycle: taking them never blocks another first pod
        # Branch on one pod per class of interchangeable ones, the one placing most first.
        reps = list({pb.eq[v]: v for v in reversed(live)}.values())[::-1]
        gain = {v: len(pb.closure(firsts + [v], part)) for v in reps}
        spent[0] += len(reps)
        for v in sorted(reps, key=lambda v: -gain[v]):
            found = search(firsts + [v], excluded)
            if found is not None:
                return found
            if spent[0] >= budget:
                return None
            excluded = excluded | {pb.eq[v]}
        return None

    return search([], frozenset()), best[0]


def _why(pb: _Problem, i: int, tried: list[int]) -> str:
    g = pb.groups[pb.group_of[i]]
    node = pb.nodes[i]
    for k, v in pb.needs[i]:
        if not any(j != i and pb.nodes[j].labels.get(k) == v for j in g.matching):
            return f"no pod matching its podAffinity in its {k} domain ({v}) on node {node.name}"
    if not pb.self_match[i]:
        first = "it does not match its own terms, so it cannot be the first pod"
    elif g.bound_counted is not None:
        first = f"the first-pod rule is off: {pb.pods[g.bound_counted].key} already runs on node {pb.nodes[g.bound_counted].name}"
    else:
        rival = next(
            (pb.pods[u].key for u in tried if i in pb.r_out.get(u, ()) or u in pb.r_out.get(i, ())),
            None,
        )
        first = (
            f"the first-pod rule is taken by {rival}, which its terms match"
            if rival
            else "no choice of first pods places it"
        )
    return (
        f"on node {node.name}, its podAffinity is met only by pods that could not have been placed "
        f"before it in any order ({first})"
    )
