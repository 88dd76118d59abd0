"""What every expander shares: the snapshot's existing objects, metadata helpers, notes."""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from gangplan.io.expand.naming import deterministic_uid, suffix
from gangplan.io.fields import INT64_MAX, INT64_MIN, Ctx, check_range

EXPANDED_FROM = "gangplan.io/expanded-from"
"""Annotation on every synthesized object: ``<Kind>/<namespace>/<name>`` of the object it came from."""

# Labels by which a controller's pods are recognised in a snapshot (besides ownerReferences).
JOB_NAME_LABELS = ("batch.kubernetes.io/job-name", "job-name")
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
_INDEXED_LABELS = (*JOB_NAME_LABELS, JOBSET_NAME_LABEL, LWS_NAME_LABEL)

MAX_EXPANDED = 100_000
"""Pods (and JobSet Jobs) gangplan synthesizes per snapshot at most: the Job API's cap on an Indexed
Job's parallelism (``maxParallelismForIndexedJob``, pkg/apis/batch/validation, v1.35) applied to the
whole expansion, so a replica count near int32's limit is bad input rather than billions of pods."""


@dataclass
class Meta:
    """The metadata of a controller object as the expanders need it."""

    namespace: str
    name: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]
    owners: list[dict]
    creation_timestamp: str

    @property
    def controller(self) -> dict | None:
        return next((o for o in self.owners if o.get("controller") is True), None)


@dataclass
class ExpandEnv:
    """The snapshot as the expanders see it, and what they report."""

    pods: list[dict] = field(default_factory=list)
    workloads: list[dict] = field(default_factory=list)
    jobs: list[dict] = field(default_factory=list)
    existing_groups: set[str] = field(default_factory=set)
    """``namespace/name`` of the PodGroups and CompositePodGroups in the snapshot."""
    made_groups: dict[str, str] = field(default_factory=dict)
    """``namespace/name`` of a synthesized PodGroup -> the object it was made for."""
    notes: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(kind, field, message, object name): turned into warnings by the loader."""
    _owners: set[tuple[str, str, str]] = field(default_factory=set)
    _labels: set[tuple[str, str, str]] = field(default_factory=set)
    _generated: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    _expanded: int = 0

    def __post_init__(self) -> None:
        for raw in [*self.pods, *self.jobs]:
            meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
            ns = str(meta.get("namespace") or "default")
            kind = raw.get("kind", "")
            for o in meta.get("ownerReferences") or ():
                if isinstance(o, dict):
                    self._owners.add((ns, f"{kind}<-{o.get('kind')}", str(o.get("name"))))
            labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
            for key in _INDEXED_LABELS:
                if key in labels:
                    self._labels.add((ns, f"{kind}:{key}", str(labels[key])))

    def owned(self, what: str, ns: str, owner_kind: str, owner: str) -> bool:
        """Is some ``what`` (``Pod`` or ``Job``) of the snapshot owned by ``owner_kind/owner``?"""
        return (ns, f"{what}<-{owner_kind}", owner) in self._owners

    def labelled(self, what: str, ns: str, key: str, value: str) -> bool:
        return (ns, f"{what}:{key}", value) in self._labels

    def reserve(self, ctx: Ctx, count: int, fld: str, what: str = "pods") -> None:
        """Count ``count`` objects about to be synthesized; beyond :data:`MAX_EXPANDED` is bad input."""
        self._expanded += count
        if check_range(self._expanded, None, MAX_EXPANDED, INT64_MIN, INT64_MAX, "int64"):
            raise ctx.fail(
                fld,
                f"expanding would create {count} {what} ({self._expanded} in this snapshot); gangplan expands at most {MAX_EXPANDED}",
            )

    def note(self, kind: str, fld: str, message: str, name: str) -> None:
        self.notes.append((kind, fld, message, name))

    def meta(self, ctx: Ctx, raw: dict, kind: str) -> Meta:
        """Name (``generateName`` completed deterministically), namespace, uid and the rest."""
        m = ctx.map(raw.get("metadata"), "metadata", required=True)
        ns = ctx.str(m.get("namespace"), "metadata.namespace", default="default") or "default"
        name = ctx.str(m.get("name"), "metadata.name")
        if not name:
            base = ctx.str(m.get("generateName"), "metadata.generateName")
            if not base:
                raise ctx.fail(
                    "metadata.name",
                    "required field is missing (neither name nor generateName is set)",
                )
            self._generated[(kind, ns, base)] += 1
            name = base[:58] + suffix(f"{kind}/{ns}/{base}#{self._generated[(kind, ns, base)]}")
        uid = ctx.str(m.get("uid"), "metadata.uid") or deterministic_uid(kind, ns, name)
        owners = [o for _, o in ctx.maps(m.get("ownerReferences"), "metadata.ownerReferences")]
        return Meta(
            ns,
            name,
            uid,
            ctx.str_map(m.get("labels"), "metadata.labels"),
            ctx.str_map(m.get("annotations"), "metadata.annotations"),
            owners,
            ctx.str(m.get("creationTimestamp"), "metadata.creationTimestamp"),
        )


def owner_ref(
    api_version: str, kind: str, name: str, uid: str, *, controller: bool = True
) -> dict[str, Any]:
    ref: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid}
    if controller:
        ref.update(controller=True, blockOwnerDeletion=True)
    return ref


def object_meta(
    name: str,
    namespace: str,
    *,
    source: str,
    labels: dict | None = None,
    annotations: dict | None = None,
    owners: list[dict] | None = None,
    creation_timestamp: str = "",
    uid_kind: str = "",
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if uid_kind:
        meta["uid"] = deterministic_uid(uid_kind, namespace, name)
    if creation_timestamp:
        meta["creationTimestamp"] = creation_timestamp
    if labels:
        meta["labels"] = dict(labels)
    meta["annotations"] = {**(annotations or {}), EXPANDED_FROM: source}
    if owners:
        meta["ownerReferences"] = owners
    return meta


def template_parts(
    ctx: Ctx, template: Any, field_: str
) -> tuple[dict[str, str], dict[str, str], dict]:
    """Labels, annotations and (a deep copy of) the spec of a PodTemplateSpec."""
    t = ctx.map(template, field_, required=True)
    tm = ctx.map(t.get("metadata"), field_ + ".metadata")
    spec = ctx.map(t.get("spec"), field_ + ".spec", required=True)
    ctx.maps(spec.get("containers"), field_ + ".spec.containers", required=True)
    return (
        ctx.str_map(tm.get("labels"), field_ + ".metadata.labels"),
        ctx.str_map(tm.get("annotations"), field_ + ".metadata.annotations"),
        copy.deepcopy(spec),
    )
