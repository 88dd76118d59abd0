"""Pause Python's cyclic garbage collector while a step builds or walks many acyclic objects.

A collection walks every tracked object, so on a big snapshot each one that lands inside the
loader's object construction or a greedy run costs 0.1-0.15 s (4,278 nodes, ~10,000 objects) and
buys nothing: those objects hold no reference cycles, and reference counting frees them. Nested
pauses are fine; the collector is enabled again only by the pause that disabled it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def gc_frozen() -> Iterator[None]:
    """Leave every object alive on entry out of the collections inside (``gc.freeze``): the
    snapshot's objects live through the whole step, and a collection that walks them buys
    nothing. The collector keeps running for the objects the step creates, so cyclic garbage made
    inside (a greedy session's framework and plugins refer to each other) is still freed. On exit
    the objects go back to the oldest generation (``gc.unfreeze``). Only the outermost freeze
    acts, and none when the caller has frozen objects itself (unfreezing would release theirs).

    Measured (issue 37, the whole ``diff`` of the 10,000-node GB200 shape, 1.6 million objects
    alive): the collector's time 1.97 s -> 0.69 s; its collections of the oldest generation
    walked the snapshot each time (0.36-0.85 s each)."""
    if gc.get_freeze_count() > 0:
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


__all__ = ["gc_frozen", "gc_paused"]
