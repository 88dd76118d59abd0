"""TaintToleration, NodeAffinity, NodeUnschedulable, NodePorts and ImageLocality, ported from
upstream's table tests with their expected numbers:

* ``pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go`` @04c0d74f
  (TestTaintTolerationScore, TestTaintTolerationFilter)
* ``pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go`` (stored file id
  48600269, TestNodeAffinityPriority)
"""

from __future__ import annotations

import pytest

from gangplan.models.objects import (
    Affinity,
    HostPort,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    Requirement,
    Taint,
    Toleration,
)
from gangplan.solver.greedy.framework import Code
from gangplan.solver.greedy.plugins.imagelocality import calculate_priority
from gangplan.solver.greedy.plugins.nodeaffinity import ERR_REASON_POD
from gangplan.solver.greedy.plugins.nodeports import ERR_REASON as PORTS_REASON
from gangplan.solver.greedy.plugins.nodeunschedulable import ERR_REASON_UNSCHEDULABLE
from gangplan.solver.greedy.plugins.tainttoleration import ERR_REASON_UNTOLERATED
from gangplan.solver.greedy.testing import (
    filter_with,
    make_cluster,
    make_node,
    make_pod,
    score_with,
)

PNS = "PreferNoSchedule"


def taint(key, value, effect=PNS):
    return Taint(key=key, value=value, effect=effect)


def tol(key, value="", effect=PNS, op="Equal"):
    return Toleration(key=key, operator=op, value=value, effect=effect)


TAINT_SCORES = [
    (
        "node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
        [tol("foo", "bar")],
        {"nodeA": [taint("foo", "bar")], "nodeB": [taint("foo", "blah")]},
        {"nodeA": 100, "nodeB": 0},
    ),
    (
        "the nodes that all of their taints are tolerated by the pod, get the same score, no matter how many tolerable taints a node has",
        [tol("cpu-type", "arm64"), tol("disk-type", "ssd")],
        {
            "nodeA": [],
            "nodeB": [taint("cpu-type", "arm64")],
            "nodeC": [taint("cpu-type", "arm64"), taint("disk-type", "ssd")],
        },
        {"nodeA": 100, "nodeB": 100, "nodeC": 100},
    ),
    (
        "the more intolerable taints a node has, the lower score it gets.",
        [tol("foo", "bar")],
        {
            "nodeA": [],
            "nodeB": [taint("cpu-type", "arm64")],
            "nodeC": [taint("cpu-type", "arm64"), taint("disk-type", "ssd")],
        },
        {"nodeA": 100, "nodeB": 50, "nodeC": 0},
    ),
    (
        "only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations priority function",
        [tol("cpu-type", "arm64", "NoSchedule"), tol("disk-type", "ssd", "NoSchedule")],
        {
            "nodeA": [],
            "nodeB": [taint("cpu-type", "arm64", "NoSchedule")],
            "nodeC": [taint("cpu-type", "arm64"), taint("disk-type", "ssd")],
        },
        {"nodeA": 100, "nodeB": 100, "nodeC": 0},
    ),
    (
        "Default behaviour No taints and tolerations, lands on node with no taints",
        [],
        {"nodeA": [], "nodeB": [taint("cpu-type", "arm64")]},
        {"nodeA": 100, "nodeB": 0},
    ),
]


@pytest.mark.parametrize(
    ("name", "tolerations", "nodes", "want"), TAINT_SCORES, ids=[c[0][:90] for c in TAINT_SCORES]
)
def test_taint_toleration_scores_match_upstream(name, tolerations, nodes, want):
    cluster = make_cluster([make_node(n, taints=t) for n, t in nodes.items()])
    assert score_with("TaintToleration", cluster, make_pod("p", tolerations=tolerations)) == want


TAINT_FILTER = [
    (
        "A pod having no tolerations can't be scheduled onto a node with nonempty taints",
        [],
        [taint("dedicated", "user1", "NoSchedule")],
        False,
    ),
    (
        "A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
        [tol("dedicated", "user1", "NoSchedule")],
        [taint("dedicated", "user1", "NoSchedule")],
        True,
    ),
    (
        "A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
        [tol("dedicated", "user2", "NoSchedule")],
        [taint("dedicated", "user1", "NoSchedule")],
        False,
    ),
    (
        "A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the node",
        [tol("foo", "", "NoSchedule", "Exists")],
        [taint("foo", "bar", "NoSchedule")],
        True,
    ),
    (
        "A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't match, can't be scheduled onto the node",
        [tol("foo", "bar", PNS)],
        [taint("foo", "bar", "NoSchedule")],
        False,
    ),
    (
        "The pod has a toleration that keys and values match the taint on the node, the effect of toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
        [tol("foo", "bar", "")],
        [taint("foo", "bar", "NoSchedule")],
        True,
    ),
    (
        "The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
        [],
        [taint("dedicated", "user1", PNS)],
        True,
    ),
]


@pytest.mark.parametrize(
    ("name", "tolerations", "taints", "fits"), TAINT_FILTER, ids=[c[0][:90] for c in TAINT_FILTER]
)
def test_taint_toleration_filter_matches_upstream(name, tolerations, taints, fits):
    got = filter_with(
        "TaintToleration",
        make_cluster([make_node("nodeA", taints=taints)]),
        make_pod("p", tolerations=tolerations),
    )["nodeA"]
    if fits:
        assert got.ok
    else:
        assert (got.code, got.reasons) == (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            (ERR_REASON_UNTOLERATED,),
        )


def _in(key, value):
    return Requirement(key=key, operator="In", values=(value,))


def pref(weight, *reqs):
    return PreferredSchedulingTerm(
        weight=weight, preference=NodeSelectorTerm(match_expressions=tuple(reqs))
    )


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}
AFFINITY1 = Affinity(node_preferred=(pref(2, _in("foo", "bar")),))
AFFINITY2 = Affinity(
    node_preferred=(
        pref(2, _in("foo", "bar")),
        pref(4, _in("key", "value")),
        pref(5, _in("foo", "bar"), _in("key", "value"), _in("az", "az1")),
    )
)

NODE_AFFINITY_SCORES = [
    (
        "no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero",
        AFFINITY1,
        [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)],
        {"node1": 0, "node2": 0, "node3": 0},
    ),
    (
        "only node1 matches the preferred scheduling requirements of pod",
        AFFINITY1,
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
        {"node1": 100, "node2": 0, "node3": 0},
    ),
    (
        "all nodes matches the preferred scheduling requirements of pod but with different priorities",
        AFFINITY2,
        [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
        {"node1": 18, "node5": 100, "node2": 36},
    ),
]


@pytest.mark.parametrize(
    ("name", "aff", "nodes", "want"),
    NODE_AFFINITY_SCORES,
    ids=[c[0][:90] for c in NODE_AFFINITY_SCORES],
)
def test_node_affinity_scores_match_upstream(name, aff, nodes, want):
    cluster = make_cluster([make_node(n, labels=labels) for n, labels in nodes])
    assert score_with("NodeAffinity", cluster, make_pod("p", affinity=aff)) == want


def test_node_affinity_pre_score_skips_pods_without_preferred_terms():
    """Upstream case "Skip is returned in PreScore when NodeAffinity is nil"."""
    assert (
        score_with("NodeAffinity", make_cluster([make_node("node1", labels=LABEL1)]), make_pod("p"))
        is None
    )


def test_node_affinity_filter_rejects_a_node_selector_mismatch_as_unresolvable():
    cluster = make_cluster([make_node("gpu", labels={"gpu": "a100"}), make_node("cpu")])
    got = filter_with("NodeAffinity", cluster, make_pod("p", node_selector={"gpu": "a100"}))
    assert got["gpu"].ok
    assert (got["cpu"].code, got["cpu"].reasons) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        (ERR_REASON_POD,),
    )


def test_node_unschedulable_filter_lets_only_pods_tolerating_the_unschedulable_taint_through():
    cluster = make_cluster([make_node("cordoned", unschedulable=True)])
    plain = filter_with("NodeUnschedulable", cluster, make_pod("p"))["cordoned"]
    tolerant = filter_with(
        "NodeUnschedulable",
        cluster,
        make_pod(
            "q", tolerations=[tol("node.kubernetes.io/unschedulable", "", "NoSchedule", "Exists")]
        ),
    )["cordoned"]
    assert (
        plain.reasons == (ERR_REASON_UNSCHEDULABLE,)
        and plain.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    )
    assert tolerant.ok


def test_node_ports_filter_rejects_a_node_whose_host_port_is_taken():
    cluster = make_cluster(
        [make_node("a"), make_node("b")],
        [make_pod("web", node="a").model_copy(update={"host_ports": (HostPort(port=8080),)})],
    )
    pod = make_pod("p").model_copy(update={"host_ports": (HostPort(port=8080),)})
    got = filter_with("NodePorts", cluster, pod)
    assert (got["a"].code, got["a"].reasons) == (Code.UNSCHEDULABLE, (PORTS_REASON,))
    assert got["b"].ok


def test_image_locality_is_zero_when_nodes_list_no_images_and_scales_with_spread():
    mb = 1024 * 1024
    cluster = make_cluster(
        [make_node("with", images={"repo/app:v1": 500 * mb}), make_node("without")]
    )
    pod = make_pod("p", images=["repo/app:v1"])
    # spread 1/2: 250MB summed; (250 - 23) * 100 / (1000 - 23) = 23
    assert score_with("ImageLocality", cluster, pod) == {
        "with": calculate_priority(250 * mb, 1),
        "without": 0,
    }
    assert calculate_priority(250 * mb, 1) == 23
    assert score_with("ImageLocality", make_cluster([make_node("a"), make_node("b")]), pod) == {
        "a": 0,
        "b": 0,
    }
