"""Network locality beyond upstream: a preferred topology level and fewer domains spanned.

Upstream kube-scheduler has no soft topology constraint for PodGroups (KEP-5732 only knows the
required ``schedulingConstraints.topology``), so the greedy engine ignores all of this. Kueue does
(``kueue.x-k8s.io/podset-preferred-topology``, ``pkg/cache/scheduler/tas_flavor_snapshot.go``,
v0.14, ``findLevelWithFitDomains`` then ``updateCountsToMinimum`` per lower level: try to fit the
whole PodSet in one domain of the preferred level; when no domain has room, climb to the parent
level, and so on up to the top; then use as few domains as possible going down). gangplan offers the
same preference as a PodGroup annotation, ``gangplan.io/preferred-topology: <node label key>``,
and two objective tiers placed after ``placed`` (so they never cost an admission or a placed pod)
and before ``tiebreak``:

``topology``  packed groups: a Boolean ``packed[g, D]`` per annotated group and domain D of its
              preferred level , at most one per group, true only when
              every pod of the group (bound members included) is on a node of D and at least one
              new pod is placed. The tier is sum over groups of ``packed * pending pods``: packing
              a bigger gang counts more. A key no node carries has no domain: nothing to reward.
``spread``    network distance: per group and level of the :class:`TopologyTree`, the number of
              domains its pods span beyond the first (``presence[g, level, D]`` Booleans, spec
              "minimise the number of domains spanned"), weighted by level. Weights are per
              group, finest level 1, each coarser level ``1 + sum(finer weight x finer max
              excess)``, so within a group one more domain at a coarser level is worse than any
              number of extra domains at finer levels: Kueue's climbing order (one block with
              three NVLink domains beats two blocks with two). The tier maximises the domains
              saved, ``C - cost`` with ``C`` the largest possible cost, so it is non-negative like
              every tier. Nodes without a level's label count as one more domain of that level.

Who pays: annotated groups use the levels from the root down to their preferred level (when the
key is a tree level); with ``objective="compact"`` every leaf PodGroup that can have two or more
pods uses every level. Levels whose domains are single nodes (hostname), a level that splits the
nodes exactly like the next finer one (a GB200 rack and its one NVLink clique), and a group's
levels at or above its required topology key (one domain there anyway) are not measured.

Cost: the literals exist only for these groups and levels. Their pooled classes stay pooled and
count pods per domain of the finest level measured (``Layout.per_domain``, ``ExactModel.split``,
see :mod:`.variables`):
a domain of a coarser level is a union of those (tree domains nest), so one count per (class,
clique) serves every level; a required topology of the group's own, at or above that level, gates
those counts (:mod:`.topology`). Only a group under a CompositePodGroup topology, with a required
key that is not a tree level above the counted one, or whose preferred key is not a tree level
while the spread is measured on tree levels gets per-node counts (a private class). A snapshot without the annotation, solved
without ``objective="compact"``, builds the same model as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model

from gangplan.models.cluster import Cluster
from gangplan.solver.exact.family import BuildContext, Family, Layout
from gangplan.solver.exact.gang import Admission
from gangplan.solver.exact.instance import Instance
from gangplan.solver.exact.names import LOCALITY
from gangplan.solver.exact.variables import Counts, ExactModel, Tier
from gangplan.topology import TopologyTree

PREFERRED_ANNOTATION = "gangplan.io/preferred-topology"
TOPOLOGY, SPREAD = "topology", "spread"
COMPACT = "compact"


def preferred_keys(cluster: Cluster) -> dict[str, str]:
    """PodGroup key -> the node label key of its ``gangplan.io/preferred-topology`` annotation."""
    out = {}
    for key, g in cluster.pod_groups.items():
        value = (g.annotations.get(PREFERRED_ANNOTATION) or "").strip()
        if value:
            out[key] = value
    return out


@dataclass(frozen=True)
class LocalityPlan:
    """The leaf PodGroups the locality tiers measure, and the level each splittable one's pooled
    classes count pods per domain of (see :func:`locality_plan`)."""

    groups: frozenset[str]
    split: dict[str, str]


def locality_layout(inst: Instance, objective: str) -> Layout:
    """The plan as the family's output; measured groups that cannot be split get per-node counts."""
    groups, split = locality_plan(inst, objective)
    per_node = {c.index: c.size for c in inst.classes if c.group in groups and c.group not in split}
    return Layout(
        per_node=per_node, per_domain=split, output=LocalityPlan(groups=groups, split=split)
    )


def locality_plan(inst: Instance, objective: str) -> tuple[frozenset[str], dict[str, str]]:
    """The leaf PodGroups the locality tiers measure, and for those whose pods can stay pooled the
    finest level they are measured on (their classes count pods per domain of it; see
    :mod:`.variables`). A group under a required topology, or whose preferred key is not a tree
    level while the spread is measured on tree levels, gets per-node counts instead. A preferred
    key no node carries has nothing to reward: that group is left alone."""
    tree = inst.tree
    carried = {key for n in inst.cluster.nodes for key in n.labels}
    preferred = {g: key for g, key in preferred_keys(inst.cluster).items() if key in carried}
    groups, split = set(), {}
    for key, leaf in inst.leaves.items():
        if not leaf.classes:
            continue
        pods = leaf.bound + sum(inst.classes[c].size for c in leaf.classes)
        pref = preferred.get(key)
        levels = spread_level_indices(inst, key, pref, objective) if pods >= 2 else []
        if pref is None and not levels:
            continue
        groups.add(key)
        finest = _finest_level(tree, pref, levels)
        if finest is not None and _splittable(inst, key, finest):
            split[key] = finest
    return frozenset(groups), split


def _finest_level(tree: TopologyTree, pref: str | None, levels: list[int]) -> str | None:
    if pref is not None and pref not in tree.levels:
        return pref if not levels else None
    indices = levels + ([tree.level_index(pref)] if pref is not None else [])
    return tree.levels[max(indices)]


def _splittable(inst: Instance, key: str, finest: str) -> bool:
    """Can the group's classes count per domain of ``finest``? Not under a CompositePodGroup
    topology (it spans groups), and a required key of its own must be a tree level at or above
    ``finest``, so that each counted domain lies inside one required domain."""
    leaf = inst.leaves[key]
    if any(
        inst.cluster.groups.node(k).topology_key for k in inst.cluster.groups.ancestors(key)[1:]
    ):
        return False
    required = leaf.topology_key
    if not required:
        return True
    levels = inst.tree.levels
    return (
        required in levels and finest in levels and levels.index(required) <= levels.index(finest)
    )


@dataclass
class Locality:
    """The terms of the two tiers, built with the constraints (before the tiers)."""

    packed: list[tuple[list[cp_model.IntVar], int, object]] = field(default_factory=list)
    """Per annotated group: (packed literals, weight, counts -> packed 0/1)."""
    spread: list[tuple[cp_model.LinearExprT, int, int, object]] = field(default_factory=list)
    """Per (group, level): (cost expression, weight, max cost, counts -> cost)."""

    def tiers(self) -> list[Tier]:
        out = []
        if self.packed:
            out.append(self._packed_tier())
        if self.spread:
            out.append(self._spread_tier())
        return out

    def _packed_tier(self) -> Tier:
        terms = [(cp_model.LinearExpr.sum(lits), w) for lits, w, _ in self.packed if lits]
        expr = cp_model.LinearExpr.weighted_sum([e for e, _ in terms], [w for _, w in terms])
        fns = [(w, fn) for _, w, fn in self.packed]
        upper = sum(w for lits, w, _ in self.packed if lits)
        return Tier(TOPOLOGY, expr, lambda cnt: sum(w * fn(cnt) for w, fn in fns), upper)

    def _spread_tier(self) -> Tier:
        top = sum(w * m for _, w, m, _ in self.spread)
        cost = cp_model.LinearExpr.weighted_sum(
            [e for e, _, _, _ in self.spread], [w for _, w, _, _ in self.spread]
        )
        fns = [(w, fn) for _, w, _, fn in self.spread]
        return Tier(SPREAD, top - cost, lambda cnt: top - sum(w * fn(cnt) for w, fn in fns), top)


@dataclass
class _Group:
    key: str
    classes: list[int]
    bound_nodes: list[int]
    pending: int
    act: cp_model.IntVar | int

    def new_nodes(self, cnt: Counts) -> set[int]:
        return {n for c in self.classes for n, k in cnt.per_class[c].items() if k}

    def has_pods(self, cnt: Counts) -> int:
        return 1 if self.bound_nodes else int(any(cnt.total(c) for c in self.classes))


def add_locality_constraints(ctx: BuildContext) -> Locality:
    """Packed and presence literals for every locality group; returns the tiers' terms."""
    em, objective = ctx.em, ctx.objective
    inst = em.inst
    loc = Locality()
    plan = ctx.outputs.get(LocalityPlan)
    if not plan.groups:
        return loc
    active = ctx.outputs.get(Admission).active
    tree = inst.tree
    preferred = preferred_keys(inst.cluster)
    for key in sorted(plan.groups):
        g = _group(em, key, active.get(key, 0))
        pref = preferred.get(key)
        if pref is not None:
            _add_packed(em, loc, g, *inst.level_ids(pref))
        levels = (
            spread_level_indices(inst, key, pref, objective)
            if g.pending + len(g.bound_nodes) >= 2
            else []
        )
        for _level, weight, most, expr, fn in _spread_levels(em, tree, g, levels):
            loc.spread.append((expr, weight, most, fn))
    return loc


def _group(em: ExactModel, key: str, act: cp_model.IntVar | int) -> _Group:
    inst = em.inst
    leaf = inst.leaves[key]
    bound = [
        inst.bound_node_of[p.key]
        for p in inst.cluster.groups.node(key).members
        if p.key in inst.bound_node_of
    ]
    return _Group(
        key=key,
        classes=list(leaf.classes),
        bound_nodes=bound,
        pending=sum(inst.classes[c].size for c in leaf.classes),
        act=act,
    )


def _atoms(em: ExactModel, g: _Group) -> list[tuple[int, cp_model.IntVar, int, int]]:
    """(class, count variable, upper bound, a node of it) of every count the group has: per node
    for private classes, per domain of the split level for pooled ones. An atom never straddles a
    domain of a measured level (tree domains nest), so one node tells its domain at every level."""
    out = []
    for c in g.classes:
        if c in em.split:
            out += [(c, var, ub, nodes[0]) for nodes, var, ub in em.split[c]]
        else:
            out += [(c, var, em.x_ub[c][n], n) for n, var in em.x[c].items()]
    return out


def _by_domain(atoms, ids: np.ndarray) -> dict[int, list[tuple[int, cp_model.IntVar, int]]]:
    """Domain id -> (class, count variable, upper bound) of the atoms inside it."""
    out: dict[int, list[tuple[int, cp_model.IntVar, int]]] = {}
    for c, var, ub, n in atoms:
        out.setdefault(int(ids[n]), []).append((c, var, ub))
    return out


def _add_packed(em: ExactModel, loc: Locality, g: _Group, ids: np.ndarray, n_domains: int) -> None:
    inst, model = em.inst, em.model
    if n_domains == 0:
        return  # no node carries the key: nothing to reward
    bound_domains = {int(ids[n]) for n in g.bound_nodes}
    if len(bound_domains) > 1 or -1 in bound_domains:
        loc.packed.append(([], g.pending, lambda cnt: 0))
        return  # bound members already span domains: the group can never be packed
    leaf = inst.leaves[g.key]
    need = max(1, leaf.min_count - leaf.bound)
    candidates = sorted(bound_domains) if bound_domains else range(n_domains)
    lits: list[cp_model.IntVar] = []
    doms: list[int] = []
    per_domain = _by_domain(_atoms(em, g), ids)
    for d in candidates:
        entries = per_domain.get(d, [])
        if sum(ub for _, _, ub in entries) < need:
            continue  # static filter (:mod:`.variables`): the domain cannot hold it
        pk = em.new_aux(0, 1, lambda cnt, d=d: _packed_in(g, ids, d, cnt))
        for c in g.classes:
            own = [v for k, v, _ in entries if k == c]
            size = inst.classes[c].size
            model.add(
                em.placed[c] - cp_model.LinearExpr.sum(own) + size * pk <= size
            )  # pk: none outside D
        # packed and admitted: at least the pods the gang still needs are in D (tighter LP than >= pk)
        model.add(cp_model.LinearExpr.sum([v for _, v, _ in entries]) >= need * pk)
        lits.append(pk)
        doms.append(d)
    if len(lits) > 1:
        model.add_at_most_one(lits)
    # A group no domain can hold still gets its (empty) term: the tier then reports 0 for it.
    loc.packed.append(
        (lits, g.pending, lambda cnt: int(any(_packed_in(g, ids, d, cnt) for d in doms)))
    )


def _packed_in(g: _Group, ids: np.ndarray, d: int, cnt: Counts) -> int:
    new = g.new_nodes(cnt)
    return int(
        bool(new) and all(ids[n] == d for n in new) and all(ids[n] == d for n in g.bound_nodes)
    )


def spread_level_indices(inst: Instance, key: str, pref: str | None, objective: str) -> list[int]:
    """Tree levels the group's spread is measured on, coarsest first (see the module doc)."""
    tree = inst.tree
    if objective == COMPACT:
        levels = list(range(len(tree.levels)))
    elif pref is not None and pref in tree.levels:
        levels = list(range(tree.level_index(pref) + 1))
    else:
        return []
    required = inst.leaves[key].topology_key
    if required in tree.levels:
        levels = [i for i in levels if i > tree.level_index(required)]
    return [i for i in levels if _has_shared_domains(tree, i) and not _same_as_finer(tree, i)]


def _same_as_finer(tree: TopologyTree, i: int) -> bool:
    """Does level ``i`` split the nodes exactly like the next finer level (a GB200 rack and its
    one NVLink clique)? Then only the finer one is measured, so the split is not counted twice."""
    if i + 1 >= len(tree.levels):
        return False
    a, b = tree.node_domain[i], tree.node_domain[i + 1]
    if not np.array_equal(a < 0, b < 0):
        return False
    pairs = {(int(x), int(y)) for x, y in zip(a.tolist(), b.tolist(), strict=True) if x >= 0}
    return len(pairs) == len({x for x, _ in pairs}) == len({y for _, y in pairs})


def _has_shared_domains(tree: TopologyTree, i: int) -> bool:
    """Does some domain of level ``i`` hold two or more nodes (else spans = nodes used)?"""
    ids = tree.node_domain[i]
    ids = ids[ids >= 0]
    return ids.size > 0 and np.bincount(ids).max() > 1


def _spread_levels(em: ExactModel, tree: TopologyTree, g: _Group, levels: list[int]):
    """(level, weight, max cost, cost expression, counts -> cost) per level worth a variable."""
    built = []
    atoms = _atoms(em, g) if levels else []
    parent_lits: dict[int, cp_model.IntVar] = {}
    parent_ids: np.ndarray | None = None
    for i in levels:
        ids = tree.node_domain[i].astype(np.int64)
        ids = np.where(ids < 0, len(tree.domains[i]), ids)  # unlabelled nodes: one more domain
        fixed = sorted({int(ids[n]) for n in g.bound_nodes})
        per_domain = _by_domain(atoms, ids)
        reachable = sorted(per_domain)
        free = [d for d in reachable if d not in fixed]
        most = min(len(fixed) + len(free), g.pending + len(g.bound_nodes))
        if most <= 1:
            parent_lits, parent_ids = {}, None
            continue
        lits = {}
        for d in free:
            entries = per_domain[d]
            ub = min(
                sum(b for _, _, b in entries), g.pending
            )  # tight big-M: LP u >= pods in D / ub
            u = em.new_aux(
                0, 1, lambda cnt, d=d, ids=ids: int(any(ids[n] == d for n in g.new_nodes(cnt)))
            )
            em.model.add(cp_model.LinearExpr.sum([v for _, v, _ in entries]) <= ub * u)
            up = _parent_literal(ids, d, parent_ids, parent_lits, tree, i)
            if up is not None:
                em.model.add_implication(u, up)
            lits[d] = u
        has = 1 if g.bound_nodes else g.act
        expr = cp_model.LinearExpr.sum(list(lits.values())) + len(fixed) - has
        built.append(
            (i, most - 1, expr, lambda cnt, ids=ids, fixed=tuple(fixed): _cost(g, ids, fixed, cnt))
        )
        parent_lits, parent_ids = lits, ids
    return _weighted(built)


def _parent_literal(ids, d, parent_ids, parent_lits, tree: TopologyTree, i: int):
    """The presence literal of the domain's parent on the previous measured level, if any."""
    if parent_ids is None or d >= len(tree.domains[i]):
        return None
    nodes = np.flatnonzero(ids == d)
    parents = set(parent_ids[nodes].tolist())
    if len(parents) != 1:
        return None
    return parent_lits.get(parents.pop())


def _cost(g: _Group, ids: np.ndarray, fixed: tuple[int, ...], cnt: Counts) -> int:
    doms = set(fixed) | {int(ids[n]) for n in g.new_nodes(cnt)}
    return len(doms) - g.has_pods(cnt)


def _weighted(built):
    """Weights finest level first: 1, then 1 + sum of finer (weight x max cost)."""
    out = []
    below = 0
    for i, m, expr, fn in reversed(built):
        w = 1 + below
        out.append((i, w, m, expr, fn))
        below += w * m
    return list(reversed(out))


FAMILY = Family(LOCALITY, layout=locality_layout, build=add_locality_constraints, rule=False)
