"""Group trees the newest upstream tests schedule, per version (issue 39: "``--kube-version 1.38``
refuses trees the newest tests schedule").

The snapshots under tests/fixtures/upstream_trees/ translate master's
``test/integration/scheduler/podgroup/topology_aware_scheduling/cpg_tas_test.go`` @1361a25a (a gang
CompositePodGroup over basic PodGroups, placed after workload-aware preemption) and
``test/integration/scheduler/preemption/podgroup/podgrouppreemption_test.go``
``TestCompositePodGroupPreemption`` (a tree whose CompositePodGroup and PodGroup write their
``WorkloadRef`` arguments in opposite orders). Each file names its case; the PodGroup pg1 carries
the upstream expectation for its whole tree (``gangplan.io/expect-victims``, ``gangplan.io/expect-nodes``) and
``gangplan.io/since`` (CompositePodGroups exist from v1.37).

Both trees fail the structural checks of ``validatePodGroupHierarchy`` @45f0bf0f (rule E, and rule
B under the literal reading of the arguments), which belong to the unmerged kubernetes#142004; master
and the v1.37 release run only ``validatePodGroup``'s checks, so v1.37 and ``--kube-version 1.38``
schedule them as upstream expects (docs/upstream-hierarchy-validation.md §6). The disagreement
between the proof of concept and these tests is pinned here through
``validate_hierarchies(checks="full")``. Every Result goes through the validator.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gangplan.io.loader import load_objects, load_snapshot
from gangplan.models.hierarchy import validate_hierarchies
from gangplan.models.objects import SchedulerProfile
from gangplan.models.version import VERSIONS, KubeVersion
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "upstream_trees"
CASES = sorted(FIXTURES.glob("*.yaml"))
SINCE = "gangplan.io/since"
EXPECT_VICTIMS = "gangplan.io/expect-victims"
EXPECT_NODES = "gangplan.io/expect-nodes"


def _root(cluster):
    """The root of the tree whose PodGroup carries the expectation, and the annotations."""
    (key,) = [k for k, g in cluster.pod_groups.items() if SINCE in g.annotations]
    ann = cluster.pod_groups[key].annotations
    ns, parent = key.split("/")[0], cluster.pod_groups[key].parent
    while parent is not None:
        key = f"{ns}/{parent}"
        parent = cluster.composite_pod_groups[key].parent
    return key, ann


def _since(path: Path) -> str:
    (line,) = [ln for ln in path.read_text().splitlines() if ln.strip().startswith(SINCE + ":")]
    return line.split(":", 1)[1].strip().strip('"')


def test_every_fixture_names_its_upstream_file_case_and_version():
    assert len(CASES) >= 2
    for path in CASES:
        head = "\n".join(path.read_text().splitlines()[:3])
        assert "# Upstream: kubernetes/kubernetes test/integration/scheduler/" in head, path.name
        assert "@1361a25a" in head or "file id 55696002669" in head, path.name
        assert ", case" in head, path.name


PAIRS = [(path, v) for path in CASES for v in VERSIONS if v.at_least(_since(path))]


@pytest.mark.parametrize(("path", "version"), PAIRS, ids=[f"{p.stem}-{v.value}" for p, v in PAIRS])
def test_the_tree_schedules_as_upstream_expects(path: Path, version: KubeVersion):
    cluster = load_snapshot(path, kube_version=version)
    root, ann = _root(cluster)
    assert cluster.groups.validation_error(root) is None
    result = solve_greedy(cluster, snapshot=str(path))
    assert validate(cluster, result) == []
    members = [p.key for p in cluster.groups.members(root) if not p.bound]
    placements = result.placements()
    assert sorted(k for k in placements if k in members) == sorted(members)
    assert sorted(result.victims) == sorted(ann[EXPECT_VICTIMS].split(","))
    if EXPECT_NODES in ann:
        assert {placements[k] for k in members} == set(ann[EXPECT_NODES].split(","))


def _poc(cluster, root):
    queued = {p.key for p in cluster.pending_pods}
    return validate_hierarchies(cluster.groups, queued, SchedulerProfile(), checks="full").get(root)


def test_the_unmerged_poc_would_refuse_the_gang_root_over_basic_children():
    """kubernetes#142004 @45f0bf0f against cpg_tas_test.go @1361a25a: the POC's rule E refuses the
    tree the master test schedules. The POC's rule B fires first under the wrappers' own argument
    orders (the PodGroups name Workload "workload", the CompositePodGroup "cpg")."""
    path = FIXTURES / "cpg-tas-gang-root-basic-children-after-preemption.yaml"
    cluster = load_snapshot(path, kube_version="1.38")
    assert _poc(cluster, "default/cpg-root") == (
        'pod group workload does not match root workload, got: "workload" ("default/pg1") and '
        '"cpg" ("default/cpg-root")'
    )
    docs = list(yaml.safe_load_all(path.read_text()))
    for d in docs:
        if d["kind"] == "PodGroup":
            d["spec"]["workloadRef"]["workloadName"] = "cpg"
    same_workload = load_objects(docs, kube_version="1.38")
    assert _poc(same_workload, "default/cpg-root") == (
        'gang parent "default/cpg-root" cannot have basic child "default/pg1"'
    )


@pytest.mark.parametrize("version", ["1.37", "1.38"])
def test_the_literal_reading_of_the_opposite_argument_orders_still_schedules(version):
    """Read as (workloadName, templateName) on both kinds, TestCompositePodGroupPreemption's
    PodGroup names Workload "t1" and its CompositePodGroup "wl1": only the POC's rule B compares
    them; v1.37 and master schedule the tree with the same victim either way."""
    path = FIXTURES / "cpg-partial-preemption-opposite-workload-ref-order.yaml"
    docs = list(yaml.safe_load_all(path.read_text()))
    for d in docs:
        if d["kind"] == "PodGroup":
            d["spec"]["workloadRef"] = {"workloadName": "t1", "templateName": "wl1"}
    cluster = load_objects(docs, kube_version=version)
    assert _poc(cluster, "default/cpg1") == (
        'pod group workload does not match root workload, got: "t1" ("default/pg1") and '
        '"wl1" ("default/cpg1")'
    )
    assert cluster.groups.validation_error("default/cpg1") is None
    result = solve_greedy(cluster)
    assert validate(cluster, result) == []
    assert result.victims == ["default/low-1"]
    assert result.groups["default/pg1"].admitted
