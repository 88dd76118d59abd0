"""Build the whole CP-SAT model from the registry of constraint families (:mod:`.registry`).

Steps, every family in registry order at each (see :mod:`.family`):

1. the problem data (:func:`.instance.build_instance`), never changed after;
2. every family's ``layout``: which classes get per-node counts (with the most pods one node may
   take), which groups' pooled classes count per domain, and plan outputs;
3. every family's static ``mask`` per class (:func:`.eligibility.class_eligibility`);
4. the variables (:func:`.variables.build_variables`);
5. every family's ``build``, each reading the outputs of the ones before it;
6. the objective tiers (:func:`.objective.build_tiers`).

``skip`` leaves rule families out (their masks, per-node limits and guarded constraints), so that
``check_feasible`` can name the family that rejects a placement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ortools.sat.python import cp_model

from gangplan.models.cluster import Cluster
from gangplan.solver.exact import registry
from gangplan.solver.exact.aggregation import symmetric_anti_affine
from gangplan.solver.exact.eligibility import EligibilityCache, class_eligibility
from gangplan.solver.exact.family import BuildContext, Family, Outputs
from gangplan.solver.exact.instance import Instance, build_instance
from gangplan.solver.exact.names import POD_ANTI_AFFINITY
from gangplan.solver.exact.objective import build_tiers
from gangplan.solver.exact.topology import Confinement
from gangplan.solver.exact.variables import ExactModel, Tier, build_variables
from gangplan.solver.kueue.apply import opened_view


@dataclass
class BuiltModel:
    """What :func:`build_model` returns: the variables, the families' typed outputs, and the
    objective tiers (highest first) that :mod:`.solve` maximises."""

    em: ExactModel
    outputs: Outputs
    tiers: list[Tier]

    @property
    def inst(self) -> Instance:
        return self.em.inst

    @property
    def model(self) -> cp_model.CpModel:
        return self.em.model

    @property
    def confinement(self) -> Confinement:
        """The topology family's per-domain counts of pooled classes (decoding reads them)."""
        return self.outputs.find(Confinement) or Confinement(by_class={})


_HANDED: list[tuple[Cluster, tuple, BuiltModel]] = []


def _handover_key(fixed: dict[str, str | None] | None, preemption: bool) -> tuple:
    return tuple(sorted((fixed or {}).items())), bool(preemption)


def hand_over(
    cluster: Cluster, built: BuiltModel, *, fixed: dict[str, str | None] | None, preemption: bool
) -> None:
    """Keep ``built`` for the next :func:`build_model` call, which returns it instead of building
    the same model again when it asks for exactly this model: the same ``cluster`` object,
    ``fixed`` and ``preemption``, the default objective and nothing else. Any other call drops it
    (one model per process). ``built`` must be unchanged since its build (the model is built
    deterministically, so the caller gets what a new build would give). The decisive step's
    feasibility pre-check hands over its model to the full probe that follows when it decides
    nothing: on the 10,000-node shapes that saves a build of 3-5 s per probe."""
    _HANDED.clear()
    _HANDED.append((cluster, _handover_key(fixed, preemption), built))


def drop_handed() -> None:
    """Forget a model :func:`hand_over` kept (it holds its cluster): the caller that handed it
    over is done."""
    _HANDED.clear()


def build_model(
    cluster: Cluster,
    *,
    fixed: dict[str, str | None] | None = None,
    victims=(),
    objective: str = "default",
    skip: frozenset[str] = frozenset(),
    preemption: bool = False,
    families: Sequence[Family] | None = None,
    given: Sequence[object] = (),
) -> BuiltModel:
    """The model of ``cluster`` (see the module docstring). ``victims`` are removed from the
    bound state up front; ``preemption`` lets the model choose evictions itself
    (:mod:`.preemption`); ``families`` (default: the registry) are built in the order given;
    ``given``: typed inputs the families read as outputs (the make-room objective's
    :class:`~gangplan.models.room.RoomSpec`)."""
    if _HANDED:
        held_cluster, key, ready = _HANDED.pop()
        if (
            held_cluster is cluster
            and key == _handover_key(fixed, preemption)
            and objective == "default"
            and not victims
            and not skip
            and families is None
            and not given
        ):
            return ready
    families = registry.FAMILIES if families is None else tuple(families)
    cluster = opened_view(cluster)  # Kueue's question: held pods released (quota.py decides)
    inst = build_instance(cluster, fixed=fixed, victims=victims, preemption=preemption)
    outputs = Outputs(given)
    caps = [c.size for c in inst.classes]
    per_node: set[int] = set()
    wanted_by: dict[int, set[str]] = {}
    per_domain: dict[str, str] = {}
    for fam in families:
        if fam.layout is None:
            continue
        layout = fam.layout(inst, objective)
        per_node.update(layout.per_node)
        for c in layout.per_node:
            wanted_by.setdefault(c, set()).add(fam.name)
        if fam.name not in skip:
            for c, most in layout.per_node.items():
                caps[c] = min(caps[c], most)
        per_domain.update(layout.per_domain)
        outputs.put(layout.output)
    cache = EligibilityCache(inst)
    masks = [(fam.name, fam.mask) for fam in families if fam.mask is not None]
    elig = [class_eligibility(inst, cache, c, masks, skip) for c in inst.classes]
    # Symmetric anti-affine gangs pool with a per-domain cap (:mod:`.aggregation`) when the
    # anti-affinity family is the only one that wants them per node and nothing is skipped.
    anti = (
        {}
        if skip
        else {
            c: key
            for c, key in symmetric_anti_affine(inst, per_domain).items()
            if wanted_by.get(c, set()) <= {POD_ANTI_AFFINITY} and not elig[c].needs_evict
        }
    )
    private = [
        (c.index in per_node and c.index not in anti) or bool(elig[c.index].needs_evict)
        for c in inst.classes
    ]
    em = build_variables(inst, elig, private, caps, per_domain, anti)
    ctx = BuildContext(em=em, cache=cache, objective=objective, skip=skip, outputs=outputs)
    for fam in families:
        if fam.build is not None:
            outputs.put(fam.build(ctx))
    return BuiltModel(em=em, outputs=outputs, tiers=build_tiers(em, outputs, objective))


def rule_families(families: Sequence[Family] | None = None) -> list[str]:
    """Names of the families ``check_feasible`` drops one at a time (rules with a model part)."""
    families = registry.FAMILIES if families is None else families
    return [fam.name for fam in families if fam.rule and fam.build is not None]


__all__ = ["BuiltModel", "build_model", "rule_families"]
