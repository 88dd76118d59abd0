"""Kueue's admission read off a placement: which Workloads a placement admits, with which
flavors and domains (the exact engine's ``Result.kueue``, and the hint values of its quota
family: one reading for both).

A Workload is admitted by a placement when any of its pods is placed (an admitted Workload whose
pods all stay pending holds quota for nothing: the optimum never keeps one). The flavor of a
resource group is the first one, in the ClusterQueue's order, that Kueue's assigner may give the
PodSet and whose nodeLabels select every node its pods are on. The topology assignment counts
the PodSet's pods per domain at the levels of the flavor's Topology (a domain: the path of
values down to the finest level, as Kueue writes ``topologyAssignment``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from gangplan.models.cluster import Cluster
from gangplan.models.kueue import (
    ClusterQueue,
    KueuePodSet,
    KueueState,
    PodSetAdmission,
    TopologyAssignment,
    TopologyDomainAssignment,
)
from gangplan.models.objects import Node
from gangplan.models.result import KueueOutcome, KueueWorkloadOutcome, Result
from gangplan.models.well_known import HOSTNAME
from gangplan.solver.kueue.admit import admission_levels, podset_outcome, recorded_outcome
from gangplan.solver.kueue.flavors import flavor_allowed


def implied_flavor(
    state: KueueState,
    cq: ClusterQueue,
    group: int,
    ps: KueuePodSet,
    nodes: Iterable[Node],
    topology_levels: Mapping[str, tuple[str, ...]] | None = None,
) -> str | None:
    """The flavor of ``cq``'s resource group ``group`` a placement on ``nodes`` implies."""
    on = list(nodes)
    if not on:
        return None
    for fq in cq.resource_groups[group].flavors:
        flavor = state.flavors.get(fq.name)
        if flavor is None or not flavor_allowed(state, cq, group, ps, fq.name, topology_levels):
            continue
        if all(flavor.selects(n.labels) for n in on):
            return fq.name
    return None


def topology_levels(cluster: Cluster, state: KueueState, flavors: Iterable[str]) -> tuple[str, ...]:
    names = {state.flavors[f].topology_name for f in flavors if f in state.flavors}
    for t in cluster.topologies:
        if t.name in names:
            return t.levels
    return ()


def podset_admission(
    cluster: Cluster, state: KueueState, cq: ClusterQueue, ps: KueuePodSet, nodes: list[Node]
) -> PodSetAdmission:
    """What a placement of ``ps`` on ``nodes`` (one entry per placed pod) amounts to."""
    flavors: dict[str, str] = {}
    for r, q in sorted(ps.requests.items()):
        g = next((i for i, rg in enumerate(cq.resource_groups) if r in rg.covered_resources), None)
        if q <= 0 or g is None:
            continue
        f = implied_flavor(state, cq, g, ps, nodes, {t.name: t.levels for t in cluster.topologies})
        if f is not None:
            flavors[r] = f
    levels = topology_levels(cluster, state, flavors.values())
    if levels and levels[-1] == HOSTNAME:  # Kueue names the node alone (``buildAssignment``)
        levels = (HOSTNAME,)
    ta = None
    if levels:
        counts = Counter(tuple(n.labels.get(k, "") for k in levels) for n in nodes)
        ta = TopologyAssignment(
            levels=levels,
            domains=tuple(
                TopologyDomainAssignment(values=v, count=k) for v, k in sorted(counts.items())
            ),
        )
    count = ps.count
    if ps.min_count is not None and ps.min_count < ps.count:  # partial admission: what is placed
        count = max(ps.min_count, len(nodes))
    usage = {r: q * count for r, q in ps.requests.items() if r in flavors}
    return PodSetAdmission(
        name=ps.name, flavors=flavors, resource_usage=usage, count=count, topology_assignment=ta
    )


OPTIMUM_LEAVES = "the placement does not admit it"


def outcome_of(cluster: Cluster, placements: Mapping[str, str]) -> KueueOutcome:
    """The ``kueue`` part of a Result whose pods go to ``placements`` (pod key -> node) on the
    opened snapshot ``cluster``."""
    from gangplan.solver.kueue.queues import queue_check

    state: KueueState = cluster.kueue
    by_name = {n.name: n for n in cluster.nodes}
    out: dict[str, KueueWorkloadOutcome] = {}
    for key, wl in state.workloads.items():
        if wl.finished:
            continue
        if wl.admission is not None:
            out[key] = recorded_outcome(wl)
            continue
        cq, why = queue_check(cluster, state, wl)
        pods = sum(ps.count for ps in wl.podsets)
        base = {
            "cluster_queue": cq.name if cq else None,
            "local_queue": wl.queue_name,
            "priority": wl.priority,
            "pods": pods,
        }
        placed = {
            ps.name: [by_name[placements[k]] for k in ps.pods if k in placements]
            for ps in wl.podsets
        }
        if why is not None or cq is None or not any(placed.values()):
            out[key] = KueueWorkloadOutcome(admitted=False, reason=why or OPTIMUM_LEAVES, **base)
            continue
        podsets = tuple(
            podset_admission(cluster, state, cq, ps, placed[ps.name]) for ps in wl.podsets
        )
        out[key] = KueueWorkloadOutcome(
            admitted=True,
            podsets=[podset_outcome(p) for p in podsets],
            levels=admission_levels(podsets),
            **base,
        )
    return KueueOutcome(version=state.version, workloads=out)


def with_derived_admission(result: Result, cluster: Cluster) -> Result:
    """An exact Result on the opened snapshot with its ``kueue`` part (:func:`outcome_of`)."""
    from gangplan.models.objective import kueue_running

    outcome = outcome_of(cluster, result.placements()).with_running(
        kueue_running(cluster, result.placements(), result.victims)
    )
    return result.model_copy(
        update={"kueue": outcome, "params": {**result.params, "kueueVersion": outcome.version}}
    )
