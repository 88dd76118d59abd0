"""GPU clusters as NVIDIA's DRA driver publishes them (``gangplan generate gb200-nvl72 --dra``, the
DRA benchmark): :func:`to_dra` turns a generated cluster whose nodes offer ``nvidia.com/gpu`` into
the same cluster with the GPUs as DRA devices.

Facts from NVIDIA/k8s-dra-driver-gpu @ 22407113785e78c7763b4637689a201eb39c6199 (2026-05-15):

* DeviceClasses, ``deployments/helm/dra-driver-nvidia-gpu/templates/``:
  ``deviceclass-gpu.yaml`` (``gpu.nvidia.com``: ``device.driver == 'gpu.nvidia.com' &&
  device.attributes['gpu.nvidia.com'].type == 'gpu'``, and with ``resource.k8s.io/v1``
  ``extendedResourceName: nvidia.com/gpu``), ``deviceclass-compute-domain-default-channel.yaml``
  (``compute-domain-default-channel.nvidia.com``: driver ``compute-domain.nvidia.com``,
  ``type == 'channel' && id == 0``) and ``deviceclass-compute-domain-daemon.yaml``
  (``compute-domain-daemon.nvidia.com``: ``type == 'daemon'``).
* GPU devices, ``cmd/gpu-kubelet-plugin/deviceinfo.go`` (``GpuInfo.CanonicalName`` ``gpu-<minor>``,
  ``GpuInfo.Attributes``: ``type`` ``gpu``, ``uuid``, ``productName``, ``brand``,
  ``architecture``, and the version attributes ``cudaComputeCapability``, ``driverVersion``,
  ``cudaDriverVersion``; plus ``resource.kubernetes.io/pciBusID`` / ``pcieRoot`` from
  ``cmd/gpu-kubelet-plugin/nvlib.go``) and ``partitions.go`` (``fullGpuCapacity``: capacity
  ``memory`` in bytes). One pool per node, named after the node.
* ComputeDomain devices, ``cmd/compute-domain-kubelet-plugin/deviceinfo.go`` (``channel-<id>`` and
  ``daemon-<id>``, attributes ``type`` and ``id``) and ``driver.go`` (the kubelet plugin publishes
  ``daemon-0`` and only ``channel-0``: "Explicitly exclude ComputeDomain channels from being
  advertised here"), so a node holds one workload channel: at most one pod with a channel claim
  per node.
* The workload claim template, ``templates/compute-domain-workload-claim-template.tmpl.yaml``:
  one request ``channel`` of ``compute-domain-default-channel.nvidia.com`` with an opaque
  ``ComputeDomainChannelConfig``; the ComputeDomain controller creates it under the name of the
  ComputeDomain's ``spec.channel.resourceClaimTemplate.name`` (``demo/specs/imex/channel-injection.yaml``).

Not sourced (assumptions): the product names, memory sizes, driver / CUDA versions and PCI
addresses of :data:`GPU_MODELS` are what ``nvidia-smi`` shows on such machines, written for the
generator. Bound load pods keep asking ``nvidia.com/gpu``; each gets the allocated
``<pod>-extended-resources`` ResourceClaim kube-scheduler makes for it (KEP-5004), so their
devices are in use.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from typing import Any

from gangplan.bench.generators.builders import Obj
from gangplan.models.well_known import GPU

RESOURCE_API = "resource.k8s.io/v1"
GPU_DRIVER = "gpu.nvidia.com"
CD_DRIVER = "compute-domain.nvidia.com"
GPU_CLASS = "gpu.nvidia.com"
CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"
DAEMON_CLASS = "compute-domain-daemon.nvidia.com"
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"

GPU_MODELS: dict[str, dict[str, Any]] = {
    "GB200": {
        "productName": "NVIDIA GB200",
        "brand": "Nvidia",
        "architecture": "Blackwell",
        "cudaComputeCapability": "10.0.0",
        "memory": "189471Mi",
        "pci": ["0008:01:00.0", "0009:01:00.0", "0018:01:00.0", "0019:01:00.0"],
    },
    "H100": {
        "productName": "NVIDIA H100 80GB HBM3",
        "brand": "Nvidia",
        "architecture": "Hopper",
        "cudaComputeCapability": "9.0.0",
        "memory": "81559Mi",
        "pci": [
            "0000:18:00.0",
            "0000:2a:00.0",
            "0000:3a:00.0",
            "0000:5d:00.0",
            "0000:9a:00.0",
            "0000:ab:00.0",
            "0000:ba:00.0",
            "0000:db:00.0",
        ],
    },
}
"""Assumed device facts per GPU model (see the module docstring)."""
DRIVER_VERSION, CUDA_DRIVER_VERSION = "580.65.6", "13.0.0"


def device_classes() -> list[Obj]:
    """The DeviceClasses NVIDIA's Helm chart installs (GPUs and ComputeDomains enabled, v1 API)."""

    def cls(name: str, expr: str, extra: dict | None = None) -> Obj:
        return {
            "apiVersion": RESOURCE_API,
            "kind": "DeviceClass",
            "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expr}}], **(extra or {})},
        }

    return [
        cls(
            GPU_CLASS,
            f"device.driver == '{GPU_DRIVER}' && device.attributes['{GPU_DRIVER}'].type == 'gpu'",
            {"extendedResourceName": GPU},
        ),
        cls(
            CHANNEL_CLASS,
            f"device.driver == '{CD_DRIVER}' && device.attributes['{CD_DRIVER}'].type == 'channel' && device.attributes['{CD_DRIVER}'].id == 0",
        ),
        cls(
            DAEMON_CLASS,
            f"device.driver == '{CD_DRIVER}' && device.attributes['{CD_DRIVER}'].type == 'daemon'",
        ),
    ]


def _uuid(node: str, minor: int) -> str:
    return "GPU-" + str(uuid.UUID(bytes=hashlib.sha256(f"{node}/{minor}".encode()).digest()[:16]))


def gpu_slice(node: str, gpus: int, model: str, *, versions: bool = True) -> Obj:
    """The ``gpu.nvidia.com`` ResourceSlice of ``node``: devices ``gpu-0`` .. ``gpu-<gpus-1>``.
    ``versions``: also the driver's version attributes (gangplan warns that it reads them as strings)."""
    m = GPU_MODELS[model]
    devices = []
    for i in range(gpus):
        attrs: dict[str, dict] = {
            "type": {"string": "gpu"},
            "uuid": {"string": _uuid(node, i)},
            "productName": {"string": m["productName"]},
            "brand": {"string": m["brand"]},
            "architecture": {"string": m["architecture"]},
        }
        if versions:
            attrs |= {
                "cudaComputeCapability": {"version": m["cudaComputeCapability"]},
                "driverVersion": {"version": DRIVER_VERSION},
                "cudaDriverVersion": {"version": CUDA_DRIVER_VERSION},
            }
        pci = m["pci"][i % len(m["pci"])]
        attrs["resource.kubernetes.io/pciBusID"] = {"string": pci}
        attrs["resource.kubernetes.io/pcieRoot"] = {"string": f"pci{pci[:4]}:{pci[5:7]}"}
        devices.append(
            {
                "name": f"gpu-{i}",
                "attributes": attrs,
                "capacity": {"memory": {"value": m["memory"]}},
            }
        )
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{GPU_DRIVER}"},
        "spec": {
            "driver": GPU_DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def compute_domain_slice(node: str) -> Obj:
    """The ``compute-domain.nvidia.com`` ResourceSlice of ``node``: ``channel-0`` and ``daemon-0``."""
    devices = [
        {"name": f"{t}-0", "attributes": {"type": {"string": t}, "id": {"int": 0}}}
        for t in ("channel", "daemon")
    ]
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{CD_DRIVER}"},
        "spec": {
            "driver": CD_DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def channel_claim_template(name: str, namespace: str) -> Obj:
    """The workload claim template the ComputeDomain controller creates (its placeholders filled)."""
    domain = str(uuid.UUID(bytes=hashlib.sha256(f"{namespace}/{name}".encode()).digest()[:16]))
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {"name": "channel", "exactly": {"deviceClassName": CHANNEL_CLASS}}
                    ],
                    "config": [
                        {
                            "requests": ["channel"],
                            "opaque": {
                                "driver": CD_DRIVER,
                                "parameters": {
                                    "apiVersion": "resource.nvidia.com/v1beta1",
                                    "kind": "ComputeDomainChannelConfig",
                                    "domainID": domain,
                                    "allocationMode": "Single",
                                },
                            },
                        }
                    ],
                }
            }
        },
    }


def extended_claim(pod: Obj, node: str, devices: Sequence[str]) -> Obj:
    """The allocated ``<pod>-extended-resources`` claim of a bound pod holding ``devices`` of ``node``."""
    meta = pod["metadata"]
    # upstream createDeviceRequests: container-<container index>-request-<index of the resource in the container's sorted requests>
    keys = sorted(pod["spec"]["containers"][0].get("resources", {}).get("requests", {}))
    request = f"container-0-request-{keys.index(GPU) if GPU in keys else 0}"
    results = [
        {"request": request, "driver": GPU_DRIVER, "pool": node, "device": d} for d in devices
    ]
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceClaim",
        "metadata": {
            "name": f"{meta['name']}-extended-resources",
            "namespace": meta["namespace"],
            "annotations": {EXTENDED_CLAIM_ANNOTATION: "true"},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": meta["name"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": request,
                        "exactly": {
                            "deviceClassName": GPU_CLASS,
                            "allocationMode": "ExactCount",
                            "count": len(devices),
                        },
                    }
                ]
            }
        },
        "status": {
            "allocation": {
                "devices": {"results": results},
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [node]}
                            ]
                        }
                    ]
                },
            },
            "reservedFor": [{"resource": "pods", "name": meta["name"]}],
        },
    }


def _gpus(obj: Obj) -> int:
    c = obj["spec"]["containers"][0]
    return int(c.get("resources", {}).get("requests", {}).get(GPU, 0))


def to_dra(
    objects: Sequence[Obj], *, model: str, channels: bool = True, versions: bool = True
) -> list[Obj]:
    """``objects`` with every node's ``nvidia.com/gpu`` published as DRA devices instead (the node
    no longer lists it in ``status.allocatable``: KEP-5004 serves the pods' ``nvidia.com/gpu``),
    bound pods' GPUs in allocated claims, and with ``channels`` a ComputeDomain channel per node
    and a channel claim on every pending pod of a PodGroup (one template per group: the group is
    one ComputeDomain). DeviceClasses and slices come first, then the objects."""
    out: list[Obj] = []
    slices: list[Obj] = []
    claims: list[Obj] = []
    templates: dict[tuple[str, str], Obj] = {}
    next_gpu: dict[str, int] = {}
    node_gpus = {
        o["metadata"]["name"]: int(o["status"].get("allocatable", {}).get(GPU, 0))
        for o in objects
        if o.get("kind") == "Node"
    }
    for obj in objects:
        kind = obj.get("kind")
        if kind == "Node":
            obj = {
                **obj,
                "status": {
                    **obj["status"],
                    **{
                        k: {r: q for r, q in obj["status"].get(k, {}).items() if r != GPU}
                        for k in ("allocatable", "capacity")
                        if k in obj["status"]
                    },
                },
            }
            node = obj["metadata"]["name"]
            gpus = node_gpus[node]
            if gpus:
                slices.append(gpu_slice(node, gpus, model, versions=versions))
            if channels:
                slices.append(compute_domain_slice(node))
        elif kind == "Pod":
            node = obj["spec"].get("nodeName")
            want = _gpus(obj)
            if node and want:
                first = next_gpu.get(node, 0)
                next_gpu[node] = first + want
                claims.append(
                    extended_claim(obj, node, [f"gpu-{i}" for i in range(first, first + want)])
                )
            elif not node and channels and obj["metadata"].get("labels", {}).get("job"):
                group = obj["metadata"]["labels"]["job"]
                ns = obj["metadata"]["namespace"]
                tname = f"{group}-channel"
                templates.setdefault((ns, tname), channel_claim_template(tname, ns))
                obj = {
                    **obj,
                    "spec": {
                        **obj["spec"],
                        "resourceClaims": [{"name": "channel", "resourceClaimTemplateName": tname}],
                    },
                }
                c0 = obj["spec"]["containers"][0]
                obj["spec"]["containers"] = [
                    {
                        **c0,
                        "resources": {**c0.get("resources", {}), "claims": [{"name": "channel"}]},
                    },
                    *obj["spec"]["containers"][1:],
                ]
        out.append(obj)
    return device_classes() + slices + list(templates.values()) + claims + out
