"""Small random snapshots with every constraint kind, for property tests and random runs.

:func:`small_mixed_snapshot` (a few nodes, bound pods, PodGroups and single pods, one constraint
kind per group) and :func:`small_preemption_snapshot` (where preemption matters) draw from a
:class:`Chooser`: a seeded numpy generator (:class:`SeededChooser`, :func:`small_mixed`,
:func:`small_preemption`) or hypothesis's ``draw`` (``tests/strategies.py``), so seeded instances
and shrinking property tests share one description of "a small random cluster".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from gangplan.bench.generators.builders import (
    Obj,
    node_object,
    pod_group_object,
    pod_object,
    seeded_rng,
)
from gangplan.models.well_known import GPU, GPU_PRODUCT, HOSTNAME, RACK, ZONE


class Chooser(Protocol):
    """Where random choices come from: a numpy Generator (:class:`SeededChooser`) or hypothesis's
    ``draw`` (``tests/strategies.py``), so seeded instances and shrinking property tests share one
    description of "a small random cluster"."""

    def integer(self, lo: int, hi: int) -> int:
        """An integer in ``lo..hi``, both included."""
        ...

    def pick(self, options: Sequence[Any]) -> Any:
        """One of ``options``; earlier options are what hypothesis shrinks towards."""
        ...


class SeededChooser:
    """A :class:`Chooser` over ``numpy.random.default_rng([seed, stream])``."""

    def __init__(self, seed: int, stream: int = 3) -> None:
        self._rng = seeded_rng(seed, stream)

    def integer(self, lo: int, hi: int) -> int:
        return int(self._rng.integers(lo, hi + 1))

    def pick(self, options: Sequence[Any]) -> Any:
        return options[int(self._rng.integers(0, len(options)))]


SMALL_TAINTS: dict[str, dict[str, str]] = {
    "dedicated": {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
    "spot": {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
}
SMALL_TOLERATIONS: dict[str, list[dict[str, str]]] = {
    "none": [],
    "dedicated": [
        {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
    ],
    "everything": [{"operator": "Exists"}],
}
SMALL_CONSTRAINTS = (
    "none",
    "selector",
    "toleration",
    "affinity",
    "anti-affinity",
    "host-port",
    "spread",
)
"""The kinds of constraint a small group's members may carry (one kind per group)."""

_MI = 2**20


def _small_node(c: Chooser, index: int) -> tuple[Obj, dict[str, int]]:
    """A node object and its allocatable as scheduler integers (for filling it with bound pods)."""
    name = f"n{index}"
    cpu = c.pick([1000, 2000, 4000, 8000])
    memory_mi = c.pick([1024, 2048, 4096, 8192])
    gpus = c.pick([0, 0, 2, 4, 8])
    pods = c.pick([3, 8, 110])
    labels = {HOSTNAME: name}
    if c.integer(0, 4):  # most nodes carry a zone, a few do not
        zone = c.pick(["zone-a", "zone-b"])
        labels[ZONE] = zone
        labels[RACK] = f"{zone}-rack-{c.integer(0, 1)}"
    if gpus:
        labels[GPU_PRODUCT] = c.pick(["H100", "A100"])
    taint = c.pick([None, None, None, "dedicated", "spot"])
    obj = node_object(
        name,
        cpu=f"{cpu}m",
        memory=f"{memory_mi}Mi",
        pods=pods,
        gpus=gpus,
        labels=labels,
        taints=[SMALL_TAINTS[taint]] if taint else (),
        unschedulable=c.integer(0, 7) == 0,
    )
    return obj, {"cpu": cpu, "memory": memory_mi * _MI, GPU: gpus, "pods": pods}


def _small_bound_pods(c: Chooser, node: str, free: dict[str, int], first: int) -> list[Obj]:
    """0-2 running pods on ``node`` whose requests fit what is left of its allocatable."""
    out = []
    for j in range(c.integer(0, min(2, free["pods"]))):
        cpu = c.integer(0, free["cpu"] // 250) * 250
        memory = c.integer(0, free["memory"] // (256 * _MI)) * 256 * _MI
        gpus = c.integer(0, free[GPU])
        free.update(cpu=free["cpu"] - cpu, memory=free["memory"] - memory, pods=free["pods"] - 1)
        free[GPU] -= gpus
        requests = {"cpu": f"{cpu}m", "memory": f"{memory // _MI}Mi"}
        if gpus:
            requests[GPU] = str(gpus)
        out.append(
            pod_object(
                f"run-{node}-{j}",
                node_name=node,
                requests=requests,
                labels={"app": c.pick(["a", "b"])},
                priority=c.pick([0, 5, 100]),
                created=first + j,
            )
        )
    return out


def _small_requests(c: Chooser) -> dict[str, str]:
    requests = {"cpu": f"{c.pick([100, 250, 500, 1000, 2000, 3000])}m"}
    memory = c.pick([0, 128, 512, 1024, 3072])
    if memory:
        requests["memory"] = f"{memory}Mi"
    gpus = c.pick([0, 0, 0, 1, 2, 4])
    if gpus:
        requests[GPU] = str(gpus)
    return requests


def _member_constraint(c: Chooser, kind: str, group: str, key: str) -> dict[str, Any]:
    """The :func:`pod_object` keyword arguments expressing one constraint kind among group members."""
    same_group = {"labelSelector": {"matchLabels": {"group": group}}, "topologyKey": key}
    if kind == "selector":
        return {
            "node_selector": c.pick(
                [{ZONE: "zone-a"}, {GPU_PRODUCT: "H100"}, {RACK: "zone-b-rack-0"}]
            )
        }
    if kind == "toleration":
        return {"tolerations": SMALL_TOLERATIONS[c.pick(["dedicated", "everything"])]}
    if kind == "affinity":
        return {
            "affinity": {
                "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [same_group]}
            }
        }
    if kind == "anti-affinity":
        return {
            "affinity": {
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [same_group]}
            }
        }
    if kind == "host-port":
        return {"host_ports": [8080]}
    if kind == "spread":
        spread = {
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"group": group}},
        }
        return {"topology_spread": [spread]}
    return {}


def _small_pod_group(c: Chooser, index: int, first: int, max_size: int) -> list[Obj]:
    """One PodGroup and its 1..max_size pending members; most members carry the group's constraint."""
    name = f"pg{index}"
    size = c.integer(1, max_size)
    policy = c.pick(["gang", "gang", "basic"])
    min_count = c.integer(1, size) if policy == "gang" else 1
    priority = c.pick([0, 10, 100])
    kind = c.pick(SMALL_CONSTRAINTS)
    key = c.pick([HOSTNAME, ZONE])
    group = pod_group_object(
        name, policy=policy, min_count=min_count, priority=priority, created=first
    )
    same_shape = c.pick([False, True])
    shared = _small_requests(c)
    members = []
    for j in range(size):
        constrained = kind != "none" and c.integer(0, 3) > 0
        extra = _member_constraint(c, kind, name, key) if constrained else {}
        members.append(
            pod_object(
                f"{name}-{j}",
                group=name,
                requests=shared if same_shape else _small_requests(c),
                labels={"group": name, "app": c.pick(["a", "b"])},
                priority=priority,
                created=first + 1 + j,
                **extra,
            )
        )
    return [group, *members]


def _small_single_pod(c: Chooser, index: int, created: int) -> Obj:
    return pod_object(
        f"solo{index}",
        requests=_small_requests(c),
        labels={"app": c.pick(["a", "b"])},
        priority=c.pick([0, 10, 100]),
        tolerations=SMALL_TOLERATIONS[c.pick(["none", "none", "dedicated"])],
        created=created,
    )


def small_mixed_snapshot(
    c: Chooser,
    *,
    max_nodes: int = 6,
    max_groups: int = 3,
    max_group_size: int = 4,
    max_singles: int = 2,
) -> list[Obj]:
    """A small random snapshot: 2..max_nodes nodes, bound pods, 1..max_groups PodGroups, single pods.

    Nodes have random cpu / memory / GPUs / pod slots, most a zone and rack label, GPU nodes a GPU
    type; some are tainted (NoSchedule or PreferNoSchedule) or cordoned. Bound pods use part of the
    capacity, never more. Each PodGroup is a gang (``minCount <= size``) or basic, its pods have
    mixed or identical requests and, per group, one kind of constraint among members (nodeSelector,
    tolerations, required pod affinity / anti-affinity on hostname or zone, a host port, a
    DoNotSchedule spread). Pods carry their group's priority (the v1beta1
    validation) and every gang has its quorum, so nothing is gated.
    """
    nodes, bound = [], []
    for i in range(c.integer(2, max_nodes)):
        obj, free = _small_node(c, i)
        nodes.append(obj)
        bound += _small_bound_pods(c, obj["metadata"]["name"], free, first=10 * i)
    groups: list[Obj] = []
    for g in range(c.integer(1, max_groups)):
        groups += _small_pod_group(c, g, first=100 + 10 * g, max_size=max_group_size)
    singles = [_small_single_pod(c, s, 200 + s) for s in range(c.integer(0, max_singles))]
    return nodes + bound + groups + singles


def small_preemption_snapshot(ch: Chooser) -> list[Obj]:
    """A small random snapshot where preemption matters (issue 12's fuzz): 2-4 nodes (4-8 CPU, zone
    and hostname labels), 2-8 bound pods at priority 0, 10 or 50 (labels ``app: a|b``), some in
    bound gangs of two with ``disruptionMode`` single or all, a PDB over ``app: a`` half the time;
    1-3 pending entities at priority 50 or 100 (a single pod or a gang of 1-3 pods of 1-4 CPU),
    some with required anti-affinity to ``app: b`` on the hostname or affinity to ``app: a`` on
    the zone, some with ``preemptionPolicy: Never``."""
    objs: list[Obj] = []
    n_nodes = ch.integer(2, 4)
    nodes = [f"n{i}" for i in range(n_nodes)]
    free = {}
    for i, n in enumerate(nodes):
        cpu = ch.pick([4, 6, 8])
        free[n] = cpu
        objs.append(node_object(n, cpu=str(cpu), labels={HOSTNAME: n, ZONE: f"z{i % 2}"}))
    k = 0
    for b in range(ch.integer(2, 8)):
        prio = ch.pick([0, 10, 50])
        app = ch.pick(["a", "b"])
        gang = ch.integer(0, 3) == 0
        size = 2 if gang else 1
        group = None
        if gang:
            group = f"bg{b}"
            g = pod_group_object(group, min_count=2, priority=prio)
            g["spec"]["disruptionMode"] = {ch.pick(["single", "all"]): {}}
            objs.append(g)
        for _ in range(size):
            cpu = ch.integer(1, 3)
            room = [n for n in nodes if free[n] >= cpu]
            if not room:
                break
            n = ch.pick(room)
            free[n] -= cpu
            objs.append(
                pod_object(
                    f"run{k}",
                    node_name=n,
                    priority=prio,
                    group=group,
                    labels={"app": app},
                    requests={"cpu": str(cpu)},
                    created=k,
                )
            )
            k += 1
    if ch.integer(0, 1):
        objs.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "pdb-a", "namespace": "default"},
                "spec": {
                    "maxUnavailable": ch.pick([0, 1]),
                    "selector": {"matchLabels": {"app": "a"}},
                },
            }
        )
    for e in range(ch.integer(1, 3)):
        prio = ch.pick([50, 100])
        size = ch.integer(1, 3)
        rule = ch.pick([None, None, "anti", "affinity"])
        affinity = None
        if rule == "anti":
            affinity = {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"app": "b"}}, "topologyKey": HOSTNAME}
                    ]
                }
            }
        elif rule == "affinity":
            affinity = {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": ZONE}
                    ]
                }
            }
        group = None
        if size > 1 or ch.integer(0, 1):
            group = f"pg{e}"
            objs.append(pod_group_object(group, min_count=size, priority=prio))
        never = ch.integer(0, 4) == 0
        for i in range(size):
            pod = pod_object(
                f"new{e}-{i}",
                priority=prio,
                group=group,
                affinity=affinity,
                labels={"app": "new"},
                requests={"cpu": str(ch.integer(1, 4))},
                created=100 + e,
            )
            if never:
                pod["spec"]["preemptionPolicy"] = "Never"
            objs.append(pod)
        if never and group:
            objs[-size - 1]["spec"]["preemptionPolicy"] = "Never"
    return objs


def small_preemption(seed: int) -> list[Obj]:
    """:func:`small_preemption_snapshot` drawn from a seed."""
    return small_preemption_snapshot(SeededChooser(seed, stream=5))


def small_mixed(seed: int, **limits: int) -> list[Obj]:
    """:func:`small_mixed_snapshot` drawn from a seed (for benchmarks over many random instances)."""
    return small_mixed_snapshot(SeededChooser(seed), **limits)


__all__ = [
    "SMALL_CONSTRAINTS",
    "SMALL_TAINTS",
    "SMALL_TOLERATIONS",
    "Chooser",
    "SeededChooser",
    "small_mixed",
    "small_mixed_snapshot",
    "small_preemption",
    "small_preemption_snapshot",
]
