"""Seeded snapshot draws shared by several test modules (the greedy goldens and the preemption
tests): object lists in the snapshot format, the same for the same seed."""

from __future__ import annotations

from typing import Any

import numpy as np

from gangplan.bench.generators.builders import node_object, pod_group_object, pod_object
from gangplan.models.well_known import HOSTNAME, RACK, ZONE


def corners(seed: int) -> list[dict[str, Any]]:
    """A small snapshot with the rarer paths: PreFilterResult node subsets (matchFields), pending
    pods with ``nominatedNodeName``, host ports, images, PreferNoSchedule / NoSchedule taints, an
    unschedulable node, a low pod limit, preferred node and pod (anti-)affinity, spread both ways,
    existing pods' affinity terms, zone-constrained and basic groups."""
    rng = np.random.default_rng([seed, 99])
    out: list[dict[str, Any]] = []
    names = [f"n{i:02d}" for i in range(24)]
    for i, name in enumerate(names):
        taints = []
        if i % 7 == 3:
            taints.append({"key": "soft", "value": "x", "effect": "PreferNoSchedule"})
        if i % 11 == 5:
            taints.append({"key": "hard", "value": "y", "effect": "NoSchedule"})
        node = node_object(
            name,
            cpu=str(int(rng.integers(2, 9))),
            memory=f"{int(rng.integers(4, 33))}Gi",
            pods=int(rng.integers(3, 12)),
            labels={
                HOSTNAME: name,
                ZONE: f"z{i % 3}",
                RACK: f"r{i // 4}",
                "disk": "ssd" if i % 2 else "hdd",
            },
            taints=taints,
            unschedulable=(i == 17),
        )
        if i % 3 == 0:
            node["status"]["images"] = [
                {
                    "names": ["app:1", "registry/app:1"],
                    "sizeBytes": int(rng.integers(50, 900)) * 1024 * 1024,
                }
            ]
        out.append(node)
    labels = ["web", "db", "cache"]
    for j in range(45):
        app = labels[j % 3]
        aff: dict[str, Any] = {}
        if j % 5 == 0:
            aff["podAntiAffinity"] = {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": HOSTNAME}
                ]
            }
        if j % 4 == 1:
            aff["podAffinity"] = {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 7,
                        "podAffinityTerm": {
                            "labelSelector": {"matchLabels": {"app": "web"}},
                            "topologyKey": ZONE,
                        },
                    }
                ]
            }
        out.append(
            pod_object(
                f"run-{j}",
                requests={
                    "cpu": f"{int(rng.integers(2, 16)) * 100}m",
                    "memory": f"{int(rng.integers(1, 7))}Gi",
                },
                node_name=names[int(rng.integers(0, len(names)))],
                labels={"app": app},
                affinity=aff or None,
                host_ports=[8080] if j % 6 == 2 else (),
                created=j,
            )
        )
    t = 100
    for k in range(14):
        kind = k % 7
        aff = None
        spread: list[dict[str, Any]] = []
        ports: tuple[int, ...] = ()
        sel = None
        if kind == 0:
            picked = sorted(str(x) for x in rng.choice(names, size=3, replace=False))
            aff = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": picked}
                                ]
                            }
                        ]
                    }
                }
            }
        elif kind == 1:
            aff = {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 5,
                            "preference": {
                                "matchExpressions": [
                                    {"key": "disk", "operator": "In", "values": ["ssd"]}
                                ]
                            },
                        }
                    ]
                }
            }
        elif kind == 2:
            ports = (8080,)
        elif kind == 3:
            spread = [
                {
                    "maxSkew": 1,
                    "topologyKey": ZONE,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "web"}},
                },
                {
                    "maxSkew": 2,
                    "topologyKey": HOSTNAME,
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": {"app": "web"}},
                },
            ]
        elif kind == 4:
            aff = {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 3,
                            "podAffinityTerm": {
                                "labelSelector": {"matchLabels": {"app": "cache"}},
                                "topologyKey": RACK,
                            },
                        }
                    ]
                },
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": ZONE}
                    ]
                },
            }
        elif kind == 5:
            sel = {"disk": "ssd"}
        pod = pod_object(
            f"single-{k}",
            requests={
                "cpu": f"{int(rng.integers(1, 50)) * 100}m",
                "memory": f"{int(rng.integers(1, 12))}Gi",
            },
            labels={"app": labels[k % 3]},
            affinity=aff,
            topology_spread=spread,
            host_ports=ports,
            node_selector=sel,
            tolerations=[{"key": "soft", "operator": "Exists"}] if k % 4 == 0 else (),
            created=t + k,
            image="app:1" if k % 2 else "registry/app:1",
            priority=int(rng.integers(0, 3)) * 10,
        )
        if kind == 6:
            pod["status"]["nominatedNodeName"] = names[int(rng.integers(0, len(names)))]
        out.append(pod)
    for g in range(4):
        gname = f"grp-{g}"
        out.append(
            pod_group_object(
                gname,
                policy="basic" if g == 3 else "gang",
                min_count=3,
                topology_key=ZONE if g % 2 == 0 else None,
                created=200 + g,
            )
        )
        for m in range(4):
            pod = pod_object(
                f"{gname}-{m}",
                group=gname,
                requests={"cpu": f"{int(rng.integers(5, 35)) * 100}m", "memory": "3Gi"},
                labels={"app": labels[(g + m) % 3], "grp": gname},
                created=210 + 10 * g + m,
            )
            if g == 1 and m < 2:
                pod["status"]["nominatedNodeName"] = names[int(rng.integers(0, len(names)))]
            out.append(pod)
    return out
