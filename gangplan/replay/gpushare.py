"""GPU sharing in a replay: every node's GPUs are devices of 1000 milli each, shared by milli.

Kubernetes models a shared GPU with DRA consumable capacity (KEP-5075, ``gangplan.dra``): a
device with ``allowMultipleAllocations: true`` and a capacity (here ``gpu-milli: 1000``) that
several claims consume until it is used up. A replay pod asks for ``count`` devices of
``milli`` each, as the FGD simulator's pods do (``alibabacloud.com/gpu-count`` and
``alibabacloud.com/gpu-milli``, ``data/pod_csv_to_yaml.py``): a GPU-sharing pod (count 1, milli
< 1000) takes ``milli`` from one device, a whole-GPU pod (milli 1000) takes ``count`` devices
whole, which under consumable capacity is the same rule (a device fits a share of ``m`` when at
least ``m`` of its 1000 are left; a whole GPU needs all 1000 left).

This module is that model as a per-device free-milli matrix (:class:`GpuDevices`, nodes x
devices) rather than gangplan's DRA allocator (ResourceSlices, claims and CEL per pod): the
paper's scorers read every node's per-device state for every pod (FGD evaluates each device of
each feasible node), which must be numpy-vectorised to fill 1,213 nodes with ~10,000 pods in
seconds. The semantics are the allocator's for one device class whose devices each hold 1000 of
one consumable capacity, with no selectors other than the GPU model (a node-affinity term on
``nvidia.com/gpu.product``, as the openb pods' ``gpu_spec``).

**The fit rule** is the DRA allocator's, written once in :mod:`gangplan.predicates.devices`: a
node fits a request of ``count`` x ``milli`` iff at least ``count`` distinct devices have ``milli``
or more free (:meth:`GpuDevices.fits`; :meth:`GpuDevices.slots` bounds how many such pods a node
could still take). It is also the FGD simulator's ``GpuNodeInfo.AllocateGpuId`` /
``CanNodeHostPodOnGpuMemory`` (hkust-adsl/kubernetes-scheduler-simulator @8f3d641,
``pkg/type/open-gpu-share/cache/gpunodeinfo.go``, ``pkg/utils/frag.go``); the Filter plugin
(:class:`GpuShareFilter`), the device choices, every scorer, the fragmentation meter and the
placer read it. docs/explanation/gpus.md says where this model of a GPU meets the other two
(DRA devices, whole ``nvidia.com/gpu``) and where it differs.

**Which devices a pod gets** (:data:`SELECTION`), per policy:

* ``first``: the first devices (by index) that fit: what kube-scheduler's structured allocator
  does (it walks a node's devices in ResourceSlice order); the ``default`` and
  ``mostallocated`` policies;
* ``best``: the simulator's ``allocateGpuIdBasedOnBestFit`` (``pkg/simulator/plugin/open_gpu_share.go``):
  a shared pod takes the device with the least free milli that fits (lowest index on ties); a
  whole-GPU pod the lowest-index fully free devices (``AllocateExclusiveGpuId``,
  ``pkg/type/resource.go``). The same choice is the simulator's hypothetical placement
  ``NodeResource.Sub`` (ascending stable sort, first that fit), which every scorer uses to see a
  node after the pod (:meth:`GpuDevices.best_fit`);
* ``random``: ``allocateGpuIdBasedOnRandomFit``: a shared pod takes a uniformly drawn device
  among those that fit, a whole-GPU pod as ``best``;
* ``fgd``: the device of the best FGD score (``allocateGpuIdBasedOnFGDScore``), computed by
  :class:`gangplan.replay.policies.FGDScore`.

The simulator's experiment script (``scripts/generate_config_and_run.py``,
``experiments/run_scripts/generate_run_scripts.py``) sets ``gpuSelMethod`` to ``random`` for
Random, ``FGDScore`` for FGD and ``best`` for DotProd, GpuClustering, GpuPacking and BestFit.

Requests ride on pod annotations (:data:`COUNT_ANNOTATION`, :data:`MILLI_ANNOTATION`, the
open-gpu-share names the simulator reads) so the Pod objects carry them; a pod without them
asks for no GPU. Pods bound in a snapshot that request ``nvidia.com/gpu`` hold that many whole
devices (the lowest indices).
"""

from __future__ import annotations

import random
import weakref
from dataclasses import dataclass

import numpy as np

from gangplan.models.objects import CPU, Pod
from gangplan.models.well_known import GPU, GPU_PRODUCT
from gangplan.predicates.devices import devices_fit, requests_held, share_fits
from gangplan.solver.greedy import (
    SUCCESS,
    Code,
    CycleState,
    NodeTable,
    Plugin,
    Status,
    constant_reason,
)

MILLI = 1000
COUNT_ANNOTATION = "alibabacloud.com/gpu-count"
MILLI_ANNOTATION = "alibabacloud.com/gpu-milli"
GPU_SHARE = "GpuShare"
SELECTION = ("first", "best", "random", "fgd")
NO_FIT_REASON = "Insufficient GPU devices with enough free gpu-milli"


@dataclass(frozen=True)
class GpuRequest:
    count: int = 0
    milli: int = 0

    @property
    def total(self) -> int:
        return self.count * self.milli

    @property
    def shared(self) -> bool:
        """A GPU-sharing request (``PodResource.IsGpuShare``: one device, less than 1000)."""
        return self.count == 1 and self.milli < MILLI

    @property
    def tag(self) -> int:
        """The simulator's GPU affinity (``GetGpuAffinityFromPodAnnotation``) as a column of
        :attr:`GpuDevices.affinity`: 0 share-gpu, k for ``k-gpu``, -1 for a pod without GPU."""
        if self.count == 0 or self.milli == 0:
            return -1
        return 0 if self.shared else min(self.count, AFFINITY_COLUMNS - 1)


NO_GPU = GpuRequest()
AFFINITY_COLUMNS = 10


def request_annotations(count: int, milli: int) -> dict[str, str]:
    return {COUNT_ANNOTATION: str(count), MILLI_ANNOTATION: str(milli)} if count and milli else {}


def request_of(pod: Pod) -> GpuRequest:
    a = pod.annotations
    c = a.get(COUNT_ANNOTATION)
    if c is None:
        return NO_GPU
    return GpuRequest(int(c), int(a.get(MILLI_ANNOTATION, MILLI)))


class GpuDevices:
    """Free milli of every device of every node (``free``: nodes x max devices; a node with
    fewer devices has 0 in the rest, which no request fits) and what the scorers read besides:
    free cpu milli comes from the node table; ``affinity`` counts the pods of each GPU affinity
    per node (GpuClustering); ``version`` increases whenever a node's state changes (cache
    keys for the scorers)."""

    def __init__(self, snap: NodeTable) -> None:
        self.snap = snap
        g = snap.res_index.get(GPU)
        count = snap.alloc[:, g].copy() if g is not None else np.zeros(snap.n, dtype=np.int64)
        self.count = count
        self.width = max(1, int(count.max()) if snap.n else 1)
        cols = np.arange(self.width)[None, :]
        self.free = np.where(cols < count[:, None], MILLI, 0).astype(np.int64)
        if g is not None:  # whole GPUs of pods bound in the snapshot: the lowest devices
            held = snap.requested[:, g]
            self.free[cols < held[:, None]] = 0
        self.capacity_milli = int(count.sum()) * MILLI
        self.affinity = np.zeros((snap.n, AFFINITY_COLUMNS), dtype=np.int64)
        self.version = np.zeros(snap.n, dtype=np.int64)
        self.cpu_col = snap.res_index.get(CPU)
        self.model_codes, self.model_values, _ = snap.label_codes(GPU_PRODUCT)
        self.held: dict[str, tuple[int, tuple[int, ...], int, int]] = {}
        """pod key -> (node, devices, milli, affinity column)."""

    # ---- the fit rule ------------------------------------------------------------------------
    def fits(self, idx: np.ndarray, req: GpuRequest) -> np.ndarray:
        """Whether the nodes ``idx`` fit ``req``: ``count`` distinct devices with ``milli`` free
        (:func:`gangplan.predicates.devices.devices_fit`)."""
        if req.count == 0 or req.milli == 0:
            return np.ones(len(idx), dtype=bool)
        return devices_fit(self.free[idx], req.count, req.milli)

    def slots(self, req: GpuRequest) -> np.ndarray:
        """How many pods of ``req`` each node could still take at most (a necessary bound for
        gangs: :func:`gangplan.predicates.devices.requests_held`)."""
        if req.count == 0 or req.milli == 0:
            return np.full(self.snap.n, 1 << 30, dtype=np.int64)
        return requests_held(self.free, req.count, req.milli)

    # ---- node views --------------------------------------------------------------------------
    def cpu_left(self, idx: np.ndarray) -> np.ndarray:
        if self.cpu_col is None:
            return np.zeros(len(idx), dtype=np.int64)
        return self.snap.free[idx, self.cpu_col]

    def total_left(self, idx: np.ndarray) -> np.ndarray:
        return self.free[idx].sum(axis=1)

    def fully_free(self, idx: np.ndarray) -> np.ndarray:
        return (self.free[idx] == MILLI).sum(axis=1)

    @property
    def used_milli(self) -> int:
        return self.capacity_milli - int(self.free.sum())

    # ---- device choice -----------------------------------------------------------------------
    def best_fit_device(self, idx: np.ndarray, milli: int) -> np.ndarray:
        """Per node of ``idx`` the device a shared request of ``milli`` takes under best fit
        (least free milli that fits, lowest index on ties), -1 where none fits."""
        f = self.free[idx]
        masked = np.where(share_fits(f, milli), f, MILLI + 1)
        d = masked.argmin(axis=1)
        return np.where(masked[np.arange(len(idx)), d] <= MILLI, d, -1)

    def first_fit(self, i: int, req: GpuRequest) -> tuple[int, ...]:
        return tuple(np.flatnonzero(share_fits(self.free[i], req.milli))[: req.count].tolist())

    def best_fit(self, i: int, req: GpuRequest) -> tuple[int, ...]:
        """``allocateGpuIdBasedOnBestFit`` / ``NodeResource.Sub``: the devices ``req`` takes."""
        if req.count == 0 or req.milli == 0:
            return ()
        if req.shared:
            d = int(self.best_fit_device(np.array([i]), req.milli)[0])
            return (d,) if d >= 0 else ()
        return self.first_fit(i, req)  # milli 1000: only fully free devices fit, lowest first

    def random_fit(self, i: int, req: GpuRequest, rng: random.Random) -> tuple[int, ...]:
        if req.shared:
            cand = np.flatnonzero(share_fits(self.free[i], req.milli))
            return (int(cand[rng.randrange(len(cand))]),) if len(cand) else ()
        return self.best_fit(i, req)

    # ---- bookkeeping -------------------------------------------------------------------------
    def take(self, pod: Pod, i: int, devices: tuple[int, ...], req: GpuRequest) -> None:
        """``pod`` (already assumed in the node table) holds ``devices`` of node ``i``."""
        for d in devices:
            if not share_fits(self.free[i, d], req.milli):
                raise ValueError(
                    f"device {d} of node {self.snap.names[i]} has {self.free[i, d]} milli free, {pod.key} asks {req.milli}"
                )
            self.free[i, d] -= req.milli
        tag = req.tag
        if tag >= 0:
            self.affinity[i, tag] += 1
        self.held[pod.key] = (i, devices, req.milli, tag)
        self.version[i] += 1

    def give(self, pod: Pod) -> None:
        """``pod`` leaves (call with the node table's forget)."""
        got = self.held.pop(pod.key, None)
        if got is None:
            return
        i, devices, milli, tag = got
        for d in devices:
            self.free[i, d] += milli
        if tag >= 0:
            self.affinity[i, tag] -= 1
        self.version[i] += 1


_DEVICES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def devices_of(snap: NodeTable) -> GpuDevices:
    """The device state of a node table (built on first use: every device free but those of
    bound whole-GPU pods)."""
    got = _DEVICES.get(snap)
    if got is None:
        got = GpuDevices(snap)
        _DEVICES[snap] = got
    return got


class GpuShareFilter(Plugin):
    """Filter: the node has ``count`` devices with ``milli`` free (:meth:`GpuDevices.fits`;
    the simulator's ``Open-Gpu-Share`` Filter, the DRA allocator's capacity check). The GPU
    model is a node-affinity term of the pod (NodeAffinity), as ``IsNodeAccessibleToPodByType``.

    Reserve: the devices the pod gets on its node, by :attr:`selection` (:data:`SELECTION`; the
    simulator's ``Open-Gpu-Share`` Reserve, ``pkg/simulator/plugin/open_gpu_share.go``), and
    Unreserve gives them back. The replay sets :attr:`selection`, :attr:`rng` (``random``) and
    :attr:`fgd` (the FGD scorer whose ``choose`` picks the device, ``fgd``) on its session's
    instance."""

    name = GPU_SHARE

    def __init__(self, cluster, profile) -> None:
        super().__init__(cluster, profile)
        self.selection = "first"
        self.rng = random.Random(0)
        self.fgd = None
        self._dev: GpuDevices | None = None

    def _devices(self, snap: NodeTable) -> GpuDevices:
        """The node table's device state (kept: Reserve runs for every placed pod)."""
        dev = self._dev
        if dev is None or dev.snap is not snap:
            dev = self._dev = devices_of(snap)
        return dev

    def reserve(self, pod: Pod, snap: NodeTable, i: int, chosen: object = None) -> tuple[int, ...]:
        dev = self._devices(snap)
        req = request_of(pod)
        devs = self._choose(dev, pod, i, req) if chosen is None else tuple(chosen)  # type: ignore[arg-type]
        if len(devs) != (req.count if req.milli else 0):
            raise AssertionError(
                f"{pod.key}: node {snap.names[i]} passed the GPU filter but has no devices for {req}"
            )
        dev.take(pod, i, devs, req)
        return devs

    def _choose(self, dev: GpuDevices, pod: Pod, i: int, req: GpuRequest) -> tuple[int, ...]:
        if req.count == 0 or req.milli == 0:
            return ()
        if self.selection == "first":
            return dev.first_fit(i, req)
        if self.selection == "random":
            return dev.random_fit(i, req, self.rng)
        if self.selection == "fgd" and self.fgd is not None:
            return self.fgd.choose(dev, pod, i)
        return dev.best_fit(i, req)

    def unreserve(self, pod: Pod, snap: NodeTable) -> None:
        self._devices(snap).give(pod)

    def node_state(self, snap: NodeTable, nodes: np.ndarray) -> bytes:
        dev = self._devices(snap)
        return dev.free[nodes].tobytes() + b"|" + dev.affinity[nodes].tobytes()

    def filter_mask(self, cs: CycleState, pod: Pod, snap: NodeTable, idx: np.ndarray) -> np.ndarray:
        req = request_of(pod)
        if req.count == 0 or req.milli == 0:
            return np.ones(len(idx), dtype=bool)
        return devices_of(snap).fits(idx, req)

    def filter_one(self, cs: CycleState, pod: Pod, snap: NodeTable, i: int) -> Status:
        if self.filter_mask(cs, pod, snap, np.array([i], dtype=np.int64))[0]:
            return SUCCESS
        return Status(Code.UNSCHEDULABLE, (NO_FIT_REASON,), self.name)

    def filter_reasons(self, cs, pod, snap, idx):
        return constant_reason(NO_FIT_REASON, idx, unresolvable=False)


__all__ = [
    "COUNT_ANNOTATION",
    "GPU_SHARE",
    "MILLI",
    "MILLI_ANNOTATION",
    "NO_GPU",
    "SELECTION",
    "GpuDevices",
    "GpuRequest",
    "GpuShareFilter",
    "devices_of",
    "request_annotations",
    "request_of",
]
