"""Golden comparison of the greedy engine: every decision, score and trace field stays identical.

For every scenario under ``scenarios/showcase/`` and ``scenarios/upstream*/`` (run three ways:
the defaults, ``tie_break="random"`` with a seed, and preemption off) and a set of bench generator
draws (small mixed and preemption snapshots, scheduler_perf gang / basic / TAS / composite shapes,
GPU clusters with selectors, racks and priorities, GB200 / DGX topology shapes, Philly and Alibaba
families), the greedy Result JSON (``Result.to_json``, ``wallSeconds`` set to 0; the greedy trace
holds no other timing) is compared byte for byte with a golden file recorded before the speed
work of issue 15. Small scenarios also replay ``pod_scores_at_step`` and
``placement_scores_at_step`` (what the diff's decisive step reads).

Record (only when a change of outcome is intended, and say so in the commit)::

    PYTHONPATH=. python tests/test_greedy_golden.py --record

Goldens live in ``tests/golden/<case>.json``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
sys.path.insert(0, str(ROOT))

from gangplan.bench.generators import topology_shapes as shapes  # noqa: E402
from gangplan.bench.generators.builders import (  # noqa: E402
    preemptible_load,
    to_cluster,
)
from gangplan.bench.generators.families import build_family  # noqa: E402
from gangplan.bench.generators.gpu_clusters import gpu_benchmark  # noqa: E402
from gangplan.bench.generators.scheduler_perf import scheduler_perf_composite, scheduler_perf_gangs  # noqa: E402
from gangplan.bench.generators.small_snapshots import small_mixed, small_preemption  # noqa: E402
from gangplan.io.loader import load_snapshot  # noqa: E402
from gangplan.models.cluster import Cluster  # noqa: E402
from gangplan.models.well_known import RACK  # noqa: E402
from gangplan.solver.greedy import placement_scores_at_step, pod_scores_at_step, solve_greedy  # noqa: E402
from tests.draws import corners  # noqa: E402
from tests.golden_compare import dump, first_difference  # noqa: E402

SCENARIOS = sorted(
    p
    for p in (ROOT / "scenarios" / "showcase").iterdir()
    if p.suffix in (".yaml", ".yml", ".json") or p.is_dir()
)
SCENARIOS += sorted(
    p
    for d in sorted((ROOT / "scenarios").glob("upstream*"))
    for p in d.iterdir()
    if p.suffix in (".yaml", ".yml", ".json") or p.is_dir()
)
SMALL_NODES = 60
"""Scenarios with at most this many nodes are run in every variant and replayed."""

VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "random7": {"tie_break": "random", "seed": 7},
    "nopreempt": {"preemption": False},
}


def result_text(cluster: Cluster, snapshot: str | None, **opts: Any) -> dict[str, Any]:
    r = solve_greedy(cluster, snapshot=snapshot, **opts)
    data = json.loads(r.to_json())
    data["wallSeconds"] = 0.0
    return data


def replays(cluster: Cluster, result: dict[str, Any], **opts: Any) -> dict[str, Any]:
    """pod_scores_at_step for the first, middle and last pod cycle over every node, and
    placement_scores_at_step for every group with a placement decision."""
    order = result["trace"]["order"]
    nodes = [n.name for n in cluster.nodes]
    out: dict[str, Any] = {"pods": {}, "placements": {}}
    for key in dict.fromkeys([order[0], order[len(order) // 2], order[-1]] if order else []):
        try:
            out["pods"][key] = pod_scores_at_step(cluster, key, nodes, **opts)
        except ValueError as err:
            out["pods"][key] = {"error": str(err)}
    for g, t in result["trace"]["groups"].items():
        if "placements" in t:
            try:
                out["placements"][g] = placement_scores_at_step(cluster, g, **opts)
            except ValueError as err:
                out["placements"][g] = {"error": str(err)}
    return out


def _scenario_cases() -> dict[str, Callable[[], dict[str, Any]]]:
    cases: dict[str, Callable[[], dict[str, Any]]] = {}
    for path in SCENARIOS:
        rel = path.relative_to(ROOT / "scenarios").as_posix()
        base = rel.replace("/", "__").removesuffix(".yaml")

        def run(path=path, rel=rel, variant="default") -> dict[str, Any]:
            cluster = load_snapshot(path)
            opts = VARIANTS[variant]
            res = result_text(cluster, rel, **opts)
            doc = {"result": res}
            if len(cluster.nodes) <= SMALL_NODES:
                doc["replays"] = replays(cluster, res, **{k: v for k, v in opts.items()})
            return doc

        cases[f"scenario__{base}"] = run
        if path.is_file():  # every variant for the small hand-written snapshots
            for v in VARIANTS:
                if v != "default":
                    cases[f"scenario__{base}__{v}"] = lambda path=path, rel=rel, v=v: run(
                        path, rel, v
                    )
    return cases


def _draw(
    objects_fn: Callable[[], list], *, replay: bool = False, **opts: Any
) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        cluster = to_cluster(objects_fn())
        res = result_text(cluster, None, **opts)
        doc = {"result": res}
        if replay:
            doc["replays"] = replays(cluster, res, **opts)
        return doc

    return run


def _draw_cases() -> dict[str, Callable[[], dict[str, Any]]]:
    c: dict[str, Callable[[], dict[str, Any]]] = {}
    for seed in range(40):
        c[f"draw__small_mixed_{seed:02d}"] = _draw(
            lambda seed=seed: small_mixed(seed), replay=seed < 10
        )
    for seed in range(20):
        c[f"draw__small_preemption_{seed:02d}"] = _draw(
            lambda seed=seed: small_preemption(seed), replay=seed < 5
        )
    for seed in range(6):
        c[f"draw__corners_{seed}"] = _draw(lambda seed=seed: corners(seed), replay=True)
        c[f"draw__corners_{seed}_random"] = _draw(
            lambda seed=seed: corners(seed), tie_break="random", seed=seed
        )
    for seed in range(5):
        c[f"draw__small_mixed_random_{seed:02d}"] = _draw(
            lambda seed=seed: small_mixed(100 + seed), tie_break="random", seed=seed
        )
    c["draw__perf_tas_500n_75g"] = _draw(
        lambda: scheduler_perf_gangs(
            nodes=500, gangs=75, pods_per_gang=4, nodes_per_rack=100, topology_key=RACK
        )
    )
    c["draw__perf_tas_200n_racks10_40g"] = _draw(
        lambda: scheduler_perf_gangs(
            nodes=200, gangs=40, pods_per_gang=8, nodes_per_rack=10, topology_key=RACK
        ),
        top_k=3,
    )
    c["draw__perf_gang_300n_sampled"] = _draw(
        lambda: scheduler_perf_gangs(
            nodes=300, gangs=60, pods_per_gang=3, percentage_of_nodes_to_score=0
        )
    )
    c["draw__perf_basic_150n"] = _draw(
        lambda: scheduler_perf_gangs(nodes=150, gangs=40, pods_per_gang=3, policy="basic")
    )
    c["draw__perf_cpg_topology"] = _draw(
        lambda: scheduler_perf_composite(
            nodes=300, composites=6, groups_per_composite=2, pods_per_group=3, topology=True
        )
    )
    c["draw__perf_cpg_basic"] = _draw(
        lambda: scheduler_perf_composite(nodes=60, composites=6, policy="basic")
    )
    c["draw__gpu_busy_100n_512p"] = _draw(lambda: gpu_benchmark(100, 512, profile="busy", seed=0))
    c["draw__gpu_mixed_150n_256p_s1"] = _draw(
        lambda: gpu_benchmark(150, 256, profile="mixed", seed=1)
    )
    c["draw__gpu_busy_120n_400p_s2_random"] = _draw(
        lambda: gpu_benchmark(120, 400, profile="busy", seed=2), tie_break="random", seed=3
    )
    c["draw__gb200_nvl72"] = _draw(lambda: shapes.gb200_nvl72(seed=0))
    c["draw__dgx_h100_superpod"] = _draw(
        lambda: shapes.dgx_h100_superpod(nodes=64, su_nodes=16, sus_per_spine=2, seed=1)
    )
    c["draw__perf_tas_shape_util"] = _draw(
        lambda: shapes.scheduler_perf_tas(
            nodes=400, nodes_per_zone=200, utilisation=0.6, gangs=60, seed=2
        )
    )
    for seed in range(3):
        c[f"draw__mixed_family_{seed}"] = _draw(
            lambda seed=seed: build_family(
                "mixed",
                {
                    "nodes": 32,
                    "gangs": 12,
                    "hetero_fraction": 0.3,
                    "affinity_fraction": 0.3,
                    "anti_affinity_fraction": 0.3,
                    "topology_fraction": 0.3,
                    "spread_fraction": 0.3,
                    "selector_fraction": 0.3,
                    "priorities": 2,
                    "utilisation": 0.6,
                },
                seed,
            )
        )
    c["draw__preemptible_gpu_300n_512p"] = _draw(
        lambda: preemptible_load(gpu_benchmark(300, 512, profile="busy", seed=0), 0)
    )
    c["draw__preemptible_gpu_200n_600p_s1"] = _draw(
        lambda: preemptible_load(gpu_benchmark(200, 600, profile="busy", seed=1), 1, share=0.5)
    )
    for seed in range(3):
        c[f"draw__preemptible_mixed_family_{seed}"] = _draw(
            lambda seed=seed: preemptible_load(
                build_family(
                    "mixed",
                    {
                        "nodes": 48,
                        "gangs": 20,
                        "hetero_fraction": 0.3,
                        "affinity_fraction": 0.3,
                        "anti_affinity_fraction": 0.3,
                        "topology_fraction": 0.3,
                        "spread_fraction": 0.3,
                        "selector_fraction": 0.3,
                        "priorities": 2,
                        "utilisation": 0.8,
                    },
                    seed,
                ),
                seed,
                share=0.5,
            )
        )
    c["draw__philly_64n"] = _draw(
        lambda: _with_data(build_family, "philly", {"nodes": 64, "jobs": 40, "utilisation": 0.6}, 3)
    )
    c["draw__alibaba_spot_96n"] = _draw(
        lambda: _with_data(
            build_family,
            "alibaba",
            {"inventory": "spot", "nodes": 96, "gangs": 30, "max_gang_size": 8, "utilisation": 0.7},
            4,
        )
    )
    return c


def _with_data(build, *args):
    """A draw from the real traces; its case carries the ``traces`` marker (conftest fails it up
    front, naming the missing files, when the traces are absent)."""
    return build(*args)


TRACE_CASES = {"draw__philly_64n", "draw__alibaba_spot_96n"}


CASES = {**_scenario_cases(), **_draw_cases()}


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, marks=[pytest.mark.traces] if c in TRACE_CASES else [])
        for c in sorted(CASES)
    ],
)
def test_greedy_result_matches_golden(case: str) -> None:
    path = GOLDEN / f"{case}.json"
    assert path.exists(), (
        f"no golden for {case}: record with `PYTHONPATH=. python tests/test_greedy_golden.py --record`"
    )
    got = dump(CASES[case]())
    want = path.read_text(encoding="utf-8")
    if got != want:
        pytest.fail(
            f"greedy output of {case} changed at {first_difference(json.loads(want), json.loads(got))}"
        )


def test_every_golden_has_a_case() -> None:
    stale = sorted(p.stem for p in GOLDEN.glob("*.json") if p.stem not in CASES)
    assert not stale, f"goldens without a case (remove them or restore the case): {stale}"


def record(only: list[str] | None = None) -> None:
    GOLDEN.mkdir(exist_ok=True)
    for name in sorted(CASES):
        if only and not any(o in name for o in only):
            continue
        (GOLDEN / f"{name}.json").write_text(dump(CASES[name]()), encoding="utf-8")
        print("recorded", name)


if __name__ == "__main__":
    if "--record" not in sys.argv:
        sys.exit(
            "usage: PYTHONPATH=. python tests/test_greedy_golden.py --record [name-substring ...]"
        )
    record([a for a in sys.argv[1:] if a != "--record"])
