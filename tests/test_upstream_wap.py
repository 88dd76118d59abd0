"""Workload-aware preemption against upstream's newest stored integration table, per version.

The snapshots under tests/fixtures/upstream_wap/ translate cases of kubernetes/kubernetes
``test/integration/scheduler/preemption/podgroup/podgrouppreemption_test.go`` at commit
``8b4275b8edf9cb25c8d74001f83ae7b11fb648cf`` (``TestPodGroupPreemption``); each file names its case,
and the preemptor's PodGroup carries the upstream expectation (the README there says how). Every
Result goes through the independent validator.

Versions: a case holds from its ``gangplan.io/since`` version on (v1.36 for plain groups, v1.37 for a
topology-constrained group, whose workload-aware preemption v1.36 refuses). v1.35 has no
workload-aware preemption: its gang pods preempt one by one, so a gang that still cannot fit leaves
its victims evicted (the versions table's row "workload-aware preemption of a group with
``schedulingConstraints.topology``"); that is checked on the one case where it shows.

Workload-aware preemption is asynchronous from v1.36 on (rule W of issue 39,
tests/test_wap_async.py): a preemptor that evicts binds in the cycle its victims' deletion triggers.

Issue 39 names "Victim-aware scoring" cases of this file on master, where upstream would score
placements by the victims they cost. No stored version of this file, of the unit test
``pkg/scheduler/framework/preemption/podgrouppreemption_test.go``, or of the evaluator
``pkg/scheduler/framework/preemption/podgrouppreemption.go`` (newest stored: the PreemptionManager /
ReprieveFilter form after kubernetes#141932) contains such cases or such scoring: the evaluator
removes every lower-priority unit, runs the pod-group algorithm once with its ordinary Filter and
Score plugins, and reprieves in place. So gangplan keeps that behaviour at every version, and these
tests pin it on upstream's own cases.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplan.io.loader import load_snapshot
from gangplan.models.version import VERSIONS, KubeVersion
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.suite import EXPECT_GREEDY, EXPECT_PLACED
from gangplan.solver.validate import validate

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "upstream_wap"
CASES = sorted(FIXTURES.glob("*.yaml"))
EXPECT_VICTIMS = "gangplan.io/expect-victims"
EXPECT_ONE_OF = "gangplan.io/expect-victims-one-of"
SINCE = "gangplan.io/since"
UPSTREAM_COMMIT = "8b4275b8edf9cb25c8d74001f83ae7b11fb648cf"


def _preemptor(cluster):
    """The PodGroup that carries the expectation (one per snapshot)."""
    (key,) = [k for k, g in cluster.pod_groups.items() if SINCE in g.annotations]
    return key, cluster.pod_groups[key].annotations


def _names(text: str) -> list[str]:
    return sorted(n for n in text.split(",") if n)


def test_every_fixture_names_its_upstream_case_and_commit() -> None:
    assert len(CASES) >= 6
    for path in CASES:
        head = path.read_text().splitlines()[:3]
        assert any(UPSTREAM_COMMIT in line for line in head), path.name
        assert any("TestPodGroupPreemption, case" in line for line in head), path.name


def _since(path: Path) -> str:
    """The ``gangplan.io/since`` annotation of the fixture, read from its text (collection time)."""
    (line,) = [ln for ln in path.read_text().splitlines() if ln.strip().startswith(SINCE + ":")]
    return line.split(":", 1)[1].strip().strip('"')


# Each case at every version from the one it holds at (the versions before are tested below).
PAIRS = [(path, v) for path in CASES for v in VERSIONS if v.at_least(_since(path))]


@pytest.mark.parametrize(("path", "version"), PAIRS, ids=[f"{p.stem}-{v.value}" for p, v in PAIRS])
def test_greedy_evicts_the_upstream_victims(path: Path, version: KubeVersion) -> None:
    cluster = load_snapshot(path, kube_version=version)
    key, ann = _preemptor(cluster)
    assert version.at_least(ann[SINCE])
    result = solve_greedy(cluster, snapshot=str(path))
    assert validate(cluster, result) == []
    group = result.groups[key]
    assert ("admitted" if group.admitted else "rejected") == ann[EXPECT_GREEDY]
    assert group.placed == int(ann[EXPECT_PLACED])
    if EXPECT_VICTIMS in ann:
        assert sorted(result.victims) == _names(ann[EXPECT_VICTIMS])
    else:
        assert len(result.victims) == 1 and result.victims[0] in _names(ann[EXPECT_ONE_OF])
    if result.victims and group.admitted:
        # rule W (issue 39): the preemptor binds in the cycle its victims' deletion triggers,
        # not on a nomination in the cycle that preempted
        assert not any(o.nominated for o in result.pods.values())
        assert result.greedy_trace.requeues[-1].trigger.startswith("PodDelete ")


@pytest.mark.parametrize("seed", range(8))
def test_a_single_mode_victim_is_one_pod_whatever_the_draw(seed: int) -> None:
    """Upstream leaves open which of the three equal pods goes ("do not choose specific pod");
    with random tie-breaking every draw still evicts exactly one of them."""
    path = FIXTURES / "single-mode-group-one-pod.yaml"
    cluster = load_snapshot(path)
    result = solve_greedy(cluster, tie_break="random", seed=seed)
    assert validate(cluster, result) == []
    assert len(result.victims) == 1
    assert result.victims[0] in {"default/low-1", "default/low-2", "default/low-3"}


def test_v136_refuses_the_topology_case_and_v135_preempts_per_pod() -> None:
    """The topology case at the versions before it holds: v1.36 refuses workload-aware preemption
    for a group with scheduling constraints (nothing evicted, the group waits); v1.35 has no
    workload-aware preemption, so each gang pod's own DefaultPreemption evicts what it needs."""
    path = FIXTURES / "tas-one-eligible-domain.yaml"
    c36 = load_snapshot(path, kube_version="1.36")
    r36 = solve_greedy(c36)
    assert validate(c36, r36) == []
    assert r36.victims == [] and not r36.groups["default/pg1"].admitted
    assert "not supported for pod groups with scheduling constraints" in (
        r36.greedy_trace.preemption["default/pg1"].reason or ""
    )
    c35 = load_snapshot(path, kube_version="1.35")
    r35 = solve_greedy(c35)
    assert validate(c35, r35) == []
    assert sorted(r35.victims) == ["default/low-1", "default/low-2"]


def test_v135_evicts_for_a_gang_that_still_fails() -> None:
    """ "Insufficient Resources (No Preemption)" is a workload-aware outcome: upstream (v1.36+)
    evicts nothing because the whole gang cannot fit. v1.35's pod-by-pod preemption evicts the two
    low pods for the first two gang pods and the gang then fails anyway."""
    path = FIXTURES / "insufficient-resources.yaml"
    cluster = load_snapshot(path, kube_version="1.35")
    result = solve_greedy(cluster)
    assert validate(cluster, result) == []
    assert not result.groups["default/pg1"].admitted
    assert sorted(result.victims) == ["default/low-1", "default/low-2"]
