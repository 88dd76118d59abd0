"""Kueue's admission in the exact model (issue 42): quota, flavors and TAS domains, inert without
Kueue objects in the snapshot.

The exact engine answers Kueue's question on the *opened* snapshot
(:func:`gangplan.solver.kueue.apply.opened_cluster`): the pods of every pending Workload are no
longer held, and this family decides which Workloads Kueue admits, with which flavor, in which
domain, under the same rules Kueue's admission and kube-scheduler apply together:

* ``adm[w]``: Workload ``w`` holds quota. Its pods may be placed only then
  (``placed[c] <= size * adm[w]``); a Workload Kueue can never admit (no LocalQueue or
  ClusterQueue, a stopped queue, a namespace the ClusterQueue does not select, deactivated)
  places nothing. An admitted Workload reserves its whole request (``count`` pods) as Kueue does,
  whether or not kube-scheduler then places every pod.
* ``fl[ps, g, f]``: PodSet ``ps`` takes flavor ``f`` of the ClusterQueue's resource group ``g``
  (one per group that covers a resource it requests: ``sum_f fl = adm[w]``), only among the
  flavors Kueue's assigner may give it (:func:`gangplan.solver.kueue.derive.flavor_allowed`:
  the flavor's nodeLabels against the PodSet's nodeSelector / required node affinity, the flavor's
  taints against its tolerations). A pod lands only on a node every chosen flavor's nodeLabels
  select (``x[c, n] <= ub * sum(fl over the flavors node n matches)``), which is what the
  injected nodeSelector does.
* Quota: the usage of each ClusterQueue in each flavor and resource is the admitted Workloads'
  (recorded ones as constants) and every cap of the quota tree holds
  (:meth:`gangplan.predicates.quota.QuotaTree.caps`: nominal quota, cohort borrowing, borrowing
  and lending limits; the same rule the greedy admission and the validator read).
* TAS: a PodSet that requires a topology level is placed in one domain of it (a domain is the
  path of label values down to that level, as Kueue's tree has it); a slice requirement puts its
  pods in each domain of the slice level in whole slices (``count in d == size * k[d]``), for every
  layer of a multi-layer request.

Not modelled (the Result says so in its warnings): Kueue's preemption, PodSet groups placed
together, preferred levels (a preference, not a rule), partial admission (``minCount``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from gangplan.models.kueue import ClusterQueue, KueuePodSet, KueueState, KueueWorkload
from gangplan.predicates.quota import QuotaTree
from gangplan.solver.exact.family import BuildContext, Family, Layout
from gangplan.solver.exact.instance import Instance
from gangplan.solver.exact.variables import Counts
from gangplan.solver.kueue.derive import implied_flavor, topology_levels
from gangplan.solver.kueue.queues import queue_check

QUOTA = "kueue-quota"


def _state(inst: Instance) -> KueueState | None:
    return getattr(inst.cluster, "kueue", None)


def podset_of_pods(state: KueueState) -> dict[str, tuple[str, str]]:
    return {
        k: (w.key, ps.name) for w in state.workloads.values() for ps in w.podsets for k in ps.pods
    }


@dataclass
class KueueClasses:
    """Which classes hold the pods of which pending PodSet."""

    by_podset: dict[tuple[str, str], list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, inst: Instance, state: KueueState) -> KueueClasses:
        owner = podset_of_pods(state)
        pending = {w.key for w in state.pending()}
        out: dict[tuple[str, str], list[int]] = defaultdict(list)
        for c in inst.classes:
            owners = {owner.get(p.key) for p in c.pods}
            if len(owners) != 1 or None in owners:
                if any(o is not None and o[0] in pending for o in owners):
                    raise ValueError(
                        f"pods of several Kueue PodSets share one class ({sorted(map(str, owners))})"
                    )
                continue
            (o,) = owners
            assert o is not None
            if o[0] in pending:
                out[o].append(c.index)
        return cls(dict(out))


def _layout(inst: Instance, objective: str) -> Layout:
    state = _state(inst)
    if state is None:
        return Layout()
    kc = KueueClasses.of(inst, state)
    return Layout(
        per_node={c: inst.classes[c].size for cs in kc.by_podset.values() for c in cs},
        output=kc,
    )


def _path_domains(inst: Instance, levels: tuple[str, ...], level: str) -> list[tuple | None]:
    """Per node: its domain at ``level`` as the path of values down to it (None: unlabelled)."""
    depth = levels.index(level) + 1 if level in levels else None
    keys = levels[:depth] if depth else (level,)
    out: list[tuple | None] = []
    for node in inst.cluster.nodes:
        vals = tuple(node.labels.get(k) for k in keys)
        out.append(None if None in vals else vals)
    return out


@dataclass
class KueueChoice:
    """The family's variables, for decoding the Result's ``kueue`` part."""

    adm: dict[str, cp_model.IntVar] = field(default_factory=dict)
    flavor: dict[tuple[str, str, int, str], cp_model.IntVar] = field(default_factory=dict)
    """(Workload, PodSet, resource group index, flavor) -> its choice variable."""


class _Quota:
    def __init__(self, ctx: BuildContext, state: KueueState, kc: KueueClasses) -> None:
        self.ctx, self.state, self.kc = ctx, state, kc
        self.em = ctx.em
        self.inst = self.em.inst
        self.model = self.em.model
        self.tree = QuotaTree.build(state)
        self.nodes = self.inst.cluster.nodes
        self.out = KueueChoice()
        self.usage: dict[tuple[str, str, str], list] = defaultdict(list)
        """(cq, flavor, resource) -> terms (coefficient * variable)."""

    def classes(self, wl: KueueWorkload, ps: KueuePodSet) -> list[int]:
        return self.kc.by_podset.get((wl.key, ps.name), [])

    def build(self) -> KueueChoice:
        from gangplan.solver.kueue.derive import flavor_allowed

        em, model = self.em, self.model
        for wl in self.state.pending():
            cq, why = queue_check(self.inst.cluster, self.state, wl)
            all_classes = [c for ps in wl.podsets for c in self.classes(wl, ps)]
            if why is not None or cq is None:
                for c in all_classes:
                    model.add(em.placed[c] == 0)
                continue
            adm = em.new_aux(
                0, 1, lambda cnt, cs=tuple(all_classes): int(any(cnt.total(c) for c in cs))
            )
            self.out.adm[wl.key] = adm
            for c in all_classes:
                model.add(em.placed[c] <= self.inst.classes[c].size * adm)
            for ps in wl.podsets:
                self._podset(wl, ps, cq, adm, flavor_allowed)
        for cap in self.tree.caps():
            terms = [
                t
                for q in cap.cluster_queues
                for t in self.usage.get((q, cap.flavor, cap.resource), [])
            ]
            held = sum(
                self._recorded.get((q, cap.flavor, cap.resource), 0) for q in cap.cluster_queues
            )
            if terms:
                model.add(
                    cp_model.LinearExpr.weighted_sum([v for _, v in terms], [k for k, _ in terms])
                    <= cap.value - held
                )
        return self.out

    @property
    def _recorded(self) -> dict[tuple[str, str, str], int]:
        if not hasattr(self, "_rec"):
            usage = self.tree.usage_from(self.state.admitted())
            rec: dict[tuple[str, str, str], int] = {}
            for cq in self.tree.cluster_queues:
                for (f, r), q in usage.of_cluster_queue(cq).items():
                    rec[(cq, f, r)] = q
            self._rec = rec
        return self._rec

    def _podset(self, wl, ps: KueuePodSet, cq: ClusterQueue, adm, flavor_allowed) -> None:
        em, model, inst = self.em, self.model, self.inst
        classes = self.classes(wl, ps)
        wanted = [r for r, q in sorted(ps.requests.items()) if q > 0]
        groups = []
        for r in wanted:
            g = next(
                (i for i, rg in enumerate(cq.resource_groups) if r in rg.covered_resources), None
            )
            if g is None:  # Kueue: "resource r unavailable in ClusterQueue": never admitted
                model.add(adm == 0)
                return
            if g not in groups:
                groups.append(g)
        allow_sets: list[list[tuple[set[int], cp_model.IntVar]]] = []
        for g in groups:
            rg = cq.resource_groups[g]
            choices = []
            for fq in rg.flavors:
                flavor = self.state.flavors.get(fq.name)
                if flavor is None or not flavor_allowed(self.state, cq, g, ps, fq.name):
                    continue
                nodes = {
                    i
                    for i, n in enumerate(inst.cluster.nodes)
                    if all(n.labels.get(k) == v for k, v in flavor.node_labels.items())
                }

                def value(cnt: Counts, cs=tuple(classes), g=g, name=fq.name) -> int:
                    on = [self.nodes[n] for c in cs for n, k in cnt.per_class[c].items() if k]
                    return int(implied_flavor(self.state, cq, g, ps, on) == name)

                var = em.new_aux(0, 1, value)
                self.out.flavor[(wl.key, ps.name, g, fq.name)] = var
                choices.append((nodes, var))
                for r in rg.covered_resources:
                    q = ps.requests.get(r, 0) * ps.count
                    if q:
                        self.usage[(cq.name, fq.name, r)].append((q, var))
            if not choices:
                model.add(adm == 0)
                return
            model.add(cp_model.LinearExpr.sum([v for _, v in choices]) == adm)
            allow_sets.append(choices)
        for c in classes:
            for n, var in em.x[c].items():
                for choices in allow_sets:
                    fitting = [v for nodes, v in choices if n in nodes]
                    ub = em.x_ub[c][n]
                    if not fitting:
                        model.add(var == 0)
                    else:
                        model.add(var <= ub * cp_model.LinearExpr.sum(fitting))
        self._topology(wl, ps, classes, adm)

    def _levels(self, cq: ClusterQueue) -> tuple[str, ...]:
        return topology_levels(
            self.inst.cluster, self.state, (f.name for rg in cq.resource_groups for f in rg.flavors)
        )

    def _topology(self, wl: KueueWorkload, ps: KueuePodSet, classes: list[int], adm) -> None:
        tr = ps.topology_request
        if tr is None or not classes:
            return
        cq = self.state.cluster_queue_of(wl)
        levels = self._levels(cq) if cq else ()
        em, model = self.em, self.model
        if tr.required:
            doms = _path_domains(self.inst, levels, tr.required)
            by_dom: dict[tuple, list] = defaultdict(list)
            for c in classes:
                for n, var in em.x[c].items():
                    if doms[n] is None:
                        model.add(var == 0)
                    else:
                        by_dom[doms[n]].append((c, n, var))
            picks = []
            for _d, items in sorted(by_dom.items()):
                members = frozenset(n for _, n, _ in items)
                u = em.new_aux(
                    0,
                    1,
                    lambda cnt, cs=tuple(classes), m=members: int(
                        any(cnt.in_nodes(c, m) for c in cs)
                    ),
                )
                ub = sum(em.x_ub[c][n] for c, n, _ in items)
                model.add(cp_model.LinearExpr.sum([v for _, _, v in items]) <= ub * u)
                picks.append(u)
            if picks:
                model.add(cp_model.LinearExpr.sum(picks) <= adm)
        layers = list(tr.slice_constraints)
        if tr.slice_required and tr.slice_size and not layers:
            layers = [(tr.slice_required, tr.slice_size)]
        for level, size in layers:
            if size <= 1:
                continue
            doms = _path_domains(self.inst, levels, level)
            by_dom = defaultdict(list)
            for c in classes:
                for n, var in em.x[c].items():
                    if doms[n] is not None:
                        by_dom[doms[n]].append((c, n, var))
                    else:
                        model.add(var == 0)
            for _d, items in sorted(by_dom.items()):
                members = frozenset(n for _, n, _ in items)
                ub = sum(em.x_ub[c][n] for c, n, _ in items) // size
                k = em.new_aux(
                    0,
                    ub,
                    lambda cnt, cs=tuple(classes), m=members, s=size: (
                        sum(cnt.in_nodes(c, m) for c in cs) // s
                    ),
                )
                model.add(cp_model.LinearExpr.sum([v for _, _, v in items]) == size * k)


def _build(ctx: BuildContext) -> KueueChoice | None:
    state = _state(ctx.em.inst)
    if state is None:
        return None
    kc = ctx.outputs.get(KueueClasses)
    return _Quota(ctx, state, kc).build()


FAMILY = Family(name=QUOTA, layout=_layout, build=_build)

__all__ = ["FAMILY", "KueueChoice", "KueueClasses", "QUOTA", "podset_of_pods"]
