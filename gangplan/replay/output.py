"""What one replay produced: the summary document and every fill and timed run, as
:func:`gangplan.replay.run.replay` returns it and :mod:`gangplan.replay.report` draws it."""

from __future__ import annotations

from dataclasses import dataclass

from gangplan.models.replay import ReplaySummary
from gangplan.replay.fill import FillRun
from gangplan.replay.timed import TimedRun


@dataclass
class ReplayOutput:
    summary: ReplaySummary
    fill: list[FillRun]
    timed: list[TimedRun]


__all__ = ["ReplayOutput"]
