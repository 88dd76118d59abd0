"""Structural fuzz through the CLI (issue 17): mutated scenarios and fixtures end in exit 0 or 2.

Mutants (:mod:`tests.fuzz_structural`: deleted fields, nulls, wrong types, huge and negative numbers,
malformed quantities, duplicated and renamed objects, dangling references, injected numeric fields)
run through ``inspect``, ``solve --engine greedy``, ``solve --engine exact``, ``diff`` and
``validate``. The property: every command exits 0 or 2 (``diff`` 3 too: greedy suboptimal, and 5:
unproven), never
an internal error (70) nor a traceback; an exit-2 message names the snapshot file; every Result of
an exit-0 run (the solves' and both sides of the diff) passes ``validate``. The default run draws
150 mutants of the snapshots up to 12 kB (about a minute here); ``-m slow`` draws 4,000 of all of them
and prints the exit-code histogram.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fuzz_structural import base_snapshots, check_mutant, histogram, mutants

SMALL = base_snapshots(max_bytes=12_000)


def test_the_fuzz_draws_from_scenarios_and_fixtures():
    names = {n.split("/")[0] + "/" + n.split("/")[1] for n, _ in SMALL}
    assert {
        "scenarios/showcase",
        "scenarios/upstream",
        "scenarios/upstream-preemption",
        "tests/fixtures",
    } <= names
    assert len(SMALL) >= 50


def _check(mutant, outcomes: list | None = None) -> None:
    name, mutations, objs = mutant
    with tempfile.TemporaryDirectory() as tmp:
        out = check_mutant(objs, Path(tmp))
    if outcomes is not None:
        outcomes.append(out)
    assert not out.problems, f"{name} with {mutations}: {out.problems}"


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(mutants(SMALL))
def test_mutated_snapshots_exit_0_or_2_and_results_validate(mutant):
    _check(mutant)


@pytest.mark.slow
def test_many_mutated_snapshots_exit_0_or_2_and_results_validate():
    """4,000 mutants of every snapshot; prints mutants, command runs, exit codes per command, time."""
    outcomes: list = []
    bases = base_snapshots(max_bytes=None)
    assert len(bases) > len(SMALL)

    @settings(
        max_examples=4000, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(mutants(bases))
    def run(mutant):
        _check(mutant, outcomes)

    start = time.monotonic()
    run()
    hist = histogram(outcomes)
    print(
        f"\nfuzz: {len(outcomes)} mutants, {sum(hist.values())} command runs, {time.monotonic() - start:.0f} s"
    )
    for (command, code), n in sorted(hist.items()):
        print(f"  {command:13s} exit {code:3d}: {n}")
    assert len(outcomes) >= 3000
    assert all(code in (0, 2, 3) for _, code in hist)
