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
    movable_jobs: int | None = None
    """With the movable bound (``--movable-bound``): pending jobs the exact engine starts when the
    running pods may move (every running job still runs); None when not asked."""
    movable_jobs_bound: int | None = None
    """Its proven bound (equal to ``movable_jobs`` when ``movable_status`` is OPTIMAL)."""
    movable_gpus: int | None = None
    movable_status: str | None = None

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
    the node of each worker), pending jobs' pods (``gang`` workers each, the workers a replay
    places; gangs of more than one with a PodGroup)."""
    out = [node_object(n) for n in nodes]
    for k in sorted(running):
        out += [_pod(jobs[k], k, i, node, None) for i, node in enumerate(running[k])]
    for k in sorted(pending):
        job = jobs[k]
        group = None
        if job.gang > 1:
            group = job_key(k)
            spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": job.gang}}}
            if job.required_topology_key:
                spec["schedulingConstraints"] = {"topology": [{"key": job.required_topology_key}]}
            if job.priority:
                spec["priority"] = job.priority
            out.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": group, "namespace": NAMESPACE}, "spec": spec})
        out += [_pod(job, k, i, None, group) for i in range(job.gang)]
    return out


@dataclass
class MovableBound:
    """The epoch's state with running pods movable (item 4c): every running job must still run,
    anywhere; how many pending jobs could start with them (``jobs``: the solution's count,
    ``jobs_bound``: CP-SAT's proven bound on it, equal when ``status`` is OPTIMAL)."""

    jobs: int
    jobs_bound: int
    gpus: int
    status: str


@dataclass
class EpochSolve:
    """One epoch's exact solve (:func:`solve_epoch`): ``placements`` = admitted pending job ->
    the node of each of its pods."""

    record: EpochRecord
    placements: dict[int, list[str]]
    cluster: Cluster
    result: Any


def _job_of(key: str) -> tuple[int, int]:
    name = key.split("/", 1)[1]
    k, i = name[1:].split("-", 1)
    return int(k), int(i)


def _hint(jobs: list[ReplayJob], placed: dict[int, list[str]], keys: list[int]):
    from gangplan.models.result import PodOutcome, Result

    return Result(engine="greedy", status=Status.HEURISTIC, pods={
        f"{NAMESPACE}/{job_key(k)}-{i}": PodOutcome(node=placed[k][i] if k in placed else None) for k in keys for i in range(jobs[k].gang)})


def write_epoch(objects: list[dict[str, Any]], path: str, now: float, index: int, running: int, pending: int) -> None:
    """Write one epoch's objects (:func:`epoch_objects`) as a snapshot for ``gangplan diff``."""
    from pathlib import Path

    from gangplan.io.writer import write_snapshot

    write_snapshot(objects, Path(path), header=f"gangplan replay epoch {index} at t={now:g} s: {running} running jobs fixed, {pending} pending")


def solve_epoch(
    now: float, index: int, nodes: tuple[Node, ...], jobs: list[ReplayJob], running: dict[int, list[str]], pending: list[int], greedy: dict[int, list[str]], *,
    time_limit: float, seed: int, tried: set[int] | None = None, export: str | None = None,
) -> EpochSolve:
    """The exact engine on one epoch's state: ``running`` (job -> nodes of its pods) fixed,
    ``pending`` jobs free, ``greedy`` (the pending jobs greedy placed from this state) the hint,
    so the answer is never worse. No preemption: the running pods stay (a greedy start that
    preempted shows as negative regret). ``export``: write the
    state to this path first. The one epoch solve of the ``shadow`` and ``optimal`` policies."""
    import time

    from gangplan.solver.exact import solve_exact

    objects = epoch_objects(nodes, jobs, running, pending)
    if export is not None:
        write_epoch(objects, export, now, index, len(running), len(pending))
    cluster: Cluster = load_objects(objects, f"<epoch {index}>")
    t = time.perf_counter()
    res = solve_exact(cluster, time_limit=time_limit, workers=1, seed=seed, hint=_hint(jobs, greedy, pending), preemption=False)
    wall = time.perf_counter() - t
    where: dict[int, dict[int, str]] = {}
    for key, o in res.pods.items():
        if o.node is not None and not o.nominated:
            k, i = _job_of(key)
            where.setdefault(k, {})[i] = o.node
    placements = {k: [w[i] for i in sorted(w)] for k, w in where.items() if len(w) >= jobs[k].gang}
    rec = EpochRecord(
        index=index, time=now, pending_jobs=len(pending),
        greedy_gpus=sum(jobs[k].gpu * jobs[k].gang for k in greedy), exact_gpus=sum(jobs[k].gpu * len(placements[k]) for k in placements),
        greedy_jobs=len(greedy), exact_jobs=len(placements),
        status=str(res.status), gap=res.gap, wall_s=round(wall, 3),
        exact_gpus_untried=0 if tried is None else sum(jobs[k].gpu * len(placements[k]) for k in placements if k not in tried),
    )
    return EpochSolve(rec, placements, cluster, res)


def movable_bound(
    nodes: tuple[Node, ...], jobs: list[ReplayJob], running: dict[int, list[str]], pending: list[int], placed: dict[int, list[str]], *,
    time_limit: float, seed: int,
) -> MovableBound:
    """Item 4c: the epoch with running pods movable. Every job of ``running`` becomes a pending
    job one priority above every pending job, so the first tier of the exact objective (entities
    admitted per priority, highest first) keeps them all running (their current placement is the
    hint and proves it at once), and the next tiers count the pending jobs that could start with
    them anywhere: no placement history, only the nodes and the running set. ``placed``
    (pending job -> nodes, e.g. the policy's own answer at this epoch) joins the hint."""
    from dataclasses import replace

    from gangplan.models.objective import admitted_tier
    from gangplan.solver.exact import solve_exact

    top = max((jobs[k].priority for k in pending), default=0) + 1
    boosted = list(jobs)
    for k in running:
        boosted[k] = replace(jobs[k], priority=top, min_count=len(running[k]), workers=len(running[k]))
    keys = sorted(running) + sorted(pending)
    cluster: Cluster = load_objects(epoch_objects(nodes, boosted, {}, keys), "<movable bound>")
    hint = _hint(boosted, {**running, **placed}, keys)
    res = solve_exact(cluster, time_limit=time_limit, workers=1, seed=seed, hint=hint, preemption=False)
    counts: dict[int, int] = {}
    for key, o in res.pods.items():
        if o.node is not None and not o.nominated:
            k, _ = _job_of(key)
            counts[k] = counts.get(k, 0) + 1
    admitted = [k for k in pending if counts.get(k, 0) >= jobs[k].gang]
    if len([k for k in running if counts.get(k, 0) >= len(running[k])]) < len(running):
        raise AssertionError("movable bound: the running jobs no longer all run (their placement was the hint)")
    tiers = [admitted_tier(p) for p in sorted({jobs[k].priority for k in pending}, reverse=True)]
    bound = sum(int(round(res.bound.get(t, res.objective.get(t, 0)))) for t in tiers) if str(res.status) != "OPTIMAL" else len(admitted)
    return MovableBound(jobs=len(admitted), jobs_bound=max(bound, len(admitted)), gpus=sum(jobs[k].gpu * counts[k] for k in admitted), status=str(res.status))


@dataclass
class Shadow:
    """Per-epoch exact solves of one timed run; ``export`` = (epoch index, directory);
    ``movable``: also the bound with running pods movable (:func:`movable_bound`) per epoch."""

    time_limit: float = 2.0
    epoch: float | None = None
    seed: int = 0
    export: tuple[int, str] | None = None
    movable: bool = False
    records: list[EpochRecord] = field(default_factory=list)
    _window: int | None = None
    exported: str | None = None

    def check(self, jobs: list[ReplayJob], source: str, policy: str = "shadow") -> None:
        frac = [j for j in jobs if j.gpu and j.gpu_milli < 1000]
        if frac:
            raise SnapshotError(source, f"the {policy} policy needs whole GPUs; {len(frac)} jobs share a GPU (gpu_milli < 1000), first {frac[0].name}", field="--policy")

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

    def export_path(self, index: int) -> str | None:
        if self.export is not None and self.export[0] == index:
            from pathlib import Path

            path = str(Path(self.export[1]) / f"epoch-{index}.yaml")
            self.exported = path
            return path
        return None

    def record(self, rec: EpochRecord, nodes: tuple[Node, ...], jobs: list[ReplayJob], running: dict[int, list[str]], pending: list[int], placed: dict[int, list[str]]) -> EpochRecord:
        """Keep ``rec``, with the movable bound when asked (``placed``: the answer at this epoch)."""
        if self.movable:
            if len(placed) == len(pending):  # every pending job starts: nothing above it, by counting
                mb = MovableBound(jobs=len(placed), jobs_bound=len(placed), gpus=sum(jobs[k].gpu * len(v) for k, v in placed.items()), status="OPTIMAL")
            else:
                mb = movable_bound(nodes, jobs, running, pending, placed, time_limit=self.time_limit, seed=self.seed)
            rec.movable_jobs, rec.movable_jobs_bound, rec.movable_gpus, rec.movable_status = mb.jobs, mb.jobs_bound, mb.gpus, mb.status
        self.records.append(rec)
        return rec

    def solve(self, now: float, nodes: tuple[Node, ...], jobs: list[ReplayJob], running: dict[int, list[str]], pending: list[int], greedy: dict[int, list[str]],
              tried: set[int] | None = None) -> EpochRecord:
        """``greedy``: job index -> nodes, the jobs of ``pending`` greedy placed at ``now``;
        ``tried``: the jobs greedy attempted at ``now`` (None: all of ``pending``)."""
        index = len(self.records)
        es = solve_epoch(now, index, nodes, jobs, running, pending, greedy, time_limit=self.time_limit, seed=self.seed, tried=tried, export=self.export_path(index))
        self.last_result = (es.cluster, es.result)
        return self.record(es.record, nodes, jobs, running, pending, es.placements)


__all__ = ["EpochRecord", "EpochSolve", "MovableBound", "Shadow", "epoch_objects", "movable_bound", "node_object", "solve_epoch", "write_epoch"]
