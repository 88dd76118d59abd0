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

It is the Cluster of the Kubernetes objects :func:`~gangplan.replay.epochs.epoch_objects` writes
(:func:`~gangplan.replay.epochs.epoch_cluster`: built from models on a whole-GPU trace, loaded from the objects on a GPU-sharing one), so the
exported snapshot (``--export-epoch N DIR``, those objects) is exactly what was solved and
``gangplan diff`` accepts it. Greedy's placements of this round are the hint, so the exact answer is never worse
than greedy's (lexicographic: admitted per priority, then GPUs, :data:`EPOCH_OBJECTIVE`). Per epoch:
``regret_gpus`` = GPUs of pending jobs the exact engine admits minus those greedy admitted at that
instant (may be negative in GPUs when the optimum admits more jobs of fewer GPUs), ``regret_jobs``
the same in jobs, ``exact_gpus_untried`` the part of the optimum's GPUs on jobs greedy did not
even try at that instant (backing off or pooled: regret the queue causes, not the placement), and
when the solve hit its time limit the status FEASIBLE with its ``gap``: a
bound, never an optimum.

**GPU sharing** (issue 22 item 5): on a trace with GPU-sharing jobs the epoch's GPUs are DRA
devices with consumable capacity (:mod:`gangplan.replay.epochs`, "GPU sharing").

GPU counts of the epoch records (``greedy_gpus``, ``exact_gpus``, ``exact_gpus_untried``, the
regrets, ``movable_gpus``) are GPU-equivalents: a worker counts ``gpu * gpu_milli / 1000`` (0.5
for a half-GPU pod), an integer whenever the total is whole (every whole-GPU trace), else a
float rounded to 1/1000.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from gangplan.models.cluster import Cluster
from gangplan.models.objects import Node
from gangplan.models.result import Status
from gangplan.replay.epochs import (
    DEVICE_CLASS,
    DRIVER,
    MILLI,
    NAMESPACE,
    device_index,
    epoch_cluster,
    epoch_group,
    epoch_objects,
    epoch_pod,
    job_key,
    node_object,
    resident,
    sharing,
    write_epoch,
)
from gangplan.replay.traces import ReplayJob


def as_gpus(milli: int) -> int | float:
    """GPU-equivalents of ``milli`` GPU milli: an int when whole, else a float (1/1000 steps)."""
    return milli // MILLI if milli % MILLI == 0 else round(milli / MILLI, 3)


def job_milli(job: ReplayJob, workers: int) -> int:
    """GPU milli of ``workers`` pods of ``job`` (``gpu`` devices of ``gpu_milli`` each)."""
    return job.gpu * min(job.gpu_milli, MILLI) * workers if job.gpu else 0


def gpus_of(jobs: list[ReplayJob], workers: dict[int, int]) -> int | float:
    """GPU-equivalents of the jobs ``workers`` names (job index -> pods placed)."""
    return as_gpus(sum(job_milli(jobs[k], w) for k, w in workers.items()))


@dataclass
class EpochRecord:
    index: int
    time: float
    pending_jobs: int
    greedy_gpus: int | float
    """GPU-equivalents (module docstring: a half-GPU pod counts 0.5), as ``exact_gpus``."""
    exact_gpus: int | float
    greedy_jobs: int
    exact_jobs: int
    status: str
    gap: float | None
    wall_s: float
    exact_gpus_untried: int | float = 0
    """GPUs the exact engine admits among the pending jobs greedy did not try at this instant
    (backing off, or in the unschedulable pool with no event for them): the queue's share of
    the regret, the rest being placement."""
    movable_jobs: int | None = None
    """With the movable bound (``--movable-bound``): pending jobs the exact engine starts when the
    running pods may move (every running job still runs); None when not asked."""
    movable_jobs_bound: int | None = None
    """Its proven bound (equal to ``movable_jobs`` when ``movable_status`` is OPTIMAL)."""
    movable_gpus: int | float | None = None
    movable_status: str | None = None
    repairs: int = 0
    """GPU-sharing traces: extra solves :func:`solve_epoch` needed because the exact engine's
    shared-capacity relaxation put shares on a node that no device allocation holds (each adds
    a node-affinity exclusion); when > 0 the status is OPTIMAL only if the answer admits as many
    jobs as the first, relaxed, optimum (an upper bound), else FEASIBLE with that gap."""

    @property
    def regret_gpus(self) -> int | float:
        d = self.exact_gpus - self.greedy_gpus
        return d if isinstance(d, int) else as_gpus(round(d * MILLI))

    @property
    def regret_jobs(self) -> int:
        return self.exact_jobs - self.greedy_jobs


EPOCH_OBJECTIVE = "gpus"
"""The exact engine's objective at every epoch: entities admitted per priority, then the GPUs of
the placed pods (``nvidia.com/gpu``; on a GPU-sharing epoch, whose GPUs are DRA devices, that tier
is 0 everywhere and pods placed decide), then pods placed: the lexicographic order the module
docstring promises. With the default objective (no GPU tier) an epoch could start a 1-GPU job
where greedy started a 5-GPU one and report a regret of -4 GPUs."""


@dataclass
class MovableBound:
    """The epoch's state with running pods movable (item 4c): every running job must still run,
    anywhere; how many pending jobs could start with them (``jobs``: the solution's count,
    ``jobs_bound``: CP-SAT's proven bound on it, equal when ``status`` is OPTIMAL)."""

    jobs: int
    jobs_bound: int
    gpus: int | float
    status: str


@dataclass
class EpochSolve:
    """One epoch's exact solve (:func:`solve_epoch`): ``placements`` = admitted pending job ->
    the node of each of its pods; ``devices`` (GPU-sharing traces) = the same jobs -> the device
    indices each pod's claim got on its node (the Result's ``claims``)."""

    record: EpochRecord
    placements: dict[int, list[str]]
    cluster: Cluster
    result: Any
    devices: dict[int, list[tuple[int, ...]]] = field(default_factory=dict)


def _job_of(key: str) -> tuple[int, int]:
    name = key.split("/", 1)[1]
    k, i = name[1:].split("-", 1)
    return int(k), int(i)


def _hint(jobs: list[ReplayJob], placed: dict[int, list[str]], keys: list[int]):
    from gangplan.models.result import PodOutcome, Result

    return Result(
        engine="greedy",
        status=Status.HEURISTIC,
        pods={
            f"{NAMESPACE}/{job_key(k)}-{i}": PodOutcome(node=placed[k][i] if k in placed else None)
            for k in keys
            for i in range(jobs[k].gang)
        },
    )


def solve_epoch(
    now: float,
    index: int,
    nodes: tuple[Node, ...],
    jobs: list[ReplayJob],
    running: dict[int, list[str]],
    pending: list[int],
    greedy: dict[int, list[str]],
    *,
    time_limit: float,
    seed: int,
    tried: set[int] | None = None,
    export: str | None = None,
    devices: dict[int, list[tuple[int, ...]]] | None = None,
    placer=None,
) -> EpochSolve:
    """The exact engine on one epoch's state: ``running`` (job -> nodes of its pods) fixed,
    ``pending`` jobs free, ``greedy`` (the pending jobs greedy placed from this state) the hint,
    so the answer is never worse. No preemption: the running pods stay (a greedy start that
    preempted shows as negative regret). ``export``: write the
    state to this path first. ``devices``: on a GPU-sharing trace, the devices of each running
    job's pods (:func:`epoch_objects`). The one epoch solve of the ``shadow`` and ``optimal`` policies."""
    import time

    from gangplan.solver.exact import solve_exact

    if export is not None:
        write_epoch(
            epoch_objects(nodes, jobs, running, pending, devices, placer=placer),
            export,
            now,
            index,
            len(running),
            len(pending),
        )
    shared = sharing(jobs)
    hint = _hint(jobs, greedy, pending)
    avoid: dict[tuple[int, int], set[str]] = {}
    first_jobs: int | None = None
    first_status = ""
    wall = 0.0
    repairs = 0
    while True:
        cluster = epoch_cluster(
            nodes,
            jobs,
            running,
            pending,
            source=f"<epoch {index}>",
            avoid=avoid,
            placer=placer,
            devices=devices,
        )
        t = time.perf_counter()
        res = solve_exact(
            cluster,
            time_limit=time_limit,
            workers=1,
            seed=seed,
            hint=hint,
            preemption=False,
            objective=EPOCH_OBJECTIVE,
        )
        wall += time.perf_counter() - t
        where, devs, unallocated = _read_solve(res, jobs, shared)
        placements = {
            k: [w[i] for i in sorted(w)] for k, w in where.items() if len(w) >= jobs[k].gang
        }
        if first_jobs is None:
            first_jobs, first_status = len(placements), str(res.status)
        if not unallocated:
            break
        # The exact engine's shared-capacity rows are a bin-packing relaxation on nodes of several
        # GPUs with mixed shares (docs/explanation/dra.md): no joint device allocation holds the
        # shares it put on these nodes. Forbid one pod there that greedy's hint does not put
        # there (the hint's own pods on a node have an allocation: greedy made it), then every
        # such pod after 3 rounds; each round strictly restricts, and the hint stays feasible.
        repairs += 1
        _forbid(unallocated, greedy, jobs, avoid, repairs, index)
    status, gap = str(res.status), res.gap
    if repairs:
        # the first (relaxed) solve's admitted jobs bound the true optimum from above
        relaxed_optimal = first_status == "OPTIMAL"
        if not (relaxed_optimal and len(placements) >= first_jobs and status == "OPTIMAL"):
            status = "FEASIBLE"
            gap = (
                round((first_jobs - len(placements)) / first_jobs, 6)
                if first_jobs and relaxed_optimal
                else gap
            )
    rec = EpochRecord(
        index=index,
        time=now,
        pending_jobs=len(pending),
        greedy_gpus=gpus_of(jobs, {k: jobs[k].gang for k in greedy}),
        exact_gpus=gpus_of(jobs, {k: len(v) for k, v in placements.items()}),
        greedy_jobs=len(greedy),
        exact_jobs=len(placements),
        status=status,
        gap=gap,
        wall_s=round(wall, 3),
        exact_gpus_untried=0
        if tried is None
        else gpus_of(jobs, {k: len(v) for k, v in placements.items() if k not in tried}),
        repairs=repairs,
    )
    chosen = {k: [devs[k][i] for i in sorted(devs[k])] for k in placements if k in devs}
    return EpochSolve(rec, placements, cluster, res, chosen)


def _read_solve(res, jobs: list[ReplayJob], shared: bool):
    """An epoch solve's placed pods: job -> worker -> node, on a GPU-sharing trace job -> worker
    -> the device indices of its claim, and node -> the (job, worker) pods whose shares no device
    allocation holds there (:func:`solve_epoch` repairs those)."""
    where: dict[int, dict[int, str]] = {}
    devs: dict[int, dict[int, tuple[int, ...]]] = {}
    unallocated: dict[str, list[tuple[int, int]]] = {}
    for key, o in res.pods.items():
        if o.node is not None and not o.nominated:
            k, i = _job_of(key)
            where.setdefault(k, {})[i] = o.node
            if shared and jobs[k].gpu:
                got = tuple(
                    device_index(c.device)
                    for c in o.claims
                    if c.driver == DRIVER and c.pool == o.node
                )
                if len(got) != jobs[k].gpu:
                    unallocated.setdefault(o.node, []).append((k, i))
                devs.setdefault(k, {})[i] = got
    return where, devs, unallocated


def _forbid(
    unallocated: dict[str, list[tuple[int, int]]],
    greedy: dict[int, list[str]],
    jobs: list[ReplayJob],
    avoid: dict[tuple[int, int], set[str]],
    repairs: int,
    index: int,
) -> None:
    """One repair round of :func:`solve_epoch` (the comment there): add to ``avoid`` one pod per
    node greedy's hint does not put there, every such pod after 3 rounds."""
    for node, pods in unallocated.items():
        movable = [
            (k, i)
            for k, i in pods
            if not (k in greedy and i < len(greedy[k]) and greedy[k][i] == node)
        ]
        movable.sort(key=lambda ki: (-job_milli(jobs[ki[0]], 1), ki))
        for ki in movable if repairs > 3 else movable[:1]:
            avoid.setdefault(ki, set()).add(node)
        if not movable:
            raise AssertionError(
                f"epoch {index}: node {node}: no device allocation for the exact engine's shares, all greedy's"
            )


def movable_bound(
    nodes: tuple[Node, ...],
    jobs: list[ReplayJob],
    running: dict[int, list[str]],
    pending: list[int],
    placed: dict[int, list[str]],
    *,
    time_limit: float,
    seed: int,
    placer=None,
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
        boosted[k] = replace(
            jobs[k], priority=top, min_count=len(running[k]), workers=len(running[k])
        )
    keys = sorted(running) + sorted(pending)
    cluster = epoch_cluster(nodes, boosted, {}, keys, source="<movable bound>", placer=placer)
    hint = _hint(boosted, {**running, **placed}, keys)
    res = solve_exact(
        cluster,
        time_limit=time_limit,
        workers=1,
        seed=seed,
        hint=hint,
        preemption=False,
        objective=EPOCH_OBJECTIVE,
    )
    counts: dict[int, int] = {}
    for key, o in res.pods.items():
        if o.node is not None and not o.nominated:
            k, _ = _job_of(key)
            counts[k] = counts.get(k, 0) + 1
    admitted = [k for k in pending if counts.get(k, 0) >= jobs[k].gang]
    if len([k for k in running if counts.get(k, 0) >= len(running[k])]) < len(running):
        raise AssertionError(
            "movable bound: the running jobs no longer all run (their placement was the hint)"
        )
    tiers = [admitted_tier(p) for p in sorted({jobs[k].priority for k in pending}, reverse=True)]
    bound = (
        sum(int(round(res.bound.get(t, res.objective.get(t, 0)))) for t in tiers)
        if str(res.status) != "OPTIMAL"
        else len(admitted)
    )
    return MovableBound(
        jobs=len(admitted),
        jobs_bound=max(bound, len(admitted)),
        gpus=gpus_of(jobs, {k: counts[k] for k in admitted}),
        status=str(res.status),
    )


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
        """Nothing is refused any more: GPU-sharing traces are written with DRA consumable
        capacity (:mod:`gangplan.replay.epochs`), and the one path that still sees whole GPUs (the
        timed run's preemption) is off on such traces (:mod:`gangplan.replay.timed`). Kept for callers."""
        return None

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

    def record(
        self,
        rec: EpochRecord,
        nodes: tuple[Node, ...],
        jobs: list[ReplayJob],
        running: dict[int, list[str]],
        pending: list[int],
        placed: dict[int, list[str]],
        placer=None,
    ) -> EpochRecord:
        """Keep ``rec``, with the movable bound when asked (``placed``: the answer at this epoch)."""
        if self.movable:
            if len(placed) == len(
                pending
            ):  # every pending job starts: nothing above it, by counting
                mb = MovableBound(
                    jobs=len(placed),
                    jobs_bound=len(placed),
                    gpus=gpus_of(jobs, {k: len(v) for k, v in placed.items()}),
                    status="OPTIMAL",
                )
            else:
                mb = movable_bound(
                    nodes,
                    jobs,
                    running,
                    pending,
                    placed,
                    time_limit=self.time_limit,
                    seed=self.seed,
                    placer=placer,
                )
            rec.movable_jobs, rec.movable_jobs_bound, rec.movable_gpus, rec.movable_status = (
                mb.jobs,
                mb.jobs_bound,
                mb.gpus,
                mb.status,
            )
        self.records.append(rec)
        return rec

    def solve(
        self,
        now: float,
        nodes: tuple[Node, ...],
        jobs: list[ReplayJob],
        running: dict[int, list[str]],
        pending: list[int],
        greedy: dict[int, list[str]],
        tried: set[int] | None = None,
        placer=None,
    ) -> EpochRecord:
        """``greedy``: job index -> nodes, the jobs of ``pending`` greedy placed at ``now``;
        ``tried``: the jobs greedy attempted at ``now`` (None: all of ``pending``)."""
        index = len(self.records)
        devices = None
        if sharing(jobs):
            # the timed run's placer (the owner of ``nodes``): its running pods keep their devices
            # through greedy's round (no preemption on a sharing trace), so they are read now
            if placer is None:
                raise ValueError(
                    "shadow on a GPU-sharing trace: no live placer owns these nodes (the devices of running pods are unknown)"
                )
            devices = {k: placer.devices_of_job(f"j{k}") for k in running if jobs[k].gpu}
        es = solve_epoch(
            now,
            index,
            nodes,
            jobs,
            running,
            pending,
            greedy,
            time_limit=self.time_limit,
            seed=self.seed,
            tried=tried,
            export=self.export_path(index),
            devices=devices,
            placer=placer,
        )
        self.last_result = (es.cluster, es.result)
        return self.record(es.record, nodes, jobs, running, pending, es.placements, placer=placer)


__all__ = [
    "DEVICE_CLASS",
    "DRIVER",
    "NAMESPACE",
    "EpochRecord",
    "EpochSolve",
    "MovableBound",
    "Shadow",
    "as_gpus",
    "device_index",
    "epoch_cluster",
    "epoch_group",
    "epoch_objects",
    "epoch_pod",
    "gpus_of",
    "job_key",
    "movable_bound",
    "node_object",
    "resident",
    "sharing",
    "solve_epoch",
    "write_epoch",
]
