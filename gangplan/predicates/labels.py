"""Label selectors and node selectors.

Semantics of ``k8s.io/apimachinery/pkg/labels/selector.go`` and
``k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go`` (v1.35):
a ``None`` selector matches nothing, an empty one everything; ``NotIn`` and ``DoesNotExist``
match a missing label; ``Gt``/``Lt`` compare integers and never match a non-integer label;
an empty NodeSelectorTerm matches no node; terms are ORed, requirements inside a term ANDed.
"""

from __future__ import annotations

from gangplan.models.labels import parse_int64, requirement_matches, selector_matches
from gangplan.models.objects import Node, NodeSelectorTerm, Pod

__all__ = [
    "node_matches_pod_selector",
    "node_matches_terms",
    "node_selector_term_matches",
    "parse_int64",
    "requirement_matches",
    "selector_matches",
]


def node_selector_term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    if not term.match_expressions and not term.match_fields:
        return False
    if not all(requirement_matches(r, node.labels) for r in term.match_expressions):
        return False
    fields = {"metadata.name": node.name}
    for r in term.match_fields:
        if r.key != "metadata.name" or not requirement_matches(r, fields):
            return False
    return True


def node_matches_terms(terms: tuple[NodeSelectorTerm, ...], node: Node) -> bool:
    """Required node affinity: any term matches."""
    return any(node_selector_term_matches(t, node) for t in terms)


def node_matches_pod_selector(pod: Pod, node: Node) -> bool:
    """``spec.nodeSelector`` and required node affinity together (NodeAffinity Filter)."""
    for k, v in pod.node_selector.items():
        if node.labels.get(k) != v:
            return False
    req = pod.affinity.node_required
    return req is None or node_matches_terms(req, node)
