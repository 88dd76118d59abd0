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
        assert count_outcome(queued, before, minimum, room) == (status, scheduled, new, done), (
            queued,
            before,
            minimum,
            room,
        )


VERIFIED = [
    c
    for c in sorted(golden.CASES)
    if any(k in c for k in ("tas", "gpu", "gb200", "dgx", "perf_cpg", "nvlink", "mixed_family"))
    and "random" not in c
    and "500n" not in c
]


@pytest.mark.parametrize("case", VERIFIED)
def test_every_counted_placement_matches_its_full_evaluation(case, monkeypatch):
    monkeypatch.setattr(placement_fast, "VERIFY", True)
    assert golden.dump(golden.CASES[case]()) == (golden.GOLDEN / f"{case}.json").read_text(
        encoding="utf-8"
    )


def test_scan_starts_match_the_placement_by_placement_chain():
    import numpy as np

    from gangplan.solver.greedy.placement_cycle import scan_starts

    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(0, 12))
        sizes = np.repeat(rng.integers(0, 6, size=4), rng.integers(0, 4, size=4))[:n].astype(
            np.int64
        )
        advance = np.where(
            rng.random(len(sizes)) < 0.4, 0, rng.integers(1, 30, size=len(sizes))
        ) * (sizes > 0)
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

    cluster = to_cluster(
        generate_shape("dgx-h100-superpod", nodes=256, utilisation=0.8, seed=3, gangs=40)
    )
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


def _subset_cluster():
    """Racks of two 2-cpu nodes; a rack gang and a one-pod group whose required node affinity
    names nodes (a PreFilterResult), both failing and retried after later pods bind."""
    from gangplan.models.objects import Affinity, NodeSelectorTerm, PodGroup, Requirement
    from gangplan.solver.greedy.testing import make_cluster, make_node, make_pod

    rack = "topology.kubernetes.io/rack"
    nodes = [
        make_node(f"r{r}n{i}", cpu=2000, labels={rack: f"r{r}"}) for r in range(6) for i in range(2)
    ]

    def named(*names):
        return Affinity(
            node_required=(
                NodeSelectorTerm(
                    match_fields=(Requirement(key="metadata.name", operator="In", values=names),)
                ),
            )
        )

    pods = [
        make_pod("full", requests={"cpu": 2000}, node="r5n0"),
        make_pod("half", requests={"cpu": 1000}, node="r0n0"),
    ]
    pods += [
        make_pod(
            f"big-{i}",
            requests={"cpu": 1000},
            group="big",
            created="2026-01-01T00:00:00Z",
            affinity=named("r0n0", "r0n1", "r1n0", "r5n0"),
        )
        for i in range(4)
    ]
    pods += [
        make_pod(
            "lone-0",
            requests={"cpu": 1000},
            group="lone",
            created="2026-01-01T00:00:01Z",
            affinity=named("r5n0"),
        )
    ]
    pods += [
        make_pod(f"s{i}", requests={"cpu": 500}, created=f"2026-01-01T00:00:0{2 + i}Z")
        for i in range(3)
    ]
    groups = [
        PodGroup(
            namespace="default",
            name="big",
            policy="gang",
            min_count=4,
            topology_key=rack,
            creation_timestamp="2026-01-01T00:00:00Z",
        ),
        PodGroup(
            namespace="default",
            name="lone",
            policy="basic",
            min_count=1,
            creation_timestamp="2026-01-01T00:00:01Z",
        ),
    ]
    return make_cluster(nodes, pods, groups=groups)


def test_counting_with_a_prefilter_result_matches_full_evaluation(monkeypatch):
    """The PreFilterResult paths of the count (scanned nodes, absent-node reasons, the subset's
    plugins among the rejecting ones), in first attempts and in counted retries, under VERIFY."""
    from gangplan.solver.greedy import placement_cycle, solve_greedy
    from gangplan.solver.validate import validate

    cluster = _subset_cluster()
    plain = solve_greedy(cluster)
    assert validate(cluster, plain) == []
    assert {r.entity for r in plain.greedy_trace.requeues} >= {"default/big", "default/lone"}
    counted = []
    by_count = placement_cycle.PlacementAlgorithm._failure_by_count

    def watch(self, key, whole):
        counted.append(key)
        return by_count(self, key, whole)

    monkeypatch.setattr(placement_cycle.PlacementAlgorithm, "_failure_by_count", watch)
    monkeypatch.setattr(placement_fast, "VERIFY", True)
    verified = solve_greedy(cluster)
    assert "default/lone" in counted
    a, b = plain.to_dict(trace="full"), verified.to_dict(trace="full")
    a.pop("wallSeconds"), b.pop("wallSeconds")
    assert a == b
