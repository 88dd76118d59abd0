"""One policy's scheduler on a mutable node table: the greedy engine's per-pod cycle
(:class:`~gangplan.solver.greedy.schedule_one.PodScheduler`, the profile's own Filter / Score
plugins) run against one :class:`~gangplan.solver.greedy.snapshot.NodeTable` that the replay
mutates (assume on placement, forget on completion), so no cycle rebuilds anything.

GPUs are devices shared by milli (:mod:`gangplan.replay.gpushare`): after a pod's cycle chose its
node, the placer gives it devices by the policy's selection method
(:attr:`gangplan.replay.policies.Policy.selection`: the simulator's Reserve of ``Open-Gpu-Share``),
and takes them back when the pod leaves.

A gang is placed all-or-nothing like the pod-group cycle: its workers go through the per-pod
cycle one after the other, each assumed before the next; if one fails, the ones placed are
forgotten and the gang fails.

A gang with a required topology key goes through the workload cycle's placement algorithm
(KEP-5732; ``podGroupSchedulingPlacementAlgorithm`` / ``findBestPlacement`` of
``pkg/scheduler/schedule_one_podgroup.go``, as :mod:`gangplan.solver.greedy.placement_cycle`
reproduces it), with the same rules, not a copy of them: the profile's PlacementGenerate
plugins generate the placements (:func:`~gangplan.solver.greedy.placement.run_placement_generate`:
TopologyPlacementGenerator, one per value of the key, in the order the value first appears
among the nodes); every placement is evaluated (the workers' cycles restricted to its nodes,
then reverted); one feasible placement is taken unscored; several are scored by the profile's
PlacementScore plugins (:func:`~gangplan.solver.greedy.placement.run_placement_score`:
PlacementBinPacking + PodGroupPodsCount by default) and the highest total wins, ties by the
policy's tie break (:func:`~gangplan.solver.greedy.placement.best_placement`); the chosen
placement's proposals are assumed again as they were evaluated (the same nodes and devices).
A profile without a PlacementGenerate plugin ignores the key, as kube-scheduler does.

Departures, each only in which of equal-score nodes later pods get: a placement that the
placer's necessary test (:meth:`Placer._may_fit`) rules out is not evaluated (upstream
evaluates it: its failing cycles move ``nextStartNodeIndex``, which matters only with node
sampling, placements of more than 100 nodes, and may draw random tie-breaks for the workers
that fit before one fails); the nominated-placement fast path (NNN) does not apply (a replay
job carries no nominated node). kube-scheduler has no preferred topology for a pod group:
``preferred_topology_key`` is not read by the greedy policies (the run says so in its caveats).
"""

from __future__ import annotations

import random

import numpy as np

from gangplan.models.cluster import Cluster
from gangplan.models.groups import EntityKind, GroupNode
from gangplan.models.objects import CPU, Pod, PodGroup
from gangplan.replay.gpushare import MILLI, GpuRequest, devices_of, request_of
from gangplan.replay.policies import (
    FGD,
    RANDOM,
    FGDScore,
    Policy,
    RandomScore,
    TypicalPod,
    builtin_policy,
    registered,
)
from gangplan.replay.traces import ReplayJob, worker_pod
from gangplan.solver.greedy.framework import Placement, PodGroupInfo
from gangplan.solver.greedy.placement import (
    best_placement,
    run_placement_generate,
    run_placement_score,
)
from gangplan.solver.greedy.profile import build_profile
from gangplan.solver.greedy.schedule_one import PodScheduler, num_feasible_nodes_to_find
from gangplan.solver.greedy.snapshot import NodeTable

MAX_REUSED = 50_000
"""At most this many remembered placement evaluations per placer (then they are forgotten)."""


class Placer:
    """``node_order``: node positions of ``base`` in the order the cluster is built (ties of
    the paper policies go to the first: see :data:`gangplan.replay.policies.TIE_BREAK`)."""

    reuse_evaluations = True
    """Reuse a placement's evaluation while its nodes are unchanged (:meth:`_evaluate_or_reuse`;
    tests turn it off to check that it changes nothing)."""

    def __init__(self, base: Cluster, policy: str | Policy, *, seed: int, typical: list[TypicalPod], node_order: list[int] | None = None) -> None:
        pol = builtin_policy(policy) if isinstance(policy, str) else policy
        self.policy = pol
        nodes = base.nodes if node_order is None else tuple(base.nodes[k] for k in node_order)
        self.cluster = Cluster(nodes=nodes, pods=base.pods, topologies=base.topologies, priority_classes=base.priority_classes, profile=pol.profile, kube_version=base.kube_version,
                               sources=base.sources)
        with registered():
            self.profile = build_profile(self.cluster)
        self.fgd: FGDScore | None = None
        for pl, _ in self.profile.scorers:
            if pl.name == FGD:
                assert isinstance(pl, FGDScore)
                pl.typical = typical
                self.fgd = pl
            if pl.name == RANDOM:
                assert isinstance(pl, RandomScore)
                pl.rng = random.Random(f"random-score-{seed}")
        self.selection = pol.selection
        self.gpu_rng = random.Random(f"gpu-select-{seed}")
        self.snap = NodeTable(self.cluster)
        self.devices = devices_of(self.snap)
        self.sched = PodScheduler(self.snap, self.profile, tie_break=pol.tie_break, seed=seed, top_k=0)
        self.cpu_col = self.snap.res_index.get(CPU)
        self.capacity_milli = self.devices.capacity_milli
        self.capacity_gpus = self.capacity_milli // MILLI
        self.pods: dict[str, list[Pod]] = {}
        self._evaluations: dict[tuple, tuple[bytes, list[tuple[int, tuple[int, ...]]] | None, bool]] = {}
        """(job shape, placement label) -> (the placement's node state, the proposals by
        worker index or None, whether it scanned): :meth:`_evaluate_or_reuse`."""
        self.reused = 0
        """How many placement evaluations were reused."""

    def devices_of_job(self, instance: str) -> list[tuple[int, ...]]:
        """The device indices each pod of ``instance`` holds on its node (in pod order)."""
        return [self.devices.held[p.key][1] if p.key in self.devices.held else () for p in self.pods[instance]]

    def nodes_of(self, instance: str) -> list[str]:
        """The node name of each pod of ``instance`` (in pod order)."""
        names = self.snap.names
        return [names[self.devices.held[p.key][0]] for p in self.pods[instance]]

    @property
    def allocated_milli(self) -> int:
        return self.devices.used_milli

    @property
    def allocated_gpus(self) -> float:
        """Allocated GPUs (milli / 1000; whole when every pod holds whole GPUs)."""
        m = self.devices.used_milli
        return m // MILLI if m % MILLI == 0 else m / MILLI

    def _may_fit(self, job: ReplayJob, nodes: np.ndarray | None = None) -> bool:
        """A necessary condition (device slots / cpu per node for ``gang`` workers): False means
        the gang cannot fit, so the per-pod cycles need not run."""
        idx = self.snap.all_nodes if nodes is None else nodes
        slots = np.full(len(idx), job.gang, dtype=np.int64)
        req = GpuRequest(job.gpu, job.gpu_milli) if job.gpu else GpuRequest()
        if req.count:
            slots = np.minimum(slots, self.devices.slots(req)[idx])
        if job.cpu_milli and self.cpu_col is not None:
            slots = np.minimum(slots, np.maximum(self.snap.free[idx, self.cpu_col], 0) // job.cpu_milli)
        return int(slots.clip(min=0).sum()) >= job.gang

    def place(self, job: ReplayJob, instance: str) -> bool:
        """Place ``job`` (all-or-nothing); True if it runs. ``instance`` names its pods uniquely.
        After a False, :attr:`static_failure` says whether the necessary test (:meth:`_may_fit`,
        on the cluster or on every domain of its required key) failed: then no per-pod cycle ran
        (no random draw) and any state with no more free room fails the same way."""
        self.static_failure = True
        if not self._may_fit(job):
            return False
        pods = [worker_pod(job, k, namespace=instance) for k in range(job.gang)]
        if not job.required_topology_key or not self.profile.placement_generators:
            self.static_failure = False
            return self._place_in(pods, None, instance)
        return self._place_by_placements(job, pods, instance)

    def _group_info(self, job: ReplayJob, pods: list[Pod], instance: str) -> PodGroupInfo:
        """The gang as the PodGroup the placement plugins are asked about (what
        :func:`gangplan.replay.shadow.epoch_objects` writes for it: gang minCount, the required
        topology key), with its pods; none is scheduled yet."""
        pg = PodGroup(namespace=instance, name=job.name, policy="gang", min_count=job.gang, priority=job.priority,
                      topology_key=job.required_topology_key or None)
        node = GroupNode(key=pg.key, kind=EntityKind.POD_GROUP, obj=pg, parent=None, children=(), root=pg.key, depth=1,
                         leaves=(pg.key,), members=tuple(pods))
        return PodGroupInfo(node, node.members, self.snap.node_of)

    def _place_by_placements(self, job: ReplayJob, pods: list[Pod], instance: str) -> bool:
        """The placement algorithm for a topology-constrained gang (module docstring)."""
        snap = self.snap
        info = self._group_info(job, pods, instance)
        placements, status = run_placement_generate(self.profile.placement_generators, snap, info, Placement("", snap.all_nodes))
        if placements is None:  # no plugin constrains it: the parent placement, as the cycle does
            self.static_failure = False
            return self._place_in(pods, None, instance)
        if not status.ok:  # no node has the label (or an Error): no state helps
            return False
        candidates = [p for p in placements if self._may_fit(job, p.nodes)]
        self.static_failure = not candidates
        feasible: list[tuple[Placement, list[tuple[Pod, int, tuple[int, ...]]]]] = []
        shape = (job.cpu_milli, job.memory_mib, job.gpu, job.gpu_milli, job.gpu_models, job.priority, job.gang, job.required_topology_key)
        for pl in candidates:
            got = self._evaluate_or_reuse(shape, pods, pl)
            if got is not None:
                feasible.append((pl, got))
        if not feasible:
            return False
        at = 0
        if len(feasible) > 1:
            scores = run_placement_score(self.profile.placement_scorers, snap, info, [pl for pl, _ in feasible],
                                         [[(p, i) for p, i, _ in got] for _, got in feasible])
            at, _ = best_placement([sum(s.values()) for s in scores], self.sched.tie_break, self.sched.rng)
        chosen = feasible[at][1]
        for p, i, devs in chosen:  # assumeSubtreeWithRevert: the evaluated proposals again
            self._assume(p, i, devs)
        self.pods[instance] = [p for p, _, _ in chosen]
        return True

    def _state_of(self, nodes: np.ndarray) -> bytes:
        """Everything a worker's cycle reads of ``nodes`` that placements change (free and
        non-zero requests, pod counts, free milli and GPU affinities per device)."""
        snap, dev = self.snap, self.devices
        parts = (snap.free[nodes], snap.nonzero[nodes], snap.pod_count[nodes], dev.free[nodes], dev.affinity[nodes])
        return b"|".join(a.tobytes() for a in parts)

    def _evaluate_or_reuse(self, shape: tuple, pods: list[Pod], placement: Placement) -> list[tuple[Pod, int, tuple[int, ...]]] | None:
        """:meth:`_evaluate`, or the outcome of the last evaluation of the same job shape in
        the same placement when none of its nodes changed since (:attr:`reuse_evaluations`).

        Exact when the workers' cycles scan the whole placement (``numFeasibleNodesToFind``
        reaches its size: fewer than 100 nodes, or ``percentageOfNodesToScore: 100``) and break
        ties by ``first``: each cycle then reads only the placement's nodes and leaves the scan
        start at ``start % size``, which a reused outcome applies. Under ``random`` ties the
        reused outcome is the draw made on the same state earlier, so every attempt's outcome
        still has upstream's distribution (a placement's score reads the proposals' requests,
        never their nodes; only the chosen placement's nodes are used). Not reused: sampled
        placements, and outcomes whose scan start did not move that way."""
        snap = self.snap
        size = len(placement.nodes)
        if not self.reuse_evaluations or not self.profile.has_scoring or num_feasible_nodes_to_find(self.profile.percentage_of_nodes_to_score, size) < size:
            return self._evaluate(pods, placement)[0]
        key = (shape, placement.label)
        state = self._state_of(placement.nodes)
        hit = self._evaluations.get(key)
        if hit is not None and hit[0] == state:
            self.reused += 1
            _, proposals, scanned = hit
            if scanned:
                snap.next_start_node_index %= size
            return None if proposals is None else [(pods[w], i, devs) for w, (i, devs) in enumerate(proposals)]
        start = snap.next_start_node_index
        got, scanned = self._evaluate(pods, placement)
        if snap.next_start_node_index == (start % size if scanned else start):
            if len(self._evaluations) >= MAX_REUSED:
                self._evaluations.clear()
            self._evaluations[key] = (state, None if got is None else [(i, devs) for _, i, devs in got], scanned)
        return got

    def _evaluate(self, pods: list[Pod], placement: Placement) -> tuple[list[tuple[Pod, int, tuple[int, ...]]] | None, bool]:
        """``evaluatePlacement``: :meth:`_cycles` inside ``placement``, then everything reverted."""
        got, scanned = self._cycles(pods, placement.nodes, placement.label)
        for p, _, _ in got or ():
            self._forget(p)
        return got, scanned

    def _cycles(self, pods: list[Pod], nodes: np.ndarray | None, name: str | None) -> tuple[list[tuple[Pod, int, tuple[int, ...]]] | None, bool]:
        """The workers' cycles (inside ``nodes`` unless None), each assumed before the next: the
        proposals (pod, node, devices), left assumed, or None with every worker taken back when
        one does not fit (the gang needs them all); and whether the first cycle scanned nodes (it
        moved the scan start)."""
        self.sched.placement, self.sched.placement_name = nodes, name
        got: list[tuple[Pod, int, tuple[int, ...]]] = []
        scanned = False
        try:
            for p in pods:
                r = self.sched.schedule(p)
                scanned = scanned or r.evaluated > 0
                if r.node is None:
                    for q, _, _ in got:
                        self._forget(q)
                    return None, scanned
                self._assume(p, r.node)
                got.append((p, r.node, self.devices.held[p.key][1] if p.key in self.devices.held else ()))
            return got, scanned
        finally:
            self.sched.placement, self.sched.placement_name = None, None

    def _devices_for(self, pod: Pod, i: int, req: GpuRequest) -> tuple[int, ...]:
        dev = self.devices
        if req.count == 0 or req.milli == 0:
            return ()
        if self.selection == "first":
            return dev.first_fit(i, req)
        if self.selection == "random":
            return dev.random_fit(i, req, self.gpu_rng)
        if self.selection == "fgd" and self.fgd is not None:
            return self.fgd.choose(dev, pod, i)
        return dev.best_fit(i, req)

    def _assume(self, pod: Pod, i: int, devices: tuple[int, ...] | None = None) -> None:
        req = request_of(pod)
        devs = self._devices_for(pod, i, req) if devices is None else tuple(devices)
        if len(devs) != (req.count if req.milli else 0):
            raise AssertionError(f"{pod.key}: node {self.snap.names[i]} passed the GPU filter but has no devices for {req}")
        self.snap.assume(pod, i)
        self.devices.take(pod, i, devs, req)

    def _forget(self, pod: Pod) -> None:
        self.snap.forget(pod)
        self.devices.give(pod)

    def _place_in(self, pods: list[Pod], nodes: np.ndarray | None, instance: str) -> bool:
        got, _ = self._cycles(pods, nodes, None)
        if got is None:
            return False
        self.pods[instance] = [p for p, _, _ in got]
        return True

    def force(self, job: ReplayJob, instance: str, nodes: list[str], devices: list[tuple[int, ...]] | None = None) -> None:
        """Run ``job``'s workers on ``nodes`` (one name per worker, e.g. the exact engine's
        answer); no cycle runs. ``devices``: the device indices of each worker on its node (the
        exact engine's allocation on a GPU-sharing trace, :func:`gangplan.replay.shadow.solve_epoch`),
        else chosen by the policy's selection method. Raises if a node or device has no room
        (the answer was not valid on this state)."""
        if not hasattr(self, "_index"):
            self._index = {n: i for i, n in enumerate(self.snap.names)}
        pods = [worker_pod(job, k, namespace=instance) for k in range(len(nodes))]
        if devices is not None and len(devices) != len(nodes):
            raise AssertionError(f"{instance}: {len(nodes)} nodes but devices for {len(devices)} workers")
        for w, (p, name) in enumerate(zip(pods, nodes, strict=True)):
            i = self._index[name]
            self._assume(p, i, None if devices is None else devices[w])
            if (self.snap.free[i] < 0).any():
                raise AssertionError(f"{p.key}: node {name} has no room for it on this state")
        self.pods[instance] = pods

    def release(self, instance: str) -> None:
        for p in self.pods.pop(instance):
            self._forget(p)




__all__ = ["Placer"]
