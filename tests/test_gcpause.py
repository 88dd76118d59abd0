"""The collector pauses of :mod:`gangplan.gcpause`: what they leave the collector to do."""

from __future__ import annotations

import gc
import weakref

from gangplan.gcpause import gc_frozen, gc_paused


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


def test_frozen_leaves_what_lives_on_entry_out_and_still_frees_cycles_made_inside() -> None:
    assert gc.get_freeze_count() == 0
    before = _Node()
    with gc_frozen():
        assert gc.get_freeze_count() > 0  # `before` among them: collections inside skip it
        made = _Node()
        gone = weakref.ref(made)
        del made
        gc.collect()
        assert gone() is None  # a cycle made inside is still collected
        with gc_frozen():  # nested: the outer one acts
            assert gc.get_freeze_count() > 0
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0  # back in the oldest generation
    old = weakref.ref(before)
    del before
    gc.collect()
    assert old() is None


def test_frozen_keeps_a_callers_own_freeze() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_frozen():
            pass
        assert gc.get_freeze_count() == frozen  # not unfrozen by us
    finally:
        gc.unfreeze()


def test_paused_restores_the_collector_state() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
