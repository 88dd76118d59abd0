"""Generate ``fields.json``: the known field names of every kind gangplan reads, from the upstream
Go type definitions (what the API server's strict field validation checks against).

Run::

    python -m gangplan.io.schema.generate --from-git /work/.mirror --cache /tmp/gosrc
    python -m gangplan.io.schema.generate --cache /tmp/gosrc        # cache already filled

``--from-git DIR`` copies each source file below out of a git clone ``DIR/<owner>+<repo>/repo`` at
the commit named in :data:`SOURCES` into ``CACHE/<owner>+<repo>@<commit>/<path>``; the generator
then reads only the cache. Upstream Go source is never committed: only this script and the table.

Sources (repo @ commit, what the commit is):

* ``kubernetes/api`` @ ``9afe7de0a56c582b06ca094f7309015bc84657a7`` (tag v0.35.0 = Kubernetes
  v1.35.0): ``core/v1``, ``scheduling/v1alpha1`` (Workload), ``scheduling/v1beta1``, ``scheduling/v1``.
* ``kubernetes/api`` @ ``545bb975fe6653239af42324065cf72272186404`` (tag v0.36.0): ``core/v1``,
  ``scheduling/v1alpha2`` (Workload, PodGroup).
* ``kubernetes/api`` @ ``1c293eaf810b123325bc7d2c0b9682ff8806aaee`` (tag v0.37.0-beta.0): ``core/v1``,
  ``scheduling/v1alpha3``, ``scheduling/v1beta1``.
* ``kubernetes/api`` @ ``10b39a39bcee995dfe7cd5e8e7b922be5e46f1e2`` (master, 2026-07-24): ``core/v1``,
  ``scheduling/v1``, ``scheduling/v1alpha3``, ``scheduling/v1beta1``, ``policy/v1``, ``batch/v1``;
  and every ``*/*/register.go`` (the kinds each built-in group/version serves, for "a known kind
  under the wrong group").
* ``kubernetes/apimachinery`` @ ``eed236ceee2c19c2753a3d93ac0631dc20750454``: ``pkg/apis/meta/v1/types.go``.
* ``kubernetes/kube-scheduler`` @ ``e87dbddd27a5bd4c2028727c7ccc082cfb2cdc09``: ``config/v1/types.go``,
  ``config/v1/types_pluginargs.go``.
* ``kubernetes/component-base`` @ ``349fbe06359c4b39ca17bb9cabdf4a13d70b4b82``: ``config/v1alpha1/types.go``
  (the configuration's leaderElection, clientConnection and inlined debugging fields).
* ``kubernetes-sigs/scheduler-plugins`` @ ``903da7df82cb8794dda8f2d510ba1156111662dd``:
  ``apis/scheduling/v1alpha1/types.go`` (coscheduling PodGroup).
* ``volcano-sh/apis`` @ ``536f121f53656c6fb7a07b9775b7e0f22c3dc2d9``: ``pkg/apis/scheduling/v1beta1/types.go``,
  ``pkg/apis/topology/v1alpha1/hypernode_types.go``.
* ``NVIDIA/KAI-Scheduler`` @ ``72de64fc8eca10fa8cca26a20156178f3edbe092`` and its new home
  ``kai-scheduler/KAI-Scheduler`` @ ``d5bc503a146317e51037d89775d77172c6d12f71`` (``minSubGroup``):
  ``pkg/apis/scheduling/v2alpha2/podgroup_types.go``, ``pkg/apis/kai/v1alpha1/topology_types.go``.
* ``kubernetes-sigs/jobset`` @ ``08dfbdfd682714a9ab929633eca8dc95315187e7``: ``api/jobset/v1alpha2/jobset_types.go``.
* ``kubernetes-sigs/lws`` @ ``060ab4da17eea1f0865fcbd3236bb1075e2cea32``: ``api/leaderworkerset/v1/leaderworkerset_types.go``.
* ``kubernetes-sigs/kueue`` @ ``ff69552e79ad21652c36caa97038382e55625cf7`` (main 2026-08-22) and
  @ ``8eab68778fc1b52affe165fdf5af29d1e9b4f3cb`` (tag v0.19.2): ``apis/kueue/v1beta1|v1beta2/``
  ``{topology,clusterqueue,cohort,localqueue,resourceflavor,workload,workloadpriorityclass,
  admissioncheck,fairsharing}_types.go`` and ``types.go`` (Topology, ClusterQueue, Cohort,
  LocalQueue, ResourceFlavor, Workload, WorkloadPriorityClass).

The same package at several commits (``core/v1`` at v1.35, v1.36, v1.37-beta and master) is the
union of its fields: a field any of those releases serves is known (``spec.workloadRef`` of v1.35
and ``spec.schedulingGroup`` of v1.37 both are).

``BenchSuite`` (``gangplan.io/v1alpha1``) is gangplan's own kind: its type is written below in Go
(:data:`GANGPLAN_TYPES`, the fields :mod:`gangplan.bench.suites` reads) and goes through the same parser.

The Go reader understands what Kubernetes API types use: ``type T struct {...}`` with json tags
(``json:"name,omitempty"``, ``json:",inline"``, ``json:"-"``), embedded structs (inlined when
untagged or ``,inline``), pointers, slices (transparent: a list's items have the element's
fields), maps (any key; a map of structs checks its values), named non-struct types (leaves), and
types with their own ``MarshalJSON``/``UnmarshalJSON`` or defined outside the sources (``Time``,
``Quantity``, ``IntOrString``, ``RawExtension``: leaves, any value accepted).
``PluginConfig.args`` (a ``runtime.RawExtension``) is checked as the ``<name>Args`` type of the
plugin it configures, as kube-scheduler decodes it, when that type is known.

The files are parsed whole; the table keeps the types reachable from the kinds in :data:`KINDS`
(Pod -> PodSpec -> Container -> ResourceRequirements, Affinity, Toleration, ...; the plugin args
types of kube-scheduler), with the ``status`` of each kind stored as "any value" (allowed, not
checked).

Table format (``fields.json``): ``kinds`` maps ``apiVersion`` -> kind -> type id; ``types`` maps a
type id to ``{json field: 0 | type id | "*" + type id | "!args:" + package}`` (0: any value;
``*T``: a map whose values are T; ``!args``: plugin args); ``builtin`` maps each built-in
``apiVersion`` to the kinds it registers.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

# (repo, commit, label, [(path, import path, package id)])
_API = "k8s.io/api/"
_KUEUE_FILES = (
    "topology_types",
    "clusterqueue_types",
    "cohort_types",
    "localqueue_types",
    "resourceflavor_types",
    "workload_types",
    "workloadpriorityclass_types",
    "admissioncheck_types",
    "fairsharing_types",
    "types",
)
"""Kueue's API files read for its kinds (the types they name: AdmissionCheckReference,
FairSharing, StopPolicy, ... live in the others)."""
SOURCES: list[tuple[str, str, str, list[tuple[str, str, str]]]] = [
    (
        "kubernetes/api",
        "9afe7de0a56c582b06ca094f7309015bc84657a7",
        "v0.35.0",
        [
            ("core/v1/types.go", _API + "core/v1", "core/v1"),
            ("scheduling/v1/types.go", _API + "scheduling/v1", "scheduling/v1"),
            ("scheduling/v1alpha1/types.go", _API + "scheduling/v1alpha1", "scheduling/v1alpha1"),
            ("scheduling/v1beta1/types.go", _API + "scheduling/v1beta1", "scheduling/v1beta1"),
        ],
    ),
    (
        "kubernetes/api",
        "545bb975fe6653239af42324065cf72272186404",
        "v0.36.0",
        [
            ("core/v1/types.go", _API + "core/v1", "core/v1"),
            ("scheduling/v1alpha2/types.go", _API + "scheduling/v1alpha2", "scheduling/v1alpha2"),
        ],
    ),
    (
        "kubernetes/api",
        "1c293eaf810b123325bc7d2c0b9682ff8806aaee",
        "v0.37.0-beta.0",
        [
            ("core/v1/types.go", _API + "core/v1", "core/v1"),
            ("scheduling/v1alpha3/types.go", _API + "scheduling/v1alpha3", "scheduling/v1alpha3"),
            ("scheduling/v1beta1/types.go", _API + "scheduling/v1beta1", "scheduling/v1beta1"),
        ],
    ),
    (
        "kubernetes/api",
        "10b39a39bcee995dfe7cd5e8e7b922be5e46f1e2",
        "master 2026-07-24",
        [
            ("core/v1/types.go", _API + "core/v1", "core/v1"),
            ("scheduling/v1/types.go", _API + "scheduling/v1", "scheduling/v1"),
            ("scheduling/v1alpha3/types.go", _API + "scheduling/v1alpha3", "scheduling/v1alpha3"),
            ("scheduling/v1beta1/types.go", _API + "scheduling/v1beta1", "scheduling/v1beta1"),
            ("policy/v1/types.go", _API + "policy/v1", "policy/v1"),
            ("batch/v1/types.go", _API + "batch/v1", "batch/v1"),
        ],
    ),
    (
        "kubernetes/apimachinery",
        "eed236ceee2c19c2753a3d93ac0631dc20750454",
        "master 2026-07-23",
        [
            ("pkg/apis/meta/v1/types.go", "k8s.io/apimachinery/pkg/apis/meta/v1", "meta/v1"),
        ],
    ),
    (
        "kubernetes/kube-scheduler",
        "e87dbddd27a5bd4c2028727c7ccc082cfb2cdc09",
        "master 2026-07-23",
        [
            ("config/v1/types.go", "k8s.io/kube-scheduler/config/v1", "kubescheduler/v1"),
            (
                "config/v1/types_pluginargs.go",
                "k8s.io/kube-scheduler/config/v1",
                "kubescheduler/v1",
            ),
        ],
    ),
    (
        "kubernetes/component-base",
        "349fbe06359c4b39ca17bb9cabdf4a13d70b4b82",
        "master 2026-07-21",
        [
            (
                "config/v1alpha1/types.go",
                "k8s.io/component-base/config/v1alpha1",
                "componentbase/v1alpha1",
            ),
        ],
    ),
    (
        "kubernetes-sigs/scheduler-plugins",
        "903da7df82cb8794dda8f2d510ba1156111662dd",
        "master 2026-08-16",
        [
            (
                "apis/scheduling/v1alpha1/types.go",
                "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1",
                "coscheduling/v1alpha1",
            ),
        ],
    ),
    (
        "volcano-sh/apis",
        "536f121f53656c6fb7a07b9775b7e0f22c3dc2d9",
        "master 2026-06-22",
        [
            (
                "pkg/apis/scheduling/v1beta1/types.go",
                "volcano.sh/apis/pkg/apis/scheduling/v1beta1",
                "volcano-scheduling/v1beta1",
            ),
            (
                "pkg/apis/topology/v1alpha1/hypernode_types.go",
                "volcano.sh/apis/pkg/apis/topology/v1alpha1",
                "volcano-topology/v1alpha1",
            ),
        ],
    ),
    (
        "NVIDIA/KAI-Scheduler",
        "72de64fc8eca10fa8cca26a20156178f3edbe092",
        "main 2026-03-07",
        [
            (
                "pkg/apis/scheduling/v2alpha2/podgroup_types.go",
                "github.com/NVIDIA/KAI-scheduler/pkg/apis/scheduling/v2alpha2",
                "kai-scheduling/v2alpha2",
            ),
            (
                "pkg/apis/kai/v1alpha1/topology_types.go",
                "github.com/NVIDIA/KAI-scheduler/pkg/apis/kai/v1alpha1",
                "kai/v1alpha1",
            ),
        ],
    ),
    (
        "kai-scheduler/KAI-Scheduler",
        "d5bc503a146317e51037d89775d77172c6d12f71",
        "main 2026-08-07 (the repository's new home)",
        [
            (
                "pkg/apis/scheduling/v2alpha2/podgroup_types.go",
                "github.com/kai-scheduler/KAI-scheduler/pkg/apis/scheduling/v2alpha2",
                "kai-scheduling/v2alpha2",
            ),
            (
                "pkg/apis/kai/v1alpha1/topology_types.go",
                "github.com/kai-scheduler/KAI-scheduler/pkg/apis/kai/v1alpha1",
                "kai/v1alpha1",
            ),
        ],
    ),
    (
        "kubernetes-sigs/jobset",
        "08dfbdfd682714a9ab929633eca8dc95315187e7",
        "main 2026-08-18",
        [
            (
                "api/jobset/v1alpha2/jobset_types.go",
                "sigs.k8s.io/jobset/api/jobset/v1alpha2",
                "jobset/v1alpha2",
            ),
        ],
    ),
    (
        "kubernetes-sigs/lws",
        "060ab4da17eea1f0865fcbd3236bb1075e2cea32",
        "main 2026-08-21",
        [
            (
                "api/leaderworkerset/v1/leaderworkerset_types.go",
                "sigs.k8s.io/lws/api/leaderworkerset/v1",
                "lws/v1",
            ),
        ],
    ),
    (
        "kubernetes-sigs/kueue",
        "ff69552e79ad21652c36caa97038382e55625cf7",
        "main 2026-08-22",
        [
            (
                f"apis/kueue/{v}/{f}.go",
                f"sigs.k8s.io/kueue/apis/kueue/{v}",
                f"kueue/{v}",
            )
            for v in ("v1beta1", "v1beta2")
            for f in _KUEUE_FILES
        ],
    ),
    (
        "kubernetes-sigs/kueue",
        "8eab68778fc1b52affe165fdf5af29d1e9b4f3cb",
        "v0.19.2",
        [
            (
                f"apis/kueue/{v}/{f}.go",
                f"sigs.k8s.io/kueue/apis/kueue/{v}",
                f"kueue/{v}",
            )
            for v in ("v1beta1", "v1beta2")
            for f in _KUEUE_FILES
        ],
    ),
]
REGISTER_SOURCE = ("kubernetes/api", "10b39a39bcee995dfe7cd5e8e7b922be5e46f1e2")
"""Where every built-in group/version's register.go is read (kinds served per apiVersion)."""

KUEUE_KINDS = (
    "Topology",
    "ClusterQueue",
    "Cohort",
    "LocalQueue",
    "ResourceFlavor",
    "Workload",
    "WorkloadPriorityClass",
)
"""The Kueue kinds gangplan reads, the same in v1beta1 and v1beta2."""

# apiVersion -> (package id, kinds gangplan reads from it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "v1": ("core/v1", ("Pod", "Node", "Namespace")),
    "scheduling.k8s.io/v1": ("scheduling/v1", ("PriorityClass",)),
    "scheduling.k8s.io/v1alpha1": ("scheduling/v1alpha1", ("Workload", "PriorityClass")),
    "scheduling.k8s.io/v1alpha2": ("scheduling/v1alpha2", ("Workload", "PodGroup")),
    "scheduling.k8s.io/v1alpha3": (
        "scheduling/v1alpha3",
        ("Workload", "PodGroup", "CompositePodGroup"),
    ),
    "scheduling.k8s.io/v1beta1": ("scheduling/v1beta1", ("Workload", "PodGroup", "PriorityClass")),
    "policy/v1": ("policy/v1", ("PodDisruptionBudget",)),
    "batch/v1": ("batch/v1", ("Job",)),
    "kubescheduler.config.k8s.io/v1": ("kubescheduler/v1", ("KubeSchedulerConfiguration",)),
    "scheduling.x-k8s.io/v1alpha1": ("coscheduling/v1alpha1", ("PodGroup",)),
    "scheduling.volcano.sh/v1beta1": ("volcano-scheduling/v1beta1", ("PodGroup",)),
    "topology.volcano.sh/v1alpha1": ("volcano-topology/v1alpha1", ("HyperNode",)),
    "scheduling.run.ai/v2alpha2": ("kai-scheduling/v2alpha2", ("PodGroup",)),
    "kai.scheduler/v1alpha1": ("kai/v1alpha1", ("Topology",)),
    "jobset.x-k8s.io/v1alpha2": ("jobset/v1alpha2", ("JobSet",)),
    "leaderworkerset.x-k8s.io/v1": ("lws/v1", ("LeaderWorkerSet",)),
    "kueue.x-k8s.io/v1beta1": ("kueue/v1beta1", KUEUE_KINDS),
    "kueue.x-k8s.io/v1beta2": ("kueue/v1beta2", KUEUE_KINDS),
    "gangplan.io/v1alpha1": ("gangplan/v1alpha1", ("BenchSuite",)),
}

GANGPLAN_TYPES = """
package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

type BenchSuite struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec BenchSuiteSpec `json:"spec"`
}

type BenchSuiteSpec struct {
	TimeLimit   float64  `json:"timeLimit,omitempty"`
	TaskTimeout float64  `json:"taskTimeout,omitempty"`
	Explain     bool     `json:"explain,omitempty"`
	Families    []Family `json:"families"`
}

type Family struct {
	Name      string            `json:"name"`
	Directory string            `json:"directory,omitempty"`
	Generator string            `json:"generator,omitempty"`
	Params    map[string]Any    `json:"params,omitempty"`
	Grid      map[string][]Any  `json:"grid,omitempty"`
	Seeds     Seeds             `json:"seeds,omitempty"`
}

// Seeds is a list of integers or {start, count}.
type Seeds struct {
	Start int `json:"start,omitempty"`
	Count int `json:"count,omitempty"`
}
"""

_BUILTIN = {
    "string",
    "bool",
    "byte",
    "rune",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "any",
    "interface{}",
    "error",
}
_LEAF = 0


# ---- reading Go -------------------------------------------------------------------------------
def _strip_comments(src: str) -> str:
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    out = []
    for line in src.splitlines():
        # a // outside a backquoted tag or string starts a comment
        in_tick = in_quote = False
        for i, ch in enumerate(line):
            if ch == "`" and not in_quote:
                in_tick = not in_tick
            elif ch == '"' and not in_tick and (i == 0 or line[i - 1] != "\\"):
                in_quote = not in_quote
            elif ch == "/" and not in_tick and not in_quote and line[i + 1 : i + 2] == "/":
                line = line[:i]
                break
        out.append(line)
    return "\n".join(out)


class Package:
    """The type declarations of one Go package (possibly several files, several commits)."""

    def __init__(self, pkg_id: str, import_path: str) -> None:
        self.id = pkg_id
        self.import_path = import_path
        self.structs: dict[str, list[tuple[str | None, str, str | None]]] = {}
        """struct -> [(json name or None for inline, type expression, import alias map key)]"""
        self.named: dict[str, str] = {}
        """non-struct named type -> underlying type expression"""
        self.custom_json: set[str] = set()
        self.imports: dict[str, str] = {}  # alias -> import path (union over files)

    def read(self, src: str) -> None:
        src = _strip_comments(src)
        imports = {}
        for m in re.finditer(r"^import\s*\((.*?)\)", src, flags=re.S | re.M):
            for line in m.group(1).splitlines():
                im = re.match(r'\s*(?:(\w+)\s+)?"([^"]+)"', line)
                if im:
                    imports[im.group(1) or im.group(2).rsplit("/", 1)[-1]] = im.group(2)
        for im in re.finditer(r'^import\s+(?:(\w+)\s+)?"([^"]+)"', src, flags=re.M):
            imports[im.group(1) or im.group(2).rsplit("/", 1)[-1]] = im.group(2)
        self.imports.update(imports)
        for m in re.finditer(
            r"^func\s*\(\s*\w*\s*\*?(\w+)\s*\)\s*(MarshalJSON|UnmarshalJSON)\b", src, flags=re.M
        ):
            self.custom_json.add(m.group(1))
        for m in re.finditer(r"^type\s+(\w+)(?:\[[^\]]*\])?\s+(.*)$", src, flags=re.M):
            name, rest = m.group(1), m.group(2).strip()
            if rest.startswith("struct"):
                body = _brace_body(src, m.end(0) - len(m.group(2)) + m.group(2).index("{"))
                fields = self.structs.setdefault(name, [])
                for f in _fields(body):
                    if f not in fields:
                        fields.append(f)
            elif not rest.startswith("interface"):
                self.named.setdefault(name, rest.lstrip("= ").strip())


def _brace_body(src: str, open_at: int) -> str:
    depth = 0
    for i in range(open_at, len(src)):
        if src[i] == "{":
            depth += 1
        elif src[i] == "}":
            depth -= 1
            if depth == 0:
                return src[open_at + 1 : i]
    raise ValueError("unbalanced braces")


def _fields(body: str) -> list[tuple[str | None, str, str | None]]:
    """(json name, or None when inlined; type expression; Go field name) of a struct body."""
    out: list[tuple[str | None, str, str | None]] = []
    depth = 0
    for line in body.splitlines():
        line = line.strip()
        if not line:
            continue
        if depth:  # inside an anonymous nested struct: not modelled (its field is a leaf)
            depth += line.count("{") - line.count("}")
            continue
        tag = ""
        tm = re.search(r"`([^`]*)`", line)
        if tm:
            tag = tm.group(1)
            line = line[: tm.start()].strip()
        jm = re.search(r'json:"([^"]*)"', tag)
        jname, _, opts = jm.group(1).partition(",") if jm else ("", "", "")
        if jname == "-":
            continue
        parts = line.split(None, 1)
        if "{" in line and "}" not in line:
            depth = 1
            if len(parts) == 2 and jname:
                out.append((jname, "struct{}", parts[0]))
            continue
        if len(parts) == 1:
            # embedded: `metav1.TypeMeta` / `*Foo`
            texpr = parts[0]
            if jname and "inline" not in opts:
                out.append((jname, texpr, texpr.lstrip("*").rsplit(".", 1)[-1]))
            else:
                out.append((None, texpr, None))
            continue
        names, texpr = parts[0], parts[1].strip()
        for go_name in names.split(","):
            go_name = go_name.strip()
            if not go_name or not go_name[0].isupper():
                continue  # unexported: not serialized
            if jname == "" and "inline" in opts:
                out.append((None, texpr, go_name))
            else:
                out.append((jname or go_name, texpr, go_name))
    return out


# ---- resolving --------------------------------------------------------------------------------
class Resolver:
    def __init__(self, packages: dict[str, Package]) -> None:
        self.by_path = {p.import_path: p for p in packages.values()}
        self.types: dict[str, dict[str, object]] = {}
        self.pending: list[tuple[Package, str]] = []

    def _lookup(self, pkg: Package, expr: str) -> tuple[Package, str] | None:
        if "." in expr:
            alias, name = expr.split(".", 1)
            path = pkg.imports.get(alias)
            target = self.by_path.get(path or "")
            return (target, name) if target is not None else None
        return pkg, expr

    def ref(self, pkg: Package, expr: str, depth: int = 0) -> object:
        """The table value of a type expression: 0, a type id, "*"+id, or "!args:"+package."""
        expr = expr.strip()
        while expr.startswith(("*", "[]")):
            expr = expr[1:] if expr.startswith("*") else expr[2:]
        if expr.startswith("map["):
            depth_b, i = 0, 3
            for i in range(3, len(expr)):
                depth_b += {"[": 1, "]": -1}.get(expr[i], 0)
                if depth_b == 0:
                    break
            inner = self.ref(pkg, expr[i + 1 :], depth + 1)
            return (
                "*" + inner
                if isinstance(inner, str) and not inner.startswith(("*", "!"))
                else _LEAF
            )
        if expr in _BUILTIN or expr.startswith(("struct", "interface", "func", "chan")):
            return _LEAF
        if expr == "runtime.RawExtension" and pkg.id.startswith("kubescheduler/"):
            return "!args:" + pkg.id
        found = self._lookup(pkg, expr)
        if found is None or depth > 20:
            return _LEAF
        target, name = found
        if name in target.custom_json:
            return _LEAF
        if name in target.structs:
            tid = f"{target.id}.{name}"
            if tid not in self.types:
                self.types[tid] = {}
                self.pending.append((target, name))
            return tid
        if name in target.named:
            return self.ref(target, target.named[name], depth + 1)
        return _LEAF

    def fields(
        self, pkg: Package, name: str, seen: frozenset[str] = frozenset()
    ) -> dict[str, object]:
        out: dict[str, object] = {}
        for jname, texpr, _ in pkg.structs.get(name, []):
            if jname is None:  # inline: the embedded struct's fields
                found = self._lookup(pkg, texpr.lstrip("*"))
                if found is not None and found[1] in found[0].structs and found[1] not in seen:
                    for k, v in self.fields(found[0], found[1], seen | {name}).items():
                        out.setdefault(k, v)
                continue
            value = self.ref(pkg, texpr)
            prev = out.get(jname)
            out[jname] = _merge_value(prev, value) if jname in out else value
        return out

    def run(self) -> None:
        while self.pending:
            pkg, name = self.pending.pop()
            self.types[f"{pkg.id}.{name}"] = self.fields(pkg, name)


def _merge_value(a: object, b: object) -> object:
    if a == b:
        return a
    return _LEAF  # the same field with two types across releases: accept any value


def _reachable(types: dict[str, dict[str, object]], roots: list[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        t = todo.pop()
        if t in seen or t not in types:
            continue
        seen.add(t)
        todo += [
            v.lstrip("*") for v in types[t].values() if isinstance(v, str) and not v.startswith("!")
        ]
    return seen


# ---- driver -----------------------------------------------------------------------------------
def _cache_file(cache: Path, repo: str, commit: str, path: str) -> Path:
    return cache / f"{repo.replace('/', '+')}@{commit}" / path


def fill_cache(mirror: Path, cache: Path) -> None:
    """Copy the source files out of git clones under ``mirror`` (``<owner>+<repo>/repo``)."""
    wanted = [(repo, commit, path) for repo, commit, _, files in SOURCES for path, _, _ in files]
    repo, commit = REGISTER_SOURCE
    git = mirror / repo.replace("/", "+") / "repo"
    listing = subprocess.run(
        ["git", "-C", str(git), "ls-tree", "-r", "--name-only", commit],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    wanted += [
        (repo, commit, p)
        for p in listing.splitlines()
        if re.fullmatch(r"[a-z0-9]+/v[0-9a-z]+/register\.go", p)
    ]
    for repo, commit, path in wanted:
        dest = _cache_file(cache, repo, commit, path)
        if dest.exists():
            continue
        git = mirror / repo.replace("/", "+") / "repo"
        text = subprocess.run(
            ["git", "-C", str(git), "show", f"{commit}:{path}"], check=True, capture_output=True
        ).stdout
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(text)


def _builtin_kinds(cache: Path) -> dict[str, list[str]]:
    repo, commit = REGISTER_SOURCE
    root = _cache_file(cache, repo, commit, "")
    out: dict[str, list[str]] = {}
    for reg in sorted(root.glob("*/*/register.go")):
        src = _strip_comments(reg.read_text())
        gm = re.search(r'GroupName\s*=\s*"([^"]*)"', src)
        if gm is None:
            continue
        version = reg.parent.name
        api = f"{gm.group(1)}/{version}" if gm.group(1) else version
        kinds = sorted(
            {
                k
                for k in re.findall(r"&(\w+)\{\}", src)
                if k[0].isupper() and not k.endswith(("List", "Options"))
            }
        )
        if kinds:
            out[api] = kinds
    return out


def generate(cache: Path) -> dict:
    packages: dict[str, Package] = {}
    for repo, commit, _, files in SOURCES:
        for path, import_path, pkg_id in files:
            pkg = packages.setdefault(pkg_id, Package(pkg_id, import_path))
            pkg.read(_cache_file(cache, repo, commit, path).read_text())
    own = packages.setdefault(
        "gangplan/v1alpha1", Package("gangplan/v1alpha1", "gangplan.io/v1alpha1")
    )
    own.read(GANGPLAN_TYPES)
    res = Resolver(packages)
    kinds: dict[str, dict[str, str]] = {}
    for api, (pkg_id, names) in KINDS.items():
        pkg = packages[pkg_id]
        for name in names:
            if name not in pkg.structs:
                continue  # not in that version (e.g. PriorityClass left v1alpha1)
            tid = res.ref(pkg, name)
            assert isinstance(tid, str), (api, name)
            kinds.setdefault(api, {})[name] = tid
    # Plugin args are reached through PluginConfig.args (by plugin name), not through a field.
    for pkg in packages.values():
        if pkg.id.startswith("kubescheduler/"):
            for name in pkg.structs:
                if name.endswith("Args"):
                    res.ref(pkg, name)
    res.run()
    # status is allowed and not checked (server-written; kubectl get prints a newer server's).
    for tids in kinds.values():
        for tid in tids.values():
            if "status" in res.types[tid]:
                res.types[tid]["status"] = _LEAF
    used = _reachable(
        res.types,
        [t for tids in kinds.values() for t in tids.values()]
        + [t for t in res.types if t.startswith("kubescheduler/") and t.endswith("Args")],
    )
    res.types = {k: v for k, v in res.types.items() if k in used}
    return {
        "about": "Known JSON field names of the kinds gangplan reads, generated by gangplan/io/schema/generate.py "
        "from upstream Go type definitions; do not edit by hand.",
        "sources": [
            {"repo": repo, "commit": commit, "ref": label, "paths": [p for p, _, _ in files]}
            for repo, commit, label, files in SOURCES
        ]
        + [
            {
                "repo": REGISTER_SOURCE[0],
                "commit": REGISTER_SOURCE[1],
                "ref": "master 2026-07-24",
                "paths": ["*/*/register.go"],
            }
        ],
        "kinds": kinds,
        "types": dict(sorted(res.types.items())),
        "builtin": _builtin_kinds(cache),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--cache",
        type=Path,
        default=Path("/tmp/gosrc"),
        help="directory of the upstream Go files (outside the repository)",
    )
    ap.add_argument(
        "--from-git", type=Path, help="fill the cache from git clones DIR/<owner>+<repo>/repo first"
    )
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("fields.json"))
    args = ap.parse_args(argv)
    if args.from_git:
        fill_cache(args.from_git, args.cache)
    table = generate(args.cache)
    args.out.write_text(json.dumps(table, separators=(",", ":"), sort_keys=False) + "\n")
    print(
        f"wrote {args.out}: {sum(len(k) for k in table['kinds'].values())} kinds, {len(table['types'])} types",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
