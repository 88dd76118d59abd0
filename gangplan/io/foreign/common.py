"""What every translation of a foreign group API into the native group model shares."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from gangplan.io.fields import Ctx
from gangplan.models.objects import CompositePodGroup, Pod, PodGroup

PREFERRED = "gangplan.io/preferred-topology"
PATH_LABEL_PREFIX = "gangplan.io/path-"
"""Synthesized node label for a level of a hierarchical topology whose values repeat under
different parents: ``gangplan.io/path-<level key with / as _>``, value ``<v0>/<v1>/.../<level value>``."""


@dataclass(frozen=True)
class ForeignObject:
    """One foreign group object, read far enough to name it: its file, context and metadata."""

    file: str
    ctx: Ctx
    meta: dict
    namespace: str
    name: str
    spec: dict

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def read_objects(
    objects: list[tuple[str, dict]], kind: str, api: str, *, spec_required: bool = False
) -> list[ForeignObject]:
    """The objects of one foreign kind with metadata and spec read, duplicates refused (exit 2)."""
    out: list[ForeignObject] = []
    seen: set[tuple[str, str]] = set()
    for file, raw in objects:
        meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
        ctx = Ctx(
            file, f"{kind}/{meta.get('namespace') or 'default'}/{meta.get('name', '?')} ({api})"
        )
        m = ctx.map(raw.get("metadata"), "metadata", required=True)
        ns = ctx.str(m.get("namespace"), "metadata.namespace", default="default") or "default"
        name = ctx.str(m.get("name"), "metadata.name", required=True)
        if (ns, name) in seen:
            raise ctx.fail("metadata.name", "duplicate object")
        seen.add((ns, name))
        out.append(
            ForeignObject(
                file, ctx, m, ns, name, ctx.map(raw.get("spec"), "spec", required=spec_required)
            )
        )
    return out


@dataclass
class Hierarchy:
    """A translated group tree, for the priority alignment after resolution."""

    root: str
    keys: list[str] = field(default_factory=list)
    """Every PodGroup and CompositePodGroup key of it."""
    pods: list[str] = field(default_factory=list)
    from_group: bool = False
    """True when the foreign object named a priority class (pods take the group's priority), else
    the groups take their pods' (the highest one, when they differ)."""


class Env:
    """The loader's builder as the translators see it, and what they report."""

    def __init__(self, b: Any) -> None:
        self.b = b
        self.lines: list[str] = []
        self.held: dict[str, str] = {}
        self.hierarchies: list[Hierarchy] = []
        self.renamed: Counter[str] = Counter()
        self.synthesized_labels: dict[str, str] = {}

    @property
    def profile_name(self) -> str:
        return self.b.profile.scheduler_name if self.b.profile is not None else "default-scheduler"

    def note(self, kind: str, fld: str, message: str, name: str) -> None:
        self.b.note(kind, fld, message, name)

    # ---- groups ------------------------------------------------------------------------------
    def taken(self, ns: str, name: str) -> bool:
        key = f"{ns}/{name}"
        return key in self.b.pod_groups or key in self.b.cpgs

    def free_name(self, ns: str, name: str, suffix: str) -> str:
        """``name``, or ``name-<suffix>[-n]`` when a native group of that name exists."""
        if not self.taken(ns, name):
            return name
        candidate, n = f"{name}-{suffix}", 1
        while self.taken(ns, candidate):
            n += 1
            candidate = f"{name}-{suffix}-{n}"
        return candidate

    def add(self, group: PodGroup | CompositePodGroup, ctx: Ctx) -> str:
        store = self.b.pod_groups if isinstance(group, PodGroup) else self.b.cpgs
        store[group.key] = (group, ctx)
        return group.key

    # ---- pods --------------------------------------------------------------------------------
    def pods(self) -> list[tuple[str, Pod, dict]]:
        """(key, pod, raw) of every pod read so far (terminated ones are not kept)."""
        return [(k, obj, raw) for k, (obj, raw, _) in self.b.pods.items()]

    def pods_by_annotation(self, annotation: str) -> dict[tuple[str, str], list[str]]:
        """(namespace, annotation value) -> keys of the pods carrying it, in snapshot order."""
        out: dict[tuple[str, str], list[str]] = {}
        for key, pod, _ in self.pods():
            value = pod.annotations.get(annotation)
            if value:
                out.setdefault((pod.namespace, value), []).append(key)
        return out

    def link(self, key: str, group: str, schedulers: tuple[str, ...]) -> None:
        """Put pod ``key`` into PodGroup ``group``; a schedulerName of the foreign scheduler is read
        as the profile's."""
        obj, raw, ctx = self.b.pods[key]
        update: dict[str, Any] = {"pod_group": group}
        if obj.scheduler_name in schedulers and obj.scheduler_name != self.profile_name:
            self.renamed[obj.scheduler_name] += 1
            update["scheduler_name"] = self.profile_name
        self.b.pods[key] = (obj.model_copy(update=update), raw, ctx)

    def read_as_profile(self, key: str) -> None:
        obj, raw, ctx = self.b.pods[key]
        if obj.scheduler_name != self.profile_name:
            self.renamed[obj.scheduler_name] += 1
            self.b.pods[key] = (
                obj.model_copy(update={"scheduler_name": self.profile_name}),
                raw,
                ctx,
            )

    # ---- topology ----------------------------------------------------------------------------
    def level_key(self, key: str, levels: tuple[str, ...]) -> str:
        """The node label whose values are the domains of level ``key`` of a hierarchical topology
        (``levels`` coarse to fine, Kueue / KAI ``Topology``): ``key`` itself when each of its values
        lies under one path of the coarser levels (and every node carrying it has the whole path),
        else a label synthesized on the nodes with the whole path as value (:data:`PATH_LABEL_PREFIX`),
        because a native domain is one value of one label (KEP-5732)."""
        if key not in levels or levels.index(key) == 0:
            return key
        prefix = levels[: levels.index(key) + 1]
        paths: dict[str, set[tuple[str, ...]]] = {}
        broken = False
        for n in self.b.nodes.values():
            if key not in n.labels:
                continue
            if not all(k in n.labels for k in prefix):
                broken = True
                continue
            paths.setdefault(n.labels[key], set()).add(tuple(n.labels[k] for k in prefix[:-1]))
        if not broken and all(len(p) == 1 for p in paths.values()):
            return key
        synth = PATH_LABEL_PREFIX + key.replace("/", "_")
        if synth not in self.synthesized_labels:
            for name, n in list(self.b.nodes.items()):
                if all(k in n.labels for k in prefix):
                    value = "/".join(n.labels[k] for k in prefix)
                    self.b.nodes[name] = n.model_copy(update={"labels": {**n.labels, synth: value}})
            repeated = sorted(v for v, p in paths.items() if len(p) > 1)
            self.synthesized_labels[synth] = (
                f"domains of level {key} are paths {' / '.join(prefix)} (values such as "
                f"{', '.join(repeated[:3]) or 'some'} repeat under different parents or lack a parent): "
                f"nodes carry the synthesized label {synth}=<path>, used as the topology key"
            )
        return synth
