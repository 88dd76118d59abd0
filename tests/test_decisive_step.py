"""The decisive step is right by construction: it never blames a choice that left no trace, the pod
it names belongs to a group whose outcome differs (or the step says why none does), and when the
difference is which groups get admitted it says so, naming the group the optimum gives up."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from gangplan.bench.generators.builders import to_cluster
from gangplan.bench.generators.topology_shapes import generate_shape
from gangplan.io.loader import load_snapshot
from gangplan.models.cluster import Cluster
from gangplan.solver.diff import GREEDY_SUBOPTIMAL, Diff, diff_snapshot, greedy_choices
from gangplan.solver.validate import validate
from tests.strategies import small_clusters

SHOWCASE = Path(__file__).resolve().parent.parent / "scenarios" / "showcase"


def outcome(cluster: Cluster, r, key: str):
    """What a group (or a single pod) ends as in a Result."""
    if key in cluster.groups:
        g = r.groups.get(key)
        return None if g is None else (g.admitted, g.placed, g.domain)
    o = r.pods.get(key)
    return o.node if o else None


def differing(cluster: Cluster, d: Diff) -> set[str]:
    keys = set(d.greedy.groups) | set(d.optimal.groups)
    keys |= {
        k
        for k in set(d.greedy.pods) | set(d.optimal.pods)
        if cluster.pod_by_key[k].group_key is None
    }
    return {k for k in keys if outcome(cluster, d.greedy, k) != outcome(cluster, d.optimal, k)}


def check_decisive_step(cluster: Cluster, d: Diff) -> None:
    """The property, for any diff."""
    assert validate(cluster, d.greedy) == [] and validate(cluster, d.optimal) == []
    if d.classification != GREEDY_SUBOPTIMAL:
        assert d.decisive is None
        return
    s = d.decisive
    assert s is not None and s.why
    changed = differing(cluster, d)
    # a better optimum changes some outcome, or only which pods are evicted (the disruption tiers)
    victims_only = not changed
    if victims_only:
        assert set(d.greedy.victims) != set(d.optimal.victims), s.why
    if s.pod is None and not victims_only:
        # every candidate choice is shared by an optimum: admission, naming a group or single pod
        # greedy leaves out, or an admitted group whose pods the optimum places more of
        assert s.kind == "admission" and s.group in changed
        if s.group in d.optimal.groups:
            g, o = d.greedy.groups[s.group], d.optimal.groups[s.group]
            assert (not g.admitted and o.admitted) or (g.admitted and o.placed > g.placed)
        else:
            assert not d.greedy.pods[s.group].node and d.optimal.pods[s.group].node
        return
    if s.pod is None:
        return
    # the choice is greedy's, at the step it names, and it left a trace or its group is admitted
    assert greedy_choices(d.greedy)[s.step - 1] == (s.pod, s.greedy_node)
    entity = s.group or s.pod
    kept = d.greedy.pods[s.pod].node == s.greedy_node
    assert (
        kept
        or s.kind == "admission"
        or d.optimal.groups.get(s.group) is not None
        and d.optimal.groups[s.group].admitted
    )
    # its group's outcome differs, exactly as the step says; else the step names one that does
    assert s.group_outcome_differs == (entity in changed)
    if not s.group_outcome_differs:
        assert any(k in s.why for k in changed) or victims_only, s.why
    assert d.optimal.pods[s.pod].node == s.optimal_node != s.greedy_node
    if s.kind == "placement":  # elsewhere, or left out of a group the optimum still admits
        assert s.optimal_node is not None or d.optimal.groups[s.group].admitted
    elif s.group is None:  # a single pod greedy placed and the optimum does not
        assert s.optimal_node is None and kept
    else:
        assert s.optimal_node is None and not d.optimal.groups[s.group].admitted
        if s.group_outcome_differs:  # greedy admits the group, the optimum shown gives it up first
            assert d.greedy.groups[s.group].admitted
            assert (
                d.admission.first_given_up is not None
                and d.admission.first_given_up.group == s.group
            )
            assert d.admission.first_given_up.pods == sum(
                1
                for p in cluster.groups.members(s.group)
                if d.greedy.pods.get(p.key) and d.greedy.pods[p.key].node
            )


@settings(
    max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(small_clusters())
def test_the_decisive_step_property_on_small_random_snapshots(cluster: Cluster) -> None:
    check_decisive_step(
        cluster, diff_snapshot(cluster, time_limit=5.0, probe_time_limit=5.0, workers=1)
    )


GENERATED = [("gb200-nvl72", 36, 12), ("dgx-h100-superpod", 64, 14), ("gb200-nvl72", 54, 16)]


@pytest.mark.parametrize(
    ("shape", "nodes", "gangs"), GENERATED, ids=[f"{s}-{n}n-{g}g" for s, n, g in GENERATED]
)
def test_the_decisive_step_property_on_generated_topology_snapshots(
    shape: str, nodes: int, gangs: int
) -> None:
    kinds = []
    for seed in range(8):
        cluster = to_cluster(
            generate_shape(shape, nodes=nodes, utilisation=0.4, seed=seed, gangs=gangs)
        )
        d = diff_snapshot(cluster, time_limit=10.0, probe_time_limit=5.0, workers=1)
        check_decisive_step(cluster, d)
        if d.decisive is not None:
            kinds.append(d.decisive.kind)
    assert len(kinds) >= 4, "these shapes are oversubscribed: greedy loses on most draws"


def test_the_tentative_choices_of_a_group_both_engines_reject_are_never_candidates(dgx32) -> None:
    cluster, d = dgx32
    check_decisive_step(cluster, d)
    assert (
        not d.greedy.groups["train/gang-00"].admitted
        and not d.optimal.groups["train/gang-00"].admitted
    )
    assert d.decisive.group != "train/gang-00" and d.decisive.skipped > 0
    assert d.decisive.kind == "admission" and d.decisive.group in d.admission.only_greedy


@pytest.mark.parametrize(
    "name",
    [
        "design-card-a100.yaml",
        "two-gangs-compete.yaml",
        "tas-cpg-no-backtracking.yaml",
        "heterogeneous-gang.yaml",
    ],
)
def test_the_decisive_step_property_on_the_showcase(name: str) -> None:
    cluster = load_snapshot(SHOWCASE / name)
    d = diff_snapshot(cluster, snapshot=name)
    check_decisive_step(cluster, d)
    assert d.decisive.group_outcome_differs and d.decisive.group in differing(cluster, d)
