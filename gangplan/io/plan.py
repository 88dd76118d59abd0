"""Write an optimal placement as Kubernetes objects a user can apply or study.

One Pod patch per placed pod: ``spec.nodeName`` (a binding as ``kubectl`` would need it for a pod not
yet bound) or, with ``nominate``, ``status.nominatedNodeName`` (what kube-scheduler itself sets while
victims leave). Victims are listed as ``policy/v1`` ``Eviction`` objects, the API the scheduler's
preemption and ``kubectl drain`` use.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from gangplan.models.result import Result


def plan_objects(result: Result, *, nominate: bool = False) -> list[dict]:
    objs: list[dict] = []
    for key, o in sorted(result.pods.items()):
        if o.node is None:
            continue
        ns, name = key.split("/", 1)
        obj: dict = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}}
        if nominate or o.nominated:
            obj["status"] = {"nominatedNodeName": o.node}
        else:
            obj["spec"] = {"nodeName": o.node}
        objs.append(obj)
    for key in result.victims:
        ns, name = key.split("/", 1)
        objs.append({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": ns}})
    return objs


def write_plan(result: Result, path: str | Path, *, nominate: bool = False) -> int:
    """Write the plan as multi-document YAML; returns the number of objects."""
    objs = plan_objects(result, nominate=nominate)
    header = (
        f"# gangplan plan from the {result.engine} engine ({result.status.value}) for {result.snapshot or 'snapshot'}\n"
        f"# {sum(1 for o in objs if o['kind'] == 'Pod')} pod placements, {len(result.victims)} evictions\n"
    )
    body = yaml.safe_dump_all(objs, sort_keys=False, default_flow_style=False) if objs else ""
    Path(path).write_text(header + body)
    return len(objs)
