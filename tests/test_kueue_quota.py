"""Kueue's quota arithmetic (gangplan.predicates.quota) against Kueue's own tests and against a
brute force written from the API documentation.

* ``TestAvailable`` (kubernetes-sigs/kueue pkg/cache/scheduler/resource_test.go, v0.19.2), ported
  into tests/fixtures/upstream_kueue_flavors/available.yaml: available / potentialAvailable before
  usage, with usage, and after removing it again.
* ``TestSnapshotAddRemoveWorkloadWithLendingLimit`` (pkg/cache/scheduler/snapshot_test.go,
  v0.19.2), ported into snapshot_lending_limit.yaml: node usage after removing and re-adding
  admitted workloads.
* A property test on random cohort trees: the documented semantics (``ClusterQueue`` and
  ``Cohort`` API reference: nominalQuota is the node's own, borrowingLimit caps what a node takes
  from its parent, lendingLimit caps what it gives to its parent) as a max-flow over the tree.
  A set of usages is allowed iff the flow can serve all of it; ``available`` must be exactly the
  most each ClusterQueue can add, ``potential_available`` the most it could hold alone, and the
  linear caps must hold exactly on the allowed usages.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangplan.models.kueue import (
    ClusterQueue,
    Cohort,
    FlavorQuotas,
    KueueAdmission,
    KueuePodSet,
    KueueState,
    KueueWorkload,
    PodSetAdmission,
    ResourceGroup,
    ResourceQuota,
)
from gangplan.predicates.quota import QuotaTree, format_amount, workload_usage

FIXTURES = Path(__file__).parent / "fixtures" / "upstream_kueue_flavors"
AVAILABLE = yaml.safe_load((FIXTURES / "available.yaml").read_text())
LENDING = yaml.safe_load((FIXTURES / "snapshot_lending_limit.yaml").read_text())


def _groups(groups: list[dict]) -> tuple[ResourceGroup, ...]:
    return tuple(
        ResourceGroup(
            covered_resources=tuple(g["covered_resources"]),
            flavors=tuple(
                FlavorQuotas(
                    name=f["name"], resources=tuple(ResourceQuota(**q) for q in f["resources"])
                )
                for f in g["flavors"]
            ),
        )
        for g in groups
    )


# --- TestAvailable ------------------------------------------------------------------------------


def _table(tree: QuotaTree, usage) -> tuple[dict, dict]:
    avail, potential = {}, {}
    for name, node in tree.cluster_queues.items():
        avail[name] = sorted([f, r, tree.available(name, f, r, usage)] for f, r in node.quotas)
        potential[name] = sorted(
            [f, r, tree.potential_available(name, f, r)] for f, r in node.quotas
        )
    return avail, potential


@pytest.mark.parametrize(
    "case", AVAILABLE["cases"], ids=[f"L{c['line']}:{c['name']}" for c in AVAILABLE["cases"]]
)
def test_upstream_available(case: dict) -> None:
    cqs = [
        ClusterQueue(
            name=c["name"], cohort=c.get("cohort"), resource_groups=_groups(c["resource_groups"])
        )
        for c in case["cluster_queues"]
    ]
    cohorts = [
        Cohort(
            name=c["name"],
            parent=c.get("parent"),
            resource_groups=_groups(c.get("resource_groups", [])),
        )
        for c in case["cohorts"]
    ]
    tree = QuotaTree.from_objects(cqs, cohorts)
    usage = tree.empty_usage()
    want_potential = {k: sorted(v) for k, v in case["want_potentially_available"].items()}
    avail, potential = _table(tree, usage)
    assert avail == want_potential  # before usage, available == potentiallyAvailable
    assert potential == want_potential
    for cq, rows in case["usage"].items():
        tree.add(usage, cq, {(f, r): q for f, r, q in rows})
    avail, potential = _table(tree, usage)
    assert avail == {k: sorted(v) for k, v in case["want_available"].items()}
    assert potential == want_potential
    for cq, rows in case["usage"].items():
        tree.remove(usage, cq, {(f, r): q for f, r, q in rows})
    avail, potential = _table(tree, usage)
    assert avail == want_potential
    assert potential == want_potential


# --- TestSnapshotAddRemoveWorkloadWithLendingLimit ----------------------------------------------


def _lending_state() -> KueueState:
    cqs = {
        c["name"]: ClusterQueue(
            name=c["name"],
            cohort=c["cohort"],
            resource_groups=(
                ResourceGroup(
                    covered_resources=("cpu",),
                    flavors=(
                        FlavorQuotas(
                            name="default",
                            resources=(
                                ResourceQuota(
                                    name="cpu",
                                    nominal=c["nominal"],
                                    lending_limit=c["lending_limit"],
                                ),
                            ),
                        ),
                    ),
                ),
            ),
        )
        for c in LENDING["cluster_queues"]
    }
    workloads = {
        f"/{name}": KueueWorkload(
            namespace="",
            name=name,
            podsets=(KueuePodSet(name="main", count=1, requests={"cpu": w["cpu"]}),),
            admission=KueueAdmission(
                cluster_queue=w["cluster_queue"],
                podsets=(
                    PodSetAdmission(
                        name="main",
                        flavors={"cpu": "default"},
                        resource_usage={"cpu": w["cpu"]},
                        count=1,
                    ),
                ),
            ),
        )
        for name, w in LENDING["admitted_workloads"].items()
    }
    return KueueState(cluster_queues=cqs, workloads=workloads)


@pytest.mark.parametrize(
    "case", LENDING["cases"], ids=[f"L{c['line']}:{c['name']}" for c in LENDING["cases"]]
)
def test_upstream_snapshot_lending_limit(case: dict) -> None:
    state = _lending_state()
    tree = QuotaTree.build(state)
    fr = ("default", "cpu")
    assert {
        n: tree.node(k).subtree_quota[fr]
        for n, k in (
            ("lend", ("Cohort", "lend")),
            ("lend-a", ("ClusterQueue", "lend-a")),
            ("lend-b", ("ClusterQueue", "lend-b")),
        )
    } == LENDING["want_subtree_quota"]
    usage = tree.usage_from(state.admitted())
    for name in case["remove"]:
        wl = state.workloads[f"/{name}"]
        tree.remove(usage, wl.admission.cluster_queue, workload_usage(wl))
    for name in case["add"]:
        wl = state.workloads[f"/{name}"]
        tree.add(usage, wl.admission.cluster_queue, workload_usage(wl))
    got = {
        "lend": usage.get(("Cohort", "lend"), fr),
        "lend-a": usage.get(("ClusterQueue", "lend-a"), fr),
        "lend-b": usage.get(("ClusterQueue", "lend-b"), fr),
    }
    assert got == case["want_usage"]


# --- details ------------------------------------------------------------------------------------


def test_format_amount_as_kueue_prints_quantities() -> None:
    assert format_amount("cpu", 1000) == "1"
    assert format_amount("cpu", 1500) == "1500m"
    assert format_amount("cpu", 2_000_000) == "2k"
    assert format_amount("memory", 5 * 2**20) == "5Mi"
    assert format_amount("memory", 1000) == "1k"
    assert format_amount("memory", 1536) == "1536"
    assert format_amount("example.com/gpu", 3) == "3"
    assert format_amount("cpu", 0) == "0"


def test_reclaimable_pods_scale_down_admitted_usage() -> None:
    wl = KueueWorkload(
        namespace="ns",
        name="w",
        podsets=(KueuePodSet(name="main", count=5, requests={"cpu": 1000}),),
        admission=KueueAdmission(
            cluster_queue="cq",
            podsets=(
                PodSetAdmission(
                    name="main", flavors={"cpu": "f"}, resource_usage={"cpu": 5000}, count=5
                ),
            ),
        ),
        reclaimable_pods={"main": 2},
    )
    assert workload_usage(wl) == {("f", "cpu"): 3000}


def test_cohort_cycle_is_left_out() -> None:
    cqs = [ClusterQueue(name="a", cohort="x"), ClusterQueue(name="b", cohort="z")]
    cohorts = [Cohort(name="x", parent="y"), Cohort(name="y", parent="x")]
    tree = QuotaTree.from_objects(cqs, cohorts)
    assert set(tree.cluster_queues) == {"b"}
    assert tree.excluded == {"a": "HasCycle", "cohort:x": "HasCycle", "cohort:y": "HasCycle"}


def test_fits_reports_borrowing_and_kueue_reason() -> None:
    def cq(name: str, nominal: int) -> ClusterQueue:
        quota = FlavorQuotas(name="f", resources=(ResourceQuota(name="cpu", nominal=nominal),))
        return ClusterQueue(
            name=name,
            cohort="co",
            resource_groups=(ResourceGroup(covered_resources=("cpu",), flavors=(quota,)),),
        )

    tree = QuotaTree.from_objects([cq("a", 2000), cq("b", 3000)], [])
    usage = tree.empty_usage()
    assert tree.fits("a", {("f", "cpu"): 2000}, usage) == (True, False, "")
    assert tree.fits("a", {("f", "cpu"): 4000}, usage) == (True, True, "")
    assert tree.fits("a", {("f", "cpu"): 6000}, usage) == (
        False,
        False,
        "insufficient unused quota for cpu in flavor f, 1 more needed",
    )


# --- the property test --------------------------------------------------------------------------

FR = ("f", "cpu")


@st.composite
def forests(draw):
    """Random cohort forests: cohorts (some Cohort objects with quota, some implicit) and
    ClusterQueues, each with nominal quota and optional borrowing / lending limits."""
    limit = st.one_of(st.none(), st.integers(0, 12))
    n_cohorts = draw(st.integers(0, 4))
    cohorts = []
    for i in range(n_cohorts):
        parent = draw(st.one_of(st.none(), st.integers(0, i - 1))) if i else None
        cohorts.append(
            Cohort(
                name=f"co{i}",
                parent=None if parent is None else f"co{parent}",
                resource_groups=_quota_groups(draw(st.integers(0, 6)), draw(limit), draw(limit))
                if draw(st.booleans())
                else (),
            )
        )
    n_cqs = draw(st.integers(1, 5))
    cqs = []
    for i in range(n_cqs):
        # index n_cohorts: a cohort named only by ClusterQueues (no Cohort object)
        parent = draw(st.one_of(st.none(), st.integers(0, n_cohorts)))
        cqs.append(
            ClusterQueue(
                name=f"cq{i}",
                cohort=None if parent is None else f"co{parent}",
                resource_groups=_quota_groups(draw(st.integers(0, 10)), draw(limit), draw(limit)),
            )
        )
    attempts = draw(st.lists(st.tuples(st.integers(0, n_cqs - 1), st.integers(1, 12)), max_size=12))
    return cqs, cohorts, attempts


def _quota_groups(nominal: int, borrowing: int | None, lending: int | None):
    q = ResourceQuota(name="cpu", nominal=nominal, borrowing_limit=borrowing, lending_limit=lending)
    return (
        ResourceGroup(
            covered_resources=("cpu",), flavors=(FlavorQuotas(name="f", resources=(q,)),)
        ),
    )


def _own_quota(obj) -> tuple[int, int | None, int | None]:
    for g in obj.resource_groups:
        for f in g.flavors:
            q = f.quota("cpu")
            if f.name == "f" and q is not None:
                return q.nominal, q.borrowing_limit, q.lending_limit
    return 0, None, None


def flow_allows(cqs, cohorts, usage: dict[str, int]) -> bool:
    """The documented semantics as a flow: every node supplies its own nominal quota; quota
    moves to a node's parent at most lendingLimit, from the parent at most borrowingLimit
    (none: unlimited); a ClusterQueue without a cohort has only its own. ``usage`` is allowed
    iff all of it can be served."""
    g = nx.DiGraph()
    g.add_node("source")
    g.add_node("sink")
    for obj, key in [
        *((c, ("Cohort", c.name)) for c in cohorts),
        *((q, ("CQ", q.name)) for q in cqs),
    ]:
        nominal, borrowing, lending = _own_quota(obj)
        g.add_edge("source", key, capacity=nominal)
        parent = obj.parent if key[0] == "Cohort" else obj.cohort
        if parent is not None:
            pk = ("Cohort", parent)
            if lending is None:
                g.add_edge(key, pk)
            else:
                g.add_edge(key, pk, capacity=lending)
            if borrowing is None:
                g.add_edge(pk, key)
            else:
                g.add_edge(pk, key, capacity=borrowing)
    for q in cqs:
        g.add_edge(("CQ", q.name), "sink", capacity=usage.get(q.name, 0))
    # implicit cohorts (named only by children) have no quota of their own
    for n in list(g.nodes):
        if isinstance(n, tuple) and n[0] == "Cohort" and ("source", n) not in g.edges:
            g.add_edge("source", n, capacity=0)
    value, _ = nx.maximum_flow(g, "source", "sink")
    return value == sum(usage.values())


def _has_cycle(cohorts) -> bool:
    parent = {c.name: c.parent for c in cohorts}
    for start in parent:
        seen, cur = set(), start
        while cur is not None:
            if cur in seen:
                return True
            seen.add(cur)
            cur = parent.get(cur)
    return False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests())
def test_available_matches_the_documented_semantics(forest) -> None:
    cqs, cohorts, attempts = forest
    assert not _has_cycle(cohorts)
    tree = QuotaTree.from_objects(cqs, cohorts)
    names = [q.name for q in cqs]
    usage = tree.empty_usage()
    held = dict.fromkeys(names, 0)
    # potential_available: the most a ClusterQueue could hold with everybody else empty
    for name in names:
        pot = tree.potential_available(name, *FR)
        assert flow_allows(cqs, cohorts, {name: pot})
        assert not flow_allows(cqs, cohorts, {name: pot + 1})
    for idx, amount in attempts:
        name = names[idx]
        if amount <= tree.available(name, *FR, usage):
            tree.add(usage, name, {FR: amount})
            held[name] += amount
        # every admitted state is allowed (no cap broken, limits respected) ...
        assert flow_allows(cqs, cohorts, held)
        assert tree.violated_caps(usage) == []
        # ... and available is exactly the most each ClusterQueue can still add
        for other in names:
            avail = tree.available(other, *FR, usage)
            more = dict(held)
            more[other] += avail
            assert flow_allows(cqs, cohorts, more), (other, avail)
            more[other] += 1
            assert not flow_allows(cqs, cohorts, more), (other, avail)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests(), st.lists(st.integers(0, 14), min_size=5, max_size=5))
def test_linear_caps_are_exactly_the_allowed_usages(forest, amounts) -> None:
    """For any usage (reachable by Kueue or not) the caps hold iff the flow serves it."""
    cqs, cohorts, _ = forest
    tree = QuotaTree.from_objects(cqs, cohorts)
    held = {q.name: amounts[i] for i, q in enumerate(cqs)}
    usage = tree.empty_usage()
    for name, q in held.items():
        tree.add(usage, name, {FR: q})
    assert (tree.violated_caps(usage) == []) == flow_allows(cqs, cohorts, held)


def test_caps_without_lending_limits_are_one_per_rule() -> None:
    def group(nominal: int, **kw):
        q = ResourceQuota(name="cpu", nominal=nominal, **kw)
        return (
            ResourceGroup(
                covered_resources=("cpu",), flavors=(FlavorQuotas(name="f", resources=(q,)),)
            ),
        )

    cqs = [
        ClusterQueue(name="a", cohort="co", resource_groups=group(4000, borrowing_limit=1000)),
        ClusterQueue(name="b", cohort="co", resource_groups=group(6000)),
    ]
    tree = QuotaTree.from_objects(cqs, [Cohort(name="co", resource_groups=group(2000))])
    caps = {(c.node, c.cluster_queues, c.value, c.rule) for c in tree.caps()}
    assert caps == {
        (("Cohort", "co"), ("a", "b"), 12000, "root"),
        (("ClusterQueue", "a"), ("a",), 5000, "borrowingLimit"),
    }
