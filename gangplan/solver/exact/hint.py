"""Between placements and model values: complete hints in, concrete pods out.

A hint is only useful to CP-SAT when it is *complete* (every variable, auxiliaries included) and
feasible (spec/cpsat-modeling.md §3): then the solver starts from it and can never return
something worse. So a placement (the greedy result, or the previous phase's solution) is turned
into counts, and every variable's value is computed from the counts by the same rule the family
that created it documents. Decoding goes the other way, deterministically: within a class, pods
are taken in snapshot order; pooled slots are handed to classes in class order, nodes in index
order.
"""

from __future__ import annotations

from collections.abc import Mapping

from gangplan.solver.exact.variables import Counts, ExactModel


def counts_from_placements(em: ExactModel, placements: Mapping[str, str]) -> tuple[Counts, list[str]]:
    """Counts of a placement, dropping whole entities the model cannot represent.

    Returns the counts and the keys of the dropped pods (not candidates, or on a node the
    class may never use). Dropping the whole entity keeps gang rules intact.
    """
    inst = em.inst
    bad_entities: set[str] = set()
    rows: list[tuple[str, int, int]] = []
    for key in sorted(placements):
        node = placements[key]
        c = inst.class_of.get(key)
        n = inst.cluster.node_index.get(node)
        ent = _entity(em, key)
        if c is None or n is None or not _usable(em, c, n):
            bad_entities.add(ent)
            continue
        rows.append((key, c, n))
    per_class: list[dict[int, int]] = [{} for _ in inst.classes]
    dropped = sorted(k for k in placements if _entity(em, k) in bad_entities)
    for key, c, n in rows:
        if _entity(em, key) in bad_entities:
            continue
        per_class[c][n] = per_class[c].get(n, 0) + 1
    return Counts(per_class), dropped


def _entity(em: ExactModel, key: str) -> str:
    c = em.inst.class_of.get(key)
    if c is not None and em.inst.classes[c].entity is not None:
        return em.inst.classes[c].entity
    p = em.inst.cluster.pod_by_key.get(key)
    if p is not None and p.group_key in em.inst.cluster.pod_groups:
        return em.inst.cluster.root_of(p.group_key)
    return "pod:" + key


def _usable(em: ExactModel, c: int, n: int) -> bool:
    if em.private[c]:
        return n in em.x[c]
    return n in em.v[em.shape_of[c]]


def empty_counts(em: ExactModel) -> Counts:
    return Counts([{} for _ in em.inst.classes])


def hint_values(em: ExactModel, cnt: Counts) -> tuple[list[int], list[int]]:
    """(variable indices, values) for every variable of the model."""
    idx: list[int] = []
    val: list[int] = []
    for c, xs in enumerate(em.x):
        per = cnt.per_class[c]
        for n, var in xs.items():
            idx.append(var.index)
            val.append(per.get(n, 0))
    for s, slots in enumerate(em.v):
        members = em.shapes[s].classes
        for n, var in slots.items():
            idx.append(var.index)
            val.append(sum(cnt.per_class[c].get(n, 0) for c in members))
    for c, var in enumerate(em.placed):
        idx.append(var.index)
        val.append(cnt.total(c))
    for var, fn in em.aux:
        idx.append(var.index)
        val.append(int(fn(cnt)))
    return idx, val


def set_hint(em: ExactModel, cnt: Counts) -> None:
    em.model.clear_hints()
    idx, val = hint_values(em, cnt)
    em.model.proto.solution_hint.vars.extend(idx)
    em.model.proto.solution_hint.values.extend(val)


def counts_from_solution(em: ExactModel, solution: list[int]) -> Counts:
    """Counts per (class, node) from a solver response; pooled slots split in class order."""
    per_class: list[dict[int, int]] = [{} for _ in em.inst.classes]
    for c, xs in enumerate(em.x):
        for n, var in xs.items():
            k = solution[var.index]
            if k:
                per_class[c][n] = k
    for s, slots in enumerate(em.v):
        _split_slots(em, s, slots, solution, per_class)
    return Counts(per_class)


def placements_from_counts(em: ExactModel, cnt: Counts) -> dict[str, str]:
    """Concrete pods: within a class, the first pods in snapshot order go to nodes in index order."""
    nodes = em.inst.cluster.nodes
    out: dict[str, str] = {}
    for c, per in enumerate(cnt.per_class):
        pods = iter(em.inst.classes[c].pods)
        for n in sorted(per):
            for _ in range(per[n]):
                out[next(pods).key] = nodes[n].name
    return out


def _split_slots(em: ExactModel, s: int, slots: dict, solution: list[int], per_class: list[dict[int, int]]) -> None:
    """Hand a shape's slots to its classes: confined classes inside their domain first, then the
    rest anywhere, nodes in index order, classes in class order."""
    left = {n: solution[var.index] for n, var in sorted(slots.items()) if solution[var.index]}
    shape = em.shapes[s]
    ids = em.inst.domains(shape.confined_key)[0] if shape.confined_key else None
    free_classes = []
    for c in shape.classes:
        if c not in em.confined:
            free_classes.append((c, solution[em.placed[c].index]))
            continue
        for d, (var, y, size) in sorted(em.confined[c].items()):
            need = solution[var.index] if var is not None else size * solution[y.index]
            _take(left, [n for n in left if ids[n] == d], c, need, per_class)
    for c, need in free_classes:
        _take(left, list(left), c, need, per_class)


def _take(left: dict[int, int], nodes: list[int], c: int, need: int, per_class: list[dict[int, int]]) -> None:
    for n in nodes:
        if need <= 0:
            break
        k = min(left.get(n, 0), need)
        if k:
            per_class[c][n] = per_class[c].get(n, 0) + k
            left[n] -= k
            need -= k
            if not left[n]:
                del left[n]
    if need > 0:
        raise RuntimeError(f"decoding: class {c} lacks {need} slots (model and decoder disagree)")
