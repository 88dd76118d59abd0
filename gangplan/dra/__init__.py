"""Dynamic Resource Allocation (``resource.k8s.io``): one rule layer that the greedy engine's
DynamicResources plugin, the exact engine's capacity rows and the validator all use.

* :mod:`.model`: what is read of DeviceClass, ResourceSlice, ResourceClaim,
  ResourceClaimTemplate (v1, v1beta1, v1beta2) and DeviceTaintRule (v1alpha3, v1beta2, v1) and of
  pods' ``spec.resourceClaims``; the per-release view of device taints (KEP-5055). Reading them
  from raw objects (naming what is not modelled in warnings) and assembling the state, PodGroup
  claims (KEP-5729) resolved to one claim per group, is the loader's part:
  :mod:`gangplan.io.dra_parse`, :mod:`gangplan.io.dra_build`;
* :mod:`.cel` and :mod:`.semver`: CEL selectors with Kubernetes semantics (cel-expr-python);
* :mod:`.allocator`: the structured allocator of kube-scheduler, per node, with claims'
  matchAttribute / distinctAttribute constraints, shared counters of partitionable devices
  (KEP-4815), ``allocationMode: All``, ``firstAvailable`` subrequests (KEP-4816) and device
  taints and tolerations (KEP-5055); its parts are :mod:`.matching`, :mod:`.consumable`,
  :mod:`.shared_counters`, :mod:`.search`, :mod:`.counting`, :mod:`.joint_model` and
  :mod:`.brute_force`;
* :mod:`.rules`: what DynamicResources' PreFilter / Filter decide for one pod on one node;
* :mod:`.capacity`: the per-node device counts (and, for constrained claims, counts per attribute
  value; for partitionable devices, per-device counter rows; for All and firstAvailable claims,
  their rows) the exact engine and the validator read; its parts are :mod:`.capacity_rows`,
  :mod:`.device_counts`, :mod:`.row_families` and :mod:`.node_check`;
* :mod:`.results`: the devices each claim of a placement gets, named in the Result, and the
  validator's check of those names.

See docs/explanation/dra.md.
"""

from gangplan.dra.model import DraState

__all__ = ["DraState"]
