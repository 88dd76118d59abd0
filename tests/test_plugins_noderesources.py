"""NodeResourcesFit scoring strategies and NodeResourcesBalancedAllocation, ported from upstream's
table tests with their expected numbers:

* ``pkg/scheduler/framework/plugins/noderesources/least_allocated_test.go`` @008b3652
  (TestLeastAllocatedScoringStrategy)
* ``.../noderesources/most_allocated_test.go`` @030880a5 (TestMostAllocatedScoringStrategy)
* ``.../noderesources/balanced_allocation_test.go`` @00fdb4ff (TestNodeResourcesBalancedAllocation),
  the v1.35 formula (run at ``--kube-version 1.35``), and the same file after kubernetes#135573
  (v1.36+, the change of balance), whose table gives the second expectation of each case
* ``.../noderesources/requested_to_capacity_ratio_test.go`` @8519d339

Upstream's ``st.MakeNode().Capacity({"cpu": "4000"})`` is 4000 cores; we write millicores (x1000),
which leaves every ratio, and so every score, unchanged. ``st.MakePod().Obj()`` has no containers,
so its non-zero request is 0 (``nonzero={}``).
"""

from __future__ import annotations

import numpy as np
import pytest

from gangplan.models.objects import SchedulerProfile, UtilizationShapePoint
from gangplan.solver.greedy.framework import Code
from gangplan.solver.greedy.plugins.noderesources.fit import TOO_MANY_PODS
from gangplan.solver.greedy.plugins.noderesources.requested_to_capacity_ratio import broken_linear
from gangplan.solver.greedy.testing import (
    filter_with,
    make_cluster,
    make_node,
    make_pod,
    score_with,
)

EXT = "example.com/foo"  # upstream's extendedRes
K = 1000  # cores -> millicores


def _req(cpu: int, memory: int, **extra: int) -> dict[str, int]:
    out = {"cpu": cpu * K, "memory": memory}
    out.update({k.replace("_", "/"): v for k, v in extra.items()})
    return out


def _fit_profile(strategy: str, resources: dict[str, int] | None = None) -> SchedulerProfile:
    return SchedulerProfile(
        fit_strategy=strategy, fit_resources=resources or {"cpu": 1, "memory": 1}
    )


def _scored(strategy, resources, nodes, pods, pod):
    cluster = make_cluster(nodes, pods, profile=_fit_profile(strategy, resources))
    return score_with("NodeResourcesFit", cluster, pod)


def _bound(node: str, cpu: int, memory: int):
    req = _req(cpu, memory)
    return make_pod(f"on-{node}-{cpu}-{memory}-{id(req)}", node=node, requests=req, nonzero=req)


LEAST = [
    (
        "nothing scheduled, resources requested, differently sized nodes",
        None,
        [
            make_node("node1", cpu=4000 * K, memory=10000),
            make_node("node2", cpu=6000 * K, memory=10000),
        ],
        [],
        make_pod("p", requests=_req(3000, 5000)),
        {"node1": 37, "node2": 50},
    ),
    (
        "no resources requested, pods scheduled with resources",
        None,
        [
            make_node("node1", cpu=10000 * K, memory=20000),
            make_node("node2", cpu=10000 * K, memory=20000),
        ],
        [
            _bound("node1", 3000, 0),
            _bound("node1", 3000, 0),
            _bound("node2", 3000, 0),
            _bound("node2", 3000, 5000),
        ],
        make_pod("p", nonzero={}),
        {"node1": 70, "node2": 57},
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        None,
        [
            make_node("node1", cpu=10000 * K, memory=20000),
            make_node("node2", cpu=10000 * K, memory=50000),
        ],
        [_bound("node1", 3000, 0), _bound("node2", 3000, 5000)],
        make_pod("p", requests=_req(3000, 5000)),
        {"node1": 57, "node2": 60},
    ),
    (
        "requested resources exceed node capacity",
        None,
        [
            make_node("node1", cpu=4000 * K, memory=10000),
            make_node("node2", cpu=4000 * K, memory=10000),
        ],
        [_bound("node1", 3000, 0), _bound("node2", 3000, 5000)],
        make_pod("p", requests=_req(3000, 0)),
        {"node1": 50, "node2": 25},
    ),
    (
        "zero node resources, pods scheduled with resources",
        None,
        [make_node("node1"), make_node("node2")],
        [_bound("node1", 3000, 0), _bound("node2", 3000, 5000)],
        make_pod("p", nonzero={}),
        {"node1": 0, "node2": 0},
    ),
    (
        "nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
        {"memory": 2, "cpu": 1},
        [
            make_node("node1", cpu=4000 * K, memory=10000),
            make_node("node2", cpu=6000 * K, memory=10000),
        ],
        [],
        make_pod("p", requests=_req(3000, 5000)),
        {"node1": 41, "node2": 50},
    ),
    (
        "bypass extended resource if the pod does not request",
        {"cpu": 1, "memory": 1, EXT: 1},
        [
            make_node("node1", cpu=6000 * K, memory=10000),
            make_node("node2", cpu=6000 * K, memory=10000, extra={EXT: 4}),
        ],
        [],
        make_pod("p", requests=_req(3000, 5000)),
        {"node1": 50, "node2": 50},
    ),
    (
        "honor extended resource if the pod requests",
        {"cpu": 1, "memory": 1, EXT: 1},
        [
            make_node("node1", cpu=6000 * K, memory=10000, extra={EXT: 4}),
            make_node("node2", cpu=6000 * K, memory=10000, extra={EXT: 10}),
        ],
        [],
        make_pod("p", requests={**_req(3000, 5000), EXT: 2}),
        {"node1": 50, "node2": 60},
    ),
    (
        "if the node doesn't have a resource",
        {EXT: 2, "cpu": 1, "memory": 1},
        [
            make_node("node1", cpu=6000 * K, memory=10000),
            make_node("node2", cpu=6000 * K, memory=10000, extra={EXT: 4}),
        ],
        [],
        make_pod("p", requests=_req(3000, 4000)),
        {"node1": 55, "node2": 55},
    ),
]


@pytest.mark.parametrize(
    ("name", "resources", "nodes", "pods", "pod", "want"), LEAST, ids=[c[0] for c in LEAST]
)
def test_least_allocated_scores_match_upstream(name, resources, nodes, pods, pod, want):
    assert _scored("LeastAllocated", resources, nodes, pods, pod) == want


MOST = [
    (
        "nothing scheduled, resources requested, differently sized nodes",
        None,
        [
            make_node("node1", cpu=4000 * K, memory=10000),
            make_node("node2", cpu=6000 * K, memory=10000),
        ],
        [],
        make_pod("p", requests=_req(3000, 5000)),
        {"node1": 62, "node2": 50},
    ),
    (
        "no resources requested, pods scheduled with resources",
        None,
        [
            make_node("node1", cpu=10000 * K, memory=20000),
            make_node("node2", cpu=10000 * K, memory=20000),
        ],
        [
            _bound("node1", 3000, 0),
            _bound("node1", 3000, 0),
            _bound("node2", 3000, 0),
            _bound("node2", 3000, 5000),
        ],
        make_pod("p", nonzero={}),
        {"node1": 30, "node2": 42},
    ),
    (
        "resources requested equal node capacity",
        None,
        [
            make_node("node1", cpu=5000 * K, memory=10000),
            make_node("node2", cpu=10000 * K, memory=9000),
        ],
        [],
        make_pod("p", requests=_req(5000, 9000)),
        {"node1": 95, "node2": 75},
    ),
    (
        "no resources requested, pods scheduled, nonzero request for resource",
        None,
        [
            make_node("node1", cpu=250, memory=1000 * 1024 * 1024),
            make_node("node2", cpu=250, memory=1000 * 1024 * 1024),
        ],
        [make_pod("e1", node="node1"), make_pod("e2", node="node1")],
        make_pod("p"),
        {"node1": 80, "node2": 30},
    ),
    (
        "honor extended resource if the pod request",
        {"cpu": 1, "memory": 1, EXT: 1},
        [
            make_node("node1", cpu=6000 * K, memory=10000, extra={EXT: 4}),
            make_node("node2", cpu=6000 * K, memory=10000, extra={EXT: 10}),
        ],
        [],
        make_pod("p", requests={**_req(3000, 5000), EXT: 2}),
        {"node1": 50, "node2": 40},
    ),
    (
        "if the node doesn't have a resource",
        {EXT: 2, "cpu": 1, "memory": 1},
        [
            make_node("node1", cpu=6000 * K, memory=10000),
            make_node("node2", cpu=6000 * K, memory=10000, extra={EXT: 4}),
        ],
        [],
        make_pod("p", requests=_req(3000, 4000)),
        {"node1": 45, "node2": 45},
    ),
]


@pytest.mark.parametrize(
    ("name", "resources", "nodes", "pods", "pod", "want"), MOST, ids=[c[0] for c in MOST]
)
def test_most_allocated_scores_match_upstream(name, resources, nodes, pods, pod, want):
    assert _scored("MostAllocated", resources, nodes, pods, pod) == want


GPU = "nvidia.com/gpu"
CPU_ONLY = {"cpu": 3000, "memory": 0}
CPU_AND_MEMORY = {"cpu": 3000, "memory": 5000}
CPU_MEMORY_GPU = {"cpu": 3000, "memory": 5000, GPU: 3}


def _on(node: str, req: dict[str, int], n: int = 0):
    return make_pod(f"x{n}-{node}", node=node, requests=req)


BALANCED = [
    (
        "nothing scheduled, resources requested, differently sized nodes",
        None,
        [make_node("node1", cpu=4000, memory=10000), make_node("node2", cpu=6000, memory=10000)],
        [],
        CPU_AND_MEMORY,
        {"node1": 87, "node2": 100},
        {"node1": 68, "node2": 75},
    ),
    (
        "resources requested, pods scheduled with resources",
        None,
        [make_node("node1", cpu=10000, memory=20000), make_node("node2", cpu=10000, memory=20000)],
        [_on("node1", CPU_ONLY), _on("node2", CPU_AND_MEMORY)],
        CPU_AND_MEMORY,
        {"node1": 82, "node2": 95},
        {"node1": 73, "node2": 74},
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        None,
        [make_node("node1", cpu=10000, memory=20000), make_node("node2", cpu=10000, memory=50000)],
        [_on("node1", CPU_ONLY), _on("node2", CPU_AND_MEMORY)],
        CPU_AND_MEMORY,
        {"node1": 82, "node2": 80},
        {"node1": 73, "node2": 70},
    ),
    (
        "resources requested, pods scheduled with resources, nodes to reach min/max score",
        None,
        [make_node("node1", cpu=3000, memory=5000), make_node("node2", cpu=3000, memory=5000)],
        [_on("node1", CPU_ONLY)],
        {"memory": 5000},
        {"node1": 100, "node2": 50},
        {"node1": 100, "node2": 50},
    ),
    (
        "requested resources at node capacity",
        None,
        [make_node("node1", cpu=6000, memory=10000), make_node("node2", cpu=6000, memory=10000)],
        [_on("node1", CPU_ONLY), _on("node2", CPU_AND_MEMORY)],
        CPU_ONLY,
        {"node1": 50, "node2": 75},
        {"node1": 62, "node2": 62},
    ),
    (
        "include scalar resource on a node for balanced resource allocation",
        {"cpu": 1, "memory": 1, GPU: 1},
        [
            make_node("node1", cpu=3500, memory=40000, extra={GPU: 8}),
            make_node("node2", cpu=3500, memory=40000, extra={GPU: 8}),
        ],
        [_on("node2", CPU_AND_MEMORY), _on("node1", CPU_MEMORY_GPU)],
        {"memory": 0, GPU: 1},
        {"node1": 70, "node2": 65},
        {"node1": 75, "node2": 76},
    ),
    (
        "node without the scalar resource should skip the scalar resource",
        {"cpu": 1, "memory": 1, GPU: 1},
        [
            make_node("node1", cpu=3500, memory=40000, extra={GPU: 8}),
            make_node("node2", cpu=3500, memory=40000),
        ],
        [],
        CPU_AND_MEMORY,
        {"node1": 63, "node2": 63},
        {"node1": 56, "node2": 56},
    ),
]


@pytest.mark.parametrize(
    ("name", "resources", "nodes", "pods", "requests", "want_135", "want_136"),
    BALANCED,
    ids=[c[0] for c in BALANCED],
)
@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_balanced_allocation_scores_match_upstream(
    name, resources, nodes, pods, requests, want_135, want_136, version
):
    """TestNodeResourcesBalancedAllocation per release: v1.35 scores the balance with the pod,
    v1.36 and v1.37 the change of balance (kubernetes#135573)."""
    profile = SchedulerProfile(balanced_resources=resources or {"cpu": 1, "memory": 1})
    cluster = make_cluster(nodes, pods, profile=profile).at_version(version)
    want = want_135 if version == "1.35" else want_136
    assert (
        score_with("NodeResourcesBalancedAllocation", cluster, make_pod("p", requests=requests))
        == want
    )


def test_balanced_allocation_skips_best_effort_pods_in_pre_score():
    """Upstream case "nothing scheduled, nothing requested, skip in PreScore"."""
    cluster = make_cluster(
        [make_node("node1", cpu=4000, memory=10000), make_node("node2", cpu=4000, memory=10000)]
    )
    assert score_with("NodeResourcesBalancedAllocation", cluster, make_pod("p", nonzero={})) is None


RTC_DOWN = (
    UtilizationShapePoint(utilization=0, score=10),
    UtilizationShapePoint(utilization=100, score=0),
)
RTC_UP = (
    UtilizationShapePoint(utilization=0, score=0),
    UtilizationShapePoint(utilization=100, score=1),
)
FOO = "intel.com/foo"

RTC_CASES = [
    (
        "nothing scheduled, nothing requested (default - least requested nodes have priority)",
        RTC_DOWN,
        None,
        [
            make_node("node1", cpu=4000 * K, memory=10000),
            make_node("node2", cpu=4000 * K, memory=10000),
        ],
        [make_pod("e1", node="node1", nonzero={}), make_pod("e2", node="node1", nonzero={})],
        make_pod("p", nonzero={}),
        {"node1": 100, "node2": 100},
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have priority)",
        RTC_DOWN,
        None,
        [
            make_node("node1", cpu=4000 * K, memory=10000),
            make_node("node2", cpu=6000 * K, memory=10000),
        ],
        [make_pod("e1", node="node1", nonzero={}), make_pod("e2", node="node1", nonzero={})],
        make_pod("p", requests=_req(3000, 5000)),
        {"node1": 38, "node2": 50},
    ),
    (
        "no resources requested, pods scheduled with resources (default - least requested nodes have priority)",
        RTC_DOWN,
        None,
        [
            make_node("node1", cpu=4000 * K, memory=10000),
            make_node("node2", cpu=6000 * K, memory=10000),
        ],
        [_bound("node1", 3000, 5000), _bound("node2", 3000, 5000)],
        make_pod("p", nonzero={}),
        {"node1": 38, "node2": 50},
    ),
    (
        "resources requested, pods scheduled with less resources",
        RTC_UP,
        {FOO: 1},
        [
            make_node("node1", cpu=4000, memory=10000 * 1024 * 1024, extra={FOO: 8}),
            make_node("node2", cpu=4000, memory=10000 * 1024 * 1024, extra={FOO: 4}),
        ],
        [make_pod("e", nonzero={})],
        make_pod("p", requests={FOO: 2}, nonzero={}),
        {"node1": 2, "node2": 5},
    ),
    (
        "resources requested, pods scheduled with resources, on node with existing pod running",
        RTC_UP,
        {FOO: 1},
        [
            make_node("node1", cpu=4000, memory=10000 * 1024 * 1024, extra={FOO: 8}),
            make_node("node2", cpu=4000, memory=10000 * 1024 * 1024, extra={FOO: 4}),
        ],
        [make_pod("e", node="node2", requests={FOO: 2}, nonzero={})],
        make_pod("p", requests={FOO: 2}, nonzero={}),
        {"node1": 2, "node2": 10},
    ),
]


@pytest.mark.parametrize(
    ("name", "shape", "resources", "nodes", "pods", "pod", "want"),
    RTC_CASES,
    ids=[c[0] for c in RTC_CASES],
)
def test_requested_to_capacity_ratio_scores_match_upstream(
    name, shape, resources, nodes, pods, pod, want
):
    """requested_to_capacity_ratio_test.go @8519d339 (TestRequestedToCapacityRatioScoringStrategy,
    TestResourceBinPackingSingleExtended)."""
    profile = SchedulerProfile(
        fit_strategy="RequestedToCapacityRatio",
        fit_resources=resources or {"cpu": 1, "memory": 1},
        requested_to_capacity_shape=shape,
    )
    assert score_with("NodeResourcesFit", make_cluster(nodes, pods, profile=profile), pod) == want


@pytest.mark.parametrize(
    ("points", "assertions"),
    [
        (
            [(10, 1), (90, 9)],
            {-10: 1, 0: 1, 9: 1, 10: 1, 15: 1, 19: 1, 20: 2, 89: 8, 90: 9, 99: 9, 100: 9, 110: 9},
        ),
        ([(0, 2), (40, 10), (100, 0)], {-10: 2, 0: 2, 20: 6, 30: 8, 40: 10, 70: 5, 100: 0, 110: 0}),
        ([(0, 2), (40, 2), (100, 2)], {-10: 2, 0: 2, 20: 2, 30: 2, 40: 2, 70: 2, 100: 2, 110: 2}),
    ],
    ids=["rising line", "rise then fall", "flat line"],
)
def test_broken_linear_function_matches_upstream(points, assertions):
    """requested_to_capacity_ratio_test.go @8519d339 (TestBrokenLinearFunction)."""
    got = broken_linear(points, np.array(list(assertions), dtype=np.int64))
    assert dict(zip(assertions, got.tolist(), strict=True)) == assertions


def test_fit_filter_lists_every_insufficient_resource_and_splits_unresolvable():
    """fit.go: every failing resource is a reason; a request above the node's whole allocatable
    makes the status UnschedulableAndUnresolvable (no preemption can help)."""
    nodes = [
        make_node("small", cpu=1000, memory=1000, extra={GPU: 1}),
        make_node("busy", cpu=4000, memory=4000, extra={GPU: 8}, pods=1),
    ]
    cluster = make_cluster(
        nodes, [make_pod("e", node="busy", requests={"cpu": 3000, "memory": 100})]
    )
    got = filter_with(
        "NodeResourcesFit", cluster, make_pod("p", requests={"cpu": 2000, "memory": 500, GPU: 2})
    )
    assert got["small"].reasons == ("Insufficient cpu", f"Insufficient {GPU}")
    assert got["small"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert got["busy"].reasons == (TOO_MANY_PODS, "Insufficient cpu")
    assert got["busy"].code == Code.UNSCHEDULABLE
