"""The greedy engine against upstream's podgroup integration scenarios (spec §6.1 cases 1-5, 7, 8
and the CompositePodGroup cases of §6.3), each a snapshot under scenarios/upstream/ whose PodGroups
carry the upstream outcome (``gangplan.io/expect-greedy``, ``gangplan.io/expect-placed``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplan.io.loader import load_snapshot
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.suite import EXPECT_GREEDY, EXPECT_PLACED
from gangplan.solver.validate import validate

UPSTREAM = Path(__file__).resolve().parent.parent / "scenarios" / "upstream"


def _outcome(cluster, result, key: str) -> str:
    pending = [p for p in cluster.groups.members(key) if p.node_name is None]
    if pending and all(p.key in cluster.gated for p in pending):
        return "gated"
    g = result.groups.get(key)
    return "admitted" if g is not None and g.admitted else "rejected"


@pytest.mark.parametrize("path", sorted(UPSTREAM.glob("*.yaml")), ids=lambda p: p.stem)
def test_greedy_reproduces_the_upstream_outcome(path: Path) -> None:
    cluster = load_snapshot(path)
    result = solve_greedy(cluster, snapshot=str(path))
    assert validate(cluster, result) == []
    checked = 0
    for key, g in sorted(cluster.pod_groups.items()):
        if EXPECT_GREEDY in g.annotations:
            assert _outcome(cluster, result, key) == g.annotations[EXPECT_GREEDY], key
            checked += 1
        if EXPECT_PLACED in g.annotations:
            placed = (
                result.groups[key].placed
                if key in result.groups
                else sum(1 for p in cluster.groups.members(key) if p.node_name)
            )
            assert placed == int(g.annotations[EXPECT_PLACED]), key
            checked += 1
    assert checked > 0


def test_case_4_leaves_out_the_last_pod_and_case_8_the_third() -> None:
    r4 = solve_greedy(load_snapshot(UPSTREAM / "podgroup-04-min-count-met-one-extra.yaml"))
    assert [k for k, o in sorted(r4.pods.items()) if o.node is None] == ["podgroup-test/p4"]
    r8 = solve_greedy(load_snapshot(UPSTREAM / "podgroup-08-basic-with-blocker.yaml"))
    assert [k for k, o in sorted(r8.pods.items()) if o.node is None] == ["podgroup-test/p3"]
