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

from hypothesis import given, settings
from hypothesis import strategies as st

from gangplan.dra.allocator import (
    _SEARCH,
    AllocationError,
    _counted,
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
    return Device(driver=DRIVER, pool="pool-1", slice="slice-1", name=f"d{i}", attributes={DRIVER: {"model": model}},
                  capacity={DRIVER: {"memory": mem * GI}}, allow_multiple=shared)


def run(claims, devices, in_use, constraints=None, counting=True):
    try:
        return allocate_results(claims, devices, in_use, CLASSES, None, {}, constraints, True, counting=counting)
    except AllocationError as e:
        return ("error", str(e))


devices_st = st.lists(st.tuples(st.integers(1, 3), st.sampled_from(["H100", "A100"])), min_size=0, max_size=6)
claims_st = st.lists(st.lists(st.tuples(st.sampled_from(sorted(SELECTORS)), st.integers(1, 3)), min_size=1, max_size=2), min_size=1, max_size=3)


@settings(max_examples=150, deadline=None)
@given(devs=devices_st, spec=claims_st, used=st.sets(st.integers(0, 5), max_size=3))
def test_counting_equals_search(devs, spec, used) -> None:
    devices = [dev(i, m, model) for i, (m, model) in enumerate(devs)]
    in_use = {(DRIVER, "pool-1", f"d{i}") for i in used}
    claims = [(f"c{k}", tuple(DeviceRequest(f"r{j}", "class-a", SELECTORS[sel], count=n) for j, (sel, n) in enumerate(reqs)))
              for k, reqs in enumerate(spec)]
    fast = run(claims, devices, in_use)
    assert fast == run(claims, devices, in_use, counting=False)
    if sum(r.count for _, rs in claims for r in rs) <= 4:
        assert (fast is not None) == brute_force_exists(claims, devices, in_use, CLASSES)


@settings(max_examples=60, deadline=None)
@given(devs=devices_st, spec=claims_st, shared=st.booleans(), constrained=st.booleans())
def test_counting_declines_what_it_cannot_count(devs, spec, shared, constrained) -> None:
    """Shared devices and constraints go to the search; the answer is the search's either way."""
    devices = [dev(i, m, model, shared=shared and i == 0) for i, (m, model) in enumerate(devs)]
    claims = [(f"c{k}", tuple(DeviceRequest(f"r{j}", "class-a", SELECTORS[sel], count=n) for j, (sel, n) in enumerate(reqs)))
              for k, reqs in enumerate(spec)]
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
    assert _counted([("c", (DeviceRequest("r", "class-a", count=7),))], devices, in_use, CLASSES, None, {}, None) is None
