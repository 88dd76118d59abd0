"""Aggregation of symmetric anti-affine gangs (gangplan.solver.exact.aggregation) is exact.

Random small snapshots with several gangs whose pods are anti-affine to each other (hostname or
zone key; identical gangs differ only in their ``job`` label) next to plain pods, gangs whose term
also selects another gang (must stay per node) and bound pods the terms select: the aggregated
model and the per-node model (``aggregation.ENABLED = False``) reach the same optimum on every
decision tier, and the aggregated result is valid by the independent validator.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangplan.bench.generators.builders import node_object, pod_group_object, pod_object, to_cluster
from gangplan.models.result import Status
from gangplan.models.well_known import HOSTNAME, ZONE
from gangplan.solver.exact import aggregation, build_model, solve_exact
from gangplan.solver.validate import validate


def _anti(labels: dict[str, str], key: str) -> dict:
    term = {"labelSelector": {"matchLabels": labels}, "topologyKey": key}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


@st.composite
def anti_affine_snapshots(draw) -> list[dict]:
    objs: list[dict] = []
    n_nodes = draw(st.integers(2, 5))
    for i in range(n_nodes):
        labels = {HOSTNAME: f"n{i}"}
        if draw(st.integers(0, 5)):  # most nodes have a zone, a few do not
            labels[ZONE] = f"z{i % 2}"
        objs.append(node_object(f"n{i}", cpu=str(draw(st.sampled_from([2, 3, 4]))), labels=labels))
    for b in range(draw(st.integers(0, 2))):  # bound pods, some selected by the gangs' terms
        job = draw(st.sampled_from(["other", "g0"]))
        objs.append(
            pod_object(
                f"bound-{b}",
                node_name=f"n{draw(st.integers(0, n_nodes - 1))}",
                requests={"cpu": "1"},
                labels={"job": job},
                created=0,
            )
        )
    key = draw(st.sampled_from([HOSTNAME, ZONE]))
    cpu = draw(st.sampled_from(["1", "2"]))
    created = 10
    for g in range(draw(st.integers(2, 4))):
        size = draw(st.sampled_from([1, 2, 2, 3]))
        prio = draw(st.sampled_from([10, 10, 50]))
        kind = draw(st.sampled_from(["self", "self", "self", "also-g0", "plain"]))
        gang_key = key if draw(st.integers(0, 3)) else draw(st.sampled_from([HOSTNAME, ZONE]))
        labels = {"job": f"g{g}"}
        selector = {"job": f"g{g}"} if kind != "also-g0" else {"team": "x"}
        if kind == "also-g0":
            labels["team"] = "x"  # several gangs share this term: they interact, stay per node
        objs.append(pod_group_object(f"g{g}", min_count=size, priority=prio, created=created))
        for j in range(size):
            objs.append(
                pod_object(
                    f"g{g}-{j}",
                    group=f"g{g}",
                    requests={"cpu": cpu},
                    priority=prio,
                    labels=labels,
                    affinity=None if kind == "plain" else _anti(selector, gang_key),
                    created=created + 1,
                )
            )
        created += 2
    for s in range(draw(st.integers(0, 2))):
        objs.append(
            pod_object(
                f"single-{s}", requests={"cpu": "1"}, labels={"job": "single"}, created=created + s
            )
        )
    return objs


def _decision(result) -> dict[str, float]:
    return {k: v for k, v in result.objective.items() if k.startswith("admitted") or k == "placed"}


def _solve(cluster, enabled: bool):
    before = aggregation.ENABLED
    aggregation.ENABLED = enabled
    try:
        return solve_exact(cluster, time_limit=10.0, workers=1, seed=0, preemption=False)
    finally:
        aggregation.ENABLED = before


@settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(anti_affine_snapshots())
def test_aggregated_anti_affine_gangs_reach_the_per_node_optimum(objs):
    cluster = to_cluster(objs)
    pooled = _solve(cluster, True)
    per_node = _solve(cluster, False)
    assert pooled.status == per_node.status == Status.OPTIMAL
    assert [str(v) for v in validate(cluster, pooled)] == []
    assert _decision(pooled) == _decision(per_node)


def _identical_gangs(gangs: int, size: int, key: str, nodes: int = 6) -> list[dict]:
    objs = [
        node_object(f"n{i}", cpu="4", labels={HOSTNAME: f"n{i}", ZONE: f"z{i % 3}"})
        for i in range(nodes)
    ]
    for g in range(gangs):
        objs.append(pod_group_object(f"g{g}", min_count=size, priority=10, created=2 * g))
        objs += [
            pod_object(
                f"g{g}-{j}",
                group=f"g{g}",
                requests={"cpu": "1"},
                priority=10,
                labels={"job": f"g{g}"},
                affinity=_anti({"job": f"g{g}"}, key),
                created=2 * g + 1,
            )
            for j in range(size)
        ]
    return objs


@pytest.mark.parametrize(
    ("key", "gangs", "size", "admitted"),
    [
        (
            HOSTNAME,
            5,
            4,
            5,
        ),  # 20 pods on 6 nodes x 4 CPU: every gang fits, each on 4 distinct nodes
        (HOSTNAME, 5, 7, 0),  # 7 distinct nodes needed, 6 exist
        (ZONE, 5, 3, 5),  # 3 zones: one pod per zone and gang
        (ZONE, 9, 3, 8),  # 8 gangs x 3 pods fill the 24 CPUs
    ],
)
def test_identical_anti_affine_gangs_share_one_pooled_shape(key, gangs, size, admitted):
    cluster = to_cluster(_identical_gangs(gangs, size, key))
    em = build_model(cluster).em
    assert sum(em.private) == 0 and len(em.shapes) == 1 and em.shapes[0].anti_key == key
    r = _solve(cluster, True)
    assert r.status == Status.OPTIMAL
    assert r.objective["admitted[p=10]"] == admitted
    assert [str(v) for v in validate(cluster, r)] == []


def test_a_term_selecting_another_gang_keeps_both_per_node():
    objs = _identical_gangs(2, 2, HOSTNAME)
    for o in objs:  # g0's term now selects g1's pods too
        if o["kind"] == "Pod" and o["metadata"]["name"].startswith("g0-"):
            o["spec"]["affinity"] = _anti({"team": "x"}, HOSTNAME)
            o["metadata"]["labels"]["team"] = "x"
        if o["kind"] == "Pod" and o["metadata"]["name"].startswith("g1-"):
            o["metadata"]["labels"]["team"] = "x"
    em = build_model(to_cluster(objs)).em
    assert em.private == [True, True]
