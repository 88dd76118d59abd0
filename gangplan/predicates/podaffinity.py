"""Inter-pod affinity term matching (``pkg/scheduler/framework/types.go`` AffinityTerm.Matches and
``plugins/interpodaffinity``, v1.35).

A term selects pods by label selector within a set of namespaces: ``namespaces`` plus those whose
labels match ``namespaceSelector``; when both are empty, the namespace of the pod that owns the
term. An empty ``namespaceSelector`` ({}) selects every namespace.
"""

from __future__ import annotations

from gangplan.models.objects import Namespace, Pod, PodAffinityTerm
from gangplan.predicates.labels import selector_matches


def namespace_labels(ns: str, namespaces: dict[str, Namespace]) -> dict[str, str]:
    obj = namespaces.get(ns)
    labels = dict(obj.labels) if obj else {}
    labels.setdefault("kubernetes.io/metadata.name", ns)
    return labels


def term_matches(
    term: PodAffinityTerm,
    owner_namespace: str,
    pod: Pod,
    namespaces: dict[str, Namespace] | None = None,
) -> bool:
    """Does ``pod`` match the term of a pod living in ``owner_namespace``?"""
    if term.namespaces or term.namespace_selector is not None:
        in_ns = pod.namespace in term.namespaces
        if not in_ns and term.namespace_selector is not None:
            in_ns = selector_matches(
                term.namespace_selector, namespace_labels(pod.namespace, namespaces or {})
            )
    else:
        in_ns = pod.namespace == owner_namespace
    return in_ns and selector_matches(term.label_selector, pod.labels)


def matches_all_terms(
    terms: tuple[PodAffinityTerm, ...],
    owner_namespace: str,
    pod: Pod,
    namespaces: dict[str, Namespace] | None = None,
) -> bool:
    """``podMatchesAllAffinityTerms``: false for an empty list, as upstream."""
    return bool(terms) and all(term_matches(t, owner_namespace, pod, namespaces) for t in terms)
