"""Kueue's TAS placement (gangplan.solver.kueue.tas) against Kueue's own test table.

The fixture ``tests/fixtures/upstream_kueue_tas/find_topology_assignments.json`` is Kueue's
``TestFindTopologyAssignments`` (``pkg/cache/scheduler/tas_cache_test.go``) at v0.19.2
(c3785e52), ported by ``extract.py`` beside it; each case runs under its upstream name with the
tag's default feature gates overridden as the case says, as the Go test does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangplan.models.cluster import Cluster
from gangplan.models.kueue import ResourceFlavor, TopologyRequest
from gangplan.models.objects import (
    Node,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
    Requirement,
    Taint,
    Toleration,
)
from gangplan.solver.kueue.tas import (
    HOSTNAME,
    Leaf,
    TASPodSet,
    assign,
    default_tas_config,
    tas_leaves,
)

FIXTURES = Path(__file__).parent / "fixtures" / "upstream_kueue_tas"
TABLES = {
    path.stem.removeprefix("find_topology_assignments-"): json.loads(path.read_text())
    for path in sorted(FIXTURES.glob("find_topology_assignments-v*.json"))
}
"""tag -> ported table: v0.19.2 (the algorithm of main as well), v0.18.6, v0.17.8."""
KNOWN = json.loads((FIXTURES / "known_differences.json").read_text())
"""``tag/case name`` -> why gangplan still differs (asserted to differ; none today)."""
CASES = [(tag, case) for tag, table in TABLES.items() for case in table["cases"]]


def _topology_request(tr: dict | None, group: str | None) -> TopologyRequest | None:
    if tr is None:
        return None if group is None else TopologyRequest(podset_group=group)
    return TopologyRequest(
        required=tr.get("Required"),
        preferred=tr.get("Preferred"),
        unconstrained=bool(tr.get("Unconstrained")),
        slice_required=tr.get("PodSetSliceRequiredTopology"),
        slice_size=tr.get("PodSetSliceSize"),
        slice_constraints=tuple(
            (c["Topology"], c["Size"])
            for c in tr.get("PodsetSliceRequiredTopologyConstraints") or ()
        ),
        podset_group=group,
    )


def _term(t: dict) -> NodeSelectorTerm:
    return NodeSelectorTerm(
        match_expressions=(
            Requirement(key=t["key"], operator=t["operator"], values=tuple(t["values"])),
        )
    )


def _podset(ps: dict) -> TASPodSet:
    aff = ps["node_affinity"] or {}
    required = aff.get("RequiredDuringSchedulingIgnoredDuringExecution")
    return TASPodSet(
        name=ps["name"],
        count=ps["count"],
        requests=ps["requests"],
        topology_request=_topology_request(ps["topology_request"], ps["podset_group"]),
        node_selector=ps["node_selector"],
        node_affinity_required=(
            tuple(_term(t) for t in required["NodeSelectorTerms"]) if required else None
        ),
        node_affinity_preferred=tuple(
            PreferredSchedulingTerm(weight=t["weight"], preference=_term(t))
            for t in aff.get("PreferredDuringSchedulingIgnoredDuringExecution") or ()
        ),
        tolerations=tuple(
            Toleration(
                key=t.get("Key", ""),
                operator=t.get("Operator", "Equal"),
                value=t.get("Value", ""),
                effect=t.get("Effect", ""),
            )
            for t in ps["tolerations"]
        ),
    )


def _cluster(case: dict) -> Cluster:
    # Kueue's nodesCache drops NotReady nodes; a gangplan Node has no conditions, so the
    # fixture's NotReady nodes are left out here (tas_leaves drops the unschedulable ones).
    nodes = tuple(
        Node(
            name=n["name"],
            labels=n["labels"],
            allocatable=n["allocatable"],
            unschedulable=bool(n.get("unschedulable")),
            taints=tuple(
                Taint(key=t["Key"], value=t.get("Value", ""), effect=t["Effect"])
                for t in n.get("taints") or ()
            ),
        )
        for n in case["nodes"]
        if n["ready"]
    )
    pods = tuple(
        Pod(
            namespace="test-ns",
            name=p["name"],
            node_name=p["node"],
            requests=p["requests"],
            phase=p["phase"],
        )
        for p in case["pods"]
    )
    return Cluster(nodes=nodes, pods=pods)


def _used_by_tas(case: dict, cluster: Cluster) -> dict[str, dict[str, int]] | None:
    """``priorOwnUsage``: usage per domain ID, put on the first node of that domain."""
    if not case["prior_own_usage"]:
        return None
    levels = case["levels"]
    out: dict[str, dict[str, int]] = {}
    for u in case["prior_own_usage"]:
        values = u["Values"]
        for node in cluster.nodes:
            if levels[-1] == HOSTNAME:
                hit = node.labels.get(HOSTNAME) == values[-1]
            else:
                hit = [node.labels.get(k) for k in levels] == values
            if hit:
                usage = out.setdefault(node.name, {})
                for r, q in u["SinglePodRequests"].items():
                    usage[r] = usage.get(r, 0) + q * u["Count"]
                usage["pods"] = usage.get("pods", 0) + u["Count"]
                break
    return out


def run_case(table: dict, case: dict, version: str | None = None) -> dict[str, tuple]:
    cluster = _cluster(case)
    flavor = ResourceFlavor(name="tas", node_labels=case["node_labels"], topology_name="default")
    leaves = tas_leaves(cluster, flavor, case["levels"], _used_by_tas(case, cluster))
    config = default_tas_config(version or table["tag"], case["feature_gates"])
    podsets = [_podset(ps) for ps in case["podsets"]]
    result = assign(podsets, leaves, case["levels"], config, topology_name=table["topology_name"])
    got = {}
    for ps in podsets:
        ta = result.assignments.get(ps.name)
        reason = result.reason if ps.name in result.assignments and ta is None else ""
        got[ps.name] = (
            None
            if ta is None
            else {
                "Levels": list(ta.levels),
                "Domains": [{"Count": d.count, "Values": list(d.values)} for d in ta.domains],
            },
            reason,
        )
    return got


def want_of(case: dict) -> dict[str, tuple]:
    out = {}
    for ps in case["podsets"]:
        want = ps["want_assignment"]
        if want is not None:
            want = {
                "Levels": list(want["Levels"]),
                "Domains": [
                    {"Count": d["Count"], "Values": list(d["Values"])} for d in want["Domains"]
                ],
            }
        out[ps["name"]] = (want, ps["want_reason"])
    return out


@pytest.mark.parametrize(("tag", "case"), CASES, ids=[f"{t}/{c['name']}" for t, c in CASES])
def test_upstream_find_topology_assignments(tag: str, case: dict) -> None:
    got, want = run_case(TABLES[tag], case), want_of(case)
    if f"{tag}/{case['name']}" in KNOWN:
        assert got != want, "now matches upstream; drop it from known_differences.json"
    else:
        assert got == want


def test_upstream_tables_cover_the_algorithm() -> None:
    """At least 100 cases per release, and the left-out ones are the features not modelled."""
    for tag, table in TABLES.items():
        assert len(table["cases"]) >= 100, tag
        assert table["commit"] and table["source"].endswith("TestFindTopologyAssignments")
        for skipped in table["skipped"]:
            assert any(
                why in skipped["reason"]
                for why in ("MakeWorkload", "V1Beta2From", "priorFlavorUsage", "func literal")
            ), skipped


def test_release_code_differences_matter() -> None:
    """The v0.17 code (no prioritizeLeaderDomain, no preferred-affinity ranking) run on the
    v0.19.2 table fails some cases, and v0.19 code fails some of v0.17.8's: the version
    parameter selects real differences."""
    new = [c for c in TABLES["v0.19.2"]["cases"] if not c["feature_gates"]]
    assert any(run_case(TABLES["v0.19.2"], c, "0.17") != want_of(c) for c in new)


# -- properties on small random trees ----------------------------------------------------------


LEVELS = ("block", "rack", HOSTNAME)


@st.composite
def placements(draw):
    nodes = []
    for b in range(draw(st.integers(1, 3))):
        for r in range(draw(st.integers(1, 3))):
            for h in range(draw(st.integers(1, 3))):
                name = f"b{b}-r{r}-n{h}"
                nodes.append(
                    Node(
                        name=name,
                        labels={"block": f"b{b}", "rack": f"r{r}", HOSTNAME: name},
                        allocatable={"cpu": 1000 * draw(st.integers(0, 6)), "pods": 110},
                    )
                )
    level = draw(st.sampled_from(LEVELS))
    mode = draw(st.sampled_from(("required", "preferred", "unconstrained", "implied")))
    slice_size = draw(st.sampled_from((1, 2, 3)))
    slice_level = draw(st.sampled_from(LEVELS[LEVELS.index(level) :]))
    count = slice_size * draw(st.integers(1, 8))
    if mode == "implied":
        tr = None
    else:
        tr = TopologyRequest(
            required=level if mode == "required" else None,
            preferred=level if mode == "preferred" else None,
            unconstrained=mode == "unconstrained",
            slice_required=slice_level if slice_size > 1 else None,
            slice_size=slice_size if slice_size > 1 else None,
        )
    gates = {
        "TASBalancedPlacement": draw(st.booleans()),
        "TASProfileMixed": draw(st.booleans()),
    }
    leader = None
    if mode != "implied" and draw(st.booleans()):
        tr = tr.model_copy(update={"podset_group": "g"})
        leader = TASPodSet("leader", 1, {"cpu": 500 * draw(st.integers(1, 4))}, tr)
    main = TASPodSet("main", count, {"cpu": 1000}, tr)
    return nodes, main, leader, gates, draw(st.sampled_from(("0.17", "0.19")))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(placements())
def test_assignment_properties(example) -> None:
    nodes, ps, leader, gates, version = example
    leaves = tas_leaves(Cluster(nodes=tuple(nodes)), None, LEVELS)
    podsets = [ps] if leader is None else [ps, leader]
    result = assign(podsets, leaves, LEVELS, default_tas_config(version, gates))
    tr = ps.topology_request
    slices = tr is not None and tr.slice_required is not None
    size = tr.slice_size if slices else 1
    if not result.ok:
        assert result.assignments == {p.name: None for p in podsets}
        if tr is not None and tr.required is not None and leader is None:
            # Kueue fails a required request only when no domain at the level holds it
            lvl = LEVELS.index(tr.required)
            slice_lvl = LEVELS.index(tr.slice_required) if slices else len(LEVELS) - 1
            per_slice_domain: dict[tuple, int] = {}
            for n in nodes:
                key = tuple(n.labels[k] for k in LEVELS[: slice_lvl + 1])
                per_slice_domain[key] = per_slice_domain.get(key, 0) + n.allocatable["cpu"] // 1000
            fits: dict[tuple, int] = {}
            for key, pods in per_slice_domain.items():
                fits[key[: lvl + 1]] = fits.get(key[: lvl + 1], 0) + pods // size
            assert max(fits.values()) < ps.count // size
        return
    if result.errors:
        # upstream's errCodeAssumptionsViolated: only v0.17's code (no prioritizeLeaderDomain)
        # with a leader runs out of domains in the descent
        assert version == "0.17" and leader is not None, result.errors
        return
    by_name = {n.name: n for n in nodes}
    used: dict[str, int] = {}
    hosts: set[tuple] = set()
    for p in podsets:
        ta = result.assignments[p.name]
        assert ta is not None and ta.levels == (HOSTNAME,)
        assert sum(d.count for d in ta.domains) == p.count
        assert len({d.values for d in ta.domains}) == len(ta.domains)
        for d in ta.domains:
            assert d.count > 0
            used[d.values[0]] = used.get(d.values[0], 0) + d.count * p.requests["cpu"]
            hosts.add(d.values)
    for name, cpu in used.items():
        assert cpu <= by_name[name].allocatable["cpu"]
    if tr is not None and tr.required is not None:
        lvl = LEVELS.index(tr.required)
        domains = {tuple(by_name[h[0]].labels[k] for k in LEVELS[: lvl + 1]) for h in hosts}
        assert len(domains) == 1
    if slices:
        slice_lvl = LEVELS.index(tr.slice_required)
        per: dict[tuple, int] = {}
        for d in result.assignments["main"].domains:
            key = tuple(by_name[d.values[0]].labels[k] for k in LEVELS[: slice_lvl + 1])
            per[key] = per.get(key, 0) + d.count
        assert all(v % size == 0 for v in per.values()), per


def test_leaves_follow_kueues_caches() -> None:
    """tas_leaves: unschedulable nodes and nodes off the flavor or without a level label are
    dropped, tainted ones kept; bound non-TAS pods count with one pod each, terminated ones not,
    TAS pods as TAS usage."""
    labels = {"rack": "r1", HOSTNAME: "a", "pool": "gpu"}
    nodes = (
        Node(name="a", labels=labels, allocatable={"cpu": 4000, "pods": 10}),
        Node(name="b", labels={**labels, HOSTNAME: "b"}, unschedulable=True),
        Node(name="c", labels={**labels, HOSTNAME: "c", "pool": "cpu"}),
        Node(name="d", labels={"pool": "gpu", HOSTNAME: "d"}),
        Node(
            name="e",
            labels={**labels, HOSTNAME: "e"},
            allocatable={"cpu": 1000, "pods": 10},
            taints=(Taint(key="k", effect="NoSchedule"),),
        ),
    )
    pods = (
        Pod(namespace="n", name="p1", node_name="a", requests={"cpu": 500}, phase="Running"),
        Pod(namespace="n", name="p2", node_name="a", requests={"cpu": 700}, phase="Succeeded"),
        Pod(
            namespace="n",
            name="p3",
            node_name="a",
            requests={"cpu": 1000},
            annotations={"kueue.x-k8s.io/podset-required-topology": "rack"},
        ),
    )
    flavor = ResourceFlavor(name="f", node_labels={"pool": "gpu"})
    leaves = tas_leaves(Cluster(nodes=nodes, pods=pods), flavor, ("rack", HOSTNAME))
    assert [leaf.name for leaf in leaves] == ["a", "e"]
    assert leaves[0].non_tas_usage == {"cpu": 500, "pods": 1}
    assert leaves[0].tas_usage == {"cpu": 1000, "pods": 1}
    ps = TASPodSet("main", 3, {"cpu": 1000}, TopologyRequest(required="rack"))
    result = assign([ps], leaves, ("rack", HOSTNAME))
    # a has 4000 - 500 - 1000 = 2500m free: 2 pods; e is tainted (excluded); 3 do not fit
    assert result.reason == (
        'topology "default" allows to fit only 2 out of 3 pod(s). Total nodes: 2; excluded: '
        'taint "k:NoSchedule": 1'
    )
    tolerated = assign(
        [ps],
        leaves,
        ("rack", HOSTNAME),
        flavor_tolerations=(Toleration(key="k", operator="Exists"),),
    )
    assert tolerated.ok
    assert [(d.values, d.count) for d in tolerated.assignments["main"].domains] == [
        (("a",), 2),
        (("e",), 1),
    ]


def test_default_config_per_release() -> None:
    assert default_tas_config("v0.17.8").multi_layer is False
    assert default_tas_config("0.18").gates().prioritize_leader_domain is True
    assert default_tas_config("0.17").gates().prioritize_leader_domain is False
    main = default_tas_config("main")
    assert (main.profile, main.balanced, main.multi_layer) == ("Mixed", False, True)
    assert default_tas_config("0.19", {"TASProfileMixed": False}).profile == "BestFit"
    with pytest.raises(ValueError):
        default_tas_config("0.12")
    with pytest.raises(ValueError):
        default_tas_config("0.19", {"NoSuchGate": True})
    ps = TASPodSet(
        "main",
        4,
        {"cpu": 1000},
        TopologyRequest(required="rack", slice_constraints=(("rack", 4), (HOSTNAME, 2))),
    )
    leaves = (
        Leaf(name="a", labels={"rack": "r", HOSTNAME: "a"}, allocatable={"cpu": 8000, "pods": 9}),
    )
    assert assign([ps], leaves, ("rack", HOSTNAME), default_tas_config("0.19")).ok
    assert (
        "TASMultiLayerTopology"
        in assign([ps], leaves, ("rack", HOSTNAME), default_tas_config("0.18")).reason
    )


def test_v017_leader_descent_runs_out_of_domains() -> None:
    """Kueue v0.17 places the leader on the rack with the most slices and then cannot fit the
    workers (it logs errCodeAssumptionsViolated and admits a short assignment); v0.18 added
    prioritizeLeaderDomain, which puts the leader where the workers still fit."""

    def node(rack: str, cpu: int) -> Leaf:
        return Leaf(
            name=rack,
            labels={"block": "b", "rack": rack, HOSTNAME: rack},
            allocatable={"cpu": cpu, "pods": 110},
        )

    leaves = (node("r0", 3000), node("r1", 4000))
    tr = TopologyRequest(required="block", slice_required="rack", slice_size=2, podset_group="g")
    podsets = [TASPodSet("workers", 6, {"cpu": 1000}, tr), TASPodSet("leader", 1, {"cpu": 500}, tr)]
    old = assign(podsets, leaves, LEVELS, default_tas_config("0.17"))
    assert old.ok and old.errors and sum(d.count for d in old.assignments["workers"].domains) < 6
    new = assign(podsets, leaves, LEVELS, default_tas_config("0.18"))
    assert new.ok and not new.errors
    assert [(d.values, d.count) for d in new.assignments["leader"].domains] == [(("r0",), 1)]
    assert [(d.values, d.count) for d in new.assignments["workers"].domains] == [
        (("r0",), 2),
        (("r1",), 4),
    ]


def test_upstream_gb200_nvl36_multi_layer() -> None:
    """Kueue v0.19.2 tas_cache_test.go, TestFindTopologyAssignments, "multi-layer topology: mimic
    a real-world GB200 cluster, with NVL36 arch (2GPUs/node); dc required; aizone slices of 48;
    rack slices of 16; TASMultiLayerTopology" (its node set is a Go func literal, which the
    extractor does not port, so it is written out here): 8 racks of 18 nodes with 2 GPUs, 96 pods
    of 2 GPUs, 48 per aizone and 16 per rack: 6 racks of 16."""
    racks = [
        ("aizone0", "block0", "r0"),
        ("aizone0", "block0", "r1"),
        ("aizone0", "block1", "r2"),
        ("aizone0", "block1", "r3"),
        ("aizone1", "block2", "r4"),
        ("aizone1", "block2", "r5"),
        ("aizone1", "block3", "r6"),
        ("aizone1", "block3", "r7"),
    ]
    levels = ("cloud.com/datacenter", "cloud.com/aizone", "cloud.com/topology-block")
    levels += ("cloud.com/topology-rack",)
    leaves = [
        Leaf(
            name=f"{block}-{rack}-{az}-n{i}",
            labels=dict(zip(levels, ("dc0", az, block, rack), strict=True)),
            allocatable={"nvidia.com/gpu": 2, "pods": 110},
        )
        for az, block, rack in racks
        for i in range(18)
    ]
    tr = TopologyRequest(
        required="cloud.com/datacenter",
        slice_constraints=(("cloud.com/aizone", 48), ("cloud.com/topology-rack", 16)),
    )
    config = default_tas_config("v0.19.2", {"TASMultiLayerTopology": True})
    result = assign([TASPodSet("", 96, {"nvidia.com/gpu": 2}, tr)], leaves, levels, config)
    ta = result.assignments[""]
    assert ta is not None and ta.levels == levels
    assert [(d.values, d.count) for d in ta.domains] == [
        (("dc0", "aizone0", "block0", "r0"), 16),
        (("dc0", "aizone0", "block0", "r1"), 16),
        (("dc0", "aizone0", "block1", "r2"), 16),
        (("dc0", "aizone1", "block2", "r4"), 16),
        (("dc0", "aizone1", "block2", "r5"), 16),
        (("dc0", "aizone1", "block3", "r6"), 16),
    ]
