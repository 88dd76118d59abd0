"""Well-known node label keys and the GPU resource name: the one place gangplan spells them.

The Kubernetes keys mirror ``staging/src/k8s.io/api/core/v1/well_known_labels.go`` (kubernetes
v1.35; ``LabelHostname``, ``LabelTopologyZone``, ``LabelTopologyRegion`` and the deprecated
``LabelFailureDomainBeta*`` spellings kube-scheduler still reads). The others are conventions,
not Kubernetes API: ``topology.kubernetes.io/rack`` is the rack label of Kueue's TAS examples and
of scheduler_perf's ``podgroup/tas`` node template; ``cloud.google.com/gce-topology-*`` are GKE's
block / sub-block / host labels (A3 / A4X); ``network.topology.nvidia.com/*`` are NVIDIA
Topograph's (v0.1); the ``nvidia.com/gpu.*`` labels are what
NVIDIA GPU feature discovery writes (``gpu.clique``: the NVLink partition, ``<domain>.<clique
id>``); ``nvidia.com/gpu`` is the device plugin's extended resource.
"""

from __future__ import annotations

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
REGION_BETA = "failure-domain.beta.kubernetes.io/region"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"

RACK = "topology.kubernetes.io/rack"

GCE_BLOCK = "cloud.google.com/gce-topology-block"
GCE_SUBBLOCK = "cloud.google.com/gce-topology-subblock"
GCE_HOST = "cloud.google.com/gce-topology-host"
TOPOGRAPH_BLOCK = "network.topology.nvidia.com/block"
TOPOGRAPH_SPINE = "network.topology.nvidia.com/spine"

GPU = "nvidia.com/gpu"
"""The extended resource GPUs are requested as (a resource name, not a label)."""
GPU_PRODUCT = "nvidia.com/gpu.product"
GPU_COUNT = "nvidia.com/gpu.count"
GPU_CLIQUE = "nvidia.com/gpu.clique"

__all__ = [
    "GCE_BLOCK",
    "GCE_HOST",
    "GCE_SUBBLOCK",
    "GPU",
    "GPU_CLIQUE",
    "GPU_COUNT",
    "GPU_PRODUCT",
    "HOSTNAME",
    "INSTANCE_TYPE",
    "RACK",
    "REGION",
    "REGION_BETA",
    "TOPOGRAPH_BLOCK",
    "TOPOGRAPH_SPINE",
    "ZONE",
    "ZONE_BETA",
]
