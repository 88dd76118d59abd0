"""Issue 41, items 1 and 2: pod-level ``spec.resources`` (KEP-2837) defaulted, validated and applied
as the API server and kube-scheduler do, per release (gangplan/io/validation_pod_resources.py,
gangplan/io/validation_versions.py)."""

from __future__ import annotations

import pytest

from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_objects
from gangplan.io.validation_versions import DIFFERENCES, current, validating_for
from gangplan.models.version import NEWEST


def _pod(resources: dict | None, *containers: dict, init: list[dict] | None = None) -> dict:
    spec: dict = {
        "containers": [
            {"name": f"c{i}", "image": "x", "resources": r} for i, r in enumerate(containers)
        ]
    }
    if resources is not None:
        spec["resources"] = resources
    if init:
        spec["initContainers"] = init
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml"},
        "spec": spec,
    }


def load(pod: dict, version: str | None = None):
    """Through the loader, which validates for the cluster's release (``kube_version``)."""
    return load_objects([pod], kube_version=version).pods[0]


def refused(pod: dict, version: str | None = None) -> SnapshotError:
    with pytest.raises(SnapshotError) as info:
        load_objects([pod], kube_version=version)
    assert (
        info.value.obj == "Pod/ml/p" and "the API server refuses such a pod" in info.value.message
    )
    return info.value


def test_pod_level_requests_replace_the_containers_for_the_resources_they_set():
    p = load(
        _pod(
            {"requests": {"cpu": "4", "memory": "8Gi"}},
            {"requests": {"cpu": "1", "nvidia.com/gpu": "2"}, "limits": {"nvidia.com/gpu": "2"}},
        )
    )
    assert (
        p.requests["cpu"] == 4000
        and p.requests["memory"] == 8 * 2**30
        and p.requests["nvidia.com/gpu"] == 2
    )
    assert p.nonzero_requests["cpu"] == 4000


def test_pod_level_limits_alone_default_the_requests():
    # defaultPodRequests: no container requests cpu, so the pod-level request is the pod-level limit.
    assert load(_pod({"limits": {"cpu": "4", "memory": "1Gi"}}, {})).requests["cpu"] == 4000


def test_pod_level_hugepages_are_requested_at_pod_level():
    p = load(
        _pod(
            {
                "requests": {"memory": "1Gi", "hugepages-2Mi": "4Mi"},
                "limits": {"memory": "1Gi", "hugepages-2Mi": "4Mi"},
            },
            {},
        )
    )
    assert p.requests["hugepages-2Mi"] == 4 * 2**20


@pytest.mark.parametrize(
    ("resources", "field", "rule"),
    [
        (
            {"limits": {"nvidia.com/gpu": "1"}},
            "spec.resources.limits[nvidia.com/gpu]",
            'supported values: "cpu", "hugepages-", "memory"',
        ),
        (
            {"requests": {"ephemeral-storage": "1Gi"}},
            "spec.resources.requests[ephemeral-storage]",
            "Unsupported value",
        ),
        (
            {"requests": {"cpu": "4"}, "limits": {"cpu": "2"}},
            "spec.resources.requests[cpu]",
            "must be less than or equal to cpu limit of 2",
        ),
        (
            {"requests": {"hugepages-2Mi": "2Mi"}, "limits": {"hugepages-2Mi": "2Mi"}},
            "spec.resources",
            "HugePages require cpu or memory",
        ),
        (
            {"claims": [{"name": "gpu"}]},
            "spec.resources.claims",
            "claims cannot be set for Resources at pod-level",
        ),
        (
            {"requests": {"cpu": "-1"}},
            "spec.resources.requests[cpu]",
            "must be greater than or equal to 0",
        ),
    ],
)
def test_pod_level_resources_the_api_server_refuses(resources, field, rule):
    e = refused(_pod(resources, {}))
    assert e.field == field and rule in e.message


def test_pod_level_request_below_the_containers_aggregate_is_refused():
    e = refused(_pod({"requests": {"cpu": "500m"}}, {"requests": {"cpu": "1"}}))
    assert (
        e.field == "spec.resources.requests[cpu]"
        and "must be greater than or equal to aggregate container requests of 1" in e.message
    )


def test_a_container_resource_pod_level_does_not_support_is_not_compared():
    # kubernetes#132449 / #132551: an ephemeral-storage or GPU container request beside pod-level cpu is valid.
    p = load(_pod({"requests": {"cpu": "300m"}}, {"requests": {"ephemeral-storage": "10Mi"}}))
    assert p.requests["cpu"] == 300


def test_a_container_limit_above_the_pod_limit_is_refused_at_upstreams_path():
    e = refused(
        _pod(
            {"requests": {"cpu": "3"}, "limits": {"cpu": "3"}},
            {"limits": {"cpu": "4"}, "requests": {"cpu": "1"}},
        )
    )
    assert (
        e.field == "spec.resources.containers[0][cpu].limits"
        and "must be less than or equal to pod limits of 3" in e.message
    )


def test_defaulted_pod_limits_refuse_a_larger_request_from_v1_37_only():
    pod = _pod({"requests": {"cpu": "4"}}, {"limits": {"cpu": "1"}}, {"limits": {"cpu": "1"}})
    for v in ("1.35", "1.36"):
        assert load(pod, v).requests["cpu"] == 4000
    e = refused(pod, "1.37")
    assert (
        e.field == "spec.resources.requests[cpu]"
        and "cpu limit of 2" in e.message
        and "defaulting of spec.resources.limits[cpu]" in e.message
    )


def test_pod_limits_are_not_defaulted_when_a_container_has_no_limit():
    pod = _pod({"requests": {"cpu": "4"}}, {"limits": {"cpu": "1"}}, {"requests": {"cpu": "1"}})
    assert load(pod, "1.37").requests["cpu"] == 4000


def test_the_release_defaults_to_the_newest_and_every_difference_names_upstream():
    assert current() == NEWEST
    with validating_for("1.35"):
        assert current().value == "1.35"
    assert current() == NEWEST
    assert DIFFERENCES and all(d.upstream and d.per_version for d in DIFFERENCES)
