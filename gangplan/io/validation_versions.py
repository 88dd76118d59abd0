"""Which release's API-server validation the loader applies, and the rules that differ by release.

Validation runs while each object is parsed (:mod:`gangplan.io.parse`), before the snapshot is
assembled, so the loader states the release it validates for around the parse loop with
:func:`validating_for`; without it the newest release's rules apply (:data:`NEWEST`, the default
run). Each rule that differs between the releases gangplan reproduces is one predicate below and
one row of :data:`DIFFERENCES` (docs/validation.md shows the table).

Checked for the objects gangplan reads (Pods' resources, PodGroup and Workload fields) against
kubernetes/kubernetes ``pkg/apis/core/validation/validation.go`` @000f2605,
``pkg/apis/core/v1/defaults.go`` @023f88a3, ``staging/src/k8s.io/component-helpers/resource/
helpers.go`` @0085214e, and the pull requests named per row.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from gangplan.models.version import NEWEST, Behaviour, KubeVersion

_VERSION: ContextVar[KubeVersion | None] = ContextVar("gangplan_validation_version", default=None)


@contextmanager
def validating_for(version: KubeVersion | str | None) -> Iterator[KubeVersion]:
    """Validate the objects parsed inside the block as kube-apiserver ``version`` would (None: the newest)."""
    v = KubeVersion(version) if version else NEWEST
    token = _VERSION.set(v)
    try:
        yield v
    finally:
        _VERSION.reset(token)


def current() -> KubeVersion:
    """The release the objects being parsed are validated for."""
    return _VERSION.get() or NEWEST


def pod_limits_defaulted(v: KubeVersion) -> bool:
    """``SetDefaults_Pod`` defaults pod-level cpu / memory limits from the containers' limits when the
    pod sets pod-level requests, no pod-level limit, and every container (init containers too) has
    a limit for the resource (``defaultPodLimits``, kubernetes#137616 for kubernetes#136120: in
    ``pkg/apis/core/v1/defaults.go`` @023f88a3, opened 2026-03-10 after the v1.36 code freeze, so
    v1.37 on). A pod-level request above that sum of limits is then refused
    ("must be less than or equal to cpu limit of ..."); v1.35 and v1.36 accept it."""
    return v.at_least(KubeVersion.V1_37)


Difference = Behaviour
"""A validation rule that differs by release: the record of the engines' versions table
(:class:`gangplan.models.version.Behaviour`: topic, what each release does, the upstream code)."""

DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        "pod-level `spec.resources.limits` defaulted from the containers' limits",
        {
            "1.35-1.36": "not defaulted: a pod-level request above the containers' summed limits is accepted",
            "1.37+": "defaulted (cpu, memory) when pod-level requests are set, no pod-level limit is, and every container has that limit; a pod-level request above it is refused",
        },
        "`pkg/apis/core/v1/defaults.go` `defaultPodLimits` (@023f88a3; kubernetes#137616, kubernetes#136120)",
    ),
)
"""Validation rules that differ between the releases gangplan reproduces. Rules checked and found
the same at v1.35, v1.36 and v1.37 (so not listed): container, init-container and overhead
``validateResourceRequirements``; pod-level names (cpu, memory, ``hugepages-<size>``), quantities,
request <= limit, hugepages need cpu or memory, no ``claims``; pod-level requests >= the containers'
aggregate requests for the resources pod level supports (kubernetes#132551, v1.34); container
limits <= pod-level limits; ``defaultPodRequests`` and ``defaultHugePagePodLimits``
(PodLevelResources beta and on by default since v1.34)."""


__all__ = ["DIFFERENCES", "Difference", "current", "pod_limits_defaulted", "validating_for"]
