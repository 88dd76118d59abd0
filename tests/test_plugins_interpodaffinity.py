"""InterPodAffinity Filter and Score, ported from upstream's table tests with their expectations:

* ``pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go`` @072825f9
  (TestRequiredAffinitySingleNode)
* ``pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go`` @8a4d98ac
  (TestPreferredAffinity)

Upstream's ``defaultNamespace`` is ""; every pod here lives in "default" instead, which is the
same thing for these cases (no term names namespaces).
"""

from __future__ import annotations

import pytest

from gangplan.models.objects import (
    Affinity,
    LabelSelector,
    PodAffinityTerm,
    Requirement,
    WeightedPodAffinityTerm,
)
from gangplan.solver.greedy.framework import Code
from gangplan.solver.greedy.plugins.interpodaffinity import (
    ERR_REASON_AFFINITY,
    ERR_REASON_ANTI_AFFINITY,
    ERR_REASON_EXISTING_ANTI_AFFINITY,
)
from gangplan.solver.greedy.testing import (
    filter_with,
    make_cluster,
    make_node,
    make_pod,
    score_with,
)


def term(key: str, op: str, values=(), topology: str = "region", **more) -> PodAffinityTerm:
    exprs = [Requirement(key=key, operator=op, values=tuple(values))]
    for k, (o, v) in more.items():
        exprs.append(Requirement(key=k, operator=o, values=tuple(v)))
    return PodAffinityTerm(
        label_selector=LabelSelector(match_expressions=tuple(exprs)), topology_key=topology
    )


def affinity(required=(), anti=(), preferred=(), anti_preferred=()) -> Affinity:
    return Affinity(
        pod_affinity_required=tuple(required),
        pod_anti_affinity_required=tuple(anti),
        pod_affinity_preferred=tuple(preferred),
        pod_anti_affinity_preferred=tuple(anti_preferred),
    )


# ---- Filter: TestRequiredAffinitySingleNode ---------------------------------------------------
POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = make_node("node1", labels={"region": "r1", "zone": "z11"})
EXISTING = make_pod("existing", labels=POD_LABEL, node="node1")

FILTER_CASES = [
    (
        "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
        make_pod("p"),
        [],
        None,
    ),
    (
        "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
        make_pod(
            "p",
            labels=POD_LABEL2,
            affinity=affinity(required=[term("service", "In", ["securityscan", "value2"])]),
        ),
        [EXISTING],
        None,
    ),
    (
        "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
        make_pod(
            "p",
            labels=POD_LABEL2,
            affinity=affinity(required=[term("service", "NotIn", ["securityscan3", "value3"])]),
        ),
        [EXISTING],
        None,
    ),
    (
        "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        make_pod(
            "p",
            labels=POD_LABEL2,
            affinity=affinity(
                required=[
                    PodAffinityTerm(
                        label_selector=LabelSelector(
                            match_expressions=(
                                Requirement(
                                    key="service", operator="In", values=("securityscan", "value2")
                                ),
                            )
                        ),
                        namespaces=("DiffNameSpace",),
                        topology_key="",
                    )
                ]
            ),
        ),
        [make_pod("other-ns", namespace="ns", labels=POD_LABEL, node="node1")],
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY),
    ),
    (
        "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        make_pod(
            "p",
            labels=POD_LABEL,
            affinity=affinity(
                required=[term("service", "In", ["antivirusscan", "value2"], topology="")]
            ),
        ),
        [EXISTING],
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY),
    ),
    (
        "satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution",
        make_pod(
            "p",
            labels=POD_LABEL2,
            affinity=affinity(
                required=[
                    term("service", "Exists", wrongkey=("DoesNotExist", ())),
                    PodAffinityTerm(
                        label_selector=LabelSelector(
                            match_expressions=(
                                Requirement(key="service", operator="In", values=("securityscan",)),
                                Requirement(
                                    key="service", operator="NotIn", values=("WrongValue",)
                                ),
                            )
                        ),
                        topology_key="region",
                    ),
                ]
            ),
        ),
        [EXISTING],
        None,
    ),
    (
        "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match.",
        make_pod(
            "p",
            labels=POD_LABEL2,
            affinity=affinity(
                required=[
                    term("service", "Exists", wrongkey=("DoesNotExist", ())),
                    term("service", "In", ["securityscan2"]),
                ]
            ),
        ),
        [EXISTING],
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY),
    ),
    (
        "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        make_pod(
            "p",
            labels=POD_LABEL2,
            affinity=affinity(
                required=[term("service", "In", ["securityscan", "value2"])],
                anti=[term("service", "In", ["securityscan", "value2"], topology="zone")],
            ),
        ),
        [EXISTING],
        (Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY),
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        make_pod(
            "p",
            labels=POD_LABEL,
            affinity=affinity(
                required=[term("service", "In", ["securityscan", "value2"])],
                anti=[term("service", "In", ["antivirusscan", "value2"], topology="node")],
            ),
        ),
        [
            make_pod(
                "e",
                labels=POD_LABEL,
                node="node1",
                affinity=affinity(
                    anti=[term("service", "In", ["securityscan", "value2"], topology="zone")]
                ),
            )
        ],
        (Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY),
    ),
    (
        "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        make_pod(
            "p",
            labels=POD_LABEL,
            affinity=affinity(required=[term("service", "NotIn", ["securityscan", "value2"])]),
        ),
        [],
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY),
    ),
    (
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        make_pod("p", labels=POD_LABEL),
        [
            make_pod(
                "e",
                labels=POD_LABEL,
                node="node1",
                affinity=affinity(
                    anti=[term("service", "In", ["securityscan", "value2"], topology="zone")]
                ),
            )
        ],
        (Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY),
    ),
    (
        "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
        make_pod(
            "p",
            labels=POD_LABEL,
            affinity=affinity(
                anti=[
                    term("service", "Exists", topology="zone"),
                    term("security", "Exists", topology="zone"),
                ]
            ),
        ),
        [
            make_pod(
                "e",
                labels=POD_LABEL2,
                node="node1",
                affinity=affinity(anti=[term("security", "Exists", topology="zone")]),
            )
        ],
        (Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY),
    ),
    (
        "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
        make_pod(
            "p",
            labels=POD_LABEL2,
            affinity=affinity(anti=[term("security", "Exists", topology="zone")]),
        ),
        [
            make_pod(
                "e",
                labels=POD_LABEL,
                node="node1",
                affinity=affinity(
                    anti=[
                        term("service", "Exists", topology="zone"),
                        term("security", "Exists", topology="zone"),
                    ]
                ),
            )
        ],
        (Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY),
    ),
]


@pytest.mark.parametrize(
    ("name", "pod", "existing", "want"), FILTER_CASES, ids=[c[0][:90] for c in FILTER_CASES]
)
def test_required_affinity_filter_matches_upstream(name, pod, existing, want):
    got = filter_with("InterPodAffinity", make_cluster([NODE1], existing), pod)["node1"]
    if want is None:
        assert got.ok
    else:
        assert (got.code, got.reasons) == (want[0], (want[1],))


def test_first_pod_of_a_self_affine_series_may_go_anywhere_its_topology_exists():
    """filtering.go satisfyPodAffinity: no pod anywhere matches, the pod matches its own terms."""
    pod = make_pod(
        "p", labels=POD_LABEL, affinity=affinity(required=[term("service", "In", ["securityscan"])])
    )
    got = filter_with("InterPodAffinity", make_cluster([NODE1, make_node("bare")]), pod)
    assert got["node1"].ok
    assert got["bare"].reasons == (ERR_REASON_AFFINITY,)  # the topology key must still exist


# ---- Score: TestPreferredAffinity ---------------------------------------------------------------
CHINA = {"region": "China"}
INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}


def w(weight: int, t: PodAffinityTerm) -> WeightedPodAffinityTerm:
    return WeightedPodAffinityTerm(weight=weight, term=t)


STAY_WITH_S1_IN_REGION = affinity(preferred=[w(5, term("security", "In", ["S1"]))])
STAY_WITH_S2_IN_REGION = affinity(preferred=[w(6, term("security", "In", ["S2"]))])
AFFINITY3 = affinity(
    preferred=[
        w(
            8,
            PodAffinityTerm(
                label_selector=LabelSelector(
                    match_expressions=(
                        Requirement(key="security", operator="NotIn", values=("S1",)),
                        Requirement(key="security", operator="In", values=("S2",)),
                    )
                ),
                topology_key="region",
            ),
        ),
        w(2, term("security", "Exists", wrongkey=("DoesNotExist", ()))),
    ]
)
HARD_AFFINITY = affinity(
    required=[
        term("security", "In", ["S1", "value2"]),
        term("security", "Exists", wrongkey=("DoesNotExist", ())),
    ]
)
AWAY_FROM_S1_IN_AZ = affinity(anti_preferred=[w(5, term("security", "In", ["S1"], topology="az"))])
STAY_S1_REGION_AWAY_S2_AZ = affinity(
    preferred=[w(8, term("security", "In", ["S1"]))],
    anti_preferred=[w(5, term("security", "In", ["S2"], topology="az"))],
)


def _on(i: int, node: str, labels=None, aff=None):
    return make_pod(f"e{i}", node=node, labels=labels, affinity=aff)


SCORE_CASES = [
    (
        "Affinity: pod that matches topology key & pods in nodes will get high score comparing to otherswhich doesn't match either pods in nodes or in topology key",
        make_pod("p", labels=S1, affinity=STAY_WITH_S1_IN_REGION),
        [_on(1, "node1", S1), _on(2, "node2", S2), _on(3, "node3", S1)],
        [("node1", CHINA), ("node2", INDIA), ("node3", AZ1)],
        {"node1": 100, "node2": 0, "node3": 0},
    ),
    (
        "All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score",
        make_pod("p", affinity=STAY_WITH_S1_IN_REGION),
        [_on(1, "node1", S1)],
        [("node1", CHINA), ("node2", CHINA_AZ1), ("node3", INDIA)],
        {"node1": 100, "node2": 100, "node3": 0},
    ),
    (
        "Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score",
        make_pod("p", labels=S1, affinity=STAY_WITH_S2_IN_REGION),
        [
            _on(1, "node1", S2),
            _on(2, "node1", S2),
            _on(3, "node2", S2),
            _on(4, "node3", S2),
            _on(5, "node4", S2),
            _on(6, "node5", S2),
        ],
        [("node1", CHINA), ("node2", INDIA), ("node3", CHINA), ("node4", CHINA), ("node5", INDIA)],
        {"node1": 100, "node2": 0, "node3": 100, "node4": 100, "node5": 0},
    ),
    (
        "Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures",
        make_pod("p", labels=S1, affinity=AFFINITY3),
        [_on(1, "node1", S1), _on(2, "node2", S2), _on(3, "node3", S1)],
        [("node1", CHINA), ("node2", INDIA), ("node3", AZ1)],
        {"node1": 20, "node2": 100, "node3": 0},
    ),
    (
        "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
        make_pod("p", labels=S1),
        [_on(1, "node1", S1, HARD_AFFINITY), _on(2, "node2", S2, HARD_AFFINITY)],
        [("node1", CHINA), ("node2", INDIA), ("node3", AZ1)],
        {"node1": 100, "node2": 100, "node3": 0},
    ),
    (
        "Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score",
        make_pod("p", labels=S1, affinity=AWAY_FROM_S1_IN_AZ),
        [_on(1, "node1", S1), _on(2, "node1", S1), _on(3, "node2", S2)],
        [("node1", AZ1), ("node2", INDIA)],
        {"node1": 0, "node2": 100},
    ),
    (
        "Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
        make_pod("p", labels=S1, affinity=STAY_S1_REGION_AWAY_S2_AZ),
        [
            _on(1, "node1", S1),
            _on(2, "node2", S2),
            _on(3, "node3", None, STAY_S1_REGION_AWAY_S2_AZ),
            _on(4, "node4", None, AWAY_FROM_S1_IN_AZ),
        ],
        [("node1", CHINA), ("node2", AZ1), ("node3", INDIA), ("node4", AZ2)],
        {"node1": 100, "node2": 0, "node3": 100, "node4": 0},
    ),
    (
        "Avoid panic when partial nodes in a topology don't have pods with affinity",
        make_pod("p", labels=S1),
        [_on(1, "node1", S1), _on(2, "node2", None, STAY_S1_REGION_AWAY_S2_AZ)],
        [("node1", CHINA), ("node2", CHINA)],
        {"node1": 0, "node2": 0},
    ),
]


@pytest.mark.parametrize(
    ("name", "pod", "existing", "nodes", "want"), SCORE_CASES, ids=[c[0][:90] for c in SCORE_CASES]
)
def test_preferred_affinity_scores_match_upstream(name, pod, existing, nodes, want):
    cluster = make_cluster([make_node(n, labels=labels) for n, labels in nodes], existing)
    assert score_with("InterPodAffinity", cluster, pod) == want


def test_pre_score_skips_when_no_pod_has_affinity():
    """Upstream case "all nodes are same priority as Affinity is nil" (PreScore returns Skip)."""
    cluster = make_cluster(
        [
            make_node("node1", labels=CHINA),
            make_node("node2", labels=INDIA),
            make_node("node3", labels=AZ1),
        ]
    )
    assert score_with("InterPodAffinity", cluster, make_pod("p", labels=S1)) is None
