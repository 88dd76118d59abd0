"""Kueue's admission against the optimum's (``diff``'s ``kueue`` part, issue 42): which
Workloads only one admits, which get other flavors or domains, and the decisive step in Kueue's
terms: the first admission, in Kueue's cycle order, that the optimum makes otherwise (another
flavor or domain, or none), with the Workloads the optimum admits that Kueue then refused and
Kueue's message for each."""

from __future__ import annotations

from gangplan.models.diff_documents import KueueDiff, KueueStep
from gangplan.models.result import KueueWorkloadOutcome, Result


def _choice(w: KueueWorkloadOutcome) -> tuple:
    return tuple(
        (
            p.name,
            tuple(sorted(p.flavors.items())),
            tuple((tuple(d["values"]), d["count"]) for d in p.topology),
        )
        for p in w.podsets
    )


def describe(w: KueueWorkloadOutcome | None) -> str:
    if w is None:
        return "not a Workload of this run"
    if not w.admitted:
        return f"refused: {w.reason}"
    parts = []
    for p in w.podsets:
        flavors = sorted(set(p.flavors.values()))
        text = f"{p.name} -> {', '.join(flavors) or 'no flavor'}"
        if p.topology:
            doms = ", ".join(f"{'/'.join(d['values'])} x{d['count']}" for d in p.topology)
            text += f" [{doms}]"
        parts.append(text)
    text = "admitted: " + "; ".join(parts)
    return text if w.running else text + " (not every pod placed)"


def _same_place(g: KueueWorkloadOutcome, o: KueueWorkloadOutcome) -> bool:
    """Same flavors and, with TAS, the same domains with the same counts."""
    return _choice(g) == _choice(o)


def compare(greedy: Result, optimal: Result) -> KueueDiff | None:
    g, o = greedy.kueue, optimal.kueue
    if g is None or o is None:
        return None
    keys = sorted(set(g.workloads) | set(o.workloads))
    only_g = [k for k in keys if _adm(g.workloads.get(k)) and not _adm(o.workloads.get(k))]
    only_o = [k for k in keys if _adm(o.workloads.get(k)) and not _adm(g.workloads.get(k))]
    other = [
        k
        for k in keys
        if _adm(g.workloads.get(k))
        and _adm(o.workloads.get(k))
        and not g.workloads[k].recorded
        and not _same_place(g.workloads[k], o.workloads[k])
    ]
    step = None
    if only_o or other:
        order = sorted(
            (w.cycle, k) for k, w in g.workloads.items() if w.admitted and w.cycle is not None
        )
        first = next((k for _, k in order if k in only_g or k in other), None)
        refused = [f"{k}: {g.workloads[k].reason}" for k in only_o if k in g.workloads]
        if first is not None:
            step = KueueStep(
                workload=first,
                cycle=g.workloads[first].cycle,
                greedy=describe(g.workloads[first]),
                optimal=describe(o.workloads.get(first)),
                refused=refused,
            )
        elif only_o:
            k = only_o[0]
            step = KueueStep(
                workload=k,
                greedy=describe(g.workloads.get(k)),
                optimal=describe(o.workloads.get(k)),
                refused=refused,
            )
    return KueueDiff(
        version=g.version,
        workloads=len(keys),
        greedy_admitted=sum(1 for k in keys if _adm(g.workloads.get(k))),
        optimal_admitted=sum(1 for k in keys if _adm(o.workloads.get(k))),
        only_greedy=only_g,
        only_optimal=only_o,
        other_flavor=other,
        decisive=step,
        greedy_running=sum(1 for w in g.workloads.values() if w.running and not w.recorded),
        optimal_running=sum(1 for w in o.workloads.values() if w.running and not w.recorded),
    )


def _adm(w: KueueWorkloadOutcome | None) -> bool:
    return w is not None and w.admitted
