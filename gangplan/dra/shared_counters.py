"""Shared counters of partitionable devices (KEP-4815): what a pool's counters have left once its
allocated devices have taken theirs, and whether one device fits them alone
(``checkAvailableCounters`` of ``stable/allocator_stable.go`` and
``incubating/allocator_incubating.go``, kubernetes/kubernetes @03ab440c)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gangplan.dra.matching import Consumed
from gangplan.dra.model import CounterPool, Device, DeviceID


def counter_pools(devices: Sequence[Device]) -> dict[int, CounterPool]:
    """The counter pools of the devices that consume counters, by ``id``."""
    return {
        id(d.counter_pool): d.counter_pool
        for d in devices
        if d.counters and d.counter_pool is not None
    }


def _pools_of(devices: Sequence[Device], cache: dict | None) -> dict[int, CounterPool]:
    """:func:`counter_pools`, cached per device list in ``cache`` (none: nothing consumes counters)."""
    if cache is None:
        return counter_pools(devices)
    key = (id(devices), "pools")
    got = cache.get(key)
    if got is None:
        got = cache[key] = counter_pools(devices)
    return got


def available_counters(
    cp: CounterPool, in_use: Iterable[DeviceID], consumed: Consumed | None
) -> dict[tuple[str, str], int]:
    """(counter set, counter) -> what is left of it once the pool's allocated devices (``in_use``:
    exclusive allocations, the snapshot's and in-flight ones; ``consumed``: shared devices with a
    share allocated) have taken theirs; may be negative. Consumption of a set or counter the pool
    does not define is ignored (``checkAvailableCounters``)."""
    have = {(cset, c): v for cset, values in cp.sets.items() for c, v in values.items()}
    for d in cp.users:
        if d.id in in_use or (consumed and d.id in consumed):
            for cset, amounts in d.counters:
                for c, v in amounts:
                    if (cset, c) in have:
                        have[(cset, c)] -= v
    return have


def counters_fit_alone(d: Device, in_use: Iterable[DeviceID], consumed: Consumed | None) -> bool:
    """Whether ``d`` alone fits its pool's counters after the allocated devices' consumption."""
    if not d.counters or d.counter_pool is None:
        return True
    if d.allow_multiple and consumed and d.id in consumed:
        return True
    have = available_counters(d.counter_pool, in_use, consumed)
    need: dict[tuple[str, str], int] = {}
    for cset, amounts in d.counters:
        for c, v in amounts:
            need[(cset, c)] = need.get((cset, c), 0) + v
    return all(v >= need.get(key, 0) for key, v in have.items())
