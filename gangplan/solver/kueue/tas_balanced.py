"""Kueue's balanced TAS placement (feature gate ``TASBalancedPlacement``, alpha, off by default).

Re-stated from kubernetes-sigs/kueue ``pkg/cache/scheduler/tas_balanced_placement.go`` at v0.19.2
(c3785e52; unchanged on ``main`` ff69552e). For a PodSet with a *preferred* level (not required,
not unconstrained): among the domains one level above the preferred one, find the one where the
slices can be spread most evenly (the largest "threshold", the minimum slices every used domain
gets), prune the domains below it, choose the fewest domains with the least capacity by a small
dynamic programme, and give each the threshold plus extras. Upstream falls back to best fit when
this fails.
"""

from __future__ import annotations

import math
from functools import cmp_to_key

from gangplan.solver.kueue.tas_snapshot import Domain, Params, TASSnapshot


def _cmp(a: object, b: object) -> int:
    return (a > b) - (a < b)  # type: ignore[operator]


def evaluate_greedy_assignment(
    s: TASSnapshot, domains: list[Domain], slice_count: int, leader_count: int
) -> tuple[bool, int, Domain | None, Domain | None]:
    """``evaluateGreedyAssignment``: whether the greedy order fits, how many domains it uses,
    the last domain taken with a leader and without."""
    selected = 0
    last = last_wl = None
    rem_slices, rem_leaders = slice_count, leader_count
    idx = 0
    if leader_count > 0:
        with_leader = s.sorted_domains_with_leader(domains, False)
        while rem_leaders > 0 and idx < len(with_leader) and with_leader[idx].leader_count > 0:
            selected += 1
            last_wl = with_leader[idx]
            rem_leaders -= with_leader[idx].leader_count
            rem_slices -= with_leader[idx].slice_count_wl
            idx += 1
        without = s.sorted_domains(with_leader[idx:], False)
    else:
        without = s.sorted_domains(domains, False)
    if rem_leaders > 0:
        return False, 0, None, None
    idx = 0
    while rem_slices > 0 and idx < len(without) and without[idx].slice_count > 0:
        selected += 1
        last = without[idx]
        rem_slices -= without[idx].slice_count
        idx += 1
    if rem_slices > 0:
        return False, 0, None, None
    return True, selected, last_wl, last


def balance_threshold_value(
    slice_count: int, selected: int, last_wl: Domain | None, last: Domain | None
) -> int:
    """``balanceThresholdValue``."""
    threshold = slice_count // selected
    if last_wl is not None:
        threshold = min(threshold, last_wl.slice_count_wl)
    if last is not None:
        threshold = min(threshold, last.slice_count)
    return threshold


def domains_entropy(domains: list[Domain]) -> float:
    """``calculateDomainsEntropy``: Shannon entropy (bits) of the pod counts."""
    total = sum(d.pod_count for d in domains)
    if not domains or total == 0:
        return 0.0
    entropy = 0.0
    for d in domains:
        if d.pod_count > 0:
            p = d.pod_count / total
            entropy += -p * math.log2(p)
    return entropy


def compare_capacity_and_entropy(a: Domain, b: Domain) -> int:
    """``compareDomainCapacityAndEntropy``: leaders desc, slices with leader desc, children's
    entropy desc, level values."""
    if r := b.leader_count - a.leader_count:
        return r
    if r := b.slice_count_wl - a.slice_count_wl:
        return r
    ea, eb = domains_entropy(a.children), domains_entropy(b.children)
    if eb > ea:
        return 1
    if eb < ea:
        return -1
    return _cmp(a.values, b.values)


def select_optimal_domain_set(
    s: TASSnapshot,
    domains: list[Domain],
    slice_count: int,
    leader_count: int,
    slice_size: int,
    by_entropy: bool,
) -> list[Domain] | None:
    """``selectOptimalDomainSetToFit``: with as many domains as the greedy order needs, the
    set whose pods left over (<= 0) is largest, i.e. the least spare capacity."""
    fit, n, _, _ = evaluate_greedy_assignment(s, domains, slice_count, leader_count)
    if not fit:
        return None
    if by_entropy:
        ordered = sorted(domains, key=cmp_to_key(compare_capacity_and_entropy))
    else:
        ordered = sorted(domains, key=lambda d: d.values)
    placements: list[dict[int, dict[int, list[Domain]]]] = [{} for _ in range(n + 1)]
    placements[0][leader_count] = {slice_count * slice_size: []}
    for d in ordered:
        for i in range(n, 0, -1):
            prev = placements[i - 1]
            for before_leader in sorted(prev):
                for before_pods in sorted(prev[before_leader]):
                    before = prev[before_leader][before_pods]
                    if before_leader <= 0 and before_pods <= 0:
                        continue
                    new = [*before, d]
                    if before_leader > 0 and d.leader_count > 0:
                        after_leader = before_leader - d.leader_count
                        after_pods = before_pods - d.pod_count_wl
                        placements[i].setdefault(after_leader, {}).setdefault(after_pods, new)
                    if d.slice_count > 0:
                        after_pods = before_pods - d.pod_count
                        placements[i].setdefault(before_leader, {}).setdefault(after_pods, new)
    best_leader = placements[n].get(0, {})
    best_slice = -(1 << 31)
    best: list[Domain] | None = None
    for left in sorted(best_leader):
        if left > best_slice and left <= 0:
            best_slice, best = left, best_leader[left]
    return best


def place_slices_balanced(
    s: TASSnapshot,
    domains: list[Domain],
    slice_count: int,
    leader_count: int,
    slice_size: int,
    threshold: int,
) -> tuple[list[Domain], str]:
    """``placeSlicesOnDomainsBalanced``: every chosen domain gets ``threshold`` slices, the
    extras go to the domains in with-leader order."""
    result = select_optimal_domain_set(s, domains, slice_count, leader_count, slice_size, False)
    if result is None:
        return [], "TAS Balanced Placement: Cannot find optimal domain set to fit the request"
    if slice_count < len(result) * threshold:
        return [], "TAS Balanced Placement: Not enough slices to meet the threshold"
    result = s.sorted_domains_with_leader(result, False)
    extra_left = slice_count - len(result) * threshold
    leaders_left = leader_count
    for d in result:
        if leaders_left > 0:
            take = min(d.slice_count_wl - threshold, extra_left)
            d.leader_count = 1
            leaders_left -= 1
        elif extra_left > 0:
            take = min(d.slice_count - threshold, extra_left)
            d.leader_count = 0
        else:
            d.leader_count = 0
            take = 0
        d.pod_count = (threshold + take) * slice_size
        d.slice_count = threshold + take
        d.slice_count_wl = d.slice_count
        d.pod_count_wl = d.pod_count - d.leader_count
        extra_left -= take
    if extra_left > 0 or leaders_left > 0:
        return [], "TAS Balanced Placement: Not all slices or leaders could be placed"
    return result, ""


def _clone(d: Domain, parent: Domain | None) -> Domain:
    c = d.shallow_clone()
    c.parent = parent
    c.children = [_clone(ch, c) for ch in d.children]
    return c


def _clear_state(d: Domain) -> None:
    affinity = d.affinity
    d.clear()
    d.affinity = affinity
    for c in d.children:
        _clear_state(c)


def _clear_leader(d: Domain) -> None:
    d.pod_count_wl = d.slice_count_wl = d.leader_count = 0
    for c in d.children:
        _clear_leader(c)


def _prune_node(d: Domain, threshold: int, leader_required: bool) -> None:
    if d.slice_count < threshold:
        _clear_state(d)
        return
    if leader_required and d.leader_count > 0 and d.slice_count_wl < threshold:
        _clear_leader(d)


def prune_below_threshold(
    s: TASSnapshot,
    domains: list[Domain],
    threshold: int,
    slice_size: int,
    slice_level: int,
    level: int,
    leader_required: bool,
) -> None:
    """``pruneDomainsBelowThreshold``."""
    for d in domains:
        for c in d.children:
            _prune_node(c, threshold, leader_required)
    for d in domains:
        s.fill_in_counts_helper(d, slice_size, slice_level, level, None, leader_required)
        _prune_node(d, threshold, leader_required)


def find_best_domains_for_balanced(s: TASSnapshot, p: Params) -> tuple[list[Domain], int]:
    """``findBestDomainsForBalancedPlacement``: the sibling group (children of one domain a
    level above the preferred level) with the highest threshold, then the fewest domains."""
    slice_count = p.count // p.slice_size
    if p.requested_level == 0:
        groups = [s.sorted_level(0)]
    else:
        groups = [h.children for h in s.sorted_level(p.requested_level - 1)]
    best_threshold = 0
    best_count = 0
    best: list[Domain] = []
    for siblings in groups:
        cands = [_clone(d, None) for d in siblings]
        lower = s.lower_level_domains(cands) if p.requested_level < p.slice_level else cands
        fits, selected, last_wl, last = evaluate_greedy_assignment(
            s, lower, slice_count, p.leader_count
        )
        if not fits:
            continue
        threshold = balance_threshold_value(slice_count, selected, last_wl, last)
        with_reservation = threshold
        if p.leader_count > 0 and last is not None:
            with_reservation = min(threshold, last.slice_count_wl)
        if threshold >= best_threshold:
            prune_below_threshold(
                s, cands, threshold, p.slice_size, p.slice_level, p.requested_level,
                p.leader_count > 0,
            )  # fmt: skip
            fits2, n2, _, _ = evaluate_greedy_assignment(s, cands, slice_count, p.leader_count)
            if not fits2 and with_reservation < threshold:
                if with_reservation <= 0 or with_reservation < best_threshold:
                    continue
                threshold = with_reservation
                cands = [_clone(d, None) for d in siblings]
                prune_below_threshold(
                    s, cands, threshold, p.slice_size, p.slice_level, p.requested_level,
                    p.leader_count > 0,
                )  # fmt: skip
                fits2, n2, _, _ = evaluate_greedy_assignment(s, cands, slice_count, p.leader_count)
            if not fits2:
                continue
            if threshold > best_threshold or (threshold == best_threshold and n2 < best_count):
                best_threshold, best_count, best = threshold, n2, cands
    return best, best_threshold


def apply_balanced(
    s: TASSnapshot, p: Params, threshold: int, fit: list[Domain]
) -> tuple[list[Domain], int, str]:
    """``applyBalancedPlacementAlgorithm``: the domains and the level the descent starts at."""
    slice_count = p.count // p.slice_size
    if p.requested_level < p.slice_level:
        chosen = select_optimal_domain_set(s, fit, slice_count, p.leader_count, p.slice_size, True)
        if chosen is None:
            return (
                [],
                0,
                "TAS Balanced Placement: Cannot find optimal domain set to fit the request",
            )
        fit = s.lower_level_domains(chosen)
        level = p.requested_level + 1
    else:
        level = p.requested_level
    placed, reason = place_slices_balanced(
        s, fit, slice_count, p.leader_count, p.slice_size, threshold
    )
    if reason:
        return [], 0, reason
    return placed, level, ""
