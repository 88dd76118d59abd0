"""A joint allocation of several claims as a small CP-SAT model (not upstream's code): where the
depth-first search would backtrack over interchangeable devices, which is exponential, for the
validator and the naming of an exact Result (:func:`_joint_by_model`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gangplan.dra.counting import _SEARCH
from gangplan.dra.matching import AllocationError, Constraints, Consumed, DeviceResult, matches
from gangplan.dra.model import Device, DeviceClass, DeviceID, DeviceRequest
from gangplan.dra.shared_counters import _pools_of, available_counters


def _joint_by_model(
    claims: Sequence[tuple[str, Sequence[DeviceRequest]]],
    devices: Sequence[Device],
    in_use: set,
    classes: dict[str, DeviceClass],
    consumed: Consumed | None,
    constraints: Constraints | None,
    partitionable: bool,
    allowed: Mapping[str, set[DeviceID] | frozenset[DeviceID]] | None = None,
) -> dict[str, tuple[DeviceResult, ...]] | None | object:
    """Whether the claims have a joint allocation, as a small CP-SAT model (not upstream's code:
    the depth-first search over interchangeable devices matched by overlapping requests, or
    partitions of one GPU, is exponential when it must backtrack, and only the validator and the
    naming of an exact Result ask for a joint allocation of several pods' claims). Per (request, device it matches) a
    boolean; each request gets its count, each device at most one request, and per pool the
    counters hold what the taken devices consume. Only for plain ExactCount requests without
    constraints, capacity requests or shared devices (else ``_SEARCH``: the search decides). The
    devices of a request are returned in device order. One worker, fixed seed: deterministic.
    ``allowed``: claim key -> the devices it may take (the validator's check across nodes with
    multi-node devices: those reachable from every node of its pods); default all."""
    reqs = _plain_requests(claims, constraints)
    if reqs is None:
        return _SEARCH
    try:
        cand = _candidates(reqs, devices, in_use, classes, partitionable, allowed)
    except AllocationError:
        return _SEARCH  # (the search meets the error where upstream does)
    if any(devices[i].allow_multiple for c in cand for i in c):
        return _SEARCH
    # Requests with the same candidate devices are one group (their count summed): no symmetric
    # copies for the solver to tell apart (a pigeonhole over interchangeable claims is hard for it).
    groups: dict[tuple[int, ...], list[int]] = {}
    for q, c in enumerate(cand):
        groups.setdefault(tuple(c), []).append(q)
    keys = list(groups)
    need = [sum(reqs[q][1].count for q in groups[g]) for g in keys]
    if len({i for c in cand for i in c}) < sum(need) or any(
        len(g) < need[q] for q, g in enumerate(keys)
    ):
        return None
    return _solve(claims, reqs, groups, keys, need, devices, in_use, consumed)


def _plain_requests(
    claims: Sequence[tuple[str, Sequence[DeviceRequest]]], constraints: Constraints | None
) -> list[tuple[str, DeviceRequest]] | None:
    """(claim key, request) of every request, when all are plain ExactCount requests of claims
    without constraints; else None."""
    if constraints and any(constraints.get(key) for key, _ in claims):
        return None
    reqs = [(key, r) for key, rs in claims for r in rs]
    if any(r.all or r.alternatives or r.capacity or r.admin_access for _, r in reqs):
        return None
    return reqs


def _candidates(
    reqs: list[tuple[str, DeviceRequest]],
    devices: Sequence[Device],
    in_use: set,
    classes: dict[str, DeviceClass],
    partitionable: bool,
    allowed: Mapping[str, set[DeviceID] | frozenset[DeviceID]] | None,
) -> list[list[int]]:
    """Per request, the indexes of the free devices it matches (and may take: ``allowed``)."""
    if allowed is None:
        return [
            [
                i
                for i, d in enumerate(devices)
                if d.id not in in_use
                and (partitionable or not d.counters)
                and matches(d, r, classes)
            ]
            for _, r in reqs
        ]
    # (only the devices each claim may take: across nodes most of them are on other nodes)
    pos = {d.id: i for i, d in enumerate(devices)}
    return [
        [
            i
            for i in sorted(pos[x] for x in allowed[key] if x in pos and x not in in_use)
            if (partitionable or not devices[i].counters) and matches(devices[i], r, classes)
        ]
        for key, r in reqs
    ]


def _solve(
    claims: Sequence[tuple[str, Sequence[DeviceRequest]]],
    reqs: list[tuple[str, DeviceRequest]],
    groups: dict[tuple[int, ...], list[int]],
    keys: list[tuple[int, ...]],
    need: list[int],
    devices: Sequence[Device],
    in_use: set,
    consumed: Consumed | None,
) -> dict[str, tuple[DeviceResult, ...]] | None | object:
    """The model of :func:`_joint_by_model` over the request groups ``keys`` (each its candidate
    devices, ``need`` of them), solved; the devices handed out in request order."""
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    for q, g in enumerate(keys):
        for i in g:
            x[(q, i)] = m.new_bool_var("")
        m.add(sum(x[(q, i)] for i in g) == need[q])
    by_device: dict[int, list] = {}
    for (_q, i), v in x.items():
        by_device.setdefault(i, []).append(v)
    for vs in by_device.values():
        if len(vs) > 1:
            m.add(sum(vs) <= 1)
    _add_counters(m, x, devices, in_use, consumed)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    solver.parameters.max_time_in_seconds = 30.0
    status = solver.solve(m)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        if status == cp_model.INFEASIBLE:
            return None
        return _SEARCH  # (undecided in time: the search decides)
    out: dict[str, list[DeviceResult]] = {key: [] for key, _ in claims}
    for q, g in enumerate(keys):
        taken = iter([i for i in g if solver.value(x[(q, i)])])  # handed out in request order
        for t in groups[g]:
            key, r = reqs[t]
            out[key].extend(DeviceResult(r.name, devices[next(taken)].id) for _ in range(r.count))
    by_claim = {key: [] for key, _ in claims}
    for key, rs in claims:  # each claim's results in its request order
        names = [r.name for r in rs]
        by_claim[key] = sorted(out[key], key=lambda res: names.index(res.request))
    return {k: tuple(v) for k, v in by_claim.items()}


def _add_counters(
    m, x: dict, devices: Sequence[Device], in_use: set, consumed: Consumed | None
) -> None:
    """Per pool and counter, what the taken devices consume at most what the allocated devices
    left (KEP-4815); a counter already over-consumed keeps every device of the pool untaken."""
    for cp in _pools_of(devices, None).values():
        have = available_counters(cp, in_use, consumed)
        for key, left in sorted(have.items()):
            terms = [
                (v, amount)
                for (_q, i), v in x.items()
                if devices[i].counter_pool is cp
                for cset, amounts in devices[i].counters
                if cset == key[0]
                for c, amount in amounts
                if c == key[1]
            ]
            users = {i for (_q, i) in x if devices[i].counter_pool is cp and devices[i].counters}
            if left < 0 and users:
                for (_q, i), v in x.items():
                    if i in users:
                        m.add(v == 0)
            elif terms:
                m.add(sum(a * v for v, a in terms) <= left)
