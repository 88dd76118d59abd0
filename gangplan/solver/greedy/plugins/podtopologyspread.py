"""PodTopologySpread: ``pkg/scheduler/framework/plugins/podtopologyspread/{filtering,scoring,
common}.go`` (kubernetes/kubernetes v1.36, NodeInclusionPolicy enabled).

Filter (DoNotSchedule constraints): PreFilter counts, per constraint and topology value, the
pods matching the constraint's selector in the pod's namespace (terminating pods excluded) on
nodes that carry every constraint's key and pass the constraint's nodeAffinityPolicy /
nodeTaintsPolicy. A node without the key is UnschedulableAndUnresolvable ("... (missing
required label)"); otherwise ``count(value) + self - globalMin > maxSkew`` is Unschedulable. The
global minimum is 0 when fewer than ``minDomains`` domains exist.

Score (ScheduleAnyway constraints): among the feasible nodes, those lacking a key are ignored
(score 0); per constraint the weight is ``log(domains + 2)`` (hostname: feasible nodes not
ignored); a node scores ``Σ count * weight + maxSkew - 1`` rounded; NormalizeScore maps to
``100 * (max + min - s) / max`` (100 everywhere when max is 0).

Counting is vectorised: per (selector, namespace) a per-node count of matching pods is cached and
refreshed only where pods were assumed or forgotten; domains are node-label codes.
System default constraints (which need Service / ReplicaSet selectors) are not applied, nor is
``matchLabelKeys`` (not in the snapshot model).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gangplan.models.objects import Pod, TopologySpreadConstraint
from gangplan.models.well_known import HOSTNAME
from gangplan.predicates import first_untolerated_taint, node_matches_pod_selector, selector_matches
from gangplan.solver.greedy.framework import (
    MAX_NODE_SCORE,
    SKIP,
    SUCCESS,
    go_div_array,
    unschedulable,
)
from gangplan.solver.greedy.plugins import names
from gangplan.solver.greedy.plugins.base import Plugin
from gangplan.solver.greedy.snapshot import NodeTable

NAME = names.POD_TOPOLOGY_SPREAD
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
MAX_INT32 = 2**31 - 1


def _count_matching(pods: list[Pod], c: TopologySpreadConstraint, namespace: str) -> int:
    """``countPodsMatchSelector``: same namespace, selector matches, not being deleted."""
    return sum(
        1
        for p in pods
        if not p.terminating
        and p.namespace == namespace
        and selector_matches(c.label_selector, p.labels)
    )


def _included(c: TopologySpreadConstraint, pod: Pod, node) -> bool:
    """``MatchNodeInclusionPolicies``."""
    if c.node_affinity_policy == "Honor" and not node_matches_pod_selector(pod, node):
        return False
    return not (
        c.node_taints_policy == "Honor"
        and first_untolerated_taint(node.taints, pod.tolerations) is not None
    )


def matching_counts(snap: NodeTable, c: TopologySpreadConstraint, namespace: str) -> np.ndarray:
    """Per node: pods matching the constraint's selector in ``namespace`` (cached, incremental)."""
    key = (NAME, "match", repr(c.label_selector), namespace)
    return snap.node_array(
        key,
        lambda nodes: np.array(
            [_count_matching(snap.pods_on[i], c, namespace) for i in nodes], dtype=np.int64
        ),
    )


def included_nodes(snap: NodeTable, c: TopologySpreadConstraint, pod: Pod) -> np.ndarray:
    key = (
        NAME,
        "included",
        c.node_affinity_policy,
        c.node_taints_policy,
        repr(sorted(pod.node_selector.items())),
        repr(pod.affinity.node_required),
        pod.tolerations,
    )
    return snap.static_array(
        key, lambda: np.array([_included(c, pod, n) for n in snap.nodes], dtype=bool)
    )


def nodes_with_all_keys(snap: NodeTable, constraints) -> np.ndarray:
    ok = np.ones(snap.n, dtype=bool)
    for c in constraints:
        ok &= snap.label_codes(c.topology_key)[0] >= 0
    return ok


@dataclass
class _Domains:
    """One constraint's domain counts, indexed by label code."""

    constraint: TopologySpreadConstraint
    codes: np.ndarray
    counts: np.ndarray
    present: np.ndarray

    def min_match(self) -> int:
        exists = self.present.any()
        low = int(self.counts[self.present].min()) if exists else MAX_INT32
        if (
            self.constraint.min_domains is not None
            and int(self.present.sum()) < self.constraint.min_domains
        ):
            return 0
        return low


class PodTopologySpread(Plugin):
    name = NAME

    # ---- Filter ------------------------------------------------------------------------------
    def pre_filter(self, cs, pod, snap):
        constraints = [c for c in pod.topology_spread if c.when_unsatisfiable == "DoNotSchedule"]
        if not constraints:
            return SKIP
        all_keys = nodes_with_all_keys(snap, constraints)
        domains = []
        for c in constraints:
            codes, values, _ = snap.label_codes(c.topology_key)
            valid = all_keys & included_nodes(snap, c, pod)
            counts = np.bincount(
                codes[valid],
                weights=matching_counts(snap, c, pod.namespace)[valid],
                minlength=len(values),
            ).astype(np.int64)
            present = np.bincount(codes[valid], minlength=len(values)) > 0
            domains.append(_Domains(c, codes, counts, present))
        cs[NAME] = domains
        return SUCCESS

    def _skew_ok(self, d: _Domains, pod: Pod, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(node has the key, skew within maxSkew) over ``idx``."""
        codes = d.codes[idx]
        has = codes >= 0
        self_match = 1 if selector_matches(d.constraint.label_selector, pod.labels) else 0
        cnt = np.where(has, d.counts[np.maximum(codes, 0)] if len(d.counts) else 0, 0)
        return has, cnt + self_match - d.min_match() <= d.constraint.max_skew

    def filter_mask(self, cs, pod, snap, idx):
        ok = np.ones(len(idx), dtype=bool)
        for d in cs[NAME]:
            has, within = self._skew_ok(d, pod, idx)
            ok &= has & within
        return ok

    def filter_one(self, cs, pod, snap, i):
        idx = np.array([i], dtype=np.int64)
        for d in cs[NAME]:
            has, within = self._skew_ok(d, pod, idx)
            if not has[0]:
                return self.status(
                    unschedulable(ERR_REASON_NODE_LABEL_NOT_MATCH, unresolvable=True)
                )
            if not within[0]:
                return self.status(unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH))
        return SUCCESS

    def filter_reasons(self, cs, pod, snap, idx):
        pending = np.ones(len(idx), dtype=bool)
        missing = np.zeros(len(idx), dtype=bool)
        skewed = np.zeros(len(idx), dtype=bool)
        for d in cs[NAME]:  # the first failing constraint decides, as in filter_one
            has, within = self._skew_ok(d, pod, idx)
            missing |= pending & ~has
            pending &= has
            skewed |= pending & ~within
            pending &= within
        return [
            (ERR_REASON_NODE_LABEL_NOT_MATCH, missing),
            (ERR_REASON_CONSTRAINTS_NOT_MATCH, skewed),
        ], missing

    # ---- Score -------------------------------------------------------------------------------
    def pre_score(self, cs, pod, snap, feasible):
        constraints = [c for c in pod.topology_spread if c.when_unsatisfiable == "ScheduleAnyway"]
        if not constraints or len(feasible) == 0:
            return SKIP
        all_keys = nodes_with_all_keys(snap, constraints)
        candidates = feasible[all_keys[feasible]]
        ignored = ~all_keys[feasible]
        parts = []
        for c in constraints:
            codes, values, _ = snap.label_codes(c.topology_key)
            if c.topology_key == HOSTNAME:
                parts.append((c, None, np.log(float(len(candidates) + 2))))
                continue
            domain = np.zeros(len(values), dtype=bool)
            domain[codes[candidates]] = True
            valid = all_keys & included_nodes(snap, c, pod)
            valid &= domain[np.maximum(codes, 0)] & (codes >= 0)
            counts = np.bincount(
                codes[valid],
                weights=matching_counts(snap, c, pod.namespace)[valid],
                minlength=len(values),
            ).astype(np.int64)
            parts.append((c, counts, np.log(float(domain.sum() + 2))))
        cs[NAME + "/score"] = (parts, ignored)
        return SUCCESS

    def score(self, cs, pod, snap, feasible):
        parts, ignored = cs[NAME + "/score"]
        total = np.zeros(len(feasible), dtype=np.float64)
        for c, counts, weight in parts:
            codes = snap.label_codes(c.topology_key)[0][feasible]
            has = codes >= 0
            if counts is None:
                cnt = matching_counts(snap, c, pod.namespace)[feasible]
            else:
                cnt = np.where(has, counts[np.maximum(codes, 0)] if len(counts) else 0, 0)
            total += np.where(has, cnt.astype(np.float64) * weight + float(c.max_skew - 1), 0.0)
        out = np.floor(total + 0.5).astype(np.int64)  # math.Round; scores are non-negative
        out[ignored] = 0
        return out

    def normalize(self, cs, pod, snap, feasible, scores):
        _, ignored = cs[NAME + "/score"]
        keep = ~ignored
        out = np.zeros_like(scores)
        if not keep.any():
            return out
        lo, hi = int(scores[keep].min()), int(scores[keep].max())
        if hi == 0:
            out[keep] = MAX_NODE_SCORE
        else:
            out[keep] = go_div_array(MAX_NODE_SCORE * (hi + lo - scores[keep]), hi)
        return out
