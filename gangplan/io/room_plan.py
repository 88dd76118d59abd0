"""Write a make-room plan as steps a person runs: ``<plan>.yaml`` (the policy/v1 Eviction bodies,
one per pod moved or evicted) and ``<plan>.sh`` beside it.

The script follows the plan's greedy check (:mod:`gangplan.solver.room.verify`), step by step,
with the upstream objects :mod:`gangplan.io.plan` documents:

1. ``kubectl cordon`` the nodes the targets are to take (``spec.unschedulable``), so the moved
   pods are not re-created there;
2. evict every pod moved or evicted through the Eviction API (``pods/eviction``, as ``kubectl
   drain`` does: PodDisruptionBudgets hold, a 429 is retried), then ``kubectl wait --for=delete``;
3. wait until the re-created pods run: ``kubectl wait --for=condition=Ready`` on the moved pods'
   labels (the template's: per-pod labels such as ``statefulset.kubernetes.io/pod-name`` or
   ``apps.kubernetes.io/pod-index`` are left out), per namespace;
4. ``kubectl uncordon`` the nodes, and wait until every target pod is scheduled
   (``condition=PodScheduled``): kube-scheduler places the targets itself.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from gangplan.io.plan import WAIT_TIMEOUT, eviction, script_path
from gangplan.io.writer import dump_snapshot
from gangplan.models.cluster import Cluster
from gangplan.models.room import RoomDocument, RoomPlan

PER_POD_LABELS = (
    "statefulset.kubernetes.io/pod-name",
    "apps.kubernetes.io/pod-index",
    "batch.kubernetes.io/job-completion-index",
    "controller-revision-hash",
    "pod-template-generation",
)
"""Labels a controller sets per pod (or per revision): not part of what identifies its pods."""


def _selector(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()) if k not in PER_POD_LABELS)


def room_script(doc: RoomDocument, plan: RoomPlan, cluster: Cluster, yaml_name: str) -> str:
    """``plan.sh`` for ``plan`` (see the module docstring)."""
    q = shlex.quote
    pods = cluster.pod_by_key
    lines = [
        "#!/usr/bin/env bash",
        f"# gangplan make-room plan for {doc.snapshot or 'snapshot'}: admits {', '.join(plan.targets_admitted)}",
        f"# {len(plan.moves)} pod(s) moved, {len(plan.evictions)} evicted; greedy check: "
        + ("verified" if plan.check and plan.check.verified else "NOT verified"),
        "# Run against the cluster the snapshot was taken from (kubectl's current context).",
        "set -euo pipefail",
        'cd "$(dirname "$0")"',
        "",
        f"# 1. cordon the {len(plan.cordon)} node(s) the targets are to take",
    ]
    lines += [f"kubectl cordon {q(n)}" for n in plan.cordon]
    keys = [m.pod for m in plan.moves] + list(plan.evictions)
    lines += [
        "",
        f"# 2. evict {len(keys)} pod(s) through the Eviction API (PodDisruptionBudgets hold); retry on 429",
        "evict() {",
        "  local ns=$1 name=$2 body=$3",
        "  for _ in $(seq 1 30); do",
        '    if kubectl create --raw "/api/v1/namespaces/$ns/pods/$name/eviction" -f - <<<"$body"; then return 0; fi',
        "    sleep 10",
        "  done",
        '  echo "eviction of $ns/$name refused for 5 minutes" >&2; return 1',
        "}",
    ]
    for key in keys:
        ns, name = key.split("/", 1)
        body = json.dumps(eviction(key), separators=(",", ":"))
        lines.append(f"evict {q(ns)} {q(name)} {q(body)}")
    for key in keys:
        ns, name = key.split("/", 1)
        lines.append(f"kubectl wait --for=delete pod/{q(name)} -n {q(ns)} --timeout={WAIT_TIMEOUT}")
    selectors = sorted(
        {
            (pods[m.pod].namespace, _selector(pods[m.pod].labels))
            for m in plan.moves
            if m.pod in pods and _selector(pods[m.pod].labels)
        }
    )
    lines += ["", "# 3. wait until the controllers' re-created pods run"]
    for ns, sel in selectors:
        lines.append(
            f"kubectl wait --for=condition=Ready pod -l {q(sel)} -n {q(ns)} --timeout={WAIT_TIMEOUT}"
        )
    if not selectors:
        lines.append("true  # no moved pod")
    lines += ["", "# 4. uncordon; kube-scheduler places the targets"]
    lines += [f"kubectl uncordon {q(n)}" for n in plan.cordon]
    targets = sorted(
        p.key
        for p in cluster.pending_pods
        if cluster.groups.entity_of(p).key in set(plan.targets_admitted)
    )
    for key in targets:
        ns, name = key.split("/", 1)
        lines.append(
            f"kubectl wait --for=condition=PodScheduled pod/{q(name)} -n {q(ns)} --timeout={WAIT_TIMEOUT}"
        )
    return "\n".join(lines) + "\n"


def write_room_plan(doc: RoomDocument, cluster: Cluster, path: str | Path) -> Path:
    """Write the optimal plan's Evictions to ``path`` and the script beside it; returns the
    script's path."""
    plan = doc.optimal
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    keys = [m.pod for m in plan.moves] + list(plan.evictions)
    header = (
        f"gangplan make-room plan for {doc.snapshot or 'snapshot'}: {len(keys)} policy/v1 Eviction(s) "
        f"({len(plan.moves)} moved, {len(plan.evictions)} stopped); {script_path(p).name} runs the steps"
    )
    p.write_text(dump_snapshot([eviction(k) for k in keys], header))
    sh = script_path(p)
    sh.write_text(room_script(doc, plan, cluster, p.name))
    sh.chmod(0o755)
    return sh
