"""``gangplan make-room --suite DIR``: make-room over a directory of scenarios, checking their
``gangplan.io/expect-room*`` annotations (scenarios as :mod:`gangplan.solver.suite` reads them).

A scenario names its targets and options on the target PodGroups (every PodGroup carrying an
``expect-room`` annotation is a target):

``gangplan.io/expect-room``            ``plan`` (a working plan: found and checked by kube-scheduler's
                                       cycle) | ``no-plan`` (proven: none admits the targets) |
                                       ``nothing`` (kube-scheduler admits them as they are)
``gangplan.io/expect-room-moves``      integer: pods the optimal plan moves
``gangplan.io/expect-room-evictions``  integer: pods it evicts (``room-evict`` only)
``gangplan.io/expect-room-baseline``   ``plan`` | ``no-plan``, or an integer: the greedy baseline's
                                       pods moved plus evicted
``gangplan.io/expect-room-nodes``      integer: the fewest nodes to add (the first shape's count),
                                       proven
``gangplan.io/expect-room-copies``     ``G/O``: copies greedy / the exact engine admit now (proven)
``gangplan.io/room-evict``             ``"true"``: lower-priority work may be stopped
``gangplan.io/room-copies``            integer: copies offered for ``expect-room-copies``
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_snapshot
from gangplan.models.cluster import Cluster
from gangplan.models.room import RoomDocument
from gangplan.solver.room import make_room
from gangplan.solver.suite import suite_entries

PREFIX = "gangplan.io/expect-room"
EXPECT = PREFIX
MOVES = f"{PREFIX}-moves"
EVICTIONS = f"{PREFIX}-evictions"
BASELINE = f"{PREFIX}-baseline"
NODES = f"{PREFIX}-nodes"
COPIES = f"{PREFIX}-copies"
EVICT = "gangplan.io/room-evict"
OFFER = "gangplan.io/room-copies"


@dataclass
class RoomSuiteRow:
    scenario: str
    doc: RoomDocument | None = None
    error: str | None = None
    failures: list[str] = field(default_factory=list)
    expectations: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and not self.failures


def _targets(cluster: Cluster) -> tuple[list[str], dict[str, str]]:
    keys, ann = [], {}
    for key, g in sorted(cluster.pod_groups.items()):
        if EXPECT in g.annotations or any(k.startswith(PREFIX) for k in g.annotations):
            keys.append(key)
            ann.update(g.annotations)
    return keys, ann


def check(doc: RoomDocument, ann: dict[str, str]) -> tuple[int, list[str]]:
    """(expectations, failures) of one scenario's document."""
    n, failures = 0, []
    plan = doc.optimal

    def expect(name: str, got: object, want: object) -> None:
        nonlocal n
        n += 1
        if got != want:
            failures.append(f"{name}: expected {want}, got {got}")

    if EXPECT in ann:
        got = (
            "nothing"
            if not doc.targets
            else "plan"
            if doc.verified
            else "no-plan"
            if doc.proven and not plan.found
            else "unproven"
            if not plan.found
            else "plan-fails-check"
        )
        expect(EXPECT, got, ann[EXPECT])
    if MOVES in ann:
        expect(MOVES, len(plan.moves), int(ann[MOVES]))
    if EVICTIONS in ann:
        expect(EVICTIONS, len(plan.evictions), int(ann[EVICTIONS]))
    if BASELINE in ann:
        base = doc.baseline
        want = ann[BASELINE]
        got = (
            ("plan" if base.found else "no-plan")
            if not want.isdigit()
            else (len(base.moves) + len(base.evictions) if base.found else "no-plan")
        )
        expect(BASELINE, got, want if not want.isdigit() else int(want))
    if NODES in ann:
        first = doc.nodes_to_add[0] if doc.nodes_to_add else None
        got = f"{first.count}" + ("" if first.proven else " (not proven)") if first else "none"
        expect(NODES, got, ann[NODES])
    if COPIES in ann:
        fits = doc.copies_that_fit
        got = (
            f"{fits[0].greedy}/{fits[0].optimal}" + ("" if fits[0].proven else " (not proven)")
            if fits
            else "none"
        )
        expect(COPIES, got, ann[COPIES])
    return n, failures


def run_room_suite(directory: str | Path, **options) -> list[RoomSuiteRow]:
    """make-room on every scenario of ``directory`` (options: :func:`..make_room`'s)."""
    rows = []
    for path in suite_entries(directory):
        t0 = time.perf_counter()
        row = RoomSuiteRow(scenario=path.name)
        try:
            cluster = load_snapshot(path)
            targets, ann = _targets(cluster)
            doc = make_room(
                cluster,
                targets or None,
                evict=ann.get(EVICT) == "true",
                copies=int(ann.get(OFFER, "0")),
                add_nodes=NODES in ann,
                snapshot=str(path),
                **options,
            )
            row.doc = doc
            row.expectations, row.failures = check(doc, ann)
        except (SnapshotError, ValueError) as e:
            row.error = str(e)
        row.seconds = time.perf_counter() - t0
        rows.append(row)
    return rows


__all__ = ["RoomSuiteRow", "check", "run_room_suite"]
