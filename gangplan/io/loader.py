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

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from gangplan.io.config import parse_scheduler_config
from gangplan.io.errors import SnapshotError
from gangplan.io.fields import Ctx
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
from gangplan.models.cluster import Cluster
from gangplan.models.objects import (
    LabelSelector,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    SchedulerProfile,
)

try:  # libyaml is ~10x faster on large dumps; fall back to the pure-Python loader.
    _BaseYamlLoader = yaml.CSafeLoader  # type: ignore[attr-defined]
except AttributeError:  # pragma: no cover
    _BaseYamlLoader = yaml.SafeLoader


class _YamlLoader(_BaseYamlLoader):  # type: ignore[misc,valid-type]
    """Safe loading, except that timestamps stay strings.

    Kubernetes reads YAML through JSON (sigs.k8s.io/yaml), so an unquoted
    ``creationTimestamp: 2026-11-30T10:00:00Z`` is the string it was written as, not a datetime.
    """


_YamlLoader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))

SNAPSHOT_SUFFIXES = (".yaml", ".yml", ".json")
SIMULATOR_KEYS = {
    "nodes": "Node",
    "pods": "Pod",
    "priorityClasses": "PriorityClass",
    "schedulerConfig": "KubeSchedulerConfiguration",
    "namespaces": "Namespace",
    "podGroups": "PodGroup",
    "compositePodGroups": "CompositePodGroup",
    "workloads": "Workload",
    "podDisruptionBudgets": "PodDisruptionBudget",
    "pdbs": "PodDisruptionBudget",
    "topologies": "Topology",
}
_SIMULATOR_IGNORED = {"pvs", "pvcs", "storageClasses", "persistentVolumes", "persistentVolumeClaims", "resourceClaims", "deviceClasses", "resourceSlices"}


# ---- reading files ----------------------------------------------------------------------------
def snapshot_files(path: str | os.PathLike) -> list[Path]:
    """The files of a snapshot: the file itself, or every YAML/JSON file under a directory, sorted."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in SNAPSHOT_SUFFIXES and not f.name.startswith("."))
        if not files:
            raise SnapshotError(str(p), "directory holds no .yaml, .yml or .json file")
        return files
    if not p.exists():
        raise SnapshotError(str(p), "no such file or directory")
    return [p]


def read_documents(path: Path) -> list[Any]:
    """Parse one file into its documents, with syntax errors reported at file:line."""
    name = str(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise SnapshotError(name, f"cannot read: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise SnapshotError(name, f"not UTF-8 text (byte {e.start})", line=line) from None
    if path.suffix.lower() == ".json" or text.lstrip().startswith(("{", "[")):
        try:
            return [json.loads(text)]
        except json.JSONDecodeError as e:
            if path.suffix.lower() == ".json":
                raise SnapshotError(name, f"invalid JSON: {e.msg} (column {e.colno})", line=e.lineno) from None
            # YAML flow style also starts with "{": let the YAML parser have a go.
        except RecursionError:
            raise SnapshotError(name, "invalid JSON: nesting too deep") from None
        except ValueError as e:  # e.g. an integer longer than Python's conversion limit
            raise SnapshotError(name, f"invalid JSON: {e}") from None
    try:
        return [d for d in yaml.load_all(text, Loader=_YamlLoader)]
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else None
        msg = " ".join(str(x) for x in (e.context, e.problem) if x)
        raise SnapshotError(name, f"invalid YAML: {msg}", line=line) from None
    except yaml.YAMLError as e:
        raise SnapshotError(name, f"invalid YAML: {e}") from None
    except (RecursionError, ValueError, TypeError, OverflowError) as e:
        raise SnapshotError(name, f"invalid YAML: {type(e).__name__}: {e}") from None


def _objects(file: str, doc: Any, index: int) -> list[dict]:
    """Flatten a document into Kubernetes objects (List items, simulator exports, arrays)."""
    if doc is None:
        return []
    if isinstance(doc, list):
        out = []
        for i, d in enumerate(doc):
            out.extend(_objects(file, d, index * 1000 + i))
        return out
    if not isinstance(doc, dict):
        raise SnapshotError(file, f"document {index + 1} is a {type(doc).__name__}, not a Kubernetes object")
    kind = doc.get("kind")
    if kind is None:
        keys = set(doc) & (set(SIMULATOR_KEYS) | _SIMULATOR_IGNORED)
        if keys:
            out = []
            for key, k in SIMULATOR_KEYS.items():
                val = doc.get(key)
                if val is None:
                    continue
                items = val if isinstance(val, list) else [val]
                for i, item in enumerate(items):
                    if not isinstance(item, dict):
                        raise SnapshotError(file, f"simulator export: {key}[{i}] is not an object", field=f"{key}[{i}]")
                    if "kind" in item and not isinstance(item["kind"], str):
                        raise SnapshotError(file, f"simulator export: {key}[{i}]: kind is not a string", field=f"{key}[{i}].kind")
                    out.append({"kind": k, **item} if "kind" not in item else item)
            return out
        raise SnapshotError(file, f"document {index + 1} has no kind", field="kind")
    if not isinstance(kind, str):
        raise SnapshotError(file, f"document {index + 1}: kind is not a string", field="kind")
    if kind.endswith("List") and "items" in doc:
        items = doc.get("items") or []
        if not isinstance(items, list):
            raise SnapshotError(file, f"{kind}: items is not a list", field="items")
        out = []
        item_kind = kind[: -len("List")] if kind != "List" else None
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise SnapshotError(file, f"{kind}: items[{i}] is not an object", field=f"items[{i}]")
            if item_kind and "kind" not in item:
                item = {"kind": item_kind, **item}
            out.extend(_objects(file, item, i))
        return out
    return [doc]


def _ref(kind: str, raw: dict, namespaced: bool) -> str:
    meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
    name = meta.get("name", "?")
    if namespaced:
        return f"{kind}/{meta.get('namespace') or 'default'}/{name}"
    return f"{kind}/{name}"


# ---- assembling -------------------------------------------------------------------------------
_NAMESPACED = {"Pod", "PodGroup", "CompositePodGroup", "Workload", "PodDisruptionBudget"}
_KNOWN = _NAMESPACED | {"Node", "PriorityClass", "KubeSchedulerConfiguration", "Topology", "Namespace"}
# The API group each kind is read from. Same-named kinds of other groups (the scheduler-plugins
# PodGroup in scheduling.x-k8s.io, say) are different APIs: they are skipped and counted.
_GROUPS = {
    "Node": "", "Pod": "", "Namespace": "",
    "PodGroup": "scheduling.k8s.io", "CompositePodGroup": "scheduling.k8s.io", "Workload": "scheduling.k8s.io",
    "PriorityClass": "scheduling.k8s.io", "PodDisruptionBudget": "policy",
    "KubeSchedulerConfiguration": "kubescheduler.config.k8s.io", "Topology": "kueue.x-k8s.io",
}


def _foreign_api(kind: str, api_version: Any) -> bool:
    """True when ``apiVersion`` is given and names another API group than the one gangplan reads."""
    if not isinstance(api_version, str) or not api_version:
        return False
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    return group != _GROUPS[kind]


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
    def __init__(self) -> None:
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

    def _unique(self, ref: str, file: str) -> None:
        if ref in self.seen:
            raise SnapshotError(file, f"duplicate object (first defined in {self.seen[ref]})", obj=ref)
        self.seen[ref] = file

    def add(self, file: str, raw: dict) -> None:
        kind = raw.get("kind")
        if kind not in _KNOWN:
            self.skipped[str(kind)] += 1
            return
        if _foreign_api(kind, raw.get("apiVersion")):
            self.skipped[f"{kind} ({raw.get('apiVersion')})"] += 1
            return
        ref = _ref(kind, raw, kind in _NAMESPACED)
        ctx = Ctx(file, ref)
        if kind in _PARSERS:
            parse, store, key_attr = _PARSERS[kind]
            parsed = parse(ctx, raw)
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
            getattr(self, store)[getattr(obj, key_attr)] = value
        elif kind == "KubeSchedulerConfiguration":
            if self.profile is not None:
                raise SnapshotError(file, f"duplicate object (first defined in {self.profile.source})", obj="KubeSchedulerConfiguration")
            self.profile = parse_scheduler_config(Ctx(file, "KubeSchedulerConfiguration"), raw)

    # -- resolution ---------------------------------------------------------------------------
    def _class_priority(self, ctx: Ctx, class_name: str, field: str) -> int | None:
        if class_name:
            pc = self.priority_classes.get(class_name)
            if pc is None:
                raise ctx.fail(field, f"PriorityClass {class_name!r} not found in the snapshot")
            return pc.value
        return None

    def _default_priority(self) -> int:
        defaults = [pc.value for pc in self.priority_classes.values() if pc.global_default]
        return max(defaults) if defaults else 0

    def _with_priority(self, g: Any, ctx: Ctx) -> Any:
        """A group's priority: spec.priority, else its PriorityClass, else the global default."""
        if g.priority != 0:
            return g
        cp = self._class_priority(ctx, g.priority_class_name, "spec.priorityClassName")
        prio = cp if cp is not None else self._default_priority() if not g.priority_class_name else 0
        return g.model_copy(update={"priority": prio})

    def resolve_groups(self) -> tuple[dict[str, PodGroup], dict[str, Any]]:
        groups = {key: self._with_priority(g, ctx) for key, (g, ctx) in self.pod_groups.items()}
        cpgs = {key: self._with_priority(g, ctx) for key, (g, ctx) in self.cpgs.items()}
        # A hierarchy must be a forest: a cycle is bad input. A missing parent gates (see gating).
        for start in list(groups) + list(cpgs):
            seen = [start]
            g = groups.get(start) or cpgs.get(start)
            while g is not None and g.parent is not None:
                parent_key = f"{g.namespace}/{g.parent}"
                if parent_key in seen:
                    ctx = (self.pod_groups.get(start) or self.cpgs.get(start))[1]
                    chain = " -> ".join(seen + [parent_key])
                    raise ctx.fail("spec.parentCompositePodGroupName", f"group hierarchy has a cycle: {chain}")
                if parent_key in groups:
                    ctx = (self.pod_groups.get(seen[-1]) or self.cpgs.get(seen[-1]))[1]
                    raise ctx.fail("spec.parentCompositePodGroupName", f"parent {parent_key} is a PodGroup, not a CompositePodGroup")
                seen.append(parent_key)
                g = cpgs.get(parent_key)
        return groups, cpgs

    def resolve_pods(self) -> list[Pod]:
        out = []
        default = self._default_priority()
        for obj, raw, ctx in self.pods.values():
            spec = raw.get("spec") or {}
            if spec.get("priority") is None:
                cp = self._class_priority(ctx, obj.priority_class_name, "spec.priorityClassName")
                obj = obj.model_copy(update={"priority": cp if cp is not None else default})
            if obj.node_name is not None and obj.node_name not in self.nodes:
                raise ctx.fail("spec.nodeName", f"bound to node {obj.node_name!r}, which is not in the snapshot")
            out.append(obj)
        return out


def _pdb_with_status(pdb: PodDisruptionBudget, pods: list[Pod]) -> PodDisruptionBudget:
    """Compute ``disruptionsAllowed`` the way the disruption controller would, for a PDB without status."""
    from gangplan.predicates.labels import selector_matches

    matching = [p for p in pods if p.namespace == pdb.namespace and pdb.selector is not None and selector_matches(pdb.selector, p.labels)]
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


def _gate(pods: list[Pod], groups: dict[str, PodGroup], cpgs: dict[str, Any], profile: SchedulerProfile) -> dict[str, str]:
    """Reasons why pending pods are not queued (PreEnqueue)."""
    counts: Counter[str] = Counter(p.group_key for p in pods if p.group_key)
    memo: dict[str, tuple[bool, str]] = {}

    def ready(key: str) -> tuple[bool, str]:
        if key in memo:
            return memo[key]
        if key in groups:
            g = groups[key]
            need = g.min_count if g.policy == "gang" else 1
            have = counts.get(key, 0)
            res = (have >= need, f"waiting for gang quorum: PodGroup {key} has {have} of minCount {need} pods")
        else:
            c = cpgs[key]
            need = c.min_group_count if c.policy == "gang" else 1
            kids = [k for k, g in list(groups.items()) + list(cpgs.items()) if g.parent is not None and f"{g.namespace}/{g.parent}" == key]
            n_ready = sum(1 for k in kids if ready(k)[0])
            res = (n_ready >= need, f"waiting for CompositePodGroup {key}: {n_ready} of minGroupCount {need} children ready")
        memo[key] = res
        return res

    gated: dict[str, str] = {}
    for p in pods:
        if p.node_name is not None:
            continue
        if p.scheduling_gates:
            gated[p.key] = "scheduling gates: " + ", ".join(p.scheduling_gates)
            continue
        if p.group_key is None:
            if p.scheduler_name != profile.scheduler_name:
                gated[p.key] = f"schedulerName {p.scheduler_name!r} is not served by profile {profile.scheduler_name!r}"
            continue
        g = groups.get(p.group_key)
        if g is None:
            gated[p.key] = f"waiting for pod group {p.group_key}"
            continue
        # Walk to the root; a missing parent gates (the hierarchy is not observed yet).
        key, missing = p.group_key, None
        node: Any = g
        while node.parent is not None:
            parent_key = f"{node.namespace}/{node.parent}"
            if parent_key not in cpgs:
                missing = parent_key
                break
            key, node = parent_key, cpgs[parent_key]
        if missing:
            gated[p.key] = f"waiting for CompositePodGroup {missing}"
            continue
        ok, why = ready(key)
        if not ok:
            gated[p.key] = why
    return gated


def load_snapshot(path: str | os.PathLike) -> Cluster:
    """Load a snapshot file or directory. Raises :class:`SnapshotError` on bad input."""
    b = _Builder()
    files = snapshot_files(path)
    for f in files:
        docs = read_documents(f)
        for i, doc in enumerate(docs):
            for raw in _objects(str(f), doc, i):
                b.add(str(f), raw)
    return _assemble(b, tuple(str(f) for f in files))


__all__ = ["load_snapshot", "load_objects", "snapshot_files", "read_documents", "SnapshotError", "LabelSelector"]


def _assemble(b: _Builder, sources: tuple[str, ...]) -> Cluster:
    """Resolve what a builder collected into a Cluster (the tail of :func:`load_snapshot`)."""
    groups, cpgs = b.resolve_groups()
    pods = b.resolve_pods()
    profile = b.profile or SchedulerProfile()
    pdbs = tuple(pdb if has else _pdb_with_status(pdb, pods) for pdb, has in b.pdbs.values())
    return Cluster(
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
        gated=_gate(pods, groups, cpgs, profile),
        skipped_kinds=dict(sorted(b.skipped.items())),
        sources=sources,
    )


def load_objects(objects: list[dict], source: str = "<memory>") -> Cluster:
    """Load Kubernetes objects already in memory (dicts as YAML would give them) into a Cluster.

    Same rules and errors as :func:`load_snapshot` (``kind: List`` is flattened, duplicates and bad
    fields raise :class:`SnapshotError` naming ``source``); generators and tests use it to skip
    the YAML round trip.
    """
    b = _Builder()
    for i, doc in enumerate(objects):
        for raw in _objects(source, doc, i):
            b.add(source, raw)
    return _assemble(b, (source,))
