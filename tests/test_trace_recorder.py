"""``TraceRecorder.drop_cycles`` (gangplan.solver.greedy.state): removes exactly the earlier cycles
of the given pods, and ``restore`` brings them back."""

from __future__ import annotations

import random

from gangplan.solver.greedy.state import Mark, TraceRecorder


def test_drop_cycles_removes_the_keys_before_the_mark_and_restores():
    rng = random.Random(3)
    for _ in range(300):
        tr = TraceRecorder()
        tr.order = [f"p{rng.randrange(12)}" for _ in range(rng.randrange(0, 30))]
        before = list(tr.order)
        cut = rng.randrange(0, len(before) + 1)
        keys = {f"p{rng.randrange(14)}" for _ in range(rng.choice([0, 1, 3, 20]))}
        start = tr.mark()
        tr.drop_cycles(Mark(start.journal, cut), keys)
        assert tr.order == [k for k in before[:cut] if k not in keys] + before[cut:]
        tr.restore(start)
        assert tr.order == before
