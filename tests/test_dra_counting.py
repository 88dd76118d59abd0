"""The structured allocator's counting path (gangplan.dra.allocator._counted): where the devices
a node's requests can take are interchangeable (the same set, or disjoint sets, per request; no
constraints, shared devices or capacity requests), the allocation is decided by counting free
devices, and the devices named are the depth-first search's first full solution
(``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/incubating/
allocator_incubating.go``, kubernetes/kubernetes v1.36). The property: on random small slices,
claims and selectors, counting and the search give the same answer, device for device, and both
agree with the brute force.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gangplan.dra.allocator import (
    _SEARCH,
    AllocationError,
    _counted,
    allocate_joint,
    allocate_results,
    brute_force_exists,
)
from gangplan.dra.model import Constraint, Device, DeviceClass, DeviceRequest

DRIVER = "driver-a"
GI = 1024**3
CLASSES = {"class-a": DeviceClass(name="class-a", selectors=(f'device.driver == "{DRIVER}"',))}
SELECTORS = {
    "any": (),
    "big": (f'device.capacity["{DRIVER}"].memory.compareTo(quantity("2Gi")) >= 0',),
    "h100": ('device.attributes["driver-a"].model == "H100"',),
    "a100": ('device.attributes["driver-a"].model == "A100"',),
}


def dev(i: int, mem: int, model: str, shared: bool = False) -> Device:
    return Device(
        driver=DRIVER,
        pool="pool-1",
        slice="slice-1",
        name=f"d{i}",
        attributes={DRIVER: {"model": model}},
        capacity={DRIVER: {"memory": mem * GI}},
        allow_multiple=shared,
    )


def run(claims, devices, in_use, constraints=None, counting=True):
    try:
        return allocate_results(
            claims, devices, in_use, CLASSES, None, {}, constraints, True, counting=counting
        )
    except AllocationError as e:
        return ("error", str(e))


def joint(claims, devices, in_use, counting=True):
    try:
        return allocate_joint(
            claims, devices, in_use, CLASSES, None, None, True, {}, counting=counting
        )
    except AllocationError as e:
        return ("error", str(e))


devices_st = st.lists(
    st.tuples(st.integers(1, 3), st.sampled_from(["H100", "A100"])), min_size=0, max_size=6
)
claims_st = st.lists(
    st.lists(
        st.tuples(st.sampled_from(sorted(SELECTORS)), st.integers(1, 3)), min_size=1, max_size=2
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=150, deadline=None)
@given(devs=devices_st, spec=claims_st, used=st.sets(st.integers(0, 5), max_size=3))
def test_counting_equals_search(devs, spec, used) -> None:
    devices = [dev(i, m, model) for i, (m, model) in enumerate(devs)]
    in_use = {(DRIVER, "pool-1", f"d{i}") for i in used}
    claims = [
        (
            f"c{k}",
            tuple(
                DeviceRequest(f"r{j}", "class-a", SELECTORS[sel], count=n)
                for j, (sel, n) in enumerate(reqs)
            ),
        )
        for k, reqs in enumerate(spec)
    ]
    fast = run(claims, devices, in_use)
    assert fast == run(claims, devices, in_use, counting=False)
    assert joint(claims, devices, in_use) == joint(claims, devices, in_use, counting=False)
    if sum(r.count for _, rs in claims for r in rs) <= 4:
        assert (fast is not None) == brute_force_exists(claims, devices, in_use, CLASSES)


@settings(max_examples=60, deadline=None)
@given(devs=devices_st, spec=claims_st, shared=st.booleans(), constrained=st.booleans())
def test_counting_declines_what_it_cannot_count(devs, spec, shared, constrained) -> None:
    """Shared devices and constraints go to the search; the answer is the search's either way."""
    devices = [dev(i, m, model, shared=shared and i == 0) for i, (m, model) in enumerate(devs)]
    claims = [
        (
            f"c{k}",
            tuple(
                DeviceRequest(f"r{j}", "class-a", SELECTORS[sel], count=n)
                for j, (sel, n) in enumerate(reqs)
            ),
        )
        for k, reqs in enumerate(spec)
    ]
    cons = {"c0": (Constraint(kind="match", attribute=(DRIVER, "model")),)} if constrained else None
    if (shared and devices) or constrained:
        assert _counted(claims, devices, set(), CLASSES, None, {}, cons) is _SEARCH
    assert run(claims, devices, set(), cons) == run(claims, devices, set(), cons, counting=False)


def test_counting_answers_the_common_case() -> None:
    """Eight interchangeable GPUs, two taken, a pod asking for two: counted, first free devices."""
    devices = [dev(i, 1, "H100") for i in range(8)]
    in_use = {(DRIVER, "pool-1", "d0"), (DRIVER, "pool-1", "d2")}
    claims = [("c", (DeviceRequest("r", "class-a", count=2),))]
    got = _counted(claims, devices, in_use, CLASSES, None, {}, None)
    assert got is not _SEARCH
    assert [r.device[2] for r in got["c"]] == ["d1", "d3"]
    assert (
        _counted(
            [("c", (DeviceRequest("r", "class-a", count=7),))],
            devices,
            in_use,
            CLASSES,
            None,
            {},
            None,
        )
        is None
    )


# ---- the DynamicResources plugin: counted Filter / replay == the allocator's ------------------
def _outcome(result):
    return {
        k: (o.node, [(c.claim, c.driver, c.pool, c.device) for c in o.claims])
        for k, o in sorted(result.pods.items())
    }


@settings(max_examples=12, deadline=None)
@given(
    nodes=st.integers(2, 5),
    gangs=st.integers(1, 4),
    size=st.sampled_from([1, 2, 4]),
    gpus=st.sampled_from([1, 2, 3, 8]),
    use=st.sampled_from([0.0, 0.4, 0.7]),
    channels=st.booleans(),
    seed=st.integers(0, 3),
)
def test_plugin_counting_equals_the_allocator(
    nodes, gangs, size, gpus, use, channels, seed
) -> None:
    """On random small H100 DRA clusters (KEP-5004 GPUs, with or without ComputeDomain channel
    claims), the greedy run with the plugin's counting and the allocator's counting turned off
    (every Filter and replay by the depth-first search) places every pod on the same node with
    the same devices, and both results validate."""
    import gangplan.dra.allocator as allocator
    from gangplan.bench.generators.builders import to_cluster
    from gangplan.bench.generators.dra_gpu import to_dra
    from gangplan.bench.generators.topology_shapes import dgx_h100_superpod
    from gangplan.solver.greedy import solve_greedy
    from gangplan.solver.greedy.plugins.dynamicresources import DynamicResources
    from gangplan.solver.validate import validate

    base = dgx_h100_superpod(
        nodes=nodes,
        utilisation=use,
        gangs=gangs,
        gang_sizes=(size,),
        gpus_per_pod=gpus,
        topology_key=None,
        seed=seed,
    )
    objects = to_dra(base, model="H100", channels=channels)
    fast_cluster = to_cluster(objects)
    fast = solve_greedy(fast_cluster)
    assert validate(fast_cluster, fast) == []
    with pytest.MonkeyPatch.context() as m:
        m.setattr(DynamicResources, "_counted", lambda self, pod, node, state: None)
        m.setattr(allocator, "_counted", lambda *a, **k: allocator._SEARCH)
        slow_cluster = to_cluster(objects)
        slow = solve_greedy(slow_cluster)
    assert validate(slow_cluster, slow) == []
    assert _outcome(fast) == _outcome(slow)
