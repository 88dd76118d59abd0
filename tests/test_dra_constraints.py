"""DRA claim constraints (``spec.devices.constraints``: matchAttribute, distinctAttribute) in the
allocator, both engines and the validator.

Allocator cases are written from upstream's ``TestAllocator`` table
(``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/
allocator_testing.go``, kubernetes/kubernetes; each test names its case); the fixture
``tests/fixtures/dra/dranet-gpu-nic-pcie-root.yaml`` uses google/dranet's GPU + NIC template
aligned on ``resource.kubernetes.io/pcieRoot`` (source and commit in its README).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gangplan.dra.allocator import AllocationError, allocate, brute_force_exists
from gangplan.dra.model import Constraint, Device, DeviceClass, DeviceRequest
from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_objects, load_snapshot
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "dra"
DRIVER = "driver-a"
CLASSES = {"class-a": DeviceClass(name="class-a", selectors=(f'device.driver == "{DRIVER}"',))}


def dev(name: str, **attrs) -> Device:
    return Device(
        driver=DRIVER, pool="pool-1", slice="slice-1", name=name, attributes={DRIVER: attrs}
    )


def match(attr: str, *requests: str) -> Constraint:
    return Constraint(kind="match", attribute=(DRIVER, attr), requests=requests)


def distinct(attr: str, *requests: str) -> Constraint:
    return Constraint(kind="distinct", attribute=(DRIVER, attr), requests=requests)


def ids(*names: str) -> tuple:
    return tuple((DRIVER, "pool-1", n) for n in names)


# ---- the allocator (TestAllocator) -----------------------------------------------------------
def test_with_constraint() -> None:
    """TestAllocator "with-constraint": int, version, string and bool attributes all equal on
    both devices: req-0 and req-1 get device-1 and device-2."""
    attrs = {"numa": 1, "driverVersion": "1.0.0", "stringAttribute": "v", "boolAttribute": True}
    cons = {
        "c": (
            match("numa"),
            match("driverVersion"),
            match("stringAttribute"),
            match("boolAttribute"),
        )
    }
    reqs = (DeviceRequest("req-0", "class-a"), DeviceRequest("req-1", "class-a"))
    got = allocate(
        [("c", reqs)],
        [dev("device-1", **attrs), dev("device-2", **attrs)],
        set(),
        CLASSES,
        constraints=cons,
    )
    assert got == {"c": ids("device-1", "device-2")}


def test_with_constraint_non_existent_attribute() -> None:
    """TestAllocator "with-constraint-non-existent-attribute": a device without the attribute
    fails the constraint (even for a single device)."""
    cons = {"c": (match("nonExistentAttribute"),)}
    assert (
        allocate(
            [("c", (DeviceRequest("req-0", "class-a"),))],
            [dev("device-1", numa=1)],
            set(),
            CLASSES,
            constraints=cons,
        )
        is None
    )


@pytest.mark.parametrize(
    "attr, values",
    [
        ("numa", (1, 2)),
        ("driverVersion", ("1.0.0", "2.0.0")),
        ("stringAttribute", ("a", "b")),
        ("boolAttribute", (True, False)),
    ],
)
def test_with_constraint_not_matching_attribute(attr, values) -> None:
    """TestAllocator "with-constraint-not-matching-{int,version,string,bool}-attribute": two
    devices whose values differ cannot serve one request of count 2."""
    devices = [dev("device-1", **{attr: values[0]}), dev("device-2", **{attr: values[1]})]
    cons = {"c": (match(attr),)}
    assert (
        allocate(
            [("c", (DeviceRequest("req-0", "class-a", count=2),))],
            devices,
            set(),
            CLASSES,
            constraints=cons,
        )
        is None
    )
    assert (
        allocate([("c", (DeviceRequest("req-0", "class-a", count=2),))], devices, set(), CLASSES)
        is not None
    )


def test_int_and_bool_values_differ() -> None:
    """``1`` and ``true`` are different attribute values (different types), as in the API."""
    devices = [dev("device-1", x=1), dev("device-2", x=True)]
    assert (
        allocate(
            [("c", (DeviceRequest("r", "class-a", count=2),))],
            devices,
            set(),
            CLASSES,
            constraints={"c": (match("x"),)},
        )
        is None
    )


def test_match_backtracks_over_the_first_value() -> None:
    """The first device fixes the value; when the rest cannot match it, the search moves the
    first device on (device order: device-1's numa 0 has no partner, numa 1 has two)."""
    devices = [dev("device-1", numa=0), dev("device-2", numa=1), dev("device-3", numa=1)]
    got = allocate(
        [("c", (DeviceRequest("r", "class-a", count=2),))],
        devices,
        set(),
        CLASSES,
        constraints={"c": (match("numa"),)},
    )
    assert got == {"c": ids("device-2", "device-3")}


def test_a_constraint_covers_only_the_requests_it_names() -> None:
    """``requests: [gpu, nic]``: the third request is free to take any device."""
    devices = [dev("d1", root="a"), dev("d2", root="b"), dev("d3", root="b")]
    reqs = (
        DeviceRequest("other", "class-a"),
        DeviceRequest("gpu", "class-a"),
        DeviceRequest("nic", "class-a"),
    )
    got = allocate(
        [("c", reqs)], devices, set(), CLASSES, constraints={"c": (match("root", "gpu", "nic"),)}
    )
    assert got == {"c": ids("d1", "d2", "d3")}
    # Without ``requests`` it covers all three: no value has three devices.
    assert (
        allocate([("c", reqs)], devices, set(), CLASSES, constraints={"c": (match("root"),)})
        is None
    )


def test_constraints_are_per_claim() -> None:
    """Two claims with the same constraint may each pick their own value."""
    devices = [dev("d1", numa=0), dev("d2", numa=1)]
    claims = [("c1", (DeviceRequest("r", "class-a"),)), ("c2", (DeviceRequest("r", "class-a"),))]
    got = allocate(
        claims,
        devices,
        set(),
        CLASSES,
        constraints={"c1": (match("numa"),), "c2": (match("numa"),)},
    )
    assert got == {"c1": ids("d1"), "c2": ids("d2")}


def test_distinct_attribute() -> None:
    """distinctAttribute (KEP-5075, ``incubating/constraint.go``): pairwise different values; the
    search skips a device whose value is taken."""
    devices = [dev("d1", nic="p0"), dev("d2", nic="p0"), dev("d3", nic="p1")]
    req = (DeviceRequest("r", "class-a", count=2),)
    assert allocate(
        [("c", req)], devices, set(), CLASSES, constraints={"c": (distinct("nic"),)}
    ) == {"c": ids("d1", "d3")}
    req3 = (DeviceRequest("r", "class-a", count=3),)
    assert (
        allocate([("c", req3)], devices, set(), CLASSES, constraints={"c": (distinct("nic"),)})
        is None
    )


def test_distinct_attribute_is_unknown_to_the_v1_35_allocator() -> None:
    """v1.35 runs the stable allocator, which has no case for distinctAttribute: the claim fails
    with "empty constraint (unsupported constraint type?)"; an empty constraint fails everywhere."""
    devices = [dev("d1", nic="p0"), dev("d2", nic="p1")]
    req = (DeviceRequest("r", "class-a", count=2),)
    with pytest.raises(AllocationError, match="empty constraint"):
        allocate(
            [("c", req)],
            devices,
            set(),
            CLASSES,
            constraints={"c": (distinct("nic"),)},
            distinct=False,
        )
    with pytest.raises(AllocationError, match="constraint #0: empty constraint"):
        allocate(
            [("c", req)], devices, set(), CLASSES, constraints={"c": (Constraint(kind="empty"),)}
        )


attr_values = st.sampled_from([0, 1, "x"])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(attr_values, attr_values), min_size=1, max_size=5),
    st.lists(st.integers(1, 2), min_size=1, max_size=3),
    st.sampled_from(["match", "distinct"]),
    st.booleans(),
    st.sets(st.integers(0, 4), max_size=2),
)
def test_constrained_allocator_agrees_with_brute_force(
    attrs, counts, kind, cover_all, used
) -> None:
    """Random devices (two attributes, some missing), claims of one or two requests and a
    constraint on all or on the first request: the allocator finds an allocation exactly when
    the brute force over every assignment does, and what it returns satisfies the constraint."""
    devices = [
        Device(
            driver=DRIVER,
            pool="pool-1",
            slice="s",
            name=f"d{i}",
            attributes={DRIVER: {k: v for k, v in (("a", a), ("b", b)) if v != "x"}},
        )
        for i, (a, b) in enumerate(attrs)
    ]
    in_use = {devices[i].id for i in used if i < len(devices)}
    claims = []
    cons = {}
    for k, n in enumerate(counts):
        reqs = tuple(DeviceRequest(f"r{j}", "class-a", count=n) for j in range(1 + k % 2))
        claims.append((f"c{k}", reqs))
        cons[f"c{k}"] = (
            Constraint(
                kind=kind,
                attribute=(DRIVER, "a" if k % 2 == 0 else "b"),
                requests=() if cover_all else ("r0",),
            ),
        )
    got = allocate(claims, devices, in_use, CLASSES, constraints=cons)
    assert (got is not None) == brute_force_exists(
        claims, devices, in_use, CLASSES, constraints=cons
    )
    if got is not None:
        from gangplan.dra.allocator import constraints_hold

        by_id = {d.id: d for d in devices}
        for key, reqs in claims:
            names = [r.name for r in reqs for _ in range(r.count)]
            assert constraints_hold(
                cons[key], list(zip(names, (by_id[i] for i in got[key]), strict=True))
            )


# ---- reading ---------------------------------------------------------------------------------
def _claim(constraints: list, requests=("a", "b")) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "x", "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [{"name": r, "exactly": {"deviceClassName": "gpu"}} for r in requests],
                "constraints": constraints,
            }
        },
    }


def test_constraints_are_read_and_no_longer_warned_about() -> None:
    c = load_objects(
        [
            _claim(
                [
                    {"requests": ["a", "b"], "matchAttribute": "resource.kubernetes.io/pcieRoot"},
                    {"distinctAttribute": "gpu.example.com/nic"},
                ]
            )
        ]
    )
    assert c.dra.constraints["default/x"] == (
        Constraint("match", ("resource.kubernetes.io", "pcieRoot"), ("a", "b")),
        Constraint("distinct", ("gpu.example.com", "nic"), ()),
    )
    assert not any("constraint" in w for w in c.warnings)


@pytest.mark.parametrize(
    "constraint, message",
    [
        (
            {"matchAttribute": "a/b", "distinctAttribute": "a/b"},
            "exactly one of matchAttribute, distinctAttribute",
        ),
        ({"matchAttribute": "pcieRoot"}, "fully qualified attribute name"),
        ({"requests": ["gpu"], "matchAttribute": "a/b"}, "names request 'gpu'"),
    ],
)
def test_bad_constraints_are_refused(constraint, message) -> None:
    with pytest.raises(SnapshotError, match=message):
        load_objects([_claim([constraint])])


def test_an_unknown_constraint_field_is_named() -> None:
    c = load_objects([_claim([{"matchAttribute": "a/b", "matchAtribute": "a/c"}])])
    assert any("unknown constraint field 'matchAtribute'" in w for w in c.warnings)


# ---- the engines and the validator on dranet's GPU + NIC template ------------------------------
def _devices(result) -> dict[str, tuple]:
    return {k: (o.node, tuple(c.device for c in o.claims)) for k, o in result.pods.items()}


def test_dranet_gpu_nic_template_greedy_places_two_pods_aligned() -> None:
    """node-a has no root with two GPUs of index <= 2 and two NICs; node-b fits directly; node-c
    after backtracking off gpu-0 (module docstring of the fixture)."""
    c = load_snapshot(FIXTURES / "dranet-gpu-nic-pcie-root.yaml")
    g = solve_greedy(c)
    assert validate(c, g) == []
    assert _devices(g) == {
        "default/nccl-0": ("node-b", ("gpu-0", "gpu-1", "nic-0", "nic-1")),
        "default/nccl-1": ("node-c", ("gpu-1", "gpu-2", "nic-1", "nic-2")),
        "default/nccl-2": (None, ()),
    }
    assert "cannot allocate all claims" in g.pods["default/nccl-2"].reason


def test_dranet_gpu_nic_template_exact_places_two_pods_aligned() -> None:
    c = load_snapshot(FIXTURES / "dranet-gpu-nic-pcie-root.yaml")
    e = solve_exact(c, time_limit=10)
    assert validate(c, e) == []
    assert sorted(o.node for o in e.pods.values() if o.node) == ["node-b", "node-c"]


def test_validator_rejects_named_devices_that_break_the_constraint(tmp_path) -> None:
    """The validator checks the constraint on the devices a Result names, independently of the
    search: nccl-1 on node-c named with gpu-0 (root 8c) and gpu-1 (root 9d) is refused."""
    c = load_snapshot(FIXTURES / "dranet-gpu-nic-pcie-root.yaml")
    g = solve_greedy(c)
    doc = json.loads(g.model_dump_json(by_alias=True))
    claims = doc["pods"]["default/nccl-1"]["claims"]
    claims[0]["device"], claims[1]["device"] = "gpu-0", "gpu-1"
    bad = type(g).model_validate(doc)
    problems = [str(v) for v in validate(c, bad)]
    assert any(
        "break its constraints (matchAttribute resource.kubernetes.io/pcieRoot)" in p
        for p in problems
    ), problems


# ---- the exact engine's per-value rows --------------------------------------------------------
def _cluster(
    nodes: dict[str, list[tuple[str, str, object]]],
    pods: int,
    devices_spec: dict,
    distinct_attr: bool = False,
):
    """``nodes``: node -> [(device name, kind gpu|nic, attribute value or None)]; ``pods`` pods each
    with one claim from a template: 1 GPU + 1 NIC on one ``root`` (matchAttribute), or with
    ``distinct_attr`` 2 NICs on different ``port`` (distinctAttribute)."""
    objs: list[dict] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": kind},
            "spec": {
                "selectors": [
                    {"cel": {"expression": f"device.attributes['{DRIVER}'].kind == '{kind}'"}}
                ]
            },
        }
        for kind in ("gpu", "nic")
    ]
    if distinct_attr:
        devices = {
            "requests": [{"name": "nic", "exactly": {"deviceClassName": "nic", "count": 2}}],
            "constraints": [{"distinctAttribute": f"{DRIVER}/port"}],
        }
    else:
        devices = {
            "requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu"}},
                {"name": "nic", "exactly": {"deviceClassName": "nic"}},
            ],
            "constraints": [{"requests": ["gpu", "nic"], "matchAttribute": f"{DRIVER}/root"}],
        }
    objs.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": "default"},
            "spec": {"spec": {"devices": devices}},
        }
    )
    attr = "port" if distinct_attr else "root"
    for n, devs in nodes.items():
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": n},
                "status": {"allocatable": {"cpu": "64", "memory": "64Gi", "pods": "110"}},
            }
        )
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{n}-s"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": n,
                    "pool": {"name": n, "generation": 0, "resourceSliceCount": 1},
                    "devices": [
                        {
                            "name": d,
                            "attributes": {
                                "kind": {"string": k},
                                **({attr: {"string": str(v)}} if v is not None else {}),
                            },
                        }
                        for d, k, v in devs
                    ],
                },
            }
        )
    for i in range(pods):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{i}", "namespace": "default"},
                "spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                    "resourceClaims": [{"name": "dev", "resourceClaimTemplateName": "t"}],
                },
            }
        )
    return load_objects(objs)


def _placed(c, r) -> int:
    assert validate(c, r) == []
    return sum(o.node is not None for o in r.pods.values())


def test_exact_splits_claims_over_values() -> None:
    """Root a has 2 GPUs and 1 NIC, root b 1 GPU and 2 NICs: 3 GPUs and 3 NICs, but only two
    aligned pairs. Both engines place 2 pods (the device counts alone would allow 3)."""
    c = _cluster(
        {
            "n": [
                ("g0", "gpu", "a"),
                ("g1", "gpu", "a"),
                ("g2", "gpu", "b"),
                ("k0", "nic", "a"),
                ("k1", "nic", "b"),
                ("k2", "nic", "b"),
            ]
        },
        3,
        {},
    )
    assert _placed(c, solve_greedy(c)) == 2
    assert _placed(c, solve_exact(c, time_limit=5)) == 2


def test_exact_distinct_attribute_counts_values_per_claim() -> None:
    """Two NICs on different ports per claim: ports p0, p0, p1, p1 hold two claims, ports p0,
    p0, p0, p1 only one (every claim needs the single p1 NIC)."""
    two = _cluster(
        {"n": [("k0", "nic", "p0"), ("k1", "nic", "p0"), ("k2", "nic", "p1"), ("k3", "nic", "p1")]},
        3,
        {},
        distinct_attr=True,
    )
    assert (
        _placed(two, solve_greedy(two)) == 2 and _placed(two, solve_exact(two, time_limit=5)) == 2
    )
    one = _cluster(
        {"n": [("k0", "nic", "p0"), ("k1", "nic", "p0"), ("k2", "nic", "p0"), ("k3", "nic", "p1")]},
        3,
        {},
        distinct_attr=True,
    )
    assert (
        _placed(one, solve_greedy(one)) == 1 and _placed(one, solve_exact(one, time_limit=5)) == 1
    )


def test_distinct_attribute_on_v1_35_fits_nowhere() -> None:
    """v1.35's allocator fails claims with distinctAttribute: neither engine places the pods."""
    c = _cluster(
        {"n": [("k0", "nic", "p0"), ("k1", "nic", "p1")]}, 1, {}, distinct_attr=True
    ).at_version("1.35")
    g = solve_greedy(c)
    assert _placed(c, g) == 0 and "empty constraint" in g.pods["default/p0"].reason
    assert _placed(c, solve_exact(c, time_limit=5)) == 0


def _most_claims(c) -> int:
    """The most claims of the template that one node can hold together (the allocator's joint
    search is complete, so j pods fit iff j claims allocate jointly)."""
    from gangplan.dra.allocator import allocate as joint

    dra = c.dra
    key = next(iter(dra.pod_claims.values()))[0]
    best = 0
    for devices in dra.devices_by_node.values():
        j = 0
        while (
            j < len(c.pending_pods)
            and joint(
                [(f"c{i}", dra.claims[key].requests) for i in range(j + 1)],
                devices,
                set(),
                dra.classes,
                constraints={f"c{i}": dra.constraints[key] for i in range(j + 1)},
            )
            is not None
        ):
            j += 1
        best += j
    return best


values = st.sampled_from(["a", "b", "c", None])


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["gpu", "nic"]), values), min_size=1, max_size=6),
    st.integers(1, 4),
    st.booleans(),
)
def test_exact_places_as_many_as_the_brute_force(devs, pods, distinct_attr) -> None:
    """One node with random devices and values: the exact engine places exactly as many pods as
    fit (joint allocations tried for 1, 2, ... claims), greedy at most that, both valid."""
    c = _cluster(
        {"n": [(f"d{i}", k, v) for i, (k, v) in enumerate(devs)]},
        pods,
        {},
        distinct_attr=distinct_attr,
    )
    most = _most_claims(c)
    assert _placed(c, solve_exact(c, time_limit=5)) == most
    assert _placed(c, solve_greedy(c)) <= most


def test_exact_is_conservative_and_says_so_where_its_rows_are_not_exact() -> None:
    """A matchAttribute claim on a shared device (allowMultipleAllocations, KEP-5075): greedy
    puts both half-GPU pods on the one GPU; the exact engine names the node in a warning and
    places at most one constrained claim there. Both results are valid."""
    objs: list[dict] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": "default"},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "g",
                                "exactly": {
                                    "deviceClassName": "gpu",
                                    "capacity": {"requests": {"milli": "500"}},
                                },
                            }
                        ],
                        "constraints": [{"matchAttribute": f"{DRIVER}/root"}],
                    }
                }
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n"},
            "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": DRIVER,
                "nodeName": "n",
                "pool": {"name": "n", "generation": 0, "resourceSliceCount": 1},
                "devices": [
                    {
                        "name": "gpu-0",
                        "allowMultipleAllocations": True,
                        "attributes": {"root": {"string": "r0"}},
                        "capacity": {"milli": {"value": "1000"}},
                    }
                ],
            },
        },
    ]
    objs += [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{i}", "namespace": "default"},
            "spec": {
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                "resourceClaims": [{"name": "dev", "resourceClaimTemplateName": "t"}],
            },
        }
        for i in range(2)
    ]
    c = load_objects(objs)
    g, e = solve_greedy(c), solve_exact(c, time_limit=5)
    assert _placed(c, g) == 2 and _placed(c, e) == 1
    assert any(
        "not exact on 1 node(s) (e.g. n: device driver-a/n/gpu-0 is shared" in w for w in e.warnings
    )
    assert not any("not exact" in w for w in g.warnings)


def test_first_fit_alignment_loses_a_pod_the_optimum_places() -> None:
    """Root a: 2 GPUs and 2 NICs, root b: 1 GPU and 1 NIC. The small claim (1 + 1 aligned)
    comes first and the allocator gives it root a's first devices (device order), so the big
    claim (2 + 2 aligned) fits nowhere: greedy places 1 pod. The optimum puts the small claim on
    root b: 2 pods. Both results pass the validator."""
    gpu = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {
            "selectors": [{"cel": {"expression": f"device.attributes['{DRIVER}'].kind == 'gpu'"}}]
        },
    }
    nic = {
        **gpu,
        "metadata": {"name": "nic"},
        "spec": {
            "selectors": [{"cel": {"expression": f"device.attributes['{DRIVER}'].kind == 'nic'"}}]
        },
    }

    def template(name: str, n: int) -> dict:
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": n}},
                            {"name": "nic", "exactly": {"deviceClassName": "nic", "count": n}},
                        ],
                        "constraints": [{"matchAttribute": f"{DRIVER}/root"}],
                    }
                }
            },
        }

    devs = [
        ("g0", "gpu", "a"),
        ("g1", "gpu", "a"),
        ("g2", "gpu", "b"),
        ("k0", "nic", "a"),
        ("k1", "nic", "a"),
        ("k2", "nic", "b"),
    ]
    objs = [
        gpu,
        nic,
        template("small", 1),
        template("big", 2),
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n"},
            "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": DRIVER,
                "nodeName": "n",
                "pool": {"name": "n", "generation": 0, "resourceSliceCount": 1},
                "devices": [
                    {"name": d, "attributes": {"kind": {"string": k}, "root": {"string": v}}}
                    for d, k, v in devs
                ],
            },
        },
    ]
    for i, (name, tpl) in enumerate((("small", "small"), ("big", "big"))):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "namespace": "default",
                    "creationTimestamp": f"2026-01-01T00:00:0{i}Z",
                },
                "spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                    "resourceClaims": [{"name": "dev", "resourceClaimTemplateName": tpl}],
                },
            }
        )
    c = load_objects(objs)
    g, e = solve_greedy(c), solve_exact(c, time_limit=10)
    assert _placed(c, g) == 1 and g.pods["default/big"].node is None
    assert [x.device for x in g.pods["default/small"].claims] == ["g0", "k0"]
    assert _placed(c, e) == 2
    assert {x.device for x in e.pods["default/small"].claims} == {"g2", "k2"}


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(attr_values, attr_values), min_size=1, max_size=5),
    st.lists(st.integers(1, 2), min_size=1, max_size=3),
    st.sampled_from(["match", "distinct"]),
)
def test_joint_allocation_is_the_in_order_search_when_that_succeeds_claim_by_claim(
    attrs, counts, kind
) -> None:
    """``allocate_joint`` (validator and device naming): an allocation exactly when one exists,
    and the in-order search's devices whenever the claims succeed one after another."""
    from gangplan.dra.allocator import allocate_joint, allocate_results

    devices = [
        Device(
            driver=DRIVER,
            pool="pool-1",
            slice="s",
            name=f"d{i}",
            attributes={DRIVER: {k: v for k, v in (("a", a), ("b", b)) if v != "x"}},
        )
        for i, (a, b) in enumerate(attrs)
    ]
    claims = [(f"c{k}", (DeviceRequest("r0", "class-a", count=n),)) for k, n in enumerate(counts)]
    cons = {f"c{k}": (Constraint(kind=kind, attribute=(DRIVER, "a")),) for k in range(len(counts))}
    got = allocate_joint(claims, devices, set(), CLASSES, constraints=cons)
    assert (got is not None) == brute_force_exists(
        claims, devices, set(), CLASSES, constraints=cons
    )
    used: set = set()
    one_by_one = True
    for key, reqs in claims:
        alone = allocate_results([(key, reqs)], devices, used, CLASSES, constraints=cons)
        if alone is None:
            one_by_one = False
            break
        used |= {r.device for r in alone[key]}
    if one_by_one:
        assert got == allocate_results(claims, devices, set(), CLASSES, constraints=cons)
