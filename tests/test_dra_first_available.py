"""``firstAvailable`` (KEP-4816, prioritized subrequests; gate DRAPrioritizedList, beta and on
from v1.34, GA in v1.36): in the allocator, both engines and the validator (issue 23).

The allocator tries a request's subrequests in order, each with everything after it, and takes
the first that leads to a full solution (``allocateOne`` in
``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/allocator_stable.go``
and ``incubating/``, kubernetes/kubernetes @03ab440c); results are named ``<request>/<sub>``, and
a constraint naming the request covers its subrequests. Cases from upstream's ``TestAllocator``
table (``allocatortesting/allocator_testing.go``, newest stored version @008b3652), named as
there. The exact engine chooses per node how many claims take each subrequest (a choice count
per subrequest, :func:`gangplan.solver.exact.capacity.add_first_available_rows`).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gangplan.dra.allocator import allocate_joint, allocate_results, brute_force_exists
from gangplan.dra.model import Constraint, CounterPool, Device, DeviceClass, DeviceRequest
from gangplan.io.loader import load_objects
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

A, B = "driver-a", "driver-b"
GI = 1024**3
CLASSES = {
    "class-a": DeviceClass(name="class-a", selectors=(f'device.driver == "{A}"',)),
    "class-b": DeviceClass(name="class-b", selectors=(f'device.driver == "{B}"',)),
}


def mem(gi: int) -> tuple[str, ...]:
    return (f'device.capacity["{A}"].memory.compareTo(quantity("{gi}Gi")) >= 0',)


def dev(
    name: str,
    driver: str = A,
    pool: str = "pool-1",
    memory: int | None = None,
    version: str | None = None,
) -> Device:
    attrs = {driver: {"driverVersion": version}} if version else {}
    caps = {driver: {"memory": memory * GI}} if memory is not None else {}
    return Device(driver=driver, pool=pool, slice=pool, name=name, attributes=attrs, capacity=caps)


def sub(
    name: str, cls: str = "class-a", count: int = 1, selectors=(), all_: bool = False
) -> DeviceRequest:
    return DeviceRequest(name=name, device_class=cls, count=count, selectors=selectors, all=all_)


def first(name: str, *subs: DeviceRequest) -> DeviceRequest:
    return DeviceRequest(name=name, device_class=subs[0].device_class, alternatives=subs)


def got(claims, devices, in_use=(), constraints=None):
    out = allocate_results(claims, devices, set(in_use), CLASSES, constraints=constraints)
    return None if out is None else [(r.request, r.device[2]) for v in out.values() for r in v]


def test_prioritized_list_first_unavailable() -> None:
    assert got(
        [("claim-0", (first("req-0", sub("subReq-0", "class-b"), sub("subReq-1")),))],
        [dev("device-1")],
    ) == [("req-0/subReq-1", "device-1")]


def test_prioritized_list_non_available() -> None:
    claims = [
        ("claim-0", (first("req-0", sub("subReq-0", "class-b", 2), sub("subReq-1", "class-a", 2)),))
    ]
    assert got(claims, [dev("device-1"), dev("device-1", B, "pool-2")]) is None


def test_prioritized_list_subrequests_with_expressions() -> None:
    devices = [dev("device-1", memory=2), dev("device-2", memory=2), dev("device-3", memory=1)]
    claims = [
        (
            "claim-0",
            (
                DeviceRequest(name="req-0", device_class="class-a", selectors=mem(1)),
                first(
                    "req-1",
                    sub("subReq-0", selectors=mem(4)),
                    sub("subReq-1", count=2, selectors=mem(2)),
                ),
            ),
        )
    ]
    assert got(claims, devices) == [
        ("req-0", "device-3"),
        ("req-1/subReq-1", "device-1"),
        ("req-1/subReq-1", "device-2"),
    ]


def _version_devices():
    return [
        dev("device-1", memory=8, version="1.0.0"),
        dev("device-2", pool="pool-2", memory=2, version="2.0.0"),
        dev("device-3", pool="pool-2", memory=1, version="1.0.0"),
    ]


def test_prioritized_list_subrequests_with_constraints_ref_parent_request() -> None:
    cons = {
        "claim-0": (
            Constraint(kind="match", attribute=(A, "driverVersion"), requests=("req-0", "req-1")),
        )
    }
    claims = [
        (
            "claim-0",
            (
                DeviceRequest(name="req-0", device_class="class-a", selectors=mem(8)),
                first(
                    "req-1", sub("subReq-0", selectors=mem(2)), sub("subReq-1", selectors=mem(1))
                ),
            ),
        )
    ]
    assert got(claims, _version_devices(), constraints=cons) == [
        ("req-0", "device-1"),
        ("req-1/subReq-1", "device-3"),
    ]


def test_prioritized_list_subrequests_with_constraints_ref_sub_request() -> None:
    """The constraint names req-1/subReq-0 only: subReq-0 fails it, subReq-1 is not covered."""
    cons = {
        "claim-0": (
            Constraint(
                kind="match", attribute=(A, "driverVersion"), requests=("req-0", "req-1/subReq-0")
            ),
        )
    }
    claims = [
        (
            "claim-0",
            (
                DeviceRequest(name="req-0", device_class="class-a", selectors=mem(8)),
                first(
                    "req-1", sub("subReq-0", selectors=mem(2)), sub("subReq-1", selectors=mem(1))
                ),
            ),
        )
    ]
    assert got(claims, _version_devices()[:2], constraints=cons) == [
        ("req-0", "device-1"),
        ("req-1/subReq-1", "device-2"),
    ]


def test_prioritized_list_subrequests_with_allocation_mode_all() -> None:
    claims = [("claim-0", (first("req-0", sub("subReq-0", all_=True), sub("subReq-1")),))]
    assert got(claims, [dev("device-1"), dev("device-2")], {(A, "pool-1", "device-1")}) == [
        ("req-0/subReq-1", "device-2")
    ]


def test_prioritized_list_allocation_mode_all_multiple_requests() -> None:
    claims = [
        (
            "claim-0",
            (
                DeviceRequest(name="req-0", device_class="class-a"),
                first("req-1", sub("subReq-0", all_=True), sub("subReq-1")),
            ),
        )
    ]
    assert got(claims, [dev("device-1"), dev("device-2")]) == [
        ("req-0", "device-1"),
        ("req-1/subReq-1", "device-2"),
    ]


def test_prioritized_list_multi_request() -> None:
    devices = [dev("device-1", memory=8), dev("device-2", pool="pool-2", memory=4)]
    claims = [
        (
            "claim-0",
            (
                DeviceRequest(name="req-1", device_class="class-a", selectors=mem(8)),
                first(
                    "req-0", sub("subReq-0", selectors=mem(8)), sub("subReq-1", selectors=mem(4))
                ),
            ),
        )
    ]
    assert got(claims, devices) == [("req-1", "device-1"), ("req-0/subReq-1", "device-2")]


def test_prioritized_list_with_backtracking() -> None:
    """subReq-0 takes the only 8Gi device, which req-1 then lacks: the search backtracks to subReq-1."""
    devices = [dev("device-1", memory=8), dev("device-2", pool="pool-2", memory=4)]
    claims = [
        (
            "claim-0",
            (
                first(
                    "req-0", sub("subReq-0", selectors=mem(8)), sub("subReq-1", selectors=mem(4))
                ),
                DeviceRequest(name="req-1", device_class="class-a", selectors=mem(8)),
            ),
        )
    ]
    assert got(claims, devices) == [("req-0/subReq-1", "device-2"), ("req-1", "device-1")]


def test_all_devices_some_allocated_prioritized_list() -> None:
    claims = [
        ("claim-0", (first("req-0", sub("subReq-0", all_=True), sub("subReq-1", "class-b")),))
    ]
    devices = [dev("device-1"), dev("device-2"), dev("device-1", B, "pool-2")]
    assert got(claims, devices, {(A, "pool-1", "device-1")}) == [("req-0/subReq-1", "device-1")]


def test_partitionable_devices_prioritized_list() -> None:
    """Counters (KEP-4815) and subrequests: 4Gi + 6Gi exceed the 8Gi counter, so req-1 falls back
    to subReq-1 and device-3."""
    cp = CounterPool(A, "pool-1", sets={"counter-set-1": {"memory": 8 * GI}})
    devices = []
    for name, g in (("device-1", 4), ("device-2", 6), ("device-3", 4)):
        d = Device(
            driver=A,
            pool="pool-1",
            slice="s",
            name=name,
            capacity={A: {"memory": g * GI}},
            counters=(("counter-set-1", (("memory", g * GI),)),),
            counter_pool=cp,
        )
        cp.users.append(d)
        devices.append(d)
    claims = [
        (
            "claim-0",
            (
                DeviceRequest(name="req-0", device_class="class-a"),
                first(
                    "req-1", sub("subReq-0", selectors=mem(6)), sub("subReq-1", selectors=mem(4))
                ),
            ),
        )
    ]
    assert got(claims, devices) == [("req-0", "device-1"), ("req-1/subReq-1", "device-3")]


# ---- both engines and the validator ----------------------------------------------------------


def _cluster(big: list[int], small: list[int], pods: int):
    """Nodes with ``big[i]`` 16Gi and ``small[i]`` 8Gi GPUs; pods whose claim asks for one big GPU,
    or else two small ones (the shape of kubernetes.io's prioritized-list example)."""
    objs = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu.example.com"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "prioritized", "namespace": "default"},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "req-0",
                                "firstAvailable": [
                                    {
                                        "name": "large-black",
                                        "deviceClassName": "gpu.example.com",
                                        "selectors": [
                                            {
                                                "cel": {
                                                    "expression": 'device.capacity["gpu.example.com"].memory.compareTo(quantity("16Gi")) >= 0'
                                                }
                                            }
                                        ],
                                    },
                                    {
                                        "name": "small-white",
                                        "deviceClassName": "gpu.example.com",
                                        "count": 2,
                                        "selectors": [
                                            {
                                                "cel": {
                                                    "expression": 'device.capacity["gpu.example.com"].memory.compareTo(quantity("16Gi")) < 0'
                                                }
                                            }
                                        ],
                                    },
                                ],
                            }
                        ]
                    }
                }
            },
        },
    ]
    for i, (b, s) in enumerate(zip(big, small, strict=True)):
        n = f"n{i}"
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": n},
                "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}},
            }
        )
        devices = [
            {"name": f"big-{j}", "capacity": {"memory": {"value": "16Gi"}}} for j in range(b)
        ]
        devices += [
            {"name": f"small-{j}", "capacity": {"memory": {"value": "8Gi"}}} for j in range(s)
        ]
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": n},
                "spec": {
                    "driver": "gpu.example.com",
                    "nodeName": n,
                    "pool": {"name": n, "generation": 0, "resourceSliceCount": 1},
                    "devices": devices,
                },
            }
        )
    for j in range(pods):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{j}", "namespace": "default"},
                "spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "prioritized"}],
                },
            }
        )
    return load_objects(objs)


def test_both_engines_place_claims_on_either_subrequest_and_validate() -> None:
    """n0: one big GPU; n1: three small ones. Three pods: one takes the big GPU, one two small ones,
    the third fits nowhere (one small GPU left). Greedy names the subrequest the allocator takes."""
    c = _cluster([1, 0], [0, 3], 3)
    assert c.warnings == ()
    for r in (solve_greedy(c), solve_exact(c, time_limit=10, workers=1)):
        assert validate(c, r) == [], r.engine
        placed = sorted(
            (o.node, tuple(x.request for x in o.claims)) for o in r.pods.values() if o.node
        )
        assert placed == [
            ("n0", ("req-0/large-black",)),
            ("n1", ("req-0/small-white", "req-0/small-white")),
        ], r.engine


@settings(max_examples=40, deadline=None)
@given(
    big=st.lists(st.integers(0, 2), min_size=1, max_size=3),
    small=st.lists(st.integers(0, 3), min_size=3, max_size=3),
    pods=st.integers(1, 4),
)
def test_random_prioritized_claims_both_engines_valid_and_exact_places_at_least_greedy(
    big, small, pods
) -> None:
    c = _cluster(big, small[: len(big)], pods)
    greedy, exact = solve_greedy(c), solve_exact(c, time_limit=10, workers=1)
    assert validate(c, greedy) == [] and validate(c, exact) == []
    assert sum(o.node is not None for o in exact.pods.values()) >= sum(
        o.node is not None for o in greedy.pods.values()
    )


@settings(max_examples=80, deadline=None)
@given(
    devs=st.lists(st.tuples(st.sampled_from([A, B]), st.integers(1, 8)), min_size=0, max_size=4),
    claims=st.lists(
        st.lists(
            st.tuples(st.booleans(), st.integers(1, 2), st.integers(0, 8)), min_size=1, max_size=2
        ),
        min_size=1,
        max_size=2,
    ),
)
def test_allocator_agrees_with_brute_force_with_subrequests(devs, claims) -> None:
    """Random devices of two drivers (memory 1-8Gi); requests that are either plain or a
    firstAvailable of (class-b, then class-a with a memory threshold): the allocator finds an
    allocation exactly when the brute force does, and names each result for one subrequest."""
    devices = [dev(f"d{i}", d, memory=m) for i, (d, m) in enumerate(devs)]
    cs = []
    for k, rs in enumerate(claims):
        reqs = []
        for j, (fa, n, g) in enumerate(rs):
            if fa:
                reqs.append(
                    first(
                        f"r{j}",
                        sub("s0", "class-b", n),
                        sub(
                            "s1", "class-a", n, selectors=mem(g) if devs and devs[0][0] == A else ()
                        ),
                    )
                )
            else:
                reqs.append(DeviceRequest(name=f"r{j}", device_class="class-a", count=n))
        cs.append((f"c{k}", tuple(reqs)))
    exists = brute_force_exists(cs, devices, set(), CLASSES)
    for out in (
        allocate_results(cs, devices, set(), CLASSES),
        allocate_joint(cs, devices, set(), CLASSES),
    ):
        assert (out is not None) == exists
        if out is not None:
            picked = [r.device for rs in out.values() for r in rs]
            assert len(picked) == len(set(picked))


def test_prioritized_list_gate_is_on_at_every_release() -> None:
    from gangplan.models.version import KubeVersion, dra_prioritized_list

    assert all(dra_prioritized_list(KubeVersion(v)) for v in ("1.35", "1.36", "1.37"))


def test_a_constraint_may_name_a_subrequest_and_a_typo_is_refused() -> None:
    import pytest

    from gangplan.io.errors import SnapshotError

    def claim(names):
        return [
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "c"},
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "r",
                                "firstAvailable": [
                                    {"name": "a", "deviceClassName": "x"},
                                    {"name": "b", "deviceClassName": "y", "count": 2},
                                ],
                            }
                        ],
                        "constraints": [{"requests": names, "matchAttribute": "d/numa"}],
                    }
                },
            }
        ]

    c = load_objects(claim(["r/b"]))
    (r,) = c.dra.claims["default/c"].requests
    assert [(a.name, a.device_class, a.count) for a in r.alternatives] == [
        ("a", "x", 1),
        ("b", "y", 2),
    ]
    assert c.dra.constraints["default/c"][0].applies("r/b") and not c.dra.constraints["default/c"][
        0
    ].applies("r/a")
    with pytest.raises(SnapshotError, match="r/c"):
        load_objects(claim(["r/c"]))
