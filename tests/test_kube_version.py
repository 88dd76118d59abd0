"""Per-version fidelity (issue 21): each behaviour that differs between kube-scheduler v1.35, v1.36
and v1.37 is keyed on ``--kube-version`` and tested here, named after the upstream code path it
mirrors. Every engine result goes through the independent validator.

* ``podGroupInfoForPod`` (v1.36 ``schedule_one_podgroup.go``): gang pods sorted by
  ``InitialAttemptTimestamp``, the quorum pod first, the pods gated before it in map order;
  v1.35 / v1.37: arrival order.
* ``balancedResourceScorer`` (v1.36, kubernetes#135573): ported in
  ``tests/test_plugins_noderesources.py`` with both versions' tables.
* ``runWorkloadAwarePreemption`` (v1.36): no workload-aware preemption for a group with
  ``schedulingConstraints``; ``PodGroupEvaluator`` reprieve (v1.36 re-runs the algorithm).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.io.loader import load_objects, load_snapshot
from gangplan.models.version import (
    NEWEST,
    RELEASES,
    VERSIONS,
    KubeVersion,
    behaviour_table,
    parse_kube_version,
    version_evidence,
)
from gangplan.solver.diff import GREEDY_SUBOPTIMAL_SOMETIMES, diff_snapshot
from gangplan.solver.greedy import queue as greedy_queue
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.greedy.samples import sample_greedy
from gangplan.solver.validate import validate
from tests.strategies import small_snapshots

ROOT = Path(__file__).resolve().parent.parent
SHOWCASE = ROOT / "scenarios" / "showcase"


def _node(name: str, cpu: str = "8", version: str | None = None) -> dict:
    obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"}},
    }
    if version:
        obj["status"]["nodeInfo"] = {"kubeletVersion": version}
    return obj


def _gang(name: str, min_count: int) -> dict:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
    }


def _pod(name: str, group: str, second: int, cpu: str = "1", node: str | None = None) -> dict:
    spec: dict = {
        "schedulingGroup": {"podGroupName": group},
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
    }
    if node:
        spec["nodeName"] = node
    obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "creationTimestamp": f"2026-11-30T10:00:{second:02d}Z",
        },
        "spec": spec,
    }
    if node:
        obj["status"] = {"phase": "Running"}
    return obj


def _solve(cluster, **kw):
    r = solve_greedy(cluster, **kw)
    assert validate(cluster, r) == []
    return r


# ---- the version itself ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("1.36", "1.36"),
        ("v1.35", "1.35"),
        ("v1.37.1", "1.37"),
        ("v1.38.0-alpha.1", "1.38"),
        ("v1.36.2-eks-a1b2c3", "1.36"),
        ("1.34", None),
        ("2.0", None),
        ("", None),
        ("latest", None),
    ],
)
def test_parse_kube_version(text, want):
    got = parse_kube_version(text)
    assert (got.value if got else None) == want


def test_the_nodes_kubelets_suggest_the_newest_modelled_minor():
    ev = version_evidence(["v1.35.4", "v1.36.2", "v1.36.1", "v1.33.0"])
    assert ev.suggested == KubeVersion.V1_36
    assert ev.minors == {"1.33": 1, "1.35": 1, "1.36": 2}
    assert ev.differs_from(NEWEST) and not ev.differs_from(KubeVersion.V1_36)
    assert version_evidence([]).suggested is None
    assert version_evidence(["v1.38.0"]).suggested == KubeVersion.V1_38  # the development code
    assert (
        version_evidence(["v1.40.1"]).suggested == VERSIONS[-1]
    )  # newer than modelled: the newest we have


def test_the_docs_list_every_versioned_behaviour_as_the_table_the_code_generates():
    page = (ROOT / "docs" / "explanation" / "greedy-fidelity.md").read_text()
    assert behaviour_table() in page


def test_the_scheduling_objects_apiversions_tell_the_release_they_come_from():
    v135 = {"Workload scheduling.k8s.io/v1alpha1": 1, "Pod spec.workloadRef": 4}
    v136 = {
        "PodGroup scheduling.k8s.io/v1alpha2": 2,
        "Workload scheduling.k8s.io/v1alpha2": 1,
        "Pod spec.schedulingGroup": 3,
    }
    v137 = {
        "CompositePodGroup scheduling.k8s.io/v1alpha3": 1,
        "PodGroup scheduling.k8s.io/v1beta1": 2,
        "Pod spec.schedulingGroup": 3,
    }
    assert [version_evidence([], a).api_suggested.value for a in (v135, v136, v137)] == [
        "1.35",
        "1.36",
        "1.37",
    ]
    assert version_evidence([], {**v135, **v137}).api_suggested is None  # no release serves both
    ev = version_evidence([], v137)
    assert ev.not_served(KubeVersion.V1_37) == ()
    assert ev.not_served(KubeVersion.V1_36) == (
        "1 CompositePodGroup(s) in scheduling.k8s.io/v1alpha3, which kube-apiserver v1.36 does not serve (no version)",
        "2 PodGroup(s) in scheduling.k8s.io/v1beta1, which kube-apiserver v1.36 does not serve (scheduling.k8s.io/v1alpha2)",
    )
    assert (
        "3 Pod(s) use spec.schedulingGroup, which v1.35 does not have (spec.workloadRef there)"
        in version_evidence([], v136).not_served(KubeVersion.V1_35)
    )


@pytest.mark.parametrize(
    ("fixture", "release"),
    [
        ("v1alpha1-v1.35.yaml", "1.35"),
        ("v1alpha2-v1.36.yaml", "1.36"),
        ("v1beta1-v1alpha3-v1.37.yaml", "1.37"),
    ],
)
def test_each_releases_api_fixture_suggests_that_release(fixture, release):
    """The wire shapes of each release (tests/fixtures/api, from k8s.io/api) point at it, and only
    that release serves all of them."""
    ev = load_snapshot(ROOT / "tests" / "fixtures" / "api" / fixture).version_evidence
    assert ev.api_suggested.value == release
    assert [v.value for v in RELEASES if not ev.not_served(v)] == [release]


# ---- podGroupInfoForPod: the order of a gang's pods ---------------------------------------------------
def _four_pod_gang() -> list[dict]:
    """A 4-pod gang, minCount 4, created p0..p3 one second apart: p3 completes the quorum."""
    return [_node("n1", "64"), _gang("g", 4)] + [_pod(f"p{i}", "g", i) for i in range(4)]


def test_podGroupInfoForPod_v136_sorts_by_initial_attempt_the_quorum_pod_first_and_draws_the_gated_ones():
    cluster = load_objects(_four_pod_gang(), kube_version="1.36")
    orders = set()
    for seed in range(40):
        r = _solve(cluster, seed=seed)
        order = r.greedy_trace.order
        assert (
            order[0] == "default/p3"
        )  # the pod whose arrival completed the quorum passed PreEnqueue first
        drawn = r.greedy_trace.groups["default/g"].member_order
        assert (
            drawn is not None
            and drawn.rule == "quorum-first"
            and drawn.quorum_pod == "default/p3"
            and drawn.seed == seed
        )
        assert order[1:] == drawn.drawn
        orders.add(tuple(order))
    assert len(orders) == 6  # every map order of the three gated pods is drawn
    assert (
        _solve(cluster, seed=7).greedy_trace.order == _solve(cluster, seed=7).greedy_trace.order
    )  # same seed, same draw


@pytest.mark.parametrize("version", ["1.35", "1.37"])
def test_v135_and_v137_try_a_gangs_pods_in_arrival_order(version):
    cluster = load_objects(_four_pod_gang(), kube_version=version)
    for seed in (0, 1, 2):
        r = _solve(cluster, seed=seed)
        assert r.greedy_trace.order == [f"default/p{i}" for i in range(4)]
        assert r.greedy_trace.groups["default/g"].member_order is None
    assert '"memberOrder"' not in r.to_json()


def test_v136_bound_members_count_towards_the_quorum_and_later_arrivals_keep_their_order():
    """minCount 3: b0 is bound, p1 arrives (gated, 2 < 3), p2 completes the quorum, p3 and p4 arrive
    after it and pass PreEnqueue at once: p2, p1, p3, p4 in every run, nothing drawn."""
    objs = [_node("n1", "64"), _gang("g", 3), _pod("b0", "g", 0, node="n1")] + [
        _pod(f"p{i}", "g", i) for i in range(1, 5)
    ]
    cluster = load_objects(objs, kube_version="1.36")
    for seed in (0, 1, 2, 3):
        r = _solve(cluster, seed=seed)
        assert r.greedy_trace.order == ["default/p2", "default/p1", "default/p3", "default/p4"]
        assert r.greedy_trace.groups["default/g"].member_order is None


def test_v136_basic_groups_are_not_gated_so_their_pods_keep_arrival_order():
    objs = [_node("n1", "64"), {**_gang("g", 1), "spec": {"schedulingPolicy": {"basic": {}}}}] + [
        _pod(f"p{i}", "g", i) for i in range(3)
    ]
    r = _solve(load_objects(objs, kube_version="1.36"), seed=3)
    assert r.greedy_trace.order == ["default/p0", "default/p1", "default/p2"]


@pytest.mark.parametrize(
    ("scenario", "group"),
    [
        ("heterogeneous-gang.yaml", "default/hetero"),
        ("anti-affinity-zone.yaml", "serving/pair"),
        ("intra-group-affinity.yaml", "default/affine"),
    ],
)
def test_showcase_counterexamples_hold_in_arrival_order_and_not_in_v136(scenario, group):
    """The real v1.36.2 binary admits these gangs (issue 21); v1.35 and v1.37 reject them."""
    for version in VERSIONS:
        cluster = load_snapshot(SHOWCASE / scenario, kube_version=version.value)
        for seed in range(6):
            r = _solve(cluster, seed=seed, tie_break="random")
            assert r.groups[group].admitted == (version == KubeVersion.V1_36), (version, seed)


def test_driver_without_selector_is_a_chance_in_v136_and_diff_samples_says_how_often():
    cluster = load_snapshot(SHOWCASE / "driver-without-selector.yaml", kube_version="1.36")
    d = diff_snapshot(cluster, samples=20, time_limit=5)
    assert d.classification == GREEDY_SUBOPTIMAL_SOMETIMES and d.exit_code == 3
    n = d.samples.admitted["ray/job"]
    assert 0 < n < 20 and d.samples.reaches_target == n
    for r in d.samples.results:
        assert validate(cluster, r) == []
    doc = d.to_dict(with_results=False)
    assert (
        doc["samples"]["admitted"] == {"ray/job": n}
        and doc["samples"]["seeds"] == [0, 19]
        and doc["kubeVersion"] == "1.36"
    )
    # v1.37 tries the driver first in every run: certain, so the verdict is plain
    d37 = diff_snapshot(
        load_snapshot(SHOWCASE / "driver-without-selector.yaml"), samples=10, time_limit=5
    )
    assert d37.classification == "greedy-suboptimal" and d37.samples.admitted["ray/job"] == 0


# ---- runWorkloadAwarePreemption / PodGroupEvaluator ---------------------------------------------------
def test_runWorkloadAwarePreemption_v136_refuses_groups_with_scheduling_constraints():
    for version, admitted, victims in (("1.36", False, 0), ("1.37", True, 16)):
        cluster = load_snapshot(SHOWCASE / "preempt-nvlink-clique.yaml", kube_version=version)
        r = _solve(cluster)
        assert r.groups["ml/llm"].admitted is admitted and len(r.victims) == victims
    cluster = load_snapshot(SHOWCASE / "preempt-nvlink-clique.yaml", kube_version="1.36")
    r = _solve(cluster)
    assert (
        "workload aware preemption is not supported for pod groups with scheduling constraints"
        in r.groups["ml/llm"].reason
    )


def test_PodGroupEvaluator_v136_reprieve_reruns_the_algorithm_and_spares_the_group_unit():
    """v1.36 puts ckpt (a group, more important than the lone batch pods) back first and re-runs the
    cycle: the training pod moves to gpu-3, so batch-a and batch-b go (the real v1.36.2 binary, every
    run). v1.37 re-checks Filter on the node chosen once (gpu-1): ckpt goes."""
    got = {}
    for version in ("1.36", "1.37"):
        cluster = load_snapshot(SHOWCASE / "preempt-all-mode-unit.yaml", kube_version=version)
        r = _solve(cluster)
        got[version] = sorted(r.victims)
    assert got["1.36"] == ["batch/batch-a", "batch/batch-b"]
    assert got["1.37"] == ["research/ckpt-0", "research/ckpt-1"]


# ---- the CLI and the Result -------------------------------------------------------------------------
def run_cli(args: list[str]) -> tuple[int, str, str]:
    res = CliRunner().invoke(app, args)
    return res.exit_code, res.stdout, res.stderr


def test_solve_records_the_version_and_warns_when_the_kubelets_suggest_another(tmp_path):
    objs = [
        _node("n1", "8", "v1.36.2"),
        _node("n2", "8", "v1.36.2"),
        _gang("g", 2),
        _pod("a", "g", 0),
        _pod("b", "g", 1),
    ]
    snap = tmp_path / "s.yaml"
    snap.write_text("---\n".join(json.dumps(o) + "\n" for o in objs))
    code, out, err = run_cli(["solve", str(snap), "--json"])
    assert code == 0 and json.loads(out)["params"]["kubeVersion"] == NEWEST.value
    line = "reproducing kube-scheduler v1.37, but the Nodes suggest v1.36 (2 node(s) at v1.36); choose with --kube-version"
    assert f"warning: {line}" in err.splitlines() and line in json.loads(out)["warnings"]
    code, out, err = run_cli(["solve", str(snap), "--json", "--kube-version", "1.36"])
    assert (
        code == 0
        and json.loads(out)["params"]["kubeVersion"] == "1.36"
        and "the Nodes suggest" not in err
    )
    # the objects are v1beta1, which v1.36 does not serve: read anyway, and said
    assert (
        "warning: 1 PodGroup(s) in scheduling.k8s.io/v1beta1, which kube-apiserver v1.36 does not serve (scheduling.k8s.io/v1alpha2); read anyway (v1.36); the snapshot's scheduling objects suggest v1.37"
        in err
    )
    code, out, _ = run_cli(["inspect", str(snap), "--json"])
    assert json.loads(out)["kubeVersion"] == {
        "suggested": "1.36",
        "kubelets": {"1.36": 2},
        "used": NEWEST.value,
        "modelled": ["1.35", "1.36", "1.37", "1.38"],
        "apiVersions": {"Pod spec.schedulingGroup": 2, "PodGroup scheduling.k8s.io/v1beta1": 1},
        "apiSuggested": "1.37",
        "notServed": [],
    }
    code, _, err = run_cli(["solve", str(snap), "--kube-version", "1.34"])
    assert code == 2 and "1.34" in err


# ---- property: sampled orders cover exactly what the orders can produce -----------------------------------
def _orders(cluster) -> list[dict[str, list[str]]]:
    """Every combination of permutations of each gang's drawn part (v1.36), by brute force."""
    parts = {}
    for key in sorted(cluster.pod_groups):
        node = cluster.groups.node(key)
        pods = [p for p in node.members if p.key in {q.key for q in cluster.schedulable_pods}]
        _, rec = greedy_queue.member_order(pods, node, cluster=cluster, seed=0)
        if rec is not None:
            parts[key] = [list(p) for p in itertools.permutations(rec.drawn)]
    keys = sorted(parts)
    return [
        dict(zip(keys, combo, strict=True))
        for combo in itertools.product(*(parts[k] for k in keys))
    ]


def _outcome(r) -> tuple:
    return tuple(sorted(r.admitted_groups())), tuple(sorted(k for k, p in r.pods.items() if p.node))


@settings(
    max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(small_snapshots(max_nodes=4, max_groups=2, max_group_size=4, max_singles=1))
def test_samples_cover_every_outcome_the_v136_pod_orders_can_produce(objects):
    cluster = load_objects(objects, source="<hypothesis>", kube_version="1.36")
    combos = _orders(cluster)
    if len(combos) > 36:
        return
    brute = set()
    real_draw = greedy_queue.draw_order
    try:
        for combo in combos:

            def forced(pods, seed, group, combo=combo):
                by_key = {p.key: p for p in pods}
                return [by_key[k] for k in combo[group]] if group in combo else list(pods)

            greedy_queue.draw_order = forced
            brute.add(_outcome(_solve(cluster, preemption=False)))
    finally:
        greedy_queue.draw_order = real_draw
    sampled = sample_greedy(cluster, 48, tie_break="first", preemption=False)
    for r in sampled.results:
        assert validate(cluster, r) == []
    assert {_outcome(r) for r in sampled.results} == brute


def test_diff_samples_on_the_command_line_reports_the_share_and_exits_3():
    path = str(SHOWCASE / "driver-without-selector.yaml")
    code, out, _ = run_cli(
        ["diff", path, "--kube-version", "1.36", "--samples", "8", "--json", "--time-limit", "5"]
    )
    doc = json.loads(out)
    assert code == 3 and doc["classification"] == "greedy-suboptimal-sometimes"
    assert (
        doc["samples"]["runs"] == 8
        and doc["samples"]["tieBreak"] == "random"
        and 0 < doc["samples"]["admitted"]["ray/job"] < 8
    )
    code, out, _ = run_cli(
        ["diff", path, "--kube-version", "1.36", "--samples", "8", "--time-limit", "5"]
    )
    assert (
        code == 3
        and "8 greedy runs (seeds 0..7, random ties, v1.36): optimum in" in out
        and "admitted: ray/job " in out
    )
    code, out, _ = run_cli(["diff", path, "--json", "--time-limit", "5"])
    assert (
        code == 3
        and json.loads(out)["samples"] is None
        and json.loads(out)["classification"] == "greedy-suboptimal"
    )


def _wasted_eviction_snapshot() -> list[dict]:
    """One 4-CPU node full with a priority-0 pod; a priority-100 gang (minCount 2) of p0 (2 CPU)
    and p1 (5 CPU, more than the node has)."""
    low = _pod("low", "none", 0, cpu="4", node="n1")
    del low["spec"]["schedulingGroup"]
    gang = _gang("g", 2)
    gang["spec"]["priority"] = 100
    pods = [_pod("p0", "g", 1, cpu="2"), _pod("p1", "g", 2, cpu="5")]
    for p in pods:
        p["spec"]["priority"] = 100
    low["spec"]["priority"] = 0
    return [_node("n1", "4"), low, gang, *pods]


def test_v135_gang_pods_preempt_one_by_one_and_evict_for_a_gang_that_fails():
    """v1.35 has no workload-aware preemption: p0's own PostFilter (DefaultPreemption) evicts low,
    then p1 fits nowhere and the gang fails; the victim is gone anyway. v1.36 / v1.37 run
    workload-aware preemption for the whole gang, which sees that evicting cannot help."""
    for version, victims in (("1.35", ["default/low"]), ("1.36", []), ("1.37", [])):
        cluster = load_objects(_wasted_eviction_snapshot(), kube_version=version)
        r = _solve(cluster)
        assert not r.groups["default/g"].admitted and r.victims == victims, version
    cluster = load_objects(_wasted_eviction_snapshot(), kube_version="1.35")
    d = diff_snapshot(cluster, time_limit=5)
    assert d.classification == "greedy-suboptimal" and d.optimal.victims == [] and not d.problems


def test_the_people_output_says_when_an_order_was_drawn():
    """A v1.36 run that drew a gang's pod order says so in solve's and diff's tables (v1.37 draws
    nothing and says nothing)."""
    path = str(SHOWCASE / "driver-without-selector.yaml")
    _, out, _ = run_cli(["solve", path, "--kube-version", "1.36"])
    assert (
        "chance: pod order of ray/job drawn (v1.36: Go map order; --seed 0); odds: diff --samples K"
        in out
    )
    _, out, _ = run_cli(["diff", path, "--kube-version", "1.36", "--time-limit", "5"])
    assert "  chance     pod order of ray/job drawn" in out
    _, out, _ = run_cli(["solve", path])
    assert "chance" not in out
