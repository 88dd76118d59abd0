"""What, concretely, blocked a pod on the nodes a Filter plugin rejected: the taint key, the
selector entry, the affinity expression. Upstream's FitError names the plugin's reason only
(since v1.35 TaintToleration says "node(s) had untolerated taint(s)" without the taint, see
``gangplan/solver/greedy/plugins/tainttoleration.py``); gangplan adds these details beside it,
computed with the same predicates the plugins and the validator use (:mod:`gangplan.predicates`),
so they cannot disagree with the rejection.
"""

from __future__ import annotations

from collections import Counter

from gangplan.models.cluster import Cluster
from gangplan.models.objects import Pod
from gangplan.predicates import first_untolerated_taint
from gangplan.predicates.labels import node_selector_term_matches, requirement_matches

TAINT_REASON = "node(s) had untolerated taint(s)"
SELECTOR_REASON = "node(s) didn't match Pod's node affinity/selector"


def _most(counter: Counter, total: int) -> str:
    """The most frequent cause; "on N" only when it is not every node."""
    (what, n), *rest = counter.most_common()
    more = f" (+{len(rest)} other)" if rest else ""
    return what + (f" on {n} of {total}" if n != total else "") + more


def untolerated_taints(cluster: Cluster, pod: Pod) -> Counter:
    """``key=value:effect`` of the first untolerated NoSchedule/NoExecute taint, per node."""
    out: Counter = Counter()
    for node in cluster.nodes:
        taint = first_untolerated_taint(node.taints, pod.tolerations)
        if taint is not None:
            out[f"{taint.key}{'=' + taint.value if taint.value else ''}:{taint.effect}"] += 1
    return out


def unmatched_selectors(cluster: Cluster, pod: Pod) -> Counter:
    """Per node that fails NodeAffinity, the first ``nodeSelector`` entry or required-affinity
    expression it does not satisfy (``pool=gpu``, ``nvidia.com/gpu.product In [H100]``)."""
    out: Counter = Counter()
    terms = pod.affinity.node_required
    for node in cluster.nodes:
        miss = next(
            (f"{k}={v}" for k, v in pod.node_selector.items() if node.labels.get(k) != v), None
        )
        if (
            miss is None
            and terms is not None
            and not any(node_selector_term_matches(t, node) for t in terms)
        ):
            term = terms[0]
            req = next(
                (r for r in term.match_expressions if not requirement_matches(r, node.labels)), None
            )
            miss = (
                f"{req.key} {req.operator} [{', '.join(req.values)}]"
                if req is not None
                else "node affinity term 1"
            )
        if miss is not None:
            out[miss] += 1
    return out


def details(cluster: Cluster, pod: Pod) -> dict[str, str]:
    """Upstream reason -> what blocked the pod behind it (the most frequent cause, on how many
    nodes), for the reasons that name no object."""
    out = {}
    taints = untolerated_taints(cluster, pod)
    if taints:
        out[TAINT_REASON] = "taint " + _most(taints, len(cluster.nodes))
    selectors = unmatched_selectors(cluster, pod)
    if selectors:
        out[SELECTOR_REASON] = "needs " + _most(selectors, len(cluster.nodes))
    return out


__all__ = [
    "SELECTOR_REASON",
    "TAINT_REASON",
    "details",
    "unmatched_selectors",
    "untolerated_taints",
]
