"""DRA admin access (KEP-5018, ``adminAccess: true`` on an ``ExactDeviceRequest``) in the
allocator, both engines and the validator (issue 23).

Allocator cases are written from upstream's ``TestAllocator`` table with the upstream case names
(``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/
allocator_testing.go``, kubernetes/kubernetes @008b3652: ``admin-access-enabled``,
``admin-access-disabled``, ``already-allocated-devices``, ``tainted-admin-access``,
``tainted-admin-access-disabled``), and from the DynamicResources plugin's tests
(``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go``, master:
``structured-ignore-allocated-admin-access``: an allocated claim with admin access does not keep
a pending claim off its device). The semantics are ``allocateDevice`` of
``internal/stable/allocator_stable.go`` and ``internal/incubating/allocator_incubating.go``
@03ab440c (an admin-access request skips only a device its own claim is taking; every device
taken, admin access or not, is then allocating for its claim, so later requests without admin
access in the same allocation skip it; counters and taints are checked as for any request) and
``foreachAllocatedDevice`` of ``pkg/scheduler/framework/plugins/dynamicresources/
allocateddevices.go`` @030880a5 (a result with ``adminAccess`` is "not considered as
allocated"). The namespace label is ``AuthorizedForAdmin`` (``pkg/registry/resource/utils.go``);
its error text is the one ``test/integration/dra/dra_test.go`` expects.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.dra.allocator import allocate_results, brute_force_exists
from gangplan.dra.model import Device, DeviceClass, DeviceRequest, DeviceTaint
from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_objects
from gangplan.io.plan import claim_objects
from gangplan.models.result import ClaimDevice, PodOutcome
from gangplan.models.version import VERSIONS, dra_admin_access
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

DRIVER_A = "driver-a"
CLASSES = {"class-a": DeviceClass(name="class-a", selectors=(f'device.driver == "{DRIVER_A}"',))}
TAINT_NO_SCHEDULE = DeviceTaint(key="taint-key", value="taint-value", effect="NoSchedule")
IN_USE = {(DRIVER_A, "pool-1", "device-1"), (DRIVER_A, "pool-1", "device-2")}
"""``allocatedDevices`` of the upstream cases: device-1 and device-2 of pool-1."""


def device(name: str, *taints: DeviceTaint) -> Device:
    return Device(
        driver=DRIVER_A,
        pool="pool-1",
        slice="slice-1",
        name=name,
        taints=taints,
        slice_taints=taints,
    )


def req(name: str = "req-0", count: int = 1, *, admin: bool = False) -> DeviceRequest:
    return DeviceRequest(name=name, device_class="class-a", count=count, admin_access=admin)


def got(claims, devices, in_use=frozenset()):
    """The allocation as (request, device name, admin) per claim; the search forced without the
    counting shortcut agrees, and so does the brute force on whether one exists."""
    out = allocate_results(claims, devices, set(in_use), CLASSES)
    assert out == allocate_results(claims, devices, set(in_use), CLASSES, counting=False)
    assert (out is not None) == brute_force_exists(claims, devices, set(in_use), CLASSES)
    return (
        None
        if out is None
        else {k: [(r.request, r.device[2], r.admin) for r in v] for k, v in out.items()}
    )


# ---- upstream's TestAllocator cases --------------------------------------------------------
def test_admin_access_enabled() -> None:
    """``admin-access-enabled``: device-1 is allocated, the admin-access request gets it
    (``deviceAllocationResult(req0, driverA, pool1, device1, true)``)."""
    assert got([("claim-0", (req(admin=True),))], [device("device-1")], IN_USE) == {
        "claim-0": [("req-0", "device-1", True)]
    }


def test_already_allocated_devices() -> None:
    """``already-allocated-devices``: the same without admin access finds nothing."""
    assert got([("claim-0", (req(),))], [device("device-1")], IN_USE) is None


def test_tainted_admin_access() -> None:
    """``tainted-admin-access``: admin access does not tolerate taints (no result)."""
    assert (
        got([("claim-0", (req(admin=True),))], [device("device-1", TAINT_NO_SCHEDULE)], IN_USE)
        is None
    )


def test_tainted_admin_access_disabled() -> None:
    """``tainted-admin-access-disabled``: with DRADeviceTaints off (v1.35's view) the device is taken."""
    devices = [replace(device("device-1", TAINT_NO_SCHEDULE), taints=())]
    assert got([("claim-0", (req(admin=True),))], devices, IN_USE) == {
        "claim-0": [("req-0", "device-1", True)]
    }


def test_admin_access_gate_is_on_at_every_release() -> None:
    """``admin-access-disabled`` fails the claim with "admin access is requested, but the feature
    is disabled": only where DRAAdminAccess is off, which no release gangplan reproduces has by
    default (beta on from v1.34, GA locked in v1.36, ``pkg/features/kube_features.go``)."""
    assert all(dra_admin_access(v) for v in VERSIONS)


# ---- allocateDevice's in-use rules (not upstream cases) ----------------------------------
def test_one_claim_never_takes_a_device_twice_with_admin_access() -> None:
    """``allocatingDeviceForClaim``: two admin-access requests of one claim need two devices."""
    claim = ("claim-0", (req("req-0", admin=True), req("req-1", admin=True)))
    assert got([claim], [device("device-1")], IN_USE) is None
    assert got([claim], [device("device-1"), device("device-2")], IN_USE) == {
        "claim-0": [("req-0", "device-1", True), ("req-1", "device-2", True)]
    }


def test_an_admin_access_device_keeps_later_requests_of_the_allocation_off_it() -> None:
    """The device an admin-access claim takes is allocating for it: a later claim without admin
    access skips it, while an admin-access claim after a plain one may share its device. The
    order decides (both are one pod's claims, allocated together in pod order)."""
    admin, plain = ("claim-admin", (req(admin=True),)), ("claim-plain", (req(),))
    one = [device("device-1")]
    assert got([admin, plain], one) is None
    assert got([plain, admin], one) == {
        "claim-plain": [("req-0", "device-1", False)],
        "claim-admin": [("req-0", "device-1", True)],
    }
    two = [device("device-1"), device("device-2")]
    assert got([admin, plain], two) == {
        "claim-admin": [("req-0", "device-1", True)],
        "claim-plain": [("req-0", "device-2", False)],
    }


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 3),
    in_use=st.sets(st.integers(0, 2)),
    taints=st.sets(st.integers(0, 2)),
    claims=st.lists(
        st.lists(st.tuples(st.integers(1, 2), st.booleans()), min_size=1, max_size=2),
        min_size=1,
        max_size=3,
    ),
)
def test_the_search_agrees_with_the_brute_force(n, in_use, taints, claims) -> None:
    """Random claims of admin-access and plain requests over up to three devices, some in use,
    some tainted: the search finds an allocation exactly when the brute force over every
    assignment (in slot order) does, and what it finds keeps the rules."""
    devices = [
        device(f"device-{i}", *((TAINT_NO_SCHEDULE,) if i in taints else ())) for i in range(n)
    ]
    used = {devices[i].id for i in in_use if i < n}
    todo = [
        (
            f"claim-{k}",
            tuple(req(f"req-{j}", count, admin=admin) for j, (count, admin) in enumerate(c)),
        )
        for k, c in enumerate(claims)
    ]
    out = allocate_results(todo, devices, set(used), CLASSES)
    assert (out is not None) == brute_force_exists(todo, devices, used, CLASSES)
    if out is not None:
        taken: set = set()
        for key, results in out.items():
            mine = [r.device for r in results]
            assert len(set(mine)) == len(mine)  # one claim never takes a device twice
            for r in results:
                assert r.device[2] not in {f"device-{i}" for i in taints}
                if not r.admin:
                    assert r.device not in used and r.device not in taken
            taken.update(mine)
            assert [r.admin for r in results] == [
                x.admin_access for x in dict(todo)[key] for _ in range(x.count)
            ]


# ---- snapshots: both engines and the validator --------------------------------------------
def _snapshot(
    pods: tuple[str, ...],
    *,
    held: str | None = None,
    held_admin: bool = False,
    namespace_labels: dict | None = None,
    kube_version: str | None = None,
    extra: list[dict] | None = None,
):
    """Node ``n0`` with one GPU gpu-0, node ``n1`` with none; templates ``plain`` and ``admin``
    (adminAccess); ``held``: a ResourceClaim allocated on gpu-0 (with ``adminAccess`` in its
    result when ``held_admin``); ``namespace_labels``: a Namespace ``default`` with these labels;
    ``extra``: more objects."""
    objs: list[dict] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        }
    ]
    if namespace_labels is not None:
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": "default", "labels": namespace_labels},
            }
        )
    for name, admin in (("plain", False), ("admin", True)):
        ex: dict = {"deviceClassName": "gpu", **({"adminAccess": True} if admin else {})}
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": ex}]}}},
            }
        )
    for n in ("n0", "n1"):
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
            "metadata": {"name": "n0-gpus"},
            "spec": {
                "driver": "gpu.example.com",
                "nodeName": "n0",
                "pool": {"name": "n0", "generation": 0, "resourceSliceCount": 1},
                "devices": [{"name": "gpu-0"}],
            },
        }
    )
    if held:
        ex = {"deviceClassName": "gpu", **({"adminAccess": True} if held_admin else {})}
        res = {
            "request": "gpu",
            "driver": "gpu.example.com",
            "pool": "n0",
            "device": held,
            **({"adminAccess": True} if held_admin else {}),
        }
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "held", "namespace": "default"},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": ex}]}},
                "status": {"allocation": {"devices": {"results": [res]}}},
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
    return load_objects(objs + (extra or []), kube_version=kube_version)


def _placed(r) -> dict[str, tuple[str | None, tuple[str, ...]]]:
    return {k: (o.node, tuple(x.device for x in o.claims)) for k, o in sorted(r.pods.items())}


def _both(c):
    g, e = solve_greedy(c), solve_exact(c, time_limit=10, workers=1)
    assert validate(c, g) == [] and validate(c, e) == []
    return g, e


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_the_admin_pod_shares_the_gpu_and_the_second_plain_pod_fits_nowhere(version) -> None:
    """One GPU: the plain pod takes it, the admin-access pod gets it too (in use), the second
    plain pod fits nowhere; the admin pod is never put on n1 (no GPU). Greedy and exact place the
    same two pods, at every release, and both Results pass the validator."""
    c = _snapshot(("plain", "admin", "plain"), kube_version=version)
    g, e = _both(c)
    assert _placed(g) == {
        "default/p0": ("n0", ("gpu-0",)),
        "default/p1": ("n0", ("gpu-0",)),
        "default/p2": (None, ()),
    }
    assert sum(o.node is not None for o in e.pods.values()) == 2
    assert e.pods["default/p1"].node == "n0"


def test_an_admin_pod_first_does_not_take_the_gpu_from_the_next_pod() -> None:
    """Reserve does not mark an admin-access result in use (``foreachAllocatedDevice``): the plain
    pod after it still gets gpu-0."""
    g, e = _both(_snapshot(("admin", "plain")))
    assert _placed(g) == {"default/p0": ("n0", ("gpu-0",)), "default/p1": ("n0", ("gpu-0",))}
    assert sum(o.node is not None for o in e.pods.values()) == 2


def test_structured_ignore_allocated_admin_access() -> None:
    """``structured-ignore-allocated-admin-access``: a claim allocated with admin access on gpu-0
    leaves it free; the same claim allocated without admin access keeps the plain pod off it."""
    g, e = _both(_snapshot(("plain",), held="gpu-0", held_admin=True))
    assert _placed(g)["default/p0"] == ("n0", ("gpu-0",)) and e.pods["default/p0"].node == "n0"
    g, e = _both(_snapshot(("plain",), held="gpu-0"))
    assert g.pods["default/p0"].node is None and e.pods["default/p0"].node is None


@pytest.mark.parametrize(
    ("order", "placed"), [(("admin", "plain"), False), (("plain", "admin"), True)]
)
def test_one_pods_admin_claim_keeps_its_later_plain_claim_off_the_gpu(order, placed) -> None:
    """One pod with two claims on the one GPU: an admin-access claim first takes gpu-0 and its
    plain claim then finds nothing (both engines leave the pod pending; the exact engine by its
    per-pod row); plain first, the admin claim shares gpu-0 and the pod is placed."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {
            "containers": [{"name": "c"}],
            "resourceClaims": [
                {"name": f"c{i}", "resourceClaimTemplateName": t} for i, t in enumerate(order)
            ],
        },
    }
    g, e = _both(_snapshot((), extra=[pod]))
    assert (g.pods["default/p"].node == "n0") is placed and (
        e.pods["default/p"].node == "n0"
    ) is placed


def test_validator_rejects_an_admin_pod_on_a_node_without_a_matching_device() -> None:
    c = _snapshot(("admin",))
    g = solve_greedy(c)
    pods = dict(g.pods)
    pods["default/p0"] = PodOutcome(
        node="n1",
        claims=[
            ClaimDevice(
                claim="p0-g", request="gpu", driver="gpu.example.com", pool="n0", device="gpu-0"
            )
        ],
    )
    found = validate(c, g.model_copy(update={"pods": pods}))
    assert any(v.rule == "dra" and v.name == "n1" for v in found), found
    assert any(v.rule == "dra" and "is not on node n1" in v.message for v in found), found


def test_plan_writes_admin_access_in_spec_and_results() -> None:
    c = _snapshot(("plain", "admin"))
    objs = {o["metadata"]["name"]: o for o in claim_objects(solve_greedy(c), c)}
    admin = objs["p1-g"]
    assert admin["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] is True
    assert admin["status"]["allocation"]["devices"]["results"] == [
        {
            "request": "gpu",
            "driver": "gpu.example.com",
            "pool": "n0",
            "device": "gpu-0",
            "adminAccess": True,
        }
    ]
    assert "adminAccess" not in objs["p0-g"]["status"]["allocation"]["devices"]["results"][0]


# ---- the namespace label and bad input ------------------------------------------------------
def test_a_template_in_a_namespace_without_the_label_makes_no_claim() -> None:
    """API validation refuses a claim with admin access in a namespace without
    ``resource.kubernetes.io/admin-access: "true"``: the claim the resourceclaim controller would
    make from the template never exists, so PreFilter rejects the pod; the template is warned about.
    With the label (or without the Namespace in the snapshot) the pod is placed."""
    c = _snapshot(("admin",), namespace_labels={})
    assert any("resource.kubernetes.io/admin-access" in w for w in c.warnings), c.warnings
    g, e = _both(c)
    assert (
        g.pods["default/p0"].node is None
        and "resource.kubernetes.io/admin-access: true" in g.pods["default/p0"].reason
    )
    assert e.pods["default/p0"].node is None
    for labels in ({"resource.kubernetes.io/admin-access": "true"}, None):
        c = _snapshot(("admin",), namespace_labels=labels)
        assert not any("admin-access" in w for w in c.warnings), c.warnings
        assert _placed(solve_greedy(c))["default/p0"] == ("n0", ("gpu-0",))


def test_an_existing_claim_in_a_namespace_without_the_label_is_warned_about_and_kept() -> None:
    """The label is checked when a claim is written, never by the scheduler: an allocated
    admin-access claim whose namespace lost the label is named in a warning and still leaves its
    device free."""
    c = _snapshot(("plain",), held="gpu-0", held_admin=True, namespace_labels={"team": "a"})
    assert any(
        "ResourceClaim" in w and "admin access in namespace default" in w for w in c.warnings
    ), c.warnings
    g, _ = _both(c)
    assert g.pods["default/p0"].node == "n0"


def test_a_subrequest_with_admin_access_is_bad_input(tmp_path) -> None:
    """``DeviceSubRequest`` has no ``adminAccess`` field (``resource/v1`` ``types.go``): refused,
    naming the file, the object and the field."""
    import yaml

    objs = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "x", "namespace": "default"},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "a",
                            "firstAvailable": [
                                {"name": "s", "deviceClassName": "gpu", "adminAccess": True}
                            ],
                        }
                    ]
                }
            },
        }
    ]
    with pytest.raises(SnapshotError) as err:
        load_objects(objs)
    assert "firstAvailable[0].adminAccess" in str(err.value) and "x" in str(err.value)
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    res = CliRunner().invoke(app, ["solve", str(f)])
    assert res.exit_code == 2 and "s.yaml" in res.stderr and "adminAccess" in res.stderr


@settings(max_examples=25, deadline=None)
@given(
    gpus=st.lists(st.integers(0, 2), min_size=1, max_size=2),
    pods=st.lists(
        st.lists(st.sampled_from(["plain", "admin"]), min_size=1, max_size=2),
        min_size=1,
        max_size=4,
    ),
)
def test_engines_and_the_validator_agree_on_random_admin_snapshots(gpus, pods) -> None:
    """Random nodes of 0-2 GPUs and pods of one or two claims, plain or admin-access: both
    engines' Results pass the validator and the exact engine places at least as many pods."""
    objs: list[dict] = []
    for i, n in enumerate(gpus):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"m{i}"},
                "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}},
            }
        )
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"m{i}-gpus"},
                "spec": {
                    "driver": "gpu.example.com",
                    "nodeName": f"m{i}",
                    "pool": {"name": f"m{i}", "generation": 0, "resourceSliceCount": 1},
                    "devices": [{"name": f"gpu-{j}"} for j in range(n)],
                },
            }
        )
    for k, ts in enumerate(pods):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"q{k}", "namespace": "default"},
                "spec": {
                    "containers": [{"name": "c"}],
                    "resourceClaims": [
                        {"name": f"c{i}", "resourceClaimTemplateName": t} for i, t in enumerate(ts)
                    ],
                },
            }
        )
    c = _snapshot((), extra=objs)
    g, e = _both(c)
    assert sum(o.node is not None for o in e.pods.values()) >= sum(
        o.node is not None for o in g.pods.values()
    )
