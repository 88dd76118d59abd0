"""The top admission tier's bound from the per-domain relaxation (gangplan.solver.exact.domain_bound):
never below the proven optimum, and where the engine uses it, a tier proven by it."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangplan.bench.generators.builders import node_object, pod_group_object, pod_object
from gangplan.io.loader import load_objects
from gangplan.models.result import Status
from gangplan.models.well_known import GPU, HOSTNAME, RACK
from gangplan.solver.exact import domain_bound as db
from gangplan.solver.exact import solve_exact
from gangplan.solver.exact.build import build_model
from gangplan.solver.validate import validate

PER_GPU = {"cpu": "1", "memory": "1Gi"}


def gpu_requests(g: int) -> dict[str, str]:
    return {"cpu": str(g), "memory": f"{g}Gi", GPU: str(g)}


def build(
    nodes: list[tuple[str, int, int]], gangs: list[tuple[int, int, bool, bool]], singles: list[int]
):
    """``nodes``: (rack, GPUs, GPUs already used); ``gangs``: (pods, GPUs per pod, rack-held,
    gang (else basic)); ``singles``: GPUs per single pod."""
    objs = []
    for i, (rack, gpus, used) in enumerate(nodes):
        name = f"n{i}"
        objs.append(
            node_object(
                name,
                cpu=str(gpus),
                memory=f"{gpus}Gi",
                gpus=gpus,
                labels={HOSTNAME: name, RACK: rack},
            )
        )
        if used:
            objs.append(
                pod_object(f"run-{i}", node_name=name, requests=gpu_requests(used), created=0)
            )
    t = 1
    for j, (size, g, held, is_gang) in enumerate(gangs):
        objs.append(
            pod_group_object(
                f"g{j}",
                min_count=size if is_gang else 1,
                policy="gang" if is_gang else "basic",
                topology_key=RACK if held else None,
            )
        )
        for k in range(size):
            objs.append(pod_object(f"g{j}-{k}", group=f"g{j}", requests=gpu_requests(g), created=t))
            t += 1
    for s, g in enumerate(singles):
        objs.append(pod_object(f"s{s}", requests=gpu_requests(g), created=t))
        t += 1
    return load_objects(objs)


node_st = st.tuples(st.sampled_from(["r0", "r1"]), st.sampled_from([2, 4]), st.integers(0, 3))
gang_st = st.tuples(st.integers(1, 3), st.sampled_from([1, 2, 4]), st.booleans(), st.booleans())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.lists(node_st, min_size=2, max_size=5),
    gangs=st.lists(gang_st, min_size=1, max_size=4),
    singles=st.lists(st.sampled_from([1, 2, 4]), max_size=3),
)
def test_the_domain_bound_is_never_below_the_proven_optimum(nodes, gangs, singles):
    nodes = [(r, g, min(u, g)) for r, g, u in nodes]
    c = build(nodes, gangs, singles)
    found = db.domain_bound(build_model(c))
    if found is None:
        return
    r = solve_exact(c, time_limit=10.0, workers=1)  # small: no domain bound inside (MIN_VARIABLES)
    assert [str(v) for v in validate(c, r)] == []
    assert "domainBound" not in r.params
    assert r.status == Status.OPTIMAL
    assert found.bound >= r.objective[found.tier]


def two_racks():
    # Two racks of two 4-GPU nodes, each node with 2 GPUs in use: a rack has 4 free GPUs, 2 per node.
    # Three rack-held gangs of 2 x 2 GPUs: one per rack fits, the third nowhere (trivial bound 3).
    nodes = [("r0", 4, 2), ("r0", 4, 2), ("r1", 4, 2), ("r1", 4, 2)]
    return build(nodes, [(2, 2, True, True)] * 3, [])


def test_a_small_instance_where_the_domain_bound_is_the_optimum():
    c = two_racks()
    built = build_model(c)
    found = db.domain_bound(built)
    assert found is not None and found.trivial == 3 and found.bound == 2


def test_the_engine_proves_the_tier_by_the_domain_bound_and_says_so(monkeypatch):
    monkeypatch.setattr(db, "MIN_VARIABLES", 0)
    c = two_racks()
    r = solve_exact(c, time_limit=10.0, workers=1)
    assert [str(v) for v in validate(c, r)] == []
    tier = "admitted[p=0]"
    assert r.objective[tier] == 2 and r.bound[tier] == 2
    assert r.params["domainBound"]["bound"] == 2 and r.params["domainBound"]["trivial"] == 3
    assert r.status == Status.OPTIMAL


def test_no_domain_bound_with_preemption_or_forced_pods():
    c = two_racks()
    assert db.relaxation(build_model(c, fixed={"default/g0-0": "n0"})) is None
