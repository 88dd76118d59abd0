"""The plugin points of the greedy engine: names, extension points read off methods, the
PlacementGenerate merge (upstream ``placement_merging_test.go`` cases), PlacementFeasible, and the
profile's point sets read from a KubeSchedulerConfiguration."""

from __future__ import annotations

import numpy as np
import pytest

from gangplan.models.objects import (
    DEFAULT_FILTER_PLUGINS,
    DEFAULT_PLACEMENT_GENERATE_PLUGINS,
    DEFAULT_PLACEMENT_WEIGHTS,
    DEFAULT_POST_FILTER_PLUGINS,
    DEFAULT_SCORE_WEIGHTS,
    PLACEMENT_PLUGIN_ALIASES,
)
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.greedy.framework import SUCCESS, Code, Placement, PlacementProgress, Status
from gangplan.solver.greedy.placement import run_placement_feasible, run_placement_generate
from gangplan.solver.greedy.plugins import REGISTRY, names, register, unregister
from gangplan.solver.greedy.plugins.base import (
    FILTER,
    NORMALIZE_PLACEMENT_SCORE,
    NORMALIZE_SCORE,
    PLACEMENT_FEASIBLE,
    PLACEMENT_GENERATE,
    PLACEMENT_SCORE,
    PRE_FILTER,
    PRE_SCORE,
    SCORE,
    Plugin,
)
from gangplan.solver.greedy.profile import build_profile
from gangplan.solver.greedy.snapshot import NodeTable
from gangplan.solver.greedy.testing import make_cluster, make_node
from gangplan.solver.validate import validate

NAME_CONSTANTS = {v for k, v in vars(names).items() if k.isupper() and isinstance(v, str)}


# ---- one names module ------------------------------------------------------------------------
def test_every_registered_plugin_is_named_by_a_constant_of_the_names_module():
    assert set(REGISTRY) == NAME_CONSTANTS - {names.DEFAULT_PREEMPTION}
    assert all(cls.name == key for key, cls in REGISTRY.items())


def test_the_default_profile_of_the_snapshot_layer_names_registered_plugins_only():
    for name in (
        *DEFAULT_FILTER_PLUGINS,
        *DEFAULT_SCORE_WEIGHTS,
        *DEFAULT_PLACEMENT_WEIGHTS,
        *DEFAULT_PLACEMENT_GENERATE_PLUGINS,
        *PLACEMENT_PLUGIN_ALIASES.values(),
    ):
        assert name in REGISTRY, name
    assert set(DEFAULT_POST_FILTER_PLUGINS) == {names.DEFAULT_PREEMPTION}


# ---- extension points ------------------------------------------------------------------------
IN_TREE_POINTS = {
    names.NODE_UNSCHEDULABLE: {FILTER},
    names.NODE_NAME: {FILTER},
    names.TAINT_TOLERATION: {FILTER, SCORE, NORMALIZE_SCORE},
    names.NODE_AFFINITY: {PRE_FILTER, FILTER, PRE_SCORE, SCORE, NORMALIZE_SCORE},
    names.NODE_PORTS: {PRE_FILTER, FILTER},
    names.NODE_RESOURCES_FIT: {FILTER, SCORE},
    names.POD_TOPOLOGY_SPREAD: {PRE_FILTER, FILTER, PRE_SCORE, SCORE, NORMALIZE_SCORE},
    names.INTER_POD_AFFINITY: {PRE_FILTER, FILTER, PRE_SCORE, SCORE, NORMALIZE_SCORE},
    names.NODE_RESOURCES_BALANCED_ALLOCATION: {PRE_SCORE, SCORE},
    names.IMAGE_LOCALITY: {SCORE},
    names.DYNAMIC_RESOURCES: {
        PRE_FILTER,
        FILTER,
    },  # upstream also Reserve / PreBind / PostFilter: not simulated
    names.GANG_SCHEDULING: {PLACEMENT_FEASIBLE},
    names.TOPOLOGY_PLACEMENT_GENERATOR: {PLACEMENT_GENERATE},
    names.PLACEMENT_BIN_PACKING: {PLACEMENT_SCORE},
    names.POD_GROUP_PODS_COUNT: {PLACEMENT_SCORE, NORMALIZE_PLACEMENT_SCORE},
}
"""Upstream's ``var _ fwk.XPlugin = &X{}`` assertions, for the points gangplan models."""


def test_in_tree_plugins_extend_the_points_upstream_declares_for_them():
    assert {n: set(cls.points) for n, cls in REGISTRY.items()} == IN_TREE_POINTS


def test_a_point_is_extended_by_defining_its_method_even_in_a_parent_class():
    class Base(Plugin):
        name = "ToyBase"

        def score(self, cs, pod, snap, feasible):
            return np.zeros(len(feasible), dtype=np.int64)

    class Child(Base):
        name = "ToyChild"

        def filter_mask(self, cs, pod, snap, idx):
            return np.ones(len(idx), dtype=bool)

    assert Base.points == {SCORE} and Child.points == {SCORE, FILTER}
    assert Plugin.points == frozenset()


@pytest.mark.parametrize("value", [150, -5, 101])
def test_a_score_out_of_range_is_an_error_for_every_plugin(value):
    class OutOfRange(Plugin):
        name = "ToyOutOfRange"

        def score(self, cs, pod, snap, feasible):
            return np.array([value, 0][: len(feasible)], dtype=np.int64)

    register(OutOfRange)
    try:
        c = make_cluster([make_node("n0", cpu=4000), make_node("n1", cpu=4000)], [_pod("p")])
        c = c.model_copy(
            update={
                "profile": c.profile.model_copy(
                    update={"score_weights": {**c.profile.score_weights, "ToyOutOfRange": 1}}
                )
            }
        )
        r = solve_greedy(c)
        assert r.pods["default/p"].node is None
        assert (
            r.pods["default/p"].reason
            == f"plugin 'ToyOutOfRange' returns an invalid score {value}, it should in the range of [0, 100] after normalizing"
        )
    finally:
        unregister("ToyOutOfRange")


def test_scores_at_the_range_ends_pass_the_check():
    class Ends(Plugin):
        name = "ToyEnds"

        def score(self, cs, pod, snap, feasible):
            return np.array([0, 100][: len(feasible)], dtype=np.int64)

    register(Ends)
    try:
        c = make_cluster([make_node("n0", cpu=4000), make_node("n1", cpu=4000)], [_pod("p")])
        c = c.model_copy(
            update={
                "profile": c.profile.model_copy(
                    update={"score_weights": {**c.profile.score_weights, "ToyEnds": 5}}
                )
            }
        )
        r = solve_greedy(c)
        assert r.pods["default/p"].node == "n1" and validate(c, r) == []
    finally:
        unregister("ToyEnds")


def _pod(name: str):
    from gangplan.solver.greedy.testing import make_pod

    return make_pod(name, requests={"cpu": 1000})


# ---- PlacementGenerate merging (upstream TestRunPlacementGeneratePluginsMerge) ----------------
class Fixed(Plugin):
    """A generator returning fixed placements (node positions), the parent, or a status."""

    name = "ToyFixed"

    def __init__(self, placements=None, *, parent=False, status: Status = SUCCESS) -> None:
        self.placements, self.parent, self.st = placements or [], parent, status

    def generate_placements(self, snap, info, parent):
        if not self.st.ok:
            return [], self.st
        if self.parent:
            return [parent], SUCCESS
        return [
            Placement(n, np.array(nodes, dtype=np.int64)) for n, nodes in self.placements
        ], SUCCESS


def _run(*generators: Fixed):
    for k, g in enumerate(generators):
        g.name = "abcdef"[k]
    snap = NodeTable(make_cluster([make_node(f"n{i}", cpu=1000) for i in range(1, 5)]))
    parent = Placement("", snap.all_nodes)
    got, st = run_placement_generate(list(generators), snap, None, parent)
    return (
        (None if got is None else [(p.name, [snap.names[i] for i in p.nodes]) for p in got]),
        st,
        parent,
    )


N1, N2, N3, N4 = 0, 1, 2, 3


@pytest.mark.parametrize(
    "generators, want",
    [
        ([Fixed([("a", [N1, N2, N3])]), Fixed([("b", [N2, N3, N4])])], [("a/b", ["n2", "n3"])]),
        (
            [Fixed([("a1", [N1, N2]), ("a2", [N3, N4])]), Fixed([("b1", [N2, N3])])],
            [("a1/b1", ["n2"]), ("a2/b1", ["n3"])],
        ),
        (
            [Fixed([("a", [N1, N2, N3])]), Fixed([("b", [N2, N3, N4])]), Fixed([("c", [N3, N4])])],
            [("a/b/c", ["n3"])],
        ),
        ([Fixed(parent=True), Fixed([("b", [N2, N3])])], [("b", ["n2", "n3"])]),
        ([Fixed([("dup", [N1, N2])]), Fixed([("dup", [N2, N3])])], [("dup/dup", ["n2"])]),
        (
            [Fixed([("zone-a/rack-1", [N1, N2])]), Fixed([("", [N2, N3])])],
            [("zone-a/rack-1/", ["n2"])],
        ),
    ],
    ids=[
        "two single-placement plugins intersect",
        "cross product drops empty intersections",
        "three plugins fold-merge",
        "unconstrained plugin is skipped",
        "same placement name from different plugins",
        "empty and slash-containing names",
    ],
)
def test_several_generators_are_merged_as_upstream_merges_them(generators, want):
    got, st, _ = _run(*generators)
    assert st.ok and got == want


def test_no_overlap_is_unschedulable():
    got, st, _ = _run(Fixed([("a", [N1])]), Fixed([("b", [N2])]))
    assert (
        got == []
        and st.code == Code.UNSCHEDULABLE
        and st.message() == "no placements of plugins [a b] share a node"
    )


def test_all_unconstrained_means_no_placement_decision():
    got, st, _ = _run(Fixed(parent=True), Fixed(parent=True))
    assert got is None and st.ok


def test_a_plugin_generating_nothing_is_unschedulable_and_an_error_stops_generation():
    got, st, _ = _run(Fixed([]), Fixed([("b", [N2])]))
    assert (got, st.code, st.plugin) == ([], Code.UNSCHEDULABLE, "a")
    got, st, _ = _run(Fixed([("a", [N1])]), Fixed(status=Status(Code.ERROR, ("injected",))))
    assert (got, st.code, st.plugin, st.message()) == ([], Code.ERROR, "b", "injected")


def test_merged_placements_carry_their_parts_labels():
    a = Placement("r1", np.array([0, 1]), "rack")
    b = Placement("p1", np.array([1]), "power")
    snap = NodeTable(make_cluster([make_node("n0", cpu=1000), make_node("n1", cpu=1000)]))

    class Gen(Plugin):
        name = "ToyGen"

        def __init__(self, p):
            self.p = p

        def generate_placements(self, snap, info, parent):
            return [self.p], SUCCESS

    got, _ = run_placement_generate([Gen(a), Gen(b)], snap, None, Placement("", snap.all_nodes))
    assert [(p.name, p.label, p.nodes.tolist()) for p in got] == [
        ("r1/p1", "rack=r1/power=p1", [1])
    ]


# ---- PlacementFeasible -----------------------------------------------------------------------
class Says(Plugin):
    name = "ToySays"

    def __init__(self, code: Code) -> None:
        self.code = code

    def placement_feasible(self, minimum, progress):
        return self.code


@pytest.mark.parametrize(
    "codes, want",
    [
        ((Code.SUCCESS, Code.WAIT), Code.WAIT),
        ((Code.WAIT, Code.UNSCHEDULABLE), Code.UNSCHEDULABLE),
        ((Code.SUCCESS,), Code.SUCCESS),
        ((), Code.SUCCESS),
    ],
)
def test_placement_feasible_unschedulable_beats_wait_beats_success(codes, want):
    assert run_placement_feasible([Says(c) for c in codes], 1, 0, 1) == want


def test_gang_scheduling_is_the_profiles_placement_feasible_plugin():
    profile = build_profile(make_cluster([make_node("n0", cpu=1000)]))
    (gang,) = profile.placement_feasible
    assert gang.name == names.GANG_SCHEDULING
    assert [
        gang.placement_feasible(2, PlacementProgress(scheduled=s, remaining=r)).label
        for s, r in ((0, 1), (0, 2), (2, 0))
    ] == ["Unschedulable", "Wait", "Success"]


# ---- the profile's placement sets from the KubeSchedulerConfiguration -------------------------
RACK = "topology.kubernetes.io/rack"
SNAPSHOT = """
apiVersion: v1
kind: Node
metadata: {name: a1, labels: {topology.kubernetes.io/rack: r1}}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: b1, labels: {topology.kubernetes.io/rack: r2}}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: ml}
spec:
  schedulingPolicy: {gang: {minCount: 2}}
  schedulingConstraints: {topology: [{key: topology.kubernetes.io/rack}]}
---
apiVersion: v1
kind: Pod
metadata: {name: pg-0, namespace: ml}
spec:
  schedulingGroup: {podGroupName: pg}
  containers: [{name: w, resources: {requests: {cpu: "2"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: pg-1, namespace: ml}
spec:
  schedulingGroup: {podGroupName: pg}
  containers: [{name: w, resources: {requests: {cpu: "2"}}}]
"""


def _config(plugins: str) -> str:
    return f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
{plugins}
---
"""


def test_without_the_topology_generator_a_rack_constrained_gang_spans_racks(load_text):
    kept = solve_greedy(load_text(SNAPSHOT))
    assert not kept.groups["ml/pg"].admitted  # one 2-cpu node per rack: no rack holds the gang
    c = load_text(
        _config("    placementGenerate:\n      disabled: [{name: TopologyPlacement}]") + SNAPSHOT
    )
    assert c.profile.placement_generate_plugins == ()
    r = solve_greedy(c)
    assert r.groups["ml/pg"].admitted and r.greedy_trace.groups["ml/pg"].placements is None
    assert {o.node for o in r.pods.values()} == {"a1", "b1"}
    assert [v.rule for v in validate(c, r)] == [
        "topology"
    ]  # the validator still holds the snapshot's constraint


@pytest.mark.parametrize(
    "plugins, want",
    [
        ("", [("PlacementBinPacking", 1), ("PodGroupPodsCount", 1)]),
        (
            "    placementScore:\n      enabled: [{name: PlacementBinPacking, weight: 3}]",
            [("PlacementBinPacking", 3), ("PodGroupPodsCount", 1)],
        ),
        (
            "    placementScore:\n      enabled: [{name: NodeResourcesFit, weight: 2}, {name: PodGroupPodsCount, weight: 5}]",
            [("PlacementBinPacking", 2), ("PodGroupPodsCount", 5)],
        ),
        (
            "    placementScore:\n      disabled: [{name: NodeResourcesFit}]",
            [("PodGroupPodsCount", 1)],
        ),
        ("    placementScore:\n      disabled: [{name: '*'}]", []),
    ],
    ids=[
        "defaults",
        "PlacementBinPacking weight",
        "v1.36 docs example",
        "disable under the v1.36 name",
        "disable all",
    ],
)
def test_placement_score_sets_come_from_the_configuration(load_text, plugins, want):
    c = load_text((_config(plugins) if plugins else "") + SNAPSHOT)
    assert [(pl.name, w) for pl, w in build_profile(c).placement_scorers] == want


def test_custom_filter_and_score_names_are_kept_after_the_defaults(load_text):
    c = load_text(
        _config(
            "    filter:\n      enabled: [{name: ToyA}]\n    score:\n      enabled: [{name: ToyB, weight: 4}]\n    multiPoint:\n      enabled: [{name: ToyC}, {name: ToyD, weight: 2}]"
        )
        + SNAPSHOT
    )
    assert c.profile.filter_plugins == (*DEFAULT_FILTER_PLUGINS, "ToyC", "ToyD", "ToyA")
    assert c.profile.score_weights == {**DEFAULT_SCORE_WEIGHTS, "ToyD": 2, "ToyB": 4}
    assert c.profile.placement_generate_plugins == (
        *DEFAULT_PLACEMENT_GENERATE_PLUGINS,
        "ToyC",
        "ToyD",
    )
    assert [pl.name for pl in build_profile(c).filters] == list(
        DEFAULT_FILTER_PLUGINS
    )  # unregistered names are left out
