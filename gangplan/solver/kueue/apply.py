"""What Kueue's admission does to the pods kube-scheduler then sees.

When Kueue admits a Workload it unsuspends the job and the job's pods are created (or, for plain
pods, ungated) with the admission injected: the node labels of every ResourceFlavor assigned to the
PodSet join the pod's ``nodeSelector`` and the flavors' tolerations join its tolerations
(``pkg/podset/podset.go``, ``FromAssignment`` / ``Merge``, kubernetes-sigs/kueue v0.19.2); for a
topology assignment the TopologyUngater gives each pod one assigned domain as a ``nodeSelector`` on
every level of the assignment (``pkg/controller/tas/topology_ungater.go``: pods ranked by their
index label when the PodSet has one, else by creation; domains in the assignment's order) and
removes the ``kueue.x-k8s.io/topology`` gate. kube-scheduler then binds the pods inside those
nodes.

:func:`admitted_cluster` is that step for a whole admission pass; :func:`opened_cluster` lifts
Kueue's hold without assigning anything (the exact engine decides admission, flavors and domains
itself, under the same quota: :mod:`gangplan.solver.exact.quota`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from gangplan.models.base import Beside, kept_beside
from gangplan.models.cluster import Cluster
from gangplan.models.kueue import (
    ADMISSION_GATE,
    TOPOLOGY_GATE,
    KueueState,
    PodSetAdmission,
    ResourceFlavor,
)
from gangplan.models.objects import Pod, Toleration

KUEUE_GATES = (ADMISSION_GATE, TOPOLOGY_GATE)


def held_pods(state: KueueState) -> set[str]:
    """Pods Kueue holds back: those of Workloads without quota reserved."""
    return {k for wl in state.pending() for ps in wl.podsets for k in ps.pods}


def _injected(pod: Pod, ps: PodSetAdmission, flavors: Mapping[str, ResourceFlavor]) -> Pod:
    selector = dict(pod.node_selector)
    tolerations: list[Toleration] = list(pod.tolerations)
    for name in dict.fromkeys(ps.flavors.values()):
        flavor = flavors.get(name)
        if flavor is None:
            continue
        selector.update(flavor.node_labels)
        tolerations.extend(t for t in flavor.tolerations if t not in tolerations)
    return pod.model_copy(
        update={
            "node_selector": selector,
            "tolerations": tuple(tolerations),
            "scheduling_gates": tuple(g for g in pod.scheduling_gates if g not in KUEUE_GATES),
        }
    )


def recorded_pods(state: KueueState, by_key: Mapping[str, Pod]) -> dict[str, Pod]:
    """The pending pods of Workloads admitted before the snapshot, with their recorded flavors
    injected (a job's pods created after its admission carry them; gangplan may have made them
    from the Workload's templates). Their TAS domains are not pinned: pods the TopologyUngater
    already ungated carry their own selector."""
    out: dict[str, Pod] = {}
    for wl in state.admitted():
        assert wl.admission is not None
        by_name = {a.name: a for a in wl.admission.podsets}
        for ps in wl.podsets:
            a = by_name.get(ps.name)
            if a is None:
                continue
            for k in ps.pods:
                p = by_key.get(k)
                if p is not None and p.node_name is None:
                    out[k] = _injected(p, a, state.flavors)
    return out


def _pinned(pods: list[Pod], ps: PodSetAdmission) -> list[Pod]:
    """The TopologyUngater's step: each pod gets one domain of the assignment, in order."""
    ta = ps.topology_assignment
    if ta is None:
        return pods
    slots = [d.values for d in ta.domains for _ in range(d.count)]
    out = []
    for pod, values in zip(pods, slots, strict=False):
        selector = {**pod.node_selector, **dict(zip(ta.levels, values, strict=True))}
        out.append(pod.model_copy(update={"node_selector": selector}))
    return out + pods[len(slots) :]


def admitted_cluster(
    cluster: Cluster,
    admissions: Mapping[str, tuple[PodSetAdmission, ...]],
    *,
    pin: bool = True,
    prefer: Collection[str] = (),
) -> Cluster:
    """``cluster`` after Kueue admitted the Workloads of ``admissions`` (Workload key -> its
    PodSets' assignments): their pods carry the injected selectors and tolerations and are no
    longer held; the pods of every other pending Workload stay held (with the loader's reason).
    A PodSet admitted partly (``count`` below its own, partial admission) has only that many
    pods released, in snapshot order: Kueue's job integration shrinks the job to the admitted
    counts (``RunWithPodSetsInfo``), so the others are never created; here they stay held.
    ``pin`` False: no pod is given its topology domain (the validator counts pods per domain
    instead, :mod:`.rules`). ``prefer``: pods released first when only some are (the validator's:
    the pods a Result places; a PodSet's pods are interchangeable)."""
    state: KueueState = cluster.kueue
    by_key = {p.key: p for p in cluster.pods}
    changed: dict[str, Pod] = recorded_pods(state, by_key)
    for wkey, podsets in admissions.items():
        wl = state.workloads[wkey]
        by_name = {a.name: a for a in podsets}
        for ps in wl.podsets:
            a = by_name.get(ps.name)
            if a is None:
                continue
            pending = [by_key[k] for k in ps.pods if k in by_key and by_key[k].node_name is None]
            if a.count is not None and a.count < ps.count:  # partial admission: the job shrinks
                bound = sum(1 for k in ps.pods if k in by_key and by_key[k].node_name)
                if prefer:
                    pending.sort(key=lambda p: p.key not in prefer)  # stable: snapshot order
                pending = pending[: max(0, a.count - bound)]
            pods = [_injected(p, a, state.flavors) for p in pending]
            pods = _pinned(pods, a) if pin else pods
            changed.update((p.key, p) for p in pods)
    return _rebuilt(cluster, changed, release=set(changed))


def opened_cluster(cluster: Cluster) -> Cluster:
    """``cluster`` with Kueue's hold lifted from every pending Workload's pods and nothing
    injected: the question the exact engine answers (admission, flavors and domains are its
    variables, :mod:`gangplan.solver.exact.quota`)."""
    state: KueueState = cluster.kueue
    release = held_pods(state)
    by_key = {p.key: p for p in cluster.pods}
    recorded = recorded_pods(state, by_key)
    changed = {
        k: by_key[k].model_copy(
            update={
                "scheduling_gates": tuple(
                    g for g in by_key[k].scheduling_gates if g not in KUEUE_GATES
                )
            }
        )
        for k in release
        if k in by_key
    }
    changed.update(recorded)
    return _rebuilt(cluster, changed, release=release | set(recorded))


def opened_view(cluster: Cluster) -> Cluster:
    """:func:`opened_cluster`, made once per snapshot and kept beside it; ``cluster`` itself
    without Kueue objects."""
    if cluster.kueue is None:
        return cluster

    def made(c: Cluster) -> Cluster:
        opened = opened_cluster(c)
        opened._kueue_opened = Beside((opened, opened))  # opening it again changes nothing
        return opened

    return kept_beside(cluster, "_kueue_opened", made)


def _rebuilt(cluster: Cluster, changed: Mapping[str, Pod], release: set[str]) -> Cluster:
    return cluster.with_pods((changed.get(p.key, p) for p in cluster.pods), released=release)
