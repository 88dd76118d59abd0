"""InterPodAffinity: ``pkg/scheduler/framework/plugins/interpodaffinity/{filtering,scoring}.go``
(kubernetes/kubernetes v1.36).

PreFilter counts, per (topologyKey, value): existing pods whose required anti-affinity terms match
the incoming pod; existing pods matching *all* of the incoming pod's required affinity terms; and
existing pods matching each of its required anti-affinity terms. It skips when there is nothing to
check. Filter, in upstream's order: affinity ("node(s) didn't match pod affinity rules",
UnschedulableAndUnresolvable; every topology key must be on the node; the first-pod rule lets a pod
through when no pod anywhere matches and the pod matches its own terms), anti-affinity ("node(s)
didn't match pod anti-affinity rules", Unschedulable), existing pods' anti-affinity ("node(s)
didn't satisfy existing pods anti-affinity rules", Unschedulable).

Score (``hardPodAffinityWeight`` 1, ``ignorePreferredTermsOfExistingPods`` false): the incoming
pod's preferred (anti-)affinity weights for every existing pod they match, plus, for every
existing pod with affinity, its required affinity (x1) and preferred (anti-)affinity weights for
the incoming pod, are added to the existing pod's topology value; a node's score sums its values
over the topology keys. PreScore skips when no term matched anything. Normalize:
``100 * (s - min) / (max - min)`` in float64, truncated; all 0 when max == min.

Inside a v1.36 pod-group cycle the existing pods consulted are those on the nodes of upstream's
snapshot lists as they stood when the cycle began (:attr:`NodeTable.affinity_lists
<gangplan.solver.greedy.snapshot.NodeTable.affinity_lists>`, ``models.version.stale_affinity_lists``,
kubernetes#139028): every pod on such a node counts, gang mates assumed there included; a gang
mate assumed on another node is invisible to "existing pods' anti-affinity" and, when the incoming
pod has no preferred terms (PreScore then walks ``HavePodsWithAffinityList`` instead of every
node), to scoring.

Counting is vectorised: per term a per-node count of matching pods is cached (refreshed only where
pods were assumed or forgotten) and summed per topology value with the node-label codes.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from gangplan.models.objects import Pod, PodAffinityTerm
from gangplan.predicates import term_matches
from gangplan.solver.greedy.framework import MAX_NODE_SCORE, SKIP, SUCCESS, unschedulable
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.plugins.base import Plugin
from gangplan.solver.greedy.snapshot import NodeTable

NAME = names.INTER_POD_AFFINITY
ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
HARD_POD_AFFINITY_WEIGHT = 1


class _FilterState:
    """Counts per topology key, as arrays over that key's label codes."""

    def __init__(self) -> None:
        self.existing_anti: dict[str, np.ndarray] = {}
        self.affinity: dict[str, np.ndarray] = {}
        self.anti: dict[str, np.ndarray] = {}


def _add(counts: dict[str, np.ndarray], snap: NodeTable, key: str, per_node: np.ndarray) -> None:
    """Sum a per-node count into ``counts[key]`` by the node's value of label ``key``."""
    codes, values, _ = snap.label_codes(key)
    has = codes >= 0
    add = np.bincount(codes[has], weights=per_node[has], minlength=len(values)).astype(np.int64)
    counts[key] = counts[key] + add if key in counts else add


def _at(
    counts: dict[str, np.ndarray], snap: NodeTable, key: str, idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(node has label ``key``, the count at its value) over ``idx``."""
    codes = snap.label_codes(key)[0][idx]
    has = codes >= 0
    arr = counts.get(key)
    if arr is None or len(arr) == 0:
        return has, np.zeros(len(idx), dtype=np.int64)
    return has, np.where(has, arr[np.maximum(codes, 0)], 0)


class InterPodAffinity(Plugin):
    name = NAME

    def _matches(self, term: PodAffinityTerm, owner_ns: str, pod: Pod) -> bool:
        return term_matches(term, owner_ns, pod, self.cluster.namespaces)

    def _per_node(
        self, snap: NodeTable, tag: str, terms: tuple[PodAffinityTerm, ...], owner_ns: str
    ) -> np.ndarray:
        """Per node: existing pods matching every term in ``terms`` (cached, incremental)."""

        def compute(nodes: np.ndarray) -> np.ndarray:
            return np.array(
                [
                    sum(
                        1
                        for p in snap.pods_on[i]
                        if all(self._matches(t, owner_ns, p) for t in terms)
                    )
                    for i in nodes
                ],
                dtype=np.int64,
            )

        return snap.node_array((NAME, tag, repr(terms), owner_ns), compute)

    # ---- Filter ------------------------------------------------------------------------------
    def pre_filter(self, cs, pod, snap):
        st = _FilterState()
        blocking: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(snap.n, dtype=np.int64))
        lists = snap.affinity_lists
        for existing, i in snap.anti_affinity_pods.values():
            if lists is not None and i not in lists[1]:
                continue  # v1.36: not on a node of the cycle's HavePodsWithRequiredAntiAffinityList
            for t in existing.affinity.pod_anti_affinity_required:
                if t.topology_key in snap.nodes[i].labels and self._matches(
                    t, existing.namespace, pod
                ):
                    blocking[t.topology_key][i] += 1
        for key, per_node in blocking.items():
            _add(st.existing_anti, snap, key, per_node)
        aff = pod.affinity.pod_affinity_required
        if aff:
            matching_all = self._per_node(snap, "all", aff, pod.namespace)
            for t in aff:
                _add(st.affinity, snap, t.topology_key, matching_all)
        for t in pod.affinity.pod_anti_affinity_required:
            _add(st.anti, snap, t.topology_key, self._per_node(snap, "one", (t,), pod.namespace))
        st.existing_anti = {k: v for k, v in st.existing_anti.items() if v.any()}
        if not st.existing_anti and not aff and not pod.affinity.pod_anti_affinity_required:
            return SKIP
        cs[NAME] = st
        return SUCCESS

    def _masks(
        self, cs, pod: Pod, snap: NodeTable, idx: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(affinity ok, anti-affinity ok, existing pods' anti-affinity ok) over ``idx``."""
        st: _FilterState = cs[NAME]
        terms = pod.affinity.pod_affinity_required
        all_keys = np.ones(len(idx), dtype=bool)
        pods_exist = np.ones(len(idx), dtype=bool)
        for t in terms:
            has, cnt = _at(st.affinity, snap, t.topology_key, idx)
            all_keys &= has
            pods_exist &= cnt > 0
        first_pod = (
            bool(terms)
            and not any(v.any() for v in st.affinity.values())
            and all(self._matches(t, pod.namespace, pod) for t in terms)
        )
        aff_ok = all_keys & (pods_exist | first_pod)
        anti_ok = np.ones(len(idx), dtype=bool)
        for t in pod.affinity.pod_anti_affinity_required:
            has, cnt = _at(st.anti, snap, t.topology_key, idx)
            anti_ok &= ~(has & (cnt > 0))
        existing_ok = np.ones(len(idx), dtype=bool)
        for key in st.existing_anti:
            has, cnt = _at(st.existing_anti, snap, key, idx)
            existing_ok &= ~(has & (cnt > 0))
        return aff_ok, anti_ok, existing_ok

    def filter_mask(self, cs, pod, snap, idx):
        aff_ok, anti_ok, existing_ok = self._masks(cs, pod, snap, idx)
        return aff_ok & anti_ok & existing_ok

    def filter_one(self, cs, pod, snap, i):
        aff_ok, anti_ok, existing_ok = self._masks(cs, pod, snap, np.array([i], dtype=np.int64))
        if not aff_ok[0]:
            return self.status(unschedulable(ERR_REASON_AFFINITY, unresolvable=True))
        if not anti_ok[0]:
            return self.status(unschedulable(ERR_REASON_ANTI_AFFINITY))
        if not existing_ok[0]:
            return self.status(unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY))
        return SUCCESS

    def filter_reasons(self, cs, pod, snap, idx):
        aff_ok, anti_ok, existing_ok = self._masks(cs, pod, snap, idx)
        aff = ~aff_ok
        anti = aff_ok & ~anti_ok
        existing = aff_ok & anti_ok & ~existing_ok
        return [
            (ERR_REASON_AFFINITY, aff),
            (ERR_REASON_ANTI_AFFINITY, anti),
            (ERR_REASON_EXISTING_ANTI_AFFINITY, existing),
        ], aff

    # ---- Score -------------------------------------------------------------------------------
    def pre_score(self, cs, pod, snap, feasible):
        topo: dict[str, np.ndarray] = {}
        touched = False
        a = pod.affinity
        for sign, weighted in ((1, a.pod_affinity_preferred), (-1, a.pod_anti_affinity_preferred)):
            for w in weighted:
                per_node = self._per_node(snap, "one", (w.term,), pod.namespace)
                has = snap.label_codes(w.term.topology_key)[0] >= 0
                touched |= bool(per_node[has].any())
                _add(topo, snap, w.term.topology_key, per_node * (sign * w.weight))
        lists = snap.affinity_lists
        stale = (
            lists[0]
            if lists is not None and not (a.pod_affinity_preferred or a.pod_anti_affinity_preferred)
            else None
        )
        touched |= self._existing_terms(pod, snap, topo, stale)
        if not touched:
            return SKIP
        cs[NAME + "/score"] = topo
        return SUCCESS

    def _existing_terms(
        self,
        pod: Pod,
        snap: NodeTable,
        topo: dict[str, np.ndarray],
        only: frozenset[int] | None = None,
    ) -> bool:
        """Existing pods' required (x hardPodAffinityWeight) and preferred terms that match the
        incoming pod, credited at the existing pod's topology value (``only``: the pods on these
        nodes, the cycle's stale ``HavePodsWithAffinityList``)."""
        credit: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(snap.n, dtype=np.int64))
        touched = False
        for existing, i in sorted(snap.affinity_pods.values(), key=lambda e: (e[1], e[0].key)):
            if only is not None and i not in only:
                continue
            labels = snap.nodes[i].labels
            e = existing.affinity
            terms = [(t, HARD_POD_AFFINITY_WEIGHT) for t in e.pod_affinity_required]
            terms += [(w.term, w.weight) for w in e.pod_affinity_preferred]
            terms += [(w.term, -w.weight) for w in e.pod_anti_affinity_preferred]
            for t, weight in terms:
                if t.topology_key in labels and self._matches(t, existing.namespace, pod):
                    credit[t.topology_key][i] += weight
                    touched = True
        for key, per_node in credit.items():
            _add(topo, snap, key, per_node)
        return touched

    def score(self, cs, pod, snap, feasible):
        topo = cs[NAME + "/score"]
        out = np.zeros(len(feasible), dtype=np.int64)
        for key in topo:
            _, vals = _at(topo, snap, key, feasible)
            out += vals
        return out

    def normalize(self, cs, pod, snap, feasible, scores):
        if not cs.get(NAME + "/score"):
            return scores
        lo, hi = int(scores.min()), int(scores.max())
        if hi - lo <= 0:
            return np.zeros_like(scores)
        return np.trunc(MAX_NODE_SCORE * ((scores - lo) / (hi - lo))).astype(np.int64)
