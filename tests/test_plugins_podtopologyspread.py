"""PodTopologySpread Score and Filter, ported from upstream's table tests with their expectations:

* ``pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go`` (stored file id
  110788862, TestPodTopologySpreadScore); ``failedNodes`` there are nodes in the snapshot that are
  not scoring candidates.
* ``.../podtopologyspread/filtering_test.go`` (TestSingleConstraint, stored file id
  15708056451; the current file is @e7827879): expected status codes per node.
* A few more Filter cases (minDomains, nodeTaintsPolicy) whose skews are computed by hand in each
  test's docstring.
"""

from __future__ import annotations

import pytest

from gangplan.models.objects import LabelSelector, Requirement, TopologySpreadConstraint
from gangplan.solver.greedy.framework import Code
from gangplan.solver.greedy.plugins.podtopologyspread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
)
from gangplan.solver.greedy.testing import (
    filter_with,
    make_cluster,
    make_node,
    make_pod,
    score_with,
)

HOST = "kubernetes.io/hostname"
FOO = LabelSelector(match_expressions=(Requirement(key="foo", operator="Exists"),))


def spread(
    max_skew: int, key: str, when: str = "ScheduleAnyway", selector=FOO, **kw
) -> TopologySpreadConstraint:
    return TopologySpreadConstraint(
        max_skew=max_skew, topology_key=key, when_unsatisfiable=when, label_selector=selector, **kw
    )


def pods_on(**counts: int):
    """``node_a=2`` -> two pods labelled foo on node-a."""
    out = []
    for node, n in counts.items():
        name = node.replace("_", "-")
        out += [make_pod(f"p-{name}-{i}", node=name, labels={"foo": ""}) for i in range(n)]
    return out


def host(name: str, **labels: str):
    return make_node(name, labels={HOST: name, **labels})


SCORE_CASES = [
    (
        "one constraint on node, no existing pods",
        1,
        HOST,
        FOO,
        [host("node-a"), host("node-b")],
        None,
        {},
        {"node-a": 100, "node-b": 100},
    ),
    (
        "one constraint on node, only one node is candidate",
        1,
        HOST,
        FOO,
        [host("node-a"), host("node-b")],
        ["node-a"],
        {"node_a": 2, "node_b": 1},
        {"node-a": 100},
    ),
    (
        "one constraint on node, all nodes have the same number of matching pods",
        1,
        HOST,
        FOO,
        [host("node-a"), host("node-b")],
        None,
        {"node_a": 1, "node_b": 1},
        {"node-a": 100, "node-b": 100},
    ),
    (
        "one constraint on node, all 4 nodes are candidates",
        1,
        HOST,
        FOO,
        [host(f"node-{c}") for c in "abcd"],
        None,
        {"node_a": 2, "node_b": 1, "node_d": 3},
        {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
    ),
    (
        "one constraint on node, null selector",
        1,
        HOST,
        None,
        [host(f"node-{c}") for c in "abcd"],
        None,
        {"node_a": 2, "node_b": 1, "node_d": 3},
        {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=2",
        2,
        HOST,
        FOO,
        [host(f"node-{c}") for c in "abcd"],
        None,
        {"node_a": 2, "node_b": 1, "node_d": 3},
        {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=3",
        3,
        HOST,
        FOO,
        [host(f"node-{c}") for c in "abcd"],
        None,
        {"node_a": 4, "node_b": 3, "node_c": 2, "node_d": 1},
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates",
        1,
        HOST,
        FOO,
        [host("node-a"), host("node-b"), host("node-x"), host("node-y")],
        ["node-a", "node-b", "node-x"],
        {"node_a": 4, "node_b": 2, "node_x": 1, "node_y": 3},
        {"node-a": 33, "node-b": 83, "node-x": 100},
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
        1,
        HOST,
        FOO,
        [
            host("node-a"),
            make_node("node-b", labels={"n": "node-b"}),
            host("node-x"),
            host("node-y"),
        ],
        ["node-a", "node-b", "node-x"],
        {"node_a": 4, "node_b": 2, "node_x": 1, "node_y": 3},
        {"node-a": 16, "node-b": 0, "node-x": 100},
    ),
    (
        "one constraint on zone, 3 out of 4 nodes are candidates",
        1,
        "zone",
        FOO,
        [
            host("node-a", zone="zone1"),
            host("node-b", zone="zone1"),
            host("node-x", zone="zone2"),
            host("node-y", zone="zone2"),
        ],
        ["node-a", "node-b", "node-x"],
        {"node_a": 4, "node_b": 2, "node_x": 1, "node_y": 3},
        {"node-a": 75, "node-b": 75, "node-x": 100},
    ),
]


@pytest.mark.parametrize(
    ("name", "skew", "key", "selector", "nodes", "candidates", "existing", "want"),
    SCORE_CASES,
    ids=[c[0] for c in SCORE_CASES],
)
def test_topology_spread_scores_match_upstream(
    name, skew, key, selector, nodes, candidates, existing, want
):
    pod = make_pod("p", labels={"foo": ""}, spread=[spread(skew, key, selector=selector)])
    cluster = make_cluster(nodes, pods_on(**existing))
    assert score_with("PodTopologySpread", cluster, pod, feasible=candidates) == want


def zn(name: str, zone: str | None = "zone1", **extra: str):
    labels = {"node": name, **extra}
    if zone is not None:
        labels["zone"] = zone
    return make_node(name, labels=labels)


FOUR = [zn("node-a"), zn("node-b"), zn("node-x", "zone2"), zn("node-y", "zone2")]
OK, UNSCH, UNRES = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
BAR = LabelSelector(match_expressions=(Requirement(key="bar", operator="Exists"),))


def foo_pods(*placements: str, namespace: str = "default"):
    return [
        make_pod(f"p-{n}{i}-{namespace}", namespace=namespace, node=n, labels={"foo": ""})
        for i, n in enumerate(placements)
    ]


SINGLE = [
    (
        "no existing pods",
        {},
        "zone",
        1,
        FOO,
        FOUR,
        [],
        dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK),
    ),
    (
        "no existing pods, incoming pod doesn't match itself",
        {},
        "zone",
        1,
        BAR,
        FOUR,
        [],
        dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK),
    ),
    (
        "existing pods in a different namespace do not count",
        {},
        "zone",
        1,
        FOO,
        FOUR,
        foo_pods("node-a", namespace="ns1")
        + foo_pods("node-a", namespace="ns2")
        + foo_pods("node-x", "node-y"),
        {"node-a": OK, "node-b": OK, "node-x": UNSCH, "node-y": UNSCH},
    ),
    (
        "pods spread across zones as 3/3, all nodes fit",
        {},
        "zone",
        1,
        FOO,
        FOUR,
        foo_pods("node-a", "node-a", "node-b", "node-y", "node-y", "node-y"),
        dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK),
    ),
    (
        "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        {},
        "zone",
        1,
        FOO,
        [
            zn("node-a"),
            zn("node-b", None, zon="zone1"),
            zn("node-x", "zone2"),
            zn("node-y", "zone2"),
        ],
        foo_pods("node-a", "node-b", "node-x", "node-y"),
        {"node-a": OK, "node-b": UNRES, "node-x": UNSCH, "node-y": UNSCH},
    ),
    (
        "pod cannot be scheduled as all nodes don't have label 'rack'",
        {},
        "rack",
        1,
        FOO,
        [zn("node-a"), zn("node-x", "zone2")],
        [],
        {"node-a": UNRES, "node-x": UNRES},
    ),
    (
        "pods spread across nodes as 2/1/0/3, only node-x fits",
        {},
        "node",
        1,
        FOO,
        FOUR,
        foo_pods("node-a", "node-a", "node-b", "node-y", "node-y", "node-y"),
        {"node-a": UNSCH, "node-b": UNSCH, "node-x": OK, "node-y": UNSCH},
    ),
    (
        "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        {},
        "node",
        2,
        FOO,
        FOUR,
        foo_pods("node-a", "node-a", "node-b", "node-y", "node-y", "node-y"),
        {"node-a": UNSCH, "node-b": OK, "node-x": OK, "node-y": UNSCH},
    ),
    (
        "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        {"bar": ""},
        "node",
        1,
        FOO,
        FOUR,
        foo_pods("node-a", "node-a", "node-b", "node-y", "node-y", "node-y"),
        {"node-a": UNSCH, "node-b": OK, "node-x": OK, "node-y": UNSCH},
    ),
]


@pytest.mark.parametrize(
    ("name", "labels", "key", "skew", "selector", "nodes", "existing", "want"),
    SINGLE,
    ids=[c[0] for c in SINGLE],
)
def test_single_constraint_filter_matches_upstream(
    name, labels, key, skew, selector, nodes, existing, want
):
    pod = make_pod(
        "p",
        labels=labels or {"foo": ""},
        spread=[spread(skew, key, "DoNotSchedule", selector=selector)],
    )
    got = filter_with("PodTopologySpread", make_cluster(nodes, existing), pod)
    assert {n: st.code for n, st in got.items()} == want


def test_incoming_pod_node_affinity_limits_the_domains_counted():
    """Upstream "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits"
    (nodeAffinityPolicy Honor: only node-a and node-y are domains)."""
    from gangplan.models.objects import Affinity, NodeSelectorTerm

    aff = Affinity(
        node_required=(
            NodeSelectorTerm(
                match_expressions=(
                    Requirement(key="node", operator="In", values=("node-a", "node-y")),
                )
            ),
        )
    )
    pod = make_pod(
        "p", labels={"foo": ""}, affinity=aff, spread=[spread(1, "node", "DoNotSchedule")]
    )
    got = filter_with(
        "PodTopologySpread",
        make_cluster(FOUR, foo_pods("node-a", "node-a", "node-b", "node-y", "node-y", "node-y")),
        pod,
    )
    assert {n: st.code for n, st in got.items()} == {
        "node-a": OK,
        "node-b": OK,
        "node-x": OK,
        "node-y": UNSCH,
    }


def test_terminating_pods_are_excluded_from_the_counts():
    """Upstream "terminating Pods should be excluded"."""
    nodes = [
        make_node("node-a", labels={"node": "node-a"}),
        make_node("node-b", labels={"node": "node-b"}),
    ]
    pods = [
        make_pod("p-a", node="node-a", labels={"foo": ""}).model_copy(update={"terminating": True}),
        make_pod("p-b", node="node-b", labels={"foo": ""}),
    ]
    got = filter_with(
        "PodTopologySpread",
        make_cluster(nodes, pods),
        make_pod("p", labels={"foo": ""}, spread=[spread(1, "node", "DoNotSchedule")]),
    )
    assert {n: st.code for n, st in got.items()} == {"node-a": OK, "node-b": UNSCH}


ZONES = [
    host("node-a", zone="zone1"),
    host("node-b", zone="zone1"),
    host("node-x", zone="zone2"),
    host("node-y", zone="zone2"),
]


def test_do_not_schedule_rejects_the_domain_that_would_exceed_max_skew():
    """Pods spread 2/1 (zone1) and 0/1 (zone2): zone1 has 3, zone2 has 1. Adding to zone1 gives
    skew 3 + 1 - 1 = 3 > 1 (Unschedulable); zone2 gives 1 + 1 - 1 = 1 (fits)."""
    pod = make_pod("p", labels={"foo": ""}, spread=[spread(1, "zone", "DoNotSchedule")])
    got = filter_with(
        "PodTopologySpread", make_cluster(ZONES, pods_on(node_a=2, node_b=1, node_y=1)), pod
    )
    assert {n: st.ok for n, st in got.items()} == {
        "node-a": False,
        "node-b": False,
        "node-x": True,
        "node-y": True,
    }
    assert (got["node-a"].code, got["node-a"].reasons) == (
        Code.UNSCHEDULABLE,
        (ERR_REASON_CONSTRAINTS_NOT_MATCH,),
    )


def test_a_node_without_the_topology_key_is_unresolvable():
    pod = make_pod("p", labels={"foo": ""}, spread=[spread(1, "zone", "DoNotSchedule")])
    got = filter_with("PodTopologySpread", make_cluster([*ZONES, make_node("bare")]), pod)
    assert (got["bare"].code, got["bare"].reasons) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        (ERR_REASON_NODE_LABEL_NOT_MATCH,),
    )


def test_min_domains_treats_the_global_minimum_as_zero_while_domains_are_missing():
    """Both zones hold one pod: skew 1 + 1 - 1 = 1 fits; with minDomains 3 (only 2 domains) the
    minimum counts as 0, so 1 + 1 - 0 = 2 > 1 everywhere."""
    pods = pods_on(node_a=1, node_x=1)
    plain = make_pod("p", labels={"foo": ""}, spread=[spread(1, "zone", "DoNotSchedule")])
    strict = make_pod(
        "q", labels={"foo": ""}, spread=[spread(1, "zone", "DoNotSchedule", min_domains=3)]
    )
    assert all(
        st.ok for st in filter_with("PodTopologySpread", make_cluster(ZONES, pods), plain).values()
    )
    assert not any(
        st.ok for st in filter_with("PodTopologySpread", make_cluster(ZONES, pods), strict).values()
    )


def test_node_taints_policy_honor_leaves_tainted_nodes_out_of_the_counts():
    """zone2's only node is tainted: with nodeTaintsPolicy Honor zone2 is not a domain, so zone1's
    count (1) is the global minimum and zone1 stays open; with Ignore, zone2 (0) is the minimum."""
    from gangplan.models.objects import Taint

    nodes = [
        host("node-a", zone="zone1"),
        make_node(
            "node-x",
            labels={HOST: "node-x", "zone": "zone2"},
            taints=[Taint(key="t", effect="NoSchedule")],
        ),
    ]
    pods = pods_on(node_a=1)
    honor = make_pod(
        "p",
        labels={"foo": ""},
        spread=[spread(1, "zone", "DoNotSchedule", node_taints_policy="Honor")],
    )
    ignore = make_pod("q", labels={"foo": ""}, spread=[spread(1, "zone", "DoNotSchedule")])
    assert filter_with("PodTopologySpread", make_cluster(nodes, pods), honor)["node-a"].ok
    assert not filter_with("PodTopologySpread", make_cluster(nodes, pods), ignore)["node-a"].ok
