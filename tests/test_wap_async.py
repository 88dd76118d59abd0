"""Rule W of issue 39: workload-aware preemption is asynchronous, per version.

Upstream (``pkg/scheduler/schedule_one_podgroup.go`` ``podGroupCycle`` / ``runWorkloadAwarePreemption``
/ ``submitPodGroupAlgorithmResult``; ``framework/preemption/executor.go``): a group whose
workload-aware preemption succeeds is not placed in that cycle (the simulation ran on a backed-up
snapshot); its victims get a delete call and stay on their nodes until the deletion completes; the
group's pods go back to the queue with nominations and bind in a later cycle. Which pods are
nominated differs: v1.36.2 nominates the pods that fitted in the failed attempt before preemption;
the newer evaluator (``PodGroupEvaluator.Preempt``, unit test ``TestPodGroupEvaluator_Preempt`` /
``..._NominatedNodes`` at kubernetes @805300d0) nominates the simulation's assignments and, while
the group's victims are still terminating, returns Success with the current nominations.

Cases: upstream's integration table
``test/integration/scheduler/preemption/podgroup/podgrouppreemption_nominatednodename_test.go``
@cba9182f9c3fe6eeee2da5ec673a1cfa700cd11f (``TestPodGroupPreemption_ClearingNominatedNodeNameAfterBinding``,
tests/fixtures/upstream_wap_async/), and hand-made snapshots whose outcome follows from the code
above (tests/fixtures/wap_async/, each file says why). Every Result goes through the validator.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplan.io.loader import load_snapshot
from gangplan.models.version import VERSIONS, KubeVersion
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.greedy.samples import sample_greedy
from gangplan.solver.suite import EXPECT_GREEDY, EXPECT_PLACED
from gangplan.solver.validate import validate

UPSTREAM = Path(__file__).resolve().parent / "fixtures" / "upstream_wap_async"
HAND = Path(__file__).resolve().parent / "fixtures" / "wap_async"
UPSTREAM_COMMIT = "cba9182f9c3fe6eeee2da5ec673a1cfa700cd11f"
CASES = sorted(UPSTREAM.glob("*.yaml"))
SINCE = "gangplan.io/since"
EXPECT_VICTIMS = "gangplan.io/expect-victims"
HIGH = ["default/high-1", "default/high-2", "default/high-3"]


def _solve(path: Path, version: str, **kw):
    cluster = load_snapshot(path, kube_version=version)
    result = solve_greedy(cluster, **kw)
    assert validate(cluster, result) == []
    return cluster, result


def _since(path: Path) -> str:
    (line,) = [ln for ln in path.read_text().splitlines() if ln.strip().startswith(SINCE + ":")]
    return line.split(":", 1)[1].strip().strip('"')


def test_every_upstream_fixture_names_its_case_and_commit() -> None:
    assert len(CASES) == 3
    for path in CASES:
        head = "\n".join(path.read_text().splitlines()[:4])
        assert UPSTREAM_COMMIT in head and "case " in head, path.name


PAIRS = [(p, v) for p in CASES for v in VERSIONS if v.at_least(_since(p))]


@pytest.mark.parametrize(("path", "version"), PAIRS, ids=[f"{p.stem}-{v.value}" for p, v in PAIRS])
def test_the_upstream_async_cases(path: Path, version: KubeVersion) -> None:
    """Upstream: the three low pods are preempted and every preemptor pod is scheduled; here they
    bind in the cycle after the deletion (the last retry, triggered by a victim's Pod/Delete) and
    none is left on a nomination."""
    cluster, r = _solve(path, version.value)
    (root,) = r.greedy_trace.preemption
    (ann,) = [g.annotations for g in cluster.pod_groups.values() if SINCE in g.annotations]
    assert sorted(r.victims) == sorted(ann[EXPECT_VICTIMS].split(","))
    for key, g in r.groups.items():
        assert ("admitted" if g.admitted else "rejected") == ann[EXPECT_GREEDY]
        assert g.placed == int(cluster.pod_groups[key].annotations[EXPECT_PLACED])
    assert all(r.pods[k].node == "node1" and not r.pods[k].nominated for k in HIGH)
    (retry,) = r.greedy_trace.requeues
    assert retry.trigger.startswith("PodDelete default/low-") and retry.outcome == "Success"
    # node1 is full before preemption, so no pod fits in the failed attempt: v1.36 nominates none;
    # the newer evaluator nominates the simulation's node (upstream's expectedToHaveNNNInfo)
    want = {} if version == KubeVersion.V1_36 else dict.fromkeys(HIGH, "node1")
    assert r.greedy_trace.preemption[root].nominated == want


@pytest.mark.parametrize("version", ["1.36", "1.37", "1.38"])
def test_a_victim_stays_on_its_node_until_its_deletion_completes(version: str) -> None:
    """The follower, queued after the preempting gang, needs the victim's label on its node: it
    binds because the victim is still there, terminating, when its cycle runs."""
    _, r = _solve(HAND / "victim-still-supports-affinity.yaml", version)
    assert r.victims == ["default/low"]  # deleted once, though chosen again in v1.36
    assert {k: o.node for k, o in r.pods.items()} == {
        "default/a": "node1",
        "default/b": "node1",
        "default/follower": "node1",
    }
    assert r.greedy_trace.order[0] == "default/follower"  # before the gang's binding cycle
    first, last = r.greedy_trace.requeues
    # the follower's binding retries the gang while low is still terminating: it fails again ...
    assert (first.attempt, first.outcome, last.attempt, last.outcome) == (
        2,
        "Unschedulable",
        3,
        "Success",
    )
    if version == "1.36":  # ... (v1.36: from backoff once activeQ drains; low chosen again)
        assert first.trigger.startswith("backoff")
    else:  # ... (newer: any event requeues a group; ongoing preemption, no new victim)
        assert first.trigger == "AssignedPodAdd default/follower (node1)"
        assert last.trigger == "PodDelete default/low (node1)"
    assert r.greedy_trace.preemption["default/g"].victims == ["default/low"]


def test_v135_evicts_at_once_so_the_follower_finds_no_victim() -> None:
    """v1.35 has no workload-aware preemption: b's own DefaultPreemption evicts low within the
    gang's cycle, before the follower's cycle, whose required affinity then fails."""
    _, r = _solve(HAND / "victim-still-supports-affinity.yaml", "1.35")
    assert r.victims == ["default/low"]
    assert r.pods["default/follower"].node is None
    assert r.pods["default/b"].nominated


def test_the_group_is_not_placed_in_its_preemption_cycle() -> None:
    """With requeueing off (one pass over the queue) the gang's only cycle is the one that
    preempts: it places nothing, and the deletion it issued completes at the end."""
    cluster = load_snapshot(HAND / "nominated-node-alone.yaml", kube_version="1.37")
    from gangplan.solver.greedy.engine import run_cycle

    st = run_cycle(cluster, requeue=False).state
    assert st.placements == {} and st.victims == ["default/low"]
    assert st.trace.group_reasons["default/g"].endswith(
        "; preemption: pod group is waiting for preemption to complete"
    )
    assert st.snap.terminating == {} and "default/low" not in st.snap.node_of


@pytest.mark.parametrize(
    ("version", "nominated", "alone"),
    [
        # v1.36 tries the quorum pod b first: b fits on node1, a does not
        ("1.36", {"default/b": "node1"}, {"default/b": 1, "default/a": 2}),
        ("1.37", {"default/a": "node1", "default/b": "node1"}, {"default/a": 1, "default/b": 1}),
        ("1.38", {"default/a": "node1", "default/b": "node1"}, {"default/a": 1, "default/b": 1}),
    ],
)
def test_nominations_per_version_and_the_nominated_node_first(
    version: str, nominated: dict[str, str], alone: dict[str, int]
) -> None:
    """Who is nominated (the failed attempt's fitted pods in v1.36, the simulation's in newer
    code), and that the retry evaluates a nominated pod's node alone (``evaluateNominatedNode``)."""
    _, r = _solve(HAND / "nominated-node-alone.yaml", version)
    assert r.victims == ["default/low"]
    assert r.greedy_trace.preemption["default/g"].nominated == nominated
    assert {k: c.evaluated_nodes for k, c in r.greedy_trace.pods.items()} == alone
    assert r.pods["default/a"].node == r.pods["default/b"].node == "node1"


@pytest.mark.parametrize("version", ["1.36", "1.37"])
def test_random_ties_keep_drawing_from_the_seed(version: str) -> None:
    """``diff --samples``: every seeded run admits the gang and places the follower."""
    cluster = load_snapshot(HAND / "victim-still-supports-affinity.yaml", kube_version=version)
    s = sample_greedy(cluster, samples=6, seed=3)
    assert s.runs == 6 and s.admitted == {"default/g": 6}
    assert s.placed == {"default/follower": 6}
    for seed in (3, 4):
        r = solve_greedy(cluster, tie_break="random", seed=seed)
        assert validate(cluster, r) == [] and r.options.seed == seed
