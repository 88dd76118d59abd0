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

Order in ``plan.sh``: evictions first, then a ``kubectl wait --for=delete`` per victim (a binding
to a node whose victims still run would be refused by the kubelet's admission), then the bindings
(or nominations). Every pod gets a Binding, or with ``nominate`` a status patch, whether or not
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
    return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": ns}}


def nomination_patch(node: str) -> dict:
    """The merge patch of the pod's status subresource that nominates ``node``."""
    return {"status": {"nominatedNodeName": node}}


@dataclass
class Plan:
    """What a plan does, in order: evictions, then bindings or nominations."""

    evictions: list[str] = field(default_factory=list)
    bindings: list[tuple[str, str]] = field(default_factory=list)
    nominations: list[tuple[str, str]] = field(default_factory=list)

    def objects(self) -> list[dict]:
        """The ``plan.yaml`` documents: one Binding per pod placed (none with ``nominate``)."""
        return [binding(k, n) for k, n in self.bindings]


def make_plan(result: Result, *, nominate: bool = False) -> Plan:
    placed = sorted((k, o.node) for k, o in result.pods.items() if o.node is not None)
    plan = Plan(evictions=sorted(result.victims))
    if nominate:
        plan.nominations = placed
    else:
        plan.bindings = placed
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
        lines.append(f"# 1. evict {len(plan.evictions)} victim(s) (policy/v1 Eviction; the API server enforces PodDisruptionBudgets)")
        for key in plan.evictions:
            ns, name = _split(key)
            body = json.dumps(eviction(key), separators=(",", ":"))
            lines.append(f"kubectl create --raw {q(f'/api/v1/namespaces/{ns}/pods/{name}/eviction')} -f - <<'EOF'")
            lines.append(body)
            lines.append("EOF")
        lines.append("# wait until they are gone, so their nodes have room")
        for key in plan.evictions:
            ns, name = _split(key)
            lines.append(f"kubectl wait --for=delete pod/{q(name)} -n {q(ns)} --timeout={WAIT_TIMEOUT}")
        lines.append("")
    step = 2 if plan.evictions else 1
    if plan.bindings:
        lines.append(f"# {step}. bind {len(plan.bindings)} pending pod(s) (core/v1 Binding)")
        lines.append(f"kubectl create -f {q(yaml_name)}")
    if plan.nominations:
        lines.append(f"# {step}. nominate {len(plan.nominations)} pod(s): status.nominatedNodeName; kube-scheduler binds them")
        for key, node in plan.nominations:
            ns, name = _split(key)
            patch = json.dumps(nomination_patch(node), separators=(",", ":"))
            lines.append(f"kubectl patch pod {q(name)} -n {q(ns)} --subresource=status --type=merge -p {q(patch)}")
    if not (plan.evictions or plan.bindings or plan.nominations):
        lines.append("# nothing to do: the plan places no pod and evicts none")
        lines.append("true")
    return "\n".join(lines) + "\n"


def script_path(path: str | Path) -> Path:
    """``plan.sh`` beside ``plan.yaml`` (same stem)."""
    p = Path(path)
    return p.with_name(p.stem + ".sh") if p.suffix else p.with_name(p.name + ".sh")


def write_plan(result: Result, path: str | Path, *, nominate: bool = False) -> Plan:
    """Write ``path`` (the Bindings, multi-document YAML) and the script beside it; returns the plan."""
    plan = make_plan(result, nominate=nominate)
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(plan_yaml(result, plan))
    sh = script_path(p)
    sh.write_text(plan_script(result, plan, p.name))
    sh.chmod(0o755)
    return plan
