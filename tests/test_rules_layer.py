"""Issue 24, build 2: rules written once in gangplan.models and read by both engines, the
validator and the diff (which pods are queued; pickOneNodeForPreemption)."""

from __future__ import annotations

from datetime import UTC, datetime

from typer.testing import CliRunner

from gangplan.bench.generators.builders import node_object, pod_group_object, pod_object
from gangplan.cli import app
from gangplan.io.loader import load_objects
from gangplan.models.cluster import TERMINATING_REASON
from gangplan.models.preemption import PICK_CRITERIA, deciding_criterion, pick_key, pick_one_node
from gangplan.models.result import PodOutcome
from gangplan.solver.diff import diff_snapshot
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

TERMINATING_YAML = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: ml, creationTimestamp: "2026-01-01T00:00:00Z", deletionTimestamp: "2026-01-01T00:01:00Z"}
spec:
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
"""


def test_the_terminating_pod_reproducer_diffs_identical(tmp_path) -> None:
    path = tmp_path / "terminating.yaml"
    path.write_text(TERMINATING_YAML)
    r = CliRunner().invoke(app, ["diff", str(path), "--json"])
    assert r.exit_code == 0, r.output
    assert '"classification": "identical"' in r.output


def test_no_engine_places_a_terminating_pod_and_the_validator_rejects_it() -> None:
    objs = [
        node_object("n1", cpu="8"),
        pod_object("a", requests={"cpu": "1"}),
        pod_object("b", requests={"cpu": "1"}),
    ]
    objs[1]["metadata"]["deletionTimestamp"] = "2026-01-01T00:01:00Z"
    cluster = load_objects(objs)
    assert cluster.not_queued == {"default/a": TERMINATING_REASON}
    assert [p.key for p in cluster.queued_pods] == ["default/b"]
    for result in (solve_greedy(cluster), solve_exact(cluster, time_limit=5.0, workers=1)):
        assert validate(cluster, result) == []
        assert (
            result.pods["default/a"].node is None
            and result.pods["default/a"].reason == TERMINATING_REASON
        )
        assert result.pods["default/b"].node == "n1"
    greedy = solve_greedy(cluster)
    forged = greedy.model_copy(update={"pods": {**greedy.pods, "default/a": PodOutcome(node="n1")}})
    assert any(
        v.rule == "result-shape" and v.subject == "default/a" for v in validate(cluster, forged)
    )


def test_pick_one_node_follows_upstreams_criteria_order() -> None:
    early, late = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC)
    one, two = pick_key([(5, None)], 0), pick_key([(5, None), (0, None)], 0)
    # A plain sum ties (5 vs 5) and would name "fewest victims"; upstream adds 2^31 per victim.
    assert deciding_criterion(one, two) == "lowest sum of victim priorities (each + 2^31)"
    assert pick_one_node([("b", two), ("a", one)], key=lambda c: c[1])[0] == "a"
    assert (
        deciding_criterion(pick_key([(5, None)], 0), pick_key([(5, None)], 1)) == PICK_CRITERIA[0]
    )
    assert (
        deciding_criterion(pick_key([(4, None), (4, None)], 0), pick_key([(5, None)], 0))
        == PICK_CRITERIA[1]
    )
    # negative priorities: fewer victims wins on the sum (the reason for the offset)
    assert (
        pick_one_node(
            [("many", pick_key([(-5, None), (-5, None)], 0)), ("few", pick_key([(-5, None)], 0))],
            key=lambda c: c[1],
        )[0]
        == "few"
    )
    # latest start among the highest-priority victims; then the first candidate
    assert (
        pick_one_node(
            [("x", pick_key([(5, early)], 0)), ("y", pick_key([(5, late)], 0))], key=lambda c: c[1]
        )[0]
        == "y"
    )
    assert (
        pick_one_node(
            [("x", pick_key([(5, late)], 0)), ("y", pick_key([(5, late)], 0))], key=lambda c: c[1]
        )[0]
        == "x"
    )
    assert (
        pick_one_node(
            [("x", pick_key([(5, late)], 0)), ("y", pick_key([], 3))], key=lambda c: c[1]
        )[0]
        == "y"
    )


def _two_candidates() -> list[dict]:
    """urgent (3 cpu) must evict on node-a ([5]) or node-b ([5, 0]); greedy picks node-a by the
    sum criterion, the optimum takes node-b so that ``small`` (pinned to node-a) fits too."""

    def bound(name, node, priority, cpu):
        o = pod_object(name, node_name=node, priority=priority, requests={"cpu": cpu})
        o["status"] = {"phase": "Running", "startTime": "2026-11-30T09:00:00Z"}
        return o

    return [
        node_object("node-a", cpu="3", labels={"kubernetes.io/hostname": "node-a"}),
        node_object("node-b", cpu="3", labels={"kubernetes.io/hostname": "node-b"}),
        bound("high-a", "node-a", 5, "2"),
        bound("high-b", "node-b", 5, "1"),
        bound("low-b", "node-b", 0, "1"),
        pod_object("urgent", priority=100, requests={"cpu": "3"}),
        pod_object(
            "small",
            priority=3,
            requests={"cpu": "1"},
            node_selector={"kubernetes.io/hostname": "node-a"},
        ),
    ]


def test_the_diff_names_upstreams_criterion_for_victims_5_against_5_and_0() -> None:
    cluster = load_objects(_two_candidates())
    d = diff_snapshot(cluster, time_limit=5.0, probe_time_limit=5.0, workers=1)
    assert validate(cluster, d.greedy) == [] and validate(cluster, d.optimal) == []
    assert d.greedy.victims == ["default/high-a"]
    assert d.optimal.victims == ["default/high-b", "default/low-b"]
    assert d.classification == "greedy-suboptimal"
    pre = d.decisive.preemption
    assert (
        pre is not None
        and pre.path == "pod"
        and pre.nodes == ["node-a"]
        and pre.optimal_nodes == ["node-b"]
    )
    assert pre.criterion == (
        "default preemption chose node-a over node-b by lowest sum of victim priorities "
        "(each + 2^31) (5 + 1 x 2^31 vs 5 + 2 x 2^31)"
    )


def _gang_victims() -> list[dict]:
    """urgent (4 cpu) must evict a whole node: each holds a pod of the bound gang ``low`` (minCount
    2) and a lone pod, so any eviction breaks the gang; the lone pods break nothing."""

    def bound(name, node, group=None):
        o = pod_object(name, node_name=node, priority=0, group=group, requests={"cpu": "2"})
        o["status"] = {"phase": "Running", "startTime": "2026-11-30T09:00:00Z"}
        return o

    return [
        node_object("node-a", cpu="4", labels={"kubernetes.io/hostname": "node-a"}),
        node_object("node-b", cpu="4", labels={"kubernetes.io/hostname": "node-b"}),
        pod_group_object("low", min_count=2, priority=0),
        bound("low-0", "node-a", "low"),
        bound("low-1", "node-b", "low"),
        bound("lone-a", "node-a"),
        bound("lone-b", "node-b"),
        pod_object("urgent", priority=100, requests={"cpu": "4"}),
    ]


def test_outcome_exact_and_diff_read_one_broken_groups_rule() -> None:
    cluster = load_objects(_gang_victims())
    d = diff_snapshot(cluster, time_limit=5.0, probe_time_limit=5.0, workers=1, preemption=True)
    doc = d.document(with_results=False)
    for result, side in ((d.greedy, doc.engines.greedy), (d.optimal, doc.engines.optimal)):
        assert validate(cluster, result) == []
        gone = [cluster.pod_by_key[k] for k in result.victims]
        assert len(gone) == 2
        assert cluster.groups.broken_groups(gone) == ["default/low"]
        # outcome (greedy's tier), the exact model's own tier and the diff's list: one answer
        assert result.objective["brokenGroups"] == 1.0
        assert side.broken_groups == ["default/low"]
    assert (
        d.optimal.status.value == "OPTIMAL" and d.optimal.bound["brokenGroups"] == 1.0
    )  # the model's own tier
    assert cluster.groups.broken_groups([cluster.pod_by_key["default/lone-a"]]) == []


def test_the_objective_tiers_are_defined_once_in_models() -> None:
    import gangplan.models.objective as tiers
    import gangplan.solver.outcome as outcome

    for name in (
        "compare",
        "is_cost",
        "objective",
        "disruption",
        "pdb_violations",
        "admitted_entities",
        "BROKEN_GROUPS",
    ):
        assert getattr(outcome, name) is getattr(tiers, name)
    cluster = load_objects(_gang_victims())
    assert tiers.admitted_priorities(cluster) == [100] and tiers.victim_priorities(cluster) == [0]
    exact = solve_exact(cluster, time_limit=5.0, workers=1, preemption=True)
    shared = tiers.objective(cluster, exact.placements(), exact.victims)
    assert list(shared) == [
        "admitted[p=100]",
        "placed",
        "pdbViolations",
        "victims[p=0]",
        "brokenGroups",
        "victims",
    ]
    assert {k: exact.objective[k] for k in shared} == shared
    # the exact model's own tiers (its bound) carry the same names, in the same order
    assert [k for k in exact.bound if k in shared] == [k for k in shared if k in exact.bound]
    assert {"admitted[p=100]", "victims[p=0]", "brokenGroups", "victims"} <= set(exact.bound)


def test_one_victim_unit_the_exact_units_and_the_diff_rows_are_built_from() -> None:
    from gangplan.models.documents import VictimRow
    from gangplan.models.groups import VictimUnit
    from gangplan.solver.exact.instance import build_instance

    cluster = load_objects(_gang_victims())
    inst = build_instance(cluster, preemption=True)
    rules = {u.key: u for u in cluster.groups.victim_units(cluster.bound_pods)}
    assert inst.units and all(isinstance(u, VictimUnit) for u in inst.units)
    assert all(
        rules[u.key].pods == u.pods and rules[u.key].priority == u.priority for u in inst.units
    )
    rows = [VictimRow.of(u) for u in rules.values()]
    assert [(r.unit, r.kind, r.pods) for r in rows] == [
        ("default/low-0", "Pod", ["default/low-0"]),
        ("default/low-1", "Pod", ["default/low-1"]),
        ("default/lone-a", "Pod", ["default/lone-a"]),
        ("default/lone-b", "Pod", ["default/lone-b"]),
    ]


def test_result_options_read_params_typed_and_fixed_has_one_meaning() -> None:
    from gangplan.solver.greedy import replay_options

    cluster = load_objects(_two_candidates())
    greedy = solve_greedy(cluster, fixed={"default/small": "node-a"}, preemption=True)
    exact = solve_exact(
        cluster, time_limit=5.0, workers=1, fixed={"default/small": "node-a"}, preemption=True
    )
    # the JSON forms stay as the contract has them: greedy's mapping, exact's count
    assert greedy.params["fixed"] == {"default/small": "node-a"} and exact.params["fixed"] == 1
    assert greedy.options.fixed_count == exact.options.fixed_count == 1
    assert greedy.options.fixed == {"default/small": "node-a"} and exact.options.fixed is None
    assert (greedy.options.tie_break, greedy.options.seed, greedy.options.preemption) == (
        "first",
        0,
        True,
    )
    assert exact.options.time_limit == 5.0 and exact.options.preemption is True
    assert replay_options(greedy) == {
        "tie_break": "first",
        "seed": 0,
        "top_k": 5,
        "fixed": {"default/small": "node-a"},
        "preemption": True,
        "kube_version": cluster.kube_version.value,
    }


def test_the_loaders_plugin_catalogue_is_the_greedy_registry() -> None:
    """io/loader.py names unmodelled plugins from gangplan.models.plugins, without importing an
    engine; the catalogue and the greedy registry stay one list (register() declares there too)."""
    from gangplan.models import plugins as catalogue
    from gangplan.solver.greedy.plugins import REGISTRY, Plugin, register, unregister

    assert catalogue.MODELLED == {n: cls.points for n, cls in REGISTRY.items()}

    class Extra(Plugin):
        name = "ExtraScore"

        def score(self, *args, **kwargs):  # pragma: no cover - never run
            return 0

    register(Extra)
    try:
        assert catalogue.MODELLED["ExtraScore"] == Extra.points == frozenset({catalogue.SCORE})
    finally:
        unregister("ExtraScore")
    assert "ExtraScore" not in catalogue.MODELLED
