"""Issue 37: a verdict that greedy matches the optimum needs a proof of every tier it compares.

``identical`` / ``tie-break`` / ``equivalent`` only when the exact engine proved every compared
tier; otherwise ``unproven`` (exit 5) with the open tiers, what they might still gain and what to
do. ``greedy-suboptimal`` needs no proof. Greedy better than the exact answer on a *proven* tier
is a model mismatch; on an open tier it is only unproven.

The exact Results here are real runs whose proof is then taken away (phases marked FEASIBLE with
a higher bound), so the test does not hang on how fast this machine proves anything; the runs
that end unproven by themselves are in ``test_work_limit.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gangplan as gp
from gangplan.cli import app
from gangplan.models.result import Status
from gangplan.solver.diff import (
    EQUIVALENT,
    GREEDY_SUBOPTIMAL,
    IDENTICAL,
    MODEL_MISMATCH,
    TIE_BREAK,
    UNPROVEN,
    classify,
    optimal_proof,
)
from gangplan.solver.suite import SuiteRow, check_expectations, suite_exit_code

ROOT = Path(__file__).resolve().parent.parent
FITS = ROOT / "scenarios" / "showcase" / "gang-fits.yaml"
COMPETE = ROOT / "scenarios" / "showcase" / "tas-nvl72-fragmentation.yaml"


def unproven_copy(optimal, *, from_tier: int = 0, extra: float = 3.0):
    """``optimal`` with every phase from ``from_tier`` on left open, its bound ``extra`` above."""
    trace = optimal.exact_trace.model_copy(deep=True)
    bound = dict(optimal.bound)
    for i, ph in enumerate(trace.phases):
        if i >= from_tier and ph.tier != "tiebreak":
            ph.status = "FEASIBLE"
            ph.bound = ph.value + extra
            bound[ph.tier] = ph.value + extra
    return optimal.model_copy(
        update={"status": Status.FEASIBLE, "trace": trace, "bound": bound, "gap": 0.5}
    )


@pytest.fixture(scope="module")
def fits():
    cluster = gp.load(FITS)
    greedy = gp.solve(cluster)
    optimal = gp.solve(cluster, engine="exact", hint=greedy, workers=1)
    assert gp.validate(cluster, greedy) == [] and gp.validate(cluster, optimal) == []
    return cluster, greedy, optimal


def test_a_proven_match_is_a_match_and_says_every_compared_tier_is_proven(fits) -> None:
    cluster, greedy, optimal = fits
    d = gp.diff(cluster, greedy=greedy, optimal=optimal)
    assert optimal.status == Status.OPTIMAL
    assert d.classification in (IDENTICAL, TIE_BREAK, EQUIVALENT) and d.exit_code == 0
    assert d.proof.proven and d.proof.open_tiers == [] and d.proof.stopped_by == "proof"
    compared = [t.tier for t in d.proof.tiers if t.compared]
    assert compared == [k for k in optimal.objective if k in greedy.objective]
    doc = d.to_dict(with_results=False)
    assert doc["optimalProof"]["proven"] is True
    assert all(t["proven"] for t in doc["optimalProof"]["tiers"])


def test_the_same_match_without_a_proof_is_unproven_never_identical(fits) -> None:
    cluster, greedy, optimal = fits
    open_ = unproven_copy(optimal)
    d = gp.diff(cluster, greedy=greedy, optimal=open_)
    assert d.classification == UNPROVEN and d.exit_code == 5
    first = next(iter(optimal.objective))
    assert d.proof.first_open == first and d.proof.open_tiers[0] == first
    assert d.proof.might_gain == 3.0
    assert "up to 3 more groups or single pods at priority" in d.proof.advice
    assert "--time-limit" in d.proof.advice
    doc = d.to_dict(with_results=False)
    assert doc["classification"] == "unproven"
    assert doc["optimalProof"]["firstOpen"] == first and doc["optimalProof"]["mightGain"] == 3.0


def test_a_lower_open_tier_leaves_the_higher_ones_proven(fits) -> None:
    cluster, greedy, optimal = fits
    open_ = unproven_copy(optimal, from_tier=1)
    proof = optimal_proof(greedy, open_)
    tiers = [t for t in proof.tiers if t.compared]
    assert tiers[0].proven and not tiers[1].proven
    assert proof.first_open == tiers[1].tier
    assert classify(cluster, greedy, open_, proof=proof)[0] == UNPROVEN


def test_greedy_suboptimal_needs_no_proof() -> None:
    cluster = gp.load(COMPETE)
    greedy = gp.solve(cluster)
    optimal = gp.solve(cluster, engine="exact", hint=greedy, workers=1)
    open_ = unproven_copy(optimal)
    klass, problems = classify(cluster, greedy, open_)
    assert klass == GREEDY_SUBOPTIMAL and problems == []


def test_greedy_beating_a_proven_tier_is_a_mismatch_and_an_open_one_is_not(fits) -> None:
    cluster, greedy, optimal = fits
    top = next(iter(optimal.objective))
    worse = optimal.model_copy(
        update={"objective": {**optimal.objective, top: optimal.objective[top] - 1}}
    )
    klass, problems = classify(cluster, greedy, worse)
    assert klass == MODEL_MISMATCH and any("greedy beats a proven optimum" in p for p in problems)
    open_worse = unproven_copy(worse)
    assert classify(cluster, greedy, open_worse)[0] == UNPROVEN


def test_the_table_names_the_open_tiers_and_what_to_do(fits) -> None:
    from io import StringIO

    from rich.console import Console

    from gangplan.render import render_diff

    cluster, greedy, optimal = fits
    d = gp.diff(cluster, greedy=greedy, optimal=unproven_copy(optimal))
    console = Console(width=100, record=True, file=StringIO())
    render_diff(console, d)
    text = console.export_text()
    assert "verdict    unproven" in text
    assert "proof      open: " in text
    assert "rerun with --time-limit 60" in " ".join(text.split())
    assert "identical" not in text and "equivalent" not in text


def test_suite_rows_count_unproven_apart_and_exit_5(fits) -> None:
    from gangplan.render import suite_summary

    cluster, greedy, optimal = fits
    proven = gp.diff(cluster, greedy=greedy, optimal=optimal)
    open_ = gp.diff(cluster, greedy=greedy, optimal=unproven_copy(optimal))
    rows = [SuiteRow("a.yaml", diff=proven), SuiteRow("b.yaml", diff=open_)]
    assert suite_exit_code(rows) == 5
    assert suite_exit_code([rows[0]]) == 0
    assert "1 proven to match the optimum, 1 unproven" in suite_summary(rows)
    rows.append(SuiteRow("c.yaml", diff=open_, failures=["x"]))
    assert suite_exit_code(rows) == 1


def test_an_optimal_expectation_needs_the_admission_tiers_proven(fits, tmp_path: Path) -> None:
    cluster, greedy, optimal = fits
    group = next(iter(cluster.pod_groups.values()))
    group.annotations["gangplan.io/expect-optimal"] = "admitted"
    try:
        _, failures = check_expectations(cluster, gp.diff(cluster, greedy=greedy, optimal=optimal))
        assert failures == []
        _, failures = check_expectations(
            cluster, gp.diff(cluster, greedy=greedy, optimal=unproven_copy(optimal))
        )
        assert len(failures) == 1 and "as expected, but not proven" in failures[0]
    finally:
        del group.annotations["gangplan.io/expect-optimal"]


def test_samples_reaching_an_unproven_best_stay_unproven(fits) -> None:
    from gangplan.solver.diff.classification import sometimes
    from gangplan.solver.greedy.samples import Samples

    drawn = Samples(
        runs=4, first_seed=0, kube_version="1.37", admitted={}, placed={}, reaches_target=4
    )
    assert sometimes(UNPROVEN, drawn) == UNPROVEN
    drawn = Samples(
        runs=4, first_seed=0, kube_version="1.37", admitted={}, placed={}, reaches_target=2
    )
    assert sometimes(UNPROVEN, drawn) == "greedy-suboptimal-sometimes"


def test_cli_diff_exits_5_on_an_unproven_verdict(tmp_path: Path, monkeypatch) -> None:
    import gangplan.solver.diff.run as run

    real = run.optimal_proof

    def taken_away(greedy, optimal):
        return real(greedy, unproven_copy(optimal))

    monkeypatch.setattr(run, "optimal_proof", taken_away)
    res = CliRunner().invoke(app, ["diff", str(FITS), "--json"])
    assert res.exit_code == 5, res.output
    import json

    doc = json.loads(res.stdout)
    assert doc["classification"] == "unproven" and doc["optimalProof"]["proven"] is False


def _rack_tie_snapshot() -> str:
    """Two racks of two nodes, equal in cpu and memory; only rack ra has GPUs. Gang ``cpu`` (two
    whole-node pods, rack-constrained) scores both racks alike and takes ra, the first; gang
    ``gpu`` (rack-constrained, a GPU per pod) then fits nowhere. The optimum puts cpu in rb."""
    docs = []
    for name, rack, gpu in (
        ("ra-1", "ra", True),
        ("ra-2", "ra", True),
        ("rb-1", "rb", False),
        ("rb-2", "rb", False),
    ):
        alloc = {
            "cpu": "4",
            "memory": "16Gi",
            "pods": "110",
            **({"nvidia.com/gpu": "1"} if gpu else {}),
        }
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": {"kubernetes.io/hostname": name, "rack": rack},
                },
                "status": {"allocatable": alloc},
            }
        )
    for i, group in enumerate(("cpu", "gpu")):
        stamp = f"2026-01-01T00:0{i}:00Z"
        docs.append(
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": group, "namespace": "default", "creationTimestamp": stamp},
                "spec": {
                    "schedulingPolicy": {"gang": {"minCount": 2}},
                    "schedulingConstraints": {"topology": [{"key": "rack"}]},
                },
            }
        )
        res = (
            {"requests": {"cpu": "4"}}
            if group == "cpu"
            else {
                "requests": {"cpu": "1", "nvidia.com/gpu": "1"},
                "limits": {"nvidia.com/gpu": "1"},
            }
        )
        for k in range(2):
            docs.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"{group}-{k}",
                        "namespace": "default",
                        "creationTimestamp": stamp,
                    },
                    "spec": {
                        "schedulingGroup": {"podGroupName": group},
                        "containers": [{"name": "c", "image": "x", "resources": res}],
                    },
                    "status": {"phase": "Pending"},
                }
            )
    return "---\n".join(json.dumps(d) + "\n" for d in docs)


def test_a_decisive_choice_that_was_a_tie_is_named_in_the_summary(tmp_path) -> None:
    """Issue 41: the plain diff names a random decisive choice in its summary, not only below: a
    placement tie between two racks that decides whether the second gang runs. (This used
    preempt-nvlink-clique at v1.35 before v1.35 stopped reading topology constraints; from v1.36
    that scenario's tie is broken inside workload-aware preemption's simulation, rule W.)"""
    snap = tmp_path / "rack-tie.yaml"
    snap.write_text(_rack_tie_snapshot())
    res = CliRunner().invoke(app, ["diff", str(snap)], env={"COLUMNS": "100"})
    assert res.exit_code == 3, res.output
    lines = res.stdout.splitlines()
    summary = lines[: lines.index("")]
    text = " ".join(" ".join(summary).split())
    assert "tie the decisive choice was a tie between placements ra and rb" in text
    assert "kube-scheduler breaks it at random; diff --samples K gives the odds" in text


def test_the_suite_names_the_tier_that_differs() -> None:
    """Issue 41: a greedy-suboptimal row with equal group counts says which tier decides it."""
    from gangplan.render import differing_tier

    cluster = gp.load(ROOT / "scenarios" / "showcase" / "preempt-one-gang-not-five.yaml")
    d = gp.diff(cluster)
    assert d.classification == GREEDY_SUBOPTIMAL
    tier = differing_tier(d)
    assert tier is not None and d.greedy_objective[tier] != d.optimal_objective[tier]
    assert all(
        d.greedy_objective[k] == d.optimal_objective[k]
        for k in list(d.optimal_objective)[: list(d.optimal_objective).index(tier)]
        if k in d.greedy_objective
    )
    res = CliRunner().invoke(
        app, ["diff", "--suite", str(ROOT / "scenarios" / "showcase")], env={"COLUMNS": "140"}
    )
    assert res.exit_code == 0, res.output
    assert "differs in" in res.stdout
    row = next(
        line for line in res.stdout.splitlines() if line.startswith("preempt-one-gang-not-five")
    )
    assert tier in row


def test_a_restricted_exact_model_proves_nothing_and_is_no_mismatch():
    """Where the exact model leaves devices out (multi-node ResourceSlices with shared counters),
    its optimum may be below the true one: greedy placing more is no bug, and no tier is proven
    (it was 'model-mismatch', exit 4, and before that claimed proven tiers)."""
    from pathlib import Path

    import gangplan as gp

    path = (
        Path(__file__).parent
        / "fixtures"
        / "dra"
        / "scheduler-perf-network-attached-partitionable.yaml"
    )
    c = gp.load(path)
    d = gp.diff(c)
    assert d.classification == "unproven" and d.exit_code == 5
    assert d.proof.stopped_by == "restricted-model" and not d.proof.proven
    assert "leaves part of the snapshot out" in d.proof.advice
    assert not d.problems
    assert gp.validate(c, d.greedy) == [] and gp.validate(c, d.optimal) == []
