"""The replay's arguments and inputs: ``--seeds``, ``--policy`` and ``--bound-percents`` parsed,
the arguments checked as the CLI names them (exit 2), the trace and the cluster read, and the
caveats the summary states about them before any run (:func:`gangplan.replay.run.replay` uses
them all)."""

from __future__ import annotations

import os

from gangplan.io.errors import SnapshotError
from gangplan.models.cluster import Cluster
from gangplan.replay.optimal import OPTIMAL
from gangplan.replay.policies import POLICIES, Policy, is_policy_file, resolve_policy
from gangplan.replay.traces import (
    Trace,
    philly_nodes,
    read_nodes,
    read_trace,
    unlimited_philly_nodes,
)

SHARING_NOTE = (
    "GPU sharing: {n} of {total} trace jobs ask for a share of a GPU (gpu_milli < 1000); GPUs are devices of 1000 milli "
    "each (DRA consumable capacity semantics, gangplan.replay.gpushare), and arrived / allocated / unallocated count GPU milli "
    "(requestedGpus / allocatedGpus: milli // 1000)."
)


def trace_shapes(jobs) -> list[tuple[int, int, int, tuple[str, ...]]]:
    """(non-zero cpu milli, GPUs, GPU milli, models) of every pod of the trace, for
    :func:`gangplan.replay.policies.typical_pods` (each worker of a gang counts)."""
    return [
        (j.cpu_milli or 100, j.gpu, j.gpu_milli if j.gpu else 0, j.gpu_models if j.gpu else ())
        for j in jobs
        for _ in range(j.workers)
    ]


def parse_seeds(text: str) -> list[int]:
    """``42..51``, ``42`` or ``1,5,9``.

    >>> parse_seeds("42..44"), parse_seeds("7"), parse_seeds("3,1")
    ([42, 43, 44], [7], [3, 1])
    """
    t = text.strip()
    try:
        if ".." in t:
            a, b = t.split("..", 1)
            lo, hi = int(a), int(b)
            if hi < lo:
                raise ValueError
            return list(range(lo, hi + 1))
        return [int(x) for x in t.split(",") if x.strip()]
    except ValueError:
        raise SnapshotError(
            "<arguments>", f"expected A..B, N or N,M,..., got {text!r}", field="--seeds"
        ) from None


SHADOW = "shadow"
"""The exact ``shadow`` policy (timed mode): the default profile's greedy run, with a per-epoch
exact solve on its own state (:mod:`gangplan.replay.shadow`)."""
EXACT_POLICIES = (SHADOW, OPTIMAL)
"""The timed-mode policies with per-epoch exact solves; ``optimal``: the per-epoch optimum drives
its own run (:mod:`gangplan.replay.optimal`)."""


def parse_policies(text: str) -> list[str]:
    out = [p.strip() for p in text.split(",") if p.strip()]
    bad = [
        p for p in out if p not in POLICIES and p not in EXACT_POLICIES and not is_policy_file(p)
    ]
    if bad or not out:
        raise SnapshotError(
            "<arguments>",
            f"unknown policy {bad[0] if bad else text!r} (known: {', '.join(POLICIES)}, {', '.join(EXACT_POLICIES)}, "
            "or a KubeSchedulerConfiguration file)",
            field="--policy",
        )
    return out


def resolve_policies(texts: list[str]) -> tuple[list[str], dict[str, Policy]]:
    """The run names in order and the greedy policies by name: built-in names, and files
    (:func:`gangplan.replay.policies.policy_from_file`, named by their stem)."""
    names: list[str] = []
    resolved: dict[str, Policy] = {}
    for t in texts:
        if t in EXACT_POLICIES:
            names.append(t)
            continue
        pol = resolve_policy(t, taken=(*EXACT_POLICIES, *names))
        if pol.name in resolved:
            raise SnapshotError("<arguments>", f"policy {pol.name!r} given twice", field="--policy")
        names.append(pol.name)
        resolved[pol.name] = pol
    return names, resolved


BOUND_METHODS = ("lp", "patterns", "none")
"""``--bound``: the aggregated LP (milliseconds, weak), the pattern bound (column generation,
about a minute per arrived percent and seed on the paper's cluster), or none."""


def parse_percents(text: str) -> tuple[int, ...]:
    """``--bound-percents``: comma-separated integers in 1..130."""
    try:
        out = tuple(sorted({int(x) for x in text.split(",") if x.strip()}))
    except ValueError:
        out = ()
    if not out or out[0] < 1 or out[-1] > 130:
        raise SnapshotError(
            "<arguments>",
            f"expected comma-separated integers in 1..130, got {text!r}",
            field="--bound-percents",
        )
    return out


def load_inputs(
    trace_path: str | os.PathLike,
    nodes: str | os.PathLike | None,
    *,
    vc: str | None = None,
    gpu_class: str | None = None,
) -> tuple[Trace, Cluster, str]:
    trace = read_trace(trace_path, vc=vc)
    if nodes is not None and str(nodes) != "unlimited":
        return trace, read_nodes(nodes, gpu_class=gpu_class), str(nodes)
    if gpu_class is not None:
        raise SnapshotError(
            "<arguments>",
            "--gpu-class names the DeviceClass of a --nodes snapshot's GPUs; there is no snapshot",
            field="--gpu-class",
        )
    if trace.vc_nodes is not None and nodes is None:
        return (
            trace,
            Cluster(nodes=tuple(philly_nodes(trace.vc_nodes))),
            f"philly VC {vc} ({trace.vc_nodes} nodes x 8 GPUs)",
        )
    if str(nodes) == "unlimited":
        n = unlimited_philly_nodes(trace.jobs)
        return (
            trace,
            Cluster(nodes=tuple(philly_nodes(n))),
            f"unlimited ({n} nodes x 8 GPUs, one per worker)",
        )
    raise SnapshotError(
        "<arguments>",
        "NODES is needed (an openb node CSV, a snapshot, or 'unlimited'), or --vc NAME with the Philly trace",
        field="--nodes",
    )


def check_arguments(
    mode: str,
    policies: list[str],
    arrival_scale: float,
    exact_time_limit: float,
    epoch: float | None,
    bound: bool | str,
    bound_work_limit: float,
) -> str:
    """Bad arguments as the CLI names them (exit 2); the packing bound's method."""
    if mode not in ("fill", "timed"):
        raise SnapshotError("<arguments>", f"expected fill or timed, got {mode!r}", field="--mode")
    if arrival_scale <= 0:
        raise SnapshotError(
            "<arguments>",
            f"expected a positive number, got {arrival_scale}",
            field="--arrival-scale",
        )
    for p in EXACT_POLICIES:
        if p in policies and mode != "timed":
            raise SnapshotError(
                "<arguments>", f"the {p} policy needs --mode timed", field="--policy"
            )
    if exact_time_limit <= 0:
        raise SnapshotError(
            "<arguments>",
            f"expected a positive number, got {exact_time_limit}",
            field="--exact-time-limit",
        )
    if epoch is not None and epoch <= 0:
        raise SnapshotError(
            "<arguments>", f"expected a positive number, got {epoch}", field="--epoch"
        )
    method = "lp" if bound is True else "none" if bound is False else bound
    if method not in BOUND_METHODS:
        raise SnapshotError(
            "<arguments>",
            f"expected one of {', '.join(BOUND_METHODS)}, got {bound!r}",
            field="--bound",
        )
    if bound_work_limit <= 0:
        raise SnapshotError(
            "<arguments>",
            f"expected a positive number, got {bound_work_limit}",
            field="--bound-work-limit",
        )
    return method


def input_caveats(mode: str, cluster: Cluster, jobs: list, resolved: dict) -> list[str]:
    """What the summary says about the inputs before any run: the loader's warnings, policy
    files, GPU sharing, preferred topology keys, timed mode's rules."""
    caveats = list(cluster.warnings)
    for pol in resolved.values():
        if pol.source:
            caveats.append(
                f"policy {pol.name}: the KubeSchedulerConfiguration {pol.source}, with the replay's GPU-share filter; ties random, GPUs {pol.selection} fit"
            )
            caveats += [f"policy {pol.name}: {w}" for w in pol.warnings]
    frac = sum(j.fractional for j in jobs)
    if frac:
        caveats.append(SHARING_NOTE.format(n=frac, total=len(jobs)))
    if any(j.preferred_topology_key for j in jobs):
        caveats.append(
            "preferred_topology_key is read but not used: kube-scheduler's PodGroup has only a required topology (schedulingConstraints.topology[].key, KEP-5732), so no greedy policy prefers a domain (required_topology_key is placed by the workload cycle's placement algorithm)"
        )
    if mode == "timed":
        caveats.append(
            "timed mode: a failed job is retried after an event that may help (a departure, or for a v1.37 gang of more than one pod "
            "any placement; then after its backoff) or, seeing none, by the 5-minute unschedulable flush (a 30 s loop); preemption as the profile says "
            "(DefaultPreemption, the greedy engine's PostFilter, only when a running job has a lower priority): victims terminate at once, each "
            "evicted job restarts from the queue with its full duration, and the preemptor is retried at that instant"
        )
    return caveats


__all__ = [
    "BOUND_METHODS",
    "EXACT_POLICIES",
    "SHADOW",
    "SHARING_NOTE",
    "check_arguments",
    "input_caveats",
    "load_inputs",
    "parse_percents",
    "parse_policies",
    "parse_seeds",
    "resolve_policies",
    "trace_shapes",
]
