"""Kueue's admission, cycle by cycle, on a snapshot: which pending Workloads get quota, where.

Mirrors kubernetes-sigs/kueue v0.19.2 (and main @ ff69552e79, identical in what is modelled here):

* ``pkg/cache/queue/cluster_queue.go`` (``baseCompareFunc``): a ClusterQueue's pending Workloads in
  order of priority (highest first), then queue-order timestamp (creation; eviction timestamps do
  not exist in a snapshot), then UID (gangplan: the Workload's key when UIDs are absent or equal);
* ``pkg/scheduler/scheduler.go`` (``schedule``): each cycle takes the head of every ClusterQueue
  (``Heads``), nominates it against a snapshot of the quota (``nominate`` -> the flavor assigner,
  :mod:`.flavors`, with TAS for TAS flavors, :mod:`.tas`), orders the entries
  (``makeClassicalIterator``: not borrowing before borrowing, then higher priority, then FIFO),
  and processes them in order (``processEntry``): NoFit -> inadmissible with the assigner's
  message; Fit -> admitted when it still fits after the cycle's earlier admissions
  (``fits``), else "Workload no longer fits after processing another workload" and it stays the
  head for the next cycle;
* ``pkg/cache/queue/cluster_queue.go`` (``requeueIfNotPresent``) and ``inadmissible_workloads.go``:
  under BestEffortFIFO an inadmissible Workload leaves the heap until an event requeues the
  inadmissible ones (a Workload finishing, a quota or flavor change: none happens in a snapshot, so
  it stays out); under StrictFIFO it stays the head, and the ClusterQueue admits nothing behind it;
* ``pkg/scheduler/scheduler.go`` (``reserveCapacityForUnreclaimablePreempt``,
  ``quotaResourcesToReserve``): a head that needs preemption and has no candidates (every one in
  gangplan, which models no preemption) still holds, for the rest of its cycle, the quota it could
  claim back (up to its nominal quota, or up to its borrowing limit when it borrows) unless its
  ClusterQueue can always reclaim (``reclaimWithinCohort: Any``, ``CanAlwaysReclaim``): a later
  entry of the cycle that would borrow that quota "no longer fits". TAS usage is not held.

Not modelled (named in ``reason`` or in the Result's warnings): Kueue's own preemption (mode
Preempt is reported with the assigner's message, and "Kueue's preemption is not modelled" where
the ClusterQueue's policy could preempt), fair sharing and admission fair sharing (the classical
iterator is used), admission checks (named in the loader's warnings; quota reserved counts as
admitted), waitForPodsReady. SchedulingEquivalenceHashing (on by default since v0.18) moves a
BestEffortFIFO Workload's equivalent ones to the inadmissible list with it; here each is nominated
in a later cycle and found not to fit on its own (the same outcome over a full run, not after one
cycle: :attr:`Admission.inadmissible` lists only the Workloads actually nominated).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gangplan.models.cluster import Cluster
from gangplan.models.kueue import ClusterQueue, KueueState, KueueWorkload, PodSetAdmission
from gangplan.models.result import (
    KueueOutcome,
    KueueWorkloadOutcome,
    PodSetOutcome,
    QuotaLine,
)
from gangplan.solver.kueue.apply import admitted_cluster
from gangplan.solver.kueue.books import Books
from gangplan.solver.kueue.queues import NAMESPACE_MISMATCH, queue_check

NO_LONGER_FITS = "Workload no longer fits after processing another workload"
PREEMPTION_NOT_MODELLED = "Kueue's preemption is not modelled (gangplan)"


@dataclass
class Admission:
    """One admission pass: the admitted Cluster kube-scheduler then sees and the outcome."""

    cluster: Cluster
    outcome: KueueOutcome
    admitted: dict[str, tuple[PodSetAdmission, ...]] = field(default_factory=dict)
    """Workload key -> its PodSets' assignments, for the Workloads this pass admitted."""
    queued: dict[str, list[str]] = field(default_factory=dict)
    """ClusterQueue -> the Workloads still in its heap after the pass, in queue order (Kueue's
    ``Manager.Dump``): heads not yet nominated (only with ``max_cycles``), heads that "no longer
    fit", and a StrictFIFO ClusterQueue's blocked head and everything behind it."""
    inadmissible: dict[str, list[str]] = field(default_factory=dict)
    """ClusterQueue -> the Workloads Kueue parks as inadmissible (``Manager.DumpInadmissible``):
    a BestEffortFIFO head that does not fit, and a Workload whose namespace the ClusterQueue's
    ``namespaceSelector`` does not match (requeue reason NamespaceMismatch, never immediate)."""


def _queue_key(wl: KueueWorkload) -> tuple:
    """``baseCompareFunc``: priority, queue-order timestamp, UID; then the key, which stands
    for the UIDs a snapshot lacks (a tie :func:`_ties` reports where it mattered)."""
    return (-wl.priority, wl.creation_timestamp, wl.uid, wl.key)


def _entry_key(e: tuple) -> tuple:
    """``makeClassicalIterator``'s order of the cycle's entries (borrowing, priority, FIFO),
    then the key: Go's sort is not stable and the heads come from a map."""
    return (e[2].borrows, -e[1].priority, e[1].creation_timestamp, e[1].key)


def _ties(
    groups: list[list[KueueWorkload]], outcomes: dict[str, KueueWorkloadOutcome], where: str
) -> list[str]:
    """A line per group of tied Workloads (in the order gangplan took them) with mixed fates."""
    out = []
    for tied in groups:
        fates = {w.key: outcomes.get(w.key) for w in tied}
        got = [k for k, o in fates.items() if o is not None and o.admitted]
        if got and len(got) < len(tied):
            names = ", ".join(w.key for w in tied)
            out.append(
                f"{where}: {names} tie in Kueue's order and only {', '.join(got)} was admitted: "
                "gangplan took them by name, Kueue's order there is random"
            )
    return out


@dataclass
class _Queue:
    cq: ClusterQueue
    heap: list[KueueWorkload]
    blocked: bool = False


def admit(cluster: Cluster, *, max_cycles: int | None = None) -> Admission:
    """Run Kueue's admission cycles on ``cluster`` until no ClusterQueue has a head left, or for
    at most ``max_cycles`` cycles (Kueue's unit tests run one: ``scheduler.schedule(ctx)`` once;
    the Workloads not reached stay in :attr:`Admission.queued` without an outcome)."""
    state: KueueState = cluster.kueue
    books = Books.of(cluster)
    outcomes: dict[str, KueueWorkloadOutcome] = {}
    for wl in state.admitted():
        outcomes[wl.key] = recorded_outcome(wl).model_copy(update={"recheck": _recheck(books, wl)})
    queues: dict[str, _Queue] = {}
    inadmissible: dict[str, list[str]] = {}
    for wl in sorted(state.pending(), key=_queue_key):
        cq, why = queue_check(cluster, state, wl)
        if cq is not None and why == NAMESPACE_MISMATCH:
            inadmissible.setdefault(cq.name, []).append(wl.key)
        if why is not None or cq is None:
            outcomes[wl.key] = KueueWorkloadOutcome(
                cluster_queue=cq.name if cq else None,
                local_queue=wl.queue_name,
                admitted=False,
                priority=wl.priority,
                pods=_pods(wl),
                reason=why,
            )
        else:
            queues.setdefault(cq.name, _Queue(cq, [])).heap.append(wl)
    admitted: dict[str, tuple[PodSetAdmission, ...]] = {}
    cycle = 0
    cycle_ties: list[tuple[int, list[list[KueueWorkload]]]] = []
    queue_ties: dict[str, list[list[KueueWorkload]]] = {}
    for name, q in queues.items():
        runs: dict[tuple, list[KueueWorkload]] = {}
        for w in q.heap:
            if not w.uid:
                runs.setdefault((w.priority, w.creation_timestamp), []).append(w)
        queue_ties[name] = [r for r in runs.values() if len(r) > 1]
    while max_cycles is None or cycle < max_cycles:
        heads = [(q, q.heap[0]) for name, q in sorted(queues.items()) if q.heap and not q.blocked]
        if not heads:
            break
        cycle += 1
        held: list[tuple[str, dict]] = []
        entries = []
        for q, wl in heads:
            entries.append((q, wl, books.assign(wl, q.cq)))
        entries.sort(key=_entry_key)
        runs: dict[tuple, list[KueueWorkload]] = {}
        for e in entries:
            runs.setdefault(_entry_key(e)[:3], []).append(e[1])
        cycle_ties.append((cycle, [r for r in runs.values() if len(r) > 1]))
        for q, wl, a in entries:
            base = {
                "cluster_queue": q.cq.name,
                "local_queue": wl.queue_name,
                "priority": wl.priority,
                "pods": _pods(wl),
            }
            if a.mode != "Fit":
                reason = a.message
                if a.mode != "NoFit" and q.cq.preemption.enabled:
                    reason = f"{reason}; {PREEMPTION_NOT_MODELLED}"
                outcomes[wl.key] = KueueWorkloadOutcome(admitted=False, reason=reason, **base)
                if a.mode == "Preempt" and q.cq.preemption.reclaim_within_cohort != "Any":
                    amounts = books.to_reserve(a, q.cq)
                    books.tree.add(books.usage, q.cq.name, amounts)
                    held.append((q.cq.name, amounts))
                if q.cq.queueing_strategy == "StrictFIFO":
                    q.blocked = True
                    for rest in q.heap[1:]:
                        outcomes[rest.key] = KueueWorkloadOutcome(
                            admitted=False,
                            reason=f"StrictFIFO: ClusterQueue {q.cq.name} is blocked by its head {wl.key}",
                            **{**base, "priority": rest.priority, "pods": _pods(rest)},
                        )
                else:
                    q.heap.pop(0)
                    inadmissible.setdefault(q.cq.name, []).append(wl.key)
                continue
            if not books.fits(a, q.cq):
                outcomes[wl.key] = KueueWorkloadOutcome(
                    admitted=False, reason=NO_LONGER_FITS, **base
                )
                continue  # stays the head: nominated again next cycle
            books.reserve(a, q.cq)
            q.heap.pop(0)
            podsets = a.admissions()
            admitted[wl.key] = podsets
            outcomes[wl.key] = KueueWorkloadOutcome(
                admitted=True,
                cycle=cycle,
                borrows=bool(a.borrows),
                podsets=[podset_outcome(p) for p in podsets],
                levels=admission_levels(podsets),
                **base,
            )
        for name, amounts in reversed(held):  # the next cycle's snapshot no longer holds them
            books.tree.remove(books.usage, name, amounts)
    for key, o in outcomes.items():
        if not o.admitted and o.cluster_queue in state.cluster_queues:
            lines = quota_lines(books, state.workloads[key], state.cluster_queues[o.cluster_queue])
            outcomes[key] = o.model_copy(update={"quota": lines})
    ties = [
        line
        for name, groups in sorted(queue_ties.items())
        for line in _ties(groups, outcomes, f"ClusterQueue {name}")
    ]
    ties += [line for c, groups in cycle_ties for line in _ties(groups, outcomes, f"cycle {c}")]
    outcome = KueueOutcome(
        version=state.version,
        workloads={k: outcomes[k] for k in state.workloads if k in outcomes},
        cycles=cycle,
        ties=list(dict.fromkeys(ties)),
    )
    return Admission(
        cluster=admitted_cluster(cluster, admitted),
        outcome=outcome,
        admitted=admitted,
        queued={name: [w.key for w in q.heap] for name, q in sorted(queues.items()) if q.heap},
        inadmissible=inadmissible,
    )


def _recheck(books: Books, wl: KueueWorkload) -> str:
    """Kueue's recorded admission of ``wl`` against :meth:`Books.recheck`'s."""
    nom = books.recheck(wl)
    if nom is None:
        return "not rechecked: its ClusterQueue is not in the snapshot"
    if nom.mode != "Fit":
        return f"would not be admitted now: {nom.message}"
    recorded = {p.name: p for p in wl.admission.podsets}
    diffs = []
    for p in nom.admissions():
        r = recorded.get(p.name)
        got = sorted(set(p.flavors.values()))
        had = sorted(set(r.flavors.values())) if r else []
        if got != had:
            diffs.append(f"{p.name}: {', '.join(got) or '-'} (recorded {', '.join(had) or '-'})")
        elif r is not None and p.topology_assignment and r.topology_assignment:
            if _domains(p) != _domains(r):
                diffs.append(f"{p.name}: other domains {_domains(p)} (recorded {_domains(r)})")
    return "same" if not diffs else "would choose " + "; ".join(diffs)


def _domains(p: PodSetAdmission) -> str:
    ta = p.topology_assignment
    assert ta is not None
    return ", ".join(f"{'/'.join(d.values)} x{d.count}" for d in ta.domains)


def quota_lines(books: Books, wl: KueueWorkload, cq: ClusterQueue) -> list[QuotaLine]:
    """The quota numbers behind a pending Workload's message, per (flavor, resource) of every
    resource group that covers what it requests, after the pass."""
    need: dict[str, int] = {}
    for ps in wl.podsets:
        for r, q in ps.requests.items():
            if q > 0:
                need[r] = need.get(r, 0) + q * ps.count
    tree, usage = books.tree, books.usage
    lines = []
    for rg in cq.resource_groups:
        for fq in rg.flavors:
            for r in rg.covered_resources:
                if r not in need:
                    continue
                q = fq.quota(r)
                nominal = q.nominal if q else 0
                used = usage.of_cluster_queue(cq.name).get((fq.name, r), 0)
                lines.append(
                    QuotaLine(
                        flavor=fq.name,
                        resource=r,
                        requested=need[r],
                        nominal=nominal,
                        used=used,
                        available=tree.available(cq.name, fq.name, r, usage),
                        most=tree.potential_available(cq.name, fq.name, r),
                        borrowing=max(0, used + need[r] - nominal),
                    )
                )
    return lines


def _pods(wl: KueueWorkload) -> int:
    return sum(ps.count for ps in wl.podsets)


def admission_levels(podsets: tuple[PodSetAdmission, ...]) -> list[str]:
    for p in podsets:
        if p.topology_assignment is not None:
            return list(p.topology_assignment.levels)
    return []


def podset_outcome(p: PodSetAdmission) -> PodSetOutcome:
    topo: list[dict[str, Any]] = []
    if p.topology_assignment is not None:
        topo = [{"values": list(d.values), "count": d.count} for d in p.topology_assignment.domains]
    return PodSetOutcome(name=p.name, count=p.count or 0, flavors=dict(p.flavors), topology=topo)


def recorded_outcome(wl: KueueWorkload) -> KueueWorkloadOutcome:
    adm = wl.admission
    assert adm is not None
    return KueueWorkloadOutcome(
        cluster_queue=adm.cluster_queue,
        local_queue=wl.queue_name,
        admitted=True,
        recorded=True,
        priority=wl.priority,
        pods=_pods(wl),
        podsets=[podset_outcome(p) for p in adm.podsets],
        levels=admission_levels(adm.podsets),
    )
