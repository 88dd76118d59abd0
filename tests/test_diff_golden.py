"""Golden comparison of the whole diff: exact Result, greedy Result and diff JSON stay identical.

Issue 16 restructures the greedy trace, the plugin points and the exact constraint families; none
of that may change an answer. For every scenario under ``scenarios/showcase/`` and
``scenarios/upstream*/``, and a seeded slice of the small bench suite
(``scenarios/suites/small.yaml``), the diff document (``gangplan diff --json``: classification,
decisive step, both Results with their traces) is compared with a golden recorded at main's commit
d656ba9, after removing what is time: every key named ``seconds``, ``timing`` or ending in
``Seconds``, and the exact phases' ``budget`` (a share of the remaining wall time).

The exact engine runs with ``workers=1`` (CP-SAT's single-worker search is deterministic for a
fixed seed) and a time limit that every case proves well within; a case the recorder finds not
proven optimal is not a golden case (``test_every_case_is_proven`` keeps that true).

Record (only when a change of answer is intended, and say why in the commit)::

    PYTHONPATH=. python tests/test_diff_golden.py --record [name-substring ...]

Goldens live in ``tests/golden_diff/<case>.json``. Every generated task of the small suite is a
case; the mixed, mixed-constraints and scheduler-perf families and the first four draws of the
others run by default (about 15 s), the rest are marked ``slow``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden_diff"
sys.path.insert(0, str(ROOT))

from gangplan.bench.suites import load_suite  # noqa: E402
from gangplan.io.loader import load_snapshot  # noqa: E402
from gangplan.models.base import without_time  # noqa: E402
from gangplan.models.cluster import Cluster  # noqa: E402
from gangplan.solver.diff import diff_snapshot  # noqa: E402
from gangplan.solver.validate import validate  # noqa: E402
from tests.golden_compare import dump, first_difference  # noqa: E402

TIME_LIMIT = 20.0
PROBE_TIME_LIMIT = 10.0

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

BENCH_FAST = {"mixed", "mixed-constraints", "scheduler-perf"}
"""Bench families run whole in the default test run; of the others the first four draws."""


def strip_time(doc: Any) -> Any:
    return without_time(doc)


def diff_doc(cluster: Cluster, snapshot: str) -> dict[str, Any]:
    d = diff_snapshot(
        cluster,
        snapshot=snapshot,
        time_limit=TIME_LIMIT,
        probe_time_limit=PROBE_TIME_LIMIT,
        workers=1,
        seed=0,
    )
    for side in (d.greedy, d.optimal):
        bad = validate(cluster, side)
        assert not bad, f"{snapshot}: {side.engine} Result breaks hard rules: {bad[:3]}"
    return strip_time(json.loads(json.dumps(d.to_dict())))


def _cases() -> dict[str, tuple[Callable[[], dict[str, Any]], bool, bool]]:
    """name -> (run, slow, reads the real traces)."""
    cases: dict[str, tuple[Callable[[], dict[str, Any]], bool, bool]] = {}
    for path in SCENARIOS:
        rel = path.relative_to(ROOT / "scenarios").as_posix()
        name = "scenario__" + rel.replace("/", "__").removesuffix(".yaml")
        cases[name] = (
            (lambda path=path, rel=rel: diff_doc(load_snapshot(path), rel)),
            path.is_dir(),
            False,
        )
    suite = load_suite(ROOT / "scenarios" / "suites" / "small.yaml")
    seen: dict[str, int] = {}
    for task in suite.tasks:
        if task.generator is None:
            continue  # the showcase directory: covered above
        n = seen.get(task.family, 0)
        seen[task.family] = n + 1
        slow = not (task.family in BENCH_FAST or n < 4)
        cases["bench__" + task.id.replace("/", "__")] = (
            (lambda task=task: diff_doc(task.build(), task.id)),
            slow,
            task.generator in TRACE_GENERATORS,
        )
    return cases


TRACE_GENERATORS = {"philly", "alibaba"}
"""Bench families drawn from the real traces: their cases carry the ``traces`` marker."""


CASES = _cases()


def _params() -> list[Any]:
    return [
        pytest.param(
            name,
            marks=[m for m, on in ((pytest.mark.slow, slow), (pytest.mark.traces, traces)) if on],
        )
        for name, (_, slow, traces) in sorted(CASES.items())
    ]


@pytest.mark.parametrize("case", _params())
def test_diff_matches_golden(case: str) -> None:
    path = GOLDEN / f"{case}.json"
    assert path.exists(), (
        f"no golden for {case}: record with `PYTHONPATH=. python tests/test_diff_golden.py --record {case}`"
    )
    want = path.read_text(encoding="utf-8")
    got_doc = CASES[case][0]()
    got = dump(got_doc)
    if got != want:
        pytest.fail(f"diff of {case} changed at {first_difference(json.loads(want), got_doc)}")


def test_every_case_is_proven() -> None:
    """Goldens hold only proven optima (otherwise a single-worker time-limited solve could differ
    between machines), and every golden has a case."""
    stale = sorted(p.stem for p in GOLDEN.glob("*.json") if p.stem not in CASES)
    assert not stale, f"goldens without a case (remove them or restore the case): {stale}"
    for p in sorted(GOLDEN.glob("*.json")):
        doc = json.loads(p.read_text(encoding="utf-8"))
        assert doc["optimalStatus"] == "OPTIMAL", (
            f"{p.stem}: golden is {doc['optimalStatus']}, not a proven optimum"
        )


def record(only: list[str]) -> None:
    GOLDEN.mkdir(exist_ok=True)
    for name, (run, _, _) in sorted(CASES.items()):
        if only and not any(o in name for o in only):
            continue
        doc = run()
        if doc["optimalStatus"] != "OPTIMAL":
            print("NOT PROVEN, not recorded:", name, doc["optimalStatus"])
            continue
        (GOLDEN / f"{name}.json").write_text(dump(doc), encoding="utf-8")
        print("recorded", name, doc["classification"])


if __name__ == "__main__":
    if "--record" not in sys.argv:
        sys.exit(
            "usage: PYTHONPATH=. python tests/test_diff_golden.py --record [name-substring ...]"
        )
    record([a for a in sys.argv[1:] if a != "--record"])
