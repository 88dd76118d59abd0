"""GPUs a ``--nodes`` snapshot publishes through Dynamic Resource Allocation, as replay GPUs.

A v1.34+ cluster running a DRA GPU driver (NVIDIA's ``gpu.nvidia.com``, the examples'
``gpu.example.com``) advertises no ``nvidia.com/gpu``: its GPUs are devices of ResourceSlices,
and running pods hold them through allocated ResourceClaims. The replay's GPUs are a node's
``nvidia.com/gpu`` allocatable, shared by milli (:mod:`gangplan.replay.gpushare`), so
:func:`translate` rewrites the snapshot in those terms:

* the **GPU class**: the DeviceClass named by ``--gpu-class``, else the one DeviceClass whose
  name holds ``gpu`` and that selects at least one device (CEL selectors evaluated by
  :func:`gangplan.dra.allocator.selectable`, the allocator's own rule); several such classes are
  an error naming them; none: the devices stay unread (a caveat says so);
* each node's **GPUs**: the devices of its ResourceSlices the class selects, as its
  ``nvidia.com/gpu`` allocatable (a node that already advertises ``nvidia.com/gpu``, from a
  device plugin, keeps that number; a caveat names it); the first one's ``productName`` attribute (the NVIDIA driver's)
  becomes the ``nvidia.com/gpu.product`` label when the node has none, so ``gpu_spec`` /
  ``gpu_model`` node affinity works;
* **held GPUs**: a GPU device allocated to a claim (``status.allocation.devices.results``) is
  held by the bound pod the claim is reserved for (``status.reservedFor``; for a PodGroup's
  claim, reserved for the PodGroup, its first bound member on the device's node), which then requests
  that many ``nvidia.com/gpu``; a share of a device (KEP-5075 ``shareID``) holds the whole device
  (the replay's bound pods hold whole GPUs; a caveat counts them); a GPU device allocated to no
  bound pod of its node is taken off the node's allocatable (it is in use).

The bound pods' claims are dropped from the objects the exact epochs see
(:func:`gangplan.replay.traces.resident_objects` uses the translated requests), since their GPUs
are the node's ``nvidia.com/gpu`` there as well.
"""

from __future__ import annotations

from collections import Counter

from gangplan.io.errors import SnapshotError
from gangplan.models.cluster import Cluster
from gangplan.models.objects import Node, Pod
from gangplan.models.well_known import GPU, GPU_PRODUCT

PRODUCT_ATTRIBUTE = "productName"
"""The device attribute whose value becomes the node's ``nvidia.com/gpu.product`` label."""


def gpu_class_of(cluster: Cluster, name: str | None, source: str) -> str | None:
    """The DeviceClass whose devices are the replay's GPUs (module docstring)."""
    from gangplan.dra.allocator import AllocationError, selectable
    from gangplan.dra.model import DeviceRequest

    dra = cluster.dra
    if name is not None:
        if name not in dra.classes:
            raise SnapshotError(
                source,
                f"no DeviceClass {name!r} in the snapshot (it has: {', '.join(sorted(dra.classes)) or 'none'})",
                field="--gpu-class",
            )
        return name
    found = []
    for cname in sorted(dra.classes):
        if "gpu" not in cname.lower():
            continue
        probe = DeviceRequest(name="gpu", device_class=cname)
        try:
            if any(
                selectable(d, probe, dra.classes)
                for devs in dra.devices_by_node.values()
                for d in devs
            ):
                found.append(cname)
        except AllocationError:
            continue
    if len(found) > 1:
        raise SnapshotError(
            source,
            f"several DeviceClasses select GPU devices ({', '.join(found)}): name the replay's GPUs with --gpu-class",
            field="--gpu-class",
        )
    return found[0] if found else None


def translate(
    cluster: Cluster, gpu_class: str | None, source: str
) -> tuple[tuple[Node, ...], tuple[Pod, ...], list[str]]:
    """The snapshot's nodes and bound pods with its DRA GPUs as ``nvidia.com/gpu`` (module
    docstring), and the caveats."""
    from gangplan.dra.allocator import selectable
    from gangplan.dra.model import DeviceRequest

    dra = cluster.dra
    bound = tuple(p for p in cluster.pods if p.node_name is not None)
    cname = gpu_class_of(cluster, gpu_class, source)
    drivers = sorted({d.driver for devs in dra.devices_by_node.values() for d in devs})
    if cname is None:
        return (
            cluster.nodes,
            bound,
            [
                f"nodes {source}: the ResourceSlices' devices ({', '.join(drivers)}) are not replay GPUs: no DeviceClass named like a GPU "
                "selects any (name one with --gpu-class); a replay node's GPUs are its nvidia.com/gpu allocatable"
            ],
        )
    probe = DeviceRequest(name="gpu", device_class=cname)
    gpus: dict[str, list] = {}
    others: set[str] = set()
    for n, devs in dra.devices_by_node.items():
        gpus[n] = []
        for d in devs:
            if selectable(d, probe, dra.classes):
                gpus[n].append(d)
            else:
                others.add(d.driver)
    owner = {d.id: node for node, devs in gpus.items() for d in devs}  # GPU device -> its node
    pods_by_key = {p.key: p for p in bound}
    held: Counter = Counter()  # pod key -> GPUs
    unowned: Counter = Counter()  # node -> GPUs in use by no bound pod
    shared_ids = {d for c in dra.claims.values() for d, _ in c.shared}
    taken: set = set()  # a device shared by several claims is held once, by the first
    for c in dra.claims.values():
        if not c.allocated:
            continue
        ns = c.key.split("/", 1)[0]
        holders = [f"{ns}/{name}" for name in c.reserved_for if f"{ns}/{name}" in pods_by_key]
        # a PodGroup's claim (KEP-5729) is reserved for the PodGroup: its bound members hold it
        holders += [
            p.key
            for name in c.reserved_for
            if f"{ns}/{name}" in cluster.pod_groups
            for p in bound
            if p.group_key == f"{ns}/{name}"
        ]
        for i, did in enumerate(c.allocated):
            if c.result_admin and c.result_admin[i]:
                continue
            node = owner.get(did)
            if node is None or did in taken:
                continue
            taken.add(did)
            pod = next((k for k in holders if pods_by_key[k].node_name == node), None)
            if pod is None:
                unowned[node] += 1
            else:
                held[pod] += 1
    nodes = []
    both: list[str] = []
    for n in cluster.nodes:
        devs = gpus.get(n.name, [])
        if not devs:
            nodes.append(n)
            continue
        alloc = dict(n.allocatable)
        if (
            int(alloc.get(GPU, 0)) > 0
        ):  # a device plugin's GPUs too: which are the same GPUs is unknowable
            both.append(n.name)
            nodes.append(n)
            continue
        alloc[GPU] = max(0, len(devs) - unowned[n.name])
        labels = dict(n.labels)
        product = devs[0].attributes.get(devs[0].driver, {}).get(PRODUCT_ATTRIBUTE)
        if product is not None and GPU_PRODUCT not in labels:
            labels[GPU_PRODUCT] = str(product)
        nodes.append(n.model_copy(update={"allocatable": alloc, "labels": labels}))
    pods = tuple(
        p.model_copy(
            update={"requests": {**p.requests, GPU: int(p.requests.get(GPU, 0)) + held[p.key]}}
        )
        if held[p.key]
        else p
        for p in bound
    )
    total = sum(len(v) for v in gpus.values())
    notes = [
        f"nodes {source}: {total} GPU devices of DeviceClass {cname} on {sum(1 for v in gpus.values() if v)} nodes are the replay's GPUs "
        f"(nvidia.com/gpu); {sum(held.values())} are held by {len(held)} bound pods"
        + (
            f", {sum(unowned.values())} by claims of no bound pod (taken off their nodes)"
            if unowned
            else ""
        )
    ]
    if both:
        notes.append(
            f"nodes {source}: {len(both)} nodes advertise nvidia.com/gpu and also publish GPU devices ({', '.join(both[:3])}): "
            "their nvidia.com/gpu allocatable is used, their devices are not added"
        )
    shares = len(taken & shared_ids)
    if shares:
        notes.append(
            f"nodes {source}: {shares} GPU devices shared through consumable capacity (shareID) count as held whole (the replay's bound pods hold whole GPUs)"
        )
    if others:
        notes.append(
            f"nodes {source}: devices of drivers {', '.join(sorted(others))} that DeviceClass {cname} does not select are not modelled by the replay"
        )
    return tuple(nodes), pods, notes


__all__ = ["PRODUCT_ATTRIBUTE", "gpu_class_of", "translate"]
