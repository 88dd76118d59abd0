"""NodeAffinity: ``pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go``
(kubernetes/kubernetes v1.36). Filter: ``spec.nodeSelector`` and required node affinity, rejecting
as UnschedulableAndUnresolvable "node(s) didn't match Pod's node affinity/selector"; PreFilter
skips pods with neither. Score: the sum of the weights of the preferred terms a node matches;
PreScore skips pods without preferred terms; NormalizeScore is ``DefaultNormalizeScore(100)``.

When every required term names nodes (``matchFields`` ``metadata.name In``), PreFilter returns
that node set (``PreFilterResult``): the other nodes are never filtered and count as "node(s)
didn't satisfy plugin(s) [NodeAffinity]" in the FitError. Not reproduced: ``addedAffinity``."""

from __future__ import annotations

import numpy as np

from gangplan.predicates import node_matches_pod_selector, node_selector_term_matches
from gangplan.solver.greedy.framework import SKIP, SUCCESS, default_normalize_score, unschedulable
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.plugins.base import Plugin, StaticFilterCache, constant_reason

NAME = names.NODE_AFFINITY
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"


def required_node_names(pod) -> set[str] | None:
    """The node names every required term is limited to, or None when some term is not.

    ``metadata.name In`` requirements inside a term are ANDed (intersection), terms are ORed
    (union), as in upstream's NodeAffinity.PreFilter.
    """
    terms = pod.affinity.node_required
    if not terms:
        return None
    names: set[str] = set()
    for t in terms:
        term_names: set[str] | None = None
        for r in t.match_fields:
            if r.key == "metadata.name" and r.operator == "In":
                term_names = set(r.values) if term_names is None else term_names & set(r.values)
        if term_names is None:
            return None
        names |= term_names
    return names


def _selector_key(pod) -> str:
    return repr((sorted(pod.node_selector.items()), pod.affinity.node_required))


class NodeAffinity(Plugin):
    name = NAME

    def __init__(self, cluster, profile) -> None:
        super().__init__(cluster, profile)
        self._masks = StaticFilterCache()
        self._scores = StaticFilterCache()

    def pre_filter(self, cs, pod, snap):
        if not pod.node_selector and pod.affinity.node_required is None:
            return SKIP
        names = required_node_names(pod)
        if names is not None:
            cs.restrict(NAME, {snap.index[n] for n in names if n in snap.index})
        return SUCCESS

    def filter_one(self, cs, pod, snap, i):
        if node_matches_pod_selector(pod, snap.nodes[i]):
            return SUCCESS
        return self.status(unschedulable(ERR_REASON_POD, unresolvable=True))

    def filter_reasons(self, cs, pod, snap, idx):
        return constant_reason(ERR_REASON_POD, idx, unresolvable=True)

    def filter_mask(self, cs, pod, snap, idx):
        def build() -> np.ndarray:
            return np.array([node_matches_pod_selector(pod, n) for n in snap.nodes], dtype=bool)

        return self._masks.get(_selector_key(pod), build)[idx]

    def pre_score(self, cs, pod, snap, feasible):
        return SUCCESS if pod.affinity.node_preferred else SKIP

    def score(self, cs, pod, snap, feasible):
        terms = pod.affinity.node_preferred

        def build() -> np.ndarray:
            return np.array(
                [
                    sum(
                        t.weight
                        for t in terms
                        if t.weight != 0 and node_selector_term_matches(t.preference, n)
                    )
                    for n in snap.nodes
                ],
                dtype=np.int64,
            )

        return self._scores.get(repr(terms), build)[feasible]

    def normalize(self, cs, pod, snap, feasible, scores):
        return default_normalize_score(scores, reverse=False)
