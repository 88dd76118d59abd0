"""KAI-Scheduler ``PodGroup`` (``scheduling.run.ai/v2alpha2``) and ``Topology``
(``kai.scheduler/v1alpha1``) -> native PodGroups and CompositePodGroups.

Sources: NVIDIA/KAI-Scheduler @ 72de64fc8eca10fa8cca26a20156178f3edbe092 (docs/upstream-foreign-apis.md
§3) and, for ``minSubGroup``, the nullable ``minMember`` and segments, the repository's new home
kai-scheduler/KAI-Scheduler @ d5bc503a146317e51037d89775d77172c6d12f71 (2026-08-07, §3.1a):
``pkg/apis/scheduling/v2alpha2/podgroup_types.go`` (``PodGroupSpec.MinMember`` / ``MinSubGroup``
and ``SubGroup.MinMember`` / ``MinSubGroup``, all ``*int32`` with minimum 0, mutually exclusive),
``podgroup_webhook.go`` (what admission refuses: both set, ``minSubGroup`` on a leaf, a leaf without
``minMember``; what it only warns about: ``minSubGroup`` above the number of direct children, and on
update ``minMember`` on a SubGroup with children), ``pkg/scheduler/api/podgroup_info/job_info.go``
(``setSubGroups``: without subGroups one pod set needing ``minMember``, 1 when unset; ``AddTaskInfo``:
"SubGroup not found"), ``subgroup_info/factory.go`` (a leaf needs ``max(minMember, 0)`` pods, unset
is 0; a SubGroup with children and the PodGroup itself take ``minSubGroup``; ``spec.minMember`` is
not used with subGroups), ``subgroup_info/subgroupset.go`` (``GetMinMembersToSatisfy``:
``minSubGroup``, else every direct child; ``GetNumActiveAllocatedDirectSubGroups``: a child counts
once it reaches its own minimum, recursively), ``pkg/common/constants/constants.go`` (annotation
``pod-group-name``, label ``kai.scheduler/subgroup-name``), ``docs/topology/multilevel.md``,
``docs/developer/designs/min-subgroups/README.md``; segments: :mod:`gangplan.io.foreign.kai_segments`.

Translation: without ``subGroups`` one PodGroup, gang with ``minCount = minMember`` (1 when unset),
basic when ``minMember`` is 0 (KAI: "no gang requirement"); with them a gang CompositePodGroup named
like the PodGroup over the tree of SubGroups, each named ``<podgroup>-<subgroup>``: a SubGroup with
children is a gang CompositePodGroup, a leaf a gang PodGroup with ``minCount = minMember``; a
composite's ``minGroupCount`` is its ``minSubGroup``, or the number of its children when unset
(native ``GroupTree.satisfied`` counts children that reached their own minimum, as KAI does);
``parent`` links them; ``topologyConstraint.requiredTopologyLevel`` ->
``schedulingConstraints.topology`` of that group (domains along the KAI ``Topology``'s levels,
:meth:`~gangplan.io.foreign.common.Env.level_key`), ``preferredTopologyLevel`` ->
``gangplan.io/preferred-topology`` (on the leaves); ``priorityClassName`` -> every group's (its
pods take that priority: KAI schedules by the PodGroup's). A leaf whose pods carry
``kai.scheduler/segment-size`` over several segments becomes a gang CompositePodGroup
(``minGroupCount`` = number of segments, as KAI's ``minSubGroup`` for them) over one gang PodGroup
per segment, ``<leaf>-<i>``, with the segment topology.

Warned, because the native model cannot say it: a minimum of 0 below a gang parent (KAI counts
such a leaf or SubGroup as satisfied with nothing placed; native minimums are at least 1: read as
1, so the parent waits for one of its pods), ``minSubGroup`` above the number of children (kept:
never satisfied, as in KAI), fields KAI does not use where they are written, segment annotations
that cannot be split as KAI's pod grouper splits them. A pod naming a SubGroup the PodGroup does
not have, or none while it has SubGroups, is dropped from the group by KAI: it waits (gated). The
documented spelling ``subgroups`` is read with a warning. ``queue``, ``preemptibility``,
``preemptionDelay``, ``stalenessGracePeriod``, ``parallelism`` / ``completions`` /
``backoffLimit``, ``markUnschedulable``, ``schedulingBackoff``: ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gangplan.io.fields import Ctx
from gangplan.io.foreign import kai_segments
from gangplan.io.foreign.common import PREFERRED, Env, ForeignObject, Hierarchy, read_objects
from gangplan.models.objects import CompositePodGroup, PodGroup, TopologyLevels

API = "scheduling.run.ai/v2alpha2"
TOPO_API = "kai.scheduler/v1alpha1"
KIND = f"PodGroup ({API})"
ANNOTATION = "pod-group-name"
SUBGROUP_LABEL = "kai.scheduler/subgroup-name"
SCHEDULERS = ("kai-scheduler",)
_KNOWN = {
    "minMember",
    "minSubGroup",
    "queue",
    "priorityClassName",
    "preemptibility",
    "parallelism",
    "completions",
    "backoffLimit",
    "markUnschedulable",
    "schedulingBackoff",
    "topologyConstraint",
    "subGroups",
    "subgroups",
    "preemptionDelay",
    "stalenessGracePeriod",
}
_SUB_KNOWN = {"name", "minMember", "minSubGroup", "parent", "topologyConstraint"}


def read_topologies(env: Env, objects: list[tuple[str, dict]]) -> dict[str, TopologyLevels]:
    """KAI ``Topology`` objects (same ``spec.levels[].nodeLabel`` shape as Kueue's), also added to
    the snapshot's topologies (after the Kueue ones) for the domain tree."""
    out: dict[str, TopologyLevels] = {}
    from gangplan.io.parse import parse_topology

    for file, raw in objects:
        meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
        t = parse_topology(Ctx(file, f"Topology/{meta.get('name', '?')} ({TOPO_API})"), raw)
        out[t.name] = t
        env.b.topologies[f"{TOPO_API}/{t.name}"] = t
    if out:
        env.lines.append(
            f"read {len(out)} Topology ({TOPO_API}) as topology levels like Kueue's: "
            + "; ".join(f"{n}: {' > '.join(t.levels)}" for n, t in out.items())
        )
    return out


def _constraint(
    env: Env, ctx: Ctx, raw: object, fld: str, topologies: dict[str, TopologyLevels], who: str
) -> tuple[str | None, str | None, str | None]:
    """(native topology key of the required level, preferred level, Topology name)."""
    tc = ctx.map(raw, fld)
    if not tc:
        return None, None, None
    name = ctx.str(tc.get("topology"), fld + ".topology")
    req = ctx.str(tc.get("requiredTopologyLevel"), fld + ".requiredTopologyLevel") or None
    pref = ctx.str(tc.get("preferredTopologyLevel"), fld + ".preferredTopologyLevel") or None
    levels = topologies[name].levels if name in topologies else ()
    if (req or pref) and name not in topologies:
        env.note(
            KIND,
            fld + ".topology",
            "Topology not in the snapshot: the level is read as a plain node label",
            who,
        )
    for lvl, f in ((req, ".requiredTopologyLevel"), (pref, ".preferredTopologyLevel")):
        if lvl and levels and lvl not in levels:
            raise ctx.fail(
                fld + f, f"{lvl!r} is not a level of Topology {name!r} ({', '.join(levels)})"
            )
    return (env.level_key(req, levels) if req else None), pref, name or None


def _count(ctx: Ctx, spec: dict, key: str, fld: str) -> int | None:
    """A nullable ``*int32`` count (minimum 0): None when unset."""
    v = spec.get(key)
    return None if v is None else ctx.int32(v, fld, minimum=0)


@dataclass
class _Group:
    """One translated KAI PodGroup while it is built."""

    env: Env
    obj: ForeignObject
    topologies: dict[str, TopologyLevels]
    common: dict
    hierarchy: Hierarchy
    topology_name: str | None
    shapes: dict[str, int]
    taken: set[str] = field(default_factory=set)

    @property
    def who(self) -> str:
        return self.obj.key

    def note(self, fld: str, message: str) -> None:
        self.env.note(KIND, fld, message, self.who)

    def name(self, wanted: str) -> str:
        """A free native name, also among the names this PodGroup has handed out already."""
        name, n = wanted, 1
        while self.env.taken(self.obj.namespace, name) or name in self.taken:
            name = f"{wanted}-kai" if n == 1 else f"{wanted}-kai-{n}"
            n += 1
        self.taken.add(name)
        return name

    def add(self, g: PodGroup | CompositePodGroup) -> None:
        self.hierarchy.keys.append(self.env.add(g, self.obj.ctx))
        self.shapes["PodGroup" if isinstance(g, PodGroup) else "CompositePodGroup"] += 1

    def link(self, pods: list[str] | tuple[str, ...], group: str) -> None:
        for k in pods:
            self.env.link(k, group, SCHEDULERS)
            self.hierarchy.pods.append(k)

    def need(self, fld: str, value: int | None, children: int) -> int:
        """A composite's ``minGroupCount`` from KAI's ``minSubGroup`` (unset: every child)."""
        if value is None:
            return children
        if value == 0:
            self.note(
                fld,
                "0 (KAI: no gang requirement, children scheduled elastically) has no native equivalent "
                "(minGroupCount is at least 1): read as 1",
            )
            return 1
        if value > children:
            self.note(
                fld,
                f"{value} exceeds the {children} direct children (KAI's webhook only warns; the group is never "
                "satisfied): kept, so the group waits",
            )
        return value

    def leaf(
        self,
        fld: str,
        name: str,
        parent: str | None,
        kai_min: int,
        req: str | None,
        pref: str | None,
        pods: list[str],
        *,
        flat: bool,
    ) -> None:
        """A KAI pod set (a leaf SubGroup, or the PodGroup without subGroups): one PodGroup, or a
        composite over its segments."""
        env = self.env
        seg, why = kai_segments.plan(
            [(k, env.b.pods[k][0]) for k in pods], kai_min, self.topology_name
        )
        where = f"{fld} pods' annotation {kai_segments.SEGMENT_SIZE}"
        if why:
            self.note(where, f"not split into segments: {why}")
        if seg is not None and seg.spans >= 2:
            self._segments(where, name, parent, req, pref, seg)
            return
        if seg is not None:  # every pod in one segment: the leaf is that segment
            key, spref = self._segment_constraint(where, seg)
            req, pref = req or key, pref or spref
        policy, count = "gang", kai_min
        if kai_min == 0 and flat:
            policy, count = "basic", 1
        elif kai_min == 0:
            self.note(
                fld + ".minMember",
                "0 (KAI: satisfied with no pod placed, all its pods elastic) has no native equivalent "
                "below a gang parent (minCount is at least 1): read as 1, so the parent waits for one of its pods",
            )
            count = 1
        self.add(
            PodGroup(
                name=name,
                policy=policy,
                min_count=count,
                topology_key=req,
                parent=parent,
                annotations={PREFERRED: pref} if pref else {},
                api_version=API,
                **self.common,
            )
        )
        self.link(pods, name)

    def _segment_constraint(
        self, where: str, seg: kai_segments.SegmentPlan
    ) -> tuple[str | None, str | None]:
        if seg.topology is None:
            if seg.required or seg.preferred:
                self.note(
                    where,
                    f"no {kai_segments.TOPOLOGY} on the pods or the PodGroup: KAI makes the segments without "
                    "a topology constraint, and so does gangplan",
                )
            return None, None
        levels = self.topologies[seg.topology].levels if seg.topology in self.topologies else ()
        if (seg.required or seg.preferred) and seg.topology not in self.topologies:
            self.note(
                where,
                f"Topology {seg.topology!r} not in the snapshot: the segment level is read as a plain node label",
            )
        for lvl in (seg.required, seg.preferred):
            if lvl and levels and lvl not in levels:
                self.note(
                    where,
                    f"segment level {lvl!r} is not a level of Topology {seg.topology!r} "
                    f"({', '.join(levels)}): read as a plain node label",
                )
        req = seg.required
        return (self.env.level_key(req, levels) if req else None), seg.preferred

    def _segments(
        self,
        where: str,
        name: str,
        parent: str | None,
        req: str | None,
        pref: str | None,
        seg: kai_segments.SegmentPlan,
    ) -> None:
        key, spref = self._segment_constraint(where, seg)
        self.add(
            CompositePodGroup(
                name=name,
                policy="gang",
                min_group_count=len(seg.segments),
                topology_key=req,
                parent=parent,
                **self.common,
            )
        )
        self.shapes["segments"] += len(seg.segments)
        elastic = [s.index for s in seg.segments if s.min_member == 0]
        if elastic:
            self.note(
                where,
                f"elastic segments {', '.join(map(str, elastic))} (KAI minMember 0, satisfied with no pod "
                "placed) have no native equivalent (minCount is at least 1): read as 1",
            )
        p = spref or pref
        for s in seg.segments:
            g = self.name(f"{name}-{s.index}")
            self.add(
                PodGroup(
                    name=g,
                    policy="gang",
                    min_count=max(s.min_member, 1),
                    topology_key=key,
                    parent=name,
                    annotations={PREFERRED: p} if p else {},
                    api_version=API,
                    **self.common,
                )
            )
            self.link(s.pods, g)


def translate(
    env: Env, objects: list[tuple[str, dict]], topologies: dict[str, TopologyLevels]
) -> None:
    by_pod = env.pods_by_annotation(ANNOTATION)
    shapes = {"PodGroup": 0, "CompositePodGroup": 0, "segments": 0}
    names: list[str] = []
    for obj in read_objects(objects, "PodGroup", API, spec_required=True):
        names.append(obj.key)
        _translate_one(env, obj, by_pod.get((obj.namespace, obj.name), []), topologies, shapes)
    _groupless_segment_pods(env)
    if not names:
        return
    env.lines.append(
        f"translated {len(names)} PodGroup ({API}) -> native {shapes['PodGroup']} PodGroups"
        + (
            f", {shapes['CompositePodGroup']} CompositePodGroups"
            if shapes["CompositePodGroup"]
            else ""
        )
        + (
            f" ({shapes['segments']} of the PodGroups are segments of {kai_segments.SEGMENT_SIZE})"
            if shapes["segments"]
            else ""
        )
        + f": minMember -> gang minCount (0: basic), subGroups -> CompositePodGroup tree (minSubGroup -> minGroupCount, "
        f"unset: all children) with <podgroup>-<subgroup> gangs, segments -> <leaf>-<i> gangs, "
        f"requiredTopologyLevel -> topology key, preferredTopologyLevel -> {PREFERRED}, priorityClassName kept; "
        f"pods by annotation {ANNOTATION} and label {SUBGROUP_LABEL}; queue, preemptibility ignored: {', '.join(names[:3])}{', ...' if len(names) > 3 else ''}"
    )


def _translate_one(
    env: Env,
    obj: ForeignObject,
    members: list[str],
    topologies: dict[str, TopologyLevels],
    shapes: dict[str, int],
) -> None:
    ctx, m, ns, name, spec, who = obj.ctx, obj.meta, obj.namespace, obj.name, obj.spec, obj.key
    for k in sorted(set(spec) - _KNOWN):
        env.note(KIND, f"spec.{k}", "unknown field: not read", who)
    min_member = _count(ctx, spec, "minMember", "spec.minMember")
    min_sub = _count(ctx, spec, "minSubGroup", "spec.minSubGroup")
    pclass = ctx.str(spec.get("priorityClassName"), "spec.priorityClassName")
    req, pref, topo_name = _constraint(
        env, ctx, spec.get("topologyConstraint"), "spec.topologyConstraint", topologies, who
    )
    sg_field = "spec.subGroups"
    sg_raw = spec.get("subGroups")
    if sg_raw is None and spec.get("subgroups") is not None:
        sg_raw, sg_field = spec.get("subgroups"), "spec.subgroups"
        env.note(
            KIND,
            "spec.subgroups",
            "read as spec.subGroups (the documented spelling; an API server prunes it)",
            who,
        )
    subs = ctx.maps(sg_raw, sg_field)
    native = env.free_name(ns, name, "kai")
    common = dict(
        namespace=ns,
        priority_class_name=pclass,
        creation_timestamp=ctx.str(m.get("creationTimestamp"), "metadata.creationTimestamp"),
        source=obj.file,
    )
    h = Hierarchy(root=f"{ns}/{native}", from_group=bool(pclass))
    env.hierarchies.append(h)
    g = _Group(env, obj, topologies, common, h, topo_name, shapes, {native})
    if min_member is not None and min_sub is not None:
        g.note(
            "spec.minSubGroup",
            "set together with spec.minMember (KAI's webhook refuses both): minSubGroup is used with "
            "subGroups, minMember without",
        )
    if not subs:
        if min_sub is not None:
            g.note("spec.minSubGroup", "without subGroups: not used (it counts child SubGroups)")
        g.leaf(
            "spec",
            native,
            None,
            1 if min_member is None else min_member,
            req,
            pref,
            members,
            flat=True,
        )
        return
    if min_member is not None:
        g.note(
            "spec.minMember",
            "not used with subGroups (KAI counts child SubGroups: minSubGroup, all when unset)",
        )
    parsed: dict[str, tuple[str, str | None, int | None, int | None, str | None, str | None]] = {}
    for f, sg in subs:
        sname = ctx.str(sg.get("name"), f + ".name", required=True)
        if sname in parsed:
            raise ctx.fail(f + ".name", f"duplicate subgroup {sname!r}")
        for k in sorted(set(sg) - _SUB_KNOWN):
            env.note(KIND, f"{f}.{k}", "unknown field: not read", who)
        sreq, spref, _ = _constraint(
            env, ctx, sg.get("topologyConstraint"), f + ".topologyConstraint", topologies, who
        )
        parsed[sname] = (
            f,
            ctx.opt_str(sg.get("parent"), f + ".parent") or None,
            _count(ctx, sg, "minMember", f + ".minMember"),
            _count(ctx, sg, "minSubGroup", f + ".minSubGroup"),
            sreq,
            spref,
        )
    children: dict[str | None, list[str]] = {}
    for sname, (f, parent, *_rest) in parsed.items():
        if parent is not None and parent not in parsed:
            raise ctx.fail(f + ".parent", f"names no subgroup of this PodGroup: {parent!r}")
        children.setdefault(parent, []).append(sname)
    for sname in parsed:  # a parent chain must end at the PodGroup
        chain, cur = [sname], parsed[sname][1]
        while cur is not None:
            if cur in chain:
                raise ctx.fail(
                    parsed[sname][0] + ".parent",
                    f"subgroup parents form a cycle: {' -> '.join([*chain, cur])}",
                )
            chain.append(cur)
            cur = parsed[cur][1]
    gname = {s: g.name(f"{native}-{s}") for s in parsed}
    pods_of: dict[str, list[str]] = {}
    for k in members:
        sub = env.b.pods[k][0].labels.get(SUBGROUP_LABEL)
        if sub in parsed and sub not in children:
            pods_of.setdefault(sub, []).append(k)
            continue
        if env.b.pods[k][0].node_name is None:
            env.held[k] = (
                f"KAI PodGroup {who} has no leaf SubGroup {sub!r} (KAI drops the pod from the group: SubGroup not found)"
                if sub
                else f"KAI PodGroup {who} has SubGroups and the pod names none ({SUBGROUP_LABEL})"
            )
    g.add(
        CompositePodGroup(
            name=native,
            policy="gang",
            min_group_count=g.need("spec.minSubGroup", min_sub, len(children.get(None, []))),
            topology_key=req,
            **common,
        )
    )
    for sname, (f, parent, mm, msg, sreq, spref) in parsed.items():
        up = native if parent is None else gname[parent]
        if sname in children:
            if mm is not None:
                g.note(
                    f + ".minMember",
                    "not used on a SubGroup with children (KAI counts its children: minSubGroup, all when unset)",
                )
            if spref or pref:
                g.note(
                    f + ".topologyConstraint.preferredTopologyLevel",
                    "a preferred level of a SubGroup with children is not modelled",
                )
            g.add(
                CompositePodGroup(
                    name=gname[sname],
                    policy="gang",
                    min_group_count=g.need(f + ".minSubGroup", msg, len(children[sname])),
                    topology_key=sreq,
                    parent=up,
                    **common,
                )
            )
            continue
        if msg is not None:
            g.note(
                f + ".minSubGroup",
                "on a leaf SubGroup: not used (KAI's webhook refuses it; the scheduler counts minMember)",
            )
        if mm is None:
            g.note(
                f + ".minMember",
                "missing on a leaf SubGroup (KAI's webhook requires it; the scheduler reads 0)",
            )
        g.leaf(
            f, gname[sname], up, mm or 0, sreq, spref or pref, pods_of.get(sname, []), flat=False
        )


def _groupless_segment_pods(env: Env) -> None:
    """Pending KAI pods that ask for segments but are in no translated group: KAI's pod grouper
    would build their PodGroup from the owning PyTorchJob / LeaderWorkerSet (gangplan expands a
    LeaderWorkerSet into pods, but does not reproduce the pod grouper)."""
    for key, pod, _ in env.pods():
        if (
            kai_segments.SEGMENT_SIZE in pod.annotations
            and pod.pod_group is None
            and pod.node_name is None
            and pod.scheduler_name in SCHEDULERS
            and key not in env.held
        ):
            env.note(
                "Pod",
                f"metadata.annotations[{kai_segments.SEGMENT_SIZE}]",
                "not translated: the pod is in no KAI PodGroup of the snapshot; KAI's pod grouper would build one, with the "
                "segments, from the owning PyTorchJob or LeaderWorkerSet, and gangplan does not reproduce the pod grouper; "
                "scheduled without segments",
                key,
            )
