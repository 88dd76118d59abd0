"""Requests whose selectors match overlapping device sets on one node (issue 23, item 4).

The exact engine counts each (DeviceClass, request selectors) pair's matching free devices as a
resource row (:mod:`gangplan.dra.capacity`). Two pairs that match the same devices ("any GPU" and
"a GPU of 80 GB") each saw every device: the rows let a node of 8 GPUs hold 8 of each, and the
validator rejected the exact Result. Hall's condition (for every set of pairs, what they ask for
together is at most the devices any of them matches) makes the counts exact for ExactCount
requests; these tests pin that both engines' Results pass the validator and the exact engine
places what a brute force over whole pods says fits.
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from gangplan.io.loader import load_objects
from gangplan.solver.exact import solve_exact
from gangplan.solver.greedy import solve_greedy
from gangplan.solver.validate import validate

TEMPLATES = {
    "any": [],
    "big": ['device.attributes["gpu.example.com"].memory >= 80'],
    "small": ['device.attributes["gpu.example.com"].memory < 80'],
}


def _cluster(nodes: list[list[int]], pods: list[tuple[str, int]]):
    """Nodes with GPUs of the given memory sizes (GB); pods asking for ``count`` GPUs through a
    template claim of kind any / big / small."""
    objs: list[dict] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        }
    ]
    for kind, sels in TEMPLATES.items():
        for count in (1, 2, 3, 4):
            exactly = {"deviceClassName": "gpu", "count": count}
            if sels:
                exactly["selectors"] = [{"cel": {"expression": e}} for e in sels]
            objs.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaimTemplate",
                    "metadata": {"name": f"{kind}-{count}", "namespace": "default"},
                    "spec": {
                        "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}}
                    },
                }
            )
    for i, mems in enumerate(nodes):
        n = f"n{i}"
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": n},
                "status": {"allocatable": {"cpu": "16", "memory": "16Gi", "pods": "20"}},
            }
        )
        objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": n},
                "spec": {
                    "driver": "gpu.example.com",
                    "nodeName": n,
                    "pool": {"name": n, "generation": 0, "resourceSliceCount": 1},
                    "devices": [
                        {"name": f"g{j}", "attributes": {"memory": {"int": m}}}
                        for j, m in enumerate(mems)
                    ],
                },
            }
        )
    for i, (kind, count) in enumerate(pods):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{i}", "namespace": "default"},
                "spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                    "resourceClaims": [
                        {"name": "g", "resourceClaimTemplateName": f"{kind}-{count}"}
                    ],
                },
            }
        )
    return load_objects(objs)


def _fits(mems: list[int], asks: list[tuple[str, int]]) -> bool:
    """Brute force: the asks (kind, count) get distinct matching GPUs of one node."""
    ok = {"any": lambda m: True, "big": lambda m: m >= 80, "small": lambda m: m < 80}
    slots = [k for k, c in asks for _ in range(c)]
    if len(slots) > len(mems):
        return False
    return any(
        all(ok[k](mems[j]) for k, j in zip(slots, perm, strict=False))
        for perm in itertools.permutations(range(len(mems)), len(slots))
    )


def _best(nodes: list[list[int]], pods: list[tuple[str, int]]) -> int:
    """Most pods placeable (each pod to one node or none), by brute force."""
    best = 0
    for assign in itertools.product(range(len(nodes) + 1), repeat=len(pods)):
        if all(
            _fits(nodes[i], [p for p, a in zip(pods, assign, strict=True) if a == i])
            for i in range(len(nodes))
        ):
            best = max(best, sum(a < len(nodes) for a in assign))
    return best


def _placed(r) -> int:
    return sum(o.node is not None for o in r.pods.values())


def test_any_and_big_gpus_share_one_nodes_devices() -> None:
    """One node of 4 GPUs of 80 GB: two pods of 2 "any" GPUs and two of 2 "big" GPUs overlap on
    every device; at most two pods fit (4 devices), and the exact Result passes the validator."""
    c = _cluster([[80, 80, 80, 80]], [("any", 2), ("any", 2), ("big", 2), ("big", 2)])
    for r in (solve_greedy(c), solve_exact(c, time_limit=10, workers=1)):
        assert validate(c, r) == [], r.engine
        assert _placed(r) == 2, r.engine


def test_three_overlapping_pairs_count_exactly() -> None:
    """Small, big and any on a node of 2 small + 2 big GPUs: 2 big + 1 small + 1 any fit (4
    devices), a third big pod does not (only 2 big GPUs)."""
    c = _cluster([[40, 40, 80, 80]], [("big", 2), ("small", 1), ("any", 1), ("big", 1)])
    exact = solve_exact(c, time_limit=10, workers=1)
    assert validate(c, exact) == []
    assert (
        _placed(exact)
        == _best([[40, 40, 80, 80]], [("big", 2), ("small", 1), ("any", 1), ("big", 1)])
        == 3
    )


@settings(max_examples=25, deadline=None)
@given(
    nodes=st.lists(
        st.lists(st.sampled_from([40, 80]), min_size=1, max_size=4), min_size=1, max_size=2
    ),
    pods=st.lists(
        st.tuples(st.sampled_from(sorted(TEMPLATES)), st.integers(1, 3)), min_size=1, max_size=4
    ),
)
def test_random_overlapping_requests_exact_is_valid_and_optimal(nodes, pods) -> None:
    c = _cluster(nodes, pods)
    greedy, exact = solve_greedy(c), solve_exact(c, time_limit=10, workers=1)
    assert validate(c, greedy) == [] and validate(c, exact) == []
    assert _placed(exact) == _best(nodes, pods) >= _placed(greedy)
