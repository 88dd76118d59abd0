"""Load a snapshot (a file or a directory of files) into an immutable :class:`Cluster`.

Accepted inputs, per file: multi-document YAML, JSON, ``kind: List`` (what ``kubectl get ... -o
yaml`` prints), a top-level JSON array of objects, and the kube-scheduler-simulator export (a JSON
object with ``nodes``, ``pods``, ``priorityClasses``, ``schedulerConfig``, ... lists).

Gating mirrors the GangScheduling plugin's PreEnqueue
(``pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go``, v1.37): a pod whose PodGroup
is missing waits for it; a gang whose known pods are fewer than ``minCount`` waits for quorum;
under a CompositePodGroup readiness is checked from the root. Pods with ``spec.schedulingGates``
wait too (SchedulingGates plugin).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from gangplan.gcpause import gc_paused
from gangplan.io import dra_parse, foreign, kueue_workloads, schema
from gangplan.io.config import parse_scheduler_config
from gangplan.io.dra_build import build_state
from gangplan.io.errors import SnapshotError
from gangplan.io.fields import Ctx
from gangplan.io.files import (  # source_name, snapshot_files, read_documents, _objects: re-exported (the CLI, tests, benchmarks)
    _objects,
    _ref,
    read_documents,
    skipped_files,
    snapshot_files,
    source_name,
)
from gangplan.io.parse import (
    parse_composite_pod_group,
    parse_namespace,
    parse_node,
    parse_pdb,
    parse_pod,
    parse_pod_group,
    parse_priority_class,
    parse_topology,
    parse_workload,
)
from gangplan.io.v1alpha1 import synthesize as synthesize_v1alpha1
from gangplan.io.validation_versions import validating_for
from gangplan.models.cluster import Cluster
from gangplan.models.groups import GroupTree, gate
from gangplan.models.objects import (
    LabelSelector,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    SchedulerProfile,
)
from gangplan.models.plugins import unmodelled_plugins
from gangplan.models.version import NEWEST, KubeVersion

# ---- assembling -------------------------------------------------------------------------------
_NAMESPACED = {"Pod", "PodGroup", "CompositePodGroup", "Workload", "PodDisruptionBudget"}
_NAMESPACED_FOREIGN = {"Job", "JobSet", "LeaderWorkerSet"}
UNKNOWN_SHOWN = 5
"""Unknown-field warnings shown per file and field before the rest are counted."""
_KNOWN = _NAMESPACED | {
    "Node",
    "PriorityClass",
    "KubeSchedulerConfiguration",
    "Topology",
    "Namespace",
}
# The API group each kind is read from. Same-named kinds of other groups (the scheduler-plugins
# PodGroup in scheduling.x-k8s.io, say) are different APIs: gangplan.io.foreign translates the ones
# it reads (foreign.READ); the rest are skipped and counted.
_GROUPS = {
    "Node": "",
    "Pod": "",
    "Namespace": "",
    "PodGroup": "scheduling.k8s.io",
    "CompositePodGroup": "scheduling.k8s.io",
    "Workload": "scheduling.k8s.io",
    "PriorityClass": "scheduling.k8s.io",
    "PodDisruptionBudget": "policy",
    "KubeSchedulerConfiguration": "kubescheduler.config.k8s.io",
    "Topology": "kueue.x-k8s.io",
}


# Served versions gangplan reads, per kind of scheduling.k8s.io (docs/upstream-api-shapes.md §1):
# v1alpha1 = v1.35, v1alpha2 = v1.36, v1alpha3 and v1beta1 = v1.37. Another version is named in a
# warning and not read.
_VERSIONS = {
    "Workload": ("v1alpha1", "v1alpha2", "v1alpha3", "v1beta1"),
    "PodGroup": ("v1alpha2", "v1alpha3", "v1beta1"),
    "CompositePodGroup": ("v1alpha3",),
    "PriorityClass": ("v1", "v1beta1", "v1alpha1"),
}


def _api_group(api_version: Any) -> str | None:
    if not isinstance(api_version, str) or not api_version:
        return None
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def _foreign_api(kind: str, api_version: Any) -> bool:
    """True when ``apiVersion`` is given and names another API group than the one gangplan reads."""
    group = _api_group(api_version)
    return group is not None and group != _GROUPS[kind]


def _unreadable_version(kind: str, api_version: Any) -> bool:
    if kind not in _VERSIONS or _api_group(api_version) is None:
        return False
    return api_version.rsplit("/", 1)[-1] not in _VERSIONS[kind]


# Objects gangplan does not read but that change where pods can go (or which pods exist): named in
# a warning (see Cluster.warnings), not only counted. API group -> what is lost.
# The PodGroups of scheduler-plugins, Volcano and KAI, HyperNodes, KAI Topologies, Jobs,
# JobSets and LeaderWorkerSets in the versions gangplan.io.foreign.READ lists are read (translated
# or expanded, gangplan.io.foreign); what remains of these groups is named here.
_SCHEDULING_GROUPS = {
    "scheduling.x-k8s.io": "a scheduler-plugins object (ElasticQuota, or a PodGroup version other than v1alpha1): quota is not modelled, the object is not read",
    "scheduling.volcano.sh": "a Volcano Queue (or a PodGroup version other than v1beta1): queues, quota and fair share are not modelled",
    "batch.volcano.sh": "a Volcano Job: it is not expanded into pods (only its PodGroup and pods in the snapshot are read)",
    "topology.volcano.sh": "a Volcano topology object gangplan does not read (HyperNode is read in v1alpha1)",
    "scheduling.run.ai": "a KAI-Scheduler Queue or BindRequest (or a PodGroup version other than v2alpha2): queues, fair share and bind requests are not modelled",
    "kai.scheduler": "a KAI-Scheduler object: not read",
    "kai-scheduler.config": "the KAI scheduler's own configuration (actions, plugin tiers) in a KAI snapshot: gangplan schedules with the snapshot's kube-scheduler profile (the default one when it has none)",
    "kueue.x-k8s.io": "a Kueue object: quota, admission and ResourceFlavor node labels are not modelled",
    "resource.k8s.io": "a Dynamic Resource Allocation object gangplan does not read (a kind other than DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate and DeviceTaintRule, or an API version other than v1, v1beta2, v1beta1, and v1alpha3 for DeviceTaintRule): it does not constrain placement",
    "storage.k8s.io": "volume topology is not modelled",
    "jobset.x-k8s.io": "a JobSet of an API version gangplan cannot read (v1alpha2 is expanded): it is not expanded into pods",
    "leaderworkerset.x-k8s.io": "a LeaderWorkerSet of an API version gangplan cannot read (v1 is expanded): it is not expanded into pods",
    "scheduling.k8s.io": "an API version gangplan cannot read",
}
_SCHEDULING_KINDS = {
    "PersistentVolumeClaim": "volume binding is not modelled: claims do not constrain placement",
    "PersistentVolume": "volume topology is not modelled",
    "Job": "a Job of an API version gangplan cannot read (batch/v1 is expanded): it is not expanded into pods",
    "ResourceQuota": "quota is not modelled: pods it would refuse to create are scheduled",
}


# kind -> (parser, _Builder attribute it is stored in, attribute of the object used as key)
_PARSERS: dict[str, tuple[Any, str, str]] = {
    "Node": (parse_node, "nodes", "name"),
    "Pod": (parse_pod, "pods", "key"),
    "PodGroup": (parse_pod_group, "pod_groups", "key"),
    "CompositePodGroup": (parse_composite_pod_group, "cpgs", "key"),
    "Workload": (parse_workload, "workloads", "key"),
    "PriorityClass": (parse_priority_class, "priority_classes", "name"),
    "PodDisruptionBudget": (parse_pdb, "pdbs", "key"),
    "Namespace": (parse_namespace, "namespaces", "name"),
    "Topology": (parse_topology, "topologies", "name"),
}


class _Builder:
    def __init__(self, plugins: Mapping[str, Iterable[str]] | None = None) -> None:
        self.plugins = plugins
        """The plugins the run will have, name -> extension points (None: the in-tree ones)."""
        self.nodes: dict[str, Any] = {}
        self.pods: dict[str, tuple[Any, dict, Ctx]] = {}
        self.pod_groups: dict[str, PodGroup] = {}
        self.cpgs: dict[str, Any] = {}
        self.workloads: dict[str, Any] = {}
        self.priority_classes: dict[str, Any] = {}
        self.pdbs: dict[str, tuple[PodDisruptionBudget, bool]] = {}
        self.namespaces: dict[str, Any] = {}
        self.topologies: dict[str, Any] = {}
        self.profile: SchedulerProfile | None = None
        self.seen: dict[str, str] = {}
        self.skipped: Counter[str] = Counter()
        self.notes: dict[tuple[str, str, str], list[str]] = {}
        """(kind, field, message) -> names of the objects it applies to (warnings)."""
        # Foreign group APIs and controllers (gangplan.io.foreign): read after every file.
        self.foreign: list[tuple[str, dict]] = []
        self.controllers: list[dict] = []
        self.raw_workloads: list[dict] = []
        self.expanded: list[dict] = []
        self.translations: list[str] = []
        self.held: dict[str, str] = {}
        self.api_versions: Counter[str] = Counter()
        self.unknown: dict[tuple[str, str], list[str]] = {}
        """(file, unknown-field message with list indices as []) -> 'object: message' lines."""
        self.unknown_paths: set[tuple[str, str, str]] = set()
        """(kind, namespace/name, field path) of the unknown fields found (not noted twice)."""
        self.file_notes: list[str] = []
        """Files of a snapshot directory not read (empty, or not a snapshot file): warnings."""
        self.kueue_raw: list[tuple[str, dict]] = []
        """Kueue's objects (gangplan.io.kueue_workloads): read when the snapshot has a ClusterQueue."""
        self.kueue_parsed: Any = None
        self.kueue_state: Any = None
        self.kueue_pods: frozenset[str] = frozenset()
        self.dra_objects: list[tuple[Ctx, str, dict]] = []
        """resource.k8s.io DeviceClasses, ResourceSlices, ResourceClaims, ResourceClaimTemplates, DeviceTaintRules (gangplan.dra)."""

    def check_fields(self, file: str, raw: dict) -> None:
        """Unknown fields, kinds and apiVersions of one object as read from a file (gangplan.io.schema)."""
        if not schema.ENABLED:
            return
        kind, api = raw.get("kind"), raw.get("apiVersion")
        found = schema.unknown_fields(raw)
        wrong = schema.unknown_kind(kind, api)
        if wrong is not None:
            found.append(("apiVersion", wrong))
        if not found:
            return
        meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
        if "name" not in meta:
            ref = str(kind)
        else:
            ref = _ref(
                str(kind),
                raw,
                kind in _NAMESPACED or "namespace" in meta or kind in _NAMESPACED_FOREIGN,
            )
        for path, message in found:
            self.unknown_paths.add((str(kind), ref.split("/", 1)[-1], path))
            self.unknown.setdefault((file, re.sub(r"\[\d+\]", "[]", message)), []).append(
                f"{ref}: {message}"
            )

    def unknown_warnings(self) -> list[str]:
        """One warning per unknown field: ``FILE: KIND/NS/NAME: unknown field "PATH", did you mean
        "NAME"?``; past :data:`UNKNOWN_SHOWN` objects with the same one in a file, a count."""
        out = []
        for (file, _), lines in self.unknown.items():
            out += [f"{file}: {line}" for line in lines[:UNKNOWN_SHOWN]]
            if len(lines) > UNKNOWN_SHOWN:
                rest = len(lines) - UNKNOWN_SHOWN
                out.append(
                    f"{file}: {rest} more object{'s' if rest != 1 else ''}: {lines[0].split(': ', 1)[1]}"
                )
        return out

    def _count_api(self, kind: str, raw: dict) -> None:
        """What tells the release: the scheduling kinds' apiVersions, and the pods' group link."""
        if kind in ("Workload", "PodGroup", "CompositePodGroup"):
            self.api_versions[f"{kind} {raw.get('apiVersion') or '(no apiVersion)'}"] += 1
        elif kind == "Pod" and isinstance(raw.get("spec"), dict):
            spec = raw["spec"]
            for link in ("workloadRef", "schedulingGroup"):
                if spec.get(link):
                    self.api_versions[f"Pod spec.{link}"] += 1

    def note(self, kind: str, field: str, message: str, name: str) -> None:
        if (
            message.startswith("unknown field")
            and (kind.split(" ", 1)[0], name, field) in self.unknown_paths
        ):
            return  # already named by the unknown-field check, with its file and a suggestion
        self.notes.setdefault((kind, re.sub(r"\[\d+\]", "[]", field), message), []).append(name)

    def _skip(self, kind: str, raw: dict, label: str) -> None:
        self.skipped[label] += 1
        group = _api_group(raw.get("apiVersion"))
        if (kind, group or "") in foreign.UNEXPANDED:
            self.controllers.append(raw)  # warned about only if none of its pods is in the snapshot
            return
        why = _SCHEDULING_GROUPS.get(group or "") if group else None
        why = why or (_SCHEDULING_KINDS.get(kind) if not group or group in ("", "batch") else None)
        if why is not None:
            meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
            self.note(label, "", f"not read: {why}", str(meta.get("name", "?")))

    def warnings(self) -> tuple[str, ...]:
        out = []
        for (kind, field, message), names in sorted(self.notes.items()):
            shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            where = f"{kind} {field}" if field else kind
            out.append(
                f"{where}: {len(names)} object{'s' if len(names) != 1 else ''} ({shown}): {message}"
            )
        return tuple(out)

    def _unique(self, ref: str, file: str) -> None:
        if ref in self.seen:
            raise SnapshotError(
                file, f"duplicate object (first defined in {self.seen[ref]})", obj=ref
            )
        self.seen[ref] = file

    def add(self, file: str, raw: dict) -> None:
        kind = raw.get("kind")
        if kueue_workloads.collect(self, file, raw):
            return
        if foreign.claims(kind, raw.get("apiVersion")):
            self.foreign.append((file, raw))
            return
        if _api_group(raw.get("apiVersion")) == "resource.k8s.io" and dra_parse.readable(
            str(kind), str(raw.get("apiVersion")).rsplit("/", 1)[-1]
        ):
            ref = _ref(kind, raw, kind in ("ResourceClaim", "ResourceClaimTemplate"))
            self._unique(ref, file)
            self.dra_objects.append((Ctx(file, ref), kind, raw))
            return
        if kind not in _KNOWN:
            self._skip(str(kind), raw, str(kind))
            return
        if _foreign_api(kind, raw.get("apiVersion")) or _unreadable_version(
            kind, raw.get("apiVersion")
        ):
            self._skip(kind, raw, f"{kind} ({raw.get('apiVersion')})")
            return
        ref = _ref(kind, raw, kind in _NAMESPACED)
        ctx = Ctx(file, ref)
        self._count_api(kind, raw)
        if kind in _PARSERS:
            parse, store, key_attr = _PARSERS[kind]
            parsed = parse(ctx, raw)
            for field, message in ctx.notes:
                self.note(kind, field, message, ref.split("/", 1)[1])
            obj = parsed[0] if kind == "PodDisruptionBudget" else parsed  # (pdb, has_status)
            if kind == "Pod" and obj.phase in ("Succeeded", "Failed"):
                self.skipped["Pod (terminated)"] += 1
                return
            self._unique(ref, file)
            # Pods keep their raw object and context (priority resolution), groups their context.
            if kind == "Pod":
                value = (obj, raw, ctx)
            elif kind in ("PodGroup", "CompositePodGroup"):
                value = (obj, ctx)
            else:
                value = parsed
                if kind == "Workload":
                    self.raw_workloads.append(raw)
            getattr(self, store)[getattr(obj, key_attr)] = value
        elif kind == "KubeSchedulerConfiguration":
            if self.profile is not None:
                raise SnapshotError(
                    file,
                    f"duplicate object (first defined in {self.profile.source})",
                    obj="KubeSchedulerConfiguration",
                )
            self.profile = parse_scheduler_config(Ctx(file, "KubeSchedulerConfiguration"), raw)
            # Named here so that no plugin is dropped unnamed (gangplan.models.plugins: what the engines run).
            for where, plugin in unmodelled_plugins(self.profile, self.plugins):
                self.note(
                    "KubeSchedulerConfiguration",
                    f"profiles[0].plugins.{where}",
                    "plugin not implemented by gangplan at this extension point: ignored (both engines run without it)",
                    plugin,
                )

    # -- resolution ---------------------------------------------------------------------------
    def _class_priority(self, ctx: Ctx, class_name: str, field: str) -> int | None:
        if class_name:
            pc = self.priority_classes.get(class_name)
            if pc is None:
                import difflib

                close = difflib.get_close_matches(
                    class_name, list(self.priority_classes), n=1, cutoff=0.6
                )
                hint = (
                    f', did you mean "{close[0]}"?'
                    if close
                    else " (the API server's Priority admission rejects such a pod)"
                )
                raise ctx.fail(
                    field, f"PriorityClass {class_name!r} not found in the snapshot{hint}"
                )
            return pc.value
        return None

    def _default_priority(self) -> int:
        defaults = [pc.value for pc in self.priority_classes.values() if pc.global_default]
        return max(defaults) if defaults else 0

    def _class_policy(self, class_name: str) -> str | None:
        """The preemptionPolicy Priority admission copies from the object's PriorityClass (or the
        global default class when none is named)."""
        if class_name:
            pc = self.priority_classes.get(class_name)
        else:
            pc = max(
                (c for c in self.priority_classes.values() if c.global_default),
                key=lambda c: c.value,
                default=None,
            )
        return pc.preemption_policy if pc is not None else None

    def _with_priority(self, g: Any, ctx: Ctx) -> Any:
        """A group's priority: spec.priority, else its PriorityClass, else the global default; an
        unset preemptionPolicy from the class, as Priority admission fills them in."""
        update: dict[str, Any] = {}
        if g.priority == 0:
            cp = self._class_priority(ctx, g.priority_class_name, "spec.priorityClassName")
            update["priority"] = (
                cp
                if cp is not None
                else self._default_priority()
                if not g.priority_class_name
                else 0
            )
        if g.preemption_policy is None and self._class_policy(g.priority_class_name) is not None:
            update["preemption_policy"] = self._class_policy(g.priority_class_name)
        return g.model_copy(update=update) if update else g

    def resolve_groups(self) -> tuple[dict[str, PodGroup], dict[str, Any]]:
        groups = {key: self._with_priority(g, ctx) for key, (g, ctx) in self.pod_groups.items()}
        cpgs = {key: self._with_priority(g, ctx) for key, (g, ctx) in self.cpgs.items()}
        # A PodGroup and a CompositePodGroup sharing a name cannot be told apart by group keys.
        for key in sorted(set(groups) & set(cpgs)):
            raise self.cpgs[key][1].fail(
                "metadata.name",
                f"a PodGroup named {key} exists too; gangplan needs PodGroup and CompositePodGroup names to differ within a namespace",
            )
        # Cycles and missing parents are not bad input: kube-scheduler fails (or holds) only that
        # hierarchy (gangplan.models.groups / hierarchy).
        return groups, cpgs

    def resolve_pods(self) -> list[Pod]:
        out = []
        default = self._default_priority()
        for obj, raw, ctx in self.pods.values():
            spec = raw.get("spec") or {}
            if spec.get("priority") is None:
                cp = self._class_priority(ctx, obj.priority_class_name, "spec.priorityClassName")
                obj = obj.model_copy(update={"priority": cp if cp is not None else default})
            if (
                spec.get("preemptionPolicy") is None
                and self._class_policy(obj.priority_class_name) is not None
            ):
                obj = obj.model_copy(
                    update={"preemption_policy": self._class_policy(obj.priority_class_name)}
                )
            if obj.node_name is not None and obj.node_name not in self.nodes:
                raise ctx.fail(
                    "spec.nodeName",
                    f"bound to node {obj.node_name!r}, which is not in the snapshot",
                )
            out.append(obj)
        return out


def _pdb_with_status(pdb: PodDisruptionBudget, pods: list[Pod]) -> PodDisruptionBudget:
    """Compute ``disruptionsAllowed`` the way the disruption controller would, for a PDB without status."""
    from gangplan.predicates.labels import selector_matches

    matching = [
        p
        for p in pods
        if p.namespace == pdb.namespace
        and pdb.selector is not None
        and selector_matches(pdb.selector, p.labels)
    ]
    healthy = sum(1 for p in matching if p.node_name is not None)
    expected = len(matching)

    def resolve(v: str) -> int:
        if v.endswith("%"):
            return -(-expected * int(v[:-1]) // 100)  # percentages round up
        return int(v)

    if pdb.min_available is not None:
        desired = resolve(pdb.min_available)
    elif pdb.max_unavailable is not None:
        desired = expected - resolve(pdb.max_unavailable)
    else:
        desired = expected
    return pdb.model_copy(update={"disruptions_allowed": max(0, healthy - desired)})


def load_snapshot(
    path: str | os.PathLike,
    *,
    kube_version: KubeVersion | str | None = None,
    require_nodes: bool = False,
    plugins: Mapping[str, Iterable[str]] | None = None,
) -> Cluster:
    """Load a snapshot file or directory. Raises :class:`SnapshotError` on bad input.
    ``kube_version``: the kube-scheduler version the engines reproduce (default: the newest).
    A snapshot without any object is bad input; one without a Node is too with ``require_nodes``
    (off by default: public API examples without nodes and scheduler-configuration files load).
    ``plugins``: the scheduler plugins the run will have, name -> extension points (a plugin
    registry's ``points()``; default: the in-tree ones): a configured plugin outside them is
    named in a warning."""
    return load_with_expansion(
        path, kube_version=kube_version, require_nodes=require_nodes, plugins=plugins
    )[0]


def load_with_expansion(
    path: str | os.PathLike,
    *,
    kube_version: KubeVersion | str | None = None,
    require_nodes: bool = False,
    plugins: Mapping[str, Iterable[str]] | None = None,
) -> tuple[Cluster, list[dict]]:
    """Load a snapshot, and the objects gangplan synthesized from its Jobs, JobSets and
    LeaderWorkerSets (:mod:`gangplan.io.expand`; what ``gangplan expand`` prints).

    The cyclic garbage collector is paused for the whole load (:mod:`gangplan.gcpause`): the
    documents, the builder's records and the models hold no cycles, and every collection would
    walk all of them again (what that saves: docs/explanation/loading.md)."""
    with (
        gc_paused(),
        validating_for(kube_version),
    ):  # the release's API-server rules (io.validation_versions)
        b = _Builder(plugins)
        files = snapshot_files(path)
        b.file_notes.extend(skipped_files(path))
        count = 0
        for f in files:
            n = 0
            for raw in file_objects(f):
                n += 1
                b.check_fields(str(f), raw)
                b.add(str(f), raw)
            if n == 0 and len(files) > 1:
                b.file_notes.append(f"{f}: empty: the file holds no Kubernetes object (skipped)")
            count += n
        if count == 0:
            where = source_name(path)
            raise SnapshotError(
                where,
                "no objects (no nodes): the snapshot "
                + ("directory's files hold" if Path(path).is_dir() else "file holds")
                + " no Kubernetes object; write the Nodes, PodGroups and Pods (kubectl get nodes,pods,podgroups -A -o yaml)",
            )
        cluster = _assemble(
            b, tuple(str(f) for f in files), kube_version
        )  # the objects' own errors first
        if require_nodes and not b.nodes:
            raise SnapshotError(
                source_name(path),
                f"no nodes: the snapshot holds {count} object{'s' if count != 1 else ''} but no Node "
                "(kubectl get nodes -o yaml): every pod would stay Pending",
            )
        return cluster, b.expanded


def file_objects(path: str | os.PathLike) -> Iterator[dict]:
    """The Kubernetes objects of one snapshot file as the loader reads them (documents parsed,
    ``kind: List`` and simulator / KAI exports flattened), unvalidated."""
    f = Path(path)
    for i, doc in enumerate(read_documents(f)):
        yield from _objects(str(f), doc, i)


__all__ = [
    "load_snapshot",
    "load_objects",
    "load_pairs",
    "snapshot_files",
    "read_documents",
    "file_objects",
    "SnapshotError",
    "LabelSelector",
]


DANGLING = "not in the snapshot"
"""The words every :func:`dangling_references` warning carries (``--strict`` names them apart)."""


def is_dangling_warning(line: str) -> bool:
    return DANGLING in line and line.startswith("Pod/")


def dangling_references(
    pods: list, groups: dict, cpgs: dict, profile: SchedulerProfile
) -> tuple[str, ...]:
    """Warnings for pending pods that name what the snapshot does not hold: a pod group (the pod
    stays Pending, gated at PreEnqueue, as kube-scheduler keeps it), or a scheduler name that is a
    near miss of the profile's (a pod meant for another scheduler is not warned about). Each names
    the closest existing name; ``--strict`` refuses them."""
    import difflib

    out = []
    by_ns: dict[str, list[str]] = {}
    for key in [*groups, *cpgs]:
        ns, _, name = key.partition("/")
        by_ns.setdefault(ns, []).append(name)
    for p in pods:
        if p.node_name is not None:
            continue
        if p.group_key is not None and p.group_key not in groups and p.group_key not in cpgs:
            ns, _, name = p.group_key.partition("/")
            close = difflib.get_close_matches(name, by_ns.get(ns, []), n=1, cutoff=0.6)
            hint = f', did you mean "{close[0]}"?' if close else ""
            out.append(
                f"Pod/{p.key}: its pod group {p.group_key} is not in the snapshot{hint} "
                "(kube-scheduler keeps the pod Pending, gated at PreEnqueue: waiting for pod group)"
            )
        if p.scheduler_name != profile.scheduler_name and difflib.get_close_matches(
            p.scheduler_name, [profile.scheduler_name], n=1, cutoff=0.8
        ):
            out.append(
                f'Pod/{p.key}: spec.schedulerName: "{p.scheduler_name}" is not in the snapshot\'s profiles, did you mean '
                f'"{profile.scheduler_name}"? (kube-scheduler leaves the pod to another scheduler; it stays Pending)'
            )
    return tuple(out)


KUEUE_REQUIRED = "kueue.x-k8s.io/podset-required-topology"


def missing_topology_keys(nodes: list, pods: list, groups: dict, cpgs: dict) -> tuple[str, ...]:
    """Warnings for a required topology key that no Node carries as a label: every placement of
    such a gang is refused (TopologyPlacement finds no domain), so a misspelled key
    (``topology.kubernetes.io/racks``) would otherwise show only as "0 placements". Each names the object, the
    field it came from (the PodGroup's ``spec.schedulingConstraints.topology[0].key``, or the
    Kueue annotation of its pods), the key and the closest node label key; ``--strict`` refuses them."""
    import difflib

    if not nodes:
        return ()
    label_keys = sorted({k for n in nodes for k in n.labels})
    annotated: dict[str, str] = {}
    for p in pods:
        if (
            p.group_key is not None
            and KUEUE_REQUIRED in p.annotations
            and p.group_key not in annotated
        ):
            annotated[p.group_key] = f"Pod/{p.key}"
    out = []
    for kind, table in (("PodGroup", groups), ("CompositePodGroup", cpgs)):
        for key, g in sorted(table.items()):
            tk = g.topology_key
            if not tk or tk in label_keys:
                continue
            close = difflib.get_close_matches(tk, label_keys, n=1, cutoff=0.6)
            hint = (
                f', did you mean "{close[0]}"?'
                if close
                else f" (node label keys: {', '.join(label_keys[:8])}{', ...' if len(label_keys) > 8 else ''})"
            )
            if (
                getattr(g, "api_version", "") == "kueue.x-k8s.io" and key in annotated
            ):  # synthesized from Kueue's annotation
                where = f"{annotated[key]}: metadata.annotations[{KUEUE_REQUIRED}] (PodGroup/{key})"
            else:
                where = f"{kind}/{key}: spec.schedulingConstraints.topology[0].key"
            out.append(
                f'{where}: topology key "{tk}" is not a label of any node in the snapshot{hint} '
                f"(no placement of the gang can satisfy it: it stays Pending)"
            )
    return tuple(out)


def _assemble(
    b: _Builder, sources: tuple[str, ...], kube_version: KubeVersion | str | None = None
) -> Cluster:
    """Resolve what a builder collected into a Cluster (the tail of :func:`load_snapshot`)."""
    foreign.apply(b)
    groups, cpgs = b.resolve_groups()
    pods, groups, cpgs = foreign.align(b, b.resolve_pods(), groups, cpgs)
    pods, v1alpha1_groups, held = synthesize_v1alpha1(pods, b.workloads, groups)
    held = {**b.held, **held}
    groups = {**groups, **v1alpha1_groups}
    profile = b.profile or SchedulerProfile()
    pdbs = tuple(pdb if has else _pdb_with_status(pdb, pods) for pdb, has in b.pdbs.values())
    # The forest is built once: gating reads its structure, cluster.groups validates it below.
    forest = GroupTree.build(pods, groups, cpgs)
    gated = {**gate(pods, forest, profile), **held}
    dra = None
    if b.dra_objects or any(
        (raw.get("spec") or {}).get("resourceClaims") for _, raw, _ in b.pods.values()
    ):
        by_key = {p.key: p for p in pods}
        dra = build_state(
            b.dra_objects,
            [(by_key[k], raw, ctx) for k, (_, raw, ctx) in b.pods.items() if k in by_key],
            groups,
            b.note,
            b.nodes,
            b.namespaces,
        )
    cluster = Cluster(
        nodes=tuple(b.nodes.values()),
        pods=tuple(pods),
        pod_groups=groups,
        composite_pod_groups=cpgs,
        workloads=b.workloads,
        priority_classes=b.priority_classes,
        pdbs=pdbs,
        namespaces=b.namespaces,
        profile=profile,
        topologies=tuple(b.topologies.values()),
        gated=gated,
        skipped_kinds=dict(sorted(b.skipped.items())),
        warnings=tuple(b.unknown_warnings())
        + tuple(b.file_notes)
        + b.warnings()
        + dangling_references(pods, groups, cpgs, profile)
        + missing_topology_keys(list(b.nodes.values()), pods, groups, cpgs),
        translations=tuple(b.translations),
        sources=sources,
        kube_version=KubeVersion(kube_version) if kube_version else NEWEST,
        api_versions=dict(sorted(b.api_versions.items())),
        dra=dra.for_version(KubeVersion(kube_version) if kube_version else NEWEST) if dra else None,
        kueue=b.kueue_state,
    )
    # Validated here, so that hierarchy validation runs at load time; the forest is the one above
    # (the Cluster holds the objects it was given: the comparison is one of identities).
    if (
        cluster.pods == tuple(pods)
        and cluster.pod_groups == groups
        and cluster.composite_pod_groups == cpgs
    ):
        cluster.__dict__["groups"] = cluster.validated_groups(forest)
    cluster.groups  # noqa: B018
    return cluster


def load_pairs(
    pairs: list[tuple[str, dict]],
    *,
    sources: tuple[str, ...],
    kube_version: KubeVersion | str | None = None,
) -> Cluster:
    """Load objects that each carry the file they came from (``(file, object)``, as
    :mod:`gangplan.io.overlay` lays a what-if variant over a snapshot): the rules, checks and
    errors of :func:`load_snapshot`, every error naming the object's own file."""
    b = _Builder()
    with validating_for(kube_version):
        for file, raw in pairs:
            b.check_fields(file, raw)
            b.add(file, raw)
    return _assemble(b, sources, kube_version)


def load_objects(
    objects: list[dict],
    source: str = "<memory>",
    *,
    kube_version: KubeVersion | str | None = None,
    check_fields: bool = False,
) -> Cluster:
    """Load Kubernetes objects already in memory (dicts as YAML would give them) into a Cluster.

    Same rules and errors as :func:`load_snapshot` (``kind: List`` is flattened, duplicates and bad
    fields raise :class:`SnapshotError` naming ``source``); generators and tests use it to skip
    the YAML round trip. Objects built in memory are not checked for unknown fields
    (:mod:`gangplan.io.schema`) unless ``check_fields``; files always are.
    """
    b = _Builder()
    with validating_for(kube_version):
        for i, doc in enumerate(objects):
            for raw in _objects(source, doc, i):
                if check_fields:
                    b.check_fields(source, raw)
                b.add(source, raw)
    return _assemble(b, (source,), kube_version)
