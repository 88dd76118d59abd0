"""Every plugin name, once: mirrors ``pkg/scheduler/framework/plugins/names/names.go``
(kubernetes/kubernetes master, v1.37 development: ``TopologyPlacementGenerator``,
``PodGroupPodsCount``, ``PlacementBinPacking`` and ``GangScheduling`` beside the v1.36 set).

Plugin modules, the registry, the profile and the placement algorithm import these constants;
no other module of the greedy engine spells a plugin name. The default profile of the snapshot
layer (``gangplan.models.objects.DEFAULT_*`` and ``PLACEMENT_PLUGIN_ALIASES``: the
KubeSchedulerConfiguration defaults, which the loader applies without importing the engine) is
checked against this module and the registry by ``tests/test_plugin_points.py``.
"""

from __future__ import annotations

# ---- Filter / Score plugins (the pod-by-pod cycle) -------------------------------------------
NODE_UNSCHEDULABLE = "NodeUnschedulable"
NODE_NAME = "NodeName"
TAINT_TOLERATION = "TaintToleration"
NODE_AFFINITY = "NodeAffinity"
NODE_PORTS = "NodePorts"
NODE_RESOURCES_FIT = "NodeResourcesFit"
POD_TOPOLOGY_SPREAD = "PodTopologySpread"
INTER_POD_AFFINITY = "InterPodAffinity"
NODE_RESOURCES_BALANCED_ALLOCATION = "NodeResourcesBalancedAllocation"
IMAGE_LOCALITY = "ImageLocality"
DYNAMIC_RESOURCES = "DynamicResources"

# ---- pod-group plugins (KEP-4671 gangs, KEP-5732 topology-aware placements) -----------------
GANG_SCHEDULING = "GangScheduling"
TOPOLOGY_PLACEMENT_GENERATOR = "TopologyPlacementGenerator"
PLACEMENT_BIN_PACKING = "PlacementBinPacking"
POD_GROUP_PODS_COUNT = "PodGroupPodsCount"

# ---- PostFilter ------------------------------------------------------------------------------
DEFAULT_PREEMPTION = "DefaultPreemption"
