"""Kueue's workloads in a snapshot: read, synthesized for jobs that carry the queue-name label,
linked to their pods, and their pods held until admission (issue 42).

When a snapshot holds a Kueue ``ClusterQueue``, the loader builds :class:`KueueState`
(``Cluster.kueue``) here; without one nothing in this module runs and the Kueue objects stay
"not read" warnings, exactly as before. Three calls, from the loader and :mod:`gangplan.io.foreign`:

1. :func:`collect` (``_Builder.add``): Kueue objects (:data:`gangplan.io.kueue_objects.KINDS`)
   are kept aside;
2. :func:`prepare` (start of ``foreign.apply``): with a ClusterQueue, every one is read and
   validated (:mod:`gangplan.io.kueue_objects`, :mod:`gangplan.io.kueue_workload_parse`), errors
   as the API server and Kueue's webhooks give them; without, each is skipped as before;
3. :func:`build` (after Jobs and JobSets are expanded into pods, before foreign groups are
   translated): workloads, pods and gating (below).

**Workloads.** A ``Workload`` object of the snapshot stands for its owner (``ownerReferences``:
``Job``, ``JobSet``, ``Pod``, or the pods of a pod group owned by it). A top-level batch/v1 Job or
JobSet (v1alpha2) labelled ``kueue.x-k8s.io/queue-name`` without one, and plain pods with the
label (a pod group: ``kueue.x-k8s.io/pod-group-name``), get the Workload Kueue's job reconciler
creates (``synthesized=True``), as kubernetes-sigs/kueue v0.19.2 (8eab6877) builds it
(names, job podSets and topology annotations: :mod:`gangplan.io.kueue_jobs`):

* name ``GetWorkloadNameForOwnerWithGVK`` (``pkg/controller/jobframework/workload_names.go``):
  ``<lowercase kind>-<owner name>`` cut to 247 characters, ``-``, the first 5 hex digits of
  sha1(``kind\\ngroup\\nname\\nuid``) (ShortWorkloadNames is off by default in v0.19); a pod group's
  Workload is named after the group (``pkg/controller/jobs/pod/pod_controller.go``). An object
  without ``metadata.uid`` has the deterministic uid :mod:`gangplan.io.expand` gives it.
* podSets: a Job has one, ``main``, ``count`` = min(parallelism, completions), ``minCount`` from
  ``kueue.x-k8s.io/job-min-parallelism`` (PartialAdmission, on by default;
  ``pkg/controller/jobs/job/job_controller.go``); a JobSet one per replicatedJob, named after it
  (lowercased), ``count`` = replicas x min(parallelism, completions)
  (``pkg/controller/jobs/jobset/jobset_controller.go``); a plain pod one ``main`` of 1; a pod
  group one per role (the ``kueue.x-k8s.io/role-hash`` annotation Kueue's pod webhook writes; for a
  pod without it, ``GenerateRoleHash`` of its spec: :mod:`gangplan.io.kueue_role_hash`), podSets
  sorted by name,
  and no Workload while the group has fewer pods than ``kueue.x-k8s.io/pod-group-total-count``.
* topology request from the template annotations (``jobframework/tas.go``
  ``NewPodSetTopologyRequest``: required, else preferred, else unconstrained; slices with
  their size, or the multi-layer constraints; the PodSet group with required / preferred), with the
  pod index label of the kind (``batch.kubernetes.io/job-completion-index``; JobSet adds
  ``jobset.sigs.k8s.io/job-index`` and the replicas; pods ``kueue.x-k8s.io/pod-group-pod-index``);
  the annotations are validated as ``jobframework/tas_validation.go`` does.
* queue: the label; a top-level Job or JobSet without it in a namespace that has a LocalQueue
  named ``default`` is queued there (``jobframework/defaults.go`` ``ApplyDefaultLocalQueue``, what
  Kueue's job webhook does at creation; not in ``kube-system`` / ``kueue-system``).
* annotations: the job's (a pod group's: its first pod's), where scenario expectations live.
* priority: the ``kueue.x-k8s.io/priority-class`` WorkloadPriorityClass, else the template's
  PriorityClass, else the global default PriorityClass, else 0 (``ExtractPriority``).

**Pods.** Each Workload's pods (``KueuePodSet.pods``): a Job's pods (controller owner), a JobSet's
(``jobset.sigs.k8s.io/jobset-name``, podSet by ``replicatedjob-name``), the pod itself, a pod
group's (the group name, podSet by role); otherwise pods annotated ``kueue.x-k8s.io/workload``.
A suspended Kueue Job or JobSet has no pods yet: :mod:`gangplan.io.expand` makes them as they
would be created at admission. A Workload whose job is not in the snapshot gets ``count`` pending
pods per podSet made from the podSet template (named ``<workload>-<podset>-<i>``).

**Gating.** The pending pods of a workload without admission are held
(``Cluster.gated``): ``Kueue has not admitted Workload NS/NAME (LocalQueue LQ)``, with Kueue's
reason when it has one (``pkg/controller/core/workload_controller.go``: ``LocalQueue X doesn't
exist``, ``LocalQueue X is inactive``, ``ClusterQueue X doesn't exist``, ``ClusterQueue X is
inactive``, ``The workload is deactivated``; a ClusterQueue is inactive when stopped or when one
of its ResourceFlavors, or a flavor's Topology, is missing: ``ClusterQueueActiveReason``
``Stopped`` / ``FlavorNotFound`` / ``TopologyNotFound``). Kueue keeps such a job suspended (or its pods gated),
so kube-scheduler never sees them. Pods of an admitted workload are not held here. Pods labelled
with a queue name that no workload takes (an incomplete pod group) are held with the reason.

Kueue-managed pods are not translated into gang PodGroups from their TAS annotations
(:mod:`gangplan.io.foreign.kueue`): the annotations are the podSet's ``topology_request``.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from typing import Any

from gangplan.io.errors import SnapshotError
from gangplan.io.fields import Ctx
from gangplan.io.kueue_jobs import (
    Job,
    controllers,
    job_podsets,
    topology_from_annotations,
    workload_name,
)
from gangplan.io.kueue_objects import (
    UNUSED_KINDS,
    claims,
    parse_cluster_queue,
    parse_cohort,
    parse_local_queue,
    parse_resource_flavor,
    parse_workload_priority_class,
    ref,
)
from gangplan.io.kueue_role_hash import role_hash
from gangplan.io.kueue_workload_parse import (
    ParsedWorkload,
    parse_kueue_workload,
    podset_from_pod,
    template_view,
)
from gangplan.models.kueue import (
    QUEUE_NAME_LABEL,
    Cohort,
    KueueState,
    KueueWorkload,
)

PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
POD_GROUP = "kueue.x-k8s.io/pod-group-name"
POD_GROUP_TOTAL = "kueue.x-k8s.io/pod-group-total-count"
ROLE_HASH = "kueue.x-k8s.io/role-hash"
PODSET_LABEL = "kueue.x-k8s.io/podset"
WORKLOAD_ANNOTATION = "kueue.x-k8s.io/workload"
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
JOBSET_RJOB = "jobset.sigs.k8s.io/replicatedjob-name"
POD_INDEX = "kueue.x-k8s.io/pod-group-pod-index"
UNMANAGED_NAMESPACES = ("kube-system", "kueue-system")
"""Namespaces the default ``managedJobsNamespaceSelector`` leaves out (``apis/config/v1beta2/
defaults.go``: ``kube-system`` and Kueue's own namespace, ``kueue-system`` by default)."""
_GVK = {"Job": ("batch", "Job"), "JobSet": ("jobset.x-k8s.io", "JobSet"), "Pod": ("", "Pod")}
_GENERIC = (
    "not read: a Kueue object: quota, admission and ResourceFlavor node labels are not modelled"
)
"""The loader's "not read" message for kueue.x-k8s.io objects (``loader._SCHEDULING_GROUPS``)."""


# ---- 1 and 2: collect, prepare -------------------------------------------------------------------
def collect(b: Any, file: str, raw: dict) -> bool:
    """Keep a Kueue object aside (True) for :func:`prepare`."""
    if not claims(raw.get("kind"), raw.get("apiVersion")):
        return False
    b.kueue_raw.append((file, raw))
    return True


class _Parsed:
    def __init__(self) -> None:
        self.flavors: dict[str, Any] = {}
        self.cqs: dict[str, Any] = {}
        self.cohorts: dict[str, Any] = {}
        self.lqs: dict[str, Any] = {}
        self.wpcs: dict[str, int] = {}
        self.workloads: list[ParsedWorkload] = []


def prepare(b: Any) -> None:
    """Read the Kueue objects kept aside when the snapshot has a ClusterQueue (``b.kueue_parsed``);
    otherwise skip each as the loader did before Kueue was read (same warnings, same counts)."""
    b.kueue_parsed = None
    if not any(raw.get("kind") == "ClusterQueue" for _, raw in b.kueue_raw):
        for _, raw in b.kueue_raw:
            kind = str(raw.get("kind"))
            b._skip(kind, raw, f"{kind} ({raw.get('apiVersion')})" if kind == "Workload" else kind)
        return
    p = _Parsed()
    seen: dict[str, str] = {}
    for file, raw in b.kueue_raw:
        kind = str(raw.get("kind"))
        r = ref(kind, raw)
        if r in seen:
            raise SnapshotError(file, f"duplicate object (first defined in {seen[r]})", obj=r)
        seen[r] = file
        ctx = Ctx(file, r)
        name = r.split("/", 1)[1]

        def note(fld: str, message: str, kind: str = kind, name: str = name) -> None:
            b.note(kind, fld, message, name)

        if kind == "ResourceFlavor":
            p.flavors[name] = parse_resource_flavor(ctx, raw)
        elif kind == "ClusterQueue":
            p.cqs[name] = parse_cluster_queue(ctx, raw, note)
        elif kind == "Cohort":
            p.cohorts[name] = parse_cohort(ctx, raw, note)
        elif kind == "LocalQueue":
            lq = parse_local_queue(ctx, raw, note)
            p.lqs[lq.key] = lq
        elif kind == "WorkloadPriorityClass":
            n, v = parse_workload_priority_class(ctx, raw)
            p.wpcs[n] = v
        else:
            p.workloads.append(parse_kueue_workload(ctx, raw))
    # The loader's generic "not read" line for other Kueue kinds says why, now that Kueue is read.
    for (label, fld, message), names in list(b.notes.items()):
        if message == _GENERIC:
            del b.notes[(label, fld, message)]
            why = UNUSED_KINDS.get(label.split(" ", 1)[0], "a Kueue object gangplan does not read")
            for n in names:
                b.note(label, fld, f"not read: {why}", n)
    b.kueue_parsed = p


# ---- 3: build ----------------------------------------------------------------------------------
def _owner_of(raw: dict) -> list[dict]:
    meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
    return [o for o in meta.get("ownerReferences") or () if isinstance(o, dict)]


class _Builder:
    def __init__(self, b: Any, p: _Parsed) -> None:
        self.b, self.p = b, p
        self.workloads: dict[str, KueueWorkload] = {}
        self.held: dict[str, str] = {}
        self.linked: set[str] = set()
        self.made = 0
        self.synthesized = 0
        self.owners: dict[tuple[str, str, str], str] = {}
        self._index: dict[tuple[str, str, str], list[str]] | None = None
        self._order: dict[str, int] = {}
        self._roles: dict[str, str] = {}

    def role(self, key: str) -> str:
        """The pod's role hash (:mod:`gangplan.io.kueue_role_hash`), with the priority the
        Priority admission plugin gives it before Kueue's webhook hashes it."""
        if key not in self._roles:
            pod, raw, _ = self.b.pods[key]
            cls = self.b.priority_classes.get(pod.priority_class_name)
            defaults = [c.value for c in self.b.priority_classes.values() if c.global_default]
            prio = (
                cls.value
                if cls is not None
                else 0
                if pod.priority_class_name or not defaults
                else max(defaults)
            )
            self._roles[key] = role_hash(raw, prio)
        return self._roles[key]

    # priority ---------------------------------------------------------------------------------
    def priority(self, labels: dict[str, str], class_name: str) -> tuple[int, str, str | None]:
        """(priority, class name, why no Workload can be made) as ``ExtractPriority``."""
        wpc = labels.get(PRIORITY_CLASS_LABEL, "")
        if wpc:
            if wpc not in self.p.wpcs:
                return 0, wpc, f'WorkloadPriorityClass.kueue.x-k8s.io "{wpc}" not found'
            return self.p.wpcs[wpc], wpc, None
        if class_name:
            pc = self.b.priority_classes.get(class_name)
            if pc is None:
                return 0, class_name, f'priorityclasses.scheduling.k8s.io "{class_name}" not found'
            return pc.value, class_name, None
        defaults = [c for c in self.b.priority_classes.values() if c.global_default]
        if defaults:
            top = max(defaults, key=lambda c: c.value)
            return top.value, top.name, None
        return 0, "", None

    # podsets of the job kinds ------------------------------------------------------------------
    # linking ------------------------------------------------------------------------------------
    def link(self, wl: KueueWorkload, owner: tuple[str, str] | None, group: bool) -> KueueWorkload:
        """Fill ``KueuePodSet.pods`` from the snapshot's pods."""
        names = [ps.name for ps in wl.podsets]
        found: dict[str, list[str]] = {n: [] for n in names}
        index = self._pod_index()
        ns = wl.namespace
        wanted = [("Annot", ns, wl.name)]
        if owner is not None:
            wanted.append((owner[0], ns, owner[1]))
        if group:
            wanted.append(("Group", ns, wl.name))
        candidates = sorted({k for w in wanted for k in index.get(w, ())}, key=self._order.get)
        for key in candidates:
            pod, raw, _ = self.b.pods[key]
            if key in self.linked:
                continue
            ps: str | None = None
            mine = False
            owners = _owner_of(raw)
            if owner is not None and owner[0] == "Job":
                mine = any(o.get("kind") == "Job" and o.get("name") == owner[1] for o in owners)
            elif owner is not None and owner[0] == "JobSet":
                mine = pod.labels.get(JOBSET_NAME) == owner[1]
                if mine and pod.labels.get(JOBSET_RJOB, "").lower() in found:
                    ps = pod.labels[JOBSET_RJOB].lower()
            elif owner is not None and owner[0] == "Pod":
                mine = pod.name == owner[1]
            if not mine and group:
                mine = _group_name(pod) == wl.name or any(
                    o.get("kind") == "Workload" and o.get("name") == wl.name for o in owners
                )
                if mine and self.role(key) in found:
                    ps = self.role(key)
            if not mine:
                mine = pod.annotations.get(WORKLOAD_ANNOTATION) == wl.name
            if not mine:
                continue
            if ps is None:
                if pod.labels.get(PODSET_LABEL) in found:
                    ps = pod.labels[PODSET_LABEL]
                elif len(names) == 1:
                    ps = names[0]
            self.linked.add(key)
            if ps is None:
                self.b.note(
                    "Pod",
                    "metadata.labels",
                    f"belongs to Kueue Workload {wl.key} but to none of its podSets ({', '.join(names)})",
                    key,
                )
                continue
            found[ps].append(key)
        return wl.model_copy(
            update={
                "podsets": tuple(
                    ps.model_copy(update={"pods": tuple(found[ps.name])}) for ps in wl.podsets
                )
            }
        )

    def _pod_index(self) -> dict[tuple[str, str, str], list[str]]:
        """Pods by what can tie them to a Workload (built once: ``link`` runs per workload)."""
        if self._index is not None:
            return self._index
        index: dict[tuple[str, str, str], list[str]] = {}
        self._order = {}
        for i, (key, (pod, raw, _)) in enumerate(self.b.pods.items()):
            self._order[key] = i
            ns = pod.namespace
            ties = [("Pod", ns, pod.name)]
            for o in _owner_of(raw):
                if o.get("kind") == "Job":
                    ties.append(("Job", ns, str(o.get("name"))))
                elif o.get("kind") == "Workload":
                    ties.append(("Group", ns, str(o.get("name"))))
            if pod.labels.get(JOBSET_NAME):
                ties.append(("JobSet", ns, pod.labels[JOBSET_NAME]))
            if _group_name(pod):
                ties.append(("Group", ns, _group_name(pod)))
            if pod.annotations.get(WORKLOAD_ANNOTATION):
                ties.append(("Annot", ns, pod.annotations[WORKLOAD_ANNOTATION]))
            for t in ties:
                index.setdefault(t, []).append(key)
        self._index = index
        return index

    def make_pods(self, wl: KueueWorkload, templates: list[dict], source: str) -> KueueWorkload:
        """Pending pods for the podSets of a Workload whose job is not in the snapshot."""
        from gangplan.io.expand.env import object_meta

        out = []
        for ps, t in zip(wl.podsets, templates, strict=True):
            keys = list(ps.pods)
            tm = t.get("metadata") if isinstance(t.get("metadata"), dict) else {}
            i = 0
            while len(keys) < ps.count:
                name = f"{wl.name}-{ps.name}-{i}"
                i += 1
                if f"{wl.namespace}/{name}" in self.b.pods:
                    continue
                meta = object_meta(
                    name,
                    wl.namespace,
                    source=f"Workload/{wl.key}",
                    labels={**(tm.get("labels") or {}), PODSET_LABEL: ps.name},
                    annotations=dict(tm.get("annotations") or {}),
                    creation_timestamp=wl.creation_timestamp,
                    uid_kind="Pod",
                )
                pod = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": meta,
                    "spec": copy.deepcopy(t.get("spec") or {}),
                    "status": {"phase": "Pending"},
                }
                self.b.expanded.append(pod)
                self.b.add(f"{source} (expanded from Workload/{wl.key})", pod)
                key = f"{wl.namespace}/{name}"
                keys.append(key)
                self.linked.add(key)
                self.made += 1
            out.append(ps.model_copy(update={"pods": tuple(keys)}))
        return wl.model_copy(update={"podsets": tuple(out)})

    # gating -------------------------------------------------------------------------------------
    def why_pending(self, wl: KueueWorkload) -> str:
        base = f"Kueue has not admitted Workload {wl.key} (LocalQueue {wl.queue_name})"
        lq = self.p.lqs.get(f"{wl.namespace}/{wl.queue_name}")
        detail = None
        if not wl.active:
            detail = "The workload is deactivated"
        elif lq is None:
            detail = f"LocalQueue {wl.queue_name} doesn't exist"
        elif lq.stop_policy != "None":
            detail = f"LocalQueue {wl.queue_name} is inactive"
        elif lq.cluster_queue not in self.p.cqs:
            detail = f"ClusterQueue {lq.cluster_queue} doesn't exist"
        else:
            cq = self.p.cqs[lq.cluster_queue]
            topologies = {t.name for t in self.b.topologies.values()}
            if (
                cq.stop_policy != "None"
                or any(f not in self.p.flavors for f in cq.flavor_names())
                or any(
                    self.p.flavors[f].topology_name not in (None, *topologies)
                    for f in cq.flavor_names()
                    if f in self.p.flavors
                )
            ):
                detail = f"ClusterQueue {cq.name} is inactive"
        return f"{base}: {detail}" if detail else base

    def hold(self, wl: KueueWorkload) -> None:
        if wl.admission is not None or wl.finished:
            return
        why = self.why_pending(wl)
        for ps in wl.podsets:
            for key in ps.pods:
                if self.b.pods[key][0].node_name is None:
                    self.held[key] = why


def _group_name(pod: Any) -> str:
    """``GetPodGroupName`` (WorkloadIdentifierAnnotations on by default in v0.19): the annotation,
    else the label."""
    return pod.annotations.get(POD_GROUP) or pod.labels.get(POD_GROUP, "")


def _snapshot_workloads(
    k: _Builder,
    plans: list[tuple[KueueWorkload, tuple[str, str] | None, bool, list[dict] | None, str]],
) -> None:
    """Workload objects of the snapshot, each standing for its owner (``ownerReferences``)."""
    b, p = k.b, k.p
    for w in p.workloads:
        owner = next(
            ((str(o.get("kind")), str(o.get("name"))) for o in w.owners if o.get("controller")),
            next(((str(o.get("kind")), str(o.get("name"))) for o in w.owners), None),
        )
        wl = KueueWorkload(
            namespace=w.namespace,
            name=w.name,
            uid=w.uid,
            queue_name=w.queue_name,
            priority=w.priority,
            priority_class=w.priority_class,
            creation_timestamp=w.creation_timestamp,
            podsets=tuple(w.podsets),
            admission=w.admission,
            active=w.active,
            finished=w.finished,
            owner=f"{owner[0]}/{owner[1]}" if owner else None,
            annotations=w.annotations,
            reclaimable_pods=w.reclaimable_pods,
            source=w.ctx.file,
        )
        for o in w.owners:
            k.owners[(w.namespace, str(o.get("kind")), str(o.get("name")))] = wl.key
        is_group = (
            owner is None
            or owner[0] == "Pod"
            and any(_group_name(pod) == w.name for pod, _, _ in b.pods.values())
        )
        plans.append((wl, owner, is_group, w.templates, w.ctx.file))


def _job_workloads(
    k: _Builder,
    plans: list[tuple[KueueWorkload, tuple[str, str] | None, bool, list[dict] | None, str]],
) -> tuple[list[Job], list[str]]:
    """Top-level Jobs and JobSets with the queue-name label (or the namespace's default LocalQueue) and no Workload: the Workload Kueue's reconciler makes."""
    b, p = k.b, k.p
    jobs = controllers(b)
    jobsets = {(j.ns, j.name) for j in jobs if j.kind == "JobSet"}
    defaulted: list[str] = []
    for j in jobs:
        queue = j.meta.labels.get(QUEUE_NAME_LABEL)
        ctrl = j.meta.controller
        owned = ctrl is not None and (j.ns, str(ctrl.get("name"))) in jobsets
        if (
            not queue
            and not owned
            and f"{j.ns}/default" in p.lqs
            and j.ns not in UNMANAGED_NAMESPACES
        ):
            queue = "default"  # ApplyDefaultLocalQueue: Kueue's job webhook sets the label
            defaulted.append(f"{j.kind}/{j.ns}/{j.name}")
        if not queue or owned:
            continue
        if (j.ns, j.kind, j.name) in k.owners:
            continue
        podsets, _ = job_podsets(j)
        spec = j.ctx.map(j.raw.get("spec"), "spec")
        tmpl_class = next(
            (
                str((t.get("spec") or {}).get("priorityClassName") or "")
                for t in job_podsets(j)[1]
                if (t.get("spec") or {}).get("priorityClassName")
            ),
            "",
        )
        prio, cls, problem = k.priority(j.meta.labels, tmpl_class)
        group, kind = _GVK[j.kind]
        status = j.ctx.map(j.raw.get("status"), "status")
        conds = {
            str(c.get("type")): str(c.get("status"))
            for c in status.get("conditions") or ()
            if isinstance(c, dict)
        }
        finished = j.kind == "Job" and (
            conds.get("Complete") == "True" or conds.get("Failed") == "True"
        )
        if j.kind == "JobSet":
            finished = conds.get("Completed") == "True" or conds.get("Failed") == "True"
        del spec
        wl = KueueWorkload(
            namespace=j.ns,
            name=workload_name(j.name, j.uid, group, kind),
            queue_name=queue,
            priority=prio,
            priority_class=cls,
            creation_timestamp=j.meta.creation_timestamp,
            podsets=tuple(podsets),
            finished=finished,
            owner=f"{j.kind}/{j.name}",
            synthesized=True,
            annotations=dict(j.meta.annotations),
            source=j.ctx.file,
        )
        if problem:
            wl = k.link(wl, (j.kind, j.name), False)
            for ps in wl.podsets:
                for key in ps.pods:
                    k.held[key] = (
                        f"Kueue cannot create the Workload of {j.kind}/{j.ns}/{j.name}: {problem}"
                    )
            continue
        plans.append((wl, (j.kind, j.name), False, None, j.ctx.file))
    return jobs, defaulted


def _pod_workloads(
    k: _Builder,
    plans: list[tuple[KueueWorkload, tuple[str, str] | None, bool, list[dict] | None, str]],
) -> dict[tuple[str, str], list[str]]:
    """Plain pods with the queue-name label: one Workload each; pod groups are returned (namespace, group) -> pod keys."""
    b = k.b
    groups: dict[tuple[str, str], list[str]] = {}
    for key, (pod, raw, ctx) in b.pods.items():
        queue = pod.labels.get(QUEUE_NAME_LABEL)
        if not queue or any(
            o.get("controller") and o.get("kind") in ("Job", "JobSet") for o in _owner_of(raw)
        ):  # a job's pods belong to the job's Workload
            continue
        g = _group_name(pod)
        if g:
            if (pod.namespace, "Workload", g) not in k.owners and not any(
                w.namespace == pod.namespace and w.name == g for w, *_ in plans
            ):
                groups.setdefault((pod.namespace, g), []).append(key)
            continue
        if (pod.namespace, "Pod", pod.name) in k.owners:
            continue
        _, ann, view = template_view(
            ctx, pod.namespace, {"metadata": raw.get("metadata"), "spec": raw.get("spec")}, ""
        )
        tr = topology_from_annotations(
            ctx, pod.annotations, "metadata.annotations", pod_index_label=POD_INDEX
        )
        prio, cls, problem = k.priority(pod.labels, pod.priority_class_name)
        uid = pod.uid or _uid("Pod", pod.namespace, pod.name)
        wl = KueueWorkload(
            namespace=pod.namespace,
            name=workload_name(pod.name, uid, "", "Pod"),
            queue_name=queue,
            priority=prio,
            priority_class=cls,
            creation_timestamp=pod.creation_timestamp,
            podsets=(podset_from_pod("main", 1, None, view, tr),),
            owner=f"Pod/{pod.name}",
            synthesized=True,
            annotations=dict(pod.annotations),
            source=ctx.file,
        )
        if problem:
            k.held[key] = f"Kueue cannot create the Workload of Pod/{key}: {problem}"
            k.linked.add(key)
            continue
        plans.append((wl, ("Pod", pod.name), False, None, ctx.file))
    return groups


def _group_workloads(
    k: _Builder,
    plans: list[tuple[KueueWorkload, tuple[str, str] | None, bool, list[dict] | None, str]],
    groups: dict[tuple[str, str], list[str]],
) -> None:
    """Pod groups: one Workload named after the group, a podSet per role; none while the group is incomplete or inconsistent (held with Kueue's reason)."""
    b = k.b
    for (ns, g), keys in groups.items():
        first_pod, first_raw, ctx = b.pods[keys[0]]
        total_raw = first_pod.annotations.get(POD_GROUP_TOTAL, "")
        queue = first_pod.labels.get(QUEUE_NAME_LABEL, "")
        problem = None
        if not re.fullmatch(r"\d+", total_raw):
            problem = (
                f"failed to extract '{POD_GROUP_TOTAL}' annotation from the pod '{first_pod.name}'"
            )
        elif len(keys) < int(total_raw):
            problem = f"'{g}' group has fewer runnable pods than expected"
        else:
            other = next(
                (b.pods[x][0] for x in keys if b.pods[x][0].labels.get(QUEUE_NAME_LABEL) != queue),
                None,
            )
            if other is not None:
                problem = (
                    f"pods '{first_pod.name}' and '{other.name}' has different queue names: "
                    f"{queue}!={other.labels.get(QUEUE_NAME_LABEL)}"
                )
        if problem:
            for x in keys:
                k.linked.add(x)
                k.held[x] = f"Kueue cannot create the Workload of pod group {ns}/{g}: {problem}"
            continue
        roles: dict[str, tuple[int, Any, Any]] = {}
        for x in keys:
            pod, raw, pctx = b.pods[x]
            h = k.role(x)
            if h in roles:
                roles[h] = (roles[h][0] + 1, roles[h][1], roles[h][2])
            else:
                _, ann, view = template_view(
                    pctx, ns, {"metadata": raw.get("metadata"), "spec": raw.get("spec")}, ""
                )
                tr = topology_from_annotations(
                    pctx, pod.annotations, "metadata.annotations", pod_index_label=POD_INDEX
                )
                roles[h] = (1, view, tr)
        podsets = tuple(
            podset_from_pod(h, n, None, view, tr) for h, (n, view, tr) in sorted(roles.items())
        )
        prio, cls, problem = k.priority(first_pod.labels, first_pod.priority_class_name)
        wl = KueueWorkload(
            namespace=ns,
            name=g,
            queue_name=queue,
            priority=prio,
            priority_class=cls,
            creation_timestamp=min(b.pods[x][0].creation_timestamp for x in keys),
            podsets=podsets,
            owner=f"PodGroup/{g}",
            synthesized=True,
            annotations=dict(first_pod.annotations),
            source=ctx.file,
        )
        plans.append((wl, None, True, None, ctx.file))


def _link_all(
    k: _Builder,
    plans: list[tuple[KueueWorkload, tuple[str, str] | None, bool, list[dict] | None, str]],
    jobs: list[Job],
) -> None:
    """Link every planned Workload to its pods, make the pods of those whose job is not in the snapshot, hold the pending ones; then the pods labelled for Kueue that no Workload took."""
    b = k.b
    present = {(j.ns, j.kind, j.name) for j in jobs} | {
        (pod.namespace, "Pod", pod.name) for pod, _, _ in b.pods.values()
    }
    for wl, owner, is_group, templates, file in plans:
        wl = k.link(wl, owner, is_group)
        if (
            templates is not None
            and not wl.finished
            and (owner is None or (wl.namespace, owner[0], owner[1]) not in present)
            and any(len(ps.pods) < ps.count for ps in wl.podsets)
        ):
            wl = k.make_pods(wl, templates, file)
        if wl.synthesized:
            k.synthesized += 1
        k.workloads[wl.key] = wl
        k.hold(wl)
    # Pods labelled for Kueue that no workload took.
    for key, (pod, _, _) in b.pods.items():
        q = pod.labels.get(QUEUE_NAME_LABEL)
        if q and key not in k.linked and pod.node_name is None:
            k.held.setdefault(
                key,
                f"Kueue has not admitted the workload of Pod/{key} (LocalQueue {q}): no Workload takes the pod",
            )
            k.linked.add(key)


def build(b: Any) -> None:
    """Workloads, their pods and the gating (module docstring); sets ``b.kueue_state`` (None
    without a ClusterQueue) and ``b.kueue_pods`` (the pod keys Kueue manages)."""
    p: _Parsed | None = getattr(b, "kueue_parsed", None)
    b.kueue_state = None
    b.kueue_pods = frozenset()
    if p is None:
        return
    k = _Builder(b, p)
    plans: list[tuple[KueueWorkload, tuple[str, str] | None, bool, list[dict] | None, str]] = []
    _snapshot_workloads(k, plans)
    jobs, defaulted = _job_workloads(k, plans)
    groups = _pod_workloads(k, plans)
    _group_workloads(k, plans, groups)
    _link_all(k, plans, jobs)
    cohorts = dict(p.cohorts)
    for cq in p.cqs.values():
        if cq.cohort and cq.cohort not in cohorts:
            cohorts[cq.cohort] = Cohort(name=cq.cohort)
    for c in list(cohorts.values()):
        if c.parent and c.parent not in cohorts:
            cohorts[c.parent] = Cohort(name=c.parent)
    if defaulted:
        env_lines = getattr(b, "foreign_env", None)
        (env_lines.lines if env_lines is not None else b.translations).append(
            f"{len(defaulted)} Job/JobSet without {QUEUE_NAME_LABEL} in a namespace with a LocalQueue named 'default' "
            f"queued there, as Kueue's job webhook labels them at creation (ApplyDefaultLocalQueue): "
            + ", ".join(defaulted[:3])
            + (", ..." if len(defaulted) > 3 else "")
        )
    # The expansion's "suspended by Kueue" warning is no loss once Kueue's admission is modelled:
    # the Jobs' pods are held until their Workload is admitted.
    managed = {f"{w.namespace}/{w.owner.split('/', 1)[1]}" for w in k.workloads.values() if w.owner}
    for note_key in [n for n in b.notes if n[:2] == ("Job", "spec.suspend")]:
        names = [n for n in b.notes[note_key] if n not in managed]
        if names:
            b.notes[note_key] = names
        else:
            del b.notes[note_key]
    b.kueue_state = KueueState(
        flavors=p.flavors,
        cluster_queues=p.cqs,
        cohorts=cohorts,
        local_queues=p.lqs,
        workloads=k.workloads,
        workload_priority_classes=p.wpcs,
    )
    b.kueue_pods = frozenset(k.linked)
    b.held.update(k.held)
    counts = Counter()
    counts.update(
        {
            "ClusterQueue": len(p.cqs),
            "LocalQueue": len(p.lqs),
            "ResourceFlavor": len(p.flavors),
            "Cohort": len(p.cohorts),
            "WorkloadPriorityClass": len(p.wpcs),
        }
    )
    parts = [
        f"{n} {kind}{'es' if n != 1 and kind.endswith('s') else 's' if n != 1 else ''}"
        for kind, n in counts.items()
        if n
    ]
    admitted = sum(1 for w in k.workloads.values() if w.admission is not None and not w.finished)
    env = getattr(b, "foreign_env", None)
    (env.lines if env is not None else b.translations).append(
        f"read Kueue (kueue.x-k8s.io v1beta1/v1beta2): {', '.join(parts)}; {len(k.workloads)} Workload"
        f"{'s' if len(k.workloads) != 1 else ''} ({len(p.workloads)} in the snapshot, {k.synthesized} made as Kueue's job reconciler would for objects labelled {QUEUE_NAME_LABEL}; {admitted} admitted)"
        + (
            f", {k.made} pending pod{'s' if k.made != 1 else ''} made from Workload templates"
            if k.made
            else ""
        )
        + f"; {len(k.held)} pending pod{'s' if len(k.held) != 1 else ''} held until Kueue admits their Workload"
    )


def _uid(kind: str, ns: str, name: str) -> str:
    from gangplan.io.expand.naming import deterministic_uid

    return deterministic_uid(kind, ns, name)


__all__ = ["build", "collect", "prepare", "topology_from_annotations", "workload_name"]
