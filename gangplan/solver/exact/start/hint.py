"""Between placements and model values: complete hints in, concrete pods out.

A hint is only useful to CP-SAT when it is *complete* (every variable, auxiliaries included) and
feasible (:mod:`gangplan.solver.exact.solve`): then the solver starts from it and can never return
something worse. So a placement (the greedy result, or the previous phase's solution) is turned
into counts, and every variable's value is computed from the counts by the same rule the family
that created it documents. Decoding goes the other way, deterministically: within a class, pods
are taken in snapshot order; pooled slots are handed to classes in class order, nodes in index
order.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from gangplan.models.groups import EntityKey
from gangplan.models.objective import snapshot_victims
from gangplan.models.result import Result, Status
from gangplan.models.trace import HintUse
from gangplan.solver.exact.aggregation import decode, take_nodes
from gangplan.solver.exact.build import BuiltModel
from gangplan.solver.exact.instance import snapshot_order
from gangplan.solver.exact.objective import TIEBREAK
from gangplan.solver.exact.preemption import evicted_units, units_of_victims, victims_of
from gangplan.solver.exact.topology import Confinement
from gangplan.solver.exact.variables import Counts, ExactModel, Tier
from gangplan.solver.outcome import build_result, entity_of
from gangplan.solver.validate import validate


def counts_from_placements(
    em: ExactModel, placements: Mapping[str, str]
) -> tuple[Counts, list[str]]:
    """Counts of a placement, dropping whole entities the model cannot represent.

    Returns the counts and the keys of the dropped pods (not candidates, or on a node the
    class may never use). Dropping the whole entity keeps gang rules intact.
    """
    inst = em.inst
    entity = {key: _entity(em, key) for key in placements}  # (each pod's looked up once)
    bad_entities: set[EntityKey] = set()
    rows: list[tuple[str, int, int]] = []
    for key in sorted(placements):
        node = placements[key]
        c = inst.class_of.get(key)
        n = inst.cluster.node_index.get(node)
        if c is None or n is None or not _usable(em, c, n):
            bad_entities.add(entity[key])
            continue
        rows.append((key, c, n))
    per_class: list[dict[int, int]] = [{} for _ in inst.classes]
    dropped = sorted(k for k in placements if entity[k] in bad_entities)
    for key, c, n in rows:
        if entity[key] in bad_entities:
            continue
        per_class[c][n] = per_class[c].get(n, 0) + 1
    return Counts(per_class), dropped


def _entity(em: ExactModel, key: str) -> EntityKey:
    p = em.inst.cluster.pod_by_key.get(key)
    return em.inst.cluster.groups.entity_of(p) if p is not None else EntityKey.pod(key)


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
        on: dict[int, int] = {}  # the shape's pods per node, summed over its member classes
        for c in em.shapes[s].classes:
            for n, k in cnt.per_class[c].items():
                on[n] = on.get(n, 0) + k
        for n, var in slots.items():
            idx.append(var.index)
            val.append(on.get(n, 0))
    for c, var in enumerate(em.placed):
        idx.append(var.index)
        val.append(cnt.total(c))
    for u, var in enumerate(em.evict):
        idx.append(var.index)
        val.append(int(u in cnt.evicted))
    read = cnt.tallied()  # per-domain sums once per placement, not once per variable
    for var, fn in em.aux:
        idx.append(var.index)
        val.append(int(fn(read)))
    return idx, val


def set_hint(built: BuiltModel, cnt: Counts) -> None:
    model = built.model
    model.clear_hints()
    idx, val = hint_values(built.em, cnt)
    model.proto.solution_hint.vars.extend(idx)
    model.proto.solution_hint.values.extend(val)


def counts_from_solution(built: BuiltModel, solution: list[int]) -> Counts:
    """Counts per (class, node) from a solver response; pooled slots split in class order."""
    em, confinement = built.em, built.confinement
    per_class: list[dict[int, int]] = [{} for _ in em.inst.classes]
    for c, xs in enumerate(em.x):
        for n, var in xs.items():
            k = solution[var.index]
            if k:
                per_class[c][n] = k
    for s, slots in enumerate(em.v):
        _split_slots(em, confinement, s, slots, solution, per_class)
    return Counts(per_class, evicted_units(em, solution))


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


def _split_slots(
    em: ExactModel,
    confinement: Confinement,
    s: int,
    slots: dict,
    solution: list[int],
    per_class: list[dict[int, int]],
) -> None:
    """Hand a shape's slots to its classes: split and confined classes inside their domains first,
    then the rest anywhere, nodes in index order, classes in class order."""
    left = {n: solution[var.index] for n, var in sorted(slots.items()) if solution[var.index]}
    shape = em.shapes[s]
    if shape.anti_key:
        decode(em, s, left, solution, per_class)
        return
    ids = em.inst.domains(shape.confined_key)[0] if shape.confined_key else None
    in_domain: dict[int, list[int]] = {}
    if ids is not None:
        for n in left:  # node index order, as ``left`` is built
            in_domain.setdefault(int(ids[n]), []).append(n)
    free_classes = []
    for c in shape.classes:
        if c in em.split:
            for nodes, var, _ in em.split[c]:
                _take(left, [n for n in nodes if n in left], c, solution[var.index], per_class)
            continue
        if c not in confinement.by_class:
            free_classes.append((c, solution[em.placed[c].index]))
            continue
        for d, (var, y, size) in sorted(confinement.by_class[c].items()):
            need = solution[var.index] if var is not None else size * solution[y.index]
            if need > 0:  # the domain's nodes still holding slots, in index order
                _take(left, [n for n in in_domain.get(d, ()) if n in left], c, need, per_class)
    for c, need in free_classes:
        _take(left, list(left), c, need, per_class)


def _take(
    left: dict[int, int], nodes: list[int], c: int, need: int, per_class: list[dict[int, int]]
) -> None:
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


# ---- the starting solution ---------------------------------------------------------------------
def default_incumbent(em: ExactModel) -> Counts | None:
    """Placing nothing is always feasible, unless ``fixed`` forces pods onto nodes."""
    forced = any(c.fixed_node is not None for c in em.inst.classes)
    return None if forced else empty_counts(em)


def starting_solution(built: BuiltModel, hint: Result | None) -> tuple[Counts | None, HintUse]:
    """The starting solution: the hint once the validator accepts it (entities it blames are
    dropped first), else placing nothing, else (when ``fixed`` forces pods) the forced pods alone
    if they are valid by themselves; then completed first-fit (:func:`complete_first_fit`).
    None when nothing known is feasible."""
    em = built.em
    default = default_incumbent(em)
    info = HintUse(used=False)
    if hint is not None:
        info.engine = hint.engine
        placements, evicted = _hint_placements(em, hint)
        counts, dropped, blamed = repaired(em, placements, evicted=evicted)
        if counts is not None and _keeps_fixed(em, counts):
            info.used = True
            info.placed = sum(counts.total(c) for c in range(len(em.inst.classes)))
            info.dropped = len(set(dropped))
            if blamed:
                info.violations = blamed[:5]
            start = _completed(em, counts, info)
            if default is not None:  # a first-fit of its own may beat a weak hint
                alone = _completed(em, default, HintUse())
                if better(built.tiers, alone, start):
                    info.start = "first-fit (better than the hint)"
                    return alone, info
            return start, info
        info.rejected = blamed[-1] if blamed else "does not keep the fixed placements"
    if default is not None:
        return _completed(em, default, info), info
    if default is None:
        forced = {
            p.key: em.inst.cluster.nodes[c.fixed_node].name
            for c in em.inst.classes
            if c.fixed_node is not None
            for p in c.pods
        }
        counts, dropped, _ = repaired(em, forced, repairs=1)
        if counts is not None and not dropped:
            # Completed first-fit like any start: a diff's decisive-step probes fix a prefix of
            # the greedy choices and need the rest placed to prove anything quickly.
            start = _completed(em, counts, info)
            info.start = (
                "the fixed placements alone"
                if start is counts
                else "the fixed placements, completed first-fit"
            )
            return start, info
    return default, info


def _hint_placements(em: ExactModel, hint: Result) -> tuple[dict[str, str], frozenset[int]]:
    """The hint's placements and evicted units. Nominated pods (placed on room that victims
    free) only count when the model may evict and the hint's victims are whole evictable units."""
    placed = {k: o.node for k, o in hint.pods.items() if o.node is not None and not o.nominated}
    # a pending pod the greedy run placed and evicted (rule V) is, in the model, a pod not placed
    victims = [p.key for p in snapshot_victims(em.inst.cluster, hint.victims)]
    if not em.evict or not victims:
        return placed, frozenset()
    evicted = units_of_victims(em, victims)
    if evicted is None:
        return placed, frozenset()
    return {k: o.node for k, o in hint.pods.items() if o.node is not None}, evicted


def better(tiers: list[Tier], a: Counts, b: Counts) -> bool:
    """Is ``a`` lexicographically better than ``b`` on the decision tiers?"""
    tiers = [t for t in tiers if t.name != TIEBREAK]
    return [t.value(a) for t in tiers] > [t.value(b) for t in tiers]


def _keeps_fixed(em: ExactModel, counts: Counts) -> bool:
    return all(counts.total(c.index) == c.size for c in em.inst.classes if c.fixed_node is not None)


def repaired(
    em: ExactModel,
    placements: Mapping[str, str],
    repairs: int | None = None,
    evicted: frozenset[int] = frozenset(),
):
    """(counts, dropped pod keys, violations seen) of a placement made valid by dropping the
    entities the validator blames; counts None when it is still invalid after the repairs.
    Evictions (preemption) are kept while the validator accepts them, all dropped at its first
    ``victim`` complaint (then the pods that needed the room are blamed in the next round)."""
    counts, dropped = counts_from_placements(em, placements)
    counts.evicted = evicted
    blamed: list[str] = []
    for _ in range(repairs or MAX_HINT_REPAIRS):
        kept = placements_from_counts(em, counts)
        check = build_result(
            em.inst.cluster,
            engine="hint",
            status=Status.HEURISTIC,
            placements=kept,
            victims=victims_of(em, counts.evicted),
            name_devices=False,
        )
        violations = validate(em.inst.cluster, check)
        if not violations:
            return counts, dropped, blamed
        blamed.append(str(violations[0]))
        if any(v.rule == "victim" for v in violations):
            evicted = frozenset()
            violations = [v for v in violations if v.rule != "victim"]
        bad = _blamed_pods(em, kept, violations)
        counts, more = counts_from_placements(em, {k: n for k, n in kept.items() if k not in bad})
        counts.evicted = evicted
        dropped = dropped + sorted(bad) + more
    return None, dropped, blamed


MAX_HINT_REPAIRS = 5


def _blamed_pods(em: ExactModel, kept: Mapping[str, str], violations) -> set[str]:
    """Every placed pod of every entity a violation names (a group, a pod, or a node's pods)."""
    cluster = em.inst.cluster
    entities: set[EntityKey] = set()
    for v in violations:
        if v.kind in ("PodGroup", "CompositePodGroup") and v.name in cluster.groups:
            entities.add(cluster.groups.node(cluster.groups.root_of(v.name)).entity)
        elif v.kind == "Node":
            entities.update(entity_of(cluster, k) for k, n in kept.items() if n == v.name)
        elif v.kind == "Pod" and v.name in cluster.pod_by_key:
            entities.add(entity_of(cluster, v.name))
    return {k for k in kept if entity_of(cluster, k) in entities}


def _completed(em: ExactModel, counts: Counts, info: HintUse) -> Counts:
    """The start completed first-fit, kept only when the validator accepts the whole of it."""
    more = complete_first_fit(em, counts)
    added = sum(more.total(c) for c in range(len(em.inst.classes))) - sum(
        counts.total(c) for c in range(len(em.inst.classes))
    )
    if not added:
        return counts
    checked, dropped, _ = repaired(em, placements_from_counts(em, more))
    if checked is None or not _keeps_fixed(em, checked):
        info.first_fit = "rejected by the validator"
        return counts
    info.first_fit = added - len(dropped)
    return checked


def complete_first_fit(em: ExactModel, counts: Counts) -> Counts:
    """Place, in queue order (priority, then snapshot order), every entity the start leaves out
    whose pods are all pooled: each pod on the first eligible node with room, all pods of the
    entity or none, inside one domain when its group asks for it (domains in node order).

    Only a warm start: CP-SAT starts from it and the phases may only improve it. It lifts a hint
    the validator had to cut down (or no hint at all) to a full greedy-quality start; on the
    5,000-node x 2,048-pod GPU cell a full first-fit start let the decision tiers be proven in
    4 s, where the cut-down start needed 19 s.
    """
    inst = em.inst
    per_class = [dict(d) for d in counts.per_class]
    free, free_pods = free_after(em, per_class, counts.evicted)
    for classes, key in entities_in_queue_order(em, per_class):
        ids = inst.domains(key)[0] if key else None
        domains = [None] if ids is None else _roomy_domains(em, classes, key, free, free_pods)
        for d in domains:
            trial = _fit_entity(
                em, classes, free.copy(), free_pods.copy(), None if d is None else ids == d
            )
            if trial is not None:
                free, free_pods, placed = trial
                for c, nodes in placed.items():
                    for n, k in nodes.items():
                        per_class[c][n] = per_class[c].get(n, 0) + k
                break
    return Counts(per_class, counts.evicted)


def _roomy_domains(em: ExactModel, classes: list[int], key: str, free, free_pods) -> list[int]:
    """The candidate domains in id order, without those where the first class alone cannot fit
    (a domain skipped here would fail :func:`_fit_entity` anyway: same first-fit choice, fewer
    trials)."""
    c = classes[0]
    cls = em.inst.classes[c]
    need = 1 if cls.entity is None else cls.size
    ids = em.inst.domains(key)[0]
    room = free_pods.copy()
    req = em.req[c]
    for r in np.nonzero(req > 0)[0]:
        room = np.minimum(room, free[:, r] // req[r])
    room = np.where(em.elig[c].eligible & (ids >= 0), np.maximum(room, 0), 0)
    held = np.bincount(ids[room > 0], weights=room[room > 0])
    return [d for d in em.eligible_domains(classes, key) if d < len(held) and held[d] >= need]


def free_after(
    em: ExactModel, per_class: list[dict[int, int]], per_class_evicted: frozenset[int] = frozenset()
):
    free = em.inst.free.copy()
    free_pods = em.inst.free_pods.copy()
    for c, nodes in enumerate(per_class):
        for n, k in nodes.items():
            free[n] -= em.req[c] * k
            free_pods[n] -= k
    for u in per_class_evicted:
        unit = em.inst.units[u]
        for n, use in unit.usage.items():
            free[n] += use
            free_pods[n] += unit.slots[n]
    return free, free_pods


def entities_in_queue_order(em: ExactModel, per_class: list[dict[int, int]]):
    """(classes, topology key) of every unplaced entity made of pooled classes only."""
    inst = em.inst
    groups: dict[str, list[int]] = {}
    out = []
    for c in inst.classes:
        if c.entity is None:
            if not em.private[c.index]:
                done = sum(per_class[c.index].values())
                out.extend(
                    ((c.priority, c.pods[i].key), [c.index], None) for i in range(done, c.size)
                )
        else:
            groups.setdefault(c.entity, []).append(c.index)
    for ent, classes in groups.items():
        leaf = inst.leaves.get(ent)
        if leaf is None or any(em.private[c] or per_class[c] for c in classes):
            continue  # composites, private classes and partly placed groups are left to the solver
        if leaf.bound + sum(inst.classes[c].size for c in classes) < leaf.min_count:
            continue
        first = inst.classes[classes[0]]
        out.append(
            (
                (first.priority, first.rep.key),
                classes,
                leaf.topology_key if leaf.bound == 0 else None,
            )
        )
    order = snapshot_order(inst.cluster)
    out.sort(key=lambda e: (-e[0][0], order[e[0][1]]))
    return [(classes, key) for _, classes, key in out]


def _fit_entity(em: ExactModel, classes: list[int], free, free_pods, domain):
    """Every pod of ``classes`` (one pod for a single-pod class) first-fit, or None."""
    placed: dict[int, dict[int, int]] = {}
    for c in classes:
        cls = em.inst.classes[c]
        need = 1 if cls.entity is None else cls.size
        req = em.req[c]
        mask = em.elig[c].eligible if domain is None else em.elig[c].eligible & domain
        nodes = np.nonzero(mask)[0]
        room = free_pods[nodes]
        for r in np.nonzero(req > 0)[0]:
            room = np.minimum(room, free[nodes, r] // req[r])
        room = np.maximum(room, 0)
        # Nodes in index order, each taking what it has room for until the class is complete.
        before = np.minimum(np.cumsum(room) - room, need)
        take = np.minimum(room, need - before)
        hit = np.nonzero(take > 0)[0]
        pairs = zip(nodes[hit].tolist(), take[hit].tolist(), strict=True)
        if c in em.anti:  # one pod per domain of its anti-affinity key
            pairs = take_nodes(
                em, c, nodes.tolist(), dict(zip(nodes.tolist(), room.tolist(), strict=True)), need
            )
        for n, k in pairs:
            placed.setdefault(c, {})[n] = k
            free[n] -= req * k
            free_pods[n] -= k
            need -= k
        if need:
            return None
    return free, free_pods, placed
