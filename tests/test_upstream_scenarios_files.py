"""The upstream integration scenarios under ``scenarios/upstream/`` are well-formed fixtures.

Each file captures the decisive moment of one upstream integration test case
(``test/integration/scheduler/podgroup/podgroup_test.go`` @008b3652 and ``cpg_test.go`` @16457a8a)
and states the upstream outcome on every PodGroup (and
CompositePodGroup) as ``gangplan.io/expect-greedy`` and ``gangplan.io/expect-placed``. These tests
check the files, not an engine: they load, the annotations parse, gating is the loader's, and the
annotated outcome is itself a valid final state (the engines' tests compare against it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplan.io.loader import load_snapshot, read_documents
from gangplan.models.cluster import Cluster
from gangplan.models.result import Status
from gangplan.solver.outcome import build_result
from gangplan.solver.validate import validate

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios" / "upstream"
FILES = sorted(SCENARIOS.glob("*.yaml"))
EXPECT_GREEDY, EXPECT_PLACED = "gangplan.io/expect-greedy", "gangplan.io/expect-placed"
OUTCOMES = {"admitted", "rejected", "gated"}

# podgroup_test.go cases 1, 2, 3, 4, 5 (both orders), 7, 8 and cpg_test.go cases 1, 2; cpg-01b is
# case 1 with gang children, which the newest hierarchy validation accepts (see its header).
EXPECTED_FILES = {
    "podgroup-01-gang-fits",
    "podgroup-02-quorum-wait",
    "podgroup-03-gang-blocked",
    "podgroup-04-min-count-met-one-extra",
    "podgroup-05a-two-gangs-other-first",
    "podgroup-05b-two-gangs-pg1-first",
    "podgroup-07-basic-group",
    "podgroup-08-basic-with-blocker",
    "cpg-01-hierarchy",
    "cpg-01b-hierarchy-gang-children",
    "cpg-02-min-group-count",
}

per_file = pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])


def _expectations(cluster: Cluster) -> dict[str, tuple[str, int]]:
    return {
        k: (g.annotations[EXPECT_GREEDY], int(g.annotations[EXPECT_PLACED]))
        for k, g in cluster.pod_groups.items()
    }


def _expected_placements(cluster: Cluster) -> dict[str, str]:
    """Place each group's ``expect-placed`` pods (bound ones count) in queue order on the node."""
    node = cluster.nodes[0].name
    out = {}
    for key, (_, placed) in _expectations(cluster).items():
        members = cluster.groups.node(key).members
        pending = sorted(
            (p for p in members if not p.bound), key=lambda p: (p.creation_timestamp, p.name)
        )
        for p in pending[: placed - sum(1 for p in members if p.bound)]:
            out[p.key] = node
    return out


def test_every_upstream_case_has_its_file():
    assert {f.stem for f in FILES} == EXPECTED_FILES


@per_file
def test_file_names_the_upstream_test_and_commit(path):
    head = path.read_text().split("\napiVersion", 1)[0]
    assert "test/integration/scheduler/podgroup/" in head
    assert (
        "@008b3652959ca58af8be3fb5b6ecfe9ae7638282" in head
        or "@16457a8ac235f5f7fc64ed8d309ef2ce4f5a55e1" in head
    )


@per_file
def test_every_pod_group_states_a_known_outcome_and_a_pod_count(path):
    cluster = load_snapshot(path)
    assert cluster.pod_groups
    for key, (outcome, placed) in _expectations(cluster).items():
        assert outcome in OUTCOMES, key
        assert 0 <= placed <= len(cluster.groups.node(key).members), key
        if outcome == "admitted":
            assert placed >= cluster.groups.node(key).need, key


@per_file
def test_composite_pod_groups_state_an_outcome_too(path):
    raws = [
        d
        for d in read_documents(path)
        if isinstance(d, dict) and d.get("kind") == "CompositePodGroup"
    ]
    for raw in raws:
        notes = raw["metadata"]["annotations"]
        assert notes[EXPECT_GREEDY] in OUTCOMES and int(notes[EXPECT_PLACED]) >= 0


@per_file
def test_gating_is_exactly_what_the_annotations_say(path):
    cluster = load_snapshot(path)
    for key, (outcome, _) in _expectations(cluster).items():
        pending = [p.key for p in cluster.groups.node(key).members if not p.bound]
        gated = [k for k in pending if k in cluster.gated]
        assert gated == (pending if outcome == "gated" else []), key


def test_the_quorum_case_is_gated_by_the_loader_for_want_of_quorum():
    cluster = load_snapshot(SCENARIOS / "podgroup-02-quorum-wait.yaml")
    assert set(cluster.gated) == {"podgroup-test/p1", "podgroup-test/p2"}
    assert all("2 of minCount 3" in why for why in cluster.gated.values())


@per_file
def test_pods_have_their_group_priority_so_upstream_validation_passes(path):
    cluster = load_snapshot(path)
    for key, members in ((k, cluster.groups.node(k).members) for k in cluster.groups.leaf_keys):
        root = cluster.groups.root_of(key)
        group = cluster.pod_groups.get(root) or cluster.composite_pod_groups[root]
        assert {p.priority for p in members} == {group.priority}, key


@per_file
def test_the_annotated_outcome_is_a_valid_final_state(path):
    cluster = load_snapshot(path)
    result = build_result(
        cluster,
        engine="expected",
        status=Status.HEURISTIC,
        placements=_expected_placements(cluster),
    )
    assert validate(cluster, result) == []
    for key, (outcome, placed) in _expectations(cluster).items():
        assert result.groups[key].placed == placed, key
        assert result.groups[key].admitted == (outcome == "admitted"), key


@per_file
def test_nothing_placed_is_valid_too(path):
    cluster = load_snapshot(path)
    assert (
        validate(
            cluster, build_result(cluster, engine="none", status=Status.HEURISTIC, placements={})
        )
        == []
    )
