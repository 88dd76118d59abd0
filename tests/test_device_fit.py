"""One GPU fit rule (issue 38): :mod:`gangplan.predicates.devices` decides whether a request of
``count`` devices x ``amount`` fits, for the replay's device table and for DRA consumable capacity
alike; the replay's necessary test (:meth:`GpuDevices.slots`) never refuses what that rule fits."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from gangplan.dra.allocator import allocate_results
from gangplan.dra.consumable import fits
from gangplan.dra.model import Device, DeviceClass, DeviceRequest
from gangplan.models.well_known import GPU
from gangplan.predicates.devices import devices_fit, requests_held, share_fits, shares_held
from gangplan.replay.gpushare import GpuRequest, devices_of
from gangplan.solver.greedy.snapshot import NodeTable
from gangplan.solver.greedy.testing import make_cluster, make_node

DRIVER = "gpu.example.com"
CAP = (DRIVER, "milli")
CLASSES = {"gpu": DeviceClass(name="gpu", selectors=(f'device.driver == "{DRIVER}"',))}


def dra_device(d: int) -> Device:
    """A GPU as the shadow epochs write it: one capacity of 1000 milli, shareable."""
    return Device(
        driver=DRIVER,
        pool="node-a",
        slice="node-a-gpus",
        name=f"gpu-{d}",
        capacity={DRIVER: {"milli": 1000}},
        allow_multiple=True,
    )


def replay_devices(free: list[int]):
    """The replay's device table of one node with ``free`` milli left on each GPU."""
    snap = NodeTable(make_cluster([make_node("a", cpu=64000, extra={GPU: len(free)})]))
    dev = devices_of(snap)
    dev.free[0, : len(free)] = free
    return dev


def test_the_rule():
    assert share_fits(500, 500) and not share_fits(499, 500)
    left = np.array([[600, 600, 0], [1000, 300, 0]])
    assert devices_fit(left, 2, 500).tolist() == [True, False]
    assert shares_held(-10, 100) == 0 and shares_held(250, 100) == 2
    assert requests_held(left, 1, 300).tolist() == [4, 4]


def test_several_partial_devices_pass_the_necessary_test():
    """Two devices with 500 milli left each fit one pod of two devices x 500 milli: the
    necessary test counts the shares, not only the fully free devices."""
    dev = replay_devices([500, 500])
    req = GpuRequest(2, 500)
    assert dev.fits(np.array([0]), req).tolist() == [True]
    assert dev.slots(req).tolist() == [1]
    assert dev.first_fit(0, req) == (0, 1)


@given(
    free=st.lists(st.integers(0, 20).map(lambda k: 50 * k), min_size=1, max_size=6),
    count=st.integers(1, 4),
    milli=st.integers(1, 20).map(lambda k: 50 * k),
)
def test_the_replay_and_the_dra_allocator_agree(free, count, milli):
    """On one node, the replay's device table and the structured allocator on the same GPUs as
    DRA devices (consumed = 1000 - free) give the same verdict, and the necessary test never
    refuses a request that fits."""
    dev = replay_devices(free)
    replay = bool(dev.fits(np.array([0]), GpuRequest(count, milli))[0])
    devices = [dra_device(d) for d in range(len(free))]
    consumed = {d.id: {CAP: 1000 - f} for d, f in zip(devices, free, strict=True) if f < 1000}
    request = DeviceRequest("gpu", "gpu", count=count, capacity=(("milli", milli),))
    dra = allocate_results([("claim", (request,))], devices, set(), CLASSES, consumed) is not None
    assert replay == dra
    assert all(
        share_fits(f, milli) == fits(d, {CAP: milli}, consumed.get(d.id))
        for d, f in zip(devices, free, strict=True)
    )
    if replay:
        assert dev.slots(GpuRequest(count, milli))[0] >= 1
