"""Pod-level ``spec.resources`` (KEP-2837, PodLevelResources: beta and on by default since v1.34)
defaulted, checked and applied as the API server and kube-scheduler do.

Re-stated (not copied) from kubernetes/kubernetes:

* ``pkg/apis/core/v1/defaults.go`` ``SetDefaults_Pod`` @023f88a3: after a container's limits
  default its requests, ``defaultHugePagePodLimits`` (when ``spec.resources`` sets anything, a
  ``hugepages-<size>`` the containers limit and the pod neither requests nor limits gets the
  containers' aggregate limit), ``defaultPodRequests`` (when pod-level limits are set: a missing
  cpu / memory request becomes the containers' aggregate request, then any supported limit still
  without a request becomes the request) and, from v1.37, ``defaultPodLimits``
  (:func:`gangplan.io.validation_versions.pod_limits_defaulted`).
* ``pkg/apis/core/validation/validation.go`` @000f2605 ``validatePodResources``: ``claims`` is
  forbidden ("claims cannot be set for Resources at pod-level"); ``validatePodResourceRequirements``
  is ``validateResourceRequirements`` (:func:`gangplan.io.resources_validation.check_requirements`)
  with ``validatePodResourceName``: ``validateResourceName`` then
  ``IsSupportedPodLevelResource`` (cpu, memory, ``hugepages-<size>``), else "Unsupported value";
  ``validatePodResourceConsistency``: for each resource the containers request (the aggregate of
  ``AggregateContainerRequests``: containers summed, sidecars added, the max with each init
  container) the pod-level request must be at least that ("must be greater than or equal to
  aggregate container requests of ..."), skipping resources pod level does not support (kubernetes
  #132551, v1.34: a container's ``nvidia.com/gpu`` beside a pod-level cpu is valid); and each
  regular container's limit must be at most the pod-level limit of that resource ("must be less
  than or equal to pod limits of ..."), at upstream's path
  ``spec.resources.containers[i][<resource>].limits``.
* ``staging/src/k8s.io/component-helpers/resource/helpers.go`` @0085214e ``PodRequests``: when a
  supported resource is requested at pod level (after defaulting), that request replaces the
  containers' aggregate for it (``applyPodLevelResources``); overhead is added afterwards. The
  scheduler's non-zero requests (``NonMissingContainerRequests``) are replaced the same way.
"""

from __future__ import annotations

from gangplan.io.errors import SnapshotError
from gangplan.io.fields import Ctx
from gangplan.io.resources_validation import (
    HUGEPAGES,
    REFUSED,
    check_entries,
    check_requirements,
    overcommit_allowed,
    standard_name_problem,
)
from gangplan.io.validation_versions import current, pod_limits_defaulted
from gangplan.models.quantity import add_resources, format_quantity, max_resources

SUPPORTED = ("cpu", "hugepages-", "memory")
"""``SupportedPodLevelResources()`` as the "Unsupported value" error lists them."""


def is_supported(name: str) -> bool:
    """``IsSupportedPodLevelResource``: cpu, memory or ``hugepages-<size>``."""
    return name in ("cpu", "memory") or name.startswith(HUGEPAGES)


def pod_resource_name_problem(name: str) -> str | None:
    """Why ``validatePodResourceName`` refuses ``name``, or None."""
    problem = standard_name_problem(name)
    if problem:
        return problem
    if not is_supported(name):
        listed = ", ".join(f'"{s}"' for s in SUPPORTED)
        return f"Unsupported value: supported values: {listed} (pod-level spec.resources takes cpu, memory and hugepages-<size> only)"
    return None


def _container_limits(ctx: Ctx, spec: dict) -> tuple[list[dict[str, int]], dict[str, int], bool]:
    """Each regular container's limits, the aggregate limits (``AggregateContainerLimits``: the
    sidecar formula, as for requests) and whether there is any container at all."""
    regular: list[dict[str, int]] = []
    total: dict[str, int] = {}
    for f, c in ctx.maps(spec.get("containers"), "spec.containers"):
        lim = ctx.resources(
            ctx.map(c.get("resources"), f + ".resources").get("limits"), f + ".resources.limits"
        )
        regular.append(lim)
        total = add_resources(total, lim)
    init_max: dict[str, int] = {}
    sidecars: dict[str, int] = {}
    inits: list[dict[str, int]] = []
    for f, c in ctx.maps(spec.get("initContainers"), "spec.initContainers"):
        lim = ctx.resources(
            ctx.map(c.get("resources"), f + ".resources").get("limits"), f + ".resources.limits"
        )
        inits.append(lim)
        if c.get("restartPolicy") == "Always":
            total, sidecars = add_resources(total, lim), add_resources(sidecars, lim)
            lim = dict(sidecars)
        else:
            lim = add_resources(lim, sidecars)
        init_max = max_resources(init_max, lim)
    return regular + inits, max_resources(total, init_max), bool(regular or inits)


def _shown(name: str, amount: int) -> str:
    return format_quantity(name, amount)


def pod_level_requests(ctx: Ctx, spec: dict, aggregate: dict[str, int]) -> dict[str, int]:
    """Default, validate and return the pod-level requests that replace ``aggregate`` (the
    containers' aggregate requests, container defaulting applied) for the resources they name;
    ``{}`` when the pod sets no pod-level requests. Raises :class:`SnapshotError` for the first
    rule the API server would refuse the pod for."""
    raw = spec.get("resources")
    if raw is None:
        return {}
    res = ctx.map(raw, "spec.resources")
    if res.get("claims") is not None:
        raise ctx.fail(
            "spec.resources.claims",
            f"Forbidden: claims cannot be set for Resources at pod-level ({REFUSED})",
        )
    check_entries(
        ctx, res, "spec.resources", name_problem=pod_resource_name_problem
    )  # upstream's paths before gangplan's own checks
    raw_req = dict(ctx.map(res.get("requests"), "spec.resources.requests"))
    raw_lim = dict(ctx.map(res.get("limits"), "spec.resources.limits"))
    req = ctx.resources(raw_req, "spec.resources.requests")
    lim = ctx.resources(raw_lim, "spec.resources.limits")
    per_container, agg_lim, _ = _container_limits(ctx, spec)
    defaulted: list[str] = []

    # defaultHugePagePodLimits
    if req or lim:
        for name, amount in agg_lim.items():
            if (
                is_supported(name)
                and name.startswith(HUGEPAGES)
                and name not in req
                and name not in lim
            ):
                lim[name] = amount
                raw_lim[name] = _shown(name, amount)
                defaulted.append(f"limits[{name}]")
    # defaultPodRequests
    if lim:
        for name, amount in aggregate.items():
            if name not in req and is_supported(name) and overcommit_allowed(name):
                req[name] = amount
                raw_req[name] = _shown(name, amount)
                defaulted.append(f"requests[{name}]")
        for name, amount in lim.items():
            if name not in req and is_supported(name):
                req[name] = amount
                raw_req[name] = raw_lim[name]
                defaulted.append(f"requests[{name}]")
    # defaultPodLimits (v1.37+)
    if (
        pod_limits_defaulted(current())
        and not any(is_supported(n) for n in lim)
        and any(is_supported(n) for n in req)
    ):
        for name, amount in agg_lim.items():
            if name in lim or not is_supported(name) or not overcommit_allowed(name):
                continue
            if per_container and all(name in c for c in per_container):
                lim[name] = amount
                raw_lim[name] = _shown(name, amount)
                defaulted.append(f"limits[{name}]")

    note = (
        f" (after the API server's defaulting of spec.resources.{', '.join(defaulted)})"
        if defaulted
        else ""
    )
    try:
        check_requirements(
            ctx,
            {"requests": raw_req, "limits": raw_lim},
            "spec.resources",
            name_problem=pod_resource_name_problem,
        )
    except SnapshotError as e:  # name the defaulting that produced the value
        e.message += note
        raise

    # validatePodResourceConsistency
    for name in sorted(aggregate):
        if not is_supported(name):
            continue
        have = req.get(name, 0)
        if aggregate[name] > have:
            raise ctx.fail(
                f"spec.resources.requests[{name}]",
                f'Invalid value: "{_shown(name, have)}": must be greater than or equal to aggregate container requests of '
                f"{_shown(name, aggregate[name])} (the containers' {name} requests add up to more than the pod-level request{note}; {REFUSED})",
            )
    for i, (f, c) in enumerate(ctx.maps(spec.get("containers"), "spec.containers")):
        climits = ctx.resources(
            ctx.map(c.get("resources"), f + ".resources").get("limits"), f + ".resources.limits"
        )
        for name in sorted(climits):
            if name in lim and climits[name] > lim[name]:
                raise ctx.fail(
                    f"spec.resources.containers[{i}][{name}].limits",
                    f'Invalid value: "{_shown(name, climits[name])}": must be less than or equal to pod limits of '
                    f"{_shown(name, lim[name])} ({f}.resources.limits[{name}] is above the pod-level limit{note}; {REFUSED})",
                )
    return {k: v for k, v in req.items() if is_supported(k)}


__all__ = ["SUPPORTED", "is_supported", "pod_level_requests", "pod_resource_name_problem"]
