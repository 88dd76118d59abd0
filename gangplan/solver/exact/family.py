"""One interface for every constraint family of the exact engine.

A family is one module (:mod:`.capacity`, :mod:`.gang`, :mod:`.topology`, ...) holding one
:class:`Family` record, listed once in :mod:`.registry`. The record says what the family adds at
each step of :func:`.build.build_model`, every part optional:

1. ``layout(inst, objective)``, before any variable: the classes whose pods the family must see
   per node (a *private* class gets ``x[c, n]``, see :mod:`.variables`) with the most pods of the
   class one node may take, the groups whose pooled classes count pods per domain of a level,
   and a typed output for later families (:mod:`.locality`'s plan);
2. ``mask(view, cond)``: the static eligibility, a bool per node (see :mod:`.eligibility`);
   ``check_feasible`` names the first family whose mask rejects a forced placement, in registry
   order;
3. ``build(ctx)``: constraints and auxiliary variables on the :class:`.variables.ExactModel`;
   it returns a typed output (or None) that later families read with ``ctx.outputs.get(Type)``
   (the gang family's :class:`.gang.LeafAdmission`, the topology family's confinement, ...).

``rule`` families are what ``check_feasible`` drops one at a time to name the family that rejects
a placement: ``skip`` leaves out its mask and the constraints its ``build`` guards with
``ctx.enforces(name)`` (the outputs other families read are still built). Every auxiliary
variable is created with :meth:`.variables.ExactModel.new_aux`, with the function computing its
value from a placement, so complete hints stay complete (tests/test_exact_hints.py checks each
value against the solver's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from gangplan.models.objects import Pod
from gangplan.solver.exact.eligibility import EligibilityCache, Mask
from gangplan.solver.exact.instance import Instance
from gangplan.solver.exact.variables import ExactModel

T = TypeVar("T")


class Outputs:
    """The families' typed outputs, one per type, in build order."""

    def __init__(self, given: Iterable[object] = ()) -> None:
        """``given``: typed inputs for the families, put first (the make-room objective's
        :class:`~gangplan.models.room.RoomSpec`)."""
        self._items: dict[type, object] = {}
        for item in given:
            self.put(item)

    def put(self, item: object | None) -> None:
        if item is None:
            return
        if type(item) in self._items:
            raise ValueError(f"two constraint families output a {type(item).__name__}")
        self._items[type(item)] = item

    def get(self, kind: type[T]) -> T:
        """The output of type ``kind``; a family asking for one no earlier family built is a
        registry-order mistake."""
        if kind not in self._items:
            raise LookupError(
                f"no constraint family before this one outputs a {kind.__name__} (see the registry order)"
            )
        return self._items[kind]  # type: ignore[return-value]

    def find(self, kind: type[T]) -> T | None:
        return self._items.get(kind)  # type: ignore[return-value]


@dataclass(frozen=True)
class Layout:
    """What a family needs from the variables, decided before any exists."""

    per_node: Mapping[int, int] = field(default_factory=dict)
    """Class index -> the most pods of the class one node may take under this family (its size
    when the family sets no limit): these classes get per-node counts."""
    per_domain: Mapping[str, str] = field(default_factory=dict)
    """Leaf PodGroup -> a level whose domains its pooled classes count their pods in."""
    output: object | None = None
    """A typed output for later families (``ctx.outputs``)."""


def selector_layout(
    inst: Instance, holds: Callable[[Pod], bool], selects: Callable[[Pod, Pod], bool]
) -> Layout:
    """Per-node counts for the classes whose pods hold a pod-to-pod rule (``holds``) and every
    class one of them selects (``selects(holder, pod)``): both sides of inter-pod terms."""
    holders = [c for c in inst.classes if holds(c.rep)]
    out = {h.index: h.size for h in holders}
    for h in holders:
        for c in inst.classes:
            if selects(h.rep, c.rep):
                out[c.index] = c.size
    return Layout(per_node=out)


@dataclass
class BuildContext:
    """What a family's ``build`` gets: the variables, the shared node-rule masks, the objective
    asked for, the families left out, and the outputs of the families built before it."""

    em: ExactModel
    cache: EligibilityCache
    objective: str
    skip: frozenset[str]
    outputs: Outputs

    def enforces(self, name: str) -> bool:
        return name not in self.skip


@dataclass(frozen=True)
class Family:
    """One constraint family (see the module docstring)."""

    name: str
    mask: Mask | None = None
    layout: Callable[[Instance, str], Layout] | None = None
    build: Callable[[BuildContext], object | None] | None = None
    rule: bool = True
    """A hard rule ``check_feasible`` may drop to name it (False: the family decides what may
    move or what is rewarded, not what is valid)."""


__all__ = ["BuildContext", "Family", "Layout", "Outputs", "selector_layout"]
