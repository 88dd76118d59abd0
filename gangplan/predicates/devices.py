"""Whether a device request fits: the one rule for a GPU (or any device with a consumable
capacity), whichever model holds the device.

The rule is KEP-5075's consumable capacity as the structured allocator checks it
(``allocateDevice`` / ``cmpRequestOverCapacity`` of ``staging/src/k8s.io/dynamic-resource-allocation/
structured/internal/incubating/allocator_incubating.go``, kubernetes/kubernetes v1.36): a device
takes a share of ``amount`` of one of its capacities when what is already consumed of that
capacity (the snapshot's shares and this allocation's) plus ``amount`` stays within its value,
i.e. when ``amount <= left``. A request of ``count`` devices takes ``count`` *distinct* devices
(``allocateOne`` never gives one request a device twice), each taking the share.

Who reads it:

* the DRA allocator and its checks (:func:`gangplan.dra.consumable.fits`: every capacity of a
  device; :mod:`gangplan.dra.device_counts`: the exact engine's consumable-capacity rows;
  :mod:`gangplan.dra.node_check`: the validator's recount);
* the replay's device table (:class:`gangplan.replay.gpushare.GpuDevices`: a node's GPUs as
  devices of one capacity of 1000 milli), its GPU-share filter, the FGD scorers and the
  fragmentation meter (:mod:`gangplan.replay.policies`, :mod:`gangplan.replay.frag`).

Whole GPUs (``nvidia.com/gpu`` served by a device plugin, checked by NodeResourcesFit through
:func:`gangplan.predicates.resources.insufficient`) are the case ``amount`` = the whole value:
each device is free or not, and ``g`` devices fit exactly when ``g`` is at most the node's free
GPUs. docs/explanation/gpus.md says where the three models of a GPU meet and where they differ.

Every function takes Python integers or numpy arrays (a node's devices along the last axis).

>>> share_fits(600, 500), share_fits(400, 500)
(True, False)
>>> import numpy as np
>>> left = np.array([[600, 600, 0], [1000, 300, 0]])
>>> devices_fit(left, 2, 500).tolist(), devices_fit(left, 1, 1000).tolist()
([True, False], [False, True])
>>> shares_held(np.array([1000, 300, -50]), 250).tolist(), requests_held(left, 2, 500).tolist()
([4, 1, 0], [1, 1])
"""

from __future__ import annotations

import numpy as np


def share_fits(left, amount):
    """Whether a device with ``left`` of a capacity still unconsumed takes a share of ``amount``
    of it: ``amount <= left`` (elementwise on arrays)."""
    return amount <= left


def devices_fit(left, count, amount):
    """Whether at least ``count`` distinct devices each take a share of ``amount``: per row of
    ``left`` (a node's devices along the last axis)."""
    return np.sum(share_fits(left, amount), axis=-1) >= count


def shares_held(left, amount):
    """How many more shares of ``amount`` a device with ``left`` could take (none when its
    capacity is already over-consumed)."""
    if isinstance(left, np.ndarray):
        return np.maximum(left, 0) // amount
    return max(left, 0) // amount


def requests_held(left, count, amount):
    """An upper bound on how many more requests of ``count`` devices x ``amount`` a node could
    take (per row of ``left``): every request takes ``count`` shares. Exact for one device per
    request, and for whole devices (``amount`` the value of every device)."""
    return np.sum(shares_held(left, amount), axis=-1) // count


__all__ = ["devices_fit", "requests_held", "share_fits", "shares_held"]
