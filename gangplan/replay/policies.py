"""Replay policies: a KubeSchedulerConfiguration profile each, and the FGD paper's scorers as
gangplan score plugins (registered through :func:`gangplan.solver.greedy.plugins.register` while a replay builds its
profiles, :func:`registered`).

The two paper scorers follow hkust-adsl/kubernetes-scheduler-simulator (commit read through the
search index, ``pkg/simulator/plugin/best_fit_score.go``, ``fgd_score.go``, ``pkg/utils/frag.go``):

* **BestFit** (``FGDBestFit``): ``(1 - sum_i w_i (free_i - req_i) / maxSpec_i) * 100`` over cpu
  (maxSpec 128000 milli) and GPU (maxSpec 8000 milli), ``w = 0.5, 0.5``, truncated to an integer,
  then min-max normalised to 0..100 (their ``NormalizeScore``; all equal -> 0).
* **FGD** (``FGDFragmentation``): ``sigmoid((F(node) - F(node - pod)) / 1000) * 100``, no
  normalisation, where ``F`` is the node's GPU fragmentation against the *typical pods*
  (``NodeGpuShareFragAmountScore``): for each typical pod t of frequency p_t, the idle GPU milli
  of the node counts as fragment unless t fits (GPU model allowed, enough GPUs, enough cpu); when
  t fits, the GPUs with less than t's milli left count (none, with whole GPUs). Typical pods are
  ``GetTypicalPods`` with the defaults: GPU pods only, counted by (cpu, GPUs, GPU milli, model),
  sorted by count, the most popular kept in steps of 10 kinds until they cover 60 % of the pods,
  frequencies renormalised.

Both read whole GPUs: a GPU-sharing pod (``gpu_milli < 1000``) is one whole GPU in this slice
(the summary's caveats say so), so FGD's per-GPU milli bookkeeping collapses to GPU counts.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from gangplan.models.objects import CPU, DEFAULT_SCORE_WEIGHTS, MEMORY, SchedulerProfile
from gangplan.models.well_known import GPU, GPU_PRODUCT
from gangplan.solver.greedy.plugins import REGISTRY, Plugin, register, unregister

BEST_FIT = "FGDBestFit"
FGD = "FGDFragmentation"
RANDOM = "FGDRandom"
PACKING = "FGDGpuPacking"
MAX_SPEC_CPU = 128_000
MAX_SPEC_GPU = 8_000
TYPICAL_THRESHOLD = 60
TYPICAL_STEP = 10


@dataclass(frozen=True)
class TypicalPod:
    cpu_milli: int
    gpu: int
    models: tuple[str, ...]
    freq: float


def typical_pods(shapes: list[tuple[int, int, int, tuple[str, ...]]]) -> list[TypicalPod]:
    """``GetTypicalPods`` over (cpu milli, GPUs, GPU milli, models) of every pod of the workload.
    Ties in count are ordered by shape (Go sorts a map's entries, whose order is random)."""
    counts = Counter(s for s in shapes if s[1] > 0)
    total = sum(counts.values())
    if not total:
        return []
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    expected = TYPICAL_THRESHOLD * total / 100.0
    i, kinds, cum = 0, 0, 0.0
    while cum < expected:
        kinds += TYPICAL_STEP
        while i < kinds and i < len(ordered):
            cum += ordered[i][1]
            i += 1
        if i >= len(ordered):
            break
    kept = ordered[:i]
    s = sum(c for _, c in kept)
    return [TypicalPod(cpu, gpu, models, c / s) for (cpu, gpu, _milli, models), c in kept]


def _gpu_col(snap) -> int | None:
    return snap.res_index.get(GPU)


class BestFitScore(Plugin):
    """The FGD simulator's BestFit (see the module docstring)."""

    name = BEST_FIT

    def score(self, cs, pod, snap, feasible):
        g = _gpu_col(snap)
        c = snap.res_index[CPU]
        free_cpu = snap.free[feasible, c].astype(np.float64)
        free_gpu = snap.free[feasible, g].astype(np.float64) * 1000 if g is not None else np.zeros(len(feasible))
        req_cpu = pod.requests.get(CPU, 0)
        req_gpu = pod.requests.get(GPU, 0) * 1000
        s = (free_cpu - req_cpu) / MAX_SPEC_CPU * 0.5 + (free_gpu - req_gpu) / MAX_SPEC_GPU * 0.5
        return np.trunc((1.0 - s) * 100).astype(np.int64)

    def normalize(self, cs, pod, snap, feasible, scores):
        if len(scores) == 0:
            return scores
        lo, hi = int(scores.min()), int(scores.max())
        if hi == lo:
            return np.zeros(len(scores), dtype=np.int64)
        return (scores - lo) * 100 // (hi - lo)


class FGDScore(Plugin):
    """The FGD simulator's fragmentation-gradient scorer (see the module docstring). The
    typical pods are set by the replay (:func:`configure`) before the first cycle."""

    name = FGD
    typical: list[TypicalPod] = []

    def _access(self, snap) -> np.ndarray:
        """(typical pods x nodes): the node's GPU model is one the typical pod allows."""

        def build():
            codes, values, _ = snap.label_codes(GPU_PRODUCT)
            out = np.ones((len(self.typical), snap.n), dtype=bool)
            for k, t in enumerate(self.typical):
                if t.models:
                    allowed = np.array([v in t.models for v in values] + [False], dtype=bool)
                    out[k] = allowed[codes]
            return out

        return snap.static_array(("fgd-access", id(self)), build)

    def frag(self, snap, idx: np.ndarray, free_cpu: np.ndarray, free_gpu: np.ndarray) -> np.ndarray:
        """``NodeGpuShareFragAmountScore`` of the nodes ``idx`` in the state (free cpu, GPUs)."""
        if not self.typical:
            return np.zeros(len(idx))
        cpu = np.array([t.cpu_milli for t in self.typical])[:, None]
        gpu = np.array([t.gpu for t in self.typical])[:, None]
        freq = np.array([t.freq for t in self.typical])[:, None]
        fits = (gpu <= free_gpu[None, :]) & (cpu <= free_cpu[None, :]) & self._access(snap)[:, idx]
        return ((~fits) * freq).sum(axis=0) * free_gpu * 1000.0

    def score(self, cs, pod, snap, feasible):
        g = _gpu_col(snap)
        if g is None or not pod.requests:
            return np.full(len(feasible), 100, dtype=np.int64)
        c = snap.res_index[CPU]
        cpu, gpu = snap.free[feasible, c], snap.free[feasible, g]
        before = self.frag(snap, feasible, cpu, gpu)
        after = self.frag(snap, feasible, cpu - pod.requests.get(CPU, 0), gpu - pod.requests.get(GPU, 0))
        return (100.0 / (1.0 + np.exp(-(before - after) / 1000.0))).astype(np.int64)


class RandomScore(Plugin):
    """The FGD simulator's RandomScore (``random_score.go``): PreScore draws one feasible node
    uniformly, Score gives it 100 and every other node 0. The replay seeds :attr:`rng`."""

    name = RANDOM

    def __init__(self, cluster, profile) -> None:
        super().__init__(cluster, profile)
        self.rng = random.Random(0)

    def score(self, cs, pod, snap, feasible):
        out = np.zeros(len(feasible), dtype=np.int64)
        if len(feasible):
            out[self.rng.randrange(len(feasible))] = 100
        return out


class GpuPackingScore(Plugin):
    """The FGD simulator's GpuPackingScore (``gpu_packing_score.go``), on whole GPUs (every free
    GPU is fully free): a node with all its GPUs free scores ``max(33 - free, free)``; otherwise a
    GPU pod scores ``max(50 - GPUs asked, 33)`` and a pod without GPUs 100. No normalisation."""

    name = PACKING

    def score(self, cs, pod, snap, feasible):
        g = _gpu_col(snap)
        if g is None:
            return np.full(len(feasible), 33, dtype=np.int64)
        free, total = snap.free[feasible, g], snap.alloc[feasible, g]
        req = pod.requests.get(GPU, 0)
        used_node = np.full(len(feasible), max(50 - req, 33) if req else 100, dtype=np.int64)
        return np.where(free == total, np.maximum(33 - free, free), used_node).astype(np.int64)


PAPER_PLUGINS = (BestFitScore, FGDScore, RandomScore, GpuPackingScore)


@contextmanager
def registered() -> Iterator[None]:
    """The paper scorers in the plugin registry (:func:`register`) while the block runs: a
    replay builds its profiles inside it, and the registry is left as it was (the in-tree
    registry stays the one upstream names, ``tests/test_plugin_points.py``)."""
    added = []
    try:
        for cls in PAPER_PLUGINS:
            if REGISTRY.get(cls.name) is not cls:
                register(cls)
                added.append(cls.name)
        yield
    finally:
        for name in added:
            unregister(name)


POLICIES = ("default", "mostallocated", "bestfit", "fgd", "random", "packing")


def policy_profile(policy: str) -> SchedulerProfile:
    """The KubeSchedulerConfiguration profile of a named policy."""
    if policy == "default":
        return SchedulerProfile(source="replay:default")
    if policy == "mostallocated":
        return SchedulerProfile(fit_strategy="MostAllocated", fit_resources={CPU: 1, MEMORY: 1, GPU: 1}, score_weights=dict(DEFAULT_SCORE_WEIGHTS), source="replay:mostallocated")
    if policy == "bestfit":
        return SchedulerProfile(score_weights={BEST_FIT: 1}, percentage_of_nodes_to_score=100, source="replay:bestfit")
    if policy == "fgd":
        return SchedulerProfile(score_weights={FGD: 1}, percentage_of_nodes_to_score=100, source="replay:fgd")
    if policy == "random":
        return SchedulerProfile(score_weights={RANDOM: 1}, percentage_of_nodes_to_score=100, source="replay:random")
    if policy == "packing":
        return SchedulerProfile(score_weights={PACKING: 1}, percentage_of_nodes_to_score=100, source="replay:packing")
    raise ValueError(f"unknown policy {policy!r} (known: {', '.join(POLICIES)})")


__all__ = ["BEST_FIT", "FGD", "PACKING", "POLICIES", "RANDOM", "BestFitScore", "FGDScore", "GpuPackingScore", "RandomScore", "registered", "TypicalPod", "policy_profile", "typical_pods"]
