"""KEP-5075 consumable capacity in the DRA layer: devices with ``allowMultipleAllocations``
shared by several claims, capacity request policies, both engines and the validator.

Unit cases are written from upstream's tests (kubernetes/kubernetes): ``TestConsumableCapacity``
in ``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/incubating/
consumable_capacity_test.go`` (its ``calculate-consumed-capacity``, ``violate-capacity-sharing`` and
``get-consumed-capacity-from-request`` subtests) and the ``consumable-capacity-*`` cases of
``TestAllocator`` (``structured/internal/allocatortesting/allocator_testing.go``); each test names
its case. ``withCapacityRequestPolicyRange`` there is the policy default 2, validRange (min 2,
step 2, max 4); ``withCapacityRequest(q)`` asks ``capacity-0: q``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gangplan.dra.allocator import (
    allocate,
    allocate_results,
    brute_force_exists,
    consumed_amount,
    consumption,
    violates,
)
from gangplan.dra.model import Device, DeviceClass, DeviceRequest, RequestPolicy
from gangplan.io.loader import load_objects, load_snapshot
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

FIXTURE = (
    Path(__file__).resolve().parent / "fixtures" / "dra" / "shared-gpu-consumable-capacity.yaml"
)
DRIVER = "driver-a"
CAP = (DRIVER, "capacity-0")
RANGE = RequestPolicy(default=2, min=2, step=2, max=4)
"""allocator_testing.go ``withCapacityRequestPolicyRange``."""


def classes() -> dict[str, DeviceClass]:
    return {
        "class-a": DeviceClass(
            name="class-a",
            selectors=(f'device.driver == "{DRIVER}" && device.allowMultipleAllocations == true',),
        )
    }


def shared(
    name: str, value: int | None = None, policy: RequestPolicy | None = None, multiple: bool = True
) -> Device:
    caps = {DRIVER: {"capacity-0": value}} if value is not None else {}
    return Device(
        driver=DRIVER,
        pool="pool-1",
        slice="slice-1",
        name=name,
        capacity=caps,
        allow_multiple=multiple,
        policies={CAP: policy} if policy is not None else {},
    )


def req(
    name: str = "req-0", amount: int | None = None, count: int = 1, cls: str = "class-a"
) -> DeviceRequest:
    return DeviceRequest(
        name, cls, count=count, capacity=(("capacity-0", amount),) if amount is not None else ()
    )


def dev_id(name: str) -> tuple[str, str, str]:
    return (DRIVER, "pool-1", name)


# ---- TestConsumableCapacity (consumable_capacity_test.go) ------------------------------------
@pytest.mark.parametrize(
    ("case", "requested", "value", "policy", "want"),
    [
        ("empty", None, 1, RequestPolicy(), 1),
        ("min in range", None, 2, RequestPolicy(default=1, min=1), 1),
        ("default in set", None, 2, RequestPolicy(default=1, valid_values=(1,)), 1),
        ("more than min in range", 2, 2, RequestPolicy(default=1, min=1), 2),
        ("less than min in range", 1, 2, RequestPolicy(default=1, min=2), 2),
        ("with step (round up)", 2, 3, RequestPolicy(default=1, min=1, step=2), 3),
        ("with step (no remaining)", 2, 2, RequestPolicy(default=1, min=1, step=1), 2),
        ("no policy: the request itself", 3, 10, None, 3),
        ("no policy, no request: the whole value", None, 10, None, 10),
    ],
)
def test_calculate_consumed_capacity(case, requested, value, policy, want) -> None:
    """TestConsumableCapacity/calculate-consumed-capacity (``calculateConsumedCapacity``)."""
    assert consumed_amount(requested, value, policy) == want, case


@pytest.mark.parametrize(
    ("case", "amount", "policy", "want"),
    [
        ("no constraint", 1, None, False),
        ("less than maximum", 1, RequestPolicy(default=1, min=1, max=2), False),
        ("more than maximum", 2, RequestPolicy(default=1, min=1, max=1), True),
        ("in set", 1, RequestPolicy(default=1, valid_values=(1,)), False),
        ("not in set", 2, RequestPolicy(default=1, valid_values=(1,)), True),
    ],
)
def test_violate_capacity_sharing(case, amount, policy, want) -> None:
    """TestConsumableCapacity/violate-capacity-sharing (``violatesPolicy``)."""
    assert violates(amount, policy) is want, case


def test_get_consumed_capacity_from_request() -> None:
    """TestConsumableCapacity/get-consumed-capacity-from-request: a named capacity consumes the
    request, one with a default but no request the default, one without a policy the value."""
    d = Device(
        driver=DRIVER,
        pool="p",
        slice="s",
        name="device-1",
        allow_multiple=True,
        capacity={DRIVER: {"capacity-0": 2, "capacity-1": 2, "dummy": 1}},
        policies={
            (DRIVER, "capacity-0"): RequestPolicy(default=2, min=1),
            (DRIVER, "capacity-1"): RequestPolicy(default=1, min=1),
        },
    )
    r = DeviceRequest("r", "class-a", capacity=(("capacity-0", 1), (f"{DRIVER}/dummy", 1)))
    assert consumption(d, r) == {
        (DRIVER, "capacity-0"): 1,
        (DRIVER, "capacity-1"): 1,
        (DRIVER, "dummy"): 1,
    }
    assert (
        consumption(d, DeviceRequest("r", "class-a", capacity=(("missing", 1),))) is None
    )  # requestsContainNonExistCapacity


# ---- TestAllocator consumable-capacity-* (allocator_testing.go) ------------------------------
def test_range_policy_with_capacity_request_two_claims_share_one_device() -> None:
    """consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request: two
    claims asking 1 each share device-1 (capacity 4), each consuming the policy minimum 2."""
    got = allocate_results(
        [("claim-0", (req(amount=1),)), ("claim-1", (req(amount=1),))],
        [shared("device-1", 4, RANGE)],
        set(),
        classes(),
    )
    assert got is not None
    for results in got.values():
        (r,) = results
        assert r.device == dev_id("device-1") and r.consumed == ((CAP, 2),)


def test_range_policy_step_rounds_up() -> None:
    """consumable-capacity-multi-allocatable-device-with-range-policy-step: 3 rounds up to 2+2 = 4."""
    got = allocate_results(
        [("claim-0", (req(amount=3),))], [shared("device-1", 4, RANGE)], set(), classes()
    )
    assert got == {"claim-0": (got["claim-0"][0],)} and got["claim-0"][0].consumed == ((CAP, 4),)


@pytest.mark.parametrize(
    ("case", "default", "value", "values", "asked", "want"),
    [
        (
            "consumable-capacity-multi-allocatable-device-with-valid-values-policy",
            1,
            4,
            (1, 2),
            2,
            2,
        ),
        (
            "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up",
            1,
            3,
            (1, 3),
            2,
            3,
        ),
        (
            "consumable-capacity-multi-allocatable-device-violates-zero-request-policy",
            0,
            1,
            (0,),
            1,
            None,
        ),
    ],
)
def test_valid_values_policy(case, default, value, values, asked, want) -> None:
    """The validValues cases (``withCapacityRequestPolicyValidValues``: the default and the
    listed values are valid): the smallest valid value at least the request, none above them all."""
    policy = RequestPolicy(default=default, valid_values=values)
    got = allocate_results(
        [("claim-0", (req(amount=asked),))], [shared("device-1", value, policy)], set(), classes()
    )
    if want is None:
        assert got is None, case
    else:
        assert got is not None and got["claim-0"][0].consumed == ((CAP, want),), case


def test_exceeded_consumable_capacity_request() -> None:
    """consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request:
    1 (rounded to 2) and 2 do not both fit a capacity of 2."""
    assert (
        allocate(
            [("claim-0", (req(amount=1),)), ("claim-1", (req(amount=2),))],
            [shared("device-1", 2, RANGE)],
            set(),
            classes(),
        )
        is None
    )


def test_request_over_max_sharing_policy() -> None:
    """consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy: 6 is
    above the policy's max of 4, though the capacity is 10."""
    assert (
        allocate([("claim-0", (req(amount=6),))], [shared("device-1", 10, RANGE)], set(), classes())
        is None
    )


def test_allocated_capacity_use_remaining_and_next_device_and_none_left() -> None:
    """consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining,
    ...-with-allocated-capacity-next-device and ...-with-no-available-consumable-capacity:
    capacity consumed by allocated claims (``allocatedCapacityDevices``) is not available."""
    used = {dev_id("device-1"): {CAP: 2}}
    got = allocate_results(
        [("claim-0", (req(amount=2),))], [shared("device-1", 4, RANGE)], set(), classes(), used
    )
    assert got is not None and got["claim-0"][0].device == dev_id("device-1")
    got = allocate_results(
        [("claim-0", (req(amount=2),))],
        [shared("device-1", 2, RANGE), shared("device-2", 2, RANGE)],
        set(),
        classes(),
        used,
    )
    assert got is not None and got["claim-0"][0].device == dev_id("device-2")
    assert (
        allocate(
            [("claim-0", (req(amount=2),))], [shared("device-1", 2, RANGE)], set(), classes(), used
        )
        is None
    )


def test_two_requests_of_one_claim_share_a_device_but_one_request_never_takes_it_twice() -> None:
    """consumable-capacity-with-multi-allocatable-device-backtrack (its expected result: req-0 and
    req-1 of claim-0 both on device-1) and ``allocateOne``'s start location (a request's next
    device is searched after its previous one): count 2 needs two devices."""
    got = allocate(
        [("claim-0", (req("req-0", 2), req("req-1", 2)))],
        [shared("device-1", 4, RANGE)],
        set(),
        classes(),
    )
    assert got == {"claim-0": (dev_id("device-1"), dev_id("device-1"))}
    assert (
        allocate(
            [("claim-0", (req("req-0", 2, count=2),))],
            [shared("device-1", 4, RANGE)],
            set(),
            classes(),
        )
        is None
    )


def test_a_device_without_allow_multiple_allocations_stays_exclusive() -> None:
    """``allocateDevice``: without allowMultipleAllocations the device is marked in use; the
    capacity request must still fit its value (``CmpRequestOverCapacity`` runs for every device)."""
    cls = {"plain": DeviceClass(name="plain", selectors=(f'device.driver == "{DRIVER}"',))}
    d = shared("device-1", 4, multiple=False)
    assert allocate([("claim-0", (req(amount=1, cls="plain"),))], [d], set(), cls) == {
        "claim-0": (dev_id("device-1"),)
    }
    assert (
        allocate(
            [
                ("claim-0", (req(amount=1, cls="plain"),)),
                ("claim-1", (req(amount=1, cls="plain"),)),
            ],
            [d],
            set(),
            cls,
        )
        is None
    )
    assert allocate([("claim-0", (req(amount=5, cls="plain"),))], [d], set(), cls) is None


def test_snapshot_results_with_and_without_share_id() -> None:
    """``foreachAllocatedDevice`` (pkg/scheduler/framework/plugins/dynamicresources): a result
    with a shareID consumes its consumedCapacity; one without takes the device."""
    import yaml

    docs = list(yaml.safe_load_all(FIXTURE.read_text()))
    c = load_objects(docs)
    assert c.dra.consumed == {
        ("gpu.example.com", "gpu-1", "gpu-0"): {("gpu.example.com", "milli"): 500}
    }
    assert c.dra.in_use == frozenset()
    for doc in docs:
        if doc["kind"] == "ResourceClaim":
            del doc["status"]["allocation"]["devices"]["results"][0]["shareID"]
    c = load_objects(docs)
    assert c.dra.in_use == {("gpu.example.com", "gpu-1", "gpu-0")} and c.dra.consumed == {}


# ---- the fixture: reading, both engines, the validator ----------------------------------------
def test_fixture_reads_without_warnings_and_greedy_shares_gpus_in_order() -> None:
    """Earlier pods' allocations consume capacity (the greedy DynamicResources plugin): the whole
    GPU takes gpu-0/gpu-0, half-a and half-c share gpu-0/gpu-1, half-b gets the 500 milli left
    on gpu-1; the quarters (rounded to 300) find nothing left."""
    c = load_snapshot(FIXTURE)
    assert c.warnings == ()
    g = solve_greedy(c)
    assert {k: o.node for k, o in g.pods.items()} == {
        "default/whole": "gpu-0",
        "default/half-a": "gpu-0",
        "default/half-b": "gpu-1",
        "default/half-c": "gpu-0",
        "default/quarter-a": None,
        "default/quarter-b": None,
    }
    assert (
        g.pods["default/quarter-a"].reason
        and "cannot allocate all claims" in g.pods["default/quarter-a"].reason
    )
    devices = {k: [(d.pool, d.device) for d in o.claims] for k, o in g.pods.items() if o.claims}
    assert devices["default/half-a"] == devices["default/half-c"] == [("gpu-0", "gpu-1")]


def test_fixture_both_engines_valid_and_exact_places_at_least_greedy() -> None:
    c = load_snapshot(FIXTURE)
    greedy, exact = solve_greedy(c), solve_exact(c, time_limit=10)
    assert validate(c, greedy) == [] and validate(c, exact) == []
    placed = [sum(o.node is not None for o in r.pods.values()) for r in (greedy, exact)]
    assert placed == [4, 5]  # exact: the two quarters instead of the whole GPU


def test_validator_rejects_over_consumed_gpu() -> None:
    """Three half-GPU pods on gpu-1 (500 milli left) fail rule dra."""
    from gangplan.models.result import PodOutcome

    c = load_snapshot(FIXTURE)
    g = solve_greedy(c)
    pods = dict(g.pods)
    for k in ("default/half-a", "default/half-b"):
        pods[k] = PodOutcome(node="gpu-1")
    bad = g.model_copy(update={"pods": pods})
    assert any(v.rule == "dra" and v.name == "gpu-1" for v in validate(c, bad))


def test_fractional_quantities_are_warned_about() -> None:
    import yaml

    docs = list(yaml.safe_load_all(FIXTURE.read_text()))
    for doc in docs:
        if doc["kind"] == "ResourceClaimTemplate" and doc["metadata"]["name"] == "half-gpu":
            doc["spec"]["spec"]["devices"]["requests"][0]["exactly"]["capacity"]["requests"][
                "milli"
            ] = "0.5"
    assert any(
        "fractional capacity quantities are rounded up" in w for w in load_objects(docs).warnings
    )


def _cluster(gpus: list[int], asks: list[int | None], used: dict[int, int] | None = None):
    """One node per entry of ``gpus`` with that many shared GPUs (milli 1000, policy as the
    fixture's), one pod per entry of ``asks`` (milli asked; None: a whole GPU)."""
    policy = {"default": "1000", "validRange": {"min": "100", "max": "1000", "step": "100"}}
    objs: list[dict] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'g'"}}]},
        }
    ]
    for i, k in enumerate(gpus):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"n{i}"},
                "status": {"allocatable": {"cpu": "64", "memory": "64Gi", "pods": "50"}},
            }
        )
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"s{i}"},
                "spec": {
                    "driver": "g",
                    "nodeName": f"n{i}",
                    "pool": {"name": f"n{i}", "generation": 0, "resourceSliceCount": 1},
                    "devices": [
                        {
                            "name": f"gpu{j}",
                            "allowMultipleAllocations": True,
                            "capacity": {"milli": {"value": "1000", "requestPolicy": policy}},
                        }
                        for j in range(k)
                    ],
                },
            }
        )
    for j, a in enumerate(asks):
        exactly: dict = {"deviceClassName": "gpu"}
        if a is not None:
            exactly["capacity"] = {"requests": {"milli": str(a)}}
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": f"t{j}", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}},
            }
        )
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{j}", "namespace": "default"},
                "spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                    "resourceClaims": [{"name": "g", "resourceClaimTemplateName": f"t{j}"}],
                },
            }
        )
    return load_objects(objs)


@settings(max_examples=12, deadline=None)
@given(
    gpus=st.lists(st.integers(0, 1), min_size=1, max_size=3),
    asks=st.lists(
        st.one_of(st.none(), st.sampled_from([100, 250, 500, 700])), min_size=1, max_size=5
    ),
)
def test_random_one_gpu_nodes_both_engines_valid_and_exact_places_at_least_greedy(
    gpus, asks
) -> None:
    """Nodes with at most one shared GPU (where the exact engine's capacity rows are exact): both
    engines' results pass the validator and the exact engine places at least as many pods."""
    c = _cluster(gpus, asks)
    greedy, exact = solve_greedy(c), solve_exact(c, time_limit=5)
    assert validate(c, greedy) == [] and validate(c, exact) == []
    assert sum(o.node is not None for o in exact.pods.values()) >= sum(
        o.node is not None for o in greedy.pods.values()
    )


# ---- hypothesis: the allocator against a brute force -----------------------------------------
POLICIES = [
    None,
    RequestPolicy(default=2, min=1, step=1, max=4),
    RequestPolicy(default=1, min=2, step=2),
    RequestPolicy(default=1, valid_values=(1, 2, 4)),
]


@settings(max_examples=80, deadline=None)
@given(
    devs=st.lists(
        st.tuples(st.booleans(), st.integers(1, 5), st.integers(0, len(POLICIES) - 1)),
        min_size=0,
        max_size=3,
    ),
    reqs=st.lists(
        st.lists(
            st.tuples(st.one_of(st.none(), st.integers(1, 5)), st.integers(1, 2)),
            min_size=1,
            max_size=2,
        ),
        min_size=1,
        max_size=3,
    ),
    used=st.dictionaries(st.integers(0, 2), st.integers(0, 3), max_size=2),
)
def test_allocator_agrees_with_brute_force_on_shared_devices(devs, reqs, used) -> None:
    """Tiny random shared and exclusive devices (capacity 1-5, random request policies; a shared
    device's policy only), claims of 1-2 requests asking 1-5 or nothing, capacity already consumed
    by the snapshot: the allocator finds an allocation exactly when the brute force does, and what
    it returns stays within every capacity."""
    cls = {"class-a": DeviceClass(name="class-a", selectors=(f'device.driver == "{DRIVER}"',))}
    devices = [
        shared(f"d{i}", v, POLICIES[p] if m else None, multiple=m)
        for i, (m, v, p) in enumerate(devs)
    ]
    consumed = {dev_id(f"d{i}"): {CAP: q} for i, q in used.items() if i < len(devs) and devs[i][0]}
    claims = [
        (f"c{k}", tuple(req(f"r{j}", a, n) for j, (a, n) in enumerate(rs)))
        for k, rs in enumerate(reqs)
    ]
    got = allocate_results(claims, devices, set(), cls, consumed)
    assert (got is not None) == brute_force_exists(claims, devices, set(), cls, consumed)
    if got is None:
        return
    by_id = {d.id: d for d in devices}
    totals: dict = {}
    exclusive: list = []
    for results in got.values():
        for r in results:
            if r.consumed is None:
                exclusive.append(r.device)
                continue
            assert by_id[r.device].allow_multiple
            for k, v in r.consumed:
                totals[(r.device, k)] = (
                    totals.get((r.device, k), consumed.get(r.device, {}).get(k, 0)) + v
                )
    assert len(exclusive) == len(set(exclusive)) and not set(exclusive) & {d for d, _ in totals}
    for (d, (dom, name)), v in totals.items():
        assert v <= by_id[d].capacity[dom][name]
