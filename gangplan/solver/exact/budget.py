"""How the exact engine splits its time limit between the decision tiers solved one at a time
(:mod:`.solve`) and the class-level warm start that solves its own tiers (:mod:`.start.classpack`):
one rule, read by both."""

from __future__ import annotations

LATER_TIER_SHARE = 0.1
"""Per-tier budget of the one-at-a-time decision phases: what is left, minus this share of the
limit for each later decision tier (at least an even split of what is left). A tier that is not
proven leaves every later tier unproven too, and the higher tiers are where the time goes (busy
1,000 x 2,048: an even split gave the second tier ~1.8 s, while it often needs 2-4 s to find the
optimum its bound already shows); time a tier does not use rolls over to the next."""


def tier_budget(rest: float, later: int, time_limit: float) -> float:
    """The time of one tier solved alone: what is left (``rest``) minus ``LATER_TIER_SHARE`` of
    ``time_limit`` for each of the ``later`` tiers still to solve, at least an even split."""
    return max(rest / (later + 1), rest - later * LATER_TIER_SHARE * time_limit)


PACK_SHARE, MAX_PACK_SECONDS = 0.1, 3.0
"""What a solve with a time limit gives the packed start (:mod:`.start.packing`): this share of
it, at most this many seconds. Issue 27: 0.15 -> 0.1 (1.5 -> 1.0 s at 10 s; the restarts past the
first few rarely improve the decision tiers, and the phases need the time)."""
CLASS_SHARE, MAX_CLASS_SECONDS = 0.35, 6.0
"""What a solve with a time limit gives the class-level start (:mod:`.start.classpack`): this
share, at most this many seconds. Issue 27: the start is lean now (the lower
admission tiers only, skipped when their LP bound shows the packed start cannot be beaten, more
packing orders before HiGHS), so it uses this only where it may help (busy 1,000 x 2,048: 0.15-0.3
s in seed 2; seed 0 1.6 s, more orders reach 54; seed 1 2.9 s at load ~2, where HiGHS finds 39 / 7,
the optimum, but fails within 3.5-4.7 s at load ~4)."""


def pack_seconds(time_limit: float) -> float:
    return min(MAX_PACK_SECONDS, PACK_SHARE * time_limit)


def class_seconds(time_limit: float) -> float:
    return min(MAX_CLASS_SECONDS, CLASS_SHARE * time_limit)


DECISION_RESERVE = 0.5
"""Share of the time limit the starts leave the decision tiers in any case: the class-level start
gets what its share allows only while build, first-fit and packed start (slower on a loaded
machine: busy 1,000 x 2,048 at load ~5, 2.5 s before the class start instead of ~1.5) leave this
much (:func:`class_budget`)."""


def class_budget(time_limit: float, spent: float) -> float:
    """The class-level start's seconds when ``spent`` seconds of ``time_limit`` are gone."""
    return max(0.0, min(class_seconds(time_limit), (1.0 - DECISION_RESERVE) * time_limit - spent))
