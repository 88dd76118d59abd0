"""Volcano ``PodGroup`` (``scheduling.volcano.sh/v1beta1``) and ``HyperNode``
(``topology.volcano.sh/v1alpha1``) -> native gangs with topology keys.

Sources (docs/upstream-foreign-apis.md §2): volcano-sh/apis @ 536f121f
``pkg/apis/scheduling/v1beta1/types.go``, ``labels.go`` (``scheduling.k8s.io/group-name``) and
``pkg/apis/topology/v1alpha1/hypernode_types.go``; volcano-sh/volcano @ ed72c7c8
``pkg/scheduler/api/job_info.go`` (``IsReady``, ``CheckTaskReady`` / ``CheckTaskValid``: per-task
minima count only when ``minMember >= sum(minTaskMember)``; ``MinSubJobs``),
``pkg/scheduler/api/sub_job_info.go`` (sub-jobs of ``subGroupSize`` pods, split by
``matchLabelKeys``), ``docs/user-guide/how_to_use_network_topology_aware_scheduling.md``.

Translation, per PodGroup (pods join by the annotation ``scheduling.k8s.io/group-name``):

* plain: one gang PodGroup, ``minCount = max(minMember, 1)``;
* ``subGroupPolicy``: a gang CompositePodGroup (the PodGroup's name) over one gang PodGroup per
  sub-job (``<name>-<policy>[-<matchLabelKeys values>]``, ``minCount = subGroupSize``, the policy's
  own ``networkTopology``), ``minGroupCount = max(sum(minSubGroups), ceil(minMember /
  subGroupSize))`` (approximate: ``minMember`` counts pods, a CompositePodGroup counts groups;
  warned when it matters); pods no policy selects form ``<name>-rest`` (gang of 1, warned);
* ``minTaskMember`` where Volcano enforces it (``minMember >= sum``): a gang CompositePodGroup
  over one gang PodGroup per task (``volcano.sh/task-spec``), ``minCount`` = the task's minimum,
  ``minGroupCount`` = the tasks with a minimum; a remainder ``minMember - sum`` is warned;
  ignored (noted) where Volcano ignores it;
* ``priorityClassName`` -> every translated group's ``priorityClassName`` (its pods take that
  priority, as Volcano orders jobs by it);
* ``networkTopology`` ``hard`` with ``highestTierAllowed`` t (or ``highestTierName``): the job must
  fit in one HyperNode of the highest tier <= t, i.e. ``schedulingConstraints.topology`` with the
  node label that tier maps to (below); ``soft``: ``gangplan.io/preferred-topology`` with that key
  (exact engine only: upstream has no soft topology);
* ``queue``, ``minResources`` (queue admission), ``status``: ignored.

A HyperNode tier maps to node label k when every node of the tier's HyperNodes carries k, every
HyperNode's nodes share one value, different HyperNodes have different values and no other node
has k (the label discoverer's ``volcano.sh/hypernode``, the benchmark's ``topology-rack``). When
no label does, gangplan synthesizes ``gangplan.io/volcano-tier-<t>`` on the nodes (value: the
HyperNode name) and says so. Members are selected like Volcano does: ``exactMatch.name``,
``regexMatch.pattern`` (Go ``regexp.MatchString``: unanchored), ``labelMatch`` (nodes only).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from gangplan.io.fields import Ctx
from gangplan.io.foreign.common import PREFERRED, Env, Hierarchy, read_objects
from gangplan.io.parse import parse_label_selector
from gangplan.models.objects import CompositePodGroup, LabelSelector, PodGroup
from gangplan.predicates.labels import selector_matches

API = "scheduling.volcano.sh/v1beta1"
HN_API = "topology.volcano.sh/v1alpha1"
ANNOTATION = "scheduling.k8s.io/group-name"
TASK = "volcano.sh/task-spec"
SCHEDULERS = ("volcano",)
TIER_LABEL = "gangplan.io/volcano-tier-"
_KNOWN = {
    "minMember",
    "minTaskMember",
    "queue",
    "priorityClassName",
    "minResources",
    "networkTopology",
    "subGroupPolicy",
}


@dataclass
class _HyperNode:
    name: str
    tier: int
    tier_name: str
    members: list[tuple[str, str, object]]  # (type, how, value)
    ctx: Ctx


class HyperNodes:
    """The snapshot's HyperNodes and the node label each tier maps to."""

    def __init__(self, env: Env, objects: list[tuple[str, dict]]) -> None:
        self.env = env
        self.h: dict[str, _HyperNode] = {}
        for file, raw in objects:
            meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
            ctx = Ctx(file, f"HyperNode/{meta.get('name', '?')}")
            m = ctx.map(raw.get("metadata"), "metadata", required=True)
            name = ctx.str(m.get("name"), "metadata.name", required=True)
            spec = ctx.map(raw.get("spec"), "spec", required=True)
            members = []
            for f, mem in ctx.maps(spec.get("members"), "spec.members"):
                typ = ctx.enum(mem.get("type"), f + ".type", ("Node", "HyperNode"), default="")
                sel = ctx.map(mem.get("selector"), f + ".selector", required=True)
                if sel.get("exactMatch") is not None:
                    members.append(
                        (
                            typ,
                            "exact",
                            ctx.str(
                                ctx.map(sel["exactMatch"], f + ".selector.exactMatch").get("name"),
                                f + ".selector.exactMatch.name",
                                required=True,
                            ),
                        )
                    )
                elif sel.get("regexMatch") is not None:
                    pat = ctx.str(
                        ctx.map(sel["regexMatch"], f + ".selector.regexMatch").get("pattern"),
                        f + ".selector.regexMatch.pattern",
                        required=True,
                    )
                    try:
                        members.append((typ, "regex", re.compile(pat)))
                    except re.error as e:
                        raise ctx.fail(
                            f + ".selector.regexMatch.pattern", f"invalid regular expression: {e}"
                        ) from None
                elif sel.get("labelMatch") is not None:
                    if typ != "Node":
                        raise ctx.fail(
                            f + ".selector.labelMatch", "labelMatch selects nodes only (type: Node)"
                        )
                    members.append(
                        (
                            typ,
                            "label",
                            parse_label_selector(ctx, sel["labelMatch"], f + ".selector.labelMatch")
                            or LabelSelector(),
                        )
                    )
                else:
                    raise ctx.fail(
                        f + ".selector", "must set one of exactMatch, regexMatch, labelMatch"
                    )
            if name in self.h:
                raise ctx.fail(
                    "metadata.name", f"duplicate object (first defined in {self.h[name].ctx.file})"
                )
            self.h[name] = _HyperNode(
                name,
                ctx.int(spec.get("tier"), "spec.tier", required=True, minimum=0),
                ctx.str(spec.get("tierName"), "spec.tierName"),
                members,
                ctx,
            )
        self._nodes: dict[str, frozenset[str]] = {}
        self._keys: dict[int, str] = {}

    def nodes_of(self, name: str, stack: tuple[str, ...] = ()) -> frozenset[str]:
        if name in self._nodes:
            return self._nodes[name]
        h = self.h[name]
        if name in stack:
            raise h.ctx.fail(
                "spec.members", f"HyperNode members form a cycle: {' -> '.join((*stack, name))}"
            )
        out: set[str] = set()
        nodes = self.env.b.nodes
        for typ, how, value in h.members:
            if typ == "Node":
                if how == "exact":
                    out.update({value} & set(nodes))
                elif how == "regex":
                    out.update(n for n in nodes if value.search(n))  # type: ignore[union-attr]
                else:
                    out.update(
                        n for n, node in nodes.items() if selector_matches(value, node.labels)
                    )  # type: ignore[arg-type]
            else:
                names = [value] if how == "exact" else [x for x in self.h if value.search(x)]  # type: ignore[union-attr]
                for x in names:
                    if x in self.h:
                        out.update(self.nodes_of(x, (*stack, name)))
        self._nodes[name] = frozenset(out)
        return self._nodes[name]

    def tiers(self) -> list[int]:
        return sorted({h.tier for h in self.h.values()})

    def tier_by_name(self, name: str) -> int | None:
        return next(
            (h.tier for h in sorted(self.h.values(), key=lambda h: h.tier) if h.tier_name == name),
            None,
        )

    def key_of(self, tier: int) -> str:
        """The node label whose values are the HyperNodes of ``tier`` (synthesized if none is)."""
        if tier in self._keys:
            return self._keys[tier]
        hns = sorted((h for h in self.h.values() if h.tier == tier), key=lambda h: h.name)
        sets = [self.nodes_of(h.name) for h in hns]
        covered = frozenset().union(*sets)
        nodes = self.env.b.nodes
        candidates = sorted({k for n in covered for k in nodes[n].labels})
        for k in candidates:
            if {n for n, node in nodes.items() if k in node.labels} != covered:
                continue
            values = [{nodes[n].labels[k] for n in s} for s in sets]
            if all(len(v) == 1 for v in values) and len({next(iter(v)) for v in values}) == len(
                values
            ):
                self._keys[tier] = k
                return k
        key = f"{TIER_LABEL}{tier}"
        owner: dict[str, str] = {}
        for h, s in zip(hns, sets, strict=True):
            for n in s:
                if n in owner:
                    self.env.note(
                        "HyperNode",
                        "spec.members",
                        f"node {n} is in two tier-{tier} HyperNodes: read as a member of the first by name only",
                        owner[n],
                    )
                    continue
                owner[n] = h.name
        for n, hn in owner.items():
            nodes[n] = nodes[n].model_copy(update={"labels": {**nodes[n].labels, key: hn}})
        self.env.synthesized_labels[key] = (
            f"no node label matches the tier-{tier} HyperNodes: nodes carry the synthesized label {key}=<HyperNode name>"
        )
        self._keys[tier] = key
        return key


def _topology(
    env: Env, hyper: HyperNodes, ctx: Ctx, raw: object, fld: str, who: str
) -> tuple[str | None, str | None]:
    """(required key, preferred key) of a ``networkTopology``."""
    nt = ctx.map(raw, fld)
    if not nt:
        return None, None
    mode = ctx.enum(nt.get("mode"), fld + ".mode", ("hard", "soft"), default="hard")
    if nt.get("highestTierAllowed") is not None and nt.get("highestTierName"):
        raise ctx.fail(fld, "highestTierAllowed and highestTierName are mutually exclusive")
    if not hyper.h:
        env.note(
            f"PodGroup ({API})",
            fld,
            "not applied: the snapshot has no HyperNode (topology.volcano.sh)",
            who,
        )
        return None, None
    if nt.get("highestTierName"):
        tier = hyper.tier_by_name(ctx.str(nt.get("highestTierName"), fld + ".highestTierName"))
        if tier is None:
            env.note(
                f"PodGroup ({API})",
                fld + ".highestTierName",
                "not applied: no HyperNode has that tierName",
                who,
            )
            return None, None
    else:
        limit = ctx.int(
            nt.get("highestTierAllowed"), fld + ".highestTierAllowed", default=1, minimum=0
        )
        below = [t for t in hyper.tiers() if t <= limit]
        if not below:
            env.note(
                f"PodGroup ({API})",
                fld + ".highestTierAllowed",
                "not applied: no HyperNode tier is that low",
                who,
            )
            return None, None
        tier = below[-1]
    key = hyper.key_of(tier)
    return (key, None) if mode == "hard" else (None, key)


def translate(
    env: Env, objects: list[tuple[str, dict]], hypernodes: list[tuple[str, dict]]
) -> None:
    hyper = HyperNodes(env, hypernodes)
    if hypernodes:
        env.lines.append(
            f"read {len(hyper.h)} HyperNode ({HN_API}) as topology: "
            + ", ".join(f"tier {t} -> {hyper.key_of(t)}" for t in hyper.tiers())
        )
    if not objects:
        return
    by_pod = env.pods_by_annotation(ANNOTATION)
    shapes: dict[str, int] = {"PodGroup": 0, "CompositePodGroup": 0}
    names, ignored_tasks = [], 0
    for obj in read_objects(objects, "PodGroup", API):
        file, ctx, m, ns, name, spec = (
            obj.file,
            obj.ctx,
            obj.meta,
            obj.namespace,
            obj.name,
            obj.spec,
        )
        who = obj.key
        names.append(who)
        for k in sorted(set(spec) - _KNOWN):
            env.note(f"PodGroup ({API})", f"spec.{k}", "unknown field: not read", who)
        min_member = ctx.int32(spec.get("minMember"), "spec.minMember", minimum=0)
        tasks = {
            ctx.str(k, "spec.minTaskMember"): ctx.int32(v, f"spec.minTaskMember.{k}", minimum=0)
            for k, v in ctx.map(spec.get("minTaskMember"), "spec.minTaskMember").items()
        }
        ctx.resources(spec.get("minResources"), "spec.minResources")
        ctx.str(spec.get("queue"), "spec.queue")
        pclass = ctx.str(spec.get("priorityClassName"), "spec.priorityClassName")
        required, preferred = _topology(
            env, hyper, ctx, spec.get("networkTopology"), "spec.networkTopology", who
        )
        ts = ctx.str(m.get("creationTimestamp"), "metadata.creationTimestamp")
        native = env.free_name(ns, name, "volcano")
        members = by_pod.get((ns, name), [])
        pods = {k: env.b.pods[k][0] for k in members}
        common = dict(namespace=ns, priority_class_name=pclass, creation_timestamp=ts, source=file)
        h = Hierarchy(root=f"{ns}/{native}", from_group=bool(pclass))
        env.hierarchies.append(h)
        policies = ctx.maps(spec.get("subGroupPolicy"), "spec.subGroupPolicy")
        enforced = bool(tasks) and min_member >= sum(tasks.values())
        if tasks and not enforced:
            ignored_tasks += 1

        def leaf(
            lname: str,
            count: int,
            parent: str | None,
            req: str | None,
            pref: str | None,
            keys: list[str],
            h: Hierarchy = h,
            ctx: Ctx = ctx,
            common: dict = common,
        ) -> None:
            pg = PodGroup(
                name=lname,
                policy="gang",
                min_count=max(count, 1),
                topology_key=req,
                parent=parent,
                annotations={PREFERRED: pref} if pref else {},
                api_version=API,
                **common,
            )
            h.keys.append(env.add(pg, ctx))
            for k in keys:
                env.link(k, lname, SCHEDULERS)
                h.pods.append(k)
            shapes["PodGroup"] += 1

        if not policies and not enforced:
            leaf(native, min_member, None, required, preferred, members)
            continue
        children: list[tuple[str, int, str | None, str | None, list[str]]] = []
        if policies:
            if enforced:
                env.note(
                    f"PodGroup ({API})",
                    "spec.minTaskMember",
                    "not combined with subGroupPolicy: only the sub-groups are translated",
                    who,
                )
            assigned: set[str] = set()
            need = 0
            sizes = []
            for f, pol in policies:
                pname = ctx.str(pol.get("name"), f + ".name", required=True)
                size = ctx.int32(pol.get("subGroupSize"), f + ".subGroupSize", default=1, minimum=1)
                need += ctx.int32(pol.get("minSubGroups"), f + ".minSubGroups", minimum=0)
                sizes.append(size)
                sel = parse_label_selector(ctx, pol.get("labelSelector"), f + ".labelSelector")
                keys = ctx.str_list(pol.get("matchLabelKeys"), f + ".matchLabelKeys")
                sreq, spref = _topology(
                    env, hyper, ctx, pol.get("networkTopology"), f + ".networkTopology", who
                )
                jobs: dict[tuple[str, ...], list[str]] = {}
                for k in members:
                    if k in assigned or (
                        sel is not None and not selector_matches(sel, pods[k].labels)
                    ):
                        continue
                    assigned.add(k)
                    jobs.setdefault(tuple(pods[k].labels.get(x, "") for x in keys), []).append(k)
                for values, ks in sorted(jobs.items()):
                    cname = "-".join([native, pname, *[v for v in values if v]])
                    children.append((cname, size, sreq, spref, ks))
            count = max(need, math.ceil(min_member / max(sizes)) if min_member else 0, 1)
            if len(policies) > 1 or min_member % max(sizes):
                env.note(
                    f"PodGroup ({API})",
                    "spec.subGroupPolicy",
                    f"approximate: minMember {min_member} counts pods, the CompositePodGroup needs {count} sub-groups",
                    who,
                )
            rest = [k for k in members if k not in assigned]
            if rest:
                env.note(
                    f"PodGroup ({API})",
                    "spec.subGroupPolicy",
                    "pods no policy selects form a gang of 1 under the job",
                    who,
                )
                children.append((f"{native}-rest", 1, None, None, rest))
        else:
            count = sum(1 for v in tasks.values() if v > 0)
            if min_member > sum(tasks.values()):
                env.note(
                    f"PodGroup ({API})",
                    "spec.minMember",
                    f"approximate: minMember {min_member} exceeds the per-task minima ({sum(tasks.values())}); only the minima are translated",
                    who,
                )
            by_task: dict[str, list[str]] = {}
            for k in members:
                p = pods[k]
                by_task.setdefault(p.annotations.get(TASK) or p.labels.get(TASK) or "", []).append(
                    k
                )
            for task in sorted(set(tasks) | set(by_task)):
                children.append(
                    (
                        f"{native}-{task or 'default'}",
                        tasks.get(task, 0),
                        None,
                        None,
                        by_task.get(task, []),
                    )
                )
        cpg = CompositePodGroup(
            name=native, policy="gang", min_group_count=count, topology_key=required, **common
        )
        h.keys.append(env.add(cpg, ctx))
        shapes["CompositePodGroup"] += 1
        if preferred:
            env.note(
                f"PodGroup ({API})",
                "spec.networkTopology.mode",
                "soft topology of a job with sub-groups is read as the preferred level of each sub-group",
                who,
            )
        for cname, size, sreq, spref, ks in children:
            leaf(env.free_name(ns, cname, "volcano"), size, native, sreq, spref or preferred, ks)
    tail = (
        "; minTaskMember ignored where minMember < its sum (Volcano does not enforce it then)"
        if ignored_tasks
        else ""
    )
    env.lines.append(
        f"translated {len(names)} PodGroup ({API}) -> native {shapes['PodGroup']} gang PodGroups"
        + (
            f", {shapes['CompositePodGroup']} CompositePodGroups"
            if shapes["CompositePodGroup"]
            else ""
        )
        + ": minMember -> gang minCount, minTaskMember / subGroupPolicy -> CompositePodGroup over per-task / per-sub-group gangs, "
        f"priorityClassName kept, networkTopology hard -> topology key of its HyperNode tier, soft -> {PREFERRED}; "
        f"pods by annotation {ANNOTATION}; queue, minResources ignored{tail}: {', '.join(names[:3])}{', ...' if len(names) > 3 else ''}"
    )
