"""Kueue's quota objects as Kueue reads them: ResourceFlavor, ClusterQueue, Cohort, LocalQueue and
WorkloadPriorityClass (``kueue.x-k8s.io`` ``v1beta1`` and ``v1beta2``), into
:mod:`gangplan.models.kueue` (issue 42).

Sources, kubernetes-sigs/kueue at tag v0.19.2 (8eab68778fc1b52affe165fdf5af29d1e9b4f3cb):

* ``apis/kueue/v1beta2/{clusterqueue,cohort,localqueue,resourceflavor,workloadpriorityclass}_types.go``
  (v1beta2, the storage version) and ``apis/kueue/v1beta1/`` with its ``*_conversion.go``: v1beta1
  ``spec.cohort`` is v1beta2 ``spec.cohortName`` (a Cohort's ``spec.parentName`` is the same in
  both; ``spec.parent`` was v1alpha1's, not read), ``whenCanBorrow: Borrow`` and ``whenCanPreempt: Preempt`` convert to ``MayStopSearch``, a
  v1beta1 ``spec.admissionChecks`` list becomes ``admissionChecksStrategy`` rules. Each field is
  read under the name of the object's own apiVersion; the other version's name is an unknown field
  (warned, as kubectl's strict field validation names it) and not read.
* the CRD defaults (``+kubebuilder:default``): ``queueingStrategy: BestEffortFIFO``,
  ``flavorFungibility: {whenCanBorrow: MayStopSearch, whenCanPreempt: TryNextFlavor}``,
  ``preemption: {reclaimWithinCohort: Never, withinClusterQueue: Never, borrowWithinCohort:
  {policy: Never}}``, ``stopPolicy: None``; a missing ``namespaceSelector`` selects no namespace.
* the schema markers, CEL rules and webhooks listed in :mod:`gangplan.io.kueue_errors`
  (``pkg/webhooks/clusterqueue_webhook.go``, ``cohort_webhook.go``, ``resourceflavor_webhook.go``,
  ``common.go``), with their messages.

What Kueue has and gangplan does not use is named once per kind and field in a warning: admission
checks (``admissionChecks`` / ``admissionChecksStrategy``: a workload that needs them would wait for
them; gangplan admits on quota alone), fair sharing (``fairSharing``, ``admissionScope``),
``concurrentAdmissionPolicy``, and the MultiKueue / ProvisioningRequest / AdmissionCheck objects.
"""

from __future__ import annotations

from typing import Any

from gangplan.io import kueue_errors as E
from gangplan.io.fields import Ctx
from gangplan.io.parse_common import metadata, parse_label_selector
from gangplan.io.resources_validation import is_qualified_name
from gangplan.models.kueue import (
    BorrowWithinCohort,
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    KueuePreemption,
    LocalQueue,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
)
from gangplan.models.objects import Taint, Toleration
from gangplan.models.quantity import QuantityError, parse_quantity, to_scheduler_int

GROUP = "kueue.x-k8s.io"
VERSIONS = ("v1beta1", "v1beta2")
KINDS = (
    "ResourceFlavor",
    "ClusterQueue",
    "Cohort",
    "LocalQueue",
    "Workload",
    "WorkloadPriorityClass",
)
"""The Kueue kinds this module and :mod:`gangplan.io.kueue_workloads` read (``Topology`` is read
by the loader itself, :func:`gangplan.io.parse.parse_topology`)."""
NAMESPACED = ("LocalQueue", "Workload")

UNUSED_KINDS = {
    "AdmissionCheck": "admission checks are not modelled: gangplan admits on quota alone",
    "ProvisioningRequestConfig": "ProvisioningRequest admission checks are not modelled",
    "MultiKueueConfig": "MultiKueue is not modelled: workloads are admitted in this cluster",
    "MultiKueueCluster": "MultiKueue is not modelled: workloads are admitted in this cluster",
}
"""Kueue kinds named in a warning when a snapshot with a ClusterQueue holds them."""

_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_PREEMPT_COHORT = ("Never", "LowerPriority", "Any")
_PREEMPT_CQ = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
_STOP = ("None", "Hold", "HoldAndDrain")
MAX_RESOURCE_GROUPS = 16
MAX_FLAVORS = 64
MAX_RESOURCES = 64
MAX_TOTAL = 256
MAX_TAINTS = 8


def claims(kind: Any, api_version: Any) -> bool:
    """Is this a Kueue object this module reads (a served version of one of :data:`KINDS`)?"""
    if kind not in KINDS or not isinstance(api_version, str) or "/" not in api_version:
        return False
    group, version = api_version.rsplit("/", 1)
    return group == GROUP and version in VERSIONS


def ref(kind: str, raw: dict) -> str:
    meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
    name = meta.get("name") or "?"
    if kind in NAMESPACED:
        return f"{kind}/{meta.get('namespace') or 'default'}/{name}"
    return f"{kind}/{name}"


def version_of(raw: dict) -> str:
    return str(raw.get("apiVersion")).rsplit("/", 1)[-1]


# ---- shared pieces ---------------------------------------------------------------------------
def quantity(ctx: Ctx, raw: Any, path: str, resource: str) -> int:
    """A ``resource.Quantity`` of ``resource`` as a scheduler integer (Kueue's
    ``resources.ResourceValue``: millicores for cpu, ``Value()`` otherwise); a negative one is the
    webhook's ``validateResourceQuantity`` error."""
    if raw is None:
        return 0
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise ctx.fail(path, f"expected a quantity, got {type(raw).__name__}")
    try:
        negative = parse_quantity(raw) < 0
    except QuantityError as e:
        raise ctx.fail(path, str(e)) from None
    if negative:
        raise E.invalid(ctx, path, str(raw), "must be greater than or equal to 0")
    amount = to_scheduler_int(resource, raw)
    ctx.check_amount(amount, path, resource, what=f"quantity {raw!r}")
    return amount


def _label_key_problem(key: str) -> str | None:
    if not is_qualified_name(key):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
            "and end with an alphanumeric character, with an optional DNS subdomain prefix and '/'"
        )
    return None


def _label_value_problem(value: str) -> str | None:
    import re

    if len(value) > 63:
        return "must be no more than 63 characters"
    if value and not re.fullmatch(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?", value):
        return (
            "a valid label must be an empty string or consist of alphanumeric characters, '-', "
            "'_' or '.', and must start and end with an alphanumeric character"
        )
    return None


def labels(ctx: Ctx, raw: Any, path: str) -> dict[str, str]:
    """A label map as ``metav1validation.ValidateLabels`` accepts it."""
    out = ctx.str_map(raw, path)
    for k, v in out.items():
        problem = _label_key_problem(k)
        if problem:
            raise E.invalid(ctx, path, k, problem)
        problem = _label_value_problem(v)
        if problem:
            raise E.invalid(ctx, f"{path}.{k}" if "/" not in k else f"{path}[{k}]", v, problem)
    return out


def tolerations(ctx: Ctx, raw: Any, path: str) -> tuple[Toleration, ...]:
    """``tolerations`` of a ResourceFlavor (v0.19.2 ``resourceflavor_types.go``: at most 8, the
    five CEL rules in the order they are declared)."""
    out = []
    for i, t in enumerate(E.items(ctx, raw, path, most=MAX_TAINTS)):
        f = f"{path}[{i}]"
        t = ctx.map(t, f, required=True)
        key = ctx.str(t.get("key"), f + ".key")
        op = t.get("operator")
        if not key and op != "Exists":
            raise E.rule(
                ctx,
                path,
                "operator must be Exists when 'key' is empty, which means 'match all values and all keys'",
            )
        if t.get("tolerationSeconds") is not None and t.get("effect") != "NoExecute":
            raise E.rule(ctx, path, "effect must be 'NoExecute' when 'tolerationSeconds' is set")
        if op is not None and op not in ("Equal", "Exists"):
            raise E.rule(ctx, path, "supported toleration values: 'Equal'(default), 'Exists'")
        if op == "Exists" and t.get("value") is not None:
            raise E.rule(ctx, path, "a value must be empty when 'operator' is 'Exists'")
        effect = t.get("effect")
        if effect is not None and effect not in _EFFECTS:
            raise E.rule(
                ctx,
                path,
                "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'",
            )
        if key and _label_key_problem(key):
            raise E.invalid(ctx, f + ".key", key, _label_key_problem(key) or "")
        out.append(
            Toleration(
                key=key,
                operator=op or "Equal",
                value=ctx.str(t.get("value"), f + ".value"),
                effect=ctx.str(effect, f + ".effect"),
            )
        )
    return tuple(out)


# ---- ResourceFlavor --------------------------------------------------------------------------
def parse_resource_flavor(ctx: Ctx, raw: dict) -> ResourceFlavor:
    """``ResourceFlavorSpec`` (v0.19.2): nodeLabels, nodeTaints (at most 8, unique by key and
    effect), tolerations, topologyName (CEL: needs at least one nodeLabel)."""
    _, name, _ = metadata(ctx, raw, namespaced=False)
    spec = ctx.map(raw.get("spec"), "spec")
    node_labels = labels(ctx, spec.get("nodeLabels"), "spec.nodeLabels")
    taints: list[Taint] = []
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(E.items(ctx, spec.get("nodeTaints"), "spec.nodeTaints", most=MAX_TAINTS)):
        f = f"spec.nodeTaints[{i}]"
        t = ctx.map(t, f, required=True)
        effect = t.get("effect")
        if effect not in _EFFECTS:
            raise E.rule(
                ctx,
                "spec.nodeTaints",
                "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'",
            )
        key = ctx.str(t.get("key"), f + ".key", required=True)
        problem = _label_key_problem(key)
        if problem:
            raise E.invalid(ctx, f + ".key", key, problem)
        value = ctx.str(t.get("value"), f + ".value")
        problem = _label_value_problem(value)
        if problem:
            raise E.invalid(ctx, f + ".value", value, problem)
        if (key, effect) in seen:
            raise ctx.fail(
                f,
                f"Duplicate value: {E.go_value(key)}: taints must be unique by key and effect pair",
            )
        seen.add((key, effect))
        taints.append(Taint(key=key, value=value, effect=effect))
    tols = tolerations(ctx, spec.get("tolerations"), "spec.tolerations")
    topology = ctx.opt_str(spec.get("topologyName"), "spec.topologyName")
    if topology is not None and not node_labels:
        raise E.rule(ctx, "spec", "at least one nodeLabel is required when topology is set")
    return ResourceFlavor(
        name=name,
        node_labels=node_labels,
        node_taints=tuple(taints),
        tolerations=tols,
        topology_name=topology,
        source=ctx.file,
    )


# ---- resource groups (ClusterQueue and Cohort) -----------------------------------------------
def resource_groups(
    ctx: Ctx, raw: Any, *, has_parent: bool, is_cohort: bool
) -> tuple[ResourceGroup, ...]:
    """``spec.resourceGroups`` as the schema, the CEL rule of ``ResourceGroup`` and the webhook's
    ``validateResourceGroups`` / ``validateFlavorQuotas`` / ``validateTotalFlavors`` /
    ``validateTotalCoveredResources`` check it (v0.19.2). ``has_parent``: the ClusterQueue has a
    cohort (the Cohort a parent); without, borrowing and lending limits are refused."""
    path = "spec.resourceGroups"
    groups = E.items(ctx, raw, path, most=MAX_RESOURCE_GROUPS)
    parsed: list[tuple[str, list[str], list[tuple[str, dict]]]] = []
    for i, g in enumerate(groups):
        gp = f"{path}[{i}]"
        g = ctx.map(g, gp, required=True)
        if g.get("coveredResources") is None:
            raise E.required(ctx, gp + ".coveredResources")
        covered = [
            ctx.str(r, f"{gp}.coveredResources[{j}]")
            for j, r in enumerate(
                E.items(ctx, g.get("coveredResources"), gp + ".coveredResources", least=1, most=64)
            )
        ]
        if g.get("flavors") is None:
            raise E.required(ctx, gp + ".flavors")
        flavors = [
            (f"{gp}.flavors[{j}]", ctx.map(fq, f"{gp}.flavors[{j}]", required=True))
            for j, fq in enumerate(
                E.items(ctx, g.get("flavors"), gp + ".flavors", least=1, most=MAX_FLAVORS)
            )
        ]
        for fp, fq in flavors:
            if fq.get("name") is None:
                raise E.required(ctx, fp + ".name")
            if fq.get("resources") is None:
                raise E.required(ctx, fp + ".resources")
            E.items(ctx, fq.get("resources"), fp + ".resources", least=1, most=MAX_RESOURCES)
            names = [
                ctx.str(ctx.map(r, f"{fp}.resources[{k}]").get("name"), f"{fp}.resources[{k}].name")
                for k, r in enumerate(fq["resources"])
            ]
            dup = next((n for k, n in enumerate(names) if n in names[:k]), None)
            if dup is not None:  # listType=map, listMapKey=name
                raise E.duplicate(
                    ctx, f"{fp}.resources[{names.index(dup, names.index(dup) + 1)}]", {"name": dup}
                )
        # CEL on ClusterQueueSpec: no borrowingLimit without a cohort.
        if (
            not has_parent
            and not is_cohort
            and any(
                isinstance(r, dict) and r.get("borrowingLimit") is not None
                for _, fq in flavors
                for r in fq["resources"]
            )
        ):
            raise E.rule(ctx, "spec", "borrowingLimit must be nil when cohort is empty")
        # CEL on ResourceGroup: every flavor lists as many resources as coveredResources.
        if any(len(fq["resources"]) != len(covered) for _, fq in flavors):
            raise E.rule(
                ctx, gp, "flavors must have the same number of resources as the coveredResources"
            )
        parsed.append((gp, covered, flavors))
    # The webhook (validateClusterQueueSpec / validateCohort), in its order.
    seen_resources: set[str] = set()
    seen_flavors: set[str] = set()
    out: list[ResourceGroup] = []
    for gp, covered, flavors in parsed:
        for j, name in enumerate(covered):
            p = f"{gp}.coveredResources[{j}]"
            problem = _label_key_problem(name)
            if problem:
                raise E.invalid(ctx, p, name, problem)
            if name in seen_resources:
                raise E.duplicate(ctx, p, name)
            seen_resources.add(name)
        fqs: list[FlavorQuotas] = []
        for fp, fq in flavors:
            fname = ctx.str(fq.get("name"), fp + ".name", required=True)
            quotas: list[ResourceQuota] = []
            for k, r in enumerate(fq["resources"]):
                rp = f"{fp}.resources[{k}]"
                rname = ctx.str(r.get("name"), rp + ".name")
                if rname != covered[k]:
                    raise E.invalid(
                        ctx, rp + ".name", rname, "must match the name in coveredResources"
                    )
                nominal = quantity(ctx, r.get("nominalQuota"), rp + ".nominalQuota", rname)
                borrowing = lending = None
                if r.get("borrowingLimit") is not None:
                    borrowing = _limit(
                        ctx,
                        r["borrowingLimit"],
                        rp + ".borrowingLimit",
                        rname,
                        has_parent,
                        is_cohort,
                    )
                if r.get("lendingLimit") is not None:
                    lp = rp + ".lendingLimit"
                    lending = quantity(ctx, r["lendingLimit"], lp, rname)
                    if not has_parent:
                        raise E.invalid(
                            ctx,
                            lp,
                            str(r["lendingLimit"]),
                            f"must be nil when {'parent' if is_cohort else 'cohort'} is empty",
                        )
                    if not is_cohort and lending > nominal:
                        raise E.invalid(
                            ctx,
                            lp,
                            str(r["lendingLimit"]),
                            "must be less than or equal to the nominalQuota",
                        )
                quotas.append(
                    ResourceQuota(
                        name=rname,
                        nominal=nominal,
                        borrowing_limit=borrowing,
                        lending_limit=lending,
                    )
                )
            if fname in seen_flavors:
                raise E.duplicate(ctx, fp + ".name", fname)
            seen_flavors.add(fname)
            fqs.append(FlavorQuotas(name=fname, resources=tuple(quotas)))
        out.append(ResourceGroup(covered_resources=tuple(covered), flavors=tuple(fqs)))
    total_flavors = sum(len(g.flavors) for g in out)
    if total_flavors > MAX_TOTAL:
        raise E.invalid(
            ctx,
            path,
            total_flavors,
            f"total number of flavors across all resourceGroups must be ≤ 256, got {total_flavors}",
        )
    total_covered = sum(len(g.covered_resources) for g in out)
    if total_covered > MAX_TOTAL:
        raise E.invalid(
            ctx,
            path,
            total_covered,
            f"total number of covered resources across all resourceGroups must be ≤ 256, got {total_covered}",
        )
    for i, g in enumerate(out):
        combos = sum(len(f.resources) for f in g.flavors)
        if combos > 512:
            raise E.invalid(
                ctx,
                f"{path}[{i}]",
                combos,
                f"number of flavor-resource combinations in a resourceGroup must be ≤ 512, got {combos}",
            )
    return tuple(out)


def _limit(ctx: Ctx, raw: Any, path: str, resource: str, has_parent: bool, is_cohort: bool) -> int:
    if not has_parent:
        if not is_cohort:  # the CEL rule on ClusterQueueSpec is checked before the webhook
            raise E.rule(ctx, "spec", "borrowingLimit must be nil when cohort is empty")
        raise E.invalid(ctx, path, str(raw), "must be nil when parent is empty")
    return quantity(ctx, raw, path, resource)


# ---- ClusterQueue ----------------------------------------------------------------------------
def parse_cluster_queue(ctx: Ctx, raw: dict, note: Any) -> ClusterQueue:
    """A ClusterQueue of either version, defaults applied (see the module docstring). ``note(field,
    message)`` records what is read and not used."""
    _, name, _ = metadata(ctx, raw, namespaced=False)
    v1beta1 = version_of(raw) == "v1beta1"
    spec = ctx.map(raw.get("spec"), "spec")
    cohort_field = "spec.cohort" if v1beta1 else "spec.cohortName"
    cohort = ctx.str(spec.get(cohort_field.split(".")[1]), cohort_field) or None
    groups = resource_groups(
        ctx, spec.get("resourceGroups"), has_parent=cohort is not None, is_cohort=False
    )
    strategy = E.enum(
        ctx,
        spec.get("queueingStrategy"),
        "spec.queueingStrategy",
        ("StrictFIFO", "BestEffortFIFO"),
        "BestEffortFIFO",
    )
    selector = parse_label_selector(ctx, spec.get("namespaceSelector"), "spec.namespaceSelector")
    fungibility = _fungibility(ctx, spec.get("flavorFungibility"), v1beta1)
    preemption = _preemption(ctx, spec.get("preemption"))
    stop = E.enum(ctx, spec.get("stopPolicy"), "spec.stopPolicy", _STOP, "None")
    checks: list[str] = []
    if v1beta1 and spec.get("admissionChecks") is not None:
        checks += [
            ctx.str(c, f"spec.admissionChecks[{i}]", required=True)
            for i, c in enumerate(ctx.list(spec.get("admissionChecks"), "spec.admissionChecks"))
        ]
        note(
            "spec.admissionChecks",
            "admission checks are not modelled: gangplan admits on quota alone",
        )
    strategy_raw = ctx.map(spec.get("admissionChecksStrategy"), "spec.admissionChecksStrategy")
    if spec.get("admissionChecksStrategy") is not None:
        flavors = {f.name for g in groups for f in g.flavors}
        rules = E.items(
            ctx,
            strategy_raw.get("admissionChecks"),
            "spec.admissionChecksStrategy.admissionChecks",
            least=1,
            most=64,
        )
        for i, r in enumerate(rules):
            rp = f"spec.admissionChecksStrategy.admissionChecks[{i}]"
            r = ctx.map(r, rp, required=True)
            checks.append(ctx.str(r.get("name"), rp + ".name", required=True))
            for j, fl in enumerate(ctx.str_list(r.get("onFlavors"), rp + ".onFlavors")):
                if fl not in flavors:
                    raise E.unsupported(ctx, f"{rp}.onFlavors[{j}]", fl, tuple(sorted(flavors)))
        note(
            "spec.admissionChecksStrategy",
            "admission checks are not modelled: gangplan admits on quota alone",
        )
    if preemption.enabled:
        note(
            "spec.preemption",
            "Kueue's preemption is not modelled: a Workload that needs it stays pending with "
            "Kueue's message (kube-scheduler's own preemption still runs)",
        )
    for fld, why in (
        ("fairSharing", "fair sharing is not modelled: gangplan admits by Kueue's classical order"),
        ("admissionScope", "admission fair sharing is not modelled"),
        ("concurrentAdmissionPolicy", "concurrent admission (flavor migration) is not modelled"),
    ):
        if spec.get(fld) is not None:
            note(f"spec.{fld}", why)
    return ClusterQueue(
        name=name,
        cohort=cohort,
        resource_groups=groups,
        queueing_strategy=strategy,
        namespace_selector=selector,
        flavor_fungibility=fungibility,
        preemption=preemption,
        admission_checks=tuple(checks),
        stop_policy=stop,
        api_version=str(raw.get("apiVersion")),
        source=ctx.file,
    )


def _fungibility(ctx: Ctx, raw: Any, v1beta1: bool) -> FlavorFungibility:
    path = "spec.flavorFungibility"
    m = ctx.map(raw, path)
    borrow_allowed = (
        ("MayStopSearch", "TryNextFlavor", "Borrow")
        if v1beta1
        else ("MayStopSearch", "TryNextFlavor")
    )
    preempt_allowed = (
        ("MayStopSearch", "TryNextFlavor", "Preempt")
        if v1beta1
        else ("MayStopSearch", "TryNextFlavor")
    )
    borrow = E.enum(
        ctx, m.get("whenCanBorrow"), path + ".whenCanBorrow", borrow_allowed, "MayStopSearch"
    )
    preempt = E.enum(
        ctx, m.get("whenCanPreempt"), path + ".whenCanPreempt", preempt_allowed, "TryNextFlavor"
    )
    preference = m.get("preference")
    if preference is not None:
        preference = E.enum(
            ctx,
            preference,
            path + ".preference",
            ("BorrowingOverPreemption", "PreemptionOverBorrowing"),
            "",
        )
        if borrow != "TryNextFlavor" or preempt != "TryNextFlavor":  # CEL on FlavorFungibility
            raise E.rule(
                ctx,
                path,
                "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor",
            )
    # clusterqueue_conversion.go: Borrow -> MayStopSearch, Preempt -> MayStopSearch.
    return FlavorFungibility(
        when_can_borrow="MayStopSearch" if borrow == "Borrow" else borrow,
        when_can_preempt="MayStopSearch" if preempt == "Preempt" else preempt,
        preference=preference,
    )


def _preemption(ctx: Ctx, raw: Any) -> KueuePreemption:
    path = "spec.preemption"
    m = ctx.map(raw, path)
    reclaim = E.enum(
        ctx, m.get("reclaimWithinCohort"), path + ".reclaimWithinCohort", _PREEMPT_COHORT, "Never"
    )
    within = E.enum(
        ctx, m.get("withinClusterQueue"), path + ".withinClusterQueue", _PREEMPT_CQ, "Never"
    )
    bwc = ctx.map(m.get("borrowWithinCohort"), path + ".borrowWithinCohort")
    policy = E.enum(
        ctx,
        bwc.get("policy"),
        path + ".borrowWithinCohort.policy",
        ("Never", "LowerPriority"),
        "Never",
    )
    threshold = bwc.get("maxPriorityThreshold")
    if threshold is not None:
        threshold = ctx.int32(threshold, path + ".borrowWithinCohort.maxPriorityThreshold")
    if reclaim == "Never" and policy != "Never":  # CEL on ClusterQueuePreemption
        raise E.rule(ctx, path, "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never")
    return KueuePreemption(
        reclaim_within_cohort=reclaim,
        within_cluster_queue=within,
        borrow_within_cohort=BorrowWithinCohort(policy=policy, max_priority_threshold=threshold),
    )


# ---- Cohort, LocalQueue, WorkloadPriorityClass -----------------------------------------------
def parse_cohort(ctx: Ctx, raw: dict, note: Any) -> Cohort:
    """A Cohort object: ``spec.parentName`` in both v1beta1 and v1beta2 (``spec.parent`` was the
    v1alpha1 name, Kueue v0.11-v0.12, a version gangplan does not read)."""
    _, name, _ = metadata(ctx, raw, namespaced=False)
    spec = ctx.map(raw.get("spec"), "spec")
    parent = ctx.str(spec.get("parentName"), "spec.parentName") or None
    if spec.get("fairSharing") is not None:
        note(
            "spec.fairSharing",
            "fair sharing is not modelled: gangplan admits by Kueue's classical order",
        )
    groups = resource_groups(
        ctx, spec.get("resourceGroups"), has_parent=parent is not None, is_cohort=True
    )
    return Cohort(name=name, parent=parent, resource_groups=groups, source=ctx.file)


def parse_local_queue(ctx: Ctx, raw: dict, note: Any) -> LocalQueue:
    ns, name, _ = metadata(ctx, raw, namespaced=True)
    spec = ctx.map(raw.get("spec"), "spec")
    cq = ctx.str(spec.get("clusterQueue"), "spec.clusterQueue")
    stop = E.enum(ctx, spec.get("stopPolicy"), "spec.stopPolicy", _STOP, "None")
    if spec.get("fairSharing") is not None:
        note("spec.fairSharing", "admission fair sharing is not modelled")
    return LocalQueue(namespace=ns, name=name, cluster_queue=cq, stop_policy=stop, source=ctx.file)


def parse_workload_priority_class(ctx: Ctx, raw: dict) -> tuple[str, int]:
    """``WorkloadPriorityClass.value`` (int32, required)."""
    _, name, _ = metadata(ctx, raw, namespaced=False)
    if raw.get("value") is None:
        raise E.required(ctx, "value")
    return name, ctx.int32(raw.get("value"), "value")


__all__ = [
    "GROUP",
    "KINDS",
    "UNUSED_KINDS",
    "VERSIONS",
    "claims",
    "parse_cluster_queue",
    "parse_cohort",
    "parse_local_queue",
    "parse_resource_flavor",
    "parse_workload_priority_class",
    "quantity",
    "ref",
    "resource_groups",
]
