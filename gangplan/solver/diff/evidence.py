"""The evidence a diff shows: how each engine uses a group, the admission counts, victims per
engine, single pods, and why greedy's choice at the decisive step differs (the text, and the
preemption criterion that decided a victim choice, upstream's ``pickOneNodeForPreemption``)."""

from __future__ import annotations

from collections import Counter

from gangplan.models.cluster import Cluster
from gangplan.models.documents import (
    Admission,
    EngineSide,
    GroupUse,
    PreemptionEvidence,
    PreemptionUnit,
    SinglePodDiff,
    VictimRow,
)
from gangplan.models.groups import parse_timestamp
from gangplan.models.objective import pdb_violations, snapshot_victims
from gangplan.models.preemption import PICK_CRITERIA, PickKey, deciding_index, pick_key
from gangplan.models.quantity import format_quantity
from gangplan.models.result import Result
from gangplan.models.trace import NodeVictims, PodPreemption
from gangplan.solver.diff.classification import differing_groups


def _group_desc(g) -> str:
    if g is None:
        return "no pending pod"
    word = "admitted" if g.admitted else "not admitted"
    return f"{word}, {g.placed} pod(s) on nodes" + (f" in {g.domain}" if g.domain else "")


SHOWN = 4
"""Names a sentence lists before "and N more"."""
DIFFERING = "groups[] / singlePods[] with differs: true"
ONLY_OPTIMAL = "admission.onlyOptimal"
NOMINATED = "decisiveStep.preemption.nodes"
"""Where the JSON document lists every group and single pod whose outcome differs."""


def name_list(keys: list[str], n: int = SHOWN, *, full: str | None = None) -> str:
    """``keys`` for a sentence: the first ``n`` and "and N more".

    Only the words are cut: every list cut in this module is whole in the JSON document
    (``diff --json``): the differing groups and single pods in ``groups`` / ``singlePods``
    (``differs: true``, :data:`DIFFERING`) for :func:`why_text`, the groups only the optimum admits
    in ``admission.onlyOptimal`` (``decisive._admission_only`` too), greedy's nominated nodes in
    ``decisiveStep.preemption.nodes`` for :func:`preemption_evidence`. With ``full`` (that field)
    the words say where the whole list is: "and 12 more; all 16 in diff --json, <full>"; every call
    site passes it."""
    if not keys:
        return "none"
    if len(keys) <= n:
        return ", ".join(keys)
    where = (
        "" if full is None else f"; all {len(keys)} in diff --json" + (f", {full}" if full else "")
    )
    return ", ".join(keys[:n]) + f" and {len(keys) - n} more{where}"


def group_use(cluster: Cluster, result: Result, group: str) -> GroupUse:
    """What ``group``'s pods placed by ``result`` take: pods, nodes, domain, summed requests."""
    members = [
        p for p in cluster.groups.members(group) if p.key in result.pods and result.pods[p.key].node
    ]
    total: Counter[str] = Counter()
    for p in members:
        total.update(p.requests)
    g = result.groups.get(group)
    return GroupUse(
        group=group,
        pods=len(members),
        nodes=sorted({result.pods[p.key].node for p in members}),  # type: ignore[misc]
        domain=g.domain if g else None,
        requests={
            r: format_quantity(r, q)
            for r, q in sorted(
                total.items(), key=lambda kv: (kv[0] not in ("cpu", "memory"), kv[0])
            )
            if q and r != "pods"
        },
    )


def admission(cluster: Cluster, greedy: Result, optimal: Result) -> Admission:
    ga, oa = greedy.admitted_groups(), optimal.admitted_groups()
    only_g = [k for k in ga if k not in set(oa)]
    only_o = [k for k in oa if k not in set(ga)]
    first = None
    if only_g:
        order = [
            cluster.pod_by_key[k].group_key
            for k in greedy.greedy_trace.order
            if k in cluster.pod_by_key
        ]
        ranked = sorted(only_g, key=lambda k: order.index(k) if k in order else len(order))
        first = group_use(cluster, greedy, ranked[0])
    return Admission(
        greedy=ga, optimal=oa, only_greedy=only_g, only_optimal=only_o, first_given_up=first
    )


def _victim_units(cluster: Cluster, result: Result) -> list[VictimRow]:
    """The victims as the units they were evicted in (``cluster.groups.victim_units``), highest
    priority first."""
    pods = [cluster.pod_by_key[k] for k in result.victims if k in cluster.pod_by_key]
    units = [VictimRow.of(u) for u in cluster.groups.victim_units(pods)]
    return sorted(units, key=lambda u: (-u.priority, u.unit))


def engine_side(cluster: Cluster, result: Result) -> EngineSide:
    placed = result.placements()
    gone = snapshot_victims(cluster, result.victims)  # the disruption tiers' (bound pods)
    units = _victim_units(cluster, result)
    by_prio: Counter[int] = Counter()
    for u in units:
        by_prio[u.priority] += len(u.pods)
    return EngineSide(
        status=result.status.value,
        admitted_groups=len(result.admitted_groups()),
        placed_pods=len(placed),
        single_pods_placed=sum(1 for k in placed if cluster.pod_by_key[k].group_key is None),
        victims=units,
        victims_by_priority={str(p): n for p, n in sorted(by_prio.items(), reverse=True)},
        pdb_violations=pdb_violations(cluster, gone),
        broken_groups=cluster.groups.broken_groups(gone),
    )


def single_pods(cluster: Cluster, greedy: Result, optimal: Result) -> list[SinglePodDiff]:
    out = []
    for key in sorted(set(greedy.pods) | set(optimal.pods)):
        p = cluster.pod_by_key.get(key)
        if p is None or p.group_key is not None:
            continue
        g, o = greedy.pods.get(key), optimal.pods.get(key)
        gn, on = (g.node if g else None), (o.node if o else None)
        out.append(
            SinglePodDiff(
                pod=key,
                greedy_node=gn,
                optimal_node=on,
                greedy_reason=None if gn else (g.reason if g else None),
                optimal_reason=None if on else (o.reason if o else None),
                priority=p.priority,
                differs=gn != on,
            )
        )
    return out


def next_failure(greedy: Result, pod: str) -> tuple[str | None, str | None]:
    trace = greedy.greedy_trace
    order = trace.order
    start = order.index(pod) + 1 if pod in order else 0
    for key in order[start:]:
        t = trace.pods.get(key)
        if t is None or not t.chosen:
            return key, (t.fit_error if t is not None else None) or (
                greedy.pods[key].reason if key in greedy.pods else None
            )
    return None, None


def why_text(
    cluster: Cluster,
    greedy: Result,
    opt: Result,
    pod: str,
    node: str,
    opt_node: str | None,
    group: str | None,
    differs: bool,
) -> str:
    entity = group or pod
    others = [k for k in differing_groups(cluster, greedy, opt) if k != entity]
    if opt_node is None and group and group in opt.groups and opt.groups[group].admitted:
        return (
            f"the optimum admits {group} too but leaves {pod} unplaced (a pod past minCount): the room it takes on {node} "
            f"goes to {name_list(others, full=DIFFERING)}"
        )
    if opt_node is None:
        use = group_use(cluster, greedy, group) if group else None
        held = f" (in greedy it holds {_use_text(use)})" if use and use.pods else ""
        gained = [
            k
            for k in others
            if admitted_in(cluster, opt, k) and not admitted_in(cluster, greedy, k)
        ]
        return (
            f"no optimal placement keeps {pod} on {node} after greedy's earlier choices; the optimum that agrees with "
            f"them leaves {entity} out{held} and admits {name_list(gained, full=ONLY_OPTIMAL)} instead"
        )
    if opt_node == node:
        return (
            f"the probe with {pod} fixed on {node} did not reach the optimum within --probe-time-limit, so the step is "
            "undecided beyond this point"
        )
    if differs:
        return f"{entity} ends differently: greedy {_desc(cluster, greedy, entity)}, the optimum {_desc(cluster, opt, entity)}"
    if not others and set(greedy.victims) != set(opt.victims):
        return (
            f"{entity} ends the same in both ({_desc(cluster, greedy, entity)}); {pod} on {node} instead of {opt_node} is what "
            f"costs disruption: greedy evicts {len(greedy.victims)} pod(s) in all, the optimum {len(opt.victims)}"
        )
    return (
        f"{entity} ends the same in both ({_desc(cluster, greedy, entity)}); {pod} on {node} instead of {opt_node} is what "
        f"costs: it leaves no room for {name_list(others, full=DIFFERING)}, whose outcome differs"
    )


def admitted_in(cluster: Cluster, r: Result, key: str) -> bool:
    if key in r.groups:
        return r.groups[key].admitted
    o = r.pods.get(key)
    return bool(o and o.node)


def _desc(cluster: Cluster, r: Result, key: str) -> str:
    if key in cluster.groups:
        return _group_desc(r.groups.get(key))
    o = r.pods.get(key)
    return f"on {o.node}" if o and o.node else "not placed"


def _use_text(use: GroupUse) -> str:
    res = ", ".join(f"{q} {r}" for r, q in use.requests.items())
    where = f" in {use.domain}" if use.domain else ""
    return f"{use.pods} pod(s) on {len(use.nodes)} node(s){where}" + (f": {res}" if res else "")


def preemption_evidence(
    cluster: Cluster, greedy: Result, opt: Result, pod: str
) -> PreemptionEvidence | None:
    """Greedy's victim choice for ``pod``'s entity against the optimum's, when greedy preempted
    for it and the optimum evicts other pods (None otherwise)."""
    p = cluster.pod_by_key.get(pod)
    if p is None:
        return None
    tree = cluster.groups
    entity = tree.entity_of(p)
    t = (greedy.greedy_trace.preemption or {}).get(str(entity))
    if t is None or t.status != "Success" or not t.victims:
        return None
    greedy_victims = set(t.victims)
    if greedy_victims <= set(opt.victims) and len(greedy_victims) == len(opt.victims):
        return None
    members = [q.key for q in tree.entity_pods(entity)]
    opt_nodes = sorted({opt.pods[k].node for k in members if k in opt.pods and opt.pods[k].node})
    on_opt_nodes = {q.key for q in cluster.bound_pods if q.node_name in opt_nodes}
    opt_victims = sorted(v for v in opt.victims if v in on_opt_nodes) or sorted(opt.victims)

    def units(keys) -> list[PreemptionUnit]:
        chosen = [cluster.pod_by_key[k] for k in sorted(set(keys)) if k in cluster.pod_by_key]
        return [PreemptionUnit.of(u) for u in tree.victim_units(chosen)]

    if isinstance(t, PodPreemption):
        chosen = t.chosen
        nodes = [chosen] if chosen else []
        criterion = _default_preemption_criterion(
            t, chosen, opt_nodes[0] if opt_nodes else None, cluster
        )
    else:
        nodes = sorted(set(t.nominated.values()))
        criterion = (
            "workload-aware preemption removed every lower-priority unit, placed the group on the emptied cluster "
            f"(on {name_list(nodes, full=NOMINATED)}), then put units back in MoreImportantVictim order"
            + (" (PDB-violating units first)" if t.violating else "")
            + f" ({len(t.reprieved)} reprieved); the {len(t.victims)} pod(s) that could not go back were evicted"
        )
    return PreemptionEvidence(
        entity=str(entity),
        path=t.kind,
        nodes=nodes,
        victims=units(t.victims),
        pdb_violations=t.pdb_violations,
        criterion=criterion,
        optimal_nodes=opt_nodes,
        optimal_victims=units(opt_victims),
    )


def _default_preemption_criterion(
    t: PodPreemption, chosen: str | None, other: str | None, cluster: Cluster
) -> str:
    """Which pickOneNodeForPreemption criterion made greedy's node win over the optimum's (the
    criteria and their order: :mod:`gangplan.models.preemption`, the implementation greedy ran)."""
    mine, theirs = t.nodes.get(chosen or ""), t.nodes.get(other) if other else None
    if not isinstance(mine, NodeVictims):
        return f"default preemption chose {chosen}"
    if not isinstance(theirs, NodeVictims):
        why = (
            theirs
            if isinstance(theirs, str)
            else "not evaluated (enough candidates were found before it)"
        )
        return f"default preemption chose {chosen}; the optimum's node {other}: {why}"

    def key(entry: NodeVictims) -> PickKey:
        pods = [cluster.pod_by_key[k] for k in entry.victims if k in cluster.pod_by_key]
        return pick_key(
            [
                (
                    cluster.groups.unit_priority(q),
                    parse_timestamp(q.start_time) if q.start_time else None,
                )
                for q in pods
            ],
            entry.pdb_violations,
        )

    a, b = key(mine), key(theirs)
    i = deciding_index(a, b)
    if i is None:
        return f"default preemption chose {chosen} over {other}: equal on {', '.join(PICK_CRITERIA)}, decided by node order"
    if i == len(PICK_CRITERIA) - 1:
        return (
            f"default preemption chose {chosen} over {other}: equal on {', '.join(PICK_CRITERIA[:-1])}, decided by "
            f"{PICK_CRITERIA[i]} ({a.describe(i)} vs {b.describe(i)})"
        )
    return f"default preemption chose {chosen} over {other} by {PICK_CRITERIA[i]} ({a.describe(i)} vs {b.describe(i)})"
