"""``allocationMode: All`` (issue 23): every matching device of the node's pools, in the
allocator, both engines and the validator.

Semantics of ``validateDeviceRequest`` / ``allocateOne`` / ``allocateDevice(must=true)`` in
``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/allocator_stable.go``
(and ``incubating/``, kubernetes/kubernetes @03ab440c): the devices are every device of the
node's pools matching the class and request selectors, in use or not; a pool of the node that is
incomplete fails the claim with an error; no matching device, or one of them in use (or its
counters or capacity short), means no allocation (earlier requests may still backtrack); a
constraint refusing one of them is an error. Cases from upstream's ``TestAllocator`` table
(``allocatortesting/allocator_testing.go``, newest stored version @008b3652), named as there.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gangplan.dra.allocator import (
    AllocationError,
    allocate_joint,
    allocate_results,
    brute_force_exists,
)
from gangplan.dra.model import Constraint, Device, DeviceClass, DeviceRequest
from gangplan.io.loader import load_objects
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

CLASSES = {
    "class-a": DeviceClass(name="class-a", selectors=('device.driver == "driver-a"',)),
    "class-b": DeviceClass(name="class-b", selectors=('device.driver == "driver-b"',)),
}


def dev(driver: str, name: str, pool: str = "pool-1", **kw) -> Device:
    return Device(driver=driver, pool=pool, slice="slice-1", name=name, **kw)


def all_of(cls: str = "class-a", name: str = "req-0") -> DeviceRequest:
    return DeviceRequest(name=name, device_class=cls, all=True)


def one_of(cls: str = "class-a", name: str = "req-0") -> DeviceRequest:
    return DeviceRequest(name=name, device_class=cls)


def got(claims, devices, in_use=()):
    out = allocate_results(claims, devices, set(in_use), CLASSES)
    return None if out is None else {k: [r.device for r in v] for k, v in out.items()}


A1, A2, B1 = dev("driver-a", "device-1"), dev("driver-a", "device-2"), dev("driver-b", "device-1")


def test_all_devices_many_plus_another() -> None:
    claims = [("claim-0", (all_of(),)), ("claim-1", (one_of("class-b"),))]
    assert got(claims, [A1, A2, B1]) == {"claim-0": [A1.id, A2.id], "claim-1": [B1.id]}


def test_all_devices_many_plus_another_reversed() -> None:
    claims = [("claim-1", (one_of("class-b"),)), ("claim-0", (all_of(),))]
    assert got(claims, [A1, A2, B1]) == {"claim-1": [B1.id], "claim-0": [A1.id, A2.id]}


def test_all_devices_no_solution() -> None:
    """One device, an ExactCount claim and an All claim both want it."""
    assert got([("claim-1", (one_of(),)), ("claim-0", (all_of(),))], [A1]) is None


def test_all_devices_no_solution_reversed() -> None:
    assert got([("claim-0", (all_of(),)), ("claim-1", (one_of(),))], [A1]) is None


@pytest.mark.parametrize(
    "case, devices", [("all-devices-slice-without-devices", []), ("all-devices-no-slices", [])]
)
def test_all_devices_without_devices_fail(case, devices) -> None:
    assert got([("claim-0", (all_of(),))], devices) is None, case


def test_all_devices_some_allocated() -> None:
    assert got([("claim-0", (all_of(),))], [A1, A2], {A1.id}) is None


def test_all_devices_backtracks_an_earlier_request_off_its_devices() -> None:
    """Not an upstream case, upstream's behaviour: the All request fails on device-1 while the
    earlier ExactCount request of class-any holds it, so the search moves that request to
    driver-b's device and the All request then takes both driver-a devices."""
    cls = {**CLASSES, "any": DeviceClass(name="any")}
    claims = [("claim-0", (DeviceRequest(name="one", device_class="any"), all_of(name="all")))]
    out = allocate_results(claims, [A1, A2, B1], set(), cls)
    assert [r.device for r in out["claim-0"]] == [B1.id, A1.id, A2.id]


def test_all_devices_in_an_incomplete_pool_is_an_error() -> None:
    """validateDeviceRequest: "asks for all devices, but resource pool ... is currently being updated"."""
    with pytest.raises(AllocationError, match="currently being updated"):
        allocate_results(
            [("claim-0", (all_of(),))],
            [dev("driver-a", "device-1", pool_incomplete=True)],
            set(),
            CLASSES,
        )


def test_all_devices_refused_by_a_constraint_is_an_error() -> None:
    """allocateDevice with must: "cannot add device ... because a claim constraint would not be satisfied"."""
    a = dev("driver-a", "device-1", attributes={"driver-a": {"numa": 0}})
    b = dev("driver-a", "device-2", attributes={"driver-a": {"numa": 1}})
    cons = {"claim-0": (Constraint(kind="match", attribute=("driver-a", "numa")),)}
    with pytest.raises(AllocationError, match="claim constraint would not be satisfied"):
        allocate_results([("claim-0", (all_of(),))], [a, b], set(), CLASSES, constraints=cons)


# ---- both engines and the validator ----------------------------------------------------------


def _cluster(nodes: dict[str, int], pods: list[str], used: dict[str, int] | None = None):
    """Nodes with ``k`` devices of driver-a each; pods asking for ``all`` or ``one`` device of
    class-a through their own template claim; ``used``: node -> devices allocated to a bound claim."""
    objs = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "class-a"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "driver-a"'}}]},
        }
    ]
    for mode in ("all", "one"):
        exactly = (
            {"deviceClassName": "class-a", "allocationMode": "All"}
            if mode == "all"
            else {"deviceClassName": "class-a"}
        )
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": mode, "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}}},
            }
        )
    for n, k in nodes.items():
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": n},
                "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}},
            }
        )
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": n},
                "spec": {
                    "driver": "driver-a",
                    "nodeName": n,
                    "pool": {"name": n, "generation": 0, "resourceSliceCount": 1},
                    "devices": [{"name": f"g{j}"} for j in range(k)],
                },
            }
        )
    for n, k in (used or {}).items():
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"held-{n}", "namespace": "default"},
                "spec": {
                    "devices": {
                        "requests": [
                            {"name": "r", "exactly": {"deviceClassName": "class-a", "count": k}}
                        ]
                    }
                },
                "status": {
                    "allocation": {
                        "devices": {
                            "results": [
                                {"request": "r", "driver": "driver-a", "pool": n, "device": f"g{j}"}
                                for j in range(k)
                            ]
                        }
                    }
                },
            }
        )
    for i, mode in enumerate(pods):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{i}", "namespace": "default"},
                "spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                    "resourceClaims": [{"name": "g", "resourceClaimTemplateName": mode}],
                },
            }
        )
    return load_objects(objs)


def _both(c):
    return solve_greedy(c), solve_exact(c, time_limit=10, workers=1)


def test_an_all_claim_takes_every_device_of_its_node_in_both_engines() -> None:
    c = _cluster({"n0": 2, "n1": 3}, ["all", "all", "all"])
    assert c.warnings == ()
    for r in _both(c):
        assert validate(c, r) == [], r.engine
        placed = {
            k: (o.node, sorted(x.device for x in o.claims)) for k, o in r.pods.items() if o.node
        }
        assert sorted(placed.values()) == [("n0", ["g0", "g1"]), ("n1", ["g0", "g1", "g2"])], (
            r.engine
        )


def test_an_all_claim_never_shares_its_node_with_an_exact_count_claim_of_the_pair() -> None:
    """One node of two devices and a node of one device already held: the All pod and the one-device
    pod cannot share n0, and n1's only device is in use, so one of them stays pending in each
    engine; the exact engine's rows keep them apart (the validator agrees)."""
    c = _cluster({"n0": 2, "n1": 1}, ["all", "one"], used={"n1": 1})
    for r in _both(c):
        assert validate(c, r) == [], r.engine
        assert sum(o.node is not None for o in r.pods.values()) == 1, r.engine


def test_validator_rejects_an_all_claim_next_to_a_pod_on_its_devices() -> None:
    from gangplan.models.result import ClaimDevice, PodOutcome

    c = _cluster({"n0": 2}, ["all", "one"])
    g = solve_greedy(c)
    pods = dict(g.pods)
    pods["default/p0"] = PodOutcome(
        node="n0",
        claims=[ClaimDevice(claim="p0-g", request="r", driver="driver-a", pool="n0", device="g0")],
    )
    pods["default/p1"] = PodOutcome(
        node="n0",
        claims=[ClaimDevice(claim="p1-g", request="r", driver="driver-a", pool="n0", device="g1")],
    )
    found = validate(c, g.model_copy(update={"pods": pods}))
    assert any(v.rule == "dra" and v.name == "n0" for v in found), found
    assert any("allocationMode All" in v.message for v in found), found


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.lists(st.integers(0, 3), min_size=1, max_size=3),
    pods=st.lists(st.sampled_from(["all", "one"]), min_size=1, max_size=4),
    held=st.integers(0, 1),
)
def test_random_all_and_one_claims_both_engines_valid_and_exact_places_at_least_greedy(
    nodes, pods, held
) -> None:
    c = _cluster(
        {f"n{i}": k for i, k in enumerate(nodes)},
        pods,
        used={"n0": 1} if held and nodes[0] else None,
    )
    greedy, exact = _both(c)
    assert validate(c, greedy) == [] and validate(c, exact) == []
    assert sum(o.node is not None for o in exact.pods.values()) >= sum(
        o.node is not None for o in greedy.pods.values()
    )


@settings(max_examples=80, deadline=None)
@given(
    devs=st.lists(st.sampled_from(["driver-a", "driver-b"]), min_size=0, max_size=4),
    claims=st.lists(
        st.lists(
            st.tuples(st.sampled_from(["class-a", "class-b"]), st.booleans()),
            min_size=1,
            max_size=2,
        ),
        min_size=1,
        max_size=2,
    ),
    used=st.sets(st.integers(0, 3), max_size=1),
)
def test_allocator_agrees_with_brute_force_with_all_requests(devs, claims, used) -> None:
    devices = [dev(d, f"d{i}") for i, d in enumerate(devs)]
    in_use = {devices[i].id for i in used if i < len(devices)}
    cs = [
        (
            f"c{k}",
            tuple(
                DeviceRequest(name=f"r{j}", device_class=cls, all=a)
                for j, (cls, a) in enumerate(rs)
            ),
        )
        for k, rs in enumerate(claims)
    ]
    exists = brute_force_exists(cs, devices, in_use, CLASSES)
    for out in (
        allocate_results(cs, devices, set(in_use), CLASSES),
        allocate_joint(cs, devices, set(in_use), CLASSES),
    ):
        assert (out is not None) == exists
        if out is not None:
            picked = [r.device for rs in out.values() for r in rs]
            assert len(picked) == len(set(picked)) and not set(picked) & in_use
