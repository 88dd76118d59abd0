"""The Kubernetes minor version a run reproduces, and every behaviour that differs between them.

kube-scheduler's workload scheduling changed between v1.35, v1.36 and v1.37 (the pod-group cycle
appeared in v1.36, NodeResourcesBalancedAllocation changed its formula in v1.36, the preemption of
topology-constrained groups changed, the scheduling API versions served differ). A run names the
version it reproduces (``--kube-version``, ``kube_version=`` in the library, ``params.kubeVersion``
in the Result); the default is the newest. Each behaviour keyed on the version is listed once in
:data:`BEHAVIOURS`, with the upstream code it mirrors per version; the table in docs/explanation/greedy-fidelity.md is generated
from it (``tests/test_kube_version.py`` keeps them equal) and the engines read the predicates
below, never a version literal of their own.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class KubeVersion(StrEnum):
    V1_35 = "1.35"
    V1_36 = "1.36"
    V1_37 = "1.37"
    V1_38 = "1.38"
    """The newest development code (master after the v1.37 release), for scheduler developers."""

    @property
    def minor(self) -> int:
        return int(self.value.split(".")[1])

    def at_least(self, other: KubeVersion | str) -> bool:
        return self.minor >= KubeVersion(other).minor


NEWEST = KubeVersion.V1_37
"""The newest release: the default."""
DEVELOPMENT = KubeVersion.V1_38
VERSIONS = tuple(KubeVersion)
RELEASES = tuple(v for v in VERSIONS if v != DEVELOPMENT)

_SEMVER = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


def parse_kube_version(text: str | None) -> KubeVersion | None:
    """``1.36``, ``v1.36``, ``1.36.2`` or a kubelet's ``v1.36.2-eks-1234`` -> the minor version
    gangplan models; None when the text is no version or names one gangplan does not model."""
    m = _SEMVER.match((text or "").strip())
    if not m or m.group(1) != "1":
        return None
    try:
        return KubeVersion(f"1.{int(m.group(2))}")
    except ValueError:
        return None


def minor_of(text: str | None) -> str | None:
    """The ``1.<minor>`` of a version string, modelled or not (``v1.33.4`` -> ``1.33``)."""
    m = _SEMVER.match((text or "").strip())
    return f"{m.group(1)}.{int(m.group(2))}" if m else None


@dataclass(frozen=True)
class VersionEvidence:
    """What the Nodes' ``status.nodeInfo.kubeletVersion`` suggest about the cluster's version."""

    suggested: KubeVersion | None
    """The newest modelled minor any node runs (the control plane is at least as new as its
    kubelets, so the newest kubelet is the closest lower bound on kube-scheduler's version)."""
    minors: dict[str, int]
    """Nodes per kubelet minor (``1.36``: 12), modelled or not; nodes without a version are left out."""
    api_suggested: KubeVersion | None = None
    """The newest release serving every ``scheduling.k8s.io`` object of the snapshot (:func:`api_suggestion`)."""
    unserved: dict[str, tuple[str, ...]] | None = None
    """Per modelled release, what of the snapshot it does not serve (:func:`unserved`)."""

    def differs_from(self, used: KubeVersion) -> bool:
        return self.suggested is not None and self.suggested != used

    def not_served(self, used: KubeVersion) -> tuple[str, ...]:
        return (self.unserved or {}).get(used.value, ())

    def describe(self) -> str:
        if not self.minors:
            return "no Node reports status.nodeInfo.kubeletVersion"
        counts = ", ".join(
            f"{n} node(s) at v{m}"
            for m, n in sorted(self.minors.items(), key=lambda kv: _minor_key(kv[0]))
        )
        return counts


def _minor_key(m: str) -> tuple[int, int]:
    a, b = m.split(".")
    return int(a), int(b)


def version_evidence(
    kubelet_versions: Iterable[str], api_versions: dict[str, int] | None = None
) -> VersionEvidence:
    minors: Counter[str] = Counter()
    for v in kubelet_versions:
        m = minor_of(v)
        if m is not None:
            minors[m] += 1
    modelled = [KubeVersion(m) for m in minors if m in {v.value for v in VERSIONS}]
    newer = [m for m in minors if _minor_key(m) > _minor_key(VERSIONS[-1].value)]
    suggested = (
        max(modelled, key=lambda v: v.minor) if modelled else (VERSIONS[-1] if newer else None)
    )
    apis = api_versions or {}
    return VersionEvidence(
        suggested,
        dict(sorted(minors.items(), key=lambda kv: _minor_key(kv[0]))),
        api_suggestion(apis),
        {v.value: tuple(unserved(apis, v)) for v in VERSIONS},
    )


# ---- what each release serves ----------------------------------------------------------------------
SCHEDULING = "scheduling.k8s.io"
SERVED: dict[KubeVersion, dict[str, frozenset[str]]] = {
    KubeVersion.V1_35: {"Workload": frozenset({f"{SCHEDULING}/v1alpha1"})},
    KubeVersion.V1_36: {
        "Workload": frozenset({f"{SCHEDULING}/v1alpha2"}),
        "PodGroup": frozenset({f"{SCHEDULING}/v1alpha2"}),
    },
    KubeVersion.V1_37: {
        "Workload": frozenset({f"{SCHEDULING}/v1alpha3", f"{SCHEDULING}/v1beta1"}),
        "PodGroup": frozenset({f"{SCHEDULING}/v1alpha3", f"{SCHEDULING}/v1beta1"}),
        "CompositePodGroup": frozenset({f"{SCHEDULING}/v1alpha3"}),
    },
}
SERVED[KubeVersion.V1_38] = SERVED[KubeVersion.V1_37]
"""The ``scheduling.k8s.io`` versions each kube-apiserver release serves (when enabled with
``--runtime-config``: none is on by default): v1.35 CHANGELOG (#134564, v1alpha1 Workload), v1.36
CHANGELOG (#136976, v1alpha2 Workload and PodGroup, v1alpha1 removed), v1.37 (``k8s.io/api``
``scheduling/v1beta1`` Workload and PodGroup, ``v1alpha3`` with CompositePodGroup; v1alpha2 replaced)."""

POD_GROUP_LINK = {
    "spec.workloadRef": frozenset({KubeVersion.V1_35}),
    "spec.schedulingGroup": frozenset({KubeVersion.V1_36, KubeVersion.V1_37, KubeVersion.V1_38}),
}
"""The Pod field that joins a pod to its group, per release."""

GATES: dict[str, dict[KubeVersion, str]] = {
    "GenericWorkload": {
        KubeVersion.V1_35: "alpha",
        KubeVersion.V1_36: "alpha",
        KubeVersion.V1_37: "beta",
    },
    "GangScheduling": {KubeVersion.V1_35: "alpha", KubeVersion.V1_36: "alpha"},
    "TopologyAwareWorkloadScheduling": {KubeVersion.V1_36: "alpha", KubeVersion.V1_37: "alpha"},
    "WorkloadAwarePreemption": {KubeVersion.V1_36: "alpha"},
    "CompositePodGroup": {KubeVersion.V1_37: "alpha"},
    "PodGroupPreemptionPolicy": {KubeVersion.V1_37: "alpha"},
    "DRAWorkloadResourceClaims": {KubeVersion.V1_36: "alpha", KubeVersion.V1_37: "beta"},
}
"""Workload-scheduling feature gates per release (``pkg/features/kube_features.go`` versioned
specs, the kubernetes.io feature-gate pages): every one is off by default; v1.37 folds
GangScheduling and WorkloadAwarePreemption into GenericWorkload. gangplan models them all on."""


def unserved(api_versions: dict[str, int], v: KubeVersion) -> list[str]:
    """``Kind apiVersion`` (and Pod link field) counts of a snapshot that release ``v`` does not
    serve, one line each, for a warning."""
    out = []
    served = SERVED[v]
    for entry, n in sorted(api_versions.items()):
        kind, _, api = entry.partition(" ")
        if kind == "Pod":
            if v not in POD_GROUP_LINK.get(api, frozenset({v})):
                out.append(f"{n} Pod(s) use {api}, which v{v} does not have ({_link_of(v)} there)")
        elif kind in served or kind in {k for s in SERVED.values() for k in s}:
            if api not in served.get(kind, frozenset()):
                there = ", ".join(sorted(served[kind])) if kind in served else "no version"
                out.append(
                    f"{n} {kind}(s) in {api}, which kube-apiserver v{v} does not serve ({there})"
                )
    return out


def _link_of(v: KubeVersion) -> str:
    return next(f for f, vs in POD_GROUP_LINK.items() if v in vs)


def api_suggestion(api_versions: dict[str, int]) -> KubeVersion | None:
    """The newest release that serves every scheduling object (and pod link) of the snapshot."""
    if not api_versions:
        return None
    fits = [v for v in RELEASES if not unserved(api_versions, v)]
    return max(fits, key=lambda v: v.minor) if fits else None


# ---- behaviours keyed on the version -------------------------------------------------------------
def balanced_allocation_with_change(v: KubeVersion) -> bool:
    """NodeResourcesBalancedAllocation scores the change of the node's balance (v1.36+,
    kubernetes#135573) instead of the balance with the pod alone (v1.35)."""
    return v.at_least(KubeVersion.V1_36)


def quorum_pod_first(v: KubeVersion) -> bool:
    """v1.36 sorts a gang's pods by the time they passed PreEnqueue: the pod that completed the
    quorum first, the pods gated before it after it in Go map order (random). v1.35 (pods queued
    one by one) and v1.37 (the group's pods in the order they joined the queued group) try them in
    arrival order (:mod:`gangplan.solver.greedy.queue`)."""
    return v == KubeVersion.V1_36


def topology_constraints_read(v: KubeVersion) -> bool:
    """kube-scheduler reads a group's ``schedulingConstraints.topology`` and runs the placement
    algorithm for it (KEP-5732, gate TopologyAwareWorkloadScheduling: alpha from v1.36,
    ``pkg/features/kube_features.go``). v1.35 has neither: its only group API is the v1alpha1
    Workload, whose ``spec.podGroups[]`` entries hold ``name`` and ``policy`` alone (``k8s.io/api``
    ``scheduling/v1alpha1/types.go`` @ v0.35.0 = 9afe7de0), and its scheduler places a gang's pods
    one by one with no notion of a domain (``gangscheduling.go`` of release-1.35: PreEnqueue,
    Reserve, Permit). So a snapshot's topology constraints are not applied at v1.35, by either
    engine or the validator (:meth:`gangplan.models.cluster.Cluster.at_version`), and a warning
    says so."""
    return v.at_least(KubeVersion.V1_36)


def permit_hold(v: KubeVersion) -> bool:
    """A gang's pods that pass Reserve wait at Permit, holding their nodes while the scheduler goes
    on with other pods, until the gang has ``minCount`` pods assumed or bound, or a timeout
    (v1.35): ``gangscheduling.go`` of release-1.35 (the v1alpha1 ``spec.workloadRef`` form) Reserve
    (``AssumePod``), Permit (Wait while ``len(assumed | assigned) < minCount``, activating the
    gang's unscheduled pods; the pod completing the quorum allows every waiting mate) and
    Unreserve (``ForgetPod``); the timeout is ``podGroupInfo.SchedulingTimeout()``, a deadline
    ``DefaultSchedulingTimeoutDuration = 5 * time.Minute`` after the gang's first Permit, renewed
    once passed (``pkg/scheduler/backend/workloadmanager/podgroupinfo.go``). From v1.36 the
    pod-group cycle decides the gang in one cycle and reverts a failed one at once."""
    return v == KubeVersion.V1_35


def placement_groups_preempt(v: KubeVersion) -> bool:
    """A topology-constrained (placement-based) pod group may use workload-aware preemption.
    v1.36 refuses ("not eligible due to placement-based pod group scheduling limitation")."""
    return v != KubeVersion.V1_36


def workload_aware_preemption(v: KubeVersion) -> bool:
    """A pod group that cannot be placed runs workload-aware preemption once for the whole group
    (v1.36+, KEP-5710). v1.35 has none: each gang pod that fails Filter runs DefaultPreemption on
    its own (``PostFilter`` of the pod-by-pod cycle), so victims are evicted for a gang that may
    still fail at Permit."""
    return v.at_least(KubeVersion.V1_36)


def rerun_reprieve(v: KubeVersion) -> bool:
    """Workload-aware preemption's reprieve re-runs the whole pod-group algorithm for each unit
    put back (v1.36); v1.37 re-checks Filter on the nodes chosen once (kubernetes#139980)."""
    return v == KubeVersion.V1_36


def hierarchy_checks(v: KubeVersion) -> str:
    """Which run-time hierarchy validation a release runs before a pod-group cycle
    (:mod:`gangplan.models.hierarchy`): ``none`` (v1.35, v1.36: no such validation; v1.36 even
    sorts a gang's pods by their own priorities), ``pods`` (``validatePodGroup`` /
    ``validatePodGroupHierarchy(pgi, validatePodGroup, validatePod)``: group and pod priority /
    preemption policy against the root, schedulerName, profile) for v1.37 and for the development
    code (master after kubernetes#141930). The structural checks of ``validatePodGroupHierarchy``
    @45f0bf0f (depth, one Workload, gang parent / basic child, ``all`` parent / ``single`` child:
    ``full``) belong to the unmerged proof of concept kubernetes#142004; no version runs them (the
    newest master tests, ``cpg_tas_test.go`` @1361a25a and ``cpg_test.go`` @16457a8a, schedule
    gang roots over basic children; docs/upstream-hierarchy-validation.md §6)."""
    if v.minor <= 36:
        return "none"
    return "pods"


def groups_requeue_without_hints(v: KubeVersion) -> bool:
    """v1.37's entity queue puts a failed pod group straight back to backoff (no queueing hint,
    ``AddAttemptedPodGroupIfNeeded``), with a backoff cap of ``10 s * sqrt(size)``; v1.36 requeues
    each member pod by its own hints (:mod:`gangplan.solver.greedy.scheduling_queue`)."""
    return v.at_least(KubeVersion.V1_37)


def stale_affinity_lists(v: KubeVersion) -> bool:
    """Inside a pod-group cycle the snapshot-wide "nodes with pods with (anti-)affinity" lists
    are the ones of the cycle's start: ``Snapshot.AssumePod`` / ``ForgetPod`` update the node's
    ``NodeInfo`` but not ``havePodsWithAffinityNodeInfoList`` /
    ``havePodsWithRequiredAntiAffinityNodeInfoList`` (``pkg/scheduler/backend/cache/snapshot.go``,
    v1.36.2; kubernetes#139028). So a gang mate assumed in the cycle on a node outside the lists
    is invisible to "existing pods' anti-affinity" (InterPodAffinity Filter) and, for a pod
    without preferred terms, to InterPodAffinity scoring. Fixed on master by kubernetes#139054
    (``assumedPodState``, ``removeAssumedNodeInfo``), merged during the v1.37 cycle, so v1.37
    keeps the lists in sync; no v1.36.x patch is known to carry it. v1.35 has no pod-group cycle
    (each gang pod has its own cycle, whose snapshot is fresh)."""
    return v == KubeVersion.V1_36


def group_pods_backoff_only(v: KubeVersion) -> bool:
    """v1.36 requeues a pod group's pods by backoff alone: ``determineSchedulingHintForInFlightPod``
    ("when the pod is a member of the pod group ... its retry logic should be based solely on
    backoff", ``pkg/scheduler/backend/queue/scheduling_queue.go`` v1.36.2), so a failed group never
    waits in the unschedulable pool for a hint, and with ``SchedulerPopFromBackoffQ`` (beta, on
    since v1.33) the head of backoffQ is popped at once when activeQ is empty: a failed group is
    retried whenever activeQ drains, and a partially placed group's leftovers wait behind every
    entity in activeQ. v1.35 has no group in the queue (pods by their hints); v1.37 requeues the
    group whole (:func:`groups_requeue_without_hints`)."""
    return v == KubeVersion.V1_36


def async_workload_preemption(v: KubeVersion) -> bool:
    """A successful workload-aware preemption does not place the group in its cycle (rule W of
    issue 39): ``podGroupCycle`` marks every result ``waitingOnPreemption`` and
    ``submitPodGroupAlgorithmResult`` sends the pods back to the queue with their nominations;
    the simulation ran on a backed-up snapshot (``BackupSnapshot`` / ``restoreFn``,
    ``pkg/scheduler/schedule_one_podgroup.go``); the victims only get a (graceful) delete call
    (``pkg/scheduler/framework/preemption/executor.go``) and stay on their nodes until it
    completes. Every release with workload-aware preemption (v1.36+) does so."""
    return workload_aware_preemption(v)


def wap_nominates_simulation(v: KubeVersion) -> bool:
    """Which assignments a successful workload-aware preemption nominates the group's pods to.
    v1.36.2: the failed pre-preemption attempt's (a pod that fitted there gets its node, a pod
    that failed keeps its old nomination; no lower-priority nomination is cleared), and a retry
    that fails runs the preemption again with no "ongoing preemption" check. Newer code
    (``PodGroupEvaluator.Preempt``, ``podgrouppreemption.go``; its unit test
    ``TestPodGroupEvaluator_Preempt_NominatedNodes``, kubernetes @805300d0): the simulation's
    proposed assignments (``NominatingInfos``), lower-priority nominations on those nodes
    cleared, and while the group's victims are still terminating Preempt returns Success with
    the current nominations ("ongoing preemption on nominated nodes"), choosing no new victims."""
    return v.at_least(KubeVersion.V1_37)


def pod_group_claims(v: KubeVersion) -> bool:
    """PodGroups may carry ``spec.resourceClaims`` shared by their pods (KEP-5729, gate
    DRAWorkloadResourceClaims: alpha in v1.36, beta but still off by default in v1.37,
    ``pkg/features/kube_features.go``; ``k8s.io/api`` ``scheduling/v1alpha2`` PodGroupSpec in
    release-1.36, ``v1alpha3`` / ``v1beta1`` in v1.37). v1.35 has no PodGroup object at all (a
    snapshot's PodGroups are read anyway and named as not served there), so gangplan reads the
    claims the same way at every version."""
    return v.at_least(KubeVersion.V1_36)


def dra_distinct_attribute(v: KubeVersion) -> bool:
    """The structured allocator knows ``distinctAttribute`` constraints (gate DRAConsumableCapacity,
    beta and on by default from v1.36, so the ``incubating`` allocator runs); v1.35's ``stable``
    allocator has no case for them and fails the claim ("empty constraint (unsupported
    constraint type?)", ``structured/internal/stable/allocator_stable.go``)."""
    return v.at_least(KubeVersion.V1_36)


def dra_partitionable_devices(v: KubeVersion) -> bool:
    """Devices that consume shared counters (KEP-4815, ``consumesCounters`` / ``sharedCounters``)
    may be allocated: gate DRAPartitionableDevices, alpha (off) from v1.33, beta and on by
    default from v1.36 (``pkg/features/kube_features.go``, release-1.36 and master). With it off
    (v1.35) the allocator never allocates such a device (``allocateDevice``, ``structured/internal/
    stable/allocator_stable.go``: "Device consumes counters, but the partitionable devices feature
    is not enabled"). The gate turns on in the release DRAConsumableCapacity does
    (:func:`dra_distinct_attribute`), so the allocator takes both from one flag unless told
    otherwise (tests/test_dra_counters.py checks they agree at every version)."""
    return v.at_least(KubeVersion.V1_36)


def dra_device_taints(v: KubeVersion) -> bool:
    """Device taints in ResourceSlices are checked (KEP-5055, gate DRADeviceTaints: alpha (off)
    from v1.33, beta and on by default in v1.36, GA in v1.37; ``staging/src/k8s.io/kube-scheduler/
    pkg/features/kube_features.go``, master @ead35706, and ``pkg/features/kube_features.go`` of
    release-1.35): the allocator refuses a device with a NoSchedule or NoExecute taint the request
    does not tolerate (``allocateDevice`` / ``taintPreventsAllocation``, ``structured/internal/
    stable/allocator_stable.go`` and ``incubating/allocator_incubating.go``, kubernetes @03ab440c;
    the ``features.DeviceTaints`` check). v1.35 allocates tainted devices as if untainted."""
    return v.at_least(KubeVersion.V1_36)


def dra_device_taint_rules(v: KubeVersion) -> bool:
    """DeviceTaintRules add their taint to the devices they select before the allocator sees them
    (the scheduler's ResourceSlice tracker, ``staging/src/k8s.io/dynamic-resource-allocation/
    resourceslice/tracker/tracker.go`` ``applyPatches``, started with ``EnableDeviceTaintRules``
    = gate DRADeviceTaintRules): alpha (off) in v1.35, beta but off by default in v1.36 ("depends
    on an off-by-default beta API", resource.k8s.io/v1beta2), GA and on in v1.37."""
    return v.at_least(KubeVersion.V1_37)


def dra_binding_conditions(v: KubeVersion | str) -> bool:
    """Devices with ``bindingConditions`` (KEP-5007, gate DRADeviceBindingConditions: alpha (off)
    in v1.34 and v1.35, beta and on from v1.36, ``pkg/features/kube_features.go``) can be
    allocated; with the gate off the allocator's ``isSelectable`` refuses them ("Devices with
    binding conditions are not supported, feature is off"). With it on the allocation result
    carries the conditions and PreBind waits for them before the pod binds."""
    return KubeVersion(v).at_least(KubeVersion.V1_36)


def dra_taint_mode(v: KubeVersion | str) -> str:
    """Which device taints the allocator of release ``v`` checks: ``off`` (v1.35), ``slices``
    (v1.36: the ResourceSlices' own) or ``rules`` (v1.37+: those and the DeviceTaintRules')."""
    v = KubeVersion(v)
    if not dra_device_taints(v):
        return "off"
    return "rules" if dra_device_taint_rules(v) else "slices"


def dra_admin_access(v: KubeVersion) -> bool:
    """``adminAccess`` requests (KEP-5018, gate DRAAdminAccess): alpha (off) in v1.32, beta and on
    by default from v1.34, GA and locked on in v1.36 (``pkg/features/kube_features.go``, master:
    ``{1.32 alpha false}, {1.34 beta true}, {1.36 GA true, LockToDefault}``): on at every release
    gangplan reproduces. With it off the allocator would fail such a claim ("admin access is
    requested, but the feature is disabled", ``validateDeviceRequest``; the DynamicResources test
    ``request-admin-access-without-DRAAdminAccess-featuregate``), which only a v1.35 cluster that
    turned the gate off does; gangplan does not model that."""
    return v.at_least(KubeVersion.V1_35)


def dra_prioritized_list(v: KubeVersion) -> bool:
    """``firstAvailable`` subrequests (KEP-4816, gate DRAPrioritizedList): beta and on by default
    from v1.34, GA in v1.36, locked on in v1.37 (``pkg/features/kube_features.go``): on at every
    release gangplan reproduces."""
    return v.at_least(KubeVersion.V1_35)


@dataclass(frozen=True)
class Behaviour:
    topic: str
    per_version: dict[str, str]
    """``"1.35"`` / ``"1.36"`` / ``"1.37"`` (or ``"1.35-1.36"``, ``"1.36+"``) -> what that version does."""
    upstream: str
    """The upstream code each version's reproduction mirrors."""


BEHAVIOURS: tuple[Behaviour, ...] = (
    Behaviour(
        "`scheduling.k8s.io` versions served (kube-apiserver; none by default)",
        {
            "1.35": "v1alpha1 Workload (groups in `spec.podGroups`, pods join by `spec.workloadRef`)",
            "1.36": "v1alpha2 Workload and PodGroup (pods join by `spec.schedulingGroup`)",
            "1.37+": "v1beta1 Workload and PodGroup; v1alpha3 Workload, PodGroup and CompositePodGroup",
        },
        "CHANGELOG-1.35 (#134564), CHANGELOG-1.36 (#136976), `staging/src/k8s.io/api/scheduling/v1beta1`, `v1alpha3` (v1.37); objects of a version the release does not serve are read and warned about",
    ),
    Behaviour(
        "workload-scheduling feature gates (all off by default; gangplan models them on)",
        {
            "1.35": "GenericWorkload, GangScheduling (alpha)",
            "1.36": "GenericWorkload, GangScheduling, TopologyAwareWorkloadScheduling, WorkloadAwarePreemption (alpha)",
            "1.37+": "GenericWorkload (beta, with gang scheduling and workload-aware preemption folded in); TopologyAwareWorkloadScheduling, CompositePodGroup, PodGroupPreemptionPolicy (alpha)",
        },
        "`pkg/features/kube_features.go` and `staging/src/k8s.io/kube-scheduler/pkg/features/kube_features.go` versioned specs; kubernetes.io feature-gate pages",
    ),
    Behaviour(
        "NodeResourcesBalancedAllocation score",
        {
            "1.35": "`(1 - std) * 100` of the fractions with the pod",
            "1.36+": "the change of balance: with the pod against without it, 75 when unchanged (50..100)",
        },
        "`pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go` (release-1.35 @02d7708a; kubernetes#135573 in v1.36)",
    ),
    Behaviour(
        "order of a gang's pods in its cycle",
        {
            "1.35": "arrival order (each pod its own activeQ entry: priority, then queue time)",
            "1.36": "priority, then `InitialAttemptTimestamp` (first PreEnqueue pass): the pod that completed the quorum, then the pods gated before it in Go map order (drawn from `--seed`), then later arrivals",
            "1.37+": "arrival order (the queued group's `QueuedPodInfos`, no sort)",
        },
        "`schedule_one_podgroup.go` `podGroupInfoForPod` (release-1.36 @008b3652: sort by priority, `InitialAttemptTimestamp`); `backend/queue/scheduling_queue.go` `moveToActiveQ`; `plugins/gangscheduling/gangscheduling.go` PreEnqueue; v1.37: `QueuedPodGroupInfo` (kubernetes#138567)",
    ),
    Behaviour(
        "a group's `schedulingConstraints.topology` (KEP-5732)",
        {
            "1.35": "not read: no such field in the v1alpha1 Workload, no placement algorithm; a gang's pods go wherever Filter and Score send them (gangplan warns and drops the constraint for both engines and the validator)",
            "1.36+": "the placement algorithm: one placement per domain of the key, the best feasible one kept (TopologyAwareWorkloadScheduling alpha; gangplan models it on)",
        },
        "`k8s.io/api` `scheduling/v1alpha1/types.go` (v0.35.0 @9afe7de0: `PodGroup{name, policy}`); `pkg/features/kube_features.go` (TopologyAwareWorkloadScheduling alpha in v1.36); `schedule_one_podgroup.go` placements (v1.36+)",
    ),
    Behaviour(
        "workload-aware preemption of a group with `schedulingConstraints.topology`",
        {
            "1.35": "no workload-aware preemption: each gang pod that fails Filter runs DefaultPreemption alone, its victims evicted even when the gang then fails",
            "1.36": 'refused: "workload aware preemption is not supported for pod groups with scheduling constraints"',
            "1.37+": "runs (kubernetes#140683)",
        },
        "`schedule_one_podgroup.go` `runWorkloadAwarePreemption` (release-1.36, kubernetes#137606)",
    ),
    Behaviour(
        "a gang short of `minCount` after its pods' cycles",
        {
            "1.35": "its assumed pods wait at Permit, holding their nodes while every other queued entity runs, until the quorum (a retry counts them as scheduled) or the 5-minute timeout from the gang's first Permit; then they are forgotten, an `AssignedPodDelete` event for every other pod (gangplan: every other entity), the gang's pods back in the queue; every pod of the gang gets its cycle (no early stop)",
            "1.36+": "the pod-group cycle reverts it at once (PlacementFeasible stops as soon as `minCount` is out of reach)",
        },
        "`plugins/gangscheduling/gangscheduling.go` Reserve / Permit / Unreserve (release-1.35, v1alpha1 `spec.workloadRef` form), `backend/workloadmanager/podgroupinfo.go` (`DefaultSchedulingTimeoutDuration`, `SchedulingTimeout`), `framework/runtime/waiting_pods_map.go` (`rejected due to timeout after waiting ...`), `schedule_one.go` `handleBindingCycleError`; `schedule_one_podgroup.go` (v1.36+)",
    ),
    Behaviour(
        "workload-aware preemption's reprieve",
        {
            "1.35": "none (per-pod DefaultPreemption: dry run per node, `pickOneNodeForPreemption`)",
            "1.36": "each unit put back (PDB-violating first, importance order), then the whole pod-group algorithm again: the group's pods may move",
            "1.37+": "the algorithm once on the emptied cluster, then Filter re-checked on the chosen nodes per unit put back (kubernetes#139980)",
        },
        "`pkg/scheduler/framework/preemption/podgrouppreemption.go` (release-1.36; master)",
    ),
    Behaviour(
        "requeueing a failed entity",
        {
            "1.35": "each pod by its rejecting plugins' queueing hints (a bound pod matching its affinity, an evicted pod freeing resources, ...), backoff 1 s doubling to 10 s, the 5-minute flush",
            "1.36": "single pods as v1.35; a pod group's pods by backoff alone (no hints, never the unschedulable pool), the head of backoffQ popped at once when activeQ is empty: a failed group is retried whenever activeQ drains (so a failure that hung on a score tie is retried with the tie broken anew, gangplan: up to 8 times), a partly placed group's leftovers after every entity in activeQ",
            "1.37+": "single pods as before; a failed pod group goes back whole on any event, backoff capped at `10 s * sqrt(size)`",
        },
        "`pkg/scheduler/backend/queue/scheduling_queue.go` (`determineSchedulingHintForInFlightPod`, `AddUnschedulableIfNotPresent`), `backoff_queue.go`, `active_queue.go` `unlockedPop` (SchedulerPopFromBackoffQ), the plugins' `EventsToRegister` (release-1.36 / v1.36.2; v1.37 kubernetes#138567)",
    ),
    Behaviour(
        "a successful workload-aware preemption",
        {
            "1.35": "none (per-pod DefaultPreemption; gangplan: its victims leave at once)",
            "1.36": "asynchronous: the group is not placed in that cycle; its victims get a delete call and stay on their nodes (requests, labels, affinity terms) until removed; the pods that fitted in the failed attempt before preemption are nominated to their nodes there (others keep theirs); the group retries behind the queue with the victims still present (a nominated node is tried alone first), a failed retry preempts again over what is present (terminating victims are candidates, not deleted twice), then the victims go and the group retries",
            "1.37+": "asynchronous as v1.36, but the pods are nominated to the simulation's nodes (lower-priority nominations there cleared), and while the group's victims are terminating a failed retry chooses no new victims (\"ongoing preemption on nominated nodes\")",
        },
        "`schedule_one_podgroup.go` `podGroupCycle` / `runWorkloadAwarePreemption` (`BackupSnapshot`) / `submitPodGroupAlgorithmResult` (`waitingOnPreemption`); `framework/preemption/executor.go` `actuatePodGroupPreemption`; `podgrouppreemption.go` `Preempt` (release-1.36 / v1.36.2; kubernetes @805300d0 `TestPodGroupEvaluator_Preempt`, `..._NominatedNodes`); `schedule_one.go` `evaluateNominatedNode`",
    ),
    Behaviour(
        "run-time hierarchy validation before a pod-group cycle",
        {
            "1.35-1.36": "none",
            "1.37+": "group and pod priority / preemption policy equal the root's, one schedulerName, a profile for it (`validatePodGroup`); no depth, Workload, gang / basic or disruption-mode check (those are the unmerged kubernetes#142004)",
        },
        "`pkg/scheduler/schedule_one_podgroup.go` `validatePodGroup` (kubernetes#141930); POC `validatePodGroupHierarchy` @45f0bf0f (kubernetes#142004, unmerged) not modelled; `cpg_tas_test.go` @1361a25a, `cpg_test.go` @16457a8a; docs/upstream-hierarchy-validation.md §6",
    ),
    Behaviour(
        "nodes with (anti-)affinity pods inside a pod-group cycle",
        {
            "1.35": "no pod-group cycle: each gang pod's cycle sees every pod",
            "1.36": "the lists of the cycle's start (kubernetes#139028): a gang mate assumed on a node without such pods is invisible to existing pods' anti-affinity and, for a pod without preferred terms, to InterPodAffinity scoring; workload-aware preemption takes the lists once, when it starts",
            "1.37+": "kept in sync with the pods assumed in the cycle (kubernetes#139054)",
        },
        "`pkg/scheduler/backend/cache/snapshot.go` `AssumePod` / `ForgetPod` / `HavePodsWithAffinityList` (v1.36.2; master after kubernetes#139054); `plugins/interpodaffinity/filtering.go` PreFilter, `scoring.go` PreScore",
    ),
    Behaviour(
        "victim importance at equal priority",
        {
            "1.35": "per node, as DefaultPreemption orders pods (`MoreImportantPod`)",
            "1.36": "a unit whose first pod belongs to a PodGroup over a lone pod, then more pods, then the earlier start",
            "1.37+": "CompositePodGroup over PodGroup over Pod units, then more pods, then the earlier start",
        },
        "`moreImportantVictim`, `pkg/scheduler/framework/preemption/types.go`",
    ),
    Behaviour(
        "preemption candidates (rule V of issue 39)",
        {
            "1.35": "every pod of the candidate node's `NodeInfo` with a strictly lower priority: bound in the input, bound or assumed earlier in the run, or terminating (a victim already being deleted is not deleted twice); all are removed before the dry run",
            "1.36+": "as v1.35 for a single pod; a group's workload-aware preemption takes every such pod of every node (unit: its highest `disruptionMode: all` group, priority: its root group's), all removed before the simulation, so a group whose required affinity needs one of them finds that preemption cannot help",
        },
        "`newDomainForWorkloadPreemption` / `selectVictimsOnDomain` / `isPreemptionAllowed`, `framework/preemption/podgrouppreemption.go` (@00f22436); `getCrossNodesVictims`, `framework/preemption/types.go` (@06e67ba2); `SelectVictimsOnNode`, `plugins/defaultpreemption/default_preemption.go`; `AssumePod` / `AddPod` → `NodeInfo.AddPod`, `backend/cache/cache.go` (@03789157)",
    ),
    Behaviour(
        "DRA: `distinctAttribute` claim constraints; PodGroup `spec.resourceClaims` (KEP-5729)",
        {
            "1.35": '`distinctAttribute` fails the claim ("empty constraint", the stable allocator); no PodGroup object (its claims are read as v1.36 reads them)',
            "1.36": "`distinctAttribute` checked (incubating allocator, DRAConsumableCapacity beta); PodGroup claims (DRAWorkloadResourceClaims alpha): one claim per group, allocated for its first placed pod",
            "1.37+": "as v1.36 (DRAWorkloadResourceClaims beta, off by default; gangplan models it on)",
        },
        "`structured/internal/stable/allocator_stable.go`, `incubating/allocator_incubating.go`, `incubating/constraint.go`; `pkg/features/kube_features.go`; `k8s.io/api` `scheduling` `PodGroupResourceClaim` (v1alpha2, v1alpha3, v1beta1)",
    ),
    Behaviour(
        "DRA: partitionable devices (shared counters, KEP-4815)",
        {
            "1.35": "a device with `consumesCounters` is never allocated (DRAPartitionableDevices alpha, off)",
            "1.36+": "allocated while its pool's counters, less what allocated devices consume, hold its consumption (DRAPartitionableDevices beta, on)",
        },
        "`structured/internal/stable/allocator_stable.go` / `incubating/allocator_incubating.go` `allocateDevice`, `checkAvailableCounters` (kubernetes @03ab440c); `pkg/features/kube_features.go`",
    ),
    Behaviour(
        "DRA: multi-node ResourceSlices with `perDeviceNodeSelection` (KEP-4815)",
        {
            "1.35": "the slice is skipped: its devices are never allocated (DRAPartitionableDevices off); `nodeSelector` / `allNodes` slices are allocated",
            "1.36+": "each device is a candidate on the nodes its own `nodeName` / `nodeSelector` / `allNodes` reaches, as `nodeSelector` and `allNodes` slices are",
        },
        "`structured/internal/incubating/pools_incubating.go` `GatherPools` (`features.PartitionableDevices`), `allocator_incubating.go` `isSelectable`, `createNodeSelector` (kubernetes v1.36)",
    ),
    Behaviour(
        "DRA: devices with binding conditions (KEP-5007)",
        {
            "1.35": "never allocated (DRADeviceBindingConditions alpha, off: `isSelectable` refuses them)",
            "1.36+": "allocated as any device; the allocation result carries its `bindingConditions` and `bindingFailureConditions`, and PreBind waits for them (DRADeviceBindingConditions beta, on)",
        },
        "`staging/src/k8s.io/dynamic-resource-allocation/structured` allocator `isSelectable` (`features.DeviceBindingAndStatus`); `pkg/features/kube_features.go` versioned specs (alpha v1.34, beta on v1.36)",
    ),
    Behaviour(
        "DRA: device taints and DeviceTaintRules (KEP-5055)",
        {
            "1.35": "taints are not checked: a tainted device is allocated as any other (DRADeviceTaints alpha, off); DeviceTaintRules are not applied",
            "1.36": "a device with a NoSchedule or NoExecute taint of its ResourceSlice is allocated only to a request that tolerates it (DRADeviceTaints beta, on); DeviceTaintRules are not applied (DRADeviceTaintRules beta, off)",
            "1.37+": "as v1.36, and DeviceTaintRules' taints count too (both gates GA, on)",
        },
        "`structured/internal/stable/allocator_stable.go` / `incubating/allocator_incubating.go` `allocateDevice`, `taintPreventsAllocation` (kubernetes @03ab440c); `resourceclaim/devicetoleration.go`; `resourceslice/tracker/tracker.go` `applyPatches`; `staging/src/k8s.io/kube-scheduler/pkg/features/kube_features.go` (master @ead35706)",
    ),
)


def behaviour_table() -> str:
    """The versions table (docs/explanation/greedy-fidelity.md): one row per behaviour, one column per version."""
    rows = [
        "| behaviour | v1.35 | v1.36 | v1.37 | v1.38 (development) | upstream |",
        "|---|---|---|---|---|---|",
    ]
    for b in BEHAVIOURS:
        cells = [_cell(b, v) for v in VERSIONS]
        rows.append(f"| {b.topic} | " + " | ".join(cells) + f" | {b.upstream} |")
    return "\n".join(rows)


def _cell(b: Behaviour, v: KubeVersion) -> str:
    for spec, text in b.per_version.items():
        if _covers(spec, v):
            return text
    return "-"


def _covers(spec: str, v: KubeVersion) -> bool:
    if spec.endswith("+"):
        return v.minor >= KubeVersion(spec[:-1]).minor
    if "-" in spec:
        lo, hi = spec.split("-")
        return KubeVersion(lo).minor <= v.minor <= KubeVersion(hi).minor
    return v == KubeVersion(spec)
