"""The pure per pod x node predicates shared by both engines and the validator."""

from __future__ import annotations

import pytest

from gangplan.models.objects import (
    HostPort,
    LabelSelector,
    Namespace,
    Node,
    NodeSelectorTerm,
    Pod,
    PodAffinityTerm,
    Requirement,
    Taint,
    Toleration,
)
from gangplan.predicates import (
    blocked_by_unschedulable,
    conflicting_port,
    count_intolerable_prefer_no_schedule,
    exceeds_allocatable,
    first_untolerated_taint,
    insufficient,
    matches_all_terms,
    message_for,
    namespace_labels,
    node_matches_pod_selector,
    node_matches_terms,
    node_selector_term_matches,
    ports_conflict,
    requirement_matches,
    selector_matches,
    term_matches,
    tolerates,
)
from gangplan.predicates.labels import parse_int64

# ---- taints -------------------------------------------------------------------------------------
GPU_TAINT = Taint(key="gpu", value="true", effect="NoSchedule")

TOLERATION_CASES = [
    (
        "an empty key with Exists tolerates every taint",
        Toleration(operator="Exists"),
        GPU_TAINT,
        True,
    ),
    (
        "an empty key with Exists tolerates NoExecute too",
        Toleration(operator="Exists"),
        Taint(key="x", effect="NoExecute"),
        True,
    ),
    (
        "an empty effect tolerates every effect",
        Toleration(key="gpu", operator="Equal", value="true"),
        Taint(key="gpu", value="true", effect="NoExecute"),
        True,
    ),
    (
        "Exists with a key ignores the value",
        Toleration(key="gpu", operator="Exists"),
        GPU_TAINT,
        True,
    ),
    (
        "Equal needs the same value",
        Toleration(key="gpu", operator="Equal", value="false"),
        GPU_TAINT,
        False,
    ),
    (
        "Equal with an empty value matches an empty taint value",
        Toleration(key="gpu"),
        Taint(key="gpu", effect="NoSchedule"),
        True,
    ),
    (
        "a different key does not tolerate",
        Toleration(key="other", operator="Exists"),
        GPU_TAINT,
        False,
    ),
    (
        "a different effect does not tolerate",
        Toleration(key="gpu", operator="Exists", effect="NoExecute"),
        GPU_TAINT,
        False,
    ),
    (
        "an empty key with Exists but a set effect only tolerates that effect",
        Toleration(operator="Exists", effect="NoExecute"),
        GPU_TAINT,
        False,
    ),
]


@pytest.mark.parametrize(
    ("tol", "taint", "expected"),
    [c[1:] for c in TOLERATION_CASES],
    ids=[c[0] for c in TOLERATION_CASES],
)
def test_toleration_matching(tol, taint, expected):
    assert tolerates(tol, taint) is expected


def test_first_untolerated_taint_skips_prefer_no_schedule_and_tolerated_taints():
    soft = Taint(key="soft", effect="PreferNoSchedule")
    hard = Taint(key="hard", effect="NoExecute")
    assert (
        first_untolerated_taint(
            (soft, GPU_TAINT, hard), (Toleration(key="gpu", operator="Exists"),)
        )
        == hard
    )
    assert first_untolerated_taint((soft,), ()) is None


def test_prefer_no_schedule_counting_ignores_tolerations_with_another_effect():
    soft = Taint(key="soft", effect="PreferNoSchedule")
    assert count_intolerable_prefer_no_schedule((soft, GPU_TAINT), ()) == 1
    assert (
        count_intolerable_prefer_no_schedule(
            (soft,), (Toleration(key="soft", operator="Exists", effect="NoSchedule"),)
        )
        == 1
    )
    assert (
        count_intolerable_prefer_no_schedule((soft,), (Toleration(key="soft", operator="Exists"),))
        == 0
    )


def test_an_unschedulable_node_blocks_unless_the_pod_tolerates_the_unschedulable_taint():
    node = Node(name="n", unschedulable=True)
    assert blocked_by_unschedulable(node, ())
    assert not blocked_by_unschedulable(node, (Toleration(operator="Exists"),))
    assert not blocked_by_unschedulable(Node(name="m"), ())


# ---- labels and node selectors ------------------------------------------------------------------
GT_LT_CASES = [
    ("Gt compares integers", "Gt", "4", "8", True),
    ("Lt compares integers", "Lt", "4", "2", True),
    ("a negative label is an integer", "Lt", "0", "-1", True),
    ("a plus sign is accepted as strconv does", "Gt", "4", "+8", True),
    ("a decimal label never matches", "Gt", "4", "8.5", False),
    ("a word label never matches", "Gt", "4", "eight", False),
    ("a label with spaces never matches", "Gt", "4", " 8", False),
    ("a label with digit separators never matches", "Gt", "4", "8_0", False),
    ("a label beyond int64 never matches", "Gt", "4", "9223372036854775808", False),
    ("a non-integer bound never matches", "Lt", "many", "2", False),
]


@pytest.mark.parametrize(
    ("op", "bound", "label", "expected"),
    [c[1:] for c in GT_LT_CASES],
    ids=[c[0] for c in GT_LT_CASES],
)
def test_gt_and_lt_parse_integers_like_strconv(op, bound, label, expected):
    assert (
        requirement_matches(Requirement(key="k", operator=op, values=(bound,)), {"k": label})
        is expected
    )


def test_parse_int64_follows_strconv_parse_int():
    assert [
        parse_int64(s) for s in ("0", "-9223372036854775808", "9223372036854775807", "", "1e3", "٣")
    ] == [0, -(2**63), 2**63 - 1, None, None, None]


def test_an_empty_node_selector_term_matches_no_node():
    node = Node(name="n", labels={"a": "b"})
    assert not node_selector_term_matches(NodeSelectorTerm(), node)
    assert not node_matches_terms((NodeSelectorTerm(),), node)
    assert not node_matches_terms((), node)


def test_match_fields_only_know_metadata_name():
    node = Node(name="n1")
    assert node_selector_term_matches(
        NodeSelectorTerm(
            match_fields=(Requirement(key="metadata.name", operator="NotIn", values=("n2",)),)
        ),
        node,
    )
    assert not node_selector_term_matches(
        NodeSelectorTerm(match_fields=(Requirement(key="metadata.uid", operator="Exists"),)), node
    )


def test_a_nil_label_selector_matches_nothing_and_an_empty_one_everything():
    assert not selector_matches(None, {"app": "x"})
    assert selector_matches(LabelSelector(), {"app": "x"})
    assert selector_matches(LabelSelector(), {})


def test_a_label_selector_ands_match_labels_and_expressions():
    sel = LabelSelector(
        match_labels={"app": "web"},
        match_expressions=(Requirement(key="tier", operator="NotIn", values=("db",)),),
    )
    assert selector_matches(sel, {"app": "web"})
    assert not selector_matches(sel, {"app": "web", "tier": "db"})
    assert not selector_matches(sel, {"tier": "fe"})


def test_node_selector_and_required_affinity_must_both_hold():
    pod = Pod(
        namespace="d",
        name="p",
        node_selector={"gpu": "a100"},
        affinity={
            "node_required": (
                NodeSelectorTerm(
                    match_expressions=(Requirement(key="zone", operator="In", values=("a",)),)
                ),
            )
        },
    )
    assert node_matches_pod_selector(pod, Node(name="n", labels={"gpu": "a100", "zone": "a"}))
    assert not node_matches_pod_selector(pod, Node(name="n", labels={"gpu": "a100", "zone": "b"}))
    assert not node_matches_pod_selector(pod, Node(name="n", labels={"zone": "a"}))


# ---- pod affinity term namespaces ---------------------------------------------------------------
WEB = LabelSelector(match_labels={"app": "web"})
NAMESPACES = {
    "prod": Namespace(name="prod", labels={"env": "prod"}),
    "dev": Namespace(name="dev", labels={"env": "dev"}),
}


def web_pod(ns: str) -> Pod:
    return Pod(namespace=ns, name="w", labels={"app": "web"})


NAMESPACE_CASES = [
    (
        "without namespaces the owner's namespace is used",
        PodAffinityTerm(label_selector=WEB, topology_key="h"),
        "prod",
        "prod",
        True,
    ),
    (
        "without namespaces another namespace is not matched",
        PodAffinityTerm(label_selector=WEB, topology_key="h"),
        "prod",
        "dev",
        False,
    ),
    (
        "a namespaces list replaces the owner's namespace",
        PodAffinityTerm(label_selector=WEB, namespaces=("dev",), topology_key="h"),
        "prod",
        "prod",
        False,
    ),
    (
        "a listed namespace matches",
        PodAffinityTerm(label_selector=WEB, namespaces=("dev",), topology_key="h"),
        "prod",
        "dev",
        True,
    ),
    (
        "an empty namespaceSelector selects every namespace",
        PodAffinityTerm(label_selector=WEB, namespace_selector=LabelSelector(), topology_key="h"),
        "prod",
        "dev",
        True,
    ),
    (
        "a namespaceSelector matches namespace labels",
        PodAffinityTerm(
            label_selector=WEB,
            namespace_selector=LabelSelector(match_labels={"env": "dev"}),
            topology_key="h",
        ),
        "prod",
        "dev",
        True,
    ),
    (
        "a namespaceSelector excludes other namespaces",
        PodAffinityTerm(
            label_selector=WEB,
            namespace_selector=LabelSelector(match_labels={"env": "dev"}),
            topology_key="h",
        ),
        "dev",
        "prod",
        False,
    ),
    (
        "namespaces and namespaceSelector are ORed",
        PodAffinityTerm(
            label_selector=WEB,
            namespaces=("prod",),
            namespace_selector=LabelSelector(match_labels={"env": "dev"}),
            topology_key="h",
        ),
        "x",
        "prod",
        True,
    ),
    (
        "the automatic metadata.name label is selectable",
        PodAffinityTerm(
            label_selector=WEB,
            namespace_selector=LabelSelector(match_labels={"kubernetes.io/metadata.name": "other"}),
            topology_key="h",
        ),
        "prod",
        "other",
        True,
    ),
    (
        "a nil labelSelector matches no pod",
        PodAffinityTerm(topology_key="h"),
        "prod",
        "prod",
        False,
    ),
]


@pytest.mark.parametrize(
    ("term", "owner_ns", "pod_ns", "expected"),
    [c[1:] for c in NAMESPACE_CASES],
    ids=[c[0] for c in NAMESPACE_CASES],
)
def test_pod_affinity_term_namespace_selection(term, owner_ns, pod_ns, expected):
    assert term_matches(term, owner_ns, web_pod(pod_ns), NAMESPACES) is expected


def test_namespace_labels_add_the_metadata_name_label():
    assert namespace_labels("prod", NAMESPACES) == {
        "env": "prod",
        "kubernetes.io/metadata.name": "prod",
    }
    assert namespace_labels("unknown", NAMESPACES) == {"kubernetes.io/metadata.name": "unknown"}


def test_matching_all_terms_is_false_for_no_terms():
    term = PodAffinityTerm(label_selector=WEB, topology_key="h")
    assert matches_all_terms((term,), "prod", web_pod("prod"))
    assert not matches_all_terms((), "prod", web_pod("prod"))


# ---- host ports ---------------------------------------------------------------------------------
PORT_CASES = [
    (
        "0.0.0.0 conflicts with a specific address",
        HostPort(port=80),
        HostPort(port=80, host_ip="10.0.0.1"),
        True,
    ),
    (
        "a specific address conflicts with 0.0.0.0",
        HostPort(port=80, host_ip="10.0.0.1"),
        HostPort(port=80),
        True,
    ),
    (
        "the same specific address conflicts",
        HostPort(port=80, host_ip="10.0.0.1"),
        HostPort(port=80, host_ip="10.0.0.1"),
        True,
    ),
    (
        "different specific addresses do not conflict",
        HostPort(port=80, host_ip="10.0.0.1"),
        HostPort(port=80, host_ip="10.0.0.2"),
        False,
    ),
    (
        "an empty address means 0.0.0.0",
        HostPort(port=80, host_ip=""),
        HostPort(port=80, host_ip="10.0.0.2"),
        True,
    ),
    (
        "the IPv6 any address is a specific address upstream",
        HostPort(port=80, host_ip="::"),
        HostPort(port=80, host_ip="10.0.0.2"),
        False,
    ),
    (
        "different protocols do not conflict",
        HostPort(port=53, protocol="UDP"),
        HostPort(port=53),
        False,
    ),
    (
        "an empty protocol means TCP",
        HostPort(port=53, protocol=""),
        HostPort(port=53, protocol="TCP"),
        True,
    ),
    ("different ports do not conflict", HostPort(port=80), HostPort(port=81), False),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), [c[1:] for c in PORT_CASES], ids=[c[0] for c in PORT_CASES]
)
def test_host_port_conflicts(a, b, expected):
    assert ports_conflict(a, b) is expected


def test_conflicting_port_returns_the_wanted_port_that_conflicts():
    wanted = (HostPort(port=81), HostPort(port=80, host_ip="10.0.0.1"))
    assert conflicting_port(wanted, [HostPort(port=80)]) == wanted[1]
    assert conflicting_port(wanted, [HostPort(port=82)]) is None


# ---- resources ----------------------------------------------------------------------------------
def test_insufficient_lists_every_short_resource_and_the_pod_slot():
    assert insufficient(
        {"cpu": 2000, "memory": 1, "nvidia.com/gpu": 1}, {"cpu": 1000, "memory": 5}, 0
    ) == ["pods", "cpu", "nvidia.com/gpu"]
    assert insufficient({"cpu": 1000, "nvidia.com/gpu": 0}, {"cpu": 1000}, 1) == []


def test_exceeds_allocatable_ignores_zero_requests():
    assert exceeds_allocatable({"cpu": 9000, "example.com/x": 0}, {"cpu": 8000}) == ["cpu"]


def test_reason_messages_match_upstream():
    assert message_for("pods") == "Too many pods"
    assert message_for("cpu") == "Insufficient cpu"
