"""KAI-Scheduler ``PodGroup`` (``scheduling.run.ai/v2alpha2``) and ``Topology``
(``kai.scheduler/v1alpha1``) -> native PodGroups and CompositePodGroups.

Sources (NVIDIA/KAI-Scheduler @ 72de64fc8eca10fa8cca26a20156178f3edbe092, docs/upstream-foreign-apis.md
§3): ``pkg/apis/scheduling/v2alpha2/podgroup_types.go`` and the CRD, ``pkg/scheduler/api/podgroup_info/
job_info.go`` (``SetPodGroup``, ``setSubGroups``, ``AddTaskInfo``, ``IsGangSatisfied``: every leaf
pod set must reach its minimum), ``subgroup_info/factory.go`` (a leaf needs ``max(minMember, 1)``
pods, a SubGroup with children has no minimum of its own, ``spec.minMember`` counts only without
subGroups), ``pkg/common/constants/constants.go`` (annotation ``pod-group-name``, label
``kai.scheduler/subgroup-name``, scheduler ``kai-scheduler``), ``pkg/apis/kai/v1alpha1/topology_types.go``,
``docs/topology/multilevel.md``.

Translation: without ``subGroups`` one gang PodGroup (``minCount = max(minMember, 1)``); with them
a gang CompositePodGroup named like the PodGroup over the tree of SubGroups, each named
``<podgroup>-<subgroup>``: a SubGroup with children is a gang CompositePodGroup with
``minGroupCount`` = its number of children (all must be satisfied), a leaf a gang PodGroup with
``minCount = max(minMember, 1)``; ``parent`` links them; ``topologyConstraint.requiredTopologyLevel``
-> ``schedulingConstraints.topology`` of that group (domains along the KAI ``Topology``'s levels,
:meth:`~gangplan.io.foreign.common.Env.level_key`), ``preferredTopologyLevel`` ->
``gangplan.io/preferred-topology`` (on the leaves); ``priorityClassName`` -> every group's (its
pods take that priority: KAI schedules by the PodGroup's). A pod naming a SubGroup the PodGroup
does not have, or none while it has SubGroups, is dropped from the group by KAI ("SubGroup not
found"): it waits (gated). The documented spelling ``subgroups`` (docs/topology/multilevel.md; the
CRD field is ``subGroups``, an API server prunes the other) is read with a warning. ``queue``,
``preemptibility``, ``parallelism`` / ``completions`` / ``backoffLimit``, ``markUnschedulable``,
``schedulingBackoff``: ignored.
"""

from __future__ import annotations

from gangplan.io.fields import Ctx
from gangplan.io.foreign.common import PREFERRED, Env, Hierarchy, read_objects
from gangplan.models.objects import CompositePodGroup, PodGroup, TopologyLevels

API = "scheduling.run.ai/v2alpha2"
TOPO_API = "kai.scheduler/v1alpha1"
ANNOTATION = "pod-group-name"
SUBGROUP_LABEL = "kai.scheduler/subgroup-name"
SCHEDULERS = ("kai-scheduler",)
_KNOWN = {"minMember", "queue", "priorityClassName", "preemptibility", "parallelism", "completions", "backoffLimit",
          "markUnschedulable", "schedulingBackoff", "topologyConstraint", "subGroups", "subgroups"}


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
        env.lines.append(f"read {len(out)} Topology ({TOPO_API}) as topology levels like Kueue's: "
                         + "; ".join(f"{n}: {' > '.join(t.levels)}" for n, t in out.items()))
    return out


def _constraint(env: Env, ctx: Ctx, raw: object, fld: str, topologies: dict[str, TopologyLevels], who: str) -> tuple[str | None, str | None]:
    tc = ctx.map(raw, fld)
    if not tc:
        return None, None
    name = ctx.str(tc.get("topology"), fld + ".topology")
    req = ctx.str(tc.get("requiredTopologyLevel"), fld + ".requiredTopologyLevel") or None
    pref = ctx.str(tc.get("preferredTopologyLevel"), fld + ".preferredTopologyLevel") or None
    levels = topologies[name].levels if name in topologies else ()
    if (req or pref) and name not in topologies:
        env.note(f"PodGroup ({API})", fld + ".topology", "Topology not in the snapshot: the level is read as a plain node label", who)
    for lvl, f in ((req, ".requiredTopologyLevel"), (pref, ".preferredTopologyLevel")):
        if lvl and levels and lvl not in levels:
            raise ctx.fail(fld + f, f"{lvl!r} is not a level of Topology {name!r} ({', '.join(levels)})")
    return (env.level_key(req, levels) if req else None), pref


def translate(env: Env, objects: list[tuple[str, dict]], topologies: dict[str, TopologyLevels]) -> None:
    if not objects:
        return
    by_pod = env.pods_by_annotation(ANNOTATION)
    shapes = {"PodGroup": 0, "CompositePodGroup": 0}
    names: list[str] = []
    for obj in read_objects(objects, "PodGroup", API, spec_required=True):
        file, ctx, m, ns, name, spec = obj.file, obj.ctx, obj.meta, obj.namespace, obj.name, obj.spec
        who = obj.key
        names.append(who)
        for k in sorted(set(spec) - _KNOWN):
            env.note(f"PodGroup ({API})", f"spec.{k}", "unknown field: not read", who)
        min_member = ctx.int32(spec.get("minMember"), "spec.minMember", minimum=0)
        pclass = ctx.str(spec.get("priorityClassName"), "spec.priorityClassName")
        req, pref = _constraint(env, ctx, spec.get("topologyConstraint"), "spec.topologyConstraint", topologies, who)
        sg_field = "spec.subGroups"
        sg_raw = spec.get("subGroups")
        if sg_raw is None and spec.get("subgroups") is not None:
            sg_raw, sg_field = spec.get("subgroups"), "spec.subgroups"
            env.note(f"PodGroup ({API})", "spec.subgroups", "read as spec.subGroups (the documented spelling; an API server prunes it)", who)
        subs = ctx.maps(sg_raw, sg_field)
        ts = ctx.str(m.get("creationTimestamp"), "metadata.creationTimestamp")
        native = env.free_name(ns, name, "kai")
        members = by_pod.get((ns, name), [])
        common = dict(namespace=ns, priority_class_name=pclass, creation_timestamp=ts, source=file)
        h = Hierarchy(root=f"{ns}/{native}", from_group=bool(pclass))
        env.hierarchies.append(h)
        if not subs:
            pg = PodGroup(name=native, policy="gang", min_count=max(min_member, 1), topology_key=req,
                          annotations={PREFERRED: pref} if pref else {}, api_version=API, **common)
            h.keys.append(env.add(pg, ctx))
            shapes["PodGroup"] += 1
            for k in members:
                env.link(k, native, SCHEDULERS)
                h.pods.append(k)
            continue
        if spec.get("minMember") is not None:
            env.note(f"PodGroup ({API})", "spec.minMember", "not used with subGroups (KAI counts the leaves' minima)", who)
        parsed: dict[str, tuple[str, str | None, int, str | None, str | None]] = {}
        for f, sg in subs:
            sname = ctx.str(sg.get("name"), f + ".name", required=True)
            if sname in parsed:
                raise ctx.fail(f + ".name", f"duplicate subgroup {sname!r}")
            sreq, spref = _constraint(env, ctx, sg.get("topologyConstraint"), f + ".topologyConstraint", topologies, who)
            parsed[sname] = (f, ctx.opt_str(sg.get("parent"), f + ".parent") or None, ctx.int32(sg.get("minMember"), f + ".minMember", minimum=0), sreq, spref)
        children: dict[str | None, list[str]] = {}
        for sname, (f, parent, *_rest) in parsed.items():
            if parent is not None and parent not in parsed:
                raise ctx.fail(f + ".parent", f"names no subgroup of this PodGroup: {parent!r}")
            children.setdefault(parent, []).append(sname)
        for sname in parsed:  # a parent chain must end at the PodGroup
            chain, cur = [sname], parsed[sname][1]
            while cur is not None:
                if cur in chain:
                    raise ctx.fail(parsed[sname][0] + ".parent", f"subgroup parents form a cycle: {' -> '.join([*chain, cur])}")
                chain.append(cur)
                cur = parsed[cur][1]
        gname = {s: env.free_name(ns, f"{native}-{s}", "kai") for s in parsed}
        root = CompositePodGroup(name=native, policy="gang", min_group_count=len(children.get(None, [])), topology_key=req, **common)
        h.keys.append(env.add(root, ctx))
        shapes["CompositePodGroup"] += 1
        for sname, (f, parent, mm, sreq, spref) in parsed.items():
            up = native if parent is None else gname[parent]
            if sname in children:
                g = CompositePodGroup(name=gname[sname], policy="gang", min_group_count=len(children[sname]), topology_key=sreq, parent=up, **common)
                shapes["CompositePodGroup"] += 1
                if spref or pref:
                    env.note(f"PodGroup ({API})", f + ".topologyConstraint.preferredTopologyLevel", "a preferred level of a SubGroup with children is not modelled", who)
            else:
                p = spref or pref
                g = PodGroup(name=gname[sname], policy="gang", min_count=max(mm, 1), topology_key=sreq, parent=up,
                             annotations={PREFERRED: p} if p else {}, api_version=API, **common)
                shapes["PodGroup"] += 1
            h.keys.append(env.add(g, ctx))
        for k in members:
            sub = env.b.pods[k][0].labels.get(SUBGROUP_LABEL)
            if sub not in parsed or sub in children:
                pod = env.b.pods[k][0]
                if pod.node_name is None:
                    env.held[k] = f"KAI PodGroup {who} has no leaf SubGroup {sub!r} (KAI drops the pod from the group: SubGroup not found)" if sub else \
                        f"KAI PodGroup {who} has SubGroups and the pod names none ({SUBGROUP_LABEL})"
                continue
            env.link(k, gname[sub], SCHEDULERS)
            h.pods.append(k)
    env.lines.append(f"translated {len(names)} PodGroup ({API}) -> native {shapes['PodGroup']} gang PodGroups"
                     + (f", {shapes['CompositePodGroup']} CompositePodGroups" if shapes["CompositePodGroup"] else "")
                     + f": minMember -> gang minCount, subGroups -> CompositePodGroup tree (all children required) with <podgroup>-<subgroup> gangs, "
                     f"requiredTopologyLevel -> topology key, preferredTopologyLevel -> {PREFERRED}, priorityClassName kept; "
                     f"pods by annotation {ANNOTATION} and label {SUBGROUP_LABEL}; queue, preemptibility ignored: {', '.join(names[:3])}{', ...' if len(names) > 3 else ''}")
