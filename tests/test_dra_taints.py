"""Device taints, tolerations and DeviceTaintRules (KEP-5055) in the allocator, both engines and
the validator (issue 23).

Allocator cases are written from upstream's ``TestAllocator`` table with the upstream case names
(``tainted-*``, ``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/
allocatortesting/allocator_testing.go``, kubernetes/kubernetes @008b3652; the older
``structured/allocator_test.go`` has the same cases but ``tainted-no-effect`` and
``tainted-two-devices-prioritized-list-tolerated``), with its fixtures: ``taintNoSchedule`` (taint-key=taint-value:NoSchedule), ``taintNoExecute``
(taint-key=taint-value-2:NoExecute), ``tolerationNoSchedule`` (Exists taint-key, NoSchedule),
``tolerationNoExecute`` (Equal taint-key=taint-value-2, NoExecute). ``tainted-admin-access`` and
``tainted-admin-access-disabled`` are in tests/test_dra_admin_access.py. Toleration matching is
``TestTolerationToleratesTaint`` (``resourceclaim/devicetoleration_test.go``). The semantics are
``allocateDevice`` / ``taintPreventsAllocation`` of ``internal/stable/allocator_stable.go`` and
``internal/incubating/allocator_incubating.go`` @03ab440c; DeviceTaintRules are applied as
``resourceslice/tracker/tracker.go`` ``applyPatches`` does; the gates per release are
``staging/src/k8s.io/kube-scheduler/pkg/features/kube_features.go`` (master @ead35706).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.dra.allocator import allocate_results, brute_force_exists
from gangplan.dra.model import Device, DeviceClass, DeviceRequest, DeviceTaint, DeviceToleration
from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_objects, load_snapshot
from gangplan.models.result import ClaimDevice, PodOutcome
from gangplan.models.version import KubeVersion, dra_taint_mode
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

DRIVER_A, DRIVER_B = "driver-a", "driver-b"
CLASSES = {
    "class-a": DeviceClass(name="class-a", selectors=(f'device.driver == "{DRIVER_A}"',)),
    "class-b": DeviceClass(name="class-b", selectors=(f'device.driver == "{DRIVER_B}"',)),
}
TAINT_NO_SCHEDULE = DeviceTaint(key="taint-key", value="taint-value", effect="NoSchedule")
TAINT_NO_EXECUTE = DeviceTaint(key="taint-key", value="taint-value-2", effect="NoExecute")
TOLERATION_NO_SCHEDULE = DeviceToleration(key="taint-key", operator="Exists", effect="NoSchedule")
TOLERATION_NO_EXECUTE = DeviceToleration(
    key="taint-key", operator="Equal", value="taint-value-2", effect="NoExecute"
)


def device(name: str, *taints: DeviceTaint, driver: str = DRIVER_A) -> Device:
    """A device of slice-1 / pool-1 with ``taints`` as the allocator sees them (the release checks them)."""
    return Device(
        driver=driver, pool="pool-1", slice="slice-1", name=name, taints=taints, slice_taints=taints
    )


def untainted_view(devices: list[Device]) -> list[Device]:
    """The devices as a release with DRADeviceTaints off sees them (``deviceTaints: false``)."""
    return [replace(d, taints=()) for d in devices]


def req(
    name: str = "req-0",
    cls: str = "class-a",
    count: int = 1,
    *tolerations: DeviceToleration,
    all: bool = False,
) -> DeviceRequest:
    return DeviceRequest(name=name, device_class=cls, count=count, tolerations=tolerations, all=all)


def got(claims, devices):
    out = allocate_results(claims, devices, set(), CLASSES)
    search = allocate_results(claims, devices, set(), CLASSES, counting=False)
    assert out == search  # (counting and the search agree)
    assert (out is not None) == brute_force_exists(claims, devices, set(), CLASSES)
    return (
        None if out is None else {k: [(r.request, r.device[2]) for r in v] for k, v in out.items()}
    )


# ---- upstream's TestAllocator cases --------------------------------------------------------
def test_tainted_two_devices() -> None:
    devices = [device("device-1", TAINT_NO_SCHEDULE), device("device-2", TAINT_NO_EXECUTE)]
    assert got([("claim-0", (req(),))], devices) is None


def test_tainted_one_device_two_taints() -> None:
    assert (
        got([("claim-0", (req(),))], [device("device-1", TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE)])
        is None
    )


def test_tainted_two_devices_tolerated() -> None:
    """Only the second device's taint is tolerated."""
    devices = [device("device-1", TAINT_NO_SCHEDULE), device("device-2", TAINT_NO_EXECUTE)]
    assert got([("claim-0", (req("req-0", "class-a", 1, TOLERATION_NO_EXECUTE),))], devices) == {
        "claim-0": [("req-0", "device-2")]
    }


def test_tainted_one_device_two_taints_both_tolerated() -> None:
    devices = [device("device-1", TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE)]
    claim = (
        "claim-0",
        (req("req-0", "class-a", 1, TOLERATION_NO_SCHEDULE, TOLERATION_NO_EXECUTE),),
    )
    assert got([claim], devices) == {"claim-0": [("req-0", "device-1")]}


def test_tainted_disabled() -> None:
    devices = untainted_view([device("device-1", TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE)])
    assert got([("claim-0", (req(),))], devices) == {"claim-0": [("req-0", "device-1")]}


def _prioritized(*sub_tolerations: DeviceToleration) -> tuple:
    subs = (req("subReq-0", "class-b"), req("subReq-1", "class-a", 1, *sub_tolerations))
    return ("claim-0", (DeviceRequest(name="req-0", device_class="class-b", alternatives=subs),))


def test_tainted_prioritized_list() -> None:
    assert got([_prioritized()], [device("device-1", TAINT_NO_SCHEDULE)]) is None


def test_tainted_prioritized_list_disabled() -> None:
    devices = untainted_view([device("device-1", TAINT_NO_SCHEDULE)])
    assert got([_prioritized()], devices) == {"claim-0": [("req-0/subReq-1", "device-1")]}


def test_tainted_prioritized_list_subrequest_tolerates() -> None:
    """A subrequest's own ``tolerations`` (``deviceSubRequestAccessor.tolerations``; not an upstream case)."""
    assert got([_prioritized(TOLERATION_NO_SCHEDULE)], [device("device-1", TAINT_NO_SCHEDULE)]) == {
        "claim-0": [("req-0/subReq-1", "device-1")]
    }


def test_tainted_two_devices_prioritized_list_tolerated() -> None:
    """subReq-0 tolerates nothing, subReq-1 the NoExecute taint: only device-2, for subReq-1."""
    devices = [device("device-1", TAINT_NO_SCHEDULE), device("device-2", TAINT_NO_EXECUTE)]
    subs = (req("subReq-0"), req("subReq-1", "class-a", 1, TOLERATION_NO_EXECUTE))
    claim = ("claim-0", (DeviceRequest(name="req-0", device_class="class-a", alternatives=subs),))
    assert got([claim], devices) == {"claim-0": [("req-0/subReq-1", "device-2")]}


def test_tainted_all_devices_single() -> None:
    """allocationMode All lists the tainted device (``validateDeviceRequest``) and then fails on
    it in ``allocateDevice``: no allocation, and no error."""
    assert got([("claim-0", (req(all=True),))], [device("device-1", TAINT_NO_SCHEDULE)]) is None


def test_tainted_all_devices_single_disabled() -> None:
    devices = untainted_view([device("device-1", TAINT_NO_SCHEDULE)])
    assert got([("claim-0", (req(all=True),))], devices) == {"claim-0": [("req-0", "device-1")]}


def test_tainted_all_devices_one_of_two_fails_the_request() -> None:
    """All with one clean and one tainted device: the whole request fails (never a partial All)."""
    devices = [device("device-1"), device("device-2", TAINT_NO_EXECUTE)]
    assert got([("claim-0", (req(all=True),))], devices) is None
    assert got(
        [("claim-0", (req("req-0", "class-a", 1, TOLERATION_NO_EXECUTE, all=True),))], devices
    ) == {"claim-0": [("req-0", "device-1"), ("req-0", "device-2")]}


def test_tainted_no_effect() -> None:
    """``taintPreventsAllocation``: "Only known effects prevent allocation, others (including None) are ignored"."""
    assert got(
        [("claim-0", (req(),))], [device("device-1", DeviceTaint(key="info", effect="None"))]
    ) == {"claim-0": [("req-0", "device-1")]}


def test_the_search_backtracks_past_an_untolerated_device() -> None:
    """Two requests: req-0 tolerates the taint, req-1 does not; the search gives the tainted device
    to req-0 only after trying the clean one first (counting cannot decide: overlapping sets)."""
    devices = [device("device-1"), device("device-2", TAINT_NO_SCHEDULE)]
    claim = ("claim-0", (req("req-0", "class-a", 1, TOLERATION_NO_SCHEDULE), req("req-1")))
    assert got([claim], devices) == {"claim-0": [("req-0", "device-2"), ("req-1", "device-1")]}


# ---- ToleratesTaint (TestTolerationToleratesTaint) ------------------------------------------
@pytest.mark.parametrize(
    ("toleration", "taint", "tolerated"),
    [
        (
            DeviceToleration("foo", "Exists", effect="NoSchedule"),
            DeviceTaint("foo", effect="NoSchedule"),
            True,
        ),
        (
            DeviceToleration("foo", "Exists", effect="NoSchedule"),
            DeviceTaint("foo", "bar", "NoSchedule"),
            True,
        ),
        (
            DeviceToleration("", "Exists", effect="NoSchedule"),
            DeviceTaint("foo", "bar", "NoSchedule"),
            True,
        ),
        (
            DeviceToleration("foo", "Equal", "bar", "NoSchedule"),
            DeviceTaint("foo", "bar", "NoSchedule"),
            True,
        ),
        (
            DeviceToleration("foo", "Equal", "value1", "NoSchedule"),
            DeviceTaint("foo", "value2", "NoSchedule"),
            False,
        ),
        (
            DeviceToleration("foo", "Equal", "bar", "NoSchedule"),
            DeviceTaint("foo", "bar", "NoExecute"),
            False,
        ),
        # the rules of the function's comment: an empty effect matches every effect, an empty key with Exists every taint
        (DeviceToleration("foo", "Equal", "bar", ""), DeviceTaint("foo", "bar", "NoExecute"), True),
        (DeviceToleration("", "Exists"), DeviceTaint("anything", "x", "NoExecute"), True),
        (DeviceToleration("foo", "Exists"), DeviceTaint("other", "", "NoSchedule"), False),
        (DeviceToleration("foo", "Equal", ""), DeviceTaint("foo", "bar", "NoSchedule"), False),
    ],
)
def test_toleration_tolerates_taint(toleration, taint, tolerated) -> None:
    assert toleration.tolerates(taint) is tolerated


# ---- the allocator against a brute force ----------------------------------------------------
TAINTS = [
    DeviceTaint("k", "v", "NoSchedule"),
    DeviceTaint("k", "w", "NoExecute"),
    DeviceTaint("j", "", "NoSchedule"),
    DeviceTaint("i", "", "None"),
]
TOLERATIONS = [
    DeviceToleration("k", "Exists"),
    DeviceToleration("k", "Equal", "v", "NoSchedule"),
    DeviceToleration("", "Exists", effect="NoExecute"),
    DeviceToleration("j", "Exists", effect="NoSchedule"),
]


@settings(max_examples=60, deadline=None)
@given(
    taints=st.lists(st.sets(st.integers(0, 3)), min_size=1, max_size=4),
    requests=st.lists(
        st.tuples(st.integers(1, 2), st.sets(st.integers(0, 3)), st.booleans()),
        min_size=1,
        max_size=3,
    ),
)
def test_allocator_agrees_with_brute_force_on_taints(taints, requests) -> None:
    """Random taints on up to four devices, up to three requests with random tolerations (some
    allocationMode All): the search, counting and the brute force agree on whether an allocation
    exists, and every device the search gives is tolerated."""
    devices = [
        device(f"device-{i}", *(TAINTS[t] for t in sorted(ts))) for i, ts in enumerate(taints)
    ]
    reqs = tuple(
        req(f"req-{j}", "class-a", n, *(TOLERATIONS[t] for t in sorted(ts)), all=a)
        for j, (n, ts, a) in enumerate(requests)
    )
    out = got([("claim-0", reqs)], devices)
    if out is not None:
        by = {d.name: d for d in devices}
        for name, dev in out["claim-0"]:
            r = next(r for r in reqs if r.name == name)
            assert all(
                t.effect == "None" or any(tol.tolerates(t) for tol in r.tolerations)
                for t in by[dev].taints
            )


# ---- snapshots: both engines, the validator, DeviceTaintRules, the release gates ------------
def _snapshot(
    *,
    slice_taints: dict[str, list[dict]] | None = None,
    rules: list[dict] | None = None,
    pods: tuple[str, ...] = ("plain", "tolerant"),
    kube_version: str | None = None,
    held: str | None = None,
):
    """One node ``n0`` with GPUs gpu-0 and gpu-1 (``slice_taints``: device -> taints), a second node
    ``n1`` with one clean GPU when there are more than two pods; templates ``plain`` and
    ``tolerant`` (tolerates key ``health`` with any value and effect)."""
    objs: list[dict] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        }
    ]
    for name, tol in (("plain", None), ("tolerant", [{"key": "health", "operator": "Exists"}])):
        ex: dict = {"deviceClassName": "gpu"}
        if tol:
            ex["tolerations"] = tol
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": ex}]}}},
            }
        )
    nodes = {"n0": ["gpu-0", "gpu-1"]} | ({"n1": ["gpu-0"]} if len(pods) > 2 else {})
    for n, names in nodes.items():
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": n},
                "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}},
            }
        )
        devs = [
            {
                "name": d,
                **(
                    {"taints": slice_taints[d]}
                    if n == "n0" and slice_taints and d in slice_taints
                    else {}
                ),
            }
            for d in names
        ]
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{n}-gpus"},
                "spec": {
                    "driver": "gpu.example.com",
                    "nodeName": n,
                    "pool": {"name": n, "generation": 0, "resourceSliceCount": 1},
                    "devices": devs,
                },
            }
        )
    objs += rules or []
    if held:
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "held", "namespace": "default"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]
                    }
                },
                "status": {
                    "allocation": {
                        "devices": {
                            "results": [
                                {
                                    "request": "gpu",
                                    "driver": "gpu.example.com",
                                    "pool": "n0",
                                    "device": held,
                                }
                            ]
                        }
                    }
                },
            }
        )
    for k, t in enumerate(pods):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{k}", "namespace": "default"},
                "spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                    "resourceClaims": [{"name": "g", "resourceClaimTemplateName": t}],
                },
            }
        )
    return load_objects(objs, kube_version=kube_version)


BAD = {"gpu-1": [{"key": "health", "value": "ecc", "effect": "NoSchedule"}]}


def _placed(r) -> dict[str, tuple[str | None, tuple[str, ...]]]:
    return {k: (o.node, tuple(x.device for x in o.claims)) for k, o in sorted(r.pods.items())}


def test_greedy_gives_the_clean_gpu_to_the_tolerant_pod_exact_places_both_all_valid() -> None:
    """n0: gpu-0 clean, gpu-1 tainted NoSchedule. Plain pod first: it takes gpu-0 and the tolerant
    pod gpu-1. Tolerant pod first: greedy gives it gpu-0 (first in slice order) and the plain pod
    fits nowhere, while the exact engine (device rows per (class, selectors, tolerations) pair,
    Hall rows over their overlap) places both. Every Result passes the validator."""
    c = _snapshot(slice_taints=BAD, pods=("plain", "tolerant"))
    g, e = solve_greedy(c), solve_exact(c, time_limit=10, workers=1)
    assert validate(c, g) == [] and validate(c, e) == []
    assert _placed(g) == {"default/p0": ("n0", ("gpu-0",)), "default/p1": ("n0", ("gpu-1",))}
    c = _snapshot(slice_taints=BAD, pods=("tolerant", "plain"))
    g, e = solve_greedy(c), solve_exact(c, time_limit=10, workers=1)
    assert validate(c, g) == [] and validate(c, e) == []
    assert _placed(g) == {"default/p0": ("n0", ("gpu-0",)), "default/p1": (None, ())}
    assert sorted(_placed(e).values()) == [("n0", ("gpu-0",)), ("n0", ("gpu-1",))]
    assert _placed(e)["default/p1"] == ("n0", ("gpu-0",))  # the plain pod got the clean GPU


def test_untolerated_gpu_is_never_placed_by_either_engine() -> None:
    c = _snapshot(slice_taints=BAD, pods=("plain", "plain", "plain"))
    for r in (solve_greedy(c), solve_exact(c, time_limit=10, workers=1)):
        assert validate(c, r) == []
        assert sum(o.node is not None for o in r.pods.values()) == 2, r.engine
        assert all("gpu-1" not in d or n != "n0" for n, d in _placed(r).values())


def test_validator_rejects_an_untolerated_device() -> None:
    """A Result putting the plain pod on the tainted GPU: rule dra, on the node (no joint
    allocation exists) and on the device named (the taint, and that it is not tolerated)."""
    c = _snapshot(slice_taints=BAD, pods=("plain", "plain"))
    g = solve_greedy(c)
    pods = dict(g.pods)
    pods["default/p1"] = PodOutcome(
        node="n0",
        claims=[
            ClaimDevice(
                claim="p1-g", request="gpu", driver="gpu.example.com", pool="n0", device="gpu-1"
            )
        ],
    )
    found = validate(c, g.model_copy(update={"pods": pods}))
    assert any(v.rule == "dra" and v.name == "n0" for v in found), found
    assert any(
        v.rule == "dra"
        and "has taint health=ecc:NoSchedule, which request gpu does not tolerate" in v.message
        for v in found
    ), found


def test_release_gates() -> None:
    """v1.35 (DRADeviceTaints off): the tainted GPU is allocated as any other, and a warning says
    so; v1.36+: not. A v1.35 greedy Result validates on the same snapshot read at v1.37, because
    the validator checks the taints of the Result's release."""
    assert [dra_taint_mode(v) for v in ("1.35", "1.36", "1.37", "1.38")] == [
        "off",
        "slices",
        "rules",
        "rules",
    ]
    c35 = _snapshot(slice_taints=BAD, pods=("plain", "plain"), kube_version="1.35")
    assert any("does not check" in w for w in c35.version_warnings)
    for r in (solve_greedy(c35), solve_exact(c35, time_limit=10, workers=1)):
        assert validate(c35, r) == []
        assert sum(o.node is not None for o in r.pods.values()) == 2
    c37 = c35.at_version("1.37")
    assert c37.version_warnings == ()
    old = solve_greedy(c37, kube_version="1.35")
    assert (
        old.options.kube_version == "1.35"
        and sum(o.node is not None for o in old.pods.values()) == 2
    )
    assert validate(c37, old) == []
    assert sum(o.node is not None for o in solve_greedy(c37).pods.values()) == 1
    exact37 = solve_exact(c37, time_limit=10, workers=1)
    assert (
        sum(o.node is not None for o in exact37.pods.values()) == 1 and validate(c37, exact37) == []
    )
    # the view is per release, the snapshot's objects once
    assert c37.dra.for_version(KubeVersion.V1_35) is c35.dra and c37.dra.taint_mode == "rules"


RULE = {
    "apiVersion": "resource.k8s.io/v1alpha3",
    "kind": "DeviceTaintRule",
    "metadata": {"name": "maintenance"},
    "spec": {
        "deviceSelector": {"driver": "gpu.example.com", "pool": "n0", "device": "gpu-0"},
        "taint": {"key": "maintenance", "value": "planned", "effect": "NoExecute"},
    },
}


@pytest.mark.parametrize(
    "api", ["resource.k8s.io/v1alpha3", "resource.k8s.io/v1beta2", "resource.k8s.io/v1"]
)
def test_device_taint_rule_applies_from_v1_37(api) -> None:
    """A DeviceTaintRule selecting n0/gpu-0 (driver, pool, device): from v1.37 (DRADeviceTaintRules
    GA) the scheduler's ResourceSlice tracker adds its taint, so n0 keeps only gpu-1 for a plain
    pod; v1.36 (the gate beta, off) ignores the rule and says so."""
    c = _snapshot(rules=[{**RULE, "apiVersion": api}], pods=("plain", "plain"))
    assert c.warnings == ()
    (d0, d1) = c.dra.devices_by_node["n0"]
    assert (
        [str(t) for t in d0.taints] == ["maintenance=planned:NoExecute"]
        and d0.taints[0].source == "DeviceTaintRule/maintenance"
        and d1.taints == ()
    )
    for r in (solve_greedy(c), solve_exact(c, time_limit=10, workers=1)):
        assert validate(c, r) == []
        assert [n for n, _ in _placed(r).values()].count("n0") == 1, r.engine
    c36 = c.at_version("1.36")
    assert any("DeviceTaintRule(s) are not applied" in w for w in c36.version_warnings)
    assert sum(o.node is not None for o in solve_greedy(c36).pods.values()) == 2


def test_device_taint_rule_selectors() -> None:
    """Driver, pool and device each narrow the rule; an empty selector matches every device; a
    rule without deviceSelector taints every device, as the tracker's code does (warned); the
    tombstoned v1alpha3 deviceClassName is warned about and taints nothing."""

    def taints(spec_selector, **extra):
        rule = {
            **RULE,
            "spec": {
                **({"deviceSelector": spec_selector} if spec_selector is not None else {}),
                "taint": RULE["spec"]["taint"],
            },
        }
        c = _snapshot(rules=[rule], pods=("plain",))
        return [bool(d.taints) for d in c.dra.devices_by_node["n0"]], c.warnings

    assert taints({"device": "gpu-1"}) == ([False, True], ())
    assert taints({"pool": "n0"}) == ([True, True], ())
    assert taints({"pool": "other"}) == ([False, False], ())
    assert taints({"driver": "other.example.com"}) == ([False, False], ())
    assert taints({}) == ([True, True], ())
    every, warned = taints(None)
    assert every == [True, True] and any("without deviceSelector" in w for w in warned)
    none, warned = taints({"deviceClassName": "gpu"})
    assert none == [False, False] and any("deviceClassName" in w for w in warned)


def test_an_allocated_claim_keeps_its_tainted_device_and_noexecute_is_warned() -> None:
    """A claim allocated in the snapshot on a device a NoExecute rule taints stays allocated (the
    allocator only checks new allocations); eviction by the device taint eviction controller is
    not modelled, which a warning says. A NoSchedule taint needs no warning."""
    c = _snapshot(rules=[RULE], pods=("plain",), held="gpu-0")
    assert any(
        "NoExecute taint maintenance=planned:NoExecute (DeviceTaintRule/maintenance)" in w
        and "eviction" in w
        for w in c.warnings
    ), c.warnings
    assert ("gpu.example.com", "n0", "gpu-0") in c.dra.in_use
    for r in (solve_greedy(c), solve_exact(c, time_limit=10, workers=1)):
        assert validate(c, r) == []
        assert _placed(r)["default/p0"] == ("n0", ("gpu-1",))
    quiet = _snapshot(
        slice_taints={"gpu-0": [{"key": "health", "effect": "NoSchedule"}]},
        pods=("plain",),
        held="gpu-0",
    )
    assert not any("eviction" in w for w in quiet.warnings)


# ---- bad input ------------------------------------------------------------------------------
SLICE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: n0
  pool: {name: n0, generation: 0, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    taints: [{key: health, effect: %s}]
"""
TEMPLATE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu
          tolerations: [%s]
"""


@pytest.mark.parametrize(
    ("content", "where", "what"),
    [
        (
            SLICE % "PreferNoSchedule",
            "ResourceSlice/s: spec.devices[0].taints[0].effect",
            "unknown device taint effect 'PreferNoSchedule'",
        ),
        (
            TEMPLATE % "{key: health, operator: Gt, value: '1'}",
            "ResourceClaimTemplate/default/t: spec.spec.devices.requests[0].exactly.tolerations[0].operator",
            "unknown toleration operator 'Gt'",
        ),
        (
            TEMPLATE % "{key: health, effect: Sometimes}",
            "ResourceClaimTemplate/default/t: spec.spec.devices.requests[0].exactly.tolerations[0].effect",
            "unknown device taint effect 'Sometimes'",
        ),
        (
            TEMPLATE % "{operator: Equal, value: x}",
            "ResourceClaimTemplate/default/t: spec.spec.devices.requests[0].exactly.tolerations[0].operator",
            "an empty key requires operator Exists",
        ),
        (
            """
apiVersion: resource.k8s.io/v1beta2
kind: DeviceTaintRule
metadata: {name: r}
spec: {deviceSelector: {pool: n0}, taint: {key: k, effect: Evict}}
""",
            "DeviceTaintRule/r: spec.taint.effect",
            "unknown device taint effect 'Evict'",
        ),
    ],
)
def test_bad_taints_and_tolerations_exit_2_naming_the_field(tmp_path, content, where, what) -> None:
    path = tmp_path / "snap.yaml"
    path.write_text(content)
    with pytest.raises(SnapshotError) as info:
        load_snapshot(path)
    assert str(info.value).startswith(f"{path}: {where}: {what}"), str(info.value)
    result = CliRunner().invoke(app, ["inspect", str(path)])
    assert result.exit_code == 2, result.output
    assert f"error: {path}: {where}: {what}" in (result.stderr or result.output)
    assert "Traceback" not in result.output + (result.stderr or "")


def test_extended_resource_requests_tolerate_nothing() -> None:
    """KEP-5004: the claim kube-scheduler makes for an extended resource a DeviceClass serves has
    requests with a class and a count only (``createDeviceRequests`` of the DynamicResources
    plugin), so they tolerate no taint: two ``nvidia.com/gpu`` on a node with one clean and one
    tainted GPU fit at v1.35 only."""
    objs = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {
                "extendedResourceName": "nvidia.com/gpu",
                "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n0"},
            "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "n0-gpus"},
            "spec": {
                "driver": "gpu.example.com",
                "nodeName": "n0",
                "pool": {"name": "n0", "generation": 0, "resourceSliceCount": 1},
                "devices": [{"name": "gpu-0"}, {"name": "gpu-1", "taints": BAD["gpu-1"]}],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p0", "namespace": "default"},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "resources": {
                            "requests": {"cpu": "1", "nvidia.com/gpu": "2"},
                            "limits": {"nvidia.com/gpu": "2"},
                        },
                    }
                ]
            },
        },
    ]
    for version, placed in (("1.35", 1), ("1.36", 0), ("1.37", 0)):
        c = load_objects(objs, kube_version=version)
        for r in (solve_greedy(c), solve_exact(c, time_limit=10, workers=1)):
            assert validate(c, r) == []
            assert sum(o.node is not None for o in r.pods.values()) == placed, (version, r.engine)


def test_plan_claims_carry_the_tolerations() -> None:
    """``--plan``'s ResourceClaims keep the request's tolerations in ``spec`` and, as upstream's
    allocator copies them (``Tolerations: lookupRequest(claim).tolerations()``), in each
    ``status.allocation.devices.results[]``; read back with the bound pod, the device is in use."""
    from gangplan.io.plan import claim_objects

    c = _snapshot(slice_taints=BAD, pods=("tolerant", "plain"))
    g = solve_greedy(c)
    (claim,) = [o for o in claim_objects(g, c) if o["metadata"]["name"] == "p0-g"]
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] == [
        {"key": "health", "operator": "Exists"}
    ]
    assert claim["status"]["allocation"]["devices"]["results"] == [
        {
            "request": "gpu",
            "driver": "gpu.example.com",
            "pool": "n0",
            "device": "gpu-0",
            "tolerations": [{"key": "health", "operator": "Exists"}],
        }
    ]
    back = load_objects(
        [
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": "gpu"},
                "spec": {
                    "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]
                },
            },
            claim,
        ]
    )
    assert back.dra.claims["default/p0-g"].requests[0].tolerations == (
        DeviceToleration(key="health", operator="Exists"),
    )
    assert back.dra.in_use == frozenset({("gpu.example.com", "n0", "gpu-0")})


FIXTURE = Path(__file__).resolve().parent / "fixtures" / "dra" / "device-taints.yaml"


@pytest.mark.parametrize(
    ("version", "greedy", "exact"), [("1.35", 2, 2), ("1.36", 2, 2), ("1.37", 1, 2)]
)
def test_fixture_both_engines_and_the_validator_per_release(version, greedy, exact) -> None:
    """tests/fixtures/dra/device-taints.yaml: at v1.37 greedy's tolerant pod takes the clean
    gpu-0 and the plain pod fits nowhere (gpu-node-1's GPU is under a NoExecute DeviceTaintRule);
    the exact engine swaps them. At v1.36 the rule is not applied (the plain pod goes to
    gpu-node-1), at v1.35 no taint counts. Every Result passes the validator, which also agrees
    when handed the other engine's devices."""
    c = load_snapshot(FIXTURE, kube_version=version)
    assert c.warnings == ()
    g, e = solve_greedy(c), solve_exact(c, time_limit=10, workers=1)
    assert validate(c, g) == [] and validate(c, e) == []
    assert sum(o.node is not None for o in g.pods.values()) == greedy
    assert sum(o.node is not None for o in e.pods.values()) == exact
    if version == "1.37":
        assert _placed(g) == {
            "default/plain": (None, ()),
            "default/tolerant": ("gpu-node-0", ("gpu-0",)),
        }
        assert _placed(e) == {
            "default/plain": ("gpu-node-0", ("gpu-0",)),
            "default/tolerant": ("gpu-node-0", ("gpu-1",)),
        }
        swapped = dict(e.pods)
        swapped["default/plain"] = e.pods["default/plain"].model_copy(
            update={
                "claims": [e.pods["default/plain"].claims[0].model_copy(update={"device": "gpu-1"})]
            }
        )
        swapped["default/tolerant"] = e.pods["default/tolerant"].model_copy(
            update={
                "claims": [
                    e.pods["default/tolerant"].claims[0].model_copy(update={"device": "gpu-0"})
                ]
            }
        )
        found = validate(c, e.model_copy(update={"pods": swapped}))
        assert any(
            "gpu.example.com/gpu-node-0/gpu-1 has taint health=ecc:NoSchedule" in v.message
            for v in found
        ), found


def test_fixture_cli_diff_exits_3_and_strict_accepts_it() -> None:
    """``gangplan diff`` (exit 3: the optimum beats greedy) with ``--strict``: nothing about the
    taints is unmodelled at v1.37; at v1.36 the ignored DeviceTaintRule is a warning on stderr."""
    runner = CliRunner()
    res = runner.invoke(app, ["diff", str(FIXTURE), "--time-limit", "10", "--strict"])
    assert res.exit_code == 3, res.output
    assert "default/plain      not placed" in res.output
    res = runner.invoke(app, ["diff", str(FIXTURE), "--time-limit", "10", "--kube-version", "1.36"])
    assert res.exit_code == 0, res.output
    assert "DeviceTaintRule(s) are not applied by kube-scheduler v1.36" in res.stderr


@settings(max_examples=25, deadline=None)
@given(
    nodes=st.lists(
        st.lists(st.sampled_from(["clean", "ns", "nx"]), min_size=0, max_size=3),
        min_size=1,
        max_size=3,
    ),
    pods=st.lists(st.sampled_from(["plain", "ns", "all"]), min_size=1, max_size=5),
    version=st.sampled_from(["1.35", "1.36", "1.37"]),
)
def test_random_tainted_clusters_both_engines_valid_and_exact_places_at_least_greedy(
    nodes, pods, version
) -> None:
    """Random nodes with clean, NoSchedule- and NoExecute-tainted GPUs, pods tolerating nothing,
    the NoSchedule taint, or everything: both engines' results pass the validator at every
    release, and the exact engine (pairs per toleration set, Hall rows over their overlap) places
    at least as many pods as greedy."""
    taint = {
        "ns": [{"key": "health", "value": "ecc", "effect": "NoSchedule"}],
        "nx": [{"key": "drain", "effect": "NoExecute"}],
        "clean": [],
    }
    tols = {
        "plain": None,
        "ns": [{"key": "health", "operator": "Equal", "value": "ecc"}],
        "all": [{"operator": "Exists"}],
    }
    objs: list[dict] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        }
    ]
    for name, tol in tols.items():
        ex: dict = {"deviceClassName": "gpu", **({"tolerations": tol} if tol else {})}
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": ex}]}}},
            }
        )
    for i, kinds in enumerate(nodes):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"n{i}"},
                "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}},
            }
        )
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"n{i}-gpus"},
                "spec": {
                    "driver": "gpu.example.com",
                    "nodeName": f"n{i}",
                    "pool": {"name": f"n{i}", "generation": 0, "resourceSliceCount": 1},
                    "devices": [
                        {"name": f"gpu-{j}", **({"taints": taint[k]} if taint[k] else {})}
                        for j, k in enumerate(kinds)
                    ],
                },
            }
        )
    for k, t in enumerate(pods):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{k}", "namespace": "default"},
                "spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                    "resourceClaims": [{"name": "g", "resourceClaimTemplateName": t}],
                },
            }
        )
    c = load_objects(objs, kube_version=version)
    g, e = solve_greedy(c), solve_exact(c, time_limit=10, workers=1)
    assert validate(c, g) == [] and validate(c, e) == []
    assert sum(o.node is not None for o in e.pods.values()) >= sum(
        o.node is not None for o in g.pods.values()
    )
