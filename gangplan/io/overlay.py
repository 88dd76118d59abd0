"""What-if variants: Kubernetes objects laid over a snapshot (``gangplan whatif``).

A variant is a file or directory of objects read like a snapshot. Laid over the base:

* an object with the same kind, namespace and name as a base object **replaces** it (whatever its
  apiVersion: a ``v1beta1`` PodGroup replaces a ``v1alpha2`` one of that name); any other object
  is **added**;
* a ``KubeSchedulerConfiguration`` replaces the base's (it has no name: kube-scheduler reads one
  ``--config``);
* an object annotated ``gangplan.io/remove: "true"`` **removes** the base object of its kind,
  namespace and name and is not added itself (only ``kind`` and ``metadata`` are read); a removed
  Node takes the pods bound to it along (a note says how many).

The shorthands build a variant from the base: :func:`scoring` (the NodeResourcesFit
``scoringStrategy`` type), :func:`add_nodes` (copies of a node) and :func:`drain` (nodes cordoned
and their bound pods evicted, as ``kubectl drain`` does).
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gangplan.io.errors import SnapshotError
from gangplan.io.loader import (
    _NAMESPACED,
    _NAMESPACED_FOREIGN,
    _objects,
    read_documents,
    snapshot_files,
)
from gangplan.models.well_known import HOSTNAME

REMOVE_ANNOTATION = "gangplan.io/remove"
"""On a variant's object: remove the base object of that kind, namespace and name."""

CONFIG_KIND = "KubeSchedulerConfiguration"
CONFIG_API = "kubescheduler.config.k8s.io/v1"
STRATEGIES = ("LeastAllocated", "MostAllocated")
"""The NodeResourcesFit scoring strategies ``--scoring`` takes (RequestedToCapacityRatio needs a
shape: write that configuration as a variant file)."""

Obj = dict[str, Any]


@dataclass
class Layer:
    """Objects of one snapshot or variant, with the file each came from."""

    name: str
    objects: list[tuple[str, Obj]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def raw(self) -> list[Obj]:
        return [o for _, o in self.objects]


def read_layer(path: str | os.PathLike, name: str | None = None) -> Layer:
    """Every object of the file or directory ``path``, flattened as the loader flattens them."""
    layer = Layer(name or Path(path).name)
    for f in snapshot_files(path):
        for i, doc in enumerate(read_documents(f)):
            layer.objects.extend((str(f), o) for o in _objects(str(f), doc, i))
    return layer


def _key(obj: Obj) -> tuple[str, str, str]:
    """(kind, namespace, name); a namespaced kind without a namespace is in ``default``."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    kind = str(obj.get("kind"))
    default = "default" if kind in _NAMESPACED or kind in _NAMESPACED_FOREIGN else ""
    return (kind, str(meta.get("namespace") or default), str(meta.get("name") or ""))


def _removes(obj: Obj) -> bool:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    ann = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
    return str(ann.get(REMOVE_ANNOTATION, "")).lower() == "true"


def overlay(base: Layer, variant: Layer) -> Layer:
    """``base`` with ``variant`` laid over it (module docstring). A removal that matches nothing is
    bad input: it names the object, as a typo would leave the variant asking another question."""
    out = list(base.objects)
    index = {_key(o): i for i, (_, o) in enumerate(out) if o.get("kind") != CONFIG_KIND}
    dropped: set[int] = set()
    added: list[tuple[str, Obj]] = []
    if any(o.get("kind") == CONFIG_KIND for _, o in variant.objects):
        dropped |= {i for i, (_, o) in enumerate(out) if o.get("kind") == CONFIG_KIND}
    for file, obj in variant.objects:
        key = _key(obj)
        if _removes(obj):
            i = index.get(key)
            if i is None:
                kind, ns, name = key
                raise SnapshotError(
                    file,
                    f"{REMOVE_ANNOTATION}: no {kind} {ns + '/' if ns else ''}{name} in the snapshot to remove",
                    obj=f"{kind}/{ns + '/' if ns else ''}{name}",
                    field=f"metadata.annotations.{REMOVE_ANNOTATION}",
                )
            dropped.add(i)
            continue
        i = index.get(key)
        if i is not None and obj.get("kind") != CONFIG_KIND:
            out[i] = (file, obj)
        else:
            added.append((file, obj))
    notes = list(base.notes + variant.notes)
    gone_nodes = {out[i][1]["metadata"]["name"] for i in dropped if out[i][1].get("kind") == "Node"}
    if gone_nodes:  # a removed node takes its bound pods with it
        bound = [
            i
            for i, (_, o) in enumerate(out)
            if i not in dropped
            and o.get("kind") == "Pod"
            and (o.get("spec") or {}).get("nodeName") in gone_nodes
        ]
        dropped |= set(bound)
        if bound:
            notes.append(
                f"removing {len(gone_nodes)} node(s) also removed the {len(bound)} pod(s) bound to them"
            )
    merged = [o for i, o in enumerate(out) if i not in dropped] + added
    return Layer(variant.name, merged, notes)


# ---- shorthands -------------------------------------------------------------------------------
def _config(base: Layer) -> Obj:
    for _, o in base.objects:
        if o.get("kind") == CONFIG_KIND:
            return copy.deepcopy(o)
    return {
        "apiVersion": CONFIG_API,
        "kind": CONFIG_KIND,
        "profiles": [{"schedulerName": "default-scheduler"}],
    }


def scoring(base: Layer, strategy: str) -> Layer:
    """The base's scheduler configuration (or the default one) with NodeResourcesFit's
    ``scoringStrategy.type`` set to ``strategy`` in every profile; its ``resources`` are kept
    (upstream's default, cpu and memory weighted 1, when absent)."""
    if strategy not in STRATEGIES:
        raise SnapshotError(
            "--scoring", f"unknown scoring strategy {strategy!r}; use {' or '.join(STRATEGIES)}"
        )
    cfg = _config(base)
    profiles = cfg.get("profiles") or [{"schedulerName": "default-scheduler"}]
    cfg["profiles"] = profiles
    for profile in profiles:
        plugin_config = profile.setdefault("pluginConfig", [])
        entry = next(
            (
                c
                for c in plugin_config
                if isinstance(c, dict) and c.get("name") == "NodeResourcesFit"
            ),
            None,
        )
        if entry is None:
            entry = {"name": "NodeResourcesFit", "args": {}}
            plugin_config.append(entry)
        args = entry.setdefault("args", {})
        args.setdefault("scoringStrategy", {})["type"] = strategy
    return Layer(f"scoring={strategy}", [("--scoring", cfg)])


def _nodes(base: Layer) -> list[Obj]:
    return [o for _, o in base.objects if o.get("kind") == "Node"]


def add_nodes(base: Layer, count: int, like: str) -> Layer:
    """``count`` idle copies of node ``like``: names ``<like>-whatif-<i>``, the hostname label
    set to the name, no bound pods, no server-set metadata."""
    if count < 1:
        raise SnapshotError("--add-nodes", f"expected a positive number of nodes, got {count}")
    template = next(
        (n for n in _nodes(base) if (n.get("metadata") or {}).get("name") == like), None
    )
    if template is None:
        names = sorted(str((n.get("metadata") or {}).get("name")) for n in _nodes(base))
        raise SnapshotError(
            "--like",
            f"no node {like!r} in the snapshot"
            + (
                f" (nodes: {', '.join(names[:5])}{', ...' if len(names) > 5 else ''})"
                if names
                else ""
            ),
        )
    out = []
    for i in range(1, count + 1):
        node = copy.deepcopy(template)
        meta = node.setdefault("metadata", {})
        for server_set in (
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "managedFields",
            "generation",
        ):
            meta.pop(server_set, None)
        meta["name"] = f"{like}-whatif-{i}"
        labels = meta.setdefault("labels", {})
        if HOSTNAME in labels:
            labels[HOSTNAME] = meta["name"]
        out.append(("--add-nodes", node))
    return Layer(f"+{count} like {like}", out)


def _short(target: str) -> str:
    """``topology.kubernetes.io/rack=b`` -> ``rack=b``: the variant's name in the table."""
    key, sep, value = target.partition("=")
    return f"{key.rsplit('/', 1)[-1]}{sep}{value}"


TERMINATED_PHASES = ("Succeeded", "Failed")
"""Pod phases that hold no resources (the loader skips such pods too)."""


def _terminated(pod: Obj) -> bool:
    status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
    return status.get("phase") in TERMINATED_PHASES


def drain(base: Layer, target: str) -> Layer:
    """Cordon the nodes named ``target`` (or carrying the label ``key=value``) and evict their
    bound pods, as ``kubectl drain`` does. Evicted pods leave the snapshot: their controllers'
    replacements are not created (a note on the variant says how many left). Succeeded and
    Failed pods on those nodes are neither evicted nor counted."""
    if "=" in target:
        key, _, value = target.partition("=")
        chosen = [
            n
            for n in _nodes(base)
            if ((n.get("metadata") or {}).get("labels") or {}).get(key) == value
        ]
    else:
        chosen = [n for n in _nodes(base) if (n.get("metadata") or {}).get("name") == target]
    if not chosen:
        raise SnapshotError(
            "--drain", f"no node {'labelled ' if '=' in target else ''}{target} in the snapshot"
        )
    names = {n["metadata"]["name"] for n in chosen}
    out: list[tuple[str, Obj]] = []
    for n in chosen:
        node = copy.deepcopy(n)
        node.setdefault("spec", {})["unschedulable"] = True
        out.append(("--drain", node))
    evicted = 0
    for _, o in base.objects:
        # Only running pods are evicted and counted: a Succeeded or Failed pod bound there holds
        # nothing and stays (issue 41: the note counted a Succeeded pod as evicted).
        if (
            o.get("kind") == "Pod"
            and (o.get("spec") or {}).get("nodeName") in names
            and not _terminated(o)
        ):
            meta = o.get("metadata") or {}
            out.append(
                (
                    "--drain",
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {
                            "name": meta.get("name"),
                            "namespace": meta.get("namespace") or "default",
                            "annotations": {REMOVE_ANNOTATION: "true"},
                        },
                    },
                )
            )
            evicted += 1
    layer = Layer(f"drain {_short(target)}", out)
    layer.notes.append(
        f"{len(names)} node(s) cordoned, {evicted} bound pod(s) evicted (not recreated)"
    )
    return layer


def _cluster_queue(base: Layer, name: str, flag: str) -> Obj:
    found = [
        o
        for _, o in base.objects
        if o.get("kind") == "ClusterQueue"
        and str(o.get("apiVersion", "")).startswith("kueue.x-k8s.io/")
        and (o.get("metadata") or {}).get("name") == name
    ]
    if not found:
        names = sorted(
            str((o.get("metadata") or {}).get("name"))
            for _, o in base.objects
            if o.get("kind") == "ClusterQueue"
        )
        raise SnapshotError(
            flag,
            f"no ClusterQueue {name!r} in the snapshot"
            + (f" (ClusterQueues: {', '.join(names[:5])})" if names else ""),
        )
    return copy.deepcopy(found[0])


def quota(base: Layer, spec: str) -> Layer:
    """A ClusterQueue's nominal quota of one flavor and resource set (``CQ:FLAVOR:RESOURCE=Q``)
    or raised (``...=+Q``): the flavor and resource entries are added when the ClusterQueue has
    none (the resource then joins the first resource group covering it, else a flavor's group is
    the first that lists the flavor)."""
    from gangplan.models.quantity import QuantityError, format_quantity, to_scheduler_int

    target, sep, value = spec.partition("=")
    parts = target.split(":")
    if not sep or len(parts) != 3 or not all(parts) or not value.lstrip("+"):
        raise SnapshotError(
            "--quota", f"expected CQ:FLAVOR:RESOURCE=QUANTITY or =+QUANTITY, got {spec!r}"
        )
    cq_name, flavor, resource = parts
    cq = _cluster_queue(base, cq_name, "--quota")
    add = value.startswith("+")
    try:
        amount = to_scheduler_int(resource, value.lstrip("+"))
    except (QuantityError, ValueError) as e:
        raise SnapshotError("--quota", f"{spec!r}: {e}") from None
    groups = (cq.setdefault("spec", {})).setdefault("resourceGroups", [])
    group = next((g for g in groups if resource in (g.get("coveredResources") or [])), None)
    if group is None:
        group = next(
            (g for g in groups if any(f.get("name") == flavor for f in g.get("flavors") or [])),
            None,
        )
        if group is None:
            group = {"coveredResources": [], "flavors": []}
            groups.append(group)
        group.setdefault("coveredResources", []).append(resource)
    fq = next((f for f in group.setdefault("flavors", []) if f.get("name") == flavor), None)
    if fq is None:
        fq = {"name": flavor, "resources": []}
        group["flavors"].append(fq)
    rq = next((r for r in fq.setdefault("resources", []) if r.get("name") == resource), None)
    if rq is None:
        rq = {"name": resource, "nominalQuota": "0"}
        fq["resources"].append(rq)
    before = to_scheduler_int(resource, str(rq.get("nominalQuota", "0"))) if add else 0
    rq["nominalQuota"] = format_quantity(resource, before + amount)
    return Layer(f"quota {cq_name}:{flavor}:{resource}={value}", [("--quota", cq)])


def cohort(base: Layer, spec: str) -> Layer:
    """A ClusterQueue put in a cohort (``CQ=COHORT``; ``CQ=`` leaves its cohort)."""
    name, sep, value = spec.partition("=")
    if not sep or not name:
        raise SnapshotError("--cohort", f"expected CQ=COHORT, got {spec!r}")
    cq = _cluster_queue(base, name, "--cohort")
    field_name = "cohort" if str(cq.get("apiVersion", "")).endswith("/v1beta1") else "cohortName"
    if value:
        cq.setdefault("spec", {})[field_name] = value
    else:
        (cq.get("spec") or {}).pop(field_name, None)
    return Layer(f"cohort {name}={value or '-'}", [("--cohort", cq)])


__all__ = [
    "CONFIG_KIND",
    "cohort",
    "quota",
    "REMOVE_ANNOTATION",
    "STRATEGIES",
    "Layer",
    "add_nodes",
    "drain",
    "overlay",
    "read_layer",
    "scoring",
]
