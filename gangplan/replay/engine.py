"""One policy's scheduler over the replay's cluster: a client of the greedy engine's session
(:class:`gangplan.solver.greedy.GreedySession`), which holds the node table the replay changes
(assume on placement, forget on completion) so no cycle rebuilds anything.

The session is built from the replay's registry (:data:`gangplan.replay.policies.REPLAY_REGISTRY`:
the in-tree plugins and the paper's), so a policy's profile may name the paper's scorers and the
GPU-share filter. GPUs are devices shared by milli (:mod:`gangplan.replay.gpushare`): the
GPU-share plugin's Reserve gives a placed pod its devices by the policy's selection method
(:attr:`gangplan.replay.policies.Policy.selection`: the simulator's Reserve of
``Open-Gpu-Share``), and its Unreserve takes them back when the pod leaves.

A job is one gang: :meth:`GreedySession.place_group` runs the pod-group cycle (all or nothing;
the KEP-5732 placement algorithm for a job with a ``required_topology_key``, as the session
documents). The placer adds its necessary test (:meth:`Placer._may_fit`: device slots and cpu
per node), so a placement that cannot hold the gang is not evaluated, and the gang's shape as
the key under which the session reuses placement evaluations.

Departures from upstream, each only in which of equal-score nodes later pods get: the placements
the necessary test rules out (the session's docstring); the nominated-placement fast path (NNN)
does not apply (a replay job carries no nominated node). kube-scheduler has no preferred topology
for a pod group: ``preferred_topology_key`` is not read by the greedy policies (the run says so
in its caveats).
"""

from __future__ import annotations

import random

import numpy as np

from gangplan.models.cluster import Cluster
from gangplan.models.objects import CPU, Pod, PodGroup
from gangplan.models.version import topology_constraints_read
from gangplan.replay.gpushare import GPU_SHARE, MILLI, GpuRequest, GpuShareFilter, devices_of
from gangplan.replay.policies import (
    FGD,
    RANDOM,
    REPLAY_REGISTRY,
    FGDScore,
    Policy,
    RandomScore,
    TypicalPod,
    builtin_policy,
)
from gangplan.replay.traces import ReplayJob, worker_pod
from gangplan.solver.greedy import GreedySession


class Placer:
    """``node_order``: node positions of ``base`` in the order the cluster is built (ties of
    the paper policies go to the first: see :data:`gangplan.replay.policies.TIE_BREAK`)."""

    def __init__(
        self,
        base: Cluster,
        policy: str | Policy,
        *,
        seed: int,
        typical: list[TypicalPod],
        node_order: list[int] | None = None,
    ) -> None:
        pol = builtin_policy(policy) if isinstance(policy, str) else policy
        self.policy = pol
        nodes = base.nodes if node_order is None else tuple(base.nodes[k] for k in node_order)
        self.cluster = Cluster(
            nodes=nodes,
            pods=base.pods,
            topologies=base.topologies,
            priority_classes=base.priority_classes,
            profile=pol.profile,
            kube_version=base.kube_version,
            sources=base.sources,
        )
        self.session = GreedySession(
            self.cluster, registry=REPLAY_REGISTRY, tie_break=pol.tie_break, seed=seed, top_k=0
        )
        self.fgd: FGDScore | None = None
        for pl, _ in self.session.profile.scorers:
            if pl.name == FGD:
                assert isinstance(pl, FGDScore)
                pl.typical = typical
                self.fgd = pl
            if pl.name == RANDOM:
                assert isinstance(pl, RandomScore)
                pl.rng = random.Random(f"random-score-{seed}")
        share = self.session.plugin(GPU_SHARE)
        if isinstance(share, GpuShareFilter):
            share.selection, share.rng, share.fgd = (
                pol.selection,
                random.Random(f"gpu-select-{seed}"),
                self.fgd,
            )
        self.snap = self.session.nodes
        self.devices = devices_of(self.snap)
        self.cpu_col = self.snap.res_index.get(CPU)
        self.capacity_milli = self.devices.capacity_milli
        self.capacity_gpus = self.capacity_milli // MILLI
        self.pods: dict[str, list[Pod]] = {}
        self.static_failure = False
        self._resident: Cluster | None = None

    def resident(self) -> Cluster:
        """The pods a ``--nodes`` snapshot binds, with the objects they come with (priority
        classes, groups, PDBs), as the loader reads their own objects
        (:func:`gangplan.replay.shadow.resident`): read once, the first time it is asked."""
        if self._resident is None:
            from gangplan.io.loader import load_objects
            from gangplan.replay.shadow import node_object, resident

            objs = resident(
                self, False
            )  # with the nodes they are bound to, which the loader checks
            self._resident = (
                load_objects(
                    [node_object(n) for n in self.cluster.nodes] + objs,
                    "<resident pods>",
                    kube_version=self.cluster.kube_version,
                )
                if objs
                else Cluster()
            )
        return self._resident

    @property
    def reused(self) -> int:
        """How many placement evaluations the session reused."""
        return self.session.reused

    def devices_of_job(self, instance: str) -> list[tuple[int, ...]]:
        """The device indices each pod of ``instance`` holds on its node (in pod order)."""
        return [
            self.devices.held[p.key][1] if p.key in self.devices.held else ()
            for p in self.pods[instance]
        ]

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
            slots = np.minimum(
                slots, np.maximum(self.snap.free[idx, self.cpu_col], 0) // job.cpu_milli
            )
        return int(slots.clip(min=0).sum()) >= job.gang

    def place(self, job: ReplayJob, instance: str) -> bool:
        """Place ``job`` (all-or-nothing); True if it runs. ``instance`` names its pods uniquely.
        After a False, :attr:`static_failure` says whether the necessary test (:meth:`_may_fit`,
        on the cluster or on every domain of its required key) failed: then no per-pod cycle ran
        (no random draw) and any state with no more free room fails the same way."""
        if not self._may_fit(job):  # before any pod object is built: most failed attempts end here
            self.static_failure = True
            return False
        pods = [worker_pod(job, k, namespace=instance) for k in range(job.gang)]
        may_fit = lambda nodes: nodes is None or self._may_fit(job, nodes)  # noqa: E731 (the cluster passed above)
        if not job.required_topology_key or not topology_constraints_read(
            self.cluster.kube_version
        ):  # the cycle reads no group object (v1.35: no topology constraint): none is built
            out = self.session.place_group(None, pods, may_fit=may_fit)
        else:
            shape = (
                job.cpu_milli,
                job.memory_mib,
                job.gpu,
                job.gpu_milli,
                job.gpu_models,
                job.priority,
                job.gang,
                job.required_topology_key,
            )
            out = self.session.place_group(
                self.group_of(job, instance), pods, may_fit=may_fit, reuse_key=shape
            )
        self.static_failure = out.static_failure
        if out.placed is None:
            return False
        self.pods[instance] = [p for p, _, _ in out.placed]
        return True

    @staticmethod
    def group_of(job: ReplayJob, instance: str) -> PodGroup:
        """The job as the PodGroup its pods form (what :func:`gangplan.replay.shadow.epoch_objects`
        writes for it: gang minCount, the required topology key)."""
        return PodGroup(
            namespace=instance,
            name=job.name,
            policy="gang",
            min_count=job.gang,
            priority=job.priority,
            topology_key=job.required_topology_key or None,
        )

    def force(
        self,
        job: ReplayJob,
        instance: str,
        nodes: list[str],
        devices: list[tuple[int, ...]] | None = None,
    ) -> None:
        """Run ``job``'s workers on ``nodes`` (one name per worker, e.g. the exact engine's
        answer); no cycle runs. ``devices``: the device indices of each worker on its node (the
        exact engine's allocation on a GPU-sharing trace, :func:`gangplan.replay.shadow.solve_epoch`),
        else chosen by the policy's selection method. Raises if a node or device has no room
        (the answer was not valid on this state)."""
        pods = [worker_pod(job, k, namespace=instance) for k in range(len(nodes))]
        if devices is not None and len(devices) != len(nodes):
            raise AssertionError(
                f"{instance}: {len(nodes)} nodes but devices for {len(devices)} workers"
            )
        for w, (p, name) in enumerate(zip(pods, nodes, strict=True)):
            i = self.session.node_position(name)
            self.session.assume(p, i, None if devices is None else (devices[w],))
            if (self.snap.free[i] < 0).any():
                raise AssertionError(f"{p.key}: node {name} has no room for it on this state")
        self.pods[instance] = pods

    def release(self, instance: str) -> None:
        for p in self.pods.pop(instance):
            self.session.forget(p)


__all__ = ["Placer"]
