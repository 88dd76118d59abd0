"""Is a given assignment feasible for the exact model, and which rule families reject it
(:func:`check_feasible`, for tests and for a diff's explanation)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gangplan.models.cluster import Cluster
from gangplan.solver.exact.build import BuiltModel, build_model, rule_families
from gangplan.solver.exact.solve import feasible


def check_feasible(
    cluster: Cluster, placements: Mapping[str, str], victims: Iterable[str] = ()
) -> bool | list[str]:
    """Is this exact assignment feasible? ``True``, or the rule families that reject it.

    Every pending pod not in ``placements`` stays unplaced. Static rules (node rules, a pod that
    alone does not fit, conflicts with bound pods) are named per pod, the first family of the
    registry whose mask rejects the node; for the rest, each rule family of the registry is
    dropped in turn and those whose removal makes the model feasible are reported.
    """
    victims = tuple(victims)
    fixed: dict[str, str | None] = {p.key: None for p in cluster.pending_pods}
    fixed.update(placements)
    built = build_model(cluster, fixed=fixed, victims=victims)
    if built.inst.fixed_errors:
        return list(built.inst.fixed_errors)
    static = _static_failures(built)
    if static:
        return static
    if feasible(built):
        return True
    culprits = [
        fam
        for fam in rule_families()
        if feasible(build_model(cluster, fixed=fixed, victims=victims, skip=frozenset({fam})))
    ]
    return culprits or ["infeasible: several rule families together"]


def _static_failures(built: BuiltModel) -> list[str]:
    em = built.em
    out = []
    nodes = em.inst.cluster.nodes
    for c in em.inst.classes:
        n = c.fixed_node
        if n is None:
            continue
        fam = em.elig[c.index].first_failing(n)
        if fam is not None:
            out.append(f"{fam}: {', '.join(p.key for p in c.pods)} on node {nodes[n].name}")
    return out
