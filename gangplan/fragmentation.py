"""How fragmented the cluster is: the ``fragmentation`` section of ``gangplan inspect``
(:class:`~gangplan.models.documents.Fragmentation`).

GPUs are whole ``nvidia.com/gpu`` (allocatable on the Nodes, requested by the pods): a node's GPUs
are devices of 1000 milli, each free or held, as the replay's device table models a whole GPU
(:mod:`gangplan.replay.gpushare`). GPUs published only through DRA ResourceSlices are not counted
here.

**Per domain** of every topology level of the snapshot (the levels of
:class:`gangplan.topology.TopologyTree`: a Kueue Topology's, or the well-known labels present;
the hostname level is left out): the GPUs allocatable, free (allocatable minus what bound pods
request), free on *idle nodes* (nodes with every GPU free), and the FGD fragment and stranded GPUs
of its nodes.

**The pending shape mix**: every distinct shape of the pending pods (non-zero cpu request, GPUs,
the GPU models their node selector or required node affinity on ``nvidia.com/gpu.product``
allows), with its number of pods and share. It is the FGD simulator's ``GetTypicalPods`` over the
pending pods with every kind kept (popularity threshold 100 %, CPU pods included, as the paper's
experiment includes them).

**FGD fragmentation against the mix** (hkust-adsl/kubernetes-scheduler-simulator @29a1e4c,
``pkg/utils/frag.go``, ``pkg/simulator/analysis.go`` ``ClusterGpuFragReport``), with the one
per-node rule :func:`gangplan.predicates.fragment.node_fragment` the replay's meter uses:

* ``fragmentGpus``: the sum over nodes of the idle GPU milli the mix's pods could not use
  (per shape: all the node's idle milli when the shape does not fit the node, else the milli on
  devices with less than the shape's per-GPU milli; weighted by the shape's share), in GPUs;
* ``fragmentationRate``: ``100 * fragment / idle`` (the simulator's ``Frag ratio``),
  ``fragmentShare``: ``100 * fragment / allocatable``;
* ``strandedGpus``: the idle GPUs on nodes where no GPU shape of the mix fits at all.

**Largest gang per pending gang shape** (gang PodGroups with pending pods, grouped by minCount,
per-pod request, topology key and the pod's other placement constraints): how many pods like the
group's first pending pod, held to one domain of its topology key, fit now, every other pending
pod held back and nothing preempted (the idea of ``make-room --copies``,
:func:`gangplan.solver.room.grow.copies_that_fit`):

* ``bound``: an upper bound from resources alone (per node the pods its free allocatable holds,
  summed per domain of the key, the best domain; cordoned nodes hold none; an extended resource
  a DRA DeviceClass serves, KEP-5004, bounds nothing on a node that does not list it), always
  computed;
* with ``inspect --fit`` (:func:`gang_fits`, ``fit=True``): ``exact``, the exact engine's most
  pods of one gang of ``min(bound, cap)`` pods with minCount 1 (``proven`` when optimal), and
  ``greedy``, the largest ``k`` by bisection for which kube-scheduler's cycle admits a gang of
  ``k`` pods with minCount ``k`` (it admits ``k`` and not ``k + 1``). The work is bounded: a gang
  of at most :data:`MAX_GANG` pods (or the largest minCount of the shape), :data:`FIT_TIME_LIMIT`
  work units of exact search per shape, :data:`MAX_FIT_SHAPES` shapes.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gangplan.models.cluster import Cluster
from gangplan.models.documents import (
    DomainGpus,
    FgdMeasure,
    Fragmentation,
    FragmentationLevel,
    GangShapeFit,
    PendingShape,
)
from gangplan.models.objects import CPU, PODS, Pod, PodGroup
from gangplan.models.quantity import format_quantity
from gangplan.models.well_known import GPU, GPU_PRODUCT, HOSTNAME
from gangplan.predicates.fragment import node_fragment, shape_mix

MILLI = 1000
MAX_GANG = 256
"""Pods of one trial gang at most (or the shape's largest minCount when larger)."""
FIT_TIME_LIMIT = 2.0
"""Work units of exact search per gang shape (``inspect --fit``)."""
MAX_FIT_SHAPES = 8
"""Gang shapes the engines are run for; the rest keep their resource bound."""
FIT_NAME = "gangplan-fit"
"""The trial PodGroup's name."""


@dataclass(frozen=True)
class MixShape:
    """One shape of the pending mix (:class:`gangplan.predicates.fragment.PodShape`)."""

    cpu_milli: int
    gpu: int
    gpu_milli: int
    models: tuple[str, ...]
    freq: float


MAX_DEVICES = 4096
"""The most GPUs of one node FGD's per-device model is built for; a snapshot claiming more (a
typo, a fuzzed quantity) gets no FGD measure rather than an array of that width."""


@dataclass
class NodeGpus:
    """Per node of the snapshot (snapshot order): GPUs allocatable and free, free cpu milli, the
    GPU model code (into ``models``), and the per-device free milli the FGD rule reads."""

    gpus: np.ndarray
    free: np.ndarray
    cpu_left: np.ndarray
    codes: np.ndarray
    models: list[str]
    devices: np.ndarray = field(repr=False)

    @classmethod
    def of(cls, cluster: Cluster) -> NodeGpus:
        index = cluster.node_index
        n = len(cluster.nodes)
        used_gpu = np.zeros(n, dtype=np.int64)
        used_cpu = np.zeros(n, dtype=np.int64)
        for p in cluster.bound_pods:
            j = index.get(p.node_name)  # type: ignore[arg-type]
            if j is not None:
                used_gpu[j] += int(p.requests.get(GPU, 0))
                used_cpu[j] += int(p.requests.get(CPU, 0))
        gpus = np.array([int(nd.allocatable.get(GPU, 0)) for nd in cluster.nodes], dtype=np.int64)
        cpu = np.array([int(nd.allocatable.get(CPU, 0)) for nd in cluster.nodes], dtype=np.int64)
        free = np.maximum(gpus - used_gpu, 0)
        values: dict[str, int] = {}
        codes = np.full(n, -1, dtype=np.int64)
        for j, nd in enumerate(cluster.nodes):
            v = nd.labels.get(GPU_PRODUCT)
            if v is not None:
                codes[j] = values.setdefault(v, len(values))
        width = max(1, int(gpus.max()) if n else 1)
        if width > MAX_DEVICES:  # no such node exists: FGD's per-device model is not built
            devices = np.zeros((n, 0), dtype=np.int64)
        else:
            devices = np.where(np.arange(width)[None, :] < free[:, None], MILLI, 0).astype(np.int64)
        return cls(gpus, free, cpu - used_cpu, codes, list(values), devices)


def gpu_models(pod: Pod) -> tuple[str, ...]:
    """The GPU models a pod accepts: its node selector on ``nvidia.com/gpu.product``, else the
    values of an ``In`` requirement on it in every required node-affinity term (their union);
    ``()`` for any model."""
    if GPU_PRODUCT in pod.node_selector:
        return (pod.node_selector[GPU_PRODUCT],)
    terms = pod.affinity.node_required or ()
    found: set[str] = set()
    for term in terms:
        reqs = [r for r in term.match_expressions if r.key == GPU_PRODUCT and r.operator == "In"]
        if not reqs:
            return ()
        found.update(reqs[0].values)
    return tuple(sorted(found))


def pending_mix(cluster: Cluster) -> tuple[list[PendingShape], list[MixShape]]:
    """The pending pods' shapes, most pods first (ties: more GPUs, more cpu, models): as the
    document reports them and as the FGD rule reads them."""
    counts: Counter[tuple[int, int, int, tuple[str, ...]]] = Counter()
    for p in cluster.pending_pods:
        gpu = int(p.requests.get(GPU, 0))
        counts[
            (
                int(p.nonzero_requests.get(CPU, 100)),
                gpu,
                MILLI if gpu else 0,
                gpu_models(p) if gpu else (),
            )
        ] += 1
    total = sum(counts.values())
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], -kv[0][1], -kv[0][0], kv[0][3]))
    rows = [
        PendingShape(
            cpu=format_quantity(CPU, cpu),
            gpus=gpu,
            gpu_milli=milli,
            models=list(models),
            pods=n,
            share=round(n / total, 4),
        )
        for (cpu, gpu, milli, models), n in ordered
    ]
    shapes = [
        MixShape(cpu, gpu, milli, models, n / total) for (cpu, gpu, milli, models), n in ordered
    ]
    return rows, shapes


def _gpus(milli: float) -> float:
    return round(float(milli) / MILLI, 3)


def _domain_rows(
    tree: Any, ng: NodeGpus, frag: np.ndarray | None, stranded: np.ndarray | None
) -> list[FragmentationLevel]:
    idle = (ng.gpus > 0) & (ng.free == ng.gpus)
    levels = []
    for i, key in enumerate(tree.levels):
        if key == HOSTNAME:
            continue
        dom = tree.node_domain[i]
        rows = []
        for d, name in enumerate(tree.domains[i]):
            mask = dom == d
            rows.append(
                DomainGpus(
                    domain=name,
                    nodes=int(mask.sum()),
                    gpus=int(ng.gpus[mask].sum()),
                    free=int(ng.free[mask].sum()),
                    idle_nodes=int((mask & idle).sum()),
                    free_on_idle_nodes=int(ng.free[mask & idle].sum()),
                    fragment_gpus=None if frag is None else _gpus(frag[mask].sum()),
                    stranded_gpus=None if stranded is None else _gpus(stranded[mask].sum()),
                )
            )
        rows.sort(key=lambda r: (-r.free, -r.free_on_idle_nodes, r.domain))
        levels.append(
            FragmentationLevel(label=key, nodes_without_label=int((dom < 0).sum()), domains=rows)
        )
    return levels


def fragmentation(
    cluster: Cluster, *, fit: bool = False, seed: int = 0, tree: Any = None
) -> Fragmentation:
    """The ``fragmentation`` section of ``inspect`` (module docstring); ``fit`` runs the engines
    for the largest gang of each pending gang shape; ``tree``: the cluster's
    :class:`~gangplan.topology.TopologyTree` when the caller has it."""
    if tree is None:
        from gangplan.topology import TopologyTree

        tree = TopologyTree.from_cluster(cluster)
    ng = NodeGpus.of(cluster)
    mix_rows, shapes = pending_mix(cluster)
    frag = stranded = None
    measure = None
    if shapes and ng.devices.shape[1]:
        frag, stranded = node_fragment(
            shape_mix(shapes, ng.models), ng.devices, ng.cpu_left, ng.codes
        )
        idle = int(ng.free.sum()) * MILLI
        capacity = int(ng.gpus.sum()) * MILLI
        total = float(frag.sum())
        measure = FgdMeasure(
            idle_gpus=_gpus(idle),
            fragment_gpus=_gpus(total),
            fragmentation_rate=round(100.0 * total / idle, 2) if idle else 0.0,
            fragment_share=round(100.0 * total / capacity, 2) if capacity else 0.0,
            stranded_gpus=_gpus(stranded.sum()),
        )
    idle_nodes = (ng.gpus > 0) & (ng.free == ng.gpus)
    return Fragmentation(
        gpus=int(ng.gpus.sum()),
        free=int(ng.free.sum()),
        idle_nodes=int(idle_nodes.sum()),
        free_on_idle_nodes=int(ng.free[idle_nodes].sum()),
        levels=_domain_rows(tree, ng, frag, stranded),
        mix=mix_rows,
        fgd=measure,
        gangs=[g.row for g in gang_fits(cluster, fit=fit, seed=seed)],
        fit=fit,
    )


# ---- the largest gang of each pending gang shape -----------------------------------------------
@dataclass
class GangFit:
    """One pending gang shape's answer (``row``) and, with ``fit``, the engines' runs on their
    trial snapshots (``runs``: (trial cluster, Result), for the validator)."""

    row: GangShapeFit
    rep: Pod
    group: PodGroup
    kind: tuple
    """What the largest gang depends on (request, topology key, other constraints): shapes that
    differ only in minCount share one computation."""
    runs: list[tuple[Cluster, Any]] = field(default_factory=list)


def _constraints(p: Pod) -> str:
    """What besides resources decides where a pod may go, as one comparable string."""
    return p.model_dump_json(
        include={
            "node_selector",
            "affinity",
            "tolerations",
            "topology_spread",
            "host_ports",
            "scheduler_name",
        }
    )


def _shapes(cluster: Cluster) -> list[GangFit]:
    """Gang PodGroups with pending pods (leaves of the group forest, :attr:`Cluster.groups`)
    grouped by shape, the first group (by key) representing."""
    firsts: dict[str, Pod] = {}
    for p in cluster.pending_pods:
        if p.group_key and p.group_key not in firsts:
            firsts[p.group_key] = p
    by_shape: dict[tuple, list[str]] = defaultdict(list)
    reps: dict[tuple, tuple[Pod, PodGroup]] = {}
    tree = cluster.groups
    for key in sorted(firsts):
        if key not in tree or not tree.node(key).is_leaf:
            continue
        g = tree.node(key).obj
        if not isinstance(g, PodGroup) or g.policy != "gang":
            continue
        rep = firsts[key]
        shape = (
            g.min_count,
            tuple(sorted(rep.requests.items())),
            g.topology_key or "",
            _constraints(rep),
        )
        by_shape[shape].append(key)
        reps.setdefault(shape, (rep, g))
    out = []
    for shape, groups in by_shape.items():
        rep, g = reps[shape]
        row = GangShapeFit(
            pods=g.min_count,
            request={r: format_quantity(r, q) for r, q in sorted(rep.requests.items())},
            topology_key=g.topology_key,
            groups=groups,
            bound=0,
        )
        out.append(GangFit(row=row, rep=rep, group=g, kind=shape[1:]))
    out.sort(
        key=lambda f: (
            -int(f.rep.requests.get(GPU, 0)),
            -f.row.pods,
            f.row.topology_key or "",
            f.row.groups[0],
        )
    )
    return out


def used_by_node(cluster: Cluster) -> dict[str, Counter[str]]:
    """What the bound pods request on each node, the ``pods`` count included."""
    used: dict[str, Counter[str]] = defaultdict(Counter)
    for p in cluster.bound_pods:
        used[p.node_name].update(p.requests)  # type: ignore[index]
        used[p.node_name][PODS] += 1  # type: ignore[index]
    return used


def resource_bound(
    cluster: Cluster, pod: Pod, key: str | None, used: dict[str, Counter[str]] | None = None
) -> int:
    """The most pods like ``pod`` that one domain of ``key`` (the whole cluster without a key)
    could hold by free allocatable alone: per schedulable node ``min_r free_r // request_r``
    (``pods`` counted), summed per domain, the best domain. ``used``: :func:`used_by_node`,
    when the caller has it."""
    if used is None:
        used = used_by_node(cluster)
    req = {r: q for r, q in pod.requests.items() if q > 0}
    req[PODS] = 1
    by_dra = _dra_extended(cluster)
    per_domain: Counter[str] = Counter()
    for nd in cluster.nodes:
        if nd.unschedulable or (key and key not in nd.labels):
            continue
        u = used.get(nd.name, Counter())
        held = min(
            max(0, int(nd.allocatable.get(r, 0)) - u[r]) // q
            for r, q in req.items()
            if r in nd.allocatable or r not in by_dra
        )
        per_domain[nd.labels[key] if key else ""] += held
    return max(per_domain.values(), default=0)


def _dra_extended(cluster: Cluster) -> set[str]:
    """Extended resources a DRA driver may serve (KEP-5004: a DeviceClass's
    ``extendedResourceName``); on a node that does not list them they bound nothing here."""
    from gangplan.dra.model import EXTENDED_PREFIX

    dra = cluster.dra
    if dra is None:
        return set()
    names = {c.extended_resource_name for c in dra.classes.values() if c.extended_resource_name}
    return names | {EXTENDED_PREFIX + c for c in dra.classes}


def trial(cluster: Cluster, rep: Pod, group: PodGroup, pods: int, min_count: int) -> Cluster:
    """``cluster`` with its pending pods removed and one gang added: ``pods`` copies of ``rep``
    in a copy of ``group`` named :data:`FIT_NAME` (minCount ``min_count``, no parent)."""
    from gangplan.models.groups import gate

    g = group.model_copy(
        update={"name": FIT_NAME, "min_count": min_count, "parent": None, "uid": ""}
    )
    copies = [
        rep.model_copy(
            update={
                "name": f"{FIT_NAME}-{i}",
                "uid": "",
                "pod_group": FIT_NAME,
                "workload_ref": None,
                "scheduling_gates": (),
                "nominated_node_name": None,
            }
        )
        for i in range(pods)
    ]
    pods_all = [*cluster.bound_pods, *copies]
    out = cluster.model_copy(
        update={
            "pods": tuple(pods_all),
            "pod_groups": {**cluster.pod_groups, g.key: g},
            "gated": {},
        }
    )
    return out.model_copy(update={"gated": gate(pods_all, out.groups, out.profile)})


def _placed(result: Any, rep: Pod, pods: int) -> int:
    """The trial gang's pods the Result puts on a node."""
    outcomes = result.pods
    return sum(
        1
        for i in range(pods)
        if (o := outcomes.get(f"{rep.namespace}/{FIT_NAME}-{i}")) is not None and o.node
    )


def _why_not(cluster: Cluster, f: GangFit) -> str | None:
    dra = cluster.dra
    if dra is not None and (dra.pod_claims.get(f.rep.key) or f.group.resource_claims):
        return "not computed: the pods use DRA ResourceClaims"
    return None


def _fit_one(cluster: Cluster, f: GangFit, most: int, seed: int) -> None:
    """The engines' largest gang of ``f``'s kind, at most ``max(MAX_GANG, most)`` pods."""
    from gangplan.models.result import Status
    from gangplan.solver.exact import solve_exact
    from gangplan.solver.greedy import solve_greedy

    top = min(f.row.bound, max(MAX_GANG, most))
    f.row.cap = top
    if top == 0:
        f.row.greedy, f.row.exact, f.row.proven = 0, 0, True
        return
    c = trial(cluster, f.rep, f.group, top, 1)
    e = solve_exact(c, preemption=False, time_limit=FIT_TIME_LIMIT, seed=seed)
    f.runs.append((c, e))
    f.row.exact = _placed(e, f.rep, top)
    f.row.proven = e.status == Status.OPTIMAL
    lo, hi = 0, (f.row.exact if f.row.proven else top)
    while lo < hi:  # lo: admitted (or 0), hi: the most it could be
        k = (lo + hi + 1) // 2
        c = trial(cluster, f.rep, f.group, k, k)
        g = solve_greedy(c, seed=seed, preemption=False)
        f.runs.append((c, g))
        if _placed(g, f.rep, k) >= k:
            lo = k
        else:
            hi = k - 1
    f.row.greedy = lo


def gang_fits(cluster: Cluster, *, fit: bool = False, seed: int = 0) -> list[GangFit]:
    """Every pending gang shape with its resource bound and, with ``fit``, the engines' largest
    gang (module docstring)."""
    shapes = _shapes(cluster)
    kinds: dict[tuple, list[GangFit]] = defaultdict(list)
    for f in shapes:
        kinds[f.kind].append(f)
    used = used_by_node(cluster) if shapes else {}
    for k, same in enumerate(kinds.values()):
        first = same[0]
        bound = resource_bound(cluster, first.rep, first.group.topology_key, used)
        for f in same:
            f.row.bound = bound
        if not fit:
            continue
        why = _why_not(cluster, first)
        if why is None and k >= MAX_FIT_SHAPES:
            why = f"not computed: only the first {MAX_FIT_SHAPES} shapes are"
        if why is None:
            _fit_one(cluster, first, max(f.row.pods for f in same), seed)
        for f in same[1:]:
            r = first.row
            f.row.cap, f.row.greedy, f.row.exact, f.row.proven = r.cap, r.greedy, r.exact, r.proven
        for f in same:
            f.row.note = why
    return shapes


__all__ = [
    "FIT_TIME_LIMIT",
    "MAX_FIT_SHAPES",
    "MAX_GANG",
    "GangFit",
    "NodeGpus",
    "fragmentation",
    "gang_fits",
    "gpu_models",
    "pending_mix",
    "resource_bound",
    "trial",
    "used_by_node",
]
