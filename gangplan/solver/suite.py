"""Run ``diff`` over a directory of scenarios and check their ``gangplan.io/expect-*`` annotations.

A suite is a directory; each top-level ``.yaml``/``.yml``/``.json`` file, and each subdirectory
(a multi-file snapshot), is one scenario, taken in sorted order.

Expectations live on PodGroups:

``gangplan.io/expect-greedy``    ``admitted`` | ``rejected`` | ``gated``  (the greedy engine's outcome,
                                 certain: with samples, every sampled run too) | ``sometimes``
                                 (admitted in some sampled runs and not in others; the scenario
                                 is then sampled, :data:`SUITE_SAMPLES` runs unless ``--samples``)
``<any of these>-v1.36``         (any modelled version) the same, for that kube-scheduler
                                 version only; it overrides the plain annotation there
``gangplan.io/expect-optimal``   ``admitted`` | ``rejected``             (the exact engine's outcome;
                                 met only when the admission tiers are proven)
``gangplan.io/expect-placed``    integer: the group's pods on nodes after the greedy run
``gangplan.io/expect-greedy-victims``, ``gangplan.io/expect-optimal-victims``
                                 integer: pods the engine evicts in the whole scenario

and, for Kueue (issue 42), on a Kueue ``Workload`` or the job it stands for:

``gangplan.io/expect-kueue``          ``admitted`` | ``pending`` (Kueue's admission in the greedy run)
``gangplan.io/expect-kueue-optimal``  ``admitted`` | ``pending`` (the optimum's; met only when proven)
``gangplan.io/expect-kueue-reason``   text Kueue's message for the Workload must contain
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gangplan.io.errors import SnapshotError
from gangplan.io.files import SNAPSHOT_SUFFIXES
from gangplan.io.loader import load_snapshot
from gangplan.models.cluster import Cluster
from gangplan.models.documents import SuiteRowDocument
from gangplan.models.result import Result
from gangplan.solver.diff import MODEL_MISMATCH, UNPROVEN, Diff, diff_snapshot
from gangplan.solver.diff.proof import admission_proven

EXPECT_GREEDY = "gangplan.io/expect-greedy"
SOMETIMES = "sometimes"
SUITE_SAMPLES = 20
"""Runs a scenario with a ``sometimes`` expectation is sampled with when ``--samples`` is not given."""
EXPECT_OPTIMAL = "gangplan.io/expect-optimal"
EXPECT_PLACED = "gangplan.io/expect-placed"
EXPECT_KUEUE = "gangplan.io/expect-kueue"
EXPECT_KUEUE_OPTIMAL = "gangplan.io/expect-kueue-optimal"
EXPECT_KUEUE_REASON = "gangplan.io/expect-kueue-reason"
EXPECT_VICTIMS = {
    "greedy": "gangplan.io/expect-greedy-victims",
    "optimal": "gangplan.io/expect-optimal-victims",
}


@dataclass
class SuiteRow:
    scenario: str
    diff: Diff | None = None
    error: str | None = None
    failures: list[str] = field(default_factory=list)
    expectations: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return (
            self.error is None
            and not self.failures
            and (self.diff is None or self.diff.classification != MODEL_MISMATCH)
        )

    @property
    def unproven(self) -> bool:
        """The scenario's diff could not prove that greedy matches the optimum."""
        return self.diff is not None and self.diff.classification == UNPROVEN

    def document(self) -> SuiteRowDocument:
        """This scenario's row of ``diff --suite DIR --json``: its diff without the two Results."""
        return SuiteRowDocument(
            scenario=self.scenario,
            error=self.error,
            expectations=self.expectations,
            failures=self.failures,
            seconds=round(self.seconds, 3),
            diff=self.diff.document(with_results=False) if self.diff else None,
        )


def suite_entries(directory: str | Path) -> list[Path]:
    d = Path(directory)
    if not d.is_dir():
        raise SnapshotError(str(d), "a suite must be a directory of snapshots")
    entries = [
        p
        for p in sorted(d.iterdir())
        if not p.name.startswith(".") and (p.is_dir() or p.suffix.lower() in SNAPSHOT_SUFFIXES)
    ]
    if not entries:
        raise SnapshotError(str(d), "suite directory holds no snapshot")
    return entries


def _outcome(result: Result, cluster: Cluster, group: str) -> str:
    members = cluster.groups.members(group)
    pending = [p for p in members if p.node_name is None]
    if pending and all(p.key in cluster.gated for p in pending):
        return "gated"
    g = result.groups.get(group)
    return "admitted" if g is not None and g.admitted else "rejected"


def expectation(cluster: Cluster, annotations: dict[str, str], key: str) -> str | None:
    """An expectation for the cluster's kube-scheduler version: ``<key>-v<version>`` when
    present (``gangplan.io/expect-greedy-v1.36``), else ``<key>``."""
    return annotations.get(f"{key}-v{cluster.kube_version.value}", annotations.get(key))


def greedy_expectation(cluster: Cluster, annotations: dict[str, str]) -> str | None:
    return expectation(cluster, annotations, EXPECT_GREEDY)


def wants_samples(cluster: Cluster) -> bool:
    return any(
        greedy_expectation(cluster, g.annotations) == SOMETIMES for g in cluster.pod_groups.values()
    )


def _greedy_outcome(cluster: Cluster, diff: Diff, key: str) -> str:
    """The main run's outcome, or over the samples too: ``sometimes`` when they disagree."""
    got = _outcome(diff.greedy, cluster, key)
    if diff.samples is None or got == "gated":
        return got
    runs = [_outcome(r, cluster, key) for r in diff.samples.results]
    return got if all(o == got for o in runs) else SOMETIMES


def check_expectations(cluster: Cluster, diff: Diff) -> tuple[int, list[str]]:
    """(number of expectations, failures) for one scenario."""
    n, failures = 0, []
    for key, g in sorted(cluster.pod_groups.items()):
        ann = g.annotations
        want = greedy_expectation(cluster, ann)
        if want is not None:
            n += 1
            got = _greedy_outcome(cluster, diff, key)
            if got != want:
                share = (
                    f" (admitted in {sum(_outcome(r, cluster, key) == 'admitted' for r in diff.samples.results)}/{diff.samples.runs} sampled runs)"
                    if diff.samples is not None
                    else ""
                )
                failures.append(
                    f"{key}: greedy {got}{share}, expected {want} (kube-scheduler v{cluster.kube_version})"
                )
        want_optimal = expectation(cluster, ann, EXPECT_OPTIMAL)
        if want_optimal is not None:
            n += 1
            got = _outcome(diff.optimal, cluster, key)
            if got != want_optimal:
                failures.append(f"{key}: optimal {got}, expected {want_optimal}")
            elif not admission_proven(diff.proof):
                failures.append(
                    f"{key}: optimal {got} as expected, but not proven ({diff.proof.first_open if diff.proof else 'no proof'} open)"
                )
        want_placed = expectation(cluster, ann, EXPECT_PLACED)
        if want_placed is not None:
            n += 1
            res = diff.greedy.groups.get(key)
            got_n = (
                res.placed if res else sum(1 for p in cluster.groups.members(key) if p.node_name)
            )
            if str(got_n) != want_placed.strip():
                failures.append(f"{key}: greedy placed {got_n}, expected {want_placed}")
        for engine, annotation in EXPECT_VICTIMS.items():
            want_v = expectation(cluster, ann, annotation)
            if want_v is not None:
                n += 1
                got_v = len((diff.greedy if engine == "greedy" else diff.optimal).victims)
                if str(got_v) != want_v.strip():
                    failures.append(
                        f"{key}: {engine} evicted {got_v} pods, expected {want_v} (kube-scheduler v{cluster.kube_version})"
                    )
    k, more = _kueue_expectations(cluster, diff)
    return n + k, failures + more


def _kueue_state(result: Result, key: str) -> str:
    w = result.kueue.workloads.get(key) if result.kueue is not None else None
    return "absent" if w is None else "admitted" if w.admitted else "pending"


def _kueue_expectations(cluster: Cluster, diff: Diff) -> tuple[int, list[str]]:
    if cluster.kueue is None:
        return 0, []
    n, failures = 0, []
    for key, wl in sorted(cluster.kueue.workloads.items()):
        ann = wl.annotations
        want = expectation(cluster, ann, EXPECT_KUEUE)
        if want is not None:
            n += 1
            got = _kueue_state(diff.greedy, key)
            if got != want:
                failures.append(f"Workload {key}: Kueue {got}, expected {want}")
        want = expectation(cluster, ann, EXPECT_KUEUE_OPTIMAL)
        if want is not None:
            n += 1
            got = _kueue_state(diff.optimal, key)
            if got != want:
                failures.append(f"Workload {key}: optimal {got}, expected {want}")
            elif not admission_proven(diff.proof):
                failures.append(f"Workload {key}: optimal {got} as expected, but not proven")
        want = expectation(cluster, ann, EXPECT_KUEUE_REASON)
        if want is not None:
            n += 1
            w = diff.greedy.kueue.workloads.get(key) if diff.greedy.kueue else None
            got = (w.reason or "") if w is not None else ""
            if want not in got:
                failures.append(f"Workload {key}: Kueue's reason {got!r} lacks {want!r}")
    return n, failures


def run_scenario(path: Path, *, progress: Callable[[str], None] | None = None, **opts) -> SuiteRow:
    t0 = time.perf_counter()
    row = SuiteRow(scenario=path.name)
    try:
        cluster = load_snapshot(path, kube_version=opts.pop("kube_version", None))
    except SnapshotError as e:
        row.error = str(e)
        row.seconds = time.perf_counter() - t0
        return row
    step = (lambda text: progress(f"{path.name}: {text}")) if progress else None
    if not opts.get("samples") and wants_samples(cluster):
        opts = {**opts, "samples": SUITE_SAMPLES}
    row.diff = diff_snapshot(cluster, snapshot=str(path), progress=step, **opts)
    row.expectations, row.failures = check_expectations(cluster, row.diff)
    row.seconds = time.perf_counter() - t0
    return row


def suite_exit_code(rows: list[SuiteRow]) -> int:
    """``diff --suite``'s exit code: 4 when a scenario's diff is a model mismatch, else 1 when an
    expectation is not met or a scenario did not load, else 5 when a scenario is ``unproven``,
    else 0."""
    if any(r.diff is not None and r.diff.classification == MODEL_MISMATCH for r in rows):
        return 4
    if any(r.error or r.failures for r in rows):
        return 1
    if any(r.unproven for r in rows):
        return 5
    return 0


def run_suite(
    directory: str | Path,
    *,
    progress: Callable[[str], None] | None = None,
    entries: list[Path] | None = None,
    **opts,
) -> list[SuiteRow]:
    """Every scenario of ``directory`` (or the given ``entries`` of it), in order."""
    return [
        run_scenario(p, progress=progress, **opts)
        for p in (entries if entries is not None else suite_entries(directory))
    ]
