"""KAI-Scheduler snapshot files (``snapshot.zip`` / ``snapshot.json``) as gangplan snapshots.

Format (NVIDIA/KAI-Scheduler @ 72de64fc8eca10fa8cca26a20156178f3edbe092,
``pkg/scheduler/plugins/snapshot/snapshot.go``: ``Snapshot``, ``RawKubernetesObjects``;
``cmd/snapshot-tool/main.go`` ``loadSnapshot``; docs/upstream-foreign-apis.md §3.3): the
scheduler's ``GET /get-snapshot`` answers with a ZIP archive holding one entry ``snapshot.json``,
a JSON object ``{"config", "schedulerParams", "rawObjects", "discovery"}``. ``rawObjects`` maps
a list name to the informers' objects, marshalled by Go without ``kind`` / ``apiVersion``, so the
list decides the kind; an empty list may be ``null``. ``config`` (KAI actions and plugin tiers)
is not a kube-scheduler profile: gangplan schedules with the default profile and says so in a
warning; ``schedulerParams.schedulerName`` is KAI's own name (``kai-scheduler``), whose pods the
KAI translation reads as the profile's.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

from gangplan.io.errors import SnapshotError

ENTRY = "snapshot.json"
RAW_OBJECTS: dict[str, tuple[str, str]] = {
    "pods": ("v1", "Pod"),
    "nodes": ("v1", "Node"),
    "queues": ("scheduling.run.ai/v2", "Queue"),
    "podGroups": ("scheduling.run.ai/v2alpha2", "PodGroup"),
    "bindRequests": ("scheduling.run.ai/v1alpha2", "BindRequest"),
    "priorityClasses": ("scheduling.k8s.io/v1", "PriorityClass"),
    "configMaps": ("v1", "ConfigMap"),
    "persistentVolumeClaims": ("v1", "PersistentVolumeClaim"),
    "csiStorageCapacities": ("storage.k8s.io/v1", "CSIStorageCapacity"),
    "storageClasses": ("storage.k8s.io/v1", "StorageClass"),
    "csiDrivers": ("storage.k8s.io/v1", "CSIDriver"),
    "resourceClaims": ("resource.k8s.io/v1", "ResourceClaim"),
    "resourceSlices": ("resource.k8s.io/v1", "ResourceSlice"),
    "deviceClasses": ("resource.k8s.io/v1", "DeviceClass"),
    "topologies": ("kai.scheduler/v1alpha1", "Topology"),
}
CONFIG_KIND = "KAISchedulerConfiguration"
"""Pseudo-kind under which the snapshot's ``config`` is named in a warning."""


def is_kai_snapshot(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and "kind" not in doc
        and isinstance(doc.get("rawObjects"), dict | None)
        and "rawObjects" in doc
    )


def read_zip(path: Path) -> Any:
    """The decoded ``snapshot.json`` of a KAI snapshot archive."""
    name = str(path)
    try:
        with zipfile.ZipFile(path) as z:
            try:
                data = z.read(ENTRY)
            except KeyError:
                raise SnapshotError(
                    name,
                    f"not a KAI snapshot archive: no entry {ENTRY!r} (entries: {', '.join(z.namelist()[:5]) or 'none'})",
                ) from None
    except zipfile.BadZipFile as e:
        raise SnapshotError(name, f"not a ZIP archive: {e}") from None
    except OSError as e:
        raise SnapshotError(name, f"cannot read: {e.strerror or e}") from None
    try:
        return json.load(io.BytesIO(data))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        line = getattr(e, "lineno", None)
        raise SnapshotError(
            f"{name}!{ENTRY}", f"invalid JSON: {getattr(e, 'msg', e)}", line=line
        ) from None


def objects(file: str, doc: dict) -> list[dict]:
    """The Kubernetes objects of a decoded ``snapshot.json``, each with its kind and apiVersion."""
    raw = doc.get("rawObjects") or {}
    if not isinstance(raw, dict):
        raise SnapshotError(file, "KAI snapshot: rawObjects is not an object", field="rawObjects")
    out: list[dict] = []
    for key in sorted(
        raw, key=lambda k: (list(RAW_OBJECTS).index(k) if k in RAW_OBJECTS else len(RAW_OBJECTS), k)
    ):
        items = raw[key]
        if items is None:
            continue
        if not isinstance(items, list):
            raise SnapshotError(
                file, f"KAI snapshot: rawObjects.{key} is not a list", field=f"rawObjects.{key}"
            )
        if key not in RAW_OBJECTS:
            out += [{"kind": f"KAI rawObjects.{key}", "metadata": {"name": "?"}} for _ in items]
            continue
        api, kind = RAW_OBJECTS[key]
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise SnapshotError(
                    file,
                    f"KAI snapshot: rawObjects.{key}[{i}] is not an object",
                    field=f"rawObjects.{key}[{i}]",
                )
            out.append(
                {
                    **item,
                    "kind": item.get("kind") or kind,
                    "apiVersion": item.get("apiVersion") or api,
                }
            )
    if doc.get("config"):
        out.append(
            {
                "kind": CONFIG_KIND,
                "apiVersion": "kai-scheduler.config/v1",
                "metadata": {"name": "config"},
            }
        )
    return out
