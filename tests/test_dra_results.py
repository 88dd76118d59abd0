"""DRA devices in the Result (``PodOutcome.claims``, both engines), the validator's check of them,
``diff --plan``'s ResourceClaims (``status.allocation`` as kube-scheduler writes it) and the DRA
showcase scenarios (issue 23 items 4 and 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from gangplan.bench.generators.dra_gpu import (
    channel_claim_template,
    compute_domain_slice,
    device_classes,
)
from gangplan.cli import app
from gangplan.io.loader import load_snapshot
from gangplan.io.plan import claims_path, script_path
from gangplan.models.result import ClaimDevice, Result
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "dra"
SHOWCASE = ROOT / "scenarios" / "showcase"
GB200 = SHOWCASE / "gb200-dra-compute-domain.yaml"
H100 = SHOWCASE / "h100-dra-extended-resource.yaml"
SNAPSHOTS = sorted(FIXTURES.glob("*.yaml")) + [GB200, H100]
runner = CliRunner()


def _both(cluster):
    return solve_greedy(cluster), solve_exact(cluster, time_limit=10, workers=1)


def _devices_by_node(result: Result) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for o in result.pods.values():
        for c in o.claims:
            out.setdefault(o.node, []).append((c.claim, c.driver, c.pool, c.device))
    return out


@pytest.mark.parametrize("path", SNAPSHOTS, ids=lambda p: p.name)
def test_every_engine_result_names_distinct_devices_of_its_node_and_validates(path):
    cluster = load_snapshot(path)
    dra = cluster.dra
    for r in _both(cluster):
        assert validate(cluster, r) == [], r.engine
        for key, o in r.pods.items():
            p = cluster.pod_by_key[key]
            if o.node is None:
                assert o.claims == []
                continue
            local = {d.id for d in dra.devices_by_node.get(o.node, ())}
            assert all((c.driver, c.pool, c.device) in local for c in o.claims), (r.engine, key)
            uses = key in dra.pod_claims or any(
                q > 0 and res in dra.extended for res, q in p.requests.items()
            )
            assert bool(o.claims) == uses, (r.engine, key)
        shared = {
            d.id
            for ds in dra.devices_by_node.values()
            for d in ds
            if getattr(d, "allow_multiple", False)
        }  # KEP-5075
        for node, devs in _devices_by_node(r).items():
            own = {d for d in devs if d[1:] not in shared}
            assert len({d[1:] for d in own}) == len(own), (
                f"{r.engine}: a device named for two claims on {node}"
            )


def test_both_engines_name_the_same_devices_where_they_place_alike():
    """The same placement gets the same devices from both engines: one allocator after the solve."""
    cluster = load_snapshot(FIXTURES / "gb200-compute-domain.yaml")
    g, e = _both(cluster)
    same = {k for k in g.placements() if e.placements().get(k) == g.placements()[k]}
    assert same
    for k in same:
        assert g.pods[k].claims == e.pods[k].claims
    # an exact solve fixed to greedy's placement names greedy's devices everywhere
    fixed = solve_exact(
        cluster, time_limit=10, workers=1, fixed={k: o.node for k, o in g.pods.items()}
    )
    assert {k: o.claims for k, o in fixed.pods.items()} == {k: o.claims for k, o in g.pods.items()}


def test_the_gb200_showcase_gives_each_node_one_channel_and_greedy_loses_the_train_gang():
    cluster = load_snapshot(GB200)
    g, e = _both(cluster)
    assert not g.groups["ml/train"].admitted and e.groups["ml/train"].admitted
    for r in (g, e):
        channels = [(o.node, c.device) for o in r.pods.values() for c in o.claims]
        assert all(d == "channel-0" for _, d in channels)
        assert len({n for n, _ in channels}) == len(channels), (
            f"{r.engine}: two channel pods on one node"
        )
    assert {o.node for k, o in e.pods.items() if k.startswith("ml/embed")} == {"tray-2", "tray-3"}


def test_the_h100_showcase_serves_nvidia_gpu_from_dra_devices_the_bound_pod_does_not_hold():
    cluster = load_snapshot(H100)
    assert all("nvidia.com/gpu" not in n.allocatable for n in cluster.nodes)
    assert cluster.warnings == ()
    for r in _both(cluster):
        got = {(o.node, c.device) for k, o in r.pods.items() for c in o.claims}
        assert len(got) == 12
        assert not got & {
            ("h100-1", f"gpu-{i}") for i in range(4)
        }  # the fine-tune pod's claim holds them
        assert all(
            c.request == "nvidia.com/gpu" and c.claim == f"{k.split('/')[1]}-extended-resources"
            for k, o in r.pods.items()
            for c in o.claims
        )


def _tamper(result: Result, key: str, **change) -> Result:
    o = result.pods[key]
    claims = [o.claims[0].model_copy(update=change), *o.claims[1:]]
    return result.model_copy(
        update={"pods": {**result.pods, key: o.model_copy(update={"claims": claims})}}
    )


def test_the_validator_refuses_named_devices_that_are_wrong():
    cluster = load_snapshot(FIXTURES / "h100-extended-resource.yaml")
    r = solve_greedy(cluster)
    assert validate(cluster, r) == []
    a, b = r.pods["default/a"], r.pods["default/b"]
    cases = {
        "taken twice": _tamper(r, "default/b", device=a.claims[0].device),
        "not on the node": _tamper(r, "default/a", pool="elsewhere"),
        "unknown request": _tamper(r, "default/a", request="nvidia.com/other"),
    }
    for what, bad in cases.items():
        got = validate(cluster, bad)
        assert got and all(v.rule == "dra" for v in got), what
    short = r.model_copy(
        update={"pods": {**r.pods, "default/b": b.model_copy(update={"claims": b.claims[:3]})}}
    )
    assert any("3 device(s) named, 4 requested" in v.message for v in validate(cluster, short))
    channel = load_snapshot(FIXTURES / "gb200-compute-domain.yaml")
    rc = solve_greedy(channel)
    wrong = _tamper(
        rc, "default/w0", device="channel-1"
    )  # published, but the class selects id == 0 only
    assert any("does not match" in v.message for v in validate(channel, wrong))


def test_a_result_without_dra_has_no_claims_key_and_old_results_still_read():
    r = solve_greedy(load_snapshot(SHOWCASE / "gang-fits.yaml"))
    doc = json.loads(r.to_json())
    assert all("claims" not in o for o in doc["pods"].values())
    r2 = Result.from_json(solve_greedy(load_snapshot(H100)).to_json())
    assert any(o.claims for o in r2.pods.values()) and isinstance(
        next(c for o in r2.pods.values() for c in o.claims), ClaimDevice
    )


# ---- diff --plan ------------------------------------------------------------------------------------
def _plan(snapshot: Path, tmp: Path) -> tuple[Result, list[dict], str]:
    plan = tmp / "plan.yaml"
    res = runner.invoke(
        app, ["diff", str(snapshot), "--plan", str(plan), "--json", "--time-limit", "10"]
    )
    assert res.exit_code in (0, 3), res.output
    optimal = Result.model_validate(json.loads(res.stdout)["optimal"])
    claims = [d for d in yaml.safe_load_all(claims_path(plan).read_text()) if d]
    return optimal, claims, script_path(plan).read_text()


def _load_back(snapshot: Path, optimal: Result, claims: list[dict], tmp: Path):
    """The snapshot after the plan: pods bound where the Bindings put them, the plan's claims added
    (replacing the snapshot's objects of the same name)."""
    docs = [d for d in yaml.safe_load_all(snapshot.read_text()) if d]
    names = {(c["metadata"]["namespace"], c["metadata"]["name"]) for c in claims}
    out = []
    for d in docs:
        meta = d.get("metadata", {})
        if (
            d["kind"] == "ResourceClaim"
            and (meta.get("namespace", "default"), meta["name"]) in names
        ):
            continue
        if d["kind"] == "Pod":
            key = f"{meta.get('namespace', 'default')}/{meta['name']}"
            o = optimal.pods.get(key)
            if o is not None and o.node is not None:
                d = {**d, "spec": {**d["spec"], "nodeName": o.node}, "status": {"phase": "Running"}}
        out.append(d)
    path = tmp / "after.yaml"
    path.write_text(yaml.safe_dump_all(out + claims))
    return load_snapshot(path)


@pytest.mark.parametrize(
    "path", [GB200, H100, FIXTURES / "gb200-compute-domain.yaml"], ids=lambda p: p.name
)
def test_plan_claims_carry_the_allocation_and_loading_them_back_puts_the_devices_in_use(
    path, tmp_path
):
    optimal, claims, script = _plan(path, tmp_path)
    named = {
        (k.split("/")[0], c.claim): (o.node, k.split("/")[1])
        for k, o in optimal.pods.items()
        for c in o.claims
    }
    assert {(c["metadata"]["namespace"], c["metadata"]["name"]) for c in claims} == set(named)
    for c in claims:
        assert (c["apiVersion"], c["kind"]) == ("resource.k8s.io/v1", "ResourceClaim")
        node, pod = named[(c["metadata"]["namespace"], c["metadata"]["name"])]
        alloc = c["status"]["allocation"]
        assert alloc["nodeSelector"] == {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
            ]
        }
        assert all(
            set(r) == {"request", "driver", "pool", "device"} for r in alloc["devices"]["results"]
        )
        requests = {r["name"] for r in c["spec"]["devices"]["requests"]}
        assert {r["request"] for r in alloc["devices"]["results"]} <= requests
        assert [x["name"] for x in c["status"]["reservedFor"]] == [pod] and c["status"][
            "reservedFor"
        ][0]["resource"] == "pods"
        assert (
            f"kubectl patch resourceclaim {c['metadata']['name']} -n {c['metadata']['namespace']} --subresource=status"
            in script
        )
    assert script.index("kubectl patch resourceclaim") < script.index("kubectl create -f plan.yaml")
    after = _load_back(path, optimal, claims, tmp_path)
    want = {
        (r["driver"], r["pool"], r["device"])
        for c in claims
        for r in c["status"]["allocation"]["devices"]["results"]
    }
    assert want and want <= after.dra.in_use
    assert not [w for w in after.warnings if "no allocated ResourceClaim" in w]
    again = solve_greedy(after)
    assert validate(after, again) == []
    taken = {(c.driver, c.pool, c.device) for o in again.pods.values() for c in o.claims}
    assert not taken & want


# ---- generate --dra ---------------------------------------------------------------------------------
def test_the_generator_writes_the_deviceclasses_and_channel_slice_of_nvidias_driver():
    fixture = [
        d for d in yaml.safe_load_all((FIXTURES / "nvidia-dra-driver.yaml").read_text()) if d
    ]
    classes = [d for d in fixture if d["kind"] == "DeviceClass"]
    assert device_classes() == classes
    got = compute_domain_slice("tray-0")
    want = next(d for d in fixture if d["kind"] == "ResourceSlice")
    assert got["spec"] == want["spec"]
    template = channel_claim_template("imex-channel-0", "ml")
    want_t = next(d for d in fixture if d["kind"] == "ResourceClaimTemplate")
    strip = lambda t: {  # noqa: E731
        **t["spec"]["spec"]["devices"],
        "config": [
            {
                **c,
                "opaque": {
                    **c["opaque"],
                    "parameters": {
                        k: v for k, v in c["opaque"]["parameters"].items() if k != "domainID"
                    },
                },
            }
            for c in t["spec"]["spec"]["devices"]["config"]
        ],
    }
    assert strip(template) == strip(want_t)
