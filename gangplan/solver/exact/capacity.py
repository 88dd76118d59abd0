"""Capacity: per node and resource, new requests fit the free allocatable; pod slots likewise.

Mirrors validate's ``capacity`` rule (and NodeResourcesFit's Filter, ``noderesources/fit.go``
v1.35) on the final state: every resource, extended ones included, plus the ``pods`` slot count.
Nodes the bound state already over-commits are ineligible (see :mod:`instance`).

Each resource is divided by the gcd of all pending requests of that resource (and the free
amount floored by it): the constraint is unchanged on integers, and memory coefficients shrink from
bytes to something the LP handles well. A constraint is only written when the variables' upper
bounds could actually exceed the free amount.

With preemption (:mod:`.preemption`) the bound usage is a linear expression: each evictable unit
on the node gives back its requests and pod slots when ``evict[u]`` is 1, i.e.
``new requests - sum_u usage[u, n] * evict[u] <= free`` (free after every bound pod); the unit
usages join the gcd so the scaling stays exact.

DRA claims with matchAttribute / distinctAttribute constraints add per-attribute-value variables
on the nodes where they can land (:func:`add_aligned_rows`); partitionable devices (shared
counters, KEP-4815) a boolean per device, only on nodes that have such devices
(:func:`add_counter_rows`); a claim shared by several pending pods its devices once per node
(:func:`add_shared_claim_rows`); everything else DRA is resource rows of
:func:`gangplan.dra.capacity.capacity_view`.
"""

from __future__ import annotations

import math

import numpy as np
from ortools.sat.python import cp_model

from gangplan.solver.exact.eligibility import ClassView, Conditions
from gangplan.solver.exact.family import BuildContext, Family
from gangplan.solver.exact.names import CAPACITY
from gangplan.solver.exact.variables import Counts, ExactModel


def capacity_mask(view: ClassView, cond: Conditions) -> np.ndarray:
    """Nodes where at least one pod of the class fits the free capacity (evictable room included)."""
    return view.fit > 0


def resource_scales(em: ExactModel) -> np.ndarray:
    """Per resource, the gcd of every pending class's non-zero request (1 when none)."""
    scales = np.ones(len(em.inst.resources), dtype=np.int64)
    for r in range(len(em.inst.resources)):
        g = 0
        for req in em.req:
            if req[r] > 0:
                g = math.gcd(g, int(req[r]))
        for u in em.inst.units:
            for vec in u.usage.values():
                if vec[r] > 0:
                    g = math.gcd(g, int(vec[r]))
        scales[r] = g or 1
    return scales


def add_capacity_constraints(ctx: BuildContext) -> None:
    """Sum over everything landing on a node of request x count <= free, per resource and pods."""
    if not ctx.enforces(CAPACITY):
        return
    em = ctx.em
    add_aligned_rows(em)
    chosen = add_first_available_rows(em)
    for k, terms in add_shared_claim_rows(em).items():
        chosen.setdefault(k, []).extend(terms)
    _add_demand_rows(em, chosen)
    add_counter_rows(em, chosen)
    add_all_rows(em, chosen)
    add_multi_node_rows(em, chosen)
    inst, model = em.inst, em.model
    scales = resource_scales(em)
    for n, entries in enumerate(em.node_vars):
        if not entries:
            continue
        variables = [var for var, _, _ in entries]
        ubs = np.array([ub for _, _, ub in entries], dtype=np.int64)
        reqs = np.stack([req for _, req, _ in entries]) // scales
        free = inst.free[n] // scales
        gives = [
            (em.evict[i], u.usage[n] // scales, u.slots[n])
            for i, u in enumerate(inst.units)
            if n in u.usage
        ]
        if gives and ((inst.free[n] < 0).any() or inst.free_pods[n] < 0):
            _overcommitted(em, n, variables, ubs, reqs, free, gives)
            continue
        for r in np.nonzero(reqs.any(axis=0))[0].tolist():
            coefs = reqs[:, r]
            if int(coefs @ ubs) > free[r]:
                back = [(var, -int(use[r])) for var, use, _ in gives if use[r]]
                if not back:
                    model.add(
                        cp_model.LinearExpr.weighted_sum(variables, coefs.tolist()) <= int(free[r])
                    )
                    continue
                model.add(
                    cp_model.LinearExpr.weighted_sum(
                        variables + [v for v, _ in back], coefs.tolist() + [k for _, k in back]
                    )
                    <= int(free[r])
                )
        if int(ubs.sum()) > inst.free_pods[n]:
            if not gives:
                model.add(cp_model.LinearExpr.sum(variables) <= int(inst.free_pods[n]))
                continue
            model.add(
                cp_model.LinearExpr.weighted_sum(
                    variables + [v for v, _, _ in gives],
                    [1] * len(variables) + [-k for _, _, k in gives],
                )
                <= int(inst.free_pods[n])
            )


def _overcommitted(em: ExactModel, n: int, variables, ubs, reqs, free, gives) -> None:
    """A node the bound state over-commits, reachable only by evicting (preemption): with
    ``land`` = 1 when any pod lands there, every resource a landing pod requests and the pod slots
    must fit once the evictions are done: ``new - given back <= free * land`` (free < 0 forces
    evictions only when something lands; with nothing landing the left side is <= 0 anyway). A
    resource no candidate pod requests is not checked, as NodeResourcesFit checks only the
    incoming pod's requests (the validator's capacity rule says the same)."""
    model, inst = em.model, em.inst
    members = [(var, k) for var, k in zip(variables, ubs.tolist(), strict=True)]
    land = em.new_aux(0, 1, lambda cnt, n=n: int(any(per.get(n, 0) for per in cnt.per_class)))
    model.add(cp_model.LinearExpr.sum(variables) <= int(sum(k for _, k in members)) * land)
    for r in range(len(free)):
        if not reqs[:, r].any():
            continue
        coefs = reqs[:, r].tolist()
        back = [(var, -int(use[r])) for var, use, _ in gives if use[r]]
        if free[r] >= 0 and int(reqs[:, r] @ ubs) <= free[r]:
            continue
        terms = variables + [v for v, _ in back] + [land]
        weights = coefs + [k for _, k in back] + [-int(min(free[r], 0))]
        model.add(cp_model.LinearExpr.weighted_sum(terms, weights) <= int(max(free[r], 0)))
    slots = int(inst.free_pods[n])
    if slots < 0 or int(ubs.sum()) > slots:
        terms = variables + [v for v, _, _ in gives] + [land]
        weights = [1] * len(variables) + [-k for _, _, k in gives] + [-min(slots, 0)]
        model.add(cp_model.LinearExpr.weighted_sum(terms, weights) <= max(slots, 0))


def add_aligned_rows(em: ExactModel) -> None:
    """DRA claims with ``matchAttribute`` / ``distinctAttribute`` constraints
    (:class:`gangplan.dra.capacity.AlignedRows`): variables per attribute value, only on nodes
    where such claims can land. With ``t`` the claims of a shape on node ``n`` (its resource's
    count over everything landing there) and ``N[P, a, v]`` the node's free devices of pair ``P``
    whose attribute ``a`` is ``v``:

    * matchAttribute: ``y[v]`` claims take all their covered devices from value ``v``:
      ``sum_v y[v] = t`` and, per (P, a, v), ``sum over shapes of k_P * y[v] <= N[P, a, v]``
      (``k_P``: the devices of P one claim takes);
    * distinctAttribute: ``z[P, v]`` devices of P with value ``v`` go to the shape's claims:
      ``sum_v z[P, v] = k_P * t``, ``sum_P z[P, v] <= t`` (a claim takes each value once) and the
      same per-(P, a, v) rows. Any such counts split into claims with pairwise distinct values
      (an equitable edge colouring of the value / pair multigraph, de Werra), so the rows are
      exact for one attribute per device pair.

    The plain device rows of :mod:`gangplan.dra.capacity` still count every request, so devices
    the unconstrained claims take are accounted for. Exact when each device matches one pair, the
    pairs' devices are exclusive and one attribute is constrained per pair. On a node where that
    does not hold (a shared device, several attributes on one pair) the view names the node in a
    warning and the model is conservative there: at most one constrained claim on it."""
    from gangplan.dra.capacity import aligned_rows

    rows = aligned_rows(em.inst.cluster)
    if rows is None:
        return
    model = em.model
    ridx = {r: i for i, r in enumerate(em.inst.resources)}
    shapes = [(name, ridx[name], rows.shapes[name]) for name in sorted(rows.shapes) if name in ridx]
    plans: dict[tuple[int, int], dict] = {}

    def plan(cnt: Counts, n: int) -> dict:
        """A greedy split of a placement's claims on node ``n`` over values (hint values)."""
        key = (id(cnt), n)
        got = plans.get(key)
        if got is not None:
            return got
        if len(plans) > 4096:
            plans.clear()
        left = {k: dict(v) for k, v in rows.supply.get(em.inst.cluster.nodes[n].name, {}).items()}
        out: dict = {}
        for name, i, cons in shapes:
            t = sum(per.get(n, 0) * int(em.req[c][i]) for c, per in enumerate(cnt.per_class))
            for _ in range(t):
                for j, con in enumerate(cons):
                    _hint_one(left, out, name, j, con)
        plans[key] = out
        return out

    for n, entries in enumerate(em.node_vars):
        node_name = em.inst.cluster.nodes[n].name
        supply = rows.supply.get(node_name, {})
        if node_name in rows.relaxed:
            # Conservative where the rows would not be exact (the view's warning names the
            # nodes): at most one constrained claim on the node, one that fits it alone.
            t = [
                (var, int(req[i])) for name, i, _ in shapes for var, req, _ in entries if req[i] > 0
            ]
            if t:
                model.add(
                    cp_model.LinearExpr.weighted_sum([v for v, _ in t], [k for _, k in t]) <= 1
                )
            continue
        acc: dict[tuple, list[tuple[cp_model.IntVar, int, int]]] = {}
        for name, i, cons in shapes:
            t = [(var, int(req[i]), ub) for var, req, ub in entries if req[i] > 0]
            if not t:
                continue
            hi = sum(k * ub for _, k, ub in t)
            total = cp_model.LinearExpr.weighted_sum([v for v, _, _ in t], [k for _, k, _ in t])
            for j, con in enumerate(cons):
                values = sorted(
                    {v for p, _ in con.pairs for v in supply.get((p, con.attribute), {})}, key=repr
                )
                if con.kind == "match":
                    ys = []
                    for v in values:
                        cap = min(
                            supply.get((p, con.attribute), {}).get(v, 0) // k for p, k in con.pairs
                        )
                        if cap <= 0:
                            continue
                        ub = min(cap, hi)
                        y = em.new_aux(
                            0,
                            ub,
                            lambda cnt, n=n, k=(name, j, "y", v), ub=ub: min(
                                plan(cnt, n).get(k, 0), ub
                            ),
                        )
                        ys.append(y)
                        for p, k in con.pairs:
                            acc.setdefault((p, con.attribute, v), []).append((y, k, ub))
                    model.add(cp_model.LinearExpr.sum(ys) == total)
                    continue
                per_value: dict[object, list[cp_model.IntVar]] = {}
                for p, k in con.pairs:
                    zs = []
                    for v in values:
                        cap = supply.get((p, con.attribute), {}).get(v, 0)
                        if cap <= 0:
                            continue
                        ub = min(cap, hi)
                        z = em.new_aux(
                            0,
                            ub,
                            lambda cnt, n=n, key=(name, j, "z", p, v), ub=ub: min(
                                plan(cnt, n).get(key, 0), ub
                            ),
                        )
                        zs.append(z)
                        per_value.setdefault(v, []).append(z)
                        acc.setdefault((p, con.attribute, v), []).append((z, 1, ub))
                    model.add(cp_model.LinearExpr.sum(zs) == k * total)
                for zs in per_value.values():
                    if len(zs) > 1 or hi > 1:
                        model.add(cp_model.LinearExpr.sum(zs) <= total)
        for (p, a, v), terms in acc.items():
            cap = supply[(p, a)][v]
            if sum(k * ub for _, k, ub in terms) > cap:
                model.add(
                    cp_model.LinearExpr.weighted_sum(
                        [x for x, _, _ in terms], [k for _, k, _ in terms]
                    )
                    <= cap
                )


def add_counter_rows(em: ExactModel, chosen: dict | None = None) -> None:
    """Partitionable devices (KEP-4815, :class:`gangplan.dra.capacity.CounterRows`): on a node
    with free devices that consume shared counters, a boolean ``x[d, r]`` per such device and
    device-count resource ``r`` it serves (a (DeviceClass, selectors) pair, or a KEP-5004 class
    row): the device taken for ``r``, for at most one of them, and

    * per (pool, counter set, counter): ``sum_{d, r} consumption[d] * x[d, r] <= what is left``;
    * per resource ``r``: ``demand[r] <= plain[r] + sum_d x[d, r]`` (``plain``: the node's
      devices without counters that serve it).

    The view's device count still bounds each resource. Exact among the partitionable devices
    when their pool is the node's own and none is shared (the plain devices keep the count
    rows, with their usual relaxation where they serve several resources); the view names a node
    where that does not hold, and the validator decides there. Hints: per
    resource, the placement's demand beyond the plain devices takes partitionable devices in
    order while their counters last."""
    from gangplan.dra.capacity import counter_rows

    rows = counter_rows(em.inst.cluster)
    if rows is None:
        return
    model = em.model
    ridx = {r: i for i, r in enumerate(em.inst.resources)}
    plans: dict[tuple[int, int], dict[int, str]] = {}

    def plan(cnt: Counts, n: int, nc) -> dict[int, str]:
        key = (id(cnt), n)
        got = plans.get(key)
        if got is not None:
            return got
        if len(plans) > 4096:
            plans.clear()
        left = dict(nc.available)
        need = {}
        for r, plain in nc.plain.items():
            if r in ridx:
                i = ridx[r]
                need[r] = max(
                    sum(per.get(n, 0) * int(em.req[c][i]) for c, per in enumerate(cnt.per_class))
                    - plain,
                    0,
                )
        out: dict[int, str] = {}
        for j, (_, serves, amounts) in enumerate(nc.devices):
            r = next((r for r in serves if need.get(r, 0) > 0), None)
            if r is None or any(left.get(k, 0) < v for k, v in amounts):
                continue
            for k, v in amounts:
                left[k] -= v
            need[r] -= 1
            out[j] = r
        plans[key] = out
        return out

    for n, entries in enumerate(em.node_vars):
        nc = rows.nodes.get(em.inst.cluster.nodes[n].name)
        if nc is None or not entries:
            continue
        extra = chosen or {}
        used = [
            r
            for r in sorted(nc.plain)
            if r in ridx and (any(req[ridx[r]] > 0 for _, req, _ in entries) or (n, r) in extra)
        ]
        if not used:
            continue
        # x[d, r]: device d taken for resource r (one of the resources it serves, at most one).
        xs: list[dict[str, cp_model.IntVar]] = []
        for j, (_, serves, _) in enumerate(nc.devices):
            mine = {
                r: em.new_aux(
                    0, 1, lambda cnt, n=n, j=j, nc=nc, r=r: int(plan(cnt, n, nc).get(j) == r)
                )
                for r in serves
                if r in used
            }
            if len(mine) > 1:
                model.add(cp_model.LinearExpr.sum(list(mine.values())) <= 1)
            xs.append(mine)
        for r in used:
            i = ridx[r]
            t = [(var, int(req[i])) for var, req, _ in entries if req[i] > 0] + extra.get(
                (n, r), []
            )
            mine = [x[r] for x in xs if r in x]
            model.add(
                cp_model.LinearExpr.weighted_sum(
                    [v for v, _ in t] + mine, [k for _, k in t] + [-1] * len(mine)
                )
                <= nc.plain[r]
            )
        per: dict[tuple[str, str, str], list[tuple[cp_model.IntVar, int]]] = {}
        for x, (_, _, amounts) in zip(xs, nc.devices, strict=True):
            for k, v in amounts:
                per.setdefault(k, []).extend((var, v) for var in x.values())
        for k in sorted(per):
            terms = per[k]
            left = nc.available.get(k, 0)
            if sum(v for _, v in terms) > left:
                model.add(
                    cp_model.LinearExpr.weighted_sum([x for x, _ in terms], [v for _, v in terms])
                    <= left
                )
        # A counter over-consumed already refuses every device of its pool (checkAvailableCounters).
        for k, left in sorted(nc.available.items()):
            if left < 0:
                for x, (_, _, amounts) in zip(xs, nc.devices, strict=True):
                    if any(a[0] == k[0] for a, _ in amounts):
                        for var in x.values():
                            model.add(var == 0)


def add_first_available_rows(
    em: ExactModel,
) -> dict[tuple[int, str], list[tuple[cp_model.IntVar, int]]]:
    """firstAvailable (KEP-4816, :func:`gangplan.dra.capacity.first_available_rows`): on a node
    where claims with a firstAvailable request can land (``t`` of them: the request's ``fa``
    resource over everything landing there), a choice count per subrequest the engine offers,
    ``sum_a y[a] = t``, and per device-count resource ``P`` a subrequest draws on,
    ``demand[P] + sum_a k[a] * y[a] <= free[P]`` (``k``: its devices per claim; the row is
    :func:`_add_demand_rows`'s). The engine may
    choose any subrequest, kube-scheduler's priority only decides which devices the Result names
    (the allocator, after the solve). Subrequests with allocationMode All, capacity requests or
    shared devices are not offered (conservative; the view warns). Returns the choice terms per
    (node, resource), which the counter and All rows add to their demand."""
    from gangplan.dra.capacity import first_available_rows

    rows = first_available_rows(em.inst.cluster)
    out: dict[tuple[int, str], list[tuple[cp_model.IntVar, int]]] = {}
    if rows is None:
        return out
    model = em.model
    ridx = {r: i for i, r in enumerate(em.inst.resources)}
    shapes = [(name, ridx[name], rows[name]) for name in sorted(rows) if name in ridx]

    def hint(cnt: Counts, n: int, name: str, i: int, alts: list, a: int) -> int:
        """All of the placement's claims on the first offered subrequest whose resource the
        plain demand leaves room on (hint values only)."""
        t = sum(per.get(n, 0) * int(em.req[c][i]) for c, per in enumerate(cnt.per_class))
        for b, alt in enumerate(alts):
            if alt is None or alt[0] not in ridx:
                continue
            p = ridx[alt[0]]
            plain = sum(per.get(n, 0) * int(em.req[c][p]) for c, per in enumerate(cnt.per_class))
            if plain + alt[1] * t <= int(em.inst.free[n][p]) or all(
                x is None or x[0] not in ridx for x in alts[b + 1 :]
            ):
                return t if b == a else 0
        return 0

    for n, entries in enumerate(em.node_vars):
        for name, i, alts in shapes:
            t = [(var, int(req[i]), ub) for var, req, ub in entries if req[i] > 0]
            if not t:
                continue
            hi = sum(k * ub for _, k, ub in t)
            total = cp_model.LinearExpr.weighted_sum([v for v, _, _ in t], [k for _, k, _ in t])
            ys = []
            for a, alt in enumerate(alts):
                if alt is None or alt[0] not in ridx:
                    continue
                y = em.new_aux(
                    0,
                    hi,
                    lambda cnt, n=n, name=name, i=i, alts=alts, a=a: hint(cnt, n, name, i, alts, a),
                )
                ys.append(y)
                out.setdefault((n, alt[0]), []).append((y, alt[1]))
            model.add(cp_model.LinearExpr.sum(ys) == total) if ys else model.add(total == 0)
    return out


def _add_demand_rows(
    em: ExactModel, chosen: dict[tuple[int, str], list[tuple[cp_model.IntVar, int]]]
) -> None:
    """Per (node, device-count resource) with extra demand terms (firstAvailable choices, shared
    claims' devices): ``plain demand + sum of the terms <= free``."""
    ridx = {r: i for i, r in enumerate(em.inst.resources)}
    for (n, res), terms in sorted(chosen.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        p = ridx[res]
        t = [(var, int(req[p])) for var, req, _ in em.node_vars[n] if req[p] > 0] + terms
        em.model.add(
            cp_model.LinearExpr.weighted_sum([v for v, _ in t], [k for _, k in t])
            <= int(em.inst.free[n][p])
        )


def add_shared_claim_rows(
    em: ExactModel,
) -> dict[tuple[int, str], list[tuple[cp_model.IntVar, int]]]:
    """Claims shared by several pending pods (:func:`gangplan.dra.capacity.shared_claim_rows`): on
    a node where its pods can land, ``y`` = 1 when any of them does (``pods there <= ub * y``),
    and per device-count resource ``P`` its requests draw on, the term ``count * y`` in ``P``'s
    demand (:func:`_add_demand_rows`: with the firstAvailable choices, ``<= free[P]``): one
    allocation's devices, counted once on its node (its pods are on one node: the view's
    same-node affinity). Returns those terms per (node, resource), which the counter, All and
    multi-node rows add to their demand too."""
    from gangplan.dra.capacity import shared_claim_rows

    rows = shared_claim_rows(em.inst.cluster)
    out: dict[tuple[int, str], list[tuple[cp_model.IntVar, int]]] = {}
    if rows is None:
        return out
    model = em.model
    ridx = {r: i for i, r in enumerate(em.inst.resources)}
    for n, entries in enumerate(em.node_vars):
        for name in sorted(rows):
            if name not in ridx:
                continue
            i = ridx[name]
            mine = [(var, ub) for var, req, ub in entries if req[i] > 0]
            if not mine:
                continue
            classes = [c for c, req in enumerate(em.req) if req[i] > 0]
            y = em.new_aux(
                0,
                1,
                lambda cnt, n=n, classes=classes: int(
                    any(cnt.per_class[c].get(n, 0) for c in classes)
                ),
            )
            model.add(
                cp_model.LinearExpr.sum([v for v, _ in mine]) <= sum(ub for _, ub in mine) * y
            )
            for res, count in rows[name]:
                if res in ridx:
                    out.setdefault((n, res), []).append((y, count))
    return out


def add_multi_node_rows(em: ExactModel, chosen: dict | None = None) -> None:
    """Multi-node devices (:class:`gangplan.dra.capacity.MultiRows`): a device of a multi-node
    ResourceSlice counts on every node that reaches it, but one allocation takes it from all of
    them. Per device-count resource ``P`` and node ``n`` where pods asking for it can land, an
    integer ``b[n, G]`` per group ``G`` of such devices reaching ``n`` (the ones ``n`` borrows),
    and

    * ``demand[n, P] - sum_G b[n, G] <= n's own devices serving P``;
    * per (``G``, ``P``): ``sum_n b[n, G] <= G's devices serving P``; per ``G``, over every ``P``:
      ``sum b <= G's free devices``.

    Exact for ExactCount requests of disjoint pairs, as the node rows are; ``demand`` includes the
    firstAvailable choices and shared claims' devices (``chosen``). Hints: per resource, each
    node's demand beyond its own devices borrows from the groups in order while they last."""
    from gangplan.dra.capacity import _BIG, multi_node_rows

    rows = multi_node_rows(em.inst.cluster)
    if rows is None:
        return
    model = em.model
    ridx = {r: i for i, r in enumerate(em.inst.resources)}
    names = {x.name: n for n, x in enumerate(em.inst.cluster.nodes)}
    reach = [{names[x] for x in s if x in names} for s, _ in rows.groups]
    plans: dict[int, dict] = {}

    def plan(cnt: Counts) -> dict[tuple[str, int, int], int]:
        got = plans.get(id(cnt))
        if got is not None:
            return got
        if len(plans) > 1024:
            plans.clear()
        left = {(res, g): m for res, per in rows.serves.items() for g, m in per.items()}
        total = {g: k for g, (_, k) in enumerate(rows.groups)}
        out: dict[tuple[str, int, int], int] = {}
        for res in sorted(rows.serves):
            if res not in ridx:
                continue
            i = ridx[res]
            local = rows.local.get(res, {})
            for n in range(len(em.inst.cluster.nodes)):
                need = sum(
                    per.get(n, 0) * int(em.req[c][i]) for c, per in enumerate(cnt.per_class)
                ) - local.get(em.inst.cluster.nodes[n].name, 0)
                for g in sorted(rows.serves[res]):
                    if need <= 0:
                        break
                    if n in reach[g]:
                        k = min(need, left[(res, g)], total[g])
                        if k > 0:
                            out[(res, n, g)] = k
                            left[(res, g)] -= k
                            total[g] -= k
                            need -= k
        plans[id(cnt)] = out
        return out

    per_group: dict[int, list] = {}
    per_pair: dict[tuple[str, int], list] = {}
    for res in sorted(rows.serves):
        if res not in ridx:
            continue
        i = ridx[res]
        local = rows.local.get(res, {})
        for n, entries in enumerate(em.node_vars):
            if int(em.inst.free[n][i]) >= _BIG // 2:
                continue  # (served by a device plugin here: no device row)
            t = [(var, int(req[i])) for var, req, _ in entries if req[i] > 0] + (chosen or {}).get(
                (n, res), []
            )
            if not t:
                continue
            bs = []
            for g, m in sorted(rows.serves[res].items()):
                if n not in reach[g]:
                    continue
                b = em.new_aux(0, m, lambda cnt, res=res, n=n, g=g: plan(cnt).get((res, n, g), 0))
                bs.append(b)
                per_group.setdefault(g, []).append(b)
                per_pair.setdefault((res, g), []).append(b)
            if not bs:
                continue
            mine = local.get(em.inst.cluster.nodes[n].name, 0)
            model.add(
                cp_model.LinearExpr.weighted_sum(
                    [v for v, _ in t] + bs, [k for _, k in t] + [-1] * len(bs)
                )
                <= mine
            )
    for (res, g), bs in sorted(per_pair.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        if len(bs) > 1:
            model.add(cp_model.LinearExpr.sum(bs) <= rows.serves[res][g])
    for g, bs in sorted(per_group.items()):
        if len({id(b) for b in bs}) > 1:
            model.add(cp_model.LinearExpr.sum(bs) <= rows.groups[g][1])


def add_all_rows(em: ExactModel, chosen: dict | None = None) -> None:
    """allocationMode All (:func:`gangplan.dra.capacity.all_rows`): on a node with ``M`` devices
    matching an All request's pair, ``demand[pair] + M * demand[all] <= free[pair]``: a claim
    taking all of them leaves none to the pair's ExactCount requests (its ``all`` row, 1 where
    every matching device is free, already keeps a second All claim off the node). Requests of
    other pairs whose devices overlap are left to the validator, as for the plain rows."""
    from gangplan.dra.capacity import all_rows

    rows = all_rows(em.inst.cluster)
    if rows is None:
        return
    model = em.model
    ridx = {r: i for i, r in enumerate(em.inst.resources)}
    for n, entries in enumerate(em.node_vars):
        got = rows.get(em.inst.cluster.nodes[n].name)
        if not got or not entries:
            continue
        free = em.inst.free[n]
        for all_res, pair_res, m in got:
            if all_res not in ridx or pair_res not in ridx:
                continue
            a, p = ridx[all_res], ridx[pair_res]
            t = [
                (var, int(req[p]) + m * int(req[a]))
                for var, req, _ in entries
                if req[a] > 0 or req[p] > 0
            ] + (chosen or {}).get((n, pair_res), [])
            if any(int(req[a]) > 0 for _, req, _ in entries) and (
                any(int(req[p]) > 0 for _, req, _ in entries) or (n, pair_res) in (chosen or {})
            ):
                model.add(
                    cp_model.LinearExpr.weighted_sum([v for v, _ in t], [k for _, k in t])
                    <= int(free[p])
                )


def _hint_one(left: dict, out: dict, name: str, j: int, con) -> None:
    """One claim's constraint ``j`` given values greedily from what is ``left`` (hint values only)."""
    if con.kind == "match":
        values = sorted(
            {v for p, _ in con.pairs for v in left.get((p, con.attribute), {})}, key=repr
        )
        pick = next(
            (
                v
                for v in values
                if all(left.get((p, con.attribute), {}).get(v, 0) >= k for p, k in con.pairs)
            ),
            None,
        )
        if pick is None:
            return
        for p, k in con.pairs:
            left[(p, con.attribute)][pick] -= k
        out[(name, j, "y", pick)] = out.get((name, j, "y", pick), 0) + 1
        return
    used: set = set()
    for p, k in con.pairs:
        have = left.get((p, con.attribute), {})
        for v in sorted(have, key=lambda v: (-have[v], repr(v)))[: k + len(used)]:
            if k == 0:
                break
            if v in used or have[v] <= 0:
                continue
            have[v] -= 1
            used.add(v)
            k -= 1
            out[(name, j, "z", p, v)] = out.get((name, j, "z", p, v), 0) + 1


FAMILY = Family(CAPACITY, mask=capacity_mask, build=add_capacity_constraints)
