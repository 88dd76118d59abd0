"""The ``shadow`` exact policy of a timed replay (issue 22, item 4a): at each epoch, the exact
engine (:func:`gangplan.solver.exact.solve_exact`) on greedy's own state, running pods fixed.

An epoch is an event instant at which some job is pending before greedy's attempt round (every
such instant, or with ``epoch=S`` the first such instant in each window ``[k S, (k + 1) S)``). The
state handed to the exact engine is the cluster as greedy's round found it:

* the nodes of the replay, their bound (running) pods fixed where greedy put them;
* every pending job (ready, in backoff or in the unschedulable pool: the optimum is not bound by
  the queue), a job of more than one worker as a gang PodGroup (``minCount`` = its gang size),
  its GPUs as ``nvidia.com/gpu`` requests, a required topology key as the PodGroup's
  ``schedulingConstraints.topology`` (a preferred key is left out, as greedy's replay does).

It is written as Kubernetes objects (:func:`epoch_objects`) and read back through the loader, so
the exported snapshot (``--export-epoch N DIR``) is exactly what was solved and ``gangplan diff``
accepts it. Greedy's placements of this round are the hint, so the exact answer is never worse
than greedy's (lexicographic: admitted per priority, then GPUs). Per epoch:
``regret_gpus`` = GPUs of pending jobs the exact engine admits minus those greedy admitted at that
instant (may be negative in GPUs when the optimum admits more jobs of fewer GPUs), ``regret_jobs``
the same in jobs, ``exact_gpus_untried`` the part of the optimum's GPUs on jobs greedy did not
even try at that instant (backing off or pooled: regret the queue causes, not the placement), and
when the solve hit its time limit the status FEASIBLE with its ``gap``: a
bound, never an optimum.

Only whole GPUs: a trace with GPU-sharing jobs (``gpu_milli`` < 1000) is refused (the exact
engine models whole extended-resource GPUs here, not the replay's shared devices).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from gangplan.io.errors import SnapshotError
from gangplan.io.loader import load_objects
from gangplan.models.cluster import Cluster
from gangplan.models.objects import CPU, Node
from gangplan.models.result import Status
from gangplan.models.well_known import GPU, GPU_PRODUCT
from gangplan.replay.traces import ReplayJob

NAMESPACE = "replay"


@dataclass
class EpochRecord:
    index: int
    time: float
    pending_jobs: int
    greedy_gpus: int
    exact_gpus: int
    greedy_jobs: int
    exact_jobs: int
    status: str
    gap: float | None
    wall_s: float
    exact_gpus_untried: int = 0
    """GPUs the exact engine admits among the pending jobs greedy did not try at this instant
    (backing off, or in the unschedulable pool with no event for them): the queue's share of
    the regret, the rest being placement."""

    @property
    def regret_gpus(self) -> int:
        return self.exact_gpus - self.greedy_gpus

    @property
    def regret_jobs(self) -> int:
        return self.exact_jobs - self.greedy_jobs


def _quantity(name: str, value: int) -> str:
    return f"{value}m" if name == CPU else str(value)


def node_object(n: Node) -> dict[str, Any]:
    alloc = {k: _quantity(k, int(v)) for k, v in n.allocatable.items()}
    spec: dict[str, Any] = {}
    if n.taints:
        spec["taints"] = [{k: v for k, v in (("key", t.key), ("value", t.value), ("effect", t.effect)) if v} for t in n.taints]
    if n.unschedulable:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n.name, "labels": dict(n.labels)}, "spec": spec, "status": {"allocatable": alloc, "capacity": alloc}}


def job_key(k: int) -> str:
    return f"j{k}"


def _pod(job: ReplayJob, k: int, i: int, node: str | None, group: str | None) -> dict[str, Any]:
    req: dict[str, str] = {}
    if job.cpu_milli:
        req["cpu"] = f"{job.cpu_milli}m"
    if job.memory_mib:
        req["memory"] = f"{job.memory_mib}Mi"
    if job.gpu:
        req[GPU] = str(job.gpu)
    spec: dict[str, Any] = {}
    if node is not None:
        spec["nodeName"] = node
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    if job.priority:
        spec["priority"] = job.priority
    if job.gpu and job.gpu_models:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": GPU_PRODUCT, "operator": "In", "values": list(job.gpu_models)}]}]}}}
    spec["containers"] = [{"name": "worker", "resources": {"requests": req}}]
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{job_key(k)}-{i}", "namespace": NAMESPACE, "labels": {"job": job.name}}, "spec": spec}
    if node is not None:
        pod["status"] = {"phase": "Running"}
    return pod


def epoch_objects(nodes: tuple[Node, ...], jobs: list[ReplayJob], running: dict[int, list[str]], pending: list[int]) -> list[dict[str, Any]]:
    """The state as Kubernetes objects: nodes, running pods bound (``running``: job index ->
    the node of each worker), pending jobs' pods (gangs of more than one with a PodGroup)."""
    out = [node_object(n) for n in nodes]
    for k in sorted(running):
        out += [_pod(jobs[k], k, i, node, None) for i, node in enumerate(running[k])]
    for k in sorted(pending):
        job = jobs[k]
        group = None
        if job.workers > 1:
            group = job_key(k)
            spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": job.gang}}}
            if job.required_topology_key:
                spec["schedulingConstraints"] = {"topology": [{"key": job.required_topology_key}]}
            if job.priority:
                spec["priority"] = job.priority
            out.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": group, "namespace": NAMESPACE}, "spec": spec})
        out += [_pod(job, k, i, None, group) for i in range(job.workers)]
    return out


@dataclass
class Shadow:
    """Per-epoch exact solves of one timed run; ``export`` = (epoch index, directory)."""

    time_limit: float = 2.0
    epoch: float | None = None
    seed: int = 0
    export: tuple[int, str] | None = None
    records: list[EpochRecord] = field(default_factory=list)
    _window: int | None = None
    exported: str | None = None

    def check(self, jobs: list[ReplayJob], source: str) -> None:
        frac = [j for j in jobs if j.gpu and j.gpu_milli < 1000]
        if frac:
            raise SnapshotError(source, f"the shadow policy needs whole GPUs; {len(frac)} jobs share a GPU (gpu_milli < 1000), first {frac[0].name}", field="--policy")

    def due(self, now: float, pending: int) -> bool:
        if not pending:
            return False
        if self.epoch is None:
            return True
        w = math.floor(now / self.epoch)
        if w == self._window:
            return False
        self._window = w
        return True

    def solve(self, now: float, nodes: tuple[Node, ...], jobs: list[ReplayJob], running: dict[int, list[str]], pending: list[int], greedy: dict[int, list[str]],
              tried: set[int] | None = None) -> EpochRecord:
        """``greedy``: job index -> nodes, the jobs of ``pending`` greedy placed at ``now``;
        ``tried``: the jobs greedy attempted at ``now`` (None: all of ``pending``)."""
        import time

        from gangplan.models.result import PodOutcome, Result
        from gangplan.solver.exact import solve_exact

        objects = epoch_objects(nodes, jobs, running, pending)
        index = len(self.records)
        if self.export is not None and self.export[0] == index:
            from pathlib import Path

            from gangplan.io.writer import write_snapshot

            path = Path(self.export[1]) / f"epoch-{index}.yaml"
            write_snapshot(objects, path, header=f"gangplan replay shadow epoch {index} at t={now:g} s: {len(running)} running jobs fixed, {len(pending)} pending")
            self.exported = str(path)
        cluster: Cluster = load_objects(objects, f"<epoch {index}>")
        hint = Result(engine="greedy", status=Status.HEURISTIC, pods={
            f"{NAMESPACE}/{job_key(k)}-{i}": PodOutcome(node=greedy.get(k, [None] * jobs[k].workers)[i] if k in greedy else None)
            for k in pending for i in range(jobs[k].workers)})
        t = time.perf_counter()
        res = solve_exact(cluster, time_limit=self.time_limit, workers=1, seed=self.seed, hint=hint)
        wall = time.perf_counter() - t
        placed: dict[int, int] = {}
        for key, o in res.pods.items():
            if o.node is not None and not o.nominated:
                k = int(key.split("/", 1)[1][1:].split("-", 1)[0])
                placed[k] = placed.get(k, 0) + 1
        admitted = [k for k, n in placed.items() if n >= jobs[k].gang]
        rec = EpochRecord(
            index=index, time=now, pending_jobs=len(pending),
            greedy_gpus=sum(jobs[k].gpus for k in greedy), exact_gpus=sum(jobs[k].gpu * placed[k] for k in admitted),
            greedy_jobs=len(greedy), exact_jobs=len(admitted),
            status=str(res.status), gap=res.gap, wall_s=round(wall, 3),
            exact_gpus_untried=0 if tried is None else sum(jobs[k].gpu * placed[k] for k in admitted if k not in tried),
        )
        self.records.append(rec)
        self.last_result = (cluster, res)
        return rec


__all__ = ["EpochRecord", "Shadow", "epoch_objects", "node_object"]
