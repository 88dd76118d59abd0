"""Pure per pod x node checks shared by the greedy plugins, the exact engine's eligibility step and
the independent validator, so that "feasible" means one thing everywhere."""

from gangplan.predicates.labels import (
    node_matches_pod_selector,
    node_matches_terms,
    node_selector_term_matches,
    requirement_matches,
    selector_matches,
)
from gangplan.predicates.podaffinity import matches_all_terms, namespace_labels, term_matches
from gangplan.predicates.ports import conflicting_port, ports_conflict
from gangplan.predicates.resources import exceeds_allocatable, insufficient, message_for
from gangplan.predicates.taints import (
    UNSCHEDULABLE_TAINT,
    blocked_by_unschedulable,
    count_intolerable_prefer_no_schedule,
    first_untolerated_taint,
    tolerates,
)

__all__ = [
    "UNSCHEDULABLE_TAINT",
    "blocked_by_unschedulable",
    "conflicting_port",
    "count_intolerable_prefer_no_schedule",
    "exceeds_allocatable",
    "first_untolerated_taint",
    "insufficient",
    "matches_all_terms",
    "message_for",
    "namespace_labels",
    "node_matches_pod_selector",
    "node_matches_terms",
    "node_selector_term_matches",
    "ports_conflict",
    "requirement_matches",
    "selector_matches",
    "term_matches",
    "tolerates",
]
