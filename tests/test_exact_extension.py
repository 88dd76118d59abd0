"""Adding a constraint family through the documented steps (docs/how-to/extend.md, "A
constraint family"): a toy family, "at most K pods of a PodGroup per node", written as its own
module would be (the functions below), registered with one line (``registry.FAMILIES`` plus the
record, done here with monkeypatch so the registry file stays as it is), and tested. Every Result
goes through the independent validator; the toy rule is checked on top of it."""

from __future__ import annotations

from collections import Counter

import pytest
from ortools.sat.python import cp_model

from gangplan.bench.generators.builders import node_object, pod_group_object, pod_object, to_cluster
from gangplan.models.result import Status
from gangplan.models.well_known import HOSTNAME
from gangplan.solver.exact import build_model, check_feasible, registry, solve_exact
from gangplan.solver.exact.build import rule_families
from gangplan.solver.exact.family import BuildContext, Family, Layout
from gangplan.solver.exact.instance import Instance
from gangplan.solver.validate import validate
from tests.test_exact_hints import check_hint, counts_of, model_accepts_placement

MAX_PER_NODE = "max-per-node"


# ---- the family module (gangplan/solver/exact/maxpernode.py, were it real) ------------------------
def max_per_node_family(k: int) -> Family:
    """At most ``k`` pods of one PodGroup on a node: every grouped class gets per-node counts
    (``Layout.per_node``, at most ``k`` each), and per leaf group and node the classes' counts add
    up to at most ``k``."""

    def layout(inst: Instance, objective: str) -> Layout:
        return Layout(
            per_node={c.index: min(k, c.size) for c in inst.classes if c.group is not None}
        )

    def build(ctx: BuildContext) -> None:
        if not ctx.enforces(MAX_PER_NODE):
            return
        em = ctx.em
        for leaf in em.inst.leaves.values():
            nodes = sorted({n for c in leaf.classes for n in em.x[c]})
            for n in nodes:
                here = [(em.x[c][n], em.x_ub[c][n]) for c in leaf.classes if n in em.x[c]]
                if sum(ub for _, ub in here) > k:
                    em.model.add(cp_model.LinearExpr.sum([v for v, _ in here]) <= k)

    return Family(MAX_PER_NODE, layout=layout, build=build)


# ---- the registry line ------------------------------------------------------------------------------
@pytest.fixture
def register(monkeypatch):
    def add(family: Family) -> None:
        monkeypatch.setattr(registry, "FAMILIES", (*registry.FAMILIES, family))

    return add


# ---- its tests ------------------------------------------------------------------------------------
def cluster():
    """Two 4-CPU nodes; a gang of 4 one-CPU pods (minCount 4) in two pod shapes; a single pod."""
    objs = [node_object(n, cpu="4", labels={HOSTNAME: n}) for n in ("n1", "n2")]
    objs.append(pod_group_object("g", min_count=4))
    for i in range(4):
        objs.append(
            pod_object(
                f"g-{i}", group="g", requests={"cpu": "1", "memory": f"{1 + i % 2}Gi"}, created=i
            )
        )
    objs.append(pod_object("solo", requests={"cpu": "1"}, created=9))
    return to_cluster(objs)


def solve(c):
    r = solve_exact(c, time_limit=10.0, workers=1)
    assert [str(v) for v in validate(c, r)] == []
    assert r.status == Status.OPTIMAL
    return r


def per_node(r, prefix="default/g-") -> Counter:
    return Counter(n for k, n in r.placements().items() if k.startswith(prefix))


PACKED = {
    "default/g-0": "n1",
    "default/g-1": "n1",
    "default/g-2": "n1",
    "default/g-3": "n1",
    "default/solo": "n2",
}
"""The whole gang on one node: valid without the toy family."""


def test_without_the_family_every_pod_is_placed_and_packing_is_allowed():
    c = cluster()
    r = solve(c)
    assert r.admitted_groups() == ["default/g"] and r.objective["placed"] == 5.0
    assert check_feasible(c, PACKED) is True


def test_at_most_two_per_node_splits_the_gang_and_keeps_every_pod(register):
    register(max_per_node_family(2))
    assert MAX_PER_NODE in rule_families()
    r = solve(cluster())
    assert r.admitted_groups() == ["default/g"] and r.objective["placed"] == 5.0
    assert sorted(per_node(r).values()) == [2, 2]


def test_at_most_one_per_node_leaves_the_gang_out(register):
    register(max_per_node_family(1))
    r = solve(cluster())
    assert r.admitted_groups() == [] and r.objective["placed"] == 1.0
    assert r.pods["default/solo"].node is not None


def test_check_feasible_names_the_family_and_hints_stay_complete(register):
    c = cluster()
    register(max_per_node_family(2))
    assert check_feasible(c, PACKED) == [MAX_PER_NODE]
    r = solve(c)
    assert check_feasible(c, r.placements()) is True
    built = build_model(c)
    cnt = counts_of(built, r.placements(), r.victims)
    assert cnt is not None and model_accepts_placement(built, cnt)
    check_hint(built, cnt, "optimum under max-per-node")


def test_the_registry_is_the_one_place_a_family_is_added(register):
    before = [f.name for f in registry.FAMILIES]
    register(max_per_node_family(2))
    assert [f.name for f in registry.FAMILIES] == [*before, MAX_PER_NODE]
    assert len(set(before)) == len(before)
