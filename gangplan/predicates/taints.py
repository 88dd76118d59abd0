"""Taints and tolerations (``k8s.io/api/core/v1/toleration.go``, ``taint.go``, v1.35)."""

from __future__ import annotations

from collections.abc import Iterable

from gangplan.models.objects import Node, Taint, Toleration

BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


def tolerates(tol: Toleration, taint: Taint) -> bool:
    """``Toleration.ToleratesTaint``: effect (empty = all), key (empty with Exists = all), value."""
    if tol.effect and tol.effect != taint.effect:
        return False
    if tol.key and tol.key != taint.key:
        return False
    if tol.operator == "Exists":
        return True
    return tol.value == taint.value


def tolerates_all(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def first_untolerated_taint(
    taints: Iterable[Taint],
    tolerations: tuple[Toleration, ...],
    effects: tuple[str, ...] = BLOCKING_EFFECTS,
) -> Taint | None:
    """The first taint with one of ``effects`` that no toleration tolerates (TaintToleration Filter)."""
    for taint in taints:
        if taint.effect in effects and not tolerates_all(tolerations, taint):
            return taint
    return None


def blocked_by_unschedulable(node: Node, tolerations: tuple[Toleration, ...]) -> bool:
    """NodeUnschedulable Filter: ``spec.unschedulable`` unless the pod tolerates its taint."""
    return node.unschedulable and not tolerates_all(tolerations, UNSCHEDULABLE_TAINT)


def count_intolerable_prefer_no_schedule(
    taints: Iterable[Taint], tolerations: tuple[Toleration, ...]
) -> int:
    """TaintToleration Score's raw value: PreferNoSchedule taints the pod does not tolerate.

    Only tolerations with an empty effect or PreferNoSchedule are considered, as upstream.
    """
    tols = tuple(t for t in tolerations if t.effect in ("", "PreferNoSchedule"))
    return sum(
        1
        for taint in taints
        if taint.effect == "PreferNoSchedule" and not tolerates_all(tols, taint)
    )
