"""The independent validator: for each rule one placement that satisfies it and one that violates
it, with the violated rule named. Results are built with ``build_result`` as every engine does."""

from __future__ import annotations

import json

import pytest

from gangplan.models.cluster import Cluster
from gangplan.models.objects import (
    Affinity,
    CompositePodGroup,
    HostPort,
    LabelSelector,
    Node,
    NodeSelectorTerm,
    Pod,
    PodAffinityTerm,
    PodGroup,
    Requirement,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from gangplan.models.result import PodOutcome, Result, Status, result_json_schema
from gangplan.solver.outcome import build_result
from gangplan.solver.validate import validate

HOST = "kubernetes.io/hostname"


def node(name: str, *, cpu: int = 4000, pods: int = 110, labels: dict | None = None, **kw) -> Node:
    alloc = {"cpu": cpu, "memory": 16 * 2**30, "pods": pods, **kw.pop("extra", {})}
    return Node(name=name, labels={HOST: name, **(labels or {})}, allocatable=alloc, **kw)


def pod(
    name: str,
    *,
    cpu: int = 1000,
    on: str | None = None,
    labels: dict | None = None,
    ns: str = "default",
    **kw,
) -> Pod:
    requests = {"cpu": cpu, **kw.pop("extra", {})}
    return Pod(namespace=ns, name=name, node_name=on, labels=labels or {}, requests=requests, **kw)


def rules(cluster: Cluster, placements: dict[str, str], victims: tuple[str, ...] = ()) -> set[str]:
    """The names of the rules a placement violates."""
    result = build_result(
        cluster, engine="test", status=Status.HEURISTIC, placements=placements, victims=victims
    )
    return {v.rule for v in validate(cluster, result)}


def two_nodes(**kw) -> tuple[Node, Node]:
    return node("n1", **kw), node("n2", **kw)


# ---- capacity -----------------------------------------------------------------------------------
def test_capacity_counts_bound_pods_and_rejects_an_overcommitted_cpu():
    c = Cluster(nodes=(node("n1"),), pods=(pod("bound", cpu=3000, on="n1"), pod("new", cpu=2000)))
    assert rules(c, {"default/new": "n1"}) == {"capacity"}


def test_capacity_accepts_a_pod_that_exactly_fills_the_node():
    c = Cluster(nodes=(node("n1"),), pods=(pod("bound", cpu=3000, on="n1"), pod("new", cpu=1000)))
    assert rules(c, {"default/new": "n1"}) == set()


def test_capacity_counts_placed_pods_together():
    c = Cluster(nodes=(node("n1"),), pods=(pod("a", cpu=3000), pod("b", cpu=3000)))
    assert rules(c, {"default/a": "n1", "default/b": "n1"}) == {"capacity"}
    assert rules(c, {"default/a": "n1"}) == set()


def test_capacity_checks_the_pod_count_against_allocatable_pods():
    c = Cluster(
        nodes=(node("n1", pods=2),),
        pods=(pod("bound", cpu=0, on="n1"), pod("a", cpu=0), pod("b", cpu=0)),
    )
    assert rules(c, {"default/a": "n1", "default/b": "n1"}) == {"capacity"}
    assert rules(c, {"default/a": "n1"}) == set()


def test_capacity_checks_extended_resources():
    gpu = {"nvidia.com/gpu": 8}
    c = Cluster(
        nodes=(node("n1", extra=gpu),),
        pods=(
            pod("bound", cpu=0, on="n1", extra={"nvidia.com/gpu": 4}),
            pod("four", cpu=0, extra={"nvidia.com/gpu": 4}),
            pod("five", cpu=0, extra={"nvidia.com/gpu": 5}),
        ),
    )
    assert rules(c, {"default/four": "n1"}) == set()
    assert rules(c, {"default/five": "n1"}) == {"capacity"}


def test_capacity_rejects_an_extended_resource_the_node_does_not_offer():
    c = Cluster(nodes=(node("n1"),), pods=(pod("gpu", cpu=0, extra={"nvidia.com/gpu": 1}),))
    assert rules(c, {"default/gpu": "n1"}) == {"capacity"}


def test_capacity_does_not_count_victims():
    c = Cluster(
        nodes=(node("n1"),),
        pods=(pod("low", cpu=3000, on="n1", priority=1), pod("high", cpu=2000, priority=10)),
    )
    assert rules(c, {"default/high": "n1"}, victims=("default/low",)) == set()
    assert rules(c, {"default/high": "n1"}) == {"capacity"}


# ---- node rules ---------------------------------------------------------------------------------
def test_an_unschedulable_node_rejects_pods_that_do_not_tolerate_it():
    c = Cluster(
        nodes=(node("n1", unschedulable=True),),
        pods=(
            pod("plain"),
            pod(
                "tolerant",
                tolerations=(
                    Toleration(
                        key="node.kubernetes.io/unschedulable",
                        operator="Exists",
                        effect="NoSchedule",
                    ),
                ),
            ),
        ),
    )
    assert rules(c, {"default/plain": "n1"}) == {"unschedulable"}
    assert rules(c, {"default/tolerant": "n1"}) == set()


@pytest.mark.parametrize(
    ("effect", "blocks"),
    [("NoSchedule", True), ("NoExecute", True), ("PreferNoSchedule", False)],
    ids=["NoSchedule blocks", "NoExecute blocks", "PreferNoSchedule never blocks"],
)
def test_an_untolerated_taint_blocks_only_with_a_hard_effect(effect, blocks):
    c = Cluster(
        nodes=(node("n1", taints=(Taint(key="gpu", value="true", effect=effect),)),),
        pods=(pod("p"),),
    )
    assert rules(c, {"default/p": "n1"}) == ({"taint"} if blocks else set())


def test_a_tolerated_taint_does_not_block():
    tol = (Toleration(key="gpu", operator="Equal", value="true", effect="NoSchedule"),)
    c = Cluster(
        nodes=(node("n1", taints=(Taint(key="gpu", value="true", effect="NoSchedule"),)),),
        pods=(pod("p", tolerations=tol),),
    )
    assert rules(c, {"default/p": "n1"}) == set()


def test_node_selector_must_match_the_node_labels():
    c = Cluster(
        nodes=(node("a100", labels={"gpu": "a100"}), node("t4", labels={"gpu": "t4"})),
        pods=(pod("p", node_selector={"gpu": "a100"}),),
    )
    assert rules(c, {"default/p": "a100"}) == set()
    assert rules(c, {"default/p": "t4"}) == {"node-selector"}


def _required(*reqs: Requirement, fields: tuple[Requirement, ...] = ()) -> Affinity:
    return Affinity(node_required=(NodeSelectorTerm(match_expressions=reqs, match_fields=fields),))


NODE_AFFINITY_CASES = [
    (
        "In matches a listed value",
        Requirement(key="zone", operator="In", values=("a", "b")),
        {"zone": "a"},
        True,
    ),
    (
        "In rejects an unlisted value",
        Requirement(key="zone", operator="In", values=("a",)),
        {"zone": "c"},
        False,
    ),
    (
        "In rejects a missing label",
        Requirement(key="zone", operator="In", values=("a",)),
        {},
        False,
    ),
    (
        "NotIn accepts another value",
        Requirement(key="zone", operator="NotIn", values=("a",)),
        {"zone": "b"},
        True,
    ),
    (
        "NotIn accepts a missing label",
        Requirement(key="zone", operator="NotIn", values=("a",)),
        {},
        True,
    ),
    (
        "NotIn rejects a listed value",
        Requirement(key="zone", operator="NotIn", values=("a",)),
        {"zone": "a"},
        False,
    ),
    ("Exists accepts any value", Requirement(key="gpu", operator="Exists"), {"gpu": ""}, True),
    ("Exists rejects a missing label", Requirement(key="gpu", operator="Exists"), {}, False),
    (
        "DoesNotExist accepts a missing label",
        Requirement(key="gpu", operator="DoesNotExist"),
        {},
        True,
    ),
    (
        "DoesNotExist rejects a present label",
        Requirement(key="gpu", operator="DoesNotExist"),
        {"gpu": "x"},
        False,
    ),
    (
        "Gt accepts a larger integer",
        Requirement(key="gpus", operator="Gt", values=("4",)),
        {"gpus": "8"},
        True,
    ),
    (
        "Gt rejects an equal integer",
        Requirement(key="gpus", operator="Gt", values=("8",)),
        {"gpus": "8"},
        False,
    ),
    (
        "Gt rejects a non-integer label",
        Requirement(key="gpus", operator="Gt", values=("4",)),
        {"gpus": "eight"},
        False,
    ),
    (
        "Lt accepts a smaller integer",
        Requirement(key="gpus", operator="Lt", values=("4",)),
        {"gpus": "2"},
        True,
    ),
    (
        "Lt rejects a larger integer",
        Requirement(key="gpus", operator="Lt", values=("4",)),
        {"gpus": "8"},
        False,
    ),
    (
        "Lt rejects a missing label",
        Requirement(key="gpus", operator="Lt", values=("4",)),
        {},
        False,
    ),
]


@pytest.mark.parametrize(
    ("req", "labels", "ok"),
    [c[1:] for c in NODE_AFFINITY_CASES],
    ids=[c[0] for c in NODE_AFFINITY_CASES],
)
def test_required_node_affinity_operators(req, labels, ok):
    c = Cluster(nodes=(node("n1", labels=labels),), pods=(pod("p", affinity=_required(req)),))
    assert rules(c, {"default/p": "n1"}) == (set() if ok else {"node-selector"})


def test_match_fields_on_metadata_name_selects_the_node_by_name():
    aff = _required(fields=(Requirement(key="metadata.name", operator="In", values=("n1",)),))
    c = Cluster(nodes=two_nodes(), pods=(pod("p", affinity=aff),))
    assert rules(c, {"default/p": "n1"}) == set()
    assert rules(c, {"default/p": "n2"}) == {"node-selector"}


def test_node_selector_terms_are_ored():
    aff = Affinity(
        node_required=(
            NodeSelectorTerm(
                match_expressions=(Requirement(key="zone", operator="In", values=("a",)),)
            ),
            NodeSelectorTerm(
                match_expressions=(Requirement(key="zone", operator="In", values=("b",)),)
            ),
        )
    )
    c = Cluster(
        nodes=(
            node("na", labels={"zone": "a"}),
            node("nb", labels={"zone": "b"}),
            node("nc", labels={"zone": "c"}),
        ),
        pods=(pod("p", affinity=aff),),
    )
    assert rules(c, {"default/p": "nb"}) == set()
    assert rules(c, {"default/p": "nc"}) == {"node-selector"}


# ---- host ports ---------------------------------------------------------------------------------
def test_host_ports_conflict_with_a_bound_pod_on_every_address():
    c = Cluster(
        nodes=two_nodes(),
        pods=(
            pod("web", on="n1", host_ports=(HostPort(port=8080),)),
            pod("new", host_ports=(HostPort(port=8080, host_ip="10.0.0.1"),)),
        ),
    )
    assert rules(c, {"default/new": "n1"}) == {"host-port"}
    assert rules(c, {"default/new": "n2"}) == set()


def test_host_ports_on_different_specific_addresses_or_protocols_do_not_conflict():
    c = Cluster(
        nodes=(node("n1"),),
        pods=(
            pod("a", host_ports=(HostPort(port=53, host_ip="10.0.0.1"),)),
            pod("b", host_ports=(HostPort(port=53, host_ip="10.0.0.2"),)),
            pod("udp", host_ports=(HostPort(port=53, protocol="UDP"),)),
        ),
    )
    assert rules(c, {"default/a": "n1", "default/b": "n1"}) == set()
    assert rules(c, {"default/a": "n1", "default/udp": "n1"}) == set()


def test_two_placed_pods_wanting_the_same_port_conflict():
    c = Cluster(
        nodes=(node("n1"),),
        pods=(pod("a", host_ports=(HostPort(port=80),)), pod("b", host_ports=(HostPort(port=80),))),
    )
    assert rules(c, {"default/a": "n1", "default/b": "n1"}) == {"host-port"}


# ---- inter-pod affinity -------------------------------------------------------------------------
def _term(labels: dict[str, str], key: str = HOST, **kw) -> PodAffinityTerm:
    return PodAffinityTerm(
        label_selector=LabelSelector(match_labels=labels), topology_key=key, **kw
    )


def test_required_pod_affinity_needs_a_matching_bound_pod_in_the_domain():
    aff = Affinity(pod_affinity_required=(_term({"app": "db"}),))
    c = Cluster(
        nodes=two_nodes(), pods=(pod("db", on="n1", labels={"app": "db"}), pod("web", affinity=aff))
    )
    assert rules(c, {"default/web": "n1"}) == set()
    assert rules(c, {"default/web": "n2"}) == {"pod-affinity"}


def test_required_pod_affinity_is_met_by_a_pod_placed_in_the_same_run():
    aff = Affinity(pod_affinity_required=(_term({"role": "a"}),))
    c = Cluster(nodes=two_nodes(), pods=(pod("a", labels={"role": "a"}), pod("b", affinity=aff)))
    assert rules(c, {"default/a": "n1", "default/b": "n1"}) == set()
    assert rules(c, {"default/a": "n1", "default/b": "n2"}) == {"pod-affinity"}


def test_the_first_pod_of_a_self_affine_series_may_go_anywhere():
    aff = Affinity(pod_affinity_required=(_term({"app": "web"}),))
    c = Cluster(
        nodes=two_nodes(),
        pods=(
            pod("web", labels={"app": "web"}, affinity=aff),
            pod("db", labels={"app": "other"}, affinity=aff),
        ),
    )
    assert rules(c, {"default/web": "n2"}) == set()
    assert rules(c, {"default/db": "n2"}) == {"pod-affinity"}


def test_the_first_pod_rule_ignores_matching_pods_on_nodes_without_the_topology_label():
    """Regression: upstream's affinityCounts only counts matching pods on nodes that carry the
    term's topology key, so such a pod does not stop the first-pod rule (the validator once said
    ``pod-affinity`` here)."""
    aff = Affinity(pod_affinity_required=(_term({"app": "web"}, key="zone"),))
    c = Cluster(
        nodes=(node("n1", labels={"zone": "a"}), node("bare")),
        pods=(
            pod("old", on="bare", labels={"app": "web"}),
            pod("web", labels={"app": "web"}, affinity=aff),
        ),
    )
    assert rules(c, {"default/web": "n1"}) == set()


def test_a_first_pod_may_be_followed_by_unconstrained_matching_pods_elsewhere():
    """Regression (fuzz seed 395): kube-scheduler places the self-affine pod first under the
    first-pod rule, then its unconstrained group mates anywhere; the final state has the mates in
    another domain. Some order allows it, so it is valid (the validator once said pod-affinity)."""
    aff = Affinity(pod_affinity_required=(_term({"group": "g"}),))
    c = Cluster(
        nodes=two_nodes(),
        pods=(pod("lead", labels={"group": "g"}, affinity=aff), pod("mate", labels={"group": "g"})),
    )
    assert rules(c, {"default/lead": "n1", "default/mate": "n2"}) == set()


def test_two_self_affine_pods_cannot_both_be_the_first_pod():
    aff = Affinity(pod_affinity_required=(_term({"group": "g"}),))
    c = Cluster(
        nodes=two_nodes(),
        pods=(
            pod("a", labels={"group": "g"}, affinity=aff),
            pod("b", labels={"group": "g"}, affinity=aff),
        ),
    )
    assert rules(c, {"default/a": "n1", "default/b": "n1"}) == set()
    assert rules(c, {"default/a": "n1", "default/b": "n2"}) == {"pod-affinity"}


def test_a_bound_matching_pod_elsewhere_forbids_the_first_pod_rule():
    aff = Affinity(pod_affinity_required=(_term({"group": "g"}),))
    c = Cluster(
        nodes=two_nodes(),
        pods=(
            pod("old", on="n2", labels={"group": "g"}),
            pod("lead", labels={"group": "g"}, affinity=aff),
        ),
    )
    assert rules(c, {"default/lead": "n1"}) == {"pod-affinity"}
    assert rules(c, {"default/lead": "n2"}) == set()


def test_pod_affinity_needs_the_topology_label_on_the_node():
    aff = Affinity(pod_affinity_required=(_term({"app": "db"}, key="zone"),))
    c = Cluster(
        nodes=(node("n1", labels={"zone": "a"}), node("bare")),
        pods=(pod("db", on="n1", labels={"app": "db"}), pod("web", affinity=aff)),
    )
    assert rules(c, {"default/web": "n1"}) == set()
    assert rules(c, {"default/web": "bare"}) == {"pod-affinity"}


def test_pod_affinity_only_looks_in_the_owner_namespace_by_default():
    aff = Affinity(pod_affinity_required=(_term({"app": "db"}),))
    c = Cluster(
        nodes=two_nodes(),
        pods=(
            pod("db", on="n1", labels={"app": "db"}, ns="other"),
            pod("x", on="n2", labels={"app": "y"}),
            pod("web", affinity=aff),
        ),
    )
    assert rules(c, {"default/web": "n1"}) == {"pod-affinity"}


def test_required_anti_affinity_rejects_a_matching_bound_pod_in_the_domain():
    aff = Affinity(pod_anti_affinity_required=(_term({"app": "web"}),))
    c = Cluster(
        nodes=two_nodes(),
        pods=(
            pod("old", on="n1", labels={"app": "web"}),
            pod("new", labels={"app": "web"}, affinity=aff),
        ),
    )
    assert rules(c, {"default/new": "n1"}) == {"pod-anti-affinity"}
    assert rules(c, {"default/new": "n2"}) == set()


def test_an_existing_pods_anti_affinity_rejects_the_incoming_pod():
    aff = Affinity(pod_anti_affinity_required=(_term({"app": "noisy"}),))
    c = Cluster(
        nodes=two_nodes(),
        pods=(pod("quiet", on="n1", affinity=aff), pod("noisy", labels={"app": "noisy"})),
    )
    assert rules(c, {"default/noisy": "n1"}) == {"pod-anti-affinity"}
    assert rules(c, {"default/noisy": "n2"}) == set()


def test_two_placed_pods_with_anti_affinity_must_be_in_different_domains():
    aff = Affinity(pod_anti_affinity_required=(_term({"app": "w"}, key="zone"),))
    nodes = (
        node("n1", labels={"zone": "a"}),
        node("n2", labels={"zone": "a"}),
        node("n3", labels={"zone": "b"}),
    )
    c = Cluster(
        nodes=nodes,
        pods=(
            pod("w0", labels={"app": "w"}, affinity=aff),
            pod("w1", labels={"app": "w"}, affinity=aff),
        ),
    )
    assert rules(c, {"default/w0": "n1", "default/w1": "n2"}) == {"pod-anti-affinity"}
    assert rules(c, {"default/w0": "n1", "default/w1": "n3"}) == set()


# ---- groups -------------------------------------------------------------------------------------
def _gang(n: int, min_count: int, **kw) -> tuple[PodGroup, tuple[Pod, ...]]:
    g = PodGroup(namespace="ml", name="g", policy="gang", min_count=min_count, **kw)
    return g, tuple(pod(f"w{i}", ns="ml", pod_group="g") for i in range(n))


def test_a_gang_is_all_or_nothing_up_to_min_count():
    g, members = _gang(3, 3)
    c = Cluster(nodes=(node("n1", cpu=16000),), pods=members, pod_groups={g.key: g})
    assert rules(c, {f"ml/w{i}": "n1" for i in range(3)}) == set()
    assert rules(c, {f"ml/w{i}": "n1" for i in range(2)}) == {"gang"}
    assert rules(c, {}) == set()


def test_bound_members_count_toward_a_gangs_min_count():
    g, members = _gang(2, 3)
    bound = pod("w-bound", ns="ml", pod_group="g", on="n1")
    c = Cluster(nodes=(node("n1", cpu=16000),), pods=(bound, *members), pod_groups={g.key: g})
    assert rules(c, {"ml/w0": "n1", "ml/w1": "n1"}) == set()
    assert rules(c, {"ml/w0": "n1"}) == {"gang"}


def test_a_composite_group_needs_min_group_count_satisfied_children():
    top = CompositePodGroup(namespace="ml", name="top", policy="gang", min_group_count=2)
    g1 = PodGroup(namespace="ml", name="g1", policy="gang", min_count=1, parent="top")
    g2 = PodGroup(namespace="ml", name="g2", policy="gang", min_count=1, parent="top")
    c = Cluster(
        nodes=(node("n1"),),
        pods=(pod("a", ns="ml", pod_group="g1"), pod("b", ns="ml", pod_group="g2")),
        pod_groups={g1.key: g1, g2.key: g2},
        composite_pod_groups={top.key: top},
    )
    assert rules(c, {"ml/a": "n1", "ml/b": "n1"}) == set()
    assert rules(c, {"ml/a": "n1"}) == {"composite"}


def test_a_group_topology_constraint_keeps_the_group_in_one_domain():
    g, members = _gang(2, 2, topology_key="zone")
    nodes = (
        node("n1", labels={"zone": "a"}),
        node("n2", labels={"zone": "a"}),
        node("n3", labels={"zone": "b"}),
        node("bare"),
    )
    c = Cluster(nodes=nodes, pods=members, pod_groups={g.key: g})
    assert rules(c, {"ml/w0": "n1", "ml/w1": "n2"}) == set()
    assert rules(c, {"ml/w0": "n1", "ml/w1": "n3"}) == {"topology"}
    assert rules(c, {"ml/w0": "n1", "ml/w1": "bare"}) == {"topology"}


def test_a_composite_topology_constraint_covers_all_its_leaves():
    top = CompositePodGroup(namespace="ml", name="top", policy="basic", topology_key="zone")
    g1 = PodGroup(namespace="ml", name="g1", parent="top")
    g2 = PodGroup(namespace="ml", name="g2", parent="top")
    nodes = (node("n1", labels={"zone": "a"}), node("n2", labels={"zone": "b"}))
    c = Cluster(
        nodes=nodes,
        pods=(pod("a", ns="ml", pod_group="g1"), pod("b", ns="ml", pod_group="g2")),
        pod_groups={g1.key: g1, g2.key: g2},
        composite_pod_groups={top.key: top},
    )
    assert rules(c, {"ml/a": "n1", "ml/b": "n1"}) == set()
    assert rules(c, {"ml/a": "n1", "ml/b": "n2"}) == {"topology"}


# ---- victims ------------------------------------------------------------------------------------
def test_victims_must_have_strictly_lower_priority_than_the_preemptor():
    c = Cluster(
        nodes=(node("n1"),),
        pods=(
            pod("low", cpu=4000, on="n1", priority=5),
            pod("high", cpu=4000, priority=10),
            pod("peer", cpu=4000, priority=5),
        ),
    )
    assert rules(c, {"default/high": "n1"}, victims=("default/low",)) == set()
    assert rules(c, {"default/peer": "n1"}, victims=("default/low",)) == {"victim"}


def test_a_group_member_preempts_with_its_groups_priority():
    g = PodGroup(namespace="ml", name="g", policy="gang", min_count=1, priority=100)
    c = Cluster(
        nodes=(node("n1"),),
        pods=(
            pod("low", cpu=4000, on="n1", priority=50),
            pod("w", ns="ml", cpu=4000, pod_group="g", priority=100),
        ),
        pod_groups={g.key: g},
    )
    assert rules(c, {"ml/w": "n1"}, victims=("default/low",)) == set()


def test_a_victim_is_a_bound_pod_or_a_pending_pod_the_run_placed_and_someone_is_placed():
    """Rule V of issue 39: a pending pod the run placed and a later preemptor evicted is a victim
    (queued, placed nowhere in the Result, priority below the preemptor's); a key that is no pod,
    a pending pod the Result still places, one no cycle attempts (terminating), or one of the
    preemptor's priority is not."""
    c = Cluster(
        nodes=(node("n1"),),
        pods=(
            pod("low", on="n1", priority=1),
            pod("pending", priority=0),
            pod("peer", priority=9),
            pod("deleted", priority=0, terminating=True),
            pod("high", priority=9),
        ),
    )
    assert rules(c, {"default/high": "n1"}, victims=("default/pending",)) == set()
    assert rules(c, {"default/high": "n1"}, victims=("default/made-up",)) == {"victim"}
    assert rules(
        c, {"default/high": "n1", "default/pending": "n1"}, victims=("default/pending",)
    ) == {"victim"}
    assert rules(c, {"default/high": "n1"}, victims=("default/deleted",)) == {"victim"}
    assert rules(c, {"default/high": "n1"}, victims=("default/peer",)) == {"victim"}
    assert rules(c, {}, victims=("default/low",)) == {"victim"}
    assert rules(c, {}, victims=("default/pending",)) == {"victim"}


# ---- topology spread ----------------------------------------------------------------------------
def _spread(when: str = "DoNotSchedule") -> tuple[TopologySpreadConstraint, ...]:
    return (
        TopologySpreadConstraint(
            max_skew=1,
            topology_key="zone",
            when_unsatisfiable=when,
            label_selector=LabelSelector(match_labels={"app": "s"}),
        ),
    )


def _spread_cluster(when: str = "DoNotSchedule") -> Cluster:
    nodes = (node("a1", labels={"zone": "a"}), node("b1", labels={"zone": "b"}))
    bound = (
        pod("s0", cpu=0, on="a1", labels={"app": "s"}),
        pod("s1", cpu=0, on="a1", labels={"app": "s"}),
    )
    return Cluster(
        nodes=nodes,
        pods=(*bound, pod("new", cpu=0, labels={"app": "s"}, topology_spread=_spread(when))),
    )


def test_topology_spread_rejects_a_placement_beyond_max_skew():
    c = _spread_cluster()
    assert rules(c, {"default/new": "a1"}) == {"topology-spread"}
    assert rules(c, {"default/new": "b1"}) == set()


def test_topology_spread_counts_only_nodes_carrying_every_hard_constraints_key():
    """Regression: a node without the second constraint's key (``rack``) holds no domain upstream,
    so its zone-b value must not pull the minimum down to 0 (the validator once said skew 2)."""
    both = (
        TopologySpreadConstraint(
            max_skew=1,
            topology_key="zone",
            when_unsatisfiable="DoNotSchedule",
            label_selector=LabelSelector(match_labels={"app": "s"}),
        ),
        TopologySpreadConstraint(
            max_skew=5,
            topology_key="rack",
            when_unsatisfiable="DoNotSchedule",
            label_selector=LabelSelector(match_labels={"app": "s"}),
        ),
    )
    nodes = (node("a1", labels={"zone": "a", "rack": "r1"}), node("b-norack", labels={"zone": "b"}))
    bound = (pod("s0", cpu=0, on="a1", labels={"app": "s"}),)
    c = Cluster(
        nodes=nodes, pods=(*bound, pod("new", cpu=0, labels={"app": "s"}, topology_spread=both))
    )
    assert rules(c, {"default/new": "a1"}) == set()


def test_topology_spread_forgives_a_later_pod_without_the_constraint():
    """Regression (test_engines_agree): pg0-0 spreads on hostname and goes to n1 first; pg0-1 has
    no constraint and follows it there. Upstream accepts both; the final state (n1: 2, n0: 0) once
    made the validator report skew 2."""
    spread = (
        TopologySpreadConstraint(
            max_skew=1,
            topology_key=HOST,
            when_unsatisfiable="DoNotSchedule",
            label_selector=LabelSelector(match_labels={"group": "g"}),
        ),
    )
    c = Cluster(
        nodes=two_nodes(),
        pods=(
            pod("first", cpu=0, labels={"group": "g"}, topology_spread=spread),
            pod("second", cpu=0, labels={"group": "g"}),
        ),
    )
    assert rules(c, {"default/first": "n1", "default/second": "n1"}) == set()


def test_topology_spread_counts_new_pods_with_the_same_constraint_together():
    spread = (
        TopologySpreadConstraint(
            max_skew=1,
            topology_key=HOST,
            when_unsatisfiable="DoNotSchedule",
            label_selector=LabelSelector(match_labels={"group": "g"}),
        ),
    )
    c = Cluster(
        nodes=two_nodes(),
        pods=tuple(
            pod(f"w{i}", cpu=0, labels={"group": "g"}, topology_spread=spread) for i in range(3)
        ),
    )
    assert rules(c, {"default/w0": "n1", "default/w1": "n1", "default/w2": "n1"}) == {
        "topology-spread"
    }
    assert rules(c, {"default/w0": "n1", "default/w1": "n2", "default/w2": "n1"}) == set()


def test_topology_spread_with_schedule_anyway_never_blocks():
    assert rules(_spread_cluster("ScheduleAnyway"), {"default/new": "a1"}) == set()


# ---- result shape -------------------------------------------------------------------------------
def test_a_placement_on_an_unknown_node_is_a_shape_violation():
    c = Cluster(nodes=(node("n1"),), pods=(pod("p"),))
    assert rules(c, {"default/p": "ghost"}) == {"result-shape"}


def test_a_gated_pod_that_is_placed_is_a_shape_violation():
    c = Cluster(
        nodes=(node("n1"),),
        pods=(pod("p", scheduling_gates=("x",)),),
        gated={"default/p": "scheduling gates: x"},
    )
    assert rules(c, {"default/p": "n1"}) == {"result-shape"}


def test_a_missing_pending_pod_and_an_unknown_pod_are_shape_violations():
    c = Cluster(nodes=(node("n1"),), pods=(pod("p"), pod("b", on="n1")))
    result = Result(
        engine="test", status=Status.HEURISTIC, pods={"default/b": PodOutcome(node="n1")}
    )
    found = {(v.rule, v.subject) for v in validate(c, result)}
    assert found == {("result-shape", "default/p"), ("result-shape", "default/b")}


def test_group_outcome_counts_that_disagree_with_placements_are_shape_violations():
    g, members = _gang(2, 2)
    c = Cluster(nodes=(node("n1"),), pods=members, pod_groups={g.key: g})
    good = build_result(
        c, engine="test", status=Status.HEURISTIC, placements={"ml/w0": "n1", "ml/w1": "n1"}
    )
    lying = good.model_copy(
        update={"groups": {"ml/g": good.groups["ml/g"].model_copy(update={"placed": 5})}}
    )
    assert validate(c, good) == []
    assert {v.rule for v in validate(c, lying)} == {"result-shape"}


# ---- the Result document -------------------------------------------------------------------------
def test_a_result_survives_a_json_round_trip():
    g, members = _gang(2, 2, topology_key="zone")
    c = Cluster(
        nodes=(node("n1", labels={"zone": "a"}),),
        pods=(*members, pod("low", on="n1", priority=-1)),
        pod_groups={g.key: g},
    )
    r = build_result(
        c,
        engine="test",
        status=Status.FEASIBLE,
        placements={"ml/w0": "n1", "ml/w1": "n1"},
        victims=("default/low",),
        bound={"placed": 2.0},
        gap=0.25,
        wall_seconds=1.5,
        params={"seed": 1},
        trace={"steps": [1, 2]},
    )
    text = r.to_json()
    assert Result.from_json(text) == r
    data = json.loads(text)
    assert data["groups"]["ml/g"] == {
        "admitted": True,
        "placed": 2,
        "minCount": 2,
        "pending": 2,
        "priority": 0,
        "domain": "zone=a",
        "reason": None,
    }
    assert data["wallSeconds"] == 1.5 and data["victims"] == ["default/low"]


def test_the_result_schema_names_the_contract_keys():
    schema = result_json_schema()
    top = schema["properties"]
    for key in (
        "engine",
        "status",
        "pods",
        "groups",
        "victims",
        "objective",
        "bound",
        "gap",
        "wallSeconds",
        "trace",
    ):
        assert key in top, key
    group = schema["$defs"]["GroupOutcome"]["properties"]
    for key in ("admitted", "placed", "minCount", "domain", "reason"):
        assert key in group, key
    assert set(schema["$defs"]["Status"]["enum"]) == {
        "HEURISTIC",
        "OPTIMAL",
        "FEASIBLE",
        "INFEASIBLE",
        "UNKNOWN",
    }


def test_every_key_a_result_writes_is_declared_in_the_schema():
    g, members = _gang(1, 1)
    c = Cluster(nodes=(node("n1"),), pods=members, pod_groups={g.key: g})
    data = json.loads(
        build_result(
            c, engine="test", status=Status.HEURISTIC, placements={"ml/w0": "n1"}
        ).to_json()
    )
    schema = result_json_schema()
    assert set(data) <= set(schema["properties"])
    assert set(data["groups"]["ml/g"]) <= set(schema["$defs"]["GroupOutcome"]["properties"])
    assert set(data["pods"]["ml/w0"]) <= set(schema["$defs"]["PodOutcome"]["properties"])


def test_a_bound_pods_overcommit_of_a_resource_no_new_pod_asks_for_is_not_the_results_doing(
    tmp_path,
):
    """Found by the structural fuzz: a bound pod requests an extended resource its node does not
    list. NodeResourcesFit checks only what the incoming pod requests, so kube-scheduler (and
    greedy) place a cpu-only pod there; the validator must accept that placement."""
    import gangplan as gp

    path = tmp_path / "s.yaml"
    path.write_text("""
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: old, namespace: ml}
spec:
  nodeName: n1
  containers: [{name: c, resources: {requests: {cpu: "1", example.com/widget: "3"}, limits: {example.com/widget: "3"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: new, namespace: ml}
spec:
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
""")
    cluster = gp.load(path)
    greedy = gp.solve(cluster)
    assert greedy.pods["ml/new"].node == "n1"
    assert gp.validate(cluster, greedy) == []
    widget = path.read_text().replace(
        'requests: {cpu: "1"}}}]\n',
        'requests: {cpu: "1", example.com/widget: "1"}, limits: {example.com/widget: "1"}}}]\n',
    )
    path.write_text(widget)
    cluster = gp.load(path)
    greedy = gp.solve(cluster)
    assert (
        greedy.pods["ml/new"].node is None
    )  # asking for the resource the node lacks: Insufficient
    assert gp.validate(cluster, greedy) == []


def test_the_kept_bound_pod_layout_gives_what_a_fresh_one_gives() -> None:
    """validate keeps the bound pods' layout beside the cluster (``_bound``, a ClusterMemo):
    validations of other Results on that cluster (victims removed, new pods added) find exactly
    the violations a fresh layout finds, and another cluster gets its own."""
    from gangplan.bench.generators.builders import to_cluster
    from gangplan.bench.generators.small_snapshots import small_mixed, small_preemption
    from gangplan.solver import validate as module
    from gangplan.solver.greedy import solve_greedy as greedy

    compared = refused = 0
    for seed in range(6):
        for cluster in (to_cluster(small_preemption(seed)), to_cluster(small_mixed(seed))):
            r = greedy(cluster, preemption=True)
            bound = [p.key for p in cluster.bound_pods]
            variants = [r]
            for k in bound[:3]:  # made-up victims: valid or not, the answers must agree
                variants.append(r.model_copy(update={"victims": [*r.victims, k]}))
            if r.victims:
                variants.append(r.model_copy(update={"victims": r.victims[1:]}))
            fresh = []
            for v in variants:
                cluster._derived = None  # a fresh layout for each
                fresh.append([str(x) for x in module.validate(cluster, v)])
            kept = module._bound(cluster)
            for v, want in zip(variants, fresh, strict=True):  # one layout, kept across them all
                assert [str(x) for x in module.validate(cluster, v)] == want
                assert module._bound(cluster) is kept
                compared += 1
            refused += sum(1 for f in fresh if f)
            # the layout of the previous cluster is not used for this one
            other = to_cluster(small_mixed(seed + 100))
            assert [str(x) for x in module.validate(other, greedy(other))] == []
            assert module._bound(other) is not kept and module._bound(cluster) is kept
    assert compared > 40
    assert 0 < refused < compared  # some variants are refused, some accepted
