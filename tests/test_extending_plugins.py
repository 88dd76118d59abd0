"""docs/how-to/extend.md, "A scheduler plugin", step by step, with toy plugins.

Each toy plugin is a :class:`~gangplan.solver.greedy.plugins.base.Plugin` subclass defining the
methods of the extension points it serves (nothing else declares them), registered with
:func:`~gangplan.solver.greedy.plugins.register` (for an in-tree plugin: one line in ``REGISTRY``)
and enabled by a KubeSchedulerConfiguration in the snapshot, exactly as that page says. Every
Result goes through the validator; each test also runs the snapshot without the plugin enabled
to show the plugin is what changed the outcome.
"""

from __future__ import annotations

import numpy as np
import pytest

from gangplan.solver.greedy import solve_greedy
from gangplan.solver.greedy.framework import SUCCESS, Placement, unschedulable
from gangplan.solver.greedy.plugins import REGISTRY, register, unregister
from gangplan.solver.greedy.plugins.base import (
    FILTER,
    NORMALIZE_SCORE,
    PLACEMENT_GENERATE,
    PLACEMENT_SCORE,
    SCORE,
    Plugin,
)
from gangplan.solver.greedy.profile import build_profile
from gangplan.solver.validate import validate

RACK = "topology.kubernetes.io/rack"
NOISY = "toy.gangplan.io/noisy"
QUIET = "toy.gangplan.io/quiet"
PREFERRED = "toy.gangplan.io/preferred"
POWER = "toy.gangplan.io/power-domain"


# ---- the toy plugins (step 1: a module with a Plugin subclass) -------------------------------
class ToyQuietNodes(Plugin):
    """Filter: nodes labelled noisy=true are rejected. Score: 100 on nodes labelled quiet."""

    name = "ToyQuietNodes"
    REASON = "node(s) are noisy"

    def filter_one(self, cs, pod, snap, i):
        if snap.nodes[i].labels.get(NOISY) == "true":
            return self.status(unschedulable(self.REASON))
        return SUCCESS

    def score(self, cs, pod, snap, feasible):
        return np.array(
            [100 if QUIET in snap.nodes[int(i)].labels else 0 for i in feasible], dtype=np.int64
        )


class ToyPreferredPlacement(Plugin):
    """PlacementScore: 100 for a placement holding a node labelled preferred, else 0."""

    name = "ToyPreferredPlacement"

    def score_placements(self, snap, info, placements, proposals):
        return [
            100 if any(PREFERRED in snap.nodes[int(i)].labels for i in p.nodes) else 0
            for p in placements
        ]


class ToyPowerDomains(Plugin):
    """PlacementGenerate: every gang stays inside one power domain (node label ``POWER``)."""

    name = "ToyPowerDomains"

    def generate_placements(self, snap, info, parent):
        codes, values, _ = snap.label_codes(POWER)
        nodes = parent.nodes[codes[parent.nodes] >= 0]
        out = [
            Placement(v, nodes[codes[nodes] == c], POWER)
            for c, v in enumerate(values)
            if (codes[nodes] == c).any()
        ]
        return out, SUCCESS


@pytest.fixture
def toys():
    """Step 2: register the plugins (an in-tree plugin would be one line in ``REGISTRY``)."""
    for cls in (ToyQuietNodes, ToyPreferredPlacement, ToyPowerDomains):
        register(cls)
    yield
    for cls in (ToyQuietNodes, ToyPreferredPlacement, ToyPowerDomains):
        unregister(cls.name)


# ---- snapshots -------------------------------------------------------------------------------
def node(name: str, cpu: int, **labels: str) -> str:
    labels = {"kubernetes.io/hostname": name, **labels}
    body = ", ".join(
        f"{k}: {v!r}" if isinstance(v, str) else f"{k}: {v}" for k, v in labels.items()
    )
    return f"""apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{{body}}}}}
status: {{allocatable: {{cpu: "{cpu}", memory: 64Gi, pods: "110"}}}}
---
"""


def gang(name: str, pods: int, cpu: int, *, topology: str | None = None) -> str:
    constraint = (
        f"\n  schedulingConstraints:\n    topology: [{{key: {topology}}}]" if topology else ""
    )
    out = f"""apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {{name: {name}, namespace: ml, creationTimestamp: "2026-01-01T00:00:00Z"}}
spec:
  schedulingPolicy:
    gang: {{minCount: {pods}}}{constraint}
---
"""
    for k in range(pods):
        out += f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}-{k}, namespace: ml, creationTimestamp: "2026-01-01T00:00:00Z"}}
spec:
  schedulingGroup: {{podGroupName: {name}}}
  containers: [{{name: w, resources: {{requests: {{cpu: "{cpu}", memory: 1Gi}}}}}}]
---
"""
    return out


def config(plugins: str) -> str:
    """Step 3: enable the plugin where the KubeSchedulerConfiguration says."""
    return f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
{plugins}
---
"""


def solve_valid(cluster, **opts):
    r = solve_greedy(cluster, **opts)
    assert validate(cluster, r) == []
    return r


def nodes_of(result, group: str) -> dict[str, str]:
    return {k: o.node for k, o in sorted(result.pods.items()) if k.startswith(f"ml/{group}-")}


# ---- the tests -------------------------------------------------------------------------------
def test_extension_points_are_read_off_the_methods_a_plugin_defines(toys):
    assert ToyQuietNodes.points == {FILTER, SCORE}
    assert ToyPreferredPlacement.points == {PLACEMENT_SCORE}
    assert ToyPowerDomains.points == {PLACEMENT_GENERATE}
    assert NORMALIZE_SCORE not in ToyQuietNodes.points
    assert REGISTRY["ToyQuietNodes"] is ToyQuietNodes


def test_register_refuses_a_second_plugin_under_a_taken_name(toys):
    class Impostor(Plugin):
        name = "NodeResourcesFit"

    with pytest.raises(ValueError, match="already registered"):
        register(Impostor)
    assert REGISTRY["NodeResourcesFit"].__name__ == "Fit"


NODES_A = (
    node("n-noisy", 4, **{NOISY: "true"})
    + node("n-plain", 4)
    + node("n-quiet", 4, **{QUIET: "yes"})
)


def test_a_toy_filter_and_score_plugin_moves_a_gang_off_noisy_nodes_onto_quiet_ones(
    toys, load_text
):
    plain = solve_valid(load_text(NODES_A + gang("job", 2, 2)))
    assert nodes_of(plain, "job") == {
        "ml/job-0": "n-noisy",
        "ml/job-1": "n-plain",
    }  # equal scores: first node, then LeastAllocated

    cluster = load_text(
        config("    multiPoint:\n      enabled: [{name: ToyQuietNodes, weight: 10}]")
        + NODES_A
        + gang("job", 2, 2)
    )
    profile = build_profile(cluster)
    assert "ToyQuietNodes" in [pl.name for pl in profile.filters]
    assert ("ToyQuietNodes", 10) in [(pl.name, w) for pl, w in profile.scorers]
    r = solve_valid(cluster)
    assert nodes_of(r, "job") == {"ml/job-0": "n-quiet", "ml/job-1": "n-quiet"}
    first = r.greedy_trace.pods["ml/job-0"]
    assert first.feasible_nodes == 2
    assert first.top[0].node == "n-quiet" and first.top[0].scores["ToyQuietNodes"] == 1000


def test_a_toy_filter_rejection_is_counted_in_the_fit_error_under_the_plugins_name(toys, load_text):
    snapshot = NODES_A + gang("big", 3, 4)
    assert solve_valid(load_text(snapshot)).groups["ml/big"].admitted
    r = solve_valid(
        load_text(config("    filter:\n      enabled: [{name: ToyQuietNodes}]") + snapshot)
    )
    assert not r.groups["ml/big"].admitted
    failed = r.greedy_trace.pods["ml/big-2"]
    assert (
        failed.fit_error
        == f"0/3 nodes are available: 1 {ToyQuietNodes.REASON}, 2 Insufficient cpu."
    )
    assert failed.rejections["ToyQuietNodes"] == {ToyQuietNodes.REASON: 1}


def test_a_filter_only_entry_enables_the_filter_without_the_score(toys, load_text):
    cluster = load_text(
        config("    filter:\n      enabled: [{name: ToyQuietNodes}]") + NODES_A + gang("job", 2, 2)
    )
    profile = build_profile(cluster)
    assert "ToyQuietNodes" in [pl.name for pl in profile.filters]
    assert "ToyQuietNodes" not in [pl.name for pl, _ in profile.scorers]
    r = solve_valid(cluster)
    assert nodes_of(r, "job") == {"ml/job-0": "n-plain", "ml/job-1": "n-quiet"}


NODES_B = (
    node("a1", 2, **{RACK: "rack1", PREFERRED: "yes"})
    + node("a2", 2, **{RACK: "rack1"})
    + node("b1", 2, **{RACK: "rack2"})
    + node("b2", 2, **{RACK: "rack2"})
    + node("b3", 2, **{RACK: "rack2"})
)
BLOCKER = """apiVersion: v1
kind: Pod
metadata: {name: used, namespace: ml}
spec:
  nodeName: b1
  containers: [{name: w, resources: {requests: {cpu: "2"}}}]
status: {phase: Running}
---
"""


def test_a_toy_placement_score_plugin_outweighs_bin_packing(toys, load_text):
    snapshot = NODES_B + BLOCKER + gang("pg", 3, 1, topology=RACK)
    plain = solve_valid(load_text(snapshot))
    assert (
        plain.greedy_trace.groups["ml/pg"].placements.chosen == "rack2"
    )  # PlacementBinPacking prefers the fuller rack

    cluster = load_text(
        config("    placementScore:\n      enabled: [{name: ToyPreferredPlacement, weight: 2}]")
        + snapshot
    )
    r = solve_valid(cluster)
    info = r.greedy_trace.groups["ml/pg"].placements
    by_name = {e.name: e for e in info.evaluated}
    assert list(by_name["rack1"].scores) == [
        "PlacementBinPacking",
        "PodGroupPodsCount",
        "ToyPreferredPlacement",
    ]
    assert (
        by_name["rack1"].scores["ToyPreferredPlacement"] == 200
        and by_name["rack2"].scores["ToyPreferredPlacement"] == 0
    )
    assert (by_name["rack1"].total, by_name["rack2"].total) == (
        plain_total(plain, "rack1") + 200,
        plain_total(plain, "rack2"),
    )
    assert info.chosen == "rack1"
    assert set(nodes_of(r, "pg").values()) <= {"a1", "a2"}


def plain_total(result, placement: str) -> int:
    return next(
        e.total
        for e in result.greedy_trace.groups["ml/pg"].placements.evaluated
        if e.name == placement
    )


NODES_C = (
    node("r1-p1-a", 4, **{RACK: "r1", POWER: "p1"})
    + node("r1-p2-a", 4, **{RACK: "r1", POWER: "p2"})
    + node("r1-p1-b", 4, **{RACK: "r1", POWER: "p1"})
    + node("r2-p1-a", 4, **{RACK: "r2", POWER: "p1"})
    + node("r2-p2-a", 4, **{RACK: "r2", POWER: "p2"})
    + node("r2-p2-b", 4, **{RACK: "r2", POWER: "p2"})
)


def test_a_second_placement_generator_is_merged_with_the_topology_one_by_intersecting_node_sets(
    toys, load_text
):
    snapshot = NODES_C + gang("pg", 2, 4, topology=RACK)
    plain = solve_valid(load_text(snapshot))
    assert plain.greedy_trace.groups["ml/pg"].placements.generated == 2

    cluster = load_text(
        config("    placementGenerate:\n      enabled: [{name: ToyPowerDomains}]") + snapshot
    )
    assert [pl.name for pl in build_profile(cluster).placement_generators] == [
        "TopologyPlacementGenerator",
        "ToyPowerDomains",
    ]
    r = solve_valid(cluster)
    info = r.greedy_trace.groups["ml/pg"].placements
    assert info.generated == 4
    assert [(e.name, e.nodes) for e in info.entries()] == [
        ("r1/p1", 2),
        ("r1/p2", 1),
        ("r2/p1", 1),
        ("r2/p2", 2),
    ]
    assert {e.name: e.status for e in info.evaluated} == {
        "r1/p1": "Success",
        "r1/p2": "Unschedulable",
        "r2/p1": "Unschedulable",
        "r2/p2": "Success",
    }
    placed = nodes_of(r, "pg").values()
    racks = {n.split("-")[0] for n in placed}
    powers = {n.split("-")[1] for n in placed}
    assert len(placed) == 2 and len(racks) == 1 and len(powers) == 1
    assert r.groups["ml/pg"].admitted


def test_a_second_generator_alone_constrains_groups_without_a_topology_key(toys, load_text):
    cluster = load_text(
        config("    placementGenerate:\n      enabled: [{name: ToyPowerDomains}]")
        + NODES_C
        + gang("pg", 3, 4)
    )
    r = solve_valid(cluster)
    info = r.greedy_trace.groups["ml/pg"].placements
    assert info.key is None and [e.name for e in info.entries()] == ["p1", "p2"]
    assert len({n.split("-")[1] for n in nodes_of(r, "pg").values()}) == 1
