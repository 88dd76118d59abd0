"""PodGroup-level ResourceClaims (KEP-5729, ``PodGroup.spec.resourceClaims``): one claim for the
whole group, allocated for its first placed pod and shared by the rest, in both engines and the
validator (``k8s.io/api`` ``scheduling`` ``PodGroupResourceClaim``, ``PodGroupResourceClaimStatus``:
v1alpha2 in release-1.36, v1alpha3 / v1beta1 in v1.37; gate DRAWorkloadResourceClaims alpha in
v1.36, beta in v1.37)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_objects
from gangplan.models.version import KubeVersion, pod_group_claims
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

DRIVER = "nic.example.com"


def _objects(
    *,
    nodes: dict[str, int],
    min_count: int,
    pods: int,
    group_claims: list | None = None,
    pod_claim: dict | None = None,
    api: str = "scheduling.k8s.io/v1beta1",
    status: dict | None = None,
    extra: list | None = None,
) -> list[dict]:
    """``nodes``: node -> devices of the class (one slice each, cpu 2 per node, pods ask 1 cpu);
    a PodGroup ``g`` with ``group_claims``; every pod carries ``pod_claim``."""
    group_claims = (
        [{"name": "nic", "resourceClaimTemplateName": "one-nic"}]
        if group_claims is None
        else group_claims
    )
    pod_claim = (
        {"name": "nic", "resourceClaimTemplateName": "one-nic"} if pod_claim is None else pod_claim
    )
    link = {"schedulingGroup": {"podGroupName": "g"}}
    objs: list[dict] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "nic"},
            "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-nic", "namespace": "default"},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [{"name": "nic", "exactly": {"deviceClassName": "nic"}}]
                    }
                }
            },
        },
        {
            "apiVersion": api,
            "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": "default"},
            "spec": {
                "schedulingPolicy": {"gang": {"minCount": min_count}},
                "resourceClaims": group_claims,
            },
            **({"status": status} if status else {}),
        },
    ]
    for n, k in nodes.items():
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": n},
                "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "10"}},
            }
        )
        if k:
            objs.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceSlice",
                    "metadata": {"name": f"{n}-nic"},
                    "spec": {
                        "driver": DRIVER,
                        "nodeName": n,
                        "pool": {"name": n, "generation": 0, "resourceSliceCount": 1},
                        "devices": [{"name": f"nic-{i}"} for i in range(k)],
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
                    **link,
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                    "resourceClaims": [pod_claim],
                },
            }
        )
    return objs + (extra or [])


def _placements(c, r) -> dict[str, str | None]:
    assert validate(c, r) == []
    return {k: o.node for k, o in sorted(r.pods.items())}


def test_one_claim_for_the_group_pins_the_gang_to_one_node() -> None:
    """Two nodes with one NIC each, a gang of 2 sharing one group claim: both engines put both
    pods on one node (one allocation), which a per-pod template claim would not force."""
    c = load_objects(_objects(nodes={"a": 1, "b": 1}, min_count=2, pods=2))
    assert c.dra.pod_claims == {"default/p0": ("default/g-nic",), "default/p1": ("default/g-nic",)}
    for r in (solve_greedy(c), solve_exact(c, time_limit=5)):
        got = _placements(c, r)
        assert len(set(got.values())) == 1 and None not in got.values()
        assert {tuple(x.device for x in o.claims) for o in r.pods.values()} == {("nic-0",)}


def test_the_group_claim_needs_a_node_that_holds_the_whole_gang() -> None:
    """Only node b has the NIC and room for 2 pods: a gang of minCount 3 is rejected by both
    engines; with minCount 2, two pods are admitted, both on b."""
    c = load_objects(_objects(nodes={"a": 0, "b": 1}, min_count=3, pods=3))
    for r in (solve_greedy(c), solve_exact(c, time_limit=5)):
        assert set(_placements(c, r).values()) == {None}
    c2 = load_objects(_objects(nodes={"a": 0, "b": 1}, min_count=2, pods=3))
    for r in (solve_greedy(c2), solve_exact(c2, time_limit=5)):
        assert sorted(n for n in _placements(c2, r).values() if n) == ["b", "b"]


def test_a_pod_claim_that_does_not_match_exactly_is_the_pods_own() -> None:
    """A pod entry with the group claim's name but another template gets its own claim."""
    extra = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "other", "namespace": "default"},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [{"name": "nic", "exactly": {"deviceClassName": "nic"}}]
                    }
                }
            },
        }
    ]
    c = load_objects(
        _objects(
            nodes={"a": 1, "b": 1},
            min_count=2,
            pods=2,
            pod_claim={"name": "nic", "resourceClaimTemplateName": "other"},
            extra=extra,
        )
    )
    assert c.dra.pod_claims == {
        "default/p0": ("default/p0-nic",),
        "default/p1": ("default/p1-nic",),
    }
    for r in (solve_greedy(c), solve_exact(c, time_limit=5)):
        assert sorted(_placements(c, r).values()) == ["a", "b"]


def test_a_named_group_claim_and_the_status_generated_claim() -> None:
    """``resourceClaimName``: the named claim, shared; a template claim that
    ``status.resourceClaimStatuses`` names is that claim, here already allocated on node b."""
    named = load_objects(
        _objects(
            nodes={"a": 1, "b": 1},
            min_count=2,
            pods=2,
            group_claims=[{"name": "nic", "resourceClaimName": "fabric"}],
            pod_claim={"name": "nic", "resourceClaimName": "fabric"},
            extra=[
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {"name": "fabric", "namespace": "default"},
                    "spec": {
                        "devices": {
                            "requests": [{"name": "nic", "exactly": {"deviceClassName": "nic"}}]
                        }
                    },
                }
            ],
        )
    )
    assert set(named.dra.pod_claims.values()) == {("default/fabric",)}
    allocated = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "g-nic-x7k2p", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "nic", "exactly": {"deviceClassName": "nic"}}]}},
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "nic", "driver": DRIVER, "pool": "b", "device": "nic-0"}
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["b"]}
                            ]
                        }
                    ]
                },
            },
            "reservedFor": [{"resource": "podgroups", "name": "g"}],
        },
    }
    c = load_objects(
        _objects(
            nodes={"a": 1, "b": 1},
            min_count=2,
            pods=2,
            status={"resourceClaimStatuses": [{"name": "nic", "resourceClaimName": "g-nic-x7k2p"}]},
            extra=[allocated],
        )
    )
    assert set(c.dra.pod_claims.values()) == {("default/g-nic-x7k2p",)}
    for r in (solve_greedy(c), solve_exact(c, time_limit=5)):
        assert _placements(c, r) == {"default/p0": "b", "default/p1": "b"}


def test_validator_rejects_group_pods_split_over_nodes() -> None:
    c = load_objects(_objects(nodes={"a": 1, "b": 1}, min_count=2, pods=2))
    g = solve_greedy(c)
    doc = json.loads(g.model_dump_json(by_alias=True))
    doc["pods"]["default/p1"]["node"] = "b" if doc["pods"]["default/p0"]["node"] == "a" else "a"
    doc["pods"]["default/p1"].pop("claims", None)
    bad = type(g).model_validate(doc)
    assert any("claim shared by pods on several nodes" in str(v) for v in validate(c, bad))


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"name": "nic"}, "exactly one of resourceClaimName, resourceClaimTemplateName"),
        (
            {"name": "nic", "resourceClaimName": "x", "resourceClaimTemplateName": "y"},
            "exactly one of",
        ),
        ({"resourceClaimTemplateName": "one-nic"}, "name"),
    ],
)
def test_bad_group_claims_are_refused(entry, message) -> None:
    with pytest.raises(SnapshotError, match=message):
        load_objects(_objects(nodes={"a": 1}, min_count=1, pods=1, group_claims=[entry]))


def test_group_claim_typos_are_refused_or_named() -> None:
    """A misspelt reference leaves neither set (refused); a duplicate name is refused; an
    unknown extra field is named in a warning; a status entry for no claim is refused."""
    with pytest.raises(SnapshotError, match="exactly one of"):
        load_objects(
            _objects(
                nodes={"a": 1},
                min_count=1,
                pods=1,
                group_claims=[{"name": "nic", "resourceClaimTemplatName": "one-nic"}],
            )
        )
    with pytest.raises(SnapshotError, match="duplicate claim name"):
        load_objects(
            _objects(
                nodes={"a": 1},
                min_count=1,
                pods=1,
                group_claims=[{"name": "nic", "resourceClaimTemplateName": "one-nic"}] * 2,
            )
        )
    with pytest.raises(SnapshotError, match="spec.resourceClaims does not have"):
        load_objects(
            _objects(
                nodes={"a": 1},
                min_count=1,
                pods=1,
                status={"resourceClaimStatuses": [{"name": "nics", "resourceClaimName": "z"}]},
            )
        )
    c = load_objects(
        _objects(
            nodes={"a": 1},
            min_count=1,
            pods=1,
            group_claims=[
                {"name": "nic", "resourceClaimTemplateName": "one-nic", "shareMode": "x"}
            ],
        )
    )
    assert any("unknown field 'shareMode'" in w for w in c.warnings)
    assert not any("not modelled" in w and "group" in w for w in c.warnings)


def test_versions_with_pod_group_claims() -> None:
    """PodGroup claims exist from v1.36 (v1alpha2, alpha) on; a v1.36 snapshot reads them too,
    and each Result records the version it reproduced."""
    assert [pod_group_claims(v) for v in KubeVersion] == [False, True, True, True]
    c = load_objects(
        _objects(nodes={"a": 1, "b": 1}, min_count=2, pods=2, api="scheduling.k8s.io/v1alpha2"),
        kube_version="1.36",
    )
    r = solve_greedy(c)
    assert len(set(_placements(c, r).values())) == 1 and r.options.kube_version == "1.36"


@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2), st.integers(1, 3)), min_size=1, max_size=3),
    st.integers(1, 4),
    st.integers(1, 4),
)
def test_group_claim_placements_against_a_brute_force(nodes, pods, min_count) -> None:
    """Random nodes (devices, cpu slots) and a gang sharing one group claim: every placed pod is
    on one node with a device, so the most pods placed is the best node's slots (capped by the
    pod count) when that reaches minCount, else 0. The exact engine reaches it, greedy at most it."""
    min_count = min(min_count, pods)
    objs = _objects(
        nodes={f"n{i}": k for i, (k, _) in enumerate(nodes)}, min_count=min_count, pods=pods
    )
    for o in objs:
        if o["kind"] == "Node":
            o["status"]["allocatable"]["cpu"] = str(nodes[int(o["metadata"]["name"][1:])][1])
    c = load_objects(objs)
    best = max((min(cpu, pods) for k, cpu in nodes if k > 0), default=0)
    best = best if best >= min_count else 0
    placed = [
        sum(n is not None for n in _placements(c, r).values())
        for r in (solve_exact(c, time_limit=5), solve_greedy(c))
    ]
    assert placed[0] == best and placed[1] <= best


def test_jobset_workload_aware_dra_example_with_a_driver_gives_its_documented_outcome() -> None:
    """kubernetes-sigs/jobset's workload-aware-scheduling DRA example (tests/fixtures/upstream/
    jobset-was-dra.yaml, source and commit in its header): "a single ResourceClaim is created from
    the template and shared across all pods in the gang", and all 6 pods run. The example has no
    driver; here two nodes publish one gpu.example.com device each (written for the test). Both
    engines admit the gang of 6 on one node, every pod naming the same device of one claim."""
    from pathlib import Path

    import yaml

    path = Path(__file__).resolve().parent / "fixtures" / "upstream" / "jobset-was-dra.yaml"
    objs = [o for o in yaml.safe_load_all(path.read_text()) if o]
    objs.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu.example.com"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]},
        }
    )
    for n in ("node-a", "node-b"):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": n},
                "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}},
            }
        )
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{n}-gpu"},
                "spec": {
                    "driver": "gpu.example.com",
                    "nodeName": n,
                    "pool": {"name": n, "generation": 0, "resourceSliceCount": 1},
                    "devices": [{"name": "gpu-0"}],
                },
            }
        )
    c = load_objects(objs, kube_version="1.36")
    assert set(c.dra.pod_claims.values()) == {("default/training-workers-shared-gpu",)}
    for r in (solve_greedy(c), solve_exact(c, time_limit=10)):
        got = _placements(c, r)
        assert len(got) == 6 and len(set(got.values())) == 1 and None not in got.values()
        assert {tuple((x.claim, x.device) for x in o.claims) for o in r.pods.values()} == {
            (("training-workers-shared-gpu", "gpu-0"),)
        }


def test_a_group_claim_with_a_match_attribute_constraint() -> None:
    """The group's template asks for 2 NICs on one ``root``: node a's two NICs are on different
    roots, node b's on one. Both engines put the gang on b, one claim for the group."""
    objs = _objects(nodes={"a": 0, "b": 0}, min_count=2, pods=2)
    for o in objs:
        if o["kind"] == "ResourceClaimTemplate":
            o["spec"]["spec"]["devices"] = {
                "requests": [{"name": "nic", "exactly": {"deviceClassName": "nic", "count": 2}}],
                "constraints": [{"matchAttribute": f"{DRIVER}/root"}],
            }
    for n, roots in (("a", ("r0", "r1")), ("b", ("r0", "r0"))):
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{n}-nic"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": n,
                    "pool": {"name": n, "generation": 0, "resourceSliceCount": 1},
                    "devices": [
                        {"name": f"nic-{i}", "attributes": {"root": {"string": r}}}
                        for i, r in enumerate(roots)
                    ],
                },
            }
        )
    c = load_objects(objs)
    for r in (solve_greedy(c), solve_exact(c, time_limit=5)):
        assert _placements(c, r) == {"default/p0": "b", "default/p1": "b"}
        assert {tuple(x.device for x in o.claims) for o in r.pods.values()} == {("nic-0", "nic-1")}


def test_the_plan_reserves_a_group_claim_for_the_podgroup() -> None:
    """``--plan``'s claims file: the group's claim is reserved for the PodGroup
    ({apiGroup: scheduling.k8s.io, resource: podgroups}, as upstream's DynamicResources tests hold
    a claim "held by a PodGroup"), not for its pods; a pod's own claim stays reserved for the pod.
    Loaded back beside the bound pods, the group claim's device is in use."""
    from gangplan.io.plan import claim_objects

    objs = _objects(nodes={"a": 1, "b": 2}, min_count=2, pods=2)
    objs[2]["metadata"]["uid"] = "0d6c1f9e-3b2a-4c5d-8e7f-1a2b3c4d5e6f"
    objs.append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "solo", "namespace": "default", "uid": "7e3f"},
            "spec": {
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                "resourceClaims": [{"name": "nic", "resourceClaimTemplateName": "one-nic"}],
            },
        }
    )
    c = load_objects(objs)
    r = solve_greedy(c)
    assert validate(c, r) == []
    got = {o["metadata"]["name"]: o for o in claim_objects(r, c)}
    assert got["g-nic"]["status"]["reservedFor"] == [
        {
            "apiGroup": "scheduling.k8s.io",
            "resource": "podgroups",
            "name": "g",
            "uid": "0d6c1f9e-3b2a-4c5d-8e7f-1a2b3c4d5e6f",
        }
    ]
    assert got["solo-nic"]["status"]["reservedFor"] == [
        {"resource": "pods", "name": "solo", "uid": "7e3f"}
    ]
    bound = []
    for o in objs:
        if o["kind"] == "Pod":
            o = json.loads(json.dumps(o))
            o["spec"]["nodeName"] = r.pods[f"default/{o['metadata']['name']}"].node
            bound.append(o)
    again = load_objects([o for o in objs if o["kind"] != "Pod"] + bound + [got["g-nic"]])
    [(driver, pool, device)] = again.dra.claims["default/g-nic"].allocated
    assert (driver, pool, device) in again.dra.in_use and pool == r.pods["default/p0"].node
