"""Partitionable devices (KEP-4815): ResourceSlice ``sharedCounters`` and devices'
``consumesCounters``, in the allocator, both engines and the validator (issue 23).

Allocator cases are written from upstream's ``TestAllocator`` table
(``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/
allocator_testing.go``, kubernetes/kubernetes; newest stored version @008b3652) with the upstream
case names; the semantics (``allocateDevice``, ``checkAvailableCounters``) are those of
``stable/allocator_stable.go`` and ``incubating/allocator_incubating.go`` @03ab440c. The fixture
``tests/fixtures/dra/k8sio-partitionable-devices.yaml`` holds the kubernetes.io example.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gangplan.dra.allocator import allocate_joint, allocate_results, brute_force_exists
from gangplan.dra.model import CounterPool, Device, DeviceClass, DeviceRequest
from gangplan.io.loader import load_objects, load_snapshot
from gangplan.models.version import KubeVersion, dra_distinct_attribute, dra_partitionable_devices
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "dra" / "k8sio-partitionable-devices.yaml"
DRIVER = "driver-a"
GI = 1024**3
CLASSES = {"class-a": DeviceClass(name="class-a", selectors=(f'device.driver == "{DRIVER}"',))}


def pool(
    name: str, sets: dict[str, dict[str, int]], devices: list[tuple[str, dict[str, dict[str, int]]]]
) -> list[Device]:
    """The devices of one pool (upstream's ``sliceWithDevices`` + ``sliceWithCounterSets``),
    ``devices``: (name, counter set -> counter -> amount consumed)."""
    cp = CounterPool(DRIVER, name, sets={k: dict(v) for k, v in sets.items()})
    out = []
    for dname, uses in devices:
        counters = tuple(sorted((s, tuple(sorted(c.items()))) for s, c in uses.items()))
        d = Device(
            driver=DRIVER,
            pool=name,
            slice=f"{name}-slice",
            name=dname,
            counters=counters,
            counter_pool=cp if counters else None,
        )
        if counters:
            cp.users.append(d)
        out.append(d)
    return out


def req(name: str, count: int = 1) -> DeviceRequest:
    return DeviceRequest(name=name, device_class="class-a", count=count)


def got(claims, devices, in_use=(), partitionable=True):
    out = allocate_results(claims, devices, set(in_use), CLASSES, partitionable=partitionable)
    return (
        None
        if out is None
        else {k: [(r.request, r.device[1], r.device[2]) for r in v] for k, v in out.items()}
    )


def test_partitionable_devices_single_device() -> None:
    devices = pool(
        "pool-1",
        {"counter-set-1": {"memory": 8 * GI}},
        [("device-1", {"counter-set-1": {"memory": 4 * GI}})],
    )
    assert got([("claim-0", (req("req-0"),))], devices) == {
        "claim-0": [("req-0", "pool-1", "device-1")]
    }


def test_partitionable_devices_multiple_devices() -> None:
    """4Gi + 6Gi exceed the 8Gi counter: req-1 moves on from device-2 to device-3."""
    devices = pool(
        "pool-1",
        {"counter-set-1": {"memory": 8 * GI}},
        [
            ("device-1", {"counter-set-1": {"memory": 4 * GI}}),
            ("device-2", {"counter-set-1": {"memory": 6 * GI}}),
            ("device-3", {"counter-set-1": {"memory": 4 * GI}}),
        ],
    )
    assert got([("claim-0", (req("req-0"), req("req-1")))], devices) == {
        "claim-0": [("req-0", "pool-1", "device-1"), ("req-1", "pool-1", "device-3")]
    }


def test_partitionable_devices_multiple_counters() -> None:
    """Two counter sets with two counters each: only device-2 + device-3 keep set 1's cpus within
    8 (device-1 takes 6 of them), found by backtracking off device-1."""
    devices = pool(
        "pool-1",
        {
            "counter-set-1": {"cpus": 8, "memory": 18 * GI},
            "counter-set-2": {"cpus": 12, "memory": 18 * GI},
        },
        [
            (
                "device-1",
                {
                    "counter-set-1": {"memory": 4 * GI, "cpus": 6},
                    "counter-set-2": {"cpus": 4, "memory": 2 * GI},
                },
            ),
            (
                "device-2",
                {
                    "counter-set-1": {"memory": 6 * GI, "cpus": 4},
                    "counter-set-2": {"cpus": 6, "memory": 6 * GI},
                },
            ),
            (
                "device-3",
                {
                    "counter-set-1": {"memory": 4 * GI, "cpus": 4},
                    "counter-set-2": {"cpus": 4, "memory": 4 * GI},
                },
            ),
        ],
    )
    assert got([("claim-0", (req("req-0"), req("req-1")))], devices) == {
        "claim-0": [("req-0", "pool-1", "device-2"), ("req-1", "pool-1", "device-3")]
    }


def test_partitionable_devices_multiple_pools() -> None:
    """Allocated devices take their pool's counters: pool-1 has no cpus left for device-1, pool-2's
    device-1 is in use, so both requests get pool-2's device-2 and device-3."""
    p1 = pool(
        "pool-1",
        {"counter-set-1": {"cpus": 8, "memory": 18 * GI}},
        [
            ("device-1", {"counter-set-1": {"cpus": 6, "memory": 4 * GI}}),
            ("device-2", {"counter-set-1": {"cpus": 4, "memory": 6 * GI}}),
            ("device-3", {"counter-set-1": {"cpus": 4, "memory": 4 * GI}}),
        ],
    )
    p2 = pool(
        "pool-2",
        {"counter-set-1": {"cpus": 8, "memory": 18 * GI}},
        [
            ("device-1", {"counter-set-1": {"cpus": 6, "memory": 4 * GI}}),
            ("device-2", {"counter-set-1": {"cpus": 1, "memory": 7 * GI}}),
            ("device-3", {"counter-set-1": {"cpus": 1, "memory": 7 * GI}}),
        ],
    )
    used = {
        (DRIVER, "pool-1", "device-2"),
        (DRIVER, "pool-1", "device-3"),
        (DRIVER, "pool-2", "device-1"),
    }
    assert got([("claim-0", (req("req-0"), req("req-1")))], p1 + p2, used) == {
        "claim-0": [("req-0", "pool-2", "device-2"), ("req-1", "pool-2", "device-3")]
    }


def test_partitionable_devices_unused_counters_in_counter_set() -> None:
    devices = pool(
        "pool-1",
        {"counter-set-1": {"memory": 8 * GI, "unused": GI}},
        [
            ("device-1", {"counter-set-1": {"memory": 5 * GI}}),
            ("device-2", {"counter-set-1": {"memory": 4 * GI}}),
            ("device-3", {"counter-set-1": {"memory": 4 * GI}}),
        ],
    )
    assert got([("claim-0", (req("req-0", 2),))], devices) == {
        "claim-0": [("req-0", "pool-1", "device-2"), ("req-0", "pool-1", "device-3")]
    }


def test_partitionable_devices_no_capacity_available() -> None:
    devices = pool(
        "pool-1",
        {"counter-set-1": {"memory": 18 * GI}},
        [
            ("device-1", {"counter-set-1": {"memory": 4 * GI}}),
            ("device-2", {"counter-set-1": {"memory": 16 * GI}}),
        ],
    )
    assert got([("claim-0", (req("req-0"),))], devices, {(DRIVER, "pool-1", "device-2")}) is None


def test_partitionable_devices_overallocated_capacity_pool() -> None:
    """An allocated device over-consumes the counter (20Gi of 18Gi): no device of the pool fits."""
    devices = pool(
        "pool-1",
        {"counter-set-1": {"memory": 18 * GI}},
        [
            ("device-1", {"counter-set-1": {"memory": 4 * GI}}),
            ("device-2", {"counter-set-1": {"memory": 20 * GI}}),
        ],
    )
    assert got([("claim-0", (req("req-0"),))], devices, {(DRIVER, "pool-1", "device-2")}) is None


def test_partitionable_devices_disabled_device_consumes_counters() -> None:
    devices = pool(
        "pool-1",
        {"counter-set-1": {"memory": 18 * GI}},
        [("device-1", {"counter-set-1": {"memory": 4 * GI}})],
    )
    assert got([("claim-0", (req("req-0"),))], devices, partitionable=False) is None
    assert not brute_force_exists(
        [("claim-0", (req("req-0"),))], devices, set(), CLASSES, partitionable=False
    )


def test_partitionable_devices_disabled_other_device_do_not_consume_counters() -> None:
    devices = pool(
        "pool-1",
        {"counter-set-1": {"memory": 18 * GI}},
        [("device-1", {"counter-set-1": {"memory": 4 * GI}}), ("device-2", {})],
    )
    assert got([("claim-0", (req("req-0"),))], devices, partitionable=False) == {
        "claim-0": [("req-0", "pool-1", "device-2")]
    }


def test_partitionable_gate_turns_on_with_consumable_capacity() -> None:
    """The allocator takes both gates from one flag (``partitionable`` defaults to ``distinct``):
    they agree at every release gangplan reproduces (DRAPartitionableDevices and
    DRAConsumableCapacity both beta and on from v1.36, ``pkg/features/kube_features.go``)."""
    for v in ("1.35", "1.36", "1.37"):
        assert dra_partitionable_devices(KubeVersion(v)) == dra_distinct_attribute(
            KubeVersion(v)
        ), v
    assert not dra_partitionable_devices(KubeVersion("1.35")) and dra_partitionable_devices(
        KubeVersion("1.36")
    )


# ---- the fixture: both engines and the validator ----------------------------------------------


def test_fixture_reads_without_warnings_into_one_counter_pool_per_pool() -> None:
    c = load_snapshot(FIXTURE)
    assert c.warnings == ()
    w1 = c.dra.devices_by_node["worker-1"]
    assert [d.name for d in w1] == ["device-1", "device-2"]
    assert w1[0].counter_pool is w1[1].counter_pool and w1[0].counter_pool.sets == {
        "gpu-1-counters": {"memory": 8 * GI}
    }
    assert w1[0].counters == (("gpu-1-counters", (("memory", 6 * GI),)),)


def test_fixture_greedy_takes_the_whole_gpu_exact_the_halves_both_valid() -> None:
    """kubernetes.io's worker-1 holds one of its two 6Gi devices at a time. On worker-2, greedy's
    pod takes the whole GPU (first in slice order, as kube-scheduler's allocator does) and the
    third pod fits nowhere; the exact engine gives two pods the halves. Both validate."""
    c = load_snapshot(FIXTURE)
    greedy, exact = solve_greedy(c), solve_exact(c, time_limit=10, workers=1)
    assert validate(c, greedy) == [] and validate(c, exact) == []
    devices = {
        r.engine: sorted(
            (o.node, tuple(x.device for x in o.claims)) for o in r.pods.values() if o.node
        )
        for r in (greedy, exact)
    }
    assert devices["greedy"] == [("worker-1", ("device-1",)), ("worker-2", ("gpu-0",))]
    assert devices["exact"] == [
        ("worker-1", ("device-1",)),
        ("worker-2", ("gpu-0-half-0",)),
        ("worker-2", ("gpu-0-half-1",)),
    ]


def test_fixture_at_v1_35_allocates_no_device_that_consumes_counters() -> None:
    c = load_snapshot(FIXTURE).at_version("1.35")
    for r in (solve_greedy(c), solve_exact(c, time_limit=5, workers=1)):
        assert all(o.node is None for o in r.pods.values()), r.engine
        assert validate(c, r) == []


def test_validator_rejects_devices_beyond_the_counters() -> None:
    """Two pods on worker-1 would need both 6Gi devices of the 8Gi counter: rule dra, on the node
    (the joint allocation fails) and on the devices named."""
    from gangplan.models.result import ClaimDevice, PodOutcome

    c = load_snapshot(FIXTURE)
    g = solve_greedy(c)
    pods = dict(g.pods)
    for k, dev in (("default/p0", "device-1"), ("default/p2", "device-2")):
        pods[k] = PodOutcome(
            node="worker-1",
            claims=[
                ClaimDevice(
                    claim=f"{k.split('/')[1]}-gpu",
                    request="req-0",
                    driver="dra.example.com",
                    pool="pool",
                    device=dev,
                )
            ],
        )
    bad = g.model_copy(update={"pods": pods})
    found = validate(c, bad)
    assert any(v.rule == "dra" and v.name == "worker-1" for v in found), found
    assert any(v.rule == "dra" and "counter gpu-1-counters/memory" in v.message for v in found), (
        found
    )


def test_counters_of_a_pool_published_in_a_slice_of_its_own_v1beta2_shape() -> None:
    """A v1beta2 slice pair (the shapes match v1's): counter sets are joined per pool, whatever
    slice holds them; a set defined twice in one slice is refused (exit 2 upstream's validation)."""
    from gangplan.io.fields import SnapshotError

    base = {"apiVersion": "resource.k8s.io/v1beta2", "kind": "ResourceSlice"}
    objs = [
        {
            **base,
            "metadata": {"name": "a"},
            "spec": {
                "driver": "d",
                "nodeName": "n",
                "pool": {"name": "p", "generation": 0, "resourceSliceCount": 2},
                "sharedCounters": [{"name": "s", "counters": {"c": {"value": "2"}}}],
            },
        },
        {
            **base,
            "metadata": {"name": "b"},
            "spec": {
                "driver": "d",
                "nodeName": "n",
                "pool": {"name": "p", "generation": 0, "resourceSliceCount": 2},
                "devices": [
                    {
                        "name": "x",
                        "consumesCounters": [
                            {"counterSet": "s", "counters": {"c": {"value": "1"}}}
                        ],
                    }
                ],
            },
        },
    ]
    c = load_objects(objs)
    (d,) = c.dra.devices_by_node["n"]
    assert d.counter_pool.sets == {"s": {"c": 2}} and d.counters == (("s", (("c", 1),)),)
    twice = [
        {
            **objs[0],
            "spec": {**objs[0]["spec"], "sharedCounters": objs[0]["spec"]["sharedCounters"] * 2},
        }
    ]
    with pytest.raises(SnapshotError, match="defined twice"):
        load_objects(twice)


# ---- hypothesis: the allocator against a brute force -----------------------------------------


@settings(max_examples=80, deadline=None)
@given(
    devs=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=4),
    caps=st.tuples(st.integers(0, 6), st.integers(0, 6)),
    counts=st.lists(st.lists(st.integers(1, 2), min_size=1, max_size=2), min_size=1, max_size=2),
    used=st.sets(st.integers(0, 3), max_size=2),
)
def test_allocator_agrees_with_brute_force_on_counters(devs, caps, counts, used) -> None:
    """Random devices of one pool consuming 0-4 of two counters (a device consuming none is a
    plain device), counters of 0-6, some devices allocated already: the allocator (one claim set,
    and the joint allocation) finds an allocation exactly when the brute force does, and what it
    returns keeps every counter within what the allocated devices left."""
    uses = [
        {"set": {k: v for k, v in (("a", a), ("b", b)) if v}} if (a or b) else {} for a, b in devs
    ]
    devices = pool(
        "p", {"set": {"a": caps[0], "b": caps[1]}}, [(f"d{i}", u) for i, u in enumerate(uses)]
    )
    in_use = {devices[i].id for i in used if i < len(devices)}
    claims = [
        (f"c{k}", tuple(req(f"r{j}", n) for j, n in enumerate(ns))) for k, ns in enumerate(counts)
    ]
    exists = brute_force_exists(claims, devices, in_use, CLASSES)
    for out in (
        allocate_results(claims, devices, set(in_use), CLASSES),
        allocate_joint(claims, devices, set(in_use), CLASSES),
    ):
        assert (out is not None) == exists
        if out is None:
            continue
        picked = [r.device for rs in out.values() for r in rs]
        assert len(picked) == len(set(picked)) and not set(picked) & in_use
        by_id = {d.id: d for d in devices}
        total = {"a": 0, "b": 0}
        for did in set(picked) | in_use:
            for _, amounts in by_id[did].counters:
                for c, v in amounts:
                    total[c] += v
        if any(by_id[d].counters for d in picked):
            assert total["a"] <= caps[0] and total["b"] <= caps[1]


def _mig_cluster(gpus: list[int], pods: list[str], held: int):
    """Nodes with ``gpus[i]`` GPUs, each published whole (8 of its counter) and as two halves (4
    each) of one counter set per GPU; pods asking for ``any`` device, a ``whole`` one or a
    ``half``; ``held``: devices of n0 allocated to a bound claim, in slice order."""
    objs = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        }
    ]
    for kind, sel in (("any", None), ("whole", "whole"), ("half", "half")):
        ex: dict = {"deviceClassName": "gpu"}
        if sel:
            ex["selectors"] = [
                {"cel": {"expression": f'device.attributes["gpu.example.com"].profile == "{sel}"'}}
            ]
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": kind, "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": ex}]}}},
            }
        )
    for i, g in enumerate(gpus):
        n = f"n{i}"
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": n},
                "status": {"allocatable": {"cpu": "16", "memory": "8Gi", "pods": "20"}},
            }
        )
        pool = {"name": n, "generation": 0, "resourceSliceCount": 2}
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{n}-counters"},
                "spec": {
                    "driver": "gpu.example.com",
                    "nodeName": n,
                    "pool": pool,
                    "sharedCounters": [
                        {"name": f"gpu-{j}", "counters": {"memory": {"value": "8"}}}
                        for j in range(g)
                    ],
                },
            }
        )
        devices = []
        for j in range(g):
            for name, profile, amount in (
                (f"gpu-{j}", "whole", "8"),
                (f"gpu-{j}-half-0", "half", "4"),
                (f"gpu-{j}-half-1", "half", "4"),
            ):
                devices.append(
                    {
                        "name": name,
                        "attributes": {"profile": {"string": profile}},
                        "consumesCounters": [
                            {"counterSet": f"gpu-{j}", "counters": {"memory": {"value": amount}}}
                        ],
                    }
                )
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{n}-devices"},
                "spec": {
                    "driver": "gpu.example.com",
                    "nodeName": n,
                    "pool": pool,
                    "devices": devices,
                },
            }
        )
    if held and gpus and gpus[0]:
        names = [f"gpu-0-half-{k}" for k in range(held)]
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "held", "namespace": "default"},
                "spec": {
                    "devices": {
                        "requests": [
                            {"name": "r", "exactly": {"deviceClassName": "gpu", "count": held}}
                        ]
                    }
                },
                "status": {
                    "allocation": {
                        "devices": {
                            "results": [
                                {
                                    "request": "r",
                                    "driver": "gpu.example.com",
                                    "pool": "n0",
                                    "device": d,
                                }
                                for d in names
                            ]
                        }
                    }
                },
            }
        )
    for k, kind in enumerate(pods):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{k}", "namespace": "default"},
                "spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                    "resourceClaims": [{"name": "g", "resourceClaimTemplateName": kind}],
                },
            }
        )
    return load_objects(objs)


@settings(max_examples=30, deadline=None)
@given(
    gpus=st.lists(st.integers(0, 2), min_size=1, max_size=3),
    pods=st.lists(st.sampled_from(["any", "whole", "half"]), min_size=1, max_size=5),
    held=st.integers(0, 2),
)
def test_random_partitioned_gpus_both_engines_valid_and_exact_places_at_least_greedy(
    gpus, pods, held
) -> None:
    """MIG-like GPUs (whole or two halves of one counter set each), random pods asking for any
    device, a whole GPU or a half, and a held half: both engines' results pass the validator, and
    the exact engine (a boolean per (device, resource) it serves: the 'any' and 'whole' / 'half'
    pairs overlap on every device) places at least as many pods as greedy when it does not warn."""
    c = _mig_cluster(gpus, pods, held)
    greedy, exact = solve_greedy(c), solve_exact(c, time_limit=10, workers=1)
    assert validate(c, greedy) == [] and validate(c, exact) == []
    if not any("shared-counter rows" in w for w in exact.warnings):
        assert sum(o.node is not None for o in exact.pods.values()) >= sum(
            o.node is not None for o in greedy.pods.values()
        )
