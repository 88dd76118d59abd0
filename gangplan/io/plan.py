"""Write a placement as a plan a cluster accepts: ``plan.yaml`` (Bindings) and ``plan.sh``.

What the API server takes, per the upstream types (kubernetes/kubernetes
``staging/src/k8s.io/api``):

* **core/v1 Binding** (``core/v1/types.go``, ``type Binding``): ``metadata`` names the pod
  (name, namespace) and ``target`` (an ``ObjectReference``, the one required field) the node:
  ``{apiVersion: v1, kind: Node, name: <node>}``. ``kubectl create -f plan.yaml`` posts each one to
  ``/api/v1/namespaces/<ns>/bindings``, which is how a pod that is still pending gets a node
  (``spec.nodeName`` of an existing pod cannot be updated).
* **policy/v1 Eviction** (``policy/v1/types.go``, ``type Eviction``): the ``pods/eviction``
  subresource, not a kind ``kubectl create -f`` can map. ``plan.sh`` posts one per victim with
  ``kubectl create --raw /api/v1/namespaces/<ns>/pods/<name>/eviction -f -``; ``metadata``
  names the pod being evicted. The API server honours PodDisruptionBudgets and may refuse (429).
* **PodStatus.nominatedNodeName** (``core/v1/types.go``): lives in the ``status`` subresource,
  so ``--nominate`` writes ``kubectl patch pod <name> -n <ns> --subresource=status`` lines
  instead of Bindings and leaves the binding to kube-scheduler.

* **resource.k8s.io/v1 ResourceClaim** (``resource/v1/types.go``): with DRA, every claim the plan
  allocates (``Result`` ``pods[].claims``) is written to ``<stem>.claims.yaml`` beside
  ``plan.yaml`` with ``status.allocation`` as kube-scheduler's DynamicResources PreBind writes it
  (``pkg/scheduler/framework/plugins/dynamicresources``; the allocator's result building in
  ``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/allocator_stable.go``):
  ``devices.results[]`` {request, driver, pool, device, the request's ``tolerations`` when it
  has any, and the device's ``bindingConditions`` / ``bindingFailureConditions`` when it has
  them (KEP-5007; kube-scheduler's PreBind then waits until the driver reports them in the
  claim's ``status.devices``: ``plan.sh`` does not wait, its Bindings follow at once)} in request order and
  ``nodeSelector`` as the allocator's ``createNodeSelector`` builds it: one ``matchFields`` term
  ``metadata.name In [<node>]`` when some device is node-local, else one term with the
  requirements of the multi-node devices' slice (or device) node selectors, and none at all for
  ``allNodes`` devices only (:func:`gangplan.dra.rules.allocation_site`); and ``status.reservedFor`` [{resource: pods, name, uid}] with
  its pods, or for a PodGroup's claim (KEP-5729, ``PodGroup.spec.resourceClaims``) the PodGroup:
  [{apiGroup: scheduling.k8s.io, resource: podgroups, name, uid}] (the consumer reference
  kubernetes/kubernetes master's DynamicResources tests give a claim "held by a PodGroup",
  ``pkg/scheduler/framework/plugins/dynamicresources`` ``TestRemovePod``). A claim the snapshot does not hold (the claim the resourceclaim controller would make
  from a template, or the ``<pod>-extended-resources`` claim kube-scheduler makes for KEP-5004
  extended resources) is created first when the cluster lacks it; ``status`` is then patched
  through the status subresource. Extended-resource requests are named as upstream's
  ``createDeviceRequests`` does (``container-<i>-request-<j>``) for a pod with one container.
  Loading the snapshot with ``<stem>.claims.yaml`` and the bound pods gives a snapshot where those
  devices are in use.

Order in ``plan.sh``: evictions first, then a ``kubectl wait --for=delete`` per victim (a binding
to a node whose victims still run would be refused by the kubelet's admission), then the claims'
allocations (as PreBind, before binding), then the bindings (or nominations; with ``nominate``
kube-scheduler allocates, so no claim is written). Every pod gets a Binding, or with ``nominate`` a status patch, whether or not
the engine marked it ``nominated``: nominations appear only with ``nominate``.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from gangplan.io.writer import dump_snapshot
from gangplan.models.result import Result

WAIT_TIMEOUT = "300s"


def _split(key: str) -> tuple[str, str]:
    ns, name = key.split("/", 1)
    return ns, name


def binding(key: str, node: str) -> dict:
    """The core/v1 Binding that puts pending pod ``key`` (``ns/name``) on ``node``."""
    ns, name = _split(key)
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, "namespace": ns},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }


def eviction(key: str) -> dict:
    """The policy/v1 Eviction body for victim ``key`` (``ns/name``)."""
    ns, name = _split(key)
    return {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": ns},
    }


def nomination_patch(node: str) -> dict:
    """The merge patch of the pod's status subresource that nominates ``node``."""
    return {"status": {"nominatedNodeName": node}}


@dataclass
class Plan:
    """What a plan does, in order: evictions, then bindings or nominations."""

    evictions: list[str] = field(default_factory=list)
    bindings: list[tuple[str, str]] = field(default_factory=list)
    nominations: list[tuple[str, str]] = field(default_factory=list)
    claims: list[dict] = field(default_factory=list)
    """The ResourceClaims the plan allocates, with ``status`` (``<stem>.claims.yaml``)."""

    def objects(self) -> list[dict]:
        """The ``plan.yaml`` documents: one Binding per pod placed (none with ``nominate``)."""
        return [binding(k, n) for k, n in self.bindings]


EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"


def node_selector(node: str) -> dict:
    """``status.allocation.nodeSelector`` of a claim whose devices are local to ``node``."""
    return {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
        ]
    }


def site_selector(site) -> dict | None:
    """``status.allocation.nodeSelector`` of an allocation usable at ``site``
    (:data:`gangplan.dra.rules.Site`): a node's name, or the one term ANDing the selectors of its
    multi-node devices; None (no node selector: usable everywhere) for ``allNodes`` devices only."""
    if isinstance(site, str):
        return node_selector(site)
    if not site.terms:
        return None

    def reqs(rs) -> list[dict]:
        return [
            {
                "key": r.key,
                "operator": r.operator,
                **({"values": list(r.values)} if r.values else {}),
            }
            for r in rs
        ]

    terms = []
    for t in site.terms:
        term: dict = {}
        if t.match_expressions:
            term["matchExpressions"] = reqs(t.match_expressions)
        if t.match_fields:
            term["matchFields"] = reqs(t.match_fields)
        terms.append(term)
    return {"nodeSelectorTerms": terms}


def tolerations(tols) -> list[dict]:
    """``DeviceToleration`` objects (KEP-5055), empty fields left out as the API's JSON does."""
    return [
        {
            k: v
            for k, v in (
                ("key", t.key),
                ("operator", t.operator),
                ("value", t.value),
                ("effect", t.effect),
            )
            if v
        }
        for t in tols
    ]


def _spec(requests, names: dict[str, str] | None = None) -> dict:
    def exact(r) -> dict:
        exactly: dict = (
            {"deviceClassName": r.device_class, "allocationMode": "All"}
            if getattr(r, "all", False)
            else {
                "deviceClassName": r.device_class,
                "allocationMode": "ExactCount",
                "count": r.count,
            }
        )
        if r.selectors:
            exactly["selectors"] = [{"cel": {"expression": e}} for e in r.selectors]
        if getattr(r, "tolerations", ()):
            exactly["tolerations"] = tolerations(r.tolerations)
        if getattr(r, "admin_access", False):
            exactly["adminAccess"] = True
        return exactly

    out = []
    for r in requests:
        if getattr(r, "alternatives", ()):  # firstAvailable: the subrequests in priority order
            out.append(
                {
                    "name": (names or {}).get(r.name, r.name),
                    "firstAvailable": [{"name": a.name, **exact(a)} for a in r.alternatives],
                }
            )
            continue
        out.append({"name": (names or {}).get(r.name, r.name), "exactly": exact(r)})
    return {"devices": {"requests": out}}


def claim_objects(result: Result, cluster=None) -> list[dict]:
    """The ResourceClaims ``result`` allocates, with ``status.allocation`` and ``status.reservedFor``
    (sorted by namespace and name). ``cluster``: the snapshot, for the claims' specs, the pods'
    uids and which claims it already holds; without it the objects carry ``status`` only."""
    dra = getattr(cluster, "dra", None)
    pods = cluster.pod_by_key if cluster is not None else {}
    group_claims = _group_claims(cluster)
    device_by_id = {d.id: d for devs in dra.devices_by_node.values() for d in devs} if dra else {}
    claims: dict[tuple[str, str], dict] = {}
    for key, o in sorted(result.pods.items()):
        if o.node is None or not o.claims:
            continue
        ns, pod_name = _split(key)
        pod = pods.get(key)
        uid = getattr(pod, "uid", "") or ""
        for c in o.claims:
            got = claims.get((ns, c.claim))
            if got is None:
                got = claims[(ns, c.claim)] = {
                    "node": o.node,
                    "pods": [],
                    "results": [],
                    "first": (pod_name, pod),
                }
            if (pod_name, uid) not in got["pods"]:
                got["pods"].append((pod_name, uid))
            if len(got["pods"]) == 1:
                got["results"].append(
                    {"request": c.request, "driver": c.driver, "pool": c.pool, "device": c.device}
                )
    out = []
    for (ns, name), got in sorted(claims.items()):
        pod_name, pod = got["first"]
        meta: dict = {"name": name, "namespace": ns}
        obj: dict = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta}
        results = got["results"]
        owner = {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": pod_name,
            **({"uid": pod.uid} if getattr(pod, "uid", "") else {}),
            "controller": True,
            "blockOwnerDeletion": True,
        }
        full = f"{ns}/{name}"
        if dra:
            for r in (
                results
            ):  # KEP-5007: the allocator copies the device's binding conditions into its result
                d = device_by_id.get((r["driver"], r["pool"], r["device"]))
                if d is not None and d.binding_conditions:
                    r["bindingConditions"] = list(d.binding_conditions)
                    r["bindingFailureConditions"] = list(d.binding_failure_conditions)
        if name == f"{pod_name}-extended-resources" and dra and full not in dra.claims:
            # KEP-5004: kube-scheduler's claim (generateName <pod>-extended-resources-), requests
            # container-<i>-request-<j> (one container: j = the resource's index in its sorted requests).
            meta["annotations"] = {EXTENDED_CLAIM_ANNOTATION: "true"}
            meta["ownerReferences"] = [owner]
            keys = sorted(pod.requests) if pod is not None else []
            names = {
                r[
                    "request"
                ]: f"container-0-request-{keys.index(r['request']) if r['request'] in keys else 0}"
                for r in results
            }
            reqs = []
            for r in results:
                r["request"] = names[r["request"]]
            for res, rname in names.items():
                count = sum(1 for r in results if r["request"] == rname)
                reqs.append(
                    {
                        "name": rname,
                        "exactly": {
                            "deviceClassName": dra.extended.get(res, ""),
                            "allocationMode": "ExactCount",
                            "count": count,
                        },
                    }
                )
            obj["spec"] = {"devices": {"requests": sorted(reqs, key=lambda r: r["name"])}}
        elif dra and full in dra.claims:
            claim = dra.claims[full]
            obj["spec"] = _spec(claim.requests)
            for r in (
                results
            ):  # the allocator copies the request's tolerations into each result (KEP-5055)
                req = claim.request_named(r["request"])
                if req is not None and req.tolerations:
                    r["tolerations"] = tolerations(req.tolerations)
                if (
                    req is not None and req.admin_access
                ):  # (allocateDevice sets result.adminAccess, KEP-5018)
                    r["adminAccess"] = True
            if (
                name.startswith(f"{pod_name}-") and len(got["pods"]) == 1 and pod is not None
            ):  # the claim the resourceclaim controller makes from the pod's template
                meta["annotations"] = {POD_CLAIM_NAME_ANNOTATION: name[len(pod_name) + 1 :]}
                meta["ownerReferences"] = [owner]
        group = group_claims.get(full)
        if (
            group is not None
        ):  # KEP-5729: a PodGroup's claim is reserved for the PodGroup, not its pods
            reserved = [
                {
                    "apiGroup": "scheduling.k8s.io",
                    "resource": "podgroups",
                    "name": group.name,
                    **({"uid": group.uid} if group.uid else {}),
                }
            ]
        else:
            reserved = [
                {"resource": "pods", "name": p, **({"uid": u} if u else {})} for p, u in got["pods"]
            ]
        allocation: dict = {"devices": {"results": results}}
        selector = node_selector(got["node"])
        if (
            dra
            and dra.multi_node
            and any((r["driver"], r["pool"], r["device"]) in dra.multi_node for r in results)
        ):
            from gangplan.dra.allocator import DeviceResult
            from gangplan.dra.rules import allocation_site

            node = next((n for n in cluster.nodes if n.name == got["node"]), None)
            if node is not None:
                selector = site_selector(
                    allocation_site(
                        dra,
                        [
                            DeviceResult(r["request"], (r["driver"], r["pool"], r["device"]))
                            for r in results
                        ],
                        node,
                    )
                )
        if selector is not None:
            allocation["nodeSelector"] = selector
        obj["status"] = {"allocation": allocation, "reservedFor": reserved}
        out.append(obj)
    return out


def _group_claims(cluster) -> dict:
    """Claim key -> the PodGroup whose ``spec.resourceClaims`` it is (KEP-5729): the claim
    named directly, or the one made from the group's template (:func:`gangplan.io.dra_build.group_claim_key`)."""
    from gangplan.io.dra_build import group_claim_key

    out = {}
    for g in (getattr(cluster, "pod_groups", None) or {}).values():
        for rc in g.resource_claims:
            key = (
                group_claim_key(g.namespace, g.name, rc)
                if rc.resource_claim_template_name
                else f"{g.namespace}/{rc.resource_claim_name}"
            )
            out[key] = g
    return out


def make_plan(result: Result, *, nominate: bool = False, cluster=None) -> Plan:
    placed = sorted((k, o.node) for k, o in result.pods.items() if o.node is not None)
    plan = Plan(evictions=sorted(result.victims))
    if nominate:
        plan.nominations = placed
    else:
        plan.bindings = placed
        plan.claims = claim_objects(result, cluster)
    return plan


def plan_objects(result: Result, *, nominate: bool = False) -> list[dict]:
    """The Binding objects of ``plan.yaml`` (empty with ``nominate``)."""
    return make_plan(result, nominate=nominate).objects()


def plan_yaml(result: Result, plan: Plan) -> str:
    header = (
        f"gangplan plan from the {result.engine} engine ({result.status.value}) for {result.snapshot or 'snapshot'}\n"
        f"{len(plan.bindings)} core/v1 Binding(s); run the plan.sh beside this file: it evicts "
        f"{len(plan.evictions)} victim(s) first, then creates these Bindings"
        + (f", and nominates {len(plan.nominations)} pod(s)" if plan.nominations else "")
    )
    return dump_snapshot(plan.objects(), header)


def plan_script(result: Result, plan: Plan, yaml_name: str) -> str:
    """``plan.sh``: evictions, waits, then ``kubectl create -f`` of the Bindings or the status patches."""
    q = shlex.quote
    lines = [
        "#!/usr/bin/env bash",
        f"# gangplan plan from the {result.engine} engine ({result.status.value}) for {result.snapshot or 'snapshot'}",
        "# Run against the cluster the snapshot was taken from (kubectl's current context).",
        "set -euo pipefail",
        'cd "$(dirname "$0")"',
        "",
    ]
    if plan.evictions:
        lines.append(
            f"# 1. evict {len(plan.evictions)} victim(s) (policy/v1 Eviction; the API server enforces PodDisruptionBudgets)"
        )
        for key in plan.evictions:
            ns, name = _split(key)
            body = json.dumps(eviction(key), separators=(",", ":"))
            lines.append(
                f"kubectl create --raw {q(f'/api/v1/namespaces/{ns}/pods/{name}/eviction')} -f - <<'EOF'"
            )
            lines.append(body)
            lines.append("EOF")
        lines.append("# wait until they are gone, so their nodes have room")
        for key in plan.evictions:
            ns, name = _split(key)
            lines.append(
                f"kubectl wait --for=delete pod/{q(name)} -n {q(ns)} --timeout={WAIT_TIMEOUT}"
            )
        lines.append("")
    step = 2 if plan.evictions else 1
    if plan.claims:
        lines.append(
            f"# {step}. allocate {len(plan.claims)} ResourceClaim(s) as kube-scheduler's DynamicResources PreBind does "
            f"(created first when the cluster lacks them; status subresource; {claims_name(yaml_name)} lists them)"
        )
        for obj in plan.claims:
            meta = obj["metadata"]
            name, ns = q(meta["name"]), q(meta["namespace"])
            if "spec" in obj:
                body = json.dumps(
                    {k: v for k, v in obj.items() if k != "status"}, separators=(",", ":")
                )
                lines.append(
                    f"kubectl get resourceclaim {name} -n {ns} >/dev/null 2>&1 || kubectl create -f - <<'EOF'"
                )
                lines.append(body)
                lines.append("EOF")
            patch = json.dumps({"status": obj["status"]}, separators=(",", ":"))
            lines.append(
                f"kubectl patch resourceclaim {name} -n {ns} --subresource=status --type=merge -p {q(patch)}"
            )
        step += 1
    if plan.bindings:
        lines.append(f"# {step}. bind {len(plan.bindings)} pending pod(s) (core/v1 Binding)")
        lines.append(f"kubectl create -f {q(yaml_name)}")
    if plan.nominations:
        lines.append(
            f"# {step}. nominate {len(plan.nominations)} pod(s): status.nominatedNodeName; kube-scheduler binds them"
        )
        for key, node in plan.nominations:
            ns, name = _split(key)
            patch = json.dumps(nomination_patch(node), separators=(",", ":"))
            lines.append(
                f"kubectl patch pod {q(name)} -n {q(ns)} --subresource=status --type=merge -p {q(patch)}"
            )
    if not (plan.evictions or plan.bindings or plan.nominations):
        lines.append("# nothing to do: the plan places no pod and evicts none")
        lines.append("true")
    return "\n".join(lines) + "\n"


def script_path(path: str | Path) -> Path:
    """``plan.sh`` beside ``plan.yaml`` (same stem)."""
    p = Path(path)
    return p.with_name(p.stem + ".sh") if p.suffix else p.with_name(p.name + ".sh")


def claims_path(path: str | Path) -> Path:
    """``<stem>.claims.yaml`` beside ``plan.yaml``: the ResourceClaims the plan allocates."""
    p = Path(path)
    return p.with_name((p.stem if p.suffix else p.name) + ".claims.yaml")


def claims_name(yaml_name: str) -> str:
    return claims_path(yaml_name).name


def write_plan(result: Result, path: str | Path, *, nominate: bool = False, cluster=None) -> Plan:
    """Write ``path`` (the Bindings, multi-document YAML) and the script beside it, and with DRA
    claims ``<stem>.claims.yaml`` (``cluster``: the snapshot, for the claims' specs); returns the plan."""
    plan = make_plan(result, nominate=nominate, cluster=cluster)
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(plan_yaml(result, plan))
    if plan.claims:
        header = (
            f"gangplan plan from the {result.engine} engine for {result.snapshot or 'snapshot'}: {len(plan.claims)} "
            f"resource.k8s.io/v1 ResourceClaim(s) with status.allocation as kube-scheduler writes it; {script_path(p).name} applies them"
        )
        claims_path(p).write_text(dump_snapshot(plan.claims, header))
    sh = script_path(p)
    sh.write_text(plan_script(result, plan, p.name))
    sh.chmod(0o755)
    return plan
