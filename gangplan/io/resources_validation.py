"""Container resource requirements checked as the API server checks them at pod creation.

A pod the API server would refuse is bad input (:class:`SnapshotError`, exit 2), not a pod that
waits: an ``nvidia.com/gpu: 8Gi`` request beside a limit of ``"8"`` is refused (not read as 8 Gi
GPUs that never fit), and so is ``"7.5"`` GPUs (not rounded up to 8). docs/validation.md, "Checks
the API server makes", lists every rule with an example.

Re-stated (not copied) from kubernetes/kubernetes ``pkg/apis/core/validation/validation.go`` and
``pkg/apis/core/helper/helpers.go`` as stored at commit
``000f26050b9be6fb3d79fae95e06b47fc96128cd`` (master in the v1.35/v1.36 cycle; the same rules hold
on release-1.35, whose only difference here is wording):

* ``validateResourceRequirements`` (reached through ``ValidateContainerResourceRequirements`` for
  containers and init containers, and through ``validateOverhead`` for ``spec.overhead``, which
  validates the overhead as limits): every name passes ``validateContainerResourceName``, every
  quantity ``ValidateResourceQuantityValue``; for each request, if the limit of the same name is
  set, a resource that may not be overcommitted needs request == limit ("must be equal to R limit
  of L") and any other resource request <= limit ("must be less than or equal to R limit of L");
  without that limit, a resource that may not be overcommitted is refused ("Limit must be set for
  non overcommitable resources"); hugepages must be a whole multiple of their page size
  (``validateResourceQuantityHugePageValue``: pod creation never allows indivisible values) and
  need cpu or memory among the same requirements ("HugePages require cpu or memory").
* ``ValidateResourceQuantityValue``: non-negative, and a whole number for an integer resource
  (``IsIntegerResourceName``: an extended resource, or a quota count such as ``pods``), tested as
  upstream does: ``MilliValue() % 1000 == 0`` (milli-units rounded up, so ``1.9999`` passes as 2).
* ``validateContainerResourceName`` / ``validateResourceName``: a qualified name; without a
  ``/`` one of cpu, memory, ephemeral-storage, ``hugepages-<size>``; with one, a native name (in
  ``kubernetes.io/``) or an extended resource name (``IsExtendedResourceName``: not native, not
  ``requests.``-prefixed, and ``requests.<name>`` still a qualified name).
* ``IsOvercommitAllowed``: native and not hugepages. Extended resources and hugepages are not.

The requests and limits checked are the ones the user wrote, after the defaulting the API server
applies first (a limit without a request sets the request: ``SetDefaults_Pod``), so a limit alone
is always valid. ``validateBasicResource`` (``Value() >= 0``) is applied by upstream to
PersistentVolume capacity only; pods get the stricter ``ValidateResourceQuantityValue`` above.
Pod-level ``spec.resources`` (``validatePodResourceRequirements``, the same rules with
``validatePodResourceName``) is checked by :mod:`gangplan.io.validation_pod_resources` through
:func:`check_requirements`.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

from gangplan.io.fields import Ctx
from gangplan.models.quantity import QuantityError, parse_quantity

# k8s.io/apimachinery/pkg/util/validation IsQualifiedName: [prefix/]name, the name part at most
# 63 characters of [A-Za-z0-9] with - _ . inside; the prefix a DNS-1123 subdomain (<= 253).
_NAME_PART = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")

STANDARD_CONTAINER = ("cpu", "memory", "ephemeral-storage")
# helper.IsStandardResourceName (names allowed without a prefix at all, before the container check).
_STANDARD = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_INTEGER_COUNTS = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
HUGEPAGES = "hugepages-"


def is_qualified_name(value: str) -> bool:
    prefix, sep, name = value.rpartition("/")
    if sep and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix)):
        return False
    return 0 < len(name) <= 63 and _NAME_PART.fullmatch(name) is not None


def is_native(name: str) -> bool:
    """``IsNativeResource``: no prefix, or a prefix in ``kubernetes.io/``."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended(name: str) -> bool:
    """``IsExtendedResourceName``: ``nvidia.com/gpu`` yes; ``cpu``, ``example.kubernetes.io/x``,
    ``requests.nvidia.com/gpu`` no."""
    if is_native(name) or name.startswith("requests."):
        return False
    return is_qualified_name("requests." + name)


def overcommit_allowed(name: str) -> bool:
    """``IsOvercommitAllowed``: native and not hugepages."""
    return is_native(name) and not name.startswith(HUGEPAGES)


def is_integer_resource(name: str) -> bool:
    return name in _INTEGER_COUNTS or is_extended(name)


def standard_name_problem(name: str) -> str | None:
    """Why ``validateResourceName`` (the check every resource list shares) refuses ``name``, or None."""
    if not is_qualified_name(name):
        return (
            "must be a qualified name: an optional DNS subdomain prefix and '/', then at most 63 characters "
            "of letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
        )
    if "/" not in name and name not in _STANDARD and not name.startswith(HUGEPAGES):
        return "must be a standard resource type or fully qualified (cpu, memory, ephemeral-storage, hugepages-<size>, or a domain-prefixed name such as nvidia.com/gpu)"
    return None


def resource_name_problem(name: str) -> str | None:
    """Why ``validateContainerResourceName`` refuses ``name``, or None."""
    problem = standard_name_problem(name)
    if problem:
        return problem
    if "/" not in name:
        if name not in STANDARD_CONTAINER and not name.startswith(HUGEPAGES):
            return "must be a standard resource for containers (cpu, memory, ephemeral-storage, hugepages-<size>)"
        return None
    if not is_native(name) and not is_extended(name):
        return "doesn't follow extended resource name standard"
    return None


def _milli_ceil(q: Fraction) -> int:
    return math.ceil(q * 1000)


def _shown(v: Any) -> str:
    return repr(v) if isinstance(v, str) else str(v)


def _page_size(name: str) -> Fraction | None:
    try:
        size = parse_quantity(name[len(HUGEPAGES) :])
    except QuantityError:
        return None
    if size <= 0 or _milli_ceil(size) % 1000 != 0:
        return None
    return size


def quantity_problem(name: str, q: Fraction, raw: Any) -> str | None:
    """``ValidateResourceQuantityValue`` and, for hugepages, ``validateResourceQuantityHugePageValue``."""
    if q < 0:
        return f"Invalid value {_shown(raw)}: must be greater than or equal to 0"
    if is_integer_resource(name) and _milli_ceil(q) % 1000 != 0:
        return f"Invalid value {_shown(raw)}: must be an integer ({name} is an extended resource, counted in whole units)"
    if name.startswith(HUGEPAGES):
        size = _page_size(name)
        if size is None or math.ceil(q) % math.ceil(size) != 0:
            return f"Invalid value {_shown(raw)}: {raw} is not positive integer multiple of {name}"
    return None


def _quantities(ctx: Ctx, raw: Any, field: str) -> dict[str, tuple[Fraction, Any]]:
    out: dict[str, tuple[Fraction, Any]] = {}
    for name, v in ctx.map(raw, field).items():
        name = ctx.str(name, field)
        try:
            out[name] = (parse_quantity(v), v)
        except QuantityError as e:  # ctx.resources names it first; here only for safety
            raise ctx.fail(f"{field}.{name}", str(e)) from None
    return out


REFUSED = "the API server refuses such a pod"


def _check_one(ctx, where: str, name: str, q, raw, name_problem=None) -> None:
    """One limit or request: its resource name, then its quantity, as the API server checks them."""
    problem = (name_problem or resource_name_problem)(name)
    if problem:
        raise ctx.fail(where, f"Invalid value {name!r}: {problem} ({REFUSED})")
    problem = quantity_problem(name, q, raw)
    if problem:
        raise ctx.fail(where, f"{problem} ({REFUSED})")


def check_entries(ctx: Ctx, resources: Any, field: str, *, name_problem=None) -> None:
    """The per-entry rules of :func:`check_requirements` alone (each name, each quantity), for a
    list checked again after defaulting: they hold before and after it."""
    res = ctx.map(resources, field)
    for part in ("limits", "requests"):
        values = _quantities(ctx, res.get(part), f"{field}.{part}")
        for name in sorted(values):
            _check_one(ctx, f"{field}.{part}[{name}]", name, *values[name], name_problem)


def check_requirements(
    ctx: Ctx, resources: Any, field: str, *, overhead: bool = False, name_problem=None
) -> None:
    """Raise :class:`SnapshotError` for the first rule of ``validateResourceRequirements`` that
    ``resources`` (a container's ``resources``, or ``spec.overhead`` when ``overhead``) breaks.
    ``name_problem``: the resource-name check (default ``validateContainerResourceName``; the
    pod-level ``spec.resources`` passes ``validatePodResourceName``,
    :mod:`gangplan.io.validation_pod_resources`).

    Field paths name the key (``<field>.requests[nvidia.com/gpu]``, ``<field>.limits[...]``,
    ``spec.overhead[...]``). Upstream names the same key for a bad name or quantity; for a request
    above its limit it names the map (``<field>.requests``) and for a missing limit ``<field>.limits``:
    gangplan's path is that field with the key added (tests/fixtures/upstream_validation/README.md)."""
    if overhead:
        limits, requests = _quantities(ctx, resources, field), {}
        lim_path, req_path = field, field
    else:
        res = ctx.map(resources, field)
        limits = _quantities(ctx, res.get("limits"), field + ".limits")
        requests = _quantities(ctx, res.get("requests"), field + ".requests")
        lim_path, req_path = field + ".limits", field + ".requests"
    for name in sorted(limits):
        _check_one(ctx, f"{lim_path}[{name}]", name, *limits[name], name_problem)
    for name in sorted(requests):
        q, raw = requests[name]
        where = f"{req_path}[{name}]"
        _check_one(ctx, where, name, q, raw, name_problem)
        if name in limits:
            lq, lraw = limits[name]
            if q != lq and not overcommit_allowed(name):
                raise ctx.fail(
                    where,
                    f"Invalid value {_shown(raw)}: must be equal to {name} limit of {lraw} "
                    f"({name} may not be overcommitted: request and limit must be equal; {REFUSED})",
                )
            if q > lq:
                raise ctx.fail(
                    where,
                    f"Invalid value {_shown(raw)}: must be less than or equal to {name} limit of {lraw} ({REFUSED})",
                )
        elif not overcommit_allowed(name):
            raise ctx.fail(
                f"{lim_path}[{name}]",
                f"Required value: Limit must be set for non overcommitable resources "
                f"({name} is requested ({_shown(raw)}) without a limit; set the limit, the request defaults to it; {REFUSED})",
            )
    names = set(limits) | set(requests)
    if any(n.startswith(HUGEPAGES) for n in names) and not names & {"cpu", "memory"}:
        raise ctx.fail(field, f"Forbidden: HugePages require cpu or memory ({REFUSED})")


__all__ = [
    "check_entries",
    "check_requirements",
    "is_extended",
    "is_qualified_name",
    "overcommit_allowed",
    "resource_name_problem",
    "quantity_problem",
    "standard_name_problem",
]
