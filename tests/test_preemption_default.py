"""Preemption as kube-scheduler's default profile runs it (issue 12, part 1).

DefaultPreemption is a PostFilter plugin of the default profile (``default_plugins.go``); with the
workload-scheduling features it also runs workload-aware preemption for pod groups. So both
engines preempt unless told not to (``--no-preemption`` / ``preemption=False``) or unless a
KubeSchedulerConfiguration disables DefaultPreemption. A single pod's FitError then carries
upstream's PostFilter clause (``preemption.go`` ``Evaluator.Preempt``):
``"<filter reasons>. preemption: 0/N nodes are available: <per-node reasons>."``.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gangplan.bench.generators.builders import node_object, pod_object, priority_class_object
from gangplan.cli import app
from gangplan.io.loader import load_objects
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate


def _cluster(*, config: dict | None = None, policy: str | None = None, low: int = 0):
    objs = [
        node_object("n1", cpu="2"),
        node_object("n2", cpu="2", taints=[{"key": "x", "effect": "NoSchedule"}]),
        priority_class_object("high", 1000),
        pod_object("holder", node_name="n1", priority=low, requests={"cpu": "2"}),
        pod_object("urgent", priority=1000, requests={"cpu": "2"}),
    ]
    if policy:
        objs[-1]["spec"]["preemptionPolicy"] = policy
    if config:
        objs.append(config)
    return load_objects(objs)


def _both(c, **kw):
    g = solve_greedy(c, **kw)
    e = solve_exact(c, hint=g, time_limit=5.0, workers=1, **kw)
    assert validate(c, g) == [] and validate(c, e) == []
    return g, e


def test_both_engines_preempt_by_default_and_say_so_in_params() -> None:
    g, e = _both(_cluster())
    assert g.victims == e.victims == ["default/holder"]
    assert g.pods["default/urgent"].node == e.pods["default/urgent"].node == "n1"
    for r in (g, e):
        assert (r.params["preemption"], r.params["preemptionFrom"]) == (True, "default profile")


def test_no_preemption_turns_it_off() -> None:
    g, e = _both(_cluster(), preemption=False)
    assert g.victims == e.victims == [] and g.placements() == e.placements() == {}
    assert (
        g.pods["default/urgent"].reason
        == "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s)."
    )


@pytest.mark.parametrize(
    "plugins",
    [
        {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}},
        {"multiPoint": {"disabled": [{"name": "DefaultPreemption"}]}},
        {"postFilter": {"disabled": [{"name": "*"}]}},
    ],
)
def test_a_scheduler_configuration_that_disables_default_preemption_turns_it_off(plugins) -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}],
    }
    c = _cluster(config=config)
    assert not c.profile.preemption
    g, e = _both(c)
    assert g.victims == e.victims == []
    assert (g.params["preemption"], g.params["preemptionFrom"]) == (False, "profile")
    # an explicit flag still wins over the profile
    assert solve_greedy(c, preemption=True).victims == ["default/holder"]


def test_the_fit_error_gains_upstreams_preemption_clause_when_nothing_can_be_evicted() -> None:
    g, _ = _both(_cluster(low=1000))  # the holder has the same priority: no victim
    assert g.pods["default/urgent"].reason == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    )


def test_a_pod_that_may_not_preempt_says_so_in_its_fit_error() -> None:
    g, e = _both(_cluster(policy="Never"))
    assert g.victims == e.victims == []
    assert g.pods["default/urgent"].reason.endswith(
        " preemption: not eligible due to preemptionPolicy=Never."
    )


def test_a_node_where_evicting_everything_lower_is_not_enough_names_the_filter_reason() -> None:
    objs = [
        node_object("n1", cpu="3"),
        pod_object("holder", node_name="n1", priority=0, requests={"cpu": "2"}),
        pod_object("peer", node_name="n1", priority=1000, requests={"cpu": "1"}),
        pod_object("big", priority=1000, requests={"cpu": "3"}),
    ]
    g, _ = _both(load_objects(objs))
    assert g.pods["default/big"].reason == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Insufficient cpu."
    )


def test_the_cli_flags_and_default() -> None:
    runner = CliRunner()
    import json
    import tempfile
    from pathlib import Path

    import yaml

    objs = [
        node_object("n1", cpu="2"),
        pod_object("holder", node_name="n1", priority=0, requests={"cpu": "2"}),
        pod_object("urgent", priority=1000, requests={"cpu": "2"}),
    ]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.yaml"
        path.write_text(yaml.safe_dump_all(objs))
        on = json.loads(runner.invoke(app, ["solve", str(path), "--json"]).stdout)
        off = json.loads(
            runner.invoke(app, ["solve", str(path), "--json", "--no-preemption"]).stdout
        )
        exact = json.loads(
            runner.invoke(
                app, ["solve", str(path), "--json", "--engine", "exact", "--time-limit", "2"]
            ).stdout
        )
    assert on["victims"] == exact["victims"] == ["default/holder"] and off["victims"] == []
    assert (
        on["params"]["preemptionFrom"] == "default profile"
        and off["params"]["preemptionFrom"] == "flag"
    )


def test_upstreams_preemption_scenarios_give_upstreams_victims_with_the_default_profile() -> None:
    """podgroup integration cases 6 and 9-11 (scenarios/upstream-preemption/): the default run
    (no flag) is the preempting one, with the victims the files state."""
    from pathlib import Path

    from gangplan.io.loader import load_snapshot

    scenarios = sorted(
        (Path(__file__).resolve().parent.parent / "scenarios" / "upstream-preemption").glob(
            "*.yaml"
        )
    )
    assert len(scenarios) == 4
    for path in scenarios:
        c = load_snapshot(path)
        default, explicit = solve_greedy(c), solve_greedy(c, preemption=True)
        assert validate(c, default) == []
        assert (
            default.victims == explicit.victims and default.placements() == explicit.placements()
        ), path.name
        stated = [
            g.annotations["gangplan.io/expect-victims"]
            for g in c.pod_groups.values()
            if "gangplan.io/expect-victims" in g.annotations
        ]
        expected = sorted(k for s in stated for k in s.split(",") if k)
        assert default.victims == expected, path.name
