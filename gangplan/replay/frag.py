"""Fragmentation and stranded GPUs of a fill's cluster state, with the FGD simulator's definitions
(hkust-adsl/kubernetes-scheduler-simulator @29a1e4c, ``pkg/utils/frag.go``
``NodeGpuShareFragAmount`` / ``FragAmountSumExceptQ3``, and ``pkg/simulator/analysis.go``
``ClusterGpuFragReport``):

* **fragment** of a node against the typical pods (:func:`gangplan.replay.policies.typical_pods`,
  frequencies summing to 1): per typical pod t of frequency p, if t fits the node (``Q3Satisfied``:
  its GPU model allowed, ``count`` devices with t's milli free, enough cpu) the idle milli on the
  devices with less than t's milli free, else (``Q1`` / ``Q2`` / ``Q4`` / no access, and every
  typical pod without GPU: ``XL`` / ``XR``) all the node's idle GPU milli, times p. The cluster's
  ``frag_gpu_milli`` is the sum over nodes: the expected idle GPU milli the next typical pod
  could not use. (The same F as the FGD scorer, :class:`gangplan.replay.policies.FGDScore`.)
* **fragmentation rate** (``Frag ratio`` in ``ClusterGpuFragReport``): ``100 * frag / idle``
  GPU milli (idle: every unallocated milli, the sum of all the classes); its **share of the
  cluster**: ``100 * frag / capacity``.
* **stranded GPUs** (gangplan's; the simulator's skyline report, ``NodeGpuFragBasedOnSkyline``,
  is the same rule over its skyline pods): the idle GPU milli on nodes where no typical pod
  with GPUs fits at all (by GPU model, devices or cpu): capacity that none of the workload's
  common GPU shapes can use in the state reached. With no typical GPU pod every idle milli is
  stranded.

The per-node rule (fragment and stranded milli of one node state against the typical pods) is
written once, :func:`gangplan.predicates.fragment.node_fragment`, which ``gangplan inspect``
calls too. :class:`FragMeter` keeps the per-node values and recomputes only nodes whose state changed
(``GpuDevices.version``), so a fill samples them after every job at the cost of one node.
"""

from __future__ import annotations

import numpy as np

from gangplan.predicates.fragment import node_fragment, shape_mix
from gangplan.replay.gpushare import GpuDevices
from gangplan.replay.policies import TypicalPod


class FragMeter:
    """Cluster fragmentation and stranded GPU milli of ``dev``'s state (module docstring); the
    per-node rule is :func:`gangplan.predicates.fragment.node_fragment`."""

    def __init__(self, dev: GpuDevices, typical: list[TypicalPod]) -> None:
        self.dev = dev
        self.mix = shape_mix(typical, dev.model_values)
        n = dev.snap.n
        self.frag_node = np.zeros(n)
        self.stranded_node = np.zeros(n, dtype=np.int64)
        self.seen = np.full(n, -1, dtype=np.int64)

    def _compute(self, idx: np.ndarray) -> None:
        dev = self.dev
        frag, stranded = node_fragment(
            self.mix, dev.free[idx], dev.cpu_left(idx), dev.model_codes[idx]
        )
        self.frag_node[idx] = frag
        self.stranded_node[idx] = stranded
        self.seen[idx] = dev.version[idx]

    def sample(self) -> tuple[float, int, int]:
        """(frag GPU milli, stranded GPU milli, idle GPU milli) of the current state."""
        stale = np.nonzero(self.seen != self.dev.version)[0]
        if len(stale):
            self._compute(stale)
        idle = self.dev.capacity_milli - self.dev.used_milli
        return float(self.frag_node.sum()), int(self.stranded_node.sum()), int(idle)


def at_arrived(
    arrived: list[int], values: list[float], capacity_milli: int, top: int
) -> list[float]:
    """For k = 1..top: the value of the last sample whose arrived GPU milli is at most k % of
    the capacity (``arrived`` / ``values``: the samples, the one before the first job included)."""
    out: list[float] = []
    j, state = 0, values[0] if values else 0.0
    for k in range(1, top + 1):
        while j < len(arrived) and arrived[j] * 100 <= k * capacity_milli:
            state = values[j]
            j += 1
        out.append(state)
    return out


__all__ = ["FragMeter", "at_arrived"]
