"""Groups: gang minCount all-or-nothing, basic groups, CompositePodGroup minGroupCount.

Final-state semantics of validate's ``gang`` and ``composite`` rules, which follow
PlacementFeasible in ``pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go``
(kubernetes/kubernetes @61c7fad9):

* a PodGroup with newly placed pods has at least minCount pods on nodes (bound ones count); extra
  pods past minCount are allowed; a basic group has minCount 1, so its pods are independent;
  with preemption the bound count is ``bound - sum k * evict[u]`` over the evictable units
  holding ``k`` of its pods (a hierarchy with pending pods may lose bound pods to a higher-priority
  preemptor, never to its own pending pods: same priority);
* a CompositePodGroup with newly placed pods below it has at least minGroupCount satisfied
  children (a child PodGroup is satisfied when it has minCount pods on nodes, a child composite
  recursively).

``act[g]`` is 1 exactly when the group (or subtree) gets a new pod; for a root it is the entity's
admission, the quantity the first objective tiers count. ``sat[g]`` only has to imply the
satisfied condition: the objective never profits from under-reporting it.

Two families: ``gang`` (leaf PodGroups, output :class:`LeafAdmission`) and ``composite``
(CompositePodGroups bottom up, output :class:`Admission`, which preemption and the objective read).
"""

from __future__ import annotations

from dataclasses import dataclass

from ortools.sat.python import cp_model

from gangplan.solver.exact.family import BuildContext, Family
from gangplan.solver.exact.instance import CompositeNode, LeafGroup
from gangplan.solver.exact.names import COMPOSITE, GANG
from gangplan.solver.exact.variables import Counts, ExactModel

Literal = cp_model.IntVar | int


@dataclass(frozen=True)
class LeafAdmission:
    """Per leaf PodGroup of the model: ``act`` (1 exactly when it gets a new pod) and ``sat``
    (implies it has minCount pods on nodes); constants where the value is known."""

    act: dict[str, Literal]
    sat: dict[str, Literal]


@dataclass(frozen=True)
class Admission:
    """The admission literal of every root entity (PodGroup or CompositePodGroup key) and
    ``active``, the ``act`` of every leaf PodGroup."""

    roots: dict[str, Literal]
    active: dict[str, Literal]


def _leaf_new(em: ExactModel, leaf: LeafGroup) -> list[cp_model.IntVar]:
    return [em.placed[c] for c in leaf.classes]


def _leaf_new_value(leaf: LeafGroup):
    return lambda cnt: sum(cnt.total(c) for c in leaf.classes)


def add_gang_constraints(ctx: BuildContext) -> LeafAdmission:
    """``act`` / ``sat`` of every leaf PodGroup; minCount all-or-nothing unless ``gang`` is skipped."""
    act: dict[str, Literal] = {}
    sat: dict[str, Literal] = {}
    enforce = ctx.enforces(GANG)
    for key, leaf in ctx.em.inst.leaves.items():
        act[key], sat[key] = _leaf(ctx.em, leaf, enforce)
    return LeafAdmission(act=act, sat=sat)


def add_composite_constraints(ctx: BuildContext) -> Admission:
    """CompositePodGroups children before parents: minGroupCount unless ``composite`` is skipped."""
    em, leaves = ctx.em, ctx.outputs.get(LeafAdmission)
    act, sat = dict(leaves.act), dict(leaves.sat)
    enforce = ctx.enforces(COMPOSITE)
    for key in _bottom_up(em):
        act[key], sat[key] = _composite(em, em.inst.composites[key], act, sat, enforce)
    return Admission(roots={r: act[r] for r in em.inst.roots if r in act}, active=dict(leaves.act))


def bound_now(leaf: LeafGroup, cnt: Counts) -> int:
    """The leaf's bound pods still on nodes in a solution (evicted units' pods gone)."""
    return leaf.bound - sum(k for u, k in leaf.evictable if u in cnt.evicted)


def _bound_expr(em: ExactModel, leaf: LeafGroup):
    """``bound - sum k * evict[u]`` over the evictable units holding pods of the leaf."""
    if not leaf.evictable:
        return leaf.bound
    return leaf.bound - cp_model.LinearExpr.weighted_sum(
        [em.evict[u] for u, _ in leaf.evictable], [k for _, k in leaf.evictable]
    )


def _leaf(em: ExactModel, leaf: LeafGroup, enforce: bool):
    model = em.model
    bound = _bound_expr(em, leaf)
    if not leaf.classes:
        if not leaf.evictable or leaf.bound < leaf.min_count:
            return 0, int(leaf.bound >= leaf.min_count)
        sat = em.new_aux(0, 1, lambda cnt: int(bound_now(leaf, cnt) >= leaf.min_count))
        model.add(bound >= leaf.min_count * sat)
        return 0, sat
    new = cp_model.LinearExpr.sum(_leaf_new(em, leaf))
    total = sum(em.inst.classes[c].size for c in leaf.classes)
    value = _leaf_new_value(leaf)
    act = em.new_aux(0, 1, lambda cnt: int(value(cnt) > 0))
    model.add(new <= total * act)
    model.add(new >= act)
    missing = leaf.min_count - leaf.bound
    if (missing > 1 or leaf.evictable) and enforce:
        model.add(new + bound >= leaf.min_count * act)
    if leaf.parent is None:  # a root's ``sat`` is read by no composite
        return act, int(leaf.bound >= leaf.min_count)
    sat = em.new_aux(0, 1, lambda cnt: int(bound_now(leaf, cnt) + value(cnt) >= leaf.min_count))
    if missing > 0 or leaf.evictable:
        model.add(new + bound >= leaf.min_count * sat)
    return act, sat


def _composite(em: ExactModel, node: CompositeNode, act: dict, sat: dict, enforce: bool):
    model = em.model
    leaves = _leaves(em, node.key)
    classes = [c for leaf in leaves for c in em.inst.leaves[leaf].classes]
    if not classes:
        return 0, int(_satisfied_value(em, node.key, Counts([{} for _ in em.inst.classes])))
    new = cp_model.LinearExpr.sum([em.placed[c] for c in classes])
    total = sum(em.inst.classes[c].size for c in classes)
    a = em.new_aux(0, 1, lambda cnt: int(sum(cnt.total(c) for c in classes) > 0))
    model.add(new <= total * a)
    model.add(new >= a)
    kids = cp_model.LinearExpr.sum([sat[k] for k in node.children if k in sat])
    if enforce:
        model.add(kids >= node.need * a)
    if node.parent is None:
        return a, 0
    s = em.new_aux(0, 1, lambda cnt: int(_satisfied_value(em, node.key, cnt)))
    model.add(kids >= node.need * s)
    return a, s


def _satisfied_value(em: ExactModel, key: str, cnt: Counts) -> bool:
    """The shared rule (:meth:`GroupTree.satisfied`) on the counts of a solution."""
    placed = {
        k: bound_now(leaf, cnt) + _leaf_new_value(leaf)(cnt) for k, leaf in em.inst.leaves.items()
    }
    return key in em.inst.cluster.groups and em.inst.cluster.groups.satisfied(key, placed)


def _leaves(em: ExactModel, key: str) -> list[str]:
    return [k for k in em.inst.cluster.groups.leaves(key) if k in em.inst.leaves]


def _bottom_up(em: ExactModel) -> list[str]:
    """The model's composite keys, children before parents."""
    return [k for k in em.inst.cluster.groups.bottom_up() if k in em.inst.composites]


GANG_FAMILY = Family(GANG, build=add_gang_constraints)
COMPOSITE_FAMILY = Family(COMPOSITE, build=add_composite_constraints)
