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
  flavors Kueue's assigner may give it (:func:`gangplan.solver.kueue.flavors.flavor_allowed`:
  the flavor's nodeLabels against the PodSet's nodeSelector / required node affinity, the flavor's
  taints against its tolerations). A pod lands only on a node every chosen flavor's nodeLabels
  select, which is what the injected nodeSelector does: statically, a class may use only the
  nodes some allowed flavor of each group selects (the family's mask); where a group allows one
  flavor that is all (``fl = adm``, and the class stays pooled); where it allows several,
  ``sum(x[c, n] for n the flavor's nodes) <= size * fl[f]`` per flavor (per-node counts).
* Quota: the usage of each ClusterQueue in each flavor and resource is the admitted Workloads'
  (recorded ones as constants) and every cap of the quota tree holds
  (:meth:`gangplan.predicates.quota.QuotaTree.caps`: nominal quota, cohort borrowing, borrowing
  and lending limits; the same rule the greedy admission and the validator read).
* TAS: a PodSet with a topology request is placed whole or not at all (Kueue's TAS admits it
  only with a domain for every pod); one that requires a level is placed in one domain of it (a
  domain is the path of label values down to that level, as Kueue's tree has it); a slice
  requirement puts its pods in each domain of the slice level in whole slices
  (``count in d == size * k[d]``), for every layer of a multi-layer request. Should kube-scheduler
  bind only part of a TAS Workload Kueue admitted (another pending pod took its node first), the
  greedy run is outside this model and the diff names the family.

Not modelled (the Result says so in its warnings): Kueue's preemption, PodSet groups placed
together, preferred levels (a preference, not a rule), partial admission (``minCount``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model

from gangplan.models.kueue import ClusterQueue, KueuePodSet, KueueState, KueueWorkload, domain_path
from gangplan.predicates.quota import QuotaTree
from gangplan.solver.exact.eligibility import ClassView, Conditions
from gangplan.solver.exact.family import BuildContext, Family, Layout
from gangplan.solver.exact.gang import LeafAdmission
from gangplan.solver.exact.instance import Instance
from gangplan.solver.exact.variables import Counts
from gangplan.solver.kueue.derive import topology_levels
from gangplan.solver.kueue.flavors import flavor_allowed
from gangplan.solver.kueue.queues import queue_check

QUOTA = "kueue-quota"


@dataclass
class GroupChoice:
    """One resource group a PodSet requests from: the flavors it may take, with their nodes."""

    index: int
    flavors: list[tuple[str, np.ndarray]]
    """(flavor, bool per node: its nodeLabels select the node), in the ClusterQueue's order."""


@dataclass
class PodSetPlan:
    workload: KueueWorkload
    podset: KueuePodSet
    cq: ClusterQueue | None
    """None when Kueue would never admit the Workload (its pods are then never placed)."""
    classes: list[int]
    groups: list[GroupChoice] = field(default_factory=list)
    nodes: np.ndarray | None = None
    """Bool per node: some allowed flavor of every group selects it."""

    @property
    def choosing(self) -> bool:
        """Does some group leave a choice between flavors with different nodes?"""
        return any(
            len({m.tobytes() for _, m in g.flavors}) > 1 for g in self.groups if len(g.flavors) > 1
        )

    @property
    def topology(self) -> bool:
        tr = self.podset.topology_request
        return tr is not None and bool(tr.required or tr.slice_required or tr.slice_constraints)


@dataclass
class KueuePlan:
    """Per pending PodSet its classes, ClusterQueue, allowed flavors and nodes; decided once per
    model (the family's layout, mask and build all read it)."""

    podsets: list[PodSetPlan]
    of_class: dict[int, PodSetPlan]
    workload_classes: dict[str, list[int]] = field(default_factory=dict)
    """Every Workload not finished with a pending pod -> the classes of its pending pods (a
    recorded admission's included): what "runs whole" counts."""

    @classmethod
    def of(cls, inst: Instance, state: KueueState) -> KueuePlan:
        owner = state.pod_owners()
        pending = {w.key: w for w in state.pending()}
        alive = {w.key for w in state.workloads.values() if not w.finished}
        by_podset: dict[tuple[str, str], list[int]] = defaultdict(list)
        workload_classes: dict[str, list[int]] = defaultdict(list)
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
                by_podset[o].append(c.index)
            if o[0] in alive:
                workload_classes[o[0]].append(c.index)
        nodes = inst.cluster.nodes
        label_masks: dict[str, np.ndarray] = {}

        def selects(flavor: str) -> np.ndarray:
            if flavor not in label_masks:
                f = state.flavors[flavor]
                label_masks[flavor] = np.array([f.selects(n.labels) for n in nodes], dtype=bool)
            return label_masks[flavor]

        levels = {t.name: t.levels for t in inst.cluster.topologies}
        plans: list[PodSetPlan] = []
        for wl in pending.values():
            cq, why = queue_check(inst.cluster, state, wl)
            for ps in wl.podsets:
                plan = PodSetPlan(wl, ps, None if why else cq, by_podset.get((wl.key, ps.name), []))
                plans.append(plan)
                if plan.cq is None:
                    plan.nodes = np.zeros(len(nodes), dtype=bool)
                    continue
                mask = np.ones(len(nodes), dtype=bool)
                for g in _groups_of(plan.cq, ps):
                    if g is None:  # a resource no group covers: Kueue never admits it
                        mask[:] = False
                        plan.groups = []
                        break
                    rg = plan.cq.resource_groups[g]
                    allowed = [
                        (fq.name, selects(fq.name))
                        for fq in rg.flavors
                        if fq.name in state.flavors
                        and flavor_allowed(state, plan.cq, g, ps, fq.name, levels)
                    ]
                    plan.groups.append(GroupChoice(g, allowed))
                    mask &= np.logical_or.reduce([m for _, m in allowed]) if allowed else False
                plan.nodes = mask
        of_class = {c: p for p in plans for c in p.classes}
        return cls(plans, of_class, dict(workload_classes))


def _groups_of(cq: ClusterQueue, ps: KueuePodSet) -> list[int | None]:
    out: list[int | None] = []
    for r, q in sorted(ps.requests.items()):
        if q <= 0:
            continue
        g = next((i for i, rg in enumerate(cq.resource_groups) if r in rg.covered_resources), None)
        if g not in out:
            out.append(g)
    return out


def plan_of(inst: Instance) -> KueuePlan | None:
    """The Instance's :class:`KueuePlan`, made once and kept on it (None without Kueue)."""
    state = getattr(inst.cluster, "kueue", None)
    if state is None:
        return None
    plan = inst.__dict__.get("_kueue_plan")
    if plan is None:
        plan = inst.__dict__["_kueue_plan"] = KueuePlan.of(inst, state)
    return plan


def _mask(view: ClassView, cond: Conditions) -> np.ndarray | None:
    plan = plan_of(view.inst)
    p = plan.of_class.get(view.cls.index) if plan is not None else None
    return None if p is None else p.nodes


def _layout(inst: Instance, objective: str) -> Layout:
    plan = plan_of(inst)
    if plan is None:
        return Layout()
    return Layout(
        per_node={
            c: inst.classes[c].size
            for p in plan.podsets
            if p.cq is not None and (p.choosing or p.topology)
            for c in p.classes
        }
    )


def _path_domains(inst: Instance, levels: tuple[str, ...], level: str) -> list[tuple | None]:
    """Per node: its domain at ``level`` (:func:`gangplan.models.kueue.domain_path`)."""
    return [domain_path(node.labels, levels, level) for node in inst.cluster.nodes]


@dataclass
class KueueChoice:
    """The family's variables, for decoding the Result's ``kueue`` part."""

    adm: dict[str, cp_model.IntVar] = field(default_factory=dict)
    flavor: dict[tuple[str, str, int, str], cp_model.LinearExprT] = field(default_factory=dict)
    """(Workload, PodSet, resource group index, flavor) -> its choice (a variable, or ``adm``
    where the group allows one flavor)."""
    full: dict[str, cp_model.IntVar] = field(default_factory=dict)
    """Workload -> 1 only when every pending pod of it is placed (it runs whole): the objective's
    admission tiers count its entities only then
    (:func:`gangplan.models.objective.kueue_incomplete`, :mod:`.objective`)."""
    workload_of_class: dict[int, str] = field(default_factory=dict)


class _Quota:
    def __init__(self, ctx: BuildContext, state: KueueState, plan: KueuePlan) -> None:
        self.ctx, self.state, self.plan = ctx, state, plan
        self.em = ctx.em
        self.inst = self.em.inst
        self.model = self.em.model
        self.tree = QuotaTree.build(state)
        self.out = KueueChoice()
        self.usage: dict[tuple[str, str, str], list] = defaultdict(list)
        """(cq, flavor, resource) -> terms (coefficient, variable)."""
        self.enforce = ctx.enforces(QUOTA)

    def rule(self, constraint) -> None:
        """A constraint of Kueue's rules: left out when ``check_feasible`` drops the family to
        name it (the variables and the objective's ``full`` stay)."""
        if self.enforce:
            self.model.add(constraint)

    def build(self) -> KueueChoice:
        em = self.em
        by_wl: dict[str, list[PodSetPlan]] = defaultdict(list)
        for p in self.plan.podsets:
            by_wl[p.workload.key].append(p)
        for key, plans in by_wl.items():
            classes = tuple(c for p in plans for c in p.classes)
            if plans[0].cq is None:
                for c in classes:
                    self.rule(em.placed[c] == 0)
                continue
            adm = em.new_aux(0, 1, lambda cnt, cs=classes: int(any(cnt.total(c) for c in cs)))
            self.out.adm[key] = adm
            for c in classes:
                self.rule(em.placed[c] <= self.inst.classes[c].size * adm)
            self._link_groups(set(classes), adm)
            for p in plans:
                self._podset(p, adm)
        for key, classes in self.plan.workload_classes.items():
            sizes = tuple((c, self.inst.classes[c].size) for c in classes)
            full = em.new_aux(
                0, 1, lambda cnt, sz=sizes: int(all(cnt.total(c) == n for c, n in sz))
            )
            for c, n in sizes:
                self.model.add(em.placed[c] >= n * full)
                self.out.workload_of_class[c] = key
            self.out.full[key] = full
        recorded = self._recorded()
        for cap in self.tree.caps():
            terms = [
                t
                for q in cap.cluster_queues
                for t in self.usage.get((q, cap.flavor, cap.resource), [])
            ]
            held = sum(recorded.get((q, cap.flavor, cap.resource), 0) for q in cap.cluster_queues)
            if terms:
                self.rule(
                    cp_model.LinearExpr.weighted_sum([v for _, v in terms], [k for k, _ in terms])
                    <= cap.value - held
                )
        return self.out

    def _link_groups(self, classes: set[int], adm) -> None:
        """``adm >= act[g]`` for every leaf PodGroup made only of the Workload's pods: a group
        that gets a pod admits the Workload, which then holds its whole request. Implied in
        whole numbers (``placed <= size * adm``); in the relaxation it charges a group's whole
        quota, not one pod's share of it, which is what bounds the admission tier."""
        leaves = self.ctx.outputs.find(LeafAdmission)
        if leaves is None:
            return
        for key, leaf in self.inst.leaves.items():
            if not leaf.classes or not set(leaf.classes) <= classes:
                continue
            act = leaves.act.get(key)
            if act is None or isinstance(act, (bool, int)):
                if act:
                    self.rule(adm == 1)
                continue
            self.rule(adm >= act)

    def _recorded(self) -> dict[tuple[str, str, str], int]:
        usage = self.tree.usage_from(self.state.admitted())
        rec: dict[tuple[str, str, str], int] = {}
        for cq in self.tree.cluster_queues:
            for (f, r), q in usage.of_cluster_queue(cq).items():
                rec[(cq, f, r)] = q
        return rec

    def _podset(self, p: PodSetPlan, adm) -> None:
        em = self.em
        cq, ps, classes = p.cq, p.podset, p.classes
        assert cq is not None
        if not p.groups or any(not g.flavors for g in p.groups):
            self.rule(adm == 0)
            return
        admitted = self._admitted_count(p, adm)
        for g in p.groups:
            choices = []
            if len(g.flavors) == 1:
                choices = [(g.flavors[0][0], adm)]
            else:
                for name, nodes in g.flavors:
                    var = em.new_aux(0, 1, self._flavor_value(p, g, name))
                    choices.append((name, var))
                    for c in classes:
                        xs = [v for n, v in em.x[c].items() if nodes[n]] if em.private[c] else []
                        if xs:
                            self.rule(
                                cp_model.LinearExpr.sum(xs) <= self.inst.classes[c].size * var
                            )
                self.rule(cp_model.LinearExpr.sum([v for _, v in choices]) == adm)
            rg = cq.resource_groups[g.index]
            for name, var in choices:
                self.out.flavor[(p.workload.key, ps.name, g.index, name)] = var
                pods = self._pods_in(p, admitted, var, len(choices) == 1, name, g)
                for r in rg.covered_resources:
                    req = ps.requests.get(r, 0)
                    if req and pods is None:
                        self.usage[(cq.name, name, r)].append((req * ps.count, var))
                    elif req:
                        self.usage[(cq.name, name, r)].append((req, pods))
        self._topology(p, adm, admitted)

    def _admitted_count(self, p: PodSetPlan, adm):
        """Partial admission (a PodSet with ``minCount``): how many of its pods Kueue admits,
        ``minCount <= k <= count`` when admitted, 0 otherwise; the quota then counts ``k`` pods and
        at most ``k`` are placed. None for a PodSet admitted whole (``count`` pods)."""
        ps, em = p.podset, self.em
        lo = ps.min_count
        if lo is None or lo >= ps.count:
            return None
        classes = tuple(p.classes)

        def value(cnt: Counts) -> int:
            placed = sum(cnt.total(c) for c in classes)
            return max(lo, placed) if placed else 0

        k = em.new_aux(0, ps.count, value)
        self.rule(k >= lo * adm)
        self.rule(k <= ps.count * adm)
        self.rule(cp_model.LinearExpr.sum([em.placed[c] for c in classes]) <= k)
        return k

    def _pods_in(self, p: PodSetPlan, admitted, var, only: bool, name: str, g: GroupChoice):
        """The admitted pods the PodSet's quota counts in flavor ``name`` (None: its whole
        ``count`` times the choice ``var``)."""
        if admitted is None:
            return None
        if only:  # the one flavor of the group: every admitted pod
            return admitted
        ps, em = p.podset, self.em
        flavor_value = self._flavor_value(p, g, name)
        classes = tuple(p.classes)
        lo = ps.min_count or 0

        def value(cnt: Counts) -> int:
            placed = sum(cnt.total(c) for c in classes)
            return (max(lo, placed) if placed else 0) * flavor_value(cnt)

        k_f = em.new_aux(0, ps.count, value)
        self.rule(k_f <= ps.count * var)
        self.rule(k_f >= lo * var)
        self.rule(k_f <= admitted)
        self.rule(k_f >= admitted - ps.count * (1 - var))
        return k_f

    def _flavor_value(self, p: PodSetPlan, g: GroupChoice, name: str):
        """The hint value of ``fl``: the first allowed flavor, in the ClusterQueue's order, whose
        nodes hold every placed pod of the PodSet (:func:`gangplan.solver.kueue.derive.implied_flavor`'s
        rule, on the plan's masks)."""
        classes = tuple(p.classes)

        def value(cnt: Counts) -> int:
            on = [n for c in classes for n, k in cnt.per_class[c].items() if k]
            if not on:
                return 0
            first = next((f for f, m in g.flavors if all(m[n] for n in on)), None)
            return int(first == name)

        return value

    def _is_tas(self, p: PodSetPlan) -> bool:
        """Does Kueue place the PodSet with TAS: an explicit topology request, or only TAS
        flavors to choose from (a TAS-only ClusterQueue implies it)?"""
        tr = p.podset.topology_request
        if tr is not None and (
            tr.required
            or tr.preferred
            or tr.unconstrained
            or tr.slice_required
            or tr.slice_constraints
        ):
            return True
        names = [f for g in p.groups for f, _ in g.flavors]
        return bool(names) and all(self.state.flavors[f].topology_name for f in names)

    def _topology(self, p: PodSetPlan, adm, admitted=None) -> None:
        if not p.classes or p.cq is None or not self._is_tas(p):
            return
        tr = p.podset.topology_request
        em, classes = self.em, p.classes
        # Kueue's TAS admits a PodSet only with a domain for every admitted pod
        # (findTopologyAssignment places all of them or fails): whole or not at all.
        total = sum(self.inst.classes[c].size for c in classes)
        placed = cp_model.LinearExpr.sum([em.placed[c] for c in classes])
        self.rule(placed == (total * adm if admitted is None else admitted))
        if tr is None:
            return
        levels = topology_levels(
            self.inst.cluster,
            self.state,
            (f.name for rg in p.cq.resource_groups for f in rg.flavors),
        )
        if tr.required:
            doms = _path_domains(self.inst, levels, tr.required)
            by_dom: dict[tuple, list] = defaultdict(list)
            for c in classes:
                for n, var in em.x[c].items():
                    if doms[n] is None:
                        self.rule(var == 0)
                    else:
                        by_dom[doms[n]].append((c, n, var))
            picks = []
            total = sum(self.inst.classes[c].size for c in classes)
            # the fewest pods Kueue may admit: all of them, or minCount with partial admission
            least = total if admitted is None else max(1, p.podset.min_count or 1)
            for _d, items in sorted(by_dom.items()):
                ub = sum(em.x_ub[c][n] for c, n, _ in items)
                if ub < least:  # the domain cannot hold what Kueue admits, even empty of others
                    for _, _, v in items:
                        self.rule(v == 0)
                    continue
                members = frozenset(n for _, n, _ in items)
                u = em.new_aux(
                    0,
                    1,
                    lambda cnt, cs=tuple(classes), m=members: int(
                        any(cnt.in_nodes(c, m) for c in cs)
                    ),
                )
                here = cp_model.LinearExpr.sum([v for _, _, v in items])
                if admitted is None:  # in one domain, whole: it holds all ``total`` pods or none
                    self.rule(here == total * u)
                else:  # partial admission: the admitted pods, all in this one domain
                    self.rule(here <= min(ub, total) * u)
                picks.append(u)
            if picks:
                self.rule(cp_model.LinearExpr.sum(picks) <= adm)
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
                        self.rule(var == 0)
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
                self.rule(cp_model.LinearExpr.sum([v for _, _, v in items]) == size * k)


def _build(ctx: BuildContext) -> KueueChoice | None:
    plan = plan_of(ctx.em.inst)
    if plan is None:
        return None
    return _Quota(ctx, ctx.em.inst.cluster.kueue, plan).build()


FAMILY = Family(name=QUOTA, mask=_mask, layout=_layout, build=_build)

__all__ = ["FAMILY", "KueueChoice", "KueuePlan", "QUOTA", "plan_of"]
