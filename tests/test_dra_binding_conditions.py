"""Devices with binding conditions (KEP-5007, ``ResourceSlice`` ``spec.devices[].bindingConditions``
/ ``bindingFailureConditions``; gate DRADeviceBindingConditions alpha, off in v1.34-1.35, beta, on
from v1.36): v1.35's allocator does not select them (``isSelectable``), v1.36+ allocates them as
any device and copies the conditions into the allocation result (``--plan``'s claims). Both
engines and the validator, at each release."""

from __future__ import annotations

import pytest

from gangplan.io.loader import load_objects
from gangplan.io.plan import claim_objects
from gangplan.models.version import KubeVersion
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

DRIVER = "fabric.example.com"


def _objects() -> list[dict]:
    """Node a: one composable GPU that must be attached first (binding conditions); node b: none.
    One pod claims a GPU."""
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu.fabric.example.com"},
            "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "a-gpus"},
            "spec": {
                "driver": DRIVER,
                "nodeName": "a",
                "pool": {"name": "a", "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {
                        "name": "gpu-0",
                        "bindsToNode": True,
                        "bindingConditions": ["dra.example.com/is-attached"],
                        "bindingFailureConditions": ["dra.example.com/attach-failed"],
                    }
                ],
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "gpu",
                                "exactly": {"deviceClassName": "gpu.fabric.example.com"},
                            }
                        ]
                    }
                }
            },
        },
        *(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": n},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
            }
            for n in "ab"
        ),
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
            },
        },
    ]


@pytest.mark.parametrize(
    "version, node", [(KubeVersion.V1_35, None), (KubeVersion.V1_36, "a"), (KubeVersion.V1_37, "a")]
)
def test_a_device_with_binding_conditions_is_allocated_where_the_gate_is_on(version, node):
    c = load_objects(_objects(), kube_version=version)
    for r in (solve_greedy(c), solve_exact(c, time_limit=5)):
        assert validate(c, r) == []
        assert r.pods["default/p"].node == node, (version, r.engine)
    notes = c.version_warnings
    assert any("binding conditions" in w and "DRADeviceBindingConditions" in w for w in notes) == (
        node is None
    )


def test_the_plan_carries_the_binding_conditions_into_the_allocation():
    c = load_objects(_objects(), kube_version=KubeVersion.V1_36)
    r = solve_greedy(c)
    assert validate(c, r) == []
    [claim] = claim_objects(r, c)
    [result] = claim["status"]["allocation"]["devices"]["results"]
    assert (result["device"], result["bindingConditions"], result["bindingFailureConditions"]) == (
        "gpu-0",
        ["dra.example.com/is-attached"],
        ["dra.example.com/attach-failed"],
    )
    # a version change of the same snapshot sees the device go and come back (one set of views)
    old = c.at_version(KubeVersion.V1_35)
    assert (
        solve_greedy(old).pods["default/p"].node is None
        and not old.dra.devices_by_node["a"]
        and c.dra.devices_by_node["a"]
    )
    assert old.at_version(KubeVersion.V1_37).dra.devices_by_node["a"][0].binding_conditions == (
        "dra.example.com/is-attached",
    )


def test_a_tainted_device_with_binding_conditions_keeps_its_taint_across_versions():
    """The v1.35 view leaves the device out and checks no taints; going back to v1.37 from it
    brings the device back with its NoSchedule taint, which the pod does not tolerate."""
    objs = _objects()
    objs[1]["spec"]["devices"][0]["taints"] = [{"key": "maintenance", "effect": "NoSchedule"}]
    c37 = load_objects(objs, kube_version=KubeVersion.V1_37)
    assert solve_greedy(c37).pods["default/p"].node is None
    back = c37.at_version(KubeVersion.V1_35).at_version(KubeVersion.V1_37)
    [d] = back.dra.devices_by_node["a"]
    assert d.taints and d.binding_conditions
    r = solve_greedy(back)
    assert validate(back, r) == [] and r.pods["default/p"].node is None


def test_more_than_four_binding_conditions_are_refused():
    """API validation (``resource/v1`` Device: "The maximum number of binding conditions is 4")."""
    from gangplan.io.errors import SnapshotError

    objs = _objects()
    objs[1]["spec"]["devices"][0]["bindingConditions"] = [f"dra.example.com/c{i}" for i in range(5)]
    with pytest.raises(SnapshotError, match=r"bindingConditions.*at most 4 items, got 5"):
        load_objects(objs)
