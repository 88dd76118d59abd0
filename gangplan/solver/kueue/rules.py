"""The validator's Kueue rules (issue 42): what a Result's ``kueue`` part must satisfy.

* The pods kube-scheduler may place are those of the Workloads the Result admits, with the
  admission injected (:func:`kube_rules_view`: :func:`gangplan.solver.kueue.apply.admitted_cluster`,
  without pinning pods to domains): the ordinary rules then check that every pod sits on a node
  its flavors' nodeLabels select, and a placed pod of a Workload the Result does not admit is
  "placed although gated".
* Quota: the admissions (recorded ones and the Result's) break no cap of the quota tree that the
  recorded admissions alone keep (:meth:`gangplan.predicates.quota.QuotaTree.violated_caps`).
* Topology: a PodSet's placed pods per domain stay within its assignment, and a required level
  is one domain.
"""

from __future__ import annotations

from collections import Counter

from gangplan.models.cluster import Cluster
from gangplan.models.kueue import (
    KueueState,
    PodSetAdmission,
    TopologyAssignment,
    TopologyDomainAssignment,
    domain_path,
)
from gangplan.models.result import KueueWorkloadOutcome, Result
from gangplan.predicates.quota import QuotaTree, QuotaUsage, format_amount
from gangplan.solver.kueue.apply import admitted_cluster
from gangplan.solver.kueue.derive import topology_levels


def admissions_of(outcome: KueueWorkloadOutcome) -> tuple[PodSetAdmission, ...]:
    """A Result's PodSet outcomes as the admission Kueue writes (``status.admission``)."""
    out = []
    for p in outcome.podsets:
        ta = None
        if p.topology:
            ta = TopologyAssignment(
                levels=tuple(outcome.levels),
                domains=tuple(
                    TopologyDomainAssignment(values=tuple(d["values"]), count=int(d["count"]))
                    for d in p.topology
                ),
            )
        out.append(
            PodSetAdmission(
                name=p.name, flavors=dict(p.flavors), count=p.count, topology_assignment=ta
            )
        )
    return tuple(out)


def run_admissions(cluster: Cluster, result: Result) -> dict[str, tuple[PodSetAdmission, ...]]:
    state: KueueState = cluster.kueue
    assert result.kueue is not None
    return {
        k: admissions_of(w)
        for k, w in result.kueue.workloads.items()
        if w.admitted
        and not w.recorded
        and k in state.workloads
        and state.workloads[k].admission is None
    }


def kube_rules_view(cluster: Cluster, result: Result) -> Cluster:
    return admitted_cluster(
        cluster, run_admissions(cluster, result), pin=False, prefer=set(result.placements())
    )


def _usage(
    tree: QuotaTree, state: KueueState, run: dict[str, tuple[PodSetAdmission, ...]]
) -> tuple[QuotaUsage, QuotaUsage]:
    recorded = tree.usage_from(state.admitted())
    total = recorded.copy()
    for key, podsets in sorted(run.items()):
        wl = state.workloads[key]
        cq = state.cluster_queue_of(wl)
        if cq is None:
            continue
        amounts: dict[tuple[str, str], int] = {}
        by_name = {ps.name: ps for ps in wl.podsets}
        for a in podsets:
            ps = by_name.get(a.name)
            if ps is None:
                continue
            count = a.count if a.count is not None else ps.count  # partial admission: fewer
            for r, f in a.flavors.items():
                amounts[(f, r)] = amounts.get((f, r), 0) + ps.requests.get(r, 0) * count
        tree.add(total, cq.name, amounts)
    return recorded, total


def kueue_violations(cluster: Cluster, result: Result) -> list[tuple[str, str, str]]:
    """(rule, subject, message) for every broken Kueue rule of ``result``."""
    from gangplan.solver.kueue.queues import queue_check

    state: KueueState = cluster.kueue
    out: list[tuple[str, str, str]] = []
    assert result.kueue is not None
    run = run_admissions(cluster, result)
    for key in sorted(run):
        cq, why = queue_check(cluster, state, state.workloads[key])
        if why is not None:
            out.append(("kueue-admission", key, f"admitted although Kueue never would: {why}"))
    tree = QuotaTree.build(state)
    recorded, total = _usage(tree, state, run)
    before = {
        (c.node, c.flavor, c.resource, c.cluster_queues) for c in tree.violated_caps(recorded)
    }
    for cap in tree.violated_caps(total):
        if (cap.node, cap.flavor, cap.resource, cap.cluster_queues) in before:
            continue
        used = sum(
            total.get(("ClusterQueue", q), (cap.flavor, cap.resource)) for q in cap.cluster_queues
        )
        out.append(
            (
                "kueue-quota",
                f"{cap.node[0]} {cap.node[1]}",
                f"{cap.resource} in flavor {cap.flavor}: ClusterQueues {', '.join(cap.cluster_queues)} "
                f"use {format_amount(cap.resource, used)} > {format_amount(cap.resource, cap.value)} ({cap.rule})",
            )
        )
    placements = result.placements()
    nodes = {n.name: n for n in cluster.nodes}
    for key, podsets in sorted(run.items()):
        wl = state.workloads[key]
        by_name = {ps.name: ps for ps in wl.podsets}
        for a in podsets:
            ta, ps = a.topology_assignment, by_name.get(a.name)
            if ta is None or ps is None:
                continue
            allowed = {d.values: d.count for d in ta.domains}
            got = Counter(
                tuple(nodes[placements[k]].labels.get(lv, "") for lv in ta.levels)
                for k in ps.pods
                if k in placements
            )
            for values, n in sorted(got.items()):
                if n > allowed.get(values, 0):
                    out.append(
                        (
                            "kueue-topology",
                            f"{key}/{a.name}",
                            f"{n} pods in domain {'/'.join(values)}, assigned {allowed.get(values, 0)}",
                        )
                    )
            tr = ps.topology_request
            levels = topology_levels(cluster, state, a.flavors.values())
            if tr is not None and tr.required and tr.required in levels:
                paths = {
                    domain_path(nodes[placements[k]].labels, levels, tr.required)
                    for k in ps.pods
                    if k in placements
                }
                if len(paths) > 1:
                    out.append(
                        (
                            "kueue-topology",
                            f"{key}/{a.name}",
                            f"required level {tr.required} spans {len(paths)} domains",
                        )
                    )
    return out
