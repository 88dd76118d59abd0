"""How long loading a snapshot takes (the time tests used to assert, measured here instead).

Loads each snapshot ``--repeat`` times in this process and prints the best and median wall time
and CPU time, the node and pending-pod counts and the time per 1,000 objects; writes
``benchmarks/results/load_time.csv``. The Alibaba showcase (1,213 real nodes, the trace's running
pods and three gangs) is the reference: loading it was once a timed test ("under five seconds"),
which failed on a loaded machine. The ratio column is each snapshot's best time against the
showcase's best time in the same run.

``--write-dumps DIR`` first writes the shapes of issue 27 as ``kubectl get -o yaml`` / ``-o json``
print them (one ``kind: List``, keys sorted, no managedFields), then loads them:

* ``inventory.yaml`` / ``.json``: ``benchmarks/real_inventory.py`` at 1,000 Philly jobs and 80 %
  load (4,278 Alibaba nodes, their bound pods, 1,000 PodGroups, ~10,000 objects, 4 MB of YAML);
  needs the Alibaba and Philly traces (``../shared/data``), else it is skipped.
* ``big.yaml`` / ``.json``: :func:`kubectl_like` at 10,000 nodes and 100,000 bound pods (plus
  250 pending gangs of 8), objects with the fields kubectl prints (labels, annotations, owner
  references, conditions, container statuses, images, volumes): 112,250 objects, ~390 MB of YAML.

Before (main @64a9b85) and after (issue 27 item 2), one process each, back to back on the same
machine (2 shared cores, load average 2.2-2.7); best of 2, CPU seconds (wall in brackets):

==================================================  ============  ===========  =====
snapshot                                            before        after        ratio
==================================================  ============  ===========  =====
inventory, 9,904 objects, 3.9 MB multi-doc YAML     6.00 (16.1)   2.49 (3.55)  2.4x
the same objects as a 9.3 MB JSON List              2.51 (3.48)   1.31 (2.03)  1.9x
showcase alibaba-1213 (2 MB YAML)                   3.80 (5.28)   1.88 (2.68)  2.0x
==================================================  ============  ===========  =====

``kubectl_like()`` at its defaults writes ~390 MB of YAML (not the issue's ~100 MB: the pods carry
full statuses, ~3.6 KB each); it was not loaded within the session that wrote this.

Before: PyYAML's CSafeLoader built the objects in Python (a Node and a resolver regex per scalar,
then the constructor's generators): half the load; every quantity went through a regular
expression and Fractions (32,000 on the inventory, ~100 us each); ``parse_node`` / ``parse_pod``
formatted a message per quantity in case it was out of range; the group forest was built (and
validated) twice. After: YAML from libyaml events with a scalar cache
(:mod:`gangplan.io.yamlfast`, ``benchmarks/yaml_parsers.py`` compares the candidates), quantities
remembered per distinct string, one forest per load, the common cases of the field accessors first.

Run: ``python benchmarks/load_time.py [--repeat 3] [--write-dumps /tmp/gangplan-dumps] [SNAPSHOT ...]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from results_csv import print_rows, write_csv  # benchmarks/results_csv.py

from gangplan.io.loader import load_snapshot

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).parent / "results" / "load_time.csv"
REFERENCE = ROOT / "scenarios" / "showcase" / "alibaba-1213"
FIELDS = [
    "snapshot",
    "megabytes",
    "nodes",
    "pods",
    "pending",
    "bestSeconds",
    "medianSeconds",
    "bestCpuSeconds",
    "secondsPer1000Objects",
    "ratioToShowcase",
    "loadAverage",
]


# ---- the big shapes, as kubectl prints them ---------------------------------------------------
def _uid(kind: int, i: int) -> str:
    return f"{kind:08x}-{i >> 16 & 0xFFFF:04x}-4{i >> 4 & 0xFFF:03x}-8{i & 0xFFF:03x}-{i * 2654435761 % 2**48:012x}"


def _stamp(i: int) -> str:
    return (
        f"2026-11-{1 + i // 86400 % 28:02d}T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
    )


def kubectl_node(i: int, gpus: int) -> dict:
    name = f"node-{i:05d}"
    zone, rack = f"zone-{i // 512}", f"rack-{i // 16}"
    alloc = {
        "cpu": "95900m",
        "ephemeral-storage": "1699505241846",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": "1056300376Ki",
        "pods": "110",
    }
    cap = {
        "cpu": "96",
        "ephemeral-storage": "1844079744Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": "1056915776Ki",
        "pods": "110",
    }
    if gpus:
        alloc["nvidia.com/gpu"] = cap["nvidia.com/gpu"] = str(gpus)
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": "p5.48xlarge",
        "beta.kubernetes.io/os": "linux",
        "failure-domain.beta.kubernetes.io/region": "region-1",
        "failure-domain.beta.kubernetes.io/zone": zone,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "p5.48xlarge",
        "topology.kubernetes.io/region": "region-1",
        "topology.kubernetes.io/zone": zone,
        "topology.kubernetes.io/rack": rack,
    }
    if gpus:
        labels |= {
            "nvidia.com/gpu.count": str(gpus),
            "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
            "nvidia.com/gpu.present": "true",
        }
    conditions = [
        {
            "lastHeartbeatTime": _stamp(i + 9000),
            "lastTransitionTime": _stamp(i),
            "message": m,
            "reason": r,
            "status": s,
            "type": t,
        }
        for t, s, r, m in (
            (
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            (
                "PIDPressure",
                "False",
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available",
            ),
            ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        )
    ]
    images = [
        {
            "names": [
                f"registry.example.com/team-{j}/trainer@sha256:{(i * 31 + j) % 2**64:016x}{'0' * 48}",
                f"registry.example.com/team-{j}/trainer:v{j}.{i % 7}",
            ],
            "sizeBytes": 1_000_000_000 + j * 12_345_678,
        }
        for j in range(8)
    ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "creationTimestamp": _stamp(i),
            "labels": labels,
            "name": name,
            "resourceVersion": str(1_000_000 + i),
            "uid": _uid(1, i),
        },
        "spec": {
            "podCIDR": f"10.{i // 256 % 256}.{i % 256}.0/24",
            "podCIDRs": [f"10.{i // 256 % 256}.{i % 256}.0/24"],
            "providerID": f"aws:///region-1a/i-{i:017x}",
        },
        "status": {
            "addresses": [
                {"address": f"10.200.{i // 256 % 256}.{i % 256}", "type": "InternalIP"},
                {"address": name, "type": "Hostname"},
            ],
            "allocatable": alloc,
            "capacity": cap,
            "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": images,
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": _uid(2, i),
                "containerRuntimeVersion": "containerd://1.7.27",
                "kernelVersion": "6.1.0-31-amd64",
                "kubeProxyVersion": "v1.37.0",
                "kubeletVersion": "v1.37.0",
                "machineID": f"{i:032x}",
                "operatingSystem": "linux",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "systemUUID": _uid(3, i),
            },
        },
    }


def kubectl_pod(
    i: int, node: str | None, gpus: int, group: str | None = None, created: int = 0
) -> dict:
    job = f"job-{i // 8:05d}"
    name = f"{job}-worker-{i % 8}"
    ns = "training"
    requests = {"cpu": "11", "memory": "120Gi"}
    if gpus:
        requests["nvidia.com/gpu"] = str(gpus)
    limits = {"memory": "120Gi"} | ({"nvidia.com/gpu": str(gpus)} if gpus else {})
    container = {
        "args": ["--config=/etc/trainer/config.yaml", f"--rank={i % 8}"],
        "command": ["python", "-m", "trainer"],
        "env": [
            {"name": "MASTER_ADDR", "value": f"{job}-worker-0.{job}"},
            {"name": "MASTER_PORT", "value": "29500"},
            {
                "name": "POD_NAME",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
            },
        ],
        "image": f"registry.example.com/team-{i % 8}/trainer:v{i % 8}.3",
        "imagePullPolicy": "IfNotPresent",
        "name": "trainer",
        "ports": [{"containerPort": 29500, "name": "rendezvous", "protocol": "TCP"}],
        "resources": {"limits": limits, "requests": requests},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [
            {"mountPath": "/etc/trainer", "name": "config"},
            {
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "name": "kube-api-access",
                "readOnly": True,
            },
        ],
    }
    spec = {
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Never",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
        ],
        "volumes": [
            {"configMap": {"defaultMode": 420, "name": f"{job}-config"}, "name": "config"},
            {
                "name": "kube-api-access",
                "projected": {
                    "defaultMode": 420,
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}
                    ],
                },
            },
        ],
    }
    meta = {
        "creationTimestamp": _stamp(created or i),
        "generateName": f"{job}-worker-",
        "labels": {"app.kubernetes.io/name": "trainer", "job-name": job, "rank": str(i % 8)},
        "name": name,
        "namespace": ns,
        "resourceVersion": str(2_000_000 + i),
        "uid": _uid(4, i),
    }
    if node is not None:
        spec["nodeName"] = node
        meta["ownerReferences"] = [
            {
                "apiVersion": "batch/v1",
                "blockOwnerDeletion": True,
                "controller": True,
                "kind": "Job",
                "name": job,
                "uid": _uid(5, i // 8),
            }
        ]
        status = {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": _stamp(i + 60),
                    "status": "True",
                    "type": t,
                }
                for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "containerStatuses": [
                {
                    "containerID": f"containerd://{i:064x}",
                    "image": container["image"],
                    "imageID": f"registry.example.com/team-{i % 8}/trainer@sha256:{i:064x}",
                    "lastState": {},
                    "name": "trainer",
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": _stamp(i + 30)}},
                }
            ],
            "hostIP": f"10.200.{i // 256 % 256}.{i % 256}",
            "phase": "Running",
            "podIP": f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}",
            "qosClass": "Burstable",
            "startTime": _stamp(i + 10),
        }
    else:
        spec["schedulingGroup"] = {"podGroupName": group}
        status = {"phase": "Pending", "qosClass": "Burstable"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def kubectl_like(
    nodes: int = 10_000, bound: int = 100_000, gangs: int = 250, gang_size: int = 8
) -> list[dict]:
    """``nodes`` GPU nodes of 8 GPUs, ``bound`` running pods of 1 GPU spread over them, and
    ``gangs`` pending gangs (a PodGroup of minCount ``gang_size`` and its pods of 8 GPUs)."""
    out = [kubectl_node(i, 8) for i in range(nodes)]
    out += [kubectl_pod(i, f"node-{i % nodes:05d}", 1) for i in range(bound)]
    for g in range(gangs):
        name = f"gang-{g:04d}"
        out.append(
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {
                    "creationTimestamp": _stamp(g * 10),
                    "name": name,
                    "namespace": "training",
                    "resourceVersion": str(3_000_000 + g),
                    "uid": _uid(6, g),
                },
                "spec": {"schedulingPolicy": {"gang": {"minCount": gang_size}}},
            }
        )
        out += [
            kubectl_pod(bound + g * gang_size + j, None, 8, group=name, created=g * 10 + 1)
            for j in range(gang_size)
        ]
    return out


def write_list(objects: list[dict], path: Path) -> Path:
    """``objects`` as kubectl prints a list: one ``kind: List``, YAML with keys sorted, or JSON
    indented by 4."""
    doc = {
        "apiVersion": "v1",
        "items": objects,
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".json":
        path.write_text(json.dumps(doc, indent=4) + "\n", encoding="utf-8")
    else:
        import yaml

        with path.open("w", encoding="utf-8") as f:
            yaml.dump(
                doc,
                f,
                Dumper=yaml.CSafeDumper,
                sort_keys=True,
                default_flow_style=False,
                width=1000,
            )
    return path


def write_dumps(folder: Path) -> list[Path]:
    out = []
    try:
        sys.path.insert(0, str(Path(__file__).parent))
        from real_inventory import inventory_snapshot  # benchmarks/real_inventory.py

        inventory = inventory_snapshot(1000, 0.8)
    except (OSError, ImportError) as e:  # the traces are not here
        print(f"inventory shape skipped: {e}", file=sys.stderr)
    else:
        out += [
            write_list(inventory, folder / "inventory.yaml"),
            write_list(inventory, folder / "inventory.json"),
        ]
    big = kubectl_like()
    out += [write_list(big, folder / "big.yaml"), write_list(big, folder / "big.json")]
    return out


# ---- measuring ---------------------------------------------------------------------------------
def measure(path: Path, repeat: int) -> dict:
    times, cpu = [], []
    cluster = None
    for _ in range(repeat):
        cluster = None
        t0, c0 = time.perf_counter(), time.process_time()
        cluster = load_snapshot(path)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    assert cluster is not None
    objects = len(cluster.nodes) + len(cluster.pods) + len(cluster.pod_groups)
    size = sum(
        f.stat().st_size for f in ([path] if path.is_file() else path.rglob("*")) if f.is_file()
    )
    return {
        "snapshot": str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path),
        "megabytes": round(size / 2**20, 1),
        "nodes": len(cluster.nodes),
        "pods": len(cluster.pods),
        "pending": len(cluster.pending_pods),
        "bestSeconds": round(min(times), 3),
        "medianSeconds": round(statistics.median(times), 3),
        "bestCpuSeconds": round(min(cpu), 3),
        "secondsPer1000Objects": round(min(times) * 1000 / max(1, objects), 4),
        "loadAverage": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("snapshots", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--write-dumps",
        type=Path,
        metavar="DIR",
        help="write the issue-27 shapes to DIR first, and load them too",
    )
    args = ap.parse_args()
    extra = write_dumps(args.write_dumps) if args.write_dumps else []
    paths = [REFERENCE] + [
        p.resolve() for p in [*args.snapshots, *extra] if p.resolve() != REFERENCE
    ]
    rows = [measure(p, args.repeat) for p in paths]
    ref = rows[0]["bestSeconds"] or 1e-9
    for r in rows:
        r["ratioToShowcase"] = round(r["bestSeconds"] / ref, 2)
    print_rows(rows, FIELDS)
    write_csv(OUT, rows, FIELDS)


if __name__ == "__main__":
    main()
