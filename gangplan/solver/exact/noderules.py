"""The node rules: static families with no model part (a mask per class, nothing else).

``fixed`` (a forced class may only use its node), and the node filters the validator shares with
the greedy engine through :mod:`gangplan.predicates`: ``unschedulable`` (NodeUnschedulable,
``nodeunschedulable/node_unschedulable.go``), ``taint`` (TaintToleration,
``tainttoleration/taint_toleration.go``) and ``node-selector`` (nodeSelector and required node
affinity, NodeAffinity ``nodeaffinity/node_affinity.go``; kubernetes/kubernetes v1.35). The three
predicates are evaluated once per distinct (tolerations, selectors) by
:class:`.eligibility.EligibilityCache`.
"""

from __future__ import annotations

import numpy as np

from gangplan.solver.exact.eligibility import ClassView, Conditions
from gangplan.solver.exact.family import Family, Layout
from gangplan.solver.exact.instance import Instance
from gangplan.solver.exact.names import FIXED, NODE_SELECTOR, TAINT, UNSCHEDULABLE


def fixed_mask(view: ClassView, cond: Conditions) -> np.ndarray | None:
    """``fixed``: a forced class may only use its node."""
    if view.cls.fixed_node is None:
        return None
    m = np.zeros(view.inst.n_nodes, dtype=bool)
    m[view.cls.fixed_node] = True
    return m


def unschedulable_mask(view: ClassView, cond: Conditions) -> np.ndarray:
    """``unschedulable``: cordoned nodes, unless tolerated (NodeUnschedulable)."""
    return view.cache.node_masks(view.cls)[0]


def taint_mask(view: ClassView, cond: Conditions) -> np.ndarray:
    """``taint``: NoSchedule / NoExecute taints the pod does not tolerate (TaintToleration)."""
    return view.cache.node_masks(view.cls)[1]


def node_selector_mask(view: ClassView, cond: Conditions) -> np.ndarray:
    """``node-selector``: nodeSelector and required node affinity (NodeAffinity)."""
    return view.cache.node_masks(view.cls)[2]


def fixed_layout(inst: Instance, objective: str) -> Layout:
    """A forced class gets per-node counts (the forced node's)."""
    return Layout(per_node={c.index: c.size for c in inst.classes if c.fixed_node is not None})


FIXED_FAMILY = Family(FIXED, mask=fixed_mask, layout=fixed_layout)
UNSCHEDULABLE_FAMILY = Family(UNSCHEDULABLE, mask=unschedulable_mask)
TAINT_FAMILY = Family(TAINT, mask=taint_mask)
NODE_SELECTOR_FAMILY = Family(NODE_SELECTOR, mask=node_selector_mask)
