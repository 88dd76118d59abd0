"""The FGD fragmentation of a node against a mix of pod shapes: the one rule that the replay's
meter (:class:`gangplan.replay.frag.FragMeter`) and ``gangplan inspect``'s fragmentation section
(:mod:`gangplan.fragmentation`) both call.

The definitions are the FGD simulator's (hkust-adsl/kubernetes-scheduler-simulator @29a1e4c,
``pkg/utils/frag.go``):

* the **mix** (``TargetPodList``): pod shapes (non-zero cpu milli, GPUs, GPU milli per GPU, GPU
  models allowed) with frequencies, normalised here to sum to 1 (``GetTypicalPods`` returns them
  so; :func:`shape_mix` divides by their sum);
* a node's **fragment** (``NodeGpuShareFragAmount`` summed by ``FragAmountSumExceptQ3``): per
  shape t of frequency p, if t fits the node (``GetNodePodFrag`` = ``Q3Satisfied``: the node's
  GPU model allowed, ``count`` distinct devices each with t's milli free, enough cpu left) the
  idle milli on the devices with less than t's milli free
  (``GetGpuFragMilliByNodeResAndPodRes``), otherwise (``Q1LackBoth``, ``Q2LackGpu``,
  ``Q4LackCpu``, ``NoAccess``, and a shape without GPU: ``XLSatisfied`` / ``XRLackCPU``) all
  the node's idle GPU milli (``GetGpuMilliLeftTotal``); times p, summed over the shapes;
* a node's **stranded** milli: all its idle GPU milli when no shape with GPUs fits it at all, else
  0 (``NodeGpuFragBasedOnSkyline``'s rule, applied to the mix's GPU shapes instead of the
  skyline pods). With no GPU shape in the mix every idle milli is stranded.

"Fits" is the one GPU fit rule of :mod:`gangplan.predicates.devices` (:func:`share_fits`). The
FGD scorer (:class:`gangplan.replay.policies.FGDScore`) computes the same fragment per node, in
an arrangement grouped by milli for speed; tests/test_replay_frag.py holds the two equal.

A node is a row of ``free`` (free milli per device, 0 past the node's devices), its free cpu
milli, and its GPU model as a code into the ``model_values`` the mix was built with (-1: no
model label, which a shape naming models never accepts).

>>> from collections import namedtuple
>>> T = namedtuple("T", "cpu_milli gpu gpu_milli models freq")
>>> mix = shape_mix([T(1000, 1, 500, (), 1.0), T(1000, 1, 1000, (), 1.0)], [])
>>> f, s = node_fragment(mix, np.array([[700, 1000], [300, 0]]), np.array([8000, 8000]),
...                      np.array([-1, -1]))
>>> f.tolist(), s.tolist()
([350.0, 300.0], [0, 300])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from gangplan.predicates.devices import share_fits


class PodShape(Protocol):
    """One entry of a mix: the FGD simulator's ``TargetPod`` (``PodResource`` and percentage)."""

    @property
    def cpu_milli(self) -> int: ...
    @property
    def gpu(self) -> int: ...
    @property
    def gpu_milli(self) -> int: ...
    @property
    def models(self) -> tuple[str, ...]: ...
    @property
    def freq(self) -> float: ...


@dataclass(frozen=True, eq=False)
class ShapeMix:
    """A mix of pod shapes as arrays: the shapes with GPUs (``milli``, ``count``, ``cpu``,
    ``freq`` normalised over every shape, ``access``: shape x model code, the last column a node
    without model label) and ``cpu_freq``, the share of the shapes without GPU."""

    milli: np.ndarray
    count: np.ndarray
    cpu: np.ndarray
    freq: np.ndarray
    access: np.ndarray
    cpu_freq: float


def shape_mix(shapes: Sequence[PodShape], model_values: Sequence[str]) -> ShapeMix:
    """The arrays of ``shapes`` for nodes whose GPU model codes index ``model_values``."""
    gpu_t = [t for t in shapes if t.gpu > 0 and t.gpu_milli > 0]
    total_freq = float(sum(t.freq for t in shapes)) or 1.0
    cpu_freq = sum(t.freq for t in shapes if not (t.gpu > 0 and t.gpu_milli > 0)) / total_freq
    access = np.ones((len(gpu_t), len(model_values) + 1), dtype=bool)
    for k, t in enumerate(gpu_t):
        if t.models:
            access[k] = [v in t.models for v in model_values] + [False]
    return ShapeMix(
        milli=np.array([t.gpu_milli for t in gpu_t], dtype=np.int64),
        count=np.array([t.gpu for t in gpu_t], dtype=np.int64),
        cpu=np.array([t.cpu_milli for t in gpu_t], dtype=np.int64),
        freq=np.array([t.freq for t in gpu_t], dtype=np.float64) / total_freq,
        access=access,
        cpu_freq=cpu_freq,
    )


def node_fragment(
    mix: ShapeMix, free: np.ndarray, cpu: np.ndarray, codes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per node (rows of ``free``; ``cpu`` its free cpu milli, ``codes`` its GPU model code):
    the fragment milli (float) and the stranded milli (int), as the module docstring defines
    them."""
    total = free.sum(axis=1)
    if len(mix.milli):
        ge = share_fits(free[None, :, :], mix.milli[:, None, None])  # shape x node x device
        sat = (
            (ge.sum(axis=2) >= mix.count[:, None])
            & (cpu[None, :] >= mix.cpu[:, None])
            & mix.access[:, codes]
        )
        small = np.where(ge, 0, free[None, :, :]).sum(axis=2)  # milli on devices short of t's
        per_t = np.where(sat, small, total[None, :])
        frag = (mix.freq[:, None] * per_t).sum(axis=0) + mix.cpu_freq * total
        any_fit = sat.any(axis=0)
    else:
        frag = mix.cpu_freq * total.astype(np.float64)
        any_fit = np.zeros(len(total), dtype=bool)
    return frag, np.where(any_fit, 0, total)


__all__ = ["PodShape", "ShapeMix", "node_fragment", "shape_mix"]
