"""What ``gangplan solve`` and ``gangplan why`` do besides their flags (those are in
:mod:`gangplan.cli`): run the engines through :func:`gangplan.api.solve`, find the pod
``--explain`` / ``why`` name, and the ``why --json`` document."""

from __future__ import annotations

from pathlib import Path

from gangplan.cli_common import source
from gangplan.io.errors import SnapshotError
from gangplan.models.options import SolveOptions


def run_engine(cluster, engine: str, *, snapshot: str, options: SolveOptions, progress=None):
    """``(result, greedy)``: the greedy run, and the exact one seeded with it when ``engine`` is
    ``exact`` (``--explain`` shows the greedy trace whichever engine ran); both through
    :func:`gangplan.api.solve`, the one way the CLI runs an engine."""
    from gangplan import api

    given = dict(options)
    greedy = api.solve(cluster, "greedy", snapshot=snapshot, progress=progress, **given)
    if engine == "greedy":
        return greedy, greedy
    return api.solve(
        cluster, "exact", snapshot=snapshot, progress=progress, **{**given, "hint": greedy}
    ), greedy


def _kueue_pod(cluster, name: str) -> str | None:
    """A Kueue Workload (``namespace/name``) or the job it stands for (``namespace/job``,
    ``Job/namespace/name``): its first pending pod, so ``why`` answers for a job."""
    state = cluster.kueue
    if state is None:
        return None
    pending = {p.key for p in cluster.pending_pods}
    for wl in state.workloads.values():
        owner = wl.owner or ""
        job = f"{wl.namespace}/{owner.split('/', 1)[-1]}" if owner else None
        names = {wl.key, job, f"{owner.split('/', 1)[0]}/{job}" if job else None}
        if name in names:
            return next((k for ps in wl.podsets for k in ps.pods if k in pending), None)
    return None


def resolve_pod(cluster, name: str, snapshot: Path, field: str = "--explain") -> str:
    """``--explain`` argument -> a pending pod's ``namespace/name``: exact keys, or a bare name
    when exactly one pending pod has it; otherwise bad input naming close matches."""
    import difflib

    pending = [p.key for p in cluster.pending_pods]
    if name in pending:
        return name
    kueue = _kueue_pod(cluster, name)
    if kueue is not None:
        return kueue
    bound = {p.key: p.node_name for p in cluster.bound_pods}
    if name in bound:
        raise SnapshotError(
            source(snapshot),
            f"pod {name} is bound to node {bound[name]}, not pending: there is no scheduling step to explain",
            obj=f"Pod/{name}",
            field=field,
        )
    if "/" not in name:
        same = [k for k in pending if k.split("/", 1)[1] == name]
        if len(same) == 1:
            return same[0]
        if len(same) > 1:
            raise SnapshotError(
                source(snapshot),
                f"pod name {name!r} is ambiguous: {', '.join(same)}; give namespace/name",
                field=field,
            )
    names = pending + [k.split("/", 1)[1] for k in pending]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    close_keys = []
    for c in close:
        key = c if "/" in c else next(k for k in pending if k.split("/", 1)[1] == c)
        if key not in close_keys:
            close_keys.append(key)
    hint = (
        f"; did you mean {', '.join(close_keys)}?"
        if close_keys
        else f"; the snapshot has {len(pending)} pending pod(s)"
        + (f", e.g. {pending[0]}" if pending else "")
    )
    raise SnapshotError(
        source(snapshot),
        f"{name!r} is not a pending pod of the snapshot (give namespace/name){hint}",
        field=field,
    )


def why_document(greedy, key: str, cluster, snapshot: str) -> dict:
    """``why --json``: what ``why`` prints, as data; ``cycle`` is the pod's entry of the Result
    JSON's greedy trace (``trace.pods``), null when its cycle never ran."""
    from gangplan.render import explain_context, placement_lines
    from gangplan.solver.blockers import details

    data = greedy.to_dict(trace="full")
    outcome = data.get("pods", {}).get(key)
    pod = cluster.pod_by_key.get(key)
    return {
        "pod": key,
        "snapshot": snapshot,
        "kubeVersion": str(cluster.kube_version),
        "outcome": outcome,
        "context": explain_context(greedy, cluster, key),
        "cycle": (data.get("trace") or {}).get("pods", {}).get(key),
        "details": details(cluster, pod) if pod is not None else {},
        "placements": placement_lines(greedy, cluster, key),
    }


__all__ = ["resolve_pod", "run_engine", "why_document"]
