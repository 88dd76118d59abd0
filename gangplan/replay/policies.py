"""Replay policies: a KubeSchedulerConfiguration profile each, and the FGD paper's six scorers as
gangplan score plugins, in the replay's own plugin registry (:data:`REPLAY_REGISTRY`: the in-tree
registry merged with them and the GPU-share filter, passed to the greedy session as upstream's
simulators pass ``app.WithPlugin``; the in-tree registry is never changed).

Every scorer follows hkust-adsl/kubernetes-scheduler-simulator @8f3d641 (``pkg/simulator/plugin/``,
``pkg/utils/``, ``pkg/type/resource.go``) on the per-device state of
:mod:`gangplan.replay.gpushare` (free milli per GPU; the one fit rule lives there). A pod's
``MilliCpu`` there is its non-zero cpu request (``GetPodResource``, 100m for 0); a node's free
cpu is allocatable minus requests.

* **BestFit** (``best_fit_score.go``): ``(1 - sum_i w_i (free_i - req_i) / maxSpec_i) * 100`` over
  cpu (maxSpec 128000) and total GPU milli (8000), ``w = 0.5, 0.5``, truncated, then min-max
  normalised (``NormalizeScore``, all equal -> 0).
* **FGD** (``fgd_score.go``, ``pkg/utils/frag.go``): ``int(sigmoid((F(node) - F(node + pod)) /
  1000) * 100)``, where ``F`` is ``NodeGpuShareFragAmountScore`` against the typical pods: per
  typical pod t of frequency p_t, the node's idle GPU milli counts as fragment unless t is
  satisfied (model allowed, ``count`` devices with t's milli free, enough cpu); a satisfied t
  counts only the devices with less than t's milli left; a typical pod without GPU counts all
  idle milli (its XL / XR classes are fragment too). A shared pod is tried on every device that
  fits and scores its best device (that device is the one it gets, first index on ties); other
  pods are placed as ``NodeResource.Sub`` (best fit). Scores are cached per pod shape and node
  state version (the simulator memoises ``F`` by node state, ``fragMemo``).
* **GpuPacking** (``gpu_packing_score.go``): a pod without GPU scores 0; a node with every GPU
  free ``max(33 - free GPUs, free GPUs)``; a pod that would use fully free GPUs (best-fit order)
  ``max(50 - those, 33)``; else ``max(100 - (sum of the chosen GPUs' free percent) / 10, 50)``.
* **DotProd** (``dot_product_score.go`` with the experiment's ``dimExtMethod: merge``,
  ``normMethod: max``): ``int(100 * (1 - (cpuLeft/128000 * cpu/128000 + gpuLeft/8000 *
  gpu/8000) / 2))``, 0 where cpu does not fit; GPUs chosen best fit.
* **GpuClustering** (``gpu_clustering_score.go``): by the node's GPU affinities (pods per
  ``share-gpu`` / ``k-gpu`` class): only the pod's class ``75 +``, several including it ``50 +``,
  none ``25 +``, others ``0 +``, plus ``25 * (8000 - gpuLeft) / 8000`` (integers); 0 for a pod
  without GPU.
* **Random** (``random_score.go``): one feasible node drawn uniformly scores 100, the others 0.

Typical pods are ``GetTypicalPods`` with the experiment's ``typicalPodsConfig``
(``scripts/generate_config_and_run.py``): CPU pods included, popularity threshold 95 %, step 1.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

import numpy as np

from gangplan.models.objects import CPU, DEFAULT_FILTER_PLUGINS, MEMORY, SchedulerProfile
from gangplan.predicates.devices import share_fits
from gangplan.replay.gpushare import (
    GPU_SHARE,
    MILLI,
    GpuDevices,
    GpuRequest,
    GpuShareFilter,
    devices_of,
    request_of,
)
from gangplan.solver.greedy import REGISTRY, Plugin, Registry

BEST_FIT = "FGDBestFit"
FGD = "FGDFragmentation"
RANDOM = "FGDRandom"
PACKING = "FGDGpuPacking"
DOT_PRODUCT = "FGDDotProduct"
CLUSTERING = "FGDGpuClustering"
MAX_SPEC_CPU = 128_000
MAX_SPEC_GPU = 8_000
TYPICAL_THRESHOLD = 95
TYPICAL_STEP = 1


@dataclass(frozen=True)
class TypicalPod:
    cpu_milli: int
    gpu: int
    gpu_milli: int
    models: tuple[str, ...]
    freq: float


def typical_pods(
    shapes: list[tuple[int, int, int, tuple[str, ...]]],
    *,
    threshold: int = TYPICAL_THRESHOLD,
    step: int = TYPICAL_STEP,
) -> list[TypicalPod]:
    """``GetTypicalPods`` over (non-zero cpu milli, GPUs, GPU milli, models) of every pod of the
    workload (CPU pods included). Kinds are sorted by count, ties by the reverse of
    ``PodResource.Less`` (cpu, then milli, then GPUs, then the model string, larger first); kinds
    are taken ``step`` at a time until they cover ``threshold`` % of the pods, then renormalised."""
    counts = Counter(
        (cpu, milli if gpu else 0, gpu, "|".join(models) if gpu else "")
        for cpu, gpu, milli, models in shapes
    )
    total = sum(counts.values())
    if not total:
        return []
    ordered = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    expected = threshold * total / 100.0
    i, kinds, cum = 0, 0, 0.0
    while cum < expected and i < len(ordered):
        kinds += step
        while i < kinds and i < len(ordered):
            cum += ordered[i][1]
            i += 1
    kept = ordered[:i]
    s = sum(c for _, c in kept)
    return [
        TypicalPod(cpu, gpu, milli, tuple(m for m in spec.split("|") if m), c / s)
        for (cpu, milli, gpu, spec), c in kept
    ]


def _cpu(pod) -> int:
    return int(pod.nonzero_requests.get(CPU, 100))


def sub_devices(free: np.ndarray, req: GpuRequest) -> np.ndarray:
    """Per row of ``free`` (nodes x devices), the mask of the devices ``NodeResource.Sub`` takes
    for ``req``: in ascending order of free milli (stable), the first ``count`` that fit."""
    if req.count == 0 or req.milli == 0:
        return np.zeros(free.shape, dtype=bool)
    order = np.argsort(free, axis=1, kind="stable")
    srt = np.take_along_axis(free, order, axis=1)
    fit = share_fits(srt, req.milli)
    pick_sorted = fit & (np.cumsum(fit, axis=1) <= req.count)
    out = np.zeros(free.shape, dtype=bool)
    np.put_along_axis(out, order, pick_sorted, axis=1)
    return out


class BestFitScore(Plugin):
    """The FGD simulator's BestFit (see the module docstring)."""

    name = BEST_FIT

    def score(self, cs, pod, snap, feasible):
        dev = devices_of(snap)
        req = request_of(pod)
        s = (dev.cpu_left(feasible) - _cpu(pod)) / MAX_SPEC_CPU * 0.5
        s = s + (dev.total_left(feasible) - req.total) / MAX_SPEC_GPU * 0.5
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
    typical pods are set by the replay (:attr:`typical`) before the first cycle."""

    name = FGD
    typical: list[TypicalPod] = []

    def __init__(self, cluster, profile) -> None:
        super().__init__(cluster, profile)
        self._tables_for: tuple | None = None
        self._cache: dict[tuple, list[np.ndarray]] = {}
        self._before: tuple[np.ndarray, np.ndarray] | None = None

    # ---- F over a batch of node states --------------------------------------------------------
    def _tables(self, dev: GpuDevices):
        key = (id(dev), tuple(self.typical))
        if self._tables_for is None or self._tables_for[0] != key:
            gpu_t = [t for t in self.typical if t.gpu > 0 and t.gpu_milli > 0]
            mills = sorted({t.gpu_milli for t in gpu_t})
            jt = np.array([mills.index(t.gpu_milli) for t in gpu_t], dtype=np.int64)
            values = dev.model_values
            access = np.ones(
                (len(gpu_t), len(values) + 1), dtype=bool
            )  # last column: no model label
            for k, t in enumerate(gpu_t):
                if t.models:
                    access[k] = [v in t.models for v in values] + [False]
            tab = (
                np.array(mills, dtype=np.int64),
                jt,
                np.array([t.gpu for t in gpu_t], dtype=np.int64),
                np.array([t.cpu_milli for t in gpu_t], dtype=np.int64),
                np.array([t.freq for t in gpu_t], dtype=np.float64),
                access,
                float(sum(t.freq for t in self.typical)),
            )
            self._tables_for = (key, tab)
            self._cache = {}
            self._before = None
        return self._tables_for[1]

    def frag(
        self, dev: GpuDevices, free: np.ndarray, cpu: np.ndarray, codes: np.ndarray
    ) -> np.ndarray:
        """``NodeGpuShareFragAmountScore`` of node states (rows of ``free``, free cpu, model
        codes of ``snap.label_codes``)."""
        mills, jt, num, tcpu, freq, access, s_all = self._tables(dev)
        total = free.sum(axis=1).astype(np.float64)
        if len(num) == 0:
            return total * s_all
        ge = share_fits(free[None, :, :], mills[:, None, None])
        cnt = ge.sum(axis=2)
        fragsum = np.where(ge, 0, free[None, :, :]).sum(axis=2)
        sat = (cnt[jt] >= num[:, None]) & (cpu[None, :] >= tcpu[:, None]) & access[:, codes]
        return total * s_all - (freq[:, None] * sat * (total[None, :] - fragsum[jt])).sum(axis=0)

    def _f_before(self, dev: GpuDevices, idx: np.ndarray) -> np.ndarray:
        if self._before is None:
            self._before = (np.zeros(dev.snap.n), np.full(dev.snap.n, -1, dtype=np.int64))
        fb, seen = self._before
        stale = idx[seen[idx] != dev.version[idx]]
        if len(stale):
            fb[stale] = self.frag(dev, dev.free[stale], dev.cpu_left(stale), dev.model_codes[stale])
            seen[stale] = dev.version[stale]
        return fb[idx]

    def _entry(
        self, dev: GpuDevices, req: GpuRequest, cpu: int, idx: np.ndarray
    ) -> list[np.ndarray]:
        """Scores and chosen devices of the pod shape (req, cpu) on the nodes ``idx``, computed
        for the nodes whose state changed since the shape was last scored there."""
        self._tables(dev)
        key = (req, cpu)
        e = self._cache.get(key)
        n = dev.snap.n
        if e is None:
            e = [
                np.zeros(n, dtype=np.int64),
                np.full(n, -1, dtype=np.int64),
                np.full(n, -1, dtype=np.int64),
            ]
            self._cache[key] = e
        scores, choice, seen = e
        stale = idx[seen[idx] != dev.version[idx]]
        if len(stale):
            before = self._f_before(dev, stale)
            free = dev.free[stale]
            cpu_after = dev.cpu_left(stale) - cpu
            codes = dev.model_codes[stale]
            if req.shared:
                s, w = free.shape
                ok = share_fits(free, req.milli)
                rows, cols = np.nonzero(ok)
                after_free = free[rows].copy()
                after_free[np.arange(len(rows)), cols] -= req.milli
                after = self.frag(dev, after_free, cpu_after[rows], codes[rows])
                sc = self._sigmoid_score(before[rows] - after)
                grid = np.full((s, w), -1, dtype=np.int64)
                grid[rows, cols] = sc
                best = grid.argmax(axis=1)
                top = grid[np.arange(s), best]
                scores[stale] = np.where(top >= 0, top, 0)
                choice[stale] = np.where(top >= 0, best, -1)
            else:
                after_free = free - sub_devices(free, req) * req.milli
                scores[stale] = self._sigmoid_score(
                    before - self.frag(dev, after_free, cpu_after, codes)
                )
            seen[stale] = dev.version[stale]
        return e

    @staticmethod
    def _sigmoid_score(delta: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return ((1.0 / (1.0 + np.exp(-delta / 1000.0))) * 100.0).astype(np.int64)

    def score(self, cs, pod, snap, feasible):
        dev = devices_of(snap)
        return self._entry(dev, request_of(pod), _cpu(pod), feasible)[0][feasible]

    def choose(self, dev: GpuDevices, pod, i: int) -> tuple[int, ...]:
        """``allocateGpuIdBasedOnFGDScore``: the device of the best score for a shared pod; the
        lowest fully free devices otherwise (``AllocateExclusiveGpuId``)."""
        req = request_of(pod)
        if not req.shared:
            return dev.best_fit(i, req)
        d = int(self._entry(dev, req, _cpu(pod), np.array([i], dtype=np.int64))[1][i])
        return (d,) if d >= 0 else ()


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
    """The FGD simulator's GpuPackingScore (``gpu_packing_score.go``; see the module docstring)."""

    name = PACKING

    def score(self, cs, pod, snap, feasible):
        req = request_of(pod)
        if req.milli <= 0 or req.count == 0:
            return np.zeros(len(feasible), dtype=np.int64)
        dev = devices_of(snap)
        free = dev.free[feasible]
        ff = (free == MILLI).sum(axis=1)
        all_free = ff == dev.count[feasible]
        chosen = sub_devices(free, req)
        ff_use = (chosen & (free == MILLI)).sum(axis=1)
        pct = (np.where(chosen, free, 0) * 100 // MILLI).sum(axis=1)
        used = np.where(ff_use > 0, np.maximum(50 - ff_use, 33), np.maximum(100 - pct // 10, 50))
        return np.where(all_free, np.maximum(33 - ff, ff), used).astype(np.int64)


class DotProductScore(Plugin):
    """The FGD simulator's DotProductScore with ``merge`` / ``max`` (see the module docstring)."""

    name = DOT_PRODUCT

    def score(self, cs, pod, snap, feasible):
        dev = devices_of(snap)
        req = request_of(pod)
        cpu = _cpu(pod)
        cl = dev.cpu_left(feasible)
        dot = (cl / MAX_SPEC_CPU) * (cpu / MAX_SPEC_CPU) + (
            dev.total_left(feasible) / MAX_SPEC_GPU
        ) * (req.total / MAX_SPEC_GPU)
        s = (100.0 * (1 - dot / 2)).astype(np.int64)
        return np.where(cl >= cpu, s, 0)


class GpuClusteringScore(Plugin):
    """The FGD simulator's GpuClusteringScore (see the module docstring)."""

    name = CLUSTERING

    def score(self, cs, pod, snap, feasible):
        tag = request_of(pod).tag
        if tag < 0:
            return np.zeros(len(feasible), dtype=np.int64)
        dev = devices_of(snap)
        aff = dev.affinity[feasible]
        has = aff[:, tag] > 0
        kinds = (aff > 0).sum(axis=1)
        base = 25 * (MAX_SPEC_GPU - dev.total_left(feasible)) // MAX_SPEC_GPU
        offset = np.where(has, np.where(kinds == 1, 75, 50), np.where(kinds == 0, 25, 0))
        return (base + offset).astype(np.int64)


PAPER_PLUGINS = (
    BestFitScore,
    FGDScore,
    RandomScore,
    GpuPackingScore,
    DotProductScore,
    GpuClusteringScore,
    GpuShareFilter,
)


REPLAY_REGISTRY: Registry = REGISTRY.merged(*PAPER_PLUGINS)
"""The plugins a replay's profiles are built from: the in-tree ones, the paper's scorers and the
GPU-share filter (``tests/test_plugin_points.py`` keeps the in-tree registry the one upstream
names)."""


POLICIES = (
    "default",
    "mostallocated",
    "bestfit",
    "fgd",
    "random",
    "packing",
    "dotprod",
    "clustering",
)
PAPER_SCORERS = {
    "bestfit": BEST_FIT,
    "fgd": FGD,
    "random": RANDOM,
    "packing": PACKING,
    "dotprod": DOT_PRODUCT,
    "clustering": CLUSTERING,
}
GPU_SELECTION = {
    "default": "first",
    "mostallocated": "first",
    "bestfit": "best",
    "fgd": "fgd",
    "random": "random",
    "packing": "best",
    "dotprod": "best",
    "clustering": "best",
}
"""Which devices a placed pod gets, per policy (:data:`gangplan.replay.gpushare.SELECTION`)."""
TIE_BREAK = {p: "first" for p in PAPER_SCORERS} | {"default": "random", "mostallocated": "random"}
"""Equal totals: kube-scheduler's ``selectHost`` draws uniformly (``random``); the simulator's
kube-scheduler fork (``k8s.io/kubernetes => github.com/mental2008/kubernetes v1.20.5-minor``,
``vendor/k8s.io/kubernetes/pkg/scheduler/core/generic_scheduler.go``) takes the node of the
smallest name "for reproducibility", and its nodes are named with a random ``%04d-`` prefix
(``syncClusterResourceList``, ``rand.Perm``): the first node in a seeded random order
(``first``, on nodes ordered by that permutation in fill mode)."""
FILTERS = (*DEFAULT_FILTER_PLUGINS, GPU_SHARE)


@dataclass(frozen=True)
class Policy:
    """One replay policy: its name (the key in ``summary.json``), the profile the placer builds,
    how a placed pod's GPUs are chosen (:data:`GPU_SELECTION`) and how equal scores are broken
    (:data:`TIE_BREAK`); ``source``: the KubeSchedulerConfiguration file of a file policy."""

    name: str
    profile: SchedulerProfile
    selection: str
    tie_break: str
    source: str = ""
    warnings: tuple[str, ...] = ()


def builtin_policy(name: str) -> Policy:
    return Policy(name, policy_profile(name), GPU_SELECTION[name], TIE_BREAK[name])


def is_policy_file(text: str) -> bool:
    """A ``--policy`` entry naming a file rather than a built-in policy."""
    import os

    return text not in POLICIES and (
        text.endswith((".yaml", ".yml", ".json")) or os.sep in text or os.path.exists(text)
    )


def policy_from_file(path: str, taken: tuple[str, ...] = ()) -> Policy:
    """A KubeSchedulerConfiguration file as a replay policy (issue 22, item 4: "a configuration
    file"). Read by the snapshot loader (the same checks, defaults and warnings as a
    configuration inside a snapshot: :mod:`gangplan.io.config`); the file holds that one object
    (anything else is an error, not dropped). The replay's GPUs are devices shared by milli, so
    its GPU-share filter (:class:`gangplan.replay.gpushare.GpuShareFilter`) is added to the
    profile's filters; the paper's score plugins may be named (``FGDFragmentation``, ..) since
    they are in the replay's registry (:data:`REPLAY_REGISTRY`, which the loader is told). Ties are broken as kube-scheduler's
    ``selectHost`` (``random``); a pod's GPUs are chosen as the paper policy whose scorer the
    profile names (the first in :data:`PAPER_SCORERS` order), else first fit. Its name is the
    file's stem."""
    from pathlib import Path

    from gangplan.io.errors import SnapshotError
    from gangplan.io.loader import load_snapshot

    p = Path(path)
    if not p.is_file():
        raise SnapshotError(
            "<arguments>",
            f"unknown policy {path!r}: neither a built-in policy ({', '.join(POLICIES)}) nor a KubeSchedulerConfiguration file",
            field="--policy",
        )
    cluster = load_snapshot(p, plugins=REPLAY_REGISTRY.points())
    extra = len(cluster.nodes) + len(cluster.pods) + len(cluster.topologies)
    if extra:
        raise SnapshotError(
            str(p),
            f"a policy file holds one KubeSchedulerConfiguration; this one also has {extra} other objects (nodes, pods or topologies)",
            field="--policy",
        )
    prof = cluster.profile
    if not prof.source or not prof.source.startswith(str(p)):
        raise SnapshotError(
            str(p), "no KubeSchedulerConfiguration in the policy file", field="--policy"
        )
    name = p.stem
    if name in POLICIES or name in taken:
        raise SnapshotError(
            str(p),
            f"the policy's name (the file's stem) {name!r} is already taken: rename the file",
            field="--policy",
        )
    filters = (
        prof.filter_plugins
        if GPU_SHARE in prof.filter_plugins
        else (*prof.filter_plugins, GPU_SHARE)
    )
    prof = prof.model_copy(update={"filter_plugins": filters})
    selection = next(
        (GPU_SELECTION[k] for k, v in PAPER_SCORERS.items() if v in prof.score_weights), "first"
    )
    notes = list(cluster.warnings)
    ignored = sorted(r for r in prof.fit_resources if r not in (CPU, MEMORY))
    if ignored:
        notes.append(
            f"NodeResourcesFit scores {', '.join(ignored)}, which no replay pod requests (the replay's GPUs are devices shared by milli, "
            "not the nvidia.com/gpu extended resource): each scores as unused on every node, its weight diluting the others"
        )
    return Policy(name, prof, selection, "random", source=str(p), warnings=tuple(notes))


def resolve_policy(text: str, taken: tuple[str, ...] = ()) -> Policy:
    """A built-in policy by name, else a KubeSchedulerConfiguration file (:func:`policy_from_file`)."""
    return builtin_policy(text) if text in POLICIES else policy_from_file(text, taken)


def policy_profile(policy: str) -> SchedulerProfile:
    """The KubeSchedulerConfiguration profile of a named policy: upstream's filters plus the
    GPU-share filter; the paper policies score with their plugin alone on every node
    (``percentageOfNodesToScore: 100``, the simulator's scheduler configuration)."""
    if policy == "default":
        return SchedulerProfile(filter_plugins=FILTERS, source="replay:default")
    if policy == "mostallocated":
        return SchedulerProfile(
            filter_plugins=FILTERS,
            fit_strategy="MostAllocated",
            fit_resources={CPU: 1, MEMORY: 1},
            source="replay:mostallocated",
        )
    if policy in PAPER_SCORERS:
        return SchedulerProfile(
            filter_plugins=FILTERS,
            score_weights={PAPER_SCORERS[policy]: 1},
            percentage_of_nodes_to_score=100,
            source=f"replay:{policy}",
        )
    raise ValueError(f"unknown policy {policy!r} (known: {', '.join(POLICIES)})")


__all__ = [
    "BEST_FIT",
    "CLUSTERING",
    "DOT_PRODUCT",
    "FGD",
    "GPU_SELECTION",
    "PACKING",
    "TIE_BREAK",
    "POLICIES",
    "RANDOM",
    "BestFitScore",
    "DotProductScore",
    "FGDScore",
    "GpuClusteringScore",
    "GpuPackingScore",
    "Policy",
    "REPLAY_REGISTRY",
    "RandomScore",
    "TypicalPod",
    "builtin_policy",
    "is_policy_file",
    "policy_from_file",
    "policy_profile",
    "resolve_policy",
    "sub_devices",
    "typical_pods",
]
