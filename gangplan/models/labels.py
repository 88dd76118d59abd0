"""Label and selector matching on the objects themselves: the ground floor both the rules above
(``gangplan.predicates``) and the objective tiers (:mod:`gangplan.models.objective`, PDB
selectors) read, so ``models`` imports nothing above it (issue 38)."""

from __future__ import annotations

import re

from gangplan.models.objects import LabelSelector, Requirement

_INT64_RE = re.compile(r"[+-]?[0-9]+")


def parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: ASCII digits with an optional sign, in int64 range.

    Python's ``int()`` is laxer (``" 8"``, ``"8_0"``, non-ASCII digits), hence this.

    >>> parse_int64("+8"), parse_int64("8_0"), parse_int64(" 8"), parse_int64("9223372036854775808")
    (8, None, None, None)
    """
    if not _INT64_RE.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def requirement_matches(req: Requirement, labels: dict[str, str]) -> bool:
    """One selector requirement against a label set.

    >>> requirement_matches(Requirement(key="gpu", operator="Gt", values=("4",)), {"gpu": "8"})
    True
    >>> requirement_matches(Requirement(key="zone", operator="NotIn", values=("a",)), {})
    True
    """
    op = req.operator
    has = req.key in labels
    if op == "In":
        return has and labels[req.key] in req.values
    if op == "NotIn":
        return not has or labels[req.key] not in req.values
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    if not has:
        return False
    value = parse_int64(labels[req.key])
    bound = parse_int64(req.values[0]) if len(req.values) == 1 else None
    if value is None or bound is None:
        return False
    return value > bound if op == "Gt" else value < bound


def selector_matches(selector: LabelSelector | None, labels: dict[str, str]) -> bool:
    """A metav1.LabelSelector. ``None`` matches nothing; ``LabelSelector()`` matches everything."""
    if selector is None:
        return False
    for k, v in selector.match_labels.items():
        if labels.get(k) != v:
            return False
    return all(requirement_matches(r, labels) for r in selector.match_expressions)


__all__ = ["parse_int64", "requirement_matches", "selector_matches"]
