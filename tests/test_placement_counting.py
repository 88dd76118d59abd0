"""The counting evaluation of placements (``gangplan.solver.greedy.placement_fast``): its closed
form of the PlacementFeasible loop matches the loop, and every counted placement of the golden
suites matches a full evaluation of that placement (``VERIFY``)."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

from gangplan.solver.greedy import placement_fast
from gangplan.solver.greedy.placement_fast import count_outcome
from gangplan.solver.greedy.podgroup import until_feasible

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_greedy_golden as golden  # noqa: E402


def test_count_outcome_matches_the_placement_feasible_loop():
    for queued, before, minimum, room in itertools.product(range(7), range(3), range(9), range(9)):
        done = 0

        def attempt(_pod, room=room):
            nonlocal done
            done += 1
            return (True, 1) if done <= room else (False, 0)

        status, scheduled, new, _ = until_feasible(list(range(queued)), before, minimum, attempt)
        assert count_outcome(queued, before, minimum, room) == (status, scheduled, new, done), (queued, before, minimum, room)


VERIFIED = [c for c in sorted(golden.CASES) if any(k in c for k in ("tas", "gpu", "gb200", "dgx", "perf_cpg", "nvlink", "mixed_family"))
            and "random" not in c and "500n" not in c]


@pytest.mark.parametrize("case", VERIFIED)
def test_every_counted_placement_matches_its_full_evaluation(case, monkeypatch):
    monkeypatch.setattr(placement_fast, "VERIFY", True)
    assert golden.dump(golden.CASES[case]()) == (golden.GOLDEN / f"{case}.json").read_text(encoding="utf-8")


def test_scan_starts_match_the_placement_by_placement_chain():
    import numpy as np

    from gangplan.solver.greedy.placement_cycle import scan_starts

    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(0, 12))
        sizes = np.repeat(rng.integers(0, 6, size=4), rng.integers(0, 4, size=4))[:n].astype(np.int64)
        advance = np.where(rng.random(len(sizes)) < 0.4, 0, rng.integers(1, 30, size=len(sizes))) * (sizes > 0)
        x = int(rng.integers(0, 50))
        want, y = [x], x
        for a, m in zip(advance.tolist(), sizes.tolist(), strict=True):
            y = (y + a) % m if a else y
            want.append(y)
        assert scan_starts(x, advance.astype(np.int64), sizes).tolist() == want


def test_a_failed_retry_without_its_reported_cycles_gives_the_same_run(monkeypatch):
    """A retry whose failure binds nothing skips the reported placement's pod cycles (their records
    are undone with the retry): the Result, its full trace and every requeue are unchanged."""
    from gangplan.bench.generators.builders import to_cluster
    from gangplan.bench.generators.topology_shapes import generate_shape
    from gangplan.solver.greedy import placement_cycle, solve_greedy
    from gangplan.solver.greedy.preemption import Preemption
    from gangplan.solver.validate import validate

    cluster = to_cluster(generate_shape("dgx-h100-superpod", nodes=256, utilisation=0.8, seed=3, gangs=40))
    skipped = []
    no_placement = placement_cycle.PlacementAlgorithm._no_placement

    def watch(self, key, placements, records, d):
        skipped.append(records[0].counted is not None and self.state.discard_failure == key)
        return no_placement(self, key, placements, records, d)

    monkeypatch.setattr(placement_cycle.PlacementAlgorithm, "_no_placement", watch)
    lazy = solve_greedy(cluster)
    assert sum(skipped) >= 10 and validate(cluster, lazy) == []
    monkeypatch.setattr(Preemption, "failure_binds_nothing", lambda self, root: False)
    full = solve_greedy(cluster)
    a, b = lazy.to_dict(trace="full"), full.to_dict(trace="full")
    a.pop("wallSeconds"), b.pop("wallSeconds")
    assert a == b
    assert a["trace"]["requeues"]  # the retries are there, each with its outcome
