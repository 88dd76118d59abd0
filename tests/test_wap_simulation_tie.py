"""A score tie broken inside workload-aware preemption's simulation is named (issue 39).

Upstream runs the group's algorithm on the snapshot without the candidate victims
(``podgrouppreemption.go``); equal node scores there are drawn at random (``selectHost``), and the
node drawn decides which victims the reprieve keeps. With rule W the binding cycle comes after
the victims' deletion, so the diff's decisive step scores that cycle, not the simulation: the
trace records the simulation's tie (``trace.preemption[root].simulationTied``) and the diff's tie
note names it. Fixture: ``tests/fixtures/wap_simulation_tie/two-empty-nodes-tie.yaml`` (its
header derives the upstream outcome)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from gangplan.io.loader import load_objects, load_snapshot
from gangplan.render_diff import tie_note
from gangplan.solver.diff import diff_snapshot
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

FIXTURE = (
    Path(__file__).resolve().parent / "fixtures" / "wap_simulation_tie" / "two-empty-nodes-tie.yaml"
)


def _valid(cluster, result):
    assert not validate(cluster, result), validate(cluster, result)[:3]
    return result


def test_the_simulation_tie_is_recorded_and_decides_the_victims() -> None:
    cluster = load_snapshot(FIXTURE).at_version("1.37")
    greedy = _valid(cluster, solve_greedy(cluster))
    pre = greedy.greedy_trace.preemption["ml/train"]
    assert pre.status == "Success" and pre.simulation_tied
    assert sorted(greedy.victims) == ["batch/low-a1", "batch/low-a2"]
    assert greedy.pods["ml/train-0"].node == "node-a"
    doc = json.loads(greedy.to_json())
    assert doc["trace"]["preemption"]["ml/train"]["simulationTied"] is True


def test_the_diff_names_the_tie_and_samples_give_the_odds() -> None:
    cluster = load_snapshot(FIXTURE).at_version("1.37")
    d = diff_snapshot(cluster, snapshot="tie", samples=16)
    _valid(cluster, d.greedy)
    _valid(cluster, d.optimal)
    assert d.optimal.victims == ["batch/low-b"]
    note = tie_note(d.doc)
    assert note is not None and "workload-aware preemption for ml/train" in note
    # random draws take node-b (one victim, the optimum) in some runs and node-a in others
    assert d.classification == "greedy-suboptimal-sometimes"
    reached = d.doc.samples.reaches_optimum
    assert 0 < reached < 16
    assert f"greedy reaches the optimum in {reached} of 16 runs" in note
    assert tie_note(d) == note  # the Diff (what `why` and the CLI pass) and its document alike


def test_v136_reprieve_reruns_reach_the_single_victim() -> None:
    """v1.36 re-runs the group's algorithm for each unit put back (rerun_reprieve): the group moves
    to node-b and only low-b goes, whatever the first draw; the tie is still recorded."""
    cluster = load_snapshot(FIXTURE).at_version("1.36")
    greedy = _valid(cluster, solve_greedy(cluster))
    assert greedy.victims == ["batch/low-b"]
    assert greedy.greedy_trace.preemption["ml/train"].simulation_tied
    assert diff_snapshot(cluster, snapshot="tie").classification == "identical"


def test_no_tie_no_field() -> None:
    """node-b larger: the emptied nodes score differently, nothing is drawn, the field is absent."""
    text = (
        FIXTURE.read_text()
        .replace(
            '  name: node-b\n  labels: {kubernetes.io/hostname: node-b}\nstatus:\n  capacity: {cpu: "4"',
            '  name: node-b\n  labels: {kubernetes.io/hostname: node-b}\nstatus:\n  capacity: {cpu: "5"',
        )
        .replace(
            'allocatable: {cpu: "4", memory: 8Gi, pods: "32"}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: low-a1',
            'allocatable: {cpu: "5", memory: 8Gi, pods: "32"}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: low-a1',
        )
    )
    assert 'cpu: "5"' in text
    cluster = load_objects(list(yaml.safe_load_all(text))).at_version("1.37")
    greedy = _valid(cluster, solve_greedy(cluster))
    pre = greedy.greedy_trace.preemption["ml/train"]
    assert pre.status == "Success" and not pre.simulation_tied
    doc = json.loads(greedy.to_json())
    assert "simulationTied" not in doc["trace"]["preemption"]["ml/train"]
