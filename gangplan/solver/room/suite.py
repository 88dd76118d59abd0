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


def verdict(doc: RoomDocument) -> str:
    """The ``expect-room`` word for a document."""
    if not doc.targets:
        return "nothing"
    if doc.verified:
        return "plan"
    if not doc.optimal.found:
        return "no-plan" if doc.proven else "unproven"
    return "plan-fails-check"


def _baseline(doc: RoomDocument, want: str) -> object:
    base = doc.baseline
    if not want.isdigit():
        return "plan" if base.found else "no-plan"
    return len(base.moves) + len(base.evictions) if base.found else "no-plan"


def _nodes(doc: RoomDocument) -> str:
    first = doc.nodes_to_add[0] if doc.nodes_to_add else None
    if first is None:
        return "none"
    return f"{first.count}" + ("" if first.proven else " (not proven)")


def _copies(doc: RoomDocument) -> str:
    fits = doc.copies_that_fit
    if not fits:
        return "none"
    return f"{fits[0].greedy}/{fits[0].optimal}" + ("" if fits[0].proven else " (not proven)")


READERS = {
    EXPECT: (verdict, str),
    MOVES: (lambda doc: len(doc.optimal.moves), int),
    EVICTIONS: (lambda doc: len(doc.optimal.evictions), int),
    NODES: (_nodes, str),
    COPIES: (_copies, str),
}
"""Expectation -> (what the document says, how the annotation's value reads)."""


def check(doc: RoomDocument, ann: dict[str, str]) -> tuple[int, list[str]]:
    """(expectations, failures) of one scenario's document."""
    found: list[tuple[str, object, object]] = []
    for name, (read, kind) in READERS.items():
        if name in ann:
            found.append((name, read(doc), kind(ann[name])))
    if BASELINE in ann:
        want = ann[BASELINE]
        found.append((BASELINE, _baseline(doc, want), int(want) if want.isdigit() else want))
    failures = [f"{name}: expected {want}, got {got}" for name, got, want in found if got != want]
    return len(found), failures


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
